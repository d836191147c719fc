"""Reaching bindings: the one binding of a name bound more than once that a read provably sees,
and the regions of traced code the AST rewriter carries a name through (rebuilding its value)."""

from __future__ import annotations

import ast

from .scopes import Binding

# The statement lists a statement may stand in (a `while` body is one too: its test is no statement).
_BLOCK_FIELDS = ("body", "orelse", "finalbody")
# The nodes whose `.value` a method callee or store target is based on (`x.a.f`, `x[i].a`).
_BASED_ON_VALUE = (ast.Attribute, ast.Subscript)


class _ReachingBindings:
    """Straight-line reaching bindings and carried names (part of `SemanticModel`)."""

    def reaching_binding(self, read: ast.Name) -> Binding | None:
        """The binding every execution reaching `read` made last, when it is provably one: in a
        function's own scope, an assignment earlier in the statement list of the read's statement
        (the parameter, for a read in the function's top-level block; a `for` target, for a read in
        the loop's own body), with no binding of the name in between. Any path to the read runs
        down that list, so through the assignment, and nothing after it rebinds the name before
        the read. The read may also be nested in a compound statement of that list that binds the
        name nowhere (`_passes_through`); the assignment may be at the top of the body of a loop
        of that list that Python always runs and that nothing skips it in (`_loop_always_reaching`).
        In traced code no compound statement in between may read
        the name either: the rewriter carries a name a dynamic region stores into, subscripts or
        calls a method of, and rebinds it after the region (`_collect_assigned_vars` in
        compiler/ast_rewriter.py). None when not provably one."""
        found = self._read_in_its_scope(read)
        if found is None:
            return None
        binding, statement = found
        if isinstance(statement, ast.While):
            return None  # its test is read again after the body
        return self._reaching(binding.scope, binding.name, statement, (read.lineno, read.col_offset))

    def _read_in_its_scope(self, read: ast.Name) -> tuple[Binding, ast.stmt] | None:
        """The binding of a read in the function scope that binds the name, and the statement
        the read is part of; None for a read of another scope's name."""
        binding = self.binding_of(read)
        if binding is None or binding.scope.kind != "function" or self._scope_of_node.get(read) is not binding.scope:
            return None
        statement = read
        while not isinstance(statement, ast.stmt):
            statement = self.parent(statement)
        return binding, statement

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
            # An assignment at the top of the body of a Python loop that always runs and always
            # reaches it is the name's binding after the loop too (its last iteration's).
            while block is not None and self._statement_in(block, statement) is None \
                    and self._loop_always_reaching(bound, block):
                bound = self.parent(bound)
                block = self._block_of(bound)
            start = _index_in(block, bound) + 1 if block is not None else None
        anchor = self._statement_in(block, statement) if block is not None else None
        end = _index_in(block, anchor) if anchor is not None else None
        if end is None or start is None or start > end:
            return None
        traced = self.in_traced_code(statement)
        if traced and self._read_in_a_region(name, block[start:end]):
            return None
        if anchor is not statement and not self._passes_through(anchor, bindings, name, position, traced):
            return None
        return last

    def _loop_always_reaching(self, statement: ast.stmt, block: list[ast.stmt]) -> bool:
        """Whether `block` is the body of a `for` that Python runs (the rewriter leaves a loop over a
        display or `range_constexpr` alone) at least once, over a non-empty display or a
        `range_constexpr` of known ints, and no `break` or `continue` of it skips `statement`, a
        statement of the body: every run of the loop ends having run it last in its last iteration."""
        loop = self.parent(statement)
        if not (isinstance(loop, ast.For) and loop.body is block and not loop.orelse):
            return False
        iterated = loop.iter
        if isinstance(iterated, (ast.List, ast.Tuple)):
            runs = bool(iterated.elts) and not any(isinstance(item, ast.Starred) for item in iterated.elts)
        elif isinstance(iterated, ast.Call) and not iterated.keywords and 1 <= len(iterated.args) <= 3 \
                and self.range_callee(iterated.func) == "range_constexpr":
            bounds = [self.known_int(argument) for argument in iterated.args]
            runs = None not in bounds and not (len(bounds) == 3 and bounds[2] == 0) and len(range(*bounds)) > 0
        else:
            runs = False
        return runs and not any(_leaves_loop(child) for child in block)

    def _carrying_regions(self, name: str) -> list[ast.stmt]:
        """The `if`/`while` statements and `range` loops that call a method of `name` or store into it
        (asked per name: climbing from every such node to its function is the cost)."""
        regions = self._answers["carrying_regions"]
        if name not in regions:
            found: list[ast.stmt] = []
            for node in self._method_callees_and_stores(name):
                for ancestor in self.ancestors(node):
                    if isinstance(ancestor, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
                        break
                    if (isinstance(ancestor, (ast.If, ast.While)) or _rewritten_loop(ancestor)) and ancestor not in found:
                        found.append(ancestor)
            regions[name] = found
        return regions[name]

    def rebuilding_if(self, read: ast.Name) -> tuple[ast.If, Binding] | None:
        """The `if` of traced code with a run-time test whose rebuild of a name bound more than once
        `read` provably sees, with the binding the name has on entering it: the last statement
        before the read's, in the read's own statement list, that binds the name is that `if`, and
        one binding provably reaches the `if`. The rewriter's `scf_if_dispatch` builds an `scf.if`
        of a test that holds an ir.Value and rebuilds each name a branch assigns from its value on
        entry (`_pack_states(if_op.results, exemplar)`, the exemplar `_promote(entry)`: an fx
        scalar keeps its class), whatever the branches assigned (0.3.0 to 0.5.0)."""
        found = self._read_in_its_scope(read)
        if found is None:
            return None
        binding, statement = found
        block = self._block_of(statement)
        if block is None or not self.in_traced_code(statement):
            return None
        bindings = binding.scope.bindings[binding.name]
        for earlier in reversed(block[:_index_in(block, statement)]):
            first = (earlier.lineno, earlier.col_offset)
            last = (earlier.end_lineno, earlier.end_col_offset)
            if not any(first <= each.position <= last for each in bindings):
                continue
            if not isinstance(earlier, ast.If) or not self.provably_dynamic(earlier.test):
                return None  # a compile-time test runs one branch in Python, which rebuilds nothing
            if any(isinstance(node, ast.NamedExpr) for node in ast.walk(earlier)):
                return None  # a binding in a test is not carried: the rewriter collects the branches' own
            entering = self._reaching(binding.scope, binding.name, earlier, first)
            return (earlier, entering) if entering is not None else None
        return None

    def carried_through_a_region(self, bindings: list[Binding]) -> bool:
        """Whether the rewriter may carry the name of `bindings` (bound in one function of traced
        code) through a region it rewrites: a binding inside an `if`, a `while` or a `range` loop
        (`_collect_assigned_vars` carries what a region assigns), or such a region of that function
        calling a method of the name or storing into it. Outside them the function runs as Python
        wrote it: a loop over a list or a `range_constexpr` is Python's own."""
        function = bindings[0].scope.node
        for binding in bindings:
            for ancestor in self.ancestors(binding.node):
                if ancestor is function:
                    break
                if isinstance(ancestor, (ast.If, ast.While)) or _rewritten_loop(ancestor):
                    return True
        return self.carried_in(function, bindings[0].name)

    def carried_in(self, function: ast.AST, name: str) -> bool:
        """Whether an `if`, `while` or `range` loop of `function` calls a method of `name` or stores
        into it (`_carrying_regions`), so that the rewriter carries it there."""
        return any(self.enclosing_function(region) is function for region in self._carrying_regions(name))

    def _method_callees_and_stores(self, name: str) -> list[ast.expr]:
        """The method callees (`x.f` of `x.f()`) and store targets (`x[i] = `, `x.a = `) based on
        `name`, found up from its reads: a few names are asked, not every attribute of the module."""
        found = []
        parents = self._parents
        for node in self._loads.get(name, ()):
            parent = parents.get(node)
            while type(parent) in _BASED_ON_VALUE and parent.value is node:
                node, parent = parent, parents.get(parent)
                if type(node.ctx) is ast.Store or (type(parent) is ast.Call and parent.func is node
                                                    and type(node) is ast.Attribute):
                    found.append(node)
        return found

    def _statement_in(self, block: list[ast.stmt], statement: ast.stmt) -> ast.stmt | None:
        """`statement`, or the compound statement of `block` it is nested in (None: neither)."""
        ancestor = statement
        while ancestor is not None:
            if isinstance(ancestor, ast.stmt) and _index_in(block, ancestor) is not None:
                return ancestor
            if isinstance(ancestor, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
                return None
            ancestor = self.parent(ancestor)
        return None

    def _passes_through(self, compound: ast.stmt, bindings, name: str, read: tuple[int, int], traced: bool) -> bool:
        """Whether the value a name holds on entering `compound` is the one its read at `read`, nested
        in it, sees: no binding of the name anywhere in the statement (a loop in it could bring a later
        one back round), and in traced code no region around the read that the rewriter carries
        the name through (rebuilt as an fx value inside: `_carried_before`)."""
        first, last = (compound.lineno, compound.col_offset), (compound.end_lineno, compound.end_col_offset)
        if any(first <= binding.position <= last for binding in bindings):
            return False
        return not traced or not any(
            first <= (region.lineno, region.col_offset) and (region.lineno, region.col_offset) <= read
            <= (region.end_lineno, region.end_col_offset) for region in self._carrying_regions(name))

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


def _leaves_loop(node: ast.AST) -> bool:
    """Whether `node` holds a `break` or `continue` of the loop it is in (not of a nested loop or def)."""
    if isinstance(node, (ast.Break, ast.Continue)):
        return True
    if isinstance(node, (ast.For, ast.AsyncFor, ast.While)):
        return any(_leaves_loop(child) for child in node.orelse)  # its body's are its own
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
        return False
    return any(_leaves_loop(child) for child in ast.iter_child_nodes(node))


def _rewritten_loop(node: ast.AST) -> bool:
    """A `for` the rewriter turns into an `scf.for`: over a call named `range` (`range(...)`,
    `fx.range(...)`); a `range_constexpr` loop or one over a list is Python's own."""
    if not isinstance(node, ast.For) or not isinstance(node.iter, ast.Call):
        return False
    callee = node.iter.func
    return (callee.id if isinstance(callee, ast.Name) else getattr(callee, "attr", None)) == "range"


def _index_in(block: list[ast.stmt], statement: ast.stmt | None) -> int | None:
    try:
        return block.index(statement)  # AST nodes compare by identity
    except ValueError:
        return None
