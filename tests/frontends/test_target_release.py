"""The target release a project pins decides which fixes are applied, and the run says so."""

import json
import subprocess
import sys
from pathlib import Path

from flydsl_lint.run.runner import FileResult, RunResult
from flydsl_lint.frontends.output import held_back_line
from tests.conftest import without_target_variable

KERNEL = """import flydsl.compiler as flyc
import flydsl.expr as fx
from flydsl.expr import arith
from flydsl.expr.typing import T


@flyc.kernel
def k(n: fx.Int32):
    i = arith.index_cast(T.index, n)  # FLY103: a loop bound, its fix is offered from 0.4.2
    # ==========================================
    for j in range(i):
        pass
"""


def flydsl_lint(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "flydsl_lint.frontends.cli", *args], cwd=cwd,
                          capture_output=True, text=True, timeout=120, env=without_target_variable())


def pinned_project(tmp_path: Path, pin: str) -> Path:
    (tmp_path / ".git").mkdir()
    (tmp_path / "requirements.txt").write_text(f"numpy\n{pin}\n")
    (tmp_path / "kernels").mkdir()
    (tmp_path / "kernels" / "k.py").write_text(KERNEL)
    return tmp_path


def test_a_project_pinned_to_0_3_1_gets_only_fixes_that_release_has(tmp_path):
    """Whatever flydsl is installed here (0.5.0 in CI): the project's own pin decides."""
    project = pinned_project(tmp_path, "flydsl==0.3.1")
    result = flydsl_lint("check", "--no-cache", "--fix", "kernels", cwd=project)
    fixed = (project / "kernels" / "k.py").read_text()
    assert "arith.index_cast(T.index, n)" in fixed and "fx.Index" not in fixed  # held back
    assert "# ====" not in fixed  # FLY801's fix needs no particular release: applied
    assert result.returncode == 1
    assert "(fix needs FlyDSL >= 0.4.2; target is 0.3.1)" in result.stdout
    assert result.stdout.splitlines()[-1] == "1 fix needs FlyDSL >= 0.4.2; target 0.3.1 from requirements.txt (flydsl==0.3.1)"


def test_show_settings_says_where_the_target_came_from(tmp_path):
    project = pinned_project(tmp_path, "flydsl>=0.3.1,<0.5")
    shown = flydsl_lint("check", "--show-settings", "kernels/k.py", cwd=project).stdout
    assert 'target-version = "0.3.1"' in shown
    assert 'target-version-source = "requirements.txt (flydsl>=0.3.1,<0.5)"' in shown


def test_the_command_line_beats_the_pin(tmp_path):
    project = pinned_project(tmp_path, "flydsl==0.3.1")
    result = flydsl_lint("check", "--no-cache", "--fix", "--target-version", "0.5.0", "kernels", cwd=project)
    assert "fx.Index(n)" in (project / "kernels" / "k.py").read_text()
    assert "need FlyDSL" not in result.stdout


def test_sarif_carries_the_target_as_a_run_property(tmp_path):
    project = pinned_project(tmp_path, "flydsl==0.3.1")
    sarif = json.loads(flydsl_lint("check", "--no-cache", "--output-format", "sarif", "kernels", cwd=project).stdout)
    assert sarif["runs"][0]["properties"]["flydslTarget"] == {"version": "0.3.1",
                                                              "source": "requirements.txt (flydsl==0.3.1)"}


def test_an_unknown_target_says_how_to_set_one():
    from flydsl_lint.engine.diagnostics import Diagnostic, Position

    held = [Diagnostic("FLY301", "m", "k.py", Position(1, 0), Position(1, 1), fix_needs=release)
            for release in ("0.3.2", "0.4.0", "0.3.2")]
    line = held_back_line(RunResult([FileResult("k.py", held)], (None, "unknown")))
    assert line == ("2 fixes need FlyDSL >= 0.3.2, 1 fix needs FlyDSL >= 0.4.0; target unknown: set `target-version` "
                    "(or --target-version), or pin flydsl in the project")
    assert held_back_line(RunResult([FileResult("k.py", [])], (None, "unknown"))) is None


def test_the_users_variable_beats_the_pin_and_the_command_line_beats_it(tmp_path):
    project = pinned_project(tmp_path, "flydsl==0.3.1")
    environment = dict(without_target_variable(), FLYDSL_LINT_TARGET_VERSION="0.4.2")
    shown = subprocess.run([sys.executable, "-m", "flydsl_lint.frontends.cli", "check", "--show-settings", "kernels/k.py"],
                           cwd=project, capture_output=True, text=True, timeout=120, env=environment).stdout
    assert 'target-version = "0.4.2"' in shown and 'target-version-source = "$FLYDSL_LINT_TARGET_VERSION"' in shown
    shown = subprocess.run([sys.executable, "-m", "flydsl_lint.frontends.cli", "check", "--show-settings",
                            "--target-version", "0.3.0", "kernels/k.py"],
                           cwd=project, capture_output=True, text=True, timeout=120, env=environment).stdout
    assert 'target-version = "0.3.0"' in shown and 'target-version-source = "command line"' in shown
    bad = subprocess.run([sys.executable, "-m", "flydsl_lint.frontends.cli", "check", "kernels"], cwd=project,
                         capture_output=True, text=True, timeout=120, env=dict(environment, FLYDSL_LINT_TARGET_VERSION="new"))
    assert (bad.returncode, bad.stderr.strip()) == (2, "flydsl-lint: error: $FLYDSL_LINT_TARGET_VERSION = 'new' is not a FlyDSL version like \"0.5.0\"")
