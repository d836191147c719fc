"""Compile mode: build both sides' specializations per arch and compare them."""

from __future__ import annotations

import re
import signal
import threading
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Mapping

from flydsl_lint.verify.base_cache import BaseCache
from flydsl_lint.verify.capture import (
    COMPILES_MANIFEST, IMPORT_ERROR, NOT_FOUND, PROBE_LABEL, collected_test, node_id_selects,
)
from flydsl_lint.verify.compare import (
    CHANGED, COMPILE_ERROR, IDENTICAL, NONDETERMINISTIC, ONLY_AFTER, ONLY_BEFORE, KernelComparison, Unverified,
    compare_kernels, first_line,
)
from flydsl_lint.verify.compile import (
    CompileResult, SpecializationKey, compare, kill_running_captures, killed_message, run_capture,
)
from flydsl_lint.verify.config import VerifyConfig
from flydsl_lint.verify.plan import Plan
from flydsl_lint.verify.toolchain import Linker

BEFORE, AFTER = "before", "after"
RECHECK = "recheck"  # evidence of the second captures, apart from each side's first
ALONE = "alone"  # evidence of the captures run again by themselves after a kill
MAX_ALONE_RECHECKS = 8  # tests that erred on one side only, each captured again by itself (per run)
HOST_ERROR = "errored before reaching FlyDSL: "  # a test that erred outside FlyDSL, before compiling


@dataclass
class CompileModeFindings:
    comparisons: list[KernelComparison] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    unverified: list[Unverified] = field(default_factory=list)
    # arch -> test or probe label -> (outcome, message), the after side's where
    # it ran the test: why a run compiled nothing.
    outcomes: dict[str, dict[str, tuple[str, str]]] = field(default_factory=dict)


class CaptureProgress:
    """Finished capture jobs and compilations so far, reported about once a second."""

    POLL_SECONDS = 1.0

    def __init__(self, total_jobs: int, evidence_root: Path, on_change: Callable[["CaptureProgress"], None] | None):
        self.total_jobs = total_jobs
        self.finished_jobs = 0
        self._evidence_root = evidence_root
        self._on_change = on_change
        self._done = threading.Event()

    @property
    def compilations(self) -> int:
        manifests = self._evidence_root.glob(f"*/*/*/*/{COMPILES_MANIFEST}")
        return sum(path.read_bytes().count(b"\n") for path in manifests)

    def job_finished(self) -> None:
        self.finished_jobs += 1  # only from worker threads; a torn count is harmless

    def __enter__(self):
        if self._on_change:
            threading.Thread(target=self._report_until_done, daemon=True).start()
        return self

    def __exit__(self, *exc):
        self._done.set()

    def _report_until_done(self) -> None:
        while not self._done.wait(self.POLL_SECONDS):
            self._on_change(self)


def _outcome_findings(arch: str, before: CompileResult, after: CompileResult) -> CompileModeFindings:
    """Tests that errored outside FlyDSL: breaking only when the change introduced the error; not
    verified when a side could not import what the test needs (the same import error on both sides),
    a node id asked for names no test on either side, or a test failed on both sides before it
    called any kernel."""
    findings = CompileModeFindings()
    compiled_after = {key.label for key in after.specializations}
    reached = compiled_after | {key.label for key in before.specializations} | before.calling | after.calling
    for label in sorted(set(before.outcomes) | set(after.outcomes)):
        old, old_message = before.outcomes.get(label, ("absent", ""))
        new, new_message = after.outcomes.get(label, ("absent", ""))
        if COMPILE_ERROR in (old, new):
            continue  # already reported from the compile failures
        if old == new == NOT_FOUND:
            findings.unverified.append(Unverified(label, arch, new_message))
        elif new == IMPORT_ERROR and old in (IMPORT_ERROR, "error"):
            findings.unverified.append(Unverified(collected_test(label), arch, first_line(new_message)))
        elif old == IMPORT_ERROR:
            findings.unverified.append(Unverified(collected_test(label), arch,
                                                  f"{first_line(old_message)} (before the change)"))
        elif new == "error" and old != "error" and label in compiled_after:
            # Under COMPILE_ONLY no kernel runs, so host code reading its outputs may fail on one
            # side and not the other: what it compiled is compared, the rest is not verified.
            findings.unverified.append(Unverified(label, arch, f"errored after compiling (compile mode computes no "
                                                               f"outputs): {first_line(new_message)}"))
        elif new in ("error", IMPORT_ERROR) and old != "error":
            # e.g. a kernel module that no longer imports: its kernels can no longer be built.
            findings.comparisons.append(KernelComparison(
                "?", arch, COMPILE_ERROR, test_id=label, side=AFTER,
                message=HOST_ERROR + first_line(new_message)))
        elif old == new and new in ("error", "output-mismatch") and label not in reached:
            # It stopped before it called a kernel (a reference computed first that fails here,
            # say): none of its kernels was compared, so it proves nothing either way.
            findings.unverified.append(Unverified(label, arch, f"failed on both sides before calling any FlyDSL "
                                                               f"kernel: {first_line(new_message)}"))
        elif new == "error":
            findings.notes.append(f"[{arch}] {label}: errored on both sides (outside FlyDSL, not counted): "
                                  f"{first_line(new_message)}")
        elif old != new:
            findings.notes.append(f"[{arch}] {label}: {old} before, {new} after")
    return findings


def deal(items: list, parts: int) -> list[list]:
    """``items`` dealt round-robin into at most ``parts`` non-empty groups, the same way every run."""
    parts = max(1, min(parts, len(items)))
    return [items[i::parts] for i in range(parts)]


@dataclass(frozen=True)
class CaptureJob:
    """One capture process: a side, an arch and its share of the plan's tests and probes."""

    side: str
    arch: str
    part: int
    tests: tuple[str, ...]
    probes: tuple[str, ...]


def capture_jobs(plan: Plan, jobs: int) -> list[CaptureJob]:
    """The plan's test items and probes dealt into ``jobs`` groups (like pytest-xdist's
    ``--dist loadfile``), one capture per group, side and arch. Both sides get the same
    groups: a test's results may depend on what its process compiled before it."""
    groups = deal([*(("test", t) for t in plan.tests), *(("probe", p) for p in plan.probes)], jobs)
    work = []
    for arch in plan.archs:
        for side in (BEFORE, AFTER):
            for part, group in enumerate(groups):
                tests = tuple(name for kind, name in group if kind == "test")
                probes = tuple(name for kind, name in group if kind == "probe")
                work.append(CaptureJob(side, arch, part, tests, probes))
    return work


def merge(arch: str, evidence_dir: Path, parts: list[CompileResult]) -> CompileResult:
    """One side's result for an arch from its capture processes, in an order that does not
    depend on how the work was split."""
    merged = CompileResult(arch, evidence_dir)
    for part in parts:
        merged.specializations.update(part.specializations)
        merged.failures += part.failures
        merged.outcomes.update(part.outcomes)
        merged.flydsl_versions |= part.flydsl_versions
        merged.calling |= part.calling
    merged.failures.sort(key=lambda f: (f.label, f.func_name, f.message))
    return merged


def _evidence_dir(evidence_root: Path, job: CaptureJob) -> Path:
    return evidence_root / job.side / job.arch / f"part-{job.part}"


def _cached_base_results(work: list[CaptureJob], base_cache: BaseCache | None,
                         evidence_root: Path) -> dict[CaptureJob, CompileResult]:
    """The base-side jobs ``base_cache`` holds a result for, with that result."""
    found = {}
    for job in work:
        if base_cache and job.side == BEFORE:
            result = base_cache.lookup(base_cache.key(job.arch, job.tests, job.probes), _evidence_dir(evidence_root, job))
            if result is not None:
                found[job] = result
    return found


def _run_all(work: list[CaptureJob], capture: Callable[[CaptureJob], CompileResult],
             jobs: int) -> dict[CaptureJob, CompileResult]:
    """``capture`` for every job, ``jobs`` at a time; on Ctrl-C the running captures are killed."""
    pool = ThreadPoolExecutor(max_workers=max(1, jobs))
    try:
        futures = {job: pool.submit(capture, job) for job in work}
        results = {job: future.result() for job, future in futures.items()}
    except BaseException:
        # Ctrl-C lands here in the main thread; the workers are blocked on subprocesses.
        pool.shutdown(wait=False, cancel_futures=True)
        kill_running_captures()
        raise
    pool.shutdown()
    return results


def _merged_sides(arch: str, evidence_root: Path,
                  results: dict[CaptureJob, CompileResult]) -> tuple[CompileResult, CompileResult]:
    """(before, after) for ``arch`` from its capture jobs' results."""
    return tuple(merge(arch, evidence_root / side / arch,
                       [result for job, result in results.items() if (job.side, job.arch) == (side, arch)])
                 for side in (BEFORE, AFTER))


def _recheck_changed(comparisons: list[KernelComparison], first: tuple[CompileResult, CompileResult],
                     again: tuple[CompileResult, CompileResult]) -> None:
    """A changed specialization whose second capture of either side differs from that side's first
    is not verified (nondeterministic); one whose sides both compile the same again stays changed."""
    for comparison in comparisons:
        if comparison.verdict != CHANGED:
            continue
        key = SpecializationKey(comparison.test_id, comparison.kernel, comparison.occurrence)
        differ = sum(_differs(side.specializations[key], side_again.specializations.get(key))
                     for side, side_again in zip(first, again))
        if differ:
            comparison.verdict = NONDETERMINISTIC
            comparison.message = (f"not verified: the kernel compiles differently from itself (nondeterministic: "
                                  f"{differ} of {len(first)} recaptures differ)")
        else:
            confirmed = "the same again on a second capture of each side"
            comparison.message = "; ".join(filter(None, [comparison.message, confirmed]))


def _alone_jobs(erred: list[tuple[str, str]], first_part: int) -> list[CaptureJob]:
    """A capture of each side for every (arch, label) of a test or probe that erred outside
    FlyDSL on one side: that test or probe alone in its process."""
    jobs = []
    for part, (arch, label) in enumerate(erred, start=first_part):
        if label.startswith(PROBE_LABEL):
            tests, probes = (), (label.removeprefix(PROBE_LABEL),)
        else:
            tests, probes = (collected_test(label),), ()
        jobs += [CaptureJob(side, arch, part, tests, probes) for side in (BEFORE, AFTER)]
    return jobs


def _recheck_errors(findings: CompileModeFindings, first: tuple[CompileResult, CompileResult],
                    again: tuple[CompileResult, CompileResult], alone: bool) -> list[KernelComparison]:
    """A test that erred outside FlyDSL on the changed side only, captured again (`again`: by itself
    if `alone`, else with its group): the same outcomes on both sides, the change's error; else its
    error does not follow the change, and what both sides compiled by themselves is compared
    instead (returned), or, when they did not both compile by themselves, it is not verified."""
    compared = []
    for comparison in list(findings.comparisons):
        label = comparison.test_id
        if all(_outcome(side, label) == _outcome(side_again, label) for side, side_again in zip(first, again)):
            continue  # the same on both sides again: the change's error
        findings.comparisons.remove(comparison)
        before_alone, after_alone = (_of_label(side, label) for side in again)
        error = comparison.message.removeprefix(HOST_ERROR)
        compiled_alone = before_alone.specializations and after_alone.specializations
        if alone and compiled_alone and _outcome(after_alone, label) != "error":
            for each in compare(before_alone, after_alone):  # with any compile failure of the test
                each.message = "; ".join(filter(None, [each.message, f"captured by itself: on the changed side, after "
                                                                     f"the other tests of its process, it erred: {error}"]))
                compared.append(each)
            continue
        again_how = "when captured again by itself" if alone else "on a second capture"
        findings.unverified.append(Unverified(collected_test(label), comparison.arch,
                                              f"errored on the changed side only, and not {again_how} "
                                              f"(compile mode computes no outputs): {error}"))
    return compared


def _outcome(result: CompileResult, label: str) -> str:
    """How a test or probe ended in `result` ("absent" when it did not run there)."""
    return result.outcomes.get(label, ("absent",))[0]


def _of_label(result: CompileResult, label: str) -> CompileResult:
    """What `result` holds of one test or probe: its specializations, compile failures and outcome."""
    return CompileResult(result.arch, result.evidence_dir,
                         {key: isa for key, isa in result.specializations.items() if key.label == label},
                         [failure for failure in result.failures if failure.label == label],
                         {label: result.outcomes[label]} if label in result.outcomes else {})


def _set_aside_killed_runs(comparisons: list[KernelComparison], sides: tuple[CompileResult, CompileResult],
                           findings: CompileModeFindings) -> None:
    """A capture run SIGKILL ended (the machine's out-of-memory killer, most often) never reached the
    tests after the kill: a kernel missing on its side is not verified, and nor is the kill itself,
    where they would otherwise read as the change breaking parity."""
    sigkill = killed_message(signal.SIGKILL)
    killed = {side for side, result in zip((BEFORE, AFTER), sides) if _killed_by_sigkill(result)}
    for comparison in list(comparisons) if killed else ():
        missing = {ONLY_BEFORE: AFTER, ONLY_AFTER: BEFORE}.get(comparison.verdict)
        if comparison.verdict == COMPILE_ERROR and comparison.side in killed and comparison.message == sigkill:
            side, what = comparison.side, "the capture of the tests"
        elif missing in killed:
            side, what = missing, f"the capture before it compiled {comparison.kernel}"
        else:
            continue
        comparisons.remove(comparison)
        findings.unverified.append(Unverified(comparison.test_id, comparison.arch,
                                              f"{what} on the {side} side was {sigkill}"))


# `File "<repo>/kernels/k.py", line 656` of a (DSL) traceback: the line an edit may have moved.
_TRACEBACK_LINE = re.compile(r'(File "[^"\n]*", line )\d+')
_ANY_LINE = r"\1N"


def _set_aside_failures_on_both_sides(comparisons: list[KernelComparison], findings: CompileModeFindings) -> None:
    """A test or probe that fails to compile the same way before and after the change (a checkout
    newer than the installed flydsl, say) shows nothing of the change: not verified, not broken.
    The same way means the same message but for the line numbers of its traceback, which a change
    moves (an edit above the `@flyc.jit` the error points at)."""
    before = [c for c in comparisons if c.verdict == COMPILE_ERROR and c.side == BEFORE]
    for comparison in [c for c in comparisons if c.verdict == COMPILE_ERROR and c.side == AFTER]:
        failure = (comparison.test_id, _TRACEBACK_LINE.sub(_ANY_LINE, comparison.message))
        twin = next((c for c in before if (c.test_id, _TRACEBACK_LINE.sub(_ANY_LINE, c.message)) == failure), None)
        if twin is None:
            continue
        before.remove(twin)
        comparisons.remove(twin)
        comparisons.remove(comparison)
        findings.unverified.append(Unverified(comparison.test_id, comparison.arch,
                                              f"fails to compile on both sides, the same way: "
                                              f"{first_line(comparison.message)}"))


def _killed_by_sigkill(result: CompileResult) -> bool:
    sigkill = killed_message(signal.SIGKILL)
    return any(failure.label in ("tests", "probes") and failure.message == sigkill for failure in result.failures)


def _differs(first, again) -> bool:
    return again is None or compare_kernels(first, again).verdict != IDENTICAL


def _set_aside_ids_of_other_archs(outcomes: dict[str, CompileModeFindings],
                                  sides: dict[str, tuple[CompileResult, CompileResult]]) -> None:
    """A node id that matches no test at one arch but does at another (FlyDSL parametrizes its
    tests by arch) names nothing to compare there: a note, not a test that could not be run."""
    def labels(arch: str, found: bool) -> set[str]:
        return {label for result in sides[arch] for label, (outcome, _) in result.outcomes.items()
                if (outcome != NOT_FOUND) == found}

    found_at = {arch: labels(arch, found=True) for arch in sides}
    for arch, findings in outcomes.items():
        missing = labels(arch, found=False) - found_at[arch]
        for item in [item for item in findings.unverified if item.test in missing]:
            elsewhere = [other for other in sides if item.test in found_at[other]]
            if elsewhere:
                findings.unverified.remove(item)
                findings.notes.append(f"[{arch}] {item.test}: not a test at {arch}, only at "
                                      f"{', '.join(elsewhere)}: nothing to compare")


def _note_named_tests_skipped_on_both_sides(plan: Plan, comparisons: list, arch: str,
                                            sides: tuple[CompileResult, CompileResult],
                                            findings: CompileModeFindings) -> None:
    """A test named by node id (`--tests file::test`) that pytest skipped on both sides (a skip,
    or `xfail(run=False)`) compiled nothing: a note saying so and why, not silence beside a
    parity that holds for the others."""
    named = [test for test in plan.tests if "::" in test]
    compared = {comparison.test_id for comparison in comparisons}
    before, after = sides
    for label, (outcome, message) in sorted(after.outcomes.items()):
        selected = any(node_id_selects(test, label) for test in named)
        if selected and outcome == "skipped" and before.outcomes.get(label, ("",))[0] == "skipped" \
                and label not in compared:
            reason = first_line(message)
            findings.notes.append(f"[{arch}] {label}: skipped on both sides{f' ({reason})' if reason else ''}: "
                                  "no kernel to compare")


def run_compile_mode(
    plan: Plan,
    trees: Mapping[str, Path],
    *,
    config: VerifyConfig,
    linker: Linker,
    evidence_root: Path,
    jobs: int,
    on_progress: Callable[[CaptureProgress], None] | None = None,
    base_cache: BaseCache | None = None,
) -> CompileModeFindings:
    """Capture processes for each (side, arch), ``jobs`` at a time, the plan's tests and
    probes split into ``jobs`` groups; each side only runs tests it has. With
    ``base_cache``, a base-side group found there is not compiled again, and one
    compiled is stored. ``trees`` is read (from this thread) only for a side that
    compiles something, so a base served whole from the cache needs no checkout."""
    work = capture_jobs(plan, jobs)
    results = _cached_base_results(work, base_cache, evidence_root)
    to_run = [job for job in work if job not in results]
    roots = {side: trees[side] for side in {job.side for job in to_run}}
    progress = CaptureProgress(len(to_run), evidence_root, on_progress)

    def capture(job: CaptureJob, root: Path = evidence_root, store: bool = True) -> CompileResult:
        tree = roots[job.side]
        result = run_capture(
            tree,
            arch=job.arch,
            evidence_dir=_evidence_dir(root, job),
            linker=linker,
            tests=[t for t in job.tests if (tree / t.split("::")[0]).exists()],
            probes=list(job.probes),
            timeout=config.timeout_seconds,
        )
        if store and base_cache and job.side == BEFORE:
            base_cache.store(base_cache.key(job.arch, job.tests, job.probes), result)
        progress.job_finished()
        return result

    with progress:
        results.update(_run_all(to_run, capture, jobs))
    if jobs > 1:
        # With captures side by side the out-of-memory killer ends the largest; by itself it may
        # fit: each killed one runs again alone before what it never reached is not verified.
        for job in [job for job in to_run if _killed_by_sigkill(results[job])]:
            results[job] = capture(job, evidence_root / ALONE)

    findings = CompileModeFindings()
    sides = {arch: _merged_sides(arch, evidence_root, results) for arch in plan.archs}
    comparisons = {arch: compare(*sides[arch]) for arch in plan.archs}
    outcomes = {arch: _outcome_findings(arch, *sides[arch]) for arch in plan.archs}
    for arch in plan.archs:
        _set_aside_killed_runs(comparisons[arch], sides[arch], outcomes[arch])
        _set_aside_failures_on_both_sides(comparisons[arch], outcomes[arch])
    changed = {(c.arch, c.test_id) for arch in plan.archs for c in comparisons[arch] if c.verdict == CHANGED}
    erred = {(c.arch, c.test_id) for arch in plan.archs for c in outcomes[arch].comparisons}
    if changed or erred:
        # A kernel the backend compiles differently from run to run would otherwise be reported as
        # broken (or, by luck, as identical): capture those groups once more, both sides. Host code
        # that errs on one side only is captured again by itself, both sides: COMPILE_ONLY's garbage
        # outputs depend on what ran before it in its process.
        # Beyond a few such tests (a change that breaks an import errs in every test) their groups
        # are captured again instead: a process per test and side would take longer than the run.
        alone = len(erred) <= MAX_ALONE_RECHECKS
        rechecks = [job for job, result in results.items()
                    if any((job.arch, key.label) in changed for key in result.specializations)
                    or (not alone and any((job.arch, label) in erred for label in result.outcomes))]
        if alone:
            rechecks += _alone_jobs(sorted(erred), first_part=1 + max(job.part for job in work))
        roots.update({job.side: trees[job.side] for job in rechecks})  # a base served from the cache
        rechecked = _run_all(rechecks, lambda job: capture(job, evidence_root / RECHECK, store=False), jobs)
        for arch in plan.archs:
            again = _merged_sides(arch, evidence_root / RECHECK, rechecked)
            _recheck_changed(comparisons[arch], sides[arch], again)
            comparisons[arch] += _recheck_errors(outcomes[arch], sides[arch], again, alone)
    _set_aside_ids_of_other_archs(outcomes, sides)
    for arch in plan.archs:
        _note_named_tests_skipped_on_both_sides(plan, comparisons[arch], arch, sides[arch], outcomes[arch])
        outcome_findings = outcomes[arch]
        before, after = sides[arch]
        findings.comparisons += comparisons[arch] + outcome_findings.comparisons
        findings.notes += outcome_findings.notes
        findings.unverified += outcome_findings.unverified
        findings.outcomes[arch] = {**before.outcomes, **after.outcomes}
    if base_cache and base_cache.hits:
        archs = sorted({key.arch for key in base_cache.hits})
        findings.notes.append(f"base side served from the base cache ({len(base_cache.hits)} capture group(s), "
                              f"{', '.join(archs)}): not compiled again")
    return findings
