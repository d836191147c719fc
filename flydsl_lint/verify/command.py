"""flydsl-lint-verify: prove a change keeps FlyDSL kernels' ISA (or device results) at parity.

The command itself; ``cli`` is its entry point.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import re
import sys
import time
from pathlib import Path
from typing import Callable, TypeVar

from flydsl_lint.engine.arguments import named, named_path
from flydsl_lint.verify import changes, device
from flydsl_lint.verify.base_cache import BaseCache, ImportFactsCache, default_cache_dir, environment_fingerprint
from flydsl_lint.verify.capture import HookError
from flydsl_lint.verify.config import ConfigError, check_archs, load_config
from flydsl_lint.verify.imports import ImportGraph
from flydsl_lint.verify.plan import build_plan
from flydsl_lint.verify.pytest_config import TestFiles
from flydsl_lint.verify.report import (
    EXIT_PARITY, EXIT_SETUP, RENDERERS, KeptEvidence, ProgressBar, VerifyReport, no_kernel_compiled_message,
    render_terminal,
)
from flydsl_lint.verify.runner import AFTER, BEFORE, run_compile_mode
from flydsl_lint.verify.scratch import Scratch
from flydsl_lint.verify.toolchain import ToolchainError, find_linker

WORKING_TREE = "working tree"


class SetupError(RuntimeError):
    pass


# Commas separate items, except inside a pytest parameter id such as test_x[a,b].
_LIST_SEPARATOR = re.compile(r",(?![^\[]*\])")


def _split_list(values: list[str] | None) -> list[str] | None:
    if values is None:
        return None
    return [item for value in values for item in _LIST_SEPARATOR.split(value) if item]


def _command_line_archs(values: list[str] | None) -> list[str] | None:
    archs = _split_list(values)
    if archs is not None:
        check_archs(archs, "--arch")
    return archs


def _positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError(f"{text!r} is not a positive number")
    return value


def _given(text: str) -> str:
    """A value that names something (of a list option, one entry does)."""
    return named(text, _LIST_SEPARATOR.split)


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="flydsl-lint-verify", description=__doc__)
    parser.add_argument("--base", type=_given,
                        help="ref to compare against (default: merge-base with upstream, else HEAD)")
    parser.add_argument("--head", type=_given, help="ref to verify (default: the working tree)")
    parser.add_argument("--tests", action="append", type=_given,
                        help="test files or node ids to run instead of the affected ones")
    parser.add_argument("--kernels", action="append", type=_given,
                        help="kernel modules (paths or dotted names) to start from instead of the changed files")
    parser.add_argument("--arch", action="append", type=_given,
                        help="target archs, comma-separated (default from config: gfx942)")
    parser.add_argument("--mode", choices=("auto", "compile", "device"), default="auto",
                        help="auto: device mode when an AMD GPU is visible, else compile mode")
    parser.add_argument("--list", action="store_true", help="print the plan and run nothing")
    parser.add_argument("--report", choices=("text", *RENDERERS), default="text")
    parser.add_argument("--keep", action="store_true", help="keep the evidence directories and print where")
    parser.add_argument("--jobs", type=_positive_int, default=os.cpu_count() or 1,
                        help="parallel capture processes (default: the CPU count)")
    parser.add_argument("--base-cache-dir", type=named_path, default=None,
                        help="where base-side results are cached (default: $FLYDSL_LINT_VERIFY_CACHE_DIR, "
                             "else ~/.cache/flydsl-lint/verify-base)")
    parser.add_argument("--no-base-cache", action="store_true", help="compile the base side even when cached")
    parser.add_argument("--repo", type=named_path, default=Path.cwd(), help="repository to verify (default: cwd)")
    return parser.parse_args(argv)


def _kernel_paths(kernels: list[str], graph: ImportGraph) -> list[str]:
    """Accept repo-relative paths and dotted module names alike."""
    paths = []
    for kernel in kernels:
        found = [kernel] if kernel.endswith(".py") else sorted(graph.paths_of.get(kernel, ()))
        if not found:
            raise SetupError(f"--kernels {kernel}: no such module in the repository")
        paths += found
    return paths


def _resolve_mode(requested: str) -> str:
    if requested != "auto":
        return requested
    return "device" if device.visible_amd_gpus() else "compile"


def _build_plan(args: argparse.Namespace, repo: Path, config, base: str, head: str | None):
    """Planning reads both sides from git's object store (the working tree from disk): nothing is
    checked out. What the sources import is cached by the base tree, so only new sources are parsed."""
    facts_cache = _open_cache(args, repo, base, lambda root, tree: ImportFactsCache(root, tree=tree))
    graph = ImportGraph(facts_cache.lookup() if facts_cache else None)
    graph.add_sources(changes.commit_sources(repo, base))
    if head is None:
        graph.add_tree(repo)
    else:
        graph.add_sources(changes.commit_sources(repo, head))
    if facts_cache:
        facts_cache.store(graph.facts_by_digest)
    return build_plan(
        graph=graph,
        changed=changes.changed_python_files(repo, base, head),
        config=config,
        test_files=TestFiles(repo, config.test_dirs),
        base=base,
        head=head or WORKING_TREE,
        archs=_command_line_archs(args.arch) or config.archs,
        mode=_resolve_mode(args.mode),
        tests_override=_split_list(args.tests),
        kernels_override=_kernel_paths(_split_list(args.kernels), graph) if args.kernels else None,
    )


class Checkouts(dict):
    """Side -> tree. The base worktree is made when first asked for (from the main thread,
    where Ctrl-C is held back around it): a base served whole from the cache needs none."""

    def __init__(self, scratch: Scratch, base: str, *, head_tree: Path):
        super().__init__({AFTER: head_tree})
        self._scratch, self._base = scratch, base

    def __missing__(self, side: str) -> Path:
        if side != BEFORE:
            raise KeyError(side)
        self[BEFORE] = tree = self._scratch.worktree(self._base)
        return tree


Cache = TypeVar("Cache")


def _open_cache(args: argparse.Namespace, repo: Path, base: str, open_at: Callable[[Path, str], Cache]) -> Cache | None:
    """A cache of this run's base tree in the base-cache folder, or None (with a one-line warning
    when it cannot be used)."""
    if args.no_base_cache:
        return None
    root = args.base_cache_dir or default_cache_dir()
    try:
        return open_at(root, changes.git(repo, "rev-parse", f"{base}^{{tree}}").strip())
    except (OSError, changes.GitError) as exc:
        print(f"flydsl-lint-verify: warning: {exc}; running without the base cache", file=sys.stderr)
        args.no_base_cache = True  # said once: the capture's cache is the same folder
        return None


def _open_base_cache(args: argparse.Namespace, repo: Path, base: str, linker) -> BaseCache | None:
    return _open_cache(args, repo, base,
                       lambda root, tree: BaseCache(root, tree=tree, environment=environment_fingerprint(linker)))


def _run(args: argparse.Namespace, scratch: Scratch) -> int:
    started = time.monotonic()
    repo = changes.repo_root(args.repo)
    config = load_config(repo)
    base = changes.resolve_commit(repo, args.base) if args.base else changes.default_base(repo)
    head = changes.resolve_commit(repo, args.head) if args.head else None
    for test in _split_list(args.tests) or ():
        path = test.split("::")[0]
        if not (changes.has_path(repo, head, path) or changes.has_path(repo, base, path)):
            raise SetupError(f"--tests {test}: no such file at the base or the head")
    plan = _build_plan(args, repo, config, base, head)
    if args.list:
        print(json.dumps(plan.as_dict(), indent=2) if args.report == "json" else _format_plan(plan))
        return EXIT_PARITY

    report = VerifyReport(plan)
    if not plan.empty:
        gpus = device.visible_amd_gpus()
        if plan.mode == "device" and not gpus:
            raise SetupError("device mode needs an AMD GPU and none is visible; use --mode compile")
        if importlib.util.find_spec("flydsl") is None:
            raise SetupError("flydsl is not installed (run scripts/install_compile_toolchain.sh)")
        scratch.open(repo, keep=args.keep)
        report.evidence_dir = scratch.path if args.keep else None
        trees = Checkouts(scratch, base, head_tree=scratch.worktree(head) if head else repo)
        progress = ProgressBar()
        evidence = scratch.path / "evidence"
        try:
            if plan.mode == "compile":
                linker = find_linker(scratch.path / "toolchain")
                findings = run_compile_mode(
                    plan, trees, config=config, linker=linker, evidence_root=evidence, jobs=args.jobs,
                    base_cache=_open_base_cache(args, repo, base, linker),
                    on_progress=lambda p: progress.update(
                        p.finished_jobs, p.total_jobs, f"capture jobs, {p.compilations} compilations, "
                        f"{time.monotonic() - started:.0f}s"),
                )
                report.comparisons, report.notes = findings.comparisons, findings.notes
                report.unverified = findings.unverified
                if not report.comparisons:
                    raise SetupError(no_kernel_compiled_message(plan, findings.outcomes))
            else:
                from flydsl_lint.verify import rocm_device  # imports torch; device mode only

                both_trees = {side: trees[side] for side in (BEFORE, AFTER)}
                report.device_findings = device.run_device_mode(
                    plan, both_trees, config=config, device=rocm_device.RocmDevice(), evidence_root=evidence, gpus=gpus,
                )
                report.unverified = device.unverified(report.device_findings)
        finally:
            progress.close()
        if args.keep:
            report.kept = _kept_evidence(evidence, base, head, repo)
    report.elapsed_seconds = time.monotonic() - started
    renderer = RENDERERS.get(args.report, render_terminal)
    print(renderer(report))
    return report.exit_code


def _kept_evidence(evidence: Path, base: str, head: str | None, repo: Path) -> list[KeptEvidence]:
    """One entry per side; a side checked out for the run names its commit (worktrees are always removed)."""
    after = f"working tree {repo}" if head is None else f"commit {head[:12]}, its worktree removed"
    return [KeptEvidence.scan(BEFORE, f"commit {base[:12]}, its worktree removed", evidence),
            KeptEvidence.scan(AFTER, after, evidence)]


def _format_plan(plan) -> str:
    sections = [
        ("base", [plan.base]), ("head", [plan.head]), ("mode", [plan.mode]), ("archs", plan.archs),
        ("changed", plan.changed), ("affected kernels", plan.kernels), ("tests", plan.tests),
        ("probes", plan.probes), ("notes", plan.notes),
    ]
    lines = []
    for title, items in sections:
        lines.append(f"{title}:" + ("" if items else " (none)"))
        lines += [f"  {item}" for item in items]
    return "\n".join(lines)


def _kept_note(scratch: Scratch) -> str:
    """Where --keep left the logs of a run that stopped early: the error line is all that is printed."""
    return f" (evidence kept in {scratch.path})" if scratch.keep and scratch.path and scratch.path.exists() else ""


def _left_behind(scratch: Scratch) -> str:
    return f"could not remove {', '.join(scratch.leftovers)} (remove it, then run `git worktree prune`)"


def main(argv: list[str] | None = None) -> int:
    """Run the command. Ctrl-C (and SIGTERM: see ``cli``) propagates as KeyboardInterrupt once the
    temporary directory and worktrees are removed; its message names whatever could not be."""
    args = parse_args(argv)
    scratch = Scratch()
    try:
        status = _run_and_clean_up(args, scratch)
    except KeyboardInterrupt:
        raise KeyboardInterrupt(_left_behind(scratch) if scratch.leftovers else "") from None
    if scratch.leftovers:
        print(f"flydsl-lint-verify: warning: {_left_behind(scratch)}", file=sys.stderr)
    return status


def _run_and_clean_up(args: argparse.Namespace, scratch: Scratch) -> int:
    try:
        try:
            return _run(args, scratch)
        finally:
            scratch.close()
    except (SetupError, ConfigError, ToolchainError, changes.GitError) as exc:
        print(f"flydsl-lint-verify: setup error: {exc}{_kept_note(scratch)}", file=sys.stderr)
        return EXIT_SETUP
    except HookError as exc:
        print(f"flydsl-lint-verify: error: {exc}", file=sys.stderr)
        return EXIT_SETUP
