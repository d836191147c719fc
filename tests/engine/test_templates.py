"""ast-grep rewrite templates behind display-only suggestions."""

from flydsl_lint.rules._templates import rewrite

PATTERN = "$F($TY, [$A, $B, $C, $$$MODIFIERS])"


def test_metavariables_fill_the_rewrite():
    segment = "rocdl.mfma_f32_16x16x16f16(T.vec(4, T.f32), [a_frag, b_frag, acc, 0, 0, 0])"
    assert rewrite(segment, PATTERN, "fx.gemm(mma, $C, $A, $B, $C)") == "fx.gemm(mma, acc, a_frag, b_frag, acc)"
    assert rewrite(segment, PATTERN, "keep($$$MODIFIERS)") == "keep(0, 0, 0)"


def test_no_suggestion_when_the_pattern_does_not_cover_the_construct():
    assert rewrite("mfma(res, a, b, acc, 0, 0, 0)", PATTERN, "fx.gemm(mma, $C, $A, $B, $C)") is None
    assert rewrite("wrap(rocdl.mfma_x(t, [a, b, c, 0, 0, 0]))", PATTERN, "fx.gemm(mma, $C, $A, $B, $C)") is None


def test_unbound_metavariable_gives_no_suggestion():
    assert rewrite("f(t, [a, b, c, 0])", PATTERN, "g($D)") is None
