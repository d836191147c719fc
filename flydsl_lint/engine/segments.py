"""A module's top-level statements, found without parsing the whole module.

Questions about another project module (is `wait_on` a waitcnt shim there?
what does it import?) need a few of its top-level statements, not a tree of
all of it: parsing a 5,000-line kernel module to read one helper costs as
much as checking it. A top-level statement starts on a line whose first
character, at column 0, is code: not inside a string, comment or brackets,
not after a backslash continuation, not an `else`/`elif`/`except`/`finally`
clause (a decorator line counts as a start of its own). The scan blanks
strings and comments with one regular expression and counts brackets between
line starts; tests/engine/test_segments.py checks it against `ast.parse`.
Callers parse the segments they use and parse the whole module when one does
not parse on its own.
"""

from __future__ import annotations

import ast
import re
from typing import NamedTuple

# Comments and string literals as the tokenizer reads them (prefixes aside,
# which never change where a literal ends); triple quotes are tried first.
# A literal's body is runs of plain characters, each run matched in one step,
# between escapes (and, in a triple-quoted one, quotes that do not close it).
_STRING_OR_COMMENT = re.compile(
    rb"#[^\r\n]*"
    rb"|'''[^'\\]*(?:(?:\\.|'(?!''))[^'\\]*)*'''"
    rb'|"""[^"\\]*(?:(?:\\.|"(?!""))[^"\\]*)*"""'
    rb"|'[^'\\\r\n]*(?:\\.[^'\\\r\n]*)*'"
    rb'|"[^"\\\r\n]*(?:\\.[^"\\\r\n]*)*"',
    re.S,
)
# A line start followed by code: the module's first byte, or one after a newline
# (matched with its "\n", which lets the regex engine skip from newline to newline).
_CODE_START = re.compile(rb"[^\s#]")
_LINE_START = re.compile(rb"\n(?=[^\s#])")
# Quotes as "#": one byte search finds where the next comment or literal can start.
_QUOTES_AS_HASH = bytes.maketrans(b"'\"", b"##")
# Every kind of bracket as a parenthesis: the nesting depth counts them alike.
_AS_PARENTHESES = bytes.maketrans(b"[]{}", b"()()")
# Lines at column 0 that continue the compound statement above them.
_CLAUSE = re.compile(rb"(?:elif|else|except|finally)\b")
_CODING_COOKIE = re.compile(rb"^[ \t\f]*#.*?coding[:=][ \t]*([-\w.]+)")
_HEADER = re.compile(rb"(?:async[ \t\f\\\r\n]+)?(def|class)[ \t\f\\\r\n]+(\w+)")
# An indented line of code opening with the keyword `def` or `class`: keywords
# cannot stand at a line start inside brackets or after a continuation, so in
# code with strings and comments blanked this is a nested def or class statement.
_NESTED_HEADER = re.compile(rb"\n[ \t\f]+(?:async[ \t\f\\\r\n]+)?(?:def|class)[ \t\f\\\r\n]")


def _blank_strings_and_comments(data: bytes) -> bytes:
    """`data` with every comment and string literal blanked in place, as
    `_STRING_OR_COMMENT.sub(_blank, data)` has it. Searching for the next `#`
    or quote with `bytes.find` skips the code between literals much faster
    than the regex engine's search, which tests each byte against a set."""
    openings = data.translate(_QUOTES_AS_HASH)
    pieces = []
    copied = 0  # data[:copied] is in `pieces`
    at = openings.find(b"#")
    while at >= 0:
        match = _STRING_OR_COMMENT.match(data, at)
        if match is None:  # a quote that opens no literal stays, for the caller to see
            at = openings.find(b"#", at + 1)
            continue
        pieces += data[copied:at], _blank(match)
        copied = match.end()
        at = openings.find(b"#", copied)
    pieces.append(data[copied:])
    return b"".join(pieces)


def _blank(match: re.Match) -> bytes:
    """A comment as spaces, a string literal as one placeholder character and
    spaces (a statement may start with it): same length, no line breaks, no
    quotes or brackets left."""
    size = match.end() - match.start()
    if match.string[match.start()] == 0x23:  # "#"
        return b" " * size
    return b"_" + b" " * (size - 1)


class Segment(NamedTuple):
    row: int  # the statement's first line (1-based)
    text: bytes
    kind: str  # "def" | "class" | "decorator" | "statement"
    name: str = ""  # of a def or class
    code: bytes = b""  # `text` with its strings and comments blanked (same length)

    def nests_code(self) -> bool:
        """Whether a def or class statement stands inside this def or class,
        read from the blanked code without parsing (False when unsure)."""
        return _NESTED_HEADER.search(self.code) is not None

    def parse(self) -> list[ast.stmt]:
        """The segment's statements, with the module's line numbers (raises
        SyntaxError/ValueError when the segment is not whole statements)."""
        # Blank lines ahead number the lines as in the module, at the parser's
        # cost (ast.increment_lineno would walk the tree in Python).
        return ast.parse(b"\n" * (self.row - 1) + self.text).body


def top_level_segments(data: bytes) -> list[Segment] | None:
    """The top-level statements of a module's source, in order; None when the
    source is not plain UTF-8 or has a quote the scan cannot pair."""
    if data.startswith(b"\xef\xbb\xbf"):
        data = data[3:]  # a byte order mark is no code
    for line in data.split(b"\n", 2)[:2]:
        cookie = _CODING_COOKIE.match(line)
        if cookie and cookie.group(1).lower().replace(b"_", b"-") not in (b"utf-8", b"utf8"):
            return None
    # The code alone: every comment and string literal blanked in place.
    code = _blank_strings_and_comments(data)
    if b"'" in code or b'"' in code:
        return None  # a literal the scan could not close
    if b"\f" in code:
        return None  # a form feed resets the tokenizer's column: `\f@jit` may start a statement
    starts = []
    depth = 0  # bracket nesting at `previous`
    previous = 0
    line_starts = [0] if _CODE_START.match(code) else []
    line_starts += [match.end() for match in _LINE_START.finditer(code)]
    parentheses = code.translate(_AS_PARENTHESES)  # two counts per line start, not six
    for at in line_starts:
        depth += parentheses.count(b"(", previous, at) - parentheses.count(b")", previous, at)
        previous = at
        if depth > 0 or _CLAUSE.match(code, at) or _continued(code, at):
            continue  # inside brackets, an else/except clause, or a backslash continuation
        starts.append(at)
    segments = []
    row = 1
    previous = 0
    for index, start in enumerate(starts):
        row += data.count(b"\n", previous, start)
        previous = start
        end = starts[index + 1] if index + 1 < len(starts) else len(data)
        text = data[start:end]
        header = _HEADER.match(text)
        if header:
            segments.append(Segment(row, text, header.group(1).decode(), header.group(2).decode(), code[start:end]))
        else:
            segments.append(Segment(row, text, "decorator" if text.startswith(b"@") else "statement"))
    return segments


def _continued(code: bytes, line_start: int) -> bool:
    """Whether the line before `line_start` ends in a backslash continuation."""
    last = line_start - 2  # before the "\n"
    if last >= 0 and code[last] == 0x0D:  # "\r\n"
        last -= 1
    return last >= 0 and code[last] == 0x5C  # "\\"


class Outline:
    """A module's top-level statements in order, parsed except defs and
    classes, which stand in as nodes carrying only their name."""

    __slots__ = ("statements", "defs")

    def __init__(self, statements: list[ast.stmt],
                 defs: dict[str, Segment | ast.FunctionDef | ast.AsyncFunctionDef | None] | None = None) -> None:
        self.statements = statements
        # The last top-level def of each name (its segment, or its node when it
        # was parsed with other statements), None when decorated.
        self.defs = defs if defs is not None else {}

    def function(self, name: str) -> ast.FunctionDef | ast.AsyncFunctionDef | None:
        """The module's undecorated top-level def `name`, parsed on each ask
        (callers keep what they derive, not the tree)."""
        found = self.defs.get(name)
        if not isinstance(found, Segment):
            return found
        try:
            parsed = found.parse()
        except (SyntaxError, ValueError):
            return None
        return parsed[0] if len(parsed) == 1 and isinstance(parsed[0], (ast.FunctionDef, ast.AsyncFunctionDef)) else None


def outline(data: bytes) -> Outline | None:
    """The module's outline; None when it cannot be read without parsing the
    whole module (see `top_level_segments`, or a statement that does not parse
    on its own)."""
    segments = top_level_segments(data)
    if segments is None:
        return None
    found = Outline([])
    decorated = False
    for segment in segments:
        if segment.kind == "decorator":
            decorated = True
            continue
        if segment.kind == "def":
            found.defs[segment.name] = None if decorated else segment
            found.statements.append(ast.FunctionDef(name=segment.name))
        elif segment.kind == "class":
            found.statements.append(ast.ClassDef(name=segment.name))
        else:
            try:
                statements = segment.parse()
            except (SyntaxError, ValueError):
                return None
            found.statements.extend(statements)
            for position, statement in enumerate(statements):  # defs the header pattern did not read
                if isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    under_decorator = (decorated and position == 0) or bool(statement.decorator_list)
                    found.defs[statement.name] = None if under_decorator else statement
        decorated = False
    return found


def read_outline(data: bytes) -> Outline | None:
    """`outline(data)`, or the whole parsed module as one when the scan cannot
    read it; None when the module does not parse."""
    found = outline(data)
    if found is not None:
        return found
    try:
        body = ast.parse(data).body
    except (SyntaxError, ValueError):
        return None
    defs = {s.name: None if s.decorator_list else s for s in body if isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef))}
    return Outline(body, defs)
