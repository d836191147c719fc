"""Scheduler-sensitive tuned kernels are never auto-fixed, with --unsafe-fixes too,
unless the user names the file or sets fix-tuned-kernels."""

import subprocess
import sys
from pathlib import Path

import pytest

KERNEL = """import flydsl.compiler as flyc
import flydsl.expr as fx
from flydsl.expr import arith


@flyc.kernel
def k(a: fx.Float32, b: fx.Float32):
    m = arith.maximumf(a, b)
    return fx.Float32(fx.Float32(m))  # kept
"""


def flydsl_lint(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "flydsl_lint.frontends.cli", "check", "--no-cache",
                           "--target-version", "0.5.0", *args], cwd=cwd, capture_output=True, text=True, timeout=120)


@pytest.fixture
def tree(tmp_path):
    (tmp_path / "kernels").mkdir()
    (tmp_path / "kernels" / "mla_fwd_decode_m16x8.py").write_text(KERNEL)  # a default tuned-kernels pattern
    (tmp_path / "kernels" / "plain.py").write_text(KERNEL)
    return tmp_path


@pytest.mark.parametrize("flags", [["--fix"], ["--fix", "--unsafe-fixes"], ["--fix", "--unsafe-fixes", "--force-exclude",
                                                                              "kernels/mla_fwd_decode_m16x8.py"]])
def test_a_walk_or_pre_commit_never_fixes_a_tuned_kernel(tree, flags):
    result = flydsl_lint(*flags, *([] if "--force-exclude" in flags else ["kernels"]), cwd=tree)
    assert (tree / "kernels" / "mla_fwd_decode_m16x8.py").read_text() == KERNEL
    assert "scheduler-sensitive kernel" in flydsl_lint("--show-fixes", "kernels", cwd=tree).stdout
    if "--force-exclude" not in flags:
        assert (tree / "kernels" / "plain.py").read_text() != KERNEL  # the rest of the tree is fixed
    assert result.returncode == 1


def test_naming_the_file_fixes_it(tree):
    flydsl_lint("--fix", "kernels/mla_fwd_decode_m16x8.py", cwd=tree)
    assert "fx.max(a, b)" in (tree / "kernels" / "mla_fwd_decode_m16x8.py").read_text()


def test_fix_tuned_kernels_opts_in_for_the_whole_tree(tree):
    (tree / "pyproject.toml").write_text("[tool.flydsl-lint]\nfix-tuned-kernels = true\n")
    flydsl_lint("--fix", "kernels", cwd=tree)
    assert "fx.max(a, b)" in (tree / "kernels" / "mla_fwd_decode_m16x8.py").read_text()
