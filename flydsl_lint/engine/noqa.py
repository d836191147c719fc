"""`# noqa` directives, parsed the way flake8 parses them, and file exemptions.

`# noqa` alone suppresses everything on its line; `# noqa: FLY101,FLY2`
suppresses those codes and prefixes (as flake8 does). Text after the codes,
conventionally after `--`, is the reason a retained boundary needs:
`# noqa: FLY301 -- scf.IfOp keeps the rewriter's unsupported yield contract`.

A comment line `# flydsl-lint: noqa: FLY8 -- generated` exempts the whole file
from those codes, `# flydsl-lint: noqa` from every FLY code (ruff's
`# ruff: noqa[: codes]`); a line `# flake8: noqa` skips the file, as flake8
itself does.
"""

from __future__ import annotations

import ast
import re

from .source import Comment

# flake8's own pattern (flake8/defaults.py), so both front ends agree.
_NOQA_RE = re.compile(r"# noqa(?::[\s]?(?P<codes>([A-Z]+[0-9]+(?:[,\s]+)?)+))?(?P<rest>.*)$", re.IGNORECASE)
_CODE_SPLIT = re.compile(r"[,\s]+")
_REASON_LEAD = re.compile(r"^[\s,:;\-–—]*")
# Codes must follow a colon: `# flydsl-lint: noqa FLY101` is malformed, not a blanket exemption.
_FILE_NOQA_RE = re.compile(r"#\s*flydsl-lint\s*:\s*noqa(?=$|[\s:])(?P<after>.*)$", re.IGNORECASE)
_FILE_CODES_RE = re.compile(r"\s*:\s*(?P<codes>[A-Z]+[0-9]+(?:[,\s]+[A-Z]+[0-9]+)*)(?P<rest>.*)$", re.IGNORECASE)
_MALFORMED_FILE_NOQA = re.compile(r"\s*(?::|[A-Z]+[0-9]+\b)", re.IGNORECASE)
# flake8's own pattern (flake8/defaults.py NOQA_FILE), matched at the start of every physical line.
_FLAKE8_FILE_NOQA_RE = re.compile(r"\s*# flake8[:=]\s*noqa", re.IGNORECASE)
# Part of every match of that pattern: one search of the whole file rules most files out.
_FLAKE8_MENTION = re.compile(r"# flake8[:=]", re.IGNORECASE)


class NoqaDirective:
    __slots__ = ("row", "col", "end_col", "codes", "reason", "rest", "file_level", "used", "_suppresses")

    def __init__(self, row: int, col: int, end_col: int, codes: tuple[str, ...] | None, reason: str,
                 rest: str = "", file_level: bool = False) -> None:
        self.row = row
        self.col = col  # where `# noqa` starts
        self.end_col = end_col
        self.codes = codes  # None: bare `# noqa` (every code)
        self.reason = reason
        self.rest = rest  # the text after the codes, as written (the reason with its lead)
        self.file_level = file_level  # `# flydsl-lint: noqa...`: the whole file
        self.used: set[str] = set()  # the codes it suppressed
        # What it suppresses: its codes, and the new code of a renamed one (FLY003 also covers FLY013).
        self._suppresses = None if codes is None else _with_new_codes(codes)

    @property
    def head(self) -> str:
        return "# flydsl-lint: noqa" if self.file_level else "# noqa"

    def matches(self, code: str) -> bool:
        if self.file_level and self.codes is None:
            return code.startswith("FLY")
        return self.codes is None or code.startswith(self._suppresses)


def _with_new_codes(codes: tuple[str, ...]) -> tuple[str, ...]:
    from .metadata import load_redirects

    redirects = load_redirects()
    return codes + tuple(redirects[code] for code in codes if code in redirects)


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
        directives[comment.row] = _directive(comment, hash_at, match.group("codes"), match.group("rest"), False)
    return directives


def parse_file_exemptions(comments: list[Comment], lines: list[str]) -> list[NoqaDirective]:
    """`# flydsl-lint: noqa[: codes]` comments standing alone on their line (a
    trailing one would read as a line directive, so it exempts nothing)."""
    found = []
    for comment in comments:
        match = _FILE_NOQA_RE.match(comment.text)
        if match is None or lines[comment.row - 1][: comment.col].strip():
            continue
        after = match.group("after")
        with_codes = _FILE_CODES_RE.match(after)
        if with_codes is not None:
            found.append(_directive(comment, 0, with_codes.group("codes"), with_codes.group("rest"), True))
        elif _MALFORMED_FILE_NOQA.match(after) is None:
            found.append(_directive(comment, 0, None, after, True))
    return found


def _directive(comment: Comment, hash_at: int, raw_codes: str | None, rest: str, file_level: bool) -> NoqaDirective:
    codes = tuple(code.upper() for code in _CODE_SPLIT.split(raw_codes.strip()) if code) if raw_codes else None
    reason = _REASON_LEAD.sub("", rest).strip()
    return NoqaDirective(comment.row, comment.col + hash_at, comment.col + len(comment.text.rstrip()), codes, reason,
                         rest, file_level)


def skipped_by_flake8(lines: list[str]) -> bool:
    """Whether flake8 skips this file (a line starting `# flake8: noqa`); the
    CLI skips it too, so both front ends report the same."""
    if _FLAKE8_MENTION.search("\n".join(lines)) is None:
        return False  # cheaper than a match on every line
    return any(_FLAKE8_FILE_NOQA_RE.match(line) for line in lines)


def mark_exempt(diagnostics: list, exemptions: list[NoqaDirective]) -> None:
    """Suppress, and count as used, what the first matching directive covers
    (file exemptions after the line directives, which are more specific)."""
    for diagnostic in diagnostics:
        if diagnostic.suppressed:
            continue
        for exemption in exemptions:
            if exemption.matches(diagnostic.code):
                diagnostic.suppressed = True
                exemption.used.add(diagnostic.code)
                break


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
