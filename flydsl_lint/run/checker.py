"""Check one file: one parse, one model, every selected rule, noqa applied."""

from __future__ import annotations

import ast
from functools import cached_property
from pathlib import Path
from typing import NamedTuple

from ..engine.config import Settings
from ..engine.context import Context
from ..engine.diagnostics import Diagnostic
from ..engine.metadata import load_metadata
from ..engine.model import SemanticModel
from ..engine.noqa import NoqaDirective, mark_exempt, mark_suppressed, skipped_by_flake8
from ..engine.project import ProjectIndex, module_name_for, source_roots
from ..engine.source import SourceError, SourceFile
from ..engine.target import releases
from ..engine.versions import Version
from ..rules import all_rules
from ..rules._base import Rule, leaves


class _CallIndex:
    """The selected rules' `visit_Call` interests (`call_names`/`call_modules`),
    as positions in the checker's rule list; built once a run."""

    def __init__(self, rule_classes: list[type]) -> None:
        self.by_name: dict[str, tuple[int, ...]] = {}
        self.by_module: dict[str, tuple[int, ...]] = {}
        self.every: tuple[int, ...] = ()
        self.own_code: tuple[int, ...] = ()
        # (resolved name, spelled leaf, callee is a def of the file) -> the rules to visit:
        # a run meets the same few thousand callees again and again.
        self.picks: dict[tuple[str | None, str | None, bool], tuple[int, ...]] = {}
        # position -> the only resolved names the rule's `calls` lets through
        self.exact: dict[int, frozenset[str]] = {}
        for position, cls in enumerate(rule_classes):
            if ast.Call not in cls.node_types():
                continue
            call_names = cls.call_names if cls.call_names is not None or cls.calls is None else leaves(cls.calls)
            if cls.calls is not None:
                self.exact[position] = cls.calls
            if call_names is None and cls.call_modules is None and not cls.call_own_code:
                self.every += (position,)
                continue
            if cls.call_own_code:
                self.own_code += (position,)
            for name in call_names or ():
                self.by_name[name] = self.by_name.get(name, ()) + (position,)
            for module in cls.call_modules or ():
                self.by_module[module] = self.by_module.get(module, ()) + (position,)

    def rules_for(self, model: SemanticModel, func: ast.expr, name: str | None) -> tuple[int, ...]:
        """The rules, in rule order, that see a call of `func` resolving to `name`."""
        kind = type(func)  # parsed trees hold exact node types
        spelled = func.attr if kind is ast.Attribute else func.id if kind is ast.Name else None
        local_def = False
        if not name and self.own_code and kind is ast.Name:
            binding = model.binding_of(func)
            local_def = binding is not None and binding.kind == "def"
        key = (name, spelled, local_def)
        picked = self.picks.get(key)
        if picked is None:
            picked = self.picks[key] = self._pick(*key)
        return picked

    def _pick(self, name: str | None, spelled: str | None, local_def: bool) -> tuple[int, ...]:
        """The rules, in rule order, that see a call resolving to `name` (None: it
        does not resolve) whose callee is spelled `spelled`, a def of the file if `local_def`."""
        picked: tuple[int, ...] = ()
        leaf = None
        if name:
            module, _, leaf = name.rpartition(".")
            picked = self.by_name.get(leaf, ()) + self.by_module.get(module, ())
            if module and not name.startswith("flydsl."):
                picked += self.own_code
        elif local_def:
            picked += self.own_code
        if spelled is not None and (not name or spelled != leaf):
            picked += self.by_name.get(spelled, ())
        kept = sorted(position for position in set(picked) if position not in self.exact or name in self.exact[position])
        return tuple(kept) + self.every  # one visit per rule, in rule order


class _Plan(NamedTuple):
    visits: list[tuple[type, list[tuple[int, str]]]]  # node type -> (rule position, method name)
    file_hooks: list[int]  # positions of the rules with their own check_file
    suppression_hooks: list[int]  # ... with check_suppressions
    call_hooks: list[int]  # ... with visit_Call


class Checker:
    """Runs the selected rules over files; reusable across files of one run."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self.metadata = load_metadata()
        self.rule_classes = [cls for code, cls in all_rules().items() if settings.is_selected(code)]
        self._unfixable = frozenset(cls.code for cls in self.rule_classes if not settings.is_fixable(cls.code))
        self._fix_since = {code: Version.parse(meta.fix_since) for code, meta in self.metadata.items() if meta.fix_since}
        self._projects: dict[Path, ProjectIndex] = {}
        self._folders: dict[str, tuple[str, Path]] = {}  # see module_name_for
        self._node_types_of: dict[type, list[type]] = {}
        self._plans: dict[tuple[tuple[str, ...], bool], _Plan] = {}  # by per-file-ignores and imports_flydsl()
        self._calls = _CallIndex(self.rule_classes)
        # Every rule's, selected or not: a name then resolves alike whatever the selection.
        self._follows = frozenset().union(*(cls.followed_leaves() for cls in all_rules().values()))

    def project_for(self, path: str) -> tuple[ProjectIndex, str, bool]:
        """The module name of `path` and an index rooted where its packages live.

        One index per package root, so project modules are summarized once a run.
        """
        module, is_package, package_root = module_name_for(Path(path), self._folders, self.settings.src)
        index = self._projects.get(package_root)
        if index is None:
            index = ProjectIndex(source_roots(self.settings.root, package_root, self.settings.src),
                                 self.settings.legacy_module_roots, self._follows, self.settings.max_file_size)
            self._projects[package_root] = index
        return index, module, is_package

    def release(self) -> None:
        """Free what the project indexes kept for the run (`ProjectIndex.release`); the
        checker then starts afresh."""
        for index in self._projects.values():
            index.release()
        self._projects.clear()

    def release_unused(self) -> None:
        """Free what the project indexes derived from modules the last file did not depend on
        (not in `touched`), chiefly their helper models, and keep what they read: a host
        checking a folder's files in a row keeps a model its neighbours share, and a later
        check derives again what it asks for."""
        for index in self._projects.values():
            index.release(keep=index.touched)

    def check(self, source: SourceFile, apply_noqa: bool = True) -> list[Diagnostic]:
        """Diagnostics for one file; raises SourceError if it cannot be checked.

        `apply_noqa=False` keeps what `# noqa` comments suppress, for a host
        that filters them itself (flake8); file exemptions, which only
        flydsl-lint knows, are always applied.
        """
        if not self.settings.ignore_noqa and source.mentions_noqa and skipped_by_flake8(source.lines):
            return []  # flake8 never checks such a file (not even its syntax)
        project, module, is_package = self.project_for(source.path)
        project.start_file()
        source.adopt_tree(project.take_tree(source.path, source.text))  # a helper module another check parsed
        tree = source.tree
        model = SemanticModel(tree, module, is_package, project, self.settings.target_version)
        try:
            context = Context(source, model, self.settings, self.metadata)
            ignored = self.settings.ignored_for(source.path)
            flydsl_file = model.imports_flydsl()
            # One instance per selected rule class, None where the rule does not run on this file.
            instances = [cls(context) if self._runs_on(cls, ignored, flydsl_file) else None for cls in self.rule_classes]
            plan_key = (ignored, flydsl_file)
            plan = self._plans.get(plan_key)
            if plan is None:
                plan = self._plans[plan_key] = self._plan(instances)
            for position in plan.file_hooks:
                rule = instances[position]
                self._guard(rule, source, rule.check_file)
            # Rule by rule, each over all its nodes: one rule's code runs many times in a
            # row, which misses the CPU's caches less than taking the rules node by node
            # (cachegrind on FlyDSL's kernels/: 4% fewer instruction-cache misses).
            for node_type, methods in plan.visits:
                nodes = model.nodes(node_type)
                for position, method_name in methods:
                    rule = instances[position]
                    self._visit_nodes(rule, source, getattr(rule, method_name), nodes)
            call_handlers = [None] * len(instances)
            for position in plan.call_hooks:
                call_handlers[position] = instances[position].visit_Call
            self._visit_calls(model, call_handlers, source)

            diagnostics = context.diagnostics
            self._gate_fixes_on_version(diagnostics)
            if context.noqa:
                self._mark_suppressed(diagnostics, context.noqa, tree, source.lines)
            if context.file_noqa:
                mark_exempt(diagnostics, context.file_noqa)
            for position in plan.suppression_hooks:
                rule = instances[position]
                self._guard(rule, source, rule.check_suppressions)
            self._withhold_unfixable(diagnostics)  # after the suppression rules, whose findings have fixes too
            if apply_noqa:
                diagnostics = [d for d in diagnostics if not d.suppressed]
            elif context.file_noqa:
                diagnostics = [d for d in diagnostics if not any(e.matches(d.code) for e in context.file_noqa)]
            diagnostics.sort(key=Diagnostic.sort_key)
            return diagnostics
        finally:
            model.release()  # frees the tree by reference counting, not the cyclic GC

    @staticmethod
    def _runs_on(rule_class: type[Rule], ignored: tuple[str, ...], flydsl_file: bool) -> bool:
        """Whether a selected rule runs on a file: its per-file-ignores keep it, and
        the file is FlyDSL code if the rule runs only there."""
        if ignored and rule_class.code.startswith(ignored):
            return False
        return flydsl_file or not rule_class.only_in_flydsl_files

    def _visit_calls(self, model: SemanticModel, handlers: list, source: SourceFile) -> None:
        """Hand each call to the rules whose `calls`/`call_names`/`call_modules` it
        matches and to the rules that see every call, rule by rule as in `check`;
        `handlers` is aligned with the rule list (None: rule not run on this file)."""
        index = self._calls
        if not (index.by_name or index.by_module or index.every or index.own_code):
            return
        calls_of_rule: list[list[ast.Call]] = [[] for _ in handlers]
        for node in model.nodes(ast.Call):
            try:
                name = model.resolve(node.func)
            except RecursionError:
                raise SourceError(source.path, f"gave up at line {node.lineno}: expression nesting too deep") from None
            for position in index.rules_for(model, node.func, name):
                calls_of_rule[position].append(node)
        for handler, calls in zip(handlers, calls_of_rule):
            if handler is not None:
                self._visit_nodes(handler.__self__, source, handler, calls)

    def _withhold_unfixable(self, diagnostics: list[Diagnostic]) -> None:
        """Drop the fixes of codes the settings make unfixable (reported, never fixed)."""
        if self._unfixable:
            for diagnostic in diagnostics:
                if diagnostic.code in self._unfixable:
                    diagnostic.fix = None

    def _gate_fixes_on_version(self, diagnostics: list[Diagnostic]) -> None:
        """Hold back fixes whose replacement API the target FlyDSL lacks (the rule's fix-since, or
        a fix's own later `since`); an unknown target is taken as the oldest supported release."""
        target, shown = self._gate_target
        for diagnostic in diagnostics:
            fix = diagnostic.fix
            if fix is None:
                continue
            since = Version.parse(fix.since) if fix.since else self._fix_since.get(diagnostic.code)
            if fix.since:
                diagnostic.fix = fix._replace(since=None)  # read here only: what leaves the checker is as ever
            if since is not None and target < since:
                diagnostic.fix = None
                diagnostic.fix_needs = fix.since or self.metadata[diagnostic.code].fix_since
                diagnostic.message += f" (fix needs FlyDSL >= {diagnostic.fix_needs}; target is {shown})"

    @cached_property
    def _gate_target(self) -> tuple[Version, str]:
        """The release fixes are gated on, and how messages name it."""
        if self.settings.target_version is not None:
            return self.settings.target_version, str(self.settings.target_version)
        oldest = releases().oldest_supported
        return oldest, f"unknown, taken as {oldest}"

    def _plan(self, instances: list) -> _Plan:
        """Which hooks and visit_* methods `check` calls on the rules `instances`
        holds (None: not run), in its order; the same for every file with the
        same per-file-ignores, so it is worked out once for them."""
        kept = [position for position, rule in enumerate(instances) if rule is not None]
        visits: dict[type, list[tuple[int, str]]] = {}
        for position in kept:
            for node_type in self._node_types(self.rule_classes[position]):
                if node_type is not ast.Call:
                    visits.setdefault(node_type, []).append((position, f"visit_{node_type.__name__}"))
        # The base class's check_file does nothing: only overrides are called.
        file_hooks = [position for position in kept if self.rule_classes[position].check_file is not Rule.check_file]
        suppression_hooks = [position for position in kept
                             if self.rule_classes[position].check_suppressions is not Rule.check_suppressions]
        call_hooks = [position for position in kept if ast.Call in self._node_types(self.rule_classes[position])]
        return _Plan(list(visits.items()), file_hooks, suppression_hooks, call_hooks)

    def _node_types(self, rule_class: type) -> list[type]:
        types = self._node_types_of.get(rule_class)
        if types is None:
            types = self._node_types_of[rule_class] = rule_class.node_types()
        return types

    @classmethod
    def _guard(cls, rule, source: SourceFile, function) -> None:
        try:
            function()
        except Exception as exc:
            cls._guard_failed(rule, source, exc, None)

    @classmethod
    def _visit_nodes(cls, rule, source: SourceFile, visit, nodes: list[ast.AST]) -> None:
        """`visit` each of `nodes`, under one guard for them all (not one call each)."""
        node = None
        try:
            for node in nodes:
                visit(node)
        except Exception as exc:
            cls._guard_failed(rule, source, exc, node)

    @staticmethod
    def _guard_failed(rule, source: SourceFile, exc: Exception, node: ast.AST | None) -> None:
        if isinstance(exc, RecursionError):
            raise SourceError(source.path, f"{rule.code} gave up: expression nesting too deep") from None
        # a rule bug must name itself, not hide as a clean file
        where = f" at line {node.lineno}" if hasattr(node, "lineno") else ""
        raise SourceError(source.path, f"internal error in {rule.code}{where}: {type(exc).__name__}: {exc}") from exc

    @staticmethod
    def _mark_suppressed(
        diagnostics: list[Diagnostic], directives: dict[int, NoqaDirective], tree: ast.Module, lines: list[str]
    ) -> None:
        mark_suppressed(diagnostics, directives, tree, lines)  # flake8's noqa lines (engine/noqa.py)
