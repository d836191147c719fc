"""FlyDSL kernels written for the codemod proofs (tests/proofs/test_codemods_compile_identically.py).

Each holds one structural legacy construct the way real kernels build it; its
unsafe codemod is applied with the real engine and both versions are compiled.
"""

RAW_SCF_FOR = '''\
import torch

import flydsl.compiler as flyc
import flydsl.expr as fx
from flydsl._mlir import ir
from flydsl._mlir.dialects import scf
from flydsl.expr import arith

BLOCK = 64


@flyc.kernel
def decay_kernel(X: fx.Tensor, Out: fx.Tensor, rate: fx.Float32, steps: fx.Int32):
    tid = fx.thread_idx.x
    copy = fx.make_copy_atom(fx.rocdl.BufferCopy(fx.Float32.width), fx.Float32)
    per_thread = fx.make_layout(1, 1)
    tX = fx.logical_divide(fx.rocdl.make_buffer_tensor(X), per_thread)
    tO = fx.logical_divide(fx.rocdl.make_buffer_tensor(Out), per_thread)
    rx = fx.make_rmem_tensor(1, fx.Float32)
    fx.copy_atom_call(copy, fx.slice(tX, (None, tid)), rx)
    x = fx.memref_load(rx, 0)

    lo = arith.index(0)
    hi = fx.Index(steps).ir_value()
    step = arith.index(1)
    loop = scf.ForOp(lo, hi, step, [fx.as_ir_value(x), fx.as_ir_value(rate)])
    with ir.InsertionPoint(loop.body):
        k = loop.induction_variable
        acc = fx.Float32(loop.inner_iter_args[0])
        r = fx.Float32(loop.inner_iter_args[1])
        bump = fx.Float32(fx.Int32(fx.Index(k)))
        scf.YieldOp([fx.as_ir_value(acc * r + bump), fx.as_ir_value(r * r)])
    total = fx.Float32(loop.results[0])

    fx.memref_store(total, rx, 0)
    fx.copy_atom_call(copy, rx, fx.slice(tO, (None, tid)))


@flyc.jit
def decay(X: fx.Tensor, Out: fx.Tensor, rate: fx.Float32, steps: fx.Int32, stream: fx.Stream = fx.Stream(None)):
    decay_kernel(X, Out, rate, steps).launch(grid=(1, 1, 1), block=(BLOCK, 1, 1), stream=stream)


def build():
    x = torch.randn(BLOCK, device="cuda")
    decay(x, torch.empty_like(x), 0.5, 8, stream=torch.cuda.current_stream())
'''

# The same loop with its bounds spelled as raw arith constants of type index; the body
# adds the induction variable to an index value with a raw `addi`, which only verifies
# while the induction variable stays index-typed.
RAW_SCF_FOR_RAW_CONSTANTS = '''\
import torch

import flydsl.compiler as flyc
import flydsl.expr as fx
from flydsl._mlir import ir
from flydsl._mlir.dialects import arith as _arith, scf
from flydsl._mlir.extras import types as T

BLOCK = 64
STEPS = 4


@flyc.kernel
def count_kernel(X: fx.Tensor, Out: fx.Tensor, base: fx.Int32):
    tid = fx.thread_idx.x
    copy = fx.make_copy_atom(fx.rocdl.BufferCopy(fx.Float32.width), fx.Float32)
    per_thread = fx.make_layout(1, 1)
    tX = fx.logical_divide(fx.rocdl.make_buffer_tensor(X), per_thread)
    tO = fx.logical_divide(fx.rocdl.make_buffer_tensor(Out), per_thread)
    rx = fx.make_rmem_tensor(1, fx.Float32)
    fx.copy_atom_call(copy, fx.slice(tX, (None, tid)), rx)
    x = fx.memref_load(rx, 0)

    lower = _arith.ConstantOp(T.index(), 0).result
    upper = _arith.constant(T.index(), STEPS)
    step = _arith.ConstantOp(T.index(), 1).result
    loop = scf.ForOp(lower, upper, step, [fx.as_ir_value(x), fx.as_ir_value(fx.Index(base))])
    with ir.InsertionPoint(loop.body):
        k = loop.induction_variable
        acc = fx.Float32(loop.inner_iter_args[0])
        offset = _arith.AddIOp(loop.inner_iter_args[1], k).result
        bump = fx.Float32(fx.Int32(fx.Index(offset)))
        scf.YieldOp([fx.as_ir_value(acc + bump), offset])
    total = fx.Float32(loop.results[0])

    fx.memref_store(total, rx, 0)
    fx.copy_atom_call(copy, rx, fx.slice(tO, (None, tid)))


@flyc.jit
def count(X: fx.Tensor, Out: fx.Tensor, base: fx.Int32, stream: fx.Stream = fx.Stream(None)):
    count_kernel(X, Out, base).launch(grid=(1, 1, 1), block=(BLOCK, 1, 1), stream=stream)


def build():
    x = torch.randn(BLOCK, device="cuda")
    count(x, torch.empty_like(x), 3, stream=torch.cuda.current_stream())
'''

SMEM_ALLOCATOR = '''\
import torch

import flydsl.compiler as flyc
import flydsl.expr as fx
from flydsl._mlir import ir
from flydsl.compiler.kernel_function import CompilationContext
from flydsl.expr import arith, gpu
from flydsl.expr.typing import T
from flydsl.utils.smem_allocator import SmemAllocator, SmemPtr

BLOCK = 64


def build_exchange(block: int):
    slots = block
    allocator = SmemAllocator(None, arch="gfx942")
    vals_offset = allocator._align(allocator.ptr, 16)
    allocator.ptr = vals_offset + slots * 4
    flags_offset = allocator._align(allocator.ptr, 16)
    allocator.ptr = flags_offset + slots * 4

    @flyc.kernel
    def exchange_kernel(X: fx.Tensor, Out: fx.Tensor, shift: fx.Int32):
        tid = fx.thread_idx.x
        base = allocator.get_base()
        s_vals = SmemPtr(base, vals_offset, T.f32, shape=(slots,))
        s_flags = SmemPtr(base, flags_offset, T.i32, shape=(slots,))
        s_vals.get()

        copy = fx.make_copy_atom(fx.rocdl.BufferCopy(fx.Float32.width), fx.Float32)
        per_thread = fx.make_layout(1, 1)
        tX = fx.logical_divide(fx.rocdl.make_buffer_tensor(X), per_thread)
        tO = fx.logical_divide(fx.rocdl.make_buffer_tensor(Out), per_thread)
        rx = fx.make_rmem_tensor(1, fx.Float32)
        fx.copy_atom_call(copy, fx.slice(tX, (None, tid)), rx)
        x = fx.memref_load(rx, 0)

        lane = fx.Index(tid)
        s_vals.store(x, [lane])
        SmemPtr.store(s_flags, fx.Int32(tid) + shift, [lane])
        gpu.barrier()
        peer = fx.Index((fx.Int32(tid) + shift) % slots)
        y = fx.Float32(s_vals.load([peer]))
        f = fx.Int32(SmemPtr.load(s_flags, [peer]))
        fx.memref_store(y + fx.Float32(f), rx, 0)
        fx.copy_atom_call(copy, rx, fx.slice(tO, (None, tid)))

    @flyc.jit
    def exchange(X: fx.Tensor, Out: fx.Tensor, shift: fx.Int32, stream: fx.Stream = fx.Stream(None)):
        allocator.finalized = False
        ctx = CompilationContext.get_current()
        with ir.InsertionPoint(ctx.gpu_module_body):
            allocator.finalize()
        exchange_kernel(X, Out, shift).launch(grid=(1, 1, 1), block=(block, 1, 1), stream=stream)

    return exchange


def build():
    x = torch.randn(BLOCK, device="cuda")
    build_exchange(BLOCK)(x, torch.empty_like(x), 3, stream=torch.cuda.current_stream())
'''

# A private factory reserves the regions (the byte width named once) for two
# builders; one kernel reaches its scratch through a helper defined in its body.
SMEM_ALLOCATOR_FACTORY = '''\
import torch

import flydsl.compiler as flyc
import flydsl.expr as fx
from flydsl._mlir import ir
from flydsl.compiler.kernel_function import CompilationContext
from flydsl.expr import gpu
from flydsl.utils.smem_allocator import SmemAllocator, SmemPtr

BLOCK = 64


def _make_scratch(arch: str, slots: int):
    allocator = SmemAllocator(None, arch=arch)
    word_bytes = 4
    partial_offset = allocator._align(allocator.ptr, 16)
    allocator.ptr = partial_offset + slots * word_bytes
    count_offset = allocator._align(allocator.ptr, 16)
    allocator.ptr = count_offset + slots * word_bytes
    return allocator, partial_offset, count_offset


def _tensors(X, Out):
    per_thread = fx.make_layout(1, 1)
    tX = fx.logical_divide(fx.rocdl.make_buffer_tensor(X), per_thread)
    tO = fx.logical_divide(fx.rocdl.make_buffer_tensor(Out), per_thread)
    return tX, tO


def build_pair_sum(block: int):
    slots = block
    allocator, partial_offset, count_offset = _make_scratch("gfx942", slots)

    @flyc.kernel
    def pair_sum_kernel(X: fx.Tensor, Out: fx.Tensor):
        tid = fx.thread_idx.x
        base = allocator.get_base()
        s_partial = SmemPtr(base, partial_offset, fx.Float32.ir_type, shape=(slots,))
        s_count = SmemPtr(base, count_offset, fx.Int32.ir_type, shape=(slots,))
        s_partial.get()
        s_count.get()

        def publish(value, buffer, lane):
            SmemPtr.store(buffer, value, [lane])

        copy = fx.make_copy_atom(fx.rocdl.BufferCopy(fx.Float32.width), fx.Float32)
        tX, tO = _tensors(X, Out)
        rx = fx.make_rmem_tensor(1, fx.Float32)
        fx.copy_atom_call(copy, fx.slice(tX, (None, tid)), rx)
        lane = fx.Index(tid)
        publish(fx.memref_load(rx, 0), s_partial, lane)
        SmemPtr.store(s_count, fx.Int32(tid), [lane])
        gpu.barrier()
        peer = fx.Index((fx.Int32(tid) + 1) % slots)
        total = fx.Float32(SmemPtr.load(s_partial, [lane])) + fx.Float32(SmemPtr.load(s_partial, [peer]))
        fx.memref_store(total + fx.Float32(fx.Int32(SmemPtr.load(s_count, [peer]))), rx, 0)
        fx.copy_atom_call(copy, rx, fx.slice(tO, (None, tid)))

    @flyc.jit
    def pair_sum(X: fx.Tensor, Out: fx.Tensor, stream: fx.Stream = fx.Stream(None)):
        allocator.finalized = False
        ctx = CompilationContext.get_current()
        with ir.InsertionPoint(ctx.gpu_module_body):
            allocator.finalize()
        pair_sum_kernel(X, Out).launch(grid=(1, 1, 1), block=(block, 1, 1), stream=stream)

    return pair_sum


def build_rotate(block: int):
    slots = block // 2
    allocator, partial_offset, count_offset = _make_scratch("gfx942", slots)

    @flyc.kernel
    def rotate_kernel(X: fx.Tensor, Out: fx.Tensor):
        tid = fx.thread_idx.x
        base = allocator.get_base()
        s_partial = SmemPtr(base, partial_offset, fx.Float32.ir_type, shape=(slots,))
        s_count = SmemPtr(base, count_offset, fx.Int32.ir_type, shape=(slots,))

        copy = fx.make_copy_atom(fx.rocdl.BufferCopy(fx.Float32.width), fx.Float32)
        tX, tO = _tensors(X, Out)
        rx = fx.make_rmem_tensor(1, fx.Float32)
        fx.copy_atom_call(copy, fx.slice(tX, (None, tid)), rx)
        lane = fx.Index(fx.Int32(tid) % slots)
        s_partial.store(fx.memref_load(rx, 0), [lane])
        s_count.store(fx.Int32(tid), [lane])
        gpu.barrier()
        peer = fx.Index((fx.Int32(tid) + 3) % slots)
        rotated = fx.Float32(s_partial.load([peer])) + fx.Float32(fx.Int32(s_count.load([lane])))
        fx.memref_store(rotated, rx, 0)
        fx.copy_atom_call(copy, rx, fx.slice(tO, (None, tid)))

    @flyc.jit
    def rotate(X: fx.Tensor, Out: fx.Tensor, stream: fx.Stream = fx.Stream(None)):
        allocator.finalized = False
        ctx = CompilationContext.get_current()
        with ir.InsertionPoint(ctx.gpu_module_body):
            allocator.finalize()
        rotate_kernel(X, Out).launch(grid=(1, 1, 1), block=(block, 1, 1), stream=stream)

    return rotate


def build():
    x = torch.randn(BLOCK, device="cuda")
    stream = torch.cuda.current_stream()
    build_pair_sum(BLOCK)(x, torch.empty_like(x), stream=stream)
    build_rotate(BLOCK)(x, torch.empty_like(x), stream=stream)
'''

# An allocator left over from an earlier version: nothing reserved, finalized anyway.
SMEM_ALLOCATOR_UNUSED = '''\
import torch

import flydsl.compiler as flyc
import flydsl.expr as fx
from flydsl._mlir import ir
from flydsl.compiler.kernel_function import CompilationContext
from flydsl.utils.smem_allocator import SmemAllocator

BLOCK = 64


def build_scale(block: int):
    allocator = SmemAllocator(None, arch="gfx942")

    @flyc.kernel
    def scale_kernel(X: fx.Tensor, Out: fx.Tensor, factor: fx.Float32):
        tid = fx.thread_idx.x
        copy = fx.make_copy_atom(fx.rocdl.BufferCopy(fx.Float32.width), fx.Float32)
        per_thread = fx.make_layout(1, 1)
        tX = fx.logical_divide(fx.rocdl.make_buffer_tensor(X), per_thread)
        tO = fx.logical_divide(fx.rocdl.make_buffer_tensor(Out), per_thread)
        rx = fx.make_rmem_tensor(1, fx.Float32)
        fx.copy_atom_call(copy, fx.slice(tX, (None, tid)), rx)
        fx.memref_store(fx.memref_load(rx, 0) * factor, rx, 0)
        fx.copy_atom_call(copy, rx, fx.slice(tO, (None, tid)))

    @flyc.jit
    def scale(X: fx.Tensor, Out: fx.Tensor, factor: fx.Float32, stream: fx.Stream = fx.Stream(None)):
        allocator.finalized = False
        ctx = CompilationContext.get_current()
        with ir.InsertionPoint(ctx.gpu_module_body):
            allocator.finalize()
        scale_kernel(X, Out, factor).launch(grid=(1, 1, 1), block=(block, 1, 1), stream=stream)

    return scale


def build():
    x = torch.randn(BLOCK, device="cuda")
    build_scale(BLOCK)(x, torch.empty_like(x), 2.0, stream=torch.cuda.current_stream())
'''

RAW_SCF_IF = '''\
import torch

import flydsl.compiler as flyc
import flydsl.expr as fx
from flydsl._mlir import ir
from flydsl._mlir.dialects import scf

BLOCK = 64


@flyc.kernel
def split_kernel(X: fx.Tensor, Out: fx.Tensor, limit: fx.Int32):
    tid = fx.thread_idx.x
    copy = fx.make_copy_atom(fx.rocdl.BufferCopy(fx.Float32.width), fx.Float32)
    per_thread = fx.make_layout(1, 1)
    tX = fx.logical_divide(fx.rocdl.make_buffer_tensor(X), per_thread)
    tO = fx.logical_divide(fx.rocdl.make_buffer_tensor(Out), per_thread)
    rx = fx.make_rmem_tensor(1, fx.Float32)
    fx.copy_atom_call(copy, fx.slice(tX, (None, tid)), rx)
    x = fx.memref_load(rx, 0)

    low = fx.as_ir_value(fx.Int32(tid) < limit)
    branch = scf.IfOp(low, [], has_else=True)
    with ir.InsertionPoint(branch.then_block):
        fx.memref_store(x * 2.0, rx, 0)
        fx.copy_atom_call(copy, rx, fx.slice(tO, (None, tid)))
        scf.YieldOp([])
    with ir.InsertionPoint(branch.else_block):
        fx.memref_store(x + 1.0, rx, 0)
        fx.copy_atom_call(copy, rx, fx.slice(tO, (None, tid)))
        scf.YieldOp([])


@flyc.jit
def split(X: fx.Tensor, Out: fx.Tensor, limit: fx.Int32, stream: fx.Stream = fx.Stream(None)):
    split_kernel(X, Out, limit).launch(grid=(1, 1, 1), block=(BLOCK, 1, 1), stream=stream)


def build():
    x = torch.randn(BLOCK, device="cuda")
    split(x, torch.empty_like(x), 20, stream=torch.cuda.current_stream())
'''

# An op built inside another's region: its yield is its own, not the outer op's second.
RAW_SCF_IF_NESTED = '''\
import torch

import flydsl.compiler as flyc
import flydsl.expr as fx
from flydsl._mlir import ir
from flydsl._mlir.dialects import scf

BLOCK = 64


@flyc.kernel
def clamp_kernel(X: fx.Tensor, Out: fx.Tensor, low: fx.Int32, high: fx.Int32):
    tid = fx.thread_idx.x
    copy = fx.make_copy_atom(fx.rocdl.BufferCopy(fx.Float32.width), fx.Float32)
    per_thread = fx.make_layout(1, 1)
    tX = fx.logical_divide(fx.rocdl.make_buffer_tensor(X), per_thread)
    tO = fx.logical_divide(fx.rocdl.make_buffer_tensor(Out), per_thread)
    rx = fx.make_rmem_tensor(1, fx.Float32)
    fx.copy_atom_call(copy, fx.slice(tX, (None, tid)), rx)
    x = fx.memref_load(rx, 0)

    above = fx.as_ir_value(fx.Int32(tid) >= low)
    outer = scf.IfOp(above, [], has_else=False)
    with ir.InsertionPoint(outer.then_block):
        fx.memref_store(x * 0.5, rx, 0)
        below = fx.as_ir_value(fx.Int32(tid) < high)
        inner = scf.IfOp(below, [], has_else=False)
        with ir.InsertionPoint(inner.then_block):
            fx.memref_store(x - 1.0, rx, 0)
            scf.YieldOp([])
        fx.copy_atom_call(copy, rx, fx.slice(tO, (None, tid)))
        scf.YieldOp([])


@flyc.jit
def clamp(X: fx.Tensor, Out: fx.Tensor, low: fx.Int32, high: fx.Int32, stream: fx.Stream = fx.Stream(None)):
    clamp_kernel(X, Out, low, high).launch(grid=(1, 1, 1), block=(BLOCK, 1, 1), stream=stream)


def build():
    x = torch.randn(BLOCK, device="cuda")
    clamp(x, torch.empty_like(x), 8, 40, stream=torch.cuda.current_stream())
'''

# The outer op rewritten around an inner one the codemod refuses (a statement between the
# op and its region): the raw op is then built inside a Python `if`.
RAW_SCF_IF_AROUND_RAW_OP = RAW_SCF_IF_NESTED.replace(
    "        with ir.InsertionPoint(inner.then_block):\n            fx.memref_store(x - 1.0, rx, 0)\n",
    "        step = 1.0\n        with ir.InsertionPoint(inner.then_block):\n            fx.memref_store(x - step, rx, 0)\n")


RAW_SCF_WHILE = '''\
import torch

import flydsl.compiler as flyc
import flydsl.expr as fx
from flydsl._mlir import ir
from flydsl._mlir.dialects import scf
from flydsl.expr.typing import T

BLOCK = 64


@flyc.kernel
def grow_kernel(Out: fx.Tensor, limit: fx.Int32):
    tid = fx.thread_idx.x
    copy = fx.make_copy_atom(fx.rocdl.BufferCopy(fx.Int32.width), fx.Int32)
    tO = fx.logical_divide(fx.rocdl.make_buffer_tensor(Out), fx.make_layout(1, 1))
    rx = fx.make_rmem_tensor(1, fx.Int32)

    init = fx.as_ir_value(fx.Int32(tid))
    loop = scf.WhileOp([T.i32], [init])
    before = ir.Block.create_at_start(loop.before, [T.i32])
    after = ir.Block.create_at_start(loop.after, [T.i32])
    with ir.InsertionPoint(before):
        cur = before.arguments[0]
        scf.ConditionOp(fx.as_ir_value(fx.Int32(cur) < limit), [cur])
    with ir.InsertionPoint(after):
        nxt = after.arguments[0]
        scf.YieldOp([fx.as_ir_value(fx.Int32(nxt) * 2 + 1)])
    total = fx.Int32(loop.results[0])

    fx.memref_store(total, rx, 0)
    fx.copy_atom_call(copy, rx, fx.slice(tO, (None, tid)))


@flyc.jit
def grow(Out: fx.Tensor, limit: fx.Int32, stream: fx.Stream = fx.Stream(None)):
    grow_kernel(Out, limit).launch(grid=(1, 1, 1), block=(BLOCK, 1, 1), stream=stream)


def build():
    out = torch.empty(BLOCK, dtype=torch.int32, device="cuda")
    grow(out, 1000, stream=torch.cuda.current_stream())
'''

SCF_IF_DISPATCH = '''\
import torch

import flydsl.compiler as flyc
import flydsl.expr as fx
from flydsl.compiler.ast_rewriter import ReplaceIfWithDispatch

BLOCK = 64


@flyc.kernel
def guard_kernel(X: fx.Tensor, Out: fx.Tensor, limit: fx.Int32):
    tid = fx.thread_idx.x
    copy = fx.make_copy_atom(fx.rocdl.BufferCopy(fx.Float32.width), fx.Float32)
    per_thread = fx.make_layout(1, 1)
    tX = fx.logical_divide(fx.rocdl.make_buffer_tensor(X), per_thread)
    tO = fx.logical_divide(fx.rocdl.make_buffer_tensor(Out), per_thread)
    rx = fx.make_rmem_tensor(1, fx.Float32)
    fx.copy_atom_call(copy, fx.slice(tX, (None, tid)), rx)

    def _store_active():
        fx.copy_atom_call(copy, rx, fx.slice(tO, (None, tid)))

    ReplaceIfWithDispatch.scf_if_dispatch(fx.Int32(tid) < limit, _store_active)


@flyc.jit
def guard(X: fx.Tensor, Out: fx.Tensor, limit: fx.Int32, stream: fx.Stream = fx.Stream(None)):
    guard_kernel(X, Out, limit).launch(grid=(1, 1, 1), block=(BLOCK, 1, 1), stream=stream)


def build():
    x = torch.randn(BLOCK, device="cuda")
    guard(x, torch.empty_like(x), 20, stream=torch.cuda.current_stream())
'''

# A raw scf.if with two results (f32, i32), both regions yielding typed values unwrapped to
# ir.Values, read back through their fx classes: the carried form of a Python `if`.
RAW_SCF_IF_RESULTS = '''\
import torch

import flydsl.compiler as flyc
import flydsl.expr as fx
from flydsl._mlir import ir
from flydsl._mlir.dialects import scf
from flydsl.expr.typing import T

BLOCK = 64


@flyc.kernel
def pick_kernel(X: fx.Tensor, Out: fx.Tensor, limit: fx.Int32):
    tid = fx.thread_idx.x
    copy = fx.make_copy_atom(fx.rocdl.BufferCopy(fx.Float32.width), fx.Float32)
    per_thread = fx.make_layout(1, 1)
    tX = fx.logical_divide(fx.rocdl.make_buffer_tensor(X), per_thread)
    tO = fx.logical_divide(fx.rocdl.make_buffer_tensor(Out), per_thread)
    rx = fx.make_rmem_tensor(1, fx.Float32)
    fx.copy_atom_call(copy, fx.slice(tX, (None, tid)), rx)
    x = fx.Float32(fx.memref_load(rx, 0))
    lane = fx.Int32(tid)

    branch = scf.IfOp(fx.as_ir_value(lane < limit), [T.f32, T.i32], has_else=True)
    with ir.InsertionPoint(branch.then_block):
        doubled = x * 2.0
        scf.YieldOp([fx.as_ir_value(doubled), lane.ir_value()])
    with ir.InsertionPoint(branch.else_block):
        scf.YieldOp([fx.as_ir_value(x + 1.0), fx.as_ir_value(limit - lane)])
    picked = fx.Float32(branch.results[0])
    count = fx.Int32(branch.results[1])

    fx.memref_store(picked + fx.Float32(count), rx, 0)
    fx.copy_atom_call(copy, rx, fx.slice(tO, (None, tid)))


@flyc.jit
def pick(X: fx.Tensor, Out: fx.Tensor, limit: fx.Int32, stream: fx.Stream = fx.Stream(None)):
    pick_kernel(X, Out, limit).launch(grid=(1, 1, 1), block=(BLOCK, 1, 1), stream=stream)


def build():
    x = torch.randn(BLOCK, device="cuda")
    pick(x, torch.empty_like(x), 20, stream=torch.cuda.current_stream())
'''

# Plain helpers (no decorator, outside the rewriter) that the kernel calls: one builds an if/else
# through insertion points, one a then-only op entered by the module's own `_if_then`; the
# then branch also updates an item of a list the helper owns (a closure, not carried state),
# and the second op is built under a plain Python `if` (run once at trace time).
RAW_SCF_IF_IN_HELPERS = '''\
from contextlib import contextmanager

import torch

import flydsl.compiler as flyc
import flydsl.expr as fx
from flydsl._mlir import ir
from flydsl._mlir.dialects import scf

BLOCK = 64


@contextmanager
def _if_then(if_op):
    with ir.InsertionPoint(if_op.then_block):
        try:
            yield if_op.then_block
        finally:
            blk = if_op.then_block
            if (not blk.operations) or not isinstance(blk.operations[-1], scf.YieldOp):
                scf.YieldOp([])


def store_split(x, rx, copy, tO, tid, limit):
    traced = [0]
    low = fx.as_ir_value(fx.Int32(tid) < limit)
    branch = scf.IfOp(low, [], has_else=True)
    with ir.InsertionPoint(branch.then_block):
        traced[0] += 1
        fx.memref_store(x * 2.0, rx, 0)
        fx.copy_atom_call(copy, rx, fx.slice(tO, (None, tid)))
        scf.YieldOp([])
    with ir.InsertionPoint(branch.else_block):
        fx.memref_store(x + 1.0, rx, 0)
        fx.copy_atom_call(copy, rx, fx.slice(tO, (None, tid)))
        scf.YieldOp([])
    return traced[0]


def store_last(x, rx, copy, tO, tid, guarded=True):
    if guarded:
        last = scf.IfOp(fx.as_ir_value(fx.Int32(tid) == BLOCK - 1))
        with _if_then(last):
            fx.memref_store(x - 3.0, rx, 0)
            fx.copy_atom_call(copy, rx, fx.slice(tO, (None, tid)))


@flyc.kernel
def split_kernel(X: fx.Tensor, Out: fx.Tensor, limit: fx.Int32):
    tid = fx.thread_idx.x
    copy = fx.make_copy_atom(fx.rocdl.BufferCopy(fx.Float32.width), fx.Float32)
    per_thread = fx.make_layout(1, 1)
    tX = fx.logical_divide(fx.rocdl.make_buffer_tensor(X), per_thread)
    tO = fx.logical_divide(fx.rocdl.make_buffer_tensor(Out), per_thread)
    rx = fx.make_rmem_tensor(1, fx.Float32)
    fx.copy_atom_call(copy, fx.slice(tX, (None, tid)), rx)
    x = fx.memref_load(rx, 0)
    store_split(x, rx, copy, tO, tid, limit)
    store_last(x, rx, copy, tO, tid)


@flyc.jit
def split(X: fx.Tensor, Out: fx.Tensor, limit: fx.Int32, stream: fx.Stream = fx.Stream(None)):
    split_kernel(X, Out, limit).launch(grid=(1, 1, 1), block=(BLOCK, 1, 1), stream=stream)


def build():
    x = torch.randn(BLOCK, device="cuda")
    split(x, torch.empty_like(x), 20, stream=torch.cuda.current_stream())
'''

# A raw if/else built in a def nested in the kernel (the kernel's rewriter rewrites a
# Python `if` there too); the branches only read the kernel's names.
RAW_SCF_IF_IN_NESTED_DEF = '''\
import torch

import flydsl.compiler as flyc
import flydsl.expr as fx
from flydsl._mlir import ir
from flydsl._mlir.dialects import scf

BLOCK = 64


@flyc.kernel
def split_kernel(X: fx.Tensor, Out: fx.Tensor, limit: fx.Int32):
    tid = fx.thread_idx.x
    copy = fx.make_copy_atom(fx.rocdl.BufferCopy(fx.Float32.width), fx.Float32)
    per_thread = fx.make_layout(1, 1)
    tX = fx.logical_divide(fx.rocdl.make_buffer_tensor(X), per_thread)
    tO = fx.logical_divide(fx.rocdl.make_buffer_tensor(Out), per_thread)
    rx = fx.make_rmem_tensor(1, fx.Float32)
    fx.copy_atom_call(copy, fx.slice(tX, (None, tid)), rx)
    x = fx.memref_load(rx, 0)

    def store_split(scale):
        low = fx.as_ir_value(fx.Int32(tid) < limit)
        branch = scf.IfOp(low, results_=[], has_else=True)
        with ir.InsertionPoint(branch.then_block):
            fx.memref_store(x * scale, rx, 0)
            fx.copy_atom_call(copy, rx, fx.slice(tO, (None, tid)))
            scf.YieldOp([])
        with ir.InsertionPoint(branch.else_block):
            fx.memref_store(x + 1.0, rx, 0)
            fx.copy_atom_call(copy, rx, fx.slice(tO, (None, tid)))
            scf.YieldOp([])

    store_split(2.0)


@flyc.jit
def split(X: fx.Tensor, Out: fx.Tensor, limit: fx.Int32, stream: fx.Stream = fx.Stream(None)):
    split_kernel(X, Out, limit).launch(grid=(1, 1, 1), block=(BLOCK, 1, 1), stream=stream)


def build():
    x = torch.randn(BLOCK, device="cuda")
    split(x, torch.empty_like(x), 20, stream=torch.cuda.current_stream())
'''
