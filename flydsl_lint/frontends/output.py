"""Output formats for `flydsl-lint check --output-format`."""

from __future__ import annotations

import json
import os
import sys
from collections import Counter
from typing import Callable, TextIO

from ..engine.diagnostics import Applicability, Diagnostic, Edit
from ..engine.registry import load_metadata
from ..engine.runner import RunResult

DOCS_PATH = "docs/rules/{code}.md"


def rule_url(code: str) -> str:
    return DOCS_PATH.format(code=code)


def _edit_json(edit: Edit) -> dict:
    return {
        "content": edit.content,
        "location": {"row": edit.start.row, "column": edit.start.col + 1},
        "end_location": {"row": edit.end.row, "column": edit.end.col + 1},
    }


def diagnostic_json(diagnostic: Diagnostic) -> dict:
    """One diagnostic in ruff's JSON schema (rows and columns 1-based)."""
    fix = None
    if diagnostic.fix is not None:
        fix = {
            "applicability": diagnostic.fix.applicability.value,
            "message": diagnostic.fix.message,
            "edits": [_edit_json(edit) for edit in diagnostic.fix.edits],
        }
    return {
        "cell": None,
        "code": diagnostic.code,
        "end_location": {"row": diagnostic.end.row, "column": diagnostic.end.col + 1},
        "filename": os.path.abspath(diagnostic.path),
        "fix": fix,
        "location": {"row": diagnostic.start.row, "column": diagnostic.start.col + 1},
        "message": diagnostic.message,
        "noqa_row": diagnostic.noqa_row,
        "url": rule_url(diagnostic.code),
    }


def write_json(result: RunResult, stream: TextIO, options: dict) -> None:
    json.dump([diagnostic_json(d) for d in result.diagnostics], stream, indent=2)
    stream.write("\n")


def _fixable(diagnostic: Diagnostic, unsafe: bool) -> bool:
    fix = diagnostic.fix
    return fix is not None and (fix.applicability is Applicability.SAFE or (unsafe and fix.applicability is Applicability.UNSAFE))


def write_text(result: RunResult, stream: TextIO, options: dict) -> None:
    unsafe = options.get("unsafe_fixes", False)
    diagnostics = result.diagnostics
    for d in diagnostics:
        marker = " [*]" if _fixable(d, unsafe) else ""
        stream.write(f"{d.path}:{d.start.row}:{d.start.col + 1}: {d.code}{marker} {d.message}\n")
    write_summary(result, stream, options)


def write_summary(result: RunResult, stream: TextIO, options: dict) -> None:
    unsafe = options.get("unsafe_fixes", False)
    diagnostics = result.diagnostics
    fixed = sum(result.fixed.values())
    if not diagnostics:
        if fixed:
            stream.write(f"Found {fixed} error{'s' * (fixed != 1)} ({fixed} fixed, 0 remaining).\n")
        elif not result.errors:
            stream.write("All checks passed!\n")
        return
    total = len(diagnostics) + fixed
    if fixed:
        stream.write(f"Found {total} error{'s' * (total != 1)} ({fixed} fixed, {len(diagnostics)} remaining).\n")
    else:
        stream.write(f"Found {total} error{'s' * (total != 1)}.\n")
    fixable = sum(_fixable(d, unsafe) for d in diagnostics)
    if fixable:
        stream.write(f"[*] {fixable} fixable with the `--fix` option.\n")
    hidden = sum(1 for d in diagnostics if d.fix is not None and d.fix.applicability is Applicability.UNSAFE) if not unsafe else 0
    if hidden:
        stream.write(f"{hidden} hidden fix{'es' * (hidden != 1)} can be enabled with the `--unsafe-fixes` option.\n")


def write_statistics(result: RunResult, stream: TextIO, options: dict) -> None:
    metadata = load_metadata()
    counts = Counter(d.code for d in result.diagnostics)
    fixable = Counter(d.code for d in result.diagnostics if _fixable(d, options.get("unsafe_fixes", False)))
    for code, count in counts.most_common():
        marker = "[*]" if fixable[code] else "   "
        stream.write(f"{count:5d}\t{code}\t{marker} {metadata[code].name}\n")


FORMATS: dict[str, Callable[[RunResult, TextIO, dict], None]] = {
    "text": write_text,
    "json": write_json,
}


def write(result: RunResult, fmt: str, options: dict, stream: TextIO = sys.stdout) -> None:
    FORMATS[fmt](result, stream, options)
