"""flydsl-lint-verify on hostile repositories: it runs nothing of theirs, plans around files it cannot
read, rejects malformed config in one line, tells its own hook failing from a kernel failing, and
leaves nothing behind when interrupted."""

from __future__ import annotations

import importlib.util
import os
from pathlib import Path

import pytest

from flydsl_lint.verify.imports import MAX_SOURCE_BYTES, ImportGraph
from tests.verify import fake_flydsl_repo
from tests.verify.conftest import REPO_ROOT, run_verify

requires_torch = pytest.mark.skipif(importlib.util.find_spec("torch") is None, reason="needs torch (the shim imports it)")


@pytest.fixture
def repo(tmp_path):
    return fake_flydsl_repo.create(tmp_path / "repo")


def _one_line_naming(stderr: str, *words: str) -> None:
    assert stderr.count("\n") == 1 and "Traceback" not in stderr, stderr
    for word in words:
        assert word in stderr, stderr


# Item 10: planning on files it cannot read.

def _hostile_files(root: Path) -> None:
    (root / "kernels/broken.py").symlink_to(root / "no-such-file.py")
    (root / "tests/kernels/test_deep.py").write_text("x = " + "+".join(["1"] * 200_000) + "\n")
    (root / "kernels/huge.py").write_bytes(b"#" * (MAX_SOURCE_BYTES + 1))
    (root / "kernels/folder.py").mkdir()


def test_list_on_unreadable_working_tree_files(repo):
    _hostile_files(repo)
    os.mkfifo(repo / "tests/kernels/test_fifo.py")  # reading it would block forever
    fake_flydsl_repo.edit(repo, "kernels/elementwise/scale.py", "VEC_WIDTH = 2", "VEC_WIDTH = 4")
    result = run_verify(repo, "--list")  # bounded by run_verify's timeout
    assert result.returncode == 0 and "Traceback" not in result.stderr, result.stderr
    notes = result.stdout.partition("notes:\n")[2]
    assert "  kernels/broken.py: a broken symbolic link; left out of the plan\n" in notes
    assert "  tests/kernels/test_fifo.py: not a regular file but a FIFO; left out of the plan\n" in notes
    assert "  kernels/folder.py: not a regular file but a directory; left out of the plan\n" in notes
    assert ("  tests/kernels/test_deep.py: nested too deeply to parse; its imports are unknown, so it counts as "
            "affected by any change\n") in notes
    assert "  kernels/huge.py: larger than 4 MiB; its imports are unknown" in notes
    tests = result.stdout.partition("tests:\n")[2].partition("probes:")[0].split()
    assert tests == ["tests/kernels/test_deep.py", "tests/kernels/test_scale.py"]  # not the FIFO, not vec_add


def test_a_file_whose_imports_are_unknown_is_reached_by_any_change(repo):
    (repo / "tests/kernels/test_broken.py").write_text("import kernels.elementwise.scale\ndef broken(:\n")
    graph = ImportGraph().add_tree(repo)
    assert graph.unanalysable == {"tests/kernels/test_broken.py": "does not parse (line 2: invalid syntax)"}
    assert "tests/kernels/test_broken.py" in graph.dependents(["kernels/common/tiling.py"])
    assert graph.dependents([]) == set()


# Item 11: malformed configuration.

@pytest.mark.parametrize("text, reason", [
    (b"tool = 5\n", "[tool] must be a table, not int"),
    (b"[tool]\nflydsl-lint = 5\n", "[tool.flydsl-lint] must be a table, not int"),
    (b"[tool.flydsl-lint]\nverify = 5\n", "[tool.flydsl-lint.verify] must be a table, not int"),
    (b'[tool.flydsl-lint.verify]\narchs = "gfx942"\n', "[tool.flydsl-lint.verify] archs must be a list of strings"),
    (b"[tool.flydsl-lint.verify]\nprobes = [1]\n", "[tool.flydsl-lint.verify] probes must be a list of strings"),
    (b"[tool.flydsl-lint.verify]\nrtol = true\n", "[tool.flydsl-lint.verify] rtol must be a number"),
    (b'name = "\xff"\n', "not UTF-8 (byte 8)"),
])
def test_malformed_config_is_one_line(repo, text, reason):
    (repo / "pyproject.toml").write_bytes(text)
    result = run_verify(repo, "--list")
    assert result.returncode == 2
    _one_line_naming(result.stderr, f"{repo / 'pyproject.toml'}: {reason}")


# Item 12: our compile hook not fitting the installed flydsl is a setup error, not broken parity.

FAKE_JIT_FUNCTION = '''\
class MlirCompiler:
    @classmethod
    def compile(cls, module, name, options):  # another release's signature
        return module
'''


def _fake_flydsl(root: Path, jit_function: str | None) -> Path:
    package = root / "flydsl"
    (package / "compiler").mkdir(parents=True)
    (package / "__init__.py").write_text('__version__ = "9.9.9"\n')
    (package / "compiler/__init__.py").write_text(
        "def build():\n    from flydsl.compiler.jit_function import MlirCompiler\n"
        "    return MlirCompiler.compile('module', 'kernel', None)\n")
    if jit_function is not None:
        (package / "compiler/jit_function.py").write_text(jit_function)
    return root


@requires_torch
@pytest.mark.parametrize("jit_function, reason", [
    (FAKE_JIT_FUNCTION, "MlirCompiler.compile(module, name, options) has no func_name parameter"),
    (None, "flydsl.compiler.jit_function.MlirCompiler is not there (ModuleNotFoundError"),
])
def test_hook_not_fitting_flydsl_is_a_setup_error(repo, tmp_path, jit_function, reason):
    fake = _fake_flydsl(tmp_path / "fake", jit_function)
    (repo / "tests/kernels/test_build.py").write_text("import flydsl.compiler\n\ndef test_build():\n"
                                                     "    flydsl.compiler.build()\n")
    result = run_verify(repo, "--tests", "tests/kernels/test_build.py", "--mode", "compile",
                        env={"PYTHONPATH": os.pathsep.join([str(fake), str(REPO_ROOT)])})
    assert result.returncode == 2, result.stdout + result.stderr
    _one_line_naming(result.stderr, "flydsl-lint-verify: error: the compile hook does not fit the installed "
                                    f"flydsl 9.9.9: {reason}")


