"""FlyDSL versions: parse, compare, and read the installed one without importing it."""

from __future__ import annotations

import os
import re
import sys
from functools import lru_cache
from typing import NamedTuple

_VERSION_RE = re.compile(r"^(\d+(?:\.\d+)+)")


class Version(NamedTuple):
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
    """The installed `flydsl` distribution's version, from its metadata only.

    Reads the first `flydsl` `*.dist-info`/`*.egg-info` on sys.path, the
    order importlib.metadata searches, without importing importlib.metadata:
    that import alone costs a quarter of a one-file run's start-up."""
    for entry in sys.path:
        try:
            names = os.listdir(entry or ".")
        except OSError:
            continue
        for name in sorted(names):
            stem, _, suffix = name.rpartition(".")
            if suffix not in ("dist-info", "egg-info") or _project_name(stem) != "flydsl":
                continue
            metadata = os.path.join(entry or ".", name, "METADATA" if suffix == "dist-info" else "PKG-INFO")
            version = _metadata_version(metadata)
            if version is not None:
                return version
    return None


def _project_name(stem: str) -> str:
    """`flydsl` from `flydsl-0.5.0` or `flydsl` (normalized as in PEP 503)."""
    return re.sub(r"[-_.]+", "-", stem.split("-")[0]).lower()


def _metadata_version(path: str) -> Version | None:
    try:
        with open(path, encoding="utf-8", errors="replace") as handle:
            for line in handle:
                if line.startswith("Version:"):
                    return Version.parse(line[len("Version:"):])
                if not line.strip():
                    return None  # end of the header block
    except (OSError, ValueError):
        return None
    return None
