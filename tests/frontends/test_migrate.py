"""`flydsl-lint migrate` without compiling: the subset search, the parity verdict, the all-or-none
commit, the plan and the reports. tests/frontends/test_migrate_end_to_end.py compiles for real."""

from __future__ import annotations

import itertools
import json
import os
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from flydsl_lint.engine.writes import write_atomic
from flydsl_lint.frontends import migrate, migrate_command, migrate_report
from flydsl_lint.frontends.migrate import (
    BROKEN, NO_EVIDENCE, PROVEN, Attempt, MigrateError, ModuleOutcome, ModulePlan, candidates_of, commit, judge,
    largest_proven_subset, migrate_module, worst_case_attempts,
)
from flydsl_lint.verify.compare import CHANGED, COMPILE_ERROR, IDENTICAL, ONLY_AFTER, KernelComparison, Unverified
from flydsl_lint.verify.config import load_config
from flydsl_lint.verify.runner import CompileModeFindings
from tests.conftest import make_settings

ROOT = Path(__file__).resolve().parents[2]
FIXTURE = ROOT / "tests" / "fixtures" / "migrate_repo"


def run_cli(*args: str, cwd: Path, env: dict | None = None) -> subprocess.CompletedProcess:
    environment = dict(os.environ, PYTHONPATH=str(ROOT), **(env or {}))
    return subprocess.run([sys.executable, "-m", "flydsl_lint.frontends.cli", *args], cwd=cwd, env=environment,
                          capture_output=True, text=True, timeout=900)


def snapshot(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


@pytest.fixture
def repo(tmp_path):
    copy = tmp_path / "repo"
    shutil.copytree(FIXTURE, copy)
    return copy


# the search
def search_with(proven_sets, families):
    asked = []

    def attempt(subset):
        asked.append(subset)
        return Attempt(subset, PROVEN if frozenset(subset) in proven_sets else BROKEN)

    kept = largest_proven_subset(families, {f: 1 for f in families}, attempt)
    return kept, asked


def test_everything_proven_takes_one_run():
    kept, asked = search_with({frozenset("ABC")}, tuple("ABC"))
    assert kept == tuple("ABC") and asked == [tuple("ABC")]


def test_one_family_broken_keeps_the_others_with_2k_plus_1_runs():
    proven = {frozenset(s) for s in ("A", "C", "AC")}
    kept, asked = search_with(proven, tuple("ABC"))
    assert kept == ("A", "C")
    assert asked == [tuple("ABC"), ("A",), ("B",), ("C",), ("A", "C")]


def test_families_that_conflict_pairwise_fall_back_to_leave_one_out():
    # Each family alone is fine, all three together are not, and only A+B together is.
    proven = {frozenset(s) for s in ("A", "B", "C", "AB")}
    kept, asked = search_with(proven, tuple("ABC"))
    assert kept == ("A", "B")


@pytest.mark.parametrize("k", [1, 2, 3, 4])
def test_every_outcome_is_proven_asked_once_and_within_the_documented_cost(k):
    families = tuple("ABCD"[:k])
    subsets = [frozenset(c) for n in range(1, k + 1) for c in itertools.combinations(families, n)]
    for chosen in itertools.product((False, True), repeat=len(subsets)):
        proven = {s for s, ok in zip(subsets, chosen) if ok}
        kept, asked = search_with(proven, families)
        assert len(asked) == len(set(asked)) <= worst_case_attempts(k)
        assert not kept or frozenset(kept) in proven


# the verdict
def comparison(verdict, **fields):
    return KernelComparison("k_0", "gfx942", verdict, test_id="tests/test_k.py::test_k", **fields)


def test_identical_specializations_prove_the_change():
    assert judge(("FLY1",), [comparison(IDENTICAL)]).result == PROVEN


def test_lds_may_shrink_and_the_attempt_says_so():
    attempt = judge(("FLY4",), [comparison(CHANGED, resource_deltas={"lds_bytes": (512, 256)})])
    assert attempt.result == PROVEN
    assert attempt.notes == ["k_0 [gfx942] tests/test_k.py::test_k: LDS shrank 512 -> 256 bytes"]


@pytest.mark.parametrize("fields", [
    {"resource_deltas": {"lds_bytes": (256, 512)}},  # LDS grew
    {"resource_deltas": {"lds_bytes": (512, 256), "vgpr": (8, 9)}},  # more than LDS moved
    {"resource_deltas": {"lds_bytes": (512, 256)}, "isa_diff": ["-ds_write_b32 v1, v2", "+ds_write_b32 v1, v3"]},
    {},  # code objects differ and nothing explains it
])
def test_anything_but_identical_or_a_pure_lds_shrink_breaks_parity(fields):
    attempt = judge(("FLY4",), [comparison(CHANGED, change="instructions 10->11", **fields)])
    assert attempt.result == BROKEN
    assert attempt.reason.startswith("changed k_0 [gfx942] tests/test_k.py::test_k")


def test_a_compile_error_is_the_reason_shown():
    attempt = judge(("FLY3",), [comparison(ONLY_AFTER), comparison(COMPILE_ERROR, side="before", message="boom\nmore")])
    assert attempt.reason == "compile-error (before) k_0 [gfx942] tests/test_k.py::test_k: boom; and 1 more"


def test_tests_that_compile_nothing_prove_nothing():
    assert judge(("FLY1",), []).result == NO_EVIDENCE


# one module
def module_plan(repo: Path, relative: str, tests=("tests/kernels/test_accumulate.py",)) -> ModulePlan:
    path = repo / relative
    data, candidates, _ = candidates_of(path, make_settings(repo))
    return ModulePlan(path, relative, data, candidates, list(tests))


def test_a_broken_family_is_reverted_and_the_others_kept(repo):
    module = module_plan(repo, "kernels/accumulate.py")
    assert module.families == ("FLY1", "FLY3", "FLY4", "FLY7")
    proofs = []

    def prove(plan, text, families):  # pretend fx.copy changes the ISA
        proofs.append(families)
        return Attempt(families, BROKEN if b"fx.copy(" in text else PROVEN, "changed")

    outcome = migrate_module(module, make_settings(repo), prove, unproven=False)
    assert outcome.kept == ("FLY1", "FLY3", "FLY4")
    assert proofs == [("FLY1", "FLY3", "FLY4", "FLY7"), ("FLY1",), ("FLY3",), ("FLY4",), ("FLY7",),
                      ("FLY1", "FLY3", "FLY4")]
    text = outcome.new_text.decode()
    assert "fx.max(staged" in text and "peer = (lane + shift) % BLOCK" in text
    assert "for iv, state in range(lower, upper, step, init=[fx.as_ir_value(x)]):" in text
    assert "fx.SharedAllocator().allocate(SharedStorage).peek()" in text
    assert text.count("fx.copy_atom_call(") == 2
    assert {c.code: outcome.status_of(c.family) for c in module.candidates} == {
        "FLY112": "kept", "FLY301": "kept", "FLY311": "kept", "FLY401": "kept", "FLY701": "reverted"}


def test_a_module_no_test_covers_is_left_alone_unless_asked(repo):
    module = module_plan(repo, "kernels/helpers.py", tests=())
    left = migrate_module(module, make_settings(repo), None, unproven=False)
    assert left.new_text is None and left.status_of("FLY1") == "not-proven"
    applied = migrate_module(module, make_settings(repo), None, unproven=True)
    assert b"fx.Int32(tid) * 2" in applied.new_text and applied.status_of("FLY1") == "applied-unproven"


# writing
def outcome_for(path: Path, new: bytes) -> ModuleOutcome:
    return ModuleOutcome(ModulePlan(path, path.name, path.read_bytes(), []), new_text=new)


def test_commit_is_all_or_none(tmp_path, monkeypatch):
    first, second = tmp_path / "a.py", tmp_path / "b.py"
    first.write_bytes(b"a = 1\n")
    second.write_bytes(b"b = 1\n")
    os.link(second, tmp_path / "b_link.py")  # write_atomic refuses to split hard links
    outcomes = [outcome_for(first, b"a = 2\n"), outcome_for(second, b"b = 2\n")]
    writes = []

    def recording_write(path, data):
        writes.append((path.name, data))
        write_atomic(path, data)

    monkeypatch.setattr(migrate, "write_atomic", recording_write)
    with pytest.raises(MigrateError, match=r"b\.py: cannot write: has 2 hard links.*no file was changed"):
        commit(outcomes)
    assert writes == [("a.py", b"a = 2\n"), ("b.py", b"b = 2\n"), ("a.py", b"a = 1\n")]
    assert first.read_bytes() == b"a = 1\n" and second.read_bytes() == b"b = 1\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.py", "b.py", "b_link.py"]


def test_commit_refuses_a_file_changed_while_migrate_ran(tmp_path):
    first, second = tmp_path / "a.py", tmp_path / "b.py"
    first.write_bytes(b"a = 1\n")
    second.write_bytes(b"b = 1\n")
    outcomes = [outcome_for(first, b"a = 2\n"), outcome_for(second, b"b = 2\n")]
    second.write_bytes(b"b = 'edited by hand'\n")
    with pytest.raises(MigrateError, match=r"b\.py: changed while migrate ran; no file was changed"):
        commit(outcomes)
    assert first.read_bytes() == b"a = 1\n"


# the command
def test_dry_run_prints_the_plan_and_touches_nothing(repo):
    before = snapshot(repo)
    result = run_cli("migrate", "--dry-run", cwd=repo)
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines() == [
        "archs: gfx942",
        "kernels/accumulate.py: 8 fixes: FLY1 (3), FLY3 (2), FLY4 (1), FLY7 (2)",
        "  proven by: tests/kernels/test_accumulate.py",
        "  verify runs: at most 10",
        "kernels/helpers.py: 1 fixes: FLY1 (1)",
        "  proven by: nothing (not proven: left unchanged unless --unproven)",
        "  verify runs: at most 0",
        "kernels/offset.py: 1 fixes: FLY3 (1)",
        "  proven by: tests/kernels/test_offset.py",
        "  verify runs: at most 1",
        "3 modules with fixes, at most 11 verify runs",
    ]
    assert snapshot(repo) == before


def test_select_narrows_the_candidates(repo):
    result = run_cli("migrate", "--dry-run", "--select", "FLY7", "--arch", "gfx942,gfx950", cwd=repo)
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines()[:2] == ["archs: gfx942, gfx950", "kernels/accumulate.py: 2 fixes: FLY7 (2)"]


@pytest.mark.parametrize("args, message", [
    (["missing.py"], "flydsl-lint migrate: error: missing.py: no such file or directory"),
    (["--arch", "sm_90"], "flydsl-lint migrate: error: --arch: 'sm_90' is not a gfx target like gfx942"),
])
def test_bad_input_is_one_line_and_exit_2(repo, args, message):
    before = snapshot(repo)
    result = run_cli("migrate", *args, cwd=repo)
    assert (result.returncode, result.stderr.strip(), result.stdout) == (2, message, "")
    assert snapshot(repo) == before


def test_unproven_modules_are_migrated_only_when_asked_and_reported(tmp_path):
    repo = tmp_path / "repo"
    (repo / "kernels").mkdir(parents=True)
    shutil.copy(FIXTURE / "kernels" / "helpers.py", repo / "kernels" / "helpers.py")
    original = (repo / "kernels" / "helpers.py").read_bytes()

    left = run_cli("migrate", "--target-version", "0.5.0", "--report", "r.json", cwd=repo)
    assert left.returncode == 1, left.stderr
    assert (repo / "kernels" / "helpers.py").read_bytes() == original
    assert "kernels/helpers.py: not-proven (FLY1 not-proven)" in left.stdout

    applied = run_cli("migrate", "--target-version", "0.5.0", "--unproven", "--report", "r.json", "--report", "r.md",
                      cwd=repo)
    assert applied.returncode == 1, applied.stderr
    assert b"return fx.Int32(tid) * 2" in (repo / "kernels" / "helpers.py").read_bytes()
    report = json.loads((repo / "r.json").read_text())
    assert report["summary"] == {"kept": 0, "reverted": 0, "not-proven": 0, "applied-unproven": 1, "refused": 0}
    (module,) = report["modules"]
    assert (module["path"], module["status"], module["verify_runs"]) == ("kernels/helpers.py", "applied-unproven", 0)
    assert module["diagnostics"] == [{"code": "FLY111", "line": 7, "column": 12, "family": "FLY1",
                                      "message": "Double `Int32` wrap is dead: drop the outer one",
                                      "status": "applied-unproven"}]
    assert "| 7:12 | FLY111 | applied-unproven |" in (repo / "r.md").read_text()


def test_an_interrupt_during_the_commit_says_the_files_are_written(tmp_path, monkeypatch):
    repo = tmp_path / "repo"
    (repo / "kernels").mkdir(parents=True)
    shutil.copy(FIXTURE / "kernels" / "helpers.py", repo / "kernels" / "helpers.py")
    real_commit = migrate_command.commit

    def commit_then_ctrl_c(outcomes):
        written = real_commit(outcomes)
        os.kill(os.getpid(), signal.SIGINT)  # held until the commit's caller lets it through
        return written

    monkeypatch.setattr(migrate_command, "commit", commit_then_ctrl_c)
    options = migrate_command.MigrateOptions([str(repo / "kernels")], repo, unproven=True, reports=[repo / "r.json"])
    # Ctrl-C raises here whatever an earlier test in this process left as the handler.
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        with pytest.raises(KeyboardInterrupt, match=r"^the 1 migrated files are written; the reports may not be$"):
            migrate_command.run(options, make_settings(repo))
    finally:
        signal.signal(signal.SIGINT, previous)
    assert b"return fx.Int32(tid) * 2" in (repo / "kernels" / "helpers.py").read_bytes()


def test_a_file_that_cannot_be_checked_stops_the_run_before_anything_is_compiled(repo):
    (repo / "kernels" / "broken.py").write_text("def (:\n")
    before = snapshot(repo)
    result = run_cli("migrate", cwd=repo)
    assert result.returncode == 2
    assert result.stderr.startswith("flydsl-lint migrate: error: kernels/broken.py: ")
    assert len(result.stderr.splitlines()) == 1 and result.stdout == ""
    assert snapshot(repo) == before


def test_without_flydsl_a_covered_module_is_a_setup_error(repo, monkeypatch, capsys):
    from flydsl_lint.frontends.cli import main

    monkeypatch.chdir(repo)
    monkeypatch.setattr(migrate_command.importlib.util, "find_spec", lambda name: None)
    before = snapshot(repo)
    assert main(["migrate"]) == 2
    assert capsys.readouterr().err == ("flydsl-lint migrate: error: flydsl is not installed "
                                       "(run scripts/install_compile_toolchain.sh)\n")
    assert snapshot(repo) == before


def test_tests_that_compile_nothing_stop_the_search_after_one_run(repo):
    module = module_plan(repo, "kernels/accumulate.py")
    proofs = []

    def prove(plan, text, families):
        proofs.append(families)
        return Attempt(families, NO_EVIDENCE, "compiled no kernel")

    left = migrate_module(module, make_settings(repo), prove, unproven=False)
    assert proofs == [("FLY1", "FLY3", "FLY4", "FLY7")] and left.new_text is None
    assert {left.status_of(f) for f in module.families} == {"not-proven"}
    applied = migrate_module(module, make_settings(repo), prove, unproven=True)
    assert applied.new_text is not None and b"copy_atom_call" not in applied.new_text
    assert {applied.status_of(f) for f in module.families} == {"applied-unproven"}


def test_fixes_that_produce_invalid_code_are_reverted_never_applied(repo, monkeypatch):
    module = module_plan(repo, "kernels/accumulate.py")

    def breaks_the_file(*args):
        raise migrate.SourceError(str(module.path), "fixes for FLY701 produced invalid code")

    monkeypatch.setattr(migrate, "fixed_text", breaks_the_file)
    outcome = migrate_module(module, make_settings(repo), None, unproven=True)
    assert outcome.new_text is None
    assert [a.result for a in outcome.attempts] == ["invalid"] * 5
    assert {outcome.status_of(f) for f in module.families} == {"reverted"}


def test_a_report_path_that_is_a_folder_is_refused_before_any_file_is_written(tmp_path):
    repo = tmp_path / "repo"
    (repo / "kernels").mkdir(parents=True)
    shutil.copy(FIXTURE / "kernels" / "helpers.py", repo / "kernels" / "helpers.py")
    before = snapshot(repo)
    result = run_cli("migrate", "--target-version", "0.5.0", "--unproven", "--report", "kernels", cwd=repo)
    assert (result.returncode, result.stderr) == (2, "flydsl-lint migrate: error: kernels: is a folder; --report wants a file\n")
    assert snapshot(repo) == before


# what a verify run tells the attempt
def prover_for(repo: Path, tmp_path: Path) -> migrate.CompileProver:
    return migrate.CompileProver(repo, tmp_path / "scratch", config=load_config(repo), archs=["gfx942"],
                                 linker=None, jobs=1)


TEST_FILE = "tests/kernels/test_accumulate.py"
BUFFER_OPS_MISSING = "ImportError: cannot import name 'buffer_ops' from 'flydsl.expr' (/env/flydsl/expr/__init__.py)"


def test_tests_that_cannot_be_imported_are_named_as_why_nothing_compiled(repo, tmp_path, monkeypatch):
    # Deep-Spark's kernels import flydsl.expr.buffer_ops, which no FlyDSL release has.
    findings = CompileModeFindings(
        unverified=[Unverified(TEST_FILE, "gfx942", BUFFER_OPS_MISSING)],
        outcomes={"gfx942": {f"collect:{TEST_FILE}": ("import-error", BUFFER_OPS_MISSING)}})
    monkeypatch.setattr(migrate, "run_compile_mode", lambda *args, **kwargs: findings)
    module = module_plan(repo, "kernels/accumulate.py")
    attempt = prover_for(repo, tmp_path).prove(module, b"x = 1\n", module.families)
    assert attempt.result == NO_EVIDENCE
    assert attempt.reason == ("no kernel was compiled on either side: [gfx942] tests/kernels/test_accumulate.py: "
                              f"import error ({BUFFER_OPS_MISSING})")


def test_a_proof_says_which_covering_tests_could_not_be_run(repo, tmp_path, monkeypatch):
    findings = CompileModeFindings(comparisons=[comparison(IDENTICAL)],
                                   unverified=[Unverified("tests/kernels/test_other.py", "gfx942", BUFFER_OPS_MISSING)])
    monkeypatch.setattr(migrate, "run_compile_mode", lambda *args, **kwargs: findings)
    module = module_plan(repo, "kernels/accumulate.py")
    attempt = prover_for(repo, tmp_path).prove(module, b"x = 1\n", module.families)
    assert attempt.result == PROVEN
    assert attempt.notes == [f"not verified [gfx942] tests/kernels/test_other.py: {BUFFER_OPS_MISSING}"]


def test_a_target_older_than_the_installed_flydsl_is_named_with_both_releases(repo, monkeypatch, capsys):
    # Deep-Spark's checkout says 0.2.0 while 0.3.1 is installed: every codemod fix was withheld, silently.
    from flydsl_lint.engine.versions import Version
    from flydsl_lint.frontends.cli import main

    monkeypatch.chdir(repo)
    monkeypatch.setattr(migrate_command, "installed_flydsl_version", lambda: Version.parse("0.5.0"))
    assert main(["migrate", "--dry-run", "--target-version", "0.3.0"]) == 0
    assert capsys.readouterr().err == (
        "flydsl-lint migrate: note: fixes are offered for the target FlyDSL 0.3.0 (command line), older than "
        "the installed 0.5.0 that compiles the proofs: fixes needing a newer release are withheld "
        "(--target-version 0.5.0 offers them)\n")
    assert main(["migrate", "--dry-run", "--target-version", "0.5.0"]) == 0
    assert capsys.readouterr().err == ""


# refused codemod sites
REFUSED_HELPER = '''\
"""A plain helper building its scf.if by hand, its branch rebinding a parameter."""

from flydsl._mlir import ir
from flydsl._mlir.dialects import scf


def guarded_store(pred, store):
    op = scf.IfOp(pred)
    with ir.InsertionPoint(op.then_block):
        store = store()
        scf.YieldOp([])
'''
REFUSAL = "a region assigns `store`, which lives outside it (it would become a local of the `@flyc.jit` function)"


def refused_repo(tmp_path, with_fix: bool) -> Path:
    repo = tmp_path / "repo"
    (repo / "kernels").mkdir(parents=True)
    (repo / "kernels" / "guarded.py").write_text(REFUSED_HELPER)
    if with_fix:
        shutil.copy(FIXTURE / "kernels" / "helpers.py", repo / "kernels" / "helpers.py")
    return repo


def test_a_refused_codemod_site_is_in_the_plan(tmp_path):
    repo = refused_repo(tmp_path, with_fix=True)
    result = run_cli("migrate", "--dry-run", "--target-version", "0.5.0", cwd=repo)
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines() == [
        "archs: gfx942",
        "kernels/guarded.py: no fixes, 1 refused",
        f"  refused FLY501 at 8:10: {REFUSAL}",
        "kernels/helpers.py: 1 fixes: FLY1 (1)",
        "  proven by: nothing (not proven: left unchanged unless --unproven)",
        "  verify runs: at most 0",
        "1 modules with fixes, at most 0 verify runs; 1 codemod sites refused",
    ]


def test_refused_sites_are_reported_with_their_reason_and_do_not_fail_migrate(tmp_path):
    repo = refused_repo(tmp_path, with_fix=False)
    before = snapshot(repo)
    result = run_cli("migrate", "--target-version", "0.5.0", "--report", "r.json", "--report", "r.md", cwd=repo)
    assert result.returncode == 0, result.stderr  # a refusal is not a failure of migrate
    assert result.stdout.splitlines() == [
        "kernels/guarded.py: refused (1 refused)",
        f"  refused FLY501 at 8:10: {REFUSAL}",
        "0 kept, 0 reverted, 0 not-proven, 0 applied-unproven fixes; 1 codemod sites refused.",
    ]
    report = json.loads((repo / "r.json").read_text())
    assert report["summary"] == {"kept": 0, "reverted": 0, "not-proven": 0, "applied-unproven": 0, "refused": 1}
    (module,) = report["modules"]
    assert (module["path"], module["status"], module["families"], module["verify_runs"]) == \
        ("kernels/guarded.py", "refused", {}, 0)
    (row,) = module["diagnostics"]
    assert (row["code"], row["line"], row["column"], row["status"], row["reason"]) == \
        ("FLY501", 8, 10, "refused", REFUSAL)
    assert row["message"].endswith(f"; no automatic rewrite: {REFUSAL}")
    markdown = (repo / "r.md").read_text()
    assert "0 applied-unproven fixes; 1 codemod sites refused." in markdown
    assert "| `kernels/guarded.py` | refused | none | 1 refused |" in markdown
    assert f"| 8:10 | FLY501 | refused | {row['message']} |" in markdown
    assert snapshot(repo) == {**before, "r.json": (repo / "r.json").read_bytes(), "r.md": (repo / "r.md").read_bytes()}


def test_refused_sites_sit_beside_the_candidates_in_source_order_and_leave_the_exit_code_alone(tmp_path):
    repo = refused_repo(tmp_path, with_fix=False)
    path = repo / "kernels" / "guarded.py"
    path.write_text(REFUSED_HELPER + "\n\nimport flydsl.expr as fx\n\n\ndef doubled(tid):\n"
                    "    return fx.Int32(fx.Int32(tid)) * 2\n")
    data, candidates, refused = candidates_of(path, make_settings(repo, select=("FLY1", "FLY5")))
    assert [(c.code, c.line) for c in candidates] == [("FLY111", 18)]
    assert [(c.code, c.line, c.refusal) for c in refused] == [("FLY501", 8, REFUSAL)]
    module = ModulePlan(path, "kernels/guarded.py", data, candidates, ["tests/test_guarded.py"], refused=refused)
    outcome = ModuleOutcome(module, kept=("FLY1",), new_text=b"")
    report = migrate_report.MigrateReport([outcome], ["gfx942"])
    assert report.exit_code == 0
    rows = json.loads(migrate_report.render_json(report))["modules"][0]["diagnostics"]
    assert [(r["code"], r["status"], r.get("reason")) for r in rows] == [("FLY501", "refused", REFUSAL),
                                                                          ("FLY111", "kept", None)]
    assert migrate_report.module_status(outcome) == "migrated"
