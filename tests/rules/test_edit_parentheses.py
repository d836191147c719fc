"""Dropping a wrapper call (`W(x)` -> `x`) parenthesizes `x` wherever its place would regroup it,
and drops the parentheses only where the grouping is also the plain reading.

Property: for any expression with one subexpression wrapped, the fix's text parses to the
expression without the wrapper. Examples: which parentheses go and which stay.
"""

from __future__ import annotations

import ast

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from flydsl_lint.rules._edits import needs_parentheses

BINARY = [ast.Add(), ast.Sub(), ast.Mult(), ast.Div(), ast.FloorDiv(), ast.Mod(), ast.Pow(), ast.LShift(),
          ast.RShift(), ast.BitOr(), ast.BitXor(), ast.BitAnd(), ast.MatMult()]
UNARY = [ast.USub(), ast.UAdd(), ast.Invert(), ast.Not()]
COMPARISONS = [ast.Lt(), ast.Eq(), ast.In(), ast.IsNot()]


class _Reader:
    """What `needs_parentheses` asks of a rule: a node's text and its parent."""

    def __init__(self, source: str) -> None:
        self.source = source
        self.tree = ast.parse(source)
        self._parents = {child: node for node in ast.walk(self.tree) for child in ast.iter_child_nodes(node)}
        self.model = self

    def text(self, node: ast.AST) -> str:
        return ast.get_source_segment(self.source, node)

    def parent(self, node: ast.AST) -> ast.AST | None:
        return self._parents.get(node)


leaves = st.sampled_from(["a", "b", "3", "2.5"]).map(lambda text: ast.parse(text, mode="eval").body)


def _extend(children):
    return st.one_of(
        st.builds(ast.BinOp, children, st.sampled_from(BINARY), children),
        st.builds(ast.UnaryOp, st.sampled_from(UNARY), children),
        st.builds(lambda left, op, right: ast.Compare(left, [op], [right]), children, st.sampled_from(COMPARISONS),
                  children),
        st.builds(lambda op, a, b: ast.BoolOp(op, [a, b]), st.sampled_from([ast.And(), ast.Or()]), children, children),
        st.builds(ast.IfExp, children, children, children),
        st.builds(lambda body: ast.Lambda(ast.arguments([], [], None, [], [], None, []), body), children),
        st.builds(lambda value: ast.NamedExpr(ast.Name("y", ast.Store()), value), children),
        st.builds(lambda value: ast.Attribute(value, "real"), children),
        st.builds(lambda value: ast.Call(ast.Name("f"), [value], []), children),
    )


# As source text: a fresh tree per use, and a short repr when an example fails.
expressions = st.recursive(leaves, _extend, max_leaves=6).map(ast.unparse)
# Operators alone, one or two of each level, so that equal levels meet often: where precedence and
# associativity decide.
LEVELS = [ast.Add(), ast.Sub(), ast.Mult(), ast.Pow(), ast.RShift(), ast.BitOr(), ast.BitAnd()]
arithmetic = st.recursive(leaves, lambda children: st.one_of(
    st.builds(ast.BinOp, children, st.sampled_from(LEVELS), children),
    st.builds(ast.UnaryOp, st.sampled_from(UNARY[:3]), children)), max_leaves=5).map(ast.unparse)
STATEMENTS = ["x = {}", "f({})", "t = (a, {})", "return {}", "x += {}", "f(k={})"]


def _wrap_one(source: str, pick: int) -> str:
    """The expression's source with its `pick`-th subexpression (root included) under `W(...)`."""
    expression = ast.parse(source, mode="eval").body
    nodes = [node for node in ast.walk(expression)
             if isinstance(node, ast.expr) and not isinstance(getattr(node, "ctx", None), ast.Store)]
    target = nodes[pick % len(nodes)]

    class Wrap(ast.NodeTransformer):
        def visit(self, node):
            if node is target:
                return ast.Call(ast.Name("W"), [node], [])
            return self.generic_visit(node)

    return ast.unparse(Wrap().visit(expression))


def _fixed(source: str) -> str:
    """The source with its `W(...)` replaced by the argument, parenthesized as needs_parentheses says."""
    reader = _Reader(source)
    call = next(node for node in ast.walk(reader.tree)
                if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "W")
    argument = call.args[0]
    lines = source.split("\n")
    start = sum(len(line) + 1 for line in lines[:call.lineno - 1]) + call.col_offset
    end = sum(len(line) + 1 for line in lines[:call.end_lineno - 1]) + call.end_col_offset
    text = reader.text(argument)
    parenthesized = f"({text})" if needs_parentheses(reader, argument, call) else text
    return source[:start] + parenthesized + source[end:]


def _dump(source: str) -> str | None:
    try:
        return ast.dump(ast.parse(source))
    except SyntaxError:
        return None


@settings(max_examples=1000, deadline=None)
@given(st.one_of(expressions, arithmetic), st.integers(min_value=0, max_value=50), st.sampled_from(STATEMENTS))
def test_dropping_a_wrapper_keeps_the_expression(expression, pick, statement):
    wrapped = _wrap_one(expression, pick)
    indent = "def g():\n    " if statement.startswith("return") else ""
    fixed = _fixed(indent + statement.format(wrapped))
    expected = _dump(indent + statement.format(expression))
    if expected is None:
        return  # the generated expression does not fit this statement (a bare walrus in `x = ...`)
    assert _dump(fixed) == expected, (wrapped, fixed)


@pytest.mark.parametrize("source, fixed", [
    ("x = a + W(b * c)", "x = a + b * c"),
    ("x = W(a * b) - c", "x = a * b - c"),
    ("x = W(a - b) + c", "x = a - b + c"),
    ("x = W(a * b) * c", "x = a * b * c"),
    ("x = W(a // b) * c", "x = (a // b) * c"),
    ("x = a * W(b ** 2)", "x = a * b ** 2"),
    ("x = a * W(-b)", "x = a * -b"),
    ("x = a & W(n - 1)", "x = a & (n - 1)"),
    ("x = a == W(n - 1)", "x = a == n - 1"),
    ("x = a and W(b < c)", "x = a and b < c"),
    ("x = a and W(b and c)", "x = a and (b and c)"),
    ("x = -W(-a)", "x = -(-a)"),
    ("x = a - W(b - c)", "x = a - (b - c)"),
    ("x = W(a - b) - c", "x = a - b - c"),
    ("x = W(a ** b) ** c", "x = (a ** b) ** c"),
    ("x = a ** W(b ** c)", "x = a ** (b ** c)"),
    ("x = -W(a ** b)", "x = -(a ** b)"),
    ("x = W(-a) ** b", "x = (-a) ** b"),
    ("x = not W(a < b)", "x = not a < b"),
    ("x = a < W(b < c)", "x = a < (b < c)"),
    ("x = a and W(not b)", "x = a and not b"),
    ("x = W(y := 3)", "x = (y := 3)"),
    ("f(W(y := 3))", "f((y := 3))"),
    ("x = W(4).bit_length()", "x = (4).bit_length()"),
    ("x = W(a + b).real", "x = (a + b).real"),
])
def test_examples(source, fixed):
    assert _fixed(source) == fixed
