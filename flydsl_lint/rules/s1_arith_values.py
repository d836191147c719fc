"""§1 ArithValue and index helpers, §1b redundant fx.* wraps."""

from __future__ import annotations

import ast

from ..engine.diagnostics import Applicability
from ..engine.model.types import (
    ARITH_VALUE, IR_VALUE_KINDS, PY_INT, RAW, SCALAR, UNKNOWN, plain_arith_value, scalar_arith_value, single_positional,
)
from ..engine.project import release_paths
from ..engine.versions import Version
from ._base import Invalid, Rule, leaves, register
from ._codemods import reads_of_value, reads_seeing, single_name_assignment
from ._edits import as_method_receiver, fx_wrap, reference, replace_callee, replace_with_argument, run_time_constant_fix
from ._flydsl import (
    EXPR_ARITH, FX_INTEGERS, INDEX_TYPES, RAW_ARITH, RAW_DIALECTS, SAME_OP_OPERATORS, SAME_OP_SCALARS,
    SIGNLESS_INT_OPERATORS, TYPED_SCALARS,
    before_type_table, known_scalar_type, operand_type_reason, qualified, scalar_ir_type, typed_scalar,
)

_TARGET_0_3_1 = {"target_version": Version.parse("0.3.1")}

_HEADER = "import flydsl.expr as fx\nfrom flydsl.expr import arith\nfrom flydsl.expr.typing import T\n"


def _may_carry_signedness(rule: Rule, node: ast.expr) -> str:
    """Why an ArithValue may carry a signedness, through a name assigned once (`v = u.ir_value()`)."""
    binding = rule.model.binding_of(node) if isinstance(node, ast.Name) else None
    statement = rule.model.parent(binding.node) if binding is not None and rule.model.is_single_binding(binding) else None
    if isinstance(statement, ast.Assign) and statement.targets == [binding.node]:
        why = rule.model.explain_type(statement.value)[1]
        return f"`{node.id}` may carry signedness: `{node.id}` is `{rule.text(statement.value)}`: {why}"
    return f"`{rule.text(node)}` may carry signedness: {rule.model.explain_type(node)[1]}"


@register
class ArithValueWrap(Rule):
    """`ArithValue` is deprecated in `expr/arith.py`. Wrapping a value per use hides
    its type; a raw `ir.Value` should be wrapped once at its source with its
    real type (`fx.Float32(v)`), and typed values need no wrapper at all."""

    code = "FLY101"
    calls = qualified(EXPR_ARITH + ("flydsl.expr",), "ArithValue")
    valid = [
        "from flydsl.expr.arith import ArithValue\ndef f(ArithValue):\n    return ArithValue(1)\n",
        "from flydsl.expr.arith import ArithValue\nisinstance(x, ArithValue)\n",
    ]
    invalid = [
        Invalid("from flydsl.expr.arith import ArithValue\nacc = ArithValue(val) + peer\n",
                fixed="acc = val + peer\n", unsafe=True),
        # Safe: a raw arith op's scalar result already is an ArithValue of signed=None (the value caster), in any use.
        Invalid("import flydsl.expr as fx\nfrom flydsl.expr.arith import ArithValue\nfrom flydsl._mlir.dialects import arith\n"
                "def f(a: fx.Int32, b):\n    return ArithValue(arith.AddIOp(a.ir_value(), b).result) // 4\n",
                fixed="import flydsl.expr as fx\nfrom flydsl._mlir.dialects import arith\n"
                      "def f(a: fx.Int32, b):\n    return arith.AddIOp(a.ir_value(), b).result // 4\n",
                at=(5, 12), message="`ArithValue(...)` is deprecated: use the typed value directly, or wrap a raw "
                                    "ir.Value once at its source (`fx.Float32(v)`)"),
        # ... of a vector type it is an fx.Vector (the caster of vector types), whose `//` and `>>` read its
        # element class's signedness: of operands of unknown type, unsafe.
        Invalid("from flydsl.expr.arith import ArithValue\nfrom flydsl._mlir.dialects import arith\n"
                "s = ArithValue(arith.AddIOp(a, b).result) >> 4\n",
                fixed="from flydsl._mlir.dialects import arith\ns = arith.AddIOp(a, b).result >> 4\n", unsafe=True),
        # `.ir_value()` of an fx.Uint32 carries signed=False, which ArithValue resets: unsafe.
        Invalid("import flydsl.expr as fx\nfrom flydsl.expr.arith import ArithValue\n"
                "def f(u: fx.Uint32):\n    v = u.ir_value()\n    return ArithValue(v) // 4\n",
                fixed="import flydsl.expr as fx\ndef f(u: fx.Uint32):\n    v = u.ir_value()\n    return v // 4\n",
                unsafe=True),
        Invalid("from flydsl.expr import arith as A\nlane = A.ArithValue(tid) % 64\n",
                fixed="lane = tid % 64\n", unsafe=True),
        # Every path a release re-exported it from (data/legacy_paths.txt).
        Invalid("from flydsl.expr.typing import ArithValue\nacc = ArithValue(val) + peer\n",
                fixed="acc = val + peer\n", unsafe=True),
        # Safe: an fx.Int32 in `+` with another fx.Int32, the sum re-typed as fx.Int32: the same addi, the same result type.
        Invalid("import flydsl.expr as fx\nfrom flydsl.expr.arith import ArithValue\n"
                "def f(a: fx.Int32, b: fx.Int32):\n    return fx.Int32(ArithValue(a) + b)\n",
                fixed="import flydsl.expr as fx\ndef f(a: fx.Int32, b: fx.Int32):\n    return fx.Int32(a + b)\n"),
        Invalid("import flydsl.expr as fx\nfrom flydsl.expr.arith import ArithValue\n"
                "def f(a: fx.Int64):\n    return fx.Int64(4 * ArithValue(a))\n",
                fixed="import flydsl.expr as fx\ndef f(a: fx.Int64):\n    return fx.Int64(4 * a)\n"),
        # Typed, but the sum would change from an ArithValue to an fx.Int32: unsafe.
        Invalid("import flydsl.expr as fx\nfrom flydsl.expr.arith import ArithValue\n"
                "def f(a: fx.Int32, b: fx.Int32):\n    return ArithValue(a) + b\n",
                fixed="import flydsl.expr as fx\ndef f(a: fx.Int32, b: fx.Int32):\n    return a + b\n", unsafe=True),
        # Safe: a run-time fx.Int32 named once, read only as the right operand of an fx.Int32's `*`:
        # the operator turns the ArithValue back into an fx.Int32 of the same value.
        Invalid("import flydsl.compiler as flyc\nimport flydsl.expr as fx\nfrom flydsl.expr.arith import ArithValue\n"
                "@flyc.kernel\ndef k(n: fx.Int32, t: fx.Int32):\n    n_v = ArithValue(n)\n    return fx.Int32(2) * n_v + t\n",
                fixed="import flydsl.compiler as flyc\nimport flydsl.expr as fx\n"
                      "@flyc.kernel\ndef k(n: fx.Int32, t: fx.Int32):\n    n_v = n\n    return fx.Int32(2) * n_v + t\n"),
        Invalid("import flydsl.compiler as flyc\nimport flydsl.expr as fx\nfrom flydsl.expr.arith import ArithValue\n"
                "@flyc.kernel\ndef k(s: fx.Float32, x: fx.Float32):\n    return x - ArithValue(s)\n",
                fixed="import flydsl.compiler as flyc\nimport flydsl.expr as fx\n"
                      "@flyc.kernel\ndef k(s: fx.Float32, x: fx.Float32):\n    return x - s\n"),
        # The left operand: ArithValue's own operator answers, so the result would become an fx.Int32.
        Invalid("import flydsl.compiler as flyc\nimport flydsl.expr as fx\nfrom flydsl.expr.arith import ArithValue\n"
                "@flyc.kernel\ndef k(n: fx.Int32, t: fx.Int32):\n    n_v = ArithValue(n)\n    return n_v * t\n",
                fixed="import flydsl.compiler as flyc\nimport flydsl.expr as fx\n"
                      "@flyc.kernel\ndef k(n: fx.Int32, t: fx.Int32):\n    n_v = n\n    return n_v * t\n", unsafe=True),
        # A compile-time x: `fx.Int32(2) * x` folds to a compile-time value, `* ArithValue(x)` does not.
        Invalid("import flydsl.expr as fx\nfrom flydsl.expr.arith import ArithValue\n"
                "def f(t: fx.Int32):\n    return t * ArithValue(fx.Int32(4))\n",
                fixed="import flydsl.expr as fx\ndef f(t: fx.Int32):\n    return t * fx.Int32(4)\n", unsafe=True),
        # Safe: the right operand of an ArithValue's operator, which makes `ArithValue(x.ir_value())` of an fx one.
        Invalid("import flydsl.expr as fx\nfrom flydsl.expr.arith import ArithValue\nfrom flydsl._mlir.dialects import arith\n"
                "def f(a: fx.Int32, b, u: fx.Uint32):\n    s = arith.AddIOp(a.ir_value(), b).result\n"
                "    return ArithValue(s) // ArithValue(u)\n",
                fixed="import flydsl.expr as fx\nfrom flydsl._mlir.dialects import arith\n"
                      "def f(a: fx.Int32, b, u: fx.Uint32):\n    s = arith.AddIOp(a.ir_value(), b).result\n"
                      "    return s // u\n", count=2),
        # One read is not such an operand: unsafe.
        Invalid("import flydsl.compiler as flyc\nimport flydsl.expr as fx\nfrom flydsl.expr.arith import ArithValue\n"
                "@flyc.kernel\ndef k(n: fx.Int32, t: fx.Int32):\n    n_v = ArithValue(n)\n    return t * n_v, n_v >> 1\n",
                fixed="import flydsl.compiler as flyc\nimport flydsl.expr as fx\n"
                      "@flyc.kernel\ndef k(n: fx.Int32, t: fx.Int32):\n    n_v = n\n    return t * n_v, n_v >> 1\n",
                unsafe=True),
        # An unsigned scalar: ArithValue drops the signedness, so `//` may not be the same op.
        Invalid("import flydsl.expr as fx\nfrom flydsl.expr.arith import ArithValue\n"
                "def f(a: fx.Uint32, b: fx.Uint32):\n    return fx.Uint32(ArithValue(a) + b)\n",
                fixed="import flydsl.expr as fx\ndef f(a: fx.Uint32, b: fx.Uint32):\n    return fx.Uint32(a + b)\n",
                unsafe=True),
        # Safe: a receiver cast to index of an fx integer is `fx.Index(x)` (the same index_cast), as a loop bound.
        Invalid("import flydsl.compiler as flyc\nimport flydsl.expr as fx\nfrom flydsl.expr.arith import ArithValue\n"
                "from flydsl.expr.typing import T\n@flyc.kernel\ndef k(n: fx.Int32):\n"
                "    for i in range(fx.Index(0), ArithValue(n).index_cast(T.index), fx.Index(1)):\n        pass\n",
                fixed="import flydsl.compiler as flyc\nimport flydsl.expr as fx\n@flyc.kernel\ndef k(n: fx.Int32):\n"
                      "    for i in range(fx.Index(0), fx.Index(n), fx.Index(1)):\n        pass\n"),
        # Safe: a name read by a helper that wraps it in fx.Int64 and by a raw op, which needs `.ir_value()`.
        Invalid("import flydsl.expr as fx\nfrom flydsl._mlir.dialects import arith\nfrom flydsl.expr.arith import ArithValue\n"
                "from flydsl.expr.typing import T\ndef _as_i64(idx):\n    return fx.Int64(idx)\ndef f(u: fx.Uint32):\n"
                "    off = ArithValue(u).index_cast(T.index)\n    return _as_i64(off), arith.AddIOp(off, off).result\n",
                fixed="import flydsl.expr as fx\nfrom flydsl._mlir.dialects import arith\ndef _as_i64(idx):\n"
                      "    return fx.Int64(idx)\ndef f(u: fx.Uint32):\n    off = fx.Index(u).ir_value()\n"
                      "    return _as_i64(off), arith.AddIOp(off, off).result\n"),
        # A name bound twice: each read provably sees one binding, an fx integer wrap: safe.
        Invalid("import flydsl.expr as fx\nfrom flydsl.expr.arith import ArithValue\nfrom flydsl.expr.typing import T\n"
                "def f(n: fx.Int32, m: fx.Int32):\n    ix = ArithValue(n).index_cast(T.index)\n    a = fx.Int32(ix)\n"
                "    ix = ArithValue(m).index_cast(T.index)\n    return a + fx.Int32(ix)\n",
                fixed="import flydsl.expr as fx\ndef f(n: fx.Int32, m: fx.Int32):\n    ix = fx.Index(n)\n"
                      "    a = fx.Int32(ix)\n    ix = fx.Index(m)\n    return a + fx.Int32(ix)\n", count=2),
        # A read that either binding may reach: unsafe.
        Invalid("import flydsl.expr as fx\nfrom flydsl.expr.arith import ArithValue\nfrom flydsl.expr.typing import T\n"
                "def f(n: fx.Int32, m: fx.Int32, c):\n    ix = ArithValue(n).index_cast(T.index)\n    if c:\n"
                "        ix = ArithValue(m).index_cast(T.index)\n    return fx.Int32(ix)\n",
                fixed="import flydsl.expr as fx\ndef f(n: fx.Int32, m: fx.Int32, c):\n    ix = fx.Index(n)\n    if c:\n"
                      "        ix = fx.Index(m)\n    return fx.Int32(ix)\n", count=2, unsafe=True),
        # A comparison of an fx.Index is unsigned, of an index ArithValue of signed=None signed: unsafe.
        Invalid("import flydsl.expr as fx\nfrom flydsl.expr.arith import ArithValue\nfrom flydsl.expr.typing import T\n"
                "def f(n: fx.Int32):\n    return ArithValue(n).index_cast(T.index) < 3\n",
                fixed="import flydsl.expr as fx\ndef f(n: fx.Int32):\n    return fx.Index(n) < 3\n", unsafe=True),
        # Safe for an x of unknown type too: whatever `ArithValue(x)` takes, `fx.Index(x)` casts alike.
        Invalid("import flydsl.expr as fx\nfrom flydsl.expr.arith import ArithValue\nfrom flydsl.expr.typing import T\n"
                "def f(n):\n    return fx.Int64(ArithValue(n).index_cast(T.index))\n",
                fixed="import flydsl.expr as fx\ndef f(n):\n    return fx.Int64(fx.Index(n))\n"),
        # ... but not for a known value no index cast takes (a float).
        Invalid("import flydsl.expr as fx\nfrom flydsl.expr.arith import ArithValue\nfrom flydsl.expr.typing import T\n"
                "def f(s: fx.Float32):\n    return fx.Int64(ArithValue(s).index_cast(T.index))\n",
                fixed="import flydsl.expr as fx\ndef f(s: fx.Float32):\n    return fx.Int64(fx.Index(s))\n", unsafe=True),
    ]

    def visit_Call(self, node: ast.Call) -> None:
        argument = single_positional(node)
        fix = None
        cast = _receiver_index_cast(self, node) if argument is not None else None
        if cast is not None:
            fix = self._index_fix(cast, argument)
        elif argument is not None:
            unsafe_because = self._unsafe_because(node, argument)
            message = "Drop the `ArithValue` wrapper" + (f" ({unsafe_because})" if unsafe_because else "")
            fix = self.make_fix([replace_with_argument(self, node, argument)], message,
                                Applicability.UNSAFE if unsafe_because else Applicability.SAFE)
        self.report(node, fix=fix)

    def _index_fix(self, cast: ast.Call, argument: ast.expr):
        """`ArithValue(x).index_cast(T.index)` -> `fx.Index(x)` (the guide's `off = fx.Index(x)`):
        both build one `arith.index_cast` of x's ir.Value (none when it already is an index), for a
        signed or an unsigned x, and materialize a compile-time fx value alike. That holds for every x
        `ArithValue(x)` takes, so for an x of unknown type too: an ir.Value or an fx value (a Python
        number makes it raise; an fx.Vector or a float cannot be index-cast), `ArithValue.__init__`,
        `.index_cast` and `Index.__init__` being the same in every release 0.3.0 to 0.5.0."""
        return _index_value_fix(self, cast, argument, _not_cast_alike(self, argument, _INTEGER_SCALARS))

    def _unsafe_because(self, node: ast.Call, argument: ast.expr) -> str | None:
        """None when dropping the wrapper provably gives the same op and the same
        Python type; else what the model does not know."""
        found = self.model.value_type(argument)
        if found.kind == ARITH_VALUE and not plain_arith_value(found):
            # Of a vector type the value is an fx.Vector, its operators its own; `ArithValue(v)` is not one.
            return f"`{self.text(argument)}` may be an fx.Vector (of a vector type), which `ArithValue(...)` makes a plain ArithValue"
        if found.kind == ARITH_VALUE:
            # ArithValue(v) of an ArithValue of signed=None is an equal ArithValue, whatever uses it;
            # of one that may carry a signedness it resets it to None (`//`, `%`, `<` and casts may change).
            return None if found.signless else _may_carry_signedness(self, argument)
        if found.kind != SCALAR:
            return operand_type_reason(self, argument)
        if self._read_back_alike(node, argument, found):
            return None
        if found.scalar not in SAME_OP_SCALARS:
            return f"`{self.text(argument)}` is {found}, whose ops ArithValue may not pick alike"
        operation = self.model.parent(node)
        if not (isinstance(operation, ast.BinOp) and isinstance(operation.op, SAME_OP_OPERATORS)):
            return "the value would change from an ArithValue to " + str(found)
        other = operation.right if operation.left is node else operation.left
        other_type = self.model.value_type(other)
        int_literal = isinstance(other, ast.Constant) and type(other.value) is int and not found.is_float \
            and -2**31 <= other.value < 2**31
        if other_type != found and not int_literal:
            return operand_type_reason(self, other)
        consumer = self.model.parent(operation)
        if not (isinstance(consumer, ast.Call) and single_positional(consumer) is operation
                and typed_scalar(self.model, consumer) == found.scalar):
            return "the result would change from an ArithValue to " + str(found)
        return None

    def _read_back_alike(self, node: ast.Call, argument: ast.expr, found) -> bool:
        """Whether `ArithValue(x)` of an fx scalar x, itself or through a name bound once, is only
        ever a right operand that its left operand's operator turns into what x gives it."""
        statement = self.model.parent(node)
        uses: list[ast.expr] | None = [node]
        if isinstance(statement, ast.Assign) and statement.value is node:
            uses = reads_of_value(self, node)
            if not uses:
                return False
        return all(self._right_operand_read_alike(use, argument, found) for use in uses)

    def _right_operand_read_alike(self, use: ast.expr, argument: ast.expr, found) -> bool:
        """An ArithValue's operator coerces an fx operand to `ArithValue(x.ir_value())`, which
        `ArithValue(x)` already is. An fx scalar's `+`, `-` or `*` turns an ArithValue back into
        its class (`Numeric.from_ir_type` of x's MLIR type) holding x's ir.Value: the same operation
        when x is of that class and a run-time value (a compile-time x may fold without the wrapper)."""
        operation = self.model.parent(use)
        if not (isinstance(operation, ast.BinOp) and operation.right is use):
            return False
        left = self.model.value_type(operation.left)
        if scalar_arith_value(left):
            return not isinstance(operation.op, ast.MatMult)  # ArithValue defines every other operator
        return (left == found and found.scalar in SAME_OP_SCALARS and isinstance(operation.op, SAME_OP_OPERATORS)
                and self.model.provably_dynamic(argument))

_INTEGER_SCALARS = frozenset({"Int8", "Int16", "Int32", "Int64", "Uint8", "Uint16", "Uint32", "Uint64"})
# Integer.__init__ index-casts an index ArithValue and an fx.Index alike; Index.__init__ keeps both as they are.
_INDEX_READING_WRAPS = _INTEGER_SCALARS | {"Index"}
# How an index value is used: ANY_USE reads an fx.Index like an index ArithValue, RAW_USE needs an ir.Value.
ANY_USE, RAW_USE = "any", "raw"
_HELPER_DEPTH = 2  # how many calls of the file's own helpers a use is followed through


def _not_cast_alike(rule: Rule, argument: ast.expr, integer_classes: frozenset[str]) -> str | None:
    """None when `fx.Index(argument)` builds the index cast the replaced call did, for every value
    that call takes: an ir.Value, an ArithValue, a value of unknown type, or an fx integer of
    `integer_classes`; else what the argument is, for the fix message."""
    found = rule.model.value_type(argument)
    takes = found.kind in (UNKNOWN, RAW, ARITH_VALUE) or (found.kind == SCALAR and found.scalar in integer_classes)
    return None if takes else operand_type_reason(rule, argument)


def _index_value_fix(rule: Rule, value: ast.expr, argument: ast.expr, unsafe_because: str | None,
                     since: str | None = None):
    """Replace the index ArithValue `value` with `fx.Index(argument)`, which the caller has
    shown builds the same index value unless it says `unsafe_because`. The result is an
    fx.Index instead of an ArithValue: safe only where every use reads an index value alike
    from both; where a use needs an ir.Value (a raw op), `fx.Index(argument).ir_value()`.
    `since`: a release the fix needs beyond the rule's."""
    use = ANY_USE
    if unsafe_because is None:
        use, unsafe_because = _index_uses(rule, value, _HELPER_DEPTH)
    # An unsafe fix offers the guide's spelling; the reviewer adds `.ir_value()` where a raw op needs it.
    raw = use == RAW_USE and unsafe_because is None
    built = fx_wrap(rule, value, "Index", argument, ".ir_value()" if raw else "")
    if built is None:
        return None
    text, edits = built
    message = f"Replace with `{text}`" + (f" ({unsafe_because})" if unsafe_because else "")
    return rule.make_fix(edits, message, Applicability.UNSAFE if unsafe_because else Applicability.SAFE, since)


def _receiver_index_cast(rule: Rule, node: ast.Call) -> ast.Call | None:
    """The call `ArithValue(x).index_cast(T.index)` whose receiver is `node`, else None."""
    method = rule.model.parent(node)
    call = rule.model.parent(method) if isinstance(method, ast.Attribute) and method.attr == "index_cast" else None
    if not (isinstance(call, ast.Call) and call.func is method):
        return None
    target = single_positional(call)
    return call if target is not None and rule.model.resolve(target) in INDEX_TYPES else None


def _index_uses(rule: Rule, value: ast.expr, depth: int) -> tuple[str, str | None]:
    """How the index value `value` is used: (ANY_USE or RAW_USE, None), or (RAW_USE, why an
    fx.Index may be used differently from an ArithValue there)."""
    parent = rule.model.parent(value)
    if isinstance(parent, ast.Assign) and parent.value is value:
        if len(parent.targets) == 1 and isinstance(parent.targets[0], ast.Name):
            return _name_uses(rule, parent.targets[0], depth)
        return RAW_USE, f"`{rule.text(parent.targets[0])}` is not a plain name bound once"
    if isinstance(parent, ast.Call) and value in parent.args:
        if _is_range_bound(rule, parent):
            return ANY_USE, None  # scf_range / scf_for_dispatch turn either into the same index ir.Value
        if typed_scalar(rule.model, parent) in _INDEX_READING_WRAPS and single_positional(parent) is value:
            return ANY_USE, None
        if _is_raw_op(rule, parent):
            return RAW_USE, None
        helper = _own_helper_parameter(rule, parent, value) if depth else None
        if helper is not None:
            return _name_uses(rule, helper, depth - 1)
    return RAW_USE, f"`{rule.text(parent)}` may use an fx.Index differently from an ArithValue"


def _name_uses(rule: Rule, target: ast.AST, depth: int) -> tuple[str, str | None]:
    """_index_uses over every read that may see the value a name binds (an assignment target or
    a parameter): all its reads when bound once, else the reads this binding provably reaches."""
    reads = reads_seeing(rule, target)
    if reads is None:
        return RAW_USE, (f"`{target.id if isinstance(target, ast.Name) else target.arg}` is bound more than once, "
                         f"and a read may see this binding")
    needs = ANY_USE
    for read in reads:
        use, why = _index_uses(rule, read, depth)
        if why is not None:
            return use, why
        needs = RAW_USE if use == RAW_USE else needs
    return needs, None


def _is_range_bound(rule: Rule, call: ast.Call) -> bool:
    """A `for` loop's builtin `range(...)` in traced code: the rewriter builds its bounds with
    `_to_index` / `as_ir_value`, which take an ir.Value and an fx value alike."""
    loop = rule.model.parent(call)
    return (rule.model.range_callee(call.func) == "range" and isinstance(loop, ast.For) and loop.iter is call
            and rule.model.in_traced_code(call))


def _own_helper_parameter(rule: Rule, call: ast.Call, value: ast.expr) -> ast.arg | None:
    """The parameter of an undecorated function of this file that a positional `value` of `call` binds."""
    callee = rule.model.binding_of(call.func) if isinstance(call.func, ast.Name) else None
    function = callee.node if callee is not None and callee.kind == "def" else None
    if not isinstance(function, ast.FunctionDef) or function.decorator_list:
        return None
    if any(isinstance(argument, ast.Starred) for argument in call.args):
        return None
    parameters = function.args.posonlyargs + function.args.args
    position = call.args.index(value)
    return parameters[position] if position < len(parameters) else None


@register
class ArithUnwrap(Rule):
    """`arith.unwrap` turns a typed value back into a raw `ir.Value`. Only a raw
    op such as a manual `scf.IfOp` needs that, and the typed value's own
    `.ir_value()` says so at the use site."""

    code = "FLY102"
    calls = qualified(EXPR_ARITH, "unwrap")
    valid = ["cond = (idx >= limit).ir_value()\n", "from mylib import unwrap\nunwrap(x)\n"]
    invalid = [
        Invalid(_HEADER + "cond = arith.unwrap(idx >= limit)\n", unsafe=True,
                fixed="import flydsl.expr as fx\nfrom flydsl.expr.typing import T\ncond = (idx >= limit).ir_value()\n"),
        Invalid("from flydsl.expr.arith import unwrap as uw\nv = uw(x)\n", fixed="v = x.ir_value()\n", unsafe=True),
        Invalid("import flydsl.expr as fx\nv = fx.unwrap(x)\n", fixed="v = x.ir_value()\n", unsafe=True),  # 0.2.2-0.2.4
        # Safe: a typed value passed straight to a raw dialect op.
        Invalid("import flydsl.expr as fx\nfrom flydsl.expr import arith\nfrom flydsl._mlir.dialects import scf\n"
                "def f(i: fx.Int32, n: fx.Int32):\n    scf.IfOp(arith.unwrap(i < n))\n",
                fixed="import flydsl.expr as fx\nfrom flydsl._mlir.dialects import scf\n"
                      "def f(i: fx.Int32, n: fx.Int32):\n    scf.IfOp((i < n).ir_value())\n"),
        Invalid("import flydsl.expr as fx\nfrom flydsl.expr import arith\n"
                "def f(a: fx.Float32, b: fx.Float32):\n    return arith.mulf(arith.unwrap(a), arith.unwrap(b))\n",
                fixed="import flydsl.expr as fx\nfrom flydsl.expr import arith\n"
                      "def f(a: fx.Float32, b: fx.Float32):\n    return arith.mulf(a.ir_value(), b.ir_value())\n",
                count=2),
        # Typed, and not at a raw boundary: the same ir.Value all the same.
        Invalid("import flydsl.expr as fx\nfrom flydsl.expr import arith\ndef f(a: fx.Int32):\n    v = arith.unwrap(a)\n",
                fixed="import flydsl.expr as fx\ndef f(a: fx.Int32):\n    v = a.ir_value()\n"),
        # Safe anywhere: `unwrap` returns an ir.Value (here a raw op's result) unchanged.
        Invalid("from flydsl.expr import arith\nfrom flydsl._mlir.dialects import rocdl\n"
                "lane = arith.unwrap(rocdl.ReadlaneOp(t, v, 0).result)\n",
                fixed="from flydsl._mlir.dialects import rocdl\nlane = rocdl.ReadlaneOp(t, v, 0).result\n",
                at=(3, 8), message="`arith.unwrap(x)` is deprecated: use `x.ir_value()`, and only where a raw op needs it"),
        # ... as it does an fx.Vector (an ir.Value; the value caster's of a raw vector op).
        Invalid("from flydsl.expr import arith\nfrom flydsl._mlir.dialects import vector\nfrom flydsl.expr.typing import T\n"
                "v = arith.unwrap(vector.broadcast(T.f32x4, s)) * 2\n",
                fixed="from flydsl._mlir.dialects import vector\nfrom flydsl.expr.typing import T\n"
                      "v = vector.broadcast(T.f32x4, s) * 2\n"),
    ]

    def visit_Call(self, node: ast.Call) -> None:
        argument = single_positional(node)
        fix = None
        if argument is not None:
            fix = self._drop_unwrap(node, argument) or self._typed_fix(node, argument)
        self.report(node, fix=fix)

    def _drop_unwrap(self, node: ast.Call, argument: ast.expr):
        """`unwrap(v)` of an ir.Value (an ArithValue or an fx.Vector too) is `v` itself (`_to_raw`
        returns it unchanged): dropping the call is the same value anywhere."""
        found = self.model.value_type(argument)
        if found.kind not in IR_VALUE_KINDS or not self.model.type_table.has("to-raw", "identity"):
            return None
        return self.make_fix([replace_with_argument(self, node, argument)],
                             f"Drop the call: `{self.text(argument)}` already is an ir.Value")

    def _typed_fix(self, node: ast.Call, argument: ast.expr):
        unsafe_because = self._unsafe_because(node, argument)
        edit = self.replace(node, f"{as_method_receiver(self, argument)}.ir_value()")
        message = "Call `.ir_value()` on the typed value" + (f" ({unsafe_because})" if unsafe_because else "")
        return self.make_fix([edit], message, Applicability.UNSAFE if unsafe_because else Applicability.SAFE)

    def _unsafe_because(self, node: ast.Call, argument: ast.expr) -> str | None:
        """None for a typed fx scalar, whatever the use: `unwrap(e)` is `_to_raw(e)`, which for a
        value with `ir_value` returns `e.ir_value()`, an ir.Value, unchanged (expr/utils/arith.py,
        every release 0.3.0 to 0.5.0): the very object the fix's call gives."""
        found = self.model.value_type(argument)
        return operand_type_reason(self, argument) if found.kind != SCALAR else None


def _is_raw_op(rule: Rule, call: ast.Call) -> bool:
    """A call of a raw MLIR dialect op or builder (`scf.IfOp`, `arith.mulf`), also through
    flydsl.expr.arith, which star-imports the raw arith dialect in every release (`arith.MulIOp`)."""
    name = rule.model.resolve(call.func) or ""
    module, _, leaf = name.rpartition(".")
    op_class = leaf[:1].isupper() and leaf.endswith("Op")
    return module.startswith(RAW_DIALECTS + ".") or (module in EXPR_ARITH + (RAW_ARITH,) and (
        op_class or (leaf[:1].islower() and leaf not in ("unwrap", "_to_raw"))))


@register
class ArithIndexCast(Rule):
    """`arith.index_cast` is deprecated. `fx.Index(x)` casts to the index type
    with the same op and keeps the consumer's index contract; casts to other
    widths are `fx.Int32(x)` / `fx.Int64(x)`.

    What the fix relies on (FlyDSL 0.3.0 to 0.5.0, expr/numeric.py and
    expr/utils/arith.py, the same code in every release): for a run-time
    value (an ArithValue, or an fx integer of the source class) the wraps
    `fx.Int32(x)`, `fx.Int64(x)` and `fx.Index(x)` call the very `index_cast`
    helper (or leave a value of the target type as it is, as `index_cast`
    does), so `fx.Int32(x).ir_value()` is the same run-time value. Only its
    signedness may differ (`.ir_value()` gives the class's, `index_cast` none):
    the fix is safe where no use reads it, namely a raw dialect op's argument,
    an fx integer wrap, and ArithValue operators that emit the same op whatever
    the signedness (`+ - * & | ^ <<`, `==`, `!=`, and any but `/` with an
    ArithValue on the left), directly or through the reads of a name bound to
    it. `fx.Index(x)` itself (the value typed) is offered from 0.4.2: before
    it, an `fx.Index` used as a layout coordinate crashes FlyDSL while tracing; as the value
    becomes typed, every use is checked as FLY101's `fx.Index(x)`: `.ir_value()` is added where a
    raw op needs an ir.Value, and a use an fx.Index may meet otherwise leaves the fix unsafe."""

    code = "FLY103"
    calls = qualified(EXPR_ARITH + (RAW_ARITH,), "index_cast")
    valid = ["off = fx.Index(x)\n", "from flydsl.expr import arith\narith.index_cast\n"]
    invalid = [
        Invalid(_HEADER + "@flyc.kernel\ndef k(x):\n    off = arith.index_cast(T.index, x)\n",
                fixed="import flydsl.expr as fx\n@flyc.kernel\ndef k(x):\n    off = fx.Index(x)\n",
                at=(6, 11), message='`arith.index_cast` is deprecated: use `fx.Index(x)` for the index type, `fx.Int32(x)`/`fx.Int64(x)` for explicit widths'),
        # Before 0.4.2 `fx.Index(x)` is withheld (the message says so) and the type of `x` is not known: no fix.
        Invalid(_HEADER + "@flyc.kernel\ndef k(x):\n    off = arith.index_cast(T.index, x)\n",
                settings=_TARGET_0_3_1),
        # A run-time value whose every use ignores signedness: the same value, from the wrap.
        Invalid(_HEADER + "import flydsl.compiler as flyc\nfrom flydsl._mlir.dialects import rocdl\n@flyc.kernel\ndef k(n: fx.Int32):\n"
                "    row = fx.Index(fx.thread_idx.x)\n    w = arith.index_cast(T.i32, row)\n"
                "    a = rocdl.readfirstlane(T.i32, w)\n    b = fx.Int64(w) + (w << 2)\n"
                "    c = arith.index_cast(T.i64, row * 4) * 3\n    d = arith.index_cast(T.index, n) + row.ir_value()\n",
                fixed="import flydsl.expr as fx\nfrom flydsl.expr.typing import T\n"
                      "import flydsl.compiler as flyc\nfrom flydsl._mlir.dialects import rocdl\n@flyc.kernel\ndef k(n: fx.Int32):\n"
                      "    row = fx.Index(fx.thread_idx.x)\n    w = fx.Int32(row).ir_value()\n"
                      "    a = rocdl.readfirstlane(T.i32, w)\n    b = fx.Int64(w) + (w << 2)\n"
                      "    c = fx.Int64(row * 4).ir_value() * 3\n    d = fx.Index(n).ir_value() + row.ir_value()\n",
                settings=_TARGET_0_3_1, count=3),
        # A target spelled by MLIR's own constructor, through a name bound once to it: the same cast.
        Invalid(_HEADER + "import flydsl.compiler as flyc\nfrom flydsl._mlir import ir\ni32 = ir.IntegerType.get_signless(32)\n"
                "@flyc.kernel\ndef k(n: fx.Int32):\n    w = arith.index_cast(i32, fx.Index(fx.thread_idx.x)) + 1\n",
                fixed="import flydsl.expr as fx\nfrom flydsl.expr.typing import T\nimport flydsl.compiler as flyc\n"
                      "from flydsl._mlir import ir\ni32 = ir.IntegerType.get_signless(32)\n@flyc.kernel\ndef k(n: fx.Int32):\n"
                      "    w = fx.Int32(fx.Index(fx.thread_idx.x)).ir_value() + 1\n", settings=_TARGET_0_3_1),
        # A use that reads the signedness (`>>`, `<`, true division), or a value not known to be run-time:
        # the message says which.
        Invalid(_HEADER + "import flydsl.compiler as flyc\n@flyc.kernel\ndef k(n: fx.Int32):\n    row = fx.Index(fx.thread_idx.x)\n"
                "    w = arith.index_cast(T.i32, row)\n    a = w >> 1\n    b = arith.index_cast(T.i32, row) < n\n"
                "    c = arith.index_cast(T.i64, fx.Index(4)) + 1\n", count=3,
                message="`arith.index_cast` is deprecated: use `fx.Index(x)` for the index type, `fx.Int32(x)`/`fx.Int64(x)` "
                "for explicit widths (a use of the cast reads its signedness, which `fx.Int32(x).ir_value()` carries)"),
        Invalid(_HEADER + "w = arith.index_cast(T.i32, x)\n"),
        Invalid("from flydsl.expr.numeric import index_cast\nfrom flydsl.expr.typing import T\nw = index_cast(T.i32, x)\n"),
        # The typed index where a raw op (here an op class flydsl.expr.arith re-exports) needs an
        # ir.Value: `.ir_value()`; where a use may read an fx.Index otherwise (its `-`): unsafe.
        Invalid(_HEADER + "import flydsl.compiler as flyc\n@flyc.kernel\ndef k(n: fx.Int32):\n"
                "    t = arith.index_cast(T.index, n)\n    s = arith.MulIOp(t, t).result\n",
                fixed="import flydsl.expr as fx\nfrom flydsl.expr import arith\nimport flydsl.compiler as flyc\n"
                      "@flyc.kernel\ndef k(n: fx.Int32):\n    t = fx.Index(n).ir_value()\n    s = arith.MulIOp(t, t).result\n"),
        Invalid(_HEADER + "import flydsl.compiler as flyc\n@flyc.kernel\ndef k(n: fx.Int32):\n"
                "    t = arith.index_cast(T.index, n)\n    s = t - fx.Index(1)\n",
                fixed="import flydsl.expr as fx\nimport flydsl.compiler as flyc\n"
                      "@flyc.kernel\ndef k(n: fx.Int32):\n    t = fx.Index(n)\n    s = t - fx.Index(1)\n", unsafe=True),
    ]

    def visit_Call(self, node: ast.Call) -> None:
        if len(node.args) != 2 or node.keywords:
            self.report(node, detail="")
            return
        target, value = node.args
        target_class = _CAST_TARGETS.get(scalar_ir_type(self.model, target) or "")
        typed_index = target_class == "Index" and not _before_typed_index(self.model.target_version)
        shown_only = before_type_table(self.model)  # no types known: the gate names the release the fix needs
        fix = None
        if not typed_index and target_class is not None and (shown_only or (
                self._same_run_time_value(node, value, target_class) and _uses_ignore_signedness(self, node))):
            fix = self._wrap_fix(node, value, target_class, ".ir_value()",
                                 f"Replace with `fx.{target_class}(x).ir_value()`: the same run-time value")
        elif target_class == "Index":
            fix = self._typed_index_fix(node, value)
        detail = "" if fix is not None else self._no_fix_detail(node, target, value, target_class)
        self.report(node, fix=fix, detail=detail)

    def _no_fix_detail(self, node: ast.Call, target: ast.expr, value: ast.expr, target_class: str | None) -> str:
        """Why the cast gets no fix, for the message: the target type, the value or a use of it."""
        if target_class is None:
            return f" (the target type `{self.text(target)}` is not i32, i64 or index)"
        found = self.model.value_type(value)
        if not found.known:
            cause = self.model.unknown_cause(value)
            return f" (the type of `{self.text(value)}` is not known{': ' + cause if cause else ''})"
        if not self._same_run_time_value(node, value, target_class):
            return (f" (`{self.text(value)}` is {found.described}, "
                    f"not a run-time value `fx.{target_class}(x)` casts alike)")
        return f" (a use of the cast reads its signedness, which `fx.{target_class}(x).ir_value()` carries)"

    def _wrap_fix(self, node: ast.Call, value: ast.expr, target_class: str, suffix: str, message: str):
        built = fx_wrap(self, node, target_class, value, suffix)
        return None if built is None else self.make_fix(built[1], message)

    def _typed_index_fix(self, node: ast.Call, value: ast.expr):
        """`index_cast(T.index, x)` -> `fx.Index(x)`, the same index_cast of x's ir.Value (none when it
        is one already) for every x the cast takes: an ir.Value or an fx integer (FlyDSL's helper
        only: the raw op takes no fx value). The value becomes an fx.Index, so every use is
        checked as FLY101's `fx.Index(x)` is: `.ir_value()` where a raw op needs an ir.Value."""
        raw_op = (self.model.resolve(node.func) or "").startswith(RAW_ARITH + ".")
        integers = frozenset() if raw_op else _INTEGER_CLASSES
        return _index_value_fix(self, node, value, _not_cast_alike(self, value, integers), _TYPED_INDEX_SINCE)

    def _same_run_time_value(self, node: ast.Call, value: ast.expr, target_class: str) -> bool:
        """Whether `fx.<target_class>(value)` emits what `index_cast` does: `value` an ArithValue, or
        (FlyDSL's own helper only: the raw op rejects an fx value) a run-time fx integer that is an
        index for an integer target, any integer for an index target, or already of the target class."""
        found = self.model.value_type(value)
        if scalar_arith_value(found):
            return True
        source = found.scalar if found.kind == SCALAR else None
        if source not in _INTEGER_CLASSES or (self.model.resolve(node.func) or "").startswith(RAW_ARITH + "."):
            return False
        casts = source == target_class or (target_class == "Index") != (source == "Index")
        return casts and self.model.provably_dynamic(value)


# The target types of an index_cast -> the fx class whose wrap casts to it.
_CAST_TARGETS = {"i32": "Int32", "i64": "Int64", "index": "Index"}


# fx integer classes whose wrap of a run-time value takes only its type, never its signedness
# (numeric.py `Integer.__init__` / `Index.__init__`).
_INTEGER_CLASSES = FX_INTEGERS | {"Index"}


# The release from which `fx.Index(x)` may stand where the index ArithValue stood (a layout
# coordinate of an fx.Index crashes FlyDSL's tracer before it; proven on 0.3.2 to 0.4.1). The
# checker withholds the fix for an older target and says so.
_TYPED_INDEX_SINCE = "0.4.2"


def _before_typed_index(target: Version | None) -> bool:
    """Whether the target (None: the oldest supported) predates the typed `fx.Index(x)` fix."""
    return target is None or target < Version.parse(_TYPED_INDEX_SINCE)


# ArithValue comparisons that emit the same predicate whatever the signedness.
_SIGNLESS_COMPARISONS = (ast.Eq, ast.NotEq)


def _uses_ignore_signedness(rule: Rule, node: ast.expr) -> bool:
    """Whether no use of `node`'s value reads an ArithValue's signedness: `node` itself, or for
    `name = node` every read that sees it (at least one, none we cannot place)."""
    assignment = single_name_assignment(rule, node)
    if assignment is None:
        return _use_ignores_signedness(rule, node)
    reads = reads_seeing(rule, assignment[1])
    return bool(reads) and all(_use_ignores_signedness(rule, read) for read in reads)


def _use_ignores_signedness(rule: Rule, use: ast.expr) -> bool:
    """A raw dialect op's argument (an ir.Value), an fx integer wrap (it takes the class's own
    signedness), or an operand of an ArithValue operator that reads no signedness
    (expr/utils/arith.py `_binary_op`, `_bitwise_op`, `_shift_op`, `_comparison_op`: the left
    operand's signedness picks `>>`, `//`, `%` and ordering; the right one's is read by int `/`)."""
    model = rule.model
    parent = model.parent(use)
    if model.raw_dialect_call(parent) and (use in parent.args or any(k.value is use for k in parent.keywords)):
        return True
    if typed_scalar(model, parent) in _INTEGER_CLASSES and single_positional(parent) is use:
        return True
    if isinstance(parent, ast.BinOp):
        if parent.left is use:
            return isinstance(parent.op, SIGNLESS_INT_OPERATORS)
        other = model.value_type(parent.left)
        return (scalar_arith_value(other) and not isinstance(parent.op, ast.Div)) \
            or (other.kind == PY_INT and isinstance(parent.op, SIGNLESS_INT_OPERATORS))
    if isinstance(parent, ast.Compare) and len(parent.comparators) == 1:
        if parent.left is use:
            return isinstance(parent.ops[0], _SIGNLESS_COMPARISONS)
        other = model.value_type(parent.left)
        return scalar_arith_value(other) or (other.kind == PY_INT and isinstance(parent.ops[0], _SIGNLESS_COMPARISONS))
    return False


@register
class RawValueHelper(Rule):
    """`_to_raw` is a private helper that strips the type from a value so it can
    feed a raw dialect op. The public converter `fx.as_ir_value(v)` does the
    same for typed and raw values (and also promotes Python scalars); better
    still, keep typed values and drop to a raw `ir.Value` only at a hard
    boundary."""

    code = "FLY104"
    calls = qualified(EXPR_ARITH + ("flydsl.expr",), "_to_raw")
    valid = [
        "def _to_raw(v):\n    return v\n_to_raw(x)\n",
        "from kernels.common.tensor_shim import _to_raw\n_to_raw(x)\n",
    ]
    invalid = [
        Invalid("import flydsl.expr as fx\nfrom flydsl.expr.utils.arith import _to_raw as _raw\ncond = _raw(q < n)\n",
                fixed="import flydsl.expr as fx\ncond = fx.as_ir_value(q < n)\n"),
        Invalid("from flydsl.expr import arith\nv = arith._to_raw(x)\n",
                fixed="import flydsl.expr as fx\nv = fx.as_ir_value(x)\n"),
        Invalid("from flydsl.expr import math\nv = math._to_raw(x)\n",  # 0.1.5-0.2.1
                fixed="import flydsl.expr as fx\nv = fx.as_ir_value(x)\n"),
    ]

    def visit_Call(self, node: ast.Call) -> None:
        fix = None
        spelled = reference(self, "flydsl.expr.as_ir_value", "fx", "flydsl.expr")
        if spelled is not None and single_positional(node) is not None:
            callee, imports = spelled
            fix = self.make_fix([replace_callee(self, node, callee), *imports], f"Replace with `{callee}`")
        self.report(node, fix=fix)


@register
class ArithIndexConstant(Rule):
    """`arith.index(n)` builds an index-typed constant through the deprecated
    helper. Pick the type deliberately: `fx.Int32(n)`/`fx.Int64(n)` for
    arithmetic, `fx.Index(n)` where an API requires the index type."""

    code = "FLY105"
    calls = qualified(EXPR_ARITH, "index")
    valid = ["from flydsl.expr import arith\nlane = tid % fx.Int64(64)\n"]
    invalid = [
        # A Python int: `fx.Index(n).ir_value()` is the very constant, whatever reads it.
        Invalid(_HEADER + "lane = tid % arith.index(64)\n",
                fixed="import flydsl.expr as fx\nfrom flydsl.expr.typing import T\nlane = tid % fx.Index(64).ir_value()\n",
                message="`arith.index(n)` is deprecated: choose `fx.Int32(n)`/`fx.Int64(n)` for arithmetic, "
                        "`fx.Index(n)` where an API requires index"),
        Invalid("import flydsl.expr as fx\nlane = tid % fx.index(64)\n",  # 0.2.2-0.2.4
                fixed="import flydsl.expr as fx\nlane = tid % fx.Index(64).ir_value()\n"),
        # Safe: a literal's index constant, passed to a raw op, is `fx.Index(n).ir_value()`: the same constant.
        Invalid("from flydsl.expr import arith\nword = arith.shrui(off, arith.index(2))\n",
                fixed="from flydsl.expr import arith\nimport flydsl.expr as fx\nword = arith.shrui(off, fx.Index(2).ir_value())\n"),
        # Safe: through a name bound once, read by fx integer wraps and a traced loop bound.
        Invalid("import flydsl.compiler as flyc\nimport flydsl.expr as fx\nfrom flydsl.expr import arith\n@flyc.kernel\n"
                "def k():\n    n = arith.index(8)\n    for i in range(fx.Index(0), n, fx.Index(1)):\n        pass\n"
                "    return fx.Int32(n)\n",
                fixed="import flydsl.compiler as flyc\nimport flydsl.expr as fx\n@flyc.kernel\n"
                      "def k():\n    n = fx.Index(8)\n    for i in range(fx.Index(0), n, fx.Index(1)):\n        pass\n"
                      "    return fx.Int32(n)\n"),
        # A name, not a literal: it may be an fx or raw value that arith.index cannot take.
        Invalid("from flydsl.expr import arith\ndef f(off, m):\n    return arith.andi(off, arith.index(m - 1))\n",
                fixed="from flydsl.expr import arith\nimport flydsl.expr as fx\ndef f(off, m):\n"
                      "    return arith.andi(off, fx.Index(m - 1))\n", unsafe=True),
        # An operand of `/`: an fx.Index would make the quotient one; its `.ir_value()` keeps the ArithValue.
        Invalid("from flydsl.expr import arith\nfrom flydsl._mlir.dialects import rocdl\n"
                "c = rocdl.ReadlaneOp(t, v, 0).result / arith.index(3)\n",
                fixed="from flydsl._mlir.dialects import rocdl\nimport flydsl.expr as fx\n"
                      "c = rocdl.ReadlaneOp(t, v, 0).result / fx.Index(3).ir_value()\n"),
    ]

    def visit_Call(self, node: ast.Call) -> None:
        argument = single_positional(node)
        fix = None
        if argument is not None:
            fix = _index_value_fix(self, node, argument, self._unsafe_because(argument))
            if fix is not None and fix.applicability is Applicability.UNSAFE and self._python_int(argument):
                fix = run_time_constant_fix(self, node, "Index", argument)  # `fx.Index(n).ir_value()`, any use
        self.report(node, fix=fix)

    def _python_int(self, argument: ast.expr) -> bool:
        return before_type_table(self.model) or self.model.value_type(argument).kind == PY_INT

    def _unsafe_because(self, argument: ast.expr) -> str | None:
        """None for a non-negative int literal below 2**31: `arith.index(n)` is `arith.constant(n,
        index=True)` and `fx.Index(n)` materializes that constant where a use needs a value."""
        value = argument.value if isinstance(argument, ast.Constant) else None
        if type(value) is int and 0 <= value < 2**31:
            return None
        return f"`{self.text(argument)}` is not an int literal: `fx.Index` of it may not be the constant `arith.index` builds"


@register
class DoubleWrap(Rule):
    """Wrapping a value in the type it was just wrapped in is dead code:
    `fx.Int64(fx.Int64(x))` is `fx.Int64(x)`. Nested wraps of different
    types are real casts and are left alone."""

    code = "FLY111"
    follows = TYPED_SCALARS
    call_names = frozenset(TYPED_SCALARS)
    valid = [
        "import flydsl.expr as fx\nv = fx.Int64(fx.Int32(x))\n",
        "import flydsl.expr as fx\nv = fx.Int64(x)\n",
    ]
    invalid = [
        Invalid("import flydsl.expr as fx\noff = fx.Int64(fx.Int64(base))\n", fixed="import flydsl.expr as fx\noff = fx.Int64(base)\n",
                at=(2, 7), message='Double `Int64` wrap is dead: drop the outer one'),
        # In a scheduler-sensitive (tuned) kernel every code fix is shown, never applied (until the user opts in).
        Invalid("import flydsl.expr as fx\noff = fx.Int64(fx.Int64(base))\n",
                suggested="import flydsl.expr as fx\noff = fx.Int64(base)\n", path="kernels/attention/flash_attn_gfx950.py"),
        Invalid("import flydsl.expr as fx\noff = fx.Int64(fx.Int64(base))\n", fixed="import flydsl.expr as fx\noff = fx.Int64(base)\n",
                path="kernels/attention/flash_attn_gfx950.py", settings={"fix_tuned_kernels": True}),
        # Dropping the outer call would drop the comment, so the fix is unsafe there.
        Invalid("from flydsl.expr import Float32 as F32\ny = F32(\n    F32(v)  # already f32\n)\n",
                fixed="from flydsl.expr import Float32 as F32\ny = F32(v)\n", unsafe=True),
    ]

    def visit_Call(self, node: ast.Call) -> None:
        outer = typed_scalar(self.model, node)
        inner = single_positional(node) if outer else None
        # Most arguments are not calls, and only a call is a wrap: skip typed_scalar for them.
        if not isinstance(inner, ast.Call) or typed_scalar(self.model, inner) != outer:
            return
        fix = self.make_fix([self.replace(node, self.text(inner))], f"Drop the outer `{outer}` wrap")
        self.report(node, fix=fix, type=outer)


@register
class RedundantRewrap(Rule):
    """Re-wrapping a value that already has the type is noise: when `tx` was
    bound once to `fx.Int32(...)`, `fx.Int32(tx)` is just `tx`."""

    code = "FLY112"
    follows = TYPED_SCALARS
    call_names = frozenset(TYPED_SCALARS)
    valid = [
        "import flydsl.expr as fx\ndef k(n):\n    tx = fx.Int32(n)\n    tx = tx * 2.0\n    return fx.Int32(tx)\n",
        "import flydsl.expr as fx\ndef k(n):\n    tx = fx.Int32(n)\n    return fx.Int64(tx)\n",
        "import flydsl.expr as fx\ndef k(n, tx: fx.Int32):\n    return fx.Int32(n + tx)\n",
    ]
    invalid = [
        Invalid("import flydsl.expr as fx\ndef k(n):\n    tx = fx.Int32(n)\n    idx = fx.Int32(tx)\n",
                fixed="import flydsl.expr as fx\ndef k(n):\n    tx = fx.Int32(n)\n    idx = tx\n"),
        Invalid("import flydsl.expr as fx\ndef k(tx: fx.Int32):\n    return fx.Int32(tx) + 1\n",
                fixed="import flydsl.expr as fx\ndef k(tx: fx.Int32):\n    return tx + 1\n"),
        Invalid("import flydsl.expr as fx\ndef k(tx: fx.Int32):\n    return fx.Int32(4 * tx)\n",
                fixed="import flydsl.expr as fx\ndef k(tx: fx.Int32):\n    return 4 * tx\n"),
        Invalid("import flydsl.expr as fx\noff = fx.Int64(fx.Int64(base) + fx.Int64(4)) * 2\n",
                fixed="import flydsl.expr as fx\noff = (fx.Int64(base) + fx.Int64(4)) * 2\n"),
    ]

    def visit_Call(self, node: ast.Call) -> None:
        wrap = typed_scalar(self.model, node)
        argument = single_positional(node) if wrap else None
        # A wrap call's known_scalar_type is its typed_scalar: only an argument of the wrap's type needs the FLY111 test.
        if argument is None or known_scalar_type(self.model, argument) != wrap or typed_scalar(self.model, argument):
            return  # not of the wrap's type, or a direct double wrap (FLY111)
        fix = self.make_fix([replace_with_argument(self, node, argument)], f"Drop the `{wrap}` re-wrap")
        self.report(node, fix=fix, type=wrap)


_BUILDERS = release_paths(
    "flydsl.expr.make_layout", "flydsl.expr.make_shape", "flydsl.expr.make_stride", "flydsl.expr.make_coord",
    "flydsl.expr.make_tile", "flydsl.expr.range_constexpr", "flydsl.expr.typing.Constexpr", "flydsl.expr.Constexpr",
)


@register
class WrapInCompileTimeBuilder(Rule):
    """Compile-time shapes, strides and bounds (`make_layout`, `make_shape`,
    `range_constexpr`, `Constexpr`) take plain Python ints. Wrapping a
    compile-time constant in `fx.Int32` adds a wrapper the builder does not
    need. Wraps of runtime values (thread ids, loads) are dynamic layout
    inputs and are not flagged.

    What the safe fix relies on (FlyDSL 0.3.0 to 0.5.0): `fx.Int32(k)` of a
    Python int `k` emits no op and holds `k` itself when `k` fits in 32 bits
    (out of range it wraps); `make_layout`, `make_shape`, `make_stride` and
    `make_coord` read a wrap's held value as the leaf, so `fx.Int32(k)` and
    `k` give them the same Python int. The fix is safe only there and only
    for a `k` whose value is known: an int literal, a name bound once to one,
    or arithmetic of such, within the Int32 range. A host value such as
    `K = int(dim)` is a Python int of unknown size (a wrap would wrap it),
    and `make_tile` (rewritten in 0.4.2), `range_constexpr` and `Constexpr`
    are not covered by that reading: those fixes stay unsafe."""

    code = "FLY113"
    follows = TYPED_SCALARS | _BUILDERS
    call_names = leaves(_BUILDERS)
    valid = [
        "import flydsl.expr as fx\ntile = fx.make_layout(BLOCK, 1)\n",
        "import flydsl.expr as fx\nview = fx.make_layout(fx.Int32(n_rows), 1)\n",
        # A run-time value is a dynamic leaf: not a compile-time constant.
        "import flydsl.expr as fx\ndef f(n):\n    return fx.make_layout(fx.Int32(n * 4), fx.Int32(1 + n))\n",
    ]
    invalid = [
        # Unknown values (a host parameter, a CONSTANT_CASE name never bound here): unsafe.
        Invalid("import flydsl.expr as fx\nfrom kernels.config import BLOCK\ntile = fx.make_layout(fx.Int32(BLOCK), 1)\n",
                fixed="import flydsl.expr as fx\nfrom kernels.config import BLOCK\ntile = fx.make_layout(BLOCK, 1)\n",
                unsafe=True),
        # Literals and names bound once to literals, in range, in a layout/shape/stride/coord: safe.
        Invalid("import flydsl.expr as fx\nview = fx.make_layout(fx.Int32(n_rows), fx.Int32(1))\n",
                fixed="import flydsl.expr as fx\nview = fx.make_layout(fx.Int32(n_rows), 1)\n"),
        Invalid("import flydsl.expr as fx\nBLOCK = 64\ndef f(m):\n"
                "    return fx.make_layout((m, fx.Int32(BLOCK)), (fx.Int32(BLOCK * 2), fx.Int32(-1)))\n",
                fixed="import flydsl.expr as fx\nBLOCK = 64\ndef f(m):\n"
                      "    return fx.make_layout((m, BLOCK), (BLOCK * 2, -1))\n", count=3),
        Invalid("import flydsl.expr as fx\nc = fx.make_coord(fx.Int32(0), (fx.Int32(3),))\n",
                fixed="import flydsl.expr as fx\nc = fx.make_coord(0, (3,))\n", count=2),
        # A host value of unknown size: `fx.Int32(K)` wraps a K of 2**31 or more, K does not.
        Invalid("import flydsl.expr as fx\ndef build(dim):\n    K = int(dim)\n    return fx.make_layout(fx.Int32(K), 1)\n",
                fixed="import flydsl.expr as fx\ndef build(dim):\n    K = int(dim)\n    return fx.make_layout(K, 1)\n",
                unsafe=True),
        # Out of the Int32 range (the wrap wraps it), a name bound twice, a float, a bool: unsafe.
        Invalid("import flydsl.expr as fx\nview = fx.make_layout(fx.Int32(2**31), 1)\n",
                fixed="import flydsl.expr as fx\nview = fx.make_layout(2**31, 1)\n", unsafe=True),
        Invalid("import flydsl.expr as fx\nTILE = 16\nif wide:\n    TILE = 32\nt = fx.make_shape(fx.Int32(TILE))\n",
                fixed="import flydsl.expr as fx\nTILE = 16\nif wide:\n    TILE = 32\nt = fx.make_shape(TILE)\n", unsafe=True),
        Invalid("import flydsl.expr as fx\nt = fx.make_shape(fx.Int32(BLOCK / 2))\n",
                fixed="import flydsl.expr as fx\nt = fx.make_shape(BLOCK / 2)\n", unsafe=True),
        # A closure constant of the host factory, bound once to a literal: safe.
        Invalid("import flydsl.expr as fx\ndef build(m):\n    TILE = 16\n    def body():\n"
                "        return fx.make_layout((m, fx.Int32(TILE)), (fx.Int32(TILE), 1))\n    return body\n",
                fixed="import flydsl.expr as fx\ndef build(m):\n    TILE = 16\n    def body():\n"
                      "        return fx.make_layout((m, TILE), (TILE, 1))\n    return body\n", count=2),
        # A module constant some function rebinds through `global`: its value is not known.
        Invalid("import flydsl.expr as fx\nTILE = 16\ndef widen():\n    global TILE\n    TILE = 2**40\n"
                "t = fx.make_shape(fx.Int32(TILE))\n",
                fixed="import flydsl.expr as fx\nTILE = 16\ndef widen():\n    global TILE\n    TILE = 2**40\n"
                      "t = fx.make_shape(TILE)\n", unsafe=True),
        # Another wrap than Int32 (Uint32(-1) holds 2**32 - 1), and make_tile: unsafe.
        Invalid("import flydsl.expr as fx\nt = fx.make_shape(fx.Uint32(-1))\n",
                fixed="import flydsl.expr as fx\nt = fx.make_shape(-1)\n", unsafe=True),
        Invalid("import flydsl.expr as fx\nt = fx.make_tile(fx.Int32(4), 8)\n",
                fixed="import flydsl.expr as fx\nt = fx.make_tile(4, 8)\n", unsafe=True),
        Invalid("import flydsl.expr as fx\nfrom flydsl.expr import range_constexpr\nfor i in range_constexpr(fx.Int32(n)):\n    pass\n",
                fixed="from flydsl.expr import range_constexpr\nfor i in range_constexpr(n):\n    pass\n", unsafe=True),
        Invalid("import flydsl.expr as fx\nshape = fx.make_shape((fx.Int32(4), 8))\n",
                fixed="import flydsl.expr as fx\nshape = fx.make_shape((4, 8))\n"),
    ]

    def visit_Call(self, node: ast.Call) -> None:
        builder = self.model.resolve(node.func)
        if builder not in _BUILDERS:
            return
        pending = list(node.args)
        if node.keywords:  # rare: skip building an empty list
            pending += [keyword.value for keyword in node.keywords]
        while pending:
            argument = pending.pop(0)
            if isinstance(argument, (ast.Tuple, ast.List)):
                pending[:0] = argument.elts
                continue
            if not isinstance(argument, ast.Call):
                continue  # only a call is a wrap: most arguments need no lookup
            wrap = typed_scalar(self.model, argument)
            inner = single_positional(argument) if wrap else None
            # Any wrap is flagged in range_constexpr and Constexpr: only Python ints are valid there.
            if inner is None or not (_compile_time(inner) or builder.endswith(("range_constexpr", "Constexpr"))
                                     or self.model.known_int(inner) is not None):
                continue
            unsafe_because = self._unsafe_because(builder, wrap, inner)
            message = f"Pass the Python value, not `{wrap}(...)`" + (f" ({unsafe_because})" if unsafe_because else "")
            fix = self.make_fix([replace_with_argument(self, argument, inner)], message,
                                Applicability.UNSAFE if unsafe_because else None)
            self.report(argument, fix=fix, type=wrap)

    def _unsafe_because(self, builder: str, wrap: str, inner: ast.expr) -> str | None:
        """None when the builder provably gets the same leaf from `k` as from `fx.Int32(k)`; else why not."""
        leaf = builder.rpartition(".")[2]
        if not builder.endswith(_SAME_LEAF_BUILDERS):
            return f"`{leaf}` is not proven to read a wrap as the int it holds"
        if wrap != "Int32":
            return f"`fx.{wrap}` may hold another value than the int it is given"
        if _fits_int32(self.model, inner):
            return None
        return f"`{self.text(inner)}` is not known to fit in 32 bits, outside which `fx.Int32` wraps it"


# The builders that read a wrap's held Python int as the leaf (FlyDSL 0.3.0 to 0.5.0: their
# int-tuple leaves are expanded alike), so `fx.Int32(k)` and `k` give them the same leaf.
_SAME_LEAF_BUILDERS = (".make_layout", ".make_shape", ".make_stride", ".make_coord")


def _fits_int32(model, node: ast.expr) -> bool:
    """Whether `node` is a Python int whose value is known and that `fx.Int32` holds unchanged."""
    value = model.known_int(node)
    return value is not None and -(1 << 31) <= value < (1 << 31)


def _compile_time(node: ast.expr) -> bool:
    """Literal ints and CONSTANT_CASE names and arithmetic of them."""
    if isinstance(node, ast.Constant):
        return isinstance(node.value, int) and not isinstance(node.value, bool)
    if isinstance(node, ast.Name):
        return node.id.isupper() or (node.id.lstrip("_")[:1].isupper() and node.id.upper() == node.id)
    if isinstance(node, ast.BinOp):
        return _compile_time(node.left) and _compile_time(node.right)
    if isinstance(node, ast.UnaryOp):
        return _compile_time(node.operand)
    return False
