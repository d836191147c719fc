"""What raw MLIR dialect code looks like in a kernel, shared by the §1, §3 and §5 rules: the
dialect modules, visibly raw values and the run-time values built from them, the helper modules
that are raw boundaries, and `scf_op`."""

from __future__ import annotations

import ast

from ..engine.model.types import SCALAR, VECTOR
from ..engine.project import LEGACY_MODULE_NAMES
from ._base import Rule
from ._flydsl import EXPR, EXPR_ARITH, RAW_ARITH, known_scalar_type, single_positional, typed_scalar


SCF = "flydsl._mlir.dialects.scf"


VECTOR_MODULES = ("flydsl._mlir.dialects.vector", "flydsl.expr.vector")


LLVM = "flydsl._mlir.dialects.llvm"


MEMREF = "flydsl._mlir.dialects.memref"


MATH = "flydsl._mlir.dialects.math"


ARITH_OP_MODULES = (RAW_ARITH,) + EXPR_ARITH


# Suffixes of names that give a raw ir.Value: `op.result`, `op.results[0]`,
# `block.arguments[0]`.
_RAW_ATTRIBUTES = {"result", "results", "arguments"}


# Type-like arguments of raw builders (result types), neither raw nor typed.
_TYPE_PREFIXES = ("flydsl.expr.typing.T", "flydsl.expr.T", "flydsl._mlir.extras.types", "flydsl._mlir.ir")


# Shared helper modules the guide names as the place for raw boundaries
# (legacy buffer/mem ops, tensor_shim's pointer/base extraction).
_BOUNDARY_MODULES = LEGACY_MODULE_NAMES | {"tensor_shim"}


def in_boundary_module(rule: Rule) -> bool:
    """Whether the file is a shared helper module where raw boundaries belong."""
    return rule.model.module_name.rpartition(".")[2] in _BOUNDARY_MODULES


def call_in(rule: Rule, node: ast.Call, modules: tuple[str, ...]) -> str | None:
    """The op name when `node` calls `<module>.<op>` for one of `modules`."""
    name = rule.model.resolve(node.func)
    if not name:
        return None
    module, _, op = name.rpartition(".")
    return op if module in modules else None


def _is_type_like(rule: Rule, node: ast.expr) -> bool:
    target = node.func if isinstance(node, ast.Call) else node
    name = rule.model.resolve(target) if isinstance(target, (ast.Name, ast.Attribute)) else None
    return bool(name) and name.startswith(_TYPE_PREFIXES)


def is_raw_dialect_call(rule: Rule, node: ast.expr) -> bool:
    if not isinstance(node, ast.Call):
        return False
    name = rule.model.resolve(node.func)
    return bool(name) and name.startswith("flydsl._mlir.dialects.")


def visibly_raw(rule: Rule, node: ast.expr, depth: int = 0) -> bool:
    """Whether `node` is visibly a raw ir.Value: the `.result(s)` of an op, a
    block argument, a raw-dialect call, or a name bound once to one of those."""
    if depth > 4:
        return False
    if isinstance(node, ast.Subscript):
        node = node.value
    if isinstance(node, ast.Attribute) and node.attr in _RAW_ATTRIBUTES:
        return True
    if is_raw_dialect_call(rule, node):
        return True
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
        binding = rule.model.binding_of(node.func)
        if binding is not None and binding.kind == "def" and isinstance(binding.node, ast.FunctionDef):
            returns = [r.value for r in ast.walk(binding.node) if isinstance(r, ast.Return) and r.value is not None]
            return bool(returns) and all(visibly_raw(rule, r, depth + 1) for r in returns)
        return False
    if isinstance(node, ast.Name):
        binding = rule.model.binding_of(node)
        if binding is None or binding.kind != "assign" or not rule.model.is_single_binding(binding):
            return False
        statement = rule.model.parent(binding.node)
        if isinstance(statement, ast.Assign) and statement.targets == [binding.node]:
            return visibly_raw(rule, statement.value, depth + 1)
    return False


def at_raw_boundary(rule: Rule, operands: list[ast.expr]) -> bool:
    """Every value operand is visibly raw (types and int literals aside): the
    op sits on a raw SSA contract the guide says to keep."""
    values = [op for op in operands if not _is_type_like(rule, op) and not _int_literal_or_list(op)]
    return bool(values) and all(visibly_raw(rule, op) for op in values)


def _int_literal_or_list(node: ast.expr) -> bool:
    if isinstance(node, (ast.List, ast.Tuple)):
        return all(isinstance(e, ast.Constant) and type(e.value) is int for e in node.elts)
    return isinstance(node, ast.Constant) and isinstance(node.value, (int, float, bool))


def call_operands(node: ast.Call) -> list[ast.expr]:
    return [a for a in node.args if not isinstance(a, ast.Starred)]


_REGION_ATTRIBUTES = {"then_block", "else_block", "body", "before", "after", "regions"}


_INSERTION_POINT = "flydsl._mlir.ir.InsertionPoint"


def _is_insertion_point(rule: Rule, func: ast.expr) -> bool:
    """`ir.InsertionPoint`, also when `ir` is a helper's parameter (kernels pass the module in)."""
    if rule.model.resolve(func) == _INSERTION_POINT:
        return True
    if isinstance(func, ast.Attribute) and func.attr == "InsertionPoint" and isinstance(func.value, ast.Name):
        binding = rule.model.binding_of(func.value)
        return binding is not None and binding.kind == "param"
    return False


def _builds_regions(rule: Rule, function: ast.AST) -> bool:
    """Whether `function` opens op regions with `ir.InsertionPoint(x.then_block)`-style blocks."""
    cache = rule.context.cache("s3.region_builders", dict)
    key = id(function)
    if key not in cache:
        found = False
        for node in ast.walk(function):
            if isinstance(node, ast.Call) and node.args and _is_insertion_point(rule, node.func):
                found = any(isinstance(n, ast.Attribute) and n.attr in _REGION_ATTRIBUTES for n in ast.walk(node.args[0]))
                if found:
                    break
        cache[key] = found
    return cache[key]


# Op classes a helper may build through an `scf` parameter (see `scf_op`).
_SCF_OP_CLASSES = frozenset({"IfOp", "ForOp", "WhileOp", "YieldOp", "ConditionOp"})


# What a rule built on `scf_op` declares as its `call_names`/`call_modules`.
SCF_CALL_NAMES = _SCF_OP_CLASSES


SCF_CALL_MODULES = frozenset({SCF})


def scf_op(rule: Rule, node: ast.Call) -> str | None:
    """The scf op `node` builds: `scf.<op>(...)` through any import alias, or
    through a parameter that a helper receives as the scf module (seen from
    the helper opening op regions with `ir.InsertionPoint(op.then_block)`)."""
    op = call_in(rule, node, (SCF,))
    if op is not None:
        return op
    func = node.func
    if not (isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) and func.attr.endswith("Op")):
        return None
    binding = rule.model.binding_of(func.value)
    if binding is None or binding.kind != "param" or binding.scope is None:
        return None
    if func.attr in _SCF_OP_CLASSES and _builds_regions(rule, binding.scope.node):
        return func.attr
    return None


# Run-time values by construction: thread and block ids, as `fx.thread_idx.x` or
# `gpu.thread_idx.x` (flydsl.expr re-exports the gpu module's objects).
# Run-time values by construction: thread and block ids, as `fx.thread_idx.x` or
# `gpu.thread_idx.x` (flydsl.expr re-exports the gpu module's objects), or as
# `gpu.thread_id("x")` / `gpu.block_id("x")`, which return the gpu op's value (0.3.0 to 0.5.0).
_HARDWARE_ID_MODULES = (EXPR, f"{EXPR}.gpu")
_HARDWARE_IDS = tuple(f"{module}.{name}." for module in _HARDWARE_ID_MODULES
                      for name in ("thread_idx", "block_idx", "block_dim", "grid_dim"))
_HARDWARE_ID_CALLS = frozenset(f"{module}.{name}" for module in _HARDWARE_ID_MODULES for name in ("thread_id", "block_id"))


def provably_dynamic(rule: Rule, node: ast.expr, depth: int = 0) -> bool:
    """Whether `node` is a run-time value (not a compile-time Python one): a
    kernel or jit parameter of an fx scalar type (a `Constexpr` one is a Python
    value), a helper's parameter every call passes one for (`passed_arguments`),
    a thread/block id, a raw value, the result of a method that wraps an op
    (`_op_method_result`), a wrap or arithmetic of one, or a name bound once to
    one of those (or bound more than once, whose binding the read provably sees
    is: `reaching_assigned_value`)."""
    if depth > 10:  # a name's value is one step: an index computed over a few named steps
        return False
    model = rule.model
    if isinstance(node, ast.Name):
        binding = model.binding_of(node)
        if binding is None:
            return False
        if binding.kind == "param" and model.is_single_binding(binding):
            if binding.scope is None:
                return False
            if model.function_kind(binding.scope.node) is not None:
                return known_scalar_type(model, node) is not None
            passed = model.passed_arguments(binding)
            return bool(passed) and all(provably_dynamic(rule, argument, depth + 1) for argument in passed)
        value = model.reaching_assigned_value(node)  # a name bound more than once: the binding the read sees
        return value is not None and provably_dynamic(rule, value, depth + 1)
    if isinstance(node, ast.BinOp):
        return provably_dynamic(rule, node.left, depth + 1) or provably_dynamic(rule, node.right, depth + 1)
    if isinstance(node, ast.Compare):
        return any(provably_dynamic(rule, side, depth + 1) for side in [node.left, *node.comparators])
    if isinstance(node, ast.Attribute) and (model.resolve(node) or "").startswith(_HARDWARE_IDS):
        return True
    if isinstance(node, ast.Call) and isinstance(node.func, (ast.Name, ast.Attribute)) \
            and model.resolve(node.func) in _HARDWARE_ID_CALLS:
        return True
    if isinstance(node, ast.Call) and typed_scalar(model, node):
        argument = single_positional(node)
        return argument is not None and provably_dynamic(rule, argument, depth + 1)
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and _op_method_result(model, node):
        return True
    return visibly_raw(rule, node)


def _op_method_result(model, node: ast.Call) -> bool:
    """A method call that wraps an op's result, whatever its operands: a `Numeric` method the
    release's table records as `receiver-class` (`type(self)(self.ir_value().<op>(...))`:
    `maximumf`, `shuffle_xor`, ...), or `fx.Vector.reduce` (`element-scalar`: the element class
    of a `vector.reduction` result), on a receiver of that kind."""
    method, receiver = node.func.attr, model.value_type(node.func.value)
    table = model.type_table
    if receiver.kind == SCALAR:
        return table.scalar_methods.get(method) == "receiver-class"
    return receiver.kind == VECTOR and method == "reduce" and table.vector_fact("reduce") == "element-scalar"
