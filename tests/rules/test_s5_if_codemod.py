"""§5 FLY501: the result-less raw `scf.IfOp` codemod and every refusal it states."""

from __future__ import annotations

import pytest

from flydsl_lint.engine.diagnostics import Applicability
from tests.conftest import fix_text, lint_text

HEAD = (
    "import flydsl.compiler as flyc\nimport flydsl.expr as fx\nfrom flydsl._mlir import ir\n"
    "from flydsl._mlir.dialects import scf\n\n\n"
    "@flyc.kernel\ndef k(x: fx.Int32):\n    low = fx.as_ir_value(x < 32)\n"
)
FIXED_HEAD = HEAD.replace("from flydsl._mlir import ir\nfrom flydsl._mlir.dialects import scf\n", "")
HELPERS_HEAD = HEAD.replace("from flydsl._mlir import ir\n", "").replace(
    "import scf\n", "import scf\nfrom kernels.common.kernels_common import _if_then, _if_else\n")
THEN_ONLY = (
    "    op = scf.IfOp(low)\n    with ir.InsertionPoint(op.then_block):\n        fx.printf(x)\n        scf.YieldOp([])\n"
)


def _flagged(source, tmp_path):
    found = [d for d in lint_text(source, tmp_path, select=("FLY501",)) if d.code == "FLY501"]
    assert len(found) == 1, [d.message for d in found]
    return found[0]


def test_a_then_only_op_becomes_an_if(tmp_path):
    assert fix_text(HEAD + THEN_ONLY, tmp_path, unsafe=True, select=("FLY501",)) == FIXED_HEAD + (
        "    if low:\n        fx.printf(x)\n"
    )
    assert _flagged(HEAD + THEN_ONLY, tmp_path).fix.applicability is Applicability.UNSAFE
    assert fix_text(HEAD + THEN_ONLY, tmp_path, select=("FLY501",)) == HEAD + THEN_ONLY


def test_the_if_then_helpers_become_an_if_else(tmp_path):
    source = HELPERS_HEAD + (
        "    op = scf.IfOp(low, has_else=True)\n    with _if_then(op):\n        fx.printf(x)\n"
        "    # the other half\n    with _if_else(op, scf):\n        fx.printf(x + 1)\n        scf.YieldOp([])\n"
    )
    assert fix_text(source, tmp_path, unsafe=True, select=("FLY501",)) == FIXED_HEAD + (
        "    if low:\n        fx.printf(x)\n    # the other half\n    else:\n        fx.printf(x + 1)\n"
    )


def test_names_local_to_a_branch_are_no_refusal(tmp_path):
    source = HEAD + THEN_ONLY.replace("        fx.printf(x)\n", "        y = x + 1\n        fx.printf(y)\n")
    assert _flagged(source, tmp_path).fix is not None


REFUSALS = {
    "not traced": (
        "from flydsl._mlir import ir\nfrom flydsl._mlir.dialects import scf\ndef helper(low):\n"
        "    op = scf.IfOp(low)\n    with ir.InsertionPoint(op.then_block):\n        scf.YieldOp([])\n",
        "it is not in a @flyc.kernel/@flyc.jit body"),
    "built conditionally": (
        HEAD + "    for i in range_constexpr(2):\n        if i:\n            op = scf.IfOp(low)\n"
        "            with ir.InsertionPoint(op.then_block):\n                scf.YieldOp([])\n",
        "it is built conditionally"),
    "results": (
        HEAD + "    op = scf.IfOp(low, [T.i32], has_else=True)\n    with ir.InsertionPoint(op.then_block):\n"
        "        scf.YieldOp([a])\n    with ir.InsertionPoint(op.else_block):\n        scf.YieldOp([b])\n    r = op.results[0]\n",
        "the op yields values (carried results need an initialisation of matching type before a Python `if`; rewrite it by hand)"),
    "region not next": (
        HEAD + "    op = scf.IfOp(low)\n    fx.printf(x)\n    with ir.InsertionPoint(op.then_block):\n        scf.YieldOp([])\n",
        "the then region is not entered by a `with` right after the op"),
    "else missing": (
        HEAD + "    op = scf.IfOp(low, has_else=True)\n    with ir.InsertionPoint(op.then_block):\n        scf.YieldOp([])\n",
        "the else region is not entered by a `with` right after the then region"),
    "no yield": (
        HEAD + "    op = scf.IfOp(low)\n    with ir.InsertionPoint(op.then_block):\n        fx.printf(x)\n",
        "the then region does not end in `scf.YieldOp([])`"),
    "yield values": (
        HEAD + "    op = scf.IfOp(low)\n    with ir.InsertionPoint(op.then_block):\n        scf.YieldOp([x])\n",
        "the then region does not end in `scf.YieldOp([])`"),
    "yield twice": (
        HEAD + "    op = scf.IfOp(low)\n    with ir.InsertionPoint(op.then_block):\n        scf.YieldOp([])\n        scf.YieldOp([])\n",
        "the then region yields more than once, values, or in a nested region"),
    "carried name": (
        HEAD + "    y = x\n    op = scf.IfOp(low)\n    with ir.InsertionPoint(op.then_block):\n        y = x + 1\n        scf.YieldOp([])\n",
        "a region assigns `y`, which lives outside it (a Python `if` would carry it as an scf.if result)"),
    "return": (
        HEAD + "    op = scf.IfOp(low)\n    with ir.InsertionPoint(op.then_block):\n        return\n        scf.YieldOp([])\n",
        "a region has a `return` of its own"),
    "escapes": (HEAD + THEN_ONLY + "    keep(op)\n", "the op escapes (`op` is used on line 14)"),
    "comment in header": (
        HEAD + THEN_ONLY.replace("scf.IfOp(low)\n", "scf.IfOp(low)  # guard\n"),
        "a comment in the `if` header would be lost"),
    "other keyword": (
        HEAD + THEN_ONLY.replace("scf.IfOp(low)", "scf.IfOp(low, loc=here)"),
        "the op takes `loc=`, which a Python `if` cannot express"),
}


@pytest.mark.parametrize("name", REFUSALS)
def test_refusal_names_its_reason_and_offers_no_fix(name, tmp_path):
    source, reason = REFUSALS[name]
    found = _flagged(source, tmp_path)
    assert found.fix is None
    assert found.message.endswith(f"; no automatic rewrite: {reason}"), found.message
    assert fix_text(source, tmp_path, unsafe=True, select=("FLY501",)) == source


# --- FLY503: direct scf_if_dispatch calls ----------------------------------------------

DISPATCH_HEAD = (
    "import flydsl.compiler as flyc\nimport flydsl.expr as fx\n"
    "from flydsl.compiler.ast_rewriter import ReplaceIfWithDispatch\n\n\n"
    "@flyc.kernel\ndef k(x: fx.Int32):\n    def _then():\n        fx.printf(x)\n\n    def _else():\n        fx.printf(x + 1)\n\n"
)


def _dispatch_flagged(source, tmp_path):
    found = [d for d in lint_text(source, tmp_path, select=("FLY503",)) if d.code == "FLY503"]
    assert len(found) == 1, [d.message for d in found]
    return found[0]


def test_a_dispatch_with_both_branches_becomes_if_else(tmp_path):
    source = DISPATCH_HEAD + "    ReplaceIfWithDispatch.scf_if_dispatch(x < 32, _then, _else)\n"
    assert fix_text(source, tmp_path, unsafe=True, select=("FLY503",)) == DISPATCH_HEAD.replace(
        "from flydsl.compiler.ast_rewriter import ReplaceIfWithDispatch\n", "") + (
        "    if x < 32:\n        _then()\n    else:\n        _else()\n"
    )
    assert _dispatch_flagged(source, tmp_path).fix.applicability is Applicability.UNSAFE


DISPATCH_REFUSALS = {
    "result used": ("    out = ReplaceIfWithDispatch.scf_if_dispatch(x < 32, _then)\n", "its result is used"),
    "state": ("    ReplaceIfWithDispatch.scf_if_dispatch(x < 32, _then, state_names=('a',), state_values=(x,))\n",
              "it passes state or keywords (`state_names`/`result_names` carry values a Python `if` "
              "would have to initialise before the branch)"),
    "lambda branch": ("    ReplaceIfWithDispatch.scf_if_dispatch(x < 32, lambda: fx.printf(x))\n",
                      "`lambda: fx.printf(x)` is not a local `def` without parameters"),
    "branch with parameters": (
        "    def _named(names):\n        fx.printf(x)\n\n    ReplaceIfWithDispatch.scf_if_dispatch(x < 32, _named)\n",
        "`_named` is not a local `def` without parameters"),
}


@pytest.mark.parametrize("name", DISPATCH_REFUSALS)
def test_dispatch_refusal_names_its_reason_and_offers_no_fix(name, tmp_path):
    source = DISPATCH_HEAD + DISPATCH_REFUSALS[name][0]
    found = _dispatch_flagged(source, tmp_path)
    assert found.fix is None
    assert found.message.endswith(f"; no automatic rewrite: {DISPATCH_REFUSALS[name][1]}"), found.message
    assert fix_text(source, tmp_path, unsafe=True, select=("FLY503",)) == source
