"""§3 raw `scf` ops -> Python control flow in traced code."""

from __future__ import annotations

import ast

from ..engine.diagnostics import Edit
from ..engine.project import release_paths
from ._base import Invalid, Rule, register
from ._codemods import (Codemod, Refusal, bound_once, codemod_fix, delete_or_pass, delete_statement, end_of,
                        fresh_name, has_comments, is_attribute_of, kernel_function, next_statement, own_nodes,
                        reads_of, replace_with_edits, scope_nodes, single_name_assignment, start_of, unconditional_block,
                        within)
from ._flydsl import INDEX_TYPES, RAW_ARITH
from ._raw_dialects import SCF_CALL_MODULES, SCF_CALL_NAMES, scf_op

_INSERTION_POINT = "flydsl._mlir.ir.InsertionPoint"
# Calls whose result is an index-typed value (typed or raw).
_INDEX_VALUES = release_paths("flydsl.expr.Index", "flydsl.expr.arith.index")
_INDEX_CONSTANT = release_paths("flydsl.expr.arith.constant")
_INDEX_CAST = release_paths("flydsl.expr.arith.index_cast")
_AS_IR_VALUE = release_paths("flydsl.expr.as_ir_value")
# The index type as the raw dialect's builders take it: `T.index` of flydsl.expr.typing is a
# property, `index` of flydsl._mlir.extras.types a function, `ir.IndexType.get` a constructor.
_INDEX_TYPE_PROPERTIES = frozenset({"flydsl.expr.typing.T.index", "flydsl.expr.T.index"})
_INDEX_TYPE_FUNCTIONS = frozenset({"flydsl._mlir.extras.types.index", "flydsl._mlir.ir.IndexType.get"})
_RAW_CONSTANT_OP = f"{RAW_ARITH}.ConstantOp"
_RAW_CONSTANT = f"{RAW_ARITH}.constant"


def _is_index_typed(rule: Rule, node: ast.expr, depth: int = 0) -> bool:
    """Whether a loop bound is provably index-typed: `arith.index(n)`, `fx.Index(x)`,
    `arith.constant(n, index=True)`, `arith.index_cast(T.index, x)`, their raw value
    (`.ir_value()`, `fx.as_ir_value(...)`), a raw index constant (`ConstantOp(T.index(), n).result`,
    `constant(T.index(), n)` of the raw arith dialect), or a name bound once to one of those."""
    if depth > 4:
        return False
    model = rule.model
    if isinstance(node, ast.Name):
        binding = model.binding_of(node)
        if binding is None or binding.kind != "assign" or not model.is_single_binding(binding):
            return False
        assignment = single_name_assignment(rule, _assigned_value(rule, binding.node))
        return assignment is not None and _is_index_typed(rule, assignment[0].value, depth + 1)
    if isinstance(node, ast.Attribute) and node.attr == "result" and isinstance(node.value, ast.Call):
        return _is_raw_index_constant(rule, node.value, _RAW_CONSTANT_OP)
    if not isinstance(node, ast.Call):
        return False
    func = node.func
    if isinstance(func, ast.Attribute) and func.attr == "ir_value" and not node.args:
        return _is_index_typed(rule, func.value, depth + 1)
    name = model.resolve(func)
    if name in _AS_IR_VALUE and len(node.args) == 1:
        return _is_index_typed(rule, node.args[0], depth + 1)
    if name in _INDEX_VALUES:
        return True
    if name in _INDEX_CONSTANT:
        return any(k.arg == "index" and isinstance(k.value, ast.Constant) and k.value.value is True
                   for k in node.keywords)
    if name in _INDEX_CAST and node.args:
        return model.resolve(node.args[0]) in INDEX_TYPES
    return _is_raw_index_constant(rule, node, _RAW_CONSTANT)


def _is_raw_index_constant(rule: Rule, call: ast.Call, builder: str) -> bool:
    """Whether `call` is `builder(<index type>, value)`: the raw arith constant of type index."""
    if rule.model.resolve(call.func) != builder or len(call.args) != 2:
        return False
    result_type = call.args[0]
    if isinstance(result_type, ast.Call):
        return not result_type.args and not result_type.keywords \
            and rule.model.resolve(result_type.func) in _INDEX_TYPE_FUNCTIONS
    return rule.model.resolve(result_type) in _INDEX_TYPE_PROPERTIES


def _assigned_value(rule: Rule, target: ast.AST) -> ast.expr | None:
    statement = rule.model.parent(target)
    return statement.value if isinstance(statement, ast.Assign) else None


class _ForRewrite(Codemod):
    """`loop = scf.ForOp(lo, hi, step, [inits])` + `with ir.InsertionPoint(loop.body):` + a
    last `scf.YieldOp([...])` + reads of `loop.results[k]` after it, rewritten as
    `for iv, state in range(lo, hi, step, init=[inits]):` ... `state = yield [...]`.

    The rewriter's `range(..., init=)` builds the same `scf.for` (every release from
    0.3.0 on): bounds go through `_to_index` (index values pass unchanged), inits
    through `as_ir_value`, the loop target gets the induction variable and the list
    of `inner_iter_args`, and `state = yield [...]` emits the `scf.yield` and binds
    the loop's results (the one result itself when there is one, else the list).
    """

    def edits(self) -> list[Edit]:
        rule, call = self.rule, self.call
        self.statement, self.target = self.bound_statement()
        self.function = kernel_function(rule, call)
        block = unconditional_block(rule, self.statement)
        self.with_ = self._insertion_point(next_statement(block, self.statement))
        inits = self._inits()
        self.count = len(inits.elts) if inits is not None else 0
        lo, hi, step = call.args[:3]
        for bound in (lo, hi, step):
            if not _is_index_typed(rule, bound):
                raise Refusal(f"the bound `{rule.text(bound)}` is not provably index-typed "
                              "(an i32 bound would change the induction variable's type)")
        self.yield_ = self._final_yield()
        self._check_body()
        if rule.model.is_bound_anywhere("range"):
            raise Refusal("`range` is rebound in this file")
        body_reads, result_reads = self._reads()
        state = fresh_name(rule, "state", f"{self.target.id}_state") if self.count else fresh_name(rule, "_", "state")
        iv, iv_statement = self._induction_variable(body_reads)
        init = rule.text(inits) if inits is not None else "[]"
        header_end = end_of(rule, self.with_.items[0].context_expr)
        if has_comments(rule, start_of(rule, self.statement), header_end):
            raise Refusal("a comment in the loop header would be lost")
        header = f"for {iv}, {state} in range({rule.text(lo)}, {rule.text(hi)}, {rule.text(step)}, init={init})"
        edits = [Edit(start_of(rule, self.statement), header_end, header)]
        for attribute in body_reads:
            if attribute.attr == "induction_variable":
                if iv_statement is None:
                    edits.append(rule.replace(attribute, iv))
            else:
                edits.append(rule.replace(attribute, state))
        if iv_statement is not None:
            edits.append(delete_statement(rule, iv_statement))
        edits += [rule.replace(node, self._result_text(node, state)) for node in result_reads]
        return self._with_yield_edit(edits, state, iv_statement)

    def _insertion_point(self, statement: ast.stmt | None) -> ast.With:
        target = self.target.id
        refusal = Refusal(f"the op's body is not entered by `with ir.InsertionPoint({target}.body):` right after it")
        if not isinstance(statement, ast.With) or len(statement.items) != 1 or statement.items[0].optional_vars:
            raise refusal
        entered = statement.items[0].context_expr
        if not (isinstance(entered, ast.Call) and self.rule.model.resolve(entered.func) == _INSERTION_POINT
                and len(entered.args) == 1 and not entered.keywords and is_attribute_of(entered.args[0], target, "body")):
            raise refusal
        return statement

    def _inits(self) -> ast.List | ast.Tuple | None:
        call = self.call
        if call.keywords or not 3 <= len(call.args) <= 4 or any(isinstance(a, ast.Starred) for a in call.args):
            raise Refusal("the op is not built as `scf.ForOp(lo, hi, step[, [inits]])`")
        if len(call.args) == 3:
            return None
        inits = call.args[3]
        if not isinstance(inits, (ast.List, ast.Tuple)) or any(isinstance(e, ast.Starred) for e in inits.elts):
            raise Refusal("the inits are not a list of values")
        if any(isinstance(e, ast.Constant) for e in inits.elts):
            raise Refusal("an init is None or a Python scalar")
        return inits

    def _final_yield(self) -> ast.Expr:
        body = self.with_.body
        yields = [n for s in body for n in ast.walk(s) if isinstance(n, ast.Call) and scf_op(self.rule, n) in ("YieldOp", "yield_")]
        last = body[-1]
        if len(yields) != 1:
            raise Refusal("the body does not end in exactly one `scf.YieldOp` (none, repeated or nested)")
        if not (isinstance(last, ast.Expr) and last.value is yields[0]):
            raise Refusal("the `scf.YieldOp` is not the body's last statement")
        values = yields[0].args
        if yields[0].keywords or len(values) > 1 or (values and not isinstance(values[0], (ast.List, ast.Tuple))):
            raise Refusal("the `scf.YieldOp` does not take one list of values")
        arity = len(values[0].elts) if values else 0
        if arity != self.count:
            raise Refusal(f"the `scf.YieldOp` yields {arity} values for {self.count} carried")
        return last

    def _check_body(self) -> None:
        for node in own_nodes(self.with_.body):
            if isinstance(node, (ast.Return, ast.Break, ast.Continue, ast.Yield, ast.YieldFrom)):
                raise Refusal(f"the body has a `{type(node).__name__.lower()}` of its own")

    def _reads(self) -> tuple[list[ast.Attribute], list[ast.expr]]:
        """The op's reads: `.induction_variable`/`.inner_iter_args` in the body, results after it."""
        rule, target = self.rule, self.target.id
        if not bound_once(rule, self.target, self.function):
            raise Refusal(f"`{target}` is bound more than once")
        entered = self.with_.items[0].context_expr.args[0]
        body_reads, result_reads = [], []
        for name in reads_of(rule, self.target):
            attribute = rule.model.parent(name)
            if attribute is entered:
                continue
            if not isinstance(attribute, ast.Attribute):
                raise Refusal(f"the op escapes (`{target}` is used whole on line {name.lineno})")
            inside = within(self.with_, name)
            result = self._result_read(attribute) if name.lineno > self.with_.end_lineno else None
            if not isinstance(attribute.ctx, ast.Load):
                raise Refusal(f"the op has attributes set (`{target}.{attribute.attr}` on line {name.lineno})")
            if inside and attribute.attr in ("induction_variable", "inner_iter_args"):
                body_reads.append(attribute)
            elif result is not None:
                result_reads.append(result)
            else:
                raise Refusal(f"the op escapes or has attributes set (`{target}.{attribute.attr}` on line {name.lineno})")
        return body_reads, result_reads

    def _result_read(self, attribute: ast.Attribute) -> ast.expr | None:
        """`op.results[k]` (k < count), `op.result` (one result) or `op.results` (several)."""
        parent = self.rule.model.parent(attribute)
        if attribute.attr == "results" and isinstance(parent, ast.Subscript) and parent.value is attribute:
            index = parent.slice
            if isinstance(index, ast.Constant) and type(index.value) is int and 0 <= index.value < self.count:
                return parent
            return None
        if attribute.attr == "result" and self.count == 1:
            return attribute
        if attribute.attr == "results" and self.count > 1:
            return attribute
        return None

    def _result_text(self, node: ast.expr, state: str) -> str:
        if isinstance(node, ast.Subscript) and self.count > 1:
            return f"{state}[{node.slice.value}]"
        return state

    def _induction_variable(self, body_reads: list[ast.Attribute]) -> tuple[str, ast.Assign | None]:
        """`k` from a first statement `k = op.induction_variable` (then deleted), else a fresh name."""
        first = self.with_.body[0]
        if isinstance(first, ast.Assign) and first is not self.yield_ and len(first.targets) == 1 \
                and isinstance(first.targets[0], ast.Name) and is_attribute_of(first.value, self.target.id, "induction_variable") \
                and bound_once(self.rule, first.targets[0], self.function) and delete_statement(self.rule, first) is not None \
                and all(r is first.value or r.attr != "induction_variable" for r in body_reads):
            return first.targets[0].id, first
        return fresh_name(self.rule, "iv", f"{self.target.id}_iv"), None

    def _with_yield_edit(self, edits: list[Edit], state: str, iv_statement: ast.Assign | None) -> list[Edit]:
        if self.count:
            # The yielded values may read the block arguments: their edits go inside this one.
            template = f"{state} = yield {{}}"
            yield_edit, edits = replace_with_edits(self.rule, self.yield_.value.args[0], template, edits)
            return edits + [Edit(start_of(self.rule, self.yield_), end_of(self.rule, self.yield_), yield_edit.content)]
        # No carried values: the rewriter appends the empty yield itself.
        others = [s for s in self.with_.body if s is not self.yield_ and s is not iv_statement]
        return edits + [delete_or_pass(self.rule, self.yield_, block_left_empty=not others)]


_FOR_IMPORTS = "import flydsl.compiler as flyc\nimport flydsl.expr as fx\n{raw}from flydsl.expr import arith\n"
_RAW_IMPORTS = "from flydsl._mlir import ir\nfrom flydsl._mlir.dialects import scf\n"
_FOR_KERNEL = "@flyc.kernel\ndef k(x: fx.Float32, n: fx.Int32):\n    lo = arith.index(0)\n    hi = fx.Index(n).ir_value()\n    step = arith.index(1)\n"


@register
class RawScfFor(Rule):
    """A hand-built `scf.ForOp` (with its insertion points, block arguments and
    explicit `scf.YieldOp`) is what the AST rewriter already emits for a Python
    loop in traced code: `range(..., init=[...])` gives an `scf.for` with
    explicit carried state, `range_constexpr` unrolls.

    The unsafe fix rewrites `loop = scf.ForOp(lo, hi, step, [inits])`, the
    `with ir.InsertionPoint(loop.body):` right after it (reads of
    `loop.induction_variable` and `loop.inner_iter_args`), its one final
    `scf.YieldOp([...])` and the reads of `loop.results[k]`/`loop.result` after
    it as `for iv, state in range(lo, hi, step, init=[inits]):` with
    `state[k]` in the body, `state = yield [...]` last and `state` (one result)
    or `state[k]` after the loop. It refuses, and the message says why, when the
    loop is not in a `@flyc.kernel`/`@flyc.jit` body; the op is built under an
    `if`/`try`, not bound to a name of its own, or its body is not entered by
    that `with` right after it; the op escapes (used whole, results read before
    the loop, an attribute set); the yield is not last, is repeated or nested,
    or has the wrong arity; the body has its own `return`/`break`/`continue`/
    `yield`; a bound is not provably index-typed (`range` casts an i32 bound to
    index, which changes the induction variable's type; index-typed are
    `arith.index(n)`, `fx.Index(x)`, `arith.constant(n, index=True)`, the raw
    `arith.ConstantOp(T.index(), n).result` and `arith.constant(T.index(), n)`,
    and names bound once to one of them); an init is `None` or a
    Python scalar; or a comment sits in the loop header."""

    code = "FLY311"
    call_names, call_modules = SCF_CALL_NAMES, SCF_CALL_MODULES
    valid = [
        "import flydsl.expr as fx\nfor i, state in range(0, n, 1, init=[acc]):\n    acc = state + 1\n",
        "from flydsl._mlir.dialects import scf\nif isinstance(op, scf.ForOp):\n    pass\n",
        "def f(scf):\n    return scf.ForOp(lb, ub, step)\n",
    ]
    invalid = [
        Invalid(_FOR_IMPORTS.format(raw=_RAW_IMPORTS) + _FOR_KERNEL + "    loop = scf.ForOp(lo, hi, step, [fx.as_ir_value(x)])\n"
                "    with ir.InsertionPoint(loop.body):\n        i = loop.induction_variable\n"
                "        acc = fx.Float32(loop.inner_iter_args[0])\n"
                "        scf.YieldOp([fx.as_ir_value(acc * acc)])\n    out = fx.Float32(loop.results[0])\n",
                fixed=_FOR_IMPORTS.format(raw="") + _FOR_KERNEL + "    for i, state in range(lo, hi, step, init=[fx.as_ir_value(x)]):\n"
                "        acc = fx.Float32(state[0])\n"
                "        state = yield [fx.as_ir_value(acc * acc)]\n    out = fx.Float32(state)\n",
                unsafe=True, at=(11, 12),
                message="Raw `scf.ForOp`: use a Python loop in traced code (`range(..., init=[...])` for explicit carried state, `range_constexpr` to unroll)"),
        Invalid("from flydsl._mlir.dialects import scf\nloop = scf.ForOp(lb, ub, step, [acc])\n",
                at=(2, 8), message="Raw `scf.ForOp`: use a Python loop in traced code (`range(..., init=[...])` for explicit carried state, `range_constexpr` to unroll); no automatic rewrite: it is not in a @flyc.kernel/@flyc.jit body"),
        Invalid("from flydsl._mlir.dialects import scf as _scf\nfor iv in _scf.for_(0, n, 1):\n    pass\n"),
    ]

    def visit_Call(self, node: ast.Call) -> None:
        op = scf_op(self, node)
        if op not in ("ForOp", "for_"):
            return
        fix, note = None, ""
        if op == "ForOp":
            fix, note = codemod_fix(self, _ForRewrite(self, node).edits,
                                    "Rewrite the raw scf.ForOp as a Python `range(..., init=)` loop")
        self.report(node, op=op, note=note, fix=fix)


_CREATE_BLOCK = "flydsl._mlir.ir.Block.create_at_start"


class _WhileRewrite(Codemod):
    """`loop = scf.WhileOp([types], [inits])`, its two blocks made right after it with
    `ir.Block.create_at_start(loop.before/after, [types])`, a before region that only
    names its arguments and ends in `scf.ConditionOp(cond, [args])`, and an after
    region ending in one `scf.YieldOp([...])`, rewritten as `x = init` then
    `while cond: ...; x = ...`, the before arguments' names carrying the state.

    The rewriter lowers that loop (CanonicalizeWhile, 0.3.0 onward) to an
    `scf.while` over the names the body re-assigns, its before region the
    condition and `scf.condition` passing the arguments through, its after region
    the body and a yield of the new values: nothing is peeled or hoisted.
    """

    def edits(self) -> list[Edit]:
        rule = self.rule
        self.statement, self.target = self.bound_statement()
        self.function = kernel_function(rule, self.call)
        block = unconditional_block(rule, self.statement)
        inits = self._inits()
        before_block = self._block(next_statement(block, self.statement), "before")
        after_block = self._block(next_statement(block, before_block[0]), "after")
        before = self._region(next_statement(block, after_block[0]), before_block[1])
        after = self._region(next_statement(block, before), after_block[1])
        carried, condition = self._before(before, before_block[1])
        yield_ = self._after(after, carried)
        result_reads = self._results(after)
        for name, blocks in ((before_block[1], (before,)), (after_block[1], (after,))):
            for read in reads_of(rule, name):
                if not any(within(b, read) for b in blocks):
                    raise Refusal(f"the block `{name.id}` escapes (line {read.lineno})")
        header_end = end_of(rule, before)
        indent = " " * start_of(rule, self.statement).col
        if has_comments(rule, start_of(rule, self.statement), header_end) or \
                has_comments(rule, start_of(rule, after), end_of(rule, after.items[0].context_expr)):
            raise Refusal("a comment in the loop's set-up would be lost")
        setup = f"\n{indent}".join(f"{name} = {rule.text(value)}" for name, value in zip(carried, inits.elts))
        edits = [Edit(start_of(rule, self.statement), header_end, setup),
                 Edit(start_of(rule, after), end_of(rule, after.items[0].context_expr), f"while {condition}")]
        edits += self._argument_edits(after, after_block[1], carried)
        new_values = []
        for value in yield_.value.args[0].elts:  # the argument edits inside a value go into its text
            value_edit, edits = replace_with_edits(rule, value, "{}", edits)
            new_values.append(value_edit.content)
        edits.append(rule.replace(yield_, f"{', '.join(carried)} = {', '.join(new_values)}"))
        for node in result_reads:
            index = node.slice.value if isinstance(node, ast.Subscript) else 0
            edits.append(rule.replace(node, carried[index]))
        return edits

    def _inits(self) -> ast.List | ast.Tuple:
        call = self.call
        if call.keywords or len(call.args) != 2 or not all(isinstance(a, (ast.List, ast.Tuple)) for a in call.args):
            raise Refusal("the op is not built as `scf.WhileOp([types], [inits])`")
        types, inits = call.args
        if len(types.elts) != len(inits.elts) or not inits.elts:
            raise Refusal("the op's types and inits differ in number, or it carries nothing")
        if any(isinstance(e, (ast.Constant, ast.Starred)) for e in inits.elts):
            raise Refusal("an init is None or a Python scalar")
        self.count = len(inits.elts)
        return inits

    def _block(self, statement: ast.stmt | None, which: str) -> tuple[ast.Assign, ast.Name]:
        value = statement.value if isinstance(statement, ast.Assign) else None
        assignment = single_name_assignment(self.rule, value) if isinstance(value, ast.Call) else None
        if assignment is None or self.rule.model.resolve(value.func) != _CREATE_BLOCK or not value.args \
                or not is_attribute_of(value.args[0], self.target.id, which):
            raise Refusal(f"the {which} block is not made right after the op by `ir.Block.create_at_start`")
        return assignment

    def _region(self, statement: ast.stmt | None, block: ast.Name) -> ast.With:
        if not (isinstance(statement, ast.With) and len(statement.items) == 1 and not statement.items[0].optional_vars):
            raise Refusal("the regions are not entered by `with ir.InsertionPoint(block):` right after the blocks")
        entered = statement.items[0].context_expr
        if not (isinstance(entered, ast.Call) and self.rule.model.resolve(entered.func) == _INSERTION_POINT
                and len(entered.args) == 1 and isinstance(entered.args[0], ast.Name) and entered.args[0].id == block.id):
            raise Refusal("the regions are not entered by `with ir.InsertionPoint(block):` right after the blocks")
        return statement

    def _before(self, region: ast.With, block: ast.Name) -> tuple[list[str], str]:
        """The carried names (the before arguments') and the condition's text."""
        *bindings, last = region.body
        names = [self._argument_binding(s, block) for s in bindings]
        condition = last.value if isinstance(last, ast.Expr) else None
        if not (isinstance(condition, ast.Call) and scf_op(self.rule, condition) == "ConditionOp") or None in names:
            raise Refusal("the before region is more than its arguments and `scf.ConditionOp` (moving it would hoist code)")
        self.condition = condition
        passed = condition.args[1] if len(condition.args) == 2 else None
        carried = [names[index] for index in sorted(range(len(names)), key=lambda i: names[i][1])]
        if not isinstance(passed, (ast.List, ast.Tuple)) or [getattr(e, "id", None) for e in passed.elts] != [n for n, _ in carried] \
                or [k for _, k in carried] != list(range(self.count)):
            raise Refusal("the `scf.ConditionOp` does not pass the before arguments through in order")
        for name, _ in carried:
            if not bound_once(self.rule, next(s.targets[0] for s in bindings if s.targets[0].id == name), self.function):
                raise Refusal(f"`{name}` is bound more than once")
        if any(isinstance(n, ast.Name) and n.id == block.id for n in ast.walk(condition.args[0])):
            raise Refusal(f"the condition reads `{block.id}` itself, not the names of its arguments")
        return [name for name, _ in carried], self.rule.text(condition.args[0])

    def _argument_binding(self, statement: ast.stmt, block: ast.Name) -> tuple[str, int] | None:
        if isinstance(statement, ast.Assign) and len(statement.targets) == 1 and isinstance(statement.targets[0], ast.Name):
            index = _argument_index(statement.value, block.id)
            if index is not None:
                return statement.targets[0].id, index
        return None

    def _after(self, region: ast.With, carried: list[str]) -> ast.Expr:
        yields = [n for s in region.body for n in ast.walk(s) if isinstance(n, ast.Call) and scf_op(self.rule, n) in ("YieldOp", "yield_")]
        last = region.body[-1]
        if len(yields) != 1 or not (isinstance(last, ast.Expr) and last.value is yields[0]):
            raise Refusal("the after region does not end in exactly one `scf.YieldOp`")
        values = yields[0].args
        if yields[0].keywords or len(values) != 1 or not isinstance(values[0], (ast.List, ast.Tuple)) \
                or len(values[0].elts) != self.count:
            raise Refusal(f"the `scf.YieldOp` does not yield {self.count} values")
        for node in own_nodes(region.body):
            if isinstance(node, (ast.Return, ast.Break, ast.Continue, ast.Yield, ast.YieldFrom)):
                raise Refusal(f"the body has a `{type(node).__name__.lower()}` of its own")
        for node in scope_nodes(region.body):  # a name bound in a nested loop is carried too
            if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store) and self._lives_outside(node, region):
                raise Refusal(f"the body assigns `{node.id}`, which lives outside it "
                              "(a Python `while` would carry it)")
        return last

    def _lives_outside(self, name: ast.Name, region: ast.With) -> bool:
        bindings = self.rule.model.bindings_opened_by(self.function)
        return bindings is None or any(not within(region, b.node) for b in bindings.get(name.id, []))

    def _results(self, after: ast.With) -> list[ast.expr]:
        reads = []
        for read in reads_of(self.rule, self.target):
            attribute = self.rule.model.parent(read)
            parent = self.rule.model.parent(attribute)
            if isinstance(attribute, ast.Attribute) and attribute.attr in ("before", "after") \
                    and read.lineno < after.lineno:
                continue  # the block constructions
            if read.lineno > after.end_lineno and isinstance(attribute, ast.Attribute):
                if attribute.attr == "results" and isinstance(parent, ast.Subscript) and _small_index(parent.slice, self.count):
                    reads.append(parent)
                    continue
                if attribute.attr == "result" and self.count == 1:
                    reads.append(attribute)
                    continue
            raise Refusal(f"the op escapes (`{self.target.id}` on line {read.lineno})")
        return reads

    def _argument_edits(self, region: ast.With, block: ast.Name, carried: list[str]) -> list[Edit]:
        edits = []
        for read in reads_of(self.rule, block):
            if read is region.items[0].context_expr.args[0]:
                continue  # the `with` item itself, replaced by the loop header
            subscript = self.rule.model.parent(self.rule.model.parent(read))
            index = _argument_index(subscript, block.id) if isinstance(subscript, ast.Subscript) else None
            if index is None:
                raise Refusal(f"the block `{block.id}` is used otherwise than by `{block.id}.arguments[k]`")
            edits.append(self.rule.replace(subscript, carried[index]))
        return edits


def _argument_index(node: ast.expr, block: str) -> int | None:
    """k for `block.arguments[k]`."""
    if isinstance(node, ast.Subscript) and is_attribute_of(node.value, block, "arguments") \
            and isinstance(node.slice, ast.Constant) and type(node.slice.value) is int:
        return node.slice.value
    return None


def _small_index(node: ast.expr, count: int) -> bool:
    return isinstance(node, ast.Constant) and type(node.value) is int and 0 <= node.value < count


_WHILE_KERNEL = (
    "@flyc.kernel\ndef k(x: fx.Int32, limit: fx.Int32):\n    init = fx.as_ir_value(x)\n"
)


@register
class RawScfWhile(Rule):
    """A hand-built `scf.WhileOp` with before/after blocks and `scf.ConditionOp`
    is a Python `while` loop in a `@flyc.kernel`/`@flyc.jit` body: the rewriter
    builds the same `scf.while`, carrying the re-assigned values.

    The unsafe fix rewrites `loop = scf.WhileOp([types], [inits])` with its blocks
    made right after it (`ir.Block.create_at_start(loop.before, ...)`, then
    `loop.after`), a before region that only names its arguments
    (`x = before.arguments[k]`) and ends in `scf.ConditionOp(cond(x), [x])`, and an
    after region ending in one `scf.YieldOp([...])`, as `x = init` then
    `while cond(x):` with the body and `x = ...` last; reads of `after.arguments[k]`
    and of `loop.results[k]` after the loop become `x`. Nothing is peeled or
    hoisted: it refuses, and the message says why, when the before region does
    more than name its arguments and test, the condition does not pass the
    arguments through in order, or the shape differs otherwise (not a kernel/jit
    body, built conditionally, blocks or regions not right after the op, inits
    `None` or Python scalars, a yield that is not last, repeated or of the wrong
    arity, `return`/`break`/`continue`/`yield` of its own, the body assigning a
    name that lives outside it, an op or block that escapes, a comment in the
    set-up). `scf.ConditionOp` itself is reported too, with its loop's fix."""

    code = "FLY312"
    call_names, call_modules = SCF_CALL_NAMES, SCF_CALL_MODULES
    valid = [
        "import flydsl.expr as fx\nwhile cur < flag:\n    cur = load()\n",
        "from flydsl._mlir.dialects import scf\nops = [scf.WhileOp]\n",
    ]
    invalid = [
        Invalid(_FOR_IMPORTS.format(raw=_RAW_IMPORTS).replace("from flydsl.expr import arith\n", "from flydsl.expr.typing import T\n")
                + _WHILE_KERNEL + "    loop = scf.WhileOp([T.i32], [init])\n"
                "    before = ir.Block.create_at_start(loop.before, [T.i32])\n"
                "    after = ir.Block.create_at_start(loop.after, [T.i32])\n"
                "    with ir.InsertionPoint(before):\n        cur = before.arguments[0]\n"
                "        scf.ConditionOp(fx.as_ir_value(fx.Int32(cur) < limit), [cur])\n"
                "    with ir.InsertionPoint(after):\n        nxt = after.arguments[0]\n"
                "        scf.YieldOp([fx.as_ir_value(fx.Int32(nxt) * 2 + 1)])\n"
                "    total = fx.Int32(loop.results[0])\n",
                fixed=_FOR_IMPORTS.format(raw="").replace("from flydsl.expr import arith\n", "") + _WHILE_KERNEL
                + "    cur = init\n    while fx.as_ir_value(fx.Int32(cur) < limit):\n        nxt = cur\n"
                "        cur = fx.as_ir_value(fx.Int32(nxt) * 2 + 1)\n    total = fx.Int32(cur)\n",
                unsafe=True, at=(9, 12), count=2,
                message="Raw `scf.WhileOp`: use a Python `while` loop in traced code; the rewriter builds the scf.while and its carried values"),
        Invalid("from flydsl._mlir.dialects import scf\nfrom flydsl.expr.typing import T\nw = scf.WhileOp([T.i32], [init])\n",
                message="Raw `scf.WhileOp`: use a Python `while` loop in traced code; the rewriter builds the scf.while and its carried values; no automatic rewrite: it is not in a @flyc.kernel/@flyc.jit body"),
        Invalid("from flydsl._mlir.dialects import scf\nscf.ConditionOp(cond, [cur])\n"),
    ]

    def visit_Call(self, node: ast.Call) -> None:
        op = scf_op(self, node)
        if op not in ("WhileOp", "ConditionOp", "while_"):
            return
        # The loop's fix also fixes its `scf.ConditionOp` (visited after it, in source order).
        condition_fixes = self.context.cache("s3.while_condition_fixes", dict)
        fix, note = condition_fixes.get(id(node)), ""
        if op == "WhileOp":
            rewrite = _WhileRewrite(self, node)
            fix, note = codemod_fix(self, rewrite.edits, "Rewrite the raw scf.WhileOp as a Python `while` loop")
            if fix is not None:
                condition_fixes[id(rewrite.condition)] = fix
        self.report(node, op=op, note=note, fix=fix)


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
