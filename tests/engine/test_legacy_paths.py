"""A legacy construct is found under every module path that bound it in some
FlyDSL release, whichever the target (data/legacy_paths.txt, derived from the
wheels by scripts/derive_flydsl_api.py; `release_paths` adds the paths)."""

from __future__ import annotations

from pathlib import Path

import pytest

from flydsl_lint.engine.metadata import load_metadata
from flydsl_lint.engine.project import release_paths, legacy_aliases
from flydsl_lint.engine.target import releases
from flydsl_lint.engine.tomlcompat import tomllib
from flydsl_lint.engine.versions import Version
from flydsl_lint.rules import all_rules
from tests.conftest import lint_text

API_TABLE = Path(__file__).resolve().parents[2] / "flydsl_lint" / "data" / "flydsl_api.toml"

# Each construct's definition -> the code that reports it and a snippet using
# it, `{imp}` importing it and `{leaf}` calling it.
CASES = {
    "flydsl.expr.utils.arith.ArithValue": ("FLY101", "{imp}\nv = {leaf}(x) + 1\n"),
    "flydsl.expr.utils.arith.unwrap": ("FLY102", "{imp}\nc = {leaf}(x)\n"),
    "flydsl.expr.utils.arith.index_cast": ("FLY103", "{imp}\nfrom flydsl.expr.typing import T\no = {leaf}(T.index, x)\n"),
    "flydsl.expr.utils.arith._to_raw": ("FLY104", "{imp}\nr = {leaf}(x)\n"),
    "flydsl.expr.utils.arith.index": ("FLY105", "{imp}\nn = {leaf}(64)\n"),
    "flydsl.expr.arith.maximumf": ("FLY301", "{imp}\nm = {leaf}(a, b)\n"),
    "flydsl.expr.arith.minimumf": ("FLY301", "{imp}\nm = {leaf}(a, b)\n"),
    "flydsl.expr.arith.maxnumf": ("FLY301", "{imp}\nm = {leaf}(a, b)\n"),
    "flydsl.expr.primitive.ptrtoint": ("FLY351", "from kernels.common import mem_ops\n{imp}\n"
                                                 "p = mem_ops._create_llvm_ptr({leaf}(out_ptr))\n"),
    "flydsl.expr.rocdl.universal.s_waitcnt": ("FLY361", "{imp}\n{leaf}(0)\n"),
    "flydsl.expr.primitive.const_expr": ("FLY511", "{imp}\nfrom flydsl.expr import gpu\n"
                                                   "if {leaf}(gpu.thread_id('x') == 0):\n    pass\n"),
    "flydsl.expr.primitive.copy_atom_call": ("FLY701", "{imp}\n{leaf}(atom, src, dst)\n"),
    "flydsl.expr.primitive.mma_atom_call": ("FLY702", "{imp}\n{leaf}(mma, c, a, b, c)\n"),
    "flydsl.expr.primitive.make_tiled_copy": ("FLY704", "{imp}\nc = {leaf}(atom, tiled_mma.tv_layout_A_tiled, tile)\n"),
}
# Paths a construct's rule rightly leaves alone, and why.
NOT_REPORTED = {
    "flydsl.expr.maxnumf": "FLY301 reports `arith.maxnumf` spellings: `fx.maxnumf` is its replacement",
}


def _constructs() -> list[frozenset[str]]:
    return sorted(set(legacy_aliases().values()), key=sorted)


def _spellings():
    for paths in _constructs():
        for path in sorted(paths):
            if path not in NOT_REPORTED:
                yield pytest.param(path, paths, id=path)


def test_every_construct_in_the_data_has_a_case():
    uncovered = [sorted(paths) for paths in _constructs() if len(paths & CASES.keys()) != 1]
    assert uncovered == [], "each construct of legacy_paths.txt needs one case in CASES"


@pytest.mark.parametrize("target", ["0.2.0", "0.5.0"])
@pytest.mark.parametrize("attribute", [False, True], ids=["from-import", "attribute"])
@pytest.mark.parametrize("path, paths", list(_spellings()))
def test_each_spelling_is_reported_by_the_constructs_rule(path, paths, attribute, target, tmp_path):
    (definition,) = paths & CASES.keys()
    code, snippet = CASES[definition]
    module, _, leaf = path.rpartition(".")
    if attribute:
        source = snippet.format(imp=f"import {module} as owner", leaf=f"owner.{leaf}")
    else:
        source = snippet.format(imp=f"from {module} import {leaf}", leaf=leaf)
    found = [d.code for d in lint_text(source, tmp_path, select=(code,), target_version=Version.parse(target))]
    assert found == [code], source


def test_paths_of_the_same_object_are_followed_together():
    names = release_paths("flydsl.expr.arith.ArithValue")
    assert {"flydsl.expr.typing.ArithValue", "flydsl.expr.numeric.ArithValue", "flydsl.expr.ArithValue",
            "flydsl.expr.utils.arith.ArithValue"} <= names


def test_same_named_different_objects_stay_apart():
    """The per-architecture encoders are other functions than `rocdl.s_waitcnt`."""
    names = release_paths("flydsl.expr.rocdl.s_waitcnt")
    assert "flydsl.expr.rocdl.universal.s_waitcnt" in names
    assert not {"flydsl.expr.rocdl.cdna3.s_waitcnt", "flydsl.expr.rocdl.rdna4.s_waitcnt"} & names
    assert release_paths("mylib.ArithValue") == {"mylib.ArithValue"}


def _cases_with_a_gated_fix():
    releases = [Version.parse(text) for text in tomllib.loads(API_TABLE.read_text(encoding="utf-8"))["releases"]]
    for code, meta in load_metadata().items():
        since = Version.parse(meta.fix_since) if meta.fix_since else None
        older = [release for release in releases if since is not None and release < since]
        for index, case in enumerate(all_rules()[code].invalid if older else ()):
            if case.fixed is not None or case.suggested is not None:
                yield pytest.param(code, case, older[-1], id=f"{code}-{index}-{older[-1]}")


@pytest.mark.parametrize("code, case, target", list(_cases_with_a_gated_fix()))
def test_a_target_without_the_replacement_keeps_the_diagnostic(code, case, target, tmp_path):
    """Below fix-since every finding stays, without its fix, naming the release the fix needs. Below
    the first release the value-type table covers the model knows no operator's type, so a finding
    that needs one (FLY112's `fx.Int32(4 * tx)`) is not made there at all."""
    settings = {**case.settings, "target_version": target}
    found = [d for d in lint_text(case.source, tmp_path, name=case.path, select=(code,), **settings) if d.code == code]
    covered = target >= releases().oldest_supported
    assert len(found) == case.count if covered else len(found) <= case.count
    since = Version.parse(load_metadata()[code].fix_since)
    for diagnostic in found:  # the rule's fix-since, or a later release the fix itself needs (FLY103's fx.Index)
        assert diagnostic.fix is None and target < Version.parse(diagnostic.fix_needs) and Version.parse(diagnostic.fix_needs) >= since
        assert diagnostic.message.endswith(f"(fix needs FlyDSL >= {diagnostic.fix_needs}; target is {target})"), diagnostic.message
