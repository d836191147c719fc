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
