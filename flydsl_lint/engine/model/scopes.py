"""Scopes and bindings: what the walk records of each name, and which binding a read sees."""

from __future__ import annotations

import ast

# Memo look-ups miss on every node's first question: `get` with this default
# costs less than a caught KeyError.
_UNSEEN = object()


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


class _Scopes:
    """Name look-up through the scopes the walk built (part of `SemanticModel`)."""

    def binding_of(self, node: ast.Name) -> Binding | None:
        """The binding a loaded name refers to at this point, if any."""
        seen = self._answers["binding_of"]
        found = seen.get(node, _UNSEEN)  # several rules ask about the same callee
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
        seen[node] = found
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

    def binding_made_by(self, target: ast.AST) -> Binding | None:
        """The binding a bound Name or a parameter (`ast.arg`) makes, in whichever scope it binds."""
        name = target.id if isinstance(target, ast.Name) else getattr(target, "arg", None)
        return next((binding for scope in self.scopes for binding in scope.bindings.get(name, ())
                     if binding.node is target), None)

    def is_single_binding(self, binding: Binding) -> bool:
        """Whether `binding` is the only binding of its name in its scope."""
        return binding.scope is not None and len(binding.scope.bindings[binding.name]) == 1

    def bindings_opened_by(self, node: ast.AST) -> dict[str, list[Binding]] | None:
        """The bindings of the scope a def, class, lambda or comprehension (or the module's
        tree) opens; None for any other node."""
        scope = next((scope for scope in self.scopes if scope.node is node), None)
        return None if scope is None else scope.bindings

    def is_bound_anywhere(self, name: str) -> bool:
        return any(name in scope.bindings for scope in self.scopes)

    def is_bound_anywhere_else(self, binding: Binding) -> bool:
        """Whether another import also binds this name (then keep both)."""
        return any(
            other is not binding and other.kind == "import"
            for scope in self.scopes
            for other in scope.bindings.get(binding.name, ())
        )

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
