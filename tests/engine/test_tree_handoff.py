"""A run parses each file once: a file first parsed as another file's project
module is checked next, by the process that parsed it, with that tree."""

from __future__ import annotations

import ast
from pathlib import Path

from flydsl_lint.engine.checker import Checker
from flydsl_lint.engine.runner import _Queue, run
from flydsl_lint.engine.source import SourceFile
from tests.conftest import make_settings

GFX950 = {"target_arch": ("gfx950",)}
SYNC = "from flydsl.expr import rocdl\n\n# sync helpers\ndef wait_on(bits):\n    rocdl.s_waitcnt(bits)\n"


def _project(tmp_path: Path) -> Path:
    package = tmp_path / "kernels"
    package.mkdir()
    (package / "__init__.py").write_text("")
    # Sorted before sync.py: its check asks sync.py for the shim first.
    (package / "attention.py").write_text("from kernels.sync import wait_on\n\nwait_on(0x3F70)\n")
    (package / "sync.py").write_text(SYNC)
    (package / "zeta.py").write_text("from kernels.sync import wait_on\n\nwait_on(0)\n")
    return package


def _count_parses_of(monkeypatch, marker: str) -> list[str]:
    parsed: list[str] = []
    real_parse = ast.parse

    def counting_parse(source, *args, **kwargs):
        if marker in (source.decode() if isinstance(source, bytes) else source):
            parsed.append(marker)
        return real_parse(source, *args, **kwargs)

    monkeypatch.setattr(ast, "parse", counting_parse)
    return parsed


def _per_file(package: Path, settings) -> dict[str, list]:
    """Each file checked alone by a fresh checker: no tree is handed over."""
    found = {}
    for path in sorted(package.glob("*.py")):
        found[str(path)] = [(d.code, d.start, d.message) for d in Checker(settings).check(SourceFile.read(path))]
    return found


def test_a_project_module_of_the_run_is_parsed_once(tmp_path, monkeypatch):
    package = _project(tmp_path)
    settings = make_settings(tmp_path, select=("FLY362",), **GFX950)
    parsed = _count_parses_of(monkeypatch, "# sync helpers")
    result = run([str(package)], settings, use_cache=False, jobs=1)
    assert parsed == ["# sync helpers"]  # asked for by attention.py, then checked with that tree
    by_file = {r.path: [(d.code, d.start, d.message) for d in r.diagnostics] for r in result.files}
    assert by_file == _per_file(package, settings)
    assert [(Path(d.path).name, d.start.row) for d in result.diagnostics] == [("attention.py", 3), ("zeta.py", 3)]


def test_parallel_workers_hand_trees_over_with_the_same_results(tmp_path):
    package = _project(tmp_path)
    settings = make_settings(tmp_path, select=("FLY362",), **GFX950)
    result = run([str(package)], settings, use_cache=False, jobs=2)
    assert sorted(r.path for r in result.files) == sorted(str(p) for p in package.glob("*.py"))
    by_file = {r.path: [(d.code, d.start, d.message) for d in r.diagnostics] for r in result.files}
    assert by_file == _per_file(package, settings)


def test_a_tree_of_other_bytes_is_not_used(tmp_path):
    path = tmp_path / "sync.py"
    path.write_text(SYNC)
    checker = Checker(make_settings(tmp_path))
    checker.claim = lambda claimed: True
    checker._keep_tree(path.resolve(), b"x = 1\n", ast.parse("x = 1\n"))  # parsed before an edit
    source = SourceFile.read(path)
    checker.take_tree(source, path.read_bytes())
    assert "wait_on" in ast.dump(source.tree)  # parsed from the file's own text


def test_queue_claims_are_taken_first_and_only_once(tmp_path):
    paths = [tmp_path / f"{name}.py" for name in ("a", "b", "c")]
    queue = _Queue(list(enumerate(paths)), shared=False)
    assert queue.take() == (0, paths[0])
    assert queue.claim(paths[2].resolve())
    assert not queue.claim(paths[2].resolve())  # already claimed
    assert not queue.claim(paths[0].resolve())  # already taken
    assert not queue.claim((tmp_path / "elsewhere.py").resolve())  # not a file of the run
    assert queue.take() == (2, paths[2])  # the claim comes before the queue's order
    assert queue.take() == (1, paths[1])
    assert queue.take() is None
