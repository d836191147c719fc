"""Which safe fix is proven how. tests/proofs/test_every_safe_fix_is_proven.py
checks that every `fix = "safe"` code in rules.toml is listed here and that the
named test exists.

Kinds:
  isa           the fix is applied with the real engine to a FlyDSL kernel written
                for the proof and both versions are compiled with the real flydsl
                wheel under COMPILE_ONLY: identical normalized ISA and resources on
                every arch listed in PLAN, on the oldest and the newest FlyDSL release
                the fix is offered for and on the commonly pinned releases between
                (proof_releases).
  ast-equality  comment-only fixes: the module's AST is unchanged, so the compiler
                cannot see the edit.
"""

from __future__ import annotations

from dataclasses import dataclass

from flydsl_lint.engine.metadata import load_metadata
from flydsl_lint.engine.target import releases
from flydsl_lint.engine.versions import Version
from tests.release_envs import chosen_releases

CDNA = ("gfx942", "gfx950")
CDNA_AND_RDNA = ("gfx942", "gfx950", "gfx1201")

# kernel module (tests/proofs/kernels_under_proof.py) -> arches it is compiled
# for and the codes whose fixes are proven on it.
PLAN: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    "ELEMENTWISE": (CDNA_AND_RDNA, ("FLY013", "FLY104", "FLY111", "FLY112", "FLY301", "FLY361", "FLY362", "FLY701")),
    "LDS_POINTER": (CDNA_AND_RDNA, ("FLY351",)),
    "MFMA": (CDNA, ("FLY362", "FLY702")),
    "WAITCNT_SHIMS": (CDNA, ("FLY361", "FLY363", "FLY364")),
    "RAW_ARITH_VIEWS": (CDNA_AND_RDNA, ("FLY341", "FLY342", "FLY343", "FLY344")),
    "SELECT_CONSUMERS": (CDNA_AND_RDNA, ("FLY344",)),
    "ARITH_VALUE_WRAPS": (CDNA_AND_RDNA, ("FLY101", "FLY102")),
    "ARITH_VALUE": (CDNA, ("FLY101", "FLY102")),
    "ARITH_VALUE_INDEX": (CDNA_AND_RDNA, ("FLY101", "FLY105")),
    "TYPED_METHODS": (CDNA_AND_RDNA, ("FLY302",)),
    "BUFFER_OFFSETS": (CDNA_AND_RDNA, ("FLY343",)),
    "ARITH_VALUE_CONSTANTS": (CDNA_AND_RDNA, ("FLY343",)),
    "RUN_TIME_CONSTANTS": (CDNA_AND_RDNA, ("FLY343",)),
    "VECTOR_OPS": (CDNA_AND_RDNA, ("FLY321",)),
    "LAYOUT_LEAVES": (CDNA_AND_RDNA, ("FLY113",)),
    "INDEX_CASTS": (CDNA_AND_RDNA, ("FLY103",)),
}


# Codemods proven by tests/proofs/test_codemods_compile_identically.py (tests/proofs/codemod_kernels.py):
# kernel -> (the codemod's code, text the rewrite must have removed)
CODEMODS = {
    "RAW_SCF_FOR": ("FLY311", "scf.ForOp"),
    "RAW_SCF_FOR_RAW_CONSTANTS": ("FLY311", "scf.ForOp"),
    "SMEM_ALLOCATOR": ("FLY401", "SmemAllocator"),
    "SMEM_ALLOCATOR_FACTORY": ("FLY401", "SmemAllocator"),
    "SMEM_ALLOCATOR_UNUSED": ("FLY401", "SmemAllocator"),
    "RAW_SCF_IF": ("FLY501", "scf.IfOp"),
    "RAW_SCF_IF_RESULTS": ("FLY501", "scf.IfOp"),
    "RAW_SCF_IF_IN_HELPERS": ("FLY501", "scf.IfOp"),
    "RAW_SCF_IF_IN_NESTED_DEF": ("FLY501", "scf.IfOp"),
    "RAW_SCF_IF_NESTED": ("FLY501", "scf.IfOp"),
    "RAW_SCF_IF_AROUND_RAW_OP": ("FLY501", "outer.then_block"),
    "RAW_SCF_WHILE": ("FLY312", "scf.WhileOp"),
    "SCF_IF_DISPATCH": ("FLY503", "scf_if_dispatch"),
}


def offered_from(code: str) -> Version:
    """The oldest release a code's fix is offered for: its fix-since, but never below the oldest supported."""
    since = load_metadata()[code].fix_since
    oldest = releases().oldest_supported
    return max(Version.parse(since), oldest) if since else oldest


def proof_releases(code: str) -> tuple[str, ...]:
    """Where a code's fix is proven: its oldest release, the commonly pinned ones it is offered for
    (data/releases.txt) and the newest (FLYDSL_RELEASES: those of them offering it)."""
    first = offered_from(code)
    chosen = chosen_releases()
    if chosen is not None:
        return tuple(release for release in chosen if Version.parse(release) >= first)
    pinned = [str(release) for release in releases().commonly_pinned if release > first]
    return tuple(dict.fromkeys((str(first), *pinned, str(releases().known[-1]))))


ISA_TEST = "tests/proofs/test_safe_fixes_compile_identically.py::test_fix_compiles_identically"


@dataclass(frozen=True)
class Proof:
    kind: str  # "isa" | "ast-equality"
    test: str  # path::function
    arches: tuple[str, ...] = ()


def _isa_proofs() -> dict[str, Proof]:
    arches: dict[str, set[str]] = {}
    for module_arches, codes in PLAN.values():
        for code in codes:
            arches.setdefault(code, set()).update(module_arches)
    return {code: Proof("isa", ISA_TEST, tuple(sorted(found))) for code, found in arches.items()}


PROVEN: dict[str, Proof] = {
    **_isa_proofs(),
    # FLY013 is also in the compiled kernel above; the AST proof covers every input.
    "FLY013": Proof("ast-equality", "tests/proofs/test_comment_fixes_keep_ast.py::test_unused_noqa_fix_keeps_the_ast"),
    "FLY014": Proof("ast-equality", "tests/proofs/test_comment_fixes_keep_ast.py::test_redirected_noqa_fix_keeps_the_ast"),
    **{
        code: Proof("ast-equality", "tests/rules/test_s8_comments.py::test_fly8_fixes_keep_the_ast_over_the_kernel_corpus")
        for code in ("FLY801", "FLY802", "FLY803", "FLY804")
    },
}
