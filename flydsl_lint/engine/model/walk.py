"""The one walk of a module's tree: parents, scopes and bindings, reads, string spans, nodes by type."""

from __future__ import annotations

import ast
import sys

from ..project import absolute_module
from .scopes import Binding, Scope


def _position(node: ast.AST, end: bool = False) -> tuple[int, int]:
    if end:
        return (node.end_lineno, node.end_col_offset)
    return (node.lineno, node.col_offset)



def _parallel_assignment(target: ast.expr, value: ast.expr) -> bool:
    """`a, b = x, y`: names bound one to one to the elements of a tuple or list display."""
    sequences = (ast.Tuple, ast.List)
    return (type(target) in sequences and type(value) in sequences and len(target.elts) == len(value.elts)
            and all(type(name) is ast.Name for name in target.elts)
            and not any(type(element) is ast.Starred for element in value.elts))


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


# What the walk records (SemanticModel.__init__ sets each up).
_WALK_RECORDS = ("module_scope", "scopes", "star_imports", "nodes_by_type", "string_spans", "strings",
                 "_scope_of_node", "_loads", "_parents", "_imports", "_plain_name_assignments", "_uses_counted")


class _Walk:
    """Builds the model in a single walk of the tree (part of `SemanticModel`)."""

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

    def _share_walk(self, other: _Walk) -> None:
        """Take what `other`'s walk of the same tree, module name and package flag recorded."""
        for record in _WALK_RECORDS:
            setattr(self, record, getattr(other, record))

    def _record(self, node: ast.AST, parent: ast.AST | None) -> None:
        self._parents[node] = parent
        if type(node) not in UNLISTED_TYPES:
            self.nodes_by_type[type(node)].append(node)

    def _visit_body(self, body: list[ast.stmt], parent: ast.AST, scope: Scope, fallback: bool) -> None:
        for stmt in body:
            self._visit(stmt, parent, scope, fallback)

    def _visit(self, node: ast.AST, parent: ast.AST | None, scope: Scope, fallback: bool) -> None:
        self._parents[node] = parent
        kind = type(node)
        if kind is ast.Name:  # not listed by type (see UNLISTED_TYPES)
            # A load, without reading `ctx`: stored and deleted names are
            # reached through `_visit_target` instead.
            self._scope_of_node[node] = scope
            self._loads[node.id].append(node)
            return
        if kind is ast.Constant:
            if isinstance(node.value, (str, bytes)):
                self._add_string_span(node)
                self.strings.add(node.value)
            return
        self.nodes_by_type[kind].append(node)
        visit = _VISITS.get(kind)
        if visit is not None:
            visit(self, node, scope, fallback)
            return
        # Any other node: its children, field by field. Walked here rather than
        # by a call of its own, as this is most nodes and the walk's time goes per call.
        for field in _CHILD_FIELDS[kind]:
            value = getattr(node, field, None)
            if type(value) is list:
                for item in value:
                    if type(item) in _WALKED_TYPES:
                        self._visit(item, node, scope, fallback)
            elif type(value) in _WALKED_TYPES:
                self._visit(value, node, scope, fallback)

    # Visits of the node types that bind names or need more than their children walked;
    # every other type's children are walked field by field.
    def _visit_joined_str(self, node: ast.JoinedStr, scope: Scope, fallback: bool) -> None:
        self._add_string_span(node)
        self._visit_body(node.values, node, scope, fallback)

    def _visit_global(self, node: ast.Global, scope: Scope, fallback: bool) -> None:
        scope.declared_global.update(node.names)

    def _visit_nonlocal(self, node: ast.Nonlocal, scope: Scope, fallback: bool) -> None:
        scope.declared_nonlocal.update(node.names)

    def _visit_assign(self, node: ast.Assign, scope: Scope, fallback: bool) -> None:
        value, targets = node.value, node.targets
        self._visit(value, node, scope, fallback)
        position = (node.end_lineno, node.end_col_offset)
        if len(targets) == 1 and type(targets[0]) is ast.Name:  # most assignments: bound here, as `_visit_target` would
            target = targets[0]
            self._parents[target] = node  # a Name: not listed by type
            binding = Binding(target.id, "assign", position, target, scope, None, fallback)
            self._plain_name_assignments.append((node, target, value))
            if type(value) is ast.Name or type(value) is ast.Attribute:
                binding.alias_of = value
            return
        if len(targets) == 1 and _parallel_assignment(targets[0], value):  # `i32, i64 = T.i32, T.i64`
            self._record(targets[0], node)
            for target, element in zip(targets[0].elts, value.elts):
                self._parents[target] = targets[0]
                binding = Binding(target.id, "assign", position, target, scope, None, fallback)
                if type(element) is ast.Name or type(element) is ast.Attribute:
                    binding.alias_of = element
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










    def _visit_match_capture(self, node: ast.AST, scope: Scope, fallback: bool) -> None:
        """MatchAs (`case [x]`, `case P() as x`) and MatchStar (`case [*rest]`)."""
        if node.name:
            Binding(node.name, "match", _position(node), node, scope)
        if getattr(node, "pattern", None) is not None:
            self._visit(node.pattern, node, scope, fallback)

    def _visit_match_mapping(self, node: ast.AST, scope: Scope, fallback: bool) -> None:
        if node.rest:
            Binding(node.rest, "match", _position(node), node, scope)
        self._visit_body(node.keys, node, scope, fallback)
        self._visit_body(node.patterns, node, scope, fallback)

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
        targets are walked as reads of their parts."""
        kind_of_target = type(target)
        if kind_of_target is ast.Name:
            self._parents[target] = parent  # a Name: not listed by type
            at = position if position is not None else (target.lineno, target.col_offset)
            Binding(target.id, kind, at, target, scope, None, fallback)
        elif kind_of_target is ast.Tuple or kind_of_target is ast.List:
            self._record(target, parent)
            for element in target.elts:
                self._visit_target(element, target, scope, position, fallback, kind)
        elif kind_of_target is ast.Starred:
            self._record(target, parent)
            self._visit_target(target.value, target, scope, position, fallback, kind)
        else:
            self._visit(target, parent, scope, fallback)

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
        for default in args.defaults:
            self._visit(default, args, outer, fallback)
        for default in args.kw_defaults:
            if default is not None:
                self._visit(default, args, outer, fallback)
        position = (owner.lineno, owner.col_offset)
        for arg in (*args.posonlyargs, *args.args, *args.kwonlyargs, args.vararg, args.kwarg):
            if arg is not None:
                self._record(arg, args)
                if arg.annotation is not None:
                    self._visit(arg.annotation, arg, outer, fallback)
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
        for expr in (*node.decorator_list, *node.bases, *node.keywords):
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


# Node types with no fields (expression contexts, operators): shared instances
# in CPython's trees, so they are neither recorded nor given a parent.
_LEAF_TYPES = frozenset(
    cls for cls in vars(ast).values()
    if isinstance(cls, type) and issubclass(cls, ast.AST) and not cls._fields
    and cls not in (ast.Name, ast.Constant, ast.alias, ast.Global, ast.Nonlocal)
)
_NODE_TYPES = frozenset(cls for cls in vars(ast).values() if isinstance(cls, type) and issubclass(cls, ast.AST))
# What the walk visits: a value of another type (None, an identifier, a leaf) is skipped.
_WALKED_TYPES = _NODE_TYPES - _LEAF_TYPES

# Fields that hold no node in any Python version (identifiers, flags, contexts,
# operators): the walk skips them. Others are checked, so a miss here is only slower.
_NON_NODE_FIELDS = frozenset({"id", "attr", "arg", "asname", "module", "level", "kind", "conversion", "is_async",
                              "simple", "type_comment", "ctx", "op"})
# Node type -> the fields `_visit` walks the children of that type in, worked out once.
_CHILD_FIELDS = {cls: tuple(field for field in cls._fields if field not in _NON_NODE_FIELDS) for cls in _NODE_TYPES}


def child_nodes(node: ast.AST) -> list[ast.AST]:
    """The children of `node` the walk visits (no contexts or operators), in field order."""
    children = []
    for field in _CHILD_FIELDS[type(node)]:
        value = getattr(node, field, None)
        if type(value) is list:
            children += [item for item in value if type(item) in _WALKED_TYPES]
        elif type(value) in _WALKED_TYPES:
            children.append(value)
    return children


_VISITS = {
    ast.JoinedStr: _Walk._visit_joined_str,
    ast.FunctionDef: _Walk._visit_function,
    ast.AsyncFunctionDef: _Walk._visit_function,
    ast.ClassDef: _Walk._visit_class,
    ast.Lambda: _Walk._visit_lambda,
    ast.ListComp: _Walk._visit_comprehension,
    ast.SetComp: _Walk._visit_comprehension,
    ast.GeneratorExp: _Walk._visit_comprehension,
    ast.DictComp: _Walk._visit_comprehension,
    ast.Import: _Walk._visit_import,
    ast.ImportFrom: _Walk._visit_import,
    ast.Try: _Walk._visit_try,
    ast.Global: _Walk._visit_global,
    ast.Nonlocal: _Walk._visit_nonlocal,
    ast.Assign: _Walk._visit_assign,
    ast.AnnAssign: _Walk._visit_ann_aug_assign,
    ast.AugAssign: _Walk._visit_ann_aug_assign,
    ast.NamedExpr: _Walk._visit_named_expr,
    ast.For: _Walk._visit_for,
    ast.AsyncFor: _Walk._visit_for,
    ast.withitem: _Walk._visit_withitem,
    ast.Delete: _Walk._visit_delete,
}
if sys.version_info >= (3, 11):
    _VISITS[ast.TryStar] = _Walk._visit_try
if sys.version_info >= (3, 10):
    _VISITS[ast.MatchAs] = _Walk._visit_match_capture
    _VISITS[ast.MatchStar] = _Walk._visit_match_capture
    _VISITS[ast.MatchMapping] = _Walk._visit_match_mapping
