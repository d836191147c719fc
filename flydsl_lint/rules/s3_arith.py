"""§3 raw `arith` -> fx functions and Python operators (typed arithmetic, operators, comparisons, constants, select)."""

from __future__ import annotations

import ast

from ..engine.diagnostics import Applicability
from ._base import Invalid, Rule, register
from ._edits import _OPEN_CONTEXTS, is_parenthesized, reference, replace_callee
from ._flydsl import EXPR, EXPR_ARITH, RAW_ARITH, TYPED_SCALARS, known_scalar_type
from ._raw_dialects import (
    ARITH_OP_MODULES, at_raw_boundary, call_in, call_operands, in_boundary_module, is_raw_dialect_call, visibly_raw,
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


_METHODS = {"maximumf": "max", "minimumf": "min"}



_ARITH_MODULES = EXPR_ARITH + (RAW_ARITH, EXPR)


_HEADER = "import flydsl.expr as fx\nfrom flydsl.expr import arith\n"


@register
class RawTypedArithmetic(Rule):
    """The arith spellings `maximumf`/`minimumf`/`maxsi`/`maxui`/`minsi`/`minui`/
    `maxnumf`/`ceildivsi`/`ceildivui` are legacy: `fx.max`, `fx.min`,
    `fx.maxnumf` and `fx.ceildiv` pick the op from the operand types and fold
    static operands. FlyDSL's CI rejects new uses of these spellings."""

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
    call_names = frozenset(_METHODS)
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


# Raw arith binary ops with a Python operator on fx-typed operands:
# op -> (operator, operand kind: "f" float, "i" integer, "s" signed int, "u" unsigned int)
_ARITH_OPERATORS = {
    "addf": ("+", "f"), "subf": ("-", "f"), "mulf": ("*", "f"), "divf": ("/", "f"), "remf": ("%", "f"),
    "addi": ("+", "i"), "subi": ("-", "i"), "muli": ("*", "i"),
    "andi": ("&", "i"), "ori": ("|", "i"), "xori": ("^", "i"), "shli": ("<<", "i"),
    "divsi": ("//", "s"), "floordivsi": ("//", "s"), "remsi": ("%", "s"), "shrsi": (">>", "s"),
    "divui": ("//", "u"), "remui": ("%", "u"),
    "negf": ("-", "f"),
}


_ARITH_OP_CLASSES = {
    "AddFOp": "addf", "SubFOp": "subf", "MulFOp": "mulf", "DivFOp": "divf", "RemFOp": "remf", "AddIOp": "addi",
    "SubIOp": "subi", "MulIOp": "muli", "AndIOp": "andi", "OrIOp": "ori", "XOrIOp": "xori", "ShLIOp": "shli",
    "DivSIOp": "divsi", "FloorDivSIOp": "floordivsi", "RemSIOp": "remsi", "ShRSIOp": "shrsi", "DivUIOp": "divui",
    "RemUIOp": "remui", "NegFOp": "negf",
}


# Ops whose operator form emits exactly this op for operands of one known fx type.
_SAFE_OPERATOR_OPS = {"addf", "subf", "mulf", "divf", "addi", "subi", "muli", "andi", "ori", "xori", "shli"}


_FLOAT_TYPES = {"Float16", "BFloat16", "Float32", "Float64"}


_SIGNED_TYPES = {"Int8", "Int16", "Int32", "Int64"}


_UNSIGNED_TYPES = {"Uint8", "Uint16", "Uint32", "Uint64"}


_KIND_TYPES = {"f": _FLOAT_TYPES, "i": _SIGNED_TYPES | _UNSIGNED_TYPES, "s": _SIGNED_TYPES, "u": _UNSIGNED_TYPES}


# Comparison predicates that a Python comparison operator emits (utils/arith.py).
_CMPF_OPERATORS = {"OLT": "<", "OLE": "<=", "OEQ": "==", "UNE": "!=", "OGT": ">", "OGE": ">="}


_CMPI_SIGNED = {"eq": "==", "ne": "!=", "slt": "<", "sle": "<=", "sgt": ">", "sge": ">="}


_CMPI_UNSIGNED = {"ult": "<", "ule": "<=", "ugt": ">", "uge": ">="}


# The raw arith ops each rule reports, as its `call_names`: a finding's callee
# resolves to `<arith module>.<op>`, and the checker then hands the rule only
# calls with that leaf instead of every call into the arith modules.
_CMP_OPS = ("cmpf", "cmpi", "CmpFOp", "CmpIOp")


_CONSTANT_OPS = ("constant", "ConstantOp")


_SELECT_OPS = ("select", "SelectOp")


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


@register
class RawArithOperator(Rule):
    """Raw arith ops with a Python operator (`addf`/`addi` `+`, `subf` `-`, `mulf`
    `*`, `divf` `/`, `andi` `&`, `ori` `|`, `xori` `^`, `shli` `<<`, `divsi`
    `//`, `remsi` `%`, ...) need unwrapped operands and return untyped values.
    On fx-typed values the operator emits the same op. Kept: ops with a non-
    default `fastmath=` (the guide's explicit `*FOp` exception) and ops whose
    operands are all visibly raw values (a raw SSA boundary)."""

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
    ]
    invalid = [
        Invalid("from flydsl._mlir.dialects import arith\nimport flydsl.expr as fx\n"
                "a = fx.Uint32(x)\nq = arith.remui(a, fx.Uint32(8))\n"),
        Invalid("from flydsl._mlir.dialects import arith\nimport flydsl.expr as fx\n"
                "a = fx.Float32(x)\nb = fx.Float32(y)\ns = arith.addf(a, b)\n",
                fixed="import flydsl.expr as fx\na = fx.Float32(x)\nb = fx.Float32(y)\ns = a + b\n", unsafe=True),
        Invalid("from flydsl.expr import arith\nimport flydsl.expr as fx\n"
                "def f(i: fx.Int32, j: fx.Int32):\n    return fx.Int64(arith.shli(i, j))\n",
                fixed="import flydsl.expr as fx\n"
                "def f(i: fx.Int32, j: fx.Int32):\n    return fx.Int64(i << j)\n", unsafe=True),
        Invalid("from flydsl.expr import arith\nimport flydsl.expr as fx\n"
                "a = fx.Int32(x)\nb = fx.Int32(y)\nc = arith.muli(a, b) * 2\n",
                fixed="import flydsl.expr as fx\na = fx.Int32(x)\nb = fx.Int32(y)\nc = (a * b) * 2\n", unsafe=True),
        Invalid("from flydsl._mlir.dialects import arith\ns = arith.mulf(as_mlir_value(a), as_mlir_value(b))\n"),
        Invalid("from flydsl._mlir.dialects import arith as _arith\nimport flydsl.expr as fx\n"
                "a = fx.Int32(x)\nq = _arith.divsi(a, fx.Int32(4))\n"),
        Invalid("from flydsl._mlir.dialects import arith\nr = arith.XOrIOp(a, b).result\n"),
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
        if kind == "u" and not all(known_scalar_type(self.model, o) in _UNSIGNED_TYPES for o in operands):
            return  # `//`/`%` on signed or unknown types emit divsi/remsi: no operator keeps the unsigned op
        fix = None
        if op == spelling and spelling in _SAFE_OPERATOR_OPS and expected == 2 and not node.keywords:
            types = {known_scalar_type(self.model, o) for o in operands}
            (only,) = types if len(types) == 1 else (None,)
            if only in _KIND_TYPES[kind]:
                left, right = (_operand_text(self, o) for o in operands)
                fix = self.make_fix([self.replace(node, _wrap_result(self, node, f"{left} {operator} {right}"))],
                                    f"Use the `{operator}` operator")
        self.report(node, fix=fix, op=op, operator=operator)


@register
class RawArithCompare(Rule):
    """`arith.cmpi`/`cmpf` with a predicate that a Python comparison emits
    (`cmpf` OLT/OLE/OEQ/UNE/OGT/OGE, `cmpi` eq/ne/slt/sle/sgt/sge; unsigned
    `ult`... on unsigned fx types) is a comparison operator on fx-typed
    values. Predicates with no operator (`cmpf` ONE/UEQ/ULT/ORD/UNO..., and
    unsigned `cmpi` on values not known to be unsigned) are kept, as are
    comparisons of visibly raw values (e.g. exec masks from inline asm)."""

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
    ]
    use_instead = "c = x > zero    # fx-typed operands emit cmpf ogt / cmpi slt"

    def visit_Call(self, node: ast.Call) -> None:
        if in_boundary_module(self):
            return
        op = call_in(self, node, ARITH_OP_MODULES)
        if op not in _CMP_OPS:
            return
        operands = call_operands(node)
        if len(operands) != 3 or any(visibly_raw(self, o) for o in operands[1:]):
            return  # a raw value (exec mask, inline asm result) on either side: a raw SSA contract
        predicate = self.model.resolve(operands[0]) if isinstance(operands[0], (ast.Name, ast.Attribute)) else None
        if not predicate:
            return
        enum, _, value = predicate.rpartition(".")
        if op in ("cmpf", "CmpFOp"):
            operator = _CMPF_OPERATORS.get(value) if enum.endswith("CmpFPredicate") else None
        elif not enum.endswith("CmpIPredicate"):
            operator = None
        elif value in _CMPI_UNSIGNED:
            unsigned = all(known_scalar_type(self.model, o) in _UNSIGNED_TYPES for o in operands[1:])
            operator = _CMPI_UNSIGNED[value] if unsigned else None
        else:
            operator = _CMPI_SIGNED.get(value)
        if operator is None:
            return
        self.report(node, op=op, predicate=value, operator=operator)


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
    with the raw boundary."""

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
        Invalid("from flydsl.expr import arith as ea\nfrom flydsl.expr.typing import T\nc = ea.constant(4, type=T.i64)\n",
                at=(3, 5), message='Raw `arith.constant` builds an untyped constant: use an fx constant (`fx.Int64`)'),
        Invalid("from flydsl._mlir.dialects import arith\nfrom flydsl.expr.typing import T\nc = arith.constant(T.f32, 0.0)\n"),
        Invalid("from flydsl.expr import arith\nc = arith.constant(1, index=True)\n"),
        Invalid("from flydsl.expr import arith\ndef c(val, index=False):\n    return arith.constant(val, index=index)\n"),
        Invalid("from flydsl._mlir.dialects import llvm\nfrom flydsl.expr import arith\nfrom flydsl.expr.typing import T\n"
                "zero = arith.constant(0, type=T.i32)\nllvm.StoreOp(zero, p)\nacc = zero + 1\n", at=(4, 8)),
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
        leaf = next((t.rpartition(".")[2] for t in texts if t and t.rpartition(".")[2] in _FX_CONSTANT_TYPES), None)
        if any(k.arg == "index" for k in node.keywords):
            leaf = "index"
        self.report(node, op=op, replacement=_FX_CONSTANT_TYPES.get(leaf or "", "fx.Int32(v)/fx.Float32(v)"))

    def _raw_operand(self, node: ast.expr) -> bool:
        parent = self.model.parent(node)
        return isinstance(parent, ast.Call) and node in parent.args and is_raw_dialect_call(self, parent)

    def _named_for_raw_operands(self, node: ast.Call) -> bool:
        """`zero = arith.constant(...)`, bound once, every read an operand of a
        raw op (`llvm.StoreOp(zero, ...)`): named, it is still those ops' operand."""
        statement = self.model.parent(node)
        if not (isinstance(statement, ast.Assign) and len(statement.targets) == 1
                and isinstance(statement.targets[0], ast.Name)):
            return False
        target = statement.targets[0]
        bindings = {read: self.model.binding_of(read) for read in self.model.loads_of(target.id)}
        reads = [read for read, binding in bindings.items() if binding is not None and binding.node is target]
        return (bool(reads) and self.model.is_single_binding(bindings[reads[0]])
                and all(self._raw_operand(read) for read in reads))


@register
class RawArithSelect(Rule):
    """`arith.select(cond, a, b)` takes and returns raw values; a typed
    condition has `cond.select(a, b)` (fx.Boolean / comparison results), which
    keeps the result typed. Selects of visibly raw values are kept."""

    code = "FLY344"
    call_names = frozenset(_SELECT_OPS)
    valid = [
        "import flydsl.expr as fx\nv = (i < n).select(a, b)\n",
        "from flydsl._mlir.dialects import arith, llvm\nc = llvm.op(x).result\nv = arith.select(c, llvm.op(y).result, llvm.op(z).result)\n",
    ]
    invalid = [
        Invalid("from flydsl.expr import arith\nv = arith.select(is_b, half, zero)\n"),
        Invalid("from flydsl._mlir.dialects import arith\nv = arith.SelectOp(c, a, b).result\n"),
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
        self.report(node, op=op)
