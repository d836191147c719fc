"""Edits that delete a whole def from a source, keeping its comments and the blank-line gaps
around it (used by the fix loop's dead-code removal and by rules whose fix deletes a helper)."""

from __future__ import annotations

import ast
import io
import tokenize

from .diagnostics import Edit, Position
from .source import SourceFile


def definition_removal(source: SourceFile, definition: ast.FunctionDef, alone: bool) -> Edit | None:
    """The edit deleting a whole def: its lines, or `pass` in their place when its block
    would be left empty. Its comments stay, each on a line of its own where the def stood
    (a safe fix deletes no prose); with none, blank lines after it go as
    `blank_lines_to_drop` says. None when its text cannot be tokenized."""
    start = Position(definition.lineno, source.char_col(definition.lineno, definition.col_offset))
    lines = source.lines
    segment = "".join(line + "\n" for line in lines[definition.lineno - 1 : definition.end_lineno])
    try:
        comments = [token.string for token in tokenize.generate_tokens(io.StringIO(segment).readline)
                    if token.type == tokenize.COMMENT]
    except (tokenize.TokenError, SyntaxError):
        return None
    indent = lines[definition.lineno - 1][: start.col]
    kept = "".join(f"{indent}{comment}\n" for comment in comments)
    if alone:
        kept += f"{indent}pass\n"
    last = definition.end_lineno + (0 if kept else blank_lines_to_drop(lines, definition.lineno, definition.end_lineno))
    return Edit(Position(definition.lineno, 0), Position(last + 1, 0), kept)


def blank_lines_to_drop(lines: list[str], first: int, last: int) -> int:
    """How many of the blank lines after rows `first`..`last` go with them: as many as stand
    on both sides, so the gap left is the wider of the two, not their sum (two blank lines
    before a def and two after it leave two, not four)."""
    before = 0
    while first - 2 - before >= 0 and not lines[first - 2 - before].strip():
        before += 1
    after = 0
    while last + after < len(lines) and not lines[last + after].strip():
        after += 1
    return min(before, after)
