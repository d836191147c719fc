"""Ctrl-C caught by an entry point ends the process with exit 130, even when the KeyboardInterrupt
left code that Python ran from a string (dataclasses and namedtuple build methods that way): under
`python -m`, CPython would otherwise end such a process by SIGINT whatever status it gave."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest

from tests.verify.conftest import REPO_ROOT

# Each entry point with the step inside it that the driver replaces by one raising from exec'd code.
ENTRY_POINTS = {
    "verify": ("flydsl_lint.verify.cli", "flydsl_lint.verify.command", "main", [],
               "flydsl-lint-verify: interrupted\n"),
    "check": ("flydsl_lint.frontends.cli", "flydsl_lint.frontends.cli", "_check", ["check", "."],
              "flydsl-lint: interrupted; files already written are complete, the rest untouched\n"),
    "migrate": ("flydsl_lint.frontends.cli", "flydsl_lint.frontends.cli", "_run_migrate", ["migrate", "."],
                "flydsl-lint migrate: interrupted; no file was changed and the scratch copy is removed\n"),
}

DRIVER = """\
import importlib, sys
entry = importlib.import_module({entry!r})
step_module = importlib.import_module({step_module!r})
setattr(step_module, {step!r}, lambda *args: exec("raise KeyboardInterrupt"))
sys.exit(entry.main({argv!r}))
"""


@pytest.mark.parametrize("name", ENTRY_POINTS)
def test_an_interrupt_raised_in_exec_code_still_exits_130(tmp_path, name):
    entry, step_module, step, argv, message = ENTRY_POINTS[name]
    (tmp_path / "driver.py").write_text(DRIVER.format(entry=entry, step_module=step_module, step=step, argv=argv))
    result = subprocess.run([sys.executable, "-m", "driver"], cwd=tmp_path, capture_output=True, text=True,
                            env={"PYTHONPATH": f"{tmp_path}:{REPO_ROOT}", "PATH": "/usr/bin:/bin", "NO_COLOR": "1"})
    assert (result.returncode, result.stderr) == (130, message)


def test_without_the_reset_the_process_would_end_by_sigint(tmp_path):
    """The control: the mechanism the entry points guard against exists in this CPython."""
    (tmp_path / "driver.py").write_text(textwrap.dedent("""\
        import sys
        try:
            exec("raise KeyboardInterrupt")
        except KeyboardInterrupt:
            pass
        sys.exit(130)
    """))
    result = subprocess.run([sys.executable, "-m", "driver"], cwd=tmp_path, capture_output=True)
    assert result.returncode == -2
