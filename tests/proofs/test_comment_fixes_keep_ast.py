"""FLY013 and FLY014 edit `noqa` comment text only: the module's AST never changes."""

from __future__ import annotations

import ast

import pytest

from tests.conftest import fix_text, lint_text
from tests.proofs import kernels_under_proof

STALE_NOQA = [
    "x = 1  # noqa: FLY105\n",
    "x = 1  # noqa: FLY105, E501 -- stale\n",
    "x = 1  # keep this note  # noqa: FLY105\n",
    "def f():\n    # noqa: FLY105\n    return 1\n",
    "s = '# noqa: FLY105'  # noqa: FLY105\n",
    'def f():\n    """Doc.\n\n    # noqa: FLY105\n    """\n    return 1  # noqa: FLY105\n',
    "v = (\n    a  # noqa: FLY105\n    + b\n)\n",
]


@pytest.mark.parametrize("text", STALE_NOQA + [kernels_under_proof.ELEMENTWISE])
def test_unused_noqa_fix_keeps_the_ast(tmp_path, text):
    settings = {"select": ("FLY013", "FLY105")}
    assert [d.code for d in lint_text(text, tmp_path, **settings)].count("FLY013") >= 1
    fixed = fix_text(text, tmp_path, **settings)
    assert fixed != text
    assert ast.dump(ast.parse(fixed)) == ast.dump(ast.parse(text))
    assert not [d for d in lint_text(fixed, tmp_path, **settings) if d.code == "FLY013"]


RENAMED_NOQA = [
    "from flydsl.expr import arith\nm = arith.maximumf(a, b)  # noqa: FLY301, FLY002\n",
    "x = 1  # noqa: FLY105, FLY003 -- kept on purpose\n",
    "# flydsl-lint: noqa: FLY002, FLY301\nfrom flydsl.expr import arith\nm = arith.maximumf(a, b)\n",
]


@pytest.mark.parametrize("text", RENAMED_NOQA)
def test_redirected_noqa_fix_keeps_the_ast(tmp_path, text):
    """FLY014 rewrites a code inside a comment: same AST, and the directive still suppresses."""
    settings = {"select": ("FLY105", "FLY301", "FLY012", "FLY013", "FLY014")}
    assert [d.code for d in lint_text(text, tmp_path, **settings)] == ["FLY014"]
    fixed = fix_text(text, tmp_path, **settings)
    assert "FLY00" not in fixed
    assert ast.dump(ast.parse(fixed)) == ast.dump(ast.parse(text))
    assert [d.code for d in lint_text(fixed, tmp_path, **settings)] == []
