"""Compile mode: build both sides' specializations per arch and compare them."""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from flydsl_lint.verify.compare import KernelComparison
from flydsl_lint.verify.compile import CompileResult, compare, kill_running_captures, run_capture
from flydsl_lint.verify.config import VerifyConfig
from flydsl_lint.verify.plan import Plan
from flydsl_lint.verify.toolchain import Linker

BEFORE, AFTER = "before", "after"


@dataclass
class CompileModeFindings:
    comparisons: list[KernelComparison] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


class CaptureProgress:
    """Counts finished capture jobs and compilations so far, for the progress bar."""

    def __init__(self, total_jobs: int, on_change: Callable[["CaptureProgress"], None] | None):
        self.total_jobs = total_jobs
        self.finished_jobs = 0
        self._on_change = on_change
        self._lock = threading.Lock()

    def job_finished(self) -> None:
        with self._lock:
            self.finished_jobs += 1
        if self._on_change:
            self._on_change(self)


def _outcome_notes(arch: str, before: CompileResult, after: CompileResult) -> list[str]:
    """Tests whose non-compile outcome differs between sides: informative, not parity-breaking."""
    notes = []
    for label in sorted(set(before.outcomes) | set(after.outcomes)):
        old = before.outcomes.get(label, ("absent", ""))
        new = after.outcomes.get(label, ("absent", ""))
        if old[0] != new[0] and "compile-error" not in (old[0], new[0]):
            detail = f": {new[1].splitlines()[0]}" if new[1] else ""
            notes.append(f"[{arch}] {label}: {old[0]} before, {new[0]} after{detail}")
    return notes


def run_compile_mode(
    plan: Plan,
    trees: dict[str, Path],
    *,
    config: VerifyConfig,
    linker: Linker,
    evidence_root: Path,
    jobs: int,
    on_progress: Callable[[CaptureProgress], None] | None = None,
) -> CompileModeFindings:
    """One capture per (side, arch), ``jobs`` at a time; each side only runs tests it has."""
    work = [(side, arch) for arch in plan.archs for side in (BEFORE, AFTER)]
    progress = CaptureProgress(len(work), on_progress)

    def capture(side: str, arch: str) -> CompileResult:
        tree = trees[side]
        result = run_capture(
            tree,
            arch=arch,
            evidence_dir=evidence_root / side / arch,
            linker=linker,
            tests=[t for t in plan.tests if (tree / t.split("::")[0]).exists()],
            probes=plan.probes,
            timeout=config.timeout_seconds,
        )
        progress.job_finished()
        return result

    pool = ThreadPoolExecutor(max_workers=max(1, jobs))
    try:
        futures = {key: pool.submit(capture, *key) for key in work}
        results = {key: future.result() for key, future in futures.items()}
    except BaseException:
        # Ctrl-C lands here in the main thread; the workers are blocked on subprocesses.
        pool.shutdown(wait=False, cancel_futures=True)
        kill_running_captures()
        raise
    pool.shutdown()

    findings = CompileModeFindings()
    for arch in plan.archs:
        before, after = results[(BEFORE, arch)], results[(AFTER, arch)]
        findings.comparisons.extend(compare(before, after))
        findings.notes.extend(_outcome_notes(arch, before, after))
    return findings
