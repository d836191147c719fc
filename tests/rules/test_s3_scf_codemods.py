"""§3 FLY311: the raw `scf.ForOp` codemod, its rewrites and every refusal it states."""

from __future__ import annotations

import ast

import pytest

from flydsl_lint.engine.diagnostics import Applicability
from tests.conftest import fix_text, lint_text

HEAD = (
    "import flydsl.compiler as flyc\nimport flydsl.expr as fx\nfrom flydsl._mlir import ir\n"
    "from flydsl._mlir.dialects import scf\nfrom flydsl.expr import arith\n\n\n"
    "@flyc.kernel\ndef k(x: fx.Float32, y: fx.Float32, n: fx.Int32):\n"
    "    lo = arith.index(0)\n    hi = fx.Index(n).ir_value()\n    step = arith.index(1)\n"
)
FIXED_HEAD = HEAD.replace("from flydsl._mlir import ir\nfrom flydsl._mlir.dialects import scf\n", "")
TWO_CARRIED = (
    "    loop = scf.ForOp(lo, hi, step, [fx.as_ir_value(x), fx.as_ir_value(y)])\n"
    "    with ir.InsertionPoint(loop.body):\n"
    "        a, b = loop.inner_iter_args\n"
    "        t = fx.Float32(fx.Int32(fx.Index(loop.induction_variable)))\n"
    "        scf.YieldOp([fx.as_ir_value(fx.Float32(a) + t), b])\n"
    "    first, second = loop.results\n"
    "    out = fx.Float32(loop.results[1])\n"
)


def _flagged(source, tmp_path):
    found = [d for d in lint_text(source, tmp_path, select=("FLY311",)) if d.code == "FLY311"]
    assert len(found) == 1, [d.message for d in found]
    return found[0]


def test_two_carried_values_use_state_and_a_fresh_induction_variable(tmp_path):
    fixed = fix_text(HEAD + TWO_CARRIED, tmp_path, unsafe=True, select=("FLY311",))
    assert fixed == FIXED_HEAD + (
        "    for iv, state in range(lo, hi, step, init=[fx.as_ir_value(x), fx.as_ir_value(y)]):\n"
        "        a, b = state\n"
        "        t = fx.Float32(fx.Int32(fx.Index(iv)))\n"
        "        state = yield [fx.as_ir_value(fx.Float32(a) + t), b]\n"
        "    first, second = state\n"
        "    out = fx.Float32(state[1])\n"
    )
    ast.parse(fixed)


def test_the_fix_is_unsafe_and_not_applied_without_unsafe_fixes(tmp_path):
    source = HEAD + TWO_CARRIED
    assert _flagged(source, tmp_path).fix.applicability is Applicability.UNSAFE
    assert fix_text(source, tmp_path, select=("FLY311",)) == source


def test_a_loop_without_carried_values_gets_an_empty_init_and_loses_its_yield(tmp_path):
    source = HEAD + (
        "    loop = scf.ForOp(lo, hi, step)\n"
        "    with ir.InsertionPoint(loop.body):\n"
        "        i = loop.induction_variable\n"
        "        fx.printf(i)\n"
        "        scf.YieldOp([])\n"
    )
    assert fix_text(source, tmp_path, unsafe=True, select=("FLY311",)) == FIXED_HEAD + (
        "    for i, _ in range(lo, hi, step, init=[]):\n"
        "        fx.printf(i)\n"
    )


def test_a_body_of_only_the_yield_becomes_pass(tmp_path):
    source = HEAD + "    loop = scf.ForOp(lo, hi, step)\n    with ir.InsertionPoint(loop.body):\n        scf.YieldOp([])\n"
    assert fix_text(source, tmp_path, unsafe=True, select=("FLY311",)) == FIXED_HEAD + (
        "    for iv, _ in range(lo, hi, step, init=[]):\n        pass\n"
    )


def test_a_taken_state_name_gets_the_loops_own(tmp_path):
    source = HEAD + "    state = 1\n" + TWO_CARRIED
    fixed = fix_text(source, tmp_path, unsafe=True, select=("FLY311",))
    assert "for iv, loop_state in range(" in fixed and "loop_state = yield [" in fixed


RAW_IMPORTS = "from flydsl._mlir.dialects import arith as _arith\nfrom flydsl._mlir.extras import types as T\n"
# Raw arith constants of type index, the way legacy kernels spell loop bounds.
RAW_INDEX_BOUNDS = {
    "ConstantOp(...).result, extras T": (RAW_IMPORTS, "_arith.ConstantOp(T.index(), 0).result"),
    "constant(...), extras T": (RAW_IMPORTS, "_arith.constant(T.index(), 0)"),
    "ConstantOp(...).result, typing T": (
        "from flydsl._mlir.dialects import arith as _arith\nfrom flydsl.expr.typing import T\n",
        "_arith.ConstantOp(T.index, 0).result"),
    "ConstantOp(...).result, IndexType": ("from flydsl._mlir.dialects import arith as _arith\n",
                                          "_arith.ConstantOp(ir.IndexType.get(), 0).result"),
}


@pytest.mark.parametrize("name", RAW_INDEX_BOUNDS)
def test_a_raw_index_constant_bound_bound_once_is_index_typed(name, tmp_path):
    imports, constant = RAW_INDEX_BOUNDS[name]
    source = HEAD.replace("from flydsl.expr import arith\n", f"from flydsl.expr import arith\n{imports}").replace(
        "    lo = arith.index(0)\n", f"    lo = {constant}\n") + (
        f"    loop = scf.ForOp(lo, {constant.replace('0', '4')}, step, [x])\n"
        "    with ir.InsertionPoint(loop.body):\n        scf.YieldOp([loop.inner_iter_args[0]])\n"
        "    out = loop.results[0]\n")
    fixed = fix_text(source, tmp_path, unsafe=True, select=("FLY311",))
    assert f"    for iv, state in range(lo, {constant.replace('0', '4')}, step, init=[x]):\n" in fixed, fixed
    assert "scf.ForOp" not in fixed and "    out = state\n" in fixed


def test_a_nested_loops_own_break_is_no_refusal(tmp_path):
    source = HEAD + (
        "    loop = scf.ForOp(lo, hi, step, [x])\n    with ir.InsertionPoint(loop.body):\n"
        "        for j in range_constexpr(2):\n            if j:\n                break\n        scf.YieldOp([x])\n"
    )
    assert _flagged(source, tmp_path).fix is not None


def test_nested_raw_loops_are_rewritten_inner_first(tmp_path):
    source = HEAD + (
        "    outer = scf.ForOp(lo, hi, step, [fx.as_ir_value(x)])\n"
        "    with ir.InsertionPoint(outer.body):\n"
        "        inner = scf.ForOp(lo, hi, step, [outer.inner_iter_args[0]])\n"
        "        with ir.InsertionPoint(inner.body):\n"
        "            scf.YieldOp([inner.inner_iter_args[0]])\n"
        "        scf.YieldOp([inner.results[0]])\n"
        "    out = outer.result\n"
    )
    fixed = fix_text(source, tmp_path, unsafe=True, select=("FLY311",))
    assert "scf." not in fixed and fixed.count("in range(lo, hi, step, init=[") == 2, fixed
    ast.parse(fixed)


REFUSALS = {
    "not traced": (
        "from flydsl._mlir import ir\nfrom flydsl._mlir.dialects import scf\nfrom flydsl.expr import arith\n"
        "def helper(x):\n    lo = arith.index(0)\n    loop = scf.ForOp(lo, lo, lo, [x])\n"
        "    with ir.InsertionPoint(loop.body):\n        scf.YieldOp([x])\n",
        "it is not in a @flyc.kernel/@flyc.jit body"),
    "built conditionally": (
        HEAD + "    if n > 0:\n        loop = scf.ForOp(lo, hi, step, [x])\n"
        "        with ir.InsertionPoint(loop.body):\n            scf.YieldOp([x])\n",
        "it is built conditionally"),
    "entered by hand": (
        HEAD + "    loop = scf.ForOp(lo, hi, step, [x])\n    ip = ir.InsertionPoint(loop.body)\n    ip.__enter__()\n"
        "    scf.YieldOp([x])\n    ip.__exit__(None, None, None)\n",
        "the op's body is not entered by `with ir.InsertionPoint(loop.body):` right after it"),
    "escapes": (
        HEAD + TWO_CARRIED + "    keep(loop)\n",
        "the op escapes (`loop` is used whole on line 20)"),
    "attributes set": (
        HEAD + "    loop = scf.ForOp(lo, hi, step, [x])\n    loop.attributes['unroll'] = attr\n"
        "    with ir.InsertionPoint(loop.body):\n        scf.YieldOp([x])\n",
        "the op's body is not entered by `with ir.InsertionPoint(loop.body):` right after it"),
    "attribute set after": (
        HEAD + "    loop = scf.ForOp(lo, hi, step, [x])\n"
        "    with ir.InsertionPoint(loop.body):\n        scf.YieldOp([x])\n    loop.attributes['unroll'] = attr\n",
        "the op escapes or has attributes set (`loop.attributes` on line 16)"),
    "attribute stored": (
        HEAD + "    loop = scf.ForOp(lo, hi, step, [x])\n"
        "    with ir.InsertionPoint(loop.body):\n        scf.YieldOp([x])\n    loop.result = None\n",
        "the op has attributes set (`loop.result` on line 16)"),
    "yield not last": (
        HEAD + "    loop = scf.ForOp(lo, hi, step, [x])\n    with ir.InsertionPoint(loop.body):\n"
        "        scf.YieldOp([x])\n        fx.printf(x)\n",
        "the `scf.YieldOp` is not the body's last statement"),
    "yield repeated": (
        HEAD + "    loop = scf.ForOp(lo, hi, step, [x])\n    with ir.InsertionPoint(loop.body):\n"
        "        scf.YieldOp([x])\n        scf.YieldOp([x])\n",
        "the body does not end in exactly one `scf.YieldOp` (none, repeated or nested)"),
    "yield missing": (
        HEAD + "    loop = scf.ForOp(lo, hi, step, [x])\n    with ir.InsertionPoint(loop.body):\n        fx.printf(x)\n",
        "the body does not end in exactly one `scf.YieldOp` (none, repeated or nested)"),
    "wrong arity": (
        HEAD + "    loop = scf.ForOp(lo, hi, step, [x, y])\n    with ir.InsertionPoint(loop.body):\n        scf.YieldOp([x])\n",
        "the `scf.YieldOp` yields 1 values for 2 carried"),
    "break": (
        HEAD + "    for j in range_constexpr(2):\n        loop = scf.ForOp(lo, hi, step, [x])\n"
        "        with ir.InsertionPoint(loop.body):\n            if n:\n                break\n            scf.YieldOp([x])\n",
        "the body has a `break` of its own"),
    "return": (
        HEAD + "    loop = scf.ForOp(lo, hi, step, [x])\n    with ir.InsertionPoint(loop.body):\n"
        "        for j in range_constexpr(2):\n            if n:\n                return\n        scf.YieldOp([x])\n",
        "the body has a `return` of its own"),
    "i32 bound": (
        HEAD + "    loop = scf.ForOp(fx.Int32(0).ir_value(), hi, step, [x])\n    with ir.InsertionPoint(loop.body):\n"
        "        scf.YieldOp([x])\n",
        "the bound `fx.Int32(0).ir_value()` is not provably index-typed (an i32 bound would change the induction variable's type)"),
    "raw i32 constant bound": (
        HEAD.replace("from flydsl.expr import arith\n", "from flydsl.expr import arith\n" + RAW_IMPORTS)
        + "    loop = scf.ForOp(_arith.ConstantOp(T.i32(), 0).result, hi, step, [x])\n"
        "    with ir.InsertionPoint(loop.body):\n        scf.YieldOp([x])\n",
        "the bound `_arith.ConstantOp(T.i32(), 0).result` is not provably index-typed "
        "(an i32 bound would change the induction variable's type)"),
    "raw constant op, not its result": (
        HEAD.replace("from flydsl.expr import arith\n", "from flydsl.expr import arith\n" + RAW_IMPORTS)
        + "    loop = scf.ForOp(_arith.ConstantOp(T.index(), 0), hi, step, [x])\n"
        "    with ir.InsertionPoint(loop.body):\n        scf.YieldOp([x])\n",
        "the bound `_arith.ConstantOp(T.index(), 0)` is not provably index-typed "
        "(an i32 bound would change the induction variable's type)"),
    "uncalled index type function": (
        HEAD.replace("from flydsl.expr import arith\n", "from flydsl.expr import arith\n" + RAW_IMPORTS)
        + "    loop = scf.ForOp(_arith.constant(T.index, 0), hi, step, [x])\n"
        "    with ir.InsertionPoint(loop.body):\n        scf.YieldOp([x])\n",
        "the bound `_arith.constant(T.index, 0)` is not provably index-typed "
        "(an i32 bound would change the induction variable's type)"),
    "rebound bound": (
        HEAD + "    lo = arith.index(1)\n    loop = scf.ForOp(lo, hi, step, [x])\n    with ir.InsertionPoint(loop.body):\n"
        "        scf.YieldOp([x])\n",
        "the bound `lo` is not provably index-typed (an i32 bound would change the induction variable's type)"),
    "None init": (
        HEAD + "    loop = scf.ForOp(lo, hi, step, [None])\n    with ir.InsertionPoint(loop.body):\n        scf.YieldOp([x])\n",
        "an init is None or a Python scalar"),
    "scalar init": (
        HEAD + "    loop = scf.ForOp(lo, hi, step, [0.0])\n    with ir.InsertionPoint(loop.body):\n        scf.YieldOp([x])\n",
        "an init is None or a Python scalar"),
    "results before the loop": (
        HEAD + "    loop = scf.ForOp(lo, hi, step, [x])\n    early = loop.results[0]\n"
        "    with ir.InsertionPoint(loop.body):\n        scf.YieldOp([x])\n",
        "the op's body is not entered by `with ir.InsertionPoint(loop.body):` right after it"),
    "result index out of range": (
        HEAD + "    loop = scf.ForOp(lo, hi, step, [x])\n    with ir.InsertionPoint(loop.body):\n        scf.YieldOp([x])\n"
        "    out = loop.results[1]\n",
        "the op escapes or has attributes set (`loop.results` on line 16)"),
    "comment in header": (
        HEAD + "    loop = scf.ForOp(lo, hi, step, [x])  # the k loop\n    with ir.InsertionPoint(loop.body):\n"
        "        scf.YieldOp([x])\n",
        "a comment in the loop header would be lost"),
    "range rebound": (
        HEAD.replace("@flyc.kernel", "range = my_range\n\n\n@flyc.kernel") + "    loop = scf.ForOp(lo, hi, step, [x])\n"
        "    with ir.InsertionPoint(loop.body):\n        scf.YieldOp([x])\n",
        "`range` is rebound in this file"),
}


@pytest.mark.parametrize("name", REFUSALS)
def test_refusal_names_its_reason_and_offers_no_fix(name, tmp_path):
    source, reason = REFUSALS[name]
    found = _flagged(source, tmp_path)
    assert found.fix is None
    assert found.message.endswith(f"; no automatic rewrite: {reason}"), found.message
    assert fix_text(source, tmp_path, unsafe=True, select=("FLY311",)) == source


# --- FLY312: scf.WhileOp -------------------------------------------------------------

WHILE_HEAD = HEAD.replace("from flydsl.expr import arith\n", "from flydsl.expr.typing import T\n") + "    init = fx.as_ir_value(n)\n"
BLOCKS = (
    "    loop = scf.WhileOp([T.i32, T.i32], [init, init])\n"
    "    before = ir.Block.create_at_start(loop.before, [T.i32, T.i32])\n"
    "    after = ir.Block.create_at_start(loop.after, [T.i32, T.i32])\n"
)
BEFORE = (
    "    with ir.InsertionPoint(before):\n        a = before.arguments[0]\n        b = before.arguments[1]\n"
    "        scf.ConditionOp(fx.as_ir_value(fx.Int32(a) < fx.Int32(b)), [a, b])\n"
)
AFTER = (
    "    with ir.InsertionPoint(after):\n        t = fx.Int32(after.arguments[0]) + 1\n"
    "        scf.YieldOp([fx.as_ir_value(t), after.arguments[1]])\n"
)
WHILE_TAIL = "    out = fx.Int32(loop.results[1])\n"


def _while_flagged(source, tmp_path):
    found = [d for d in lint_text(source, tmp_path, select=("FLY312",)) if d.message.startswith("Raw `scf.WhileOp`")]
    assert len(found) == 1, [d.message for d in found]
    return found[0]


def test_a_while_op_with_two_carried_values_becomes_a_while_loop(tmp_path):
    fixed = fix_text(WHILE_HEAD + BLOCKS + BEFORE + AFTER + WHILE_TAIL, tmp_path, unsafe=True, select=("FLY312",))
    assert fixed == WHILE_HEAD.replace("from flydsl._mlir import ir\nfrom flydsl._mlir.dialects import scf\n", "") \
        .replace("from flydsl.expr.typing import T\n", "") + (
        "    a = init\n    b = init\n    while fx.as_ir_value(fx.Int32(a) < fx.Int32(b)):\n"
        "        t = fx.Int32(a) + 1\n        a, b = fx.as_ir_value(t), b\n    out = fx.Int32(b)\n"
    )
    found = [d for d in lint_text(WHILE_HEAD + BLOCKS + BEFORE + AFTER + WHILE_TAIL, tmp_path, select=("FLY312",))]
    assert [d.message.split("`")[1] for d in found] == ["scf.WhileOp", "scf.ConditionOp"]
    assert found[0].fix.applicability is Applicability.UNSAFE and found[1].fix == found[0].fix


WHILE_REFUSALS = {
    "hoisting": (
        BLOCKS + BEFORE.replace("        scf.ConditionOp(fx.as_ir_value(fx.Int32(a) < fx.Int32(b)), [a, b])\n",
                                "        c = fx.as_ir_value(fx.Int32(a) < fx.Int32(b))\n        scf.ConditionOp(c, [a, b])\n") + AFTER,
        "the before region is more than its arguments and `scf.ConditionOp` (moving it would hoist code)"),
    "not passed through": (
        BLOCKS + BEFORE.replace("[a, b])", "[b, a])") + AFTER,
        "the `scf.ConditionOp` does not pass the before arguments through in order"),
    "condition reads the block": (
        BLOCKS + BEFORE.replace("fx.Int32(b)), [a, b]", "fx.Int32(before.arguments[1])), [a, b]") + AFTER,
        "the condition reads `before` itself, not the names of its arguments"),
    "scalar init": (
        BLOCKS.replace("[init, init])\n", "[init, 0])\n", 1) + BEFORE + AFTER,
        "an init is None or a Python scalar"),
    "wrong arity": (
        BLOCKS + BEFORE + AFTER.replace(", after.arguments[1]])", "])"),
        "the `scf.YieldOp` does not yield 2 values"),
    "carried outside name": (
        "    t = init\n" + BLOCKS + BEFORE + AFTER,
        "the body assigns `t`, which lives outside it (a Python `while` would carry it)"),
    "carried outside name in a nested loop": (
        "    u = init\n" + BLOCKS + BEFORE + AFTER.replace(
            "        t = fx.Int32(after.arguments[0]) + 1\n",
            "        t = fx.Int32(after.arguments[0]) + 1\n        for i in range_constexpr(2):\n            u = t\n"),
        "the body assigns `u`, which lives outside it (a Python `while` would carry it)"),
    "blocks not next": (
        BLOCKS.replace("    before = ", "    fx.printf(init)\n    before = ") + BEFORE + AFTER,
        "the before block is not made right after the op by `ir.Block.create_at_start`"),
    "op escapes": (BLOCKS + BEFORE + AFTER + "    keep(loop)\n", "the op escapes (`loop` on line 24)"),
    "built conditionally": (
        "    if n:\n" + "".join("    " + line + "\n" for line in (BLOCKS + BEFORE + AFTER).splitlines()),
        "it is built conditionally"),
}


@pytest.mark.parametrize("name", WHILE_REFUSALS)
def test_while_refusal_names_its_reason_and_offers_no_fix(name, tmp_path):
    source = WHILE_HEAD + WHILE_REFUSALS[name][0]
    found = _while_flagged(source, tmp_path)
    assert found.fix is None
    assert found.message.endswith(f"; no automatic rewrite: {WHILE_REFUSALS[name][1]}"), found.message
    assert fix_text(source, tmp_path, unsafe=True, select=("FLY312",)) == source
