"""The result cache (run/cache.py) and parallel runs (run/runner.py): correctness only, no timings."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

import flydsl_lint
from flydsl_lint.run import cache as cache_module
from flydsl_lint.run import checker as checker_module
from flydsl_lint.run.cache import Cache, diagnostic_from_json, diagnostic_to_json
from flydsl_lint.engine.diagnostics import Applicability, Diagnostic, Edit, Fix, Position
from flydsl_lint.run.runner import Mode, run
from tests.conftest import make_settings

ROOT = Path(__file__).resolve().parents[2]

KERNEL = textwrap.dedent(
    """\
    import flydsl.expr as fx
    from flydsl.expr import arith

    def k(a: fx.Float32, b: fx.Float32):
        # arith.maximumf(a, b) in a comment is not code
        return arith.maximumf(a, b), fx.Int64(fx.Int64(a))
    """
)
CLEAN = "import flydsl.expr as fx\n\ndef k(a, b):\n    return fx.max(a, b)\n"


def _project(tmp_path: Path) -> Path:
    project = tmp_path / "proj"
    (project / "pkg").mkdir(parents=True)
    (project / "pkg" / "__init__.py").write_text("")
    (project / "pkg" / "k.py").write_text(KERNEL)
    (project / "pkg" / "clean.py").write_text(CLEAN)
    return project


def _settings(project: Path, **overrides):
    return make_settings(project, respect_gitignore=False, **overrides)


def _entry(path: Path) -> dict:
    """A cache entry's JSON, after its signature line."""
    return json.loads(path.read_bytes().partition(b"\n")[2])


def _summary(result) -> list:
    """Everything a front end shows, with fixes, per file."""
    return [(f.path, f.error, [(d, d.fix, d.suppressed) for d in f.diagnostics]) for f in result.files]


class _NoChecker:
    """Stands in for Checker when a test requires that nothing is checked."""

    def __init__(self, *args, **kwargs):
        raise AssertionError("a fully cached run built a Checker")


def _paths(project: Path) -> list[str]:
    return [str(project / "pkg")]


def test_second_run_is_served_from_the_cache_exactly(tmp_path, monkeypatch):
    project = _project(tmp_path)
    settings = _settings(project)
    uncached = run(_paths(project), settings, use_cache=False)
    cold = run(_paths(project), settings)
    assert any(d.fix for d in cold.diagnostics)
    assert (project / ".flydsl-lint-cache" / ".gitignore").read_text().strip().endswith("*")
    monkeypatch.setattr(checker_module, "Checker", _NoChecker)
    warm = run(_paths(project), settings)
    assert _summary(warm) == _summary(cold) == _summary(uncached)


def test_a_first_run_looks_nothing_up(tmp_path, monkeypatch):
    """Without the run's cache folder every look-up misses: none is made, and the
    entries written are the ones a look-up finds on the next run."""
    project = _project(tmp_path)
    settings = _settings(project)
    looked_up = []
    real_lookup = Cache.lookup
    monkeypatch.setattr(Cache, "lookup", lambda self, *args: looked_up.append(args[-1]) or real_lookup(self, *args))
    assert not Cache(settings).may_hold_entries()
    first = run(_paths(project), settings, jobs=1)
    assert looked_up == [] and Cache(settings).may_hold_entries()
    second = run(_paths(project), settings, jobs=1)
    assert sorted(looked_up) == sorted(f.path for f in first.files) and _summary(second) == _summary(first)


def test_no_cache_neither_reads_nor_writes(tmp_path):
    project = _project(tmp_path)
    run(_paths(project), _settings(project), use_cache=False)
    assert not (project / ".flydsl-lint-cache").exists()


def test_content_change_invalidates(tmp_path):
    project = _project(tmp_path)
    settings = _settings(project)
    before = run(_paths(project), settings)
    (project / "pkg" / "k.py").write_text(CLEAN)
    after = run(_paths(project), settings)
    assert before.diagnostics and not after.diagnostics


def test_settings_change_invalidates(tmp_path, monkeypatch):
    project = _project(tmp_path)
    settings = _settings(project)
    everything = run(_paths(project), settings)
    narrowed = run(_paths(project), settings._replace(ignore=("FLY1",)))
    assert {d.code[:4] for d in everything.diagnostics} > {d.code[:4] for d in narrowed.diagnostics}
    older_target = run(_paths(project), settings._replace(target_version=settings.target_version.parse("0.1.0")))
    assert any("fix needs FlyDSL" in d.message for d in older_target.diagnostics)
    # and the first settings still hit their own entries
    monkeypatch.setattr(checker_module, "Checker", _NoChecker)
    assert _summary(run(_paths(project), settings)) == _summary(everything)


def test_tool_version_or_source_change_invalidates(tmp_path, monkeypatch):
    project = _project(tmp_path)
    settings = _settings(project)
    run(_paths(project), settings)
    first = Cache(settings).folder
    monkeypatch.setattr(flydsl_lint, "__version__", "999.0.0")
    monkeypatch.setattr(cache_module, "_TOOL_FINGERPRINT", None)
    upgraded = Cache(settings).folder
    assert upgraded != first
    result = run(_paths(project), settings)  # a miss: checks again and writes the new folder
    assert result.diagnostics and upgraded.is_dir() and list(upgraded.glob("*.json"))


def test_rule_source_edit_changes_the_fingerprint(monkeypatch, tmp_path):
    monkeypatch.setattr(cache_module, "_TOOL_FINGERPRINT", None)
    before = cache_module.tool_fingerprint()
    fake_package = tmp_path / "flydsl_lint"
    for folder in ("engine", "rules", "fixes"):
        (fake_package / folder).mkdir(parents=True)
    (fake_package / "engine" / "cache.py").write_text("")
    (fake_package / "rules" / "s9_new.py").write_text("x = 1\n")
    monkeypatch.setattr(cache_module, "__file__", str(fake_package / "engine" / "cache.py"))
    monkeypatch.setattr(cache_module, "_TOOL_FINGERPRINT", None)
    one = cache_module.tool_fingerprint()
    (fake_package / "rules" / "s9_new.py").write_text("x = 2\n")
    monkeypatch.setattr(cache_module, "_TOOL_FINGERPRINT", None)
    two = cache_module.tool_fingerprint()
    assert len({before, one, two}) == 3


@pytest.mark.parametrize("edited", ["engine/model/types.py", "data/flydsl_types.txt", "data/legacy_paths.txt"])
def test_model_and_data_table_edits_change_the_fingerprint(monkeypatch, tmp_path, edited):
    """The value types (engine/model/) and the tables the engine reads shape diagnostics too."""
    fake_package = tmp_path / "flydsl_lint"
    for folder in ("engine/model", "rules", "fixes", "data"):
        (fake_package / folder).mkdir(parents=True)
    (fake_package / "engine" / "cache.py").write_text("")
    (fake_package / edited).write_text("one\n")
    monkeypatch.setattr(cache_module, "__file__", str(fake_package / "engine" / "cache.py"))
    monkeypatch.setattr(cache_module, "_TOOL_FINGERPRINT", None)
    one = cache_module.tool_fingerprint()
    (fake_package / edited).write_text("two\n")
    monkeypatch.setattr(cache_module, "_TOOL_FINGERPRINT", None)
    assert cache_module.tool_fingerprint() != one


def test_reexporting_module_change_invalidates_dependents(tmp_path):
    project = tmp_path / "proj"
    (project / "pkg").mkdir(parents=True)
    (project / "pkg" / "__init__.py").write_text("")
    (project / "pkg" / "helpers.py").write_text("from flydsl.expr.arith import maximumf\n")
    (project / "pkg" / "k.py").write_text("from .helpers import *\n\n\ndef f(a, b):\n    return maximumf(a, b)\n")
    settings = _settings(project)
    first = run(_paths(project), settings)
    assert [d.code for d in first.diagnostics] == ["FLY301"]
    # helpers now defines its own maximumf: k.py's name no longer is the legacy one
    (project / "pkg" / "helpers.py").write_text("def maximumf(a, b):\n    return a\n")
    assert run(_paths(project), settings).diagnostics == []
    # and back: k.py itself never changed
    (project / "pkg" / "helpers.py").write_text("from flydsl.expr.arith import maximumf\n")
    assert [d.code for d in run([str(project / "pkg" / "k.py")], settings).diagnostics] == ["FLY301"]


def test_a_rule_answer_remembered_from_another_file_is_still_a_dependency(tmp_path):
    """FLY903 derives a module's launchers once a run; every file asking depends on that module."""
    project = tmp_path / "proj"
    (project / "pkg").mkdir(parents=True)
    (project / "pkg" / "__init__.py").write_text("")
    launcher = project / "pkg" / "launchers.py"
    launcher.write_text("import flydsl.compiler as flyc\n\n@flyc.jit\ndef go(a):\n    kernel(a).launch(grid=(1, 1, 1))\n")
    caller = "from pkg.launchers import go\n\ndef bench(a, n):\n    for _ in range(n):\n        go(a)\n"
    for name in ("a.py", "b.py"):
        (project / "pkg" / name).write_text(caller)
    settings = _settings(project, select=("FLY903",))
    paths = [str(project / "pkg" / "a.py"), str(project / "pkg" / "b.py")]
    assert [d.code for d in run(paths, settings, jobs=1).diagnostics] == ["FLY903", "FLY903"]
    entries = {_entry(p)["path"]: _entry(p)["deps"] for p in project.rglob("*.json")}
    for name in ("a.py", "b.py"):  # b.py's answer came from memory: still recorded
        deps = entries[str((project / "pkg" / name).resolve())]
        assert [str(launcher.resolve()), cache_module._digest(launcher.read_bytes())] in deps
    launcher.write_text("def go(a):\n    return a\n")  # no longer a jit launcher
    assert run(paths, settings, jobs=1).diagnostics == []


def test_new_module_shadowing_a_missing_one_invalidates(tmp_path):
    project = tmp_path / "proj"
    (project / "pkg").mkdir(parents=True)
    (project / "pkg" / "__init__.py").write_text("")
    (project / "pkg" / "k.py").write_text("from .helpers import *\n\n\ndef f(a, b):\n    return maximumf(a, b)\n")
    settings = _settings(project)
    assert run(_paths(project), settings).diagnostics == []  # helpers unknown: nothing to say
    (project / "pkg" / "helpers.py").write_text("from flydsl.expr.arith import maximumf\n")
    assert [d.code for d in run(_paths(project), settings).diagnostics] == ["FLY301"]


def test_package_change_above_the_file_invalidates(tmp_path, monkeypatch):
    project = tmp_path / "proj"
    (project / "pkg").mkdir(parents=True)
    (project / "pkg" / "k.py").write_text(KERNEL)
    settings = _settings(project)
    run(_paths(project), settings)
    monkeypatch.setattr(checker_module, "Checker", _NoChecker)
    run(_paths(project), settings)  # all hits
    (project / "pkg" / "__init__.py").write_text("")  # k.py is now module pkg.k, not k: relative imports differ
    with pytest.raises(AssertionError, match="built a Checker"):
        run([str(project / "pkg" / "k.py")], settings)


@pytest.mark.parametrize("damage", [b"", b"{", b"not json", b"[]", b'{"path": 1}', b"\xff\xfe\x00garbage"])
def test_corrupt_entries_are_misses_and_get_rewritten(tmp_path, damage):
    project = _project(tmp_path)
    settings = _settings(project)
    cold = run(_paths(project), settings)
    entries = list(Cache(settings).folder.glob("*.json"))
    assert entries
    for entry in entries:
        entry.write_bytes(damage)
    assert _summary(run(_paths(project), settings)) == _summary(cold)
    for entry in entries:
        _entry(entry)  # rewritten whole


def test_entry_with_a_changed_path_field_is_not_used(tmp_path):
    project = _project(tmp_path)
    settings = _settings(project)
    cold = run(_paths(project), settings)
    for entry in Cache(settings).folder.glob("*.json"):
        signature, _, payload = entry.read_bytes().partition(b"\n")
        data = json.loads(payload)
        data["diagnostics"] = []
        data["path"] = "/elsewhere.py"
        entry.write_bytes(signature + b"\n" + json.dumps(data).encode())
    assert _summary(run(_paths(project), settings)) == _summary(cold)


def test_diagnostics_round_trip_exactly():
    fix = Fix(
        (Edit(Position(3, 4), Position(3, 9), "fx.max"), Edit(Position(1, 0), Position(2, 0), "import é\n")),
        Applicability.DISPLAY,
        "Use `fx.max` — a display-only start",
    )
    for original in (
        Diagnostic("FLY301", "msg with \"quotes\" and ünïcode", "a.py", Position(3, 4), Position(3, 19), fix, 3),
        Diagnostic("FLY013", "m", "a.py", Position(1, 0), Position(1, 5), None, 1, suppressed=True),
        Diagnostic("FLY301", "m (fix needs FlyDSL >= 0.3.2)", "a.py", Position(1, 0), Position(1, 5), None, 1,
                   fix_needs="0.3.2"),
    ):
        data = json.loads(json.dumps(diagnostic_to_json(original)))
        back = diagnostic_from_json(data, "a.py")
        assert back == original and back.fix == original.fix and back.suppressed == original.suppressed
        assert back.fix_needs == original.fix_needs


def test_unchecked_file_errors_are_cached_and_reported_under_the_current_name(tmp_path, monkeypatch):
    project = _project(tmp_path)
    (project / "pkg" / "broken.py").write_text("def f(:\n")
    settings = _settings(project)
    cold = run(_paths(project), settings)
    assert [e for e in cold.errors if "syntax error" in e]
    monkeypatch.setattr(checker_module, "Checker", _NoChecker)
    monkeypatch.chdir(project)
    warm = run(["pkg"], settings)
    assert [e for e in warm.errors if "syntax error" in e] == ["pkg/broken.py: " + cold.errors[0].split(": ", 1)[1]]
    assert {d.path for d in warm.diagnostics} == {"pkg/k.py"}


def test_fix_after_a_cached_check_still_fixes(tmp_path):
    project = _project(tmp_path)
    settings = _settings(project)
    run(_paths(project), settings)
    diff = run(_paths(project), settings, Mode(diff=True))
    assert any(f.diff for f in diff.files)
    fixed = run(_paths(project), settings, Mode(fix=True))
    assert sum(fixed.fixed.values()) >= 2
    assert "arith.maximumf(a, b)\n" not in (project / "pkg" / "k.py").read_text().split("#")[-1]
    again = run(_paths(project), settings)
    assert _summary(again) == _summary(run(_paths(project), settings, use_cache=False))


def test_read_only_cache_folder_is_tolerated(tmp_path):
    project = _project(tmp_path)
    settings = _settings(project)._replace(cache_dir=str(tmp_path / "file-not-folder"))
    (tmp_path / "file-not-folder").write_text("")
    assert _summary(run(_paths(project), settings)) == _summary(run(_paths(project), settings, use_cache=False))


def _corpus(root: Path, files: int = 12) -> Path:
    (root / "pkg").mkdir(parents=True)
    (root / "pkg" / "__init__.py").write_text("")
    (root / "pkg" / "helpers.py").write_text("from flydsl.expr.arith import maximumf\n")
    for index in range(files):
        body = KERNEL if index % 3 else CLEAN
        if index % 4 == 1:
            body += "\ny = arith.maximumf(1, 2)  # noqa: FLY301\n"
        if index % 5 == 2:
            body += "from .helpers import *\nz = maximumf(1, 2)\n"
        (root / "pkg" / f"m{index:02d}.py").write_text(body * (1 + index % 3))
    (root / "pkg" / "broken.py").write_text("x = (\n")
    return root


def test_parallel_equals_serial(tmp_path):
    project = _corpus(tmp_path / "proj")
    settings = _settings(project)
    serial = run(_paths(project), settings, use_cache=False, jobs=1)
    parallel = run(_paths(project), settings, use_cache=False, jobs=2)
    assert serial.errors and serial.diagnostics
    assert _summary(parallel) == _summary(serial)
    assert _summary(run(_paths(project), settings, use_cache=False, jobs=3)) == _summary(serial)  # the turn passes on
    # parallel workers write the cache; a later serial run reads it
    assert _summary(run(_paths(project), settings, jobs=2)) == _summary(serial)
    assert _summary(run(_paths(project), settings, jobs=1)) == _summary(serial)
    assert _summary(run(_paths(project), settings, Mode(diff=True), use_cache=False, jobs=2)) == _summary(
        run(_paths(project), settings, Mode(diff=True), use_cache=False, jobs=1)
    )


def test_a_forked_run_does_not_import_multiprocessing(tmp_path):
    project = _corpus(tmp_path / "proj", files=6)
    script = ("import sys\nfrom flydsl_lint.engine.config import load_settings\nfrom flydsl_lint.run.runner import run\n"
              "result = run(['pkg'], load_settings(), use_cache=False, jobs=2)\n"
              "print(len(result.diagnostics) > 0, 'multiprocessing' in sys.modules)\n")
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    done = subprocess.run([sys.executable, "-c", script], cwd=project, capture_output=True, text=True, env=env)
    assert done.stdout.split() == ["True", "False"], done.stderr  # its import would delay the fork


def test_concurrent_runs_share_the_cache_safely(tmp_path):
    project = _corpus(tmp_path / "proj", files=20)
    (project / "pyproject.toml").write_text('[tool.flydsl-lint]\ntarget-version = "0.5.0"\n')
    command = [sys.executable, "-m", "flydsl_lint.frontends.cli", "check", "--output-format", "json", "pkg"]
    env = dict(os.environ, PYTHONPATH=str(ROOT), NO_COLOR="1")
    reference = subprocess.run(command + ["--no-cache"], cwd=project, capture_output=True, text=True, env=env)
    assert reference.returncode == 2, reference.stderr  # the broken file
    runs = [subprocess.Popen(command, cwd=project, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
            for _ in range(4)]
    outputs = [process.communicate(timeout=300) for process in runs]
    for stdout, stderr in outputs:
        assert stdout == reference.stdout and stderr == reference.stderr
    folders = list((project / ".flydsl-lint-cache").glob("v*"))
    assert len(folders) == 1
    assert not [p for p in folders[0].iterdir() if p.suffix != ".json"]  # no temporary files left
    warm = subprocess.run(command, cwd=project, capture_output=True, text=True, env=env)
    assert warm.stdout == reference.stdout


def test_files_of_a_failed_worker_are_checked_by_the_parent(tmp_path, monkeypatch):
    from flydsl_lint.run import runner

    project = _project(tmp_path)
    for index in range(6):
        (project / "pkg" / f"more{index}.py").write_text(KERNEL)
    settings = _settings(project)
    serial = run(_paths(project), settings, use_cache=False, jobs=1)
    parent = os.getpid()
    real_run = runner._Job.run

    def dies_in_a_child(self, path):
        if os.getpid() != parent:
            os._exit(3)  # a worker crashing on its first file
        return real_run(self, path)

    monkeypatch.setattr(runner._Job, "run", dies_in_a_child)
    parallel = run(_paths(project), settings, use_cache=False, jobs=2)
    assert _summary(parallel) == _summary(serial)


def test_only_a_batch_run_keeps_freed_memory(tmp_path, monkeypatch):
    from flydsl_lint.run import runner

    asked = []
    monkeypatch.setattr(runner, "keep_freed_memory", lambda: asked.append(True))
    project = _corpus(tmp_path / "proj", files=3)
    run(_paths(project), _settings(project), use_cache=False, jobs=1)
    assert asked == []  # a few small files: not worth it
    monkeypatch.setattr(runner, "PARALLEL_MIN_BYTES", 1)
    run(_paths(project), _settings(project), use_cache=False, jobs=1)
    assert asked == [True]


def test_keep_freed_memory_asks_glibc_only(monkeypatch):
    import ctypes
    import platform

    from flydsl_lint.run import runner

    if sys.platform.startswith("linux") and platform.libc_ver()[0] == "glibc":
        assert runner.keep_freed_memory() is True  # mallopt accepted both thresholds

    class Libc:
        def __init__(self):
            self.asked = []

        def mallopt(self, parameter, value):
            self.asked.append((parameter, value))
            return 1

    libc = Libc()
    monkeypatch.setattr(sys, "platform", "linux")
    monkeypatch.setattr(ctypes, "CDLL", lambda *a: libc)
    assert runner.keep_freed_memory() is True
    assert libc.asked == [(-1, 1 << 30), (-3, 32 << 20)]  # M_TRIM_THRESHOLD, M_MMAP_THRESHOLD at glibc's ceiling
    monkeypatch.setattr(sys, "platform", "darwin")
    monkeypatch.setattr(ctypes, "CDLL", lambda *a: pytest.fail("no C library is loaded off Linux"))
    assert runner.keep_freed_memory() is False


def test_a_file_naming_a_private_helper_elsewhere_invalidates_its_parameter_types(tmp_path):
    """A private module helper's parameters have the type its module's calls pass only while no
    other project file names it: each such file is a dependency of the answer."""
    project = tmp_path / "proj"
    (project / "pkg").mkdir(parents=True)
    (project / "pkg" / "__init__.py").write_text("")
    kernel = project / "pkg" / "k.py"
    kernel.write_text("import flydsl.compiler as flyc\nimport flydsl.expr as fx\n\n\ndef _body(v):\n"
                      "    return fx.Int64(v) + 1\n\n\n@flyc.kernel\ndef k(a: fx.Int64):\n    _body(a)\n")
    other = project / "pkg" / "other.py"
    other.write_text("import flydsl.expr as fx\n")
    settings = _settings(project, select=("FLY112",))
    found = run([str(kernel)], settings, jobs=1).diagnostics
    assert [(d.code, d.start.row, d.fix.applicability) for d in found] == [("FLY112", 6, Applicability.SAFE)]
    other.write_text("from pkg.k import _body\n\n_body(1.5)\n")  # another caller, of another type
    assert run([str(kernel)], settings, jobs=1).diagnostics == []
