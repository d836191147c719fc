"""FlyDSL names the rules share, by qualified path (see engine/model.py)."""

from __future__ import annotations

import ast

from ..engine.model import SemanticModel
from ..engine.model.types import CLASSIC_SCALARS, SCALAR, SCALAR_CONSTRUCTORS
from ..engine.project import release_paths
from ..engine.target import releases

EXPR = "flydsl.expr"
RAW_DIALECTS = "flydsl._mlir.dialects"
# The typed scalar constructors (fx.Int32, ...), as the value-type layer knows them.
TYPED_SCALARS = CLASSIC_SCALARS
# The FlyDSL wrapper module and the raw MLIR dialect module for arith.
EXPR_ARITH = ("flydsl.expr.arith", "flydsl.expr.utils.arith")
RAW_ARITH = "flydsl._mlir.dialects.arith"
# The modules whose attribute `i32` (`T.i32`, `types.i32`) is that MLIR type.
TYPE_MODULES = ("flydsl.expr.typing.T", "flydsl._mlir.extras.types", "flydsl.expr.T")
INDEX_TYPES = tuple(f"{module}.index" for module in TYPE_MODULES)


def qualified(modules: tuple[str, ...], name: str) -> frozenset[str]:
    return release_paths(*(f"{module}.{name}" for module in modules))


def typed_scalar(model: SemanticModel, call: ast.AST) -> str | None:
    """`Int32` for a call of fx.Int32 (any alias), else None."""
    return SCALAR_CONSTRUCTORS.get(model.resolve(call.func)) if isinstance(call, ast.Call) else None


def known_scalar_type(model: SemanticModel, node: ast.expr) -> str | None:
    """The fx scalar type an expression provably has (`Int32`), else None:
    the model's value type (engine/model/types.py) when it is an fx scalar."""
    found = model.value_type(node)
    return found.scalar if found.kind == SCALAR else None


# Fields that hold no expression (contexts, operators, identifiers, flags).
_TERMLESS_FIELDS = frozenset({"ctx", "op", "ops", "id", "attr", "arg", "kind", "conversion", "is_async"})
_TERM_FIELDS: dict[type, tuple[str, ...]] = {}  # node type -> the fields term_children reads


def operand_type_reason(rule, node: ast.expr) -> str:
    """What a fix message says of an operand's type: `` `x` is a Python int `` when the model
    knows it, else `` the type of `x` is unknown: ... `` with the reason it rests on."""
    found, why = rule.model.explain_type(node)
    return f"`{rule.text(node)}` is {found.described}" if found.known else f"the type of `{rule.text(node)}` is {why}"


def term_children(node: ast.AST) -> list[ast.AST]:
    """The node's children in the fields that can hold expressions, in field
    order, for walks: cheaper than the generators of `ast.iter_child_nodes`."""
    kind = type(node)
    fields = _TERM_FIELDS.get(kind)
    if fields is None:
        fields = _TERM_FIELDS[kind] = tuple(field for field in kind._fields if field not in _TERMLESS_FIELDS)
    children: list[ast.AST] = []
    for field in fields:
        child = getattr(node, field, None)
        if isinstance(child, ast.AST):
            children.append(child)
        elif type(child) is list:
            children += [item for item in child if isinstance(item, ast.AST)]
    return children


def before_type_table(model: SemanticModel) -> bool:
    """Whether the target is older than the releases the API table covers. The fix-since gate (the
    table's first release) then withholds any fix: the shape alone lets the checker name the release
    the fix needs."""
    return model.type_table.release is not None and model.type_table.release < releases().oldest_supported


# fx integer classes (Boolean has a constructor of its own; Index is apart).
FX_INTEGERS = frozenset({"Int8", "Int16", "Int32", "Int64", "Uint8", "Uint16", "Uint32", "Uint64"})


# fx scalars whose `+ - *` with an ArithValue operand emit the op the scalar's own would (`addi`/`addf`,
# ...): signed or float, so ArithValue's missing signedness picks the same op; and an fx operand of one
# on the left turns an ArithValue right operand into its class (`Numeric.from_ir_type`), 0.3.0 to 0.5.0.
SAME_OP_SCALARS = frozenset({"Int32", "Int64", "Float32", "Float64"})
SAME_OP_OPERATORS = (ast.Add, ast.Sub, ast.Mult)


# Operators an ArithValue applies to integers whatever either operand's signedness (expr/utils/arith.py
# `_binary_op`, `_bitwise_op`, `_shift_op`, 0.3.0 to 0.5.0; `>>`, `//`, `%`, `/` and ordering read it).
SIGNLESS_INT_OPERATORS = (ast.Add, ast.Sub, ast.Mult, ast.BitAnd, ast.BitOr, ast.BitXor, ast.LShift)


# MLIR's own type constructors: `ir.F32Type.get()` -> f32 (`IntegerType.get_signless(n)` -> i<n> apart).
_IR_TYPE_GETS = {f"flydsl._mlir.ir.{cls}.get": leaf for cls, leaf in (
    ("IndexType", "index"), ("F16Type", "f16"), ("BF16Type", "bf16"), ("F32Type", "f32"), ("F64Type", "f64"))}


def scalar_ir_type(model: SemanticModel, node: ast.expr | None, depth: int = 0) -> str | None:
    """The MLIR scalar type a type expression spells (`i32`, `index`, `f32`): `T.i32` or an alias of
    it, `ir.IntegerType.get_signless(32)`, `ir.IndexType.get()`, or a name bound once to one of them."""
    if isinstance(node, (ast.Name, ast.Attribute)):
        module, _, leaf = (model.resolve(node) or "").rpartition(".")
        if module in TYPE_MODULES:
            return leaf
        value = model.single_assigned_value(node) if isinstance(node, ast.Name) and depth < 4 else None
        return scalar_ir_type(model, value, depth + 1) if value is not None else None
    if not isinstance(node, ast.Call) or node.keywords:
        return None
    name = model.resolve(node.func)
    if name in _IR_TYPE_GETS and not node.args:
        return _IR_TYPE_GETS[name]
    width = model.known_number(node.args[0]) if name == "flydsl._mlir.ir.IntegerType.get_signless" \
        and len(node.args) == 1 else None
    return f"i{width}" if type(width) is int and width > 0 else None
