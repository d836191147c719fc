"""§3 raw `scf` ops -> Python control flow in traced code."""

from __future__ import annotations

import ast

from ..engine.diagnostics import Edit
from ..engine.project import release_paths
from ._base import Invalid, Rule, register
from ._codemods import (Refusal, bound_once, delete_or_pass, delete_statement, end_of, fresh_name, has_comments,
                        is_attribute_of, kernel_function, next_statement, own_nodes, reads_of, replace_with_edits,
                        single_name_assignment, start_of, unconditional_block, within)
from ._raw_dialects import SCF_CALL_MODULES, SCF_CALL_NAMES, scf_op

_INSERTION_POINT = "flydsl._mlir.ir.InsertionPoint"
# Calls whose result is an index-typed value (typed or raw).
_INDEX_VALUES = release_paths("flydsl.expr.Index", "flydsl.expr.arith.index")
_INDEX_CONSTANT = release_paths("flydsl.expr.arith.constant")
_INDEX_CAST = release_paths("flydsl.expr.arith.index_cast")
_AS_IR_VALUE = release_paths("flydsl.expr.as_ir_value")
_INDEX_TYPES = frozenset({"flydsl.expr.typing.T.index", "flydsl.expr.T.index", "flydsl._mlir.extras.types.index"})


def _is_index_typed(rule: Rule, node: ast.expr, depth: int = 0) -> bool:
    """Whether a loop bound is provably index-typed: `arith.index(n)`, `fx.Index(x)`,
    `arith.constant(n, index=True)`, `arith.index_cast(T.index, x)`, their raw value
    (`.ir_value()`, `fx.as_ir_value(...)`), or a name bound once to one of those."""
    if depth > 4:
        return False
    model = rule.model
    if isinstance(node, ast.Name):
        binding = model.binding_of(node)
        if binding is None or binding.kind != "assign" or not model.is_single_binding(binding):
            return False
        assignment = single_name_assignment(rule, _assigned_value(rule, binding.node))
        return assignment is not None and _is_index_typed(rule, assignment[0].value, depth + 1)
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
        return model.resolve(node.args[0]) in _INDEX_TYPES
    return False


def _assigned_value(rule: Rule, target: ast.AST) -> ast.expr | None:
    statement = rule.model.parent(target)
    return statement.value if isinstance(statement, ast.Assign) else None


class _ForRewrite:
    """`loop = scf.ForOp(lo, hi, step, [inits])` + `with ir.InsertionPoint(loop.body):` + a
    last `scf.YieldOp([...])` + reads of `loop.results[k]` after it, rewritten as
    `for iv, state in range(lo, hi, step, init=[inits]):` ... `state = yield [...]`.

    The rewriter's `range(..., init=)` builds the same `scf.for` (every release from
    0.3.0 on): bounds go through `_to_index` (index values pass unchanged), inits
    through `as_ir_value`, the loop target gets the induction variable and the list
    of `inner_iter_args`, and `state = yield [...]` emits the `scf.yield` and binds
    the loop's results (the one result itself when there is one, else the list).
    """

    def __init__(self, rule: Rule, call: ast.Call) -> None:
        self.rule = rule
        self.call = call

    def edits(self) -> list[Edit]:
        rule, call = self.rule, self.call
        assignment = single_name_assignment(rule, call)
        if assignment is None:
            raise Refusal("the op is not bound to a name of its own")
        self.statement, self.target = assignment
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
            if inside and attribute.attr in ("induction_variable", "inner_iter_args"):
                body_reads.append(attribute)
            elif not inside and name.lineno > self.with_.end_lineno and self._result_read(attribute) is not None:
                result_reads.append(self._result_read(attribute))
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
    index, which changes the induction variable's type); an init is `None` or a
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
            try:
                fix = self.make_fix(_ForRewrite(self, node).edits(), "Rewrite the raw scf.ForOp as a Python `range(..., init=)` loop")
            except Refusal as refusal:
                note = f"; no automatic rewrite: {refusal}"
        self.report(node, op=op, note=note, fix=fix)


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
