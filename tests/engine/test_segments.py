"""A module's outline (engine/segments.py) holds exactly its top-level
statements: the scan never splits a statement nor misses one, on real code
and on the layouts that look like a statement start but are none."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from flydsl_lint.engine.project import summarize
from flydsl_lint.engine.segments import (
    _STRING_OR_COMMENT, _blank, _blank_strings_and_comments, outline, read_outline, top_level_segments,
)

ROOT = Path(__file__).resolve().parents[2]
# Real modules of many styles: the standard library's top level, this project, the test fixtures.
CORPUS = sorted(Path(ast.__file__).parent.glob("*.py")) + sorted((ROOT / "flydsl_lint").rglob("*.py")) \
    + sorted((ROOT / "tests" / "fixtures").rglob("*.py"))

TRICKY = '''"""Module doc.
def fake(n):
    rocdl.s_waitcnt(n)
"""
import os, \\
    sys
TOTAL = 1 + \\
2
from kernels.sync import (
wait_on,
    encode)
TABLE = {
"a": 1,
}
if os.name == "nt":
    X = 1
elif os.name == "posix":
    X = 2
else:
    X = 3
try:
    import fast
except ImportError:
    fast = None
finally:
    pass
x = 1; y = 2


@decorate
# a comment between decorator and def
def decorated(a):
    return a


def \\
        spaced(bits):
    s = """
def inner():
    pass
"""
# a column-0 comment inside a body
    return s


class Box:
    def method(self):
        return f"{self!r}"


def spaced():
    rocdl.s_waitcnt(0)
'''


_CODE = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)


def _summary(statements) -> tuple:
    summary = summarize("m", False, statements)
    return summary.defined, summary.imported, summary.star_modules


def _real_statements(data: bytes) -> list[str]:
    return [ast.dump(s, include_attributes=True) for s in ast.parse(data).body]


def _check(data: bytes) -> None:
    # The blanking skips from one `#` or quote to the next instead of searching with the regex.
    assert _blank_strings_and_comments(data) == _STRING_OR_COMMENT.sub(_blank, data)
    tree = ast.parse(data)
    segments = top_level_segments(data)
    assert segments is not None
    by_row = {}
    for statement in tree.body:
        by_row.setdefault(statement.lineno, []).append(statement)
    rebuilt = []
    decorators: list = []
    for segment in segments:
        if segment.kind == "decorator":
            decorators.append(segment)
            continue
        if decorators:  # a decorated def is its decorators' text and its own
            joined = b"".join(d.text for d in decorators) + segment.text
            statements = ast.parse(joined).body
            ast.increment_lineno(statements[0], decorators[0].row - 1)
            decorators = []
        else:
            statements = segment.parse()
        if segment.kind in ("def", "class"):
            assert [type(s).__name__ for s in statements][-1:] in (["FunctionDef"], ["AsyncFunctionDef"], ["ClassDef"])
            assert statements[-1].name == segment.name
            # §3c skips a def nesting code without parsing it: the blanked-code
            # reading must agree with the tree (a wrong True would hide a shim).
            nested = any(isinstance(n, _CODE) for n in ast.walk(statements[-1]) if n is not statements[-1])
            assert segment.nests_code() == nested, (segment.row, segment.name)
        rebuilt += [ast.dump(s, include_attributes=True) for s in statements]
    assert rebuilt == _real_statements(data)
    found = outline(data)
    assert found is not None
    assert _summary(found.statements) == _summary(tree.body)
    last_defs = {s.name: s for s in tree.body if isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef))}
    for name, real in last_defs.items():
        got = found.function(name)
        if real.decorator_list:
            assert got is None  # decorated: never read as a plain function
        else:
            assert ast.dump(got, include_attributes=True) == ast.dump(real, include_attributes=True)


@pytest.mark.parametrize("path", CORPUS, ids=lambda p: p.name)
def test_the_outline_of_real_modules_is_their_top_level(path):
    data = path.read_bytes()
    try:
        ast.parse(data)
    except SyntaxError:
        pytest.skip("not valid Python for this interpreter")
    _check(data)


def test_lines_that_only_look_like_statement_starts():
    data = TRICKY.encode()
    _check(data)
    names = [(s.kind, s.name) for s in top_level_segments(data) if s.kind in ("def", "class", "decorator")]
    # no `fake`/`inner` (inside strings); `spaced` twice, the last one is what callers get
    assert names == [("decorator", ""), ("def", "decorated"), ("def", "spaced"), ("class", "Box"), ("def", "spaced")]
    # `def inner` inside a string nests nothing; Box's method does
    assert [s.nests_code() for s in top_level_segments(data) if s.kind in ("def", "class")] == [False, False, True, False]
    found = outline(data)
    assert found.function("decorated") is None
    assert found.function("spaced").lineno == TRICKY.splitlines().index("def spaced():") + 1


@pytest.mark.parametrize("literal", [
    b"'''it''s\ndef fake(): ''' ''''\n'''",  # quotes that do not close a triple-quoted literal
    b"'''ends in a quote\\'''' + '''\\\\'''",  # an escaped closing quote, then an escaped backslash
    b'"""say "hi" ""\ndef fake(): """ "x"',  # and one literal right after another
    b"'don\\'t' \"\\\\\" '# no comment'",  # escapes in one-line literals; a hash inside one
    b"'line \\\ndef fake(): '",  # a backslash continues a one-line literal
])
def test_literals_end_where_the_tokenizer_ends_them(literal):
    _check(b"x = " + literal + b"\ndef f():\n    return x\n")


def test_a_byte_order_mark_is_no_code():
    _check(b"\xef\xbb\xbf" + b"import os\ndef f():\n    return os\n")


@pytest.mark.parametrize("data", [
    b"# -*- coding: latin-1 -*-\nx = '\xe9'\n",  # the segments would be decoded as UTF-8
    b"x = 1\ns = '''never closed\ndef f():\n    pass\n",  # an open string: nothing can be trusted
    b"x = 1\n\f@jit\ndef f():\n    pass\n",  # a form feed: the line is at column 0 for the tokenizer
])
def test_sources_the_scan_cannot_read_are_declined(data):
    assert top_level_segments(data) is None
    assert outline(data) is None


def test_a_statement_that_does_not_parse_alone_declines_the_outline():
    assert outline(b"x = (1 +\n2)\ny = [\n)\n") is None


def test_read_outline_parses_whole_what_the_scan_declines():
    data = b"# -*- coding: latin-1 -*-\nNAME = '\xe9'\n\n@wrap\ndef f():\n    pass\n\ndef g():\n    return NAME\n"
    found = read_outline(data)
    assert [ast.dump(s) for s in found.statements] == [ast.dump(s) for s in ast.parse(data).body]
    assert found.function("f") is None and found.function("g").name == "g"
    assert read_outline(b"\f@jit\ndef f():\n    pass\n").defs == {"f": None}  # decorated, as the parse reads it
    assert read_outline(b"x = (\n") is None  # neither read by the scan nor parsable
    assert read_outline(b"def broken(:\n").function("broken") is None  # a def is parsed when asked for
