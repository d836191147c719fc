"""Reaching bindings: the one binding of a name bound more than once that a read provably sees."""

from __future__ import annotations

import ast

from .scopes import Binding

# The statement lists a statement may stand in (a `while` body is one too: its test is no statement).
_BLOCK_FIELDS = ("body", "orelse", "finalbody")


class _ReachingBindings:
    """Straight-line reaching bindings (part of `SemanticModel`)."""

    def reaching_binding(self, read: ast.Name) -> Binding | None:
        """The binding every execution reaching `read` made last, when it is provably one: in a
        function's own scope, an assignment earlier in the statement list of the read's statement
        (the parameter, for a read in the function's top-level block; a `for` target, for a read in
        the loop's own body), with no binding of the name in between. Any path to the read runs
        down that list, so through the assignment, and nothing after it rebinds the name before
        the read. In traced code no compound statement in between may read the name either: the
        rewriter carries a name a dynamic region stores into, subscripts or calls a method of, and
        rebinds it after the region (`_collect_assigned_vars` in compiler/ast_rewriter.py). None
        when not provably one."""
        binding = self.binding_of(read)
        if binding is None or binding.scope.kind != "function" or self._scope_of_node.get(read) is not binding.scope:
            return None
        statement = read
        while not isinstance(statement, ast.stmt):
            statement = self.parent(statement)
        if isinstance(statement, ast.While):
            return None  # its test is read again after the body
        return self._reaching(binding.scope, binding.name, statement, (read.lineno, read.col_offset))

    def reaching_assigned_value(self, read: ast.Name) -> ast.expr | None:
        """The value of the plain `x = v` whose binding `read` provably sees: the name's one
        binding (`single_assigned_value`), or the one `reaching_binding` gives."""
        value = self.single_assigned_value(read)
        if value is not None:
            return value
        binding = self.reaching_binding(read)
        if binding is None or binding.kind != "assign":
            return None
        statement = self.parent(binding.node)
        return statement.value if isinstance(statement, ast.Assign) and statement.targets == [binding.node] else None

    def augmented_reaching_binding(self, statement: ast.AugAssign, binding: Binding) -> Binding | None:
        """What `reaching_binding` gives the read of `x` that `x += v` (binding `binding`) makes first."""
        if binding.scope.kind != "function":
            return None
        return self._reaching(binding.scope, binding.name, statement, (statement.lineno, statement.col_offset))

    def _reaching(self, scope, name: str, statement: ast.stmt, position: tuple[int, int]) -> Binding | None:
        bindings = scope.bindings[name]
        preceding = [binding for binding in bindings if binding.position <= position]
        if not preceding or any(binding.fallback for binding in bindings):
            return None
        last = max(preceding, key=lambda binding: binding.position)
        if any(other is not last and other.position == last.position for other in preceding):
            return None  # `x, x = ...`: which one wins is not followed
        if last.kind == "param":
            block, start = scope.node.body, 0  # a read in a nested block may be reached by a later binding (a loop)
        elif last.kind == "loop":
            # A `for` target is bound again before each run of the body: a read in the body's own
            # list, with no binding of the name before it there, sees this iteration's value.
            loop = self.parent(last.node)
            if not (isinstance(loop, (ast.For, ast.AsyncFor)) and loop.target is last.node):
                return None
            block, start = loop.body, 0
        else:
            bound = self._assignment_statement(last)
            block = self._block_of(bound) if bound is not None else None
            start = _index_in(block, bound) + 1 if block is not None else None
        end = _index_in(block, statement) if block is not None else None
        if end is None or start is None or start > end:
            return None
        if self.in_traced_code(statement) and self._read_in_a_region(name, block[start:end]):
            return None
        return last

    def _assignment_statement(self, binding: Binding) -> ast.stmt | None:
        """The `x = v`, `x: T = v` or `x += v` statement an assignment binding is a target of."""
        if binding.kind != "assign":
            return None
        statement = self.parent(binding.node)
        while isinstance(statement, (ast.Tuple, ast.List)):
            statement = self.parent(statement)
        return statement if isinstance(statement, (ast.Assign, ast.AnnAssign, ast.AugAssign)) else None

    def _block_of(self, statement: ast.stmt) -> list[ast.stmt] | None:
        container = self.parent(statement)
        for field in _BLOCK_FIELDS:
            block = getattr(container, field, None)
            if isinstance(block, list) and _index_in(block, statement) is not None:
                return block
        return None

    def _read_in_a_region(self, name: str, statements: list[ast.stmt]) -> bool:
        """Whether a compound statement among `statements` reads `name` anywhere in it."""
        regions = [(s.lineno, s.col_offset, s.end_lineno, s.end_col_offset) for s in statements if hasattr(s, "body")]
        return bool(regions) and any(
            (first, column) <= (load.lineno, load.col_offset) and (load.end_lineno, load.end_col_offset) <= (last, end)
            for load in self._loads.get(name, ()) for first, column, last, end in regions)


def _index_in(block: list[ast.stmt], statement: ast.stmt | None) -> int | None:
    return next((index for index, item in enumerate(block) if item is statement), None)
