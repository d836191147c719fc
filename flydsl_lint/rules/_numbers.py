"""The values of Python numbers the model can read off the code (FLY113's layout leaves,
FLY343's and FLY344's literal operands): the fixes keep a number only where its value is known."""

from __future__ import annotations

import ast
import operator

_INT_OPERATORS = {ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul,
                  ast.FloorDiv: operator.floordiv, ast.Mod: operator.mod, ast.LShift: operator.lshift}
_MAX_DEPTH = 8


def known_number(model, node: ast.expr, depth: int = 0) -> int | float | None:
    """The value of an int or float literal (maybe negated), of a name bound once to a known number,
    or of +, -, *, //, %, << of known ints; never a bool. None when not known."""
    if depth > _MAX_DEPTH:
        return None
    if isinstance(node, ast.Constant):
        return node.value if type(node.value) in (int, float) else None
    if isinstance(node, ast.Name):
        bound = model.single_assigned_value(node)
        return None if bound is None else known_number(model, bound, depth + 1)
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
        operand = known_number(model, node.operand, depth + 1)
        return None if operand is None else (-operand if isinstance(node.op, ast.USub) else operand)
    if isinstance(node, ast.BinOp) and type(node.op) in _INT_OPERATORS:
        left, right = known_int(model, node.left, depth + 1), known_int(model, node.right, depth + 1)
        if left is None or right is None or max(abs(left), abs(right)) >= 1 << 64:
            return None
        if isinstance(node.op, (ast.FloorDiv, ast.Mod)) and right == 0:
            return None
        if isinstance(node.op, ast.LShift) and not 0 <= right < 64:
            return None
        return _INT_OPERATORS[type(node.op)](left, right)
    return None


def known_int(model, node: ast.expr, depth: int = 0) -> int | None:
    """`known_number` when it is an int (no float: `fx.Int32` would truncate one)."""
    value = known_number(model, node, depth)
    return value if type(value) is int else None
