"""Issue 22: fuzzing the fix engine with FlyDSL-like kernel code.

For any generated file, `--fix` does not crash, its output parses, a second
`--fix` changes nothing, and safe fixes keep the multiset of comment tokens:
only the comment rules (`edits_comments = True`, FLY8xx and FLY003) change
comments, each by exactly what its own fix's edits delete or rewrite, on the
lines it reports.

CI runs a bounded number of examples; set FLYDSL_LINT_FUZZ_EXAMPLES for more.
"""

from __future__ import annotations

import ast
import io
import os
import tokenize
from collections import Counter
from unittest import mock

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from flydsl_lint.engine.diagnostics import Position
from flydsl_lint.engine.source import SourceFile
from flydsl_lint.fixes.apply import apply_edits
from flydsl_lint.rules import all_rules
from flydsl_lint.run import fix_loop
from flydsl_lint.run.checker import Checker
from flydsl_lint.run.fix_loop import fix_source
from tests.conftest import make_settings

EXAMPLES = int(os.environ.get("FLYDSL_LINT_FUZZ_EXAMPLES", "200"))
COMMENT_RULES = frozenset(code for code, cls in all_rules().items() if cls.edits_comments)

IMPORT_STYLES = [
    ("import flydsl.expr as fx\nfrom flydsl.expr import arith\n", "fx", "arith"),
    ("import flydsl.expr as F  # the DSL\nfrom flydsl.expr import arith as A  # legacy ops\n", "F", "A"),
    ("import flydsl.expr as fx\nimport flydsl.expr.arith as ar\n", "fx", "ar"),
    ("from flydsl.expr import arith  # TODO\nimport flydsl.expr as fx  # TODO\n", "fx", "arith"),
]
OPERANDS = ["a", "b", "acc", "x[i]", "a + b", "tid * 4", "0.0", 'tbl["# hi"]', "'#'", 'f"{a}# TODO"', "lut['# TODO']",
            '"""\n# TODO\n"""', "(a  # hi\n        )"]
INLINE_COMMENTS = ["  # TODO", "  # hi", "  # why: keeps NaN semantics", "  # noqa: FLY111", "  # noqa: FLY301",
                   "  # x = fx.Int32(a)", "  #"]
OWN_LINE_COMMENTS = ["# TODO", "# hi", "# ==========================", "# ── Kernel geometry ──────────",
                     "# acc = fx.Int32(fx.Int32(acc))", "# if i > 2:", "# noqa: FLY301", "# flydsl-lint: noqa: FLY802",
                     "#"]


@st.composite
def gap(draw) -> str:
    """What separates two tokens inside brackets: a space, a line break, or a comment and a line break."""
    return draw(st.sampled_from(["", " ", "\n        ", "  # TODO\n        ", "  # hi\n        ", "  # TODO\n    "]))


@st.composite
def wrapped(draw, fx: str, inner: str) -> str:
    """`inner` under one to four `fx.<Type>(...)` wraps, each bracket maybe broken by a comment."""
    for _ in range(draw(st.integers(1, 4))):
        wrap = draw(st.sampled_from(["Int32", "Int32", "Int64", "Float32"]))
        inner = f"{fx}.{wrap}({draw(gap())}{inner}{draw(gap())})"
    return inner


@st.composite
def expression(draw, fx: str, arith: str) -> str:
    lhs, rhs = draw(st.sampled_from(OPERANDS)), draw(st.sampled_from(OPERANDS))
    comma = f",{draw(gap())} "
    options = [
        draw(wrapped(fx, lhs)),
        f"{arith}.maximumf({lhs}{comma}{rhs})",
        f"{arith}.minimumf({draw(gap())}{lhs}{comma}{rhs}{draw(gap())})",
        f"{arith}.maxnumf({lhs}{comma}{rhs}, fastmath=fm)",
        f"{arith}.maximumf({draw(wrapped(fx, lhs))}{comma}{rhs})",
        f"{arith}.ArithValue({lhs}) + {rhs}",
        f"{arith}.unwrap({lhs} >= {rhs})",
        f"{arith}.index_cast(T.index{comma}{lhs})",
        f"{arith}._to_raw({lhs})",
        f"{fx}.make_layout({fx}.Int32(BLOCK){comma}{fx}.Int32(1))",
        f"{arith}.ceildivsi({lhs}{comma}{rhs})",
        f"({lhs}).maximumf({rhs})",
    ]
    return draw(st.sampled_from(options))


@st.composite
def kernel_file(draw) -> str:
    imports, fx, arith = draw(st.sampled_from(IMPORT_STYLES))
    lines = [imports, "from flydsl.expr.typing import T\nimport flydsl.compiler as flyc\n\nBLOCK = 128\n\n",
             "@flyc.kernel\ndef k(a, b, acc, x, tid, fm, i, tbl, lut):\n"]
    for index in range(draw(st.integers(1, 6))):
        for _ in range(draw(st.integers(0, 2))):
            lines.append(f"    {draw(st.sampled_from(OWN_LINE_COMMENTS))}\n")
        lines.append("\n" * draw(st.sampled_from([0, 0, 1, 3])))
        comment = draw(st.sampled_from(["", ""] + INLINE_COMMENTS))
        lines.append(f"    v{index} = {draw(expression(fx, arith))}{comment}\n")
    lines.append("    return v0  # TODO\n")
    return "".join(lines)


def comment_tokens(text: str) -> Counter:
    tokens = tokenize.generate_tokens(io.StringIO(text).readline)
    return Counter(token.string for token in tokens if token.type == tokenize.COMMENT)


@pytest.fixture(scope="module")
def checker(tmp_path_factory) -> Checker:
    return Checker(make_settings(tmp_path_factory.mktemp("fuzz")))


def _fix_recording_comment_changes(checker: Checker, text: str, unsafe: bool) -> tuple[str, Counter]:
    """The fixed text, and the comments it should have: the original ones as
    each applied comment-rule fix changes them. Asserts on the way that every
    other applied safe fix leaves the comments alone."""
    expected = comment_tokens(text)
    checked: list[str] = []
    check, choose = checker.check, fix_loop.choose_fixes

    def recording_check(source, **options):
        checked.append(source.text)
        return check(source, **options)

    def recording_choose(diagnostics, unsafe_fixes):
        chosen = choose(diagnostics, unsafe_fixes)
        before = checked[-1]
        for diagnostic in chosen:
            after = apply_edits(before, list(diagnostic.fix.edits), "\n")
            if diagnostic.code in COMMENT_RULES:
                for edit in diagnostic.fix.edits:  # it deletes what it reports: its own lines
                    assert diagnostic.start.row <= edit.start.row and edit.end.row <= diagnostic.end.row + 1, diagnostic
                expected.subtract(comment_tokens(before))
                expected.update(comment_tokens(after))
            elif not unsafe:
                assert comment_tokens(after) == comment_tokens(before), (diagnostic.code, diagnostic.fix, before)
        return chosen

    source = SourceFile(checker.settings.root.joinpath("k.py").as_posix(), text)
    with mock.patch.object(checker, "check", recording_check), mock.patch.object(fix_loop, "choose_fixes", recording_choose):
        fixed = fix_source(source, checker, unsafe=unsafe).new_text
    return fixed, +expected


@settings(max_examples=EXAMPLES, deadline=None)
@given(text=kernel_file(), unsafe=st.booleans())
def test_fixes_parse_are_idempotent_and_keep_comments(checker, text, unsafe):
    ast.parse(text)  # the generator writes valid code
    fixed, expected_comments = _fix_recording_comment_changes(checker, text, unsafe)
    ast.parse(fixed)
    path = checker.settings.root.joinpath("k.py").as_posix()
    assert fix_source(SourceFile(path, fixed), checker, unsafe=unsafe).new_text == fixed
    if not unsafe:
        assert comment_tokens(fixed) == expected_comments


@settings(max_examples=EXAMPLES, deadline=None)
@given(text=kernel_file())
def test_fix_edits_stay_within_their_diagnostic(checker, text):
    """Each edit of a code fix lies inside what its diagnostic reports (whole lines' line
    breaks included); only an import may be added elsewhere. (The comment rules' edits are
    checked against their own lines above.)"""
    source = SourceFile(checker.settings.root.joinpath("k.py").as_posix(), text)
    for diagnostic in checker.check(source):
        if diagnostic.code in COMMENT_RULES:
            continue
        end_of_line = Position(diagnostic.end.row + 1, 0)
        for edit in diagnostic.fix.edits if diagnostic.fix else ():
            is_import = edit.content.startswith(("import ", "from ")) and edit.start == edit.end
            inside = diagnostic.start <= edit.start and edit.end <= max(diagnostic.end, end_of_line)
            assert is_import or inside, (diagnostic, edit)
