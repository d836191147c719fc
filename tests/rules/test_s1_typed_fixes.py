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
    assert fixes[0][2] == "Drop the `ArithValue` wrapper (the type of `raw` is unknown: parameter `raw` has no annotation, and `f` is public)"
    # Only the provable one is applied without --unsafe-fixes.
    assert fix_text(HEADER + body, tmp_path, select=("FLY101",)).endswith("    a = ArithValue(raw)\n    return a\n")


def test_the_unsafe_message_names_the_unknown_operand(tmp_path):
    body = "def f(a: fx.Int32, peer):\n    return fx.Int32(ArithValue(a) + peer)\n"
    ((_, applicability, message),) = _fixes(tmp_path, body, "FLY101")
    assert applicability is Applicability.UNSAFE
    assert message == "Drop the `ArithValue` wrapper (the type of `peer` is unknown: parameter `peer` has no annotation, and `f` is public)"


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
                        "(the type of `raw` is unknown: parameter `raw` has no annotation, and `f` is public)")


def test_unwrap_of_a_range_loop_variable_is_dropped(tmp_path):
    # The rewriter's induction variable is an ir.Value (it has no `.ir_value()`): unwrap returns it unchanged.
    body = ("@flyc.kernel\ndef k(n: fx.Int32):\n    for i in range(n):\n        arith.addi(arith.unwrap(i), arith.unwrap(i))\n")
    fixes = _fixes(tmp_path, body, "FLY102")
    assert fixes == [(4, Applicability.SAFE, "Drop the call: `i` already is an ir.Value")] * 2
    assert fix_text(HEADER + body, tmp_path, select=("FLY102",)).endswith("        arith.addi(i, i)\n")


def test_unwrap_of_a_signed_value_is_dropped_too(tmp_path):
    # `_to_raw` returns any ir.Value unchanged, signedness included: `unwrap(v)` is `v`.
    body = "def f(u: fx.Uint32):\n    v = u.ir_value()\n    return arith.unwrap(v) // 4\n"
    assert _fixes(tmp_path, body, "FLY102") == [(3, Applicability.SAFE, "Drop the call: `v` already is an ir.Value")]
    assert fix_text(HEADER + body, tmp_path, select=("FLY102",)).endswith("    return v // 4\n")


def test_unwrap_of_a_python_scalar_or_an_unknown_value_is_not_dropped(tmp_path):
    # unwrap(3) materializes a constant; unwrap of an unknown value may be a Numeric's .ir_value().
    body = "def f(raw):\n    a = arith.unwrap(3)\n    b = arith.unwrap(raw)\n"
    fixes = _fixes(tmp_path, body, "FLY102")
    assert [f[1] for f in fixes] == [Applicability.UNSAFE] * 2
    assert fixes[0][2] == "Call `.ir_value()` on the typed value (`3` is a Python int)"


def test_arith_value_of_a_caster_made_value_is_dropped_in_any_use(tmp_path):
    # Of a scalar type: an operand shows it (`a.ir_value()` of an fx.Int32), or the op (an induction variable).
    body = ("from flydsl._mlir.dialects import arith as _arith, scf\n"
            "def f(a: fx.Int32, b, lb, ub, step):\n"
            "    s = ArithValue(_arith.AddIOp(a.ir_value(), b).result) // 4\n"
            "    m = ArithValue(_arith.muli(b, a.ir_value())).select(a, b)\n"
            "    loop = scf.ForOp(lb, ub, step, [])\n"
            "    i = ArithValue(loop.induction_variable) % 8\n"
            "    w = ArithValue(ArithValue(b)) < 3\n"
            "    v = ArithValue(_arith.AddIOp(b, b).result) >> 1\n")
    fixes = _fixes(tmp_path, body, "FLY101")
    assert [(row, applicability) for row, applicability, _ in fixes] == [
        (3, Applicability.SAFE), (4, Applicability.SAFE), (6, Applicability.SAFE),
        (7, Applicability.SAFE), (7, Applicability.UNSAFE), (8, Applicability.UNSAFE)]
    fixed = fix_text(HEADER + body, tmp_path, select=("FLY101",))
    assert "    s = _arith.AddIOp(a.ir_value(), b).result // 4\n" in fixed
    assert "    m = _arith.muli(b, a.ir_value()).select(a, b)\n" in fixed
    assert "    i = loop.induction_variable % 8\n" in fixed
    assert "    w = ArithValue(b) < 3\n" in fixed
    # Of operands of no known type the sum may be of a vector type: the caster's fx.Vector, whose `>>`
    # reads its element class's signedness (shrsi) where `ArithValue(v) >> 1` emits shrui.
    assert "may be an fx.Vector" in fixes[-1][2]


def test_arith_value_of_a_value_that_may_carry_signedness_is_unsafe(tmp_path):
    # ArithValue resets signed to None: `//` of an unsigned value would become a signed division.
    body = ("def f(u: fx.Uint32, x, s):\n    v = u.ir_value()\n    a = ArithValue(v) // 4\n"
            "    b = ArithValue(ArithValue(x, s)) // 4\n    c = ArithValue(arith.unwrap(u)) % 3\n")
    found = [d for d in lint_text(HEADER + body, tmp_path, select=("FLY101",)) if d.fix is not None]
    fixes = [(d.start.row - 4, d.fix.applicability, d.fix.message) for d in found]  # ArithValue(x, s) has none
    assert [f[:2] for f in fixes] == [(3, Applicability.UNSAFE), (4, Applicability.UNSAFE), (5, Applicability.UNSAFE)]
    assert fixes[0][2] == ("Drop the `ArithValue` wrapper (`v` may carry signedness: `v` is `u.ir_value()`: "
                           "`.ir_value()` of fx.Uint32 carries signed=False (API table 0.5.0))")
    assert fixes[1][2] == "Drop the `ArithValue` wrapper (`ArithValue(x, s)` may carry signedness: `ArithValue(v, signed)`)"
    assert fixes[2][2] == ("Drop the `ArithValue` wrapper (`arith.unwrap(u)` may carry signedness: "
                           "`.ir_value()` of fx.Uint32 carries signed=False (API table 0.5.0))")


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


def test_unwrap_of_an_arith_constant_and_arith_value_of_a_method_result(tmp_path):
    body = ("from flydsl.expr.typing import T\n"
            "def f(v, x):\n    c = arith.unwrap(arith.constant(v, type=T.i32))\n"
            "    h = ArithValue(x).bitcast(T.i16)\n    w = ArithValue(h).extui(T.i32)\n")
    fixes = _fixes(tmp_path, body, "FLY102") + _fixes(tmp_path, body, "FLY101")
    assert [f[:2] for f in fixes] == [(3, Applicability.SAFE), (4, Applicability.UNSAFE), (5, Applicability.SAFE)]
    fixed = fix_text(HEADER + body, tmp_path, select=("FLY101", "FLY102"))
    assert "    c = arith.constant(v, type=T.i32)\n    h = ArithValue(x).bitcast(T.i16)\n    w = h.extui(T.i32)\n" in fixed


def test_below_the_type_table_a_rewrap_of_an_operator_result_is_not_reported(tmp_path):
    # 0.2.4 predates the value-type table: `4 * tx` has no known type there, a parameter still has.
    source = "import flydsl.expr as fx\ndef k(tx: fx.Int32):\n    return fx.Int32(4 * tx) + fx.Int32(tx)\n"
    found = lambda target: [d for d in lint_text(source, tmp_path, select=("FLY112",), target_version=target)]
    assert [d.start.col for d in found(Version.parse("0.3.0"))] == [11, 30]
    older = found(Version.parse("0.2.4"))
    assert [d.start.col for d in older] == [30] and older[0].fix is None
    assert older[0].message.endswith("(fix needs FlyDSL >= 0.3.0; target is 0.2.4)")


def test_an_unsafe_compile_time_unwrap_says_why(tmp_path):
    body = ("BLOCK = 64\ndef f(dim):\n    K = int(dim)\n"
            "    a = fx.make_layout(fx.Int32(K), fx.Int32(BLOCK))\n"
            "    b = fx.make_shape(fx.Int32(2**31), fx.Uint32(BLOCK))\n"
            "    return fx.make_tile(fx.Int32(BLOCK), 1)\n")
    assert _fixes(tmp_path, body, "FLY113") == [
        (4, Applicability.UNSAFE, "Pass the Python value, not `Int32(...)` "
                                  "(`K` is not known to fit in 32 bits, outside which `fx.Int32` wraps it)"),
        (4, Applicability.SAFE, "Pass the Python value, not `Int32(...)`"),
        (5, Applicability.UNSAFE, "Pass the Python value, not `Int32(...)` "
                                  "(`2**31` is not known to fit in 32 bits, outside which `fx.Int32` wraps it)"),
        (5, Applicability.UNSAFE, "Pass the Python value, not `Uint32(...)` "
                                  "(`fx.Uint32` may hold another value than the int it is given)"),
        (6, Applicability.UNSAFE, "Pass the Python value, not `Int32(...)` "
                                  "(`make_tile` is not proven to read a wrap as the int it holds)"),
    ]
