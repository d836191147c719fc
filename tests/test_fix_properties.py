"""Property tests: fixes on generated legacy kernel code in varied formatting.

For any generated file: every fix edit stays inside its diagnostic's range (or
is an import edit), the fixed code parses, a second pass changes nothing, and
every comment survives a safe fix (a fix that would drop one is lowered to
unsafe and says so, as ruff does).
"""

from __future__ import annotations

import ast

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from flydsl_lint.engine.checker import Checker
from flydsl_lint.engine.source import SourceFile, find_comments
from flydsl_lint.engine.model import SemanticModel
from flydsl_lint.fixes.apply import fix_source
from tests.conftest import make_settings

IMPORT_STYLES = [
    ("import flydsl.expr as fx\nfrom flydsl.expr import arith\n", "fx", "arith"),
    ("import flydsl.expr as F\nfrom flydsl.expr import arith as A\n", "F", "A"),
    ("import flydsl.expr as fx\nimport flydsl.expr.arith as ar\n", "fx", "ar"),
    ("from flydsl.expr import arith\n", None, "arith"),
]
OPERANDS = ["a", "b", "acc", "row_max", "x[i]", "a + b", "tid * 4", "0.0"]


@st.composite
def separator(draw) -> str:
    """Space, line break or comment between call arguments."""
    return draw(st.sampled_from([", ", ",", ",\n        ", ",  # keep\n        ", " ,  "]))


@st.composite
def construct(draw, fx: str | None, arith: str) -> str:
    lhs, rhs = draw(st.sampled_from(OPERANDS)), draw(st.sampled_from(OPERANDS))
    sep = draw(separator())
    wrap = draw(st.sampled_from(["Int32", "Int64", "Float32"]))
    options = [
        f"{arith}.maximumf({lhs}{sep}{rhs})",
        f"{arith}.minimumf(\n        {lhs}{sep}{rhs}\n    )",
        f"{arith}.maxnumf({lhs}{sep}{rhs}, fastmath=fm)",
        f"{arith}.ceildivsi({lhs}{sep}{rhs})",
        f"{lhs.split()[0]}.maximumf({rhs})",
        f"{arith}.unwrap({lhs} >= {rhs})",
        f"{arith}.index_cast(T.index{sep}{lhs})",
    ]
    if fx:
        options += [
            f"{fx}.{wrap}({fx}.{wrap}({lhs}))",
            f"{fx}.{wrap}(  # outer\n        {fx}.{wrap}({lhs})\n    )",
            f"{fx}.make_layout({fx}.Int32(BLOCK){sep}{fx}.Int32(1))",
            f"{arith}.maximumf({fx}.{wrap}({fx}.{wrap}({lhs})){sep}{rhs})",
        ]
    return draw(st.sampled_from(options))


@st.composite
def kernel_file(draw) -> str:
    imports, fx, arith = draw(st.sampled_from(IMPORT_STYLES))
    body = draw(st.lists(construct(fx, arith), min_size=1, max_size=6))
    lines = [imports, "from flydsl.expr.typing import T\nimport flydsl.compiler as flyc\n\nBLOCK = 128\n\n",
             "@flyc.kernel\ndef k(a, b, acc, row_max, x, tid, fm, i):\n"]
    for index, statement in enumerate(body):
        comment = draw(st.sampled_from(["", "  # why: keeps NaN semantics", ""]))
        lines.append(f"    v{index} = {statement}{comment}\n")
    lines.append("    return v0\n")
    return "".join(lines)


def _comments(text: str) -> list[str]:
    source = SourceFile("k.py", text)
    model = SemanticModel(source.tree)
    return sorted(c.text for c in find_comments(source, model.string_spans))


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(text=kernel_file(), unsafe=st.booleans())
def test_fixes_stay_in_range_parse_are_idempotent_and_keep_comments(tmp_path, text, unsafe):
    checker = Checker(make_settings(tmp_path, select=("FLY1", "FLY3")))
    source = SourceFile(str(tmp_path / "k.py"), text)
    drops_comment = False
    for diagnostic in checker.check(source):
        drops_comment |= bool(diagnostic.fix and "drops a comment" in diagnostic.fix.message)
        for edit in diagnostic.fix.edits if diagnostic.fix else ():
            is_import = edit.content.startswith(("import ", "from ")) and edit.start == edit.end
            assert is_import or (diagnostic.start <= edit.start and edit.end <= diagnostic.end), (diagnostic, edit)

    fixed = fix_source(source, checker, unsafe=unsafe).new_text
    ast.parse(fixed)
    again = fix_source(SourceFile(source.path, fixed), checker, unsafe=unsafe).new_text
    assert again == fixed
    if not (unsafe and drops_comment):
        assert _comments(fixed) == _comments(text)
