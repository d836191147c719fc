"""The values of Python numbers the model can read off the code (FLY113's layout leaves,
FLY343's and FLY344's literal operands): the fixes keep a number only where its value is known."""

from __future__ import annotations

import ast
import operator

_INT_OPERATORS = {ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul,
                  ast.FloorDiv: operator.floordiv, ast.Mod: operator.mod, ast.LShift: operator.lshift}
_MAX_DEPTH = 8
_LOOPS = {"loop": ast.For, "comprehension": ast.comprehension}  # the statement a loop binding's target is in


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


def int_bounds(model, node: ast.expr, depth: int = 0) -> tuple[int, int] | None:
    """The least and the greatest int `node` can hold: a known int's; for a name the model types
    a Python int (so not a traced loop's run-time index), over every binding of it, each a plain
    assignment of a known int or a `for` (or comprehension) target over `range(...)` /
    `range_constexpr(...)` of known ints or over a display of known ints; for `+ - * // % <<` of
    such, their interval. None when some value is not known."""
    value = known_int(model, node, depth)
    if value is not None:
        return value, value
    if depth > _MAX_DEPTH or model.value_type(node).kind != "py-int":
        return None
    if isinstance(node, ast.BinOp):
        return _operation_bounds(model, node, depth)
    if not isinstance(node, ast.Name):
        return None
    binding = model.binding_of(node)
    if binding is None or binding.name in model.names_declared_global_or_nonlocal():
        return None
    bounds = [_binding_bounds(model, each, depth + 1) for each in binding.scope.bindings[binding.name]]
    if not bounds or None in bounds:
        return None
    return min(low for low, _ in bounds), max(high for _, high in bounds)


def _operation_bounds(model, node: ast.BinOp, depth: int) -> tuple[int, int] | None:
    """Interval arithmetic: `+ - *` of two bounded ints take their extremes at the corners;
    `//`, `%` by a known positive int and `<<` by a known small one are monotone or bounded."""
    left = int_bounds(model, node.left, depth + 1)
    if left is None:
        return None
    if isinstance(node.op, (ast.Add, ast.Sub, ast.Mult)):
        right = int_bounds(model, node.right, depth + 1)
        if right is None:
            return None
        corners = [_INT_OPERATORS[type(node.op)](a, b) for a in left for b in right]
        return min(corners), max(corners)
    divisor = known_int(model, node.right, depth + 1)
    if isinstance(node.op, ast.FloorDiv) and divisor is not None and divisor > 0:
        return left[0] // divisor, left[1] // divisor
    if isinstance(node.op, ast.Mod) and divisor is not None and divisor > 0:
        return 0, divisor - 1
    if isinstance(node.op, ast.LShift) and divisor is not None and 0 <= divisor < 64:
        return left[0] << divisor, left[1] << divisor
    return None


def _binding_bounds(model, binding, depth: int) -> tuple[int, int] | None:
    statement = model.parent(binding.node)
    if binding.kind == "assign" and isinstance(statement, ast.Assign) and statement.targets == [binding.node]:
        value = known_int(model, statement.value, depth)
        return None if value is None else (value, value)
    if not (isinstance(statement, _LOOPS.get(binding.kind, ())) and statement.target is binding.node):
        return None
    loop = statement.iter
    if isinstance(loop, (ast.List, ast.Tuple)):
        values = [known_int(model, element, depth) for element in loop.elts]
        return None if not values or None in values else (min(values), max(values))
    if not (isinstance(loop, ast.Call) and not loop.keywords and 1 <= len(loop.args) <= 3
            and model.range_callee(loop.func) is not None):
        return None
    arguments = [known_int(model, argument, depth) for argument in loop.args]
    if None in arguments or (len(arguments) == 3 and arguments[2] == 0):
        return None
    values = range(*arguments)
    return (min(values[0], values[-1]), max(values[0], values[-1])) if values else None

