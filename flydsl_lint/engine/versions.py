"""FlyDSL versions: parse, compare, and read the installed one without importing it."""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

_VERSION_RE = re.compile(r"^(\d+(?:\.\d+)+)")


@dataclass(frozen=True, order=True)
class Version:
    """A release number compared as an int tuple (FlyDSL has 0.3.4.1)."""

    parts: tuple[int, ...]

    @classmethod
    def parse(cls, text: str) -> "Version":
        match = _VERSION_RE.match(text.strip().lstrip("v"))
        if not match:
            raise ValueError(f"not a version: {text!r}")
        parts = tuple(int(part) for part in match.group(1).split("."))
        while len(parts) > 3 and parts[-1] == 0:
            parts = parts[:-1]
        return cls(parts + (0,) * (3 - len(parts)))

    def __str__(self) -> str:
        return ".".join(str(part) for part in self.parts)


@lru_cache(maxsize=1)
def installed_flydsl_version() -> Version | None:
    """The installed `flydsl` distribution's version, from its metadata only."""
    from importlib import metadata

    try:
        return Version.parse(metadata.version("flydsl"))
    except (metadata.PackageNotFoundError, ValueError):
        return None
