"""FLY803's safe fix never deletes human prose (issue 27, item 2).

Safe only for pure commented-out code: two statements or more (nested ones
count), with no comment and no `Label: ...` annotation among them. A lone
statement is unsafe (it may be a remark quoting code); a run holding words is
display-only (the words would go with it).
"""

from __future__ import annotations

import pytest

from flydsl_lint.docs import render_rule
from flydsl_lint.rules import all_rules
from tests.conftest import fix_text, lint_text

SELECT = {"select": ("FLY803",)}
FX = "import flydsl.expr as fx\n"  # FLY803 runs only in FlyDSL files


def _applicability(text: str, tmp_path) -> list[str]:
    return [d.fix.applicability.value for d in lint_text(text, tmp_path, **SELECT)]


@pytest.mark.parametrize("text", [
    FX + "x = 1\n# Previously: out = fx.copy(a, b)  # see #123\ny = 2\n",
    FX + "x = 1\n# rocdl.sched_barrier(0)  # re-enable once the scheduler bug is fixed\ny = 2\n",
    FX + "x = 1\n# a = fx.f(b)\n# c = fx.g(a)  # the slow path, kept for the gfx942 comparison\ny = 2\n",
    FX + "x = 1\n# Old: a = fx.f(b)\n# c = fx.g(a)\ny = 2\n",
])
def test_prose_around_code_is_never_deleted_by_a_fix(tmp_path, text):
    assert _applicability(text, tmp_path) == ["display-only"]
    assert fix_text(text, tmp_path, **SELECT) == text
    assert fix_text(text, tmp_path, unsafe=True, **SELECT) == text


@pytest.mark.parametrize("text", [
    FX + "x = 1\n# rocdl.sched_barrier(0)\ny = 2\n",
    FX + "x = 1\n# all_below = fx.Boolean(False).ir_value()\ny = 2\n",
])
def test_a_lone_statement_is_unsafe(tmp_path, text):
    assert _applicability(text, tmp_path) == ["unsafe"]
    assert fix_text(text, tmp_path, **SELECT) == text
    assert fix_text(text, tmp_path, unsafe=True, **SELECT) == FX + "x = 1\ny = 2\n"


@pytest.mark.parametrize("text", [
    FX + "x = 1\n# a = fx.f(b)\n# c = fx.g(a)\ny = 2\n",
    FX + "x = 1\n# if i > 2:\n#     rocdl.sched_dswr(1)\ny = 2\n",
])
def test_pure_commented_out_code_stays_safe(tmp_path, text):
    assert _applicability(text, tmp_path) == ["safe"]
    assert fix_text(text, tmp_path, **SELECT) == FX + "x = 1\ny = 2\n"


def test_rule_page_states_the_test():
    page = render_rule(all_rules()["FLY803"])
    assert "two statements or more" in page and "is display-only" in page and "is unsafe" in page
