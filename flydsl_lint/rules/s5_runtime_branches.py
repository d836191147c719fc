"""§5 runtime branches inside helper functions."""

from __future__ import annotations

import ast
from collections import deque
from collections.abc import Iterator
from functools import cached_property

from ..engine.diagnostics import Edit, Position
from ..engine.model.types import single_positional
from ..engine.project import release_paths
from ._base import Invalid, Rule, leaves, register
from ._codemods import (Codemod, Refusal, bound_once, codemod_fix, delete_or_pass, delete_statement, enclosing_block,
                        end_of, fresh_name, has_comments, is_attribute_of, kernel_function, next_statement, own_nodes,
                        reads_of, scope_nodes, single_name_assignment, spliced_text, start_of, unconditional_block,
                        within)
from ._edits import reference
from ._flydsl import (
    EXPR, TYPE_MODULES, TYPED_SCALARS, known_scalar_type, term_children, typed_scalar,
)
from ._raw_dialects import SCF_CALL_MODULES, SCF_CALL_NAMES, scf_op

_IF_HELPERS = release_paths("kernels.common.kernels_common._if_then", "kernels.common.kernels_common._if_else")
_IF_HELPER_NAMES = frozenset(name.rpartition(".")[2] for name in _IF_HELPERS)
_DISPATCH = "flydsl.compiler.ast_rewriter.ReplaceIfWithDispatch.scf_if_dispatch"
_JIT = "flydsl.compiler.jit"
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
_CONTEXT_MANAGER = "contextlib.contextmanager"
_HAS_ELSE = ("hasElse", "has_else")
_RESULTS = ("results_", "results")
# An scf.if result type -> the fx scalar classes whose values have it.
_RESULT_CLASSES = {
    "i1": ("Boolean",), "i8": ("Int8", "Uint8"), "i16": ("Int16", "Uint16"), "i32": ("Int32", "Uint32"),
    "i64": ("Int64", "Uint64"), "f16": ("Float16",), "bf16": ("BFloat16",), "f32": ("Float32",),
    "f64": ("Float64",), "index": ("Index",),
}
# Calls that only take the ir.Value out of a typed value (`v.ir_value()` too).
_UNWRAP_MODULES = ("flydsl.expr.arith", "flydsl.expr.utils.arith", "flydsl.expr", "flydsl.expr.typing")
_UNWRAP_LEAVES = ("as_ir_value", "unwrap", "_to_raw")


def _counted(count: int, noun: str) -> str:
    return f"{count} {noun}" if count == 1 else f"{count} {noun}s"


def _zero(scalar: str) -> str:
    """A constant of the fx class `scalar` (its initial carried value)."""
    if scalar == "Boolean":
        return "False"
    return "0.0" if scalar.startswith(("Float", "BFloat")) else "0"


class _Carried:
    """One result of the op: the name the Python `if` carries it in and how it is read."""

    def __init__(self, index: int, type_node: ast.expr, classes: tuple[str, ...]) -> None:
        self.index, self.type_node, self.classes = index, type_node, classes
        self.reads: list[ast.Call] = []  # `fx.Int32(op.results[k])`, in source order
        self.scalar = ""  # the fx class both regions yield
        self.name = ""
        self.binding: ast.Assign | None = None  # `v = fx.Int32(op.results[k])`, whose name is reused


class _IfRewrite(Codemod):
    """`op = scf.IfOp(cond[, [types...]], hasElse=...)` with its then region entered right
    after it (`with ir.InsertionPoint(op.then_block):` ending in `scf.YieldOp([...])`, or
    `with _if_then(op):`) and, with an else, the else region right after that, rewritten as a
    Python `if cond: ... else: ...`.

    In traced code the rewriter lowers that `if` on a dynamic condition through
    `scf_if_dispatch` (every release from 0.3.0 on). Without carried names it builds
    `scf.IfOp(as_ir_value(cond), [], has_else=...)` with an empty `scf.yield` closing each
    region. The names it carries (`_collect_assigned_vars`) are those bound before the `if`
    that a branch assigns, or whose method a branch calls; each becomes an scf.if result of
    the type of its value before the branch (`None` is refused there), and each branch
    yields its value, which must have that type. So the op's results become names
    initialised with a typed constant before the `if` (dead once both branches assign
    them) and assigned the yielded values in each branch; the reads `fx.T(op.results[k])`
    become the name. Any other name a branch would carry is refused.
    """

    def edits(self) -> list[Edit]:
        rule = self.rule
        statement, target = self.bound_statement()
        function = self._owner()
        nested = rule.model.function_kind(function) is None and rule.model.in_traced_code(function)
        boundary = rule.model.function_kind(function) is None and not nested
        # outside traced code an enclosing `if` or `try` is plain Python, run once at trace time
        block = enclosing_block(rule, statement) if boundary else unconditional_block(rule, statement)
        results, has_else = self._signature()
        if results and not has_else:
            raise Refusal("the op has results but no else region")
        if results and boundary:
            raise Refusal("the op has results, which a local `@flyc.jit` boundary does not carry")
        if results and nested:
            raise Refusal("the op has results in a function nested in traced code (not proven there)")
        then = self._region(next_statement(block, statement), target.id, "then", results)
        regions = [then]
        if has_else:
            regions.append(self._region(next_statement(block, then), target.id, "else", results))
        self._check_reads(target, regions, results)
        yielded = [self._yielded(region, which, results) for region, which in zip(regions, ("then", "else"))]
        for region, values in zip(regions, yielded):
            self._check_body(region, values, function, boundary)
        if boundary:
            self._check_boundary(regions, function)
        self._name_results(results, block, function)
        header_end = end_of(rule, then.items[0].context_expr)
        if has_comments(rule, start_of(rule, statement), header_end):
            raise Refusal("a comment in the `if` header would be lost")
        indent = " " * start_of(rule, statement).col
        inits = "".join(f"{r.name} = {self._spell(r.scalar)}({_zero(r.scalar)})\n{indent}" for r in results)
        edits = [Edit(start_of(rule, statement), header_end, f"{inits}if {self._condition()}")]
        if has_else:
            edits.append(Edit(start_of(rule, regions[1]), end_of(rule, regions[1].items[0].context_expr), "else"))
        for region, values in zip(regions, yielded):
            last = region.body[-1]
            if results:
                indent = " " * start_of(rule, last).col
                edits.append(rule.replace(last, f"\n{indent}".join(
                    f"{r.name} = {rule.text(v)}" for r, v in zip(results, values))))
            elif self._yield_values(last) is not None:
                edits.append(delete_or_pass(rule, last, block_left_empty=len(region.body) == 1))
        for result in results:
            if result.binding is not None:
                edits.append(delete_statement(rule, result.binding))
            else:
                edits += [rule.replace(read, result.name) for read in result.reads]
        if boundary:
            return self._boundary_edits(statement, regions[-1], function, edits, first=block[0] is statement)
        return edits

    def _owner(self) -> ast.AST:
        """The function whose body holds the op: a kernel/jit function, a def nested in one
        (the kernel's rewriter rewrites its `if`s too), or a plain helper outside traced code."""
        function = self.rule.model.enclosing_function(self.call)
        if isinstance(function, ast.FunctionDef):
            return function
        return kernel_function(self.rule, self.call)

    def _check_boundary(self, regions: list[ast.With], function: ast.FunctionDef) -> None:
        """Refuse what moving the regions into a nested function would change: names they
        bind that the helper reads elsewhere (locals of that function then), and `global` /
        `nonlocal` statements (the rewriter recompiles that function, closures stubbed)."""
        for node in (n for region in regions for n in ast.walk(region)):
            if isinstance(node, (ast.Global, ast.Nonlocal)):
                raise Refusal(f"a region has a `{type(node).__name__.lower()}` statement (it would name the "
                              "`@flyc.jit` function's scope)")
            if isinstance(node, (ast.Constant, ast.JoinedStr)) and isinstance(getattr(node, "value", ""), str) \
                    and node.end_lineno != node.lineno:
                raise Refusal(f"a string on line {node.lineno} spans lines (indenting it would change it)")
        bound = {name for name, bindings in (self.rule.model.bindings_opened_by(function) or {}).items()
                 if any(within(region, b.node) for b in bindings for region in regions)}
        for node in ast.walk(function):
            if isinstance(node, ast.Name) and node.id in bound and isinstance(node.ctx, ast.Load) \
                    and not any(within(region, node) for region in regions):
                raise Refusal(f"a region binds `{node.id}`, which the helper reads outside the op (it would "
                              "become a local of the `@flyc.jit` function)")

    def _boundary_edits(self, statement: ast.Assign, last: ast.With, function: ast.FunctionDef, edits: list[Edit],
                        first: bool) -> list[Edit]:
        """The rewritten `if` (the `edits`, all inside the op's lines) moved into a local
        `@flyc.jit` function without parameters, defined and called where the op was: called
        while a kernel traces, a jit function runs its rewritten body in place (every release)."""
        rule = self.rule
        lines = rule.context.source.lines
        start, end = start_of(rule, statement), end_of(rule, last)
        rest = lines[end.row - 1][end.col :].strip()
        if lines[start.row - 1][: start.col].strip() or (rest and not rest.startswith("#")):
            raise Refusal("the op shares its lines with other code")
        span_end = Position(end.row, len(lines[end.row - 1]))
        text = spliced_text(rule, Position(start.row, 0), span_end, [_within_lines(e, lines) for e in edits])
        found = reference(rule, _JIT, "flyc", _JIT.rpartition(".")[0])
        if found is None:
            raise Refusal(f"the file binds `flyc` to something else, so `{_JIT}` has no spelling")
        jit, imports = found
        op = statement.targets[0].id
        name = _unused_in(function, f"{op}_dispatch", f"{op}_jit")
        indent = " " * start.col
        body = "\n".join(f"    {line}" if line.strip() else line for line in text.split("\n"))
        spaced = "" if first or not lines[start.row - 2].strip() else "\n"  # a nested def after a blank line
        boundary = f"{spaced}{indent}@{jit}\n{indent}def {name}():\n{body}\n\n{indent}{name}()"
        return [Edit(Position(start.row, 0), span_end, boundary), *imports]

    def _signature(self) -> tuple[list[_Carried], bool]:
        """The op's results and whether it has an else region; refused for other arguments."""
        call = self.call
        if len(call.args) not in (1, 2) or any(isinstance(a, ast.Starred) for a in call.args):
            raise Refusal("the op is not built as `scf.IfOp(cond[, [types]], hasElse=...)`")
        types = call.args[1] if len(call.args) == 2 else None
        has_else = False
        for keyword in call.keywords:
            if keyword.arg in _RESULTS and types is None:
                types = keyword.value
            elif keyword.arg in _HAS_ELSE and isinstance(keyword.value, ast.Constant) and isinstance(keyword.value.value, bool):
                has_else = keyword.value.value
            else:
                raise Refusal(f"the op takes `{keyword.arg}=`, which a Python `if` cannot express")
        if types is None:
            return [], has_else
        if not isinstance(types, (ast.List, ast.Tuple)) or any(isinstance(t, ast.Starred) for t in types.elts):
            raise Refusal(f"its result types `{self.rule.text(types)}` are not a list the codemod can read")
        return [_Carried(k, t, self._result_classes(t)) for k, t in enumerate(types.elts)], has_else

    def _result_classes(self, node: ast.expr) -> tuple[str, ...]:
        """The fx classes whose values have the result type `node` (`T.i32`, `T.f32()`, ...)."""
        name = self.rule.model.resolve(node.func if isinstance(node, ast.Call) and not node.args else node) or ""
        module, _, leaf = name.rpartition(".")
        if module not in TYPE_MODULES or leaf not in _RESULT_CLASSES:
            raise Refusal(f"the result type `{self.rule.text(node)}` is not a scalar type the codemod knows")
        return _RESULT_CLASSES[leaf]

    def _region(self, statement: ast.stmt | None, name: str, which: str, results: list[_Carried]) -> ast.With:
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
        by_helper = self._is_region_helper(entered.func, which) \
            and isinstance(entered.args[0], ast.Name) and entered.args[0].id == name
        if not (by_point or by_helper):
            raise refusal
        if by_helper and results:
            raise Refusal(f"`_if_{which}` closes the {which} region with an empty yield, but the op has results")
        yields = [n for n in self._outside_nested_regions(statement.body)
                  if isinstance(n, ast.Call) and scf_op(self.rule, n) in ("YieldOp", "yield_")]
        values = self._yield_values(statement.body[-1])
        if by_point and values is None:
            raise Refusal(f"the {which} region does not end in its `scf.YieldOp`")
        if len(yields) > (0 if values is None else 1):
            raise Refusal(f"the {which} region yields more than once, or inside a nested block")
        if values is not None and len(values) != len(results):
            raise Refusal(f"the {which} region yields {_counted(len(values), 'value')} for the op's "
                          f"{_counted(len(results), 'result')}")
        return statement

    def _outside_nested_regions(self, body: list[ast.stmt]):
        """The nodes of a region's body, not descending into the region of another op entered
        inside it (`with ir.InsertionPoint(inner.then_block):`): its yields are that op's. The
        Python `if` keeps such an op as it is, built inside the branch."""
        pending: list[ast.AST] = list(body)
        while pending:
            node = pending.pop()
            yield node
            if isinstance(node, ast.With) and self._enters_region(node):
                continue
            pending += ast.iter_child_nodes(node)

    def _enters_region(self, block: ast.With) -> bool:
        entered = [item.context_expr for item in block.items]
        return any(isinstance(e, ast.Call) and e.args and (self.rule.model.resolve(e.func) == _INSERTION_POINT
                                                          or self._is_region_helper(e.func, "then")
                                                          or self._is_region_helper(e.func, "else"))
                   for e in entered)

    def _is_region_helper(self, func: ast.expr, which: str) -> bool:
        """Whether `func` is kernels_common's `_if_<which>` or a module's own `@contextmanager`
        def doing the same: entering `ir.InsertionPoint(<its first parameter>.<which>_block)`
        and appending the empty `scf.YieldOp([])` a region without one needs."""
        model = self.rule.model
        binding = model.binding_of(func) if isinstance(func, ast.Name) else None
        if binding is None or binding.kind != "def":
            callee = model.resolve(func) or ""
            return callee in _IF_HELPERS and callee.rpartition(".")[2] == f"_if_{which}"
        helper = binding.node
        if not model.is_single_binding(binding) or not isinstance(helper, ast.FunctionDef) or not helper.args.args \
                or not any(model.resolve(d) == _CONTEXT_MANAGER for d in helper.decorator_list):
            return False
        parameter = helper.args.args[0].arg
        enters = any(isinstance(n, ast.With) and len(n.items) == 1 and isinstance(point := n.items[0].context_expr, ast.Call)
                     and model.resolve(point.func) == _INSERTION_POINT and len(point.args) == 1
                     and is_attribute_of(point.args[0], parameter, f"{which}_block") for n in helper.body)
        closes = any(isinstance(n, ast.Call) and self._yielded_by(n) == [] for n in ast.walk(helper))
        return enters and closes

    def _yield_values(self, statement: ast.stmt) -> list[ast.expr] | None:
        """The values of `scf.YieldOp([v, ...])` as a statement, else None."""
        return self._yielded_by(statement.value) if isinstance(statement, ast.Expr) else None

    def _yielded_by(self, value: ast.expr) -> list[ast.expr] | None:
        """The values of a call `scf.YieldOp([v, ...])`, else None."""
        if isinstance(value, ast.Call) and scf_op(self.rule, value) in ("YieldOp", "yield_") and not value.keywords \
                and len(value.args) == 1 and isinstance(value.args[0], (ast.List, ast.Tuple)) \
                and not any(isinstance(v, ast.Starred) for v in value.args[0].elts):
            return value.args[0].elts
        return None

    def _check_reads(self, target: ast.Name, regions: list[ast.With], results: list[_Carried]) -> None:
        """Every use of the op is a region header or, after the op, a typed read of a result."""
        entered = [region.items[0].context_expr for region in regions]
        op_end = (regions[-1].end_lineno, regions[-1].end_col_offset)
        for read in reads_of(self.rule, target):
            if any(within(e, read) for e in entered):
                continue
            found = self._result_read(read, len(results))
            if found is None:
                raise Refusal(f"the op escapes (`{target.id}` is used on line {read.lineno})")
            index, node = found
            if (read.lineno, read.col_offset) < op_end:
                raise Refusal(f"result {index} is read on line {read.lineno}, before the op ends")
            wrapper = self.rule.model.parent(node)
            scalar = typed_scalar(self.rule.model, wrapper)
            if scalar is None or single_positional(wrapper) is not node:
                raise Refusal(f"result {index} is read raw on line {read.lineno} (a Python `if` carries an fx "
                              f"value: read it as `fx.<type>({self.rule.text(node)})`)")
            results[index].reads.append(wrapper)

    def _result_read(self, read: ast.Name, count: int) -> tuple[int, ast.expr] | None:
        """`op.results[k]` (or `op.result` of a one-result op): k and that node."""
        attribute = self.rule.model.parent(read)
        if not isinstance(attribute, ast.Attribute) or attribute.value is not read:
            return None
        if attribute.attr == "result" and count == 1:
            return 0, attribute
        subscript = self.rule.model.parent(attribute)
        if attribute.attr == "results" and isinstance(subscript, ast.Subscript) and subscript.value is attribute \
                and isinstance(subscript.slice, ast.Constant) and type(subscript.slice.value) is int \
                and 0 <= subscript.slice.value < count:
            return subscript.slice.value, subscript
        return None

    def _check_body(self, region: ast.With, values: list[ast.expr], function: ast.AST, boundary: bool) -> None:
        """Refuse what a Python `if` would treat otherwise: own control flow, carried names. The
        branch is the region without its yield, then the assignments of the yielded `values`.

        Behind a local `@flyc.jit` boundary the rewriter carries none of the helper's names (it
        carries only names the jit function binds before its `if`, and it binds none): an outer
        name the region rebinds would become a local of that function instead; its items,
        attributes and methods stay the helper's, through the closure."""
        body = region.body[:-1] if self._yield_values(region.body[-1]) is not None else region.body
        for node in own_nodes(body):
            if isinstance(node, (ast.Return, ast.Break, ast.Continue, ast.Yield, ast.YieldFrom)):
                raise Refusal(f"a region has a `{type(node).__name__.lower()}` of its own")
        # Names are carried from anywhere in the branch, loops included.
        for node in [*scope_nodes(body), *(n for v in values for n in ast.walk(v))]:
            if isinstance(node, (ast.Yield, ast.YieldFrom)):
                raise Refusal(f"a region has a `{type(node).__name__.lower()}` of its own")
            if boundary:
                if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store) \
                        and self._lives_outside(node, region, function):
                    raise Refusal(f"a region assigns `{node.id}`, which lives outside it (it would become a "
                                  "local of the `@flyc.jit` function)")
                continue
            stored = _stored_name(node)
            if stored is not None and self._lives_outside(stored, region, function):
                if self._none_before(stored, region, function):
                    raise Refusal(f"a region assigns `{stored.id}`, initialised to None before the op "
                                  "(None cannot become an scf.if result)")
                raise Refusal(f"a region assigns `{stored.id}`, which lives outside it "
                              "(a Python `if` would carry it as an scf.if result)")
            called = _method_receiver(node)
            if called is not None and called.id != "self" and self._lives_outside(called, region, function):
                raise Refusal(f"a region calls a method of `{called.id}`, which lives outside it "
                              "(a Python `if` would carry it as an scf.if result)")

    def _function_bindings(self, name: ast.Name, function: ast.AST) -> list | None:
        bindings = self.rule.model.bindings_opened_by(function)
        return None if bindings is None else bindings.get(name.id, [])

    def _lives_outside(self, name: ast.Name, region: ast.With, function: ast.AST) -> bool:
        """Whether `name` is bound outside the region: in `function` or, for a def nested in
        traced code, in the functions around it up to the kernel (the rewriter tracks their
        names too, so it would carry it and make it a local of `function`)."""
        bindings = self._function_bindings(name, function)
        if bindings is None or any(not within(region, b.node) for b in bindings):
            return True
        return any(name.id in (self.rule.model.bindings_opened_by(outer) or {}) for outer in self._traced_enclosers(function))

    def _traced_enclosers(self, function: ast.AST) -> list[ast.AST]:
        """The functions around `function` whose names the kernel's rewriter tracks: up to and
        including the kernel/jit function, none when `function` is that function."""
        model = self.rule.model
        traced = model.traced_function(function)
        if traced is None or traced is function:
            return []
        enclosers = [a for a in model.ancestors(function) if isinstance(a, (ast.FunctionDef, ast.AsyncFunctionDef))]
        return enclosers[: enclosers.index(traced) + 1]

    def _none_before(self, name: ast.Name, region: ast.With, function: ast.AST) -> bool:
        """Whether a binding of `name` outside the region is `name = None`."""
        for binding in self._function_bindings(name, function) or []:
            statement = self.rule.model.parent(binding.node)
            if not within(region, binding.node) and isinstance(statement, ast.Assign) \
                    and isinstance(statement.value, ast.Constant) and statement.value.value is None:
                return True
        return False

    def _yielded(self, region: ast.With, which: str, results: list[_Carried]) -> list[ast.expr]:
        """The typed values the region yields, one per result, their fx class matched to the result's."""
        values = [_typed_inner(self.rule, v) for v in self._yield_values(region.body[-1]) or []]
        for result, value in zip(results, values):
            scalar = known_scalar_type(self.rule.model, value)
            if scalar is None:
                why = self.rule.model.explain_type(value)[1]
                raise Refusal(f"the {which} region yields `{self.rule.text(value)}` as result {result.index}, "
                              f"whose fx type is not proven ({why})")
            if scalar not in result.classes:
                raise Refusal(f"result {result.index} has type `{self.rule.text(result.type_node)}`, but the "
                              f"{which} region yields an fx.{scalar}")
            if result.scalar and scalar != result.scalar:
                raise Refusal(f"result {result.index} is an fx.{result.scalar} in the then region and an "
                              f"fx.{scalar} in the else region")
            result.scalar = scalar
            for read in result.reads:
                if typed_scalar(self.rule.model, read) != scalar:
                    raise Refusal(f"result {result.index} is read as `{self.rule.text(read.func)}` on line "
                                  f"{read.lineno}, but the regions yield an fx.{scalar}")
        return values

    def _name_results(self, results: list[_Carried], block: list[ast.stmt], function: ast.AST) -> None:
        """Each result's carried name: the target of its one read `v = fx.T(op.results[k])`, when
        that binds `v` once and nothing reads `v` before; else a fresh name."""
        op = self.rule.model.parent(self.call).targets[0].id
        for result in results:
            if len(result.reads) == 1:
                binding = single_name_assignment(self.rule, result.reads[0])
                if binding is not None and binding[0] in block and bound_once(self.rule, binding[1], function) \
                        and all(r.lineno > binding[0].end_lineno for r in reads_of(self.rule, binding[1])) \
                        and delete_statement(self.rule, binding[0]) is not None:
                    result.binding, result.name = binding[0], binding[1].id
                    continue
            suffix = "" if len(results) == 1 else str(result.index)
            result.name = fresh_name(self.rule, f"{op}_result{suffix}", f"{op}_value{suffix}")

    def _spell(self, scalar: str) -> str:
        found = reference(self.rule, f"{EXPR}.{scalar}", "fx", EXPR)
        if found is None or found[1]:
            raise Refusal(f"the file does not import `{EXPR}` to spell the initial fx.{scalar}")
        return found[0]

    def _condition(self) -> str:
        """The condition's text: a typed boolean taken out of its `as_ir_value`-like wrapper."""
        condition = self.call.args[0]
        inner = _typed_inner(self.rule, condition)
        return self.rule.text(inner if known_scalar_type(self.rule.model, inner) == "Boolean" else condition)


def _unused_in(function: ast.FunctionDef, *candidates: str) -> str:
    """The first candidate `function` never names: a new local of it then hides nothing it
    (or a function nested in it) reads, and other functions do not see it."""
    used = {function.name}
    for node in ast.walk(function):
        if isinstance(node, ast.Name):
            used.add(node.id)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            used.add(node.name)
        elif isinstance(node, ast.arg):
            used.add(node.arg)
        elif isinstance(node, ast.alias):
            used.add((node.asname or node.name).partition(".")[0])
        elif isinstance(node, (ast.Global, ast.Nonlocal)):
            used.update(node.names)
    for name in candidates:
        if name not in used:
            return name
    raise Refusal(f"the names {', '.join(f'`{c}`' for c in candidates)} are all taken")


def _within_lines(edit: Edit, lines: list[str]) -> Edit:
    """A deletion of whole lines `[(r, 0), (r + k, 0))` as the same deletion ending on line
    r + k - 1 (from the end of line r - 1), so that it falls inside the lines it removes."""
    if edit.content or edit.start.col or edit.end.col or edit.start.row < 2:
        return edit
    return Edit(Position(edit.start.row - 1, len(lines[edit.start.row - 2])),
                Position(edit.end.row - 1, len(lines[edit.end.row - 2])), "")


def _typed_inner(rule: Rule, node: ast.expr) -> ast.expr:
    """`v` out of `fx.as_ir_value(v)`, `arith.unwrap(v)`, `v.ir_value()` (nested too) when `v` is a
    typed fx value; else `node` itself."""
    inner = node
    while (unwrapped := _unwrapped(rule, inner)) is not None:
        inner = unwrapped
    return inner if known_scalar_type(rule.model, inner) else node


def _unwrapped(rule: Rule, node: ast.expr) -> ast.expr | None:
    """What a call taking the ir.Value out of a value is applied to, else None."""
    if not isinstance(node, ast.Call):
        return None
    if isinstance(node.func, ast.Attribute) and node.func.attr == "ir_value" and not node.args and not node.keywords:
        return node.func.value
    module, _, leaf = (rule.model.resolve(node.func) or "").rpartition(".")
    return single_positional(node) if module in _UNWRAP_MODULES and leaf in _UNWRAP_LEAVES else None


def _stored_name(node: ast.AST) -> ast.Name | None:
    """The name a store writes: `x = ...`, and the base of `x[i] = ...` / `x.a.b = ...`."""
    if not isinstance(node, (ast.Name, ast.Subscript, ast.Attribute)) or not isinstance(node.ctx, ast.Store):
        return None
    while isinstance(node, (ast.Subscript, ast.Attribute)):
        node = node.value
    return node if isinstance(node, ast.Name) else None


def _method_receiver(node: ast.AST) -> ast.Name | None:
    """`x` of a call `x.m(...)` / `x.a.m(...)`: the rewriter carries such a name too."""
    if not isinstance(node, ast.Call) or not isinstance(node.func, ast.Attribute):
        return None
    base = node.func.value
    while isinstance(base, ast.Attribute):
        base = base.value
    return base if isinstance(base, ast.Name) else None


_IF_KERNEL = ("import flydsl.compiler as flyc\nimport flydsl.expr as fx\n{raw}\n\n@flyc.kernel\n"
              "def k(x: fx.Int32):\n    low = fx.as_ir_value(x < 32)\n")
_IF_MESSAGE = "Manual `scf.IfOp`: use a Python `if` on the typed condition in traced code, or a local `@flyc.jit` helper outside it"
_RESULTS_IMPORTS = "from flydsl._mlir import ir\nfrom flydsl._mlir.dialects import scf\nfrom flydsl.expr.typing import T\n"
_RESULTS_KERNEL = ("import flydsl.compiler as flyc\nimport flydsl.expr as fx\n{imports}\n\n@flyc.kernel\n"
                   "def k(x: fx.Int32, y: fx.Float32):\n")
# Values whose fx types every release's table proves (no operator promotion), as the
# fix-since test (tests/engine/test_legacy_paths.py) reaches older targets.
_TWO_RESULTS = ("    op = scf.IfOp(fx.as_ir_value(x < 32), [T.f32, T.i32], has_else=True)\n"
                "    with ir.InsertionPoint(op.then_block):\n        scf.YieldOp([fx.as_ir_value(y), x.ir_value()])\n"
                "    with ir.InsertionPoint(op.else_block):\n"
                "        scf.YieldOp([fx.as_ir_value(fx.Float32(2.0)), fx.as_ir_value(fx.Int32(7))])\n"
                "    fx.printf(fx.Float32(op.results[0]), fx.Int32(op.results[1]))\n")


def _refused_results(reason: str, replaced: dict[str, str], body: str = _TWO_RESULTS) -> Invalid:
    """The two-result kernel (or `body`) with each text of `replaced` swapped for its value,
    refused for `reason`."""
    for old, new in replaced.items():
        body = body.replace(old, new)
    return Invalid(_RESULTS_KERNEL.format(imports=_RESULTS_IMPORTS) + body,
                   message=f"{_IF_MESSAGE}; no automatic rewrite: {reason}")


@register
class ManualScfIf(Rule):
    """A hand-built `scf.IfOp` (insertion points, explicit `scf.YieldOp`,
    `.results[...]`) is what the rewriter emits for a Python `if` on a typed
    condition inside `@flyc.kernel`/`@flyc.jit`; a plain helper outside the
    rewriter gets a local `@flyc.jit` function. Values produced by the branch
    become carried state initialised before the `if`. A `scf.IfOp` is reported
    here only (not under §3), once per op.

    The unsafe fix rewrites `op = scf.IfOp(cond[, [types...]], hasElse=...)` in a
    `@flyc.kernel`/`@flyc.jit` body (or, without results, a def nested in one, whose
    `if`s the kernel's rewriter rewrites too) whose then region (and else region, when it
    has one) is entered right after it by `with ir.InsertionPoint(op.then_block):`
    ending in `scf.YieldOp([...])` or, without results, by `with _if_then(op):` /
    `with _if_else(op):` (kernels_common's, or the module's own `@contextmanager`
    entering `ir.InsertionPoint(<its parameter>.then_block)` and closing it with
    `scf.YieldOp([])`), as `if cond: ... else: ...`. A typed condition comes out
    of its `fx.as_ir_value(...)` / `.ir_value()` / `arith.unwrap(...)` (a raw i1
    stays: the rewriter's dispatcher takes an ir.Value condition as it is). Each
    result becomes a name initialised before the `if` with a typed constant of its
    fx class (`fx.Int32(0)` for `T.i32`: never `None`, which cannot become an
    scf.if result; the constant is dead once both branches assign the name) and
    assigned the yielded value, unwrapped, in each branch; the name is `v` of a
    read `v = fx.Int32(op.results[k])`, else `op_result<k>`, which replaces each
    read `fx.Int32(op.results[k])` (or `op.result`).

    In a plain helper outside traced code, an op without results becomes the
    guide's local boundary: a `@flyc.jit` function without parameters, named
    `<op>_dispatch`, holding that `if`, defined and called where the op was (the
    file gains `import flydsl.compiler as flyc` if it has no spelling of
    `flydsl.compiler.jit`). Called while a kernel traces, a jit function runs its
    rewritten body in place, and its rewriter carries none of the helper's names
    (only names the jit function binds before its `if`), so the helper's items,
    attributes and methods stay reachable through the closure.

    It refuses, and the message says why, when:
    - the op is at module level, is built under an `if`/`try` in traced code (in
      a plain helper those are Python run once at trace time), or is not bound to
      a name of its own;
    - in a def nested in traced code: the op has results, or a region assigns or
      calls a method of a name of the functions around it up to the kernel (the
      rewriter would carry it, a local of the nested def then);
    - in a plain helper: the op has results, a region rebinds a name of the
      helper, binds a name the helper reads outside the op (either would be a
      local of the jit function), has a `global`/`nonlocal` statement or a string
      spanning lines, the op shares its lines with other code, or `flyc` is bound
      to something else;
    - it takes another argument or keyword, its result types are not a literal
      list, a result type is not a scalar type (`T.i1` ... `T.f64`, `T.index`),
      or it has results but no else region;
    - a region is not entered right after the previous one, does not end in its
      `scf.YieldOp`, yields more than once or inside a nested block (the region
      of another op built inside it is that op's: it stays, inside the `if`,
      for its own fix), yields another
      number of values than the op has results, or is entered by `_if_then` /
      `_if_else` (an empty yield) while the op has results;
    - a result is read before the op ends, read raw (not through an fx class),
      or read through another fx class than the regions yield; the op is used
      otherwise;
    - a yielded value's fx type is not proven by the value-type layer, is not of
      the declared result type, or differs between the two regions;
    - a region has its own `return`/`break`/`continue`/`yield`, assigns a name
      that lives outside it (a Python `if` would carry it), one initialised to
      `None` before the op (never an scf.if result), or calls a method of such a
      name (the rewriter carries those too);
    - a comment sits in the header, or the file does not import `flydsl.expr` to
      spell the initial values."""

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
                unsafe=True, at=(10, 10), message=_IF_MESSAGE),
        Invalid(_RESULTS_KERNEL.format(imports=_RESULTS_IMPORTS) + _TWO_RESULTS,
                fixed=_RESULTS_KERNEL.format(imports="") + "    op_result0 = fx.Float32(0.0)\n    op_result1 = fx.Int32(0)\n"
                "    if x < 32:\n        op_result0 = y\n        op_result1 = x\n    else:\n"
                "        op_result0 = fx.Float32(2.0)\n        op_result1 = fx.Int32(7)\n    fx.printf(op_result0, op_result1)\n",
                unsafe=True, message=_IF_MESSAGE),
        Invalid("from flydsl._mlir.dialects import scf\nfrom flydsl._mlir import ir\nif_op = scf.IfOp(pred, [ty], hasElse=True)\n"
                "with ir.InsertionPoint(if_op.then_block):\n    pass\n",
                message=f"{_IF_MESSAGE}; no automatic rewrite: it is not in a @flyc.kernel/@flyc.jit body"),
        Invalid("from flydsl._mlir.dialects import scf as _scf\nfrom kernels.common.kernels_common import _if_then\n"
                "with _if_then(_scf.IfOp(cond)):\n    store()\n"),
        Invalid("from flydsl._mlir import ir\ndef epilog(row_pred, scf=None):\n    if_row = scf.IfOp(row_pred)\n"
                "    with ir.InsertionPoint(if_row.then_block):\n        store()\n"),
        _refused_results("the op has results but no else region", {"has_else=True": "has_else=False"}),
        _refused_results("its result types `types` are not a list the codemod can read", {"[T.f32, T.i32]": "types"}),
        _refused_results("the result type `T.vec(4, T.f32)` is not a scalar type the codemod knows",
                         {"[T.f32, T.i32]": "[T.vec(4, T.f32), T.i32]"}),
        _refused_results("the then region does not end in its `scf.YieldOp`",
                         {"x.ir_value()])\n": "x.ir_value()])\n        fx.printf(y)\n"}),
        _refused_results("the then region yields more than once, or inside a nested block",
                         {"    with ir.InsertionPoint(op.then_block):\n": "    with ir.InsertionPoint(op.then_block):\n"
                            "        scf.YieldOp([fx.as_ir_value(y), x.ir_value()])\n"}),
        _refused_results("the then region yields 1 value for the op's 2 results", {", x.ir_value()])": "])"}),
        _refused_results("result 0 is read on line 12, before the op ends",
                         {"    with ir.InsertionPoint(op.then_block):\n": "    with ir.InsertionPoint(op.then_block):\n"
                            "        fx.printf(fx.Float32(op.results[0]))\n"}),
        _refused_results("result 0 is read raw on line 15 (a Python `if` carries an fx value: read it as "
                         "`fx.<type>(op.results[0])`)", {"fx.Float32(op.results[0])": "op.results[0]"}),
        _refused_results("result 1 is read as `fx.Uint32` on line 15, but the regions yield an fx.Int32",
                         {"fx.Int32(op.results[1])": "fx.Uint32(op.results[1])"}),
        _refused_results("the else region yields `z` as result 0, whose fx type is not proven "
                         "(unknown: `z` is not bound in this module)", {"fx.as_ir_value(fx.Float32(2.0))": "z"}),
        _refused_results("result 1 has type `T.i64`, but the then region yields an fx.Int32",
                         {"[T.f32, T.i32]": "[T.f32, T.i64]"}),
        _refused_results("result 1 is an fx.Int32 in the then region and an fx.Uint32 in the else region",
                         {"fx.as_ir_value(fx.Int32(7))": "fx.as_ir_value(fx.Uint32(7))"}),
        _refused_results("a region assigns `out`, initialised to None before the op (None cannot become an scf.if result)",
                         {"    with ir.InsertionPoint(op.else_block):\n":
                          "    with ir.InsertionPoint(op.else_block):\n        out = y\n"}, "    out = None\n" + _TWO_RESULTS),
        _refused_results("a region calls a method of `acc`, which lives outside it (a Python `if` would carry it "
                         "as an scf.if result)", {"    with ir.InsertionPoint(op.else_block):\n":
                                                  "    with ir.InsertionPoint(op.else_block):\n        acc.store(y)\n"},
                         "    acc = make_acc()\n" + _TWO_RESULTS),
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
