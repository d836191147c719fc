"""A kernel the backend compiles differently from run to run is "not verified", never "parity broken"
nor "parity holds": a specialization that differs is captured once more on both sides (issues 25/26).

The fake compile below stands in for run_capture: each call is one fresh capture process, and
the ISA of kernel ``flaky`` depends on how many captures ran before it."""

from __future__ import annotations

from pathlib import Path

import pytest

from flydsl_lint.verify import runner
from flydsl_lint.verify.base_cache import BaseCache
from flydsl_lint.verify.compare import CHANGED, IDENTICAL, NONDETERMINISTIC
from flydsl_lint.verify.compile import CompileResult, SpecializationKey
from flydsl_lint.verify.config import VerifyConfig
from flydsl_lint.verify.isa import KernelIsa, Resources
from flydsl_lint.verify.plan import Plan
from flydsl_lint.verify.report import EXIT_BROKEN, EXIT_PARITY, EXIT_SETUP, VerifyReport, render_github, render_terminal
from flydsl_lint.verify.toolchain import Linker

TEST = "tests/kernels/test_moe.py"
LABEL = f"{TEST}::test_moe"
ORDER = ["v_add_u32 v1, v2, v3", "v_mov_b32 v4, 0"]


class FakeCompile:
    """run_capture's stand-in: ``flaky`` gets the commuted schedule on the captures numbered in
    ``odd_runs`` (0-based, in the order they ran); ``stable`` always compiles the same, unless the
    head side's tree says otherwise (a real change)."""

    def __init__(self, odd_runs=(), head_changes_stable=False):
        self.odd_runs, self.head_changes_stable = set(odd_runs), head_changes_stable
        self.calls: list[tuple[str, Path]] = []
        self.tests_asked: list[list[str]] = []  # what each capture was asked to run

    def __call__(self, tree: Path, *, arch: str, evidence_dir: Path, tests=(), **_):
        run = len(self.calls)
        self.calls.append((tree.name, evidence_dir))
        self.tests_asked.append(list(tests))
        flaky = list(reversed(ORDER)) if run in self.odd_runs else ORDER
        stable = ORDER + (["s_nop 0"] if self.head_changes_stable and tree.name == "head" else [])
        result = CompileResult(arch, evidence_dir)
        for kernel, instructions in (("flaky", flaky), ("stable", stable)):
            isa = KernelIsa(kernel, arch, instructions, Resources())
            result.specializations[SpecializationKey(LABEL, kernel, 0)] = isa
        result.outcomes[LABEL] = ("passed", "")
        return result


def run(tmp_path: Path, fake: FakeCompile, base_cache: BaseCache | None = None) -> VerifyReport:
    plan = Plan("base", "head", [], [], [TEST], [], ["gfx942"], "compile")
    trees = {}
    for side, name in ((runner.BEFORE, "base"), (runner.AFTER, "head")):
        trees[side] = tmp_path / name
        (trees[side] / TEST).parent.mkdir(parents=True, exist_ok=True)
        (trees[side] / TEST).write_text("")
    findings = runner.run_compile_mode(plan, trees, config=VerifyConfig(), linker=Linker("fake", tmp_path),
                                       evidence_root=tmp_path / "evidence", jobs=1, base_cache=base_cache)
    return VerifyReport(plan, comparisons=findings.comparisons, notes=findings.notes, unverified=findings.unverified)


def verdicts(report: VerifyReport) -> dict[str, str]:
    return {c.kernel: c.verdict for c in report.comparisons}


@pytest.mark.parametrize("odd_run", [0, 1], ids=["base-was-odd", "head-was-odd"])
def test_a_kernel_that_compiles_differently_from_itself_is_not_verified(tmp_path, monkeypatch, odd_run):
    fake = FakeCompile(odd_runs={odd_run})
    monkeypatch.setattr(runner, "run_capture", fake)
    report = run(tmp_path, fake)
    assert verdicts(report) == {"flaky": NONDETERMINISTIC, "stable": IDENTICAL}
    [flaky] = report.nondeterministic
    assert flaky.message == ("not verified: the kernel compiles differently from itself "
                             "(nondeterministic: 1 of 2 recaptures differ)")
    assert report.exit_code == EXIT_SETUP and not report.broken
    text = render_terminal(report)
    assert f"nondeterministic {LABEL} [gfx942] flaky" in text
    assert text.splitlines()[-1].startswith(
        "parity not verified: 1 specialization compiled differently when captured again")
    assert f"::warning file={TEST},title=FlyDSL parity: not verified::nondeterministic {LABEL}" in render_github(report)
    assert "::error" not in render_github(report)
    # Each side was captured again, in a fresh capture, its evidence apart from the first.
    assert [tree for tree, _ in fake.calls] == ["base", "head", "base", "head"]
    assert [d.relative_to(tmp_path / "evidence").parts[0] for _, d in fake.calls[2:]] == ["recheck", "recheck"]


def test_a_real_change_stays_parity_broken_after_the_recheck(tmp_path, monkeypatch):
    fake = FakeCompile(head_changes_stable=True)
    monkeypatch.setattr(runner, "run_capture", fake)
    report = run(tmp_path, fake)
    assert verdicts(report) == {"flaky": IDENTICAL, "stable": CHANGED}
    assert report.exit_code == EXIT_BROKEN and report.verdict() == "parity broken"
    assert report.comparisons[1].message == "the same again on a second capture of each side"
    assert len(fake.calls) == 4


def test_identical_sides_are_not_captured_again(tmp_path, monkeypatch):
    fake = FakeCompile()
    monkeypatch.setattr(runner, "run_capture", fake)
    report = run(tmp_path, fake)
    assert report.exit_code == EXIT_PARITY and len(fake.calls) == 2


def _cache(tmp_path: Path) -> BaseCache:
    return BaseCache(tmp_path / "cache", tree="t" * 40, environment={"flydsl": "fake"}, key_path=tmp_path / "key")


def test_a_cached_base_is_rechecked_but_the_recapture_is_not_cached(tmp_path, monkeypatch):
    cache = _cache(tmp_path)
    warm_up = FakeCompile()
    monkeypatch.setattr(runner, "run_capture", warm_up)
    assert run(tmp_path / "cold", warm_up, cache).exit_code == EXIT_PARITY
    # The head now compiles the odd schedule once: the cached base and the head differ.
    fake = FakeCompile(odd_runs={0})
    monkeypatch.setattr(runner, "run_capture", fake)
    report = run(tmp_path / "warm", fake, _cache(tmp_path))
    assert verdicts(report) == {"flaky": NONDETERMINISTIC, "stable": IDENTICAL}
    assert [tree for tree, _ in fake.calls] == ["head", "base", "head"]
    # The cache still holds the first capture, not the recheck's.
    again = FakeCompile(odd_runs={1})  # the recheck's base would be odd if it ran
    monkeypatch.setattr(runner, "run_capture", again)
    third = run(tmp_path / "third", again, _cache(tmp_path))
    assert [tree for tree, _ in again.calls] == ["head"]
    assert third.exit_code == EXIT_PARITY


HOST_LABEL = f"{TEST}::test_sort_host"
GARBAGE = "IndexError: index -128 is out of bounds for dimension 1 with size 8"


class FakeHostError(FakeCompile):
    """A second test, ``test_sort_host``, compiles nothing itself (its kernel was built by an earlier
    test of the process) and indexes with COMPILE_ONLY's garbage outputs: it errs on the captures
    numbered in ``erring_runs``; with ``head_always_errs`` the head side errs every time."""

    def __init__(self, erring_runs=(), head_always_errs=False):
        super().__init__()
        self.erring_runs, self.head_always_errs = set(erring_runs), head_always_errs

    def __call__(self, tree: Path, *, arch: str, evidence_dir: Path, **kwargs):
        run = len(self.calls)
        result = super().__call__(tree, arch=arch, evidence_dir=evidence_dir, **kwargs)
        errs = run in self.erring_runs or (self.head_always_errs and tree.name == "head")
        result.outcomes[HOST_LABEL] = ("error", GARBAGE) if errs else ("passed", "")
        return result


def test_a_host_error_on_one_side_that_does_not_recur_is_not_verified(tmp_path, monkeypatch):
    """FlyDSL HEAD's moe_sorting under COMPILE_ONLY: a different test erred on the head side only in
    each of two runs of the same change, which read as a compile error of the change (exit 1)."""
    fake = FakeHostError(erring_runs={1})  # the head's first capture; its second passes
    monkeypatch.setattr(runner, "run_capture", fake)
    report = run(tmp_path, fake)
    assert len(fake.calls) == 4 and not report.broken
    assert [(u.test, u.reason) for u in report.unverified] == [(
        HOST_LABEL, f"errored on the changed side only, and not when captured again by itself (compile mode "
                    f"computes no outputs): {GARBAGE}")]
    assert report.exit_code == EXIT_SETUP


class ErrsAfterOtherTests(FakeCompile):
    """`test_sort_host` compiles kernel `sort` when it runs by itself; after the file's other tests in
    one process it reads their garbage outputs, and on the head side it errs before compiling."""

    def __call__(self, tree: Path, *, arch: str, evidence_dir: Path, tests=(), **kwargs):
        if list(tests) == [HOST_LABEL]:
            self.calls.append((tree.name, evidence_dir))
            result = CompileResult(arch, evidence_dir)
            result.specializations[SpecializationKey(HOST_LABEL, "sort", 0)] = KernelIsa("sort", arch, ORDER, Resources())
            result.outcomes[HOST_LABEL] = ("passed", "")
            return result
        result = super().__call__(tree, arch=arch, evidence_dir=evidence_dir, **kwargs)
        result.outcomes[HOST_LABEL] = ("error", GARBAGE) if tree.name == "head" else ("passed", "")
        return result


def test_a_host_error_after_other_tests_is_verified_by_the_test_captured_alone(tmp_path, monkeypatch):
    """v0.3.1's test_moe_sorting.py under COMPILE_ONLY: one parametrization erred on the head side
    only, the same on a second capture of its group, so it read as the change breaking parity; by
    itself it compiled its four kernels alike on both sides."""
    fake = ErrsAfterOtherTests()
    monkeypatch.setattr(runner, "run_capture", fake)
    report = run(tmp_path, fake)
    # The group once per side, then the erring test alone once per side (not the whole file again).
    assert [name for name, _ in fake.calls] == ["base", "head", "base", "head"]
    assert report.unverified == [] and not report.broken and report.exit_code == EXIT_PARITY
    [alone] = [c for c in report.comparisons if c.test_id == HOST_LABEL]
    assert (alone.kernel, alone.verdict) == ("sort", IDENTICAL)
    assert alone.message == (f"captured by itself: on the changed side, after the other tests of its process, "
                             f"it erred: {GARBAGE}")


def test_a_host_error_the_change_brings_each_time_still_breaks_parity(tmp_path, monkeypatch):
    fake = FakeHostError(head_always_errs=True)
    monkeypatch.setattr(runner, "run_capture", fake)
    report = run(tmp_path, fake)
    assert len(fake.calls) == 4 and report.unverified == []
    [broken] = report.broken
    assert (broken.test_id, broken.side, broken.message) == (HOST_LABEL, "after", f"errored before reaching FlyDSL: {GARBAGE}")
    assert report.exit_code == EXIT_BROKEN


class KilledOnce(FakeCompile):
    """run_capture's stand-in whose first capture of the head side ends as the out-of-memory
    killer ends one: nothing compiled, the run's failure recorded."""

    def __call__(self, tree: Path, *, arch: str, evidence_dir: Path, **kwargs):
        import signal

        from flydsl_lint.verify.compile import CompileFailure, killed_message

        if tree.name == "head" and not any(name == "head" for name, _ in self.calls):
            self.calls.append((tree.name, evidence_dir))
            return CompileResult(arch, evidence_dir, failures=[CompileFailure("tests", "", killed_message(signal.SIGKILL))])
        return super().__call__(tree, arch=arch, evidence_dir=evidence_dir, **kwargs)


@pytest.mark.parametrize("jobs", [1, 2])
def test_a_capture_the_killer_ended_beside_others_runs_again_alone(tmp_path, monkeypatch, jobs):
    fake = KilledOnce()
    monkeypatch.setattr(runner, "run_capture", fake)
    plan = Plan("base", "head", [], [], [TEST], [], ["gfx942"], "compile")
    trees = {runner.BEFORE: tmp_path / "base", runner.AFTER: tmp_path / "head"}
    for tree in trees.values():
        (tree / TEST).parent.mkdir(parents=True)
        (tree / TEST).write_text("")
    findings = runner.run_compile_mode(plan, trees, config=VerifyConfig(), linker=Linker("fake", tmp_path),
                                       evidence_root=tmp_path / "evidence", jobs=jobs)
    if jobs == 1:  # it ran alone already: what it never reached is not verified
        assert sorted(name for name, _ in fake.calls) == ["base", "head"]
        assert findings.comparisons == []
        assert sorted(u.reason.split(" on the ")[0] for u in findings.unverified) == [
            "the capture before it compiled flaky", "the capture before it compiled stable", "the capture of the tests"]
    else:  # the two sides ran side by side (in either order), then the killed one by itself
        assert sorted(name for name, _ in fake.calls) == ["base", "head", "head"]
        assert fake.calls[-1] == ("head", tmp_path / "evidence" / runner.ALONE / runner.AFTER / "gfx942" / "part-0")
        assert {c.kernel: c.verdict for c in findings.comparisons} == {"flaky": IDENTICAL, "stable": IDENTICAL}
        assert findings.unverified == []


class FailsToCompileAlone(ErrsAfterOtherTests):
    """By itself the head side compiles `sort` but fails on a second kernel of the test."""

    def __call__(self, tree: Path, *, arch: str, evidence_dir: Path, tests=(), **kwargs):
        from flydsl_lint.verify.compile import CompileFailure

        result = super().__call__(tree, arch=arch, evidence_dir=evidence_dir, tests=tests, **kwargs)
        if list(tests) == [HOST_LABEL] and tree.name == "head":
            result.failures.append(CompileFailure(HOST_LABEL, "sort_tail", "LLVM ERROR: cannot select"))
        return result


def test_a_compile_failure_of_the_test_captured_alone_still_breaks_parity(tmp_path, monkeypatch):
    fake = FailsToCompileAlone()
    monkeypatch.setattr(runner, "run_capture", fake)
    report = run(tmp_path, fake)
    [broken] = report.broken
    assert (broken.test_id, broken.kernel, broken.side) == (HOST_LABEL, "sort_tail", "after")


def test_past_a_few_erring_tests_their_groups_are_captured_again_instead(tmp_path, monkeypatch):
    """A change that breaks an import errs in every test: a process per test and side would take
    longer than the run, so beyond MAX_ALONE_RECHECKS the groups are captured again."""
    fake = FakeHostError(erring_runs={1})
    monkeypatch.setattr(runner, "run_capture", fake)
    monkeypatch.setattr(runner, "MAX_ALONE_RECHECKS", 0)
    report = run(tmp_path, fake)
    assert all(kwargs_tests == [TEST] for kwargs_tests in fake.tests_asked)
    assert [(u.test, u.reason) for u in report.unverified] == [(
        HOST_LABEL, f"errored on the changed side only, and not on a second capture (compile mode computes "
                    f"no outputs): {GARBAGE}")]
