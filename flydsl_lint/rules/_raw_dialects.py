"""What raw MLIR dialect code looks like in a kernel, shared by the §1, §3 and §5 rules: the
dialect modules, raw SSA boundaries (the model says which values are visibly raw), the helper
modules that are raw boundaries, and `scf_op`."""

from __future__ import annotations

import ast

from ..engine.project import LEGACY_MODULE_NAMES
from ._base import Rule
from ._flydsl import EXPR_ARITH, RAW_ARITH


SCF = "flydsl._mlir.dialects.scf"


VECTOR_MODULES = ("flydsl._mlir.dialects.vector", "flydsl.expr.vector")


LLVM = "flydsl._mlir.dialects.llvm"


MEMREF = "flydsl._mlir.dialects.memref"


MATH = "flydsl._mlir.dialects.math"


ARITH_OP_MODULES = (RAW_ARITH,) + EXPR_ARITH


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


def at_raw_boundary(rule: Rule, operands: list[ast.expr]) -> bool:
    """Every value operand is visibly raw (types and int literals aside): the
    op sits on a raw SSA contract the guide says to keep."""
    values = [op for op in operands if not _is_type_like(rule, op) and not _int_literal_or_list(op)]
    return bool(values) and all(rule.model.visibly_raw(op) for op in values)


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
