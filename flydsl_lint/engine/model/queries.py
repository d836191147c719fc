"""Questions rules ask of the model: nodes by type, parents, reads, calls of a def, traced code."""

from __future__ import annotations

import ast
from collections import defaultdict
from collections.abc import Iterable, Iterator

from .scopes import Binding
from .walk import UNLISTED_TYPES

KERNEL_DECORATORS = {
    "flydsl.compiler.kernel": "kernel",
    "flydsl.compiler.kernel_function.kernel": "kernel",
    "flydsl.compiler.jit": "jit",
    "flydsl.compiler.jit_function.jit": "jit",
}


class _Queries:
    """Queries over what the walk recorded (part of `SemanticModel`)."""

    # -------------------------------------------------------------- queries
    def nodes(self, kind: type) -> list[ast.AST]:
        """The module's nodes of one type, in source order (not Name or Constant: see UNLISTED_TYPES)."""
        if kind in UNLISTED_TYPES:
            raise ValueError(f"the model does not list {kind.__name__} nodes; use loads_of() or bindings")
        return self.nodes_by_type.get(kind, [])

    def single_assigned_value(self, name: ast.Name) -> ast.expr | None:
        """The value of the one plain assignment that binds `name`: None as well when some
        function declares the name `global` or `nonlocal` (its assignments there are recorded
        in that function's scope, so the binding only looks single)."""
        binding = self.binding_of(name)
        if binding is None or binding.kind != "assign" or not self.is_single_binding(binding):
            return None
        if binding.name in self.names_declared_global_or_nonlocal():
            return None
        statement = self.parent(binding.node)
        return statement.value if isinstance(statement, ast.Assign) and statement.targets == [binding.node] else None

    def names_declared_global_or_nonlocal(self) -> frozenset[str]:
        """The names some scope of the module declares `global` or `nonlocal`. Computed on first request."""
        answers = self._answers["names_declared_global_or_nonlocal"]
        if None not in answers:
            answers[None] = frozenset(name for scope in self.scopes
                                      for name in (*scope.declared_global, *scope.declared_nonlocal))
        return answers[None]

    def attributes_by_name(self) -> dict[str, list[ast.Attribute]]:
        """Attribute nodes grouped by `.attr`, each group in source order: rules
        that look for a few attribute names skip the rest. Grouped on first request."""
        answers = self._answers["attributes_by_name"]
        if None not in answers:
            groups: defaultdict[str, list[ast.Attribute]] = defaultdict(list)
            for node in self.nodes(ast.Attribute):
                groups[node.attr].append(node)
            answers[None] = dict(groups)
        return answers[None]

    def loaded_names(self) -> Iterable[str]:
        """Every name read somewhere in the module (`x` of a load of `x`)."""
        return self._loads.keys()

    def loads_of(self, name: str) -> list[ast.Name]:
        """The reads of `name`, in source order (whatever binding each sees)."""
        return self._loads.get(name, [])

    def range_callee(self, callee: ast.expr) -> str | None:
        """"range" for the builtin `range` (not rebound), "range_constexpr" for FlyDSL's, else None."""
        if isinstance(callee, ast.Name) and callee.id == "range" and self.binding_of(callee) is None:
            return "range"
        return "range_constexpr" if (self.resolve(callee) or "").endswith(".range_constexpr") else None

    def parent(self, node: ast.AST) -> ast.AST | None:
        return self._parents.get(node)

    def ancestors(self, node: ast.AST) -> Iterator[ast.AST]:
        parents = self._parents
        current = parents.get(node)
        while current is not None:
            yield current
            current = parents.get(current)

    def calls_of(self, function: ast.AST) -> list[ast.Call]:
        """Calls of a def of this module by its plain name (`helper(...)`)."""
        return self._calls_by_function().get(function, [])

    def _calls_by_function(self) -> dict[ast.AST, list[ast.Call]]:
        """def node -> calls of it by plain name in this module (built once)."""
        answers = self._answers["calls_by_function"]
        if None not in answers:
            index: dict[ast.AST, list[ast.Call]] = {}
            binding_of = self.binding_of
            for call in self.nodes(ast.Call):
                func = call.func
                if type(func) is ast.Name:  # the walk scopes exact Names only (see `_visit`)
                    callee = binding_of(func)
                    if callee is not None and callee.kind == "def":
                        calls = index.get(callee.node)
                        if calls is None:
                            index[callee.node] = [call]
                        else:
                            calls.append(call)
            answers[None] = index
        return answers[None]

    # ------------------------------------------------------------- kernels
    def function_kind(self, node: ast.AST) -> str | None:
        """'kernel' or 'jit' for a FlyDSL-decorated function, else None."""
        kinds = self._answers["function_kind"]
        if node not in kinds:
            kind = None
            for decorator in getattr(node, "decorator_list", ()):
                target = decorator.func if isinstance(decorator, ast.Call) else decorator
                kind = KERNEL_DECORATORS.get(self.resolve(target) or "") or kind
            kinds[node] = kind
        return kinds[node]

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
        answers = self._answers["name_assignments"]
        if None not in answers:
            answers[None] = self._plain_name_assignments + [
                (node, node.target, node.value) for node in self.nodes(ast.AnnAssign)
                if type(node.target) is ast.Name and node.value is not None]
        return answers[None]

    def import_bindings(self) -> list[Binding]:
        """Every import binding of the module, in any scope."""
        return self._imports

    def imports_flydsl(self) -> bool:
        """Whether the module imports FlyDSL somewhere (any scope, a fallback
        too), directly or through a project module that the index resolves
        there (see `ProjectIndex.reaches_flydsl`): whether it is FlyDSL code."""
        answers = self._answers["imports_flydsl"]
        if None not in answers:
            answers[None] = any(self.project.reaches_flydsl(module) for module in self._imported_modules())
        return answers[None]

    def _imported_modules(self) -> Iterator[str]:
        """What each import statement names: `a.b` of `import a.b` (whose binding
        is `a`), `m.x` of `from m import x`, `m` of `from m import *`."""
        for binding in self._imports:
            if type(self.parent(binding.node)) is ast.Import:
                yield binding.node.name
            elif binding.target:
                yield binding.target
        yield from self.star_imports
