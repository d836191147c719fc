"""Every code whose rules.toml entry says `fix = "safe"` has a proof (registry.PROVEN)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from flydsl_lint.engine.diagnostics import Applicability
from flydsl_lint.engine.metadata import load_metadata
from tests.proofs.registry import CDNA, PLAN, PROVEN

ROOT = Path(__file__).resolve().parents[2]
SAFE = sorted(code for code, meta in load_metadata().items() if meta.fix == Applicability.SAFE)


def _test_functions(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    return {node.name for node in tree.body if isinstance(node, ast.FunctionDef) and node.name.startswith("test_")}


def test_every_safe_code_is_proven():
    missing = [code for code in SAFE if code not in PROVEN]
    assert not missing, f"safe fixes without a proof (prove them in tests/proofs or demote them to unsafe): {missing}"


@pytest.mark.parametrize("code", SAFE)
def test_proof_test_exists(code):
    proof = PROVEN.get(code)
    if proof is None:
        pytest.fail(f"{code} is not in tests/proofs/registry.py PROVEN")
    path, _, function = proof.test.partition("::")
    assert (ROOT / path).is_file(), f"{code}: {path} does not exist"
    assert function in _test_functions(ROOT / path), f"{code}: {proof.test} is not a test function"
    assert proof.kind in ("isa", "ast-equality")
    if proof.kind == "isa":
        planned = [arches for arches, codes in PLAN.values() if code in codes]
        assert planned, f"{code}: no kernel module in PLAN proves it"
        covered = set().union(*planned)
        assert set(CDNA) <= covered, f"{code}: proven only on {sorted(covered)}, not on both {CDNA}"


def test_ast_proof_for_comment_fixes_covers_the_codes():
    """The s8 corpus test selects the whole FLY8 family, so it covers FLY801-804."""
    text = (ROOT / "tests/rules/test_s8_comments.py").read_text(encoding="utf-8")
    assert 'select=("FLY8",)' in text and "_dump(result.new_text) == before" in text
