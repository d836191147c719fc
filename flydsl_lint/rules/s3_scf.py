"""§3 raw `scf` ops -> Python control flow in traced code."""

from __future__ import annotations

import ast

from ._base import Invalid, Rule, register
from ._raw_dialects import SCF_CALL_MODULES, SCF_CALL_NAMES, scf_op


@register
class RawScfFor(Rule):
    """A hand-built `scf.ForOp` (with its insertion points, block arguments and
    explicit `scf.YieldOp`) is what the AST rewriter already emits for a Python
    loop in traced code: `range(..., init=[...])` gives an `scf.for` with
    explicit carried state, `range_constexpr` unrolls."""

    code = "FLY311"
    call_names, call_modules = SCF_CALL_NAMES, SCF_CALL_MODULES
    valid = [
        "import flydsl.expr as fx\nfor i, state in range(0, n, 1, init=[acc]):\n    acc = state + 1\n",
        "from flydsl._mlir.dialects import scf\nif isinstance(op, scf.ForOp):\n    pass\n",
        "def f(scf):\n    return scf.ForOp(lb, ub, step)\n",
    ]
    invalid = [
        Invalid("from flydsl._mlir.dialects import scf\nloop = scf.ForOp(lb, ub, step, [acc])\n",
                at=(2, 8), message='Raw `scf.ForOp`: use a Python loop in traced code (`range(..., init=[...])` for explicit carried state, `range_constexpr` to unroll)'),
        Invalid("from flydsl._mlir.dialects import scf as _scf\nfor iv in _scf.for_(0, n, 1):\n    pass\n"),
    ]
    use_instead = "for i, state in range(lb, ub, step, init=[acc]):\n    ...  # the rewriter emits scf.for with carried state"

    def visit_Call(self, node: ast.Call) -> None:
        op = scf_op(self, node)
        if op in ("ForOp", "for_"):
            self.report(node, op=op)


@register
class RawScfWhile(Rule):
    """A hand-built `scf.WhileOp` with before/after blocks and `scf.ConditionOp`
    is a Python `while` loop in a `@flyc.kernel`/`@flyc.jit` body: the rewriter
    builds the same `scf.while`, carrying the re-assigned values."""

    code = "FLY312"
    call_names, call_modules = SCF_CALL_NAMES, SCF_CALL_MODULES
    valid = [
        "import flydsl.expr as fx\nwhile cur < flag:\n    cur = load()\n",
        "from flydsl._mlir.dialects import scf\nops = [scf.WhileOp]\n",
    ]
    invalid = [
        Invalid("from flydsl._mlir.dialects import scf\nfrom flydsl.expr.typing import T\nw = scf.WhileOp([T.i32], [init])\n"),
        Invalid("from flydsl._mlir.dialects import scf\nscf.ConditionOp(cond, [cur])\n"),
    ]
    use_instead = "cur = load()\nwhile cur < flag:\n    cur = load()"

    def visit_Call(self, node: ast.Call) -> None:
        op = scf_op(self, node)
        if op in ("WhileOp", "ConditionOp", "while_"):
            self.report(node, op=op)


@register
class RawScfYield(Rule):
    """An explicit `scf.YieldOp` terminator only exists in a hand-built scf
    region; with Python control flow the rewriter yields the carried values.
    It disappears with the manual `scf.IfOp`/`ForOp`/`WhileOp` it terminates."""

    code = "FLY313"
    call_names, call_modules = SCF_CALL_NAMES, SCF_CALL_MODULES
    valid = [
        "from flydsl._mlir.dialects import scf\nif not isinstance(last, scf.YieldOp):\n    pass\n",
        "def f(scf):\n    scf.YieldOp([])\n",
        "from flydsl._mlir import ir\ndef f(d, blk):\n    with ir.InsertionPoint(blk):\n        d.YieldOp([])\n",
    ]
    invalid = [
        Invalid("from flydsl._mlir.dialects import scf\nscf.YieldOp([])\n"),
        Invalid("from flydsl._mlir.dialects import scf as _scf\n_scf.YieldOp([a, b])\n_scf.yield_([c])\n", count=2),
        Invalid("from flydsl._mlir import ir\ndef epilog(pred, scf=None):\n    op = scf.IfOp(pred)\n"
                "    with ir.InsertionPoint(op.then_block):\n        scf.YieldOp([])\n"),
        Invalid("def epilog(pred, ir, scf):\n    op = scf.IfOp(pred)\n"
                "    with ir.InsertionPoint(op.then_block):\n        scf.YieldOp([])\n"),
    ]
    use_instead = "if cond:\n    x = a  # the rewriter yields `x` from both branches\nelse:\n    x = b"

    def visit_Call(self, node: ast.Call) -> None:
        op = scf_op(self, node)
        if op in ("YieldOp", "yield_"):
            self.report(node, op=op)
