"""Unsafe structural codemods must still compile to the same kernel: prove it per codemod.

Each kernel of tests/proofs/codemod_kernels.py is fixed with the real engine
(`--fix --unsafe-fixes`, only the codemod's code selected, the target release
set), then the original and the rewrite are compiled under COMPILE_ONLY with
the oldest and the newest release the codemod is offered for. The instruction
streams must be identical; the LDS reserved may only shrink (SharedAllocator
reserves exactly the struct's bytes where SmemAllocator padded), every other
resource must be equal. Skips where a release's environment is missing.
"""

from __future__ import annotations

import pytest

from flydsl_lint.engine.source import SourceFile
from flydsl_lint.engine.versions import Version
from flydsl_lint.run.checker import Checker
from flydsl_lint.run.fix_loop import fix_source
from tests.conftest import make_settings
from tests.proofs import codemod_kernels
from tests.proofs.harness import compile_all
from tests.proofs.registry import CODEMODS, proof_releases
from tests.release_envs import release_python

ARCH = "gfx942"
# Kernels also proven on other targets than ARCH.
ARCHS = {"RAW_SCF_IF_RESULTS": (ARCH, "gfx950"), "RAW_SCF_IF_IN_HELPERS": (ARCH, "gfx950"),
         "RAW_SCF_IF_IN_NESTED_DEF": (ARCH, "gfx950"), "RAW_SCF_IF_NESTED": (ARCH, "gfx950"),
         "RAW_SCF_IF_AROUND_RAW_OP": (ARCH, "gfx950")}
CASES = [(kernel, release, arch) for kernel, (code, _) in CODEMODS.items() for release in proof_releases(code)
         for arch in ARCHS.get(kernel, (ARCH,))]
SAME_RESOURCES = ("vgpr", "agpr", "sgpr", "scratch_bytes", "vgpr_spills", "sgpr_spills")


def _rewrite(source: str, code: str, release: str, arch: str, root) -> str:
    settings = make_settings(root, select=(code,), target_arch=(arch,), target_version=Version.parse(release))
    return fix_source(SourceFile(str(root / "kernel_under_test.py"), source), Checker(settings), unsafe=True).new_text


@pytest.fixture(scope="module")
def compiled(tmp_path_factory):
    """{(kernel, release): (rewritten source, before, after)}, compiled in parallel where possible."""
    root = tmp_path_factory.mktemp("codemod-lint")
    pythons = {}
    for _, release, _ in CASES:
        try:
            pythons[release] = release_python(release)
        except pytest.skip.Exception:
            continue
    rewritten = {case: _rewrite(getattr(codemod_kernels, case[0]), CODEMODS[case[0]][0], case[1], case[2], root)
                 for case in CASES}
    jobs = {(source, case[2], case[1]) for case, after in rewritten.items() if case[1] in pythons
            for source in (getattr(codemod_kernels, case[0]), after)}
    results = compile_all(jobs, pythons, tmp_path_factory.mktemp("codemod-compile"), {})
    return {case: (after, results.get((getattr(codemod_kernels, case[0]), case[2], case[1])),
                   results.get((after, case[2], case[1]))) for case, after in rewritten.items()}


def _case_id(kernel: str, release: str, arch: str) -> str:
    return f"{kernel.lower()}-{release}" + ("" if arch == ARCH else f"-{arch}")


@pytest.mark.parametrize("kernel, release, arch", CASES, ids=[_case_id(*case) for case in CASES])
def test_codemod_compiles_to_the_same_instructions(compiled, kernel, release, arch):
    release_python(release)  # skips when the release's environment is missing
    code, removed = CODEMODS[kernel]
    after_source, before, after = compiled[(kernel, release, arch)]
    assert removed not in after_source, f"{code} did not rewrite {kernel}:\n{after_source}"
    assert before.ok, f"{kernel} does not compile on flydsl {release}: {before.failures}"
    assert after.ok, f"{code}: the rewritten {kernel} does not compile on flydsl {release}: {after.failures}\n{after_source}"
    assert before.kernels and set(before.kernels) == set(after.kernels)
    assert before.flydsl_versions == after.flydsl_versions == {release}
    for name, old in before.kernels.items():
        new = after.kernels[name]
        assert new.instructions == old.instructions, f"{code}: {name} instructions changed on {release}"
        assert [getattr(new.resources, r) for r in SAME_RESOURCES] == [getattr(old.resources, r) for r in SAME_RESOURCES]
        assert new.resources.lds_bytes <= old.resources.lds_bytes
