"""The vector type of a value: element class and lane count, from the `T` spelling a raw
vector builder was given (part of `SemanticModel`).

`T.f16x4`, `T.vec(4, T.f16)` and a name bound once to one of them are what the
release's table (data/flydsl_types.txt `vectors`) says `T` spells. A value has a
proven vector type when it is the result of a raw typed builder
(`vector.from_elements(T.i64x2, ...)`, `vector.bitcast`, `broadcast`, `splat`),
of the `fx.Vector` spellings FLY321's fixes write for them, or a name bound once
to one, looked through `as_ir_value(...)`. Anything else has none: unknown stays
unknown.
"""

from __future__ import annotations

import ast
import re

from .types import TYPED_VECTOR_OPS, VECTOR_CLASSES, TypeTable

# Where `T` lives (the table names it by its defining module).
_T_PATHS = {"flydsl.expr.typing.T.": "flydsl.expr.typing.T.", "flydsl.expr.T.": "flydsl.expr.typing.T."}
AS_IR_VALUE = frozenset({"flydsl.expr.typing.as_ir_value", "flydsl.expr.as_ir_value"})
_VECTOR_BUILDER_MODULES = ("flydsl._mlir.dialects.vector", "flydsl.expr.vector")
_VECTOR_SPELLING = re.compile(r"^([A-Za-z]+[0-9]*?)x([0-9]+)$")
_DEPTH = 6


class _VectorTypes:
    """Vector types of expressions (part of `SemanticModel`); `table` defaults to the target's."""

    def spelled_vector_type(self, node: ast.expr, table: TypeTable | None = None, depth: int = 0) -> tuple[str, int] | None:
        """(`Float16`, 4) for the type expression `T.f16x4`, `T.vec(4, T.f16)`,
        `fx.Vector.make_type(4, fx.Float16)` or a name bound once to one."""
        table = table or self.type_table
        if depth > _DEPTH:
            return None
        if isinstance(node, ast.Name) and self._t_fact(node, table) is None:
            value = self.single_assigned_value(node)
            return self.spelled_vector_type(value, table, depth + 1) if value is not None else None
        if isinstance(node, ast.Call) and self._is_make_type(node, table):
            # Of the class's `ir_type`: signless for an integer class, so only a class that maps back.
            element = self._scalar_class(node.args[1], table)
            count = node.args[0].value if isinstance(node.args[0], ast.Constant) else None
            return (element, count) if element in table.round_trip_classes and type(count) is int and count >= 1 else None
        if isinstance(node, ast.Call):
            if (self._t_fact(node.func, table) != "count-element" or len(node.args) != 2 or node.keywords
                    or not isinstance(node.args[0], ast.Constant) or type(node.args[0].value) is not int
                    or node.args[0].value < 1):
                return None  # `Vector.from_elements` refuses no elements
            element = self._t_fact(node.args[1], table)
            return (element, node.args[0].value) if element in table.scalars else None
        spelled = _VECTOR_SPELLING.match(self._t_fact(node, table) or "")
        if spelled is None or spelled.group(1) not in table.scalars:
            return None
        return spelled.group(1), int(spelled.group(2))

    def class_chosen_vector_type(self, node: ast.expr, table: TypeTable | None = None) -> tuple[ast.expr, frozenset[str]] | None:
        """For the type expression `T.vec(n, cls.ir_type)` of a name `cls` (or `mod.cls`): `cls`
        and the fx scalar classes it may hold (`scalar_class_choices`); None for anything else."""
        table = table or self.type_table
        if not (isinstance(node, ast.Call) and self._t_fact(node.func, table) == "count-element"
                and len(node.args) == 2 and not node.keywords):
            return None
        element = node.args[1]
        if not (isinstance(element, ast.Attribute) and element.attr == "ir_type"
                and isinstance(element.value, (ast.Name, ast.Attribute))):
            return None
        choices = self.scalar_class_choices(element.value, table)
        return (element.value, choices) if choices else None

    def scalar_class_choices(self, node: ast.expr, table: TypeTable | None = None, depth: int = 0) -> frozenset[str] | None:
        """The fx scalar classes a class-valued expression may hold: `fx.Float16`; either branch
        of `BFloat16 if bf16 else Float16`; any value of `{"f16": fx.Float16, ...}[key]` (a key
        it lacks raises); through names bound once. None when a value may be anything else."""
        table = table or self.type_table
        leaf = self._scalar_class(node, table)
        if leaf is not None or depth > _DEPTH:
            return frozenset({leaf}) if leaf else None
        if isinstance(node, ast.Name):
            value = self.single_assigned_value(node)
            return self.scalar_class_choices(value, table, depth + 1) if value is not None else None
        if isinstance(node, ast.IfExp):
            branches = [node.body, node.orelse]
        elif isinstance(node, ast.Subscript) and isinstance(node.value, ast.Dict) and None not in node.value.keys:
            branches = node.value.values
        else:
            return None
        choices = [self.scalar_class_choices(branch, table, depth + 1) for branch in branches]
        return frozenset().union(*choices) if choices and all(choices) else None

    def vector_type(self, node: ast.expr, table: TypeTable | None = None, depth: int = 0) -> tuple[str, int] | None:
        """The proven (element class, lanes) of a value, or None."""
        table = table or self.type_table
        if depth > _DEPTH:
            return None
        node = self.without_as_ir_value(node)
        if isinstance(node, ast.Name):
            value = self.single_assigned_value(node)
            return self.vector_type(value, table, depth + 1) if value is not None else None
        if isinstance(node, ast.Call) and node.args:
            module, _, op = (self.resolve(node.func) or "").rpartition(".")
            if module in _VECTOR_BUILDER_MODULES and op.replace("_", "").lower() in TYPED_VECTOR_OPS:
                return self.spelled_vector_type(node.args[0], table)
        return self._fx_vector_type(node, table, depth)

    def vector_bits(self, vector: tuple[str, int], table: TypeTable | None = None) -> int | None:
        width = (table or self.type_table).scalars.get(vector[0], {}).get("width")
        return width * vector[1] if width else None

    def without_as_ir_value(self, node: ast.expr) -> ast.expr:
        """`as_ir_value(x)` -> `x`: it returns an ir.Value (an fx.Vector too) unchanged."""
        while self.is_as_ir_value(node):
            node = node.args[0]
        return node

    def is_as_ir_value(self, node: ast.AST | None) -> bool:
        return isinstance(node, ast.Call) and len(node.args) == 1 and not node.keywords \
            and self.resolve(node.func) in AS_IR_VALUE

    def is_vector_wrap(self, node: ast.AST | None) -> bool:
        """`fx.Vector(v)`."""
        return isinstance(node, ast.Call) and len(node.args) == 1 and not node.keywords \
            and self.resolve(node.func) in VECTOR_CLASSES

    def _is_make_type(self, node: ast.Call, table: TypeTable) -> bool:
        module, _, leaf = (self.resolve(node.func) or "").rpartition(".")
        return (module in VECTOR_CLASSES and leaf == "make_type" and len(node.args) == 2 and not node.keywords
                and table.vector_fact("make_type") == "flat-type-of-dtype")

    def _t_fact(self, node: ast.expr, table: TypeTable) -> str | None:
        """What the release's table says a `T.<name>` spells."""
        name = self.resolve(node) if isinstance(node, (ast.Name, ast.Attribute)) else None
        for prefix, canonical in _T_PATHS.items():
            if name and name.startswith(prefix):
                fact = table.vectors.get(canonical + name[len(prefix):])
                return fact if isinstance(fact, str) else None
        return None

    def _fx_vector_type(self, node: ast.expr, table: TypeTable, depth: int) -> tuple[str, int] | None:
        """The vector type of `fx.Vector.from_elements([a, b], fx.Int64)` and
        `fx.Vector(v).bitcast(fx.Float16)` (what FLY321's fixes write, so a later pass still
        knows the source of the next op)."""
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and len(node.args) in (1, 2)):
            return None
        method, receiver = node.func.attr, node.func.value
        scalar = self._scalar_class(node.args[-1], table)
        if method == "from_elements" and len(node.args) == 2 and self.resolve(receiver) in VECTOR_CLASSES \
                and isinstance(node.args[0], (ast.List, ast.Tuple)) and scalar:
            return scalar, len(node.args[0].elts)
        if method == "bitcast" and len(node.args) == 1 and scalar and self.is_vector_wrap(receiver):
            source = self.vector_type(receiver.args[0], table, depth + 1)
            bits, width = source and self.vector_bits(source, table), table.scalars.get(scalar, {}).get("width")
            return (scalar, bits // width) if bits and width and bits % width == 0 else None
        return None

    def _scalar_class(self, node: ast.expr, table: TypeTable) -> str | None:
        """`fx.Int64` -> `Int64`: an fx scalar class the release has."""
        name = self.resolve(node) if isinstance(node, (ast.Name, ast.Attribute)) else None
        leaf = name.rpartition(".")[2] if name and name.startswith("flydsl.expr.") else None
        return leaf if leaf in table.scalars else None
