"""`flydsl-lint check --add-noqa`: suppress today's findings with reasoned noqa comments.

Each finding gets `# noqa: FLY301 -- <reason>` on a row flake8 accepts for it
(the rows one token or backslash continuations join; see
engine/noqa.py `flake8_row_groups`). An existing per-code
directive in that logical line is extended instead of adding a second one, and
keeps its own reason. A comment is never put where it would change the code:
not at the end of a row that continues a string or ends in a backslash. The
result must have the same AST as before (comments only), else the file is left
untouched; files are replaced atomically.
"""

from __future__ import annotations

import ast
from pathlib import Path

from ..engine.diagnostics import Diagnostic, Edit, Position
from ..engine.model import SemanticModel
from ..engine.noqa import NoqaDirective, _smallest_spans, flake8_row_groups, parse_directives
from ..engine.source import SourceError, SourceFile, find_comments

DEFAULT_REASON = "TODO: migrate"


class AddNoqaResult:
    __slots__ = ("added", "files", "errors")

    def __init__(self) -> None:
        self.added = 0  # codes added to directives
        self.files: list[str] = []  # files written
        self.errors: list[str] = []


def _commentable(source: SourceFile, model: SemanticModel, comment_rows: set[int], row: int) -> bool:
    """A comment appended to this row ends the row and changes no code."""
    if not 0 < row <= len(source.lines):
        return False
    if row in comment_rows:
        return True  # a comment already ends this row
    line = source.lines[row - 1]
    if line.rstrip().endswith("\\"):
        return False
    width = len(line.encode("utf-8"))
    # A string span running past the row's end is a string continued below.
    return not any(hi > width for _, hi in model.string_spans.get(row, ()))


def _directive_text(codes: list[str], reason: str) -> str:
    text = "# noqa: " + ", ".join(codes)
    return f"{text} -- {reason}" if reason else text


def add_noqa_to_source(source: SourceFile, diagnostics: list[Diagnostic], reason: str = DEFAULT_REASON) -> tuple[str, int]:
    """The new text with directives for `diagnostics`, and how many codes were added."""
    reason = " ".join(reason.split())  # one line
    tree = source.tree
    model = SemanticModel(tree)
    comments = find_comments(source, model.string_spans)
    comment_rows = {comment.row for comment in comments}
    directives: dict[int, NoqaDirective] = parse_directives(comments) if "noqa" in source.text.lower() else {}
    spans = _smallest_spans(tree)
    groups: dict[tuple[int, int], dict[int, tuple[int, int]]] = {}

    additions: dict[int, list[str]] = {}
    for diagnostic in diagnostics:
        row = diagnostic.noqa_row or diagnostic.start.row
        lo, hi = spans.get(row, (row, row))
        if lo < hi:  # flake8 looks only in the rows one token or backslashes join
            if (lo, hi) not in groups:
                groups[(lo, hi)] = flake8_row_groups(source.lines, lo, hi)
            lo, hi = groups[(lo, hi)].get(row, (row, row))
        rows = range(lo, hi + 1)
        if any(directives[r].matches(diagnostic.code) for r in rows if r in directives):
            continue  # already suppressed (e.g. a run without noqa applied)
        existing = [r for r in rows if r in directives and directives[r].codes is not None]
        if existing:
            target = existing[0]
        else:
            order = [row, hi, *rows]
            target = next((r for r in order if _commentable(source, model, comment_rows, r)), None)
            if target is None:
                raise SourceError(source.path, f"no row of lines {lo}-{hi} can take a noqa comment for {diagnostic.code}")
        codes = additions.setdefault(target, [])
        if diagnostic.code not in codes:
            codes.append(diagnostic.code)

    from ..fixes.apply import apply_edits

    edits: list[Edit] = []
    added = 0
    for row, codes in additions.items():
        line = source.lines[row - 1]
        directive = directives.get(row)
        if directive is not None and directive.codes is not None:
            merged = list(directive.codes) + [code for code in codes if code not in directive.codes]
            added += len(merged) - len(directive.codes)
            text = _directive_text(merged, directive.reason or reason)
            edits.append(Edit(Position(row, directive.col), Position(row, directive.end_col), text))
        else:
            added += len(codes)
            end = len(line.rstrip())
            edits.append(Edit(Position(row, end), Position(row, len(line)), "  " + _directive_text(codes, reason)))
    new_text = apply_edits(source.text, edits, source.newline)
    if new_text != source.text:
        try:
            new_tree = ast.parse(new_text)
        except SyntaxError as exc:
            raise SourceError(source.path, f"adding noqa comments would break the file ({exc.msg}); left untouched") from None
        if ast.dump(new_tree) != ast.dump(tree):
            raise SourceError(source.path, "adding noqa comments would change the code; left untouched")
    return new_text, added


def add_noqa(diagnostics: list[Diagnostic], reason: str = DEFAULT_REASON) -> AddNoqaResult:
    """Write directives for every (unsuppressed) diagnostic, file by file."""
    from ..engine.writes import write_atomic

    outcome = AddNoqaResult()
    by_path: dict[str, list[Diagnostic]] = {}
    for diagnostic in diagnostics:
        by_path.setdefault(diagnostic.path, []).append(diagnostic)
    for path, items in by_path.items():
        try:
            source = SourceFile.read(path)
            new_text, added = add_noqa_to_source(source, items, reason)
            if new_text != source.text:
                write_atomic(Path(path), source.encode(new_text))
                outcome.files.append(path)
                outcome.added += added
        except SourceError as exc:
            outcome.errors.append(str(exc))
        except OSError as exc:
            outcome.errors.append(f"{path}: cannot write: {exc.strerror or exc}")
    return outcome
