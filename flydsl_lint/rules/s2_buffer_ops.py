"""§2 buffer_ops -> fx.rocdl.make_buffer_tensor + layout views + fx.copy."""

from __future__ import annotations

import ast

from ..engine.project import release_paths
from ._base import Invalid, Rule, leaves, register
from ._edits import reference
from ._memory import (
    BUFFER_OPS, MEM_OPS, argument, assigned_values, binary_operations, byte_sized_name, is_true, keyword_value,
    local_function, names, resolve, returned_values,
)

RESOURCE = release_paths(*names(BUFFER_OPS, "create_buffer_resource"))
RAW_RESOURCE = release_paths(*names(BUFFER_OPS, "create_buffer_resource_from_addr"))
_ATOMICS = ("buffer_atomic_add", "buffer_atomic_fadd", "buffer_atomic_fmax", "buffer_atomic_smax", "buffer_atomic_umax")
# helper leaf -> (position of the resource argument, position of the offset argument)
_ACCESS_ARGS = {"buffer_load": (0, 1), "buffer_store": (1, 2), **{name: (1, 2) for name in _ATOMICS}}
ACCESS = release_paths(*names(BUFFER_OPS, "buffer_load", "buffer_store", *_ATOMICS), *names(MEM_OPS, *_ATOMICS))
MAKE_BUFFER_TENSOR = "flydsl.expr.rocdl.make_buffer_tensor"
# Keywords of create_buffer_resource that make_buffer_tensor takes with the same meaning.
_SAME_KEYWORDS = {"max_size", "num_records_bytes"}

_BO = "from kernels.common import buffer_ops\n"
_FX = "import flydsl.expr as fx\n"


def access_helper(rule: Rule, call: ast.Call) -> str | None:
    name = resolve(rule.model, call.func)
    return name.rpartition(".")[2] if name in ACCESS else None


def raw_address_resource(rule: Rule, node: ast.expr | None, _depth: int = 0) -> bool:
    """Whether a buffer resource provably comes from a raw address (no tensor):
    `create_buffer_resource_from_addr(...)` (any alias), a name only ever bound
    to such a call, or a call of a local helper that only returns one."""
    if node is None or _depth > 3:
        return False
    if isinstance(node, ast.Call):
        if resolve(rule.model, node.func) in RAW_RESOURCE:
            return True
        helper = local_function(rule.model, node.func)
        values = returned_values(helper) if helper is not None else []
        return bool(values) and all(raw_address_resource(rule, v, _depth + 1) for v in values)
    if isinstance(node, ast.Name):
        values = assigned_values(rule.model, node)
        if values is None:
            values = _parameter_arguments(rule, node)
        return bool(values) and all(raw_address_resource(rule, v, _depth + 1) for v in values)
    return False


def _parameter_arguments(rule: Rule, name: ast.Name) -> list[ast.expr] | None:
    """For a parameter of a function defined in this file: the arguments
    every call of it in this file passes for that parameter (None when a
    call passes it in a way we cannot match)."""
    model = rule.model
    binding = model.binding_of(name)
    if binding is None or binding.kind != "param" or binding.scope is None or not model.is_single_binding(binding):
        return None
    function = binding.scope.node
    if not isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return None
    positional = [a.arg for a in function.args.posonlyargs + function.args.args]
    found = []
    for call in model.calls_of(function):
        if local_function(model, call.func) is not function:
            continue
        if any(isinstance(a, ast.Starred) for a in call.args) or any(k.arg is None for k in call.keywords):
            return None
        index = positional.index(binding.name) if binding.name in positional else None
        value = argument(call, index if index is not None else 10**6, binding.name)
        if value is None:
            return None
        found.append(value)
    return found or None


def no_layout_form(rule: Rule, call: ast.Call, helper: str) -> bool:
    """The scalar-base access the guide lets stay on buffer_ops (see FLY203);
    found once per call, which FLY202 and FLY203 both ask about."""
    memo = rule.context.cache("s2.no_layout_form", dict)
    found = memo.get(call)
    if found is None:
        if is_true(keyword_value(call, "is_scalar")):
            found = True
        else:
            resource_index, _ = _ACCESS_ARGS[helper]
            found = raw_address_resource(rule, argument(call, resource_index, "rsrc"))
        memo[call] = found
    return found


@register
class BufferResource(Rule):
    """`buffer_ops.create_buffer_resource` builds a raw V# descriptor that is
    then addressed with hand-computed offsets. `fx.rocdl.make_buffer_tensor`
    builds the same OOB-checked descriptor as a tensor, so the accesses can
    go through a layout view and `fx.copy` and the offset math disappears.
    The rewrite is structural (every access of the resource changes with it),
    so the suggested replacement of the call alone is display-only."""

    code = "FLY201"
    follows = RESOURCE
    call_names = leaves(RESOURCE)
    valid = [
        _FX + "bufA = fx.rocdl.make_buffer_tensor(A)\n",
        "def create_buffer_resource(t, max_size=True):\n    return t\nr = create_buffer_resource(A)\n",
        # a raw address has no tensor: that is FLY203's business
        _BO + "r = buffer_ops.create_buffer_resource_from_addr(addr)\n",
    ]
    invalid = [
        Invalid(_BO + _FX + "rsrc = buffer_ops.create_buffer_resource(A, max_size=True)\n",
                suggested=_BO + _FX + "rsrc = fx.rocdl.make_buffer_tensor(A, max_size=True)\n",
                at=(3, 8), message='`create_buffer_resource` is legacy: build the resource with `fx.rocdl.make_buffer_tensor(...)` and address it through a layout view + `fx.copy`'),
        Invalid("from flydsl.expr import buffer_ops as bo\nr = bo.create_buffer_resource(A, num_records_bytes=n)\n"),
        Invalid("from kernels.common.buffer_ops import create_buffer_resource\nr = create_buffer_resource(A, base_byte_offset=off)\n"),
    ]

    def visit_Call(self, node: ast.Call) -> None:
        if resolve(self.model, node.func) not in RESOURCE:
            return
        self.report(node, fix=self._suggestion(node))

    def _suggestion(self, node: ast.Call):
        if len(node.args) != 1 or any(k.arg not in _SAME_KEYWORDS for k in node.keywords):
            return None  # stride / base_byte_offset / positional flags have no one-to-one spelling
        spelled = reference(self, MAKE_BUFFER_TENSOR, "fx", "flydsl.expr")
        if spelled is None or spelled[1]:
            return None
        arguments = ", ".join([self.text(node.args[0])] + [self.text(k) for k in node.keywords])
        return self.make_fix([self.replace(node, f"{spelled[0]}({arguments})")],
                             "Build a buffer tensor, then address it through a layout view and `fx.copy`")


@register
class BufferManualOffsetAccess(Rule):
    """`buffer_load` / `buffer_store` / `buffer_atomic_*` on a buffer resource
    take hand-computed element offsets: the layout lives in the kernel's
    arithmetic instead of in a layout, and a wrong unit or stride is silent.
    Build the resource with `fx.rocdl.make_buffer_tensor`, view it with
    `fx.make_view(fx.get_iter(buf), layout)`, partition it and move data with
    `fx.copy` and a `BufferCopy*` atom. Accesses with no layout form (raw
    addresses, scalar SGPR loads) are reported as FLY203 instead."""

    code = "FLY202"
    follows = ACCESS | RAW_RESOURCE
    call_names = leaves(ACCESS)
    use_instead = (
        "bufA = fx.rocdl.make_buffer_tensor(A)\n"
        "tA = fx.make_view(fx.get_iter(bufA), fx.make_layout((M, K), (K, 1)))\n"
        "copy = fx.make_copy_atom(fx.rocdl.BufferCopy128b(), fx.Float32)\n"
        "fx.copy(copy, fx.slice(tA, (None, tid)), rA)\n"
    )
    valid = [
        _FX + "fx.copy(copy, fx.slice(tA, (None, tid)), rA)\n",
        _BO + "rsrc = buffer_ops.create_buffer_resource_from_addr(addr)\nv = buffer_ops.buffer_load(rsrc, i, vec_width=1)\n",
        _BO + "v = buffer_ops.buffer_load(rsrc, 0, vec_width=4, is_scalar=True)\n",
        "def buffer_load(r, o):\n    return o\nbuffer_load(r, 1)\n",
    ]
    invalid = [
        Invalid(_BO + "data = buffer_ops.buffer_load(rsrc, row * K + k, vec_width=4, dtype=fx.Float32)\n"),
        Invalid(_BO + "buffer_ops.buffer_store(data, rsrc, row * N + col)\n"),
        Invalid("from kernels.common import mem_ops\nmem_ops.buffer_atomic_add(v, rsrc, off, soff, 0)\n"),
        Invalid("from flydsl.expr import buffer_ops\ndef f(rsrc, dw):\n    return buffer_ops.buffer_load(rsrc, dw, vec_width=2)\n"),
        # a helper called with a raw-address resource and with a tensor resource
        Invalid(_BO + "def f(rsrc):\n    return buffer_ops.buffer_load(rsrc, 0, vec_width=1)\n"
                "f(buffer_ops.create_buffer_resource_from_addr(a))\nf(buffer_ops.create_buffer_resource(t))\n"),
        Invalid("def epilogue(*, out_rsrc, buffer_ops):\n    buffer_ops.buffer_store(v, out_rsrc, idx)\n"),
    ]

    def visit_Call(self, node: ast.Call) -> None:
        helper = access_helper(self, node)
        if helper is None or no_layout_form(self, node, helper):
            return
        self.report(node, helper=helper)


@register
class BufferNoLayoutForm(Rule):
    """A scalar-base access: the buffer resource is built from a raw i64
    address (`create_buffer_resource_from_addr`: IPC peers, pointer tables,
    runtime pointer arrays) or the load is a uniform SGPR load
    (`is_scalar=True`). There is no tensor to build a layout view from, so
    the guide lets it stay on buffer_ops; note why it stays. It has its own
    code so a team can keep these (`ignore = ["FLY203"]`) while migrating
    the rest of §2.

    How it is recognised, from the AST only: the resource argument is a call
    of `create_buffer_resource_from_addr` (any alias, e.g. `crfa = ...`), a
    name every binding of which is such a call, a parameter of a function
    of this file that every call in the file passes such a resource, or a
    call of a helper defined in the file whose every `return` is one; or the
    call passes `is_scalar=True`. The `create_buffer_resource_from_addr` calls themselves
    are reported here too. Anything else, including resources passed in as
    parameters, is FLY202."""

    code = "FLY203"
    follows = ACCESS | RAW_RESOURCE
    call_names = leaves(RAW_RESOURCE | ACCESS)
    valid = [
        _BO + "rsrc = buffer_ops.create_buffer_resource(A)\nv = buffer_ops.buffer_load(rsrc, i, vec_width=1)\n",
        _BO + "def f(rsrc):\n    return buffer_ops.buffer_load(rsrc, 0, vec_width=1)\n",
    ]
    invalid = [
        Invalid(_BO + "crfa = buffer_ops.create_buffer_resource_from_addr\n"
                "v = buffer_ops.buffer_load(crfa(p_ready), peer, vec_width=1, dtype=fx.Int64)\n", count=2),
        Invalid(_BO + "def _rsrc(addr):\n    return buffer_ops.create_buffer_resource_from_addr(addr)\n"
                "buffer_ops.buffer_store(flag, _rsrc(a), fx.Int32(0))\n", count=2),
        Invalid(_BO + "v = buffer_ops.buffer_load(rsrc, 0, vec_width=4, is_scalar=True)\n"),
        Invalid(_BO + "crfa = buffer_ops.create_buffer_resource_from_addr\n"
                "def _increment(rsrc, index):\n    buffer_ops.buffer_store(one, rsrc, index)\n"
                "_increment(crfa(a_tile), i)\n_increment(rsrc=crfa(b_tile), index=j)\n", count=3),
    ]

    def visit_Call(self, node: ast.Call) -> None:
        if resolve(self.model, node.func) in RAW_RESOURCE:
            self.report(node, what="a raw-address buffer resource")
            return
        helper = access_helper(self, node)
        if helper is not None and no_layout_form(self, node, helper):
            what = "a scalar (SGPR) buffer load" if is_true(keyword_value(node, "is_scalar")) else f"`{helper}` on a raw-address resource"
            self.report(node, what=what)


@register
class BufferOffsetUnit(Rule):
    """`buffer_load` / `buffer_store` offsets are in elements of the access
    type: the helper multiplies them by `sizeof(dtype)` itself. An offset that
    is visibly converted from or to bytes by hand (`// 4`, `>> 2`,
    `* elem_bytes`) is the classic unit bug of these helpers
    (the paged-attention `// 4` offsets): either it is scaled twice, or it
    silently depends on the dtype staying what it is today. Layout views with
    `fx.copy` remove the unit from the code.

    Flagged, on the offset argument only: a top-level `//` or `>>` by an int
    literal or a byte-size name; `*`, `//`, `<<` or `>>` with a byte-size
    operand anywhere in it; and the same through one name bound once to such
    an expression. A byte-named offset alone (`byte_off`) is not flagged: for
    8-bit data bytes and elements coincide.
    `buffer_store(..., offset_is_bytes=True)` and the atomics (whose offset
    is in bytes) are not flagged."""

    code = "FLY204"
    follows = ACCESS
    call_names = leaves(ACCESS)
    valid = [
        _BO + "buffer_ops.buffer_load(rsrc, row * K + k, vec_width=4)\n",
        _BO + "buffer_ops.buffer_store(w, rsrc, base + (i << 2), offset_is_bytes=True)\n",
        _BO + "buffer_ops.buffer_load(rsrc, base + lane // 4, vec_width=1)\n",
        _BO + "buffer_ops.buffer_load(rsrc, tid * 4, vec_width=4)\n",
        _BO + "buffer_ops.buffer_store(k_byte, kc_fp8_rsrc, kc_byte_off)\n",
    ]
    invalid = [
        Invalid(_BO + "k0 = buffer_ops.buffer_load(k_rsrc, kb0 // 4, vec_width=4, dtype=T.i32)\n",
                at=(2, 37), message='`buffer_load` offsets are in elements (scaled by sizeof(dtype) internally): this offset is converted by a byte size by hand; check the unit, or move to a layout view'),
        Invalid(_BO + "buffer_ops.buffer_store(out, rsrc, row * N * elem_bytes + col)\n"),
        Invalid(_BO + "dw = col_bytes >> 2\nv = buffer_ops.buffer_load(rsrc, dw, vec_width=2, dtype=T.i32)\n"),
        Invalid(_BO + "v = buffer_ops.buffer_load(rsrc, offset=col_byte_off // 4, vec_width=2)\n"),
    ]

    def visit_Call(self, node: ast.Call) -> None:
        helper = access_helper(self, node)
        if helper not in ("buffer_load", "buffer_store") or is_true(keyword_value(node, "offset_is_bytes")):
            return
        offset = argument(node, _ACCESS_ARGS[helper][1], "offset")
        if offset is not None and self._byte_scaled(offset, follow=True):
            self.report(offset, helper=helper)

    def _byte_scaled(self, offset: ast.expr, follow: bool) -> bool:
        if isinstance(offset, ast.BinOp) and isinstance(offset.op, (ast.FloorDiv, ast.RShift)):
            right = offset.right
            if isinstance(right, ast.Constant) and type(right.value) is int and right.value > 1:
                return True
        for node in binary_operations(offset):
            if isinstance(node.op, (ast.Mult, ast.FloorDiv, ast.LShift, ast.RShift)):
                if byte_sized_name(node.left) or byte_sized_name(node.right):
                    return True
        if follow and isinstance(offset, ast.Name):
            values = assigned_values(self.model, offset)
            if values is not None and len(values) == 1:
                return self._byte_scaled(values[0], follow=False)
        return False

