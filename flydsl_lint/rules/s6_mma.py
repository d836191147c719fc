"""§6 raw rocdl.mfma_* / wmma_* intrinsics -> MMA atom + fx.gemm.

Which raw intrinsics an atom builder can reproduce is read from FlyDSL's
atom dispatch (lib/Dialect/FlyROCDL/{CDNA3,CDNA4,GFX11,GFX120X,GFX1250}):
`fx.rocdl.MFMA(m, n, k, elem_ty_ab, elem_ty_acc=None)` passes one element
type for both A and B and emits single-block 16x16 / 32x32 MFMAs only.
Intrinsics outside these tables (multi-block `_2b`/`_4b` shapes, 4x4, mixed
fp8/bf8 operands, xf32, f64, gfx12 fp8 WMMA, broadcast modifiers) are raw
boundaries the guide says to keep: they are not flagged.
"""

from __future__ import annotations

import ast
import re

from ._base import Invalid, Rule, register

_MODULES = ("flydsl.expr.rocdl", "flydsl._mlir.dialects.rocdl")
_MFMA = re.compile(r"^mfma_(?P<acc>f32|i32)_(?P<m>\d+)x(?P<n>\d+)x(?P<k>\d+)_?(?P<ab>[a-z0-9_]+)$")
_WMMA = re.compile(r"^wmma_(?P<acc>f32|f16|bf16|i32)_(?P<m>\d+)x(?P<n>\d+)x(?P<k>\d+)_(?P<ab>[a-z0-9_]+)$")
_SCALED = re.compile(r"^(?P<family>mfma|wmma)_scale(?:16)?_f32_(?P<m>\d+)x(?P<n>\d+)x(?P<k>\d+)_(?P<ab>[a-z0-9]+)$")

# Single-block MFMAs that MmaOpCDNA3_MFMAType dispatches to (emitAtomCallSSA).
MFMA_EXPRESSIBLE = frozenset({
    "mfma_f32_32x32x2f32", "mfma_f32_16x16x4f32",
    "mfma_f32_32x32x8f16", "mfma_f32_16x16x16f16", "mfma_f32_16x16x32_f16", "mfma_f32_32x32x16_f16",
    "mfma_f32_32x32x4bf16", "mfma_f32_16x16x8bf16", "mfma_f32_32x32x8bf16_1k", "mfma_f32_16x16x16bf16_1k",
    "mfma_f32_16x16x32_bf16", "mfma_f32_32x32x16_bf16",
    "mfma_f32_16x16x32_fp8_fp8", "mfma_f32_32x32x16_fp8_fp8", "mfma_f32_16x16x32_bf8_bf8", "mfma_f32_32x32x16_bf8_bf8",
    "mfma_i32_16x16x32_i8", "mfma_i32_32x32x16_i8",
})
# WMMAs the gfx11 / gfx120x / gfx1250 atoms dispatch to (fp8 pairs only with equal A/B types).
WMMA_EXPRESSIBLE = {
    "wmma_f32_16x16x16_f16": "gfx11xx/gfx120x", "wmma_f32_16x16x16_bf16": "gfx11xx/gfx120x",
    "wmma_i32_16x16x16_iu8": "gfx11xx", "wmma_i32_16x16x16_iu4": "gfx11xx",
    "wmma_f32_16x16x4_f32": "gfx1250", "wmma_f32_16x16x32_f16": "gfx1250", "wmma_f32_16x16x32_bf16": "gfx1250",
    "wmma_f16_16x16x32_f16": "gfx1250", "wmma_bf16_16x16x32_bf16": "gfx1250",
    "wmma_f32_16x16x64_fp8_fp8": "gfx1250", "wmma_f32_16x16x64_bf8_bf8": "gfx1250",
    "wmma_f16_16x16x64_fp8_fp8": "gfx1250", "wmma_f16_16x16x64_bf8_bf8": "gfx1250",
    "wmma_f32_16x16x128_fp8_fp8": "gfx1250", "wmma_f32_16x16x128_bf8_bf8": "gfx1250",
    "wmma_f16_16x16x128_fp8_fp8": "gfx1250", "wmma_f16_16x16x128_bf8_bf8": "gfx1250",
    "wmma_i32_16x16x64_iu8": "gfx1250", "wmma_i32_16x16x32_iu4": "gfx1250",
}
_AB_TYPES = {
    "f32": "fx.Float32", "f16": "fx.Float16", "bf16": "fx.BFloat16", "bf16_1k": "fx.BFloat16", "i8": "fx.Int8",
    "iu8": "fx.Int8", "iu4": "<i4 type>",
    "fp8_fp8": "fx.Float8E4M3FNUZ on gfx942 / fx.Float8E4M3FN on gfx950 and gfx1250",
    "bf8_bf8": "fx.Float8E5M2FNUZ on gfx942 / fx.Float8E5M2 on gfx1250",
}
_ACC_TYPES = {"f32": None, "i32": "fx.Int32", "f16": "fx.Float16", "bf16": "fx.BFloat16"}


def intrinsic_name(rule: Rule, node: ast.expr) -> str | None:
    """The raw rocdl intrinsic leaf a Name/Attribute refers to, else None."""
    name = rule.model.resolve(node)
    if not name:
        return None
    module, _, leaf = name.rpartition(".")
    return leaf if module in _MODULES else None


def _is_outer_reference(rule: Rule, node: ast.AST) -> bool:
    parent = rule.model.parent(node)
    return not (isinstance(parent, ast.Attribute) and parent.value is node)


def _modifiers_zero(rule: Rule, node: ast.expr) -> bool:
    """False when the call passes non-zero cbsz/abid/blgp broadcast modifiers."""
    call = rule.model.parent(node)
    if not isinstance(call, ast.Call) or call.func is not node:
        return True
    operands: list[ast.expr] | None = None
    for argument in call.args:
        if isinstance(argument, (ast.List, ast.Tuple)) and len(argument.elts) == 6:
            operands = list(argument.elts)
    if operands is None and len(call.args) == 7:
        operands = list(call.args)[1:]
    if operands is None:
        modifiers = [k.value for k in call.keywords if k.arg in ("cbsz", "abid", "blgp")]
    else:
        modifiers = operands[3:]
    return all(isinstance(m, ast.Constant) and m.value == 0 for m in modifiers)


def _ab_text(ab: str) -> str:
    return {"bf16_1k": "bf16", "fp8_fp8": "fp8 (E4M3)", "bf8_bf8": "bf8 (E5M2)"}.get(ab, ab)


_LEAF_PREFIXES = ("mfma_", "wmma_")  # every intrinsic these rules flag starts so


def _may_name_intrinsic(leaf: str, follows: frozenset[str]) -> bool:
    """Whether a reference spelled with this leaf can resolve to an intrinsic:
    resolution keeps the leaf unless the project follows it through re-exports."""
    return leaf.startswith(_LEAF_PREFIXES) or leaf in follows


class _MmaRule(Rule):
    def _indirect_names(self) -> set[str]:
        """Names with an alias `x = y` binding of an intrinsic, or a parameter
        every caller passes one for (imports of one are found directly)."""
        names = set()
        target_of = self.model.binding_target
        for scope in self.model.scopes:
            for name, bindings in scope.bindings.items():
                for b in bindings:
                    target = target_of(b) if b.kind == "param" or b.alias_of is not None else None
                    if target and _may_name_intrinsic(target.rpartition(".")[2], self.model.project.follows):
                        names.add(name)
                        break
        return names

    def _intrinsic_references(self) -> list[tuple[ast.expr, str]]:
        """(outermost Name/Attribute, intrinsic leaf) of every raw rocdl
        intrinsic reference in the file; computed once for the §6 rules."""
        return self.context.cache("s6.references", self._find_intrinsic_references)

    def _find_intrinsic_references(self) -> list[tuple[ast.expr, str]]:
        found = []
        model = self.model
        imported = {b.name for b in model.import_bindings()
                    if b.target and _may_name_intrinsic(b.target.rpartition(".")[2], model.project.follows)}
        final_imports = {b for b in model.import_bindings()
                         if b.target and (b.target == "flydsl" or b.target.startswith("flydsl."))}
        final_names = {b.name for b in final_imports}
        candidates = []
        for attr, nodes in model.attributes_by_name().items():
            if attr.startswith(_LEAF_PREFIXES):
                candidates += nodes
            elif attr in model.project.follows:
                candidates += [node for node in nodes if self._renamable(node, final_imports, final_names)]
        for name in model.loaded_names():
            if name in imported or name.startswith(_LEAF_PREFIXES):
                candidates += model.loads_of(name)
            elif name in model.project.follows:
                candidates += [node for node in model.loads_of(name)
                               if self._renamable(node, final_imports, final_names)]
        leaves = [intrinsic_name(self, node) for node in candidates]
        # Aliases and parameters only carry what a spelled reference gave
        # them: without one that names an intrinsic where a name can take
        # it, none can.
        if any(leaf and leaf.startswith(_LEAF_PREFIXES) and self._handed_to_name(node)
               for node, leaf in zip(candidates, leaves)):
            indirect = self._indirect_names() - imported
            more = [node for name in indirect if not _may_name_intrinsic(name, model.project.follows) for node in model.loads_of(name)]
            candidates += more
            leaves += [intrinsic_name(self, node) for node in more]
        for node, leaf in zip(candidates, leaves):
            if leaf is not None and _is_outer_reference(self, node):
                found.append((node, leaf))
        return found

    def _handed_to_name(self, node: ast.expr) -> bool:
        """Whether a reference stands where a name can take its value: an
        argument (a parameter's), a parameter default or an alias's value."""
        parent = self.model.parent(node)
        if isinstance(parent, ast.Call):
            return parent.func is not node
        return isinstance(parent, (ast.keyword, ast.arguments, ast.Assign))

    def _renamable(self, node: ast.expr, final_imports: set, final_names: set[str]) -> bool:
        """Whether project re-exports may give this reference another leaf:
        never when it starts from a FlyDSL import (one of `final_imports`,
        bound under `final_names`), whose names are final."""
        root = node
        while type(root) is ast.Attribute:
            root = root.value
        if type(root) is not ast.Name:
            return False  # a call's or subscript's attribute resolves to nothing (as in `resolve`)
        # A root bound by a FlyDSL import bears its name: other roots need no look-up.
        return root.id not in final_names or self.model.binding_of(root) not in final_imports

    def check_file(self) -> None:
        for node, leaf in self._intrinsic_references():
            self._check(node, leaf)

_HR = "import flydsl.expr as fx\nfrom flydsl._mlir.dialects import rocdl\nfrom flydsl.expr.typing import T\n"


@register
class RawMfmaIntrinsic(_MmaRule):
    """A raw `rocdl.mfma_*` call hard-codes the instruction, its fragment
    vector types (`T.vec(4, T.f32)`) and the `[a, b, c, 0, 0, 0]` operand
    tuple. `fx.make_mma_atom(fx.rocdl.MFMA(m, n, k, elem_ty_ab))` picks the
    intrinsic from shape and dtype, and `fx.gemm(mma, d, a, b, c)`
    (accumulator first) issues it over fragments made with
    `make_fragment_A/B/C` / `fx.make_fragment_like`. The message decodes
    m/n/k and the operand/accumulator types from the intrinsic name.

    Structural: converting a complete MMA path (fragments, layouts, loop)
    is a rewrite to diff for numerics and schedule, so the `fx.gemm` call is
    only a display-only suggestion.
    Only intrinsics the MFMA atom can emit are flagged; multi-block
    (`32x32x1f32`, `16x16x4f16`, ...), 4x4, mixed fp8/bf8, xf32/f64 and
    calls with non-zero cbsz/abid/blgp modifiers are kept (guide: retain raw
    calls the builders cannot express). References passed around as values
    (`mfma_fn = rocdl.mfma_f32_16x16x32_bf16`) are flagged too."""

    code = "FLY601"
    use_instead = (
        "```python\nmma = fx.make_mma_atom(fx.rocdl.MFMA(16, 16, 16, fx.Float16))\n"
        "fx.gemm(mma, frag_C, frag_A, frag_B, frag_C)\n```"
    )
    valid = [
        "import flydsl.expr as fx\nmma = fx.make_mma_atom(fx.rocdl.MFMA(16, 16, 16, fx.Float16))\n",
        # mixed fp8/bf8 operands: MFMA(...) takes one A/B type, keep the raw call
        _HR + "c = rocdl.mfma_f32_16x16x32_fp8_bf8(T.f32x4, [a, b, c, 0, 0, 0])\n",
        # 2-block variant: no atom form
        _HR + "c = rocdl.mfma_f32_32x32x1f32(T.vec(16, T.f32), [a, b, c, 0, 0, 0])\n",
        # broadcast modifiers (cbsz/abid) the atom cannot express
        _HR + "c = rocdl.mfma_f32_16x16x16f16(T.vec(4, T.f32), [a, b, c, 2, 1, 0])\n",
        "def f(rocdl):\n    return rocdl.mfma_f32_16x16x16f16(t, [a, b, c, 0, 0, 0])\n",
    ]
    invalid = [
        Invalid(_HR + "c = rocdl.mfma_f32_16x16x16f16(T.vec(4, T.f32), [a, b, c, 0, 0, 0])\n",
                suggested=_HR + "c = fx.gemm(mma, c, a, b, c)\n",
                at=(4, 5), message='Raw MFMA intrinsic `mfma_f32_16x16x16f16` (16x16x16, f16 A/B, f32 accumulator): build `mma = fx.make_mma_atom(fx.rocdl.MFMA(16, 16, 16, fx.Float16))` and issue `fx.gemm(mma, d, a, b, c)` on make_fragment_A/B/C fragments instead of T.vec operands'),
        Invalid("import flydsl.expr as fx\nacc = fx.rocdl.mfma_f32_16x16x32_fp8_fp8(T.f32x4, [k, q, acc, 0, 0, 0])\n"),
        Invalid(_HR + "mfma_fn = rocdl.mfma_f32_16x16x32_bf16 if wide else rocdl.mfma_f32_16x16x16bf16_1k\n", count=2),
        Invalid("from flydsl._mlir.dialects.rocdl import mfma_i32_16x16x32_i8 as mfma\nacc = mfma(res, a, b, acc, 0, 0, 0)\n"),
    ]

    def _check(self, node: ast.expr, leaf: str) -> None:
        if leaf not in MFMA_EXPRESSIBLE or not _modifiers_zero(self, node):
            return
        match = _MFMA.match(leaf)
        m, n, k, ab, acc = match["m"], match["n"], match["k"], match["ab"], match["acc"]
        dtype = _AB_TYPES[ab]
        acc_type = _ACC_TYPES[acc]
        note = ""
        if " on " in dtype:
            note, dtype = f" (<f8> = {dtype})", "<f8>"
        atom = f"fx.rocdl.MFMA({m}, {n}, {k}, {dtype}{', ' + acc_type if acc_type else ''})"
        call = self.model.parent(node)
        fix = None
        if isinstance(call, ast.Call) and call.func is node:
            node = call  # report the whole call, which the suggestion rewrites
            fix = self.suggest(call, f"Issue it with `fx.gemm` on an `mma = fx.make_mma_atom({atom})`")
        self.report(node, fix=fix, name=leaf, shape=f"{m}x{n}x{k}", ab=_ab_text(ab), acc=acc, atom=atom, note=note)


@register
class RawScaledMma(_MmaRule):
    """Block-scaled MMAs (`mfma_scale_f32_16x16x128_f8f6f4`,
    `mfma_scale_f32_32x32x64_f8f6f4` on gfx950; `wmma_scale[16]_*` on gfx1250)
    have atom builders too: `fx.rocdl.cdna4.MFMA_Scale(m, n, k, elem_ty_a,
    elem_ty_b)` and `fx.rocdl.WMMAScale(...)`, issued with `fx.gemm(mma, d, a,
    b, c, scale_a=sa, scale_b=sb)` (atom state as kwargs). The raw call encodes
    the f8/f6/f4 formats in its cbsz/blgp operands; the atom takes them as
    element types."""

    code = "FLY602"
    valid = [
        "import flydsl.expr as fx\nmma = fx.make_mma_atom(fx.rocdl.cdna4.MFMA_Scale(16, 16, 128, fx.Float8E4M3FN))\n",
    ]
    invalid = [
        Invalid("from flydsl.expr import rocdl\nacc = rocdl.mfma_scale_f32_16x16x128_f8f6f4(res, a, b, acc, 0, 0, 0, sa, 0, sb)\n"),
        Invalid("from flydsl._mlir.dialects import rocdl\nacc = rocdl.wmma_scale_f32_16x16x128_f8f6f4(res, a, b, acc)\n"),
    ]

    def _check(self, node: ast.expr, leaf: str) -> None:
        match = _SCALED.match(leaf)
        if not match:
            return
        m, n, k = match["m"], match["n"], match["k"]
        if match["family"] == "mfma":
            if (m, n, k) not in (("16", "16", "128"), ("32", "32", "64")):
                return
            builder = f"fx.rocdl.cdna4.MFMA_Scale({m}, {n}, {k}, elem_ty_a, elem_ty_b)"
        else:
            builder = f"fx.rocdl.WMMAScale({m}, {n}, {k}, ...)"
        self.report(node, name=leaf, shape=f"{m}x{n}x{k}", builder=builder)


@register
class RawWmmaIntrinsic(_MmaRule):
    """A raw `rocdl.wmma_*` call (RDNA3/RDNA4, gfx1250) hard-codes the instruction
    and its operand ABI (v16 operands on gfx11, v8 on gfx120x and gfx1250).
    `fx.make_mma_atom(fx.rocdl.WMMA(m, n, k, elem_ty_ab))` dispatches per arch
    and `fx.gemm` issues it. Only intrinsics a WMMA atom emits are flagged (e.g.
    gfx120x `wmma_f32_16x16x16_fp8_fp8` and mixed fp8/bf8 pairs have no atom
    form and are kept)."""

    code = "FLY603"
    valid = [
        "from flydsl.expr import rocdl\nacc = rocdl.wmma_f32_16x16x16_fp8_fp8(res, a, b, acc)\n",
        "import flydsl.expr as fx\nmma = fx.make_mma_atom(fx.rocdl.WMMA(16, 16, 16, fx.Float16))\n",
    ]
    invalid = [
        Invalid("from flydsl._mlir.dialects import rocdl\nacc = rocdl.wmma_f32_16x16x16_f16(acc.type, a, b, acc).result\n"),
        Invalid("from flydsl.expr import rocdl\nacc = rocdl.wmma_i32_16x16x64_iu8(res, a, b, acc)\n"),
    ]

    def _check(self, node: ast.expr, leaf: str) -> None:
        if leaf not in WMMA_EXPRESSIBLE:
            return
        match = _WMMA.match(leaf)
        m, n, k, ab, acc = match["m"], match["n"], match["k"], match["ab"], match["acc"]
        dtype = _AB_TYPES[ab].split(" on ")[0] if ab != "fp8_fp8" else "fx.Float8E4M3FN"
        if ab == "bf8_bf8":
            dtype = "fx.Float8E5M2"
        acc_type = _ACC_TYPES[acc]
        atom = f"fx.rocdl.WMMA({m}, {n}, {k}, {dtype}{', ' + acc_type if acc_type else ''})"
        self.report(node, name=leaf, shape=f"{m}x{n}x{k}", ab=_ab_text(ab), acc=acc, atom=atom, arch=WMMA_EXPRESSIBLE[leaf])
