"""Fix sites that failed their proof, and why they stay demoted.

FLY341 on fx values themselves: `arith.addi(a, b)` with `a`, `b` fx.Int32
(not views such as `a.ir_value()`). A raw arith op does not accept fx values
(the generated builder reads `.type`, which `fx.Int32` does not have; flydsl
0.3.0 and 0.5.0 alike), so the code the fix rewrites fails at trace time and
the fixed code compiles: there is no "before" ISA to compare, and the fix
changes behaviour (an error becomes a kernel). The rule lowers that site to
unsafe; its safe sites (views) are proven in test_safe_fixes_compile_identically.
"""

from __future__ import annotations

import pytest

from flydsl_lint.engine.diagnostics import Applicability
from flydsl_lint.verify.compile import compile_source
from tests.conftest import fix_text, lint_text
from tests.proofs import kernels_under_proof
from tests.proofs.harness import flydsl_missing_reason

SOURCE = kernels_under_proof.RAW_ARITH_ON_TYPED


def test_raw_arith_operator_fix_on_fx_values_is_unsafe(tmp_path):
    (diagnostic,) = [d for d in lint_text(SOURCE, tmp_path, select=("FLY341",))]
    assert diagnostic.fix is not None and diagnostic.fix.applicability is Applicability.UNSAFE
    assert fix_text(SOURCE, tmp_path, select=("FLY341",)) == SOURCE
    fixed = fix_text(SOURCE, tmp_path, unsafe=True, select=("FLY341",))
    assert "dst = (lane + shift) % BLOCK" in fixed
    assert "arith.addi" not in fixed


def test_raw_arith_on_fx_operands_does_not_compile_but_the_fix_does(tmp_path):
    reason = flydsl_missing_reason()
    if reason:
        pytest.skip(reason)
    fixed = fix_text(SOURCE, tmp_path, unsafe=True, select=("FLY341",))
    before = compile_source(SOURCE, arch="gfx942", entry="build", workdir=tmp_path / "before")
    after = compile_source(fixed, arch="gfx942", entry="build", workdir=tmp_path / "after")
    assert not before.ok and not before.kernels
    assert "has no attribute 'type'" in before.failures[0].message, before.failures
    assert after.ok and after.kernels, after.failures
