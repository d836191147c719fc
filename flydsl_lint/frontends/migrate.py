"""`flydsl-lint migrate`: apply fixes module by module, keeping only what compile-mode parity proves.

For each kernel module with fixes, the fixed text is written into a scratch
copy of the repository and flydsl-lint-verify's compile mode
(`verify.runner.run_compile_mode`) builds the tests and probes that import the
module, on the copy and on the user's tree. A change is kept when every
specialization is identical (LDS bytes may shrink). Where parity breaks, the
module's fixes are retried rule family by rule family (`largest_proven_subset`).
The user's files are written only at the end, all at once or not at all; the
scratch copy is removed however the run ends. docs/migrate.md has the details.
"""

from __future__ import annotations

import shutil
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path

from ..engine.config import Settings
from ..engine.diagnostics import fix_applies
from ..engine.source import SourceError, SourceFile, read_data
from ..engine.writes import write_atomic
from ..rules._codemods import refusal_reason
from ..run.checker import Checker
from ..run.fix_loop import fix_source
from ..verify.compare import CHANGED, COMPILE_ERROR, IDENTICAL, KernelComparison
from ..verify.config import VerifyConfig
from ..verify.imports import ImportGraph
from ..verify.plan import Plan, build_plan
from ..verify.pytest_config import TestFiles
from ..verify.report import no_kernel_compiled_message
from ..verify.runner import AFTER, BEFORE, run_compile_mode
from ..verify.signals import signals_held

FAMILIES = tuple(f"FLY{digit}" for digit in range(10))

# Attempt results.
PROVEN, BROKEN, NO_EVIDENCE, INVALID = "proven", "broken", "no-evidence", "invalid"
# Per-diagnostic statuses in the report.
KEPT, REVERTED, NOT_PROVEN, APPLIED_UNPROVEN = "kept", "reverted", "not-proven", "applied-unproven"
# A site a structural codemod would not rewrite: reported, never a candidate.
REFUSED = "refused"

# Folders never copied into the scratch tree: version control, caches, virtual environments.
NOT_COPIED = (".git", "__pycache__", ".venv", ".venvs", ".flydsl-lint-cache", ".pytest_cache")


class MigrateError(RuntimeError):
    """A setup problem or a commit that could not be made: one line, exit 2."""


def family_of(code: str) -> str:
    return code[:4]


@dataclass
class Candidate:
    """A diagnostic of the original module whose fix migrate may apply, or a refused codemod site."""

    code: str
    line: int
    column: int
    message: str
    refusal: str = ""  # why the codemod refused the site ("" for a candidate)

    @property
    def family(self) -> str:
        return family_of(self.code)


@dataclass
class ModulePlan:
    path: Path  # the user's file
    relative: str  # repo-relative, as verify names it
    original: bytes
    candidates: list[Candidate]
    tests: list[str] = field(default_factory=list)
    probes: list[str] = field(default_factory=list)
    refused: list[Candidate] = field(default_factory=list)  # codemod sites left as they are, with the reason

    @property
    def families(self) -> tuple[str, ...]:
        return tuple(sorted({c.family for c in self.candidates}))

    @property
    def covered(self) -> bool:
        return bool(self.tests or self.probes)


@dataclass
class Attempt:
    families: tuple[str, ...]
    result: str  # PROVEN, BROKEN, NO_EVIDENCE or INVALID
    reason: str = ""  # one line, for anything but PROVEN
    breaking: list[KernelComparison] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)  # e.g. LDS that shrank
    verified: bool = False  # whether this attempt ran verify (not an invalid or already proven text)

    @property
    def proven(self) -> bool:
        return self.result == PROVEN


@dataclass
class ModuleOutcome:
    plan: ModulePlan
    kept: tuple[str, ...] = ()  # families whose fixes are in `new_text`
    attempts: list[Attempt] = field(default_factory=list)
    new_text: bytes | None = None  # what the file becomes; None: unchanged
    unproven_applied: bool = False

    def status_of(self, family: str) -> str:
        if self.unproven_applied:
            return APPLIED_UNPROVEN
        if family in self.kept:
            return KEPT
        if not self.plan.covered or (self.attempts and self.attempts[0].result == NO_EVIDENCE):
            return NOT_PROVEN
        return REVERTED


# fixing
def candidates_of(path: Path, settings: Settings) -> tuple[bytes, list[Candidate], list[Candidate]]:
    """The file's bytes, the diagnostics whose fix migrate may apply (safe and unsafe, not display-only)
    and the codemod sites refused (no fix, and the reason in the message)."""
    data = read_data(path, settings.max_file_size)
    diagnostics = Checker(settings).check(SourceFile.from_bytes(str(path), data))
    found, refused = [], []
    for d in diagnostics:
        candidate = Candidate(d.code, d.start[0], d.start[1] + 1, d.message)
        if fix_applies(d.fix, True):
            found.append(candidate)
        elif d.fix is None and refusal_reason(d.message):
            refused.append(replace(candidate, refusal=refusal_reason(d.message)))
    return data, found, refused


def fixed_text(path: Path, data: bytes, settings: Settings, families: tuple[str, ...]) -> bytes:
    """`data` with the fixes of `families` only, to a fixed point; raises SourceError when they break the file."""
    others = tuple(f for f in FAMILIES if f not in families)
    checker = Checker(settings._replace(unfixable=settings.unfixable + others))
    source = SourceFile.from_bytes(str(path), data)
    return source.encode(fix_source(source, checker, unsafe=True).new_text)


# search
def largest_proven_subset(families: tuple[str, ...], weights: dict[str, int],
                          attempt: Callable[[tuple[str, ...]], Attempt]) -> tuple[str, ...]:
    """The largest set of families found to keep parity, trying few sets.

    1. all families together (when their tests compile nothing, stop: no set
    can be proven); 2. each family alone; 3. the families proven
    alone, together; 4. with three or more of those, each leaving one out.
    The first proven set of the largest size tried wins; failing all, the
    proven single family with the most candidates (`weights`). At most
    2k + 2 attempts for k families (one for k = 1); `attempt` is called once per set.
    """
    results: dict[tuple[str, ...], bool] = {}

    def proven(subset: tuple[str, ...]) -> bool:
        if subset not in results:
            results[subset] = attempt(subset).proven
        return results[subset]

    if not families:
        return families
    everything = attempt(families)
    results[families] = everything.proven
    if everything.proven:
        return families
    if len(families) == 1 or everything.result == NO_EVIDENCE:  # the same tests would compile nothing again
        return ()
    alone = tuple(f for f in families if proven((f,)))
    if len(alone) <= 1 or proven(alone):
        return alone
    if len(alone) >= 3:
        for left_out in alone:
            subset = tuple(f for f in alone if f != left_out)
            if proven(subset):
                return subset
    return (max(alone, key=lambda f: weights.get(f, 0)),)


def worst_case_attempts(families: int) -> int:
    return 0 if families == 0 else 1 if families == 1 else 2 * families + 2


# proving
def lds_shrink(comparison: KernelComparison) -> tuple[int, int] | None:
    """(before, after) LDS bytes when they are all that changed and they went down, else None."""
    if comparison.verdict != CHANGED or comparison.isa_diff or set(comparison.resource_deltas) != {"lds_bytes"}:
        return None
    old, new = comparison.resource_deltas["lds_bytes"]
    return (old, new) if old is not None and new is not None and new < old else None


def judge(families: tuple[str, ...], comparisons: list[KernelComparison]) -> Attempt:
    if not comparisons:
        return Attempt(families, NO_EVIDENCE, "the tests and probes that import it compiled no kernel")
    breaking, notes = [], []
    for c in comparisons:
        shrink = lds_shrink(c)
        if c.verdict == IDENTICAL:
            continue
        if shrink is not None:
            notes.append(f"{c.kernel} [{c.arch}] {c.test_id}: LDS shrank {shrink[0]} -> {shrink[1]} bytes")
        else:
            breaking.append(c)
    if not breaking:
        return Attempt(families, PROVEN, notes=notes)
    # A compile error says more than the only-before/only-after entries it causes.
    first = next((c for c in breaking if c.verdict == COMPILE_ERROR), breaking[0])
    detail = first.change or (first.message.splitlines()[0] if first.message else "")
    side = f" ({first.side})" if first.side else ""
    kernel = "" if first.kernel == "?" else f" {first.kernel}"  # verify's "?": failed before naming one
    reason = f"{first.verdict}{side}{kernel} [{first.arch}] {first.test_id}" + (f": {detail}" if detail else "")
    if len(breaking) > 1:
        reason += f"; and {len(breaking) - 1} more"
    return Attempt(families, BROKEN, reason, breaking, notes)


class CompileProver:
    """Proves a module's candidate text in a scratch copy of the repository against the user's tree.

    The copy accumulates what earlier modules kept (``settle``), so a test
    importing several migrated modules is proven with all their changes.
    """

    def __init__(self, repo: Path, scratch: Path, *, config: VerifyConfig, archs: list[str], linker, jobs: int):
        self.repo, self.scratch, self.config, self.archs, self.linker, self.jobs = repo, scratch, config, archs, linker, jobs
        self.tree = scratch / "tree"
        shutil.copytree(repo, self.tree, symlinks=True, ignore=shutil.ignore_patterns(*NOT_COPIED))
        self.runs = 0

    def prove(self, module: ModulePlan, text: bytes, families: tuple[str, ...]) -> Attempt:
        self.runs += 1
        target = self.tree / module.relative
        settled = target.read_bytes()
        evidence = self.scratch / "runs" / str(self.runs)
        plan = Plan(base="user's tree", head="migrated copy", changed=[module.relative], kernels=[module.relative],
                    tests=module.tests, probes=module.probes, archs=self.archs, mode="compile")
        target.write_bytes(text)
        try:
            findings = run_compile_mode(plan, {BEFORE: self.repo, AFTER: self.tree}, config=self.config,
                                        linker=self.linker, evidence_root=evidence, jobs=self.jobs)
        finally:
            target.write_bytes(settled)
            shutil.rmtree(evidence, ignore_errors=True)  # dumps are large; the report keeps what matters
        attempt = judge(families, findings.comparisons)
        if attempt.result == NO_EVIDENCE:  # say why: a test that cannot be imported here is not "no kernel"
            attempt.reason = no_kernel_compiled_message(plan, findings.outcomes)
        else:  # what compiled is compared; a covering test that could not run proves nothing
            attempt.notes += [f"not verified [{u.arch}] {u.test}: {u.reason}" for u in findings.unverified]
        return attempt

    def settle(self, module: ModulePlan, text: bytes) -> None:
        (self.tree / module.relative).write_bytes(text)


def migrate_module(module: ModulePlan, settings: Settings, prove: Callable[[ModulePlan, bytes, tuple], Attempt],
                   unproven: bool) -> ModuleOutcome:
    outcome = ModuleOutcome(module)
    families = module.families
    if not families:  # only refused sites: nothing to apply or prove
        return outcome
    if not module.covered:
        if unproven:
            outcome.new_text = fixed_text(module.path, module.original, settings, families)
            outcome.kept, outcome.unproven_applied = families, True
        return outcome
    texts: dict[tuple[str, ...], bytes] = {}
    proofs: dict[bytes, Attempt] = {}  # two family sets may give the same text: prove it once

    def attempt(subset: tuple[str, ...]) -> Attempt:
        try:
            text = texts[subset] = fixed_text(module.path, module.original, settings, subset)
        except SourceError as exc:
            result = Attempt(subset, INVALID, exc.reason)
        else:
            known = proofs.get(text)
            if known is None:
                result = proofs[text] = prove(module, text, subset)
                result.verified = True
            else:
                result = replace(known, families=subset, verified=False)
        outcome.attempts.append(result)
        return result

    kept = largest_proven_subset(families, {f: sum(c.family == f for c in module.candidates) for f in families},
                                 attempt)
    if kept:
        outcome.kept, outcome.new_text = kept, texts[kept]
    elif unproven and outcome.attempts[0].result == NO_EVIDENCE:
        outcome.kept, outcome.new_text, outcome.unproven_applied = families, texts[families], True
    return outcome


# planning
def plan_modules(files: list[Path], repo: Path, settings: Settings, config: VerifyConfig,
                 archs: list[str]) -> tuple[list[ModulePlan], list[str]]:
    """A plan per file with candidates (and the tests and probes that import it); errors as one line each."""
    graph = ImportGraph().add_tree(repo)
    test_files = TestFiles(repo, config.test_dirs)
    modules, errors = [], []
    for path in files:
        try:
            relative = path.resolve().relative_to(repo).as_posix()
        except ValueError:
            errors.append(f"{path}: outside the repository {repo}")
            continue
        try:
            data, candidates, refused = candidates_of(path, settings)
        except SourceError as exc:
            errors.append(str(exc))
            continue
        if not candidates:
            if refused:  # reported, with nothing to prove
                modules.append(ModulePlan(path, relative, data, [], refused=refused))
            continue
        plan = build_plan(graph=graph, changed=[relative], config=config, test_files=test_files, base="", head="",
                          archs=archs, mode="compile")
        modules.append(ModulePlan(path, relative, data, candidates, plan.tests, plan.probes, refused))
    return modules, errors


# writing
def commit(outcomes: list[ModuleOutcome]) -> list[Path]:
    """Write every kept change, all or none. A file that changed since it was read
    stops the commit (MigrateError); any failure restores the files already written.
    Ctrl-C and SIGTERM wait until the commit is complete or undone."""
    written: list[tuple[Path, bytes]] = []
    path = None  # the file being written, for the error
    with signals_held():
        try:
            for outcome in outcomes:
                if outcome.new_text is None or outcome.new_text == outcome.plan.original:
                    continue
                path = outcome.plan.path
                if path.read_bytes() != outcome.plan.original:
                    raise MigrateError(f"{path}: changed while migrate ran; no file was changed")
                write_atomic(path, outcome.new_text)
                written.append((path, outcome.plan.original))
        except BaseException as exc:
            for done, original in reversed(written):
                write_atomic(done, original)
            if isinstance(exc, OSError):
                raise MigrateError(f"{path}: cannot write: {exc.strerror or exc}; no file was changed") from None
            raise
    return [path for path, _ in written]
