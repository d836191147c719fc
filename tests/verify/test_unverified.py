"""A test that cannot be imported here is "not verified", never counted as parity; --keep says where
the evidence of each side is."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from flydsl_lint.verify import capture
from flydsl_lint.verify.compare import COMPILE_ERROR, IDENTICAL, KernelComparison, Unverified
from flydsl_lint.verify.compile import CompileResult, SpecializationKey
from flydsl_lint.verify.plan import Plan
from flydsl_lint.verify.report import (
    EXIT_BROKEN, EXIT_SETUP, KeptEvidence, VerifyReport, no_kernel_compiled_message, render_github, render_json,
    render_markdown, render_terminal,
)
from flydsl_lint.verify.runner import AFTER, BEFORE, _outcome_findings

PANDAS = "ModuleNotFoundError: No module named 'pandas'"
TEST = "tests/kernels/test_moe.py"


class CollectError(Exception):
    """Stands in for pytest's Collector.CollectError, which pytest raises ``from`` the ImportError."""


@pytest.fixture
def flydsl_elsewhere(monkeypatch, tmp_path):
    monkeypatch.setattr(capture, "_flydsl_package_dir", lambda: str(tmp_path / "flydsl"))


def _collect_error() -> CollectError:
    try:
        try:
            import flydsl_lint_no_such_module  # noqa: F401
        except ImportError as exc:
            raise CollectError(f"ImportError while importing test module '{TEST}'.\nTraceback:\n...") from exc
    except CollectError as exc:
        return exc


def test_an_import_error_is_classified_and_described_by_its_own_line(flydsl_elsewhere):
    error = _collect_error()
    assert capture.classify_failure(error) == capture.IMPORT_ERROR
    assert capture.describe_failure(error) == "ModuleNotFoundError: No module named 'flydsl_lint_no_such_module'"
    assert capture.classify_failure(ImportError("cannot import name 'x'")) == capture.IMPORT_ERROR
    assert capture.classify_failure(ValueError("no")) == "error"


def _result(outcomes: dict) -> CompileResult:
    return CompileResult("gfx942", Path("/nonexistent"), outcomes=outcomes)


def test_both_sides_failing_to_import_is_not_verified():
    outcome = (capture.IMPORT_ERROR, PANDAS)
    findings = _outcome_findings("gfx942", _result({f"collect:{TEST}": outcome}), _result({f"collect:{TEST}": outcome}))
    assert findings.comparisons == [] and findings.notes == []
    assert findings.unverified == [Unverified(TEST, "gfx942", PANDAS)]


def test_the_before_side_failing_to_import_is_not_verified():
    findings = _outcome_findings("gfx942", _result({f"collect:{TEST}": (capture.IMPORT_ERROR, PANDAS)}),
                                 _result({f"{TEST}::test_a": ("passed", "")}))
    assert findings.unverified == [Unverified(TEST, "gfx942", f"{PANDAS} (before the change)")]


def test_the_change_breaking_an_import_breaks_parity():
    message = "ImportError: cannot import name 'moe_gemm' from 'kernels.moe'"
    findings = _outcome_findings("gfx942", _result({f"{TEST}::test_a": ("passed", "")}),
                                 _result({f"collect:{TEST}": (capture.IMPORT_ERROR, message)}))
    assert findings.unverified == []
    [broken] = findings.comparisons
    assert (broken.verdict, broken.side, broken.test_id) == (COMPILE_ERROR, "after", f"collect:{TEST}")
    assert message in broken.message


def test_a_host_error_after_compiling_on_one_side_is_not_verified_not_broken():
    """COMPILE_ONLY outputs are garbage: moe_sorting's host code indexed with them and raised on the
    changed side only (FlyDSL v0.3.1, flydsl 0.3.1), which read as a compile error of the change."""
    label = f"{TEST}::test_sort[8-256]"
    message = "IndexError: index 8696 is out of bounds for dimension 0 with size 8696"
    after = _result({label: ("error", message)})
    after.specializations[SpecializationKey(label, "sort_kernel_0", 0)] = None
    findings = _outcome_findings("gfx942", _result({label: ("output-mismatch", "")}), after)
    assert findings.comparisons == []
    assert findings.unverified == [Unverified(label, "gfx942", f"errored after compiling (compile mode computes no "
                                                               f"outputs): {message}")]


def test_a_host_error_after_compiling_on_both_sides_is_a_note():
    label = f"{TEST}::test_norm"
    message = "TypeError: 'NoneType' object is not callable"
    before, after = _result({label: ("error", message)}), _result({label: ("error", message)})
    for side in (before, after):
        side.specializations[SpecializationKey(label, "norm_kernel_0", 0)] = None
    findings = _outcome_findings("gfx942", before, after)
    assert findings.unverified == [] and findings.comparisons == []
    assert findings.notes == [f"[gfx942] {label}: errored on both sides (outside FlyDSL, not counted): {message}"]


@pytest.mark.parametrize("outcome", ["output-mismatch", "error"])
def test_a_test_failing_on_both_sides_before_calling_a_kernel_is_not_verified(outcome):
    """A reference benchmark raised inside torch before the kernel was called (FlyDSL v0.3.1's
    test_hgemm_splitk under a CPU torch): nothing was compared, so it must not pass as parity."""
    label = "tests/kernels/test_hgemm_splitk.py::test_mfma_flyc_splitk_hgemm[eager-fp16]"
    message = "AssertionError: Duplicate torch object <function _noop> with different rules"
    findings = _outcome_findings("gfx942", _result({label: (outcome, message)}), _result({label: (outcome, message)}))
    assert findings.comparisons == [] and findings.notes == []
    assert findings.unverified == [Unverified(label, "gfx942", f"failed on both sides before calling any FlyDSL "
                                                               f"kernel: {message}")]
    # One that compiled, or called a kernel an earlier test compiled, and then failed reading the
    # outputs compile mode does not compute: its kernels are compared.
    compiled = _result({label: (outcome, message)})
    compiled.specializations[SpecializationKey(label, "hgemm_kernel_0", 0)] = None
    cached = _result({label: (outcome, message)})
    cached.calling.add(label)
    for after in (compiled, cached):
        assert _outcome_findings("gfx942", _result({label: (outcome, message)}), after).unverified == []


def test_a_host_error_before_any_compile_still_breaks_parity():
    label = f"{TEST}::test_sort[8-256]"
    findings = _outcome_findings("gfx942", _result({label: ("passed", "")}),
                                 _result({label: ("error", "NameError: name 'moe_sort' is not defined")}))
    [broken] = findings.comparisons
    assert (broken.verdict, broken.side) == (COMPILE_ERROR, "after") and findings.unverified == []


def _report(comparisons) -> VerifyReport:
    plan = Plan("a" * 40, "working tree", ["kernels/moe.py"], ["kernels/moe.py"], [TEST, "tests/kernels/test_b.py"],
                [], ["gfx942", "gfx950"], "compile")
    identical = KernelComparison("b_kernel_0", "gfx942", IDENTICAL, test_id="tests/kernels/test_b.py::test_b")
    unverified = [Unverified(TEST, "gfx942", PANDAS), Unverified(TEST, "gfx950", PANDAS)]
    return VerifyReport(plan, [identical, *comparisons], unverified=unverified)


def test_identical_with_an_unverified_test_is_not_parity():
    report = _report([])
    assert report.exit_code == EXIT_SETUP
    text = render_terminal(report)
    assert f"not verified  {TEST} [gfx942,gfx950]: {PANDAS}" in text.splitlines()
    assert text.splitlines()[-1].startswith("parity not verified: 1 test file could not be run here")
    data = json.loads(render_json(report))
    assert data["exit_code"] == EXIT_SETUP
    assert data["unverified"][0] == {"test": TEST, "arch": "gfx942", "reason": PANDAS}
    assert f"| not verified | `{TEST}` | gfx942,gfx950 | | {PANDAS} | |" in render_markdown(report)
    assert f"::warning file={TEST},title=FlyDSL parity: not verified::" in render_github(report)


def test_a_broken_specialization_still_decides_the_exit_code():
    broken = KernelComparison("?", "gfx942", COMPILE_ERROR, test_id="t", side="after", message="boom")
    report = _report([broken])
    assert report.exit_code == EXIT_BROKEN
    assert render_terminal(report).splitlines()[-1].startswith("parity broken")


def test_nothing_compiled_names_the_import_error():
    plan = Plan("a" * 40, "h", [], [], [TEST], [], ["gfx942"], "compile")
    message = no_kernel_compiled_message(plan, {"gfx942": {f"collect:{TEST}": (capture.IMPORT_ERROR, PANDAS)}})
    assert message.endswith(f"[gfx942] {TEST}: import error ({PANDAS})")


def test_keep_prints_one_line_per_side_naming_its_evidence(tmp_path):
    evidence = tmp_path / "evidence"
    for side, compilations in (("before", 2), ("after", 1)):
        tests = evidence / side / "gfx942" / "tests"
        for n in range(compilations):
            (tests / f"c1-{n:04d}" / "k_0").mkdir(parents=True)
            (tests / f"c1-{n:04d}" / "k_0" / "22_final_isa.s").write_text("s_endpgm\n")
        (tests / capture.COMPILES_MANIFEST).write_text("{}\n" * compilations)
        (evidence / side / "gfx942" / "tests.log").write_text("")
    report = _report([])
    report.evidence_dir = tmp_path
    report.kept = [KeptEvidence.scan(BEFORE, "commit " + "a" * 12 + ", its worktree removed", evidence),
                   KeptEvidence.scan(AFTER, "working tree /repo", evidence)]
    lines = render_terminal(report).splitlines()
    assert f"kept before (commit {'a' * 12}, its worktree removed): {evidence / 'before'}: 2 compilations, " \
           f"2 ISA files (*_final_isa.s), logs gfx942/tests.log" in lines
    assert f"kept after (working tree /repo): {evidence / 'after'}: 1 compilation, 1 ISA file (*_final_isa.s), " \
           f"logs gfx942/tests.log" in lines
    assert json.loads(render_json(report))["kept"][1]["directories"] == [str(evidence / "after")]


def test_what_a_capture_killed_by_sigkill_never_reached_is_not_verified_not_broken():
    # The out-of-memory killer ended the changed side's run after its first test: the kernels
    # of the tests it never ran are missing there, which must not read as the change's doing.
    import signal

    from flydsl_lint.verify.compile import CompileFailure, compare, killed_message
    from flydsl_lint.verify.isa import KernelIsa, Resources
    from flydsl_lint.verify.runner import CompileModeFindings, _set_aside_killed_runs

    def side(labels, failures=()):
        result = CompileResult("gfx950", Path("/nonexistent"), failures=list(failures))
        for label in labels:
            result.specializations[SpecializationKey(label, "gemm_0", 0)] = KernelIsa("gemm_0", "gfx950", ["s_endpgm"], Resources())
        return result

    killed = killed_message(signal.SIGKILL)
    assert killed == "killed by SIGKILL (the system's out-of-memory killer?)"
    before = side([f"{TEST}::a", f"{TEST}::b"])
    after = side([f"{TEST}::a"], [CompileFailure("tests", "", killed)])
    comparisons, findings = compare(before, after), CompileModeFindings()
    _set_aside_killed_runs(comparisons, (before, after), findings)
    assert [(c.test_id, c.verdict) for c in comparisons] == [(f"{TEST}::a", IDENTICAL)]
    assert findings.unverified == [
        Unverified(f"{TEST}::b", "gfx950", f"the capture before it compiled gemm_0 on the after side was {killed}"),
        Unverified("tests", "gfx950", f"the capture of the tests on the after side was {killed}")]
    # Another signal (a segfault in the compiler) is the change's crash: it still breaks parity.
    crashed = side([f"{TEST}::a"], [CompileFailure("tests", "", killed_message(signal.SIGSEGV))])
    comparisons, findings = compare(before, crashed), CompileModeFindings()
    _set_aside_killed_runs(comparisons, (before, crashed), findings)
    assert {c.verdict for c in comparisons} == {IDENTICAL, "only-before", COMPILE_ERROR} and not findings.unverified


def test_a_kernel_failing_to_compile_the_same_way_on_both_sides_is_not_verified_not_broken():
    from flydsl_lint.verify.compile import CompileFailure, compare
    from flydsl_lint.verify.runner import CompileModeFindings, _set_aside_failures_on_both_sides

    newer_checkout = "DSLCompileError: 'fly.extract_aligned_pointer_as_index' op operand #0 must be ..."
    probe = "probe:kernels.attention.probes:probe_bf16"

    def side(*failures):
        return CompileResult("gfx942", Path("/nonexistent"), failures=[CompileFailure(*f) for f in failures])

    comparisons, findings = compare(side((probe, "", newer_checkout)), side((probe, "", newer_checkout))), CompileModeFindings()
    _set_aside_failures_on_both_sides(comparisons, findings)
    assert comparisons == [] and findings.unverified == [
        Unverified(probe, "gfx942", f"fails to compile on both sides, the same way: {newer_checkout}")]
    report = _report([])
    report.unverified += findings.unverified
    assert report.verdict() == "parity not verified: 1 test file and 1 probe could not be run here"
    # The change's own failure, or another one than before, still breaks parity.
    for before, after in ((side(), side((probe, "", "boom"))), (side((probe, "", "boom")), side((probe, "", "bang")))):
        comparisons, findings = compare(before, after), CompileModeFindings()
        _set_aside_failures_on_both_sides(comparisons, findings)
        assert ("after", COMPILE_ERROR) in {(c.side, c.verdict) for c in comparisons} and not findings.unverified


def test_the_same_failure_at_a_line_the_change_moved_is_not_verified_not_broken():
    """FlyDSL HEAD's moe_sorting needs ROCm's device libraries, absent here: both sides failed the
    same way, but the fix above its `@flyc.jit` moved the line the DSL traceback names (656 -> 650),
    and 244 such failures read as parity broken."""
    from flydsl_lint.verify.compile import CompileFailure, compare
    from flydsl_lint.verify.runner import CompileModeFindings, _set_aside_failures_on_both_sides

    def failure(line: int, error: str = "ROCm amdgcn bitcode path: /tmp/t/bitcode does not exist") -> str:
        return (f"DSLCompileError: {error}\n\nDSL Traceback (most recent operation last):\n"
                f'  File "<repo>/kernels/moe/moe_sorting_kernel.py", line {line}\n    @flyc.jit\n')

    def side(message: str) -> CompileResult:
        return CompileResult("gfx942", Path("/nonexistent"), failures=[CompileFailure(f"{TEST}::a", "launch", message)])

    comparisons, findings = compare(side(failure(656)), side(failure(650))), CompileModeFindings()
    _set_aside_failures_on_both_sides(comparisons, findings)
    assert comparisons == [] and [u.reason.splitlines()[0] for u in findings.unverified] == [
        "fails to compile on both sides, the same way: DSLCompileError: ROCm amdgcn bitcode path: "
        "/tmp/t/bitcode does not exist"]
    # Another error at the moved line is still the change's.
    comparisons, findings = compare(side(failure(656)), side(failure(650, "op operand #0 must be index"))), \
        CompileModeFindings()
    _set_aside_failures_on_both_sides(comparisons, findings)
    assert ("after", COMPILE_ERROR) in {(c.side, c.verdict) for c in comparisons} and not findings.unverified


def test_a_capture_run_a_signal_ends_records_which_signal(tmp_path):
    import signal

    from flydsl_lint.verify.compile import killed_message, run_capture
    from flydsl_lint.verify.toolchain import Linker

    (tmp_path / "test_dies.py").write_text("import os, signal\n\ndef test_dies():\n    os.kill(os.getpid(), signal.SIGKILL)\n")
    result = run_capture(tmp_path, arch="gfx942", evidence_dir=tmp_path / "evidence",
                         linker=Linker("none", tmp_path), tests=["test_dies.py"], timeout=120)
    assert [(f.label, f.message) for f in result.failures] == [("tests", killed_message(signal.SIGKILL))]


def test_a_failure_names_its_checkout_as_repo_so_both_sides_can_read_the_same(tmp_path):
    """FlyDSL HEAD's pa_decode_tile needs ROCm's device libraries, absent here: both sides failed in
    the same way, but each message named its own checkout, and the run read as parity broken."""
    from flydsl_lint.verify.compile import REPO_PLACEHOLDER, collect_evidence

    def captured(tree: Path) -> CompileResult:
        dump_root = tmp_path / tree.name / "probes"
        dump_root.mkdir(parents=True)
        error = (f"DSLCompileError: ROCm amdgcn bitcode path: /opt/rocm/amdgcn/bitcode does not exist\n"
                 f'  File "{tree}/kernels/attention/pa_decode_tile.py", line 953')
        record = {"seq": 0, "label": "probe:kernels.pa:probe_tile", "func_name": "launch", "dump_dir": "c1-0000",
                  "flydsl": "0.5.0", "error": error}
        (dump_root / capture.COMPILES_MANIFEST).write_text(json.dumps(record) + "\n")
        result = _result({})
        collect_evidence(dump_root, result, tree)
        return result

    before, after = captured(tmp_path / "tree-base"), captured(tmp_path / "tree-head")
    assert before.failures == after.failures
    assert f'File "{REPO_PLACEHOLDER}/kernels/attention/pa_decode_tile.py", line 953' in after.failures[0].message


def test_a_node_id_that_exists_at_another_arch_is_a_note_not_unverified():
    """FlyDSL parametrizes tests by arch (v0.3.1's test_hgemm_splitk): an id of gfx942's list
    is no test at gfx950, which proves nothing missing there."""
    from flydsl_lint.verify.runner import _set_aside_ids_of_other_archs

    only_gfx942, nowhere = f"{TEST}::test_moe[gfx942-tile]", f"{TEST}::test_moe[typo]"
    missing = (capture.NOT_FOUND, "no test matches this node id here")

    def sides(outcomes: dict) -> tuple[CompileResult, CompileResult]:
        return _result(outcomes), _result(outcomes)

    sides_of = {"gfx942": sides({only_gfx942: ("passed", ""), nowhere: missing}),
                "gfx950": sides({only_gfx942: missing, nowhere: missing})}
    outcomes = {arch: _outcome_findings(arch, *sides_of[arch]) for arch in sides_of}
    _set_aside_ids_of_other_archs(outcomes, sides_of)
    assert outcomes["gfx942"].unverified == [Unverified(nowhere, "gfx942", missing[1])]
    assert outcomes["gfx950"].unverified == [Unverified(nowhere, "gfx950", missing[1])]
    assert outcomes["gfx950"].notes == [
        f"[gfx950] {only_gfx942}: not a test at gfx950, only at gfx942: nothing to compare"]
    assert outcomes["gfx942"].notes == []


def test_a_named_test_skipped_on_both_sides_is_a_note_with_pytest_reason():
    """`--tests file::test_variants` where some variants are xfail(run=False) or skip (FlyDSL's
    test_moe_gemm.py): the report said "parity holds" over the rest and nothing of these."""
    from flydsl_lint.verify.runner import CompileModeFindings, _note_named_tests_skipped_on_both_sides

    skipped = f"{TEST}::test_variants[fp4]"
    compiled, unnamed = f"{TEST}::test_variants[a16w4]", f"{TEST}::test_other[x]"
    outcomes = {skipped: ("skipped", "[NOTRUN] pre-existing fp4 bug"), compiled: ("passed", ""),
                unnamed: ("skipped", "not named")}
    sides = (_result(outcomes), _result(outcomes))
    plan = Plan("b", "h", [], [], [f"{TEST}::test_variants"], [], ["gfx950"], "compile")
    findings = CompileModeFindings()
    _note_named_tests_skipped_on_both_sides(plan, [], "gfx950", sides, findings)
    assert findings.notes == [f"[gfx950] {skipped}: skipped on both sides ([NOTRUN] pre-existing fp4 bug): "
                              "no kernel to compare"]
    # A whole file named runs its own skips without a word; a test skipped on one side only is no note.
    whole_file = Plan("b", "h", [], [], [TEST], [], ["gfx950"], "compile")
    findings = CompileModeFindings()
    _note_named_tests_skipped_on_both_sides(whole_file, [], "gfx950", sides, findings)
    assert findings.notes == []
    findings = CompileModeFindings()
    _note_named_tests_skipped_on_both_sides(plan, [], "gfx950", (_result({}), _result(outcomes)), findings)
    assert findings.notes == []
