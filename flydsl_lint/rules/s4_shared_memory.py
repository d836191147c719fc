"""§4 SmemAllocator / SmemPtr -> fx.SharedAllocator + @fx.struct."""

from __future__ import annotations

import ast
from typing import Callable

from ..engine.diagnostics import Edit
from ..engine.project import release_paths
from ._base import Invalid, Rule, leaves, register
from ._codemods import (Codemod, Refusal, bound_once, codemod_fix, delete_or_pass, delete_statement, fresh_name,
                        is_attribute_of, reads_of, single_name_assignment, start_of, unconditional_block,
                        within)
from ._edits import reference
from ._flydsl import TYPE_MODULES
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


_INSERTION_POINT = "flydsl._mlir.ir.InsertionPoint"
# The element types a region may have: the MLIR type's leaf -> (fx type, bytes).
_ELEMENT_TYPES = {
    "f32": ("Float32", 4), "f16": ("Float16", 2), "bf16": ("BFloat16", 2), "f64": ("Float64", 8),
    "i32": ("Int32", 4), "i16": ("Int16", 2), "i8": ("Int8", 1), "i64": ("Int64", 8),
}
_FX_TYPES = {fx_type: size for fx_type, size in _ELEMENT_TYPES.values()}


class _Region:
    """One `off = a._align(a.ptr, K)` + `a.ptr = off + N * B` reservation."""

    def __init__(self, align: ast.Assign, offset: ast.Name, alignment: int) -> None:
        self.align, self.offset, self.alignment = align, offset, alignment
        self.bump: ast.Assign | None = None
        self.count: ast.expr | None = None  # N
        self.size = 0  # B
        self.width_name: ast.Name | None = None  # B spelled by a name (`f32_bytes`)


class _Site:
    """Where the regions are used: the allocator's and the offsets' names there, and what
    the migration rewrites (the kernel's base, views and accesses, the launcher's finalize).
    The allocator's own function is the one site, or each call of its factory is one."""

    def __init__(self, allocator: ast.Name, offsets: list[ast.Name], owner: ast.AST) -> None:
        self.allocator, self.offsets, self.owner = allocator, offsets, owner
        self.views: list[ast.Assign] = []  # `p = SmemPtr(base, off, dtype, shape=(N,))`, per region
        self.elements: list[str] = []  # the fx type of each view
        self.bases: list[ast.Assign] = []
        self.accesses: list[tuple[ast.Call, str, ast.Name, ast.expr | None, ast.expr]] = []
        self.warm_ups: list[ast.Expr] = []
        self.finalize_flags: list[ast.Assign] = []
        self.finalize_blocks: list[ast.With] = []
        self.helper_parameters: dict[tuple[ast.FunctionDef, int], ast.arg] = {}  # views passed on, by position
        self.kernel: ast.AST | None = None
        self.call: ast.Call | None = None  # the factory call, for a factory's site


class _LdsMigration(Codemod):
    """A `SmemAllocator`'s whole LDS moved to `fx.SharedAllocator` over an `@fx.struct`.

    The shape handled is the allocator FlyDSL's own kernels used: built once,
    its regions reserved in order with `off = a._align(a.ptr, K)` and
    `a.ptr = off + N * B`, each viewed once in one kernel by
    `p = SmemPtr(a.get_base(), off, dtype, shape=(N,))` (B = sizeof(dtype)) and
    reached only through `p.load([i])`/`p.store(v, [i])`, and finalized in the
    launcher inside `with ir.InsertionPoint(ctx.gpu_module_body)`. Each region
    becomes a field `p: fx.Array[dtype, N, K]`; the static SharedAllocator gives
    every field its own LDS symbol, so regions that never alias keep their meaning.

    The allocator may also be built by a private factory that ends in
    `return a, off_1, ..., off_n`, every call of which unpacks that tuple in
    the function that defines the kernel: the factory then returns the struct,
    and each call site is migrated as its own site.
    """

    def __init__(self, rule: Rule, call: ast.Call) -> None:
        super().__init__(rule, call)
        self.regions: list[_Region] = []
        self.factory_return: ast.Return | None = None  # `return a, off_1, ...` of a factory

    def edits(self) -> list[Edit]:
        rule = self.rule
        assignment = single_name_assignment(rule, self.call)
        if assignment is None:
            raise Refusal("the allocator is not bound to a name of its own")
        self.statement, self.target = assignment
        self.block = unconditional_block(rule, self.statement)
        self.owner = rule.model.parent(self.statement)
        if not bound_once(rule, self.target, self.owner):
            raise Refusal(f"`{self.target.id}` is bound more than once")
        own_site = _Site(self.target, [], self.owner)
        self._classify_reads(own_site)
        if not self.regions:
            return self._unused(own_site)
        for region in self.regions:
            if region.bump is None:
                raise Refusal(f"the region at `{region.offset.id}` is never sized")
            if not bound_once(rule, region.offset, self.owner):
                raise Refusal(f"the offset `{region.offset.id}` is bound more than once")
        if self.factory_return is None:
            own_site.offsets = [region.offset for region in self.regions]
            self.sites = [own_site]
        else:
            self._check_factory(own_site)
            self.sites = self._factory_sites()
        for site in self.sites:
            self._check_site(site)
            if site.elements != self.sites[0].elements:
                raise Refusal(f"the calls of `{self.owner.name}` view its regions with different element types")
        return self._rewrite()

    def _unused(self, site: _Site) -> list[Edit]:
        """An allocator that reserves nothing and is never read from only emits an LDS global no
        kernel uses: it goes, with its finalize bookkeeping. At module level another module may
        import it, so it stays."""
        if site.bases or self.factory_return is not None or isinstance(self.owner, ast.Module):
            raise Refusal("it reserves no region")
        removed = site.finalize_flags + site.finalize_blocks + self._contexts(site)
        return [self._delete(self.statement)] + [self._remove(statement, removed) for statement in removed]

    # ------------------------------------------------------------ the regions
    def _classify_reads(self, site: _Site) -> None:
        """Every use of the site's allocator is bookkeeping the migration removes, or a refusal."""
        name = site.allocator.id
        for read in reads_of(self.rule, site.allocator):
            attribute = self.rule.model.parent(read)
            statement = _statement_of(self.rule, read)
            if site.allocator is self.target and self._factory_return(read):
                continue
            if not isinstance(attribute, ast.Attribute):
                raise Refusal(f"the allocator escapes (`{name}` is used whole on line {read.lineno})")
            if attribute.attr == "ptr" and isinstance(statement, ast.AugAssign):
                raise Refusal(f"`{name}.ptr +=` moves the allocator by hand (line {read.lineno})")
            if not self._bookkeeping(site, attribute, statement):
                raise Refusal(f"the allocator escapes or is used outside the migrated pattern "
                              f"(`{name}.{attribute.attr}` on line {read.lineno})")

    def _bookkeeping(self, site: _Site, attribute: ast.Attribute, statement: ast.stmt | None) -> bool:
        rule = self.rule
        parent = rule.model.parent(attribute)
        in_builder = site.allocator is self.target and statement is not None and statement in self.block
        if attribute.attr == "_align" and in_builder and isinstance(parent, ast.Call):
            return self._region_start(parent, statement)
        if attribute.attr == "ptr" and isinstance(parent, ast.Call) and is_attribute_of(parent.func, self.target.id, "_align") \
                and parent.args and parent.args[0] is attribute and in_builder:
            return True  # the `a.ptr` inside `a._align(a.ptr, K)`
        if attribute.attr == "ptr" and isinstance(attribute.ctx, ast.Store) and in_builder:
            return self._region_end(statement)
        if attribute.attr == "get_base" and isinstance(parent, ast.Call) and not parent.args:
            base = single_name_assignment(rule, parent)
            if base is not None:
                site.bases.append(base[0])
            return base is not None
        if attribute.attr == "finalized" and isinstance(attribute.ctx, ast.Store) and isinstance(statement, ast.Assign):
            site.finalize_flags.append(statement)
            return True
        if attribute.attr == "finalize" and isinstance(parent, ast.Call) and isinstance(statement, ast.Expr):
            block = rule.model.parent(statement)
            if isinstance(block, ast.With) and self._finalize_block(site, block):
                if block not in site.finalize_blocks:
                    site.finalize_blocks.append(block)
                return True
        return False

    def _region_start(self, align: ast.Call, statement: ast.stmt) -> bool:
        assignment = single_name_assignment(self.rule, align)
        if assignment is None or len(align.args) != 2 or align.keywords:
            return False
        pointer, alignment = align.args
        if not (is_attribute_of(pointer, self.target.id, "ptr") and _int_literal(alignment)):
            return False
        if self.regions and self.regions[-1].bump is None:
            raise Refusal("the offsets are computed, not reserved in order by `_align` and `ptr =`")
        self.regions.append(_Region(assignment[0], assignment[1], alignment.value))
        return True

    def _region_end(self, statement: ast.stmt) -> bool:
        if not (isinstance(statement, ast.Assign) and len(statement.targets) == 1):
            return False
        region = self.regions[-1] if self.regions else None
        value = statement.value
        if region is None or region.bump is not None or not (isinstance(value, ast.BinOp) and isinstance(value.op, ast.Add)
                                                              and isinstance(value.left, ast.Name)
                                                              and value.left.id == region.offset.id):
            raise Refusal("the offsets are computed, not reserved in order by `_align` and `ptr =`")
        size = value.right
        if not (isinstance(size, ast.BinOp) and isinstance(size.op, ast.Mult)):
            raise Refusal(f"the size of `{region.offset.id}` is not `count * bytes`")
        count, width = (size.left, size.right) if self._byte_width(size.right) else (size.right, size.left)
        if not self._byte_width(width) or not _static(count):
            raise Refusal(f"the size of `{region.offset.id}` is not `count * bytes` with static values")
        region.bump, region.count, region.size = statement, count, self._byte_width(width)
        if isinstance(width, ast.Name):
            region.width_name = width
        return True

    def _byte_width(self, node: ast.expr) -> int | None:
        """An element's byte count: an int literal, or a name bound once to one (`f32_bytes = 4`)."""
        value = self.rule.model.single_assigned_value(node) if isinstance(node, ast.Name) else node
        return value.value if value is not None and _int_literal(value) else None

    # ------------------------------------------------------------ a factory
    def _factory_return(self, read: ast.Name) -> bool:
        """`return a, off_1, ..., off_n` ending the allocator's plain function: it is a factory."""
        rule = self.rule
        returned = rule.model.parent(read)
        statement = rule.model.parent(returned)
        if not (isinstance(returned, ast.Tuple) and returned.elts[0] is read and isinstance(statement, ast.Return)
                and statement is self.block[-1] and isinstance(self.owner, ast.FunctionDef)):
            return False
        if not all(isinstance(e, ast.Name) for e in returned.elts[1:]) or self.factory_return is not None:
            return False
        self.factory_return = statement
        return True

    def _check_factory(self, site: _Site) -> None:
        """The factory does nothing but reserve the regions and return them, privately."""
        rule, factory = self.rule, self.owner
        if site.bases or site.finalize_flags or site.finalize_blocks:
            raise Refusal(f"the factory `{factory.name}` also uses the allocator it returns")
        if rule.model.function_kind(factory) is not None or factory.decorator_list:
            raise Refusal(f"the factory `{factory.name}` is decorated")
        if isinstance(rule.model.parent(factory), ast.Module) and not factory.name.startswith("_"):
            raise Refusal(f"the factory `{factory.name}` is public: another module may call it")
        returned = [e.id for e in self.factory_return.value.elts[1:]]
        if sorted(returned) != sorted(region.offset.id for region in self.regions):
            raise Refusal(f"the factory `{factory.name}` does not return exactly its regions' offsets")
        kept = {id(self.statement), id(self.factory_return)} | {id(s) for r in self.regions for s in (r.align, r.bump)} \
            | {id(s) for s in self._width_bindings()}
        for statement in self.block:
            if id(statement) not in kept and not _docstring(statement):
                raise Refusal(f"the factory `{factory.name}` does more than reserve the regions (line {statement.lineno})")

    def _factory_sites(self) -> list[_Site]:
        """Each call of the factory, `a, off_1, ... = factory(...)`, as a site."""
        rule, factory = self.rule, self.owner
        order = [e.id for e in self.factory_return.value.elts[1:]]
        sites = []
        for read in rule.model.loads_of(factory.name):
            binding = rule.model.binding_of(read)
            if binding is None or binding.node is not factory:
                continue
            call = rule.model.parent(read)
            statement = rule.model.parent(call) if isinstance(call, ast.Call) and call.func is read else None
            targets = statement.targets[0] if isinstance(statement, ast.Assign) and len(statement.targets) == 1 else None
            if not (isinstance(targets, ast.Tuple) and len(targets.elts) == len(order) + 1
                    and all(isinstance(t, ast.Name) for t in targets.elts)):
                raise Refusal(f"the factory `{factory.name}` is called without unpacking its regions (line {read.lineno})")
            unconditional_block(rule, statement)
            owner = rule.model.parent(statement)
            offsets = [targets.elts[1 + order.index(region.offset.id)] for region in self.regions]
            if any(other.owner is owner for other in sites):
                # one name for the struct per scope: a kernel would read the later call's
                raise Refusal(f"the factory `{factory.name}` is called twice in one function (line {read.lineno})")
            site = _Site(targets.elts[0], offsets, owner)
            site.call = call
            sites.append(site)
        if not sites:
            raise Refusal(f"the factory `{factory.name}` is never called here")
        return sites

    def _count_at(self, site: _Site, region: _Region) -> ast.expr | None:
        """The region's count as the site spells it: the factory's parameter replaced by the argument."""
        count = region.count
        if site.call is None or _int_literal(count):
            return count
        parameters = [a.arg for a in self.owner.args.posonlyargs + self.owner.args.args]
        if not isinstance(count, ast.Name) or count.id not in parameters or site.call.keywords \
                or any(isinstance(a, ast.Starred) for a in site.call.args):
            return None
        index = parameters.index(count.id)
        argument = site.call.args[index] if index < len(site.call.args) else None
        return argument if isinstance(argument, ast.Name) or (argument is not None and _int_literal(argument)) else None

    def _same_count(self, site: _Site, region: _Region, shape: ast.expr) -> bool:
        count = self._count_at(site, region)
        if count is None:
            return False
        if site.call is None or not isinstance(count, ast.Name):
            return self.rule.text(shape) == self.rule.text(count)
        # the argument and the view's shape are the one binding of one name
        model = self.rule.model
        bound = model.binding_of(count)
        return isinstance(shape, ast.Name) and shape.id == count.id and bound is not None \
            and model.is_single_binding(bound) and model.binding_of(shape) is bound

    # ------------------------------------------------------------ a site
    def _check_site(self, site: _Site) -> None:
        rule = self.rule
        if site.call is not None:
            for name in [site.allocator] + site.offsets:
                if not bound_once(rule, name, site.owner):
                    raise Refusal(f"`{name.id}` is bound more than once")
            self._classify_reads(site)
        for region, offset in zip(self.regions, site.offsets):
            self._find_view(site, region, offset)
        site.kernel = self._one_kernel(site)
        self._check_views(site)

    def _find_view(self, site: _Site, region: _Region, offset: ast.Name) -> None:
        rule = self.rule
        views = []
        for read in reads_of(rule, offset):
            parent = rule.model.parent(read)
            if site.call is None and parent is region.bump.value:
                continue
            if isinstance(parent, ast.Call) and resolve(rule.model, parent.func) in SMEM_PTR and len(parent.args) > 1 \
                    and parent.args[1] is read:
                views.append(parent)
            else:
                raise Refusal(f"the offset `{offset.id}` is used outside a view (line {read.lineno})")
        if not views:
            raise Refusal(f"the region at `{offset.id}` is a raw byte reservation without a view")
        if len(views) > 1:
            raise Refusal(f"the region at `{offset.id}` has aliasing views")
        self._match_view(site, region, offset, views[0])

    def _match_view(self, site: _Site, region: _Region, offset: ast.Name, view: ast.Call) -> None:
        rule = self.rule
        assignment = single_name_assignment(rule, view)
        if assignment is None:
            raise Refusal(f"the view of `{offset.id}` is not bound to a name of its own")
        shape = view.args[3] if len(view.args) == 4 else next((k.value for k in view.keywords if k.arg == "shape"), None)
        if len(view.args) + len(view.keywords) != 4 or not isinstance(shape, ast.Tuple) or len(shape.elts) != 1:
            raise Refusal(f"the view of `{offset.id}` is not `SmemPtr(base, {offset.id}, dtype, shape=(n,))`")
        element = self._element_type(view.args[2])
        if element is None:
            raise Refusal(f"the view of `{offset.id}` has an element type the fix does not know")
        if _FX_TYPES[element] != region.size or not self._same_count(site, region, shape.elts[0]):
            raise Refusal(f"the view of `{offset.id}` does not cover its reservation exactly (dtype or size differ)")
        if not self._is_base(site, view.args[0]):
            raise Refusal(f"the view of `{offset.id}` is not taken from this allocator's `get_base()`")
        site.views.append(assignment[0])
        site.elements.append(element)

    def _element_type(self, node: ast.expr) -> str | None:
        name = self.rule.model.resolve(node.func if isinstance(node, ast.Call) and not node.args else node) or ""
        module, _, leaf = name.rpartition(".")
        if module in TYPE_MODULES and leaf in _ELEMENT_TYPES:
            return _ELEMENT_TYPES[leaf][0]
        owner, _, attribute = name.rpartition(".")
        if attribute == "ir_type" and owner.startswith("flydsl.expr.") and owner.rpartition(".")[2] in _FX_TYPES:
            return owner.rpartition(".")[2]
        return None

    def _is_base(self, site: _Site, node: ast.expr) -> bool:
        if not isinstance(node, ast.Name):
            return False
        binding = self.rule.model.binding_of(node)
        return binding is not None and any(binding.node is base.targets[0] for base in site.bases)

    def _finalize_block(self, site: _Site, block: ast.With) -> bool:
        """`with ir.InsertionPoint(<ctx>.gpu_module_body):` holding only `a.finalize()` calls."""
        if len(block.items) != 1 or block.items[0].optional_vars is not None:
            return False
        entered = block.items[0].context_expr
        return isinstance(entered, ast.Call) and self.rule.model.resolve(entered.func) == _INSERTION_POINT \
            and len(entered.args) == 1 and isinstance(entered.args[0], ast.Attribute) \
            and entered.args[0].attr == "gpu_module_body" \
            and all(isinstance(s, ast.Expr) and isinstance(s.value, ast.Call) and not s.value.args
                    and is_attribute_of(s.value.func, site.allocator.id, "finalize") for s in block.body)

    def _one_kernel(self, site: _Site) -> ast.AST:
        rule = self.rule
        kernels = {id(rule.model.enclosing_function(view)) for view in site.views}
        if len(kernels) != 1:
            raise Refusal("its views are taken in more than one function")
        kernel = rule.model.enclosing_function(site.views[0])
        if kernel is None or rule.model.function_kind(kernel) != "kernel":
            raise Refusal("its views are not taken in a @flyc.kernel body")
        reserved = self.regions[-1].bump if site.call is None else rule.model.parent(site.call)
        if kernel.lineno < reserved.end_lineno:
            raise Refusal("the kernel is defined before the regions are reserved")
        for statement in site.views + site.bases:
            unconditional_block(rule, statement)
            if rule.model.enclosing_function(statement) is not kernel:
                raise Refusal("its views are taken in more than one function")
        ours = {id(view.value) for view in site.views}
        for node in ast.walk(kernel):
            if isinstance(node, ast.Call) and resolve(rule.model, node.func) in SMEM_PTR and id(node) not in ours:
                raise Refusal("the kernel has LDS of another allocator: migrate a kernel's whole LDS at once")
        return kernel

    def _check_views(self, site: _Site) -> None:
        """Each view is reached only by `p.load([i])`, `p.store(v, [i])` (or their unbound
        `SmemPtr.` spellings) and bare `p.get()` statements, directly or through a parameter
        of a function defined in the kernel; the base only by the views."""
        rule = self.rule
        for base in site.bases:
            for read in reads_of(rule, base.targets[0]):
                if not any(view.value.args[0] is read for view in site.views):
                    raise Refusal(f"the base pointer `{read.id}` escapes (line {read.lineno})")
        for view in site.views:
            target = view.targets[0]
            if not bound_once(rule, target, site.kernel):
                raise Refusal(f"the view `{target.id}` is bound more than once")
            for read in reads_of(rule, target):
                if not (self._access(site, read) or self._passed_to_helper(site, read)):
                    raise Refusal(f"the view `{target.id}` escapes (line {read.lineno})")
        self._check_helper_parameters(site)
        calls = [access[0] for access in site.accesses]
        for call in calls:
            if any(other is not call and _inside(call, other) for other in calls):
                raise Refusal("an LDS access is nested in another")

    def _passed_to_helper(self, site: _Site, read: ast.Name) -> bool:
        """A view passed positionally to a function defined in the kernel (`block_reduce(x, s_red)`):
        the parameter is checked like a view once every view is known."""
        rule = self.rule
        call = rule.model.parent(read)
        if not (isinstance(call, ast.Call) and read in call.args) or call.keywords:
            return False
        helper = local_function(rule.model, call.func)
        if helper is None or rule.model.enclosing_function(helper) is not site.kernel:
            return False
        index = call.args.index(read)
        parameters = helper.args.posonlyargs + helper.args.args
        if any(isinstance(a, ast.Starred) for a in call.args) or index >= len(parameters):
            return False
        site.helper_parameters.setdefault((helper, index), parameters[index])
        return True

    def _check_helper_parameters(self, site: _Site) -> None:
        """Each helper parameter a view is passed to gets a view at every call and is itself
        reached only by accesses."""
        rule = self.rule
        views = {id(view.targets[0]) for view in site.views}
        for (helper, index), parameter in site.helper_parameters.items():
            name = parameter.arg
            for read in rule.model.loads_of(helper.name):
                if (binding := rule.model.binding_of(read)) is None or binding.node is not helper:
                    continue
                call = rule.model.parent(read)
                if not (isinstance(call, ast.Call) and call.func is read):
                    raise Refusal(f"`{helper.name}`, which takes a view, is used as a value (line {read.lineno})")
                starred = any(isinstance(a, ast.Starred) for a in call.args)
                passed = call.args[index] if len(call.args) > index and not starred else None
                binding = rule.model.binding_of(passed) if isinstance(passed, ast.Name) else None
                if binding is None or id(binding.node) not in views:
                    raise Refusal(f"`{helper.name}` is called without a view for `{name}` (line {call.lineno})")
            if len((rule.model.bindings_opened_by(helper) or {}).get(name, [])) != 1:
                raise Refusal(f"the parameter `{name}` of `{helper.name}` is rebound")
            for read in reads_of(rule, parameter):
                if not self._access(site, read):
                    raise Refusal(f"the view `{name}` escapes (line {read.lineno})")

    def _access(self, site: _Site, read: ast.Name) -> bool:
        rule = self.rule
        parent = rule.model.parent(read)
        if isinstance(parent, ast.Attribute) and parent.attr in _PTR_METHODS:
            call = rule.model.parent(parent)
            if not (isinstance(call, ast.Call) and call.func is parent):
                return False
            if parent.attr == "get":
                statement = rule.model.parent(call)
                if call.args or not isinstance(statement, ast.Expr):
                    return False
                site.warm_ups.append(statement)
                return True
            return self._record(site, call, parent.attr, read, call.args)
        if isinstance(parent, ast.Call) and parent.args and parent.args[0] is read:
            method = (resolve(rule.model, parent.func) or "").rpartition(".")
            if method[0] in SMEM_PTR and method[2] in ("load", "store"):
                return self._record(site, parent, method[2], read, parent.args[1:])
        return False

    def _record(self, site: _Site, call: ast.Call, method: str, view: ast.Name, arguments: list[ast.expr]) -> bool:
        expected = 1 if method == "load" else 2
        if call.keywords or len(arguments) != expected:
            return False
        indices = arguments[-1]
        if not isinstance(indices, (ast.List, ast.Tuple)) or len(indices.elts) != 1 or isinstance(indices.elts[0], ast.Starred):
            return False
        value = arguments[0] if method == "store" else None
        site.accesses.append((call, method, view, value, indices.elts[0]))
        return True

    # ------------------------------------------------------------ rewrite
    def _rewrite(self) -> list[Edit]:
        rule = self.rule
        imports: list[Edit] = []

        def spell(name: str) -> str:
            found = reference(rule, f"flydsl.expr.{name}", "fx", "flydsl.expr")
            if found is None:
                raise Refusal(f"`fx.{name}` cannot be spelled here (the name `fx` is taken)")
            imports.extend(e for e in found[1] if e not in imports)
            return found[0]

        storage = fresh_name(rule, "SharedStorage", f"{self.target.id}_storage")
        lds = fresh_name(rule, "lds", "smem")
        edits = [self._delete(self.statement)]
        for region in self.regions[:-1]:
            edits += [self._delete(region.align), self._delete(region.bump)]
        edits.append(self._delete(self.regions[-1].align))
        indent = " " * start_of(rule, self.regions[-1].bump).col
        # A field is named after its region's view (the first site's, for a factory).
        fields = [view.targets[0].id for view in self.sites[0].views]
        declared = "".join(
            f"{indent}    {field}: {spell('Array')}[{spell(element)}, {rule.text(region.count)}, {region.alignment}]\n"
            for region, field, element in zip(self.regions, fields, self.sites[0].elements))
        struct = f"@{spell('struct')}\n{indent}class {storage}:\n{declared.rstrip()}"
        if self.factory_return is not None:
            struct += "\n"  # a blank line before the factory's `return`
        edits.append(rule.replace(self.regions[-1].bump, struct))
        edits += [self._delete(statement) for statement in self._width_bindings()]
        if self.factory_return is not None:
            edits.append(rule.replace(self.factory_return, f"return {storage}"))
        for site in self.sites:
            edits += self._rewrite_site(site, storage, lds, fields, spell)
        return edits + imports

    def _rewrite_site(self, site: _Site, storage: str, lds: str, fields: list[str],
                      spell: Callable[[str], str]) -> list[Edit]:
        rule = self.rule
        edits = []
        if site.call is not None:
            edits.append(rule.replace(rule.model.parent(site.call).targets[0], storage))
        allocate = f"{lds} = {spell('SharedAllocator')}().allocate({storage}).peek()"
        edits += [rule.replace(base, allocate) for base in site.bases]
        for region, view, field in zip(self.regions, site.views, fields):
            count = rule.text(self._count_at(site, region))
            edits.append(rule.replace(view.value, f"{lds}.{field}.view({spell('make_layout')}({count}, 1))"))
        for call, method, view, value, index in site.accesses:
            if method == "load":
                edits.append(rule.replace(call, f"{spell('memref_load')}({view.id}, {rule.text(index)})"))
            else:
                edits.append(rule.replace(call, f"{spell('memref_store')}({rule.text(value)}, {view.id}, {rule.text(index)})"))
        removed = site.warm_ups + site.finalize_flags + site.finalize_blocks + self._contexts(site)
        edits += [self._remove(statement, removed) for statement in removed]
        return edits

    def _delete(self, statement: ast.stmt) -> Edit:
        edit = delete_statement(self.rule, statement, keep_comment=True)
        if edit is None:
            raise Refusal(f"the bookkeeping on line {statement.lineno} shares its lines with other code or holds a comment")
        return edit

    def _remove(self, statement: ast.stmt, removed: list[ast.stmt]) -> Edit:
        """Delete one of the `removed` statements; the last of a block they empty becomes `pass`."""
        block = _body_of(self.rule, statement)
        if statement is block[-1] and all(s in removed for s in block):
            return delete_or_pass(self.rule, statement, block_left_empty=True)
        return self._delete(statement)

    def _width_bindings(self) -> list[ast.Assign]:
        """`f32_bytes = 4` in the builder, read only by the reservations the migration deletes."""
        found = []
        bumps = [region.bump for region in self.regions]
        for region in self.regions:
            binding = self.rule.model.binding_of(region.width_name) if region.width_name is not None else None
            statement = self.rule.model.parent(binding.node) if binding is not None else None
            if statement in self.block and statement not in found and \
                    all(any(within(bump, read) for bump in bumps) for read in reads_of(self.rule, binding.node)):
                found.append(statement)
        return found

    def _contexts(self, site: _Site) -> list[ast.Assign]:
        """`ctx = CompilationContext.get_current()` read only by the removed finalize blocks."""
        found = []
        for block in site.finalize_blocks:
            module = block.items[0].context_expr.args[0].value
            if not isinstance(module, ast.Name):
                continue
            binding = self.rule.model.binding_of(module)
            statement = self.rule.model.parent(binding.node) if binding is not None and binding.kind == "assign" else None
            reads = reads_of(self.rule, binding.node) if statement is not None else []
            if isinstance(statement, ast.Assign) and len(statement.targets) == 1 and isinstance(statement.value, ast.Call) \
                    and all(any(_inside(b, r) for b in site.finalize_blocks) for r in reads) and statement not in found:
                found.append(statement)
        return found


def _docstring(statement: ast.stmt) -> bool:
    return isinstance(statement, ast.Expr) and isinstance(statement.value, ast.Constant) \
        and isinstance(statement.value.value, str)


def _statement_of(rule: Rule, node: ast.AST) -> ast.stmt | None:
    for ancestor in rule.model.ancestors(node):
        if isinstance(ancestor, ast.stmt):
            return ancestor
    return None


def _body_of(rule: Rule, statement: ast.stmt) -> list[ast.stmt]:
    parent = rule.model.parent(statement)
    for field in ("body", "orelse", "finalbody"):
        block = getattr(parent, field, None)
        if isinstance(block, list) and statement in block:
            return block
    return [statement]


def _int_literal(node: ast.expr) -> bool:
    return isinstance(node, ast.Constant) and type(node.value) is int


def _static(node: ast.expr) -> bool:
    """Names, integer literals and arithmetic on them: a count fixed when the kernel is built."""
    return all(isinstance(n, (ast.Name, ast.Constant, ast.BinOp, ast.operator, ast.Load)) for n in ast.walk(node)) \
        and all(type(n.value) is int for n in ast.walk(node) if isinstance(n, ast.Constant))


_LDS_HEAD = ("import flydsl.compiler as flyc\nimport flydsl.expr as fx\n{extra}from flydsl.expr import gpu\n"
             "{types}")
_LDS_RAW = ("from flydsl._mlir import ir\nfrom flydsl.compiler.kernel_function import CompilationContext\n")
_LDS_TYPES = "from flydsl.expr.typing import T\nfrom flydsl.utils.smem_allocator import SmemAllocator, SmemPtr\n"
_LDS_BEFORE = (
    "\n\ndef build(slots):\n    allocator = SmemAllocator(None, arch=\"gfx942\")\n"
    "    red_offset = allocator._align(allocator.ptr, 16)\n    allocator.ptr = red_offset + slots * 4  # f32 scratch\n\n"
    "    @flyc.kernel\n    def k(x: fx.Float32):\n        base = allocator.get_base()\n"
    "        s_red = SmemPtr(base, red_offset, T.f32, shape=(slots,))\n        s_red.get()\n"
    "        SmemPtr.store(s_red, x, [fx.thread_idx.x])\n        gpu.barrier()\n        y = s_red.load([0])\n\n"
    "    @flyc.jit\n    def launch(x: fx.Float32):\n        allocator.finalized = False\n"
    "        ctx = CompilationContext.get_current()\n        with ir.InsertionPoint(ctx.gpu_module_body):\n"
    "            allocator.finalize()\n        k(x).launch(grid=(1, 1, 1), block=(slots, 1, 1))\n"
)
_LDS_AFTER = (
    "\n\ndef build(slots):\n    @fx.struct\n    class SharedStorage:\n"
    "        s_red: fx.Array[fx.Float32, slots, 16]  # f32 scratch\n\n"
    "    @flyc.kernel\n    def k(x: fx.Float32):\n        lds = fx.SharedAllocator().allocate(SharedStorage).peek()\n"
    "        s_red = lds.s_red.view(fx.make_layout(slots, 1))\n"
    "        fx.memref_store(x, s_red, fx.thread_idx.x)\n        gpu.barrier()\n        y = fx.memref_load(s_red, 0)\n\n"
    "    @flyc.jit\n    def launch(x: fx.Float32):\n        k(x).launch(grid=(1, 1, 1), block=(slots, 1, 1))\n"
)


@register
class SmemAllocatorUse(Rule):
    """`SmemAllocator` lays out LDS by hand: a base pointer, byte offsets
    aligned with `_align`, and a `finalize()` that must run in the right
    module. `fx.SharedAllocator().allocate(Storage).peek()` with an
    `@fx.struct` of `fx.Array` fields lets the compiler size and place the
    LDS global, with no offsets and no finalize. Migrate a kernel's whole LDS
    at once and re-run its test.

    The unsafe fix migrates the whole allocator at once: regions reserved in
    order by `off = a._align(a.ptr, K)` + `a.ptr = off + N * B`, each viewed
    once in one `@flyc.kernel` by `p = SmemPtr(a.get_base(), off, dtype,
    shape=(N,))` with `B` = sizeof(dtype), become the fields
    `p: fx.Array[dtype, N, K]` of an `@fx.struct` defined where the last
    region was reserved (`B` may be a name bound once to the literal, as in
    `f32_bytes = 4`, deleted with the reservations when nothing else reads it);
    the base becomes
    `lds = fx.SharedAllocator().allocate(SharedStorage).peek()`, each view
    `lds.p.view(fx.make_layout(N, 1))`, `p.load([i])`/`p.store(v, [i])`
    `fx.memref_load(p, i)`/`fx.memref_store(v, p, i)`, and the bare `p.get()`
    warm-ups, `a.finalized = False`, the `with ir.InsertionPoint(
    ctx.gpu_module_body): a.finalize()` block and its `ctx` are deleted. A
    view passed positionally to a function defined in the kernel is rewritten
    inside it, when every call of that function passes a view there. A private
    factory that only reserves the regions and ends in
    `return a, off_1, ..., off_n` returns the struct instead, and each of its
    calls, `a, off_1, ... = _factory(..., N)`, becomes `SharedStorage =
    _factory(..., N)` and is migrated like the allocator's own function (a
    count passed as a parameter must reach the view as the same name). It
    refuses, and the message says why, when the allocator is built
    conditionally or escapes; offsets are computed otherwise or used outside
    their view; `ptr +=` moves it; a region has no view (a raw byte
    reservation), two views (aliasing, of the same or different dtypes) or a
    view that does not cover it exactly; a view is built conditionally, in
    another function, or escapes (passed on, its `get()` memref used); or the
    kernel also has LDS of another allocator; a factory is public, does more
    than reserve, is called without unpacking, or its callers view a region
    as different types. An allocator in a function that reserves nothing
    and whose base is never taken is dead code: it is deleted with its
    finalize bookkeeping. The result needs FlyDSL 0.4.2:
    before it an index-typed coordinate of `fx.memref_load`/`fx.memref_store`
    crashes the tracer (0.3.0-0.4.1)."""

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
        Invalid(_LDS_HEAD.format(extra=_LDS_RAW, types=_LDS_TYPES) + _LDS_BEFORE,
                fixed=_LDS_HEAD.format(extra="", types="") + _LDS_AFTER, unsafe=True, at=(11, 17),
                message="`SmemAllocator` is the legacy LDS path: declare an `@fx.struct` of `fx.Array` fields and allocate it with `fx.SharedAllocator().allocate(...).peek()`"),
        Invalid(_IMPORT + 'allocator = SmemAllocator(None, arch=GPU_ARCH, global_sym_name="smem")\n',
                at=(2, 13), message='`SmemAllocator` is the legacy LDS path: declare an `@fx.struct` of `fx.Array` fields and allocate it with `fx.SharedAllocator().allocate(...).peek()`; no automatic rewrite: it reserves no region'),
        Invalid("from flydsl.utils import smem_allocator as sa\nalloc = sa.SmemAllocator(None, 'gfx950', 'A_lds')\n"),
    ]

    def visit_Call(self, node: ast.Call) -> None:
        if resolve(self.model, node.func) not in ALLOCATOR:
            return
        fix, note = codemod_fix(self, _LdsMigration(self, node).edits,
                                "Move the allocator's LDS to fx.SharedAllocator over an @fx.struct")
        self.report(node, note=note, fix=fix)


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
    if rule.model.range_callee(func) == "range":
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
