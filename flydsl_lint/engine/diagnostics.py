"""The data every front end consumes: positions, edits, fixes and diagnostics.

The engine's records are NamedTuples when immutable and plain classes with
`__slots__` otherwise, never dataclasses: on a check's start-up path, importing
`dataclasses` (it imports `inspect`) and generating their methods cost a
third of a one-file run's instructions (bench/, 2026-12-01).
"""

from __future__ import annotations

import enum
from typing import NamedTuple


class Applicability(str, enum.Enum):
    """How much a fix can be trusted, in ruff's vocabulary."""

    SAFE = "safe"  # proven not to change the compiled kernel
    UNSAFE = "unsafe"  # may change types or codegen; only with --unsafe-fixes
    DISPLAY = "display-only"  # a starting point shown with --diff/--show-fixes, never applied

    @classmethod
    def parse(cls, text: str) -> "Applicability":
        aliases = {"display": cls.DISPLAY, "display-only": cls.DISPLAY}
        return aliases.get(text) or cls(text)


class Position(NamedTuple):
    """1-based row, 0-based column counted in characters (not UTF-8 bytes)."""

    row: int
    col: int


class Edit(NamedTuple):
    start: Position
    end: Position
    content: str

    def overlaps(self, other: "Edit") -> bool:
        if self.start == self.end == other.start == other.end:
            return True  # two insertions at one point would race for order
        return self.start < other.end and other.start < self.end


class Fix(NamedTuple):
    edits: tuple[Edit, ...]
    applicability: Applicability
    message: str = ""
    since: str | None = None  # a release this fix needs beyond its rule's fix-since (the checker gates on it)

    def overlaps(self, other: "Fix") -> bool:
        return any(a.overlaps(b) for a in self.edits for b in other.edits)


def fix_applies(fix: Fix | None, unsafe: bool) -> bool:
    """Whether `--fix` applies `fix`: safe ones always, unsafe ones with `--unsafe-fixes`, display-only never."""
    if fix is None:
        return False
    return fix.applicability is Applicability.SAFE or (unsafe and fix.applicability is Applicability.UNSAFE)


class Diagnostic:
    """One finding; equal to another when all but `suppressed` are."""

    __slots__ = ("code", "message", "path", "start", "end", "fix", "noqa_row", "suppressed", "fix_needs")

    def __init__(self, code: str, message: str, path: str, start: Position, end: Position,
                 fix: Fix | None = None, noqa_row: int = 0, suppressed: bool = False,
                 fix_needs: str | None = None) -> None:
        self.code = code
        self.message = message
        self.path = path
        self.start = start
        self.end = end
        self.fix = fix
        self.noqa_row = noqa_row  # where a `# noqa` for this diagnostic must stand (the node's first line)
        self.suppressed = suppressed
        self.fix_needs = fix_needs  # the FlyDSL release a fix held back for the target needs

    def sort_key(self) -> tuple:
        return (self.path, self.start.row, self.start.col, self.code)

    def _compared(self) -> tuple:
        return (self.code, self.message, self.path, self.start, self.end, self.fix, self.noqa_row, self.fix_needs)

    def __eq__(self, other: object) -> bool:
        if type(other) is not Diagnostic:
            return NotImplemented
        return self._compared() == other._compared()  # type: ignore[attr-defined]

    __hash__ = None  # type: ignore[assignment]  # mutable (`fix` and `message` change after the check)

    def __reduce__(self) -> tuple:
        # Pickled (a worker's results, to its parent) as the constructor's arguments:
        # faster both ways than the state of the slots, which is a dict per diagnostic.
        return (Diagnostic, (self.code, self.message, self.path, self.start, self.end, self.fix, self.noqa_row,
                             self.suppressed, self.fix_needs))

    def __repr__(self) -> str:
        return (f"Diagnostic({self.code!r}, {self.message!r}, {self.path!r}, {self.start!r}, {self.end!r}, "
                f"fix={self.fix!r}, noqa_row={self.noqa_row!r}, suppressed={self.suppressed!r}, fix_needs={self.fix_needs!r})")
