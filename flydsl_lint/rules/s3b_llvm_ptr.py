"""§3b fly.ptr -> !llvm.ptr: `.llvm_ptr` / `fx.to_llvm_ptr` instead of hand-built pointers."""

from __future__ import annotations

import ast
from collections.abc import Iterator

from ..engine.diagnostics import Applicability, Position
from ..engine.project import release_paths
from ._base import Invalid, Rule, leaves, register
from ._edits import as_method_receiver
from ._memory import BUFFER_OPS, MEM_OPS, argument, assigned_values, names, resolve
from ._raw_dialects import in_boundary_module

# int/index -> !llvm.ptr<AS> helpers: (value, address_space=...)
CREATE = release_paths(*names(BUFFER_OPS, "create_llvm_ptr"), *names(MEM_OPS, "_create_llvm_ptr", "to_llvm_ptr"))
_LLVM = "flydsl._mlir.dialects.llvm"
INT_TO_PTR = release_paths(f"{_LLVM}.IntToPtrOp", f"{_LLVM}.inttoptr")
# tensor + offset * dtype_bytes -> !llvm.ptr<1>
ELEMENT = release_paths(*names(MEM_OPS, "get_llvm_ptr", "element_ptr"))
# fly pointer -> integer: the argument of ptrtoint is a fly pointer.
PTRTOINT = release_paths("flydsl.expr.ptrtoint", "flydsl.expr.primitive.ptrtoint")
# Value-preserving integer casts that may sit between ptrtoint and the pointer helper.
_CASTS = release_paths("flydsl.expr.Index", "flydsl.expr.Int64", "flydsl.expr.as_ir_value", "flydsl.expr.numeric.Index",
                       "flydsl.expr.numeric.Int64", "flydsl.expr.typing.Index", "flydsl.expr.typing.Int64")
_INDEX_CAST = release_paths("flydsl.expr.arith.index_cast", "flydsl._mlir.dialects.arith.index_cast")
# What `_PointerSource` looks through, for the rules built on it to follow.
_POINTER_SOURCES = PTRTOINT | _CASTS | _INDEX_CAST

_HEAD = "import flydsl.expr as fx\nfrom kernels.common import buffer_ops\n"


def _address(rule: Rule, call: ast.Call, name: str) -> ast.expr | None:
    """The integer operand of a pointer-building call."""
    if name in INT_TO_PTR:
        return argument(call, 1, "val")
    return argument(call, 0, "value")


class _PointerSource:
    """Finds the fly pointer an integer address was taken from, if provable."""

    def __init__(self, rule: Rule) -> None:
        self.rule = rule

    def pointer(self, use: ast.Call, value: ast.expr | None, depth: int = 0) -> ast.expr | None:
        model = self.rule.model
        if value is None or depth > 4:
            return None
        if isinstance(value, ast.Call):
            callee = resolve(model, value.func)
            if callee in PTRTOINT and len(value.args) == 1 and not value.keywords:
                return value.args[0]
            if callee in _CASTS and len(value.args) == 1 and not value.keywords:
                return self.pointer(use, value.args[0], depth + 1)
            if callee in _INDEX_CAST and len(value.args) == 2:
                return self.pointer(use, value.args[1], depth + 1)
            return None
        if isinstance(value, ast.Name):
            values = assigned_values(model, value)
            if values is None or len(values) != 1:
                return None
            found = self.pointer(use, values[0], depth + 1)
            return found if found is not None and self._stable(found) else None
        if isinstance(value, ast.Attribute):
            assigned = self._attribute_value(use, value)
            found = self.pointer(use, assigned, depth + 1) if assigned is not None else None
            return found if found is not None and self._stable(found) else None
        return None

    def _attribute_value(self, use: ast.Call, target: ast.Attribute) -> ast.expr | None:
        """`self.base_idx` assigned exactly once, earlier in the same function."""
        model = self.rule.model
        function = model.enclosing_function(use)
        if function is None:
            return None
        shape = ast.dump(target.value) + "." + target.attr
        found = []
        for statement in model.nodes(ast.Assign) + model.nodes(ast.AugAssign) + model.nodes(ast.AnnAssign):
            if model.enclosing_function(statement) is not function:
                continue
            targets = statement.targets if isinstance(statement, ast.Assign) else [statement.target]
            for each in targets:
                for node in ast.walk(each):
                    if isinstance(node, ast.Attribute) and ast.dump(node.value) + "." + node.attr == shape:
                        found.append((statement, each))
        if len(found) != 1:
            return None
        statement, each = found[0]
        if not isinstance(statement, ast.Assign) or each is not statement.targets[0] or len(statement.targets) != 1:
            return None
        if statement.lineno >= use.lineno:
            return None
        return statement.value

    def _stable(self, pointer: ast.expr) -> bool:
        """Every name in the pointer expression has a single binding, so its
        text means the same thing where the address is used."""
        model = self.rule.model
        for node in ast.walk(pointer):
            if isinstance(node, ast.Name):
                binding = model.binding_of(node)
                if binding is None or not model.is_single_binding(binding):
                    return False
            elif isinstance(node, (ast.Call, ast.Subscript, ast.Lambda, ast.NamedExpr)):
                return False
        return True


def _literal_address_space(call: ast.Call, name: str) -> int | None:
    if name in INT_TO_PTR:
        return None
    node = argument(call, 1, "address_space")
    return node.value if isinstance(node, ast.Constant) and type(node.value) is int else None


@register
class HandBuiltLlvmPtr(Rule):
    """An `!llvm.ptr` built by hand from an address that was taken from a fly
    pointer (`create_llvm_ptr(fx.Index(fx.ptrtoint(p)), address_space=3)`,
    `_create_llvm_ptr`, `llvm.IntToPtrOp`) hardcodes the LLVM address space
    and drops the pointer's provenance. `p.llvm_ptr` (or `fx.to_llvm_ptr(p)`,
    FlyDSL >= 0.3.0) maps the pointer's semantic address space to the
    backend's number for you.

    Reported only when the integer provably comes from `fx.ptrtoint(p)`:
    directly, through `fx.Index`/`fx.Int64`/`index_cast`, or through a name (or
    `self.attr` in the same function) assigned once to such an expression."""

    code = "FLY351"
    follows = CREATE | INT_TO_PTR | _POINTER_SOURCES
    call_names = leaves(CREATE | INT_TO_PTR)
    valid = [
        _HEAD + "p = lds.kv.ptr.llvm_ptr\n",
        _HEAD + "p = buffer_ops.create_llvm_ptr(lds_byte_offset, address_space=3)\n",
        _HEAD + "base = fx.Index(fx.ptrtoint(a.ptr))\nbase = base + 16\np = buffer_ops.create_llvm_ptr(base, address_space=3)\n",
    ]
    invalid = [
        Invalid(_HEAD + "def f(lds):\n    idx = fx.Index(fx.ptrtoint(lds.kv.ptr))\n"
                "    p = buffer_ops.create_llvm_ptr(idx, address_space=3)\n",
                fixed="import flydsl.expr as fx\ndef f(lds):\n    idx = fx.Index(fx.ptrtoint(lds.kv.ptr))\n    p = lds.kv.ptr.llvm_ptr\n"),
        Invalid(_HEAD + "class Ctx:\n    def setup(self, lds):\n"
                "        self.kv_idx = fx.Index(fx.ptrtoint(lds.kv.ptr))\n"
                "        self.kv_ptr = buffer_ops.create_llvm_ptr(self.kv_idx, address_space=3)\n",
                fixed="import flydsl.expr as fx\nclass Ctx:\n    def setup(self, lds):\n"
                "        self.kv_idx = fx.Index(fx.ptrtoint(lds.kv.ptr))\n        self.kv_ptr = lds.kv.ptr.llvm_ptr\n"),
        Invalid("import flydsl.expr as fx\nfrom kernels.common import mem_ops\n"
                "p = mem_ops._create_llvm_ptr(fx.ptrtoint(out_ptr))\n",
                fixed="p = out_ptr.llvm_ptr\n", unsafe=True),
        Invalid("import flydsl.expr.typing as fxt\nfrom kernels.common import mem_ops\n"
                "p = mem_ops._create_llvm_ptr(fxt.ptrtoint(out_ptr))\n", fixed="p = out_ptr.llvm_ptr\n", unsafe=True),
        Invalid("import flydsl.expr as fx\nfrom flydsl._mlir import ir\nfrom flydsl._mlir.dialects import llvm\n"
                "p = llvm.IntToPtrOp(ir.Type.parse('!llvm.ptr<3>'), fx.ptrtoint(a.ptr)).result\n"),
    ]

    def visit_Call(self, node: ast.Call) -> None:
        name = resolve(self.model, node.func)
        if name not in CREATE and name not in INT_TO_PTR:
            return
        pointer = _PointerSource(self).pointer(node, _address(self, node, name))
        if pointer is None:
            return
        fix = None
        if name in CREATE:
            safe = _literal_address_space(node, name) is not None
            edit = self.replace(node, f"{as_method_receiver(self, pointer)}.llvm_ptr")
            fix = self.make_fix([edit], "Use the fly pointer's `.llvm_ptr`", None if safe else Applicability.UNSAFE)
        self.report(node, fix=fix, helper=name.rpartition(".")[2])


@register
class ElementPtrHelper(Rule):
    """`mem_ops.get_llvm_ptr` / `element_ptr(tensor, offset, dtype_bytes)`
    extracts a tensor's base as an integer, adds `offset * dtype_bytes` and
    casts back with a hardcoded `!llvm.ptr<1>`. Keep the offset math (a layout
    view, or `get_element_ptr` on the pointer) and take the pointer from the
    fly pointer with `.llvm_ptr` / `fx.to_llvm_ptr`, so the backend resolves
    the address space. Preserve byte versus element GEPs and alignment."""

    code = "FLY352"
    follows = ELEMENT
    call_names = leaves(ELEMENT)
    valid = [
        "import flydsl.expr as fx\np = fx.to_llvm_ptr(ptr)\n",
        "def get_llvm_ptr(t, o, b):\n    return t\nget_llvm_ptr(C, off, 4)\n",
    ]
    invalid = [
        Invalid("from kernels.common.mem_ops import get_llvm_ptr\nsignal_ptr = get_llvm_ptr(signal, signal_idx, 4)\n",
                at=(2, 14), message='`get_llvm_ptr` builds a `!llvm.ptr<1>` from base + offset*dtype_bytes by hand: keep the offset math (layout view / get_element_ptr) and take the pointer with `.llvm_ptr` / `fx.to_llvm_ptr`'),
        Invalid("from kernels.common import mem_ops\nc_ptr = mem_ops.element_ptr(C, off, DTYPE_BYTES)\n"),
    ]

    def visit_Call(self, node: ast.Call) -> None:
        name = resolve(self.model, node.func)
        if name in ELEMENT:
            self.report(node, helper=name.rpartition(".")[2])


@register
class LlvmPtrFromRawAddress(Rule):
    """An `!llvm.ptr` built from an integer that is not provably a fly
    pointer's address: an LDS byte offset, a raw i64 address from a pointer
    table or kernel argument, a memref's extracted base. The guide keeps
    these: with no fly pointer there is nothing to call `.llvm_ptr` on. They
    get their own code so a team can keep them (note why each stays) while
    fixing FLY351; migrating the LDS to `SharedAllocator` (§4) usually turns
    an LDS offset into a fly pointer and this into FLY351."""

    code = "FLY353"
    follows = CREATE | INT_TO_PTR | _POINTER_SOURCES
    call_names = leaves(CREATE | INT_TO_PTR)
    valid = [
        _HEAD + "p = buffer_ops.create_llvm_ptr(fx.ptrtoint(a.ptr), address_space=3)\n",
        "import flydsl.expr as fx\np = fx.to_llvm_ptr(ptr)\n",
        # A hand-rolled element-pointer helper has a fly pointer at hand: FLY354.
        "import flydsl.expr as fx\nfrom flydsl._mlir import ir\nfrom flydsl._mlir.dialects import llvm\n"
        "def _elem_ptr(p, off):\n    return llvm.IntToPtrOp(ir.Type.parse('!llvm.ptr<3>'), fx.ptrtoint(p) + off).result\n",
    ]
    invalid = [
        Invalid(_HEAD + "lds_ptr = buffer_ops.create_llvm_ptr(lds_addr, address_space=3)\n"),
        Invalid("from flydsl._mlir import ir\nfrom flydsl._mlir.dialects import llvm\n"
                "ptr = llvm.IntToPtrOp(c_global_ptr_type, addr_i64).result\n"),
        Invalid("from kernels.common.mem_ops import to_llvm_ptr\nstream = to_llvm_ptr(stream_i64)\n"),
    ]

    def visit_Call(self, node: ast.Call) -> None:
        name = resolve(self.model, node.func)
        if name not in CREATE and name not in INT_TO_PTR:
            return
        if _PointerSource(self).pointer(node, _address(self, node, name)) is not None:
            return
        if name in INT_TO_PTR and _in_element_pointer_helper(self, node):
            return  # FLY354: the helper has a fly pointer at hand
        self.report(node, helper=name.rpartition(".")[2])


# A hand-rolled element-pointer helper: fly pointer -> integer (ptrtoint),
# plus an offset, back to `!llvm.ptr` with IntToPtrOp.
_PTR_TO_INT = release_paths(f"{_LLVM}.PtrToIntOp", f"{_LLVM}.ptrtoint")
_ADD = release_paths(f"{_LLVM}.AddOp", f"{_LLVM}.add", "flydsl._mlir.dialects.arith.AddIOp",
                     "flydsl._mlir.dialects.arith.addi", "flydsl.expr.arith.addi")
# Ops whose result is a fly pointer's (or fly tensor's) address as an `!llvm.ptr`.
_FLY_POINTER_ADDRESS = release_paths("flydsl._mlir.dialects.fly.extract_aligned_pointer_as_index", "flydsl.expr.to_llvm_ptr",
                                     "flydsl.expr.primitive.to_llvm_ptr", "flydsl.expr.typing.to_llvm_ptr")
# What `_in_element_pointer_helper` looks for, for the rules built on it to follow.
_ELEMENT_POINTER_MATH = _PTR_TO_INT | _ADD | _FLY_POINTER_ADDRESS | INT_TO_PTR | _POINTER_SOURCES
_TRACE_DEPTH = 6


class _Derivation:
    """What an expression is computed from inside one function: it walks the
    expression and, through names assigned in plain `name = value`
    statements, the values those names were given."""

    def __init__(self, rule: Rule) -> None:
        self.rule = rule
        self.model = rule.model

    def nodes(self, value: ast.expr) -> Iterator[ast.AST]:
        seen: set[int] = set()
        pending = [(value, 0)]
        while pending:
            expression, depth = pending.pop()
            for node in ast.walk(expression):
                if id(node) in seen:
                    continue
                seen.add(id(node))
                yield node
                if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load) and depth < _TRACE_DEPTH:
                    pending.extend((assigned, depth + 1) for assigned in assigned_values(self.model, node) or ())

    def calls(self, value: ast.expr, qualified: frozenset[str]) -> list[ast.Call]:
        return [node for node in self.nodes(value) if isinstance(node, ast.Call) and resolve(self.model, node.func) in qualified]

    def adds(self, value: ast.expr) -> bool:
        return any(isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add) for node in self.nodes(value)) or bool(self.calls(value, _ADD))

    def fly_address(self, value: ast.expr) -> bool:
        """`fx.ptrtoint(p)`, or llvm ptrtoint of a fly pointer's `!llvm.ptr`."""
        if self.calls(value, PTRTOINT):
            return True
        for ptrtoint in self.calls(value, _PTR_TO_INT):
            source = argument(ptrtoint, 1, "arg")
            if source is not None and (self.calls(source, _FLY_POINTER_ADDRESS) or any(
                    isinstance(node, ast.Attribute) and node.attr == "llvm_ptr" for node in self.nodes(source))):
                return True
        return False


def element_pointer_casts(rule: Rule, function: ast.AST) -> list[ast.Call]:
    """The IntToPtrOp calls of `function` whose integer is a fly pointer's
    address plus an offset: the function is a hand-rolled `get_llvm_ptr`."""
    derivation = _Derivation(rule)
    found = []
    for node in _int_to_ptr_calls(rule).get(function, ()):
        address = argument(node, 1, "val")
        if address is not None and derivation.adds(address) and derivation.fly_address(address):
            found.append(node)
    return found


def _int_to_ptr_calls(rule: Rule) -> dict[ast.AST, list[ast.Call]]:
    """The file's IntToPtrOp calls by enclosing function, found once a file."""
    def by_function() -> dict[ast.AST, list[ast.Call]]:
        model = rule.model
        calls: dict[ast.AST, list[ast.Call]] = {}
        for node in model.nodes(ast.Call):
            if resolve(model, node.func) in INT_TO_PTR:
                calls.setdefault(model.enclosing_function(node), []).append(node)
        return calls

    return rule.context.cache("s3b.int_to_ptr_calls", by_function)


def _in_element_pointer_helper(rule: Rule, call: ast.Call) -> bool:
    function = rule.model.enclosing_function(call)
    return function is not None and call in element_pointer_casts(rule, function)


_PTR_HEAD = "import flydsl.expr as fx\nfrom flydsl._mlir import ir\nfrom flydsl._mlir.dialects import fly, llvm\nfrom flydsl.expr.typing import T\n"


@register
class HandRolledElementPtr(Rule):
    """A local function that does what the legacy `mem_ops.get_llvm_ptr` did:
    takes a fly pointer's address as an integer (`fx.ptrtoint(p)`, or
    `llvm.PtrToIntOp` of `fly.extract_aligned_pointer_as_index` / `.llvm_ptr`),
    adds an offset and casts back with `llvm.IntToPtrOp` and a hardcoded
    `!llvm.ptr<AS>`. Keep the offset math on the fly pointer (a layout view,
    or `get_element_ptr`) and take the `!llvm.ptr` with `.llvm_ptr` /
    `fx.to_llvm_ptr`, so the backend resolves the address space. Preserve
    byte versus element GEPs and alignment.

    Reported on the `def`, once, when its IntToPtrOp's integer provably comes
    from such an address through an add (`+`, `llvm.AddOp`, `arith.addi`),
    directly or through names assigned in the function. The IntToPtrOp itself
    is then not reported as FLY353: the fly pointer is at hand."""

    code = "FLY354"
    follows = _ELEMENT_POINTER_MATH
    valid = [
        _PTR_HEAD + "def ptr_at(p):\n    return p.llvm_ptr\n",
        # No offset: a plain cast, FLY351's business.
        _PTR_HEAD + "def as_ptr(p):\n    return llvm.IntToPtrOp(ir.Type.parse('!llvm.ptr<1>'), fx.ptrtoint(p)).result\n",
        # A raw integer address plus an offset: no fly pointer to start from.
        _PTR_HEAD + "def at(addr_i64, off):\n    return llvm.IntToPtrOp(ir.Type.parse('!llvm.ptr<1>'), addr_i64 + off).result\n",
    ]
    invalid = [
        Invalid(_PTR_HEAD + "def get_llvm_ptr(ptr, offset, dtype_bytes):\n"
                "    ptr_type = ir.Type.parse('!llvm.ptr<1>')\n"
                "    base = fly.extract_aligned_pointer_as_index(ptr_type, ptr)\n"
                "    base = llvm.PtrToIntOp(T.i64, base).result\n"
                "    addr = llvm.AddOp(base, offset * dtype_bytes, llvm.IntegerOverflowFlags(0)).result\n"
                "    return llvm.IntToPtrOp(ptr_type, addr).result\n"),
        Invalid(_PTR_HEAD + "def _elem_ptr(p, off):\n"
                "    return llvm.IntToPtrOp(ir.Type.parse('!llvm.ptr<3>'), fx.Int64(fx.ptrtoint(p)) + off).result\n"),
    ]

    def visit_FunctionDef(self, node: ast.FunctionDef) -> None:
        if in_boundary_module(self) or not element_pointer_casts(self, node):
            return
        source = self.context.source
        start = Position(node.lineno, source.char_col(node.lineno, node.col_offset))
        column = source.lines[node.lineno - 1].find(node.name, node.col_offset)  # the `def name` header
        end = Position(node.lineno, source.char_col(node.lineno, column + len(node.name)) if column >= 0 else start.col)
        self.report(start=start, end=end, function=node.name)

    visit_AsyncFunctionDef = visit_FunctionDef
