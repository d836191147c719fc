"""scripts/install_compile_toolchain.sh and the `verify` extra never move a project's own flydsl."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from flydsl_lint.engine.tomlcompat import tomllib
from tests.release_envs import REPO_ROOT

SCRIPT = REPO_ROOT / "scripts" / "install_compile_toolchain.sh"

# Stands in for the interpreter the script installs into: reports the versions
# in FAKE_INSTALLED and logs every pip command instead of running it.
FAKE_PYTHON = f'''#!{sys.executable}
import json, os, sys
args = sys.argv[1:]
installed = json.loads(os.environ["FAKE_INSTALLED"])
if args[:2] == ["-m", "pip"]:
    with open(os.environ["FAKE_PIP_LOG"], "a") as log:
        log.write(" ".join(args[2:]) + "\\n")
elif args[:1] == ["-c"] and "importlib.metadata" in args[1]:
    if args[2] in installed:
        print(installed[args[2]])
'''


def _run(tmp_path: Path, installed: dict, *args: str, **env: str) -> tuple[subprocess.CompletedProcess, list[str]]:
    python = tmp_path / "python"
    python.write_text(FAKE_PYTHON)
    python.chmod(0o755)
    log = tmp_path / "pip.log"
    environment = dict(os.environ, PYTHON=str(python), FAKE_INSTALLED=json.dumps(installed),
                       FAKE_PIP_LOG=str(log), **env)
    environment.pop("FLYDSL_VERSION", None)
    environment.update(env)
    result = subprocess.run(["bash", str(SCRIPT), *args], capture_output=True, text=True, env=environment, timeout=60)
    return result, log.read_text().splitlines() if log.exists() else []


READY = {"torch": "2.13.0+cpu", "numpy": "2.0", "pandas": "2.2", "pytest": "8.3", "ziglang": "0.13"}


def test_an_installed_flydsl_is_kept(tmp_path):
    result, pip = _run(tmp_path, {**READY, "flydsl": "0.3.1"})
    assert result.returncode == 0, result.stderr
    assert pip == []


def test_flydsl_is_installed_only_when_none_is(tmp_path):
    result, pip = _run(tmp_path, READY)
    assert result.returncode == 0, result.stderr
    assert pip == ["install flydsl==0.5.0"]


@pytest.mark.parametrize("how", ["env", "flag"])
def test_the_release_asked_for_replaces_another(tmp_path, how):
    args, env = (("--flydsl-version", "0.3.1"), {}) if how == "flag" else ((), {"FLYDSL_VERSION": "0.3.1"})
    result, pip = _run(tmp_path, {**READY, "flydsl": "0.5.0"}, *args, **env)
    assert result.returncode == 0, result.stderr
    assert pip == ["install flydsl==0.3.1"]


def test_the_release_asked_for_and_present_is_not_reinstalled(tmp_path):
    result, pip = _run(tmp_path, {**READY, "flydsl": "0.3.1"}, FLYDSL_VERSION="0.3.1")
    assert (result.returncode, pip) == (0, [])


def test_unknown_argument_is_a_usage_error(tmp_path):
    result, pip = _run(tmp_path, READY, "--flydsl")
    assert result.returncode == 2 and result.stderr.startswith("usage:") and pip == []


def test_the_verify_extra_does_not_pin_flydsl():
    extras = tomllib.loads((REPO_ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]["optional-dependencies"]
    assert [spec for spec in extras["verify"] if spec.lower().startswith("flydsl")] == []


def test_what_flydsls_own_tests_import_is_installed_when_missing_and_flydsl_kept(tmp_path):
    # FlyDSL's tests/test_common.py, which most kernel tests import, imports numpy and pandas;
    # capture runs them under pytest.
    installed = {"torch": "2.13.0+cpu", "ziglang": "0.13", "flydsl": "0.3.1", "numpy": "2.0"}
    result, pip = _run(tmp_path, installed)
    assert result.returncode == 0, result.stderr
    assert pip == ["install pandas pytest"]
