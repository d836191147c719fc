"""Python numbers whose values the model can read off the code: a fix keeps a number only
where its value is known (FLY113's layout leaves, FLY343's and FLY344's literal operands),
and an operator's type depends on whether a Python int fits in 32 bits (`types`)."""

from __future__ import annotations

import ast
import operator

from .types import PY_INT

_INT_OPERATORS = {ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul,
                  ast.FloorDiv: operator.floordiv, ast.Mod: operator.mod, ast.LShift: operator.lshift}
_MAX_DEPTH = 8
_LOOPS = {"loop": ast.For, "comprehension": ast.comprehension}  # the statement a loop binding's target is in


class _KnownNumbers:
    """Known values and bounds of Python numbers (part of `SemanticModel`)."""

    def known_number(self, node: ast.expr, depth: int = 0) -> int | float | None:
        """The value of an int or float literal (maybe negated), of a name bound once to a known number,
        or of +, -, *, //, %, << of known ints; never a bool. None when not known."""
        if depth > _MAX_DEPTH:
            return None
        if isinstance(node, ast.Constant):
            return node.value if type(node.value) in (int, float) else None
        if isinstance(node, ast.Name):
            bound = self.single_assigned_value(node)
            return None if bound is None else self.known_number(bound, depth + 1)
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
            operand = self.known_number(node.operand, depth + 1)
            return None if operand is None else (-operand if isinstance(node.op, ast.USub) else operand)
        if isinstance(node, ast.BinOp) and type(node.op) in _INT_OPERATORS:
            left, right = self.known_int(node.left, depth + 1), self.known_int(node.right, depth + 1)
            if left is None or right is None or max(abs(left), abs(right)) >= 1 << 64:
                return None
            if isinstance(node.op, (ast.FloorDiv, ast.Mod)) and right == 0:
                return None
            if isinstance(node.op, ast.LShift) and not 0 <= right < 64:
                return None
            return _INT_OPERATORS[type(node.op)](left, right)
        return None

    def known_int(self, node: ast.expr, depth: int = 0) -> int | None:
        """`known_number` when it is an int (no float: `fx.Int32` would truncate one)."""
        value = self.known_number(node, depth)
        return value if type(value) is int else None

    def int_bounds(self, node: ast.expr) -> tuple[int, int] | None:
        """The least and the greatest int `node` can hold: a known int's; for a name the model types
        a Python int (so not a traced loop's run-time index), over every binding of it, each a plain
        assignment of a known int, a `for` (or comprehension) target over `range(...)` /
        `range_constexpr(...)` of known ints or over a display of known ints, or a parameter of a
        helper typed for one call's arguments; for `+ - * // % <<` of such, their interval. None
        when some value is not known."""
        return self._int_bounds(node, 0, 0)

    def _int_bounds(self, node: ast.expr, depth: int, type_depth: int) -> tuple[int, int] | None:
        """`int_bounds`, asked while a type `type_depth` steps deep is inferred (its kinds are read
        from there on, so that a bound asked for inside an operator's typing stays bounded)."""
        value = self.known_int(node, depth)
        if value is not None:
            return value, value
        if depth > _MAX_DEPTH or self._typed(node, type_depth)[0].kind != PY_INT:
            return None
        if isinstance(node, ast.BinOp):
            return self._operation_bounds(node, depth, type_depth)
        if not isinstance(node, ast.Name):
            return None
        binding = self.binding_of(node)
        if binding is None or binding.name in self.names_declared_global_or_nonlocal():
            return None
        # A parameter, while a helper is typed for one call, holds what that call passes.
        bounds = [self._call_site_bounds.get(each) or self._binding_bounds(each, depth + 1)
                  for each in binding.scope.bindings[binding.name]]
        if not bounds or None in bounds:
            return None
        return min(low for low, _ in bounds), max(high for _, high in bounds)

    def _operation_bounds(self, node: ast.BinOp, depth: int, type_depth: int) -> tuple[int, int] | None:
        """Interval arithmetic: `+ - *` of two bounded ints take their extremes at the corners;
        `//`, `%` by a known positive int and `<<` by a known small one are monotone or bounded."""
        left = self._int_bounds(node.left, depth + 1, type_depth)
        if left is None:
            return None
        if isinstance(node.op, (ast.Add, ast.Sub, ast.Mult)):
            right = self._int_bounds(node.right, depth + 1, type_depth)
            if right is None:
                return None
            corners = [_INT_OPERATORS[type(node.op)](a, b) for a in left for b in right]
            return min(corners), max(corners)
        divisor = self.known_int(node.right, depth + 1)
        if isinstance(node.op, ast.FloorDiv) and divisor is not None and divisor > 0:
            return left[0] // divisor, left[1] // divisor
        if isinstance(node.op, ast.Mod) and divisor is not None and divisor > 0:
            return 0, divisor - 1
        if isinstance(node.op, ast.LShift) and divisor is not None and 0 <= divisor < 64:
            return left[0] << divisor, left[1] << divisor
        return None

    def _binding_bounds(self, binding, depth: int) -> tuple[int, int] | None:
        statement = self.parent(binding.node)
        if binding.kind == "assign" and isinstance(statement, ast.Assign) and statement.targets == [binding.node]:
            value = self.known_int(statement.value, depth)
            return None if value is None else (value, value)
        if not (isinstance(statement, _LOOPS.get(binding.kind, ())) and statement.target is binding.node):
            return None
        loop = statement.iter
        if isinstance(loop, (ast.List, ast.Tuple)):
            values = [self.known_int(element, depth) for element in loop.elts]
            return None if not values or None in values else (min(values), max(values))
        if not (isinstance(loop, ast.Call) and not loop.keywords and 1 <= len(loop.args) <= 3
                and self.range_callee(loop.func) is not None):
            return None
        arguments = [self.known_int(argument, depth) for argument in loop.args]
        if None in arguments or (len(arguments) == 3 and arguments[2] == 0):
            return None
        values = range(*arguments)
        return (min(values[0], values[-1]), max(values[0], values[-1])) if values else None
