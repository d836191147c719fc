"""One semantic model per file: scopes, bindings, import resolution, kernels.

Built in a single walk of the AST. Rules ask it questions such as "does this
call resolve to `flydsl.expr.arith.unwrap`?" or "is this node traced kernel
code?"; they never look at import statements or raw text themselves.

The model is one class assembled from one module per concern: `walk` builds
it, `scopes` holds its scopes and bindings, `resolution` answers what a name
refers to, `queries` the rest, `flow` the one binding a read of a rebound name sees,
`types` the value type of an expression, `guards` the `if` tests those types decide, `numbers` the values of Python numbers,
`vectors` the element and lanes of a vector value, `run_time` which values are the kernel's
run's (visibly raw, or provably not compile-time Python values).
"""

from __future__ import annotations

import ast
from collections import defaultdict

from ..project import ProjectIndex
from ..versions import Version
from .flow import _ReachingBindings
from .guards import _Guards
from .numbers import _KnownNumbers
from .queries import _Queries
from .resolution import _Resolution
from .run_time import _RunTimeValues
from .scopes import Binding, Scope, _Scopes
from .types import ValueType, _ValueTypes
from .vectors import _VectorTypes
from .walk import _Walk


class SemanticModel(_Walk, _Scopes, _Resolution, _Queries, _ReachingBindings, _ValueTypes, _Guards,
                    _KnownNumbers, _VectorTypes, _RunTimeValues):
    """Scopes and bindings of one module, with name resolution on demand."""

    def __init__(
        self,
        tree: ast.Module,
        module_name: str = "",
        is_package: bool = False,
        project: ProjectIndex | None = None,
        target_version: Version | None = None,
    ) -> None:
        self.tree = tree
        self.module_name = module_name
        self.is_package = is_package
        self.project = project or ProjectIndex()
        self.target_version = target_version  # the FlyDSL release value types are read for (None: oldest supported)
        self.module_scope = Scope("module", tree, None)
        self.scopes: list[Scope] = [self.module_scope]
        self.star_imports: list[str] = []
        # Nodes grouped by type in source order, so rules are dispatched without
        # another walk; string spans feed comment detection.
        self.nodes_by_type: defaultdict[type, list[ast.AST]] = defaultdict(list)
        self.string_spans: dict[int, list[tuple[int, int]]] = {}
        self.strings: set[str | bytes] = set()  # the module's string constants (f-string parts too)
        # Maps keyed by node or binding hash them by identity: no `id()` call per
        # look-up, and a key keeps its node alive, so a freed node's address,
        # reused by a new node, can never hit a stale entry.
        self._scope_of_node: dict[ast.AST, Scope] = {}  # Name/func node -> scope
        self._loads: defaultdict[str, list[ast.Name]] = defaultdict(list)  # name -> its loads, in source order
        # node -> parent node, kept beside the tree so the tree stays acyclic
        # (freed by reference counting; see `release`).
        self._parents: dict[ast.AST, ast.AST | None] = {}
        # The one memo of every query: query name -> {argument: answer}; a
        # question about the whole module is asked with the argument None.
        self._answers: defaultdict[str, dict] = defaultdict(dict)
        self._imports: list[Binding] = []  # every import binding, any scope
        # `name = value` statements as the walk binds them, in source order (no
        # statement nests in another's value): name_assignments() reads no node again.
        self._plain_name_assignments: list[tuple[ast.Assign, ast.Name, ast.expr]] = []
        # While the value types of a rebound name are checked: the memo entries written
        # since, to drop if the check's assumption fails (engine/model/types.py).
        self._provisional: list[tuple[dict, object]] | None = None
        # The (memo, expression) pairs whose value types are being inferred, innermost last:
        # a rebound name's check re-reads them under its assumption (engine/model/types.py).
        self._in_progress: list[tuple[dict, ast.AST]] = []
        # A helper module checked after another file's check typed its helpers' returns: that
        # model, kept for the run, walked this very tree; its walk is shared, never released here.
        self._helper = self.walked_as_helper()
        if self._helper is None:
            self._build()
        else:
            self._share_walk(self._helper)

    def release(self) -> None:
        """Break the reference cycles the model puts into the tree.

        Scope <-> binding links make every model cyclic, so without this
        each checked file waits for the cyclic garbage collector,
        whose full passes over a heap of old trees dominate a long run. After
        `release()` the model answers no more questions.
        """
        self._answers.clear()
        if self._helper is not None:
            return  # the walk is the helper model's, which answers on for the run
        self._parents.clear()
        for scope in self.scopes:
            scope.bindings.clear()
            scope.outer.clear()
        self.scopes.clear()
        self.nodes_by_type.clear()
        self._scope_of_node.clear()
        self._loads.clear()
        self._imports.clear()
        self._plain_name_assignments.clear()
        self.strings.clear()
