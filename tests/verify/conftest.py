import importlib.util
import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parents[2]

requires_flydsl = pytest.mark.skipif(
    importlib.util.find_spec("flydsl") is None or importlib.util.find_spec("torch") is None,
    reason="needs the flydsl wheel and torch: run scripts/install_compile_toolchain.sh",
)


def run_verify(repo: Path, *args: str, env: dict | None = None, python: str = sys.executable) -> subprocess.CompletedProcess:
    """The CLI in a subprocess, as CI would run it (works without installing flydsl-lint);
    ``python`` is the interpreter, and so the flydsl release, it runs with."""
    environment = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [str(REPO_ROOT), os.environ.get("PYTHONPATH")])))
    environment.update(env or {})
    return subprocess.run(
        [python, "-m", "flydsl_lint.verify.cli", "--repo", str(repo), *args],
        capture_output=True, text=True, env=environment, timeout=900,
    )
