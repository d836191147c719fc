"""§5 FLY501: the raw `scf.IfOp` codemod (with and without results) and every refusal it states."""

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


NESTED_OPS = (
    "    op = scf.IfOp(low)\n    with ir.InsertionPoint(op.then_block):\n        fx.printf(x)\n"
    "        inner = scf.IfOp(low)\n        with ir.InsertionPoint(inner.then_block):\n"
    "            fx.printf(x + 1)\n            scf.YieldOp([])\n        scf.YieldOp([])\n"
)


def test_an_op_built_in_another_ops_region_yields_for_itself(tmp_path):
    assert fix_text(HEAD + NESTED_OPS, tmp_path, unsafe=True, select=("FLY501",)) == FIXED_HEAD + (
        "    if low:\n        fx.printf(x)\n        if low:\n            fx.printf(x + 1)\n"
    )


def test_the_outer_op_is_rewritten_around_an_inner_one_that_is_refused(tmp_path):
    source = HEAD + NESTED_OPS.replace("        with ir.InsertionPoint(inner.then_block):\n",
                                   "        y = x + 2\n        with ir.InsertionPoint(inner.then_block):\n")
    fixed = fix_text(source, tmp_path, unsafe=True, select=("FLY501",))
    assert fixed == HEAD + (
        "    if low:\n        fx.printf(x)\n        inner = scf.IfOp(low)\n        y = x + 2\n"
        "        with ir.InsertionPoint(inner.then_block):\n            fx.printf(x + 1)\n            scf.YieldOp([])\n"
    ), fixed


def test_a_yield_inside_a_plain_nested_block_is_still_refused(tmp_path):
    source = HEAD + THEN_ONLY.replace("        fx.printf(x)\n", "        for i in range_constexpr(2):\n"
                                      "            scf.YieldOp([])\n")
    found = _flagged(source, tmp_path)
    assert found.fix is None and found.message.endswith("yields more than once, or inside a nested block"), found.message


def test_names_local_to_a_branch_are_no_refusal(tmp_path):
    source = HEAD + THEN_ONLY.replace("        fx.printf(x)\n", "        y = x + 1\n        fx.printf(y)\n")
    assert _flagged(source, tmp_path).fix is not None


REFUSALS = {
    "not in a function": (
        "from flydsl._mlir import ir\nfrom flydsl._mlir.dialects import scf\n"
        "op = scf.IfOp(low)\nwith ir.InsertionPoint(op.then_block):\n    scf.YieldOp([])\n",
        "it is not in a @flyc.kernel/@flyc.jit body"),
    "built conditionally": (
        HEAD + "    for i in range_constexpr(2):\n        if i:\n            op = scf.IfOp(low)\n"
        "            with ir.InsertionPoint(op.then_block):\n                scf.YieldOp([])\n",
        "it is built conditionally"),
    "result type not imported": (
        HEAD + "    op = scf.IfOp(low, [T.i32], has_else=True)\n    with ir.InsertionPoint(op.then_block):\n"
        "        scf.YieldOp([a])\n    with ir.InsertionPoint(op.else_block):\n        scf.YieldOp([b])\n    r = op.results[0]\n",
        "the result type `T.i32` is not a scalar type the codemod knows"),
    "region not next": (
        HEAD + "    op = scf.IfOp(low)\n    fx.printf(x)\n    with ir.InsertionPoint(op.then_block):\n        scf.YieldOp([])\n",
        "the then region is not entered by a `with` right after the op"),
    "else missing": (
        HEAD + "    op = scf.IfOp(low, has_else=True)\n    with ir.InsertionPoint(op.then_block):\n        scf.YieldOp([])\n",
        "the else region is not entered by a `with` right after the then region"),
    "no yield": (
        HEAD + "    op = scf.IfOp(low)\n    with ir.InsertionPoint(op.then_block):\n        fx.printf(x)\n",
        "the then region does not end in its `scf.YieldOp`"),
    "yield values": (
        HEAD + "    op = scf.IfOp(low)\n    with ir.InsertionPoint(op.then_block):\n        scf.YieldOp([x])\n",
        "the then region yields 1 value for the op's 0 results"),
    "yield twice": (
        HEAD + "    op = scf.IfOp(low)\n    with ir.InsertionPoint(op.then_block):\n        scf.YieldOp([])\n        scf.YieldOp([])\n",
        "the then region yields more than once, or inside a nested block"),
    "method of an outer name": (
        HEAD + "    acc = make_acc()\n    op = scf.IfOp(low)\n    with ir.InsertionPoint(op.then_block):\n"
        "        acc.store(x)\n        scf.YieldOp([])\n",
        "a region calls a method of `acc`, which lives outside it (a Python `if` would carry it as an scf.if result)"),
    "subscript store to an outer name": (
        HEAD + "    vals = [x]\n    op = scf.IfOp(low)\n    with ir.InsertionPoint(op.then_block):\n"
        "        vals[0] = x + 1\n        scf.YieldOp([])\n",
        "a region assigns `vals`, which lives outside it (a Python `if` would carry it as an scf.if result)"),
    "attribute store to an outer name": (
        HEAD + "    acc = make_acc()\n    op = scf.IfOp(low)\n    with ir.InsertionPoint(op.then_block):\n"
        "        acc.state.last = x\n        scf.YieldOp([])\n",
        "a region assigns `acc`, which lives outside it (a Python `if` would carry it as an scf.if result)"),
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


# --- FLY501: an op with results ------------------------------------------------------------

RESULTS_HEAD = (
    "import flydsl.compiler as flyc\nimport flydsl.expr as fx\nfrom flydsl._mlir import ir\n"
    "from flydsl._mlir.dialects import scf\nfrom flydsl.expr.typing import T\n\n\n"
    "@flyc.kernel\ndef k(x: fx.Int32, y: fx.Float32):\n"
)
RESULTS_FIXED_HEAD = (
    "import flydsl.compiler as flyc\nimport flydsl.expr as fx\n\n\n@flyc.kernel\ndef k(x: fx.Int32, y: fx.Float32):\n"
)
TWO_RESULTS = (
    "    op = scf.IfOp(fx.as_ir_value(x < 32), [T.f32, T.i32], has_else=True)\n"
    "    with ir.InsertionPoint(op.then_block):\n        doubled = y * 2.0\n"
    "        scf.YieldOp([fx.as_ir_value(doubled), x.ir_value()])\n"
    "    with ir.InsertionPoint(op.else_block):\n        scf.YieldOp([fx.as_ir_value(y + 1.0), fx.as_ir_value(x + 1)])\n"
)


def _results_case(source, tmp_path):
    return fix_text(RESULTS_HEAD + source, tmp_path, unsafe=True, select=("FLY501",))


def test_results_become_names_initialised_before_the_if_and_assigned_in_each_branch(tmp_path):
    source = TWO_RESULTS + "    picked = fx.Float32(op.results[0])\n    fx.printf(picked, fx.Int32(op.results[1]))\n"
    assert _results_case(source, tmp_path) == RESULTS_FIXED_HEAD + (
        "    picked = fx.Float32(0.0)\n    op_result1 = fx.Int32(0)\n    if x < 32:\n        doubled = y * 2.0\n"
        "        picked = doubled\n        op_result1 = x\n    else:\n        picked = y + 1.0\n        op_result1 = x + 1\n"
        "    fx.printf(picked, op_result1)\n"
    )


def test_one_result_read_as_op_result_and_the_results_keyword(tmp_path):
    source = ("    op = scf.IfOp(fx.as_ir_value(x < 32), results_=[T.i32], has_else=True)\n"
              "    with ir.InsertionPoint(op.then_block):\n        scf.YieldOp([fx.as_ir_value(x * 2)])\n"
              "    with ir.InsertionPoint(op.else_block):\n        scf.YieldOp([fx.as_ir_value(x)])\n"
              "    fx.printf(fx.Int32(op.result))\n    fx.printf(fx.Int32(op.results[0]))\n")
    assert _results_case(source, tmp_path) == RESULTS_FIXED_HEAD + (
        "    op_result = fx.Int32(0)\n    if x < 32:\n        op_result = x * 2\n    else:\n        op_result = x\n"
        "    fx.printf(op_result)\n    fx.printf(op_result)\n"
    )


def _results_refusal(source, tmp_path):
    found = [d for d in lint_text(RESULTS_HEAD + source, tmp_path, select=("FLY501",))
             if d.code == "FLY501"]
    assert len(found) == 1 and found[0].fix is None, [d.message for d in found]
    assert _results_case(source, tmp_path) == RESULTS_HEAD + source
    return found[0].message.partition("; no automatic rewrite: ")[2]


RESULT_REFUSALS = {
    "no else": (TWO_RESULTS.replace("has_else=True", "has_else=False"), "the op has results but no else region"),
    "vector type": (TWO_RESULTS.replace("[T.f32, T.i32]", "[T.vec(4, T.f32), T.i32]"),
                    "the result type `T.vec(4, T.f32)` is not a scalar type the codemod knows"),
    "types not a list": (TWO_RESULTS.replace("[T.f32, T.i32]", "types"),
                         "its result types `types` are not a list the codemod can read"),
    "wrong arity": (TWO_RESULTS.replace("x.ir_value()])", "])"),
                    "the then region yields 1 value for the op's 2 results"),
    "yield not last": (TWO_RESULTS.replace("        scf.YieldOp([fx.as_ir_value(doubled), x.ir_value()])\n",
                                           "        scf.YieldOp([fx.as_ir_value(doubled), x.ir_value()])\n        fx.printf(y)\n"),
                       "the then region does not end in its `scf.YieldOp`"),
    "yield repeated": (TWO_RESULTS.replace("        doubled = y * 2.0\n",
                                           "        doubled = y * 2.0\n        scf.YieldOp([fx.as_ir_value(y), x.ir_value()])\n"),
                       "the then region yields more than once, or inside a nested block"),
    "helper regions": ("    from kernels.common.kernels_common import _if_then\n"
                       + TWO_RESULTS.replace("with ir.InsertionPoint(op.then_block):", "with _if_then(op):"),
                       "`_if_then` closes the then region with an empty yield, but the op has results"),
    "read before the op ends": (TWO_RESULTS.replace("        doubled = y * 2.0\n", "        doubled = y * 2.0\n"
                                                    "        fx.printf(fx.Float32(op.results[0]))\n"),
                                "result 0 is read on line 13, before the op ends"),
    "raw read": (TWO_RESULTS + "    fx.printf(op.results[0])\n",
                 "result 0 is read raw on line 16 (a Python `if` carries an fx value: read it as `fx.<type>(op.results[0])`)"),
    "read as another class": (TWO_RESULTS + "    fx.printf(fx.Int32(op.results[0]))\n",
                              "result 0 is read as `fx.Int32` on line 16, but the regions yield an fx.Float32"),
    "unknown type": (TWO_RESULTS.replace("fx.as_ir_value(doubled)", "raw_value"),
                     "the then region yields `raw_value` as result 0, whose fx type is not proven "
                     "(unknown: `raw_value` is not bound in this module)"),
    "declared type mismatch": (TWO_RESULTS.replace("[T.f32, T.i32]", "[T.f32, T.i64]"),
                               "result 1 has type `T.i64`, but the then region yields an fx.Int32"),
    "branches disagree": (TWO_RESULTS.replace("fx.as_ir_value(x + 1)", "fx.as_ir_value(fx.Uint32(x))"),
                          "result 1 is an fx.Int32 in the then region and an fx.Uint32 in the else region"),
    "return in a region": (TWO_RESULTS.replace("        doubled = y * 2.0\n", "        doubled = y * 2.0\n"
                                               "        for i in range(2):\n            return\n"),
                           "a region has a `return` of its own"),
    "None-initialised carried name": ("    out = None\n" + TWO_RESULTS.replace("        doubled = y * 2.0\n",
                                                                             "        doubled = y * 2.0\n        out = doubled\n"),
                                      "a region assigns `out`, initialised to None before the op "
                                      "(None cannot become an scf.if result)"),
    "escapes": (TWO_RESULTS + "    keep(op.results)\n", "the op escapes (`op` is used on line 16)"),
}


@pytest.mark.parametrize("name", RESULT_REFUSALS)
def test_a_refused_op_with_results_says_why(name, tmp_path):
    source, reason = RESULT_REFUSALS[name]
    assert _results_refusal(source, tmp_path) == reason


def test_an_op_with_results_outside_traced_code_is_refused(tmp_path):
    source = RESULTS_HEAD.replace("@flyc.kernel\n", "") + TWO_RESULTS + "    return fx.Float32(op.results[0])\n"
    found = [d for d in lint_text(source, tmp_path, select=("FLY501",)) if d.code == "FLY501"]
    assert [d.message.partition("; no automatic rewrite: ")[2] for d in found] == [
        "the op has results, which a local `@flyc.jit` boundary does not carry"]


def test_a_typed_condition_leaves_its_unwrapping_and_a_raw_one_stays(tmp_path):
    typed = HEAD + THEN_ONLY.replace("scf.IfOp(low)", "scf.IfOp(fx.as_ir_value(x < 32))")
    assert fix_text(typed, tmp_path, unsafe=True, select=("FLY501",)) == FIXED_HEAD + (
        "    if x < 32:\n        fx.printf(x)\n")
    raw = HEAD + THEN_ONLY.replace("scf.IfOp(low)", "scf.IfOp(fx.as_ir_value(pred))")
    assert fix_text(raw, tmp_path, unsafe=True, select=("FLY501",)) == FIXED_HEAD + (
        "    if fx.as_ir_value(pred):\n        fx.printf(x)\n")


# --- FLY501 in a plain helper: a local @flyc.jit boundary ------------------------------

PLAIN_HEAD = (
    "import flydsl.compiler as flyc\nimport flydsl.expr as fx\nfrom flydsl._mlir import ir\n"
    "from flydsl._mlir.dialects import scf\n\n\n"
    "def store_low(x, low):\n"
)
PLAIN_FIXED_HEAD = PLAIN_HEAD.replace("from flydsl._mlir import ir\nfrom flydsl._mlir.dialects import scf\n", "")
PLAIN_IF_ELSE = (
    "    op = scf.IfOp(low, has_else=True)\n    with ir.InsertionPoint(op.then_block):\n        fx.printf(x)\n"
    "        scf.YieldOp([])\n    with ir.InsertionPoint(op.else_block):\n        y = x + 1\n        fx.printf(y)\n"
    "        scf.YieldOp([])\n    fx.printf(x + 2)\n"
)
PLAIN_BOUNDARY = (
    "    @flyc.jit\n    def op_dispatch():\n        if low:\n            fx.printf(x)\n        else:\n"
    "            y = x + 1\n            fx.printf(y)\n\n    op_dispatch()\n    fx.printf(x + 2)\n"
)


def test_an_op_in_a_plain_helper_becomes_a_local_jit_function_with_an_if(tmp_path):
    source = PLAIN_HEAD + PLAIN_IF_ELSE
    assert fix_text(source, tmp_path, unsafe=True, select=("FLY501",)) == PLAIN_FIXED_HEAD + PLAIN_BOUNDARY
    assert _flagged(source, tmp_path).fix.applicability is Applicability.UNSAFE


def test_the_boundary_imports_flydsl_compiler_when_the_file_does_not(tmp_path):
    source = (PLAIN_HEAD + PLAIN_IF_ELSE).replace("import flydsl.compiler as flyc\n", "")
    assert fix_text(source, tmp_path, unsafe=True, select=("FLY501",)) == (
        "import flydsl.expr as fx\nimport flydsl.compiler as flyc\n\n\ndef store_low(x, low):\n" + PLAIN_BOUNDARY)


def test_the_boundary_uses_the_jit_name_the_file_imports_and_a_name_the_helper_does_not(tmp_path):
    source = (PLAIN_HEAD + PLAIN_IF_ELSE).replace("import flydsl.compiler as flyc\n", "from flydsl.compiler import jit\n")
    source = source.replace("    fx.printf(x + 2)\n", "    fx.printf(op_dispatch)\n")
    assert fix_text(source, tmp_path, unsafe=True, select=("FLY501",)) == (
        "from flydsl.compiler import jit\nimport flydsl.expr as fx\n\n\ndef store_low(x, low):\n"
        + PLAIN_BOUNDARY.replace("@flyc.jit", "@jit").replace("op_dispatch()", "op_jit()")
        .replace("    fx.printf(x + 2)\n", "    fx.printf(op_dispatch)\n"))


def test_two_helpers_each_get_the_first_boundary_name(tmp_path):
    # both fixes add the import, so the second helper is fixed in a later pass, seeing the first's name
    head = PLAIN_HEAD.replace("import flydsl.compiler as flyc\n", "")
    source = head + PLAIN_IF_ELSE + "\n\ndef store_again(x, low):\n" + PLAIN_IF_ELSE
    assert fix_text(source, tmp_path, unsafe=True, select=("FLY501",)) == (
        "import flydsl.expr as fx\nimport flydsl.compiler as flyc\n\n\ndef store_low(x, low):\n" + PLAIN_BOUNDARY
        + "\n\ndef store_again(x, low):\n" + PLAIN_BOUNDARY)


LOCAL_IF_THEN = (
    "from contextlib import contextmanager\n\n\n@contextmanager\ndef _if_then(if_op):\n"
    "    with ir.InsertionPoint(if_op.then_block):\n        try:\n            yield if_op.then_block\n"
    "        finally:\n            scf.YieldOp([])\n\n\n"
)


def test_a_local_if_then_helper_enters_the_then_region_in_a_plain_helper(tmp_path):
    source = PLAIN_HEAD.replace("\n\ndef store_low", LOCAL_IF_THEN + "def store_low") + (
        "    op = scf.IfOp(low)\n    with _if_then(op):\n        fx.printf(x)\n")
    fixed = fix_text(source, tmp_path, unsafe=True, select=("FLY501",))
    assert fixed.endswith("def store_low(x, low):\n    @flyc.jit\n    def op_dispatch():\n        if low:\n"
                          "            fx.printf(x)\n\n    op_dispatch()\n"), fixed


def test_a_local_if_then_helper_enters_the_then_region_in_traced_code(tmp_path):
    source = HEAD.replace("\n\n@flyc.kernel", LOCAL_IF_THEN + "@flyc.kernel") + (
        "    op = scf.IfOp(low)\n    with _if_then(op):\n        fx.printf(x)\n")
    assert fix_text(source, tmp_path, unsafe=True, select=("FLY501",)).endswith(
        "    low = fx.as_ir_value(x < 32)\n    if low:\n        fx.printf(x)\n")


def test_a_local_context_manager_entering_another_block_is_no_then_region(tmp_path):
    helper = LOCAL_IF_THEN.replace("if_op.then_block)", "if_op.else_block)")
    source = HEAD.replace("\n\n@flyc.kernel", helper + "@flyc.kernel") + (
        "    op = scf.IfOp(low)\n    with _if_then(op):\n        fx.printf(x)\n")
    assert _flagged(source, tmp_path).message.endswith(
        "; no automatic rewrite: the then region is not entered by a `with` right after the op")


BOUNDARY_REFUSALS = {
    "read after the op": (
        PLAIN_IF_ELSE + "    fx.printf(y)\n",
        "a region binds `y`, which the helper reads outside the op (it would become a local of the "
        "`@flyc.jit` function)"),
    "outer name rebound": (
        "    y = x\n" + PLAIN_IF_ELSE,
        "a region assigns `y`, which lives outside it (it would become a local of the `@flyc.jit` function)"),
    "global": (
        PLAIN_IF_ELSE.replace("        fx.printf(x)\n", "        global seen\n        fx.printf(x)\n", 1),
        "a region has a `global` statement (it would name the `@flyc.jit` function's scope)"),
    "yield in the helper": (
        PLAIN_IF_ELSE.replace("        fx.printf(x)\n", "        yield x\n", 1),
        "a region has a `yield` of its own"),
    "results": (
        "    op = scf.IfOp(low, [T.i32], has_else=True)\n    with ir.InsertionPoint(op.then_block):\n"
        "        scf.YieldOp([fx.as_ir_value(x)])\n    with ir.InsertionPoint(op.else_block):\n"
        "        scf.YieldOp([fx.as_ir_value(x)])\n    fx.printf(fx.Int32(op.results[0]))\n",
        "the op has results, which a local `@flyc.jit` boundary does not carry"),
}


@pytest.mark.parametrize("name", BOUNDARY_REFUSALS)
def test_a_refused_boundary_says_why(name, tmp_path):
    body, reason = BOUNDARY_REFUSALS[name]
    source = PLAIN_HEAD.replace("import scf\n", "import scf\nfrom flydsl.expr.typing import T\n") + body
    found = _flagged(source, tmp_path)
    assert found.fix is None
    assert found.message.endswith(f"; no automatic rewrite: {reason}"), found.message
    assert fix_text(source, tmp_path, unsafe=True, select=("FLY501",)) == source


def test_behind_the_boundary_items_and_methods_of_outer_names_are_no_refusal(tmp_path):
    source = PLAIN_HEAD + "    vals = [x]\n" + PLAIN_IF_ELSE.replace(
        "        fx.printf(x)\n", "        vals[0] = x + 1\n        vals.append(x)\n", 1)
    assert fix_text(source, tmp_path, unsafe=True, select=("FLY501",)) == PLAIN_FIXED_HEAD + "    vals = [x]\n\n" + (
        PLAIN_BOUNDARY.replace("            fx.printf(x)\n", "            vals[0] = x + 1\n            vals.append(x)\n", 1))


def test_no_boundary_when_flyc_cannot_be_imported_under_its_name(tmp_path):
    source = (PLAIN_HEAD + PLAIN_IF_ELSE).replace("import flydsl.compiler as flyc\n", "flyc = None\n")
    assert _flagged(source, tmp_path).message.endswith(
        "; no automatic rewrite: the file binds `flyc` to something else, so `flydsl.compiler.jit` has no spelling")


def test_in_a_plain_helper_an_op_under_a_python_if_gets_its_boundary_there(tmp_path):
    source = PLAIN_HEAD + "    if low is not None:\n" + "".join(
        f"    {line}\n" if line else "\n" for line in PLAIN_IF_ELSE.rstrip("\n").split("\n"))
    expected = PLAIN_FIXED_HEAD + "    if low is not None:\n" + "".join(
        f"    {line}\n" if line else "\n" for line in PLAIN_BOUNDARY.rstrip("\n").split("\n"))
    assert fix_text(source, tmp_path, unsafe=True, select=("FLY501",)) == expected


# --- FLY501 in a def nested in a kernel: the kernel's rewriter rewrites its `if` ---------

NESTED = "    def store():\n" + "".join(f"    {line}\n" for line in THEN_ONLY.rstrip("\n").split("\n")) + "\n    store()\n"


def test_an_op_in_a_def_nested_in_a_kernel_becomes_an_if(tmp_path):
    assert fix_text(HEAD + NESTED, tmp_path, unsafe=True, select=("FLY501",)) == FIXED_HEAD + (
        "    def store():\n        if low:\n            fx.printf(x)\n\n    store()\n")


NESTED_REFUSALS = {
    "method of a kernel name": (
        "    acc = make_acc()\n" + NESTED.replace("            fx.printf(x)\n", "            acc.store(x)\n"),
        "a region calls a method of `acc`, which lives outside it (a Python `if` would carry it as an scf.if result)"),
    "kernel name rebound": (
        "    y = x\n" + NESTED.replace("            fx.printf(x)\n", "            y = x + 1\n            fx.printf(y)\n"),
        "a region assigns `y`, which lives outside it (a Python `if` would carry it as an scf.if result)"),
    "results": (
        NESTED.replace("scf.IfOp(low)", "scf.IfOp(low, [T.i32], has_else=True)"),
        "the op has results in a function nested in traced code (not proven there)"),
}


@pytest.mark.parametrize("name", NESTED_REFUSALS)
def test_a_refused_op_in_a_nested_def_says_why(name, tmp_path):
    body, reason = NESTED_REFUSALS[name]
    found = _flagged(HEAD.replace("import scf\n", "import scf\nfrom flydsl.expr.typing import T\n") + body, tmp_path)
    assert found.fix is None
    assert found.message.endswith(f"; no automatic rewrite: {reason}"), found.message


def test_a_method_of_an_outer_name_inside_a_loop_of_the_region_is_a_refusal(tmp_path):
    source = HEAD + "    acc = make_acc()\n" + THEN_ONLY.replace(
        "        fx.printf(x)\n", "        for i in range_constexpr(2):\n            acc.store(x)\n")
    found = _flagged(source, tmp_path)
    assert found.fix is None and found.message.endswith(
        "a region calls a method of `acc`, which lives outside it (a Python `if` would carry it as an scf.if result)"), \
        found.message
