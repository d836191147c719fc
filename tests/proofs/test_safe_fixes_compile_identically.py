"""Safe fixes must not change what the compiler emits: prove it per code and arch.

For every (kernel module, code, arch) in registry.PLAN the code's fix is applied
with the real engine (only that code selected, target-arch set to the arch),
then the original and the fixed module are compiled with the real flydsl wheel
under COMPILE_ONLY. The fix must change the source and leave no fixable
diagnostic of the code; the compiled kernels must have identical normalized
ISA and identical resources.
"""

from __future__ import annotations

import pytest

from flydsl_lint.verify.compare import IDENTICAL
from flydsl_lint.verify.compile import compare
from tests.proofs import kernels_under_proof
from tests.proofs.harness import BUFFER_OPS, apply_fix, compile_all, flydsl_missing_reason, stage_pythonpath
from tests.proofs.registry import PLAN

CASES = [(module, code, arch) for module, (arches, codes) in PLAN.items() for code in codes for arch in arches]
IDS = [f"{code}-{arch}-{module.lower()}" for module, code, arch in CASES]
NEEDS_CHECKOUT = {"LDS_POINTER"}  # imports kernels.common.buffer_ops
RESOURCES = ("vgpr", "agpr", "sgpr", "lds_bytes", "scratch_bytes", "vgpr_spills", "sgpr_spills")


@pytest.fixture(scope="session")
def fixes(tmp_path_factory):
    root = tmp_path_factory.mktemp("proof-lint")
    return {case: apply_fix(getattr(kernels_under_proof, case[0]), case[1], case[2], root) for case in CASES}


@pytest.fixture(scope="session")
def compiled(fixes, tmp_path_factory):
    """Every original and fixed module compiled once per arch (in parallel)."""
    reason = flydsl_missing_reason()
    if reason:
        pytest.skip(reason)
    root = tmp_path_factory.mktemp("proof-compile")
    extra = stage_pythonpath(root / "pythonpath")
    runnable = [case for case in CASES if extra is not None or case[0] not in NEEDS_CHECKOUT]
    jobs = {(getattr(kernels_under_proof, module), arch) for module, _, arch in runnable}
    jobs |= {(fixes[case].after, case[2]) for case in runnable}
    return compile_all(jobs, root / "work", extra)


@pytest.mark.parametrize("module, code, arch", CASES, ids=IDS)
def test_fix_applies(fixes, module, code, arch):
    outcome = fixes[(module, code, arch)]
    assert outcome.safe_before > 0, f"{code} offers no safe fix in {module} for {arch}"
    assert outcome.after != outcome.before, f"{code}: the fix did not change the source"
    assert not [d for d in outcome.remaining if d.fix is not None and d.fix.applicability.value == "safe"], \
        f"{code}: a safe fix is still offered after --fix"
    assert len(outcome.remaining) == outcome.count_before - outcome.safe_before, \
        f"{code}: the fixed diagnostics did not go away"


@pytest.mark.parametrize("module, code, arch", CASES, ids=IDS)
def test_fix_compiles_identically(fixes, compiled, module, code, arch):
    if module in NEEDS_CHECKOUT and not BUFFER_OPS.is_file():
        pytest.skip(f"needs {BUFFER_OPS}: kernels.common.buffer_ops comes from a FlyDSL checkout (set FLYDSL_SRC)")
    outcome = fixes[(module, code, arch)]
    before = compiled[(outcome.before, arch)]
    after = compiled[(outcome.after, arch)]
    assert before.ok, before.failures
    assert after.ok, f"{code}: the fixed kernel does not compile: {after.failures}\n{outcome.after}"
    assert before.kernels, f"{module} compiled no kernel for {arch}: {before.outcomes}"
    assert set(before.kernels) == set(after.kernels)
    for name, kernel in before.kernels.items():
        assert kernel.arch == arch
        fixed = after.kernels[name]
        assert [getattr(fixed.resources, r) for r in RESOURCES] == [getattr(kernel.resources, r) for r in RESOURCES], \
            f"{code} on {arch}: {name} resources changed: {kernel.resources} -> {fixed.resources}"
    comparisons = compare(before, after)
    changed = [c for c in comparisons if c.verdict != IDENTICAL]
    assert not changed, "\n".join(
        f"{code} on {arch}: {c.kernel} {c.verdict} {c.resource_deltas}\n" + "\n".join(c.isa_diff) for c in changed
    )

