"""§8 comment fixes are comment-only: proven by AST equality over a real corpus."""

from __future__ import annotations

import ast
import os
import shutil
from pathlib import Path

import pytest

from flydsl_lint.run.checker import Checker
from flydsl_lint.engine.source import SourceError, SourceFile
from flydsl_lint.run.fix_loop import fix_source
from flydsl_lint.rules.s8_comments import _PRAGMA_RE, _PRAGMA_STARTS, _dangles, _never_parses, code_runs
from tests.conftest import fix_text, lint_text, make_settings

CORPUS = Path(os.environ.get("FLYDSL_SRC", "/work/flydsl-src")) / "kernels"


def _dump(text: str) -> str:
    return ast.dump(ast.parse(text))


@pytest.mark.skipif(not CORPUS.is_dir(), reason=f"no FlyDSL checkout at {CORPUS} (set FLYDSL_SRC)")
def test_fly8_fixes_keep_the_ast_over_the_kernel_corpus(tmp_path):
    copy = tmp_path / "kernels"
    shutil.copytree(CORPUS, copy)
    checker = Checker(make_settings(tmp_path, select=("FLY8",)))
    files = sorted(copy.rglob("*.py"))
    assert files
    changed = 0
    for path in files:
        source = SourceFile.read(path)
        try:
            before = _dump(source.text)
        except SyntaxError:
            continue
        try:
            result = fix_source(source, checker)
        except SourceError as exc:  # pragma: no cover - would be a fix bug
            pytest.fail(str(exc))
        assert _dump(result.new_text) == before, f"{path}: a FLY8 fix changed the AST"
        # Only comment and blank lines disappear or change.
        old_code = [l for l in source.text.splitlines() if l.strip() and not l.lstrip().startswith("#")]
        new_code = [l for l in result.new_text.splitlines() if l.strip() and not l.lstrip().startswith("#")]
        assert old_code == new_code, f"{path}: a code line changed"
        changed += result.changed
    assert changed > 0, "the corpus exercised no FLY8 fix"


def test_fixes_never_touch_docstrings(tmp_path):
    text = (
        'import flydsl.expr as fx\n\n\ndef f():\n    """Doc.\n\n\n    # ==========\n    # x = fx.Int32(1)\n    """\n'
        "    x = 1\n\n\n    # ==========\n    return x\n"
    )
    fixed = fix_text(text, tmp_path, select=("FLY8",))
    assert '"""Doc.\n\n\n    # ==========\n    # x = fx.Int32(1)\n    """' in fixed
    assert _dump(fixed) == _dump(text)
    assert fixed.endswith("    x = 1\n\n    return x\n")  # the banner and blank run outside the docstring went


def test_commented_out_code_is_found_with_prose_around_it(tmp_path):
    text = "import flydsl.expr as fx\nx = 1\n# old path below\n# out = fx.copy(atom, src, dst)\n# fx.gemm(mma, c, a, b, c)\ny = x\n"
    found = [d for d in lint_text(text, tmp_path, select=("FLY803",))]
    assert [(d.start.row, d.end.row) for d in found] == [(4, 5)]


def test_formula_comments_are_not_code():
    assert code_runs(["row = lane / 4, col = (lane % 4) * 16"]) == []
    assert code_runs(["lds_offset = (row / 2) * BYTES_PER_2ROWS + (row % 2) * 64 + col"]) == []
    assert code_runs(["if use_lds:", "    fx.copy(atom, src, dst)"]) == [(0, 1)]


@pytest.mark.parametrize("code, never", [
    ("the offset", True),
    ("a\tb", True),
    ("x is not None", False),  # keywords between the names
    ("match x", False),  # a soft keyword
    ("a.b c", False),  # `b` is an attribute, not a name token
    ("1st place", False),  # `st` is inside a number
    ("über alles", False),  # `ber` is inside a longer name; `über` itself is no ASCII name start
    ("x\fy", False),  # a form feed is not a blank between tokens here
    ("x = a + b", False),
    ("x → y", True),  # a character Python rejects
    ("cost $5", True),
])
def test_code_that_never_parses(code, never):
    assert _never_parses(code) is never


@pytest.mark.parametrize("window, dangles", [
    (["-----------------"], True),
    (["the loop is unrolled."], True),
    (["x = (1 +", "     2)  # -"], False),  # the `-` is in a comment
    (["if x:"], True),
    (["x = f(a,"], False),  # a trailing comma is left to the parser
    (["x = f(a"], False),
    (["x = f("], True),
    (['"""', "-----"], True),  # a string open at the line never closes
    (["x = 1."], False),  # a float
    (["x = ..."], False),
    (["from m import *"], False),
    (["s = 'a -'"], False),  # quoted: not looked at
    (["a -\v"], False),  # ends in a character the check leaves to the parser
])
def test_dangling_windows_never_parse(window, dangles):
    assert _dangles(window[-1]) is dangles
    if dangles:
        with pytest.raises(SyntaxError):
            ast.parse("\n".join(window))


def test_code_without_a_call_is_found_by_its_keyword():
    assert code_runs(["import os.path"]) == [(0, 0)]
    assert code_runs(["for i in range_n: pass"]) == [(0, 0)]
    assert code_runs(["geometry entry"]) == []  # ends in `try`: looked at, and prose


def test_pragma_starts_are_the_lowercased_openings_of_every_pragma():
    pragmas = ["noqa", "type: ignore", "pragma: no cover", "fmt: off", "isort: skip", "pylint: disable=x",
               "mypy: strict", "pyright: basic", "ruff: noqa", "flake8: noqa", "nosec", "yapf: disable",
               "-*- coding: utf-8 -*-", "!/usr/bin/env python", "SPDX-License-Identifier: MIT", "Copyright AMD"]
    assert {p[:3].lower() for p in pragmas if not p.startswith("!")} == _PRAGMA_STARTS
    # Any ASCII character in the first three that still matches lowercases to a listed opening.
    for pragma in pragmas:
        for at in range(3):
            for code in range(128):
                text = pragma[:at] + chr(code) + pragma[at + 1:]
                if _PRAGMA_RE.match(" " + text):
                    assert text[:3].lower() in _PRAGMA_STARTS or text.startswith("!")


def test_banner_fix_does_not_create_a_blank_run(tmp_path):
    text = "import flydsl.expr as fx\n\n\ndef f():\n    x = 1\n\n    # ==============\n\n    return x\n"
    fixed = fix_text(text, tmp_path, select=("FLY8",))
    assert fixed == "import flydsl.expr as fx\n\n\ndef f():\n    x = 1\n\n    return x\n"
