"""A row-softmax kernel written in the legacy FlyDSL style, for flydsl-lint to clean up.

Every construct flagged here has a modern fx.* spelling; run
`flydsl-lint check examples/` to see them and `flydsl-lint check --diff examples/`
for the fixes that are safe to apply.
"""

import flydsl.compiler as flyc
import flydsl.expr as fx
from flydsl.expr import arith, range_constexpr
from flydsl.expr.arith import ArithValue
from flydsl.expr.typing import T

BLOCK_THREADS = 256
WAVE = 64


@flyc.kernel
def row_softmax_kernel(inp: fx.Tensor, out: fx.Tensor, n_cols: fx.Int32):
    tid = fx.Int32(fx.thread_idx.x)
    row = fx.Int32(fx.block_idx.x)
    lane = ArithValue(tid) % arith.index(WAVE)
    col = fx.Int32(tid)

    # Two passes over the row: the running maximum keeps exp() in range.
    row_max = fx.Float32(-3.0e38)
    for i in range_constexpr(fx.Int32(4)):
        x = inp[row, col + i * BLOCK_THREADS]
        row_max = arith.maximumf(row_max, x)
    row_max = row_max.maximumf(fx.Float32(fx.Float32(0.0)))

    offset = arith.index_cast(T.index, row * n_cols)
    tile = fx.make_layout(fx.Int32(BLOCK_THREADS), fx.Int32(1))
    keep = arith.unwrap(col < n_cols)
    out[row, col] = fx.Float32(row_max) + fx.Float32(lane)


@flyc.jit
def launch(inp, out, n_rows: int, n_cols: int, stream=None):
    row_softmax_kernel(inp, out, n_cols).launch(grid=(n_rows, 1, 1), block=(BLOCK_THREADS, 1, 1), stream=stream)
