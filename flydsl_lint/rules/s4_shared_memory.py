"""§4 SmemAllocator / SmemPtr -> fx.SharedAllocator + @fx.struct."""

from __future__ import annotations

import ast

from ..engine.project import release_paths
from ._base import Invalid, Rule, leaves, register
from ._memory import SMEM_ALLOCATOR, local_function, names, resolve, returned_values

ALLOCATOR = release_paths(*names(SMEM_ALLOCATOR, "SmemAllocator"))
SMEM_PTR = release_paths(*names(SMEM_ALLOCATOR, "SmemPtr"))
_PTR_METHODS = ("get", "load", "store")
_BOOKKEEPING_CALLS = ("get_base", "finalize", "_align")
_BOOKKEEPING_FIELDS = ("ptr", "finalized")

_IMPORT = "from flydsl.utils.smem_allocator import SmemAllocator, SmemPtr\n"
_KERNEL = "import flydsl.compiler as flyc\nimport flydsl.expr as fx\n" + _IMPORT


def _constructed_by(rule: Rule, node: ast.expr, names_: frozenset[str], depth: int = 0) -> bool:
    """Whether `node` provably holds an object built by a call of `names_`:
    the call itself, a name every binding of which holds one (also through
    tuple unpacking of a local helper's returned tuple), a call of a local
    helper that only returns one, or a parameter annotated with the class."""
    model = rule.model
    if depth > 4:
        return False
    if isinstance(node, ast.Call):
        if resolve(model, node.func) in names_:
            return True
        helper = local_function(model, node.func)
        values = returned_values(helper) if helper is not None else []
        return bool(values) and all(_constructed_by(rule, v, names_, depth + 1) for v in values)
    if not isinstance(node, ast.Name):
        return False
    binding = model.binding_of(node)
    if binding is None or binding.scope is None:
        return False
    if binding.kind == "param":
        annotation = getattr(binding.node, "annotation", None)
        return annotation is not None and resolve(model, annotation) in names_
    if binding.kind != "assign":
        return False
    for each in binding.scope.bindings[binding.name]:
        values = _bound_values(rule, each.node)
        if not values or not all(_constructed_by(rule, v, names_, depth + 1) for v in values):
            return False
    return True


def _bound_values(rule: Rule, target: ast.AST) -> list[ast.expr] | None:
    """The expressions a name target can be bound to: the assigned value, or
    for `a, b = helper()` the matching element of every tuple the local
    helper returns."""
    model = rule.model
    statement = model.parent(target)
    if isinstance(statement, ast.Assign) and statement.targets == [target]:
        return [statement.value]
    if isinstance(statement, ast.Tuple) and isinstance(model.parent(statement), ast.Assign):
        assign = model.parent(statement)
        if assign.targets != [statement] or not isinstance(assign.value, ast.Call):
            return None
        index = statement.elts.index(target)
        helper = local_function(model, assign.value.func)
        values = returned_values(helper) if helper is not None else []
        elements = [v.elts[index] for v in values if isinstance(v, ast.Tuple) and len(v.elts) == len(statement.elts)]
        if not values or len(elements) != len(values):
            return None
        return elements
    return None


@register
class SmemAllocatorUse(Rule):
    """`SmemAllocator` lays out LDS by hand: a base pointer, byte offsets
    aligned with `_align`, and a `finalize()` that must run in the right
    module. `fx.SharedAllocator().allocate(Storage).peek()` with an
    `@fx.struct` of `fx.Array` fields lets the compiler size and place the
    LDS global, with no offsets and no finalize. Migrate a kernel's whole LDS
    at once and re-run its test."""

    code = "FLY401"
    follows = ALLOCATOR
    call_names = leaves(ALLOCATOR)
    use_instead = (
        "@fx.struct\nclass SharedStorage:\n    a: fx.Array[fx.Float16, BLOCK_M * BLOCK_K]\n\n"
        "lds = fx.SharedAllocator().allocate(SharedStorage).peek()\n"
        "lds_a = lds.a.view(fx.make_layout((BLOCK_M, BLOCK_K), (BLOCK_K, 1)))\n"
    )
    valid = [
        "import flydsl.expr as fx\nlds = fx.SharedAllocator().allocate(SharedStorage).peek()\n",
        "class SmemAllocator:\n    pass\na = SmemAllocator()\n",
        _IMPORT + "isinstance(a, SmemAllocator)\n",
    ]
    invalid = [
        Invalid(_IMPORT + 'allocator = SmemAllocator(None, arch=GPU_ARCH, global_sym_name="smem")\n',
                at=(2, 13), message='`SmemAllocator` is the legacy LDS path: declare an `@fx.struct` of `fx.Array` fields and allocate it with `fx.SharedAllocator().allocate(...).peek()`'),
        Invalid("from flydsl.utils import smem_allocator as sa\nalloc = sa.SmemAllocator(None, 'gfx950', 'A_lds')\n"),
    ]

    def visit_Call(self, node: ast.Call) -> None:
        if resolve(self.model, node.func) in ALLOCATOR:
            self.report(node)


@register
class SmemPtrUse(Rule):
    """`SmemPtr(base, byte_offset, dtype, shape=...)` is a typed view at a hand
    computed byte offset into the allocator's LDS buffer. With
    `SharedAllocator` each buffer is an `fx.Array` field of an `@fx.struct`,
    viewed with a layout (`lds.a.view(layout)`), so the offsets disappear.
    Unbound calls (`SmemPtr.load(p, idx)`) are reported too."""

    code = "FLY402"
    follows = SMEM_PTR
    call_names = leaves(SMEM_PTR)
    call_modules = SMEM_PTR  # `SmemPtr.load(p, idx)`
    valid = [
        "import flydsl.expr as fx\nlds_a = lds.a.view(fx.make_layout((BM, BK), (BK, 1)))\n",
        _IMPORT + "def f(p: SmemPtr):\n    return p\n",
    ]
    invalid = [
        Invalid(_IMPORT + "smem_a = SmemPtr(base, 0, dtype_, shape=(BLOCK_M * BLOCK_K,))\n"),
        Invalid(_IMPORT + "SmemPtr.store(s_sum, w0, [wave])\nv = SmemPtr.load(s_sum, [0])\n", count=2),
    ]

    def visit_Call(self, node: ast.Call) -> None:
        name = resolve(self.model, node.func)
        if name in SMEM_PTR:
            self.report(node, what="`SmemPtr(...)`")
        elif name and name.rpartition(".")[0] in SMEM_PTR and name.rpartition(".")[2] in _PTR_METHODS:
            self.report(node, what=f"`SmemPtr.{name.rpartition('.')[2]}(...)`")


@register
class SmemManualBookkeeping(Rule):
    """The manual LDS bookkeeping of a `SmemAllocator`: `get_base()`,
    `finalize()` (and resetting `finalized`), `_align(ptr, n)` and moving
    `allocator.ptr` by byte counts. `SharedAllocator` computes the layout and
    emits the LDS global itself; these lines go away with the migration.
    Reported only on an object provably built by `SmemAllocator(...)` (every
    binding of the name) or a parameter annotated `SmemAllocator`."""

    code = "FLY403"
    follows = ALLOCATOR
    call_names = frozenset(_BOOKKEEPING_CALLS)
    valid = [
        "class Pool:\n    def finalize(self):\n        pass\nPool().finalize()\n",
        _IMPORT + "def build(allocator):\n    allocator.finalize()\n",
        "import flydsl.expr as fx\narena = fx.SharedAllocator()\narena.ptr = 4\n",
    ]
    invalid = [
        Invalid(_IMPORT + "allocator = SmemAllocator(None, arch=arch)\n"
                "off = allocator._align(allocator.ptr, 16)\nallocator.ptr = off + 1024\n"
                "base = allocator.get_base()\nallocator.finalized = False\nallocator.finalize()\n", count=5),
        Invalid(_IMPORT + "def emit(allocator: SmemAllocator):\n    allocator.ptr += 256\n"),
        Invalid(_IMPORT + "def _make(arch):\n    a = SmemAllocator(None, arch=arch)\n    return a, 0\n"
                "allocator, red_off = _make(arch)\nbase = allocator.get_base()\n"),
    ]

    def visit_Call(self, node: ast.Call) -> None:
        func = node.func
        if isinstance(func, ast.Attribute) and func.attr in _BOOKKEEPING_CALLS and _constructed_by(self, func.value, ALLOCATOR):
            self.report(node, what=f"`.{func.attr}()`")

    def check_file(self) -> None:
        # The fields by name rather than `visit_Attribute`: one handler call per
        # attribute of the file would cost more than the few fields it finds.
        attributes = self.model.attributes_by_name()
        for field in _BOOKKEEPING_FIELDS:
            for node in attributes.get(field, ()):
                self._check_field(node)

    def _check_field(self, node: ast.Attribute) -> None:
        if not _constructed_by(self, node.value, ALLOCATOR):
            return
        if isinstance(node.ctx, ast.Load):
            call = self.model.parent(node)
            while call is not None and not isinstance(call, ast.Call):
                call = self.model.parent(call) if isinstance(call, (ast.BinOp, ast.UnaryOp)) else None
            if call is not None and isinstance(call.func, ast.Attribute) and call.func.attr == "_align":
                return  # reported once, on the `_align` call
        self.report(node, what=f"`.{node.attr}`")


def _region_loop(rule: Rule, loop: ast.AST) -> bool:
    """A `for` the FlyDSL rewriter turns into an `scf.for` region: `range(...)`
    (not `range_constexpr`) in traced code, or an explicit `scf` range."""
    if not isinstance(loop, ast.For) or not isinstance(loop.iter, ast.Call):
        return False
    func = loop.iter.func
    if isinstance(func, ast.Name) and func.id == "range" and rule.model.binding_of(func) is None:
        return rule.model.in_traced_code(loop)
    name = resolve(rule.model, func) or ""
    return name.endswith((".scf_range", ".scf.for_", "dialects.scf.for_"))


def _enclosing_region_loop(rule: Rule, node: ast.AST) -> ast.For | None:
    for ancestor in rule.model.ancestors(node):
        if isinstance(ancestor, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            return None
        if _region_loop(rule, ancestor) and node_in_body(ancestor, node):
            return ancestor
    return None


def node_in_body(loop: ast.For, node: ast.AST) -> bool:
    return any(_inside(statement, node) for statement in loop.body)


def _inside(outer: ast.AST, node: ast.AST) -> bool:
    return (outer.lineno, outer.col_offset) <= (node.lineno, node.col_offset) and \
        (node.end_lineno, node.end_col_offset) <= (outer.end_lineno, outer.end_col_offset)


@register
class SmemViewAfterLoop(Rule):
    """`SmemPtr.get()` builds its memref view on first use and caches it. When
    the first use is inside an `scf.for` body (a `range(...)` loop in traced
    code), the cached view lives in the loop's region; using the `SmemPtr`
    again after the loop (an epilogue `load`/`store`/`get`) reuses a value
    that does not dominate it and the kernel fails to compile with a
    dominance error. The same holds for a view (`v = p.get()`) bound inside
    the loop and read after it. Take the view once before the loop, clear
    `p._view_cache = None` after it, or move the LDS to `SharedAllocator`,
    which takes the view per use. `range_constexpr` loops are unrolled and
    create no region."""

    code = "FLY404"
    follows = SMEM_PTR
    valid = [
        _KERNEL + "@flyc.kernel\ndef k(base, n):\n    s = SmemPtr(base, 0, T.f32, shape=(64,))\n    s.get()\n"
        "    for i in range(n):\n        s.store(v, [i])\n    x = s.load([0])\n",
        _KERNEL + "@flyc.kernel\ndef k(base):\n    s = SmemPtr(base, 0, T.f32, shape=(64,))\n"
        "    for i in fx.range_constexpr(4):\n        s.store(v, [i])\n    x = s.load([0])\n",
        _KERNEL + "@flyc.kernel\ndef k(base, n):\n    s = SmemPtr(base, 0, T.f32, shape=(64,))\n"
        "    for i in range(n):\n        s.store(v, [i])\n    s._view_cache = None\n    x = s.load([0])\n",
    ]
    invalid = [
        Invalid(_KERNEL + "@flyc.kernel\ndef k(base, n):\n    s = SmemPtr(base, 0, T.f32, shape=(64,))\n"
                "    for i in range(n):\n        s.store(v, [i])\n    x = s.load([0])\n",
                at=(9, 9), message='`s` reuses a `SmemPtr` view first built inside an scf.for body (line 8) after the loop: the view does not dominate this use; take it before the loop, clear `_view_cache`, or use SharedAllocator'),
        Invalid(_KERNEL + "@flyc.kernel\ndef k(base, n):\n    s = SmemPtr(base, 0, T.f32, shape=(64,))\n"
                "    for i in range(n):\n        view = s.get()\n    epilogue(view)\n"),
    ]

    # Only a call can build an `SmemPtr` or take a view (`p.get()`): the rule
    # looks at `name = <call>` assignments through their calls.
    call_names = leaves(SMEM_PTR) | {"get"}

    def visit_Call(self, value: ast.Call) -> None:
        node = self.model.parent(value)
        if not (isinstance(node, ast.Assign) and node.value is value) or len(node.targets) != 1 or \
                not isinstance(node.targets[0], ast.Name):
            return
        if resolve(self.model, value.func) in SMEM_PTR:
            self._cached_view(node.targets[0])
        elif self._is_view(value):
            self._view_binding(node, node.targets[0])

    def _is_view(self, value: ast.Call) -> bool:
        if not (isinstance(value.func, ast.Attribute) and value.func.attr == "get"):
            return False
        receiver = value.func.value
        return (isinstance(receiver, ast.Call) and resolve(self.model, receiver.func) in SMEM_PTR) or \
            _constructed_by(self, receiver, SMEM_PTR)

    def _uses(self, target: ast.Name):
        for name in self.model.loads_of(target.id):
            found = self.model.binding_of(name)
            if found is not None and found.node is target:
                yield name

    def _cached_view(self, target: ast.Name) -> None:
        uses = []
        for name in self._uses(target):
            parent = self.model.parent(name)
            if isinstance(parent, ast.Attribute) and parent.attr in _PTR_METHODS and isinstance(self.model.parent(parent), ast.Call):
                uses.append((name, self.model.parent(parent)))
            elif isinstance(parent, ast.Call) and parent.args and parent.args[0] is name:
                callee = resolve(self.model, parent.func) or ""
                if callee.rpartition(".")[0] in SMEM_PTR:
                    uses.append((name, parent))
        if not uses or not self.model.in_traced_code(uses[0][1]):
            return
        uses.sort(key=lambda item: (item[1].lineno, item[1].col_offset))
        loop = _enclosing_region_loop(self, uses[0][1])
        if loop is None:
            return
        cleared = [a for a in self.model.attributes_by_name().get("_view_cache", ()) if isinstance(a.ctx, ast.Store)
                   and isinstance(a.value, ast.Name) and a.value.id == target.id and a.lineno > loop.end_lineno]
        for _name, call in uses[1:]:
            if not _inside(loop, call) and call.lineno > loop.end_lineno:
                if any(c.lineno < call.lineno for c in cleared):
                    return
                self.report(call, what=f"`{target.id}`", line=uses[0][1].lineno)
                return

    def _view_binding(self, statement: ast.Assign, target: ast.Name) -> None:
        if not self.model.in_traced_code(statement):
            return
        loop = _enclosing_region_loop(self, statement)
        if loop is None:
            return
        for name in self._uses(target):
            if not _inside(loop, name) and name.lineno > loop.end_lineno:
                self.report(name, what=f"the view `{target.id}`", line=statement.lineno)
                return
