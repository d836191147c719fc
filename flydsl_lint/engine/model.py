"""One semantic model per file: scopes, bindings, import resolution, kernels.

Built in a single walk of the AST. Rules ask it questions such as "does this
call resolve to `flydsl.expr.arith.unwrap`?" or "is this node traced kernel
code?"; they never look at import statements or raw text themselves.
"""

from __future__ import annotations

import ast
import builtins
import sys
from collections import defaultdict
from collections.abc import Iterable, Iterator

from .project import FOLLOWED_NAMES, ProjectIndex, absolute_module

KERNEL_DECORATORS = {
    "flydsl.compiler.kernel": "kernel",
    "flydsl.compiler.kernel_function.kernel": "kernel",
    "flydsl.compiler.jit": "jit",
    "flydsl.compiler.jit_function.jit": "jit",
}
_BUILTINS = frozenset(dir(builtins))
# Legacy helpers receive dialect modules as parameters named like them.
DIALECT_PARAMETERS = {
    "arith": "flydsl.expr.arith",
    "vector": "flydsl._mlir.dialects.vector",
    "llvm": "flydsl._mlir.dialects.llvm",
    "scf": "flydsl._mlir.dialects.scf",
    "memref": "flydsl._mlir.dialects.memref",
    "rocdl": "flydsl.expr.rocdl",
}


class Binding:
    """A name bound in a scope; compared and hashed by identity."""

    __slots__ = ("name", "kind", "position", "node", "target", "alias_of", "fallback", "used", "scope")

    # The walk creates one per bound name: positional arguments only, as a
    # class call with keywords builds a dict of them first.
    def __init__(self, name: str, kind: str, position: tuple[int, int], node: ast.AST, scope: Scope,
                 target: str | None = None, fallback: bool = False) -> None:
        """Bind `name` in `scope` (appended to its bindings of that name)."""
        self.name = name
        self.kind = kind  # import | assign | param | def | class | loop | with | except | comprehension | match | global
        self.position = position  # where the binding takes effect
        self.node = node
        self.target = target  # qualified name an import binds
        self.alias_of: ast.expr | None = None  # `x = fx.max`: the expression x aliases
        self.fallback = fallback  # bound in an `except ImportError` handler
        self.used = 0
        self.scope = scope
        same_name = scope.bindings.get(name)
        if same_name is None:
            scope.bindings[name] = [self]
        else:
            same_name.append(self)


class Scope:
    """A module, function, class, lambda or comprehension scope; compared and hashed by identity."""

    __slots__ = ("kind", "node", "parent", "bindings", "declared_global", "declared_nonlocal", "outer")

    def __init__(self, kind: str, node: ast.AST, parent: Scope | None) -> None:
        self.kind = kind  # module | function | class | lambda | comprehension
        self.node = node
        self.parent = parent
        self.bindings: dict[str, list[Binding]] = {}
        self.declared_global: set[str] = set()
        self.declared_nonlocal: set[str] = set()
        # Reads of names this scope does not bind resolve alike wherever they stand:
        # name -> the enclosing binding (or None), found once.
        self.outer: dict[str, Binding | None] = {}


def _position(node: ast.AST, end: bool = False) -> tuple[int, int]:
    if end:
        return (node.end_lineno, node.end_col_offset)
    return (node.lineno, node.col_offset)


def _is_import_error_handler(handler: ast.ExceptHandler) -> bool:
    names = []
    types = handler.type.elts if isinstance(handler.type, ast.Tuple) else [handler.type]
    for item in types:
        if isinstance(item, ast.Name):
            names.append(item.id)
    return any(name in ("ImportError", "ModuleNotFoundError") for name in names)


# A third of a module's nodes are Names and a twentieth Constants: listing them
# by type would cost the walk more than any rule asks of it (names are reached
# through `loads_of` and bindings, constants through their parents).
UNLISTED_TYPES = frozenset({ast.Name, ast.Constant})
# The walk's hottest tests, without `ast.` look-ups.
_Name, _Constant, _Attribute, _Call, _BinOp = ast.Name, ast.Constant, ast.Attribute, ast.Call, ast.BinOp
_STRING_TYPES = (str, bytes)
# Memo look-ups miss on every node's first question: `get` with this default
# costs less than a caught KeyError.
_UNSEEN = object()
# A plain function's positional parameter -> index, parameter -> default, and
# calls, each None where it unpacks (see `SemanticModel._call_signature`).
_CallSignature = tuple[dict[str, int], dict[str, ast.expr], list[ast.Call | None]]


class SemanticModel:
    """Scopes and bindings of one module, with name resolution on demand."""

    def __init__(
        self,
        tree: ast.Module,
        module_name: str = "",
        is_package: bool = False,
        project: ProjectIndex | None = None,
    ) -> None:
        self.tree = tree
        self.module_name = module_name
        self.is_package = is_package
        self.project = project or ProjectIndex()
        self.module_scope = Scope("module", tree, None)
        self.scopes: list[Scope] = [self.module_scope]
        self.star_imports: list[str] = []
        # Nodes grouped by type in source order, so rules are dispatched without
        # another walk; string spans feed comment detection.
        self.nodes_by_type: defaultdict[type, list[ast.AST]] = defaultdict(list)
        self.string_spans: dict[int, list[tuple[int, int]]] = {}
        # Maps keyed by node or binding hash them by identity: no `id()` call per
        # look-up, and a key keeps its node alive, so a freed node's address,
        # reused by a new node, can never hit a stale entry.
        self._scope_of_node: dict[ast.AST, Scope] = {}  # Name/func node -> scope
        self._loads: defaultdict[str, list[ast.Name]] = defaultdict(list)  # name -> its loads, in source order
        # node -> parent node, kept beside the tree so the tree stays acyclic
        # (freed by reference counting; see `release`).
        self._parents: dict[ast.AST, ast.AST | None] = {}
        self._resolved: dict[ast.AST, str | None] = {}
        self._binding_targets: dict[Binding, str | None] = {}  # -> binding_target()
        self._binding_names: dict[Binding, str | None] = {}  # -> resolve() of a read of the binding
        self._bindings_seen: dict[ast.Name, Binding | None] = {}  # -> binding_of()
        self._local_names: dict[str, str | None] = {}  # qualified -> local_name_for()
        self._function_kinds: dict[ast.AST, str | None] = {}
        self._calls_index: dict[ast.AST, list[ast.Call]] | None = None
        self._call_signatures: dict[ast.AST | None, _CallSignature | None] = {}  # arguments node -> _call_signature()
        self._attributes_by_name: dict[str, list[ast.Attribute]] | None = None
        self._imports: list[Binding] = []  # every import binding, any scope
        self._name_assignments: list[tuple[ast.stmt, ast.Name, ast.expr]] | None = None
        # `name = value` statements as the walk binds them, in source order (no
        # statement nests in another's value): name_assignments() reads no node again.
        self._plain_name_assignments: list[tuple[ast.Assign, ast.Name, ast.expr]] = []
        self._build()

    # ------------------------------------------------------------------ build
    def _build(self) -> None:
        limit = sys.getrecursionlimit()
        sys.setrecursionlimit(max(limit, 20000))
        try:
            self._parents[self.tree] = None
            self._visit_body(self.tree.body, self.tree, self.module_scope, fallback=False)
        finally:
            sys.setrecursionlimit(limit)
        self._uses_counted = False

    def _record(self, node: ast.AST, parent: ast.AST | None) -> None:
        self._parents[node] = parent
        if type(node) not in UNLISTED_TYPES:
            self.nodes_by_type[type(node)].append(node)

    def _visit_body(self, body: list[ast.stmt], parent: ast.AST, scope: Scope, fallback: bool) -> None:
        visit = self._visit
        for stmt in body:
            visit(stmt, parent, scope, fallback)

    def _visit_children(self, node: ast.AST, scope: Scope, fallback: bool) -> None:
        visit = self._visit
        for name in _CHILD_FIELDS.get(type(node)) or _child_fields(type(node)):
            value = getattr(node, name, None)
            if type(value) is list:
                for item in value:
                    if isinstance(item, ast.AST) and type(item) not in _LEAF_TYPES:
                        visit(item, node, scope, fallback)
            elif isinstance(value, ast.AST) and type(value) not in _LEAF_TYPES:
                visit(value, node, scope, fallback)

    def _visit(self, node: ast.AST, parent: ast.AST | None, scope: Scope, fallback: bool) -> None:
        # An Attribute's value and a BinOp's right operand, each its node's
        # last child, are walked by the next iteration rather than a call:
        # the walk's time is per call.
        while True:
            self._parents[node] = parent  # inline `_record`
            kind = type(node)
            if kind is _Name:  # Names and Constants are not listed by type (see UNLISTED_TYPES)
                # A load, without reading `ctx`: stored and deleted names are
                # reached through `_visit_target` instead.
                self._scope_of_node[node] = scope
                self._loads[node.id].append(node)
                return
            if kind is _Constant:
                if type(node.value) in _STRING_TYPES:
                    self._add_string_span(node)
                return
            self.nodes_by_type[kind].append(node)
            # The most frequent listed nodes are visited here, without a second
            # call per node.
            if kind is _Attribute:
                parent, node = node, node.value
            elif kind is _Call:
                visit = self._visit
                visit(node.func, node, scope, fallback)
                for argument in node.args:
                    visit(argument, node, scope, fallback)
                if node.keywords:
                    keyword_nodes = self.nodes_by_type[ast.keyword]
                    for keyword in node.keywords:  # as `_visit` would, without two calls per keyword
                        self._parents[keyword] = node
                        keyword_nodes.append(keyword)
                        visit(keyword.value, keyword, scope, fallback)
                return
            elif kind is _BinOp:
                self._visit(node.left, node, scope, fallback)
                parent, node = node, node.right
            else:
                _VISITS[kind](self, node, scope, fallback)
                return

    # Special visits by node type, each visiting the node's children.
    def _visit_joined_str(self, node: ast.JoinedStr, scope: Scope, fallback: bool) -> None:
        self._add_string_span(node)
        self._visit_children(node, scope, fallback)

    def _visit_global(self, node: ast.Global, scope: Scope, fallback: bool) -> None:
        scope.declared_global.update(node.names)

    def _visit_nonlocal(self, node: ast.Nonlocal, scope: Scope, fallback: bool) -> None:
        scope.declared_nonlocal.update(node.names)

    def _visit_assign(self, node: ast.Assign, scope: Scope, fallback: bool) -> None:
        value, targets = node.value, node.targets
        self._visit(value, node, scope, fallback)
        position = (node.end_lineno, node.end_col_offset)
        if len(targets) == 1 and type(targets[0]) is _Name:  # most assignments: bound here, as `_visit_target` would
            target = targets[0]
            self._parents[target] = node
            binding = Binding(target.id, "assign", position, target, scope, None, fallback)
            self._plain_name_assignments.append((node, target, value))
            if type(value) is _Name or type(value) is _Attribute:
                binding.alias_of = value
            return
        for target in targets:
            self._visit_target(target, node, scope, position, fallback)

    def _visit_ann_aug_assign(self, node: ast.AST, scope: Scope, fallback: bool) -> None:
        if node.value is not None:
            self._visit(node.value, node, scope, fallback)
        if type(node) is ast.AnnAssign:
            self._visit(node.annotation, node, scope, fallback)
        self._visit_target(node.target, node, scope, _position(node, end=True), fallback)

    def _visit_named_expr(self, node: ast.NamedExpr, scope: Scope, fallback: bool) -> None:
        self._visit(node.value, node, scope, fallback)
        owner = scope
        while owner.kind == "comprehension" and owner.parent is not None:
            owner = owner.parent  # PEP 572: binds in the enclosing scope
        self._visit_target(node.target, node, owner, _position(node, end=True), fallback)

    def _visit_for(self, node: ast.AST, scope: Scope, fallback: bool) -> None:
        self._visit(node.iter, node, scope, fallback)
        self._visit_target(node.target, node, scope, _position(node.target), fallback, kind="loop")
        self._visit_body(node.body, node, scope, fallback)
        self._visit_body(node.orelse, node, scope, fallback)

    def _visit_except_handler(self, node: ast.ExceptHandler, scope: Scope, fallback: bool) -> None:
        if node.type is not None:
            self._visit(node.type, node, scope, fallback)
        if node.name:
            Binding(node.name, "except", _position(node), node, scope)
        self._visit_body(node.body, node, scope, fallback)

    # Frequent expression nodes (after those `_visit` handles itself), without
    # `_visit_children`'s field-by-field search: the walk's time is per node.
    def _visit_value(self, node: ast.AST, scope: Scope, fallback: bool) -> None:
        """Expr, Starred, Await: one `value` child (a call's keywords are walked in `_visit`)."""
        self._visit(node.value, node, scope, fallback)

    def _visit_compare(self, node: ast.Compare, scope: Scope, fallback: bool) -> None:
        visit = self._visit
        visit(node.left, node, scope, fallback)
        for comparator in node.comparators:
            visit(comparator, node, scope, fallback)

    def _visit_subscript(self, node: ast.Subscript, scope: Scope, fallback: bool) -> None:
        self._visit(node.value, node, scope, fallback)
        self._visit(node.slice, node, scope, fallback)

    def _visit_optional_value(self, node: ast.AST, scope: Scope, fallback: bool) -> None:
        """Return, Yield: a `value` child or None."""
        if node.value is not None:
            self._visit(node.value, node, scope, fallback)

    def _visit_formatted_value(self, node: ast.FormattedValue, scope: Scope, fallback: bool) -> None:
        self._visit(node.value, node, scope, fallback)
        if node.format_spec is not None:
            self._visit(node.format_spec, node, scope, fallback)

    def _visit_if(self, node: ast.AST, scope: Scope, fallback: bool) -> None:
        """If, While: as `_visit_children` would, it skips their bodies' Pass, Break and Continue."""
        visit = self._visit
        visit(node.test, node, scope, fallback)
        for statement in (*node.body, *node.orelse):
            if type(statement) not in _LEAF_TYPES:
                visit(statement, node, scope, fallback)

    def _visit_if_exp(self, node: ast.IfExp, scope: Scope, fallback: bool) -> None:
        visit = self._visit
        visit(node.test, node, scope, fallback)
        visit(node.body, node, scope, fallback)
        visit(node.orelse, node, scope, fallback)

    def _visit_elements(self, node: ast.AST, scope: Scope, fallback: bool) -> None:
        """Tuple, List, Set."""
        visit = self._visit
        for element in node.elts:
            visit(element, node, scope, fallback)

    def _visit_alias(self, node: ast.alias, scope: Scope, fallback: bool) -> None:
        """No child nodes."""

    def _visit_match_capture(self, node: ast.AST, scope: Scope, fallback: bool) -> None:
        if node.name:
            Binding(node.name, "match", _position(node), node, scope)
        self._visit_children(node, scope, fallback)

    def _visit_match_mapping(self, node: ast.AST, scope: Scope, fallback: bool) -> None:
        if node.rest:
            Binding(node.rest, "match", _position(node), node, scope)
        self._visit_children(node, scope, fallback)

    def _visit_withitem(self, node: ast.withitem, scope: Scope, fallback: bool) -> None:
        self._visit(node.context_expr, node, scope, fallback)
        if node.optional_vars is not None:
            self._visit_target(node.optional_vars, node, scope, _position(node.context_expr, end=True), fallback, kind="with")

    def _visit_target(
        self, target: ast.AST, parent: ast.AST, scope: Scope, position: tuple[int, int] | None, fallback: bool,
        kind: str = "assign",
    ) -> None:
        """Bind the names `target` assigns (`position`: where the bindings take
        effect; None: at each name, as `del` binds); attribute and subscript
        targets read their base."""
        if type(target) is _Name:  # most targets: bound without `_record`'s listing test
            self._parents[target] = parent
            at = position if position is not None else (target.lineno, target.col_offset)
            Binding(target.id, kind, at, target, scope, None, fallback)
            return
        self._record(target, parent)
        if isinstance(target, (ast.Tuple, ast.List)):
            for element in target.elts:
                self._visit_target(element, target, scope, position, fallback, kind)
        elif isinstance(target, ast.Starred):
            self._visit_target(target.value, target, scope, position, fallback, kind)
        else:
            self._visit_children(target, scope, fallback)

    def _visit_delete(self, node: ast.Delete, scope: Scope, fallback: bool) -> None:
        for target in node.targets:
            self._visit_target(target, node, scope, None, fallback)

    def _add_string_span(self, node: ast.AST) -> None:
        big = 1 << 30
        for row in range(node.lineno, node.end_lineno + 1):
            lo = node.col_offset if row == node.lineno else 0
            hi = node.end_col_offset if row == node.end_lineno else big
            self.string_spans.setdefault(row, []).append((lo, hi))

    def _visit_arguments(self, args: ast.arguments, owner: ast.AST, outer: Scope, inner: Scope, fallback: bool) -> None:
        self._record(args, owner)
        visit = self._visit
        for default in args.defaults:
            visit(default, args, outer, fallback)
        for default in args.kw_defaults:
            if default is not None:
                visit(default, args, outer, fallback)
        position = (owner.lineno, owner.col_offset)
        parents, arg_nodes = self._parents, self.nodes_by_type[ast.arg]
        for arg in (*args.posonlyargs, *args.args, *args.kwonlyargs, args.vararg, args.kwarg):
            if arg is not None:
                parents[arg] = args  # inline `_record`
                arg_nodes.append(arg)
                if arg.annotation is not None:
                    visit(arg.annotation, arg, outer, fallback)
                Binding(arg.arg, "param", position, arg, inner)

    def _visit_function(self, node: ast.FunctionDef, scope: Scope, fallback: bool) -> None:
        for decorator in node.decorator_list:
            self._visit(decorator, node, scope, fallback)
        if node.returns is not None:
            self._visit(node.returns, node, scope, fallback)
        inner = Scope("function", node, scope)
        self.scopes.append(inner)
        self._scope_of_node[node] = inner
        self._visit_arguments(node.args, node, scope, inner, fallback)
        self._visit_body(node.body, node, inner, False)
        Binding(node.name, "def", (node.lineno, node.col_offset), node, scope, None, fallback)

    def _visit_class(self, node: ast.ClassDef, scope: Scope, fallback: bool) -> None:
        for expr in list(node.decorator_list) + list(node.bases) + [k.value for k in node.keywords]:
            self._visit(expr, node, scope, fallback)
        inner = Scope("class", node, scope)
        self.scopes.append(inner)
        self._scope_of_node[node] = inner
        self._visit_body(node.body, node, inner, False)
        Binding(node.name, "class", (node.lineno, node.col_offset), node, scope, None, fallback)

    def _visit_lambda(self, node: ast.Lambda, scope: Scope, fallback: bool) -> None:
        inner = Scope("lambda", node, scope)
        self.scopes.append(inner)
        self._scope_of_node[node] = inner
        self._visit_arguments(node.args, node, scope, inner, fallback)
        self._visit(node.body, node, inner, fallback)

    def _visit_comprehension(self, node: ast.AST, scope: Scope, fallback: bool) -> None:
        inner = Scope("comprehension", node, scope)
        self.scopes.append(inner)
        self._scope_of_node[node] = inner
        for index, generator in enumerate(node.generators):
            self._record(generator, node)
            # The first iterable is evaluated in the enclosing scope.
            self._visit(generator.iter, generator, scope if index == 0 else inner, fallback)
            self._visit_target(generator.target, generator, inner, _position(node), fallback, kind="comprehension")
            for condition in generator.ifs:
                self._visit(condition, generator, inner, fallback)
        elements = [node.key, node.value] if isinstance(node, ast.DictComp) else [node.elt]
        for element in elements:
            self._visit(element, node, inner, fallback)

    def _visit_import(self, node: ast.Import | ast.ImportFrom, scope: Scope, fallback: bool) -> None:
        position = _position(node, end=True)
        if isinstance(node, ast.Import):
            for alias in node.names:
                self._record(alias, node)
                if alias.asname:
                    name, target = alias.asname, alias.name
                else:
                    name = target = alias.name.split(".")[0]
                self._imports.append(Binding(name, "import", position, alias, scope, target, fallback))
            return
        source = absolute_module(self.module_name, self.is_package, node.level, node.module)
        for alias in node.names:
            self._record(alias, node)
            if alias.name == "*":
                if source:
                    self.star_imports.append(source)
                continue
            target = f"{source}.{alias.name}" if source else None
            self._imports.append(Binding(alias.asname or alias.name, "import", position, alias, scope, target,
                                          fallback))

    def _visit_try(self, node: ast.Try, scope: Scope, fallback: bool) -> None:
        self._visit_body(node.body, node, scope, fallback)
        for handler in node.handlers:
            self._record(handler, node)
            handler_fallback = fallback or _is_import_error_handler(handler)
            if handler.type is not None:
                self._visit(handler.type, handler, scope, fallback)
            if handler.name:
                Binding(handler.name, "except", _position(handler), handler, scope)
            self._visit_body(handler.body, handler, scope, handler_fallback)
        self._visit_body(node.orelse, node, scope, fallback)
        self._visit_body(node.finalbody, node, scope, fallback)

    def release(self) -> None:
        """Break the reference cycles the model puts into the tree.

        Scope <-> binding links make every model cyclic, so without this
        each checked file waits for the cyclic garbage collector,
        whose full passes over a heap of old trees dominate a long run. After
        `release()` the model answers no more questions.
        """
        self._parents.clear()
        for scope in self.scopes:
            scope.bindings.clear()
            scope.outer.clear()
        self.scopes.clear()
        self.nodes_by_type.clear()
        self._scope_of_node.clear()
        self._loads.clear()
        self._resolved.clear()
        self._binding_targets.clear()
        self._binding_names.clear()
        self._bindings_seen.clear()
        self._local_names.clear()
        self._function_kinds.clear()
        self._call_signatures.clear()
        self._imports.clear()
        self._name_assignments = None
        self._plain_name_assignments.clear()

    def count_uses(self) -> None:
        """Fill `Binding.used`; only fixes need it, so it is not done eagerly."""
        if self._uses_counted:
            return
        self._uses_counted = True
        for loads in self._loads.values():
            for node in loads:
                binding = self.binding_of(node)
                if binding is not None:
                    binding.used += 1

    # -------------------------------------------------------------- queries
    def nodes(self, kind: type) -> list[ast.AST]:
        """The module's nodes of one type, in source order (not Name or Constant: see UNLISTED_TYPES)."""
        if kind in UNLISTED_TYPES:
            raise ValueError(f"the model does not list {kind.__name__} nodes; use loads_of() or bindings")
        return self.nodes_by_type.get(kind, [])

    def attributes_by_name(self) -> dict[str, list[ast.Attribute]]:
        """Attribute nodes grouped by `.attr`, each group in source order: rules
        that look for a few attribute names skip the rest. Grouped on first request."""
        if self._attributes_by_name is None:
            groups: defaultdict[str, list[ast.Attribute]] = defaultdict(list)
            for node in self.nodes(ast.Attribute):
                groups[node.attr].append(node)
            self._attributes_by_name = dict(groups)
        return self._attributes_by_name

    def loaded_names(self) -> Iterable[str]:
        """Every name read somewhere in the module (`x` of a load of `x`)."""
        return self._loads.keys()

    def loads_of(self, name: str) -> list[ast.Name]:
        """The reads of `name`, in source order (whatever binding each sees)."""
        return self._loads.get(name, [])

    def parent(self, node: ast.AST) -> ast.AST | None:
        return self._parents.get(node)

    def ancestors(self, node: ast.AST) -> Iterator[ast.AST]:
        current = self.parent(node)
        while current is not None:
            yield current
            current = self.parent(current)

    def binding_of(self, node: ast.Name) -> Binding | None:
        """The binding a loaded name refers to at this point, if any."""
        found = self._bindings_seen.get(node, _UNSEEN)  # several rules ask about the same callee
        if found is not _UNSEEN:
            return found
        scope = self._scope_of_node.get(node)
        name = node.id
        if scope is None:
            found = None
        elif name in scope.bindings:
            found = self._lookup(name, scope, (node.lineno, node.col_offset))
        else:
            found = scope.outer.get(name, _UNSEEN)
            if found is _UNSEEN:
                found = scope.outer[name] = self._lookup(name, scope, (node.lineno, node.col_offset))
        self._bindings_seen[node] = found
        return found

    def _lookup(self, name: str, scope: Scope, position: tuple[int, int]) -> Binding | None:
        current: Scope | None = scope
        same_scope = True
        if name in scope.declared_global:
            current, same_scope = self.module_scope, False
        while current is not None:
            if current.kind == "class" and not same_scope:
                current = current.parent  # class bodies are not enclosing scopes
                continue
            bindings = current.bindings.get(name)
            if bindings and len(bindings) == 1:  # the common case, as below without the lists
                only = bindings[0]
                if not same_scope or only.position <= position or current.kind != "module":
                    return only
            elif bindings:
                primary = [b for b in bindings if not b.fallback] or bindings
                if same_scope:
                    preceding = [b for b in primary if b.position <= position]
                    if preceding:
                        return preceding[-1]
                    if current.kind != "module":
                        return primary[0]  # a local read before assignment (loop-carried)
                else:
                    return primary[-1]  # a nested scope sees the final binding
            if current.kind == "module":
                return None
            current = current.parent
            same_scope = False
        return None

    def resolve(self, node: ast.AST) -> str | None:
        """Qualified name of a Name/Attribute expression, following imports.

        `fx.rocdl.s_waitcnt` with `import flydsl.expr as fx` resolves to
        `flydsl.expr.rocdl.s_waitcnt`; a rebound or local name resolves to None.
        """
        resolved = self._resolved
        result = resolved.get(node, _UNSEEN)  # most calls: rules ask about the same callee
        if result is not _UNSEEN:
            return result
        resolved[node] = None  # guards against alias cycles
        kind = type(node)
        if kind is _Attribute:
            base = self.resolve(node.value)
            result = f"{base}.{node.attr}" if base else None
            # `canonical` follows only FOLLOWED_NAMES leaves: most attributes need no call.
            if result is not None and node.attr in FOLLOWED_NAMES:
                result = self.project.canonical(result)
        elif kind is _Name:
            binding = self.binding_of(node)
            if binding is not None:
                # Every read of a binding resolves alike: its target is canonicalized once.
                result = self._binding_names.get(binding, _UNSEEN)
                if result is _UNSEEN:
                    target = self.binding_target(binding)
                    result = self._binding_names[binding] = None if target is None else self.project.canonical(target)
            elif node.id in _BUILTINS or node not in self._scope_of_node:
                result = None
            else:
                result = self._from_star_import(node.id)
                if result is not None:
                    result = self.project.canonical(result)
        else:
            result = None
        resolved[node] = result
        return result

    def binding_target(self, binding: Binding) -> str | None:
        """The qualified name every use of `binding` refers to (project
        re-exports not yet followed), else None: an import's target, what an
        alias `x = fx.max` names, what every caller passes for a parameter."""
        target = self._binding_targets.get(binding, _UNSEEN)
        if target is not _UNSEEN:
            return target
        self._binding_targets[binding] = None  # guards against alias cycles
        target = None
        if binding.kind == "import" and binding.target:
            target = binding.target
        elif binding.alias_of is not None and self.is_single_binding(binding):
            target = self.resolve(binding.alias_of)
        elif binding.kind == "param" and self.is_single_binding(binding):
            target = self._passed_argument(binding)
        self._binding_targets[binding] = target
        return target

    def _passed_argument(self, binding: Binding) -> str | None:
        """The one name every call of a plain function passes for this parameter.

        Legacy helpers take dialect modules as arguments (`epilog(arith, vector)`);
        when each call in this module passes (or defaults to) the same resolvable
        name, the parameter is that name. Methods and unresolved calls give None.
        """
        signature = self._call_signature(self.parent(binding.node))
        if signature is None:
            return None
        positions, defaults, calls = signature
        if not calls:
            return self._dialect_parameter(binding)
        name = binding.name
        index = positions.get(name)
        targets = set()
        for call in calls:
            if call is None:  # passes *args or **kwargs: what it passes is unknown
                return None
            if index is not None and index < len(call.args):
                passed = call.args[index]
            else:
                passed = next((k.value for k in call.keywords if k.arg == name), defaults.get(name))
            target = self.resolve(passed) if passed is not None else None
            if target is None:
                return None
            targets.add(target)
        return targets.pop() if len(targets) == 1 else None

    def _call_signature(self, arguments: ast.AST | None) -> _CallSignature | None:
        """What `_passed_argument` needs of a plain function, found once for
        all its parameters: each positional parameter's index, each default,
        and its calls (None for a call that unpacks). None for a lambda, a
        method or a traced function."""
        signature = self._call_signatures.get(arguments, _UNSEEN)
        if signature is not _UNSEEN:
            return signature
        function = self.parent(arguments) if isinstance(arguments, ast.arguments) else None
        signature = None
        if (isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef))
                and self._scope_of_node[function].parent.kind != "class" and not self.function_kind(function)):
            positional = [arg.arg for arg in arguments.posonlyargs + arguments.args]
            defaults = dict(zip(reversed(positional), reversed(arguments.defaults)))
            defaults.update((arg.arg, value) for arg, value in zip(arguments.kwonlyargs, arguments.kw_defaults)
                            if value)
            calls = [None if _unpacks(call) else call for call in self.calls_of(function)]
            signature = ({name: index for index, name in enumerate(positional)}, defaults, calls)
        self._call_signatures[arguments] = signature
        return signature

    def _dialect_parameter(self, binding: Binding) -> str | None:
        """A helper with no caller in this module, taking a keyword-only,
        default-less parameter named exactly like a FlyDSL dialect module
        (`def epilog(acc, *, vector, arith)`), in a file that uses FlyDSL: its
        callers elsewhere hand it that module as `vector=vector`. Positional or
        defaulted parameters keep shadowing the name."""
        target = DIALECT_PARAMETERS.get(binding.name)
        arguments = self.parent(binding.node)
        if target is None or getattr(binding.node, "annotation", None) is not None:
            return None
        keyword_only = dict(zip((a.arg for a in arguments.kwonlyargs), arguments.kw_defaults))
        if binding.name not in keyword_only or keyword_only[binding.name] is not None:
            return None
        if not any(b.target and b.target.startswith("flydsl.") for b in self.import_bindings()):
            return None
        return target

    def calls_of(self, function: ast.AST) -> list[ast.Call]:
        """Calls of a def of this module by its plain name (`helper(...)`)."""
        return self._calls_by_function().get(function, [])

    def _calls_by_function(self) -> dict[ast.AST, list[ast.Call]]:
        """def node -> calls of it by plain name in this module (built once)."""
        if self._calls_index is None:
            index: dict[ast.AST, list[ast.Call]] = {}
            binding_of = self.binding_of
            for call in self.nodes(ast.Call):
                func = call.func
                if type(func) is _Name:  # the walk scopes exact Names only (see `_visit`)
                    callee = binding_of(func)
                    if callee is not None and callee.kind == "def":
                        calls = index.get(callee.node)
                        if calls is None:
                            index[callee.node] = [call]
                        else:
                            calls.append(call)
            self._calls_index = index
        return self._calls_index

    def is_single_binding(self, binding: Binding) -> bool:
        """Whether `binding` is the only binding of its name in its scope."""
        return binding.scope is not None and len(binding.scope.bindings[binding.name]) == 1

    def _from_star_import(self, name: str) -> str | None:
        unknown = []
        for module in self.star_imports:
            summary = self.project.summary(module)
            if summary is None:
                unknown.append(module)
            elif name in summary.defined or name in summary.imported:
                return f"{module}.{name}"
        # A name no one binds can only come from a star import we cannot read.
        return f"{unknown[0]}.{name}" if len(unknown) == 1 else None

    def resolves_to(self, node: ast.AST, *qualified: str) -> bool:
        return self.resolve(node) in qualified

    def call_name(self, node: ast.AST) -> str | None:
        return self.resolve(node.func) if isinstance(node, ast.Call) else None

    def local_name_for(self, qualified: str) -> str | None:
        """A module-level name (or dotted path) that reaches `qualified` here.

        Fixes use it to spell a replacement the way the file already imports it,
        e.g. `fx.max` when the file has `import flydsl.expr as fx`.
        """
        if qualified not in self._local_names:
            self._local_names[qualified] = self._local_name_for(qualified)
        return self._local_names[qualified]

    def _local_name_for(self, qualified: str) -> str | None:
        best: str | None = None
        for name, bindings in self.module_scope.bindings.items():
            binding = [b for b in bindings if not b.fallback][-1:] or bindings[-1:]
            target = binding[0].target if binding[0].kind == "import" else None
            if not target:
                continue
            if target == qualified:
                return name
            if qualified.startswith(target + "."):
                candidate = name + qualified[len(target):]
                if best is None or len(candidate) < len(best):
                    best = candidate
        return best

    def is_bound_anywhere(self, name: str) -> bool:
        return any(name in scope.bindings for scope in self.scopes)

    def is_bound_anywhere_else(self, binding: Binding) -> bool:
        """Whether another import also binds this name (then keep both)."""
        return any(
            other is not binding and other.kind == "import"
            for scope in self.scopes
            for other in scope.bindings.get(binding.name, ())
        )

    # ------------------------------------------------------------- kernels
    def function_kind(self, node: ast.AST) -> str | None:
        """'kernel' or 'jit' for a FlyDSL-decorated function, else None."""
        if node not in self._function_kinds:
            kind = None
            for decorator in getattr(node, "decorator_list", ()):
                target = decorator.func if isinstance(decorator, ast.Call) else decorator
                kind = KERNEL_DECORATORS.get(self.resolve(target) or "") or kind
            self._function_kinds[node] = kind
        return self._function_kinds[node]

    def traced_function(self, node: ast.AST) -> ast.AST | None:
        """The outermost @flyc.kernel / @flyc.jit function containing `node`."""
        found = None
        for ancestor in self.ancestors(node):
            if isinstance(ancestor, (ast.FunctionDef, ast.AsyncFunctionDef)) and self.function_kind(ancestor):
                found = ancestor
        return found

    def in_traced_code(self, node: ast.AST) -> bool:
        return self.traced_function(node) is not None

    def enclosing_function(self, node: ast.AST) -> ast.AST | None:
        for ancestor in self.ancestors(node):
            if isinstance(ancestor, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
                return ancestor
        return None

    def name_assignments(self) -> list[tuple[ast.stmt, ast.Name, ast.expr]]:
        """(statement, target, value) of every `name = value` and `name: T = value`,
        the plain assignments first (rules visiting them report in any order); listed once."""
        if self._name_assignments is None:
            self._name_assignments = self._plain_name_assignments + [
                (node, node.target, node.value) for node in self.nodes(ast.AnnAssign)
                if type(node.target) is _Name and node.value is not None]
        return self._name_assignments

    def import_bindings(self) -> list[Binding]:
        """Every import binding of the module, in any scope."""
        return self._imports


def _unpacks(call: ast.Call) -> bool:
    """Whether a call passes `*args` or `**kwargs`."""
    # Loops, not any() over generators: asked of every call of every plain function.
    for argument in call.args:
        if isinstance(argument, ast.Starred):
            return True
    for keyword in call.keywords:
        if keyword.arg is None:
            return True
    return False


# Node types with no fields (expression contexts, operators): shared instances
# in CPython's trees, so they are neither recorded nor given a parent.
_LEAF_TYPES = frozenset(
    cls for cls in vars(ast).values()
    if isinstance(cls, type) and issubclass(cls, ast.AST) and not cls._fields
    and cls not in (ast.Name, ast.Constant, ast.alias, ast.Global, ast.Nonlocal)
)

# Fields that hold no node in any Python version (identifiers, flags, contexts,
# operators): the walk skips them. Others are checked, so a miss here is only slower.
_NON_NODE_FIELDS = frozenset({"id", "attr", "arg", "asname", "module", "level", "kind", "conversion", "is_async",
                              "simple", "type_comment", "ctx", "op"})
_CHILD_FIELDS: dict[type, tuple[str, ...]] = {}


def _child_fields(kind: type) -> tuple[str, ...]:
    fields = _CHILD_FIELDS.get(kind)
    if fields is None:
        fields = _CHILD_FIELDS[kind] = tuple(f for f in kind._fields if f not in _NON_NODE_FIELDS)
    return fields


_VISITS = {
    ast.JoinedStr: SemanticModel._visit_joined_str,
    ast.FunctionDef: SemanticModel._visit_function,
    ast.AsyncFunctionDef: SemanticModel._visit_function,
    ast.ClassDef: SemanticModel._visit_class,
    ast.Lambda: SemanticModel._visit_lambda,
    ast.ListComp: SemanticModel._visit_comprehension,
    ast.SetComp: SemanticModel._visit_comprehension,
    ast.GeneratorExp: SemanticModel._visit_comprehension,
    ast.DictComp: SemanticModel._visit_comprehension,
    ast.Import: SemanticModel._visit_import,
    ast.ImportFrom: SemanticModel._visit_import,
    ast.Try: SemanticModel._visit_try,
    ast.Global: SemanticModel._visit_global,
    ast.Nonlocal: SemanticModel._visit_nonlocal,
    ast.Assign: SemanticModel._visit_assign,
    ast.AnnAssign: SemanticModel._visit_ann_aug_assign,
    ast.AugAssign: SemanticModel._visit_ann_aug_assign,
    ast.NamedExpr: SemanticModel._visit_named_expr,
    ast.For: SemanticModel._visit_for,
    ast.AsyncFor: SemanticModel._visit_for,
    ast.ExceptHandler: SemanticModel._visit_except_handler,
    ast.alias: SemanticModel._visit_alias,
    ast.Expr: SemanticModel._visit_value,
    ast.Starred: SemanticModel._visit_value,
    ast.Await: SemanticModel._visit_value,
    ast.Return: SemanticModel._visit_optional_value,
    ast.Yield: SemanticModel._visit_optional_value,
    ast.FormattedValue: SemanticModel._visit_formatted_value,
    ast.If: SemanticModel._visit_if,
    ast.While: SemanticModel._visit_if,
    ast.IfExp: SemanticModel._visit_if_exp,
    ast.Compare: SemanticModel._visit_compare,
    ast.Subscript: SemanticModel._visit_subscript,
    ast.Tuple: SemanticModel._visit_elements,
    ast.List: SemanticModel._visit_elements,
    ast.Set: SemanticModel._visit_elements,
    ast.withitem: SemanticModel._visit_withitem,
    ast.Delete: SemanticModel._visit_delete,
}
if sys.version_info >= (3, 11):
    _VISITS[ast.TryStar] = SemanticModel._visit_try
if sys.version_info >= (3, 10):
    _VISITS[ast.MatchAs] = SemanticModel._visit_match_capture
    _VISITS[ast.MatchStar] = SemanticModel._visit_match_capture
    _VISITS[ast.MatchMapping] = SemanticModel._visit_match_mapping
# Every other node type but those `_visit` handles itself: its children, field
# by field (a table hit for any node costs less than a miss and a test).
_VISITS.update((cls, SemanticModel._visit_children) for cls in vars(ast).values()
               if isinstance(cls, type) and issubclass(cls, ast.AST) and cls not in _VISITS
               and cls not in (ast.Attribute, ast.Call, ast.BinOp))
