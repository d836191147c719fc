"""Names and small AST queries shared by the memory families (§2, §3b, §4)."""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator

from ..engine.model import SemanticModel
from ._flydsl import term_children

# Where the legacy helpers live: the pre-0.3.0 FlyDSL module, the kernels
# package's copy (vendored copies are mapped here by engine/project.py).
BUFFER_OPS = ("flydsl.expr.buffer_ops", "kernels.common.buffer_ops")
MEM_OPS = ("kernels.common.mem_ops",)
SMEM_ALLOCATOR = ("flydsl.utils.smem_allocator",)

_BYTE_NAME = re.compile(r"(^|_)(n?bytes?|byte_?off(set)?|itemsize|elem_?size|element_?size|dtype_?size|bpe)(_|$)|bytes", re.I)


# Modules some kernels pass around as a function parameter of the same name
# (`def body(..., buffer_ops, ...)`, called with `buffer_ops=buffer_ops`).
_INJECTED_MODULES = {"buffer_ops": "kernels.common.buffer_ops", "mem_ops": "kernels.common.mem_ops"}


def resolve(model: SemanticModel, node: ast.expr) -> str | None:
    """`model.resolve`, plus `buffer_ops.X` where `buffer_ops` is a parameter
    that receives the module (dependency-injected helpers)."""
    name = model.resolve(node)
    if name is not None or not isinstance(node, ast.Attribute) or not isinstance(node.value, ast.Name):
        return name
    module = _INJECTED_MODULES.get(node.value.id)
    binding = model.binding_of(node.value) if module else None
    if binding is not None and binding.kind == "param" and getattr(binding.node, "annotation", None) is None:
        return f"{module}.{node.attr}"
    return None


def names(modules: tuple[str, ...], *leaves: str) -> set[str]:
    return {f"{module}.{leaf}" for module in modules for leaf in leaves}


def argument(call: ast.Call, index: int, keyword: str) -> ast.expr | None:
    """The argument at position `index` or passed as `keyword=`."""
    for item in call.keywords:
        if item.arg == keyword:
            return item.value
    if len(call.args) <= index:
        return None
    for item in call.args[: index + 1]:  # a loop: a generator in any() costs more than the few arguments
        if isinstance(item, ast.Starred):
            return None  # unpacked before the position: which value lands there is unknown
    return call.args[index]


def keyword_value(call: ast.Call, name: str) -> ast.expr | None:
    for item in call.keywords:
        if item.arg == name:
            return item.value
    return None


def is_true(node: ast.expr | None) -> bool:
    return isinstance(node, ast.Constant) and node.value is True


def assigned_values(model: SemanticModel, name: ast.Name) -> list[ast.expr] | None:
    """Every value a loaded name can hold, when all its bindings in its scope
    are plain `name = value` assignments (None otherwise)."""
    binding = model.binding_of(name)
    if binding is None or binding.scope is None or binding.kind != "assign":
        return None
    values = []
    for each in binding.scope.bindings[binding.name]:
        statement = model.parent(each.node)
        if each.kind != "assign" or not isinstance(statement, ast.Assign) or statement.targets != [each.node]:
            return None
        values.append(statement.value)
    return values


def local_function(model: SemanticModel, name: ast.expr) -> ast.FunctionDef | None:
    """The `def` a called name refers to, when it is defined in this file."""
    if not isinstance(name, ast.Name):
        return None
    binding = model.binding_of(name)
    if binding is None or binding.kind != "def" or not model.is_single_binding(binding):
        return None
    return binding.node if isinstance(binding.node, (ast.FunctionDef, ast.AsyncFunctionDef)) else None


def returned_values(function: ast.FunctionDef) -> list[ast.expr]:
    """Values of the `return` statements of `function` itself (not nested defs)."""
    found: list[ast.expr] = []
    pending: list[ast.AST] = list(function.body)
    while pending:
        node = pending.pop()
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
            continue
        if isinstance(node, ast.Return):
            if node.value is None:
                return []
            found.append(node.value)
        pending.extend(ast.iter_child_nodes(node))
    return found


def byte_sized_name(node: ast.expr) -> bool:
    """A name that says it holds a byte count: `elem_bytes`, `DTYPE_BYTES`,
    `col_byte_off`, `x.itemsize`, `t.element_size()`."""
    if isinstance(node, ast.Call) and not node.args:
        node = node.func
    if isinstance(node, ast.Name):
        return bool(_BYTE_NAME.search(node.id))
    if isinstance(node, ast.Attribute):
        return bool(_BYTE_NAME.search(node.attr))
    return False


# Expressions whose inner nodes are not the enclosing expression's own terms.
_OPAQUE_TYPES = frozenset({ast.Lambda, ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp})


def binary_operations(node: ast.expr) -> Iterator[ast.BinOp]:
    """The BinOp nodes of an expression, not inside lambdas or comprehensions,
    in no set order: a walk without the generators of `ast.iter_child_nodes`,
    which cost more than the nodes' checks, nor the fields that hold no term."""
    pending = [node]
    while pending:
        current = pending.pop()
        kind = type(current)
        if kind is ast.BinOp:
            yield current
        elif kind in _OPAQUE_TYPES:
            continue
        pending += term_children(current)
