"""§3 raw `math` dialect ops -> `fx.<name>`."""

from __future__ import annotations

import ast

from ._base import Invalid, Rule, register
from ._edits import reference, replace_callee
from ._flydsl import EXPR
from ._raw_dialects import MATH, call_in, in_boundary_module


# Raw `math` dialect ops that flydsl.expr.math wraps (fx.<name>, since 0.1.5).
MATH_WRAPPED = frozenset({
    "absf", "ceil", "floor", "trunc", "round", "roundeven", "exp", "exp2", "expm1", "log", "log2", "log10", "log1p",
    "sqrt", "rsqrt", "cbrt", "sin", "cos", "tan", "asin", "acos", "atan", "sinh", "cosh", "tanh", "asinh", "acosh",
    "atanh", "erf", "erfc", "sincos", "absi", "ctlz", "cttz", "ctpop", "powf", "fpowi", "ipowi", "atan2", "copysign",
    "fma", "clampf", "isnan", "isinf", "isfinite", "isnormal",
})


_MATH_OP_CLASSES = {f"{name[0].upper()}{name[1:]}Op": name for name in MATH_WRAPPED}


_MATH_OP_CLASSES.update({"AbsFOp": "absf", "AbsIOp": "absi", "PowFOp": "powf", "FPowIOp": "fpowi", "IPowIOp": "ipowi",
                         "CountLeadingZerosOp": "ctlz", "CountTrailingZerosOp": "cttz", "CtPopOp": "ctpop",
                         "CopySignOp": "copysign", "Atan2Op": "atan2", "RoundEvenOp": "roundeven", "IsNaNOp": "isnan",
                         "IsInfOp": "isinf", "IsFiniteOp": "isfinite", "IsNormalOp": "isnormal", "ExpM1Op": "expm1",
                         "Log1pOp": "log1p", "ErfcOp": "erfc", "SinCosOp": "sincos", "ClampFOp": "clampf"})




@register
class RawMathOp(Rule):
    """A raw `math` dialect op that `flydsl.expr.math` wraps (`fx.exp2`,
    `fx.rsqrt`, `fx.fma`, ...) returns an untyped ir.Value and needs unwrapped
    operands; the wrapper takes typed values, keeps the type and still accepts
    `fastmath=`. Raw math ops with no wrapper are not reported."""

    code = "FLY333"
    follows = frozenset(f"{EXPR}.{name}" for name in MATH_WRAPPED)
    call_modules = frozenset({MATH})
    valid = [
        "import flydsl.expr as fx\ny = fx.exp2(x, fastmath=fm)\n",
        "from flydsl._mlir.dialects import math as math_dialect\ny = math_dialect.some_unwrapped_op(x)\n",
        "import math\ny = math.exp2(3.0)\n",
    ]
    invalid = [
        Invalid("from flydsl._mlir.dialects import math as math_dialect\nimport flydsl.expr as fx\n"
                "y = math_dialect.exp2(x, fastmath=fm)\n",
                fixed="import flydsl.expr as fx\ny = fx.exp2(x, fastmath=fm)\n", unsafe=True,
                at=(3, 5), message='Raw `math.exp2`: use `fx.exp2`, which takes and returns typed values (and accepts `fastmath=`)'),
        Invalid("from flydsl._mlir.dialects import math\nimport flydsl.expr as fx\nd = math.fma(a, b, c)\n",
                fixed="import flydsl.expr as fx\nd = fx.fma(a, b, c)\n", unsafe=True),
        Invalid("from flydsl._mlir.dialects import math\nr = math.RsqrtOp(x).result\n"),
    ]

    def visit_Call(self, node: ast.Call) -> None:
        if in_boundary_module(self):
            return
        op = call_in(self, node, (MATH,))
        if op is None:
            return
        name = op if op in MATH_WRAPPED else _MATH_OP_CLASSES.get(op)
        if name is None:
            return
        fix = None
        if op == name:  # function form: same arguments, typed result
            spelled = reference(self, f"{EXPR}.{name}", "fx", EXPR)
            if spelled is not None:
                callee, imports = spelled
                fix = self.make_fix([replace_callee(self, node, callee), *imports], f"Replace with `{callee}`")
        self.report(node, fix=fix, op=op, replacement=f"fx.{name}")
