"""A small git repository laid out like FlyDSL, with real kernels, for end-to-end runs."""

from __future__ import annotations

import subprocess
import textwrap
from pathlib import Path

TILING_HELPER = '''\
"""Per-thread tiling shared by the elementwise kernels."""

import flydsl.expr as fx


def thread_slice(tensor, block_dim, vec_width, bid, tid):
    """The vec_width elements thread ``tid`` of block ``bid`` owns."""
    tile = fx.slice(fx.logical_divide(tensor, fx.make_layout(block_dim * vec_width, 1)), (None, bid))
    return fx.slice(fx.logical_divide(tile, fx.make_layout(vec_width, 1)), (None, tid))
'''

VEC_ADD_KERNEL = '''\
"""C = A + B over float32 vectors."""

import flydsl.compiler as flyc
import flydsl.expr as fx

from kernels.common.tiling import thread_slice

BLOCK_DIM = 64
VEC_WIDTH = 4


@flyc.kernel
def vec_add_kernel(A: fx.Tensor, B: fx.Tensor, C: fx.Tensor, block_dim: fx.Constexpr[int],
                   vec_width: fx.Constexpr[int]):
    bid = fx.block_idx.x
    tid = fx.thread_idx.x
    copy = fx.make_copy_atom(fx.rocdl.BufferCopy(vec_width * fx.Float32.width), fx.Float32)
    ra = fx.make_rmem_tensor(vec_width, fx.Float32)
    rb = fx.make_rmem_tensor(vec_width, fx.Float32)
    rc = fx.make_rmem_tensor(vec_width, fx.Float32)
    fx.copy_atom_call(copy, thread_slice(fx.rocdl.make_buffer_tensor(A), block_dim, vec_width, bid, tid), ra)
    fx.copy_atom_call(copy, thread_slice(fx.rocdl.make_buffer_tensor(B), block_dim, vec_width, bid, tid), rb)
    fx.memref_store_vec(fx.arith.addf(fx.memref_load_vec(ra), fx.memref_load_vec(rb)), rc)
    fx.copy_atom_call(copy, rc, thread_slice(fx.rocdl.make_buffer_tensor(C), block_dim, vec_width, bid, tid))


@flyc.jit
def vec_add(A: fx.Tensor, B: fx.Tensor, C: fx.Tensor, n: fx.Int32, block_dim: fx.Constexpr[int],
            vec_width: fx.Constexpr[int], stream: fx.Stream = fx.Stream(None)):
    tile = block_dim * vec_width
    vec_add_kernel(A, B, C, block_dim, vec_width).launch(
        grid=((n + tile - 1) // tile, 1, 1), block=(block_dim, 1, 1), stream=stream
    )
'''

SCALE_KERNEL = '''\
"""Y = alpha * X over float32 vectors."""

import flydsl.compiler as flyc
import flydsl.expr as fx

from kernels.common.tiling import thread_slice

BLOCK_DIM = 64
VEC_WIDTH = 2


@flyc.kernel
def scale_kernel(X: fx.Tensor, Y: fx.Tensor, alpha: fx.Float32, block_dim: fx.Constexpr[int],
                 vec_width: fx.Constexpr[int]):
    bid = fx.block_idx.x
    tid = fx.thread_idx.x
    copy = fx.make_copy_atom(fx.rocdl.BufferCopy(vec_width * fx.Float32.width), fx.Float32)
    rx = fx.make_rmem_tensor(vec_width, fx.Float32)
    ry = fx.make_rmem_tensor(vec_width, fx.Float32)
    fx.copy_atom_call(copy, thread_slice(fx.rocdl.make_buffer_tensor(X), block_dim, vec_width, bid, tid), rx)
    fx.memref_store_vec(fx.memref_load_vec(rx) * alpha, ry)
    fx.copy_atom_call(copy, ry, thread_slice(fx.rocdl.make_buffer_tensor(Y), block_dim, vec_width, bid, tid))


@flyc.jit
def scale(X: fx.Tensor, Y: fx.Tensor, alpha: fx.Float32, n: fx.Int32, block_dim: fx.Constexpr[int],
          vec_width: fx.Constexpr[int], stream: fx.Stream = fx.Stream(None)):
    tile = block_dim * vec_width
    scale_kernel(X, Y, alpha, block_dim, vec_width).launch(
        grid=((n + tile - 1) // tile, 1, 1), block=(block_dim, 1, 1), stream=stream
    )


def probe_wide_scale():
    """Extra specialization (vec_width 4) that no test exercises; named in pyproject."""
    import torch

    x = torch.randn(1024, device="cuda")
    scale(x, torch.empty_like(x), 2.0, x.numel(), BLOCK_DIM, 4, stream=torch.cuda.current_stream())
'''

TEST_VEC_ADD = '''\
import pytest
import torch

if not torch.cuda.is_available():
    pytest.skip("needs a GPU", allow_module_level=True)

from kernels.elementwise.vec_add import BLOCK_DIM, VEC_WIDTH, vec_add  # noqa: E402


@pytest.mark.parametrize("n", [4096])
def test_vec_add(n):
    a = torch.randn(n, device="cuda")
    b = torch.randn(n, device="cuda")
    c = torch.empty(n, device="cuda")
    vec_add(a, b, c, n, BLOCK_DIM, VEC_WIDTH, stream=torch.cuda.current_stream())
    torch.cuda.synchronize()
    torch.testing.assert_close(c, a + b)
'''

TEST_SCALE = '''\
import pytest
import torch

if not torch.cuda.is_available():
    pytest.skip("needs a GPU", allow_module_level=True)

from kernels.elementwise.scale import BLOCK_DIM, VEC_WIDTH, scale  # noqa: E402


def test_scale():
    x = torch.randn(2048, device="cuda").cuda()
    y = torch.empty_like(x)
    scale(x, y, 0.5, x.numel(), BLOCK_DIM, VEC_WIDTH, stream=torch.cuda.current_stream())
    torch.cuda.synchronize()
    torch.testing.assert_close(y, x * 0.5)
'''

PYPROJECT = '''\
[tool.flydsl-lint.verify]
archs = ["gfx942"]
probes = ["kernels.elementwise.scale:probe_wide_scale"]
'''

FILES = {
    "pyproject.toml": PYPROJECT,
    "kernels/__init__.py": "",
    "kernels/common/__init__.py": "",
    "kernels/common/tiling.py": TILING_HELPER,
    "kernels/elementwise/__init__.py": "",
    "kernels/elementwise/vec_add.py": VEC_ADD_KERNEL,
    "kernels/elementwise/scale.py": SCALE_KERNEL,
    "tests/__init__.py": "",
    "tests/kernels/__init__.py": "",
    "tests/kernels/test_vec_add.py": TEST_VEC_ADD,
    "tests/kernels/test_scale.py": TEST_SCALE,
}


def git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True, text=True).stdout


def create(repo: Path) -> Path:
    """Write and commit the base layout; returns ``repo``."""
    for relative, text in FILES.items():
        path = repo / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text), encoding="utf-8")
    git(repo.parent, "init", "-q", "-b", "main", str(repo))
    git(repo, "config", "user.email", "verify@example.invalid")
    git(repo, "config", "user.name", "verify tests")
    commit_all(repo, "base")
    return repo


def commit_all(repo: Path, message: str) -> str:
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", message)
    return git(repo, "rev-parse", "HEAD").strip()


def edit(repo: Path, relative: str, old: str, new: str) -> None:
    path = repo / relative
    text = path.read_text(encoding="utf-8")
    assert old in text, f"{old!r} not in {relative}"
    path.write_text(text.replace(old, new, 1), encoding="utf-8")
