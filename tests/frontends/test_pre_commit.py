"""`.pre-commit-hooks.yaml`: both hooks, run by pre-commit itself with `try-repo`."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
KERNEL = (
    "import flydsl.expr as fx\n"
    "from flydsl.expr.arith import ArithValue\n"
    "a = fx.Int64(fx.Int64(x))  # keep me\n"
    "b = ArithValue(y) + 1\n"
)


def _pre_commit() -> list[str]:
    try:
        import pre_commit  # noqa: F401
    except ImportError:
        if shutil.which("pre-commit"):
            return ["pre-commit"]
        pytest.skip("pre-commit is not installed (CI installs it: pip install pre-commit)")
    return [sys.executable, "-m", "pre_commit"]


def test_hook_manifest_declares_both_hooks():
    yaml = pytest.importorskip("yaml", reason="PyYAML comes with pre-commit")
    hooks = {hook["id"]: hook for hook in yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text())}
    assert set(hooks) == {"flydsl-lint", "flydsl-lint-fix"}
    assert hooks["flydsl-lint"]["entry"] == "flydsl-lint check --force-exclude"
    assert hooks["flydsl-lint-fix"]["entry"] == "flydsl-lint check --fix --force-exclude"
    assert "--unsafe-fixes" not in hooks["flydsl-lint-fix"]["entry"]
    assert all(hook["language"] == "python" for hook in hooks.values())


def _git(*args: str, cwd: Path) -> None:
    subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@t", *args], cwd=cwd, check=True, capture_output=True)


def test_try_repo_runs_both_hooks(tmp_path):
    command = _pre_commit()
    if not (ROOT / ".git").exists():
        pytest.skip("try-repo needs the flydsl-lint git checkout")
    work = tmp_path / "work"
    work.mkdir()
    _git("init", "-q", ".", cwd=work)
    (work / "pyproject.toml").write_text(
        '[tool.flydsl-lint]\nselect = ["FLY1"]\ntarget-version = "0.5.0"\nextend-exclude = ["vendor"]\n')
    (work / "kernel.py").write_text(KERNEL)
    (work / "vendor").mkdir()
    (work / "vendor" / "old.py").write_text(KERNEL)  # pre-commit names it; the config excludes it
    (work / "clean.py").write_text("x = 1\n")
    _git("add", ".", cwd=work)
    env = {**os.environ, "PRE_COMMIT_HOME": str(tmp_path / "cache"), "NO_COLOR": "1"}
    env.pop("PYTHONPATH", None)

    def try_repo(*hook: str) -> subprocess.CompletedProcess:
        # --ref HEAD: the committed tree (in CI, the submission), not a shared working tree's
        # half-done edits, which try-repo would otherwise snapshot (and it skips untracked files).
        return subprocess.run([*command, "try-repo", str(ROOT), *hook, "--ref", "HEAD", "--all-files", "--color", "never"],
                              cwd=work, env=env, capture_output=True, text=True, timeout=900)

    check = try_repo("flydsl-lint")
    assert check.returncode == 1, check.stdout + check.stderr
    assert "kernel.py:3:5: FLY111 [*]" in check.stdout and "kernel.py:4:5: FLY101" in check.stdout
    assert (work / "kernel.py").read_text() == KERNEL  # the check hook writes nothing
    assert "old.py" not in check.stdout

    fix = try_repo("flydsl-lint-fix")
    assert fix.returncode == 1, fix.stdout + fix.stderr  # files were modified (and FLY101 remains)
    fixed = (work / "kernel.py").read_text()
    assert "a = fx.Int64(x)  # keep me\n" in fixed  # safe fix applied, comment kept
    assert "b = ArithValue(y) + 1\n" in fixed  # the unsafe fix is not applied
    assert (work / "clean.py").read_text() == "x = 1\n"
    assert (work / "vendor" / "old.py").read_text() == KERNEL
