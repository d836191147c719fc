"""§3 raw `vector` ops -> typed `fx.Vector` methods."""

from __future__ import annotations

import ast

from ..engine.diagnostics import Applicability
from ..engine.model.types import ARITH_VALUE, RAW, SCALAR, VECTOR, TypeTable, type_table
from ..engine.project import release_paths
from ..engine.target import releases
from ._base import Invalid, Rule, register
from ._codemods import Refusal, reads_of_value
from ._edits import as_method_receiver, reference
from ._raw_dialects import (
    VECTOR_MODULES, at_raw_boundary, call_in, call_operands, in_boundary_module,
)


# Raw vector ops with an fx equivalent (typed `fx.Vector` methods).
_VECTOR_REPLACEMENTS = {
    "extract": "indexing `vec[i]`", "extractelement": "indexing `vec[i]`", "ExtractOp": "indexing `vec[i]`",
    "ExtractElementOp": "indexing `vec[i]`",
    "bitcast": "`vec.bitcast(dtype)`", "BitCastOp": "`vec.bitcast(dtype)`",
    "splat": "`fx.Vector.filled(shape, value, dtype)`", "SplatOp": "`fx.Vector.filled(shape, value, dtype)`",
    "broadcast": "`fx.Vector.filled(...)` / `vec.broadcast_to(shape)`",
    "BroadcastOp": "`fx.Vector.filled(...)` / `vec.broadcast_to(shape)`",
    "from_elements": "`fx.Vector.from_elements(elements, dtype)`",
    "FromElementsOp": "`fx.Vector.from_elements(elements, dtype)`",
    "load": "`fx.Vector.load(...)` or a layout view + `fx.copy`", "LoadOp": "`fx.Vector.load(...)` or a layout view + `fx.copy`",
    "load_op": "`fx.Vector.load(...)` or a layout view + `fx.copy`",
    "store": "`vec.store(...)` or a layout view + `fx.copy`", "StoreOp": "`vec.store(...)` or a layout view + `fx.copy`",
    "shuffle": "`vec.shuffle(other, mask)`", "ShuffleOp": "`vec.shuffle(other, mask)`",
    "reduction": "`vec.reduce(op)`", "ReductionOp": "`vec.reduce(op)`",
    "shape_cast": "`vec.reshape(shape)`", "ShapeCastOp": "`vec.reshape(shape)`",
}

# Raw builders the fix rewrites live here.
_RAW_VECTOR = "flydsl._mlir.dialects.vector."
# The fx.Vector method each fix writes and what the table must say it emits.
_FIX_METHODS = {"from_elements": ("from_elements", "coerces-elements"), "bitcast": ("bitcast", "same-bits"),
                "extract": ("__getitem__", "static-extract")}
_DEPTH = 6  # names followed from a value to the raw ops reading it


def _escaped(text: str) -> str:
    """Source text inside a `str.format` template: its own braces (a dict display) stay braces."""
    return text.replace("{", "{{").replace("}", "}}")


_RAW_HEADER = "from flydsl._mlir.dialects import arith, vector\nfrom flydsl.expr import as_ir_value\nfrom flydsl.expr.typing import T\n"


@register
class RawVectorOp(Rule):
    """Raw `vector` dialect ops (`extract`, `bitcast`, `splat`, `broadcast`,
    `from_elements`, `load`/`store`, `shuffle`, `reduction`) return untyped
    ir.Values and force unwrapping at every use. `fx.Vector` has typed
    equivalents: indexing, `.bitcast(dtype)`, `Vector.filled`, `.broadcast_to`,
    `Vector.from_elements`, `Vector.load`/`.store`, `.shuffle`, `.reduce`.
    `vector.insert*` has no typed equivalent and is not reported, nor are ops
    whose operands are all visibly raw values (a raw SSA boundary). Calls into
    a vendored copy of the legacy `flydsl.expr.vector` wrappers (a project
    module named `vector` defining the op) are reported like the original.

    The fix rewrites `vector.from_elements`, `vector.bitcast` and a static
    `vector.extract` whose vector types are proven: a result type spelled
    with `T` (`T.f16x4`, `T.vec(4, T.i64)`, or `T.vec(n, cls.ir_type)` of a `cls`
    that is one of some fx scalar classes, for raw elements), a source made by such a builder.
    From FlyDSL 0.3.0 to 0.5.0 the `fx.Vector` methods emit the same op, and the
    raw op's vector value already is an `fx.Vector`: the value caster of vector
    types, of the element class `Numeric.from_ir_type` gives. Where that class is
    the dtype the fix writes, `from_elements` and `bitcast` give the same value,
    wherever it goes. `[i]` gives an fx scalar where the raw `extract` gives the
    caster's ArithValue: that fix is safe only where the value is only ever an
    operand of raw dialect ops (through `as_ir_value(...)`)."""

    code = "FLY321"
    # Project re-exports of these ops lead to a vendored copy of the legacy
    # `flydsl.expr.vector` wrappers (see engine.project.LEGACY_MODULES).
    follows = release_paths(*(f"flydsl.expr.vector.{op}" for op in _VECTOR_REPLACEMENTS))
    call_modules = frozenset(VECTOR_MODULES)
    valid = [
        "import flydsl.expr as fx\nlo = vec[0]\nw = vec.bitcast(fx.Int32)\n",
        "from flydsl._mlir.dialects import vector\nv = vector.insert(x, vec, static_position=[0])\n",
        "from flydsl._mlir.dialects import vector, rocdl\nfrom flydsl.expr.typing import T\n"
        "r = rocdl.raw_op(a).result\nw = vector.bitcast(T.vec(4, T.i32), r)\n",
    ]
    invalid = [
        # A vector type of a class chosen among fx scalar classes, of raw elements: that class is the dtype.
        Invalid(_RAW_HEADER + "import flydsl.expr as fx\n"
                "def pack(vals, bf16, wide):\n    cls = fx.BFloat16 if bf16 else fx.Float16\n"
                "    acc = {\"f16\": fx.Float16, \"f32\": fx.Float32}[wide]\n"
                "    a = vector.from_elements(T.vec(len(vals), cls.ir_type), [as_ir_value(v.to(cls)) for v in vals])\n"
                "    return a, vector.from_elements(T.vec(2, acc.ir_type), [as_ir_value(vals[0]), as_ir_value(vals[1])])\n",
                fixed="from flydsl._mlir.dialects import arith\nfrom flydsl.expr import as_ir_value\nimport flydsl.expr as fx\n"
                      "def pack(vals, bf16, wide):\n    cls = fx.BFloat16 if bf16 else fx.Float16\n"
                      "    acc = {\"f16\": fx.Float16, \"f32\": fx.Float32}[wide]\n"
                      "    a = fx.Vector.from_elements([as_ir_value(v.to(cls)) for v in vals], cls)\n"
                      "    return a, fx.Vector.from_elements([as_ir_value(vals[0]), as_ir_value(vals[1])], acc)\n",
                count=2),
        # Braces of the source (a dict display) stay as written in the fix.
        Invalid(_RAW_HEADER + "v = vector.from_elements(T.vec(2, T.f32), [as_ir_value(a), as_ir_value({'k': b}['k'])])\n",
                fixed="from flydsl._mlir.dialects import arith\nfrom flydsl.expr import as_ir_value\nimport flydsl.expr as fx\n"
                      "v = fx.Vector.from_elements([as_ir_value(a), as_ir_value({'k': b}['k'])], fx.Float32)\n"),
        # A class of no known choices, an element that is not raw (an fx value may be converted), or a
        # class whose raw elements `from_elements` would convert: no fix, and the message says why.
        *(Invalid(_RAW_HEADER + f"import flydsl.expr as fx\ndef pack(vals, kind, signed):\n{body}",
                  message="Raw `vector.from_elements` returns an untyped value: use `fx.Vector.from_elements("
                          f"elements, dtype)` ({reason})")
          for body, reason in [
              ("    return vector.from_elements(T.vec(2, kind.ir_type), [as_ir_value(vals[0]), vals[1]])\n",
               "the vector type `T.vec(2, kind.ir_type)` is not spelled with `T`"),
              ("    return vector.from_elements(T.vec(2, fx.Float16.ir_type), [as_ir_value(vals[0]), vals[1]])\n",
               "an element is not a raw value"),
              ("    cls = fx.Int8 if signed else fx.Uint8\n"
               "    return vector.from_elements(T.vec(2, cls.ir_type), [as_ir_value(vals[0]), as_ir_value(vals[1])])\n",
               "`cls` may be a class whose elements `from_elements` converts"),
          ]),
        Invalid("from flydsl._mlir.dialects import vector\nlo = vector.extract(v, static_position=[0], dynamic_position=[])\n",
                at=(2, 6), message="Raw `vector.extract` returns an untyped value: use indexing `vec[i]` (the vector type of `v` "
                "is not known)"),
        Invalid("from flydsl.expr import vector\nfrom flydsl.expr.typing import T\nw = vector.bitcast(T.vec(4, T.i32), packed)\n",
                message="Raw `vector.bitcast` returns an untyped value: use `vec.bitcast(dtype)` (the fix rewrites "
                "the raw dialect's builder, not FlyDSL's wrapper of it)"),
        # The source's vector type unknown: no fix, and the message says so.
        Invalid("from flydsl._mlir.dialects import vector\nfrom flydsl.expr.typing import T\n"
                "w = vector.bitcast(T.vec(4, T.i32), packed)\n",
                message="Raw `vector.bitcast` returns an untyped value: use `vec.bitcast(dtype)` (the vector type of "
                "`packed` is not known)"),
        Invalid("from flydsl._mlir.dialects import vector as _v\nfrom flydsl.expr.typing import T\nz = _v.broadcast(T.vec(4, T.f32), zero)\n"),
        # Both values only reach raw ops: safe.
        Invalid(_RAW_HEADER + "pair = vector.from_elements(T.i64x2, [as_ir_value(a), as_ir_value(b)])\n"
                "lo = vector.extract(as_ir_value(pair), static_position=[1], dynamic_position=[])\n"
                "s = arith.addi(as_ir_value(lo), as_ir_value(lo))\n",
                fixed="from flydsl._mlir.dialects import arith\nfrom flydsl.expr import as_ir_value\nimport flydsl.expr as fx\n"
                "pair = fx.Vector.from_elements([as_ir_value(a), as_ir_value(b)], fx.Int64)\n"
                "lo = pair[1]\ns = arith.addi(as_ir_value(lo), as_ir_value(lo))\n", count=2),
        # `vector.load`'s first argument is its result type too (the load itself has no fix).
        Invalid(_RAW_HEADER + "row = vector.load(T.f32x4, lds, [i])  # noqa: FLY321\n"
                "hi = vector.extract(as_ir_value(row), static_position=[3], dynamic_position=[])\n"
                "s = arith.addf(as_ir_value(hi), as_ir_value(hi))\n",
                fixed="from flydsl._mlir.dialects import arith, vector\nfrom flydsl.expr import as_ir_value\n"
                "from flydsl.expr.typing import T\nrow = vector.load(T.f32x4, lds, [i])  # noqa: FLY321\n"
                "hi = row[3]\ns = arith.addf(as_ir_value(hi), as_ir_value(hi))\n"),
        # A bitcast to the same bits of a proven source, into a raw op.
        Invalid(_RAW_HEADER + "import flydsl.expr as fx\n"
                "w = arith.addi(vector.bitcast(T.vec(4, T.i32), as_ir_value(vector.from_elements(T.vec(2, T.i64), "
                "[as_ir_value(a), as_ir_value(b)]))), c)\n",
                fixed="from flydsl._mlir.dialects import arith\nfrom flydsl.expr import as_ir_value\nimport flydsl.expr as fx\n"
                "w = arith.addi(fx.Vector.from_elements([as_ir_value(a), as_ir_value(b)], fx.Int64).bitcast(fx.Int32), c)\n",
                count=2),
        # A vector read by an operator: the raw op's value already is that fx.Vector (the caster's). Safe.
        Invalid(_RAW_HEADER + "pair = vector.from_elements(T.i64x2, [as_ir_value(a), as_ir_value(b)])\nt = pair + pair\n",
                fixed="from flydsl._mlir.dialects import arith\nfrom flydsl.expr import as_ir_value\nimport flydsl.expr as fx\n"
                "pair = fx.Vector.from_elements([as_ir_value(a), as_ir_value(b)], fx.Int64)\nt = pair + pair\n"),
        # The scalar of `[i]` is an fx value where the raw `extract` gives an ArithValue: into a raw op it
        # must pass `as_ir_value`. Unsafe.
        Invalid(_RAW_HEADER + "import flydsl.expr as fx\npair = fx.Vector.from_elements([a, b], fx.Int64)\n"
                "lo = vector.extract(as_ir_value(pair), static_position=[0], dynamic_position=[])\n"
                "s = arith.addi(lo, lo)\n",
                fixed="from flydsl._mlir.dialects import arith\nfrom flydsl.expr.typing import T\nimport flydsl.expr as fx\n"
                "pair = fx.Vector.from_elements([a, b], fx.Int64)\nlo = pair[0]\ns = arith.addi(lo, lo)\n",
                unsafe=True),
    ]
    use_instead = "lo = vec[0]\nw = vec.bitcast(fx.Int32)\nz = fx.Vector.filled((4,), 0.0, fx.Float32)"

    def visit_Call(self, node: ast.Call) -> None:
        if in_boundary_module(self):
            return
        op = call_in(self, node, VECTOR_MODULES)
        replacement = _VECTOR_REPLACEMENTS.get(op or "")
        if replacement is None or at_raw_boundary(self, call_operands(node) + [k.value for k in node.keywords if k.arg in ("vector", "source", "value")]):
            return
        try:
            fix, detail = self._typed_fix(node, op), ""
        except Refusal as refusal:  # no fix, and the message says why
            fix, detail = None, f" ({refusal})"
        self.report(node, fix=fix, op=op, replacement=replacement, detail=detail)

    def _typed_fix(self, node: ast.Call, op: str):
        """The `fx.Vector` spelling of a builder whose types are all proven; safe
        only where its value reaches raw dialect ops alone, which cannot tell an
        `fx.Vector` (or an fx scalar through `as_ir_value`) from the raw result.
        Refused, with the reason, where the op or an operand's vector type is not the one proven."""
        method, emits = _FIX_METHODS.get(op, (None, None))
        if method is None:
            return None
        if not self.model.resolve(node.func).startswith(_RAW_VECTOR):
            raise Refusal("the fix rewrites the raw dialect's builder, not FlyDSL's wrapper of it")
        if self._table().vector_fact(method) != emits:
            raise Refusal(f"`fx.Vector.{method}` of the target release emits another op")
        built = {"from_elements": self._from_elements, "bitcast": self._bitcast, "extract": self._extract}[op](node)
        if built is None:
            return None
        template, dtype, description, classes = built
        vector_spelled = reference(self, "flydsl.expr.Vector", "fx", "flydsl.expr")
        dtype_spelled = reference(self, f"flydsl.expr.{dtype}", "fx", "flydsl.expr") if dtype else ("", [])
        if vector_spelled is None or dtype_spelled is None:
            return None
        # Both may add `import ... as fx`; a receiver already an fx.Vector needs no `fx.Vector(...)`.
        imports = {edit.content: edit for edit in (vector_spelled[1] if "{Vector}" in template else []) + dtype_spelled[1]}
        edits = [self.replace(node, template.format(Vector=vector_spelled[0], dtype=dtype_spelled[0])), *imports.values()]
        # The raw op's value is the caster's fx.Vector of its element class, the one `Vector.from_elements(..,
        # dtype)` and `.bitcast(dtype)` build (`Vector(res, (n,), dtype)` of the same op): alike wherever it goes.
        same_value = op != "extract" and all(self._table().casts_vectors_of(element) for element in classes)
        only_raw = same_value or self._reaches_only_raw_ops(node, unwrapped=op != "extract")
        return self.make_fix(edits, description, None if only_raw else Applicability.UNSAFE)

    def _table(self) -> TypeTable:
        """The target's facts; below the first release the table covers, that release's: the
        checker then withholds the fix and says which release it needs (fix-since)."""
        table = self.model.type_table
        if table.release is not None and table.release < releases().oldest_supported:
            return type_table(releases().oldest_supported)
        return table

    def _from_elements(self, node: ast.Call) -> tuple[str, str | None, str, frozenset[str]] | None:
        """`vector.from_elements(T.vec(2, T.i64), [a, b])` -> `fx.Vector.from_elements([a, b], fx.Int64)`:
        every element raw or of the dtype, so the coercion to the dtype is the identity. The type
        `T.vec(n, cls.ir_type)` of a `cls` that is some fx scalar class gives `cls` itself as the
        dtype, for elements that are all raw (the raw op already required them of that type) and
        classes that `Numeric.from_ir_type` gives back (an unsigned one's elements would be converted)."""
        if len(node.args) != 2 or node.keywords:
            return None
        vector_type = self.model.spelled_vector_type(node.args[0], self._table())
        elements = node.args[1]
        if vector_type is None:
            chosen = self.model.class_chosen_vector_type(node.args[0], self._table())
            if chosen is None:
                raise Refusal(f"the vector type `{self.text(node.args[0])}` is not spelled with `T`")
            element_class, classes = chosen
            if not all(c in self._table().round_trip_classes for c in classes):
                raise Refusal(f"`{self.text(element_class)}` may be a class whose elements `from_elements` converts")
            if not self._all_raw(elements):
                raise Refusal("an element is not a raw value")
            return f"{{Vector}}.from_elements({self._source(elements)}, {self._source(element_class)})", None, \
                "Use `fx.Vector.from_elements(elements, dtype)`", classes
        if not isinstance(elements, (ast.List, ast.Tuple)):
            raise Refusal(f"the elements `{self.text(elements)}` are no list display")
        dtype, count = vector_type
        if len(elements.elts) != count or not all(self._element_of(e, dtype) for e in elements.elts):
            raise Refusal("an element is neither a raw value nor an fx value of the vector's element type")
        return f"{{Vector}}.from_elements({self._source(elements)}, {{dtype}})", dtype, \
            "Use `fx.Vector.from_elements(elements, dtype)`", frozenset({dtype})

    def _all_raw(self, elements: ast.expr) -> bool:
        """A list display of raw values, or a list comprehension of one (`[as_ir_value(e) for e in xs]`)."""
        if isinstance(elements, ast.ListComp):
            return self._raw(elements.elt)
        return isinstance(elements, (ast.List, ast.Tuple)) and bool(elements.elts) and all(map(self._raw, elements.elts))

    def _raw(self, element: ast.expr) -> bool:
        """A raw value or an ArithValue: the raw op already required it of the vector's element type."""
        return self.model.value_type(element).kind in (RAW, ARITH_VALUE)

    def _bitcast(self, node: ast.Call) -> tuple[str, str | None, str, frozenset[str]] | None:
        """`vector.bitcast(T.f16x4, v)` -> `fx.Vector(v).bitcast(fx.Float16)` when `v`'s vector type is proven."""
        if len(node.args) != 2 or node.keywords:
            return None
        table = self._table()
        target, source = self.model.spelled_vector_type(node.args[0], table), self.model.vector_type(node.args[1], table)
        if source is None:
            raise Refusal(f"the vector type of `{self.text(node.args[1])}` is not known")
        if target is None:
            raise Refusal(f"the vector type `{self.text(node.args[0])}` is not spelled with `T`")
        bits = self.model.vector_bits(target, table)
        if bits is None or self.model.vector_bits(source, table) != bits:
            return None
        return f"{self._as_vector(node.args[1])}.bitcast({{dtype}})", target[0], "Use `vec.bitcast(dtype)`", \
            frozenset({target[0]})

    def _extract(self, node: ast.Call) -> tuple[str, str | None, str, frozenset[str]] | None:
        """`vector.extract(v, static_position=[i], dynamic_position=[])` -> `fx.Vector(v)[i]` on a proven 1-D vector."""
        keywords = {k.arg: k.value for k in node.keywords}
        if len(node.args) != 1 or set(keywords) != {"static_position", "dynamic_position"}:
            return None
        static, dynamic = keywords["static_position"], keywords["dynamic_position"]
        source = self.model.vector_type(node.args[0], self._table())
        if source is None:
            raise Refusal(f"the vector type of `{self.text(node.args[0])}` is not known")
        if not (isinstance(static, ast.List) and len(static.elts) == 1 and isinstance(dynamic, ast.List)
                and not dynamic.elts):
            return None
        index = static.elts[0]
        if not (isinstance(index, ast.Constant) and type(index.value) is int and 0 <= index.value < source[1]):
            return None
        # `fx.Vector(v)` infers the dtype (a class the release has, as `spelled_vector_type` checked).
        return f"{self._as_vector(node.args[0])}[{index.value}]", None, "Use indexing `vec[i]`", frozenset()

    def _as_vector(self, source: ast.expr) -> str:
        """`source` (through `as_ir_value(...)`) as an fx.Vector: itself when it already is one (the
        value caster makes a raw op's vector one), else `fx.Vector(source)` (`{Vector}`, filled in later)."""
        value = self.model.without_as_ir_value(source)
        if self.model.value_type(value).kind == VECTOR:
            return _escaped(as_method_receiver(self, value))
        return f"{{Vector}}({self._source(value)})"

    def _source(self, node: ast.expr) -> str:
        """`node`'s text as it goes into a template (`{Vector}`, `{dtype}` are filled in later)."""
        return _escaped(self.text(node))

    def _element_of(self, element: ast.expr, dtype: str) -> bool:
        """Whether `Vector.from_elements` keeps `element` as it is: a raw value (the raw op
        already required it to be of the element type) or an fx value of the dtype."""
        found = self.model.value_type(element)
        return self._raw(element) or (found.kind == SCALAR and found.scalar == dtype)

    def _reaches_only_raw_ops(self, node: ast.expr, unwrapped: bool, depth: int = 0) -> bool:
        """Whether the value of `node` is only ever an operand of raw dialect ops: directly
        (`unwrapped`: an ir.Value, as an fx.Vector is), through `as_ir_value(...)`, an operand
        list, or a name bound once whose every read does so."""
        if depth > _DEPTH:
            return False
        parent = self.model.parent(node)
        if self.model.is_as_ir_value(parent):
            return self._reaches_only_raw_ops(parent, True, depth + 1)
        if isinstance(parent, (ast.List, ast.Tuple)) and isinstance(parent.ctx, ast.Load):
            return unwrapped and self._reaches_only_raw_ops(parent, True, depth + 1)
        if self.model.is_vector_wrap(parent):
            return unwrapped  # `fx.Vector(v)` takes any vector ir.Value alike (the fix of the op using it)
        if isinstance(parent, ast.Call) and self.model.raw_dialect_call(parent):
            return unwrapped and (node in parent.args or any(k.value is node for k in parent.keywords))
        reads = reads_of_value(self, node)
        return bool(reads) and all(self._reaches_only_raw_ops(read, unwrapped, depth + 1) for read in reads)
