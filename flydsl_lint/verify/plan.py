"""What a verify run will compile or execute, derived from the changed files."""

from __future__ import annotations

import fnmatch
from dataclasses import dataclass, field

from flydsl_lint.verify.config import VerifyConfig
from flydsl_lint.verify.imports import ImportGraph, module_name

TEST_FILE_PATTERNS = ("test_*.py", "*_test.py")


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


def _under(path: str, directories: list[str]) -> bool:
    return any(path == d or path.startswith(d.rstrip("/") + "/") for d in directories)


def is_test_file(path: str, config: VerifyConfig) -> bool:
    name = path.rpartition("/")[2]
    return _under(path, config.test_dirs) and any(fnmatch.fnmatch(name, p) for p in TEST_FILE_PATTERNS)


def build_plan(
    *,
    graph: ImportGraph,
    changed: list[str],
    config: VerifyConfig,
    base: str,
    head: str,
    archs: list[str],
    mode: str,
    tests_override: list[str] | None = None,
    kernels_override: list[str] | None = None,
) -> Plan:
    """Affected kernels, tests and probes: ``changed`` plus everything importing it, transitively.

    ``kernels_override`` replaces the changed files as the starting point;
    ``tests_override`` replaces the test selection outright.
    """
    seeds = kernels_override if kernels_override is not None else changed
    affected = graph.dependents(seeds) - set(graph.not_files)
    kernels = sorted(p for p in affected if _under(p, config.kernel_dirs))
    if tests_override is not None:
        tests = list(tests_override)
    else:
        tests = sorted(p for p in affected if is_test_file(p, config))
    affected_modules = {module_name(p) for p in affected}
    probes = [p for p in config.probes if p.partition(":")[0] in affected_modules]
    notes = [f"{path}: {reason}; its imports are unknown, so it counts as affected by any change"
             for path, reason in sorted(graph.unanalysable.items())]
    notes += [f"{path}: {reason}; left out of the plan" for path, reason in sorted(graph.not_files.items())]
    if not changed and kernels_override is None and tests_override is None:
        notes.append("no Python files changed")
    elif not tests and not probes:
        notes.append("no test or probe reaches the changed files")
    return Plan(base, head, changed, kernels, tests, probes, archs, mode, notes)
