"""Run-time values: which expressions are provably values of the kernel's run (an ir.Value, or
an fx value holding one), not compile-time Python ones. Rules ask it before a fix that would
fold, or not fold, what the original did; the model asks it of the test of an `if` the
rewriter turns into an `scf.if` (`_ReachingBindings.rebuilding_if`)."""

from __future__ import annotations

import ast

from .types import IR_VALUE_KINDS, SCALAR, SCALAR_CONSTRUCTORS, VECTOR, single_positional

_EXPR = "flydsl.expr"
# Suffixes of names that give a raw ir.Value: `op.result`, `op.results[0]`, `block.arguments[0]`.
_RAW_ATTRIBUTES = frozenset({"result", "results", "arguments"})
# Run-time values by construction: thread and block ids, as `fx.thread_idx.x` or
# `gpu.thread_idx.x` (flydsl.expr re-exports the gpu module's objects), or as
# `gpu.thread_id("x")` / `gpu.block_id("x")`, which return the gpu op's value (0.3.0 to 0.5.0).
_HARDWARE_ID_MODULES = (_EXPR, f"{_EXPR}.gpu")
_HARDWARE_IDS = tuple(f"{module}.{name}." for module in _HARDWARE_ID_MODULES
                      for name in ("thread_idx", "block_idx", "block_dim", "grid_dim"))
_HARDWARE_ID_CALLS = frozenset(f"{module}.{name}" for module in _HARDWARE_ID_MODULES for name in ("thread_id", "block_id"))


class _RunTimeValues:
    """Visibly raw and provably run-time values (part of `SemanticModel`)."""

    def raw_dialect_call(self, node: ast.expr) -> bool:
        """A call of a builder of FlyDSL's raw MLIR dialects (`flydsl._mlir.dialects.*`)."""
        if not isinstance(node, ast.Call):
            return False
        name = self.resolve(node.func)
        return bool(name) and name.startswith("flydsl._mlir.dialects.")

    def visibly_raw(self, node: ast.expr, depth: int = 0) -> bool:
        """Whether `node` is visibly a raw ir.Value: the `.result(s)` of an op, a
        block argument, a raw-dialect call, or a name bound once to one of those."""
        if depth > 4:
            return False
        if isinstance(node, ast.Subscript):
            node = node.value
        if isinstance(node, ast.Attribute) and node.attr in _RAW_ATTRIBUTES:
            return True
        if self.raw_dialect_call(node):
            return True
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
            binding = self.binding_of(node.func)
            if binding is not None and binding.kind == "def" and isinstance(binding.node, ast.FunctionDef):
                returns = [r.value for r in ast.walk(binding.node) if isinstance(r, ast.Return) and r.value is not None]
                return bool(returns) and all(self.visibly_raw(r, depth + 1) for r in returns)
            return False
        if isinstance(node, ast.Name):
            binding = self.binding_of(node)
            if binding is None or binding.kind != "assign" or not self.is_single_binding(binding):
                return False
            statement = self.parent(binding.node)
            if isinstance(statement, ast.Assign) and statement.targets == [binding.node]:
                return self.visibly_raw(statement.value, depth + 1)
        return False

    def provably_dynamic(self, node: ast.expr, depth: int = 0) -> bool:
        """Whether `node` is a run-time value (not a compile-time Python one): a
        kernel or jit parameter of an fx scalar type (a `Constexpr` one is a Python
        value), a helper's parameter every call passes one for (`passed_arguments`),
        a thread/block id, a raw value, the result of a method that wraps an op
        (`_op_method_result`), a wrap, negation or arithmetic of one, an element of a list
        of them (`list_elements`) or of an fx.Vector, or a name bound once to
        one of those (or bound more than once, whose binding the read provably sees
        is: `reaching_assigned_value`)."""
        if depth > 10:  # a name's value is one step: an index computed over a few named steps
            return False
        if isinstance(node, ast.Name):
            binding = self.binding_of(node)
            if binding is None:
                return False
            if binding.kind == "param" and self.is_single_binding(binding):
                if binding.scope is None:
                    return False
                if self.function_kind(binding.scope.node) is not None:
                    return self.value_type(node).kind == SCALAR
                passed = self.passed_arguments(binding)
                return bool(passed) and all(self.provably_dynamic(argument, depth + 1) for argument in passed)
            value = self.reaching_assigned_value(node)  # a name bound more than once: the binding the read sees
            return value is not None and self.provably_dynamic(value, depth + 1)
        if isinstance(node, ast.BinOp):
            return self.provably_dynamic(node.left, depth + 1) or self.provably_dynamic(node.right, depth + 1)
        if isinstance(node, ast.Compare):
            return any(self.provably_dynamic(side, depth + 1) for side in [node.left, *node.comparators])
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd, ast.Invert)):
            return self.provably_dynamic(node.operand, depth + 1)
        if isinstance(node, ast.Subscript) and not isinstance(node.slice, ast.Slice):
            elements = self.list_elements(node.value)  # an element of a list of run-time values is one
            if elements:
                return all(self.provably_dynamic(element, depth + 1) for element in elements)
            if self.value_type(node.value).kind == VECTOR:  # `Vector.__getitem__` extracts from an ir.Value
                return True
        if isinstance(node, ast.Attribute) and (self.resolve(node) or "").startswith(_HARDWARE_IDS):
            return True
        if isinstance(node, ast.Call) and isinstance(node.func, (ast.Name, ast.Attribute)):
            callee = self.resolve(node.func)
            if callee in _HARDWARE_ID_CALLS:
                return True
            if callee in SCALAR_CONSTRUCTORS:
                wrapped = single_positional(node)
                return wrapped is not None and self.provably_dynamic(wrapped, depth + 1)
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and self._op_method_result(node):
            return True
        # An ir.Value (an ArithValue, an fx.Vector) is an SSA value of the traced function, whatever
        # made it (a helper's raw op result, `atomic_add(...)`): never a Python one.
        return self.visibly_raw(node) or (isinstance(node, ast.Call) and self.value_type(node).kind in IR_VALUE_KINDS)

    def _op_method_result(self, node: ast.Call) -> bool:
        """A method call that wraps an op's result, whatever its operands: a `Numeric` method the
        release's table records as `receiver-class` (`type(self)(self.ir_value().<op>(...))`:
        `maximumf`, `shuffle_xor`, ...), or `fx.Vector.reduce` (`element-scalar`: the element class
        of a `vector.reduction` result), on a receiver of that kind."""
        method, receiver = node.func.attr, self.value_type(node.func.value)
        table = self.type_table
        if receiver.kind == SCALAR:
            return table.scalar_methods.get(method) == "receiver-class"
        return receiver.kind == VECTOR and method == "reduce" and table.vector_fact("reduce") == "element-scalar"
