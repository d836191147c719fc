"""``[tool.flydsl-lint.verify]`` in the target repository's pyproject.toml."""

from __future__ import annotations

import sys
from dataclasses import dataclass, field
from pathlib import Path

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on 3.10 only
    import tomli as tomllib


class ConfigError(ValueError):
    """Malformed configuration: a setup error (exit code 2)."""


@dataclass
class VerifyConfig:
    # module:function entry points that build extra specializations.
    probes: list[str] = field(default_factory=list)
    archs: list[str] = field(default_factory=lambda: ["gfx942"])
    # Directories whose modules alone count as kernels and tests in the plan;
    # empty: kernels anywhere, tests wherever the repository's pytest configuration finds them.
    kernel_dirs: list[str] = field(default_factory=list)
    test_dirs: list[str] = field(default_factory=list)
    perf_threshold: float = 0.02  # device mode: fail when the median is >2% slower
    rtol: float = 1e-3
    atol: float = 1e-5
    timeout_seconds: float = 1800.0


def _read(pyproject: Path) -> dict:
    try:
        return tomllib.loads(pyproject.read_bytes().decode("utf-8"))
    except OSError as exc:
        raise ConfigError(f"{pyproject}: cannot be read: {exc.strerror}") from None
    except UnicodeDecodeError as exc:
        raise ConfigError(f"{pyproject}: not UTF-8 (byte {exc.start})") from None
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{pyproject}: {exc}") from None


def _verify_section(data: dict, pyproject: Path) -> dict:
    """``data["tool"]["flydsl-lint"]["verify"]``, each level checked to be a table."""
    section, name = data, ""
    for key in ("tool", "flydsl-lint", "verify"):
        name = f"{name}.{key}" if name else key
        section = section.get(key, {})
        if not isinstance(section, dict):
            raise ConfigError(f"{pyproject}: [{name}] must be a table, not {type(section).__name__}")
    return section


def _checked(value, default, where: str):
    """``value`` if it has the default's kind (a number for a number, a list of strings for a list)."""
    if isinstance(default, list):
        if isinstance(value, list) and all(isinstance(item, str) for item in value):
            return value
        raise ConfigError(f"{where} must be a list of strings")
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return float(value)
    raise ConfigError(f"{where} must be a number")


def load_config(repo: Path) -> VerifyConfig:
    pyproject = repo / "pyproject.toml"
    if not pyproject.is_file():
        return VerifyConfig()
    config = VerifyConfig()
    for key, value in _verify_section(_read(pyproject), pyproject).items():
        attribute = key.replace("-", "_")
        if not hasattr(config, attribute):
            raise ConfigError(f"{pyproject}: unknown key [tool.flydsl-lint.verify] {key}")
        setattr(config, attribute, _checked(value, getattr(config, attribute),
                                            f"{pyproject}: [tool.flydsl-lint.verify] {key}"))
    for probe in config.probes:
        if ":" not in probe:
            raise ConfigError(f"{pyproject}: probe {probe!r} must look like module:function")
    check_archs(config.archs, f"{pyproject}: [tool.flydsl-lint.verify] archs")
    return config


def check_archs(archs: list[str], where: str) -> None:
    """Every arch a gfx target (the engine's test, as `flydsl-lint check --target-arch` takes them):
    another would only fail to compile on both sides, reported as kernels not verified after
    minutes of captures."""
    from flydsl_lint.engine import config as lint_config

    try:
        lint_config.checked_arches(archs, where)
    except lint_config.ConfigError as exc:
        raise ConfigError(str(exc)) from None
