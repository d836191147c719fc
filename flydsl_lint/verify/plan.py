"""What a verify run will compile or execute, derived from the changed files."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from flydsl_lint.verify.config import VerifyConfig
from flydsl_lint.verify.imports import ImportGraph, module_name
from flydsl_lint.verify.pytest_config import TestFiles


@dataclass
class Plan:
    base: str
    head: str  # a commit, or "working tree"
    changed: list[str]
    kernels: list[str]  # affected kernel modules (repo-relative paths)
    tests: list[str]  # test files to run on both sides
    probes: list[str]
    archs: list[str]
    mode: str
    notes: list[str] = field(default_factory=list)

    @property
    def empty(self) -> bool:
        return not (self.tests or self.probes)

    def as_dict(self) -> dict:
        return {
            "base": self.base, "head": self.head, "mode": self.mode, "archs": self.archs,
            "changed": self.changed, "kernels": self.kernels, "tests": self.tests,
            "probes": self.probes, "notes": self.notes,
        }


def _under(path: str, directories: Iterable[str]) -> bool:
    return any(path == d or path.startswith(d.rstrip("/") + "/") for d in directories)


def _kernels(affected: set[str], tests: set[str], config: VerifyConfig) -> list[str]:
    """Affected modules that are no test code: under ``kernel-dirs`` when configured, else wherever
    they are, except conftest files, tests and the helpers in a test's folder (unless at the root)."""
    if config.kernel_dirs:
        return sorted(p for p in affected if _under(p, config.kernel_dirs))
    test_folders = {test.rpartition("/")[0] for test in tests} - {""}
    return sorted(p for p in affected - tests
                  if p.rpartition("/")[2] != "conftest.py" and not _under(p, test_folders))


def build_plan(
    *,
    graph: ImportGraph,
    changed: list[str],
    config: VerifyConfig,
    test_files: TestFiles,
    base: str,
    head: str,
    archs: list[str],
    mode: str,
    tests_override: list[str] | None = None,
    kernels_override: list[str] | None = None,
) -> Plan:
    """Affected kernels, tests and probes: ``changed`` plus everything importing it, transitively.

    A test is any file ``test_files`` (the repository's pytest configuration)
    calls one, wherever it is. ``kernels_override`` replaces the changed files
    as the starting point; ``tests_override`` replaces the test selection outright.
    """
    seeds = kernels_override if kernels_override is not None else changed
    affected = graph.dependents(seeds) - set(graph.not_files)
    all_tests = {p for p in graph.imports.keys() | graph.unanalysable.keys() if test_files.is_test(p)}
    kernels = _kernels(affected, all_tests, config)
    tests = list(tests_override) if tests_override is not None else sorted(affected & all_tests)
    affected_modules = {module_name(p) for p in affected}
    probes = [p for p in config.probes if p.partition(":")[0] in affected_modules]
    notes = [f"{path}: {reason}; its imports are unknown, so it counts as affected by any change"
             for path, reason in sorted(graph.unanalysable.items())]
    notes += [f"{path}: {reason}; left out of the plan" for path, reason in sorted(graph.not_files.items())]
    # Only the checkout's modules can be affected: a probe of another never runs, so say so.
    notes += [f"probe {probe}: no module {probe.partition(':')[0]} in the checkout (either side), so it never runs"
              for probe in config.probes if probe.partition(":")[0] not in graph.paths_of]
    notes += [f"{path}: tests import it as {graph.installed_as[path]} from wherever that package is installed, "
              f"which may not be this checkout: its change may go unverified"
              for path in seeds if path in graph.installed_as]
    if not changed and kernels_override is None and tests_override is None:
        notes.append("no Python files changed")
    elif not tests and not probes:
        notes.append("no test or probe reaches the changed files")
    return Plan(base, head, changed, kernels, tests, probes, archs, mode, notes)
