"""A rule that raises stops the file with one error naming the rule, the line
and the exception (never a traceback, never a clean file), whichever way the
checker hands the rule its nodes: a node type's visit, `visit_Call`, a hook."""

from __future__ import annotations

import pytest

from flydsl_lint.engine.source import SourceError
from flydsl_lint.rules import all_rules
from tests.conftest import lint_text

KERNEL = """\
import flydsl.expr as fx

def f(x):
    if x:
        fx.arith.ArithValue(x)
    if not x:
        fx.arith.ArithValue(x + 1)
    return x
"""


def _raise_at_line(line: int):
    def visit(self, node):
        if node.lineno == line:
            raise ValueError("boom")
    return visit


@pytest.mark.parametrize(("code", "method", "line"), [
    ("FLY512", "visit_If", 6),  # a node type's visit, on its second node
    ("FLY101", "visit_Call", 7),  # visit_Call, on the second call
])
def test_a_raising_visit_names_the_rule_and_the_line(tmp_path, monkeypatch, code, method, line):
    monkeypatch.setattr(all_rules()[code], method, _raise_at_line(line))
    with pytest.raises(SourceError) as raised:
        lint_text(KERNEL, tmp_path)
    assert raised.value.path == str(tmp_path / "kernel.py")
    assert str(raised.value.reason) == f"internal error in {code} at line {line}: ValueError: boom"


def test_a_raising_file_hook_names_the_rule(tmp_path, monkeypatch):
    def check_file(self):
        raise KeyError("k")
    monkeypatch.setattr(all_rules()["FLY804"], "check_file", check_file)
    with pytest.raises(SourceError) as raised:
        lint_text(KERNEL, tmp_path)
    assert str(raised.value.reason) == "internal error in FLY804: KeyError: 'k'"


def test_a_recursion_error_in_a_visit_is_nesting_too_deep(tmp_path, monkeypatch):
    def visit_If(self, node):
        raise RecursionError
    monkeypatch.setattr(all_rules()["FLY512"], "visit_If", visit_If)
    with pytest.raises(SourceError) as raised:
        lint_text(KERNEL, tmp_path)
    assert str(raised.value.reason) == "FLY512 gave up: expression nesting too deep"
