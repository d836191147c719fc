"""The data every front end consumes: positions, edits, fixes and diagnostics."""

from __future__ import annotations

import enum
from dataclasses import dataclass, field


class Applicability(str, enum.Enum):
    """How much a fix can be trusted, in ruff's vocabulary."""

    SAFE = "safe"  # proven not to change the compiled kernel
    UNSAFE = "unsafe"  # may change types or codegen; only with --unsafe-fixes
    DISPLAY = "display-only"  # a starting point shown with --diff/--show-fixes, never applied

    @classmethod
    def parse(cls, text: str) -> "Applicability":
        aliases = {"display": cls.DISPLAY, "display-only": cls.DISPLAY}
        return aliases.get(text) or cls(text)


@dataclass(frozen=True, order=True)
class Position:
    """1-based row, 0-based column counted in characters (not UTF-8 bytes)."""

    row: int
    col: int


@dataclass(frozen=True, order=True)
class Edit:
    start: Position
    end: Position
    content: str

    def overlaps(self, other: "Edit") -> bool:
        if self.start == self.end == other.start == other.end:
            return True  # two insertions at one point would race for order
        return self.start < other.end and other.start < self.end


@dataclass(frozen=True)
class Fix:
    edits: tuple[Edit, ...]
    applicability: Applicability
    message: str = ""

    def overlaps(self, other: "Fix") -> bool:
        return any(a.overlaps(b) for a in self.edits for b in other.edits)


def fix_applies(fix: Fix | None, unsafe: bool) -> bool:
    """Whether `--fix` applies `fix`: safe ones always, unsafe ones with `--unsafe-fixes`, display-only never."""
    if fix is None:
        return False
    return fix.applicability is Applicability.SAFE or (unsafe and fix.applicability is Applicability.UNSAFE)


@dataclass
class Diagnostic:
    code: str
    message: str
    path: str
    start: Position
    end: Position
    fix: Fix | None = None
    # Where a `# noqa` for this diagnostic must stand (the first line of the node).
    noqa_row: int = 0
    suppressed: bool = field(default=False, compare=False)

    def sort_key(self) -> tuple:
        return (self.path, self.start.row, self.start.col, self.code)
