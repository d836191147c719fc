"""Safe fixes must not change what the compiler emits: prove it per code, arch and release.

For every (kernel module, code, arch) in registry.PLAN and every release of
registry.proof_releases (the oldest and the newest the fix is offered for, and the
commonly pinned releases between) the code's fix is applied with the real engine (only that code selected,
target-arch set to the arch, target-version to the release), then the original
and the fixed module are compiled with that flydsl release under COMPILE_ONLY,
in its own environment (tests/release_envs.py). The fix must change the source
and leave no fixable diagnostic of the code; the compiled kernels must have
identical normalized ISA and identical resources.
"""

from __future__ import annotations

import pytest

from flydsl_lint.verify.compare import IDENTICAL
from flydsl_lint.verify.compile import compare
from tests.proofs import kernels_under_proof
from tests.proofs.harness import apply_fix, buffer_ops_for, compile_all, stage_pythonpath
from tests.proofs.registry import PLAN, proof_releases
from tests.release_envs import release_python

CASES = [
    (module, code, arch, release)
    for module, (arches, codes) in PLAN.items()
    for code in codes
    for arch in arches
    for release in proof_releases(code)
]
IDS = [f"{code}-{arch}-{module.lower()}-{release}" for module, code, arch, release in CASES]
NEEDS_CHECKOUT = {"LDS_POINTER", "BUFFER_OFFSETS"}  # import kernels.common.buffer_ops
RESOURCES = ("vgpr", "agpr", "sgpr", "lds_bytes", "scratch_bytes", "vgpr_spills", "sgpr_spills")


@pytest.fixture(scope="session")
def fixes(tmp_path_factory):
    root = tmp_path_factory.mktemp("proof-lint")
    return {case: apply_fix(getattr(kernels_under_proof, case[0]), *case[1:], root) for case in CASES}


def _python_or_none(release: str) -> str | None:
    try:
        return release_python(release)
    except pytest.skip.Exception:
        return None


@pytest.fixture(scope="session")
def compiled(fixes, tmp_path_factory):
    """Every original and fixed module compiled once per arch and release (in parallel),
    on the releases whose environment is there; the tests of the others skip."""
    pythons = {release: _python_or_none(release) for *_, release in CASES}
    pythons = {release: python for release, python in pythons.items() if python is not None}
    root = tmp_path_factory.mktemp("proof-compile")
    extra = {release: stage_pythonpath(root / "pythonpath", release) for release in pythons}
    runnable = [case for case in CASES
                if case[3] in pythons and (extra[case[3]] is not None or case[0] not in NEEDS_CHECKOUT)]
    jobs = {(getattr(kernels_under_proof, module), arch, release) for module, _, arch, release in runnable}
    jobs |= {(fixes[case].after, case[2], case[3]) for case in runnable}
    return compile_all(jobs, pythons, root / "work", extra)


@pytest.mark.parametrize("module, code, arch, release", CASES, ids=IDS)
def test_fix_applies(fixes, module, code, arch, release):
    outcome = fixes[(module, code, arch, release)]
    assert outcome.safe_before > 0, f"{code} offers no safe fix in {module} for {arch}"
    assert outcome.after != outcome.before, f"{code}: the fix did not change the source"
    assert not [d for d in outcome.remaining if d.fix is not None and d.fix.applicability.value == "safe"], \
        f"{code}: a safe fix is still offered after --fix"
    assert len(outcome.remaining) == outcome.count_before - outcome.safe_before, \
        f"{code}: the fixed diagnostics did not go away"


@pytest.mark.parametrize("module, code, arch, release", CASES, ids=IDS)
def test_fix_compiles_identically(fixes, compiled, module, code, arch, release):
    release_python(release)  # skips when the release's environment is missing
    if module in NEEDS_CHECKOUT and not buffer_ops_for(release).is_file():
        pytest.skip(f"needs {buffer_ops_for(release)}: kernels.common.buffer_ops comes from a FlyDSL checkout "
                    f"of that release (git worktree add <dir>/flydsl-v{release} v{release}; set "
                    "FLYDSL_RELEASE_CHECKOUTS=<dir>, or FLYDSL_SRC for the newest)")
    outcome = fixes[(module, code, arch, release)]
    before = compiled[(outcome.before, arch, release)]
    after = compiled[(outcome.after, arch, release)]
    assert before.ok, f"{module} does not compile on flydsl {release} for {arch}: {before.failures}"
    assert after.ok, f"{code}: the fixed kernel does not compile on flydsl {release}: {after.failures}\n{outcome.after}"
    assert before.kernels, f"{module} compiled no kernel for {arch}: {before.outcomes}"
    assert before.flydsl_versions == after.flydsl_versions == {release}, (before.flydsl_versions, after.flydsl_versions)
    assert set(before.kernels) == set(after.kernels)
    for name, kernel in before.kernels.items():
        assert kernel.arch == arch
        fixed = after.kernels[name]
        assert [getattr(fixed.resources, r) for r in RESOURCES] == [getattr(kernel.resources, r) for r in RESOURCES], \
            f"{code} on {arch}, flydsl {release}: {name} resources changed: {kernel.resources} -> {fixed.resources}"
    comparisons = compare(before, after)
    changed = [c for c in comparisons if c.verdict != IDENTICAL]
    assert not changed, "\n".join(
        f"{code} on {arch}, flydsl {release}: {c.kernel} {c.verdict} {c.resource_deltas}\n" + "\n".join(c.isa_diff) for c in changed
    )

