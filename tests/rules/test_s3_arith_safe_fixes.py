"""§3 arith fixes that the value types make safe (FLY343, FLY302), beyond the rules' inline cases."""

from __future__ import annotations

from flydsl_lint.engine.diagnostics import Applicability
from tests.conftest import fix_text, lint_text

HEADER = ("import flydsl.compiler as flyc\nimport flydsl.expr as fx\nfrom flydsl.expr import arith, gpu\n"
          "from flydsl.expr.typing import T\n")


def test_a_gpu_module_thread_id_is_a_run_time_left_operand(tmp_path):
    # `gpu.thread_idx.x` (0.3.x kernels import the gpu module) is the same run-time Int32
    # as `fx.thread_idx.x`: the operator builds the same i32 constant from the literal.
    body = ("@flyc.kernel\ndef k(n: fx.Int32):\n    tid = gpu.thread_idx.x\n"
            "    lane = tid & arith.constant(15, type=T.i32)\n    row = gpu.block_idx.x * arith.constant(4, type=T.i32)\n")
    fixed = fix_text(HEADER + body, tmp_path, select=("FLY343",))
    assert fixed.endswith("    tid = gpu.thread_idx.x\n    lane = tid & 15\n    row = gpu.block_idx.x * 4\n")


def test_an_operator_on_a_fixable_constant_keeps_its_left_operands_type(tmp_path):
    # `tid >> arith.constant(4, type=T.i32)` is the Int32 `tid >> 4` is (the operator builds
    # the same constant), so a constant on the right of it, or of a name bound once to it,
    # is fixed too, in the same pass.
    body = ("@flyc.kernel\ndef k(n: fx.Int32):\n    tid = fx.Int32(fx.thread_idx.x)\n"
            "    row = (tid >> arith.constant(4, type=T.i32)) & arith.constant(3, type=T.i32)\n"
            "    warp = tid >> arith.constant(6, type=T.i32)\n    head = warp * arith.constant(4, type=T.i32) + row\n")
    found = [d for d in lint_text(HEADER + body, tmp_path, select=("FLY343",))]
    assert [(d.start.row - 4, d.fix and d.fix.applicability) for d in found] == \
        [(4, Applicability.SAFE), (4, Applicability.SAFE), (5, Applicability.SAFE), (6, Applicability.SAFE)]
    assert fix_text(HEADER + body, tmp_path, select=("FLY343",)).endswith(
        "    row = (tid >> 4) & 3\n    warp = tid >> 6\n    head = warp * 4 + row\n")


def test_no_type_is_carried_through_an_unsigned_or_compared_operand(tmp_path):
    # Uint32 against an i32 constant promotes; a comparison is a Boolean; a name bound twice, no
    # one binding provably reaching the read, may hold anything: the outer constant keeps no fix.
    body = ("@flyc.kernel\ndef k(n: fx.Uint32, m: fx.Int32):\n"
            "    a = (n >> arith.constant(4, type=T.i32)) & arith.constant(3, type=T.i32)\n"
            "    b = (m < arith.constant(4, type=T.i32)) & arith.constant(1, type=T.i32)\n"
            "    c = m + arith.constant(1, type=T.i32)\n    if m > 0:\n        c = n\n"
            "    d = c * arith.constant(2, type=T.i32)\n")
    found = [d for d in lint_text(HEADER + body, tmp_path, select=("FLY343",))]
    assert [(d.start.row - 4, d.fix is not None) for d in found] == \
        [(3, True), (3, False), (4, True), (4, False), (5, True), (8, False)]
    # Rebound in straight-line code, the read sees `c = n`: as `n * ...` itself.
    straight = body.replace("    if m > 0:\n        c = n\n", "    c = n\n")
    found = [d for d in lint_text(HEADER + straight, tmp_path, select=("FLY343",))]
    assert [(d.start.row - 4, d.fix is not None) for d in found][-1] == (7, True)


def test_a_name_bound_once_to_a_number_literal_is_that_literal(tmp_path):
    # `MFMA_N = 16` at module level: the operator reads the same Python int, so the same constant.
    body = ("MFMA_N = 16\nBIG = 0xFF800000\nTILE = 16\nTILE = 32\n@flyc.kernel\ndef k(n: fx.Int32):\n"
            "    a = n * arith.constant(MFMA_N, type=T.i32)\n    b = n & arith.constant(BIG, type=T.i32)\n"
            "    c = n * arith.constant(TILE, type=T.i32)\n")
    fixed = fix_text(HEADER + body, tmp_path, select=("FLY343",))
    # BIG does not fit an Int32 literal; TILE is bound twice: both keep the raw constant.
    assert fixed.endswith("    a = n * MFMA_N\n    b = n & arith.constant(BIG, type=T.i32)\n"
                          "    c = n * arith.constant(TILE, type=T.i32)\n")


def test_a_long_chain_of_constants_costs_linear_work(tmp_path, monkeypatch):
    # Each constant's left operand is the chain before it: its type must not be worked out
    # again for every way of reaching it (that is exponential in the chain's length).
    from flydsl_lint.rules.s3_arith import RawArithConstant

    calls = []
    original = RawArithConstant._operand_type

    def counted(self, node, depth=0):
        calls.append(node)
        if len(calls) > 100_000:
            raise RuntimeError("too many operand-type queries")
        return original(self, node, depth)

    monkeypatch.setattr(RawArithConstant, "_operand_type", counted)
    chain = " + ".join(["tid"] + ["arith.constant(1, type=T.i32)"] * 40)
    body = f"@flyc.kernel\ndef k(n: fx.Int32):\n    tid = fx.Int32(fx.thread_idx.x)\n    s = {chain}\n"
    found = lint_text(HEADER + body, tmp_path, select=("FLY343",))
    assert len(found) == 40 and found[0].fix is not None and found[1].fix is not None
    assert len(calls) <= 40 * 10, len(calls)
