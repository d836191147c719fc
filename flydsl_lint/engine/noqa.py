"""`# noqa` directives, parsed the way flake8 parses them.

`# noqa` alone suppresses everything on its line; `# noqa: FLY101,FLY2`
suppresses those codes and prefixes (as flake8 does). Text after the codes,
conventionally after `--`, is the reason a retained boundary needs:
`# noqa: FLY301 -- scf.IfOp keeps the rewriter's unsupported yield contract`.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass, field

from .source import Comment

# flake8's own pattern (flake8/defaults.py), so both front ends agree.
_NOQA_RE = re.compile(r"# noqa(?::[\s]?(?P<codes>([A-Z]+[0-9]+(?:[,\s]+)?)+))?(?P<rest>.*)$", re.IGNORECASE)
_CODE_SPLIT = re.compile(r"[,\s]+")
_REASON_LEAD = re.compile(r"^[\s,:;\-–—]*")


@dataclass
class NoqaDirective:
    row: int
    col: int  # where `# noqa` starts
    end_col: int
    codes: tuple[str, ...] | None  # None: bare `# noqa`
    reason: str
    used: set[str] = field(default_factory=set)

    def matches(self, code: str) -> bool:
        return self.codes is None or code.startswith(self.codes)


def parse_directives(comments: list[Comment]) -> dict[int, NoqaDirective]:
    directives: dict[int, NoqaDirective] = {}
    for comment in comments:
        # A comment may hold other text before `# noqa`, e.g. `# why  # noqa: X`.
        start = comment.text.lower().find("noqa")
        if start == -1:
            continue
        hash_at = comment.text.rfind("#", 0, start)
        match = _NOQA_RE.match(comment.text[hash_at:]) if hash_at != -1 else None
        if match is None:
            continue
        raw_codes = match.group("codes")
        codes = tuple(code.upper() for code in _CODE_SPLIT.split(raw_codes.strip()) if code) if raw_codes else None
        reason = _REASON_LEAD.sub("", match.group("rest")).strip()
        directives[comment.row] = NoqaDirective(
            comment.row, comment.col + hash_at, comment.col + len(comment.text.rstrip()), codes, reason
        )
    return directives


def logical_line_ranges(tree: ast.Module) -> list[tuple[int, int]]:
    """Row ranges that flake8 treats as one logical line for noqa purposes.

    A simple statement spans all its rows; a compound statement's header
    spans up to the row before its body.
    """
    ranges = []
    pending: list[ast.stmt] = list(tree.body)
    while pending:
        stmt = pending.pop()
        body = getattr(stmt, "body", None)
        if isinstance(body, list) and body and isinstance(body[0], ast.stmt):
            header_end = max(stmt.lineno, body[0].lineno - 1)
            ranges.append((stmt.lineno, header_end))
            for attribute in ("body", "orelse", "finalbody"):
                pending.extend(getattr(stmt, attribute, []) or [])
            for handler in getattr(stmt, "handlers", []) or []:
                pending.extend(handler.body)
            for case in getattr(stmt, "cases", []) or []:
                pending.extend(case.body)
        elif stmt.end_lineno > stmt.lineno:
            ranges.append((stmt.lineno, stmt.end_lineno))
    return ranges


def flake8_row_groups(lines: list[str], lo: int, hi: int) -> dict[int, tuple[int, int]]:
    """Within rows lo..hi (one statement, or a compound statement's header), the
    rows flake8 searches together for a `# noqa`.

    flake8 joins only the rows of one token (a multi-line string) and rows
    continued with a backslash; a newline inside brackets (an NL token) ends
    its noqa line, so a directive on a call's closing row does not cover the
    call's first row. Same loop as flake8's `FileProcessor._noqa_line_mapping`,
    over this statement's rows only (tokens never cross statements).
    """
    import io
    import tokenize

    groups: dict[int, tuple[int, int]] = {}
    text = "\n".join(lines[lo - 1 : hi]) + "\n"
    first, last = hi + 2, -1
    try:
        for token in tokenize.generate_tokens(io.StringIO(text).readline):
            if token.type in (tokenize.ENDMARKER, tokenize.DEDENT):
                continue
            first, last = min(first, token.start[0] + lo - 1), max(last, token.end[0] + lo - 1)
            if token.type in (tokenize.NL, tokenize.NEWLINE):
                for row in range(first, last + 1):
                    groups[row] = (first, last)
                first, last = hi + 2, -1
    except (tokenize.TokenError, SyntaxError):
        return {}
    return groups


def mark_suppressed(diagnostics: list, directives: dict[int, NoqaDirective], tree: ast.Module, lines: list[str]) -> None:
    """Set `suppressed` on each diagnostic a directive covers, as flake8 decides.

    The directive must stand in the diagnostic's flake8 noqa line (see
    `flake8_row_groups`); statement ranges only bound where to look, so the
    tokenizer runs only for multi-row statements that hold a directive.
    """
    spans: dict[int, tuple[int, int]] | None = None
    groups: dict[tuple[int, int], dict[int, tuple[int, int]]] = {}
    for diagnostic in diagnostics:
        row = diagnostic.noqa_row
        directive = directives.get(row)
        if directive is None or not directive.matches(diagnostic.code):
            if spans is None:
                spans = _smallest_spans(tree)
            lo, hi = spans.get(row, (row, row))
            if lo == hi or not any(r in directives for r in range(lo, hi + 1) if r != row):
                continue
            if (lo, hi) not in groups:
                groups[(lo, hi)] = flake8_row_groups(lines, lo, hi)
            group_lo, group_hi = groups[(lo, hi)].get(row, (row, row))
            directive = next(
                (directives[r] for r in range(group_lo, group_hi + 1) if r in directives and directives[r].matches(diagnostic.code)),
                None,
            )
            if directive is None:
                continue
        diagnostic.suppressed = True
        directive.used.add(diagnostic.code)


def _smallest_spans(tree: ast.Module) -> dict[int, tuple[int, int]]:
    spans: dict[int, tuple[int, int]] = {}
    for lo, hi in logical_line_ranges(tree):
        for row in range(lo, hi + 1):
            current = spans.get(row)
            if current is None or hi - lo < current[1] - current[0]:
                spans[row] = (lo, hi)
    return spans
