"""FlyDSL kernels written for the fix proofs (not collected as tests).

Each module holds one small kernel per construct family, written the way
real FlyDSL kernels are (``@flyc.kernel`` bodies launched from a
``@flyc.jit`` wrapper) and packed with the legacy spellings whose safe fixes
we prove. ``build()`` launches everything with fixed shapes; under
``COMPILE_ONLY`` that compiles without a GPU.

``ELEMENTWISE`` only uses constructs every AMD target has (buffer copies,
LDS, waits); it is compiled for CDNA and RDNA. ``MFMA`` needs matrix cores
and is compiled for CDNA only.
"""

ELEMENTWISE = '''\
import torch

import flydsl.compiler as flyc
import flydsl.expr as fx
from flydsl.expr import arith, rocdl
from flydsl.expr.typing import T

BLOCK = 64
_LGKM_ONLY = 0xC07F
_TILE = (BLOCK, 1)


def _s_waitcnt(val):
    rocdl.s_waitcnt(val)


def _wrap_lane(lane, peer):
    # `lane` is the fx.Int32 the kernel's only call passes: the wrap is noise (FLY112).
    return (fx.Int32(lane) + peer) % 64


@flyc.kernel
def blend_kernel(X: fx.Tensor, Y: fx.Tensor, Out: fx.Tensor, scale: fx.Float32, shift: fx.Int32):
    tid = fx.thread_idx.x
    lane = fx.Int32(tid)
    row = arith.index_cast(T.index, tid)
    peer = fx.Int32(fx.Int32(lane) + shift) % BLOCK
    dst = fx.Int32(fx.Int32(tid))  # noqa: FLY105
    # An operator's class from its Python operand: BLOCK, bounded, is an Int32; `len(...)`, of no
    # known value, may be an Int32 or an Int64, and either keeps an Int64 one (FLY112 both).
    span = fx.Int32(lane * BLOCK)
    reach = fx.Int64(fx.Int64(tid) + len(_TILE))
    # An element of a list of Int32s, read by a helper of the kernel: the wrap of its sum is noise too.
    bases = [lane, peer]

    def lane_sum(i):
        return fx.Int32(bases[i] + fx.Int32(i))

    span = span + lane_sum(0) + lane_sum(1)

    copy = fx.make_copy_atom(fx.rocdl.BufferCopy(fx.Float32.width), fx.Float32)
    per_thread = fx.make_layout(1, 1)
    tX = fx.logical_divide(fx.rocdl.make_buffer_tensor(X), per_thread)
    tY = fx.logical_divide(fx.rocdl.make_buffer_tensor(Y), per_thread)
    tO = fx.logical_divide(fx.rocdl.make_buffer_tensor(Out), per_thread)
    rx = fx.make_rmem_tensor(1, fx.Float32)
    ry = fx.make_rmem_tensor(1, fx.Float32)
    fx.copy_atom_call(copy, fx.slice(tX, (None, row)), rx)
    fx.copy_atom_call(copy, fx.slice(tY, (None, _wrap_lane(lane, peer))), ry)
    rocdl.s_waitcnt(0)

    x = fx.memref_load_vec(rx)
    y = fx.memref_load_vec(ry)
    hi = arith.maximumf(x, y)
    lo = arith.minimumf(x, y)
    clipped = arith.maxnumf(lo, y)

    _s_waitcnt(0)
    rocdl.s_waitcnt(_LGKM_ONLY)
    # An Int32 minimum into its own wrap, and a maximum of two f32 ir.Values read by a raw op (FLY301).
    span = span + fx.Int32(arith.minsi(lane.ir_value(), shift.ir_value()))
    peak = arith.maximumf(scale.ir_value(), fx.Float32(0.25).ir_value())
    gain = fx.Float32(arith.mulf(arith._to_raw(scale), peak))
    fx.memref_store_vec(hi - lo + clipped * gain, rx)
    fx.copy_atom_call(copy, rx, fx.slice(tO, (None, (dst + span + fx.Int32(reach)) % BLOCK)))


@flyc.jit
def blend(X: fx.Tensor, Y: fx.Tensor, Out: fx.Tensor, scale: fx.Float32, shift: fx.Int32,
          stream: fx.Stream = fx.Stream(None)):
    blend_kernel(X, Y, Out, scale, shift).launch(grid=(1, 1, 1), block=(BLOCK, 1, 1), stream=stream)


def build():
    x = torch.randn(BLOCK, device="cuda")
    y = torch.randn(BLOCK, device="cuda")
    blend(x, y, torch.empty_like(x), 0.5, 3, stream=torch.cuda.current_stream())
'''

LDS_POINTER = '''\
import torch

import flydsl.compiler as flyc
import flydsl.expr as fx
from flydsl._mlir.dialects import llvm
from flydsl.expr import rocdl
from flydsl.expr.typing import T
from kernels.common import buffer_ops

BLOCK = 64


@fx.struct
class Staging:
    scaled: fx.Array[fx.Float32, BLOCK]


@flyc.kernel
def stage_scale_kernel(Out: fx.Tensor, scale: fx.Float32):
    tid = fx.thread_idx.x
    # Stage scale * scale in LDS through a raw pointer to the staging buffer.
    lds = fx.SharedAllocator().allocate(Staging).peek()
    lds_base = fx.Index(fx.ptrtoint(lds.scaled.ptr))
    lds_ptr = buffer_ops.create_llvm_ptr(lds_base, address_space=3)
    llvm.StoreOp(fx.as_ir_value(scale * scale), lds_ptr)
    rocdl.s_barrier()
    squared = fx.Float32(llvm.LoadOp(T.f32, lds_ptr).result)

    copy = fx.make_copy_atom(fx.rocdl.BufferCopy(fx.Float32.width), fx.Float32)
    tO = fx.logical_divide(fx.rocdl.make_buffer_tensor(Out), fx.make_layout(1, 1))
    r = fx.make_rmem_tensor(1, fx.Float32)
    r[0] = squared
    fx.copy(copy, r, fx.slice(tO, (None, tid)))


@flyc.jit
def stage_scale(Out: fx.Tensor, scale: fx.Float32, stream: fx.Stream = fx.Stream(None)):
    stage_scale_kernel(Out, scale).launch(grid=(1, 1, 1), block=(BLOCK, 1, 1), stream=stream)


def build():
    stage_scale(torch.empty(BLOCK, device="cuda"), 0.5, stream=torch.cuda.current_stream())
'''

MFMA = '''\
import torch

import flydsl.compiler as flyc
import flydsl.expr as fx
from flydsl.expr import rocdl

TILE_M = 16
TILE_N = 16
TILE_K = 4


def _encode_waitcnt(vmcnt=63, expcnt=7, lgkmcnt=15):
    return (vmcnt & 0xF) | (expcnt << 4) | (lgkmcnt << 8) | (((vmcnt >> 4) & 0x3) << 14)


@flyc.kernel
def tile_mma_kernel(A: fx.Tensor, B: fx.Tensor, C: fx.Tensor):
    tid = fx.thread_idx.x
    bid = fx.block_idx.x
    A = fx.slice(fx.zipped_divide(fx.rocdl.make_buffer_tensor(A), (TILE_M, TILE_K)), (None, bid))
    B = fx.slice(fx.zipped_divide(fx.rocdl.make_buffer_tensor(B), (TILE_N, TILE_K)), (None, bid))
    C = fx.slice(fx.zipped_divide(fx.rocdl.make_buffer_tensor(C), (TILE_M, TILE_N)), (None, bid))

    mma = fx.make_mma_atom(fx.rocdl.MFMA(TILE_M, TILE_N, TILE_K, fx.Float32))
    tiled_mma = fx.make_tiled_mma(mma, fx.make_layout((1, 1, 1), (1, 1, 0)))
    thr_mma = tiled_mma.thr_slice(tid)
    copy = fx.make_copy_atom(fx.rocdl.BufferCopy32b(), fx.Float32)
    thr_copy_a = fx.make_tiled_copy_A(copy, tiled_mma).get_slice(tid)
    thr_copy_b = fx.make_tiled_copy_B(copy, tiled_mma).get_slice(tid)
    thr_copy_c = fx.make_tiled_copy_C(copy, tiled_mma).get_slice(tid)

    frag_a = thr_mma.make_fragment_A(A)
    frag_b = thr_mma.make_fragment_B(B)
    frag_c = thr_mma.make_fragment_C(C)
    fx.copy(copy, thr_copy_a.partition_S(A), thr_copy_a.retile(frag_a))
    fx.copy(copy, thr_copy_b.partition_S(B), thr_copy_b.retile(frag_b))
    rocdl.s_waitcnt(_encode_waitcnt(vmcnt=0))

    frag_c.fill(0)
    fx.mma_atom_call(mma, frag_c, frag_a, frag_b, frag_c)
    fx.copy(copy, thr_copy_c.retile(frag_c), thr_copy_c.partition_S(C))


@flyc.jit
def tile_mma(A: fx.Tensor, B: fx.Tensor, C: fx.Tensor, stream: fx.Stream = fx.Stream(None)):
    tile_mma_kernel(A, B, C).launch(grid=(1, 1, 1), block=(64, 1, 1), stream=stream)


def build():
    a = torch.randn(TILE_M, TILE_K, device="cuda")
    b = torch.randn(TILE_N, TILE_K, device="cuda")
    tile_mma(a, b, torch.zeros(TILE_M, TILE_N, device="cuda"), stream=torch.cuda.current_stream())
'''

# FLY361/FLY363/FLY364: a private vmcnt shim whose every call is a constant count, migrated in one
# fix (its calls become the keyword form, it and the constants only it reads go), and a magic
# constant read by a positional wait. Its packing sets lgkmcnt's bits 13:12 too (the gfx10-style
# "lgkmcnt=63"), which the keyword form does not: the compiled waits must still match. gfx9 only.
WAITCNT_SHIMS = '''\
import torch

import flydsl.compiler as flyc
import flydsl.expr as fx
from flydsl.expr import rocdl

BLOCK = 64
_VMCNT_LO_MASK = 0xF
_LGKMCNT_EXPCNT_MAX = 0x3F70  # lgkmcnt and expcnt at their maximum: no wait on them
_LGKMCNT_0_ONLY = 0xC07F


def _wait_vmem(n):
    # vmcnt(n) only: the loads after the n newest may be outstanding
    val = (n & _VMCNT_LO_MASK) | _LGKMCNT_EXPCNT_MAX | (((n >> 4) & 0x3) << 14)
    rocdl.s_waitcnt(val)


@flyc.kernel
def staged_sum_kernel(X: fx.Tensor, Out: fx.Tensor):
    tid = fx.thread_idx.x
    copy = fx.make_copy_atom(fx.rocdl.BufferCopy(fx.Float32.width), fx.Float32)
    per_thread = fx.make_layout(1, 1)
    tX = fx.logical_divide(fx.rocdl.make_buffer_tensor(X), per_thread)
    tO = fx.logical_divide(fx.rocdl.make_buffer_tensor(Out), per_thread)
    ra = fx.make_rmem_tensor(1, fx.Float32)
    rb = fx.make_rmem_tensor(1, fx.Float32)
    fx.copy(copy, fx.slice(tX, (None, tid)), ra)
    fx.copy(copy, fx.slice(tX, (None, (tid + 1) % BLOCK)), rb)
    _wait_vmem(1)
    a = fx.memref_load_vec(ra)
    _wait_vmem(0)
    b = fx.memref_load_vec(rb)
    rocdl.s_waitcnt(_LGKMCNT_0_ONLY)
    fx.memref_store_vec(a + b, ra)
    fx.copy(copy, ra, fx.slice(tO, (None, tid)))


@flyc.jit
def staged_sum(X: fx.Tensor, Out: fx.Tensor, stream: fx.Stream = fx.Stream(None)):
    staged_sum_kernel(X, Out).launch(grid=(1, 1, 1), block=(BLOCK, 1, 1), stream=stream)


def build():
    x = torch.randn(BLOCK, device="cuda")
    staged_sum(x, torch.empty_like(x), stream=torch.cuda.current_stream())
'''

# FLY341 (raw arith op -> Python operator) offers its fix only when both
# operands are provably fx-typed. This kernel is such a site.
RAW_ARITH_ON_TYPED = '''\
import torch

import flydsl.compiler as flyc
import flydsl.expr as fx
from flydsl._mlir.dialects import arith

BLOCK = 64


@flyc.kernel
def offset_kernel(Out: fx.Tensor, shift: fx.Int32):
    tid = fx.thread_idx.x
    lane = fx.Int32(tid)
    dst = arith.addi(lane, shift) % BLOCK

    copy = fx.make_copy_atom(fx.rocdl.BufferCopy(fx.Float32.width), fx.Float32)
    tO = fx.logical_divide(fx.rocdl.make_buffer_tensor(Out), fx.make_layout(1, 1))
    r = fx.make_rmem_tensor(1, fx.Float32)
    r[0] = fx.Float32(1.0)
    fx.copy(copy, r, fx.slice(tO, (None, dst)))


@flyc.jit
def offset(Out: fx.Tensor, shift: fx.Int32, stream: fx.Stream = fx.Stream(None)):
    offset_kernel(Out, shift).launch(grid=(1, 1, 1), block=(BLOCK, 1, 1), stream=stream)


def build():
    offset(torch.empty(BLOCK, device="cuda"), 3, stream=torch.cuda.current_stream())
'''

# FLY341's, FLY342's and FLY344's safe sites: raw arith ops, `cmpi` and
# `select` on raw views of one fx type (`x.ir_value()`, `arith._to_raw(x)`,
# `fx.as_ir_value(x)`) or on fx values given to FlyDSL's own helpers (`xori`,
# `cmpi`, `select`), whose result goes into a wrap of its type or into a raw
# dialect op (readfirstlane, select here). FLY343's: `arith.constant(v, type=T)`
# as the right operand of an operator on a run-time fx value of type T (a thread id
# spelled `gpu.thread_idx.x` too, or an operator on such a constant: `(x >> c4) & c3`;
# `v` a number literal, a name bound once to one, BLOCK, or int arithmetic of them).
# FLY342's on fx.Index too: as FlyDSL's `select` condition and bound to a name only a raw op reads.
# FLY341's on ArithValues (FlyDSL's select, constant and index_cast, beside an fx value's
# `.ir_value()`), by builder and by op class.
RAW_ARITH_VIEWS = '''\
import torch

import flydsl.compiler as flyc
import flydsl.expr as fx
from flydsl._mlir.dialects import arith
from flydsl._mlir.dialects import rocdl as raw_rocdl
from flydsl.expr import arith as fx_arith
from flydsl.expr import gpu
from flydsl.expr.typing import T

BLOCK = 64


@flyc.kernel
def views_kernel(Out: fx.Tensor, shift: fx.Int32, bias: fx.Int64, scale: fx.Float32):
    tid = fx.thread_idx.x
    lane = fx.Int32(tid)
    wide = fx.Int64(tid)
    u = fx.Uint32(tid)
    n = fx.Uint32(shift)
    s = fx.Int32(arith.addi(lane.ir_value(), shift.ir_value()))
    d = fx.Int32(arith.muli(fx_arith._to_raw(s), lane.ir_value()))
    f = fx.Int32(arith.floordivsi(d.ir_value(), shift.ir_value()))
    m = fx.Int32(arith.remsi(f.ir_value(), shift.ir_value()))
    h = fx.Int32(arith.shrsi(m.ir_value(), fx.as_ir_value(shift)))
    x = fx.Int32(fx_arith.xori(h, lane))
    q = fx.Uint32(arith.divui(u.ir_value(), n.ir_value()))
    r = fx.Uint32(arith.remui(q.ir_value(), n.ir_value()))
    w = fx.Int64(arith.subi(wide.ir_value(), bias.ir_value()))
    # ArithValue operands (FlyDSL's select and constant): the operator emits the same op on them.
    av = fx_arith.select(lane < shift, lane, shift)
    c3 = fx_arith.constant(3, type=T.i32)
    av_mix = fx.Int32(arith.xori(arith.muli(av, c3), arith.shli(c3, av)))
    # ... and an op class's `.result` on them, read by `//`, and on index ArithValues.
    av_half = arith.MulIOp(av, c3).result // 2
    av_lane = arith.MulIOp(av, lane.ir_value()).result >> 1
    av_row = arith.MulIOp(fx_arith.index_cast(T.index, av), fx_arith.constant(BLOCK, type=T.index)).result
    # An Index wrap of an integer op: it casts the fx sum as it casts the raw one.
    ix = fx.Index(arith.addi(wide.ir_value(), bias.ir_value())) + fx.Index(arith.muli(u.ir_value(), n.ir_value()))
    uni = fx.Int32(raw_rocdl.readfirstlane(T.i32, arith.andi(x.ir_value(), fx.Int32(r).ir_value())))
    lt = fx.Boolean(arith.cmpi(arith.CmpIPredicate.slt, lane.ir_value(), shift.ir_value()))
    ge = fx.Boolean(fx_arith.cmpi(arith.CmpIPredicate.uge, u, n))
    same = arith.cmpi(arith.CmpIPredicate.eq, wide.ir_value(), bias.ir_value())
    pick = fx.Int32(arith.select(same, lane.ir_value(), shift.ir_value()))
    tie = fx.Int32(arith.select(arith.cmpi(arith.CmpIPredicate.ne, w.ir_value(), bias.ir_value()), lane.ir_value(), s.ir_value()))
    # fx.Index compares (`signed=False`: `<` emits ult): FlyDSL's select condition, a name read by a raw op.
    row = fx.Index(tid) + fx.Index(fx.block_idx.x)
    clamped = fx.Index(fx_arith.select(fx_arith.cmpi(arith.CmpIPredicate.ult, row, fx.Index(shift)), row, fx.Index(0)))
    at_zero = fx_arith.cmpi(arith.CmpIPredicate.eq, row, fx.Index(0))
    zero_pick = fx.Int32(arith.select(at_zero, lane.ir_value(), shift.ir_value()))
    chosen = fx.Int32(fx_arith.select(lt, lane, shift))
    first = fx.Int32(raw_rocdl.readfirstlane(T.i32, fx_arith.select(lt, x, h)))
    scaled = fx.Float32(arith.select(lt.ir_value(), scale.ir_value(), fx.Float32(2.0).ir_value()))
    quad = lane * fx_arith.constant(4, type=T.i32)
    odd = fx.Int32(u | fx_arith.constant(1, type=T.i32))
    back = fx.Int32(wide - fx_arith.constant(-3, type=T.i64))
    low = fx.Int32(lane < fx_arith.constant(9, type=T.i32))
    half = scaled * fx_arith.constant(0.5, type=T.f32)
    low16 = gpu.thread_idx.x & fx_arith.constant(15, type=T.i32)
    row = (lane >> fx_arith.constant(4, type=T.i32)) & fx_arith.constant(3, type=T.i32)
    warp = lane >> fx_arith.constant(6, type=T.i32)
    head = warp * fx_arith.constant(4, type=T.i32) + row
    far = (wide + fx_arith.constant(8, type=T.i64)) * fx_arith.constant(2, type=T.i64)
    block = lane * fx_arith.constant(BLOCK, type=T.i32)
    strided = lane + fx_arith.constant(BLOCK * 2 - 1, type=T.i32)
    dst = fx.Int32(uni + fx.Int32(w) + pick + tie + chosen + first + fx.Int32(lt) + fx.Int32(ge)
                   + quad + odd + back + low + low16 + head + fx.Int32(far) + block + strided + fx.Int32(ix)
                   + av_mix + fx.Int32(clamped) + zero_pick + fx.Int32(av_half) + fx.Int32(fx.Index(av_row))
                   + fx.Int32(av_lane)) % BLOCK

    copy = fx.make_copy_atom(fx.rocdl.BufferCopy(fx.Float32.width), fx.Float32)
    tO = fx.logical_divide(fx.rocdl.make_buffer_tensor(Out), fx.make_layout(1, 1))
    rv = fx.make_rmem_tensor(1, fx.Float32)
    rv[0] = (half - fx_arith.constant(1.5, type=T.f32)) * fx_arith.constant(3.0, type=T.f32)
    fx.copy(copy, rv, fx.slice(tO, (None, dst)))


@flyc.jit
def views(Out: fx.Tensor, shift: fx.Int32, bias: fx.Int64, scale: fx.Float32, stream: fx.Stream = fx.Stream(None)):
    views_kernel(Out, shift, bias, scale).launch(grid=(1, 1, 1), block=(BLOCK, 1, 1), stream=stream)


def build():
    views(torch.empty(BLOCK, device="cuda"), 3, 5, 0.5, stream=torch.cuda.current_stream())
'''

# FLY344's safe sites beyond RAW_ARITH_VIEWS: FlyDSL's `arith.select` bound once to a name
# read only by a wrap of its type and by a raw op (`picked`, `scaled`), and a number literal
# next to an fx value of each proven type (Int32, Int64, Uint32, Float32; `OOB` a name bound to
# one), on a condition made from `gpu.thread_id("x")`; an Index clamp `rows` (a name bound twice,
# its condition run-time through the binding it reaches); a Float32 select rebound across a
# run-time `if` (`gain`); two selects on an ArithValue condition (`halved`, `raw_pick`).
# `shifted` (read by `>>`) stays unsafe.
SELECT_CONSUMERS = '''\
import torch

import flydsl.compiler as flyc
import flydsl.expr as fx
from flydsl._mlir.dialects import arith as raw_arith
from flydsl._mlir.dialects import rocdl as raw_rocdl
from flydsl.expr import arith, gpu
from flydsl.expr.typing import T

BLOCK = 64
OOB = 4096
GROUP = 4


@flyc.kernel
def select_kernel(Out: fx.Tensor, n: fx.Int32, wide: fx.Int64, scale: fx.Float32):
    tid = fx.Int32(gpu.thread_id("x"))
    u = fx.Uint32(tid)
    in_range = tid < n
    picked = arith.select(in_range, tid, n)
    uni = fx.Int32(raw_rocdl.readfirstlane(T.i32, picked)) + fx.Int32(picked)
    zeroed = fx.Int32(arith.select(in_range, tid, 0))
    far = fx.Int64(arith.select(in_range, 7, wide))
    masked = fx.Uint32(arith.select(in_range, u, 3))
    bounded = fx.Int32(arith.select(in_range, tid, OOB))
    scaled = arith.select(in_range, scale, 0.5)
    shifted = arith.select(in_range, tid, n)
    # An ArithValue condition (an unsigned compare, which no Int32 operator emits): its own `.select`,
    # FlyDSL's and the raw dialect's select alike, the result read by `>>` and by a wrap.
    below = arith.cmpi(arith.CmpIPredicate.ult, tid.ir_value(), n.ir_value())
    halved = arith.select(below, tid, 1) >> 1
    raw_pick = fx.Int32(raw_arith.select(below, n.ir_value(), tid.ir_value()))
    # An Index clamp of a name rebound once more, its condition a block id a few named steps away.
    pid = fx.Index(fx.block_idx.x) + fx.Index(fx.block_idx.y) * fx.Index(GROUP)
    group = pid // fx.Index(GROUP)
    first = group * fx.Index(GROUP)
    rows = fx.Index(BLOCK) - first
    rows = fx.Index(arith.select(rows < fx.Index(GROUP), rows, fx.Index(GROUP)))
    # An Index wrap of an Int64 and of a Uint32 select: `fx.Index` casts either value alike.
    lane_ix = fx.Index(arith.select(in_range, fx.Int64(tid), fx.Int64(0))) + fx.Index(arith.select(in_range, u, 1))
    dst = fx.Int32(uni + zeroed + fx.Int32(far) + fx.Int32(masked) + bounded + (shifted >> 2) + fx.Int32(rows))
    dst = dst + fx.Int32(halved) + raw_pick
    # Selects read through `+ - *` beside run-time fx values of their type: the same ops, one class.
    row_sel = arith.select(in_range, tid, 0)
    row_off = n * n + row_sel * n
    wide_sel = arith.select(in_range, wide, fx.Int64(3))
    wide_off = fx.Int64(tid) * wide + wide_sel * wide - wide
    dst = (dst + fx.Int32(lane_ix) + row_off + fx.Int32(wide_off)) % BLOCK

    copy = fx.make_copy_atom(fx.rocdl.BufferCopy(fx.Float32.width), fx.Float32)
    tO = fx.logical_divide(fx.rocdl.make_buffer_tensor(Out), fx.make_layout(1, 1))
    rv = fx.make_rmem_tensor(1, fx.Float32)
    # A Float32 select rebound across a run-time `if` and read by an operator: its `.ir_value()`
    # is the raw op's signless ArithValue itself, wherever it goes.
    gain = scale
    if in_range:
        gain = arith.select(in_range, scale, 0.25)
    # After the `if` the rewriter rebuilt `gain` as the Float32 it entered as: a typed operand.
    capped = arith.select(gain < scale, gain, scale)
    rv[0] = fx.Float32(scaled) * fx.Float32(arith.select(in_range, 0.0, scale)) + gain * scale + capped
    fx.copy(copy, rv, fx.slice(tO, (None, dst)))


@flyc.jit
def selects(Out: fx.Tensor, n: fx.Int32, wide: fx.Int64, scale: fx.Float32, stream: fx.Stream = fx.Stream(None)):
    select_kernel(Out, n, wide, scale).launch(grid=(1, 1, 1), block=(BLOCK, 1, 1), stream=stream)


def build():
    selects(torch.empty(BLOCK, device="cuda"), 3, 5, 0.5, stream=torch.cuda.current_stream())
'''

# FLY101 (`ArithValue(x) + y` inside a wrap of x's and y's type -> `x + y`) and
# FLY102 (`arith.unwrap(e)` -> `e.ir_value()` on an fx value e passed to a raw
# op). The other `ArithValue(x)` sites (a wrap of x's type, FlyDSL's
# `arith.andi`, which unwraps) are unsafe fixes today: they stay in the kernel
# so its fixed text compiles alike whichever of them a later rule proves.
ARITH_VALUE_WRAPS = '''\
import torch

import flydsl.compiler as flyc
import flydsl.expr as fx
from flydsl._mlir.dialects import arith
from flydsl._mlir.dialects import rocdl as raw_rocdl
from flydsl.expr import arith as fx_arith
from flydsl.expr.arith import ArithValue
from flydsl.expr.typing import T

BLOCK = 64


@flyc.kernel
def wraps_kernel(Out: fx.Tensor, shift: fx.Int32, scale: fx.Float32):
    tid = fx.thread_idx.x
    lane = fx.Int32(tid)
    same = fx.Int32(ArithValue(lane))
    masked = fx.Int32(fx_arith.andi(ArithValue(lane), ArithValue(shift)))
    gain = fx.Float32(ArithValue(scale))
    uni = fx.Int32(raw_rocdl.readfirstlane(T.i32, fx_arith.unwrap(lane)))
    # Unwrapped away from a raw op: the ArithValue `.ir_value()` gives, with the class's signedness.
    halved = fx.Int32((fx_arith.unwrap(lane) >> 1) * fx_arith.unwrap(shift))
    total = fx.Int32(arith.addi(fx_arith.unwrap(masked), fx_arith.unwrap(shift)))
    summed = fx.Int32(ArithValue(lane) + shift)
    # `fx_arith.select` of fx scalars gives the value caster's ArithValue: unwrapping it is a no-op.
    chosen = fx.Int32(arith.addi(fx_arith.unwrap(fx_arith.select(lane < shift, lane, shift)), fx_arith.unwrap(shift)))
    # Right operands of an fx scalar's operator, which turns the ArithValue back into that scalar.
    shift_v = ArithValue(shift)
    scaled = fx.Int32(2) * shift_v + lane
    offset = lane - ArithValue(shift)
    # Right operands of an ArithValue's operator, which coerces an fx operand to ArithValue(x.ir_value()).
    raw_sum = arith.addi(lane.ir_value(), shift.ir_value())
    mixed = fx.Int32(raw_sum * ArithValue(lane)) + fx.Int32(raw_sum // ArithValue(shift))
    mixed = mixed + fx.Int32(raw_sum >> ArithValue(fx.Int32(1)))
    dst = fx.Int32(same + uni + halved + total + summed + chosen + scaled + offset + mixed) % BLOCK

    copy = fx.make_copy_atom(fx.rocdl.BufferCopy(fx.Float32.width), fx.Float32)
    tO = fx.logical_divide(fx.rocdl.make_buffer_tensor(Out), fx.make_layout(1, 1))
    rv = fx.make_rmem_tensor(1, fx.Float32)
    rv[0] = gain * gain - ArithValue(scale)
    fx.copy(copy, rv, fx.slice(tO, (None, dst)))


@flyc.jit
def wraps(Out: fx.Tensor, shift: fx.Int32, scale: fx.Float32, stream: fx.Stream = fx.Stream(None)):
    wraps_kernel(Out, shift, scale).launch(grid=(1, 1, 1), block=(BLOCK, 1, 1), stream=stream)


def build():
    wraps(torch.empty(BLOCK, device="cuda"), 3, 0.5, stream=torch.cuda.current_stream())
'''

# FLY343: `arith.constant(v, type=T.i32)` as the offset of the legacy buffer load and store,
# which build a Python int offset as the same i32 constant.
BUFFER_OFFSETS = '''\
import torch

import flydsl.compiler as flyc
import flydsl.expr as fx
from flydsl.expr import arith
from flydsl.expr.typing import T
from kernels.common import buffer_ops

BLOCK = 64


@flyc.kernel
def offsets_kernel(X: fx.Tensor, Out: fx.Tensor):
    tid = fx.Int32(fx.thread_idx.x)
    x_rsrc = buffer_ops.create_buffer_resource(X, max_size=True)
    out_rsrc = buffer_ops.create_buffer_resource(Out, max_size=True)
    first = buffer_ops.buffer_load(x_rsrc, arith.constant(0, type=T.i32), vec_width=1, is_scalar=True)
    fourth = buffer_ops.buffer_load(x_rsrc, arith.constant(3, type=T.i32), vec_width=1, dtype=T.i32)
    mine = buffer_ops.buffer_load(x_rsrc, tid, vec_width=1, dtype=T.i32)
    total = fx.Int32(first) + fx.Int32(fourth) + fx.Int32(mine)
    buffer_ops.buffer_store(total, out_rsrc, tid)
    if tid == fx.Int32(0):
        buffer_ops.buffer_store(fx.Int32(fourth), out_rsrc, arith.constant(64, type=T.i32))
        buffer_ops.buffer_store(fx.Int32(first), out_rsrc, offset=arith.constant(65, type=T.i32))


@flyc.jit
def offsets(X: fx.Tensor, Out: fx.Tensor, stream: fx.Stream = fx.Stream(None)):
    offsets_kernel(X, Out).launch(grid=(1, 1, 1), block=(BLOCK, 1, 1), stream=stream)


def build():
    offsets(torch.zeros(BLOCK, dtype=torch.int32, device="cuda"), torch.zeros(BLOCK + 2, dtype=torch.int32, device="cuda"),
            stream=torch.cuda.current_stream())
'''


# FLY302: `.maximumf()` / `.minimumf()` of two fx.Float32, one of them a run-time value (kernel
# parameters and what is computed from them), become `fx.max` / `fx.min`.
TYPED_METHODS = '''\
import torch

import flydsl.compiler as flyc
import flydsl.expr as fx
from flydsl.expr import arith

BLOCK = 64


def _relu(x: fx.Float32):
    # Every call passes a run-time value, so `x` is one too.
    return x.maximumf(fx.Float32(0.0))


def _clamp_each(values, floor):
    # Only ever called with list displays of run-time Float32s: each element is one, and so is
    # `floor`, the negation of a kernel parameter.
    clamped = []
    for i in range(len(values)):
        clamped.append(-((-values[i]).maximumf(floor)))
    return clamped


@flyc.kernel
def methods_kernel(Out: fx.Tensor, a: fx.Float32, b: fx.Float32, n: fx.Int32):
    tid = fx.thread_idx.x
    hi = a.maximumf(b)
    lo = (a * 2.0).minimumf(b)
    clipped = (-a).maximumf(fx.Float32(0.0))
    scaled = fx.Float32(n).minimumf(a - b)

    # A running maximum rebound in unrolled loops: it starts as a compile-time Float32 and every
    # rebinding is a Float32 method's result, taken against a vector reduction or a lane shuffle.
    row = fx.Vector.filled(4, a * fx.Float32(tid), fx.Float32)
    running = fx.Float32(float("-inf"))
    for step in fx.range_constexpr(3):
        running = running.maximumf(row.reduce("max") - fx.Float32(step))
    for lanes in [16, 8, 4]:
        running = running.maximumf(running.shuffle_xor(fx.Int32(lanes), fx.Int32(32)))

    # A helper of the kernel reducing across lanes in an unrolled loop, passed a Float32 that a
    # run-time `if` rebuilds as the class it entered as, whatever its branch assigned (a select's
    # ArithValue here).
    def lane_max(value):
        reduced = value
        for lanes in [8, 4, 2]:
            reduced = reduced.maximumf(reduced.shuffle_xor(fx.Int32(lanes), fx.Int32(16)))
        return reduced

    in_range = fx.Int32(tid) < n
    peak = fx.Float32(0.0)
    if in_range:
        peak = arith.select(in_range, a * fx.Float32(tid), b)
    peak = lane_max(peak)

    copy = fx.make_copy_atom(fx.rocdl.BufferCopy(fx.Float32.width), fx.Float32)
    tO = fx.logical_divide(fx.rocdl.make_buffer_tensor(Out), fx.make_layout(1, 1))
    rv = fx.make_rmem_tensor(1, fx.Float32)
    low = _clamp_each([a * fx.Float32(tid), b], -a)
    rv[0] = hi + lo * clipped - scaled + running + _relu(a - fx.Float32(tid)) + peak + low[0] * low[1]
    fx.copy(copy, rv, fx.slice(tO, (None, fx.Int32(tid) % BLOCK)))


@flyc.jit
def methods(Out: fx.Tensor, a: fx.Float32, b: fx.Float32, n: fx.Int32, stream: fx.Stream = fx.Stream(None)):
    methods_kernel(Out, a, b, n).launch(grid=(1, 1, 1), block=(BLOCK, 1, 1), stream=stream)


def build():
    methods(torch.empty(BLOCK, device="cuda"), 0.5, -1.5, 3, stream=torch.cuda.current_stream())
'''

# FLY101/FLY102 on caster-made ArithValues (signed=None) and raw ir.Values: its own module.
from tests.proofs.kernels_arith_value import ARITH_VALUE, ARITH_VALUE_INDEX  # noqa: E402, F401

# FLY321: raw `vector.from_elements` / `bitcast` / `extract` of proven vector
# types (spelled with `T`, or made by such a builder) -> `fx.Vector.from_elements(...)`,
# `fx.Vector(v).bitcast(...)` (`v.bitcast(...)` of an fx.Vector), `v[i]` whose scalar only
# reaches raw dialect ops. The raw op's vector value already is an fx.Vector (the value caster
# of vector types, of the element class `Numeric.from_ir_type` gives), so a vector may go
# anywhere: fx.Vector operators (`>>` of Int32 lanes is shrsi), indexing, `reduce`, a helper's
# return. `T.vec(n, cls.ir_type)` of a class chosen by a conditional or a dict (bf16 and f32
# here), of raw elements, becomes `fx.Vector.from_elements(elements, cls)`. The lanes feed the
# store's index and value, so none is dead code.
VECTOR_OPS = '''\
import torch

import flydsl.compiler as flyc
import flydsl.expr as fx
from flydsl._mlir.dialects import arith, vector
from flydsl.expr import as_ir_value
from flydsl.expr.typing import T

BLOCK = 64
OUT_DTYPE = "bf16"
ACC_DTYPE = "f32"
# Element classes chosen among fx scalar classes, as a kernel's output and accumulator dtypes are.
OUT_CLS = fx.BFloat16 if OUT_DTYPE == "bf16" else fx.Float16
ACC_CLS = {"f16": fx.Float16, "f32": fx.Float32}[ACC_DTYPE]


def _pair(a, b):
    return vector.from_elements(T.i32x2, [as_ir_value(a), as_ir_value(b)])


@flyc.kernel
def lanes_kernel(Out: fx.Tensor, bias: fx.Int64, scale: fx.Float32):
    tid = fx.thread_idx.x
    lane = fx.Int32(tid) - fx.Int32(bias)
    pair32 = vector.from_elements(T.i32x2, [as_ir_value(lane), as_ir_value(fx.Int32(bias))])
    vmix = (pair32 >> 1) + _pair(lane, lane) * pair32
    shorts = vector.bitcast(T.vec(4, T.i16), as_ir_value(pair32))
    low = shorts[0] + shorts[3]
    maxed = vector.from_elements(T.vec(2, T.f32), [as_ir_value(scale), as_ir_value(scale + 1.0)]).reduce("max")
    outs = [scale.to(OUT_CLS), (scale * 3.0).to(OUT_CLS)]
    packed = vector.from_elements(T.vec(len(outs), OUT_CLS.ir_type), [as_ir_value(e) for e in outs])
    accs = vector.from_elements(T.vec(2, ACC_CLS.ir_type), [as_ir_value(scale), as_ir_value(maxed)])
    maxed = maxed + accs.reduce("add")
    wide = fx.Int64(tid) + bias
    pair = vector.from_elements(T.i64x2, [as_ir_value(wide), as_ir_value(bias)])
    second = vector.extract(as_ir_value(pair), static_position=[1], dynamic_position=[])
    words = vector.bitcast(
        T.vec(4, T.i32), as_ir_value(vector.from_elements(T.vec(2, T.i64), [as_ir_value(second), as_ir_value(wide)]))
    )
    lo = vector.extract(as_ir_value(words), static_position=[0], dynamic_position=[])
    hi = vector.extract(as_ir_value(words), static_position=[2], dynamic_position=[])
    scales = vector.from_elements(T.vec(2, T.f32), [as_ir_value(scale), as_ir_value(scale)])
    halves = vector.bitcast(T.f16x4, as_ir_value(scales))
    bits = vector.bitcast(T.i16x4, as_ir_value(halves))
    top = vector.extract(as_ir_value(bits), static_position=[3], dynamic_position=[])
    mixed = arith.addi(as_ir_value(lo), as_ir_value(hi))
    dst = (fx.Int32(mixed) + fx.Int32(arith.extsi(T.i32, as_ir_value(top))) + fx.Int32(vmix[0]) + fx.Int32(low)) % BLOCK
    dst = (dst + packed.bitcast(fx.Int32)[0]) % BLOCK

    copy = fx.make_copy_atom(fx.rocdl.BufferCopy(fx.Float32.width), fx.Float32)
    tO = fx.logical_divide(fx.rocdl.make_buffer_tensor(Out), fx.make_layout(1, 1))
    rv = fx.make_rmem_tensor(1, fx.Float32)
    rv[0] = maxed
    fx.copy(copy, rv, fx.slice(tO, (None, dst)))


@flyc.jit
def lanes(Out: fx.Tensor, bias: fx.Int64, scale: fx.Float32, stream: fx.Stream = fx.Stream(None)):
    lanes_kernel(Out, bias, scale).launch(grid=(1, 1, 1), block=(BLOCK, 1, 1), stream=stream)


def build():
    lanes(torch.empty(BLOCK, device="cuda"), 5, 0.5, stream=torch.cuda.current_stream())
'''

# FLY343: `arith.constant(v, type=T)` next to a run-time ArithValue (signed=None), as an e8m0
# scale encoder and an offset computation spell them: on the right of every operator whose
# result does not read the constant's signedness (`+ - * & | ^ << >> // %`, a comparison, float
# `/`), a number the model proves a Python int (`BLOCK // 4`, `HEADROOM`), an int for a float
# constant (`2` for `T.f32`), and on the left of `+ - * & | ^ <<` (int) and `+ - * /` (float),
# which the ArithValue's reflected operator builds. Left unfixed: `lane / c` (int true division
# reads the constant's signedness), `c >> lane`, the constants the raw `arith.maxsi` takes, and
# `ivec + c`: `ivec` is the value caster's fx.Vector, whose operators are its own (compiled alike
# with `ivec + 1` in earlier stops, for `+` alone; the model no longer takes it for an ArithValue).
ARITH_VALUE_CONSTANTS = '''\
import torch

import flydsl.compiler as flyc
import flydsl.expr as fx
from flydsl._mlir.dialects import vector
from flydsl.expr import arith, gpu
from flydsl.expr.arith import ArithValue
from flydsl.expr.typing import T

BLOCK = 64
HEADROOM = 7


@flyc.kernel
def e8m0_kernel(Out: fx.Tensor, shift: fx.Int32, scale: fx.Float32):
    tid = fx.thread_idx.x
    lane = ArithValue(tid)
    amax = ArithValue(scale) * arith.constant(1.5, type=T.f32) + arith.constant(2, type=T.f32)
    bits = amax.bitcast(T.i32)
    bits_up = (bits + arith.constant(0x400000, type=T.i32)) & arith.constant(0xFF800000, type=T.i32)
    exp_field = bits_up >> arith.constant(23, type=T.i32)
    biased = arith.maxsi(exp_field - arith.constant(HEADROOM, type=T.i32), arith.constant(0, type=T.i32))
    quant_exp = arith.constant(254, type=T.i32) - biased
    quant_scale = (quant_exp << arith.constant(23, type=T.i32)).bitcast(T.f32)

    row = lane * arith.constant(BLOCK // 4, type=T.i32)
    odd = arith.constant(1, type=T.i32) | lane
    mixed = arith.constant(3, type=T.i32) * lane + arith.constant(5, type=T.i32)
    flip = arith.constant(0x55, type=T.i32) ^ (lane & arith.constant(0xFF, type=T.i32))
    low = (lane % arith.constant(16, type=T.i32)) + (lane // arith.constant(4, type=T.i32))
    wide = arith.constant(2, type=T.i32) << (lane ^ arith.constant(3, type=T.i32))
    early = (lane < arith.constant(32, type=T.i32)).select(row, odd)
    ratio = lane / arith.constant(3, type=T.i32)
    top = arith.constant(1 << 20, type=T.i32) >> lane
    # The gpu dialect's ids are index ArithValues (typed from 0.3.1): a cast of one takes literals too.
    gid = arith.index_cast(T.i32, gpu.block_id("x")) * arith.constant(BLOCK, type=T.i32) + arith.index_cast(
        T.i32, gpu.thread_id("x")) % arith.constant(8, type=T.i32)
    ivec = vector.from_elements(T.vec(4, T.i32), [row, odd, mixed, flip])
    bumped = ivec + arith.constant(1, type=T.i32)
    folded = vector.reduction(T.i32, vector.CombiningKind.ADD, bumped)
    total = folded + low + wide + early + exp_field + top + gid
    dst = fx.Int32(total) % BLOCK

    inv = arith.constant(1.0, type=T.f32) / (amax - arith.constant(0.25, type=T.f32))
    half = amax / arith.constant(2.0, type=T.f32) + ratio
    offset = arith.constant(0.5, type=T.f32) - half
    copy = fx.make_copy_atom(fx.rocdl.BufferCopy(fx.Float32.width), fx.Float32)
    tO = fx.logical_divide(fx.rocdl.make_buffer_tensor(Out), fx.make_layout(1, 1))
    rv = fx.make_rmem_tensor(1, fx.Float32)
    rv[0] = fx.Float32(quant_scale * inv + offset * arith.constant(3.0, type=T.f32))
    fx.copy(copy, rv, fx.slice(tO, (None, dst)))


@flyc.jit
def e8m0(Out: fx.Tensor, shift: fx.Int32, scale: fx.Float32, stream: fx.Stream = fx.Stream(None)):
    e8m0_kernel(Out, shift, scale).launch(grid=(1, 1, 1), block=(BLOCK, 1, 1), stream=stream)


def build():
    e8m0(torch.empty(BLOCK, device="cuda"), 3, 0.5, stream=torch.cuda.current_stream())
'''

# FLY343 elsewhere than an operator's operand: `arith.constant(v, type=T)` -> `fx.T(v).ir_value()`,
# the same run-time constant. Named once and read by raw ops, by ArithValue operators on either side
# (signedness-sensitive ones too), by `.select`, in a vector's elements, unwrapped, as an index mask;
# floats that f32 cannot hold exactly, an f16, a wide i64, a negative i8; ints known by their bounds
# (an unrolled loop's index, a comprehension's, a loop's over a list, arithmetic of them, a module
# constant bound twice); i16, bf16 and f64 named through a parallel assignment; builtin
# float(...) values, -inf among them; i1 constants of a `bool` parameter and of 1, which `.select` reads.
RUN_TIME_CONSTANTS = '''\
import torch

import flydsl.compiler as flyc
import flydsl.expr as fx
from flydsl._mlir import ir
from flydsl._mlir.dialects import vector
from flydsl.expr import arith, range_constexpr
from flydsl.expr.arith import ArithValue
from flydsl.expr.typing import T

BLOCK = 64
GROUP = 4
EPS = 1e-6
SCALE = float(1.0 / (float(BLOCK) ** 0.5))
STRIDE = 8
if BLOCK > 128:
    STRIDE = 16
SPAN = int(BLOCK * 1.5) << 26  # past 32 bits, of no value the linter knows: an i32 constant wraps it


def _to_raw_operand(v):
    # A Python int (a bool too) or float guarded by isinstance, typed by MLIR's own constructors.
    if isinstance(v, int):
        return arith.unwrap(arith.constant(v, type=ir.IntegerType.get_signless(32)))
    if isinstance(v, float):
        return arith.unwrap(arith.constant(v, type=ir.F32Type.get()))
    return arith.unwrap(v)


def _pick(a, b, first: bool = False):
    # An i1 of a Python bool parameter chooses between two values.
    return arith.constant(first, type=ir.IntegerType.get_signless(1)).select(a, b)


@flyc.kernel
def bias_clamp_kernel(Out: fx.Tensor, bias: fx.Float32):
    tid = fx.thread_idx.x
    lane = ArithValue(tid)
    c_group = arith.constant(GROUP, type=T.i32)
    c_neg = arith.constant(-3, type=T.i32)
    c_tenth = arith.constant(0.1, type=T.f32)
    c_third = arith.constant(1.0 / 3.0, type=T.f32)
    c_eps = arith.constant(EPS, type=T.f32)

    group = lane // c_group
    rem = lane % c_group
    below = c_neg >> rem
    floor = arith.maxsi(group, c_neg)
    picked = (lane < c_group).select(group, rem)
    ratio = c_neg / (rem + c_group)
    mask = arith.constant(BLOCK - 1, index=True)
    lane_ix = arith.index_cast(T.index, lane)
    wrapped = arith.index_cast(T.i32, arith.andi(lane_ix, mask))
    wide = arith.extsi(T.i64, picked + wrapped) * arith.unwrap(arith.constant(1 << 40, type=T.i64))
    narrow = arith.trunci(T.i8, below) * arith.constant(-8, type=T.i8)
    ints = arith.trunci(T.i32, wide >> 40) + arith.extsi(T.i32, narrow) + floor
    for i in range_constexpr(GROUP):
        ints = arith.maxsi(arith.xori(ints, arith.constant(i, type=T.i32)), arith.constant(STRIDE, type=T.i32))
    i16, bf16, f64 = T.i16, T.bf16, T.f64
    lanes = vector.from_elements(T.vec(GROUP, T.i32), [arith.constant(j * 3, type=T.i32) for j in range(GROUP)])
    spread = vector.from_elements(T.vec(GROUP, T.i32), [arith.constant(j, type=T.i32) for j in range(GROUP)])
    ints = ints + vector.reduction(T.i32, vector.CombiningKind.XOR, arith.addi(lanes, spread))
    ints = ints * arith.extsi(T.i32, arith.constant(-300, type=i16))
    for sh in [1, 3]:
        ints = arith.xori(ints, arith.constant((sh << 4) - 1, type=T.i32))
    # A loop over a list of Python ints the kernel builds by halving, as warp reductions do.
    shifts = []
    for k in range_constexpr(3):
        shifts.append(GROUP >> k)
    for sh in shifts:
        ints = ints ^ arith.constant(sh, type=T.i32)
    # Ints past their type's range: both paths keep the same low bits.
    ints = arith.xori(ints, arith.andi(arith.constant(0xFF800000, type=T.i32), arith.constant(SPAN, type=T.i32)))
    ints = ints + arith.extsi(T.i32, arith.constant(200, type=T.i8))
    ints = arith.addi(arith.addi(ints, _to_raw_operand(STRIDE - 1)), _to_raw_operand(True))
    ints = _pick(ints, ints + 5, True) + _pick(ints, ints - 3)
    ints = ints + arith.constant(1, type=ir.IntegerType.get_signless(1)).select(ints, ints * 2)

    fvec = vector.from_elements(T.vec(4, T.f32), [c_tenth, c_third, arith.constant(2.5, type=T.f32), c_eps])
    fsum = vector.reduction(T.f32, vector.CombiningKind.ADD, fvec)
    fsum = arith.maximumf(fsum, arith.constant(float("-inf"), type=T.f32)) * arith.constant(SCALE, type=T.f32)
    half = arith.extf(T.f32, arith.constant(0.5, type=T.f16))
    half = half + arith.extf(T.f32, arith.constant(0.3, type=bf16)) + arith.truncf(T.f32, arith.constant(1.0 / 7.0, type=f64))
    scaled = ArithValue(bias) * c_tenth + c_third - c_eps / ArithValue(bias)
    total = fsum + half + scaled + ratio + arith.sitofp(T.f32, ints)
    total = arith.addf(total, _to_raw_operand(EPS * 3)) + arith.addf(_to_raw_operand(2.0), _to_raw_operand(0.25))

    copy = fx.make_copy_atom(fx.rocdl.BufferCopy(fx.Float32.width), fx.Float32)
    tO = fx.logical_divide(fx.rocdl.make_buffer_tensor(Out), fx.make_layout(1, 1))
    rv = fx.make_rmem_tensor(1, fx.Float32)
    rv[0] = fx.Float32(total)
    fx.copy(copy, rv, fx.slice(tO, (None, fx.Int32(tid))))


@flyc.jit
def bias_clamp(Out: fx.Tensor, bias: fx.Float32, stream: fx.Stream = fx.Stream(None)):
    bias_clamp_kernel(Out, bias).launch(grid=(1, 1, 1), block=(BLOCK, 1, 1), stream=stream)


def build():
    bias_clamp(torch.empty(BLOCK, device="cuda"), 0.5, stream=torch.cuda.current_stream())
'''

# FLY113: `fx.Int32(k)` of a known Python int (a literal, a module constant bound once, arithmetic
# of such) inside make_layout / make_shape / make_stride / make_coord becomes `k`; the layouts mix
# those static leaves with a run-time one (`rows`), and the index they give picks the lane stored.
LAYOUT_LEAVES = '''\
import torch

import flydsl.compiler as flyc
import flydsl.expr as fx

BLOCK = 64
HEADS = 4
HEAD_DIM = 16


@flyc.kernel
def leaves_kernel(Out: fx.Tensor, rows: fx.Int32):
    tid = fx.Int32(fx.thread_idx.x)
    per_thread = fx.make_layout(fx.Int32(1), fx.Int32(1))
    tO = fx.logical_divide(fx.rocdl.make_buffer_tensor(Out), per_thread)

    head_layout = fx.make_layout((rows, fx.Int32(HEADS), fx.Int32(HEAD_DIM)),
                                 (fx.Int32(HEADS * HEAD_DIM), fx.Int32(HEAD_DIM), 1))
    lane = tid % HEAD_DIM
    head = (tid // HEAD_DIM) % HEADS
    at = fx.get_scalar(fx.crd2idx(fx.make_coord(fx.Int32(0), head, lane), head_layout))

    tile = fx.make_layout(fx.make_shape(fx.Int32(HEADS), rows), fx.make_stride(1, fx.Int32(HEADS)))
    turn = fx.get_scalar(fx.crd2idx(fx.make_coord(fx.Int32(HEADS - 1), fx.Int32(2)), tile))

    copy = fx.make_copy_atom(fx.rocdl.BufferCopy(fx.Float32.width), fx.Float32)
    rv = fx.make_rmem_tensor(1, fx.Float32)
    rv[0] = fx.Float32(fx.Int32(turn) + rows)
    fx.copy(copy, rv, fx.slice(tO, (None, fx.Int32(at) % BLOCK)))


@flyc.jit
def leaves(Out: fx.Tensor, rows: fx.Int32, stream: fx.Stream = fx.Stream(None)):
    leaves_kernel(Out, rows).launch(grid=(1, 1, 1), block=(BLOCK, 1, 1), stream=stream)


def build():
    leaves(torch.empty(BLOCK, device="cuda"), 3, stream=torch.cuda.current_stream())
'''

# FLY103: `arith.index_cast` of run-time values to i32, i64 and index, whose every use ignores an
# ArithValue's signedness (a raw op's argument, fx integer wraps, `+ - * & | ^ << ==`, operators with
# an ArithValue on the left), also through a name rebound by the cast; the identity cast of an Int32;
# and (0.4.2 on) an index a raw op reads, which becomes `fx.Index(x).ir_value()` (an index used as a
# layout coordinate or in an operator keeps its cast: there an fx.Index is not known to act alike).
INDEX_CASTS = '''\
import torch

import flydsl.compiler as flyc
import flydsl.expr as fx
from flydsl._mlir import ir
from flydsl._mlir.dialects import arith as raw_arith
from flydsl.expr import arith
from flydsl.expr.typing import T

BLOCK = 64


@flyc.kernel
def casts_kernel(Out: fx.Tensor, rows: fx.Int32):
    tid = fx.thread_idx.x
    lane = fx.Int32(tid)
    row = fx.Index(tid)
    w = arith.index_cast(T.i32, row)
    squared = raw_arith.muli(w, w)
    wide = fx.Int64(w) + fx.Int64(fx.Uint32(w))
    mixed = (w << 2) + 3 - (5 - w) + (w & 7) + (w ^ rows.ir_value())
    shifted = squared >> arith.index_cast(T.i32, row * 2)
    ratio = squared // arith.index_cast(T.i32, row + 1)
    same = arith.index_cast(T.i32, lane) * 2
    stride = arith.index_cast(T.i64, row * 4) * 3
    i64 = ir.IntegerType.get_signless(64)  # the target by MLIR's own constructor: the same cast
    stride = stride + arith.index_cast(i64, row * 2) * 5
    back = arith.index_cast(T.index, rows) + row.ir_value()
    off = row.ir_value() + 8
    off = arith.index_cast(T.i32, off)
    picked = (w == 0).select(off * 2, off + 1)
    token = arith.index_cast(T.index, rows)  # read by a raw op class: `.ir_value()` from 0.4.2
    scaled = arith.MulIOp(token, token).result

    total = fx.Int32(mixed) + fx.Int32(shifted) + fx.Int32(ratio) + fx.Int32(same) + fx.Int32(picked)
    total = total + fx.Int32(fx.Int64(stride) + wide) + fx.Int32(fx.Index(back)) + fx.Int32(fx.Index(scaled))
    copy = fx.make_copy_atom(fx.rocdl.BufferCopy(fx.Float32.width), fx.Float32)
    tO = fx.logical_divide(fx.rocdl.make_buffer_tensor(Out), fx.make_layout(1, 1))
    rv = fx.make_rmem_tensor(1, fx.Float32)
    rv[0] = fx.Float32(total)
    fx.copy(copy, rv, fx.slice(tO, (None, arith.index_cast(T.index, tid))))


@flyc.jit
def casts(Out: fx.Tensor, rows: fx.Int32, stream: fx.Stream = fx.Stream(None)):
    casts_kernel(Out, rows).launch(grid=(1, 1, 1), block=(BLOCK, 1, 1), stream=stream)


def build():
    casts(torch.empty(BLOCK, device="cuda"), 3, stream=torch.cuda.current_stream())
'''
