"""§1 fixes that the value types make safe (FLY101, FLY102) and §1b detection through API types (FLY112)."""

from __future__ import annotations

from flydsl_lint.engine.diagnostics import Applicability
from flydsl_lint.engine.versions import Version
from tests.conftest import fix_text, lint_text

HEADER = "import flydsl.compiler as flyc\nimport flydsl.expr as fx\nfrom flydsl.expr import arith\nfrom flydsl.expr.arith import ArithValue\n"


def _fixes(tmp_path, body: str, code: str, **settings):
    found = [d for d in lint_text(HEADER + body, tmp_path, select=(code,), **settings) if d.code == code]
    return [(d.start.row - 4, d.fix.applicability, d.fix.message) for d in found]


def test_arith_value_of_an_arith_value_is_dropped_safely(tmp_path):
    body = "def f(raw):\n    a = ArithValue(raw)\n    return ArithValue(a)\n"
    fixes = _fixes(tmp_path, body, "FLY101")
    assert fixes[1] == (3, Applicability.SAFE, "Drop the `ArithValue` wrapper")
    assert fixes[0][1] is Applicability.UNSAFE
    assert fixes[0][2] == "Drop the `ArithValue` wrapper (the type of `raw` is unknown: parameter `raw` has no annotation)"
    # Only the provable one is applied without --unsafe-fixes.
    assert fix_text(HEADER + body, tmp_path, select=("FLY101",)).endswith("    a = ArithValue(raw)\n    return a\n")


def test_the_unsafe_message_names_the_unknown_operand(tmp_path):
    body = "def f(a: fx.Int32, peer):\n    return fx.Int32(ArithValue(a) + peer)\n"
    ((_, applicability, message),) = _fixes(tmp_path, body, "FLY101")
    assert applicability is Applicability.UNSAFE
    assert message == "Drop the `ArithValue` wrapper (the type of `peer` is unknown: parameter `peer` has no annotation)"


def test_a_narrow_scalar_is_never_made_safe(tmp_path):
    # Only Int32/Int64/Float32/Float64 operands are in the safe set: ArithValue drops an
    # unsigned type's signedness, and narrow types are promoted differently.
    body = "def f(a: fx.Int16, b: fx.Int16):\n    return fx.Int16(ArithValue(a) + b)\n"
    ((_, applicability, message),) = _fixes(tmp_path, body, "FLY101")
    assert applicability is Applicability.UNSAFE and "`a` is fx.Int16" in message


def test_unwrap_at_a_raw_boundary_is_safe_only_for_a_typed_value(tmp_path):
    body = ("from flydsl._mlir.dialects import scf\n"
            "def f(i: fx.Int32, n: fx.Int32, raw):\n    scf.IfOp(arith.unwrap(i < n))\n    scf.IfOp(arith.unwrap(raw))\n")
    fixes = _fixes(tmp_path, body, "FLY102")
    assert fixes[0] == (3, Applicability.SAFE, "Call `.ir_value()` on the typed value")
    assert fixes[1] == (4, Applicability.UNSAFE, "Call `.ir_value()` on the typed value "
                        "(the type of `raw` is unknown: parameter `raw` has no annotation)")


def test_unwrap_of_a_range_loop_variable_stays_unsafe(tmp_path):
    # The rewriter's induction variable is a raw ir.Value: it has no `.ir_value()`.
    body = ("@flyc.kernel\ndef k(n: fx.Int32):\n    for i in range(n):\n        arith.addi(arith.unwrap(i), arith.unwrap(i))\n")
    fixes = _fixes(tmp_path, body, "FLY102")
    assert [f[1] for f in fixes] == [Applicability.UNSAFE] * 2
    assert "`i` is ir.Value (i32)" in fixes[0][2]


def test_redundant_rewrap_of_an_api_return_type(tmp_path):
    body = "@flyc.kernel\ndef k():\n    tid = fx.thread_idx.x\n    a = fx.Int32(tid)\n    b = fx.Int32(fx.gpu.block_idx.y)\n"
    found = [d for d in lint_text(HEADER + body, tmp_path, select=("FLY112",))]
    assert [(d.start.row - 4, d.message) for d in found] == [
        (4, "The value is already `Int32`: re-wrapping it is noise"),
        (5, "The value is already `Int32`: re-wrapping it is noise"),
    ]
    # lane_id() is typed from 0.3.2 on only.
    lane = "@flyc.kernel\ndef k():\n    a = fx.Int32(fx.lane_id())\n"
    assert len(lint_text(HEADER + lane, tmp_path, select=("FLY112",))) == 1
    assert lint_text(HEADER + lane, tmp_path, select=("FLY112",), target_version=Version.parse("0.3.1")) == []


def test_a_widening_or_narrowing_wrap_is_never_redundant(tmp_path):
    # fx.Int16 + 1 is an fx.Int32 in the lattice: fx.Int16(...) of it is a real cast, not noise.
    body = "def f(a: fx.Int16, b: fx.Int64):\n    x = fx.Int16(a + 1)\n    y = fx.Int32(b + 1)\n    z = fx.Int64(b + 1)\n"
    found = lint_text(HEADER + body, tmp_path, select=("FLY112",))
    assert [d.start.row - 4 for d in found] == [4]
