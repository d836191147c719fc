"""§3 raw `vector` ops -> typed `fx.Vector` methods."""

from __future__ import annotations

import ast

from ..engine.project import release_paths
from ._base import Invalid, Rule, register
from ._raw_dialects import VECTOR_MODULES, call_in, call_operands, at_raw_boundary, in_boundary_module


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
    module named `vector` defining the op) are reported like the original."""

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
        Invalid("from flydsl._mlir.dialects import vector\nlo = vector.extract(v, static_position=[0], dynamic_position=[])\n",
                at=(2, 6), message='Raw `vector.extract` returns an untyped value: use indexing `vec[i]`'),
        Invalid("from flydsl.expr import vector\nfrom flydsl.expr.typing import T\nw = vector.bitcast(T.vec(4, T.i32), packed)\n"),
        Invalid("from flydsl._mlir.dialects import vector as _v\nfrom flydsl.expr.typing import T\nz = _v.broadcast(T.vec(4, T.f32), zero)\n"),
    ]
    use_instead = "lo = vec[0]\nw = vec.bitcast(fx.Int32)\nz = fx.Vector.filled((4,), 0.0, fx.Float32)"

    def visit_Call(self, node: ast.Call) -> None:
        if in_boundary_module(self):
            return
        op = call_in(self, node, VECTOR_MODULES)
        replacement = _VECTOR_REPLACEMENTS.get(op or "")
        if replacement is None or at_raw_boundary(self, call_operands(node) + [k.value for k in node.keywords if k.arg in ("vector", "source", "value")]):
            return
        self.report(node, op=op, replacement=replacement)
