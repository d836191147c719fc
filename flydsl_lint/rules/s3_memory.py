"""§3 raw `llvm` loads/stores and `memref` ops -> layout views."""

from __future__ import annotations

import ast

from ._base import Invalid, Rule, register
from ._raw_dialects import LLVM, MEMREF, call_in, in_boundary_module


_LLVM_MEMORY = {
    "load": "load", "LoadOp": "load", "store": "store", "StoreOp": "store",
    "getelementptr": "getelementptr", "GEPOp": "getelementptr",
    "mlir_constant": "mlir.constant", "ConstantOp": "mlir.constant",
}


# Keywords carrying semantics a layout view cannot express: keep those ops.
_LLVM_SEMANTIC_KEYWORDS = {"ordering", "syncscope", "volatile_", "alias_scopes", "noalias_scopes",
                           "invariant", "invariant_group", "invariantGroup", "tbaa", "access_groups"}


@register
class RawLlvmMemory(Rule):
    """Raw `llvm.load`/`llvm.store`/`llvm.getelementptr`/`llvm.mlir.constant`
    hand-build pointer arithmetic and memory accesses that layout views
    (`fx.make_view`, `fx.get_iter`), `fx.Array` + `SharedAllocator`, copy atoms
    and fx constants express with types. Accesses with atomic ordering, sync
    scope, volatile or alias metadata are semantic raw
    boundaries the guide says to preserve, and are not reported."""

    code = "FLY331"
    call_modules = frozenset({LLVM})
    valid = [
        "from flydsl._mlir.dialects import llvm\nfrom flydsl.expr.typing import T\n"
        "v = llvm.LoadOp(T.i32, ptr, alignment=4, ordering=llvm.AtomicOrdering.monotonic, syncscope='agent').result\n",
        "from flydsl._mlir.dialects import llvm\nllvm.StoreOp(v, p, volatile_=True)\n",
        "from flydsl._mlir.dialects import llvm\np = llvm.inttoptr(ty, addr)\n",
    ]
    invalid = [
        Invalid("from flydsl._mlir.dialects import llvm\nfrom flydsl.expr.typing import T\nv = llvm.load(T.f32, ptr)\n"),
        Invalid("from flydsl._mlir.dialects import llvm as _llvm\n_llvm.StoreOp(v, p, alignment=16)\n"
                "q = _llvm.GEPOp(ptr_ty, base, [off], elem_type=ty)\n", count=2),
    ]
    use_instead = "view = fx.make_view(fx.get_iter(tensor), fx.make_layout((M, N), (N, 1)))\nfx.copy(copy_atom, view_slice, frag)"

    def visit_Call(self, node: ast.Call) -> None:
        if in_boundary_module(self):
            return
        op = call_in(self, node, (LLVM,))
        spelled = _LLVM_MEMORY.get(op or "")
        if spelled is None or any(k.arg in _LLVM_SEMANTIC_KEYWORDS for k in node.keywords):
            return
        self.report(node, op=spelled)


@register
class RawMemref(Rule):
    """`memref` dialect ops (`memref.load`/`store`/`alloca`/`view`/...) bypass
    FlyDSL's layout algebra: layout tensors/views and copy atoms carry the
    shape, stride and address space with types."""

    code = "FLY332"
    call_modules = frozenset({MEMREF})
    valid = [
        "import flydsl.expr as fx\nt = fx.make_view(fx.get_iter(buf), fx.make_layout((4, 4), (4, 1)))\n",
        "from flydsl._mlir.dialects import memref\nty = memref.MemRefType\n",
    ]
    invalid = [
        Invalid("from flydsl._mlir.dialects import memref as memref_dialect\nx = memref_dialect.load(buf, [i])\n"),
        Invalid("from flydsl._mlir.dialects import memref\nmemref.StoreOp(v, buf, [i, j])\n"),
    ]
    use_instead = "view = fx.make_view(fx.get_iter(buf), layout)\nfx.copy(copy_atom, view_slice, frag)"

    def visit_Call(self, node: ast.Call) -> None:
        if in_boundary_module(self):
            return
        op = call_in(self, node, (MEMREF,))
        if op and not op.endswith("Type") and not op.endswith("Attr"):
            self.report(node, op=op)
