"""compile_source()/compare(): the API fix-proof tests use, on a real kernel."""

import pytest

from flydsl_lint.verify.compare import CHANGED, IDENTICAL
from flydsl_lint.verify.compile import compare, compile_source
from tests.verify.conftest import requires_flydsl

pytestmark = requires_flydsl

CLAMP_KERNEL = '''\
import torch

import flydsl.compiler as flyc
import flydsl.expr as fx
from flydsl.expr import arith

BLOCK_DIM = 64


@flyc.kernel
def clamp_below_kernel(X: fx.Tensor, Floor: fx.Tensor, Y: fx.Tensor):
    tid = fx.thread_idx.x
    copy = fx.make_copy_atom(fx.rocdl.BufferCopy(fx.Float32.width), fx.Float32)
    rx = fx.make_rmem_tensor(1, fx.Float32)
    rf = fx.make_rmem_tensor(1, fx.Float32)
    ry = fx.make_rmem_tensor(1, fx.Float32)
    per_thread = fx.make_layout(1, 1)
    fx.copy_atom_call(copy, fx.slice(fx.logical_divide(fx.rocdl.make_buffer_tensor(X), per_thread), (None, tid)), rx)
    fx.copy_atom_call(copy, fx.slice(fx.logical_divide(fx.rocdl.make_buffer_tensor(Floor), per_thread), (None, tid)), rf)
    # keep the loads ordered before the math (a no-op for correctness here)
    fx.rocdl.s_waitcnt(0)
    fx.memref_store_vec(arith.maximumf(fx.memref_load_vec(rx), fx.memref_load_vec(rf)), ry)
    fx.copy_atom_call(copy, ry, fx.slice(fx.logical_divide(fx.rocdl.make_buffer_tensor(Y), per_thread), (None, tid)))


@flyc.jit
def clamp_below(X: fx.Tensor, Floor: fx.Tensor, Y: fx.Tensor, stream: fx.Stream = fx.Stream(None)):
    clamp_below_kernel(X, Floor, Y).launch(grid=(1, 1, 1), block=(BLOCK_DIM, 1, 1), stream=stream)


def build():
    x = torch.randn(BLOCK_DIM, device="cuda")
    floor = torch.zeros(BLOCK_DIM, device="cuda")
    clamp_below(x, floor, torch.empty_like(x), stream=torch.cuda.current_stream())
'''

COMMENT_ONLY = CLAMP_KERNEL.replace("# keep the loads ordered", "# loads are ordered")
MINIMUM = CLAMP_KERNEL.replace("arith.maximumf", "arith.minimumf")
ARCHS = ("gfx942", "gfx950")


@pytest.fixture(scope="module")
def compiled(tmp_path_factory):
    """Every (variant, arch) compiled once, shared by the tests below."""
    root = tmp_path_factory.mktemp("compile-api")
    variants = {"base": CLAMP_KERNEL, "comment": COMMENT_ONLY, "minimum": MINIMUM}
    return {
        (name, arch): compile_source(source, arch=arch, entry="build", workdir=root)
        for name, source in variants.items()
        for arch in ARCHS
    }


@pytest.mark.parametrize("arch", ARCHS)
def test_kernel_compiles_with_resources(compiled, arch):
    result = compiled[("base", arch)]
    assert result.ok, result.failures
    kernel = result.kernels["clamp_below_kernel_0"]
    assert kernel.arch == arch
    assert kernel.resources.vgpr > 0 and kernel.resources.sgpr > 0 and kernel.resources.code_bytes > 0
    assert kernel.resources.lds_bytes == 0 and kernel.resources.scratch_bytes == 0
    assert kernel.histogram["buffer-mem"] == 3 and kernel.histogram["waitcnt"] >= 1


@pytest.mark.parametrize("arch", ARCHS)
def test_comment_only_change_is_identical(compiled, arch):
    comparisons = compare(compiled[("base", arch)], compiled[("comment", arch)])
    assert [c.verdict for c in comparisons] == [IDENTICAL]


@pytest.mark.parametrize("arch", ARCHS)
def test_semantic_change_is_reported(compiled, arch):
    (comparison,) = compare(compiled[("base", arch)], compiled[("minimum", arch)])
    assert comparison.verdict == CHANGED and comparison.kernel == "clamp_below_kernel_0"
    assert any(line.startswith("+v_min") for line in comparison.isa_diff), comparison.isa_diff


def test_broken_source_is_a_compile_error(tmp_path):
    broken = CLAMP_KERNEL.replace("arith.maximumf(", "arith.no_such_op(")
    result = compile_source(broken, arch="gfx942", entry="build", workdir=tmp_path)
    assert not result.ok and not result.kernels
    assert "no_such_op" in result.failures[0].message
