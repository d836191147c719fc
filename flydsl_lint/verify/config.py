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
    # Directories whose modules count as kernels and tests in the plan.
    kernel_dirs: list[str] = field(default_factory=lambda: ["kernels"])
    test_dirs: list[str] = field(default_factory=lambda: ["tests"])
    perf_threshold: float = 0.02  # device mode: fail when the median is >2% slower
    rtol: float = 1e-3
    atol: float = 1e-5
    timeout_seconds: float = 1800


def load_config(repo: Path) -> VerifyConfig:
    pyproject = repo / "pyproject.toml"
    if not pyproject.is_file():
        return VerifyConfig()
    try:
        data = tomllib.loads(pyproject.read_text(encoding="utf-8"))
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{pyproject}: {exc}") from exc
    section = data.get("tool", {}).get("flydsl-lint", {}).get("verify", {})
    config = VerifyConfig()
    for key, value in section.items():
        attribute = key.replace("-", "_")
        if not hasattr(config, attribute):
            raise ConfigError(f"{pyproject}: unknown key [tool.flydsl-lint.verify] {key}")
        expected = type(getattr(config, attribute))
        if expected is float and isinstance(value, int):
            value = float(value)
        if not isinstance(value, expected):
            raise ConfigError(f"{pyproject}: [tool.flydsl-lint.verify] {key} must be a {expected.__name__}")
        setattr(config, attribute, value)
    for probe in config.probes:
        if ":" not in probe:
            raise ConfigError(f"{pyproject}: probe {probe!r} must look like module:function")
    return config
