"""§3 raw upstream dialects -> fx.* and Python operators."""

from __future__ import annotations

import ast

from ..engine.diagnostics import Applicability
from ..engine.project import followed
from ..engine.registry import Invalid, Rule, register
from ..fixes.edits import reference, replace_callee
from ._flydsl import EXPR, EXPR_ARITH, RAW_ARITH

# Raw typed-arithmetic spellings and their fx replacements, as in FlyDSL's
# scripts/check_typed_arithmetic_usage.py.
TYPED_ARITH = {
    "maximumf": "max", "minimumf": "min", "maxsi": "max", "maxui": "max", "minsi": "min", "minui": "min",
    "maxnumf": "maxnumf", "ceildivsi": "ceildiv", "ceildivui": "ceildiv",
}
# The fx function picks signedness from the operand type, so the unsigned
# spellings only keep their meaning on unsigned-typed operands.
_SIGNEDNESS_DEPENDENT = {"maxui", "minui", "ceildivui"}
_METHODS = {"maximumf": "max", "minimumf": "min"}
followed(*TYPED_ARITH)
_ARITH_MODULES = EXPR_ARITH + (RAW_ARITH, EXPR)

_HEADER = "import flydsl.expr as fx\nfrom flydsl.expr import arith\n"


@register
class RawTypedArithmetic(Rule):
    """The arith spellings `maximumf`/`minimumf`/`maxsi`/`maxui`/`minsi`/`minui`/
    `maxnumf`/`ceildivsi`/`ceildivui` are legacy: `fx.max`, `fx.min`,
    `fx.maxnumf` and `fx.ceildiv` pick the op from the operand types and fold
    static operands. FlyDSL's CI rejects new uses of these spellings."""

    code = "FLY301"
    valid = [
        "import flydsl.expr as fx\nm = fx.max(a, b)\n",
        "from flydsl.expr import arith\ndef f(arith):\n    return arith.maximumf(a, b)\n",
        "import numpy as np\nnp.maximum(a, b)\n",
        "import flydsl.expr as fx\nv = fx.maxnumf(a, b)\n",
    ]
    invalid = [
        Invalid(_HEADER + "m = arith.maximumf(a, b)\n", fixed="import flydsl.expr as fx\nm = fx.max(a, b)\n"),
        Invalid("from flydsl.expr.arith import maxnumf as mx\nimport flydsl.expr as fx\nv = mx(a, b, fastmath=fm)\n",
                fixed="import flydsl.expr as fx\nv = fx.maxnumf(a, b, fastmath=fm)\n"),
        Invalid("from flydsl._mlir.dialects import arith as _arith\nimport flydsl.expr as fx\nq = _arith.ceildivsi(a, b)\n",
                fixed="import flydsl.expr as fx\nq = fx.ceildiv(a, b)\n", unsafe=True),
        Invalid("from flydsl.expr import arith\nm = arith.minimumf(a, b)\n",
                fixed="import flydsl.expr as fx\nm = fx.min(a, b)\n"),
    ]

    def visit_Call(self, node: ast.Call) -> None:
        name = self.model.resolve(node.func)
        if not name:
            return
        module, _, spelling = name.rpartition(".")
        replacement = TYPED_ARITH.get(spelling)
        if replacement is None or module not in _ARITH_MODULES or f"{module}.{spelling}" == f"{EXPR}.{replacement}":
            return  # not an arith spelling, or already the fx function itself
        fix = None
        spelled = reference(self, f"{EXPR}.{replacement}", "fx", EXPR)
        if spelled is not None:
            callee, imports = spelled
            # The FlyDSL wrappers return typed values like fx.*; the raw dialect
            # returns an ir.Value, and unsigned spellings depend on operand types.
            risky = module == RAW_ARITH or spelling in _SIGNEDNESS_DEPENDENT
            fix = self.make_fix(
                [replace_callee(self, node, callee), *imports],
                f"Replace with `{callee}`",
                Applicability.UNSAFE if risky else None,
            )
        self.report(node, fix=fix, spelling=f"{spelling}", replacement=f"fx.{replacement}")


@register
class TypedArithmeticMethod(Rule):
    """`.maximumf()` / `.minimumf()` methods on typed values are the legacy
    spelling of `fx.max` / `fx.min`, rejected by FlyDSL's typed-arithmetic CI
    gate whatever the receiver is."""

    code = "FLY302"
    valid = ["import flydsl.expr as fx\nm = fx.max(a, b)\n", "m = a.maximum(b)\n"]
    invalid = [
        Invalid("import flydsl.expr as fx\nm = acc.maximumf(row_max)\n",
                fixed="import flydsl.expr as fx\nm = fx.max(acc, row_max)\n", unsafe=True),
        Invalid("import flydsl.expr as fx\nm = (a * s).minimumf(b)\n",
                fixed="import flydsl.expr as fx\nm = fx.min(a * s, b)\n", unsafe=True),
    ]

    def visit_Call(self, node: ast.Call) -> None:
        func = node.func
        if not isinstance(func, ast.Attribute) or func.attr not in _METHODS:
            return
        receiver = self.model.resolve(func.value)
        if receiver is not None and (receiver in _ARITH_MODULES or receiver == EXPR):
            return  # a module function: FLY301's business
        fix = None
        spelled = reference(self, f"{EXPR}.{_METHODS[func.attr]}", "fx", EXPR)
        if spelled is not None and not any(isinstance(a, ast.Starred) for a in node.args):
            callee, imports = spelled
            arguments = ", ".join([self.text(func.value)] + [self.text(a) for a in node.args] + [self.text(k) for k in node.keywords])
            fix = self.make_fix([self.replace(node, f"{callee}({arguments})"), *imports], f"Replace with `{callee}(...)`")
        self.report(node, fix=fix, spelling=func.attr, replacement=f"fx.{_METHODS[func.attr]}")
