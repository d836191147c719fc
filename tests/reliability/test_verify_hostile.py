"""flydsl-lint-verify on hostile repositories: it runs nothing of theirs, plans around files it cannot
read, rejects malformed config in one line, tells its own hook failing from a kernel failing, and
leaves nothing behind when interrupted."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from flydsl_lint.verify.imports import MAX_SOURCE_BYTES, ImportGraph
from tests.verify import fake_flydsl_repo
from tests.verify.conftest import REPO_ROOT, requires_flydsl, run_verify

NOTHING_TEST = "tests/kernels/test_nothing.py"  # compiles nothing: a full run that is cheap


@pytest.fixture
def repo(tmp_path):
    repo = fake_flydsl_repo.create(tmp_path / "repo")
    (repo / NOTHING_TEST).write_text("def test_nothing():\n    pass\n")
    fake_flydsl_repo.commit_all(repo, "a test that compiles nothing")
    return repo


def _worktrees(repo: Path) -> list[str]:
    return fake_flydsl_repo.git(repo, "worktree", "list", "--porcelain").split("\n\n")[:-1]


def _one_line_naming(stderr: str, *words: str) -> None:
    assert stderr.count("\n") == 1 and "Traceback" not in stderr, stderr
    for word in words:
        assert word in stderr, stderr


# Item 5: the repository's hooks, filters and fsmonitor never run.

def _marker_script(path: Path, marker: Path, then: str = "") -> str:
    path.write_text(f"#!/bin/sh\necho ran >> '{marker}'\n{then}")
    path.chmod(0o755)
    return str(path)


def _arm(repo: Path, markers: Path, hooks: str) -> None:
    """Every way the repository's config can make git run a program on our commands writes a marker."""
    markers.mkdir()
    git = fake_flydsl_repo.git
    if hooks == "hooks-dir":
        _marker_script(repo / ".git/hooks/post-checkout", markers / "post-checkout")
    else:
        (repo.parent / "hooks").mkdir()
        _marker_script(repo.parent / "hooks/post-checkout", markers / "hooks-path")
        git(repo, "config", "core.hooksPath", str(repo.parent / "hooks"))
    (repo / ".gitattributes").write_text("*.py filter=spy diff=spy\n")
    fake_flydsl_repo.commit_all(repo, "attributes")
    git(repo, "config", "filter.spy.clean", _marker_script(repo.parent / "clean", markers / "clean", "cat\n"))
    git(repo, "config", "filter.spy.smudge", _marker_script(repo.parent / "smudge", markers / "smudge", "cat\n"))
    git(repo, "config", "diff.spy.textconv", _marker_script(repo.parent / "textconv", markers / "textconv", "cat\n"))
    git(repo, "config", "diff.external", _marker_script(repo.parent / "external", markers / "external"))
    git(repo, "config", "core.fsmonitor", _marker_script(repo.parent / "fsmonitor", markers / "fsmonitor"))
    fake_flydsl_repo.edit(repo, "kernels/common/tiling.py", '"""Per-thread', '"""Per thread')  # a dirty tree


@pytest.mark.parametrize("hooks", ["hooks-dir", "hooks-path"])
def test_list_runs_nothing_of_the_repository(repo, tmp_path, hooks):
    _arm(repo, tmp_path / "markers", hooks)
    result = run_verify(repo, "--list")
    assert result.returncode == 0, result.stderr
    assert "tests/kernels/test_vec_add.py" in result.stdout
    assert sorted(p.name for p in (tmp_path / "markers").iterdir()) == []
    assert len(_worktrees(repo)) == 1


@requires_flydsl
@pytest.mark.parametrize("hooks", ["hooks-dir", "hooks-path"])
def test_full_run_runs_nothing_of_the_repository(repo, tmp_path, hooks):
    _arm(repo, tmp_path / "markers", hooks)
    result = run_verify(repo, "--head", "HEAD", "--tests", NOTHING_TEST)
    assert "no kernel was compiled" in result.stderr  # it got as far as running the tests in both worktrees
    assert sorted(p.name for p in (tmp_path / "markers").iterdir()) == []
    assert len(_worktrees(repo)) == 1


def test_diff_base_runs_nothing_of_the_repository(repo, tmp_path):
    _arm(repo, tmp_path / "markers", "hooks-dir")
    result = subprocess.run([sys.executable, "-m", "flydsl_lint.frontends.cli", "check", "--diff-base", "HEAD", "."],
                            cwd=repo, capture_output=True, text=True, timeout=120,
                            env=dict(os.environ, PYTHONPATH=str(REPO_ROOT)))
    assert result.returncode in (0, 1), result.stderr
    assert sorted(p.name for p in (tmp_path / "markers").iterdir()) == []


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


def test_list_on_unreadable_committed_files(repo):
    _hostile_files(repo)
    fake_flydsl_repo.commit_all(repo, "hostile files")
    result = run_verify(repo, "--list", "--base", "HEAD~1", "--head", "HEAD")
    assert result.returncode == 0 and "Traceback" not in result.stderr, result.stderr
    notes = result.stdout.partition("notes:\n")[2]
    assert "  kernels/broken.py: a symbolic link: its target is not read; its imports are unknown" in notes
    assert "  tests/kernels/test_deep.py: nested too deeply to parse; its imports are unknown" in notes
    assert "  kernels/huge.py: larger than 4 MiB; its imports are unknown" in notes


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
    (b'[tool.flydsl-lint.verify]\narchs = ["gfx942", "sm_90"]\n',
     "[tool.flydsl-lint.verify] archs: 'sm_90' is not a gfx target like gfx942"),
    (b'name = "\xff"\n', "not UTF-8 (byte 8)"),
])
def test_malformed_config_is_one_line(repo, text, reason):
    (repo / "pyproject.toml").write_bytes(text)
    result = run_verify(repo, "--list")
    assert result.returncode == 2
    _one_line_naming(result.stderr, f"{repo / 'pyproject.toml'}: {reason}")


def test_an_arch_that_is_no_gfx_target_is_one_line_before_anything_runs(repo):
    result = run_verify(repo, "--arch", "gfx942,sm_90", "--list")
    assert result.returncode == 2
    _one_line_naming(result.stderr, "--arch: 'sm_90' is not a gfx target like gfx942")


def test_a_test_path_neither_side_has_is_one_line_before_anything_runs(repo):
    result = run_verify(repo, "--tests", "tests/kernels/test_scale.py,tests/kernels/test_scael.py::t", "--list")
    assert result.returncode == 2
    _one_line_naming(result.stderr, "--tests tests/kernels/test_scael.py::t: no such file at the base or the head")
    assert run_verify(repo, "--tests", "tests/kernels/test_scale.py", "--list").returncode == 0


@pytest.mark.parametrize("option", ["--base", "--head", "--tests", "--kernels", "--arch", "--base-cache-dir", "--repo"])
def test_an_empty_option_value_is_refused_not_taken_for_the_default(repo, option):
    """`--base "$REV"` with the variable unset would verify against another base, and an
    empty --repo or --base-cache-dir would be the current folder."""
    result = run_verify(repo, "--list", f"{option}=")
    assert result.returncode == 2 and result.stdout == ""
    assert result.stderr.splitlines()[-1] == \
        f"flydsl-lint-verify: error: argument {option}: '' names nothing (leave the option out for its default)"


# Item 12: our compile hook not fitting the installed flydsl is a setup error, not broken parity.

FAKE_JIT_FUNCTION = '''\
class MlirCompiler:
    @classmethod
    def compile(cls, module, name, options):  # another release's signature
        return module
'''


def _fake_flydsl(root: Path, jit_function: str | None, version: str) -> Path:
    package = root / "flydsl"
    (package / "compiler").mkdir(parents=True)
    (package / "__init__.py").write_text(f'__version__ = "{version}"\n')
    (package / "compiler/__init__.py").write_text(
        "def build():\n    from flydsl.compiler.jit_function import MlirCompiler\n"
        "    return MlirCompiler.compile('module', 'kernel', None)\n")
    if jit_function is not None:
        (package / "compiler/jit_function.py").write_text(jit_function)
    return root


def _verify_with_fake_flydsl(repo: Path, fake: Path):
    test = "import flydsl.compiler\n\n\ndef test_build():\n    flydsl.compiler.build()\n"
    (repo / "tests/kernels/test_build.py").write_text(test)
    return run_verify(repo, "--tests", "tests/kernels/test_build.py", "--mode", "compile",
                      env={"PYTHONPATH": os.pathsep.join([str(fake), str(REPO_ROOT)])})


@requires_flydsl  # the fake stands in for it, but the shim needs torch and the run a linker
@pytest.mark.parametrize("jit_function, reason", [
    (FAKE_JIT_FUNCTION, "MlirCompiler.compile(module, name, options) has no func_name parameter"),
    (FAKE_JIT_FUNCTION.replace("name, options", "*, func_name, options"),
     "MlirCompiler.compile(module, *, func_name, options) is not the (asm, func_name, config) of flydsl 0.5.0"),
    (None, "flydsl.compiler.jit_function.MlirCompiler is not there (ModuleNotFoundError"),
    # A fitting compile step, but no JitFunction whose calls say which tests reached a kernel.
    (FAKE_JIT_FUNCTION.replace("module, name, options", "asm, func_name, config"),
     "flydsl.compiler.jit_function.JitFunction is not there (ImportError"),
])
def test_hook_not_fitting_flydsl_is_a_setup_error(repo, tmp_path, jit_function, reason):
    result = _verify_with_fake_flydsl(repo, _fake_flydsl(tmp_path / "fake", jit_function, "0.5.0"))
    assert result.returncode == 2, result.stdout + result.stderr
    _one_line_naming(result.stderr, "flydsl-lint-verify: error: the compile hook does not fit the installed "
                                    f"flydsl 0.5.0: {reason}")


@requires_flydsl
@pytest.mark.parametrize("version", ["9.9.9", "0.2.4", "0.5.1"])
def test_release_without_a_hook_shape_is_one_line(repo, tmp_path, version):
    result = _verify_with_fake_flydsl(repo, _fake_flydsl(tmp_path / "fake", FAKE_JIT_FUNCTION, version))
    assert result.returncode == 2, result.stdout + result.stderr
    assert result.stderr == (f"flydsl-lint-verify: error: flydsl {version} is not supported by compile mode; "
                             "supported: 0.3.0–0.5.0\n")


# Item 14: Ctrl-C at any moment.

CLI = REPO_ROOT / "flydsl_lint" / "verify" / "cli.py"
# The first line of ours that holds Ctrl-C back; before it, an interrupt is Python's start-up.
HOLD_LINE = next(n for n, line in enumerate(CLI.read_text().splitlines(), 1) if "pthread_sigmask(" in line)
FRAME = re.compile(r'^  File "(?P<file>[^"]+)", line (?P<line>\d+)', re.MULTILINE)


def _our_code_ran(result) -> bool:
    """Whether the run got past the hold: it printed, or a traceback frame is in our code after it.

    A path of ours elsewhere in a traceback is no evidence: importlib's own
    errors name the package directories it was searching when interrupted.
    """
    if result.stdout or "flydsl-lint-verify" in result.stderr:
        return True
    for frame in FRAME.finditer(result.stderr):
        file = Path(frame["file"])
        if file == CLI and int(frame["line"]) <= HOLD_LINE or file == REPO_ROOT / "flydsl_lint" / "__init__.py":
            continue  # runs before the hold (the package's __init__ cannot hold: every importer runs it)
        if file.is_relative_to(REPO_ROOT / "flydsl_lint"):
            return True
    return False


def _interrupt(repo: Path, tmp: Path, delay: float, *args: str) -> subprocess.CompletedProcess:
    tmp.mkdir()
    env = dict(os.environ, TMPDIR=str(tmp), PYTHONPATH=str(REPO_ROOT))
    process = subprocess.Popen([sys.executable, "-m", "flydsl_lint.verify.cli", "--repo", str(repo), *args],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    time.sleep(delay)
    process.send_signal(signal.SIGINT)
    stdout, stderr = process.communicate(timeout=300)
    return subprocess.CompletedProcess(process.args, process.returncode, stdout, stderr)


def _assert_interrupted_cleanly(result, repo: Path, tmp: Path) -> None:
    if _our_code_ran(result):
        if result.returncode == 130:
            assert result.stderr == "flydsl-lint-verify: interrupted\n", result.stderr
        else:  # it finished before the signal
            assert result.returncode in (0, 1, 2) and "Traceback" not in result.stderr, result.stderr
    # else the signal landed in Python's own start-up, before any module of ours ran
    assert len(_worktrees(repo)) == 1
    assert [p.name for p in tmp.iterdir() if p.name.startswith("flydsl-verify-")] == []


DELAYS = [0.02, 0.05, 0.1, 0.2, 0.3, 0.5, 1.0, 3.0]  # 3 s: while the captures run


@requires_flydsl
@pytest.mark.parametrize("delay", DELAYS)
def test_interrupting_a_run_leaves_nothing_behind(repo, tmp_path, delay):
    fake_flydsl_repo.edit(repo, "kernels/elementwise/scale.py", "VEC_WIDTH = 2", "VEC_WIDTH = 4")
    result = _interrupt(repo, tmp_path / "tmp", delay, "--head", "HEAD", "--tests", NOTHING_TEST)
    _assert_interrupted_cleanly(result, repo, tmp_path / "tmp")


@pytest.mark.parametrize("delay", DELAYS[:4])
def test_interrupting_a_plan_leaves_nothing_behind(repo, tmp_path, delay):
    result = _interrupt(repo, tmp_path / "tmp", delay, "--list")
    _assert_interrupted_cleanly(result, repo, tmp_path / "tmp")
