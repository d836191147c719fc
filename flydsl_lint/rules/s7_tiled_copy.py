"""§7 tiled copy/MMA: fx.copy / fx.gemm over *_atom_call, TV layouts from builders."""

from __future__ import annotations

import ast

from ..engine.diagnostics import Applicability
from ._base import Invalid, Rule, register
from ._edits import reference, replace_callee
from ._flydsl import qualified

_EXPR = ("flydsl.expr", "flydsl.expr.primitive")
COPY_ATOM_CALL = qualified(_EXPR, "copy_atom_call")
MMA_ATOM_CALL = qualified(_EXPR, "mma_atom_call")
MAKE_TILED_COPY = qualified(_EXPR, "make_tiled_copy")
MAKE_LAYOUT = qualified(_EXPR, "make_layout") | qualified(_EXPR, "make_ordered_layout")
SLICE = qualified(_EXPR, "slice")
_LOOPS = (ast.For, ast.AsyncFor, ast.While, ast.ListComp, ast.GeneratorExp)


def _in_loop(rule: Rule, node: ast.AST) -> bool:
    for ancestor in rule.model.ancestors(node):
        if isinstance(ancestor, _LOOPS):
            return True
        if isinstance(ancestor, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            return False
    return False


class _AtomCallRule(Rule):
    replacement: str
    arity: int

    def _lowered(self, node: ast.Call) -> tuple[Applicability | None, str]:
        """A lower applicability for this site, and a note for the fix message."""
        return None, ""

    def visit_Call(self, node: ast.Call) -> None:
        fix = None
        plain = len(node.args) == self.arity and not node.keywords and not any(isinstance(a, ast.Starred) for a in node.args)
        if plain:
            spelled = reference(self, f"flydsl.expr.{self.replacement}", "fx", "flydsl.expr")
            if spelled is not None:
                callee, imports = spelled
                applicability, note = self._lowered(node)
                fix = self.make_fix([replace_callee(self, node, callee), *imports], f"Replace with `{callee}`{note}",
                                    applicability)
        where = (" in a loop: one call over the partitioned tensor can replace the loop" if _in_loop(self, node)
                 else "")
        self.report(node, fix=fix, where=where)


@register
class CopyAtomCall(_AtomCallRule):
    """`fx.copy(atom, src, dst)` iterates the copy atom over a tiled or partitioned
    layout and takes atom state as keyword arguments; the guide prefers it over
    `fx.copy_atom_call` for loops and single-atom sites alike. In a loop over
    tiles, a single `fx.copy` over the partitioned tensor can replace the loop
    (a manual step). The SSA-returning `fly.copy_atom_call_ssa` is a different
    primitive and is kept."""

    code = "FLY701"
    calls = COPY_ATOM_CALL
    replacement = "copy"
    arity = 3
    valid = [
        "import flydsl.expr as fx\nfx.copy(atom, src, dst)\n",
        "from flydsl._mlir.dialects import fly\nv = fly.copy_atom_call_ssa([t], atom, src)\n",
        "def f(fx):\n    fx.copy_atom_call(atom, src, dst)\n",
    ]
    invalid = [
        Invalid("import flydsl.expr as fx\nfx.copy_atom_call(copy_atom, fx.slice(tiles, (None, idx)), r)\n",
                fixed="import flydsl.expr as fx\nfx.copy(copy_atom, fx.slice(tiles, (None, idx)), r)\n",
                at=(2, 1), message='Prefer `fx.copy(atom, src, dst)` over `fx.copy_atom_call`'),
        Invalid("import flydsl.expr as fx\nfor k in range_constexpr(K):\n    fx.copy_atom_call(atom, src[k], frag[k])\n",
                fixed="import flydsl.expr as fx\nfor k in range_constexpr(K):\n    fx.copy(atom, src[k], frag[k])\n"),
        Invalid("from flydsl.expr import copy_atom_call as cac\nimport flydsl.expr as fx\ncac(atom, s, d)\n",
                fixed="import flydsl.expr as fx\nfx.copy(atom, s, d)\n"),
        Invalid("import flydsl.expr as fx\nfx.copy_atom_call(atom, s, d, pred=p)\n"),
        Invalid("import flydsl.expr as fx\nfrom flydsl.expr import derived\nderived.copy_atom_call(atom, s, d)\n",
                fixed="import flydsl.expr as fx\nfx.copy(atom, s, d)\n"),  # a re-export of every release
        # tuned kernel: the fix is display-only, never applied
        Invalid("import flydsl.expr as fx\nfx.copy_atom_call(atom, s, d)\n", fixed="import flydsl.expr as fx\nfx.copy_atom_call(atom, s, d)\n",
                settings={"tuned_kernels": ("kernel.py",)}),
    ]


@register
class MmaAtomCall(_AtomCallRule):
    """`fx.gemm(mma, d, a, b, c)` iterates the MMA atom over the fragments' layout
    (accumulator first, as `mma_atom_call`) and takes atom state (e.g.
    `scale_a=`) as keyword arguments. `fx.gemm` (flydsl >= 0.4.0) only takes
    rank-1 fragments or rank-2/3 A/B with rank-3 C/D, while `mma_atom_call`
    takes any atom-sized fragment: a slice such as `c_frag[None, m, n]` keeps
    the value mode, e.g. `(4, 1)` (rank 2), and `fx.gemm` then fails to trace.
    In a loop over k-blocks one `fx.gemm` over the partitioned fragments can
    replace the loop (manual)."""

    code = "FLY702"
    follows = SLICE
    calls = MMA_ATOM_CALL
    replacement = "gemm"
    arity = 5
    valid = [
        "import flydsl.expr as fx\nfx.gemm(mma, c, a, b, c)\n",
        "from flydsl._mlir.dialects import fly\nv = fly.mma_atom_call_ssa([t], mma, a, b, c)\n",
    ]
    invalid = [
        Invalid("import flydsl.expr as fx\nfx.mma_atom_call(mma, frag_C, frag_A, frag_B, frag_C)\n",
                fixed="import flydsl.expr as fx\nfx.gemm(mma, frag_C, frag_A, frag_B, frag_C)\n"),
        # sliced (atom-level) fragments: their rank follows the value mode, which fx.gemm may reject
        Invalid("import flydsl.expr as fx\nfor k in range_constexpr(K):\n    fx.mma_atom_call(mma, c, a[k], b[k], c)\n",
                fixed="import flydsl.expr as fx\nfor k in range_constexpr(K):\n    fx.gemm(mma, c, a[k], b[k], c)\n",
                unsafe=True),
        Invalid("import flydsl.expr as fx\nfx.mma_atom_call(mma, c[None, m, n], a[None, m, k], b[None, n, k], c[None, m, n])\n",
                fixed="import flydsl.expr as fx\nfx.gemm(mma, c[None, m, n], a[None, m, k], b[None, n, k], c[None, m, n])\n",
                unsafe=True),
        Invalid("import flydsl.expr as fx\nacc = fx.slice(frag_c, (None, m, n))\nfx.mma_atom_call(mma, acc, frag_a, frag_b, acc)\n",
                fixed="import flydsl.expr as fx\nacc = fx.slice(frag_c, (None, m, n))\nfx.gemm(mma, acc, frag_a, frag_b, acc)\n",
                unsafe=True),
    ]

    def _lowered(self, node: ast.Call) -> tuple[Applicability | None, str]:
        for operand in node.args[1:]:
            value = _layout_expression(self, operand)
            if isinstance(value, ast.Subscript) or (
                    isinstance(value, ast.Call) and self.model.resolve(value.func) in SLICE):
                return Applicability.UNSAFE, " (a sliced fragment's rank may not be one `fx.gemm` takes)"
        return None, ""


def _layout_expression(rule: Rule, node: ast.expr) -> ast.expr:
    """`node`, or the value a name bound once in this scope was assigned."""
    if isinstance(node, ast.Name):
        binding = rule.model.binding_of(node)
        if binding is not None and binding.kind == "assign" and rule.model.is_single_binding(binding):
            statement = rule.model.parent(binding.node)
            if isinstance(statement, ast.Assign) and statement.targets == [binding.node]:
                return statement.value
    return node


def _has_zero_stride(node: ast.Call) -> bool:
    """A literal 0 in the stride argument: a broadcast TV layout."""
    stride = node.args[1] if len(node.args) > 1 else next((k.value for k in node.keywords if k.arg == "stride"), None)
    return stride is not None and any(isinstance(n, ast.Constant) and n.value == 0 and type(n.value) is int
                                      for n in ast.walk(stride))


@register
class InlineTvLayout(Rule):
    """A thread-value layout hand-built with `fx.make_layout(...)` and passed to
    `fx.make_tiled_copy` hides the thread and value layouts it encodes.
    `fx.make_tiled_copy_tv(atom, thr_layout, val_layout)` (or
    `fx.make_layout_tv` + `fx.make_tiled_copy`) builds it from the separate
    layouts and derives the tile. Flagged when the TV argument is a
    `make_layout` call, inline or through a name bound once. Not flagged:
    layouts with a literal 0 stride (broadcast/replicated threads, which
    `make_layout_tv`'s raked product cannot produce), layouts from
    `make_layout_tv` or an MMA."""

    code = "FLY703"
    calls = MAKE_TILED_COPY
    follows = MAKE_LAYOUT
    use_instead = (
        "```python\ntiled_copy = fx.make_tiled_copy_tv(copy_atom, fx.make_layout((4, 1), (1, 1)), "
        "fx.make_layout((1, 8), (1, 1)))\n```"
    )
    valid = [
        "import flydsl.expr as fx\ntile_mn, tv = fx.make_layout_tv(thr, val)\nt = fx.make_tiled_copy(atom, tv, tile_mn)\n",
        "import flydsl.expr as fx\nt = fx.make_tiled_copy(atom, fx.make_layout(((16, 4, 4), 1), ((1, 0, 0), 0)), fx.make_tile(16))\n",
        "import flydsl.expr as fx\nt = fx.make_tiled_copy_tv(atom, thr, val)\n",
    ]
    invalid = [
        Invalid("import flydsl.expr as fx\nt = fx.make_tiled_copy(\n    atom,\n"
                "    fx.make_layout(((tk, tm), (1, v)), ((tm * v, 1), (1, tm))),\n    fx.make_tile(tm, tile_k),\n)\n"),
        Invalid("import flydsl.expr as fx\ntv = fx.make_layout(((4, 16), 8), ((128, 1), 16))\n"
                "t = fx.make_tiled_copy(atom, tv, fx.make_tile(16, 64))\n"),
    ]

    def visit_Call(self, node: ast.Call) -> None:
        if len(node.args) < 2:
            return
        layout = _layout_expression(self, node.args[1])
        if not isinstance(layout, ast.Call) or self.model.resolve(layout.func) not in MAKE_LAYOUT:
            return
        if _has_zero_stride(layout):
            return
        self.report(node.args[1], how="inline" if layout is node.args[1] else f"in `{self.text(node.args[1])}`")


@register
class MmaOperandTvLayout(Rule):
    """A tiled copy built from an MMA's operand TV layout
    (`fx.make_tiled_copy(atom, tiled_mma.tv_layout_A_tiled, tile)`) spells out
    by hand what `fx.make_tiled_copy_A/B/C(atom, tiled_mma)` does, including the
    operand's tile. Heuristic: flagged when the TV argument is a
    `tv_layout_{A,B,C}[_tiled]` attribute (directly or through a name bound
    once); a copy matched to an MMA operand through a hand-written `make_layout`
    cannot be told from any other layout and is not flagged."""

    code = "FLY704"
    calls = MAKE_TILED_COPY
    use_instead = "```python\nthr_copy_A = fx.make_tiled_copy_A(copy_atom, tiled_mma).get_slice(tid)\n```"
    valid = [
        "import flydsl.expr as fx\nc = fx.make_tiled_copy_A(atom, tiled_mma)\n",
        "import flydsl.expr as fx\nc = fx.make_tiled_copy(atom, tv_layout, tile)\n",
    ]
    invalid = [
        Invalid("import flydsl.expr as fx\nc = fx.make_tiled_copy(atom, tiled_mma.tv_layout_A_tiled, tile)\n",
                at=(2, 5), message="Tiled copy built from `tiled_mma`'s operand-A TV layout: use `fx.make_tiled_copy_A(copy_atom, tiled_mma)`"),
        Invalid("import flydsl.expr as fx\ntv = mma.tv_layout_C_tiled\nc = fx.make_tiled_copy(atom, tv, tile)\n"),
    ]

    def visit_Call(self, node: ast.Call) -> None:
        if len(node.args) < 2:
            return
        layout = _layout_expression(self, node.args[1])
        if not isinstance(layout, ast.Attribute) or not layout.attr.startswith("tv_layout_"):
            return
        operand = layout.attr[len("tv_layout_"):].split("_")[0]
        if operand not in ("A", "B", "C"):
            return
        self.report(node, operand=operand, mma=self.text(layout.value))
