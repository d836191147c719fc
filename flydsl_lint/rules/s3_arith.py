"""§3 raw `arith` -> fx functions and Python operators (typed arithmetic, operators, comparisons, constants, select)."""

from __future__ import annotations

import ast
from typing import NamedTuple

from ..engine.diagnostics import Applicability
from ..engine.model.types import (
    ARITH_VALUE, IR_VALUE_KINDS, PY_BOOL, PY_FLOAT, PY_INT, RAW, SCALAR, UNKNOWN_TYPE, VECTOR, plain_arith_value,
    scalar_arith_value, single_positional,
)
from ._base import Invalid, Rule, register
from ._codemods import reads_of_value, reads_seeing, single_name_assignment
from ._edits import _OPEN_CONTEXTS, is_parenthesized, needs_parentheses, reference, replace_callee, run_time_constant_fix
from ._flydsl import (
    EXPR, EXPR_ARITH, FX_INTEGERS, RAW_ARITH, SAME_OP_OPERATORS, SAME_OP_SCALARS, SIGNLESS_INT_OPERATORS, TYPED_SCALARS,
    before_type_table, known_scalar_type, operand_type_reason, scalar_ir_type, typed_scalar,
)
from ._raw_dialects import (
    ARITH_OP_MODULES, at_raw_boundary, call_in, call_operands, in_boundary_module,
)


# Raw typed-arithmetic spellings and their fx replacements, as in FlyDSL's
# scripts/check_typed_arithmetic_usage.py.
TYPED_ARITH = {
    "maximumf": "max", "minimumf": "min", "maxsi": "max", "maxui": "max", "minsi": "min", "minui": "min",
    "maxnumf": "maxnumf", "ceildivsi": "ceildiv", "ceildivui": "ceildiv",
}


# The fx function picks signedness from the operand type, so the unsigned
# spellings only keep their meaning on unsigned-typed operands.
_SIGNEDNESS_DEPENDENT = {"maxui", "minui", "ceildivui"}
# The float classes `fx.max`/`fx.min`/`fx.maxnumf` take besides the integer ones (`_validated_operand_dtype`,
# 0.3.2 to 0.5.0): no narrow float, Index or Boolean, on which the arith spellings build ops.
_FX_EXTREMA_FLOATS = frozenset({"Float16", "BFloat16", "Float32", "Float64"})
# What a spelling returns (data/flydsl_types.txt `results`): a `dsl_math_wrap_result` wrapper's value
# (of its first operand's kind), or the raw op's caster-made ArithValue.
_WRAPPED = "arith-value-unless-numeric"
_WRAPPED_OR_CASTER_MADE = (_WRAPPED, "arith-value")


_METHODS = {"maximumf": "max", "minimumf": "min"}
# The receiver types the method fix is proven on (tests/proofs, TYPED_METHODS).
_PROVEN_METHOD_TYPES = {"Float32"}



_ARITH_MODULES = EXPR_ARITH + (RAW_ARITH, EXPR)


_HEADER = "import flydsl.expr as fx\nfrom flydsl.expr import arith\n"
_KERNEL = ("import flydsl.compiler as flyc\nimport flydsl.expr as fx\nfrom flydsl.expr import arith\n@flyc.kernel\n"
           "def k(a: fx.Float32, b: fx.Float32, n: fx.Int32, i: fx.Index, raw, fm):\n")
_FIXED_KERNEL = _KERNEL.replace("from flydsl.expr import arith\n", "")


@register
class RawTypedArithmetic(Rule):
    """The arith spellings `maximumf`/`minimumf`/`maxsi`/`maxui`/`minsi`/`minui`/
    `maxnumf`/`ceildivsi`/`ceildivui` are legacy: `fx.max`, `fx.min`,
    `fx.maxnumf` and `fx.ceildiv` pick the op from the operand types and fold
    static operands. FlyDSL's CI rejects new uses of these spellings. The fx
    functions type their operands and return fx values: the fix is safe where the
    operand types and the result's use prove it the call's own value (`_fix`)."""

    code = "FLY301"
    follows = frozenset(TYPED_ARITH)
    # A finding resolves to `<arith module>.<spelling>`: its leaf is enough for the
    # checker to pick the call (`flydsl.expr` as a module would hand it every fx call).
    call_names = frozenset(TYPED_ARITH)
    valid = [
        "import flydsl.expr as fx\nm = fx.max(a, b)\n",
        "from flydsl.expr import arith\ndef f(arith):\n    return arith.maximumf(a, b)\n",
        "import numpy as np\nnp.maximum(a, b)\n",
        "import flydsl.expr as fx\nv = fx.maxnumf(a, b)\n",
    ]
    invalid = [
        # Operands of no known type: they may be of a class the fx function refuses (Index, Boolean, fp8).
        Invalid(_HEADER + "m = arith.maximumf(a, b)\n", fixed="import flydsl.expr as fx\nm = fx.max(a, b)\n", unsafe=True,
                message="Legacy typed-arithmetic spelling `maximumf`: use `fx.max`"),
        Invalid("from flydsl._mlir.dialects import arith as _arith\nimport flydsl.expr as fx\nq = _arith.ceildivsi(a, b)\n",
                fixed="import flydsl.expr as fx\nq = fx.ceildiv(a, b)\n", unsafe=True),
        # `arith.maxnumf` is `fx.maxnumf` itself. `arith.maximumf` of a Float32 gives a Float32, as
        # `fx.max` does; of an ir.Value the raw op's value, which a float's `.ir_value()` is in any use.
        Invalid(_KERNEL.replace("import arith\n", "import arith\nfrom flydsl.expr.arith import maxnumf as mx\n")
                + "    m = arith.maximumf(a, b) * 2.0\n    r = arith.maximumf(a.ir_value(), raw)\n"
                "    v = mx(x, y, fastmath=fm)\n",
                fixed=_FIXED_KERNEL + "    m = fx.max(a, b) * 2.0\n    r = fx.max(a.ir_value(), raw).ir_value()\n"
                "    v = fx.maxnumf(x, y, fastmath=fm)\n", count=3),
        # An ir.Value of a known MLIR type counts as its class; one of no known type shares it (the op
        # takes one type). Into the class's own wrap the fx value reads as the raw one.
        Invalid(_KERNEL + "    w = fx.Int32(arith.minsi(n.ir_value(), raw))\n",
                fixed=_FIXED_KERNEL + "    w = fx.Int32(fx.min(n.ir_value(), raw))\n"),
        # Elsewhere an Int32's `.ir_value()` carries its signedness, which `>>` reads: unsafe.
        Invalid(_KERNEL + "    w = arith.minsi(n.ir_value(), raw) >> 1\n",
                fixed=_FIXED_KERNEL + "    w = (fx.min(n.ir_value(), raw).ir_value()) >> 1\n", unsafe=True),
        # fx.Vector operands: the wrapper's value is that fx.Vector, as fx.max's is.
        Invalid(_KERNEL + "    v = fx.Vector.filled(4, 1.0, fx.Float32)\n    w = arith.minimumf(v, v * 2.0)\n",
                fixed=_FIXED_KERNEL + "    v = fx.Vector.filled(4, 1.0, fx.Float32)\n    w = fx.min(v, v * 2.0)\n"),
        # fx.max refuses Index operands, which arith.maxsi takes.
        Invalid(_KERNEL + "    w = arith.maxsi(i.ir_value(), raw)\n", fixed=_FIXED_KERNEL + "    w = fx.max(i.ir_value(), raw)\n",
                unsafe=True, message="Legacy typed-arithmetic spelling `maxsi`: use `fx.max`"),
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
            fix = self._fix(node, name, spelling, replacement, *spelled)
        self.report(node, fix=fix, spelling=f"{spelling}", replacement=f"fx.{replacement}")

    def _fix(self, node: ast.Call, name: str, spelling: str, replacement: str, callee: str, imports: list):
        """`fx.<op>(...)`, safe where it is the call's own value in every use. `arith.maxnumf` is
        `fx.maxnumf` itself (flydsl.expr star-imports flydsl.expr.arith). Otherwise the operands must
        be of one fx class the fx function takes, and the result read as the call's: its own
        class where the call is a `dsl_math_wrap_result` wrapper of an fx scalar or vector first
        operand (`arith.maximumf(a, b)`: the table's `arith-value-unless-numeric`), else the raw
        op's caster-made value (`arith.minsi`), which a vector, a float's `.ir_value()` (the fix
        writes it), the class's own wrap or a raw op's operand reads alike."""
        in_place = [replace_callee(self, node, callee), *imports]
        module = name.rpartition(".")[0]
        if module == EXPR_ARITH[0] and spelling == replacement:
            return self.make_fix(in_place, f"Replace with `{callee}`")
        result = self.model.type_table.results.get(name)
        if module == RAW_ARITH or spelling in _SIGNEDNESS_DEPENDENT or result not in _WRAPPED_OR_CASTER_MADE:
            # The raw dialect's op returns an ir.Value; an unsigned spelling depends on operand types.
            return self.make_fix(in_place, f"Replace with `{callee}`", Applicability.UNSAFE)
        found, why = self._operand_class(node, callee)
        if not found.known:
            return self.make_fix(in_place, f"Replace with `{callee}` ({why})", Applicability.UNSAFE)
        first = self.model.value_type(node.args[0]).kind
        if found.kind == VECTOR or (result == _WRAPPED and first == SCALAR):
            return self.make_fix(in_place, f"Replace with `{callee}`")  # the call's own class already
        if result == _WRAPPED and first not in IR_VALUE_KINDS:
            return self.make_fix(in_place, f"Replace with `{callee}` ({operand_type_reason(self, node.args[0])}: "
                                 "the call's value takes its class from it)", Applicability.UNSAFE)
        arguments = [self.text(a) for a in node.args] + [f"{k.arg}={self.text(k.value)}" for k in node.keywords]
        folds = not any(self.model.provably_dynamic(operand) for operand in node.args)
        expression = f"{callee}({', '.join(arguments)})"
        text, agrees = typed_replacement(self, node, expression, found.scalar, folds)
        edits = in_place if text == expression else [self.replace(node, text), *imports]  # keep its layout
        if agrees or raw_form_is_signless(self, found.scalar):
            return self.make_fix(edits, f"Replace with `{callee}`")
        return self.make_fix(edits, f"Replace with `{callee}` (where the result goes, an fx value may act unlike "
                             "the raw one)", Applicability.UNSAFE)

    def _operand_class(self, node: ast.Call, callee: str):
        """The fx scalar (or vector) type `callee` computes in: the one class of the operands whose
        type is known (an ir.Value's by `Numeric.from_ir_type` of its MLIR type), which the op
        requires of every operand, Python numbers and values of no known type included; it must be
        a class `callee` takes (`_validated_operand_dtype`, 0.3.2 to 0.5.0: no Index, Boolean or
        narrow float, which the arith op takes). Unknown, and why, where that is not proven."""
        if len(node.args) < 2 or any(isinstance(a, ast.Starred) for a in node.args) \
                or any(k.arg is None for k in node.keywords):
            return UNKNOWN_TYPE, f"`{callee}` is not given its operands one by one"
        table, known = self.model.type_table, []
        for operand in node.args:
            found = self.model.value_type(operand)
            if found.kind in (ARITH_VALUE, RAW) and found.ir_type:
                found = table.scalar(table.class_of_ir_type(found.ir_type) or "")
            elif found.kind in (PY_INT, PY_FLOAT, ARITH_VALUE, RAW) or not found.known:
                continue  # of the type the op requires of the others
            if found.kind not in (SCALAR, VECTOR) or not (found.scalar in FX_INTEGERS or found.scalar in _FX_EXTREMA_FLOATS):
                return UNKNOWN_TYPE, (f"{operand_type_reason(self, operand)}: `{callee}` refuses Index, Boolean and "
                                      "narrow-float operands, which the arith op takes")
            known.append(found)
        if not known:
            return UNKNOWN_TYPE, f"{operand_type_reason(self, node.args[0])}: no operand's fx class is known"
        if any(other != known[0] for other in known[1:]):
            return UNKNOWN_TYPE, f"operands of different types, {known[0]} and {next(o for o in known if o != known[0])}"
        return known[0], None


@register
class TypedArithmeticMethod(Rule):
    """`.maximumf()` / `.minimumf()` methods on typed values are the legacy
    spelling of `fx.max` / `fx.min`, rejected by FlyDSL's typed-arithmetic CI
    gate whatever the receiver is."""

    code = "FLY302"
    call_names = frozenset(_METHODS)
    valid = ["import flydsl.expr as fx\nm = fx.max(a, b)\n", "m = a.maximum(b)\n"]
    invalid = [
        Invalid("import flydsl.expr as fx\nm = acc.maximumf(row_max)\n",
                fixed="import flydsl.expr as fx\nm = fx.max(acc, row_max)\n", unsafe=True),
        Invalid("import flydsl.expr as fx\nm = (a * s).minimumf(b)\n",
                fixed="import flydsl.expr as fx\nm = fx.min(a * s, b)\n", unsafe=True),
        # Safe: two fx.Float32, run-time kernel parameters (and what is computed from them).
        Invalid("import flydsl.compiler as flyc\nimport flydsl.expr as fx\n@flyc.kernel\ndef k(a: fx.Float32, b: fx.Float32):\n"
                "    m = (-a).maximumf(fx.Float32(0.0)) + a.minimumf(b)\n",
                fixed="import flydsl.compiler as flyc\nimport flydsl.expr as fx\n@flyc.kernel\ndef k(a: fx.Float32, b: fx.Float32):\n"
                      "    m = fx.max(-a, fx.Float32(0.0)) + fx.min(a, b)\n",
                count=2, at=(5, 9), message="Legacy typed-arithmetic method `.maximumf()`: use `fx.max(a, b)`"),
        # A private helper's parameter that every call passes a run-time value for is one: safe.
        Invalid("import flydsl.compiler as flyc\nimport flydsl.expr as fx\ndef _relu(x: fx.Float32):\n"
                "    return x.maximumf(fx.Float32(0.0))\n@flyc.kernel\ndef k(a: fx.Float32):\n    y = _relu(a * 2.0)\n",
                fixed="import flydsl.compiler as flyc\nimport flydsl.expr as fx\ndef _relu(x: fx.Float32):\n"
                      "    return fx.max(x, fx.Float32(0.0))\n@flyc.kernel\ndef k(a: fx.Float32):\n    y = _relu(a * 2.0)\n"),
        # A plain function's parameters may be compile-time fx values, which fx.max folds: unsafe.
        Invalid("import flydsl.expr as fx\ndef f(a: fx.Float32, b: fx.Float32):\n    return a.maximumf(b)\n",
                fixed="import flydsl.expr as fx\ndef f(a: fx.Float32, b: fx.Float32):\n    return fx.max(a, b)\n", unsafe=True),
        # A running maximum rebound in unrolled loops, every binding a Float32: safe where an operand
        # is a Float32 method's op result (a lane shuffle, a vector reduction), a run-time value.
        Invalid("import flydsl.compiler as flyc\nimport flydsl.expr as fx\n@flyc.kernel\ndef k(a: fx.Float32):\n"
                "    row = fx.Vector.filled(4, a, fx.Float32)\n    m = fx.Float32(0.0)\n    for i in fx.range_constexpr(2):\n"
                "        m = m.maximumf(row.reduce(\"max\"))\n    for s in [8, 4]:\n"
                "        m = m.maximumf(m.shuffle_xor(fx.Int32(s), fx.Int32(64)))\n",
                fixed="import flydsl.compiler as flyc\nimport flydsl.expr as fx\n@flyc.kernel\ndef k(a: fx.Float32):\n"
                      "    row = fx.Vector.filled(4, a, fx.Float32)\n    m = fx.Float32(0.0)\n    for i in fx.range_constexpr(2):\n"
                      "        m = fx.max(m, row.reduce(\"max\"))\n    for s in [8, 4]:\n"
                      "        m = fx.max(m, m.shuffle_xor(fx.Int32(s), fx.Int32(64)))\n",
                count=2),
        # The same rebinding against a compile-time Float32: the name is not provably a run-time value.
        Invalid("import flydsl.compiler as flyc\nimport flydsl.expr as fx\n@flyc.kernel\ndef k(a: fx.Float32):\n"
                "    m = fx.Float32(0.0)\n    for s in [8, 4]:\n        m = m.maximumf(fx.Float32(1.0))\n",
                fixed="import flydsl.compiler as flyc\nimport flydsl.expr as fx\n@flyc.kernel\ndef k(a: fx.Float32):\n"
                      "    m = fx.Float32(0.0)\n    for s in [8, 4]:\n        m = fx.max(m, fx.Float32(1.0))\n", unsafe=True),
        # A later binding of another type: the name's bindings do not agree, its type stays unknown.
        Invalid("import flydsl.compiler as flyc\nimport flydsl.expr as fx\n@flyc.kernel\ndef k(a: fx.Float32):\n"
                "    m = fx.Float32(0.0)\n    for s in [8, 4]:\n        m = m.maximumf(a)\n    m = fx.Int32(m)\n",
                fixed="import flydsl.compiler as flyc\nimport flydsl.expr as fx\n@flyc.kernel\ndef k(a: fx.Float32):\n"
                      "    m = fx.Float32(0.0)\n    for s in [8, 4]:\n        m = fx.max(m, a)\n    m = fx.Int32(m)\n",
                unsafe=True),
        # An operand of another type is promoted by fx.max: unsafe.
        Invalid("import flydsl.compiler as flyc\nimport flydsl.expr as fx\n@flyc.kernel\ndef k(a: fx.Float32, n: fx.Int32):\n"
                "    m = a.maximumf(n)\n",
                fixed="import flydsl.compiler as flyc\nimport flydsl.expr as fx\n@flyc.kernel\ndef k(a: fx.Float32, n: fx.Int32):\n"
                      "    m = fx.max(a, n)\n", unsafe=True),
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
            unsafe_because = self._unsafe_because(node, f"fx.{_METHODS[func.attr]}")
            message = f"Replace with `{callee}(...)`" + (f" ({unsafe_because})" if unsafe_because else "")
            fix = self.make_fix([self.replace(node, f"{callee}({arguments})"), *imports], message,
                                Applicability.UNSAFE if unsafe_because else Applicability.SAFE)
        self.report(node, fix=fix, spelling=func.attr, replacement=f"fx.{_METHODS[func.attr]}")

    def _unsafe_because(self, node: ast.Call, replacement: str) -> str | None:
        """None where `fx.max(a, b)` is provably the method's op: `Numeric.maximumf` is
        `arith.maximumf(a.ir_value(), b.ir_value())` rewrapped in a's type; `fx.max` promotes
        its operands to their common type (the identity on two of one type) and folds two
        compile-time ones, so one of them must be a run-time value."""
        operand = single_positional(node)
        if operand is None:
            return "not a single operand"
        receiver = node.func.value
        found = self.model.value_type(receiver)
        if found.kind != SCALAR or found.scalar not in _PROVEN_METHOD_TYPES:
            return operand_type_reason(self, receiver)
        other = self.model.value_type(operand)
        if other != found:
            return f"`{self.text(operand)}` is {other.described}, not {found}: `{replacement}` may promote"
        if not any(self.model.provably_dynamic(_negated(value)) for value in (receiver, operand)):
            return f"neither operand is provably a run-time value: `{replacement}` folds two compile-time ones"
        return None


def _negated(node: ast.expr) -> ast.expr:
    """`x` of `-x`: Numeric.__neg__ keeps a run-time value run-time."""
    return _negated(node.operand) if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub) else node


# Raw arith ops and the Python operator that emits exactly that op on two
# operands of one fx type (flydsl/expr/numeric.py and utils/arith.py, 0.3.0 to
# 0.5.0): op -> (operator, operand kind: "f" float, "i" integer, "s" signed int,
# "u" unsigned int). `divsi` truncates; `//` emits `floordivsi`: no operator.
_ARITH_OPERATORS = {
    "addf": ("+", "f"), "subf": ("-", "f"), "mulf": ("*", "f"), "divf": ("/", "f"), "remf": ("%", "f"),
    "addi": ("+", "i"), "subi": ("-", "i"), "muli": ("*", "i"),
    "andi": ("&", "i"), "ori": ("|", "i"), "xori": ("^", "i"), "shli": ("<<", "i"),
    "floordivsi": ("//", "s"), "remsi": ("%", "s"), "shrsi": (">>", "s"),
    "divui": ("//", "u"), "remui": ("%", "u"),
    "negf": ("-", "f"),
}


_ARITH_OP_CLASSES = {
    "AddFOp": "addf", "SubFOp": "subf", "MulFOp": "mulf", "DivFOp": "divf", "RemFOp": "remf", "AddIOp": "addi",
    "SubIOp": "subi", "MulIOp": "muli", "AndIOp": "andi", "OrIOp": "ori", "XOrIOp": "xori", "ShLIOp": "shli",
    "FloorDivSIOp": "floordivsi", "RemSIOp": "remsi", "ShRSIOp": "shrsi", "DivUIOp": "divui",
    "RemUIOp": "remui", "NegFOp": "negf",
}


_FLOAT_TYPES = {"Float16", "BFloat16", "Float32", "Float64"}


_SIGNED_TYPES = {"Int8", "Int16", "Int32", "Int64"}


_UNSIGNED_TYPES = {"Uint8", "Uint16", "Uint32", "Uint64"}


_KIND_TYPES = {"f": _FLOAT_TYPES, "i": _SIGNED_TYPES | _UNSIGNED_TYPES, "s": _SIGNED_TYPES, "u": _UNSIGNED_TYPES}


# The integer types the operator fix is proven on (tests/proofs, RAW_ARITH_VIEWS).
_PROVEN_INT_TYPES = {"Int32", "Int64", "Uint32"}


# The predicates fx values of each type compare by (utils/arith.py `_comparison_op`, 0.3.0 to 0.5.0):
# floats cmpf ("f"), integers cmpi, signed ("s") unless the class is `signed=False`: the Uint classes
# and fx.Index ("u"); `==`/`!=` emit eq/ne on either ("i").
_COMPARED_AS = {kind: types | {"Index"} if kind in ("u", "i") else types for kind, types in _KIND_TYPES.items()}


# The types the comparison fix is proven on (tests/proofs, RAW_ARITH_VIEWS).
_PROVEN_COMPARED_TYPES = _PROVEN_INT_TYPES | {"Index"}


# The operand types `cond.select(a, b)` is proven on (tests/proofs, SELECT_CONSUMERS).
_PROVEN_SELECT_TYPES = _PROVEN_INT_TYPES | {"Float32", "Index"}


# Comparison predicates that a Python comparison operator emits (utils/arith.py).
_CMPF_OPERATORS = {"OLT": "<", "OLE": "<=", "OEQ": "==", "UNE": "!=", "OGT": ">", "OGE": ">="}


_CMPI_SIGNED = {"eq": "==", "ne": "!=", "slt": "<", "sle": "<=", "sgt": ">", "sge": ">="}


_CMPI_UNSIGNED = {"ult": "<", "ule": "<=", "ugt": ">", "uge": ">="}


# The raw arith ops each rule reports, as its `call_names`: a finding's callee
# resolves to `<arith module>.<op>`, and the checker then hands the rule only
# calls with that leaf instead of every call into the arith modules.
_CMP_OPS = ("cmpf", "cmpi", "CmpFOp", "CmpIOp")


# flydsl.expr.arith's own cmpi/cmpf unwrap fx operands (`as_ir_value`).
_CMP_HELPERS = {"cmpi", "cmpf"}


_CONSTANT_OPS = ("constant", "ConstantOp")


_SELECT_OPS = ("select", "SelectOp")


# FlyDSL's own arith helpers that unwrap typed operands (`_to_raw`) before
# building the op; every other arith op rejects an fx value (it has no `.type`).
_TYPED_OPERAND_HELPERS = {"andi", "xori", "shli", "select"}


# FlyDSL's `arith.select`, whose condition may be any ir.Value (`_raw_operand_of`).
_FLYDSL_SELECTS = frozenset(f"{module}.select" for module in EXPR_ARITH)


# Calls that give the raw ir.Value of a typed value, besides `x.ir_value()`.
_RAW_VIEWS = frozenset(
    [f"{module}.{name}" for module in EXPR_ARITH for name in ("_to_raw", "unwrap")]
    + [f"{EXPR}.as_ir_value", f"{EXPR}.typing.as_ir_value"]
)


def viewed_value(rule: Rule, operand: ast.expr) -> ast.expr | None:
    """`x` for a raw view of it (`x.ir_value()`, `arith._to_raw(x)`, `arith.unwrap(x)`, `fx.as_ir_value(x)`)."""
    if not isinstance(operand, ast.Call) or operand.keywords:
        return None
    func = operand.func
    if isinstance(func, ast.Attribute) and func.attr == "ir_value":
        return None if operand.args else func.value
    argument = single_positional(operand)
    if argument is not None and isinstance(func, (ast.Name, ast.Attribute)) and rule.model.resolve(func) in _RAW_VIEWS:
        return argument
    return None


_PRECEDENCE_SAFE = (ast.Name, ast.Attribute, ast.Call, ast.Subscript, ast.Constant)


def default_fastmath(rule: Rule, node: ast.Call) -> bool:
    """No `fastmath=`, or an explicit `None` / `FastMathFlags.none`."""
    for keyword in node.keywords:
        if keyword.arg != "fastmath":
            continue
        value = keyword.value
        if isinstance(value, ast.Constant) and value.value is None:
            return True
        name = rule.model.resolve(value) if isinstance(value, (ast.Name, ast.Attribute)) else None
        return bool(name) and name.endswith("FastMathFlags.none")
    return not any(k.arg is None for k in node.keywords)  # **kwargs may carry fastmath


def _operand_text(rule: Rule, node: ast.expr) -> str:
    text = rule.text(node)
    return text if isinstance(node, _PRECEDENCE_SAFE) or is_parenthesized(text) else f"({text})"


def _wrap_result(rule: Rule, call: ast.expr, text: str) -> str:
    parent = rule.model.parent(call)
    if isinstance(parent, _OPEN_CONTEXTS) or (isinstance(parent, ast.Call) and call in parent.args) or \
            isinstance(parent, (ast.List, ast.Tuple)):
        return text
    return f"({text})"


def _into_own_wrap(rule: Rule, node: ast.expr, type_: str) -> bool:
    """Whether `node` is the only argument of a wrap that reads an fx value of `type_` as it reads the
    raw result: one of `type_` itself (`fx.Int32(node)`), or `fx.Index(node)` of an fx integer, which
    casts the value's `.ir_value()` with the same `index_cast` as the raw one (expr/numeric.py
    `Index.__init__`, 0.3.0 to 0.5.0: the cast reads no signedness)."""
    parent = rule.model.parent(node)
    wrap = typed_scalar(rule.model, parent)
    return (wrap == type_ or (wrap == "Index" and type_ in FX_INTEGERS)) and single_positional(parent) is node


def _raw_operand_of(rule: Rule, node: ast.expr) -> bool:
    """Whether `node` is an argument of a raw dialect op, which takes any ir.Value, or the condition
    of FlyDSL's `arith.select`, which takes `_to_raw(condition)`: an ir.Value as it is (every
    release 0.3.0 to 0.5.0)."""
    parent = rule.model.parent(node)
    if not isinstance(parent, ast.Call):
        return False
    if parent.args and parent.args[0] is node and rule.model.resolve(parent.func) in _FLYDSL_SELECTS:
        return True
    return rule.model.raw_dialect_call(parent) and (node in parent.args or any(k.value is node for k in parent.keywords))


def rejects_fx_values(rule: Rule, node: ast.Call, op: str, operands: list[ast.expr], values: list[ast.expr]) -> bool:
    """Whether `node` is given an fx value itself (not a view) by a builder that
    rejects one: any raw dialect op, unlike FlyDSL's own unwrapping helpers."""
    return not _unwraps_operands(rule, node, op) and any(o is v for o, v in zip(operands, values))


def _unwraps_operands(rule: Rule, node: ast.Call, op: str) -> bool:
    """Whether `node` is one of FlyDSL's own helpers, which take fx values and numbers (`_to_raw`),
    where a raw dialect op takes only ir.Values."""
    module = rule.model.resolve(node.func).rpartition(".")[0]
    return (module in EXPR_ARITH and op in _TYPED_OPERAND_HELPERS) or (module == EXPR_ARITH[0] and op in _CMP_HELPERS)


def typed_replacement(rule: Rule, node: ast.Call, expression: str, result_type: str,
                      folds: bool) -> tuple[str, bool]:
    """The text that replaces the raw op `node` by the typed `expression`, and
    whether the consumer cannot tell them apart: a wrap of `result_type` (the
    typed value) or a raw dialect op (its `.ir_value()`). An expression that
    `folds` to a compile-time value stays a run-time one through `.ir_value()`."""
    into_own_wrap = _into_own_wrap(rule, node, result_type)
    if into_own_wrap and not folds:
        text = expression
    else:
        atomic = isinstance(ast.parse(expression, mode="eval").body, _PRECEDENCE_SAFE)
        text = f"{expression}.ir_value()" if atomic else f"({expression}).ir_value()"
    return _wrap_result(rule, node, text), into_own_wrap or _raw_operand_of(rule, node)


def raw_form_is_signless(rule: Rule, type_: str) -> bool:
    """Whether `.ir_value()` of an fx `type_` value is, in every use, the raw op's own result: the
    value caster's ArithValue with signed=None. A float class has no signedness for
    `.ir_value()` to carry (`Numeric.to(ir.Value)` is `res.with_signedness(cls.signed)`, 0.3.0 to
    0.5.0), unlike an integer class, whose ArithValue then divides, shifts and compares by it."""
    table = rule.model.type_table
    scalar = table.scalar(type_)
    return scalar.known and scalar.is_float and scalar.signed is None and table.caster \
        and table.has("ir-value", "with-signedness")


def type_detail(rule: Rule, operands: list[ast.expr], types: list[str | None]) -> str:
    """Why no fix is offered, for the message: the operand whose fx type is unknown, or mixed types."""
    unknown = next((o for o, t in zip(operands, types) if t is None), None)
    if unknown is not None:
        found = rule.model.value_type(unknown)
        if found.known:  # an ArithValue, a raw ir.Value, a Python number the op does not take as such
            return f" (`{rule.text(unknown)}` is {found.described}, not an fx scalar: wrap it once where it is made)"
        cause = rule.model.unknown_cause(unknown)  # the root of it, where the user can wrap the value
        return f" (the fx type of `{rule.text(unknown)}` is not known: {cause}; wrap it once where it is made)"
    if len(set(types)) > 1:
        return f" (operands of different fx types, {' and '.join(types)}: the operator would promote them)"
    return ""


@register
class RawArithOperator(Rule):
    """Raw arith ops with a Python operator (`addf`/`addi` `+`, `subf` `-`, `mulf`
    `*`, `divf` `/`, `andi` `&`, `ori` `|`, `xori` `^`, `shli` `<<`,
    `floordivsi` `//`, `remsi` `%`, ...) need unwrapped operands and return
    untyped values. On fx-typed values the operator emits the same op. Kept:
    ops with no operator (`divsi` truncates, `//` emits `floordivsi`), ops with
    a non-default `fastmath=` (the guide's explicit `*FOp` exception) and ops
    whose operands are all visibly raw values (a raw SSA boundary).

    What the fix relies on (FlyDSL 0.3.0 to 0.5.0, compiled in tests/proofs):
    a raw op takes ir.Values, so typed values reach it as views
    (`x.ir_value()`, `arith._to_raw(x)`); given an fx value itself it fails
    at trace time, except FlyDSL's `arith.andi`/`xori`/`shli` helpers, which
    unwrap it. The op returns an untyped value while the operator returns an
    fx value, and later operators on the two differ (`>>`, `/`, comparisons
    follow the fx signedness), so the fix is safe only where the result goes
    into a wrap of the operands' own type (`fx.Int32(arith.addi(...))`) or
    into a raw dialect op (as `(a + b).ir_value()`). Float ops stay unsafe: an
    ambient `arith.fastmath(...)` block, possibly in a caller, applies to the
    operator but not to the raw op. An integer op that reads no signedness
    (`addi subi muli andi ori xori shli`) on two ArithValues (one of them may be
    an fx value's `.ir_value()`) is ArithValue's own operator: the same op and
    the same caster-made result, safe in any use; so is an op class's `.result`
    (`arith.MulIOp(a, b).result`)."""

    code = "FLY341"
    follows = TYPED_SCALARS
    call_names = frozenset(_ARITH_OPERATORS) | frozenset(_ARITH_OP_CLASSES)
    valid = [
        "import flydsl.expr as fx\ns = a + b\n",
        "from flydsl._mlir.dialects import arith\ns = arith.addf(a, b, fastmath=fm_fast)\n",
        "from flydsl._mlir.dialects import arith\ns = arith.AddFOp(w, peer, fastmath=fm).result\n",
        "from flydsl._mlir.dialects import arith, rocdl\nx = rocdl.raw(a).result\ny = arith.addi(x, rocdl.raw(b).result)\n",
        "def f(arith):\n    return arith.addf(a, b)\n",
        "from flydsl._mlir.dialects import arith\nimport flydsl.expr as fx\nq = fx.Int32(arith.divui(n, d))\n",
        # divsi truncates toward zero; `//` emits floordivsi.
        "from flydsl._mlir.dialects import arith as _arith\nimport flydsl.expr as fx\n"
        "a = fx.Int32(x)\nq = _arith.divsi(a.ir_value(), fx.Int32(4).ir_value())\n",
    ]
    invalid = [
        # fx values themselves in a raw op fail at trace time: rewriting that changes behaviour.
        Invalid("from flydsl._mlir.dialects import arith\nimport flydsl.expr as fx\n"
                "a = fx.Uint32(x)\nq = arith.remui(a, fx.Uint32(8))\n",
                fixed="import flydsl.expr as fx\na = fx.Uint32(x)\nq = a % fx.Uint32(8)\n", unsafe=True),
        Invalid("from flydsl._mlir.dialects import arith\nimport flydsl.expr as fx\n"
                "a = fx.Float32(x)\nb = fx.Float32(y)\ns = arith.addf(a, b)\n",
                fixed="import flydsl.expr as fx\na = fx.Float32(x)\nb = fx.Float32(y)\ns = a + b\n", unsafe=True),
        Invalid("from flydsl.expr import arith\nimport flydsl.expr as fx\n"
                "def f(i: fx.Int32, j: fx.Int32):\n    return fx.Int64(arith.shli(i, j))\n",
                fixed="import flydsl.expr as fx\n"
                "def f(i: fx.Int32, j: fx.Int32):\n    return fx.Int64((i << j).ir_value())\n", unsafe=True),
        Invalid("from flydsl.expr import arith\nimport flydsl.expr as fx\n"
                "a = fx.Int32(x)\nb = fx.Int32(y)\nc = arith.muli(a, b) * 2\n",
                fixed="import flydsl.expr as fx\na = fx.Int32(x)\nb = fx.Int32(y)\nc = (a * b) * 2\n", unsafe=True),
        Invalid("from flydsl._mlir.dialects import arith\ns = arith.mulf(as_mlir_value(a), as_mlir_value(b))\n",
                at=(2, 5), message="Raw `arith.mulf`: use the `*` operator on fx-typed values "
                "(the fx type of `as_mlir_value(a)` is not known: no return type known for `as_mlir_value` "
                "(not resolved); wrap it once where it is made)"),
        Invalid("from flydsl._mlir.dialects import arith\nr = arith.XOrIOp(a, b).result\n"),
        # Views of run-time Int32 values into a wrap of the same type: safe.
        Invalid("import flydsl.compiler as flyc\nimport flydsl.expr as fx\nfrom flydsl._mlir.dialects import arith\n"
                "@flyc.kernel\ndef k(shift: fx.Int32):\n    lane = fx.Int32(fx.thread_idx.x)\n"
                "    dst = fx.Int32(arith.addi(lane.ir_value(), shift.ir_value()))\n",
                fixed="import flydsl.compiler as flyc\nimport flydsl.expr as fx\n"
                "@flyc.kernel\ndef k(shift: fx.Int32):\n    lane = fx.Int32(fx.thread_idx.x)\n"
                "    dst = fx.Int32(lane + shift)\n"),
        # Into a raw op the result stays a raw value.
        Invalid("import flydsl.expr as fx\nfrom flydsl._mlir.dialects import arith, rocdl\nfrom flydsl.expr.typing import T\n"
                "a = fx.Uint32(x)\nb = fx.Uint32(y)\n"
                "r = rocdl.readfirstlane(T.i32, arith.divui(fx.as_ir_value(a), b.ir_value()))\n",
                fixed="import flydsl.expr as fx\nfrom flydsl._mlir.dialects import rocdl\nfrom flydsl.expr.typing import T\n"
                "a = fx.Uint32(x)\nb = fx.Uint32(y)\nr = rocdl.readfirstlane(T.i32, (a // b).ir_value())\n"),
        # Two compile-time operands would fold: the result stays a run-time value.
        Invalid("import flydsl.expr as fx\nfrom flydsl._mlir.dialects import arith\n"
                "c = fx.Int32(arith.addi(fx.Int32(3).ir_value(), fx.Int32(4).ir_value()))\n",
                fixed="import flydsl.expr as fx\nc = fx.Int32((fx.Int32(3) + fx.Int32(4)).ir_value())\n"),
        # Bound to a name, the raw result meets later operators: `>>` on it emits shrui, on Int32 shrsi.
        Invalid("import flydsl.expr as fx\nfrom flydsl._mlir.dialects import arith\n"
                "a = fx.Int32(x)\nb = fx.Int32(y)\nc = arith.addi(a.ir_value(), b.ir_value())\n",
                fixed="import flydsl.expr as fx\na = fx.Int32(x)\nb = fx.Int32(y)\nc = (a + b).ir_value()\n",
                unsafe=True),
        # Two ArithValues (FlyDSL's constant and select): the operator emits the same op, any use.
        Invalid("from flydsl.expr import arith\nfrom flydsl.expr.typing import T\n"
                "c = arith.constant(3, type=T.i32)\nv = arith.select(p, c, c)\nw = arith.shli(arith.addi(v, c), c)\n",
                fixed="from flydsl.expr import arith\nfrom flydsl.expr.typing import T\n"
                      "c = arith.constant(3, type=T.i32)\nv = arith.select(p, c, c)\nw = (v + c) << c\n", count=2),
        # ... of an op class's `.result` too, and beside an fx value's `.ir_value()`: an ArithValue
        # too, whose signedness these ops do not read.
        Invalid("import flydsl.expr as fx\nfrom flydsl.expr import arith\nfrom flydsl.expr.typing import T\n"
                "c = arith.constant(3, type=T.index)\nw = arith.MulIOp(c, fx.Index(8).ir_value()).result // 2\n",
                fixed="import flydsl.expr as fx\nfrom flydsl.expr import arith\nfrom flydsl.expr.typing import T\n"
                      "c = arith.constant(3, type=T.index)\nw = (c * fx.Index(8).ir_value()) // 2\n"),
        # An op class built for more than its `.result` (here the op itself): no fix.
        Invalid("from flydsl.expr import arith\nfrom flydsl.expr.typing import T\n"
                "c = arith.constant(3, type=T.index)\nop = arith.AddIOp(c, c)\n",
                message="Raw `arith.AddIOp`: use the `+` operator on fx-typed values "
                "(`c` is ArithValue (signed=None), not an fx scalar: wrap it once where it is made)"),
        # Operands of different fx types: the operator would promote them.
        Invalid("import flydsl.expr as fx\nfrom flydsl._mlir.dialects import arith\n"
                "a = fx.Int32(x)\nb = fx.Uint32(y)\nc = fx.Int32(arith.addi(a.ir_value(), b.ir_value()))\n",
                message="Raw `arith.addi`: use the `+` operator on fx-typed values "
                "(operands of different fx types, Int32 and Uint32: the operator would promote them)"),
    ]

    def visit_Call(self, node: ast.Call) -> None:
        if in_boundary_module(self):
            return
        op = call_in(self, node, ARITH_OP_MODULES)
        if op is None:
            return
        spelling = _ARITH_OP_CLASSES.get(op, op)
        entry = _ARITH_OPERATORS.get(spelling)
        if entry is None or not default_fastmath(self, node):
            return
        operands = call_operands(node)
        expected = 1 if spelling == "negf" else 2
        if len(operands) != expected or at_raw_boundary(self, operands):
            return
        operator, kind = entry
        values = [viewed_value(self, o) or o for o in operands]
        types = [known_scalar_type(self.model, v) for v in values]
        if kind == "u" and not all(t in _UNSIGNED_TYPES for t in types):
            return  # `//`/`%` on signed or unknown types emit divsi/remsi: no operator keeps the unsigned op
        detail = type_detail(self, operands, types)
        fix = None
        if not detail and op == spelling and expected == 2 and not node.keywords and types[0] in _KIND_TYPES[kind]:
            fix = self._operator_fix(node, op, operator, operands, values, types[0])
        elif spelling in _SIGNLESS_INT_OPS and expected == 2 and not node.keywords and self._arith_values(operands, values):
            fix = self._arith_value_operator_fix(node, operator, operands, op != spelling)
        self.report(node, fix=fix, op=op, operator=operator, detail=detail)

    def _arith_values(self, operands: list[ast.expr], values: list[ast.expr]) -> bool:
        """Whether the operands, as written, are ArithValues, one at least no view of an fx value
        (of two views the typed operator is the fix): a raw op's result, or an fx value's
        `.ir_value()` (an ArithValue carrying the class's signedness, which these ops do not read).
        Before the type table's first release, the shape alone: the checker then withholds the fix."""
        if all(v is not o for o, v in zip(operands, values)):
            return False
        return before_type_table(self.model) or all(scalar_arith_value(self.model.value_type(o)) for o in operands)

    def _arith_value_operator_fix(self, node: ast.Call, operator: str, operands: list[ast.expr], op_class: bool):
        """`arith.addi(a, b)` (or `arith.AddIOp(a, b).result`) of two ArithValues -> `a + b`:
        ArithValue's operator emits that very op (`_binary_op`, `_bitwise_op`, `_shift_op`:
        `arith.addi(self, other)`, reading no signedness) and returns the caster's ArithValue, as
        the op's result is (0.3.0 to 0.5.0), so the value is the same in any use. An op class
        constructed for anything but its `.result` is left alone."""
        replaced = self.model.parent(node) if op_class else node
        if op_class and not (isinstance(replaced, ast.Attribute) and replaced.attr == "result"):
            return None
        left, right = (_operand_text(self, o) for o in operands)
        return self.make_fix([self.replace(replaced, _wrap_result(self, replaced, f"{left} {operator} {right}"))],
                             f"Use the `{operator}` operator: the same op on the same ArithValues")

    def _operator_fix(self, node: ast.Call, op: str, operator: str, operands: list[ast.expr],
                      values: list[ast.expr], type_: str):
        left, right = (_operand_text(self, v) for v in values)
        expression = f"{left} {operator} {right}"
        if rejects_fx_values(self, node, op, operands, values):
            # The original fails at trace time: the fix changes behaviour.
            return self.make_fix([self.replace(node, _wrap_result(self, node, expression))],
                                 f"Use the `{operator}` operator", Applicability.UNSAFE)
        folds = not any(self.model.provably_dynamic(v) for v in values)
        replacement, consumer_agrees = typed_replacement(self, node, expression, type_, folds)
        safe = consumer_agrees and type_ in _PROVEN_INT_TYPES
        return self.make_fix([self.replace(node, replacement)], f"Use the `{operator}` operator",
                             None if safe else Applicability.UNSAFE)


class RawComparison(NamedTuple):
    """A raw `cmpi`/`cmpf` whose predicate a comparison operator emits on some fx type (FLY342)."""

    op: str  # cmpi, cmpf, CmpIOp, CmpFOp
    predicate: str  # slt, OLT, ...
    operator: str  # <, ==, ...
    operands: list[ast.expr]  # the two compared operands as written
    values: list[ast.expr]  # their fx values (of a view `x.ir_value()`, x)
    types: list[str | None]  # their fx scalar types, None where not known
    detail: str  # why the operator may not emit this op: an unknown or mixed type, another predicate; or ""
    expression: str  # the comparison on the fx values, `a < b`
    fixable: bool  # typed alike, and a `cmpi`/`cmpf` call of three positional arguments a fix can rewrite


def raw_comparison(rule: Rule, node: ast.Call) -> RawComparison | None:
    """`node` as a raw comparison a Python operator may replace, else None (no comparison op, a
    predicate no operator emits, a visibly raw operand: a raw SSA contract such as an exec mask)."""
    op = call_in(rule, node, ARITH_OP_MODULES)
    if op not in _CMP_OPS:
        return None
    operands = call_operands(node)
    if len(operands) != 3 or any(rule.model.visibly_raw(o) for o in operands[1:]):
        return None
    predicate = rule.model.resolve(operands[0]) if isinstance(operands[0], (ast.Name, ast.Attribute)) else None
    if not predicate:
        return None
    enum, _, value = predicate.rpartition(".")
    values = [viewed_value(rule, o) or o for o in operands[1:]]
    types = [known_scalar_type(rule.model, v) for v in values]
    if op in ("cmpf", "CmpFOp"):
        operator = _CMPF_OPERATORS.get(value) if enum.endswith("CmpFPredicate") else None
        kind = "f"
    elif not enum.endswith("CmpIPredicate"):
        operator = kind = None
    elif value in _CMPI_UNSIGNED:
        unsigned = all(t in _COMPARED_AS["u"] for t in types)
        operator, kind = (_CMPI_UNSIGNED[value], "u") if unsigned else (None, None)
    else:
        operator = _CMPI_SIGNED.get(value)
        kind = "i" if value in ("eq", "ne") else "s"
    if operator is None:
        return None
    detail = type_detail(rule, operands[1:], types)
    if not detail and types[0] not in _COMPARED_AS[kind]:
        detail = f" (on {types[0]} operands `{operator}` emits another predicate)"
    expression = f"{_operand_text(rule, values[0])} {operator} {_operand_text(rule, values[1])}"
    fixable = not detail and op in _CMP_HELPERS and len(node.args) == 3 and not node.keywords
    return RawComparison(op, value, operator, operands[1:], values, types, detail, expression, fixable)


def proven_comparison(rule: Rule, node: ast.expr) -> str | None:
    """The comparison expression a raw `cmpi` call `node` provably is (FLY342's safe fix, its
    consumer aside): FlyDSL's `arith.cmpi` on fx values or the raw op on their views, of one proven
    integer type whose signedness gives the predicate, at least one of them a run-time value."""
    compared = raw_comparison(rule, node) if isinstance(node, ast.Call) else None
    if compared is None or not compared.fixable or compared.types[0] not in _PROVEN_COMPARED_TYPES \
            or rejects_fx_values(rule, node, compared.op, compared.operands, compared.values) \
            or not any(rule.model.provably_dynamic(v) for v in compared.values):
        return None
    return compared.expression


@register
class RawArithCompare(Rule):
    """`arith.cmpi`/`cmpf` with a predicate that a Python comparison emits
    (`cmpf` OLT/OLE/OEQ/UNE/OGT/OGE, `cmpi` eq/ne/slt/sle/sgt/sge; unsigned
    `ult`... on unsigned fx types) is a comparison operator on fx-typed
    values. Predicates with no operator (`cmpf` ONE/UEQ/ULT/ORD/UNO..., and
    unsigned `cmpi` on values not known to be unsigned) are kept, as are
    comparisons of visibly raw values (e.g. exec masks from inline asm).

    What the fix relies on (FlyDSL 0.3.0 to 0.5.0): `flydsl.expr.arith.cmpi`
    unwraps fx operands, the raw dialect op takes only views (`a.ir_value()`).
    A comparison of fx values returns an fx.Boolean, the op an untyped i1, so
    the fix is safe only into `fx.Boolean(...)` or a raw dialect op (as
    `(a < b).ir_value()`), directly or through every read of a name bound
    once to it, on one proven integer type (Int32, Int64, Uint32, Index).
    `cmpf` stays unsafe: the operator takes an ambient `arith.fastmath(...)`."""

    code = "FLY342"
    follows = TYPED_SCALARS
    call_names = frozenset(_CMP_OPS)
    valid = [
        "from flydsl._mlir.dialects import arith\nc = arith.cmpf(arith.CmpFPredicate.ONE, a, b)\n",
        "from flydsl._mlir.dialects import arith\nc = arith.cmpi(arith.CmpIPredicate.ult, a, b)\n",
        "from flydsl._mlir.dialects import arith, llvm\nm = llvm.inline_asm(t, [], s, c).result\n"
        "c = arith.cmpi(arith.CmpIPredicate.eq, m, llvm.other(x).result)\n",
        "from flydsl._mlir.dialects import arith, llvm\ndef _exec():\n    return llvm.inline_asm(t, [], s, c).result\n"
        "m = _exec()\nc = arith.cmpi(arith.CmpIPredicate.eq, m, _exec())\n",
        "import flydsl.expr as fx\nc = a < b\n",
    ]
    invalid = [
        Invalid("from flydsl._mlir.dialects import arith\nc = arith.cmpf(arith.CmpFPredicate.OGT, x, zero)\n"),
        Invalid("from flydsl.expr import arith\nfrom flydsl._mlir.dialects.arith import CmpIPredicate\n"
                "c = arith.cmpi(CmpIPredicate.slt, i, n)\n"),
        Invalid("from flydsl._mlir.dialects import arith\nimport flydsl.expr as fx\n"
                "a = fx.Uint32(x)\nb = fx.Uint32(y)\nc = arith.CmpIOp(arith.CmpIPredicate.ult, a, b).result\n"),
        # Views of run-time Int32 values into a Boolean wrap: safe.
        Invalid("import flydsl.compiler as flyc\nimport flydsl.expr as fx\nfrom flydsl._mlir.dialects import arith\n"
                "@flyc.kernel\ndef k(n: fx.Int32):\n    i = fx.Int32(fx.thread_idx.x)\n"
                "    c = fx.Boolean(arith.cmpi(arith.CmpIPredicate.slt, i.ir_value(), n.ir_value()))\n",
                fixed="import flydsl.compiler as flyc\nimport flydsl.expr as fx\n"
                "@flyc.kernel\ndef k(n: fx.Int32):\n    i = fx.Int32(fx.thread_idx.x)\n    c = fx.Boolean(i < n)\n"),
        # FlyDSL's arith.cmpi takes fx values; into a raw op the result stays raw.
        Invalid("import flydsl.expr as fx\nfrom flydsl.expr import arith\nfrom flydsl._mlir.dialects import scf\n"
                "a = fx.Uint32(x)\nb = fx.Uint32(y)\nop = scf.IfOp(arith.cmpi(arith.CmpIPredicate.uge, a, b))\n",
                fixed="import flydsl.expr as fx\nfrom flydsl._mlir.dialects import scf\n"
                "a = fx.Uint32(x)\nb = fx.Uint32(y)\nop = scf.IfOp((a >= b).ir_value())\n"),
        # `<` on Uint32 emits ult, not slt.
        Invalid("import flydsl.expr as fx\nfrom flydsl.expr import arith\n"
                "a = fx.Uint32(x)\nb = fx.Uint32(y)\nc = fx.Boolean(arith.cmpi(arith.CmpIPredicate.slt, a, b))\n",
                message="Raw `arith.cmpi` with predicate `slt`: use the `<` comparison on fx-typed values "
                "(on Uint32 operands `<` emits another predicate)"),
        # fx.Index is `signed=False`: `<` emits ult. As the condition of FlyDSL's `arith.select`
        # (`_to_raw` takes the view as it is) and through a name read only by a raw op: safe.
        Invalid("import flydsl.compiler as flyc\nimport flydsl.expr as fx\nfrom flydsl.expr import arith\n"
                "from flydsl._mlir.dialects import scf\n@flyc.kernel\ndef k(m: fx.Int32):\n"
                "    row = fx.Index(fx.thread_idx.x)\n"
                "    safe_row = arith.select(arith.cmpi(arith.CmpIPredicate.ult, row, fx.Index(m)), row, fx.Index(0))\n"
                "    first = arith.cmpi(arith.CmpIPredicate.eq, row, fx.Index(0))\n    op = scf.IfOp(first)\n",
                fixed="import flydsl.compiler as flyc\nimport flydsl.expr as fx\nfrom flydsl.expr import arith\n"
                "from flydsl._mlir.dialects import scf\n@flyc.kernel\ndef k(m: fx.Int32):\n"
                "    row = fx.Index(fx.thread_idx.x)\n"
                "    safe_row = arith.select((row < fx.Index(m)).ir_value(), row, fx.Index(0))\n"
                "    first = row == fx.Index(0)\n    op = scf.IfOp(first.ir_value())\n", count=2),
        # ... and `slt` is no Index comparison.
        Invalid("import flydsl.expr as fx\nfrom flydsl.expr import arith\n"
                "a = fx.Index(x)\nb = fx.Index(y)\nc = fx.Boolean(arith.cmpi(arith.CmpIPredicate.slt, a, b))\n",
                message="Raw `arith.cmpi` with predicate `slt`: use the `<` comparison on fx-typed values "
                "(on Index operands `<` emits another predicate)"),
        # Floats: unsafe (an ambient fastmath applies to the operator only).
        Invalid("import flydsl.expr as fx\nfrom flydsl.expr import arith\n"
                "def f(a: fx.Float32, b: fx.Float32):\n    return fx.Boolean(arith.cmpf(arith.CmpFPredicate.OLT, a, b))\n",
                fixed="import flydsl.expr as fx\n"
                "def f(a: fx.Float32, b: fx.Float32):\n    return fx.Boolean((a < b).ir_value())\n", unsafe=True),
    ]
    use_instead = "c = x > zero    # fx-typed operands emit cmpf ogt / cmpi slt"

    def visit_Call(self, node: ast.Call) -> None:
        if in_boundary_module(self):
            return
        compared = raw_comparison(self, node)
        if compared is None:
            return
        fix = self._comparison_fix(node, compared) if compared.fixable else None
        self.report(node, fix=fix, op=compared.op, predicate=compared.predicate, operator=compared.operator,
                    detail=compared.detail)

    def _comparison_fix(self, node: ast.Call, compared: RawComparison):
        operator, values, type_ = compared.operator, compared.values, compared.types[0]
        expression = compared.expression
        if rejects_fx_values(self, node, compared.op, compared.operands, values):
            # The original fails at trace time: the fix changes behaviour.
            return self.make_fix([self.replace(node, _wrap_result(self, node, expression))],
                                 f"Use the `{operator}` comparison", Applicability.UNSAFE)
        folds = not any(self.model.provably_dynamic(v) for v in values)
        replacement, consumer_agrees = typed_replacement(self, node, expression, "Boolean", folds)
        edits = [self.replace(node, replacement)]
        if not consumer_agrees and not folds:
            read_edits = agreeing_read_edits(self, node, "Boolean")  # `c = a < b`, `scf.IfOp(c.ir_value())`
            if read_edits is not None:
                edits, consumer_agrees = [self.replace(node, expression), *read_edits], True
        if type_ in _FLOAT_TYPES:
            why = "the operator takes an ambient `arith.fastmath(...)`, the raw op does not"
        elif type_ not in _PROVEN_COMPARED_TYPES:
            why = f"not proven on {type_} operands"
        elif not consumer_agrees:
            why = "where the result goes, an fx.Boolean may act unlike the raw i1"
        else:
            return self.make_fix(edits, f"Use the `{operator}` comparison")
        return self.make_fix(edits, f"Use the `{operator}` comparison ({why})", Applicability.UNSAFE)


_FX_CONSTANT_TYPES = {
    "i1": "fx.Boolean", "i8": "fx.Int8", "i16": "fx.Int16", "i32": "fx.Int32", "i64": "fx.Int64",
    "f16": "fx.Float16", "bf16": "fx.BFloat16", "f32": "fx.Float32", "f64": "fx.Float64", "index": "fx.Index",
}


@register
class RawArithConstant(Rule):
    """`arith.constant(v, type=T.i32)` / `arith.ConstantOp` build an untyped
    constant; an fx constant (`fx.Int32(v)`, `fx.Float32(v)`) is typed and
    folds into Python-operator arithmetic. Vector constants (dense
    attributes) are not reported, nor a constant that only feeds raw ops
    (their operand, directly or through a name bound once for them): it goes
    with the raw boundary.

    What the fix relies on (FlyDSL 0.3.0 to 0.5.0): `fx.Int32(v)` is a
    compile-time value where the raw constant is a run-time one, and later
    operators treat the two differently, so it is no drop-in replacement.
    As the right operand of an operator whose left operand is a run-time fx
    value of the constant's type, though, the plain literal (`x + 4` for
    `x + arith.constant(4, type=T.i32)`) is turned into the same
    `arith.constant` by the operator: the result and its type are the same,
    so such an operation (`(x >> c4) & c3`) is in turn an fx operand of x's
    type when the constant is of x's own class. So is a literal offset of the legacy `buffer_ops.buffer_load` / `buffer_store`,
    which build an int offset as that i32 constant. Next to a run-time ArithValue (`ArithValue(x)`,
    `v.bitcast(T.i32)`, an operator's result), a Python int or float the model proves (`23`,
    `BLOCK // 4`) stands for the constant: ArithValue's operator builds `arith_const(v, av.type)`,
    the same `arith.constant` where the code compiles (arith's ops take one operand type). On the
    right of every operator but int true division, which reads the constant's signedness; on the
    left (`254 - av`, the reflected operator) of `+ - * & | ^ <<` and, float, `+ - * /`.
    Elsewhere than an operator's operand, `fx.Int32(v).ir_value()` is the same run-time constant
    (`run_time_constant_fix`)."""

    code = "FLY343"
    call_names = frozenset(_CONSTANT_OPS)
    valid = [
        "import flydsl.expr as fx\nc = fx.Int64(4)\n",
        "from flydsl._mlir.dialects import arith\nc = arith.ConstantOp(vec_ty, dense_attr)\n",
        "from flydsl._mlir.dialects import arith\nfrom flydsl.expr.typing import T\nz = arith.constant(T.vec(4, T.f32), 0.0)\n",
        "from flydsl.expr import arith\nfrom flydsl.expr.typing import T\nz = arith.constant_vector(0.0, T.vec(4, T.f32))\n",
        # named once for raw ops only (atomic stores the guide keeps raw): it goes with them
        "from flydsl._mlir.dialects import llvm\nfrom flydsl.expr import arith\nfrom flydsl.expr.typing import T\n"
        "zero = arith.constant(0, type=T.i32)\nllvm.StoreOp(zero, p, ordering=o)\nllvm.StoreOp(zero, q, ordering=o)\n",
    ]
    invalid = [
        Invalid("import flydsl.compiler as flyc\nimport flydsl.expr as fx\nfrom flydsl.expr import arith\n"
                "from flydsl.expr.typing import T\n@flyc.kernel\ndef k(n: fx.Int32, s: fx.Float32):\n"
                "    m = n * arith.constant(4, type=T.i32)\n    t = s * arith.constant(0.5, type=T.f32)\n",
                fixed="import flydsl.compiler as flyc\nimport flydsl.expr as fx\n"
                "@flyc.kernel\ndef k(n: fx.Int32, s: fx.Float32):\n    m = n * 4\n    t = s * 0.5\n", count=2),
        # Int arithmetic of known ints: the operator reads the same number (parenthesized where needed).
        Invalid("import flydsl.compiler as flyc\nimport flydsl.expr as fx\nfrom flydsl.expr import arith\n"
                "from flydsl.expr.typing import T\nBLOCK = 64\n@flyc.kernel\ndef k(n: fx.Int32):\n"
                "    m = n * arith.constant(BLOCK * 2 - 1, type=T.i32)\n",
                fixed="import flydsl.compiler as flyc\nimport flydsl.expr as fx\nBLOCK = 64\n"
                "@flyc.kernel\ndef k(n: fx.Int32):\n    m = n * (BLOCK * 2 - 1)\n"),
        # Negative against Uint32: the operator would wrap it. No fix.
        Invalid("import flydsl.compiler as flyc\nimport flydsl.expr as fx\nfrom flydsl.expr import arith\n"
                "from flydsl.expr.typing import T\n@flyc.kernel\ndef k(n: fx.Uint32):\n"
                "    m = n + arith.constant(-1, type=T.i32)\n",
                message="Raw `arith.constant` builds an untyped constant: use an fx constant (`fx.Int32`) (next to "
                "`n`, fx.Uint32, the operator may not build this constant from the number)"),
        # A parameter an isinstance guard proves a Python int, typed by MLIR's own constructor: the same constant.
        Invalid("from flydsl._mlir import ir\nfrom flydsl.expr import arith\ndef to_raw(v):\n    if isinstance(v, int):\n"
                "        return arith.unwrap(arith.constant(v, type=ir.IntegerType.get_signless(32)))\n    return v\n",
                fixed="from flydsl.expr import arith\nimport flydsl.expr as fx\ndef to_raw(v):\n    if isinstance(v, int):\n"
                      "        return arith.unwrap(fx.Int32(v).ir_value())\n    return v\n"),
        # The other operand's type, or the constant's own, unknown: the message says which.
        Invalid("from flydsl.expr import arith\nfrom flydsl.expr.typing import T\ndef f(x, ty):\n"
                "    return x * arith.constant(4, type=T.i32), arith.constant(0, type=ty)\n",
                message="Raw `arith.constant` builds an untyped constant: use an fx constant (`fx.Int32`) (the fx "
                "type of `x` is not known: parameter `x` has no annotation, and `f` is public; the plain number is the "
                "fix once it is)",
                count=2),
        # The constant is i64 where the other operand is Int32: no fix.
        Invalid("import flydsl.compiler as flyc\nimport flydsl.expr as fx\nfrom flydsl.expr import arith\n"
                "from flydsl.expr.typing import T\n@flyc.kernel\ndef k(n: fx.Int32):\n"
                "    m = n + arith.constant(4, type=T.i64)\n"),
        # The offset of a legacy buffer load or store: it builds an int offset as the same i32 constant.
        Invalid("from flydsl.expr import arith\nfrom flydsl.expr.typing import T\nfrom kernels.common import buffer_ops\n"
                "v = buffer_ops.buffer_load(rsrc, arith.constant(0, type=T.i32), vec_width=1)\n"
                "buffer_ops.buffer_store(v, rsrc, offset=arith.constant(4, type=T.i32))\n",
                fixed="from kernels.common import buffer_ops\nv = buffer_ops.buffer_load(rsrc, 0, vec_width=1)\n"
                      "buffer_ops.buffer_store(v, rsrc, offset=4)\n", count=2),
        # Not the offset (the stored value), or not an i32 constant: the same run-time constant, spelled fx.
        Invalid("from flydsl.expr import arith\nfrom flydsl.expr.typing import T\nfrom kernels.common import buffer_ops\n"
                "buffer_ops.buffer_store(arith.constant(0, type=T.i32), rsrc, arith.constant(4, type=T.i64))\n", count=2,
                fixed="from kernels.common import buffer_ops\nimport flydsl.expr as fx\n"
                      "buffer_ops.buffer_store(fx.Int32(0).ir_value(), rsrc, fx.Int64(4).ir_value())\n"),
        # Next to a run-time ArithValue: the number, also on the left of `-` and `<<`, and a proven Python int.
        Invalid("from flydsl.expr import arith\nfrom flydsl.expr.arith import ArithValue\nfrom flydsl.expr.typing import T\n"
                "BLOCK = 64\nv = ArithValue(tid)\nbits = v.bitcast(T.i32)\n"
                "up = (bits + arith.constant(0x400000, type=T.i32)) & arith.constant(0xFF800000, type=T.i32)\n"
                "q = arith.constant(254, type=T.i32) - (up >> arith.constant(23, type=T.i32))\n"
                "s = (arith.constant(1, type=T.i32) << q) * arith.constant(BLOCK // 4, type=T.i32)\n"
                "f = ArithValue(x) / arith.constant(2, type=T.f32) - arith.constant(0.5, type=T.f32)\n"
                "g = arith.constant(1.0, type=T.f32) / f\n",
                fixed="from flydsl.expr.arith import ArithValue\nfrom flydsl.expr.typing import T\n"
                "BLOCK = 64\nv = ArithValue(tid)\nbits = v.bitcast(T.i32)\n"
                "up = (bits + 0x400000) & 0xFF800000\nq = 254 - (up >> 23)\ns = (1 << q) * (BLOCK // 4)\n"
                "f = ArithValue(x) / 2 - 0.5\ng = 1.0 / f\n", count=9),
        # Int true division and a reflected shift read the constant's own signedness; a float for an
        # int constant is not what the operator builds; an unknown left operand or number: no fix.
        Invalid("from flydsl.expr import arith\nfrom flydsl.expr.arith import ArithValue\nfrom flydsl.expr.typing import T\n"
                "v = ArithValue(tid)\nr = v / arith.constant(3, type=T.i32)\nt = arith.constant(1, type=T.i32) >> v\n"
                "u = v + arith.constant(1.0, type=T.i32)\nw = x + arith.constant(2, type=T.i32)\n"
                "z = v * arith.constant(n, type=T.i32)\nc = arith.constant(2, type=T.i32) < v\n", count=6),
        Invalid("from flydsl.expr import arith as ea\nfrom flydsl.expr.typing import T\nc = ea.constant(4, type=T.i64)\n",
                at=(3, 5), message='Raw `arith.constant` builds an untyped constant: use an fx constant (`fx.Int64`)',
                fixed="import flydsl.expr as fx\nc = fx.Int64(4).ir_value()\n"),
        Invalid("from flydsl._mlir.dialects import arith\nfrom flydsl.expr.typing import T\nc = arith.constant(T.f32, 0.0)\n"),
        Invalid("from flydsl.expr import arith\nc = arith.constant(1, index=True)\n",
                fixed="import flydsl.expr as fx\nc = fx.Index(1).ir_value()\n"),
        # Elsewhere than an operator's operand: `fx.T(v).ir_value()` builds the same run-time constant
        # (a Python float for a float type, an int its class holds); an unwrap of it is then FLY102's.
        Invalid("from flydsl.expr import arith\nfrom flydsl.expr.typing import T\nfrom flydsl._mlir.dialects import vector\n"
                "def f(scale: float):\n    v = vector.from_elements(T.vec(2, T.f32), [arith.constant(scale, type=T.f32), "
                "arith.constant(1, type=T.f16)])\n    return arith.unwrap(arith.constant(-8, type=T.i8))\n",
                fixed="from flydsl.expr import arith\nfrom flydsl.expr.typing import T\nfrom flydsl._mlir.dialects import vector\n"
                      "import flydsl.expr as fx\ndef f(scale: float):\n    v = vector.from_elements(T.vec(2, T.f32), "
                      "[fx.Float32(scale).ir_value(), fx.Float16(1).ir_value()])\n"
                      "    return arith.unwrap(fx.Int8(-8).ir_value())\n", count=3),
        # Ints known only by their bounds: an unrolled loop's index, a name every binding gives a known int;
        # 0..199 past an i8 wraps alike on both paths. A traced `range` loop's index is a run-time value: no fix.
        Invalid("import flydsl.compiler as flyc\nfrom flydsl.expr import arith, range_constexpr\nfrom flydsl.expr.typing import T\n"
                "def build(wide: bool):\n    dma = 4\n    if wide:\n        dma = 16\n    @flyc.kernel\n    def k(p):\n"
                "        for i in range_constexpr(4):\n            load(p, arith.constant(i, type=T.i32))\n"
                "        for t in range(3):\n            load(p, arith.constant(t, type=T.i32))\n"
                "        for j in range_constexpr(200):\n            load(p, arith.constant(j, type=T.i8))\n"
                "        load(p, arith.constant(dma, type=T.i32))\n    return k\n",
                fixed="import flydsl.compiler as flyc\nfrom flydsl.expr import arith, range_constexpr\nfrom flydsl.expr.typing import T\n"
                      "import flydsl.expr as fx\ndef build(wide: bool):\n    dma = 4\n    if wide:\n        dma = 16\n"
                      "    @flyc.kernel\n    def k(p):\n        for i in range_constexpr(4):\n"
                      "            load(p, fx.Int32(i).ir_value())\n"
                      "        for t in range(3):\n            load(p, arith.constant(t, type=T.i32))\n"
                      "        for j in range_constexpr(200):\n            load(p, fx.Int8(j).ir_value())\n"
                      "        load(p, fx.Int32(dma).ir_value())\n    return k\n", count=4),
        # A comprehension's index over known bounds (shifted: 1 << 40 .. 3 << 40), its type named through
        # a parallel assignment; 0..192 in an i8 wraps alike.
        Invalid("from flydsl.expr import arith\nfrom flydsl.expr.typing import T\ni32, i64 = T.i32, T.i64\n"
                "ptrs = [load(base, arith.constant(i, type=i32)) for i in range(8)]\n"
                "wide = [arith.constant(i << 40, type=i64) for i in range(1, 4)]\n"
                "narrow = [arith.constant(i, type=T.i8) for i in range(0, 256, 64)]\n",
                fixed="from flydsl.expr.typing import T\nimport flydsl.expr as fx\n"
                      "i32, i64 = T.i32, T.i64\nptrs = [load(base, fx.Int32(i).ir_value()) for i in range(8)]\n"
                      "wide = [fx.Int64(i << 40).ir_value() for i in range(1, 4)]\n"
                      "narrow = [fx.Int8(i).ir_value() for i in range(0, 256, 64)]\n", count=3),
        # A loop over a display of known ints, and interval arithmetic of bounded ints.
        Invalid("from flydsl.expr import arith\nfrom flydsl.expr.typing import T\nimport flydsl.compiler as flyc\n"
                "@flyc.kernel\ndef k(v):\n    for sh in [32, 16]:\n        v = v.shuffle_xor(arith.constant(sh, type=T.i32), 64)\n"
                "    offs = [arith.constant(j * 16 + 8, type=T.i32) for j in range(4)]\n"
                "    wide = [arith.constant(j << 28, type=T.i32) for j in range(16)]\n",
                fixed="import flydsl.compiler as flyc\n"
                      "import flydsl.expr as fx\n@flyc.kernel\ndef k(v):\n    for sh in [32, 16]:\n"
                      "        v = v.shuffle_xor(fx.Int32(sh).ir_value(), 64)\n"
                      "    offs = [fx.Int32(j * 16 + 8).ir_value() for j in range(4)]\n"
                      "    wide = [fx.Int32(j << 28).ir_value() for j in range(16)]\n", count=3),
        # A builtin float(...) is a Python float, -inf too.
        Invalid("from flydsl.expr import arith\nfrom flydsl.expr.typing import T\ndef f(head_dim):\n"
                "    scale = float(head_dim) ** -0.5\n    return [arith.constant(scale, type=T.f32), "
                "arith.constant(float(\"-inf\"), type=T.f32)]\n",
                fixed="import flydsl.expr as fx\ndef f(head_dim):\n    scale = float(head_dim) ** -0.5\n"
                      "    return [fx.Float32(scale).ir_value(), fx.Float32(float(\"-inf\")).ir_value()]\n", count=2),
        # An int past the class's range wraps alike (the bits of 0xFF800000 in an i32); a float for an int
        # type and an unknown number get no fix.
        Invalid("from flydsl.expr import arith\nfrom flydsl.expr.typing import T\n"
                "a = [arith.constant(0xFF800000, type=T.i32), arith.constant(128, type=T.i8)]\n"
                "b = [arith.constant(1.0, type=T.i32), arith.constant(n, type=T.i64), arith.constant(n, type=T.f32)]\n",
                fixed="from flydsl.expr import arith\nfrom flydsl.expr.typing import T\nimport flydsl.expr as fx\n"
                      "a = [fx.Int32(0xFF800000).ir_value(), fx.Int8(128).ir_value()]\n"
                      "b = [arith.constant(1.0, type=T.i32), arith.constant(n, type=T.i64), arith.constant(n, type=T.f32)]\n",
                count=5),
        # An i1 of a Python bool (a `bool` parameter, a literal, 0 or 1): `fx.Boolean` builds the same constant.
        # An int of unknown value may be 2, whose truth `fx.Boolean` takes where the attribute keeps its low bit.
        Invalid("from flydsl._mlir import ir\nfrom flydsl.expr import arith\n"
                "def dpp_flags(bound_ctrl: bool = False, mode=0):\n    i1 = ir.IntegerType.get_signless(1)\n"
                "    return [arith.unwrap(arith.constant(bound_ctrl, type=i1)), arith.constant(True, type=i1),\n"
                "            arith.constant(1, type=i1), arith.constant(mode, type=i1)]\n",
                fixed="from flydsl._mlir import ir\nfrom flydsl.expr import arith\nimport flydsl.expr as fx\n"
                      "def dpp_flags(bound_ctrl: bool = False, mode=0):\n    i1 = ir.IntegerType.get_signless(1)\n"
                      "    return [arith.unwrap(fx.Boolean(bound_ctrl).ir_value()), fx.Boolean(True).ir_value(),\n"
                      "            fx.Boolean(1).ir_value(), arith.constant(mode, type=i1)]\n", count=4),
        # The fx import goes after a license header (a comment block a blank line ends), not above it.
        Invalid("# SPDX-License-Identifier: Apache-2.0\n\n\ndef c64(v: int):\n    from flydsl.expr import arith\n"
                "    from flydsl.expr.typing import T\n    return arith.constant(v, type=T.i64)\n",
                fixed="# SPDX-License-Identifier: Apache-2.0\nimport flydsl.expr as fx\n\n\ndef c64(v: int):\n"
                      "    return fx.Int64(v).ir_value()\n"),
        Invalid("from flydsl._mlir import ir\nfrom flydsl.expr import arith\n"
                "def flag(mode):\n    return arith.constant(mode, type=ir.IntegerType.get_signless(1))\n",
                message="Raw `arith.constant` builds an untyped constant: use an fx constant (`fx.Boolean`) "
                "(`mode` is not a Python bool the model knows)"),
        Invalid("from flydsl.expr import arith\ndef c(val, index=False):\n    return arith.constant(val, index=index)\n"),
        Invalid("from flydsl._mlir.dialects import llvm\nfrom flydsl.expr import arith\nfrom flydsl.expr.typing import T\n"
                "zero = arith.constant(0, type=T.i32)\nllvm.StoreOp(zero, p)\nacc = zero + 1\n", at=(4, 8),
                fixed="from flydsl._mlir.dialects import llvm\nimport flydsl.expr as fx\n"
                      "zero = fx.Int32(0).ir_value()\nllvm.StoreOp(zero, p)\nacc = zero + 1\n"),
    ]
    use_instead = "c = fx.Int64(4)"

    def visit_Call(self, node: ast.Call) -> None:
        if in_boundary_module(self):
            return
        op = call_in(self, node, ARITH_OP_MODULES)
        if op not in _CONSTANT_OPS:
            return
        if self._raw_operand(node) or self._named_for_raw_operands(node):
            return  # an operand of raw ops: it goes with them
        arguments = list(node.args) + [k.value for k in node.keywords]
        texts = [self.model.resolve(a) for a in arguments if isinstance(a, (ast.Name, ast.Attribute))]
        callees = [self.model.resolve(a.func) for a in arguments
                   if isinstance(a, ast.Call) and isinstance(a.func, (ast.Name, ast.Attribute))]
        if op == "ConstantOp" and not any(t and t.rpartition(".")[2] in _FX_CONSTANT_TYPES for t in texts):
            return  # ConstantOp(type, attr): only a visibly scalar type is reported
        if any(t and ("vec" in t.rpartition(".")[2].lower() or "Dense" in t) for t in texts + callees):
            return  # a vector / dense-attribute constant
        leaf = next((t.rpartition(".")[2] for t in texts if t and t.rpartition(".")[2] in _FX_CONSTANT_TYPES), None) \
            or _constant_type_leaf(self, node)
        if any(k.arg == "index" for k in node.keywords):
            leaf = "index"
        fix = None
        literal = _constant_literal(self.model, node) if op == "constant" and leaf else None
        if literal is not None and (self._operator_takes_literal(node, leaf, literal)
                                    or self._buffer_offset_takes_literal(node, leaf, literal)):
            text = self.text(literal)
            fix = self.make_fix([self.replace(node, f"({text})" if needs_parentheses(self, literal, node) else text)],
                                "Use the plain literal")
        elif op == "constant" and leaf and (number := self._arith_value_takes_number(node)) is not None:
            text = self.text(number)
            fix = self.make_fix([self.replace(node, f"({text})" if needs_parentheses(self, number, node) else text)],
                                "Use the plain number")
        elif op == "constant" and leaf and (number := self._fx_constant_number(node, leaf)) is not None:
            fix = run_time_constant_fix(self, node, _FX_CONSTANT_TYPES[leaf].removeprefix("fx."), number)
        detail = self._no_fix_detail(node, leaf) if fix is None and op == "constant" else ""
        self.report(node, fix=fix, op=op, replacement=_FX_CONSTANT_TYPES.get(leaf or "", "fx.Int32(v)/fx.Float32(v)"),
                    detail=detail)

    def _no_fix_detail(self, node: ast.Call, leaf: str | None) -> str:
        """Why `arith.constant(v, type=T)` gets no fix, for the message: the type, the value or, as an
        operator's operand, the other operand the model does not know."""
        spelled = next((k.value for k in node.keywords if k.arg in ("type", "index")), None)
        if leaf is None:
            return f" (the constant's type `{self.text(spelled)}` is no fx type the model knows)" if spelled else ""
        value = node.args[0] if len(node.args) == 1 else None
        if value is None:
            return ""
        if leaf == "i1":  # `fx.Boolean(v)` takes v's truth, the attribute its low bit
            return f" (`{self.text(value)}` is not a Python bool the model knows)"
        if self.model.known_number(value) is None and self.model.value_type(value).kind not in (PY_INT, PY_FLOAT):
            cause = self.model.unknown_cause(value)
            return f" (`{self.text(value)}` is not a Python number the model knows{': ' + cause if cause else ''})"
        parent = self.model.parent(node)
        if isinstance(parent, ast.BinOp):
            other = parent.left if parent.right is node else parent.right
        elif isinstance(parent, ast.Compare) and len(parent.comparators) == 1:
            other = parent.left if parent.comparators[0] is node else parent.comparators[0]
        else:
            return ""
        found = self.model.value_type(other)
        if not found.known:
            cause = self.model.unknown_cause(other)
            return (f" (the fx type of `{self.text(other)}` is not known{': ' + cause if cause else ''}; "
                    f"the plain number is the fix once it is)")
        return f" (next to `{self.text(other)}`, {found}, the operator may not build this constant from the number)"

    def _fx_constant_number(self, node: ast.Call, leaf: str) -> ast.expr | None:
        """`v` of FlyDSL's own `arith.constant(v, type=T.<leaf>)` / `arith.constant(v, index=True)`
        when `fx.<Class>(v).ir_value()` builds the very same constant: for an int leaf a Python int of
        any value (the class reduces it to its width as a C cast does, `_wrap_int` from 0.3.1, numpy's
        `astype` in 0.3.0, and `arith.constant` truncates the same bits into the attribute: the same
        constant, or both fail for an int past 64 bits in 0.3.0), for a float leaf a Python number (both
        paths take `float(v)`). For i1, `fx.Boolean(v)` takes `v`'s truth where the attribute keeps its
        low bit: the same constant for a Python bool (or the ints 0 and 1), not for 2. Not as an
        operator's operand: there the plain literal is the fix, once the other operand's type is known."""
        module = (self.model.resolve(node.func) or "").rpartition(".")[0]
        keywords = [(k.arg, k.value) for k in node.keywords]
        if module not in EXPR_ARITH or len(node.args) != 1 or len(keywords) != 1:
            return None
        name, spelled = keywords[0]
        if not (name == "type" or (name == "index" and isinstance(spelled, ast.Constant) and spelled.value is True)):
            return None
        if isinstance(self.model.parent(node), (ast.BinOp, ast.Compare, ast.AugAssign)):
            return None
        value = node.args[0]
        if before_type_table(self.model):
            return value
        number, kind = self.model.known_number(value), self.model.value_type(value).kind
        # A parameter an `isinstance(v, int)` guard proves a Python int (or bool: the same constant).
        guarded = self.model.guarded_class(value) if isinstance(value, ast.Name) else None
        if leaf == "i1":
            known = (type(number) in (bool, int) and number in (0, 1)) or kind == PY_BOOL or guarded == "bool"
        elif leaf in _FLOAT_LEAVES:
            known = number is not None or kind in (PY_INT, PY_FLOAT) or guarded is not None
        else:
            known = type(number) is int or kind == PY_INT or self.model.int_bounds(value) is not None \
                or guarded in ("int", "bool")
        return value if known else None

    def _raw_operand(self, node: ast.expr) -> bool:
        parent = self.model.parent(node)
        return isinstance(parent, ast.Call) and node in parent.args and self.model.raw_dialect_call(parent)

    def _named_for_raw_operands(self, node: ast.Call) -> bool:
        """`zero = arith.constant(...)`, bound once, every read an operand of a
        raw op (`llvm.StoreOp(zero, ...)`): named, it is still those ops' operand."""
        reads = reads_of_value(self, node)
        return bool(reads) and all(self._raw_operand(read) for read in reads)

    def _buffer_offset_takes_literal(self, node: ast.Call, leaf: str, literal: ast.expr) -> bool:
        """Whether `node` is the offset of a legacy buffer load or store, which builds an int
        offset with `_create_i32_constant`: the same i32 `arith.constant` (kernels/common/buffer_ops.py
        of every FlyDSL checkout 0.3.0 to 0.5.0), then treats it as it treats the raw constant."""
        parent = self.model.parent(node)
        call = self.model.parent(parent) if isinstance(parent, ast.keyword) else parent
        value = self.model.known_number(literal)
        if not (isinstance(call, ast.Call) and leaf == "i32" and type(value) is int and _fits(value, "Int32")):
            return False
        position = _BUFFER_OFFSET_POSITIONS.get(self.model.resolve(call.func) or "")
        if position is None:
            return False
        if isinstance(parent, ast.keyword):
            return parent.arg == "offset"
        before = call.args[:position + 1]
        return len(before) > position and before[position] is node and not any(isinstance(a, ast.Starred) for a in before)

    def _operator_takes_literal(self, node: ast.Call, leaf: str, literal: ast.expr) -> bool:
        """Whether `node` is the right operand of an operator whose left operand is a
        run-time fx value of the constant's type, which builds that constant from the literal."""
        parent = self.model.parent(node)
        if isinstance(parent, ast.BinOp) and parent.right is node and isinstance(parent.op, _LITERAL_OPERATORS):
            left = parent.left
        elif isinstance(parent, ast.Compare) and len(parent.comparators) == 1 and parent.comparators[0] is node:
            left = parent.left
        else:
            return False
        return self._keeps_literal(left, self._operand_type(left), leaf, literal)

    def _keeps_literal(self, left: ast.expr, left_type: str | None, leaf: str, literal: ast.expr) -> bool:
        """Whether an operator on the run-time `left` of `left_type` builds the constant from the literal."""
        value = self.model.known_number(literal)
        expected = _LITERAL_OPERAND_TYPES.get(left_type)
        return expected == (leaf, type(value)) and _fits(value, left_type) and self.model.provably_dynamic(left)

    def _operand_type(self, node: ast.expr, depth: int = 0) -> str | None:
        """The fx type of an operator's left operand: the model's, or for `x <op> arith.constant(v,
        type=T)` that this fix turns into `x <op> v` (or a name bound once to one), the type of `x`
        when the constant is of that very class (Int32 and `T.i32`, ...): the operator makes the
        same constant of it, so no promotion, and the result is of x's class either way."""
        found = known_scalar_type(self.model, node)
        if found is not None or depth > 6:
            return found
        if isinstance(node, ast.Name):
            value = self.model.single_assigned_value(node)
            return None if value is None else self._operand_type(value, depth + 1)
        if not (isinstance(node, ast.BinOp) and isinstance(node.op, _LITERAL_OPERATORS)
                and isinstance(node.right, ast.Call) and call_in(self, node.right, ARITH_OP_MODULES) == "constant"):
            return None
        literal = _constant_literal(self.model, node.right)
        leaf = _constant_type_leaf(self, node.right)
        left_type = self._operand_type(node.left, depth + 1)
        carried = literal is not None and _SAME_CLASS_CONSTANTS.get(left_type) == leaf
        return left_type if carried and self._keeps_literal(node.left, left_type, leaf, literal) else None

    def _arith_value_takes_number(self, node: ast.Call) -> ast.expr | None:
        """The number `v` of `arith.constant(v, type=T)` when `v` can stand for the constant: the
        right operand of an operator whose left operand is a run-time ArithValue (`av + c`), or, for
        the operators that ignore signedness, the left operand of one whose right operand is (`c - av`).
        ArithValue's operator makes a Python number `arith_const(v, av.type)` (data: `literal-operand
        own-type-constant`), and arith's ops take operands of one type, so where the code compiles the
        constant is of av's (element) type and both build `arith.constant(type, v)` from the same number
        (an int for an integer type, a float for a float one: a float for an integer type is refused).
        A vector av broadcasts the scalar constant where the number is splatted: the same constant
        once folded (tests/proofs ARITH_VALUE_CONSTANTS). Int true division and reversed shifts,
        divisions and comparisons read the constant's own signedness: no fix. An fx.Vector (the value
        caster's of a vector type) has operators of its own: no fix beside one."""
        model = self.model
        before_table = before_type_table(model)
        if not before_table and model.type_table.operators.get("literal-operand") != "own-type-constant":
            return None
        number = _constant_number(model, node)
        if number is None:
            return None
        argument, kind = number
        leaf = _constant_type_leaf(self, node)
        floating = leaf in _FLOAT_LEAVES
        if leaf is None or leaf == "i1" or (kind == PY_FLOAT and not floating):
            return None
        parent = model.parent(node)
        if isinstance(parent, ast.BinOp) and parent.right is node:
            other, operators = parent.left, _FLOAT_RIGHT_OPERATORS if floating else _LITERAL_OPERATORS
            ok = isinstance(parent.op, operators)
        elif isinstance(parent, ast.Compare) and len(parent.comparators) == 1 and parent.comparators[0] is node:
            other, ok = parent.left, True
        elif isinstance(parent, ast.BinOp) and parent.left is node:
            other = parent.right
            ok = isinstance(parent.op, _FLOAT_REVERSED_OPERATORS if floating else SIGNLESS_INT_OPERATORS)
        else:
            return None
        return argument if ok and (before_table or plain_arith_value(model.value_type(other))) else None


# Integer ops ArithValue's operator emits for two ArithValues whatever their signedness.
_SIGNLESS_INT_OPS = frozenset(op for op, (_, kind) in _ARITH_OPERATORS.items() if kind == "i")


# Float constant types: a number for them is `float(v)` on both paths (`constant`, `arith_const`).
_FLOAT_LEAVES = frozenset({"f16", "bf16", "f32", "f64"})
# `c <op> av` -> `v <op> av` (av's reflected operator) on floats: the operators whose reflected form
# builds the same constant (on ints, SIGNLESS_INT_OPERATORS).
_FLOAT_REVERSED_OPERATORS = (ast.Add, ast.Sub, ast.Mult, ast.Div)


def _constant_number(model, node: ast.Call) -> tuple[ast.expr, str] | None:
    """`v` of `arith.constant(v, type=T)` and its kind when the model proves it a Python int or
    float (a literal, a name bound once to one, arithmetic of them), never a bool."""
    if len(node.args) != 1 or isinstance(node.args[0], ast.Starred) or [k.arg for k in node.keywords] != ["type"]:
        return None
    kind = model.value_type(node.args[0]).kind
    return (node.args[0], kind) if kind in (PY_INT, PY_FLOAT) else None


# The legacy buffer helpers -> the position of their element `offset` argument.
_BUFFER_OFFSET_POSITIONS = {"kernels.common.buffer_ops.buffer_load": 1, "kernels.common.buffer_ops.buffer_store": 2}


# Operators that turn a plain literal right operand into a constant of the left operand's type.
_LITERAL_OPERATORS = (ast.Add, ast.Sub, ast.Mult, ast.FloorDiv, ast.Mod, ast.BitAnd, ast.BitOr, ast.BitXor,
                      ast.LShift, ast.RShift)
_FLOAT_RIGHT_OPERATORS = _LITERAL_OPERATORS + (ast.Div,)


# Left operand types whose constant of the same class leaves the operator's result in that class.
_SAME_CLASS_CONSTANTS = {"Int32": "i32", "Int64": "i64", "Float32": "f32"}


# Left operand type -> the constant type and literal kind that keep it (an int literal is
# an Int32, a float literal a Float32 to the operator; proven in tests/proofs).
_LITERAL_OPERAND_TYPES = {"Int32": ("i32", int), "Uint32": ("i32", int), "Int64": ("i64", int),
                          "Float32": ("f32", float)}


def _constant_literal(model, node: ast.Call) -> ast.expr | None:
    """`v` of FlyDSL's `arith.constant(v, type=T)` when its value is known (a literal, a name bound
    once to one such as `MFMA_N = 16`, int arithmetic of them): the operator reads the same number."""
    if len(node.args) != 1 or [k.arg for k in node.keywords] != ["type"]:
        return None
    value = node.args[0]
    return value if model.known_number(value) is not None else None


def _constant_type_leaf(rule: Rule, node: ast.Call) -> str | None:
    """`i32` of `arith.constant(v, type=T.i32)` (or of an alias of `T.i32`, `ir.IntegerType.get_signless(32)`)."""
    leaf = scalar_ir_type(rule.model, next((k.value for k in node.keywords if k.arg == "type"), None))
    return leaf if leaf in _FX_CONSTANT_TYPES else None


def _fits(value: int | float, left_type: str) -> bool:
    """Whether the operator reads the literal as the same constant: as an Int32, so
    within its range, and not negative against an unsigned operand (the operator
    first wraps it to a large unsigned value, a path the proofs do not cover)."""
    if type(value) is float:
        return True
    low = 0 if left_type in _UNSIGNED_TYPES else -(1 << 31)
    return low <= value < (1 << 31)


@register
class RawArithSelect(Rule):
    """`arith.select(cond, a, b)` takes and returns raw values; a typed
    condition has `cond.select(a, b)` (fx.Boolean / comparison results), which
    keeps the result typed. Selects of visibly raw values are kept.

    What the fix relies on (FlyDSL 0.3.0 to 0.5.0): `fx.Boolean.select`
    brings both values to their common type and emits the same `arith.select`;
    FlyDSL's `arith.select` unwraps fx values, the raw op takes only views.
    A number literal next to an fx value becomes a constant of that value's
    type either way (FlyDSL's `arith.select` builds it of the other operand's
    type, `.select` coerces it to the common type). On a compile-time
    condition `.select` picks a value in Python instead, so the condition must
    be a run-time value. `arith.select` returns an ArithValue without
    signedness, `.select` an fx value, which later operators may treat
    differently (`>>` on the ArithValue emits shrui, on an Int32 shrsi), so
    the fix is safe only where both are read alike: a wrap of the values' type
    or a raw dialect op (as `.ir_value()`), directly or through every read of
    a name bound once to the result. A Float32 result is read alike wherever
    it goes: the fix keeps it raw, and a float class's `.ir_value()` is the
    signless ArithValue the raw op returns. A condition that is a raw `cmpi`
    FLY342 proves a comparison is rewritten with it (`(a < b).select(x, y)`).
    A condition that is an ArithValue (a raw comparison's result) gets its own
    `.select`, which is FlyDSL's `arith.select` statement for statement: the
    same op and value anywhere; the raw dialect's builder takes only ir.Values,
    so there both values must be ones."""

    code = "FLY344"
    follows = TYPED_SCALARS
    call_names = frozenset(_SELECT_OPS)
    valid = [
        "import flydsl.expr as fx\nv = (i < n).select(a, b)\n",
        "from flydsl._mlir.dialects import arith, llvm\nc = llvm.op(x).result\nv = arith.select(c, llvm.op(y).result, llvm.op(z).result)\n",
    ]
    invalid = [
        Invalid("from flydsl.expr import arith\nv = arith.select(is_b, half, zero)\n",
                message="Raw `arith.select`: use `cond.select(a, b)` on the typed condition "
                "(the fx type of `is_b` is not known: `is_b` is not bound in this module; wrap it once where it is made)"),
        Invalid("from flydsl._mlir.dialects import arith\nv = arith.SelectOp(c, a, b).result\n"),
        Invalid("import flydsl.compiler as flyc\nimport flydsl.expr as fx\nfrom flydsl.expr import arith\n"
                "@flyc.kernel\ndef k(n: fx.Int32, a: fx.Float32, b: fx.Float32):\n"
                "    c = fx.Boolean(fx.Int32(fx.thread_idx.x) < n)\n    v = fx.Float32(arith.select(c, a, b))\n",
                fixed="import flydsl.compiler as flyc\nimport flydsl.expr as fx\n"
                "@flyc.kernel\ndef k(n: fx.Int32, a: fx.Float32, b: fx.Float32):\n"
                "    c = fx.Boolean(fx.Int32(fx.thread_idx.x) < n)\n    v = fx.Float32(c.select(a, b))\n"),
        # A condition that may be a compile-time value: `.select` would pick in Python.
        Invalid("import flydsl.expr as fx\nfrom flydsl.expr import arith\n"
                "c = fx.Boolean(flag)\na = fx.Int32(x)\nb = fx.Int32(y)\nv = fx.Int32(arith.select(c, a, b))\n",
                fixed="import flydsl.expr as fx\nc = fx.Boolean(flag)\na = fx.Int32(x)\nb = fx.Int32(y)\n"
                "v = fx.Int32(c.select(a, b))\n", unsafe=True),
        # Bound once to a name read by a wrap of its type and by a raw op (which gets `.ir_value()`): safe.
        Invalid("import flydsl.compiler as flyc\nimport flydsl.expr as fx\nfrom flydsl._mlir.dialects import rocdl\n"
                "from flydsl.expr import arith\nfrom flydsl.expr.typing import T\n"
                "@flyc.kernel\ndef k(n: fx.Int32, a: fx.Int32):\n    lane = fx.Int32(fx.thread_idx.x)\n    c = fx.Boolean(lane < n)\n"
                "    v = arith.select(c, lane, a)\n    w = fx.Int32(v) + rocdl.readfirstlane(T.i32, v)\n",
                fixed="import flydsl.compiler as flyc\nimport flydsl.expr as fx\nfrom flydsl._mlir.dialects import rocdl\n"
                "from flydsl.expr.typing import T\n"
                "@flyc.kernel\ndef k(n: fx.Int32, a: fx.Int32):\n    lane = fx.Int32(fx.thread_idx.x)\n    c = fx.Boolean(lane < n)\n"
                "    v = c.select(lane, a)\n    w = fx.Int32(v) + rocdl.readfirstlane(T.i32, v.ir_value())\n"),
        # An fx.Index wrap of an integer select: it casts the fx value as it casts the raw one.
        Invalid("import flydsl.compiler as flyc\nimport flydsl.expr as fx\nfrom flydsl.expr import arith\n"
                "@flyc.kernel\ndef k(n: fx.Int32):\n    lane = fx.Int32(fx.thread_idx.x)\n    c = fx.Boolean(lane < n)\n"
                "    ix = fx.Index(arith.select(c, fx.Int64(lane), fx.Int64(0)))\n",
                fixed="import flydsl.compiler as flyc\nimport flydsl.expr as fx\n"
                "@flyc.kernel\ndef k(n: fx.Int32):\n    lane = fx.Int32(fx.thread_idx.x)\n    c = fx.Boolean(lane < n)\n"
                "    ix = fx.Index(c.select(fx.Int64(lane), fx.Int64(0)))\n"),
        # A read by an operator: `>>` on the raw result emits shrui, on the fx Int32 shrsi.
        Invalid("import flydsl.compiler as flyc\nimport flydsl.expr as fx\nfrom flydsl.expr import arith\n"
                "@flyc.kernel\ndef k(n: fx.Int32, a: fx.Int32):\n    lane = fx.Int32(fx.thread_idx.x)\n    c = fx.Boolean(lane < n)\n"
                "    v = arith.select(c, lane, a)\n    w = fx.Int32(v) + (v >> 4)\n",
                fixed="import flydsl.compiler as flyc\nimport flydsl.expr as fx\n"
                "@flyc.kernel\ndef k(n: fx.Int32, a: fx.Int32):\n    lane = fx.Int32(fx.thread_idx.x)\n    c = fx.Boolean(lane < n)\n"
                "    v = c.select(lane, a).ir_value()\n    w = fx.Int32(v) + (v >> 4)\n", unsafe=True),
        # Read by `+ - *` beside run-time Int32s into a wrap, on the right of one: the same ops, one class.
        Invalid("import flydsl.compiler as flyc\nimport flydsl.expr as fx\nfrom flydsl.expr import arith\n"
                "@flyc.kernel\ndef k(n: fx.Int32, s: fx.Int32):\n    lane = fx.Int32(fx.thread_idx.x)\n    c = fx.Boolean(lane < n)\n"
                "    v = arith.select(c, lane, 0)\n    off = s * n + v * s\n    w = fx.Int32(n - v * s)\n",
                fixed="import flydsl.compiler as flyc\nimport flydsl.expr as fx\n"
                "@flyc.kernel\ndef k(n: fx.Int32, s: fx.Int32):\n    lane = fx.Int32(fx.thread_idx.x)\n    c = fx.Boolean(lane < n)\n"
                "    v = c.select(lane, 0)\n    off = s * n + v * s\n    w = fx.Int32(n - v * s)\n"),
        # ... but not beside a Python int (`v * 4` keeps the raw ArithValue's class): unsafe.
        Invalid("import flydsl.compiler as flyc\nimport flydsl.expr as fx\nfrom flydsl.expr import arith\n"
                "@flyc.kernel\ndef k(n: fx.Int32, s: fx.Int32):\n    lane = fx.Int32(fx.thread_idx.x)\n    c = fx.Boolean(lane < n)\n"
                "    v = arith.select(c, lane, 0)\n    off = s + v * 4\n",
                fixed="import flydsl.compiler as flyc\nimport flydsl.expr as fx\n"
                "@flyc.kernel\ndef k(n: fx.Int32, s: fx.Int32):\n    lane = fx.Int32(fx.thread_idx.x)\n    c = fx.Boolean(lane < n)\n"
                "    v = c.select(lane, 0).ir_value()\n    off = s + v * 4\n", unsafe=True),
        # A wrap of another type: `fx.Uint64` zero-extends the ArithValue, sign-extends an Int32.
        Invalid("import flydsl.compiler as flyc\nimport flydsl.expr as fx\nfrom flydsl.expr import arith\n"
                "@flyc.kernel\ndef k(n: fx.Int32, a: fx.Int32):\n    lane = fx.Int32(fx.thread_idx.x)\n    c = fx.Boolean(lane < n)\n"
                "    v = arith.select(c, lane, a)\n    w = fx.Uint64(v)\n",
                fixed="import flydsl.compiler as flyc\nimport flydsl.expr as fx\n"
                "@flyc.kernel\ndef k(n: fx.Int32, a: fx.Int32):\n    lane = fx.Int32(fx.thread_idx.x)\n    c = fx.Boolean(lane < n)\n"
                "    v = c.select(lane, a).ir_value()\n    w = fx.Uint64(v)\n", unsafe=True),
        # A Float32 result, wherever it goes: its `.ir_value()` is the raw op's signless ArithValue itself
        # (an Int32's carries signed=True, which `//`, `>>` and comparisons of an ArithValue read).
        Invalid("import flydsl.compiler as flyc\nimport flydsl.expr as fx\nfrom flydsl.expr import arith\n"
                "@flyc.kernel\ndef k(n: fx.Int32, x: fx.Float32):\n    c = fx.Boolean(fx.Int32(fx.thread_idx.x) < n)\n"
                "    s = fx.Float32(0.0)\n    if c:\n        s = arith.select(c, x, fx.Float32(1.0))\n    t = s * x\n",
                fixed="import flydsl.compiler as flyc\nimport flydsl.expr as fx\n"
                "@flyc.kernel\ndef k(n: fx.Int32, x: fx.Float32):\n    c = fx.Boolean(fx.Int32(fx.thread_idx.x) < n)\n"
                "    s = fx.Float32(0.0)\n    if c:\n        s = c.select(x, fx.Float32(1.0)).ir_value()\n    t = s * x\n"),
        # Bound twice: a read may see the other value.
        Invalid("import flydsl.compiler as flyc\nimport flydsl.expr as fx\nfrom flydsl.expr import arith\n"
                "@flyc.kernel\ndef k(n: fx.Int32, a: fx.Int32):\n    lane = fx.Int32(fx.thread_idx.x)\n    c = fx.Boolean(lane < n)\n"
                "    v = a\n    if c:\n        v = arith.select(c, lane, a)\n    w = fx.Int32(v)\n",
                fixed="import flydsl.compiler as flyc\nimport flydsl.expr as fx\n"
                "@flyc.kernel\ndef k(n: fx.Int32, a: fx.Int32):\n    lane = fx.Int32(fx.thread_idx.x)\n    c = fx.Boolean(lane < n)\n"
                "    v = a\n    if c:\n        v = c.select(lane, a).ir_value()\n    w = fx.Int32(v)\n",
                unsafe=True),
        # A literal next to an fx value: both spellings build the constant of that value's type.
        Invalid("import flydsl.compiler as flyc\nimport flydsl.expr as fx\nfrom flydsl.expr import arith, gpu\n"
                "@flyc.kernel\ndef k(n: fx.Int32, s: fx.Float32):\n    lane = fx.Int32(gpu.thread_id(\"x\"))\n    c = fx.Boolean(lane < n)\n"
                "    v = fx.Int32(arith.select(c, lane, 0))\n    f = fx.Float32(arith.select(c, 0.0, s))\n",
                fixed="import flydsl.compiler as flyc\nimport flydsl.expr as fx\nfrom flydsl.expr import gpu\n"
                "@flyc.kernel\ndef k(n: fx.Int32, s: fx.Float32):\n    lane = fx.Int32(gpu.thread_id(\"x\"))\n    c = fx.Boolean(lane < n)\n"
                "    v = fx.Int32(c.select(lane, 0))\n    f = fx.Float32(c.select(0.0, s))\n",
                count=2),
        # An Index clamp of a name bound twice: the condition reads the binding that reaches it, a
        # block id's multiple, a run-time value.
        Invalid("import flydsl.compiler as flyc\nimport flydsl.expr as fx\nfrom flydsl.expr import arith\n"
                "@flyc.kernel\ndef k(n: fx.Int32):\n    rows = fx.Index(fx.block_idx.x * 4)\n"
                "    rows = fx.Index(arith.select(fx.Boolean(rows < fx.Index(8)), rows, fx.Index(8)))\n",
                fixed="import flydsl.compiler as flyc\nimport flydsl.expr as fx\n"
                "@flyc.kernel\ndef k(n: fx.Int32):\n    rows = fx.Index(fx.block_idx.x * 4)\n"
                "    rows = fx.Index(fx.Boolean(rows < fx.Index(8)).select(rows, fx.Index(8)))\n"),
        # No one binding provably reaches the read (a branch rebinds it): the condition may be compile-time.
        Invalid("import flydsl.compiler as flyc\nimport flydsl.expr as fx\nfrom flydsl.expr import arith\n"
                "@flyc.kernel\ndef k(n: fx.Int32):\n    rows = fx.Index(4)\n    if n > 0:\n"
                "        rows = fx.Index(fx.block_idx.x)\n    r = fx.Index(arith.select(fx.Boolean(rows < fx.Index(8)), rows, fx.Index(8)))\n",
                fixed="import flydsl.compiler as flyc\nimport flydsl.expr as fx\n"
                "@flyc.kernel\ndef k(n: fx.Int32):\n    rows = fx.Index(4)\n    if n > 0:\n"
                "        rows = fx.Index(fx.block_idx.x)\n    r = fx.Index(fx.Boolean(rows < fx.Index(8)).select(rows, fx.Index(8)))\n",
                unsafe=True),
        # A `Constexpr` parameter is a Python value: `.select` would pick in Python.
        Invalid("import flydsl.compiler as flyc\nimport flydsl.expr as fx\nfrom flydsl.expr import arith\n"
                "@flyc.kernel\ndef k(flag: fx.Constexpr[bool], a: fx.Int32, b: fx.Int32):\n"
                "    v = fx.Int32(arith.select(fx.Boolean(flag), a, b))\n",
                fixed="import flydsl.compiler as flyc\nimport flydsl.expr as fx\n"
                "@flyc.kernel\ndef k(flag: fx.Constexpr[bool], a: fx.Int32, b: fx.Int32):\n"
                "    v = fx.Int32(fx.Boolean(flag).select(a, b))\n", unsafe=True),
        # A condition FLY342 proves a comparison (Index `ult` is `<`): one fix for both.
        Invalid("import flydsl.compiler as flyc\nimport flydsl.expr as fx\nfrom flydsl.expr import arith\n"
                "@flyc.kernel\ndef k(m: fx.Int32):\n    row = fx.Index(fx.thread_idx.x)\n"
                "    v = fx.Index(arith.select(arith.cmpi(arith.CmpIPredicate.ult, row, fx.Index(m)), row, fx.Index(0)))\n",
                fixed="import flydsl.compiler as flyc\nimport flydsl.expr as fx\n"
                "@flyc.kernel\ndef k(m: fx.Int32):\n    row = fx.Index(fx.thread_idx.x)\n"
                "    v = fx.Index((row < fx.Index(m)).select(row, fx.Index(0)))\n"),
        # A negative literal next to a Uint32 (`.select` would first wrap it), an int one next to a Float32: no fix.
        Invalid("import flydsl.expr as fx\nfrom flydsl.expr import arith\n"
                "u = fx.Uint32(fx.thread_idx.x)\nv = fx.Uint32(arith.select(u < fx.Uint32(n), u, -1))\n",
                message="Raw `arith.select`: use `cond.select(a, b)` on the typed condition "
                "(`-1` is a Python int, not an fx scalar: wrap it once where it is made)"),
        Invalid("import flydsl.expr as fx\nfrom flydsl.expr import arith\n"
                "s = fx.Float32(x)\nv = fx.Float32(arith.select(s < fx.Float32(y), s, 0))\n",
                message="Raw `arith.select`: use `cond.select(a, b)` on the typed condition "
                "(`0` is a Python int, not an fx scalar: wrap it once where it is made)"),
        # A condition of a raw comparison is an ArithValue, no fx.Boolean: its `.select` is FlyDSL's
        # `arith.select` itself, whatever the values and wherever the result goes.
        Invalid("import flydsl.expr as fx\nfrom flydsl.expr import arith\n"
                "s = fx.Float32(x)\nneg = arith.cmpf(arith.CmpFPredicate.OLT, s.ir_value(), y)\n"
                "v = arith.select(neg, s, 0.0) >> 1\n",
                fixed="import flydsl.expr as fx\nfrom flydsl.expr import arith\n"
                "s = fx.Float32(x)\nneg = arith.cmpf(arith.CmpFPredicate.OLT, s.ir_value(), y)\n"
                "v = neg.select(s, 0.0) >> 1\n",
                at=(5, 5), message="Raw `arith.select`: use `cond.select(a, b)` on the typed condition "
                "(`neg` is ArithValue (signed=None), not an fx scalar: wrap it once where it is made)"),
        # `ArithValue(m)` of a value of no known type is a plain ArithValue: its `.select` is `arith.select`.
        Invalid("from flydsl.expr import arith\nfrom flydsl.expr.arith import ArithValue\n"
                "v = arith.select(ArithValue(m), a, b)\n",
                fixed="from flydsl.expr.arith import ArithValue\nv = ArithValue(m).select(a, b)\n"),
        # ... a caster-made one of no known shape may be an fx.Vector mask (`vector<4xi1>`), whose `.select` is its own.
        Invalid("from flydsl.expr import arith\nv = arith.select(arith.cmpi(arith.CmpIPredicate.ult, x, y), a, b)\n",
                message="Raw `arith.select`: use `cond.select(a, b)` on the typed condition (`arith.cmpi(arith.CmpIPredicate.ult, "
                "x, y)` is ArithValue or fx.Vector, not an fx scalar: wrap it once where it is made)"),
        # fx.Vectors are ir.Values, which the raw builder takes: safe.
        Invalid("import flydsl.expr as fx\nfrom flydsl._mlir.dialects import arith\n"
                "s = fx.Float32(x)\nneg = arith.cmpf(arith.CmpFPredicate.OLT, s.ir_value(), y)\n"
                "v = arith.select(neg, fx.Vector.filled(4, s, fx.Float32), fx.Vector.filled(4, 0.0, fx.Float32))\n",
                fixed="import flydsl.expr as fx\nfrom flydsl._mlir.dialects import arith\n"
                "s = fx.Float32(x)\nneg = arith.cmpf(arith.CmpFPredicate.OLT, s.ir_value(), y)\n"
                "v = neg.select(fx.Vector.filled(4, s, fx.Float32), fx.Vector.filled(4, 0.0, fx.Float32))\n", at=(5, 5)),
        # The raw dialect's builder takes only ir.Values: `.select` would take the fx values it rejects.
        Invalid("import flydsl.expr as fx\nfrom flydsl._mlir.dialects import arith\n"
                "s = fx.Float32(x)\nneg = arith.cmpf(arith.CmpFPredicate.OLT, s.ir_value(), y)\n"
                "v = arith.select(neg, s, s)\n",
                fixed="import flydsl.expr as fx\nfrom flydsl._mlir.dialects import arith\n"
                "s = fx.Float32(x)\nneg = arith.cmpf(arith.CmpFPredicate.OLT, s.ir_value(), y)\n"
                "v = neg.select(s, s)\n",
                at=(5, 5), unsafe=True, message="Raw `arith.select`: use `cond.select(a, b)` on the typed condition "
                "(`neg` is ArithValue (signed=None), not an fx scalar: wrap it once where it is made)"),
    ]
    use_instead = "v = is_b.select(half, zero)"

    def visit_Call(self, node: ast.Call) -> None:
        if in_boundary_module(self):
            return
        op = call_in(self, node, ARITH_OP_MODULES)
        if op not in _SELECT_OPS:
            return
        operands = call_operands(node)
        if len(operands) != 3 or at_raw_boundary(self, operands):
            return
        values = [viewed_value(self, o) or o for o in operands]
        types = [known_scalar_type(self.model, v) for v in values]
        # A raw comparison FLY342 proves an operator, `select(cmpi(ult, a, b), ...)`: `(a < b).select(...)`.
        compared = proven_comparison(self, operands[0])
        if compared is not None:
            types[0] = "Boolean"
        types[1:] = _literal_takes_type(self.model, values[1:], types[1:])
        detail = type_detail(self, operands[:1], types[:1]) or type_detail(self, operands[1:], types[1:])
        if not detail and types[0] != "Boolean":
            detail = f" (the condition is {types[0]}, not fx.Boolean)"
        fix = None
        if op == "select" and len(node.args) == 3 and not node.keywords:
            if not detail:
                fix = self._select_fix(node, op, operands, values, types[1], f"({compared})" if compared else None)
            elif compared is None and self._arith_value_condition(operands[0]):
                fix = self._arith_value_select_fix(node, operands)
        self.report(node, fix=fix, op=op, detail=detail)

    def _arith_value_condition(self, condition: ast.expr) -> bool:
        """Whether the condition is an ArithValue whose `.select` runs FlyDSL's `arith.select` body
        (the release's `arith-value-select` fact; before the table's first release, the shape alone:
        the checker then withholds the fix): no fx.Vector, whose `.select` is its own (a scalar
        caster-made value, or `ArithValue(v)` of any type)."""
        return before_type_table(self.model) or (plain_arith_value(self.model.value_type(condition))
                                                 and self.model.type_table.has("arith-value-select", "select-function"))

    def _arith_value_select_fix(self, node: ast.Call, operands: list[ast.expr]):
        """`arith.select(c, a, b)` of an ArithValue `c` -> `c.select(a, b)`: the method is FlyDSL's
        `select` itself (utils/arith.py, 0.3.0 to 0.5.0), the same op and the same caster-made
        ArithValue for any values and any use. The raw dialect's builder builds that op too, but
        takes only ir.Values: a Python number or an fx value it rejects, `.select` would take."""
        condition, true_value, false_value = operands
        expression = f"{_operand_text(self, condition)}.select({self.text(true_value)}, {self.text(false_value)})"
        edits = [self.replace(node, expression)]
        if not _unwraps_operands(self, node, "select"):
            not_raw = next((v for v in (true_value, false_value)
                            if self.model.value_type(v).kind not in IR_VALUE_KINDS), None)
            if not_raw is not None:
                return self.make_fix(edits, "Use `cond.select(a, b)` (the raw op takes only ir.Values: "
                                     f"{operand_type_reason(self, not_raw)})", Applicability.UNSAFE)
        return self.make_fix(edits, "Use `cond.select(a, b)`: ArithValue's `.select` is FlyDSL's `arith.select` itself")

    def _select_fix(self, node: ast.Call, op: str, operands: list[ast.expr], values: list[ast.expr], type_: str,
                    compared: str | None):
        """`compared`: the condition's text when it is a raw comparison made an operator."""
        condition, true_value, false_value = values
        condition_text = compared or _operand_text(self, condition)
        expression = f"{condition_text}.select({self.text(true_value)}, {self.text(false_value)})"
        checked = 1 if compared else 0  # a raw comparison is an ir.Value, which every select takes
        if rejects_fx_values(self, node, op, operands[checked:], values[checked:]):
            return self.make_fix([self.replace(node, expression)],
                                 "Use `cond.select(a, b)` (the raw op fails on an fx value at trace time: "
                                 "the fix changes behaviour)", Applicability.UNSAFE)
        replacement, consumer_agrees = typed_replacement(self, node, expression, type_, folds=False)
        edits = [self.replace(node, replacement)]
        consumer_agrees = consumer_agrees or raw_form_is_signless(self, type_)
        if not consumer_agrees:
            read_edits = agreeing_read_edits(self, node, type_)
            if read_edits is not None:
                edits, consumer_agrees = [self.replace(node, expression), *read_edits], True
        if not (compared or self.model.provably_dynamic(condition)):
            why = f"`{self.text(condition)}` may be a compile-time value: `.select` would pick in Python"
        elif type_ not in _PROVEN_SELECT_TYPES:
            why = f"not proven on {type_} values"
        elif not consumer_agrees:
            why = "where the result goes, an fx value may act unlike the raw one"
        else:
            return self.make_fix(edits, "Use `cond.select(a, b)`")
        return self.make_fix(edits, f"Use `cond.select(a, b)` ({why})", Applicability.UNSAFE)



def agreeing_read_edits(rule: Rule, node: ast.Call, type_: str) -> list | None:
    """For `name = <raw op>(...)` (read at least once, every read that may see this binding known)
    whose every such read takes the fx `type_` value the fix gives as it takes the raw result: a wrap
    of that type, an operator chain that ends in one (`_read_alike_through_operators`), or a raw
    dialect op given `name.ir_value()`, the edits of those reads; else None."""
    assignment = single_name_assignment(rule, node)
    reads = reads_seeing(rule, assignment[1]) if assignment is not None else None
    if not reads:
        return None
    edits = []
    for read in reads:
        if _raw_operand_of(rule, read):
            edits.append(rule.replace(read, f"{read.id}.ir_value()"))
        elif not (_into_own_wrap(rule, read, type_) or _read_alike_through_operators(rule, read, type_)):
            return None
    return edits


def _read_alike_through_operators(rule: Rule, node: ast.expr, type_: str, depth: int = 0) -> bool:
    """Whether the raw select result and its fx value of `type_` at `node` become the same value in
    the operators above it, before anything else reads them. `+ - *` emit one signless op whatever
    the signedness; a run-time fx operand of `type_` on the left turns a raw right operand into its
    class (`Numeric` coerces an ArithValue by `from_ir_type`), so from there both are of `type_`;
    with the value on the left, the raw result stays an ArithValue, the fx one of `type_`: the
    operator's own value is then checked the same way, or as the argument of a wrap of `type_`.
    (numeric.py and utils/arith.py, 0.3.0 to 0.5.0: `z + (sel * y)` emits the same muli and addi and
    gives an Int32 either way, built and checked with 0.3.0, 0.3.1 and 0.5.0.)"""
    parent = rule.model.parent(node)
    # Of those scalars, the integers (Int32, Int64): float selects read so are not proven.
    if type_ not in SAME_OP_SCALARS or type_ not in FX_INTEGERS or depth > _MAX_OPERATOR_CHAIN or not (
            isinstance(parent, ast.BinOp) and isinstance(parent.op, SAME_OP_OPERATORS)):
        return False
    other = parent.left if parent.right is node else parent.right
    if known_scalar_type(rule.model, other) != type_ or not rule.model.provably_dynamic(other):
        return False
    if parent.right is node:
        return True
    return _into_own_wrap(rule, parent, type_) or _read_alike_through_operators(rule, parent, type_, depth + 1)


_MAX_OPERATOR_CHAIN = 8


def _literal_takes_type(model, values: list[ast.expr], types: list[str | None]) -> list[str | None]:
    """The types of select's two values, a number whose value is known (`known_number`) next to
    an fx value taking that value's type: FlyDSL's `arith.select` builds the constant of the other
    value's type, `.select` the same one (an int literal within Int32's range for Int32, Int64 and
    Uint32, not negative for Uint32; a float literal for Float32; proven in tests/proofs)."""
    literals = [model.known_number(value) for value in values]
    for literal, other in ((0, 1), (1, 0)):
        value, known = literals[literal], types[other]
        if value is not None and literals[other] is None and known in _LITERAL_OPERAND_TYPES \
                and _LITERAL_OPERAND_TYPES[known][1] is type(value) and _fits(value, known):
            return [known, known]
    return types
