"""§5 runtime branches inside helper functions."""

from __future__ import annotations

import ast
from collections import deque
from collections.abc import Iterator
from functools import cached_property

from ..engine.diagnostics import Edit
from ..engine.project import release_paths
from ._base import Invalid, Rule, leaves, register
from ._codemods import (Codemod, Refusal, codemod_fix, delete_or_pass, end_of, has_comments, is_attribute_of,
                        kernel_function, next_statement, own_nodes, reads_of, start_of, unconditional_block, within)
from ._flydsl import EXPR, TYPED_SCALARS, known_scalar_type, term_children, typed_scalar
from ._raw_dialects import SCF_CALL_MODULES, SCF_CALL_NAMES, scf_op

_IF_HELPERS = release_paths("kernels.common.kernels_common._if_then", "kernels.common.kernels_common._if_else")
_IF_HELPER_NAMES = frozenset(name.rpartition(".")[2] for name in _IF_HELPERS)
_DISPATCH = "flydsl.compiler.ast_rewriter.ReplaceIfWithDispatch.scf_if_dispatch"
_CONST_EXPR = release_paths(f"{EXPR}.const_expr", f"{EXPR}.primitive.const_expr")

# Values that only exist at run time: thread/block/lane ids and loads.
_GPU_MODULES = (f"{EXPR}.gpu", EXPR, "flydsl._mlir.dialects.gpu")
_ID_NAMES = release_paths(*(f"{module}.{leaf}" for module in _GPU_MODULES
                            for leaf in ("thread_id", "block_id", "lane_id", "thread_idx", "block_idx")))
_ROCDL_MODULES = (f"{EXPR}.rocdl", "flydsl._mlir.dialects.rocdl")
_ROCDL_IDS = release_paths(*(f"{module}.{leaf}" for module in _ROCDL_MODULES for leaf in (
    "workitem_id_x", "workitem_id_y", "workitem_id_z", "workgroup_id_x", "workgroup_id_y", "workgroup_id_z",
    "mbcnt_lo", "mbcnt_hi", "readlane", "readfirstlane", "lane_id")))
_LOAD_LEAVES = frozenset({"buffer_load", "load", "LoadOp", "load_op"})
_LOAD_MODULES = ("flydsl.expr.buffer_ops", "kernels.common.buffer_ops", "flydsl._mlir.dialects.llvm",
                 "flydsl._mlir.dialects.memref", "flydsl._mlir.dialects.vector", "flydsl.expr.vector",
                 f"{EXPR}.Vector", f"{EXPR}.typing.Vector", f"{EXPR}.llvm")
# What `_runtime_value` matches, for the rules built on it to follow.
_RUNTIME_SOURCES = _CONST_EXPR | _ID_NAMES | _ROCDL_IDS | release_paths(*(f"kernels.common.buffer_ops.{leaf}"
                                                                           for leaf in _LOAD_LEAVES))


def _is_if_op(rule: Rule, node: ast.expr) -> bool:
    if isinstance(node, ast.Call):
        return scf_op(rule, node) in ("IfOp", "if_")
    if isinstance(node, ast.Name):
        binding = rule.model.binding_of(node)
        if binding is not None and binding.kind == "assign" and rule.model.is_single_binding(binding):
            statement = rule.model.parent(binding.node)
            return isinstance(statement, ast.Assign) and _is_if_op(rule, statement.value)
    return False


def _named_source(name: str | None, is_call: bool) -> str | None:
    """A description of the run-time value source a node resolving to `name`
    (a call of it, with `is_call`) is, if any."""
    if not name:
        return None
    if name in _ID_NAMES or name in _ROCDL_IDS:
        return name.rpartition(".")[2]
    module, _, leaf = name.rpartition(".")
    if is_call and leaf in _LOAD_LEAVES and module in _LOAD_MODULES:
        return f"a loaded value ({leaf})"
    return None


def runtime_value(rule: Rule, node: ast.expr, depth: int = 0) -> str | None:
    """Why `node` is visibly a run-time value (ids, loads, names bound to them)."""
    if depth > 6:
        return None
    memo = rule.context.cache("s5.runtime_value", dict)  # shared names are followed once
    key = (id(node), depth)
    if key not in memo:
        memo[key] = _runtime_value(rule, node, depth)
    return memo[key]


_SOURCE_TYPES = frozenset({ast.Call, ast.Name, ast.Attribute})  # the nodes a run-time value can come from


def _source_candidates(node: ast.expr) -> Iterator[ast.expr]:
    """The Call, Name and Attribute nodes of `node`, in `ast.walk` order (breadth
    first): its walk without the generators of `ast.iter_child_nodes`, which
    cost more than the nodes' checks, nor the fields that hold no source."""
    pending = deque([node])
    while pending:
        current = pending.popleft()
        kind = type(current)
        if kind is not ast.Name and kind is not ast.Constant:  # the commonest nodes have no term child
            pending += term_children(current)
        if kind in _SOURCE_TYPES:
            yield current


def _runtime_value(rule: Rule, node: ast.expr, depth: int) -> str | None:
    model = rule.model
    for sub in _source_candidates(node):
        kind = type(sub)
        if kind is ast.Call:
            name = model.resolve(sub.func)  # an unresolved callee (`f()()`, `x[0]()`) is no source
            if name in _CONST_EXPR:
                continue
            found = _named_source(name, True)
        elif kind is ast.Attribute and sub.attr not in model.project.follows:
            continue  # resolution keeps a leaf it does not follow, and every source's leaf is followed
        else:
            found = _named_source(model.resolve(sub), False)
        if found:
            return found
        if kind is ast.Name and isinstance(sub.ctx, ast.Load):
            binding = model.binding_of(sub)
            if binding is None or binding.kind != "assign" or not model.is_single_binding(binding):
                continue
            statement = model.parent(binding.node)
            if isinstance(statement, ast.Assign) and statement.targets == [binding.node]:
                found = runtime_value(rule, statement.value, depth + 1)
                if found:
                    return f"`{sub.id}` ({found})"
    return None


def runtime_condition(rule: Rule, test: ast.expr) -> bool:
    """Whether an `if` test is visibly a run-time (SSA) condition."""
    if isinstance(test, ast.Call) and rule.model.resolve(test.func) in _CONST_EXPR:
        return False
    if isinstance(test, ast.Compare) and any(isinstance(o, (ast.Is, ast.IsNot, ast.In, ast.NotIn)) for o in test.ops):
        return False
    if isinstance(test, ast.Call) and isinstance(test.func, ast.Name) and test.func.id in ("isinstance", "hasattr", "callable", "len"):
        return False
    if runtime_value(rule, test):
        return True
    parts = [test]
    if isinstance(test, ast.Compare):
        parts = [test.left, *test.comparators]
    elif isinstance(test, ast.BoolOp):
        return any(runtime_condition(rule, v) for v in test.values)
    elif isinstance(test, ast.UnaryOp):
        return runtime_condition(rule, test.operand)
    return any(typed_scalar(rule.model, p) or known_scalar_type(rule.model, p) for p in parts)


_INSERTION_POINT = "flydsl._mlir.ir.InsertionPoint"
_HAS_ELSE = ("hasElse", "has_else")


class _IfRewrite(Codemod):
    """`op = scf.IfOp(cond)` (or `scf.IfOp(cond, [], hasElse=True)`) with its then region
    entered right after it (`with ir.InsertionPoint(op.then_block):` ending in
    `scf.YieldOp([])`, or `with _if_then(op):`) and, with an else, the else region right
    after that, rewritten as a Python `if cond: ... else: ...`.

    In traced code the rewriter lowers that `if` on a dynamic condition through
    `scf_if_dispatch`: `scf.IfOp(as_ir_value(cond), [], has_else=...)` with an
    empty `scf.yield` closing each region (every release from 0.3.0 on), the op
    built by hand. Names a branch assigns that also live outside it would become
    carried scf.if results, so such branches are refused.
    """

    def edits(self) -> list[Edit]:
        rule = self.rule
        statement, target = self.bound_statement()
        function = kernel_function(rule, self.call)
        block = unconditional_block(rule, statement)
        has_else = self._signature()
        then = self._region(next_statement(block, statement), target.id, "then")
        regions = [then]
        if has_else:
            regions.append(self._region(next_statement(block, then), target.id, "else"))
        self._check_reads(target, regions)
        for region in regions:
            self._check_body(region, function)
        header_end = end_of(rule, then.items[0].context_expr)
        if has_comments(rule, start_of(rule, statement), header_end):
            raise Refusal("a comment in the `if` header would be lost")
        edits = [Edit(start_of(rule, statement), header_end, f"if {rule.text(self.call.args[0])}")]
        if has_else:
            edits.append(Edit(start_of(rule, regions[1]), end_of(rule, regions[1].items[0].context_expr), "else"))
        for region in regions:
            last = region.body[-1]
            if self._is_yield(last):
                edits.append(delete_or_pass(rule, last, block_left_empty=len(region.body) == 1))
        return edits

    def _signature(self) -> bool:
        """Whether the op has an else region; refused for result types or other arguments."""
        call = self.call
        if len(call.args) not in (1, 2) or any(isinstance(a, ast.Starred) for a in call.args):
            raise Refusal("the op is not built as `scf.IfOp(cond[, []], hasElse=...)`")
        if len(call.args) == 2 and not (isinstance(call.args[1], (ast.List, ast.Tuple)) and not call.args[1].elts):
            raise Refusal("the op yields values (carried results need an initialisation of matching type "
                          "before a Python `if`; rewrite it by hand)")
        has_else = False
        for keyword in call.keywords:
            if keyword.arg not in _HAS_ELSE or not (isinstance(keyword.value, ast.Constant) and isinstance(keyword.value.value, bool)):
                raise Refusal(f"the op takes `{keyword.arg}=`, which a Python `if` cannot express")
            has_else = keyword.value.value
        return has_else

    def _region(self, statement: ast.stmt | None, name: str, which: str) -> ast.With:
        """The `with` entering the `which` region right after the previous statement."""
        refusal = Refusal(f"the {which} region is not entered by a `with` right after the "
                          f"{'op' if which == 'then' else 'then region'}")
        if not isinstance(statement, ast.With) or len(statement.items) != 1 or statement.items[0].optional_vars:
            raise refusal
        entered = statement.items[0].context_expr
        if not (isinstance(entered, ast.Call) and entered.args and not entered.keywords):
            raise refusal
        callee = self.rule.model.resolve(entered.func) or ""
        by_point = callee == _INSERTION_POINT and len(entered.args) == 1 and is_attribute_of(entered.args[0], name, f"{which}_block")
        by_helper = callee.rpartition(".")[2] == f"_if_{which}" and callee in _IF_HELPERS \
            and isinstance(entered.args[0], ast.Name) and entered.args[0].id == name
        if not (by_point or by_helper):
            raise refusal
        yields = [n for s in statement.body for n in ast.walk(s) if isinstance(n, ast.Call) and scf_op(self.rule, n) in ("YieldOp", "yield_")]
        if by_point and not (yields and self._is_yield(statement.body[-1])):
            raise Refusal(f"the {which} region does not end in `scf.YieldOp([])`")
        if len(yields) > (1 if self._is_yield(statement.body[-1]) else 0):
            raise Refusal(f"the {which} region yields more than once, values, or in a nested region")
        return statement

    def _is_yield(self, statement: ast.stmt) -> bool:
        value = statement.value if isinstance(statement, ast.Expr) else None
        return isinstance(value, ast.Call) and scf_op(self.rule, value) in ("YieldOp", "yield_") and not value.keywords \
            and len(value.args) == 1 and isinstance(value.args[0], (ast.List, ast.Tuple)) and not value.args[0].elts

    def _check_reads(self, target: ast.Name, regions: list[ast.With]) -> None:
        entered = [region.items[0].context_expr for region in regions]
        for read in reads_of(self.rule, target):
            if not any(within(e, read) for e in entered):
                raise Refusal(f"the op escapes (`{target.id}` is used on line {read.lineno})")

    def _check_body(self, region: ast.With, function: ast.AST) -> None:
        for node in own_nodes(region.body):
            if isinstance(node, (ast.Return, ast.Break, ast.Continue, ast.Yield, ast.YieldFrom)):
                raise Refusal(f"a region has a `{type(node).__name__.lower()}` of its own")
            if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store) and self._lives_outside(node, region, function):
                raise Refusal(f"a region assigns `{node.id}`, which lives outside it "
                              "(a Python `if` would carry it as an scf.if result)")

    def _lives_outside(self, name: ast.Name, region: ast.With, function: ast.AST) -> bool:
        for scope in self.rule.model.scopes:
            if scope.node is function:
                return any(not within(region, b.node) for b in scope.bindings.get(name.id, []))
        return True


_IF_KERNEL = ("import flydsl.compiler as flyc\nimport flydsl.expr as fx\n{raw}\n\n@flyc.kernel\n"
              "def k(x: fx.Int32):\n    low = fx.as_ir_value(x < 32)\n")


@register
class ManualScfIf(Rule):
    """A hand-built `scf.IfOp` (insertion points, explicit `scf.YieldOp`,
    `.results[...]`) is what the rewriter emits for a Python `if` on a typed
    condition inside `@flyc.kernel`/`@flyc.jit`; a plain helper outside the
    rewriter gets a local `@flyc.jit` function. Values produced by the branch
    become carried state initialised before the `if`. A `scf.IfOp` is reported
    here only (not under §3), once per op.

    The unsafe fix rewrites a result-less `op = scf.IfOp(cond)` (or
    `scf.IfOp(cond, [], hasElse=True)`) in a `@flyc.kernel`/`@flyc.jit` body whose
    then region (and else region, when it has one) is entered right after it by
    `with ir.InsertionPoint(op.then_block):` ending in `scf.YieldOp([])` or by
    `with _if_then(op):`/`with _if_else(op):` as `if cond: ... else: ...`, the
    yields dropped. It refuses, and the message says why, when the op is not in a
    kernel/jit body, is built under an `if`/`try` or not bound to a name of its
    own; it yields values (carried results need an initialisation of matching
    type before the branch, which the model cannot give yet: rewrite those by
    hand, never with `None`); a region is not entered right after the previous
    one, yields more than once, values or in a nested region; a region has its
    own `return`/`break`/`continue`/`yield` or assigns a name that lives outside
    it (a Python `if` would carry it); the op is used otherwise; or a comment
    sits in the header. A plain helper outside traced code keeps the op: its
    local `@flyc.jit` boundary is a choice of the author's."""

    code = "FLY501"
    call_names, call_modules = SCF_CALL_NAMES, SCF_CALL_MODULES
    valid = [
        "import flydsl.compiler as flyc\n@flyc.jit\ndef guard(pred, store):\n    if pred:\n        store()\n",
        "from flydsl._mlir.dialects import scf\nok = isinstance(op, scf.IfOp)\n",
        "def f(scf):\n    return scf.IfOp(c)\n",
    ]
    invalid = [
        Invalid(_IF_KERNEL.format(raw="from flydsl._mlir import ir\nfrom flydsl._mlir.dialects import scf\n")
                + "    op = scf.IfOp(low, [], has_else=True)\n    with ir.InsertionPoint(op.then_block):\n"
                "        fx.printf(x)\n        scf.YieldOp([])\n    with ir.InsertionPoint(op.else_block):\n"
                "        scf.YieldOp([])\n",
                fixed=_IF_KERNEL.format(raw="") + "    if low:\n        fx.printf(x)\n    else:\n        pass\n",
                unsafe=True, at=(10, 10),
                message="Manual `scf.IfOp`: use a Python `if` on the typed condition in traced code, or a local `@flyc.jit` helper outside it"),
        Invalid("from flydsl._mlir.dialects import scf\nfrom flydsl._mlir import ir\nif_op = scf.IfOp(pred, [ty], hasElse=True)\n"
                "with ir.InsertionPoint(if_op.then_block):\n    pass\n",
                message="Manual `scf.IfOp`: use a Python `if` on the typed condition in traced code, or a local `@flyc.jit` helper outside it; no automatic rewrite: it is not in a @flyc.kernel/@flyc.jit body"),
        Invalid("from flydsl._mlir.dialects import scf as _scf\nfrom kernels.common.kernels_common import _if_then\n"
                "with _if_then(_scf.IfOp(cond)):\n    store()\n"),
        Invalid("from flydsl._mlir import ir\ndef epilog(row_pred, scf=None):\n    if_row = scf.IfOp(row_pred)\n"
                "    with ir.InsertionPoint(if_row.then_block):\n        store()\n"),
    ]

    def visit_Call(self, node: ast.Call) -> None:
        op = scf_op(self, node)
        if op not in ("IfOp", "if_"):
            return
        fix, note = None, ""
        if op == "IfOp":
            fix, note = codemod_fix(self, _IfRewrite(self, node).edits, "Rewrite the raw scf.IfOp as a Python `if`")
        self.report(node, note=note, fix=fix)


@register
class IfThenHelper(Rule):
    """`_if_then(if_op)` / `_if_else(if_op)` context managers open the regions
    of a hand-built `scf.IfOp` and append its `scf.YieldOp`. A Python `if`
    in traced code (or in a local `@flyc.jit` helper) replaces them. When the
    `IfOp` is built inline as the argument, only the `IfOp` is reported (FLY501), so
    one expression gets one diagnostic."""

    code = "FLY502"
    follows = _IF_HELPERS
    call_names = _IF_HELPER_NAMES
    valid = [
        "from flydsl._mlir.dialects import scf\nfrom kernels.common.kernels_common import _if_then\n"
        "with _if_then(scf.IfOp(cond)):\n    store()\n",
        "def _if_then(x):\n    return x\n_if_then(3)\n",
    ]
    invalid = [
        Invalid("from kernels.common.kernels_common import _if_then, _if_else\n"
                "with _if_then(if_op):\n    a()\nwith _if_else(if_op):\n    b()\n", count=2),
        Invalid("from contextlib import contextmanager\n@contextmanager\ndef _if_then(op):\n    yield op\n"
                "with _if_then(make_if()):\n    a()\n"),
    ]
    use_instead = "if cond:\n    a()\nelse:\n    b()"

    def visit_Call(self, node: ast.Call) -> None:
        func = node.func
        name = self.model.resolve(func)
        if name:
            if name.rpartition(".")[2] not in _IF_HELPER_NAMES:
                return
        elif isinstance(func, ast.Name) and func.id in _IF_HELPER_NAMES:
            binding = self.model.binding_of(func)
            if binding is None or binding.kind != "def" or not any(
                    (self.model.resolve(d) or "").endswith("contextmanager") for d in binding.node.decorator_list):
                return
        else:
            return
        if node.args and isinstance(node.args[0], ast.Call) and _is_if_op(self, node.args[0]):
            return  # an inline IfOp is reported once, by FLY501
        self.report(node, helper=func.id if isinstance(func, ast.Name) else func.attr)


def _dispatch_rewrite(rule: Rule, call: ast.Call) -> list[Edit]:
    """`scf_if_dispatch(cond, then_fn[, else_fn])` as a statement of traced code, the
    branches local `def`s without parameters, rewritten as `if cond: then_fn()` (`else:
    else_fn()`). The rewriter lowers that `if` through the same dispatcher, whose
    branches it then calls the same way (`fn()`, no carried state)."""
    statement = rule.model.parent(call)
    if not (isinstance(statement, ast.Expr) and statement.value is call):
        raise Refusal("its result is used")
    kernel_function(rule, call)
    if call.keywords or len(call.args) not in (2, 3) or any(isinstance(a, ast.Starred) for a in call.args):
        raise Refusal("it passes state or keywords (`state_names`/`result_names` carry values a Python `if` "
                      "would have to initialise before the branch)")
    for branch in call.args[1:]:
        binding = rule.model.binding_of(branch) if isinstance(branch, ast.Name) else None
        function = binding.node if binding is not None and binding.kind == "def" and rule.model.is_single_binding(binding) else None
        if not isinstance(function, ast.FunctionDef) or _takes_arguments(function.args):
            raise Refusal(f"`{rule.text(branch)}` is not a local `def` without parameters")
    indent = " " * start_of(rule, statement).col
    text = f"if {rule.text(call.args[0])}:\n{indent}    {rule.text(call.args[1])}()"
    if len(call.args) == 3:
        text += f"\n{indent}else:\n{indent}    {rule.text(call.args[2])}()"
    return [rule.replace(statement, text)]


def _takes_arguments(arguments: ast.arguments) -> bool:
    return bool(arguments.posonlyargs or arguments.args or arguments.vararg or arguments.kwonlyargs or arguments.kwarg)


_DISPATCH_KERNEL = ("import flydsl.compiler as flyc\nimport flydsl.expr as fx\n{imports}\n\n@flyc.kernel\n"
                    "def k(x: fx.Int32):\n    def _store():\n        fx.printf(x)\n\n")


@register
class ScfIfDispatchCall(Rule):
    """Calling `ReplaceIfWithDispatch.scf_if_dispatch` directly reaches into the
    AST rewriter's internals (state names/values lists, callbacks). The guide
    asks for the public decorator: a local `@flyc.jit` function whose Python
    `if` the rewriter lowers.

    The unsafe fix rewrites a statement `scf_if_dispatch(cond, then_fn[, else_fn])`
    in a `@flyc.kernel`/`@flyc.jit` body whose branches are local `def`s without
    parameters as `if cond: then_fn()` (`else: else_fn()`). It refuses, and the
    message says why, outside traced code (a local `@flyc.jit` boundary there is
    the author's choice), when the result is used, when state or keywords are
    passed (carried values need an initialisation of matching type before the
    branch, never `None`), or when a branch is not such a `def`."""

    code = "FLY503"
    call_names = leaves([_DISPATCH])
    follows = frozenset({_DISPATCH})
    valid = [
        "import flydsl.compiler as flyc\n@flyc.jit\ndef store_if(active):\n    if active:\n        store()\n",
        "from flydsl.compiler.ast_rewriter import ReplaceIfWithDispatch\nname = 'scf_if_dispatch'\n",
    ]
    invalid = [
        Invalid(_DISPATCH_KERNEL.format(imports="from flydsl.compiler.ast_rewriter import ReplaceIfWithDispatch\n")
                + "    ReplaceIfWithDispatch.scf_if_dispatch(x < 32, _store)\n",
                fixed=_DISPATCH_KERNEL.format(imports="") + "    if x < 32:\n        _store()\n", unsafe=True, at=(11, 5),
                message="Direct `scf_if_dispatch` call: use a local `@flyc.jit` function with a Python `if`"),
        Invalid("from flydsl.compiler.ast_rewriter import ReplaceIfWithDispatch\n"
                "scf_if_dispatch = ReplaceIfWithDispatch.scf_if_dispatch\nscf_if_dispatch(active, _store)\n",
                at=(3, 1), message="Direct `scf_if_dispatch` call: use a local `@flyc.jit` function with a Python `if`; no automatic rewrite: it is not in a @flyc.kernel/@flyc.jit body"),
        Invalid("from flydsl.compiler.ast_rewriter import ReplaceIfWithDispatch as R\n"
                "out = R.scf_if_dispatch(c, then_fn, state_names=names, state_values=vals)\n"),
    ]

    def visit_Call(self, node: ast.Call) -> None:
        name = self.model.resolve(node.func)
        if not name:
            return
        if name == _DISPATCH or (name.endswith(".scf_if_dispatch") and not name.startswith("flydsl.")):
            # a project module re-exporting the rewriter's dispatcher under its name
            fix, note = codemod_fix(self, lambda: _dispatch_rewrite(self, node), "Rewrite the dispatch as a Python `if`")
            self.report(node, note=note, fix=fix)


@register
class ConstExprRuntimeValue(Rule):
    """`const_expr(x)` asserts that `x` is a compile-time Python value. Thread,
    block and lane ids and loaded values are run-time SSA values: wrapping
    them (or a condition built from them) in `const_expr` is a bug — it
    raises or silently picks one branch at trace time. Use a plain `if` on
    the typed value."""

    code = "FLY511"
    calls = _CONST_EXPR
    follows = _RUNTIME_SOURCES
    valid = [
        "from flydsl.expr import const_expr\nif const_expr(BLOCK < 64):\n    pass\n",
        "from flydsl.expr import const_expr, gpu\ntid = gpu.thread_id('x')\nif tid < 4:\n    pass\n",
        "from flydsl.expr import const_expr\nif const_expr(ctx.active_threads < traits.BLOCK_SIZE):\n    pass\n",
    ]
    invalid = [
        Invalid("from flydsl.expr import const_expr, gpu\nif const_expr(gpu.thread_id('x') == 0):\n    pass\n"),
        Invalid("from flydsl.compiler.ast_rewriter import const_expr\nfrom flydsl.expr import gpu\n"
                "if const_expr(gpu.thread_id('x') == 0):\n    pass\n"),  # the same function, re-exported
        Invalid("import flydsl.expr as fx\ntid = fx.thread_idx.x\nlane = tid % 64\nif fx.const_expr(lane < 32):\n    pass\n"),
        Invalid("from flydsl.expr import const_expr\nfrom kernels.common import buffer_ops\n"
                "flag = buffer_ops.buffer_load(rsrc, off, vec_width=1)\nif const_expr(flag):\n    pass\n"),
    ]
    use_instead = "if lane < 32:   # a run-time condition: the rewriter emits scf.if"

    def visit_Call(self, node: ast.Call) -> None:
        if len(node.args) != 1:
            return
        found = runtime_value(self, node.args[0])
        if found:
            self.report(node, source=found)


def _assigned_names(body: list[ast.stmt]) -> set[str]:
    names: set[str] = set()
    pending = list(body)
    while pending:
        stmt = pending.pop()
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            continue
        if isinstance(stmt, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
            targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
            for target in targets:
                names.update(n.id for n in ast.walk(target) if isinstance(n, ast.Name))
        for field in ("body", "orelse", "finalbody"):
            pending.extend(getattr(stmt, field, []) or [])
    return names


def _assigns_none(stmt: ast.stmt) -> bool:
    """`name = None`."""
    return (isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name)
            and isinstance(stmt.value, ast.Constant) and stmt.value.value is None)


@register
class NoneBeforeRuntimeBranch(Rule):
    """In traced code a variable assigned inside an `if` on a run-time
    condition becomes an `scf.if` result, so its value before the branch is
    the carried initial state. `None` cannot become an SSA result: initialise
    it with a value of the type the branch assigns (the guide's "initialize
    carried values before the branch with matching types")."""

    code = "FLY512"
    follows = _RUNTIME_SOURCES | TYPED_SCALARS
    valid = [
        "import flydsl.compiler as flyc\nimport flydsl.expr as fx\n@flyc.kernel\ndef k(n: fx.Int32):\n"
        "    tid = fx.thread_idx.x\n    acc = fx.Float32(0.0)\n    if tid < n:\n        acc = fx.Float32(1.0)\n",
        "import flydsl.compiler as flyc\n@flyc.kernel\ndef k(ctx):\n    pred = None\n"
        "    if ctx is not None:\n        pred = ctx\n",
        "import flydsl.expr as fx\ndef host():\n    tid = fx.thread_idx.x\n    x = None\n    if tid < 4:\n        x = 1\n",
        "import flydsl.compiler as flyc\nfrom flydsl.expr import const_expr\n@flyc.jit\ndef f(flag):\n"
        "    x = None\n    if const_expr(flag):\n        x = 2\n",
    ]
    invalid = [
        Invalid("import flydsl.compiler as flyc\nimport flydsl.expr as fx\n@flyc.kernel\ndef k(n: fx.Int32):\n"
                "    tid = fx.thread_idx.x\n    val = None\n    if tid < n:\n        val = fx.Float32(1.0)\n"),
        Invalid("import flydsl.compiler as flyc\nimport flydsl.expr as fx\n@flyc.jit\ndef f(a: fx.Int32, b: fx.Int32):\n"
                "    out = None\n    if a > b:\n        out = a\n    else:\n        out = b\n    return out\n"),
    ]
    use_instead = "val = fx.Float32(0.0)\nif tid < n:\n    val = fx.Float32(1.0)"

    @cached_property
    def _none_owners(self) -> set[ast.AST]:
        """The nodes whose blocks hold a `name = None` statement (or a `name: T = None`,
        which `visit_If` then passes over): from the model's list of name assignments."""
        return {self.model.parent(stmt) for stmt, _, value in self.model.name_assignments()
                if type(value) is ast.Constant and value.value is None}

    def visit_If(self, node: ast.If) -> None:
        parent = self.model.parent(node)
        if parent not in self._none_owners:
            return  # the cheap test first: most ifs follow no `x = None`
        body = None
        for field in ("body", "orelse", "finalbody"):
            block = getattr(parent, field, None)
            if isinstance(block, list) and node in block:
                body = block
        if body is None or not any(_assigns_none(stmt) for stmt in body[: body.index(node)]):
            return
        if not self.model.in_traced_code(node) or not runtime_condition(self, node.test):
            return
        assigned = _assigned_names(node.body) | _assigned_names(node.orelse)
        for stmt in reversed(body[: body.index(node)]):
            if _assigns_none(stmt) and stmt.targets[0].id in assigned:
                self.report(stmt, name=stmt.targets[0].id)
                assigned.discard(stmt.targets[0].id)
            elif isinstance(stmt, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
                targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
                for target in targets:
                    assigned -= {n.id for n in ast.walk(target) if isinstance(n, ast.Name)}
