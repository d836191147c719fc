"""A FlyDSL kernel for the FLY101/FLY102 fix proofs (not collected as tests).

From 0.3.0 ArithValue is the MLIR value caster of scalar and vector types, so
the values below already are ArithValues of signed=None, and `unwrap` returns
an ir.Value unchanged: every `ArithValue(...)` and `arith.unwrap(...)` here has
a safe fix (engine/model/types.py), and the kernel must compile to the same ISA
with them applied. ``build()`` launches it with fixed shapes (COMPILE_ONLY).
"""

ARITH_VALUE = '''\
import torch

import flydsl.compiler as flyc
import flydsl.expr as fx
from flydsl._mlir.dialects import arith as _arith
from flydsl.expr import arith
from flydsl.expr.arith import ArithValue
from flydsl.expr.typing import T

BLOCK = 64


@flyc.kernel
def caster_kernel(Out: fx.Tensor, shift: fx.Int32, scale: fx.Float32):
    tid = fx.thread_idx.x
    lane = fx.Int32(tid)
    # FLY102: unwrap of an ir.Value (a typed value's .ir_value(), a helper's constant) is that value.
    t = _arith.AddIOp(arith.unwrap(lane.ir_value()), arith.unwrap(shift.ir_value())).result
    four = arith.unwrap(arith.constant(4, type=T.i32))
    # FLY101: a raw op's result already is an ArithValue of signed=None, in an operator or a method call.
    quarter = ArithValue(_arith.MulIOp(t, four).result) // 8
    masked = ArithValue(_arith.andi(t, four)) % 16
    bits = ArithValue(scale.ir_value()).bitcast(T.i32)
    low = ArithValue(ArithValue(bits)).trunci(T.i16)
    wide = ArithValue(low).extui(T.i32)
    small = ArithValue(_arith.cmpi(_arith.CmpIPredicate.slt, t, four)).select(quarter, masked)

    copy = fx.make_copy_atom(fx.rocdl.BufferCopy(fx.Float32.width), fx.Float32)
    tO = fx.logical_divide(fx.rocdl.make_buffer_tensor(Out), fx.make_layout(1, 1))
    r = fx.make_rmem_tensor(1, fx.Float32)
    for i in range(2):
        # The rewriter's loop variable is a raw i32: an ArithValue of signed=None too.
        col = ArithValue(i) * 2 + arith.unwrap(i)
        r[0] = fx.Int32(wide + col).to(fx.Float32)
        fx.copy(copy, r, fx.slice(tO, (None, fx.Int32(small + col) % BLOCK)))


@flyc.jit
def caster(Out: fx.Tensor, shift: fx.Int32, scale: fx.Float32, stream: fx.Stream = fx.Stream(None)):
    caster_kernel(Out, shift, scale).launch(grid=(1, 1, 1), block=(BLOCK, 1, 1), stream=stream)


def build():
    caster(torch.empty(BLOCK, device="cuda"), 3, 0.5, stream=torch.cuda.current_stream())
'''

# FLY101 on receiver casts: `ArithValue(x).index_cast(T.index)` of an fx integer (signed, unsigned,
# compile-time) becomes `fx.Index(x)` where every use reads it alike: a loop bound (the rewriter's auto
# loop and its `init=` loop), an fx integer wrap, a helper passing it to one, a raw op (`.ir_value()`);
# of an x the model cannot type (a rocdl builder's result) and of a raw op's result alike.
# FLY105 on literal index constants: `arith.index(n)` becomes `fx.Index(n)` in the same uses.
ARITH_VALUE_INDEX = '''\
import torch

import flydsl.compiler as flyc
import flydsl.expr as fx
from flydsl._mlir.dialects import arith
from flydsl.expr import arith as expr_arith
from flydsl.expr.arith import ArithValue
from flydsl.expr.typing import T

BLOCK = 64


def _as_i32(idx):
    return fx.Int32(idx)


@flyc.kernel
def index_kernel(Out: fx.Tensor, n: fx.Int32, u: fx.Uint32):
    tid = fx.thread_idx.x
    lane = fx.Int32(tid)
    four = fx.Int32(4)
    base = ArithValue(four).index_cast(T.index)
    mixed = arith.AddIOp(ArithValue(u).index_cast(T.index), base).result
    wide = fx.Int64(ArithValue(lane).index_cast(T.index))
    quarter = expr_arith.shrui(mixed, expr_arith.index(2))
    low_bits = expr_arith.andi(mixed, expr_arith.index(3))
    steps = expr_arith.index(4)
    total = lane + _as_i32(base) + fx.Int32(mixed) + fx.Int32(wide) + fx.Int32(quarter) + fx.Int32(low_bits)
    total = total + fx.Int32(expr_arith.index(5)) + _as_i32(steps)
    # Python ints read by ArithValue operators (a comparison too): `fx.Index(n).ir_value()` alike.
    span = mixed // expr_arith.index(int(BLOCK ** 0.5)) + (mixed < expr_arith.index(BLOCK - 1)).select(mixed, base)
    total = total + fx.Int32(span)
    for s in range(fx.Index(0), steps, fx.Index(1)):
        total = total + fx.Int32(s)
    for i in range(fx.Index(0), ArithValue(n).index_cast(T.index), fx.Index(1)):
        total = total + fx.Int32(i)
    for j, state in range(fx.Index(0), ArithValue(lane).index_cast(T.index), fx.Index(1), init=[total]):
        step = state[0] + fx.Int32(j)
        results = yield [step]
    total = results
    uniform = fx.rocdl.readfirstlane(T.i32, arith.AddIOp(lane.ir_value(), four.ir_value()).result)
    for k in range(fx.Index(0), ArithValue(uniform).index_cast(T.index), fx.Index(1)):
        total = total + fx.Int32(k)
    raw_ix = ArithValue(arith.MulIOp(uniform, n.ir_value()).result).index_cast(T.index)
    total = total + _as_i32(raw_ix)
    for r in fx.range_constexpr(2):
        row_ix = ArithValue(lane + r).index_cast(T.index)  # a name bound again below: each read sees one
        total = total + _as_i32(row_ix)
    row_ix = ArithValue(n).index_cast(T.index)
    total = total + fx.Int32(row_ix)

    copy = fx.make_copy_atom(fx.rocdl.BufferCopy(fx.Float32.width), fx.Float32)
    tO = fx.logical_divide(fx.rocdl.make_buffer_tensor(Out), fx.make_layout(1, 1))
    rv = fx.make_rmem_tensor(1, fx.Float32)
    rv[0] = fx.Int32(total).to(fx.Float32)
    fx.copy(copy, rv, fx.slice(tO, (None, lane % BLOCK)))


@flyc.jit
def index_casts(Out: fx.Tensor, n: fx.Int32, u: fx.Uint32, stream: fx.Stream = fx.Stream(None)):
    index_kernel(Out, n, u).launch(grid=(1, 1, 1), block=(BLOCK, 1, 1), stream=stream)


def build():
    index_casts(torch.empty(BLOCK, device="cuda"), 3, 5, stream=torch.cuda.current_stream())
'''
