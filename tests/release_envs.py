"""Interpreters holding a given FlyDSL release, for tests that compile on it.

The main venv holds one release (scripts/install_compile_toolchain.sh); every
other one lives in an environment made by ``scripts/release_env.sh VERSION``,
``.venvs/flydsl-VERSION`` under the repository, or under the folder named by
``FLYDSL_RELEASE_ENVS``. ``FLYDSL_RELEASES=0.3.1,0.4.2`` makes the tests that
span releases run on exactly those releases instead of their default ones
(what CI runs). With ``FLYDSL_RELEASE_ENVS_REQUIRED=1`` (scripts/test.sh sets
it after creating them) a missing environment fails its tests instead of
skipping them, so CI cannot pass by proving nothing.
"""

from __future__ import annotations

import importlib.util
import os
import sys
from importlib import metadata
from pathlib import Path

import pytest

from flydsl_lint.engine.target import releases
from flydsl_lint.engine.versions import Version

REPO_ROOT = Path(__file__).resolve().parents[1]
ENVS_DIR = Path(os.environ.get("FLYDSL_RELEASE_ENVS") or REPO_ROOT / ".venvs")

# Verify's end-to-end cases run on the oldest and the newest release compile mode supports.
OLDEST = str(releases().oldest_supported)
NEWEST = str(releases().known[-1])


def chosen_releases() -> tuple[str, ...] | None:
    """The releases named by FLYDSL_RELEASES, or None for each test's default ones."""
    named = os.environ.get("FLYDSL_RELEASES", "").strip()
    return tuple(part.strip() for part in named.split(",") if part.strip()) or None


def _main_venv_release() -> str | None:
    if importlib.util.find_spec("flydsl") is None or importlib.util.find_spec("torch") is None:
        return None
    return metadata.version("flydsl")


def _unavailable(reason: str):
    if os.environ.get("FLYDSL_RELEASE_ENVS_REQUIRED") == "1":
        pytest.fail(reason)
    pytest.skip(reason)


def _import_problem() -> str | None:
    """Why this interpreter's flydsl cannot compile (say, numpy is missing), or None."""
    try:
        import flydsl.compiler  # noqa: F401
        import flydsl.expr  # noqa: F401
    except Exception as exc:  # pragma: no cover - depends on the machine
        return f"flydsl is installed but not importable ({type(exc).__name__}: {exc})"
    return None


def _env_release(python: Path) -> str | None:
    """The flydsl release installed in the environment of ``python``, from its dist-info name."""
    found = sorted(python.parent.parent.glob("lib/python*/site-packages/flydsl-*.dist-info"))
    return found[0].name[len("flydsl-"):-len(".dist-info")] if found else None


def release_python(version: str) -> str:
    """An interpreter that imports flydsl ``version`` (and torch), or skip saying how to make one."""
    if _main_venv_release() == version:
        problem = _import_problem()
        if problem:
            _unavailable(problem)
        return sys.executable
    python = ENVS_DIR / f"flydsl-{version}" / "bin" / "python"
    if not python.is_file():
        _unavailable(f"no environment for flydsl {version} at {python.parent.parent}: "
                    f"run scripts/release_env.sh {version} (or set FLYDSL_RELEASE_ENVS)")
    found = _env_release(python)
    if found != version:
        pytest.fail(f"{python.parent.parent} holds flydsl {found}, not {version}: recreate it with "
                    f"scripts/release_env.sh {version}")
    return str(python)


def default_releases() -> list[str]:
    """Every release the tests compile on by default: those of each safe fix's and codemod's
    proofs, and verify's."""
    from tests.proofs.registry import CODEMODS, PLAN, proof_releases

    found = {OLDEST, NEWEST}
    codes = {code for _, plan_codes in PLAN.values() for code in plan_codes} | {code for code, _ in CODEMODS.values()}
    for code in codes:
        found.update(proof_releases(code))
    return sorted(found, key=Version.parse)


if __name__ == "__main__":
    # scripts/test.sh: the releases needing an environment of their own (not the main venv's).
    print(" ".join(release for release in default_releases() if release != _main_venv_release()))
