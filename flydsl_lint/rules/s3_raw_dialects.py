"""§3 raw upstream dialects -> fx.* and Python operators."""

from __future__ import annotations

import ast

from ..engine.diagnostics import Applicability
from ..engine.project import LEGACY_MODULE_NAMES, followed
from ._base import Invalid, Rule, register
from ._edits import _OPEN_CONTEXTS, is_parenthesized, reference, replace_callee
from ._flydsl import EXPR, EXPR_ARITH, RAW_ARITH, known_scalar_type

# Raw typed-arithmetic spellings and their fx replacements, as in FlyDSL's
# scripts/check_typed_arithmetic_usage.py.
TYPED_ARITH = {
    "maximumf": "max", "minimumf": "min", "maxsi": "max", "maxui": "max", "minsi": "min", "minui": "min",
    "maxnumf": "maxnumf", "ceildivsi": "ceildiv", "ceildivui": "ceildiv",
}
# The fx function picks signedness from the operand type, so the unsigned
# spellings only keep their meaning on unsigned-typed operands.
_SIGNEDNESS_DEPENDENT = {"maxui", "minui", "ceildivui"}
_METHODS = {"maximumf": "max", "minimumf": "min"}
followed(*TYPED_ARITH)
_ARITH_MODULES = EXPR_ARITH + (RAW_ARITH, EXPR)

_HEADER = "import flydsl.expr as fx\nfrom flydsl.expr import arith\n"


@register
class RawTypedArithmetic(Rule):
    """The arith spellings `maximumf`/`minimumf`/`maxsi`/`maxui`/`minsi`/`minui`/
    `maxnumf`/`ceildivsi`/`ceildivui` are legacy: `fx.max`, `fx.min`,
    `fx.maxnumf` and `fx.ceildiv` pick the op from the operand types and fold
    static operands. FlyDSL's CI rejects new uses of these spellings."""

    code = "FLY301"
    # A finding resolves to `<arith module>.<spelling>`: its leaf is enough for the
    # checker to pick the call (`flydsl.expr` as a module would hand it every fx call).
    call_names = frozenset(TYPED_ARITH)
    valid = [
        "import flydsl.expr as fx\nm = fx.max(a, b)\n",
        "from flydsl.expr import arith\ndef f(arith):\n    return arith.maximumf(a, b)\n",
        "import numpy as np\nnp.maximum(a, b)\n",
        "import flydsl.expr as fx\nv = fx.maxnumf(a, b)\n",
    ]
    invalid = [
        Invalid(_HEADER + "m = arith.maximumf(a, b)\n", fixed="import flydsl.expr as fx\nm = fx.max(a, b)\n"),
        Invalid("from flydsl.expr.arith import maxnumf as mx\nimport flydsl.expr as fx\nv = mx(a, b, fastmath=fm)\n",
                fixed="import flydsl.expr as fx\nv = fx.maxnumf(a, b, fastmath=fm)\n"),
        Invalid("from flydsl._mlir.dialects import arith as _arith\nimport flydsl.expr as fx\nq = _arith.ceildivsi(a, b)\n",
                fixed="import flydsl.expr as fx\nq = fx.ceildiv(a, b)\n", unsafe=True),
        Invalid("from flydsl.expr import arith\nm = arith.minimumf(a, b)\n",
                fixed="import flydsl.expr as fx\nm = fx.min(a, b)\n"),
    ]

    def visit_Call(self, node: ast.Call) -> None:
        name = self.model.resolve(node.func)
        if not name:
            return
        module, _, spelling = name.rpartition(".")
        replacement = TYPED_ARITH.get(spelling)
        if replacement is None or module not in _ARITH_MODULES or f"{module}.{spelling}" == f"{EXPR}.{replacement}":
            return  # not an arith spelling, or already the fx function itself
        fix = None
        spelled = reference(self, f"{EXPR}.{replacement}", "fx", EXPR)
        if spelled is not None:
            callee, imports = spelled
            # The FlyDSL wrappers return typed values like fx.*; the raw dialect
            # returns an ir.Value, and unsigned spellings depend on operand types.
            risky = module == RAW_ARITH or spelling in _SIGNEDNESS_DEPENDENT
            fix = self.make_fix(
                [replace_callee(self, node, callee), *imports],
                f"Replace with `{callee}`",
                Applicability.UNSAFE if risky else None,
            )
        self.report(node, fix=fix, spelling=f"{spelling}", replacement=f"fx.{replacement}")


@register
class TypedArithmeticMethod(Rule):
    """`.maximumf()` / `.minimumf()` methods on typed values are the legacy
    spelling of `fx.max` / `fx.min`, rejected by FlyDSL's typed-arithmetic CI
    gate whatever the receiver is."""

    code = "FLY302"
    call_names = frozenset(_METHODS)
    valid = ["import flydsl.expr as fx\nm = fx.max(a, b)\n", "m = a.maximum(b)\n"]
    invalid = [
        Invalid("import flydsl.expr as fx\nm = acc.maximumf(row_max)\n",
                fixed="import flydsl.expr as fx\nm = fx.max(acc, row_max)\n", unsafe=True),
        Invalid("import flydsl.expr as fx\nm = (a * s).minimumf(b)\n",
                fixed="import flydsl.expr as fx\nm = fx.min(a * s, b)\n", unsafe=True),
    ]

    def visit_Call(self, node: ast.Call) -> None:
        func = node.func
        if not isinstance(func, ast.Attribute) or func.attr not in _METHODS:
            return
        receiver = self.model.resolve(func.value)
        if receiver is not None and (receiver in _ARITH_MODULES or receiver == EXPR):
            return  # a module function: FLY301's business
        fix = None
        spelled = reference(self, f"{EXPR}.{_METHODS[func.attr]}", "fx", EXPR)
        if spelled is not None and not any(isinstance(a, ast.Starred) for a in node.args):
            callee, imports = spelled
            arguments = ", ".join([self.text(func.value)] + [self.text(a) for a in node.args] + [self.text(k) for k in node.keywords])
            fix = self.make_fix([self.replace(node, f"{callee}({arguments})"), *imports], f"Replace with `{callee}(...)`")
        self.report(node, fix=fix, spelling=func.attr, replacement=f"fx.{_METHODS[func.attr]}")


# --------------------------------------------------------------------------
# §3 raw upstream dialects: scf / vector / llvm / memref / math / arith ops
# --------------------------------------------------------------------------

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
    memo = rule.context.memo
    try:
        return memo["s3.boundary"]  # asked per call by every raw-op rule: computed once per file
    except KeyError:
        found = memo["s3.boundary"] = rule.model.module_name.rpartition(".")[2] in _BOUNDARY_MODULES
        return found


def _call_in(rule: Rule, node: ast.Call, modules: tuple[str, ...]) -> str | None:
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


def _is_raw_dialect_call(rule: Rule, node: ast.expr) -> bool:
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
    if _is_raw_dialect_call(rule, node):
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


def _operands(node: ast.Call) -> list[ast.expr]:
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
    cache = rule.context.__dict__.setdefault("_fly_region_builders", {})
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
    op = _call_in(rule, node, (SCF,))
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


@register
class RawScfFor(Rule):
    """A hand-built `scf.ForOp` (with its insertion points, block arguments and
    explicit `scf.YieldOp`) is what the AST rewriter already emits for a Python
    loop in traced code: `range(..., init=[...])` gives an `scf.for` with
    explicit carried state, `range_constexpr` unrolls. The migration is
    structural (carried state, bound types), so no fix is offered."""

    code = "FLY311"
    call_names, call_modules = SCF_CALL_NAMES, SCF_CALL_MODULES
    valid = [
        "import flydsl.expr as fx\nfor i, state in range(0, n, 1, init=[acc]):\n    acc = state + 1\n",
        "from flydsl._mlir.dialects import scf\nif isinstance(op, scf.ForOp):\n    pass\n",
        "def f(scf):\n    return scf.ForOp(lb, ub, step)\n",
    ]
    invalid = [
        Invalid("from flydsl._mlir.dialects import scf\nloop = scf.ForOp(lb, ub, step, [acc])\n"),
        Invalid("from flydsl._mlir.dialects import scf as _scf\nfor iv in _scf.for_(0, n, 1):\n    pass\n"),
    ]
    use_instead = "for i, state in range(lb, ub, step, init=[acc]):\n    ...  # the rewriter emits scf.for with carried state"

    def visit_Call(self, node: ast.Call) -> None:
        op = scf_op(self, node)
        if op in ("ForOp", "for_"):
            self.report(node, op=op)


@register
class RawScfWhile(Rule):
    """A hand-built `scf.WhileOp` with before/after blocks and `scf.ConditionOp`
    is a Python `while` loop in a `@flyc.kernel`/`@flyc.jit` body: the rewriter
    builds the same `scf.while`, carrying the re-assigned values."""

    code = "FLY312"
    call_names, call_modules = SCF_CALL_NAMES, SCF_CALL_MODULES
    valid = [
        "import flydsl.expr as fx\nwhile cur < flag:\n    cur = load()\n",
        "from flydsl._mlir.dialects import scf\nops = [scf.WhileOp]\n",
    ]
    invalid = [
        Invalid("from flydsl._mlir.dialects import scf\nfrom flydsl.expr.typing import T\nw = scf.WhileOp([T.i32], [init])\n"),
        Invalid("from flydsl._mlir.dialects import scf\nscf.ConditionOp(cond, [cur])\n"),
    ]
    use_instead = "cur = load()\nwhile cur < flag:\n    cur = load()"

    def visit_Call(self, node: ast.Call) -> None:
        op = scf_op(self, node)
        if op in ("WhileOp", "ConditionOp", "while_"):
            self.report(node, op=op)


@register
class RawScfYield(Rule):
    """An explicit `scf.YieldOp` terminator only exists in a hand-built scf
    region; with Python control flow the rewriter yields the carried values.
    It disappears with the manual `scf.IfOp`/`ForOp`/`WhileOp` it terminates."""

    code = "FLY313"
    call_names, call_modules = SCF_CALL_NAMES, SCF_CALL_MODULES
    valid = [
        "from flydsl._mlir.dialects import scf\nif not isinstance(last, scf.YieldOp):\n    pass\n",
        "def f(scf):\n    scf.YieldOp([])\n",
        "from flydsl._mlir import ir\ndef f(d, blk):\n    with ir.InsertionPoint(blk):\n        d.YieldOp([])\n",
    ]
    invalid = [
        Invalid("from flydsl._mlir.dialects import scf\nscf.YieldOp([])\n"),
        Invalid("from flydsl._mlir.dialects import scf as _scf\n_scf.YieldOp([a, b])\n_scf.yield_([c])\n", count=2),
        Invalid("from flydsl._mlir import ir\ndef epilog(pred, scf=None):\n    op = scf.IfOp(pred)\n"
                "    with ir.InsertionPoint(op.then_block):\n        scf.YieldOp([])\n"),
        Invalid("def epilog(pred, ir, scf):\n    op = scf.IfOp(pred)\n"
                "    with ir.InsertionPoint(op.then_block):\n        scf.YieldOp([])\n"),
    ]
    use_instead = "if cond:\n    x = a  # the rewriter yields `x` from both branches\nelse:\n    x = b"

    def visit_Call(self, node: ast.Call) -> None:
        op = scf_op(self, node)
        if op in ("YieldOp", "yield_"):
            self.report(node, op=op)


# Raw vector ops with an fx equivalent (typed `fx.Vector` methods).
_VECTOR_REPLACEMENTS = {
    "extract": "indexing `vec[i]`", "extractelement": "indexing `vec[i]`", "ExtractOp": "indexing `vec[i]`",
    "ExtractElementOp": "indexing `vec[i]`",
    "bitcast": "`vec.bitcast(dtype)`", "BitCastOp": "`vec.bitcast(dtype)`",
    "splat": "`fx.Vector.filled(shape, value, dtype)`", "SplatOp": "`fx.Vector.filled(shape, value, dtype)`",
    "broadcast": "`fx.Vector.filled(...)` / `vec.broadcast_to(shape)`",
    "BroadcastOp": "`fx.Vector.filled(...)` / `vec.broadcast_to(shape)`",
    "from_elements": "`fx.Vector.from_elements(elements, dtype)`",
    "FromElementsOp": "`fx.Vector.from_elements(elements, dtype)`",
    "load": "`fx.Vector.load(...)` or a layout view + `fx.copy`", "LoadOp": "`fx.Vector.load(...)` or a layout view + `fx.copy`",
    "load_op": "`fx.Vector.load(...)` or a layout view + `fx.copy`",
    "store": "`vec.store(...)` or a layout view + `fx.copy`", "StoreOp": "`vec.store(...)` or a layout view + `fx.copy`",
    "shuffle": "`vec.shuffle(other, mask)`", "ShuffleOp": "`vec.shuffle(other, mask)`",
    "reduction": "`vec.reduce(op)`", "ReductionOp": "`vec.reduce(op)`",
    "shape_cast": "`vec.reshape(shape)`", "ShapeCastOp": "`vec.reshape(shape)`",
}
# Follow project re-exports of these ops to a vendored copy of the legacy
# `flydsl.expr.vector` wrappers (see engine.project.LEGACY_MODULES).
followed(*(f"flydsl.expr.vector.{op}" for op in _VECTOR_REPLACEMENTS))


@register
class RawVectorOp(Rule):
    """Raw `vector` dialect ops (`extract`, `bitcast`, `splat`, `broadcast`,
    `from_elements`, `load`/`store`, `shuffle`, `reduction`) return untyped
    ir.Values and force unwrapping at every use. `fx.Vector` has typed
    equivalents: indexing, `.bitcast(dtype)`, `Vector.filled`, `.broadcast_to`,
    `Vector.from_elements`, `Vector.load`/`.store`, `.shuffle`, `.reduce`.
    `vector.insert*` has no typed equivalent and is not reported, nor are ops
    whose operands are all visibly raw values (a raw SSA boundary). Calls into
    a vendored copy of the legacy `flydsl.expr.vector` wrappers (a project
    module named `vector` defining the op) are reported like the original."""

    code = "FLY321"
    call_modules = frozenset(VECTOR_MODULES)
    valid = [
        "import flydsl.expr as fx\nlo = vec[0]\nw = vec.bitcast(fx.Int32)\n",
        "from flydsl._mlir.dialects import vector\nv = vector.insert(x, vec, static_position=[0])\n",
        "from flydsl._mlir.dialects import vector, rocdl\nfrom flydsl.expr.typing import T\n"
        "r = rocdl.raw_op(a).result\nw = vector.bitcast(T.vec(4, T.i32), r)\n",
    ]
    invalid = [
        Invalid("from flydsl._mlir.dialects import vector\nlo = vector.extract(v, static_position=[0], dynamic_position=[])\n"),
        Invalid("from flydsl.expr import vector\nfrom flydsl.expr.typing import T\nw = vector.bitcast(T.vec(4, T.i32), packed)\n"),
        Invalid("from flydsl._mlir.dialects import vector as _v\nfrom flydsl.expr.typing import T\nz = _v.broadcast(T.vec(4, T.f32), zero)\n"),
    ]
    use_instead = "lo = vec[0]\nw = vec.bitcast(fx.Int32)\nz = fx.Vector.filled((4,), 0.0, fx.Float32)"

    def visit_Call(self, node: ast.Call) -> None:
        if in_boundary_module(self):
            return
        op = _call_in(self, node, VECTOR_MODULES)
        replacement = _VECTOR_REPLACEMENTS.get(op or "")
        if replacement is None or at_raw_boundary(self, _operands(node) + [k.value for k in node.keywords if k.arg in ("vector", "source", "value")]):
            return
        self.report(node, op=op, replacement=replacement)


_LLVM_MEMORY = {
    "load": "load", "LoadOp": "load", "store": "store", "StoreOp": "store",
    "getelementptr": "getelementptr", "GEPOp": "getelementptr",
    "mlir_constant": "mlir.constant", "ConstantOp": "mlir.constant",
}
# Keywords carrying semantics a layout view cannot express: keep those ops.
_LLVM_SEMANTIC_KEYWORDS = {"ordering", "syncscope", "volatile_", "alias_scopes", "noalias_scopes",
                           "invariant", "invariant_group", "invariantGroup", "tbaa", "access_groups"}


@register
class RawLlvmMemory(Rule):
    """Raw `llvm.load`/`llvm.store`/`llvm.getelementptr`/`llvm.mlir.constant`
    hand-build pointer arithmetic and memory accesses that layout views
    (`fx.make_view`, `fx.get_iter`), `fx.Array` + `SharedAllocator`, copy atoms
    and fx constants express with types. Accesses with atomic ordering, sync
    scope, volatile or alias metadata are semantic raw
    boundaries the guide says to preserve, and are not reported."""

    code = "FLY331"
    call_modules = frozenset({LLVM})
    valid = [
        "from flydsl._mlir.dialects import llvm\nfrom flydsl.expr.typing import T\n"
        "v = llvm.LoadOp(T.i32, ptr, alignment=4, ordering=llvm.AtomicOrdering.monotonic, syncscope='agent').result\n",
        "from flydsl._mlir.dialects import llvm\nllvm.StoreOp(v, p, volatile_=True)\n",
        "from flydsl._mlir.dialects import llvm\np = llvm.inttoptr(ty, addr)\n",
    ]
    invalid = [
        Invalid("from flydsl._mlir.dialects import llvm\nfrom flydsl.expr.typing import T\nv = llvm.load(T.f32, ptr)\n"),
        Invalid("from flydsl._mlir.dialects import llvm as _llvm\n_llvm.StoreOp(v, p, alignment=16)\n"
                "q = _llvm.GEPOp(ptr_ty, base, [off], elem_type=ty)\n", count=2),
    ]
    use_instead = "view = fx.make_view(fx.get_iter(tensor), fx.make_layout((M, N), (N, 1)))\nfx.copy(copy_atom, view_slice, frag)"

    def visit_Call(self, node: ast.Call) -> None:
        if in_boundary_module(self):
            return
        op = _call_in(self, node, (LLVM,))
        spelled = _LLVM_MEMORY.get(op or "")
        if spelled is None or any(k.arg in _LLVM_SEMANTIC_KEYWORDS for k in node.keywords):
            return
        self.report(node, op=spelled)


@register
class RawMemref(Rule):
    """`memref` dialect ops (`memref.load`/`store`/`alloca`/`view`/...) bypass
    FlyDSL's layout algebra: layout tensors/views and copy atoms carry the
    shape, stride and address space with types."""

    code = "FLY332"
    call_modules = frozenset({MEMREF})
    valid = [
        "import flydsl.expr as fx\nt = fx.make_view(fx.get_iter(buf), fx.make_layout((4, 4), (4, 1)))\n",
        "from flydsl._mlir.dialects import memref\nty = memref.MemRefType\n",
    ]
    invalid = [
        Invalid("from flydsl._mlir.dialects import memref as memref_dialect\nx = memref_dialect.load(buf, [i])\n"),
        Invalid("from flydsl._mlir.dialects import memref\nmemref.StoreOp(v, buf, [i, j])\n"),
    ]
    use_instead = "view = fx.make_view(fx.get_iter(buf), layout)\nfx.copy(copy_atom, view_slice, frag)"

    def visit_Call(self, node: ast.Call) -> None:
        if in_boundary_module(self):
            return
        op = _call_in(self, node, (MEMREF,))
        if op and not op.endswith("Type") and not op.endswith("Attr"):
            self.report(node, op=op)


# Raw `math` dialect ops that flydsl.expr.math wraps (fx.<name>, since 0.1.5).
MATH_WRAPPED = frozenset({
    "absf", "ceil", "floor", "trunc", "round", "roundeven", "exp", "exp2", "expm1", "log", "log2", "log10", "log1p",
    "sqrt", "rsqrt", "cbrt", "sin", "cos", "tan", "asin", "acos", "atan", "sinh", "cosh", "tanh", "asinh", "acosh",
    "atanh", "erf", "erfc", "sincos", "absi", "ctlz", "cttz", "ctpop", "powf", "fpowi", "ipowi", "atan2", "copysign",
    "fma", "clampf", "isnan", "isinf", "isfinite", "isnormal",
})
_MATH_OP_CLASSES = {f"{name[0].upper()}{name[1:]}Op": name for name in MATH_WRAPPED}
_MATH_OP_CLASSES.update({"AbsFOp": "absf", "AbsIOp": "absi", "PowFOp": "powf", "FPowIOp": "fpowi", "IPowIOp": "ipowi",
                         "CountLeadingZerosOp": "ctlz", "CountTrailingZerosOp": "cttz", "CtPopOp": "ctpop",
                         "CopySignOp": "copysign", "Atan2Op": "atan2", "RoundEvenOp": "roundeven", "IsNaNOp": "isnan",
                         "IsInfOp": "isinf", "IsFiniteOp": "isfinite", "IsNormalOp": "isnormal", "ExpM1Op": "expm1",
                         "Log1pOp": "log1p", "ErfcOp": "erfc", "SinCosOp": "sincos", "ClampFOp": "clampf"})
followed(*(f"{EXPR}.{name}" for name in MATH_WRAPPED))


@register
class RawMathOp(Rule):
    """A raw `math` dialect op that `flydsl.expr.math` wraps (`fx.exp2`,
    `fx.rsqrt`, `fx.fma`, ...) returns an untyped ir.Value and needs unwrapped
    operands; the wrapper takes typed values, keeps the type and still accepts
    `fastmath=`. Raw math ops with no wrapper are not reported."""

    code = "FLY333"
    call_modules = frozenset({MATH})
    valid = [
        "import flydsl.expr as fx\ny = fx.exp2(x, fastmath=fm)\n",
        "from flydsl._mlir.dialects import math as math_dialect\ny = math_dialect.some_unwrapped_op(x)\n",
        "import math\ny = math.exp2(3.0)\n",
    ]
    invalid = [
        Invalid("from flydsl._mlir.dialects import math as math_dialect\nimport flydsl.expr as fx\n"
                "y = math_dialect.exp2(x, fastmath=fm)\n",
                fixed="import flydsl.expr as fx\ny = fx.exp2(x, fastmath=fm)\n", unsafe=True),
        Invalid("from flydsl._mlir.dialects import math\nimport flydsl.expr as fx\nd = math.fma(a, b, c)\n",
                fixed="import flydsl.expr as fx\nd = fx.fma(a, b, c)\n", unsafe=True),
        Invalid("from flydsl._mlir.dialects import math\nr = math.RsqrtOp(x).result\n"),
    ]

    def visit_Call(self, node: ast.Call) -> None:
        if in_boundary_module(self):
            return
        op = _call_in(self, node, (MATH,))
        if op is None:
            return
        name = op if op in MATH_WRAPPED else _MATH_OP_CLASSES.get(op)
        if name is None:
            return
        fix = None
        if op == name:  # function form: same arguments, typed result
            spelled = reference(self, f"{EXPR}.{name}", "fx", EXPR)
            if spelled is not None:
                callee, imports = spelled
                fix = self.make_fix([replace_callee(self, node, callee), *imports], f"Replace with `{callee}`")
        self.report(node, fix=fix, op=op, replacement=f"fx.{name}")


# Raw arith binary ops with a Python operator on fx-typed operands:
# op -> (operator, operand kind: "f" float, "i" integer, "s" signed int, "u" unsigned int)
_ARITH_OPERATORS = {
    "addf": ("+", "f"), "subf": ("-", "f"), "mulf": ("*", "f"), "divf": ("/", "f"), "remf": ("%", "f"),
    "addi": ("+", "i"), "subi": ("-", "i"), "muli": ("*", "i"),
    "andi": ("&", "i"), "ori": ("|", "i"), "xori": ("^", "i"), "shli": ("<<", "i"),
    "divsi": ("//", "s"), "floordivsi": ("//", "s"), "remsi": ("%", "s"), "shrsi": (">>", "s"),
    "divui": ("//", "u"), "remui": ("%", "u"),
    "negf": ("-", "f"),
}
_ARITH_OP_CLASSES = {
    "AddFOp": "addf", "SubFOp": "subf", "MulFOp": "mulf", "DivFOp": "divf", "RemFOp": "remf", "AddIOp": "addi",
    "SubIOp": "subi", "MulIOp": "muli", "AndIOp": "andi", "OrIOp": "ori", "XOrIOp": "xori", "ShLIOp": "shli",
    "DivSIOp": "divsi", "FloorDivSIOp": "floordivsi", "RemSIOp": "remsi", "ShRSIOp": "shrsi", "DivUIOp": "divui",
    "RemUIOp": "remui", "NegFOp": "negf",
}
# Ops whose operator form emits exactly this op for operands of one known fx type.
_SAFE_OPERATOR_OPS = {"addf", "subf", "mulf", "divf", "addi", "subi", "muli", "andi", "ori", "xori", "shli"}
_FLOAT_TYPES = {"Float16", "BFloat16", "Float32", "Float64"}
_SIGNED_TYPES = {"Int8", "Int16", "Int32", "Int64"}
_UNSIGNED_TYPES = {"Uint8", "Uint16", "Uint32", "Uint64"}
_KIND_TYPES = {"f": _FLOAT_TYPES, "i": _SIGNED_TYPES | _UNSIGNED_TYPES, "s": _SIGNED_TYPES, "u": _UNSIGNED_TYPES}
# Comparison predicates that a Python comparison operator emits (utils/arith.py).
_CMPF_OPERATORS = {"OLT": "<", "OLE": "<=", "OEQ": "==", "UNE": "!=", "OGT": ">", "OGE": ">="}
_CMPI_SIGNED = {"eq": "==", "ne": "!=", "slt": "<", "sle": "<=", "sgt": ">", "sge": ">="}
_CMPI_UNSIGNED = {"ult": "<", "ule": "<=", "ugt": ">", "uge": ">="}
# The raw arith ops each rule reports, as its `call_names`: a finding's callee
# resolves to `<arith module>.<op>`, and the checker then hands the rule only
# calls with that leaf instead of every call into the arith modules.
_CMP_OPS = ("cmpf", "cmpi", "CmpFOp", "CmpIOp")
_CONSTANT_OPS = ("constant", "ConstantOp")
_SELECT_OPS = ("select", "SelectOp")
_PRECEDENCE_SAFE = (ast.Name, ast.Attribute, ast.Call, ast.Subscript, ast.Constant)


def default_fastmath(rule: Rule, node: ast.Call) -> bool:
    """No `fastmath=`, or an explicit `None` / `FastMathFlags.none`."""
    for keyword in node.keywords:
        if keyword.arg != "fastmath":
            continue
        value = keyword.value
        if isinstance(value, ast.Constant) and value.value is None:
            return True
        name = rule.model.resolve(value) if isinstance(value, (ast.Name, ast.Attribute)) else None
        return bool(name) and name.endswith("FastMathFlags.none")
    return not any(k.arg is None for k in node.keywords)  # **kwargs may carry fastmath


def _operand_text(rule: Rule, node: ast.expr) -> str:
    text = rule.text(node)
    return text if isinstance(node, _PRECEDENCE_SAFE) or is_parenthesized(text) else f"({text})"


def _wrap_result(rule: Rule, call: ast.expr, text: str) -> str:
    parent = rule.model.parent(call)
    if isinstance(parent, _OPEN_CONTEXTS) or (isinstance(parent, ast.Call) and call in parent.args) or \
            isinstance(parent, (ast.List, ast.Tuple)):
        return text
    return f"({text})"


@register
class RawArithOperator(Rule):
    """Raw arith ops with a Python operator (`addf`/`addi` `+`, `subf` `-`,
    `mulf` `*`, `divf` `/`, `andi` `&`, `ori` `|`, `xori` `^`, `shli` `<<`,
    `divsi` `//`, `remsi` `%`, ...) need unwrapped operands and return untyped
    values. On fx-typed values the operator emits the same op. Kept: ops with
    a non-default `fastmath=` (the guide's explicit `*FOp` exception) and ops
    whose operands are all visibly raw values (a raw SSA boundary). The fix is
    offered only when both operands are provably the same fx type the op
    expects, and it is unsafe: FlyDSL 0.5.0's raw arith ops reject fx-typed
    operands at trace time, so such a site does not compile as written and the
    rewrite changes behaviour (tests/proofs/test_demoted_fixes.py)."""

    code = "FLY341"
    call_names = frozenset(_ARITH_OPERATORS) | frozenset(_ARITH_OP_CLASSES)
    valid = [
        "import flydsl.expr as fx\ns = a + b\n",
        "from flydsl._mlir.dialects import arith\ns = arith.addf(a, b, fastmath=fm_fast)\n",
        "from flydsl._mlir.dialects import arith\ns = arith.AddFOp(w, peer, fastmath=fm).result\n",
        "from flydsl._mlir.dialects import arith, rocdl\nx = rocdl.raw(a).result\ny = arith.addi(x, rocdl.raw(b).result)\n",
        "def f(arith):\n    return arith.addf(a, b)\n",
        "from flydsl._mlir.dialects import arith\nimport flydsl.expr as fx\nq = fx.Int32(arith.divui(n, d))\n",
    ]
    invalid = [
        Invalid("from flydsl._mlir.dialects import arith\nimport flydsl.expr as fx\n"
                "a = fx.Uint32(x)\nq = arith.remui(a, fx.Uint32(8))\n"),
        Invalid("from flydsl._mlir.dialects import arith\nimport flydsl.expr as fx\n"
                "a = fx.Float32(x)\nb = fx.Float32(y)\ns = arith.addf(a, b)\n",
                fixed="import flydsl.expr as fx\na = fx.Float32(x)\nb = fx.Float32(y)\ns = a + b\n", unsafe=True),
        Invalid("from flydsl.expr import arith\nimport flydsl.expr as fx\n"
                "def f(i: fx.Int32, j: fx.Int32):\n    return fx.Int64(arith.shli(i, j))\n",
                fixed="import flydsl.expr as fx\n"
                "def f(i: fx.Int32, j: fx.Int32):\n    return fx.Int64(i << j)\n", unsafe=True),
        Invalid("from flydsl.expr import arith\nimport flydsl.expr as fx\n"
                "a = fx.Int32(x)\nb = fx.Int32(y)\nc = arith.muli(a, b) * 2\n",
                fixed="import flydsl.expr as fx\na = fx.Int32(x)\nb = fx.Int32(y)\nc = (a * b) * 2\n", unsafe=True),
        Invalid("from flydsl._mlir.dialects import arith\ns = arith.mulf(as_mlir_value(a), as_mlir_value(b))\n"),
        Invalid("from flydsl._mlir.dialects import arith as _arith\nimport flydsl.expr as fx\n"
                "a = fx.Int32(x)\nq = _arith.divsi(a, fx.Int32(4))\n"),
        Invalid("from flydsl._mlir.dialects import arith\nr = arith.XOrIOp(a, b).result\n"),
    ]

    def visit_Call(self, node: ast.Call) -> None:
        if in_boundary_module(self):
            return
        op = _call_in(self, node, ARITH_OP_MODULES)
        if op is None:
            return
        spelling = _ARITH_OP_CLASSES.get(op, op)
        entry = _ARITH_OPERATORS.get(spelling)
        if entry is None or not default_fastmath(self, node):
            return
        operands = _operands(node)
        expected = 1 if spelling == "negf" else 2
        if len(operands) != expected or at_raw_boundary(self, operands):
            return
        operator, kind = entry
        if kind == "u" and not all(known_scalar_type(self.model, o) in _UNSIGNED_TYPES for o in operands):
            return  # `//`/`%` on signed or unknown types emit divsi/remsi: no operator keeps the unsigned op
        fix = None
        if op == spelling and spelling in _SAFE_OPERATOR_OPS and expected == 2 and not node.keywords:
            types = {known_scalar_type(self.model, o) for o in operands}
            (only,) = types if len(types) == 1 else (None,)
            if only in _KIND_TYPES[kind]:
                left, right = (_operand_text(self, o) for o in operands)
                fix = self.make_fix([self.replace(node, _wrap_result(self, node, f"{left} {operator} {right}"))],
                                    f"Use the `{operator}` operator")
        self.report(node, fix=fix, op=op, operator=operator)


@register
class RawArithCompare(Rule):
    """`arith.cmpi`/`cmpf` with a predicate that a Python comparison emits
    (`cmpf` OLT/OLE/OEQ/UNE/OGT/OGE, `cmpi` eq/ne/slt/sle/sgt/sge; unsigned
    `ult`... on unsigned fx types) is a comparison operator on fx-typed
    values. Predicates with no operator (`cmpf` ONE/UEQ/ULT/ORD/UNO..., and
    unsigned `cmpi` on values not known to be unsigned) are kept, as are
    comparisons of visibly raw values (e.g. exec masks from inline asm)."""

    code = "FLY342"
    call_names = frozenset(_CMP_OPS)
    valid = [
        "from flydsl._mlir.dialects import arith\nc = arith.cmpf(arith.CmpFPredicate.ONE, a, b)\n",
        "from flydsl._mlir.dialects import arith\nc = arith.cmpi(arith.CmpIPredicate.ult, a, b)\n",
        "from flydsl._mlir.dialects import arith, llvm\nm = llvm.inline_asm(t, [], s, c).result\n"
        "c = arith.cmpi(arith.CmpIPredicate.eq, m, llvm.other(x).result)\n",
        "from flydsl._mlir.dialects import arith, llvm\ndef _exec():\n    return llvm.inline_asm(t, [], s, c).result\n"
        "m = _exec()\nc = arith.cmpi(arith.CmpIPredicate.eq, m, _exec())\n",
        "import flydsl.expr as fx\nc = a < b\n",
    ]
    invalid = [
        Invalid("from flydsl._mlir.dialects import arith\nc = arith.cmpf(arith.CmpFPredicate.OGT, x, zero)\n"),
        Invalid("from flydsl.expr import arith\nfrom flydsl._mlir.dialects.arith import CmpIPredicate\n"
                "c = arith.cmpi(CmpIPredicate.slt, i, n)\n"),
        Invalid("from flydsl._mlir.dialects import arith\nimport flydsl.expr as fx\n"
                "a = fx.Uint32(x)\nb = fx.Uint32(y)\nc = arith.CmpIOp(arith.CmpIPredicate.ult, a, b).result\n"),
    ]
    use_instead = "c = x > zero    # fx-typed operands emit cmpf ogt / cmpi slt"

    def visit_Call(self, node: ast.Call) -> None:
        if in_boundary_module(self):
            return
        op = _call_in(self, node, ARITH_OP_MODULES)
        if op not in _CMP_OPS:
            return
        operands = _operands(node)
        if len(operands) != 3 or any(visibly_raw(self, o) for o in operands[1:]):
            return  # a raw value (exec mask, inline asm result) on either side: a raw SSA contract
        predicate = self.model.resolve(operands[0]) if isinstance(operands[0], (ast.Name, ast.Attribute)) else None
        if not predicate:
            return
        enum, _, value = predicate.rpartition(".")
        if op in ("cmpf", "CmpFOp"):
            operator = _CMPF_OPERATORS.get(value) if enum.endswith("CmpFPredicate") else None
        elif not enum.endswith("CmpIPredicate"):
            operator = None
        elif value in _CMPI_UNSIGNED:
            unsigned = all(known_scalar_type(self.model, o) in _UNSIGNED_TYPES for o in operands[1:])
            operator = _CMPI_UNSIGNED[value] if unsigned else None
        else:
            operator = _CMPI_SIGNED.get(value)
        if operator is None:
            return
        self.report(node, op=op, predicate=value, operator=operator)


_FX_CONSTANT_TYPES = {
    "i1": "fx.Boolean", "i8": "fx.Int8", "i16": "fx.Int16", "i32": "fx.Int32", "i64": "fx.Int64",
    "f16": "fx.Float16", "bf16": "fx.BFloat16", "f32": "fx.Float32", "f64": "fx.Float64", "index": "fx.Index",
}


@register
class RawArithConstant(Rule):
    """`arith.constant(v, type=T.i32)` / `arith.ConstantOp` build an untyped
    constant; an fx constant (`fx.Int32(v)`, `fx.Float32(v)`) is typed and
    folds into Python-operator arithmetic. Vector constants (dense
    attributes) are not reported."""

    code = "FLY343"
    call_names = frozenset(_CONSTANT_OPS)
    valid = [
        "import flydsl.expr as fx\nc = fx.Int64(4)\n",
        "from flydsl._mlir.dialects import arith\nc = arith.ConstantOp(vec_ty, dense_attr)\n",
        "from flydsl._mlir.dialects import arith\nfrom flydsl.expr.typing import T\nz = arith.constant(T.vec(4, T.f32), 0.0)\n",
        "from flydsl.expr import arith\nfrom flydsl.expr.typing import T\nz = arith.constant_vector(0.0, T.vec(4, T.f32))\n",
    ]
    invalid = [
        Invalid("from flydsl.expr import arith as ea\nfrom flydsl.expr.typing import T\nc = ea.constant(4, type=T.i64)\n"),
        Invalid("from flydsl._mlir.dialects import arith\nfrom flydsl.expr.typing import T\nc = arith.constant(T.f32, 0.0)\n"),
        Invalid("from flydsl.expr import arith\nc = arith.constant(1, index=True)\n"),
        Invalid("from flydsl.expr import arith\ndef c(val, index=False):\n    return arith.constant(val, index=index)\n"),
    ]
    use_instead = "c = fx.Int64(4)"

    def visit_Call(self, node: ast.Call) -> None:
        if in_boundary_module(self):
            return
        op = _call_in(self, node, ARITH_OP_MODULES)
        if op not in _CONSTANT_OPS:
            return
        parent = self.model.parent(node)
        if isinstance(parent, ast.Call) and node in parent.args and _is_raw_dialect_call(self, parent):
            return  # an operand of a raw op: it goes with that op
        arguments = list(node.args) + [k.value for k in node.keywords]
        texts = [self.model.resolve(a) for a in arguments if isinstance(a, (ast.Name, ast.Attribute))]
        callees = [self.model.resolve(a.func) for a in arguments
                   if isinstance(a, ast.Call) and isinstance(a.func, (ast.Name, ast.Attribute))]
        if op == "ConstantOp" and not any(t and t.rpartition(".")[2] in _FX_CONSTANT_TYPES for t in texts):
            return  # ConstantOp(type, attr): only a visibly scalar type is reported
        if any(t and ("vec" in t.rpartition(".")[2].lower() or "Dense" in t) for t in texts + callees):
            return  # a vector / dense-attribute constant
        leaf = next((t.rpartition(".")[2] for t in texts if t and t.rpartition(".")[2] in _FX_CONSTANT_TYPES), None)
        if any(k.arg == "index" for k in node.keywords):
            leaf = "index"
        self.report(node, op=op, replacement=_FX_CONSTANT_TYPES.get(leaf or "", "fx.Int32(v)/fx.Float32(v)"))


@register
class RawArithSelect(Rule):
    """`arith.select(cond, a, b)` takes and returns raw values; a typed
    condition has `cond.select(a, b)` (fx.Boolean / comparison results), which
    keeps the result typed. Selects of visibly raw values are kept."""

    code = "FLY344"
    call_names = frozenset(_SELECT_OPS)
    valid = [
        "import flydsl.expr as fx\nv = (i < n).select(a, b)\n",
        "from flydsl._mlir.dialects import arith, llvm\nc = llvm.op(x).result\nv = arith.select(c, llvm.op(y).result, llvm.op(z).result)\n",
    ]
    invalid = [
        Invalid("from flydsl.expr import arith\nv = arith.select(is_b, half, zero)\n"),
        Invalid("from flydsl._mlir.dialects import arith\nv = arith.SelectOp(c, a, b).result\n"),
    ]
    use_instead = "v = is_b.select(half, zero)"

    def visit_Call(self, node: ast.Call) -> None:
        if in_boundary_module(self):
            return
        op = _call_in(self, node, ARITH_OP_MODULES)
        if op not in _SELECT_OPS:
            return
        operands = _operands(node)
        if len(operands) != 3 or at_raw_boundary(self, operands):
            return
        self.report(node, op=op)
