"""A run over many files: discovery, checking or fixing each, collecting results."""

from __future__ import annotations

import difflib
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from .checker import Checker
from .config import Settings
from .diagnostics import Diagnostic
from .files import discover
from .source import SourceError, SourceFile


@dataclass
class FileResult:
    path: str
    diagnostics: list[Diagnostic] = field(default_factory=list)
    error: str | None = None  # one line: "<path>: <reason>"
    fixed: Counter = field(default_factory=Counter)
    diff: str = ""


@dataclass
class RunResult:
    files: list[FileResult] = field(default_factory=list)

    @property
    def diagnostics(self) -> list[Diagnostic]:
        return [d for result in self.files for d in result.diagnostics]

    @property
    def errors(self) -> list[str]:
        return [result.error for result in self.files if result.error]

    @property
    def fixed(self) -> Counter:
        total: Counter = Counter()
        for result in self.files:
            total.update(result.fixed)
        return total


@dataclass(frozen=True)
class Mode:
    fix: bool = False
    unsafe_fixes: bool = False
    diff: bool = False  # compute fixes, show them, write nothing


def check_path(path: Path, checker: Checker, mode: Mode) -> FileResult:
    """Check (and maybe fix) one file; never raises for a bad file."""
    name = str(path)
    try:
        source = SourceFile.read(path)
        if not (mode.fix or mode.diff):
            return FileResult(name, checker.check(source))
        from ..fixes.apply import fix_source, write_atomic

        outcome = fix_source(source, checker, unsafe=mode.unsafe_fixes)
        result = FileResult(name, outcome.remaining, fixed=outcome.applied)
        if outcome.changed:
            if mode.diff:
                result.diff = "".join(
                    difflib.unified_diff(
                        source.text.splitlines(keepends=True), outcome.new_text.splitlines(keepends=True),
                        fromfile=f"a/{name}", tofile=f"b/{name}",
                    )
                )
                result.diagnostics = checker.check(source)
            else:
                write_atomic(path, source.encode(outcome.new_text))
        return result
    except SourceError as exc:
        return FileResult(name, error=str(exc))
    except OSError as exc:
        return FileResult(name, error=f"{name}: cannot write: {exc.strerror or exc}")


def run(paths: list[str], settings: Settings, mode: Mode = Mode()) -> RunResult:
    files, missing = discover(paths, settings)
    result = RunResult([FileResult(m.path, error=f"{m.path}: no such file or directory") for m in missing])
    checker = Checker(settings)
    for path in files:
        result.files.append(check_path(path, checker, mode))
    return result
