"""§6: which references can name a raw intrinsic, however they are spelled."""

from __future__ import annotations

from tests.conftest import lint_text, write_package

CALL = "(T.vec(4, T.f32), [a, b, c, 0, 0, 0])\n"


def _rows(text: str, tmp_path, **overrides) -> list[tuple[int, str]]:
    return [(d.start.row, d.code) for d in lint_text(text, tmp_path, select=("FLY60",), **overrides)]


def test_flydsl_names_are_final_but_aliases_and_re_exports_are_followed(tmp_path):
    # A project module handing an intrinsic out under a name the linter follows (`load`).
    write_package(tmp_path, {"mma_ops": "from flydsl.expr.rocdl import mfma_f32_16x16x16f16 as load\n"})
    text = (
        "from flydsl.expr.typing import T\n"
        "from flydsl.expr.rocdl import load, mfma_f32_16x16x16f16\n"  # FlyDSL's `load`: final, not an intrinsic
        "from kernels import mma_ops\n"
        "c = load" + CALL +
        "step = mfma_f32_16x16x16f16\n"
        "c = step" + CALL +
        "c = mma_ops.load" + CALL
    )
    assert _rows(text, tmp_path, root=tmp_path) == [(5, "FLY601"), (6, "FLY601"), (7, "FLY601")]


def test_a_local_rebinding_of_a_flydsl_name_is_still_read(tmp_path):
    text = (
        "from flydsl.expr.typing import T\n"
        "from flydsl.expr import rocdl\n"
        "from flydsl.expr.rocdl import load\n"
        "def run(a, b, c):\n"
        "    load = rocdl.mfma_f32_16x16x16f16\n"
        "    return load" + CALL
    )
    assert _rows(text, tmp_path) == [(5, "FLY601"), (6, "FLY601")]
