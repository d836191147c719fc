"""Value types: what kind of value an expression of FlyDSL code provably holds.

`model.value_type(expr)` answers with a `ValueType`: a compile-time Python
int / float / bool, an fx scalar (`Int32`, `Index`, ...), an `fx.Vector` of
an element class, a raw `ir.Value`, an `ArithValue` (with its `signed` when
known), a tensor, or unknown.
`model.explain_type(expr)` adds why. Once flydsl.expr is imported, ArithValue
is the MLIR value caster of scalar and vector types: a raw op's scalar or
vector result is already an ArithValue, of `signed=None` ("signless").
Facts about the FlyDSL API (the scalar classes, what a literal becomes in an
operator, the promotion lattice, `thread_idx.x`, `range` loop variables, what
the `fx.Vector` methods and operators give) are
those of the target release, read from data/flydsl_types.txt (derived from
the wheels by scripts/derive_flydsl_types.py). A read of a name bound more than
once has the type of the one binding provably reaching it (engine/model/flow.py),
else the type its bindings agree on; a helper's call, the type its returns agree
on, else the one they give for the types the call passes. Unknown stays unknown: a
name whose bindings disagree (or that traced code rebinds to a non-fx value), a call
of an unknown function, an operator the table does not settle.

Answers are computed when asked and memoized in the model's one memo; the
inference is depth-limited and a cyclic definition answers unknown, so deep
expressions and self-referencing assignments cannot blow the stack.
"""

from __future__ import annotations

import ast
import functools
import re
from pathlib import Path
from typing import NamedTuple

from ..target import releases as releases_known
from ..versions import Version
from .resolution import parameter_defaults
from .walk import child_nodes

_TABLE = Path(__file__).resolve().parent.parent.parent / "data" / "flydsl_types.txt"
_MAX_DEPTH = 40  # inference steps through one expression chain before giving up as unknown
_MAX_REBOUND_CHECKS = 20_000  # binding checks of rebound names in one module before they answer unknown
_MAX_REEXPORTS = 4  # project re-exports followed from a helper's import to the module defining it
_MAX_CALL_SITES = 3  # helper calls typed for their arguments one inside another before a call answers unknown
# The memos whose answers depend on what a function's parameters hold: typing a helper's
# returns for one call's arguments starts them afresh (`_CallSiteAnswers`).
_ARGUMENT_DEPENDENT = frozenset({"value_type", "rebound_type", "rebound_read", "passed_type", "return_type",
                                 "call_site_return"})
# The bindings whose types a name bound more than once can agree on (with, except, import, def,
# class, match, comprehension and walrus targets keep it unknown).
_AGREEING_BINDINGS = ("assign", "param", "loop")
# Expressions the layer gives no value type, as a reason names them.
_UNTYPED_EXPRESSIONS = {ast.List: "a list", ast.Tuple: "a tuple", ast.Dict: "a dict", ast.Set: "a set",
                        ast.ListComp: "a list comprehension", ast.Yield: "a `yield`", ast.Lambda: "a lambda",
                        ast.BoolOp: "an `and`/`or`", ast.Compare: "a chained comparison",
                        ast.UnaryOp: "a `not` or `~`", ast.JoinedStr: "an f-string", ast.Await: "an `await`",
                        ast.Starred: "a starred expression", ast.NamedExpr: "an assignment expression"}
# The bindings that give a name no value type, as a reason names them.
_BINDING_STATEMENTS = {"import": "an import", "def": "a def", "class": "a class statement", "with": "a with statement",
                       "except": "an except clause", "match": "a match pattern", "global": "a global statement"}

# A reason that ends in the reason it rests on: `unknown: left operand (unknown: ...)`.
_NESTED_REASON = re.compile(r"\((unknown: .*)\)\s*$")

# Kinds of values (ValueType.kind).
PY_INT, PY_FLOAT, PY_BOOL = "py-int", "py-float", "py-bool"
SCALAR, VECTOR, RAW, ARITH_VALUE = "scalar", "vector", "raw", "arith-value"
POINTER, TENSOR, LAYOUT, ATOM, UNKNOWN = "pointer", "tensor", "layout", "atom", "unknown"
# The kinds whose values are ir.Values: raw, and the value caster's ArithValue and fx.Vector.
IR_VALUE_KINDS = (RAW, ARITH_VALUE, VECTOR)
_KIND_NAMES = {PY_INT: "Python int", PY_FLOAT: "Python float", PY_BOOL: "Python bool"}  # as users read them
# Builtin types as annotations, and builtins whose result is always a Python number or bool of one type.
_BUILTIN_NUMBERS = {"int": PY_INT, "float": PY_FLOAT, "bool": PY_BOOL}
_BUILTIN_CONVERSIONS = {**_BUILTIN_NUMBERS, "len": PY_INT}
# Python's `math` functions of numbers -> the kind they return.
_STDLIB_MATH = {**{name: PY_FLOAT for name in ("sqrt", "exp", "exp2", "log", "log2", "log10", "pow", "sin", "cos",
                                              "tan", "fabs")},
                **{name: PY_INT for name in ("ceil", "floor", "trunc", "isqrt", "gcd", "lcm", "comb", "perm", "factorial")}}
# Builtins that return one of their Python number operands (or its magnitude).
_BUILTIN_SELECTORS = frozenset({"min", "max", "abs"})

# Where the scalar constructors live (fx.Int32 is flydsl.expr.Int32 through a star import).
SCALAR_MODULES = ("flydsl.expr", "flydsl.expr.numeric", "flydsl.expr.typing")
_ARITH_MODULES = ("flydsl.expr.arith", "flydsl.expr.utils.arith", "flydsl.expr", "flydsl.expr.typing")
_RAW_DIALECTS = "flydsl._mlir.dialects."
# The fx scalar classes every supported release has (rules match their constructors by these).
CLASSIC_SCALARS = frozenset({
    "Int8", "Int16", "Int32", "Int64", "Uint8", "Uint16", "Uint32", "Uint64", "Float16", "BFloat16",
    "Float32", "Float64", "Boolean", "Index",
})
# Each constructor's qualified name -> its class: `flydsl.expr.Int32` -> `Int32`.
SCALAR_CONSTRUCTORS = {f"{module}.{leaf}": leaf for module in SCALAR_MODULES for leaf in CLASSIC_SCALARS}
# flydsl.expr star-imports flydsl.expr.gpu: the table names the gpu module's paths.
# Where `fx.Vector` lives (its classmethods resolve to `<module>.Vector.<name>`).
VECTOR_CLASSES = frozenset({"flydsl.expr.Vector", "flydsl.expr.typing.Vector"})
# The tensor and pointer functions the value types follow: the modules that spell each, its
# positional arguments and the table's fact that shows what it gives.
_TENSOR_FUNCTIONS = {"make_rmem_tensor": (("flydsl.expr", "flydsl.expr.derived"), 2, "register-tensor-of-dtype"),
                     "memref_load_vec": (("flydsl.expr", "flydsl.expr.primitive"), 1, "vector-of-tensor-dtype"),
                     "recast_iter": (("flydsl.expr", "flydsl.expr.primitive"), 2, "pointer-of-class"),
                     "make_view": (("flydsl.expr", "flydsl.expr.primitive"), 2, "tensor-of-pointer-element")}
_POINTER_LOAD_MODULES = ("flydsl.expr", "flydsl.expr.primitive")
# The fx.Vector builders whose result is a vector of the class passed: the position of that
# argument (else `dtype=`) and the table's fact that shows it.
_DTYPE_VECTOR_BUILDERS = {"filled": (2, "dtype-vector"), "from_elements": (1, "coerces-elements")}
_GPU_MODULES = ("flydsl.expr.gpu.", "flydsl.expr.")
# Builtins through which code reaches a module's functions by a computed name.
_DYNAMIC_READS = ("globals", "locals", "vars", "eval", "exec")


class ValueType(NamedTuple):  # a NamedTuple: dataclasses cost a one-file run's start-up
    """What an expression holds; `scalar` names the fx class of a scalar (the element of a vector)."""

    kind: str
    scalar: str | None = None
    ir_type: str | None = None  # a raw value's MLIR type, when known
    width: int | None = None
    signed: bool | None = None
    is_float: bool = False
    signless: bool = False  # an ArithValue whose `.signed` is provably None (caster-made or `ArithValue(v)`)
    # An ArithValue of a scalar MLIR type, proven: of a vector type the value caster makes an
    # fx.Vector instead (its operators, methods and signedness its own), and ArithValue's
    # operators on one give fx.Vectors. Rules that rely on ArithValue's own behaviour ask for it.
    scalar_shaped: bool = False
    plain: bool = False  # an ArithValue itself, no fx.Vector: `ArithValue(v)`, `.with_signedness(s)`

    @property
    def is_index(self) -> bool:
        return self.scalar == "Index" or self.ir_type == "index"

    @property
    def known(self) -> bool:
        return self.kind != UNKNOWN

    def __str__(self) -> str:
        if self.kind == SCALAR:
            return f"fx.{self.scalar}"
        if self.kind == VECTOR:
            return f"fx.Vector of fx.{self.scalar}"
        if self.kind == TENSOR and self.scalar:
            return f"tensor of fx.{self.scalar}"
        if self.kind == POINTER and self.scalar:
            return f"pointer to fx.{self.scalar}"
        if self.kind == RAW:
            return f"ir.Value ({self.ir_type})" if self.ir_type else "ir.Value"
        if self.kind == ARITH_VALUE and not self.scalar_shaped:
            if not self.plain:
                return "ArithValue or fx.Vector"
            return f"ArithValue ({'signed=None' if self.signless else 'signedness unknown'}, of a scalar or vector type)"
        if self.kind == ARITH_VALUE:
            of_type = f"{self.ir_type}, " if self.ir_type else ""
            return f"ArithValue ({of_type}signed=None)" if self.signless else f"ArithValue ({of_type}signedness unknown)"
        return _KIND_NAMES.get(self.kind, self.kind)

    @property
    def described(self) -> str:
        """The type as a message's "`x` is ..." ends: "a Python int", "a tensor", "fx.Int32"."""
        spelled = str(self)
        if self.kind in (SCALAR, VECTOR, RAW, ARITH_VALUE, UNKNOWN):
            return spelled
        return f"an {spelled}" if spelled[0] in "aeiou" else f"a {spelled}"


UNKNOWN_TYPE = ValueType(UNKNOWN)
SIGNLESS_ARITH_VALUE = ValueType(ARITH_VALUE, signless=True, plain=True)  # `ArithValue(v)`, of any type
MAYBE_SIGNED_ARITH_VALUE = ValueType(ARITH_VALUE)  # an ArithValue (or an fx.Vector) that may carry a signedness
SCALAR_ARITH_VALUE = SIGNLESS_ARITH_VALUE._replace(scalar_shaped=True)  # the caster's value of a scalar type
# What a builder under `dsl_math_wrap_result` returns (data/flydsl_types.txt `results`).
_NUMERIC_CLASS_OR_ARITH_VALUE = "numeric-class-or-arith-value"  # preserve_numeric_type=True
_WRAPPED_RESULTS = ("arith-value-unless-numeric", _NUMERIC_CLASS_OR_ARITH_VALUE)
_PROMOTED_OPERANDS, _PROMOTED_INTEGERS = "promoted-operands", "promoted-integer-operands"  # `fx.max`, `fx.ceildiv`
_PROMOTED_RESULTS = (_PROMOTED_OPERANDS, _PROMOTED_INTEGERS)
_TYPED_OPERAND_FLOATS = frozenset({"Float16", "BFloat16", "Float32", "Float64"})  # `_validated_operand_dtype`
_OF_OPERANDS = "arith-value-of-operands"  # `arith.select(c, a, b)`: `SelectOp(...).result`, of the type of a and b
# `vector` ops whose one result is a scalar, or either (by their operands); the others give vectors.
_SCALAR_VECTOR_OPS = frozenset({"extractelement", "reduction"})
_EITHER_SHAPE_VECTOR_OPS = frozenset({"extract", "multireduction", "contract", "vectorscale"})
# `vector` builders (and op classes, as `BitCastOp`) whose first argument is their result type.
TYPED_VECTOR_OPS = frozenset({"fromelements", "bitcast", "broadcast", "splat", "load"})
_SCALAR_TYPE_GETTERS = frozenset({"flydsl._mlir.ir.IntegerType.get_signless", "flydsl._mlir.ir.IndexType.get",
                                  "flydsl._mlir.ir.F16Type.get", "flydsl._mlir.ir.BF16Type.get",
                                  "flydsl._mlir.ir.F32Type.get", "flydsl._mlir.ir.F64Type.get"})
_SPELLING_DEPTH = 4  # names followed to a type spelling


def scalar_arith_value(found: ValueType) -> bool:
    """An ArithValue proven of a scalar MLIR type: ArithValue's own operators and methods apply
    (of a vector type the value caster makes an fx.Vector, whose own differ)."""
    return found.kind == ARITH_VALUE and found.scalar_shaped


def plain_arith_value(found: ValueType) -> bool:
    """An ArithValue that is no fx.Vector: of a scalar type, or made by `ArithValue(v)`."""
    return found.kind == ARITH_VALUE and (found.scalar_shaped or found.plain)


def _is_scalar_shaped(found: ValueType) -> bool:
    """An fx scalar, or an ArithValue / raw value proven of a scalar MLIR type."""
    return found.kind == SCALAR or (found.kind in (ARITH_VALUE, RAW) and (found.scalar_shaped or found.ir_type is not None))


def _op_class_builder(leaf: str) -> str:
    """`ExtractElementOp` -> `ExtractElement`: an op class named as its builder, for `_caster_made_type`."""
    return leaf[:-2] if leaf.endswith("Op") else leaf


_CASTER_IR_TYPES = ("index", "f16", "f32", "f64", "bf16")  # and `i<N>`: raw loop values the caster makes ArithValues


def single_positional(call: ast.Call) -> ast.expr | None:
    """The one argument of a call given exactly one, by position and not starred."""
    if len(call.args) == 1 and not call.keywords and not isinstance(call.args[0], ast.Starred):
        return call.args[0]
    return None


def _disagreement(typed: list[tuple[ast.expr, ValueType, str]]) -> tuple[tuple | None, tuple, tuple | None]:
    """Of (expression, type, why) triples, not empty: the first of unknown type, the first, and the
    first of another type than the first's (None each where there is none)."""
    unknown = next((each for each in typed if not each[1].known), None)
    first = typed[0]
    return unknown, first, next((each for each in typed if each[1] != first[1]), None)


def _covers(span: str, release: Version, newest: Version) -> bool:
    """Whether `release` is in a table span (`A-`, `A-B`, `A`, joined with `,`)."""
    for part in span.split(","):
        first, dash, last = part.partition("-")
        low = Version.parse(first)
        high = (Version.parse(last) if last else newest) if dash else low
        if low <= release <= high:
            return True
    return False


def _fact_value(spelled: str) -> object:
    """`width=32,signed=true` -> {"width": 32, "signed": True}; any other word as it is."""
    if "=" not in spelled:
        return spelled
    parsed: dict[str, object] = {}
    for item in spelled.split(","):
        key, _, value = item.partition("=")
        parsed[key] = {"true": True, "false": False}.get(value, int(value) if value.isdigit() else value)
    return parsed


class TypeTable:
    """The facts of one release: scalar classes, literals, promotion, API returns, loops."""

    def __init__(self, facts: dict[str, dict[str, object]], release: Version | None) -> None:
        self.release = release
        self.scalars: dict[str, dict] = facts.get("scalars", {})
        self.literals: dict[str, str] = facts.get("literals", {})
        self.promotion = facts.get("operators", {}).get("promotion")
        # `flydsl.expr.arith.ArithValue.__add__` -> `arith-value`, `literal-operand` -> `own-type-constant`.
        self.operators: dict[str, str] = facts.get("operators", {})
        # `maximumf` -> `receiver-class`, ...: the `Numeric` methods every scalar class has.
        prefix = "flydsl.expr.numeric.Numeric."
        self.scalar_methods: dict[str, str] = {
            name[len(prefix):]: result for name, result in facts.get("methods", {}).items() if name.startswith(prefix)
        }
        self.returns: dict[str, str] = facts.get("returns", {})
        self.loops: dict[str, str] = facts.get("loops", {})
        self.values: dict[str, str] = facts.get("values", {})
        self.results: dict[str, str] = facts.get("results", {})
        # `flydsl.expr.typing.T.f16x4` -> `Float16x4`, `...Vector.bitcast` -> `same-bits` (FLY321's fixes).
        self.vectors: dict[str, str] = facts.get("vectors", {})
        # `Vector` -> {"base": "ArithValue", "ir-value-method": True}: what a helper's guards test (model/guards.py).
        self.classes: dict[str, dict] = facts.get("classes", {})
        # `flydsl.expr.math.absf` -> `first-operand`: builders whose result has their first operand's type.
        self.operand_typed: dict[str, str] = facts.get("operand-typed", {})

    @property
    def caster(self) -> bool:
        """Whether ArithValue is the value caster of every scalar and vector type."""
        return self.values.get("caster") == "scalar-and-vector"

    def has(self, fact: str, value: str) -> bool:
        """A `values` fact of the release (`to-raw identity`, `ir-value with-signedness`, ...)."""
        return self.values.get(fact) == value

    def scalar(self, name: str) -> ValueType:
        facts = self.scalars.get(name)
        if facts is None:
            # A release the table does not cover still has the classic constructors (data/flydsl_api.toml),
            # of no width the table vouches for: operators on them stay unknown.
            return ValueType(SCALAR, name) if not self.scalars and name in CLASSIC_SCALARS else UNKNOWN_TYPE
        return ValueType(SCALAR, name, width=facts["width"], signed=facts.get("signed"), is_float=facts["float"])

    @functools.cached_property
    def _spelled_scalars(self) -> dict[str, str]:
        """`f32` -> `Float32`: the MLIR scalar types `T` spells, by the fx class of their values."""
        prefix = "flydsl.expr.typing.T."
        return {path[len(prefix):]: cls for path, cls in self.vectors.items()
                if path.startswith(prefix) and cls in self.scalars}

    def class_of_ir_type(self, ir_type: str) -> str | None:
        """The fx class `Numeric.from_ir_type` gives values of MLIR type `ir_type` (`f32` -> `Float32`)."""
        return self._spelled_scalars.get(ir_type)

    def ir_type_name(self, cls: str) -> str | None:
        """The MLIR type of fx scalar class `cls`'s values (`f32`, `bf16`, `index`; an integer
        class's is signless, `i32` for Int32 and Uint32): the `T.<type>` the table spells `cls`,
        else `index` for Index and `i<width>` for an integer class (None for Boolean's i1 and a
        float the table does not spell)."""
        spelled = next((ir_type for ir_type, spelled_class in self._spelled_scalars.items() if spelled_class == cls), None)
        facts = self.scalars.get(cls, {})
        if spelled is None and cls == "Index" and self.vectors.get("flydsl.expr.typing.T.index") == "index-type":
            spelled = "index"
        elif spelled is None and facts.get("float") is False and cls != "Boolean":
            spelled = f"i{facts['width']}"
        return spelled

    def vector(self, element: str) -> ValueType:
        """An fx.Vector of the scalar class `element`."""
        found = self.scalar(element)
        return found._replace(kind=VECTOR) if found.known else UNKNOWN_TYPE

    def vector_fact(self, method: str) -> str | None:
        """What the release's `fx.Vector.<method>` gives (`dtype-vector`, `element-scalar`, ...)."""
        fact = self.vectors.get(f"flydsl.expr.typing.Vector.{method}")
        return fact if isinstance(fact, str) else None

    @property
    def round_trip_classes(self) -> tuple[str, ...]:
        """The classes `Numeric.from_ir_type` gives back for the element type of a vector or a
        tensor of that class (`fx.Vector(v)`, a tensor's dtype): never an unsigned one."""
        fact = self.vectors.get("flydsl.expr.numeric.Numeric.from_ir_type")
        return tuple(fact.split(",")) if isinstance(fact, str) else ()

    def casts_vectors_of(self, element: str) -> bool:
        """Whether the release's value caster makes a raw vector of `element`s an fx.Vector of that
        very class: `fx.Vector` is the caster of vector types (`vectors flydsl.expr.typing.Vector
        value-caster`) and `Numeric.from_ir_type` gives `element` back."""
        return element in self.round_trip_classes and self.vectors.get("flydsl.expr.typing.Vector") == "value-caster"

    def tensor_fact(self, leaf: str) -> str | None:
        """What the release's `fx.<leaf>` of a tensor or pointer gives (`register-tensor-of-dtype`, ...)."""
        fact = self.vectors.get(f"flydsl.expr.{leaf}")
        return fact if isinstance(fact, str) else None

    def parse(self, spelled: str) -> ValueType:
        """A table value (`Int32`, `raw`, `raw:index`, `arith-value`) as a ValueType; a raw
        scalar the release's value caster turns into an ArithValue is that signless ArithValue."""
        if spelled == ARITH_VALUE:
            return SIGNLESS_ARITH_VALUE
        if spelled == RAW or spelled.startswith(RAW + ":"):
            ir_type = spelled.partition(":")[2] or None
            if self.caster and ir_type and (ir_type in _CASTER_IR_TYPES or ir_type[:1] == "i" and ir_type[1:].isdigit()):
                return ValueType(ARITH_VALUE, ir_type=ir_type, signless=True, scalar_shaped=True, plain=True)
            return ValueType(RAW, ir_type=ir_type)
        return self.scalar(spelled)

    @property
    def source(self) -> str:
        return f"API table {self.release}"


@functools.lru_cache(maxsize=None)
def type_table(release: Version | None) -> TypeTable:
    """The facts of `release` (None: the oldest supported, as fix gating takes it);
    a release the table does not cover knows no API facts."""
    if release is None:
        release = releases_known().oldest_supported
    with open(_TABLE, encoding="utf-8") as handle:
        rows = [line.split() for line in handle if line.strip() and not line.startswith("#")]
    newest = max(Version.parse(r) for r in rows[0][1:])  # the `releases ...` line
    facts: dict[str, dict[str, object]] = {}
    for section, fact, span, value in rows[1:]:
        if _covers(span, release, newest):
            facts.setdefault(section, {})[fact] = _fact_value(value)
    return TypeTable(facts, release)


def _literal_type(node: ast.expr) -> ValueType:
    value = node.value
    if isinstance(value, bool):
        return ValueType(PY_BOOL)
    if isinstance(value, int):
        return ValueType(PY_INT)
    if isinstance(value, float):
        return ValueType(PY_FLOAT)
    return UNKNOWN_TYPE


# The vector operators whose element class the table may settle (data/flydsl_types.txt `vectors`).
_VECTOR_DUNDERS = {ast.Add: "__add__", ast.Sub: "__sub__", ast.Mult: "__mul__", ast.BitAnd: "__and__",
                   ast.BitOr: "__or__", ast.BitXor: "__xor__"}
# What an expression whose type is being inferred answers a read of itself (a cycle).
_DEFINED_THROUGH_ITSELF = (UNKNOWN_TYPE, "unknown: defined through itself")


_ARITHMETIC = (ast.Add, ast.Sub, ast.Mult, ast.FloorDiv, ast.Mod, ast.Pow, ast.Div)
_INT_ONLY = (ast.BitAnd, ast.BitOr, ast.BitXor, ast.LShift, ast.RShift)


class _CallSiteAnswers(dict):
    """The memo a helper's returns are typed in for one call's arguments: fresh for the
    argument-dependent queries, the model's own for every other."""

    def __init__(self, shared: dict) -> None:
        super().__init__()
        self.shared = shared

    def __missing__(self, query: str) -> dict:
        memo = self[query] = {} if query in _ARGUMENT_DEPENDENT else self.shared[query]
        return memo


class _ValueTypes:
    """Value-type inference (part of `SemanticModel`); needs `self.target_version`."""

    follows_project_returns = True  # False in the model of another module read for its helpers
    # While a helper's returns are typed for one call: its parameter bindings -> what the call passes
    # (replaced, never changed in place), and the (function, arguments) specializations in progress.
    _call_site_params: dict = {}
    _call_site_bounds: dict = {}  # likewise: a Python int parameter -> the range its argument is known in
    _call_sites: tuple = ()

    def value_type(self, node: ast.expr) -> ValueType:
        return self.explain_type(node)[0]

    def explain_type(self, node: ast.expr) -> tuple[ValueType, str]:
        """(type, why): why is `literal`, `annotation`, `API table <release>`,
        `assignment at L:C`, ... or the reason it is unknown."""
        return self._typed(node, 0)

    def unknown_cause(self, node: ast.expr) -> str | None:
        """Where the chain of reasons for an unknown type ends (`parameter `n` has no annotation`,
        `no return type known for `kernels.common.utils.cdiv``): the innermost of the nested
        reasons `explain_type` gives. None when the type is known."""
        found, why = self.explain_type(node)
        if found.known:
            return None
        while True:
            nested = _NESTED_REASON.search(why)
            if nested is None:
                return why.removeprefix("unknown: ")
            why = nested.group(1)

    @property
    def type_table(self) -> TypeTable:
        return type_table(self.target_version)

    # ------------------------------------------------------------ inference
    def _typed(self, node: ast.AST, depth: int) -> tuple[ValueType, str]:
        memo = self._answers["value_type"]
        found = memo.get(node)
        if found is not None:
            return found
        if depth > _MAX_DEPTH:
            return UNKNOWN_TYPE, "unknown: expression too deep"
        if type(node) is ast.Name:
            # No cycle mark for a name: `x = x.maximumf(y)` reads the very name asked, which must
            # see the type its bindings are checked under (`_rebound_type` and the bound value's
            # own entry catch a name's cycles).
            answer = self._infer(node, depth + 1)
        else:
            memo[node] = _DEFINED_THROUGH_ITSELF  # a cycle reads this
            self._in_progress.append((memo, node))
            try:
                answer = self._infer(node, depth + 1)
            finally:
                self._in_progress.pop()
        self._remember(memo, node, answer)
        return answer

    def _remember(self, memo: dict, key: object, answer: tuple[ValueType, str]) -> None:
        """Memoize an answer; while a rebound name is checked, note it, so that the answers
        computed under an assumption the check refutes can be dropped (`_forget_since`)."""
        memo[key] = answer
        if self._provisional is not None:
            self._provisional.append((memo, key))

    def _forget_since(self, mark: int) -> None:
        for memo, key in self._provisional[mark:]:
            memo.pop(key, None)
        del self._provisional[mark:]

    def _infer(self, node: ast.AST, depth: int) -> tuple[ValueType, str]:
        kind = type(node)
        if kind is ast.Constant:
            found = _literal_type(node)
            return found, "literal" if found.known else "unknown: not a number literal"
        if kind is ast.Name:
            return self._name_type(node, depth)
        if kind is ast.Call:
            return self._call_type(node, depth)
        if kind is ast.Attribute:
            return self._attribute_type(node, depth)
        if kind is ast.Subscript:
            return self._subscript_type(node, depth)
        if kind is ast.BinOp:
            return self._operator_type(node.op, node.left, node.right, depth)
        if kind is ast.Compare and len(node.ops) == 1:
            return self._operator_type(node.ops[0], node.left, node.comparators[0], depth)
        if kind is ast.UnaryOp and isinstance(node.op, (ast.USub, ast.UAdd)):
            operand, why = self._typed(node.operand, depth)
            return (operand, why) if operand.kind in (SCALAR, PY_INT, PY_FLOAT) else (UNKNOWN_TYPE, why)
        if kind is ast.IfExp:
            return self._conditional_type(node, depth)
        return UNKNOWN_TYPE, f"unknown: {_UNTYPED_EXPRESSIONS.get(kind, kind.__name__)} has no value type here"

    def _conditional_type(self, node: ast.IfExp, depth: int) -> tuple[ValueType, str]:
        """`a if c else b`: the one type both branches give. In traced code FlyDSL's rewriter
        turns it into `scf_ifexp_dispatch(c, lambda: a, lambda: b)` (compiler/ast_rewriter.py,
        the same in every release 0.3.0 to 0.5.0): a compile-time `c` picks a branch in Python;
        a run-time one builds an `scf.if` whose result is `_pack_states` of the promoted
        then-branch, so only an fx scalar comes out of the class it went in as (see `_rebound_type`)."""
        branches = [self._typed(branch, depth) for branch in (node.body, node.orelse)]
        (then_type, then_why), (else_type, else_why) = branches
        if not then_type.known or not else_type.known:
            return UNKNOWN_TYPE, then_why if not then_type.known else else_why
        if then_type != else_type:
            return UNKNOWN_TYPE, f"unknown: the branches of a conditional expression give {then_type} and {else_type}"
        if then_type.kind != SCALAR and self.in_traced_code(node):
            condition = self._typed(node.test, depth)[0]
            if condition.kind not in (PY_BOOL, PY_INT, PY_FLOAT):
                return UNKNOWN_TYPE, (f"unknown: a conditional expression in traced code whose condition may be a "
                                      f"run-time value, where the rewriter rebuilds the {then_type} as an fx value")
        return then_type, f"both branches of a conditional expression ({then_why})"

    def _name_type(self, node: ast.Name, depth: int) -> tuple[ValueType, str]:
        binding = self.binding_of(node)
        if binding is None:
            return UNKNOWN_TYPE, f"unknown: `{node.id}` is not bound in this module"
        if self._bound_from_another_scope(binding):
            return UNKNOWN_TYPE, f"unknown: `{node.id}` is declared global or nonlocal"
        if not self.is_single_binding(binding):
            reaching = self.reaching_binding(node)
            found = self._binding_type(reaching, depth) if reaching is not None else None
            if found is not None and found[0].known:
                return found
            agreed = self._rebound_type(binding, depth)
            rebuilt = self._rebuilt_scalar(node, depth) if not agreed[0].known else None
            if rebuilt is not None:
                return rebuilt
            # The binding the read sees says best why it is unknown.
            return agreed if agreed[0].known or found is None else found
        found = self._binding_type(binding, depth)
        if found[0].known and found[0].kind != SCALAR and self._carried_before(binding, node):
            return UNKNOWN_TYPE, (f"unknown: a control-flow region of traced code before this read calls a method of, "
                                  f"or stores into, `{node.id}`: the rewriter carries it and rebuilds the {found[0]} "
                                  f"as an fx value")
        return found

    def _rebuilt_scalar(self, read: ast.Name, depth: int) -> tuple[ValueType, str] | None:
        """The fx scalar type a read sees after an `scf.if` rebuilt the name from its value on
        entry (`rebuilding_if`), when that value is an fx scalar; else None."""
        rebuilt = self.rebuilding_if(read)
        if rebuilt is None:
            return None
        region, entering = rebuilt
        entry, why = self._binding_type(entering, depth)
        if entry.kind != SCALAR:
            return None
        return entry, f"the `if` at {_at(region)} rebuilds `{read.id}` as the {entry} it was on entry ({why})"

    def _carried_before(self, binding, read: ast.Name) -> bool:
        """Whether an `if`, `while` or `range` loop of traced code that starts after `binding` and not after
        `read` carries the name: FlyDSL's rewriter carries a name a region calls a method of
        (`x.f()`, `x.a.f()`) or stores into (`x[i] = v`, `x.a = v`) besides names it assigns
        (`_collect_assigned_vars` in compiler/ast_rewriter.py, 0.3.0 to 0.5.0), and from then on
        the name holds `_promote(x)`'s rebuild (`as_dsl_value`), not the Python number or
        ir.Value bound. Only fx scalars pass through unchanged."""
        start = binding.position
        position = (read.lineno, read.col_offset)
        return any(start < (region.lineno, region.col_offset) <= position and self.traced_function(region) is not None
                   and self.enclosing_function(region) is self.enclosing_function(read)
                   for region in self._carrying_regions(binding.name))

    def _bound_from_another_scope(self, binding) -> bool:
        """Whether a `global`/`nonlocal` statement lets some function rebind the name
        (the walk records that assignment in the function's scope, not in the one read)."""
        return binding.name in self.names_declared_global_or_nonlocal()

    def _rebound_type(self, binding, depth: int) -> tuple[ValueType, str]:
        """The one type every binding of a name bound more than once in its scope gives.

        A binding that reads the name itself (`acc = acc + x`, `acc += x`) is checked
        optimistically: the type the first binding of a known type gives is assumed for
        the name's reads and every binding must give it back; the answers computed under
        an assumption that fails are dropped. At most _MAX_REBOUND_CHECKS binding checks a
        module: nested rebound names cannot make it exponential.

        In traced code FlyDSL's AST rewriter carries a name through a dynamic `if`,
        `for` or `while` (`scf_if_dispatch`, `scf_for_dispatch`, `scf_while_dispatch` in
        compiler/ast_rewriter.py) as `_pack_states(results, exemplar)`, the exemplar being
        `_promote(value on entry)`: a Python bool/int/float becomes
        `as_dsl_value(as_ir_value(v))` and an ir.Value (an ArithValue) `as_dsl_value(v)`,
        while an fx scalar passes unchanged and is rebuilt as `type(exemplar)(value)`
        (`Numeric.__construct_from_ir_values__` is `cls(values[0])`). Checked in the
        rewriter and numeric.py of every release 0.3.0 ... 0.5.0 (0.3.0 and 0.3.1 hand a
        branch the entry values themselves, later ones `_pack_states(state_raw, exemplar)`:
        the same class either way). So there the agreement holds only for fx scalars; a
        Python number or an ArithValue rebound in traced code stays unknown where such a
        region carries the name (`carried_through_a_region`). Elsewhere (plain helpers,
        module level, a loop over a list) Python runs as written: any kind may agree.
        """
        key = (binding.scope, binding.name)
        answers = self._answers["rebound_type"]
        found = answers.get(key)
        if found is not None:
            read = self._answers["rebound_read"]
            if key in read:
                read[key] = True  # the check in progress depends on what it assumed
            return found  # the answer, or the assumption of a check in progress
        outermost = self._provisional is None
        if outermost:
            self._provisional = []
        try:
            answer = self._check_rebound(binding.scope.bindings[binding.name], key, depth)
        finally:
            if outermost:
                self._provisional = None
        self._remember(answers, key, answer)
        return answer

    def _check_rebound(self, bindings: list, key: tuple, depth: int) -> tuple[ValueType, str]:
        name = bindings[0].name
        other = next((b for b in bindings if b.kind not in _AGREEING_BINDINGS), None)
        if other is not None:
            return UNKNOWN_TYPE, f"unknown: `{name}` is bound more than once, once by a {other.kind} binding"
        checks = self._answers["rebound_checks"]
        checks[None] = checks.get(None, 0) + 2 * len(bindings)
        if checks[None] > _MAX_REBOUND_CHECKS:
            return UNKNOWN_TYPE, f"unknown: `{name}` is bound more than once (too many rebound names to check)"
        answers, read = self._answers["rebound_type"], self._answers["rebound_read"]
        mark = len(self._provisional)
        answers[key], read[key] = (UNKNOWN_TYPE, f"unknown: `{name}` is defined through itself"), False
        # An expression still being typed when the check starts (`x.maximumf(y)` of the binding
        # `x = x.maximumf(y)`, asked first) would read as a cycle to the binding it is part of:
        # the check types it afresh under its assumption, and its mark comes back after unless
        # it got an answer (which the outer inference then replaces with its own).
        memo = self._answers["value_type"]
        hidden = list(dict.fromkeys(  # a node re-typed under an outer check is in progress twice
            node for owner, node in self._in_progress if owner is memo and memo.get(node) is _DEFINED_THROUGH_ITSELF))
        for node in hidden:
            del memo[node]
        try:
            answer = self._agreed_type(bindings, key, mark, depth)
        finally:
            for node in hidden:
                memo.setdefault(node, _DEFINED_THROUGH_ITSELF)
        del answers[key], read[key]
        return answer

    def _agreed_type(self, bindings: list, key: tuple, mark: int, depth: int) -> tuple[ValueType, str]:
        name = bindings[0].name
        answers, read = self._answers["rebound_type"], self._answers["rebound_read"]
        typed = (self._binding_type(binding, depth) for binding in bindings)
        assumed = next((found for found, _ in typed if found.known), None)
        if read[key]:
            self._forget_since(mark)  # computed while the name's reads were unknown
        if assumed is None:
            return UNKNOWN_TYPE, f"unknown: `{name}` is bound more than once, to no known type"
        if assumed.kind != SCALAR and self.in_traced_code(bindings[0].node) and self.carried_through_a_region(bindings):
            return UNKNOWN_TYPE, (f"unknown: `{name}` is bound more than once in traced code, where the rewriter "
                                  f"may rebuild the {assumed} it carries through control flow as an fx value")
        agreed = f"every binding of `{name}` gives {assumed} ({len(bindings)} bindings)"
        answers[key] = (assumed, agreed)  # what the name's reads see while the bindings are checked
        for binding in bindings:
            found, why = self._binding_type(binding, depth)
            if found != assumed:
                self._forget_since(mark)
                where = _at(binding.node)
                return UNKNOWN_TYPE, f"unknown: `{name}` is bound more than once, at {where} to {found} ({why})"
        return assumed, agreed

    def _binding_type(self, binding, depth: int) -> tuple[ValueType, str]:
        """The type one binding gives its name."""
        name, target = binding.name, binding.node
        if binding.kind == "param":
            passed = self._call_site_params.get(binding)
            if passed is not None:
                return passed
            annotation = getattr(target, "annotation", None)
            if annotation is None:
                return self._passed_type(binding, depth)
            found = self._parameter_annotation_type(binding)
            return found, "annotation" if found.known else f"unknown: annotation of `{name}`"
        statement = self.parent(target)
        while isinstance(statement, (ast.Tuple, ast.List)):  # an unpacking target: up to its statement
            statement = self.parent(statement)
        where = _at(target)
        if binding.kind == "assign":
            if isinstance(statement, ast.AugAssign):
                return self._augmented_type(statement, binding, depth)
            value = _assigned_value(statement, target)
            if isinstance(statement, ast.AnnAssign):
                annotated = self._annotation_type(statement.annotation)
                if annotated.known:
                    return annotated, f"annotation at {where}"
            unpacked = _unpacking_position(statement, target)
            if value is None and unpacked is not None:
                return self._unpacked_type(statement.value, *unpacked, depth)
            if value is None:
                return UNKNOWN_TYPE, f"unknown: `{name}` is not assigned one value"
            found, why = self._typed(value, depth)
            return (found, f"assignment at {where}") if found.known else (found, why)
        if binding.kind in ("loop", "comprehension"):
            return self._loop_variable_type(target, where, depth)
        if binding.kind == "import" and self.follows_project_returns:
            found = self._imported_number_type(binding)
            if found is not None:
                return found
        return UNKNOWN_TYPE, f"unknown: `{name}` is bound by {_BINDING_STATEMENTS.get(binding.kind, binding.kind)}"

    def _imported_number_type(self, binding) -> tuple[ValueType, str] | None:
        """A name imported from a project module (`from kernels.consts import MAX_BLOCKS`): the
        Python number (or bool) that module binds it to once, at its top level, typed in the
        module's own model (read from the project index, never imported). None for anything else:
        a value of the kernel's run has no place at a module's top level."""
        module, _, leaf = (self.binding_target(binding) or "").rpartition(".")
        if not module or module.startswith("flydsl.") or self.project.find(module) is None:
            return None
        module, leaf = self._defining_module(module, leaf)
        other = self._project_helpers(module)
        bound = other.module_scope.bindings.get(leaf, ()) if other is not None else ()
        if len(bound) != 1 or bound[0].kind != "assign":
            return None
        found, why = other._binding_type(bound[0], 0)
        if found.kind not in (PY_INT, PY_FLOAT, PY_BOOL):
            return None
        return found, f"`{leaf}` of {module} ({why})"

    def _passed_type(self, binding, depth: int) -> tuple[ValueType, str]:
        """An unannotated parameter of a helper nested in a function: the one known type every
        call of it passes (or its default gives), when the helper is only ever called by name."""
        memo = self._answers["passed_type"]
        if binding not in memo:
            memo[binding] = (UNKNOWN_TYPE, f"unknown: parameter `{binding.name}` is passed itself")  # a cycle reads this
            self._remember(memo, binding, self._agreed_argument_type(binding, depth))
        return memo[binding]

    def _agreed_argument_type(self, binding, depth: int) -> tuple[ValueType, str]:
        name = binding.name
        passed = self.passed_arguments(binding)
        function = self.parent(self.parent(binding.node))
        if passed is None:
            unseen = self.unseen_callers(function)  # None: a call unpacks, or the def takes *args
            reason = f"unknown: parameter `{name}` has no annotation"
            return UNKNOWN_TYPE, f"{reason}, and {unseen}" if unseen else reason
        unknown, first, other = _disagreement([(argument, *self._typed(argument, depth)) for argument in passed])
        if unknown is not None:  # the place to look next (`--show-types` of that line says why)
            return UNKNOWN_TYPE, f"unknown: `{function.name}` is passed `{name}` of unknown type at {_at(unknown[0])}"
        if other is not None:
            return UNKNOWN_TYPE, (f"unknown: the calls of `{function.name}` pass `{name}` {first[1]} at {_at(first[0])} "
                                  f"and {other[1]} at {_at(other[0])}")
        return first[1], f"every call of `{function.name}` passes `{name}` as one type ({len(passed)} calls)"

    def passed_arguments(self, binding) -> list[ast.expr] | None:
        """What each call passes for the parameter `binding` (its default where a call omits it), of
        a helper only ever called by name in this module (`only_called`): every caller is seen.
        None when one may not be, or a call unpacks `*args` / `**kwargs`."""
        arguments = self.parent(binding.node)
        signature = self._call_signature(arguments)
        if signature is None or not self.only_called(self.parent(arguments)) or arguments.vararg or arguments.kwarg:
            return None
        return self._arguments_for(binding, signature)

    def only_called(self, function: ast.AST) -> bool:
        """A def nested in a function, or a private one of the module, undecorated, bound once,
        whose name is only ever the callee of a call in the module (never passed, returned or
        stored: no caller we cannot see)."""
        return self.unseen_callers(function) is None

    def unseen_callers(self, function: ast.AST) -> str | None:
        """Why `function` (a def or a lambda) may have a caller this module does not show, or
        whose calls are not followed (None: `only_called`)."""
        if isinstance(function, ast.Lambda):
            return "a lambda's calls are not followed"
        name = function.name
        if isinstance(function, ast.AsyncFunctionDef):
            return f"`{name}` is async"
        scope = self._scope_of_node[function].parent
        if function.decorator_list:
            return f"`{name}` is decorated"
        if scope.kind == "module":
            reached = self.reached_from_outside(name)
            if reached is not None:
                return reached
        elif scope.kind != "function":
            return f"`{name}` is a method"
        bindings = scope.bindings.get(name, ())
        if len(bindings) != 1 or self._bound_from_another_scope(bindings[0]):
            return f"`{name}` is bound more than once"
        uses = [load for load in self._loads.get(name, ()) if self.binding_of(load) is bindings[0]]
        calls = self.calls_of(function)
        callees = [call.func for call in calls]
        if any(load not in callees for load in uses):
            return f"`{name}` is used here other than as a callee"
        if not calls:
            return f"`{name}` is never called here"
        if len(uses) != len(calls) or any(callee not in uses for callee in callees):
            return f"`{name}` is called here other than by its name"
        return None

    def private_to_module(self, name: str) -> bool:
        """A module-level name no other code can reach: `_`-prefixed (so a star import skips
        it), in no string of the module (`__all__`, `getattr`, `globals()[...]`) and named
        by no other Python file under the project's source roots (none imports it)."""
        return self.reached_from_outside(name) is None

    def reached_from_outside(self, name: str) -> str | None:
        """Why code outside this module may reach its module-level `name` (None: `private_to_module`)."""
        if not name.startswith("_") or name.startswith("__"):
            return f"`{name}` is public"
        if self._reads_names_dynamically():
            return "the module reads its names dynamically"
        if name in self.strings:
            return f"a string of the module names `{name}`"
        return self.project.mentioned_elsewhere(self.module_name, name)

    def _reads_names_dynamically(self) -> bool:
        """Whether the module may reach a function by a computed name (`globals()[...]`, `eval`)."""
        return "__getattr__" in self.module_scope.bindings or any(
            self.binding_of(load) is None for name in _DYNAMIC_READS for load in self._loads.get(name, ()))

    def _augmented_type(self, statement: ast.AugAssign, binding, depth: int) -> tuple[ValueType, str]:
        """`x += v` is `x = x + v` (fx scalars define no in-place operators): `x` read as the
        binding reaching the statement gives it, else as the type its bindings agree on."""
        if self.is_single_binding(binding):
            return UNKNOWN_TYPE, f"unknown: `{binding.name}` is augmented before it is bound"
        reaching = self.augmented_reaching_binding(statement, binding)
        read = self._binding_type(reaching, depth) if reaching is not None else None
        if read is None or not read[0].known:
            read = self._rebound_type(binding, depth)
        return self._combined_type(statement.op, (statement.target, *read), statement.value, depth)

    def _parameter_annotation_type(self, binding) -> ValueType:
        """What a parameter's annotation declares. A builtin `int`, `float` or `bool` is trusted as
        a type checker trusts it, except on a @flyc.kernel / @flyc.jit function, whose parameters
        FlyDSL makes values of its own (and does not enforce the annotation)."""
        annotation = binding.node.annotation
        if isinstance(annotation, ast.Name) and annotation.id in _BUILTIN_NUMBERS and self.binding_of(annotation) is None:
            function = self.parent(self.parent(binding.node))
            return UNKNOWN_TYPE if self.function_kind(function) else ValueType(_BUILTIN_NUMBERS[annotation.id])
        return self._annotation_type(annotation)

    def _annotation_type(self, annotation: ast.expr) -> ValueType:
        if isinstance(annotation, ast.Subscript):
            name = self.resolve(annotation.value) or ""
            if name.endswith(".Constexpr") and isinstance(annotation.slice, ast.Name):
                return {"int": ValueType(PY_INT), "float": ValueType(PY_FLOAT),
                        "bool": ValueType(PY_BOOL)}.get(annotation.slice.id, UNKNOWN_TYPE)
            return UNKNOWN_TYPE
        return self._constructed_type(self.resolve(annotation))

    def _constructed_type(self, name: str | None) -> ValueType:
        """The type a call of (or an annotation with) the qualified name `name` gives."""
        if name is None:
            return UNKNOWN_TYPE
        module, _, leaf = name.rpartition(".")
        if module in SCALAR_MODULES:
            if leaf == "Tensor":
                return ValueType(TENSOR)
            return self.type_table.scalar(leaf)
        return UNKNOWN_TYPE

    def _loop_variable_type(self, target: ast.AST, where: str, depth: int) -> tuple[ValueType, str]:
        """A `for` target: `range_constexpr` -> Python int; `range` -> what the
        rewriter makes it in traced code (a plain Python int elsewhere). A comprehension's
        target is a Python int over either: the rewriter rewrites `for` statements only
        (ast_rewriter.py of every release 0.3.0 to 0.5.0), so its `range` is the builtin."""
        variable = f"`{target.id}`" if isinstance(target, ast.Name) else "the loop variable"
        loop = target
        while loop is not None and not isinstance(loop, (ast.For, ast.comprehension)):
            loop = self.parent(loop)
        call = getattr(loop, "iter", None)
        if isinstance(call, (ast.List, ast.Tuple)) and loop.target is target:
            return self._display_loop_type(call, where, depth)
        elements = self.list_elements(call, depth) if isinstance(call, (ast.Name, ast.ListComp)) else None
        if elements is not None and loop.target is target:  # Python's own loop: the rewriter rewrites `range` ones
            return self._element_type(call, elements, depth)
        if not isinstance(call, ast.Call):
            return UNKNOWN_TYPE, f"unknown: {variable} is bound by a loop over something other than range()"
        kind = self.range_callee(call.func)
        if kind == "range_constexpr" and loop.target is target:
            return ValueType(PY_INT), f"range_constexpr loop at {where}"
        if kind != "range":
            return UNKNOWN_TYPE, f"unknown: {variable} is bound by a loop over something other than range()"
        traced = isinstance(loop, ast.For) and self.in_traced_code(loop)
        has_init = any(keyword.arg == "init" for keyword in call.keywords)
        if not traced:
            return (ValueType(PY_INT), f"Python range loop at {where}") if loop.target is target and not has_init \
                else (UNKNOWN_TYPE, "unknown: range loop outside traced code")
        if not has_init and loop.target is target:
            fact = "range"
        elif has_init and isinstance(loop.target, ast.Tuple) and len(loop.target.elts) == 2 \
                and loop.target.elts[1] is not target:  # the iter args themselves are a Python list
            fact = "range-init" if loop.target.elts[0] is target else "range-init-state"
        elif has_init and isinstance(loop.target, ast.Tuple) and loop.target.elts[-1] is target:
            return UNKNOWN_TYPE, f"unknown: {variable} is the list of its range loop's carried values, not one value"
        else:
            return UNKNOWN_TYPE, f"unknown: {variable} is neither the index nor a carried value of its range loop"
        spelled = self.type_table.loops.get(fact)
        if spelled is None:
            return UNKNOWN_TYPE, f"unknown: no {fact} loop fact for {self.type_table.release}"
        return self.type_table.parse(spelled), f"{self.type_table.source} ({fact} loop at {where})"

    def _display_loop_type(self, display: ast.List | ast.Tuple, where: str, depth: int) -> tuple[ValueType, str]:
        """A loop over a list or tuple display of Python ints (`for sh in [32, 16, 8]`) binds them:
        the rewriter leaves such a `for` a Python loop unless the display's dump names `for_` or
        `scf_range` (ast_rewriter.py `visit_For`, 0.3.0 to 0.5.0)."""
        if not display.elts or any(self._typed(element, depth)[0].kind != PY_INT for element in display.elts):
            return UNKNOWN_TYPE, "unknown: loop over a display of values not all Python ints"
        if any(word in ast.dump(display) for word in ("for_", "scf_range")):
            return UNKNOWN_TYPE, "unknown: the rewriter may build an scf.for of this loop"
        return ValueType(PY_INT), f"loop over a display of Python ints at {where}"

    def _call_type(self, node: ast.Call, depth: int) -> tuple[ValueType, str]:
        func = node.func
        name = self.resolve(func)
        if name is not None:
            module, _, leaf = name.rpartition(".")
            constructed = self._constructed_type(name)
            if constructed.known:
                return constructed, "constructor"
            if module in VECTOR_CLASSES and leaf in _DTYPE_VECTOR_BUILDERS:
                return self._dtype_vector_type(node, leaf)
            if name in VECTOR_CLASSES:
                return self._vector_wrap_type(node, depth)
            if module in _TENSOR_FUNCTIONS.get(leaf, ((),))[0]:
                return self._register_tensor_call_type(node, leaf, depth)
            if leaf == "ptr_load" and module in _POINTER_LOAD_MODULES:
                return self._pointer_load_type(node)
            if leaf == "ArithValue" and module in _ARITH_MODULES:
                return self._arith_value_call_type(node, depth)
            if leaf in ("unwrap", "_to_raw") and module in _ARITH_MODULES and len(node.args) == 1:
                return self._unwrapped_type(node.args[0], leaf, depth)
            if module == "math" and leaf in _STDLIB_MATH:
                return self._stdlib_math_type(node, leaf, depth)
            if leaf == "index_cast" and module in _ARITH_MODULES and len(node.args) == 2 and not node.keywords:
                return self._index_cast_type(node.args[0], node.args[1], depth)
            if leaf == "as_ir_value" and module in _ARITH_MODULES:
                return ValueType(RAW), f"{leaf}(...)"
            if leaf[:1].islower() and self.type_table.caster and self.type_table.results.get(name) == ARITH_VALUE:
                return self._caster_made_type(node, module, leaf, f"`{leaf}(...)`", depth)
            if self.type_table.caster and self.type_table.results.get(name) == _OF_OPERANDS:
                return self._selected_type(node, leaf, depth)
            if self.type_table.caster and self.type_table.results.get(name) in _WRAPPED_RESULTS:
                return self._wrapped_builder_type(node, name, self.type_table.results[name], depth)
            if self.type_table.results.get(name) in _PROMOTED_RESULTS:
                return self._promoted_operands_type(node, leaf, self.type_table.results[name], depth)
            spelled = self.type_table.returns.get(f"{name}()")  # the gpu dialect's index ids (their annotation)
            if spelled is not None:
                return self.type_table.parse(spelled), self.type_table.source
            if name.startswith(_RAW_DIALECTS) and leaf[:1].islower():
                # A builder returns its op's one result, a list of several, or the op when it has none.
                return UNKNOWN_TYPE, f"unknown: `{name}` may return an op or a result list"
            for prefix in _GPU_MODULES:
                if name.startswith(prefix):
                    spelled = self.type_table.returns.get(f"flydsl.expr.gpu.{name[len(prefix):]}()")
                    if spelled is not None:
                        return self.type_table.parse(spelled), self.type_table.source
            if not name.startswith("flydsl.") and self.follows_project_returns:
                module, leaf = self._defining_module(module, leaf)
                helpers = self._project_helpers(module)
                function = _plain_functions(helpers.tree).get(leaf) if helpers is not None else None
                if function is not None:
                    # The helper's own model types (and keeps) only the functions asked of it.
                    found = helpers._return_type(function, 0)[0]
                    if found.known and self._annotations_hold(helpers, function, node, depth):
                        return found, f"return of `{leaf}` in {module}"
                    specialized = self._call_site_return(helpers, function, node, depth)
                    if specialized is not None:
                        return specialized[0], f"{specialized[1]} in {module}"
                    if found.known:  # the annotations did not hold
                        return UNKNOWN_TYPE, _contradicted(leaf)
            if isinstance(func, ast.Attribute):  # `gpu.grid_dim.x.ir_value()`: a method of a typed API value
                found = self._method_call_type(node, func, depth)
                if found[0].known:
                    return found
            return UNKNOWN_TYPE, f"unknown: no return type known for `{name}`"
        if isinstance(func, ast.Attribute):
            return self._method_call_type(node, func, depth)
        if isinstance(func, ast.Name):
            binding = self.binding_of(func)
            if binding is None and func.id in _BUILTIN_CONVERSIONS and not self.star_import_may_bind(func.id):
                # The rewriter leaves calls alone, so they return Python's own number or bool (or raise).
                return ValueType(_BUILTIN_CONVERSIONS[func.id]), f"builtin `{func.id}(...)`"
            if binding is None and func.id in _BUILTIN_SELECTORS and not self.star_import_may_bind(func.id):
                return self._selected_number(node, func.id, depth)
            if binding is not None and binding.kind == "def" and self.is_single_binding(binding):
                if self._specializing(binding.node):  # its parameters hold what the outer call passes
                    return self._call_site_return(self, binding.node, node, depth) or (
                        UNKNOWN_TYPE, f"unknown: `{func.id}` called inside its own call-site typing")
                found = self._return_type(binding.node, depth)
                if self._scope_of_node[binding.node].parent.kind == "class":
                    return found
                held = self._annotations_hold(self, binding.node, node, depth)
                if found[0].known and held:
                    return found
                return self._call_site_return(self, binding.node, node, depth) or (
                    found if held else (UNKNOWN_TYPE, _contradicted(func.id)))
        spelled = ast.unparse(func) if isinstance(func, (ast.Name, ast.Attribute)) else "the callee"
        return UNKNOWN_TYPE, f"unknown: no return type known for `{spelled}` (not resolved)"

    def _method_call_type(self, node: ast.Call, func: ast.Attribute, depth: int) -> tuple[ValueType, str]:
        """`receiver.method(...)`, by the receiver's type."""
        receiver = self._typed(func.value, depth)[0]
        if func.attr == "ir_value" and not node.args and receiver.kind == SCALAR:
            return self._ir_value_type(receiver)
        if func.attr == "ir_value" and not node.args and receiver.kind == ARITH_VALUE:
            return ValueType(RAW, ir_type=None), "`.ir_value()` of a typed value"
        if func.attr == "ir_value" and not node.args and receiver.kind == VECTOR:
            return receiver, "`Vector.ir_value()` returns the vector itself"
        if receiver.kind == VECTOR or self.is_vector_wrap(func.value):
            return self._vector_method_type(node, receiver)
        if func.attr == "with_signedness" and receiver.kind == ARITH_VALUE:
            # `type(self)(self, s)`; fx.Vector's own gives `ArithValue(self, s)`.
            return MAYBE_SIGNED_ARITH_VALUE._replace(scalar_shaped=receiver.scalar_shaped, plain=True), "`.with_signedness(...)`"
        if receiver.kind == ARITH_VALUE:
            return self._arith_value_method_type(node, func.attr, receiver)
        if func.attr == "to" and len(node.args) == 1 and receiver.kind == SCALAR:
            target = self._constructed_type(self.resolve(node.args[0]))
            if target.kind == SCALAR:
                return target, "`.to(T)`"
        if receiver.kind == SCALAR and func.attr in self.type_table.scalar_methods:
            return self._scalar_method_type(node, receiver, depth)
        if (func.attr == "load" and receiver.kind == TENSOR and not node.args and not node.keywords
                and self.type_table.tensor_fact("Tensor.load") == "vector-of-tensor-dtype"):
            return self._tensor_load_type(func.value, "Tensor.load", depth)
        return UNKNOWN_TYPE, f"unknown: method `{func.attr}` of {receiver}"

    def _selected_number(self, node: ast.Call, name: str, depth: int) -> tuple[ValueType, str]:
        """`min(a, b)`, `max(a, b)`, `abs(a)` of Python numbers of one kind: one of them (or its
        magnitude), so that kind; of an int and a float it may be either."""
        if node.keywords or any(isinstance(a, ast.Starred) for a in node.args) \
                or len(node.args) < (1 if name == "abs" else 2) or (name == "abs" and len(node.args) != 1):
            return UNKNOWN_TYPE, f"unknown: builtin `{name}(...)` of no plain operands"
        kinds = {self._typed(argument, depth)[0].kind for argument in node.args}
        if len(kinds) == 1 and kinds <= {PY_INT, PY_FLOAT}:
            return ValueType(kinds.pop()), f"builtin `{name}(...)` of Python numbers of one kind"
        return UNKNOWN_TYPE, f"unknown: builtin `{name}(...)` of operands not all Python numbers of one kind"

    def _scalar_method_type(self, node: ast.Call, receiver: ValueType, depth: int) -> tuple[ValueType, str]:
        """`v.maximumf(w)` is `type(v)(...)`; `v.bitcast(fx.Int32)` an Int32; `cond.select(a, b)`
        the common type (`_resolve_numeric_type`) of two fx scalars or number literals."""
        method = node.func.attr
        result = self.type_table.scalar_methods[method]
        source = f"`{receiver}.{method}` ({self.type_table.source})"
        if result == "receiver-class":
            return receiver, source
        if result == "argument-class" and len(node.args) == 1 and not node.keywords:
            target = self._constructed_type(self.resolve(node.args[0]))
            if target.kind == SCALAR:
                return target, source
            return UNKNOWN_TYPE, f"unknown: `.{method}` to a class that is not a known fx scalar"
        if result == "common-type" and receiver.scalar == "Boolean" and len(node.args) == 2 and not node.keywords:
            firsts, seconds = (self._operand_scalars(argument, self._typed(argument, depth)[0], depth)
                               for argument in node.args)
            if not firsts or not seconds:
                return UNKNOWN_TYPE, f"unknown: an operand of `.{method}` is neither an fx scalar nor a Python number"
            commons = {_common_type(self.type_table, first, second) for first in firsts for second in seconds}
            common = commons.pop() if len(commons) == 1 else UNKNOWN_TYPE
            return (common, source) if common.known else (UNKNOWN_TYPE, "unknown: promotion not settled")
        return UNKNOWN_TYPE, f"unknown: method `{method}` of {receiver} called so"

    def _dtype_vector_type(self, node: ast.Call, method: str) -> tuple[ValueType, str]:
        """`fx.Vector.filled(shape, x, fx.Int32)`, `fx.Vector.from_elements(elements, fx.Float32)`:
        a vector of the class passed."""
        position, fact = _DTYPE_VECTOR_BUILDERS[method]
        dtype = node.args[position] if len(node.args) == position + 1 else next(
            (k.value for k in node.keywords if k.arg == "dtype"), None)
        element = self._constructed_type(self.resolve(dtype)) if dtype is not None else UNKNOWN_TYPE
        if element.kind != SCALAR or self.type_table.vector_fact(method) != fact:
            return UNKNOWN_TYPE, f"unknown: `Vector.{method}` of no known fx scalar class"
        return self.type_table.vector(element.scalar), f"`Vector.{method}` ({self.type_table.source})"

    def _register_tensor_call_type(self, node: ast.Call, leaf: str, depth: int) -> tuple[ValueType, str]:
        """`fx.make_rmem_tensor(shape, T)`: a tensor whose dtype is T, and `fx.recast_iter(T, p)`: a
        pointer to T (T's element type's class, so only for the classes that map back to
        themselves); `fx.make_view(p, layout)` of a pointer to T: a tensor of T;
        `fx.memref_load_vec(t)` of a tensor of T: a vector of T."""
        _, arity, fact = _TENSOR_FUNCTIONS[leaf]
        if len(node.args) != arity or node.keywords or self.type_table.tensor_fact(leaf) != fact:
            return UNKNOWN_TYPE, f"unknown: `{leaf}` called so"
        if leaf == "make_rmem_tensor":
            return self._of_round_trip_class(TENSOR, node.args[1], leaf)
        if leaf == "recast_iter":
            return self._of_round_trip_class(POINTER, node.args[0], leaf)
        if leaf == "memref_load_vec":
            return self._tensor_load_type(node.args[0], leaf, depth)
        found, why = self._typed(node.args[0], depth)
        if found.kind == POINTER and found.scalar:
            return ValueType(TENSOR, found.scalar), f"`make_view` of a {found} ({self.type_table.source})"
        return UNKNOWN_TYPE, f"unknown: `make_view` of no pointer of a known element class ({why})"

    def _of_round_trip_class(self, kind: str, cls: ast.expr, leaf: str) -> tuple[ValueType, str]:
        element = self._constructed_type(self.resolve(cls))
        if element.kind == SCALAR and element.scalar in self.type_table.round_trip_classes:
            return ValueType(kind, element.scalar), f"`{leaf}` of {element} ({self.type_table.source})"
        return UNKNOWN_TYPE, f"unknown: `{leaf}` of {element if element.known else 'no known fx class'}"

    def _tensor_load_type(self, tensor: ast.expr, spelled: str, depth: int) -> tuple[ValueType, str]:
        """`fx.memref_load_vec(t)` / `t.load()` of a tensor of T: a vector of T."""
        found, why = self._typed(tensor, depth)
        if found.kind == TENSOR and found.scalar:
            return self.type_table.vector(found.scalar), f"`{spelled}` of a {found} ({self.type_table.source})"
        return UNKNOWN_TYPE, f"unknown: `{spelled}` of a value of no known dtype ({why})"

    def _pointer_load_type(self, node: ast.Call) -> tuple[ValueType, str]:
        """`fx.ptr_load(p, result_type=t)` of a proven vector type t: the value the caster made of
        the loaded vector, an fx.Vector of t's element class (a scalar t is not followed: 0.3.x
        wraps it by its MLIR type, later releases in the class given)."""
        table = self.type_table
        given = node.args[1] if len(node.args) == 2 else next((k.value for k in node.keywords if k.arg == "result_type"), None)
        spelled = self.spelled_vector_type(given) if given is not None else None
        if spelled is None or table.tensor_fact("ptr_load") != "caster-value-of-result-type":
            return UNKNOWN_TYPE, "unknown: `ptr_load` of no proven vector type"
        if not table.casts_vectors_of(spelled[0]):
            return UNKNOWN_TYPE, f"unknown: the value caster's vector of {spelled[0]} may be of another class"
        return table.vector(spelled[0]), f"`ptr_load` of a vector of {spelled[0]} ({table.source})"

    def _vector_wrap_type(self, node: ast.Call, depth: int) -> tuple[ValueType, str]:
        """`fx.Vector(v)`: a vector of the class `Numeric.from_ir_type` gives v's element type, which is
        v's own element class for the classes the table lists (never an unsigned one: its vector
        elements are signless)."""
        if self.type_table.vector_fact("__init__") != "ir-element-class":
            return UNKNOWN_TYPE, f"unknown: no `fx.Vector(v)` fact for {self.type_table.release}"
        if not self.is_vector_wrap(node):
            return UNKNOWN_TYPE, "unknown: `fx.Vector(...)` with a shape or dtype"
        found, why = self._typed(node.args[0], depth)
        element = found.scalar if found.kind == VECTOR else (self.vector_type(node.args[0]) or (None,))[0]
        if element in self.type_table.round_trip_classes:
            return self.type_table.vector(element), f"`fx.Vector` of a vector of {element} ({self.type_table.source})"
        if element is None:
            return UNKNOWN_TYPE, f"unknown: `fx.Vector` of a value of no known vector type ({why})"
        return UNKNOWN_TYPE, f"unknown: `fx.Vector` of a vector of {element} may change its class"

    def _vector_method_type(self, node: ast.Call, receiver: ValueType) -> tuple[ValueType, str]:
        """A method of an fx.Vector (`receiver`, or `fx.Vector(v)` of an element class not known):
        `.to(T)` and `.bitcast(T)` give a vector of T, `.reduce(op)` a scalar of the element class."""
        method, table = node.func.attr, self.type_table
        fact = table.vector_fact(method)
        source = f"`Vector.{method}` ({table.source})"
        if method in ("to", "bitcast") and fact in ("dtype-vector", "same-bits") and len(node.args) == 1 \
                and all(k.arg == "rounding_mode" for k in node.keywords if method == "to") \
                and (method == "to" or not node.keywords):
            target = self._constructed_type(self.resolve(node.args[0]))
            if target.kind == SCALAR:
                return table.vector(target.scalar), source
            return UNKNOWN_TYPE, f"unknown: `Vector.{method}` to a class that is not a known fx scalar"
        if method == "reduce" and fact == "element-scalar" and receiver.kind == VECTOR:
            return table.scalar(receiver.scalar), source
        return UNKNOWN_TYPE, f"unknown: method `{method}` of {receiver if receiver.known else 'an fx.Vector'}"

    def _wrapped_builder_type(self, node: ast.Call, name: str, result: str, depth: int) -> tuple[ValueType, str]:
        """A builder under `dsl_math_wrap_result` (`fx.math.exp2(x)`, `arith.shrui(v, 2)`): the
        builder's caster-made ArithValue when its first operand is an ir.Value, not an fx value;
        with `preserve_numeric_type`, the first operand's class when it is an fx scalar; of an op
        whose result has its first operand's type (`operand-typed`), an fx scalar or vector first
        operand's class where `Numeric.from_ir_type` gives it back."""
        table, leaf = self.type_table, name.rpartition(".")[2]
        if not node.args or isinstance(node.args[0], ast.Starred):
            return UNKNOWN_TYPE, f"unknown: `{leaf}` without a first positional operand"
        first, why = self._typed(node.args[0], depth)
        if first.kind in (ARITH_VALUE, RAW):
            return SCALAR_ARITH_VALUE if _is_scalar_shaped(first) else MAYBE_SIGNED_ARITH_VALUE, \
                f"`{leaf}` of an ir.Value gives the value caster's ArithValue ({table.source})"
        if first.kind == SCALAR and result == _NUMERIC_CLASS_OR_ARITH_VALUE:
            return first, f"`{leaf}` keeps the class of its first operand, {first} ({table.source})"
        if first.kind in (SCALAR, VECTOR) and first.scalar in table.round_trip_classes \
                and table.operand_typed.get(name) == "first-operand":
            return first, f"`{leaf}` gives a value of its first operand's type, {first} ({table.source})"
        return UNKNOWN_TYPE, f"unknown: `{leaf}` of {first} (its result's type is not settled)"

    def _promoted_operands_type(self, node: ast.Call, leaf: str, result: str, depth: int) -> tuple[ValueType, str]:
        """`fx.max(a, b)`, `fx.ceildiv(a, b)`: the common class of the operands, each an fx scalar or
        a Python number (`as_numeric`: an int by its range), under the lattice the operators use
        (`_resolve_numeric_type`). A Boolean counts as Int32 for `promoted-operands` and is refused
        by `promoted-integer-operands`, as an Index, a narrow float or (integers only) a float are;
        a vector, a raw value or a nested list leaves the result unknown."""
        if not node.args or any(keyword.arg is None for keyword in node.keywords):
            return UNKNOWN_TYPE, f"unknown: `{leaf}` without positional operands, or with `**` ones"
        common = None
        for operand in node.args:
            found, why = (UNKNOWN_TYPE, "unknown: a starred operand") if isinstance(operand, ast.Starred) \
                else self._typed(operand, depth)
            if found.kind not in (SCALAR, PY_INT, PY_FLOAT, PY_BOOL):
                return UNKNOWN_TYPE, f"unknown: an operand of `{leaf}` is {found.described} ({why})"
            scalars = self._operand_scalars(operand, found, depth)
            if len(scalars) != 1:
                return UNKNOWN_TYPE, "unknown: a Python int of unknown value may be an Int32 or an Int64"
            scalar = scalars[0]
            if scalar.scalar == "Boolean" and result == _PROMOTED_OPERANDS:
                scalar = self.type_table.scalar("Int32")
            if scalar.scalar in ("Index", "Boolean") or (result == _PROMOTED_INTEGERS and scalar.is_float) \
                    or (scalar.is_float and scalar.scalar not in _TYPED_OPERAND_FLOATS):
                return UNKNOWN_TYPE, f"unknown: `{leaf}` refuses an operand of {scalar}"
            common = scalar if common is None else _common_type(self.type_table, common, scalar)
            if not common.known:
                return UNKNOWN_TYPE, "unknown: promotion not settled"
        return common, f"`{leaf}` gives its operands' common class ({self.type_table.source})"

    def _selected_type(self, node: ast.Call, leaf: str, depth: int) -> tuple[ValueType, str]:
        """`arith.select(c, a, b)`: the op's result has the type of `a` and `b` (a number literal
        becomes a constant of the other's type), so the value caster's ArithValue when one of
        them is an fx scalar or an ArithValue, both of a scalar or vector type."""
        if len(node.args) != 3 or node.keywords or any(isinstance(a, ast.Starred) for a in node.args):
            return UNKNOWN_TYPE, f"unknown: `{leaf}` not called with a condition and two values"
        kinds = {self._typed(value, depth)[0].kind for value in node.args[1:]}
        if kinds & {SCALAR, ARITH_VALUE}:
            return self._caster_made_type(node, _RAW_DIALECTS + "arith", leaf, f"`{leaf}(...)`", depth)
        return UNKNOWN_TYPE, f"unknown: `{leaf}` of values of no known scalar type"

    def _arith_value_call_type(self, node: ast.Call, depth: int) -> tuple[ValueType, str]:
        """`ArithValue(v)` is signed=None whatever `v` carried; `ArithValue(v, signed)` may not be."""
        signed = node.args[1:] + [keyword.value for keyword in node.keywords if keyword.arg == "signed"]
        without_sign = not signed or (len(signed) == 1 and isinstance(signed[0], ast.Constant) and signed[0].value is None)
        shaped = bool(node.args) and _is_scalar_shaped(self._typed(node.args[0], depth)[0])
        if without_sign and len(node.args) == 1 and self.type_table.has("arith-value-signed", "argument"):
            return SIGNLESS_ARITH_VALUE._replace(scalar_shaped=shaped), f"`ArithValue(v)` sets signed=None ({self.type_table.source})"
        return MAYBE_SIGNED_ARITH_VALUE._replace(scalar_shaped=shaped, plain=True), "`ArithValue(v, signed)`" if signed else "ArithValue(...)"

    def _arith_value_method_type(self, node: ast.Call, method: str, receiver: ValueType) -> tuple[ValueType, str]:
        """`v.trunci(T.i16)`: the value caster's ArithValue of the arith op the method builds, of
        the receiver's shape or of the scalar type it is given; `v.index_cast(T.index)` may also
        return `v` itself, signless only if `v` is. Of a receiver that may be an fx.Vector, unknown."""
        result = self.type_table.results.get(f"flydsl.expr.arith.ArithValue.{method}") if self.type_table.caster else None
        if not plain_arith_value(receiver):
            return UNKNOWN_TYPE, f"unknown: method `{method}` of an ArithValue that may be an fx.Vector (its methods are its own)"
        scalar = receiver.scalar_shaped or any(self._spells_scalar_type(argument) for argument in node.args)
        made = SCALAR_ARITH_VALUE if scalar else MAYBE_SIGNED_ARITH_VALUE  # of a vector type, an fx.Vector
        if result == ARITH_VALUE or (result == "self-or-arith-value" and receiver.signless):
            return made, f"`ArithValue.{method}` gives the value caster's ArithValue ({self.type_table.source})"
        if result == "self-or-arith-value":
            return MAYBE_SIGNED_ARITH_VALUE._replace(scalar_shaped=scalar, plain=scalar), f"`ArithValue.{method}` may return its receiver, {receiver}"
        return UNKNOWN_TYPE, f"unknown: method `{method}` of {receiver}"

    def _unwrapped_type(self, argument: ast.expr, leaf: str, depth: int) -> tuple[ValueType, str]:
        """`unwrap(v)` / `_to_raw(v)`: an ir.Value (an ArithValue or an fx.Vector too) unchanged,
        a scalar's `.ir_value()`."""
        found, why = self._typed(argument, depth)
        if found.kind in IR_VALUE_KINDS and self.type_table.has("to-raw", "identity"):
            return found, f"`{leaf}` returns an ir.Value unchanged ({why})"
        if found.kind == SCALAR:
            return self._ir_value_type(found)
        return ValueType(RAW), f"{leaf}(...)"

    def _stdlib_math_type(self, node: ast.Call, leaf: str, depth: int) -> tuple[ValueType, str]:
        """Python's `math.sqrt(x)` and kin of Python numbers: a float, or an int for the rounding
        and integer functions (`math.ceil`, `math.isqrt`, ...). Of anything else (an fx value has
        no `__float__` at run time) the call is not typed."""
        if node.keywords or not node.args or any(
                self._typed(argument, depth)[0].kind not in (PY_INT, PY_FLOAT, PY_BOOL) for argument in node.args):
            return UNKNOWN_TYPE, f"unknown: `math.{leaf}` of operands not all Python numbers"
        return ValueType(_STDLIB_MATH[leaf]), f"Python's `math.{leaf}` of Python numbers"

    def _index_cast_type(self, target: ast.expr, argument: ast.expr, depth: int) -> tuple[ValueType, str]:
        """FlyDSL's `index_cast(T, v)`: `_to_raw(v)` itself when already of type T, else the cast op's
        caster-made ArithValue (signed=None). So an ArithValue for an ArithValue (signless if `v` is)
        or an fx scalar (whose `.ir_value()` carries its class's signedness); for a raw ir.Value, an
        ir.Value."""
        if not self.type_table.has("index-cast", "to-raw-or-caster"):
            return UNKNOWN_TYPE, f"unknown: no `index_cast` fact for {self.type_table.release}"
        found, why = self._typed(argument, depth)
        scalar = found.scalar_shaped or self._spells_scalar_type(target)
        if found.kind == ARITH_VALUE:
            # The operand itself, or the cast's caster-made value: of a vector type an fx.Vector.
            result = (SIGNLESS_ARITH_VALUE if found.signless else MAYBE_SIGNED_ARITH_VALUE)._replace(scalar_shaped=True, plain=True) \
                if scalar else MAYBE_SIGNED_ARITH_VALUE
        elif found.kind == SCALAR:
            result = MAYBE_SIGNED_ARITH_VALUE._replace(scalar_shaped=True, plain=True)
        elif found.kind == RAW:
            result = ValueType(RAW)
        else:
            return UNKNOWN_TYPE, f"unknown: `index_cast` of a value of no known kind ({why})"
        return result, f"`index_cast` gives its operand or the cast's ArithValue ({self.type_table.source})"

    def _ir_value_type(self, scalar: ValueType) -> tuple[ValueType, str]:
        """A scalar's `.ir_value()`: its ArithValue `with_signedness(cls.signed)` (a fresh
        constant's, signed=None, when the scalar is a compile-time one)."""
        if not self.type_table.has("ir-value", "with-signedness"):
            return ValueType(RAW, ir_type=None), "`.ir_value()` of a typed value"
        ir_type = self.type_table.ir_type_name(scalar.scalar)
        if scalar.is_float:
            return SCALAR_ARITH_VALUE._replace(ir_type=ir_type), f"`.ir_value()` of {scalar}: a float has no signedness"
        return MAYBE_SIGNED_ARITH_VALUE._replace(scalar_shaped=True, plain=True, ir_type=ir_type), \
            f"`.ir_value()` of {scalar} carries signed={scalar.signed} ({self.type_table.source})"

    def _caster_made_type(self, op: ast.Call, module: str, leaf: str, what: str, depth: int) -> tuple[ValueType, str]:
        """What the value caster makes of a raw op's one result: a plain ArithValue (signed=None)
        of a scalar type; of a vector type an fx.Vector (`Vector` replaces ArithValue as the caster
        of vector types: table fact `vectors flydsl.expr.typing.Vector value-caster`), whose
        operators, methods and signedness are its own. The op shows the shape: a `vector` op gives
        a vector, but `extractelement` and `reduction` a scalar, and `extract` one of a proven 1-D
        source at one static position; an `arith`/`math` op (elementwise) the shape of a value
        operand or of the type it is given, a `select` that of its values. Of no shown shape, an
        ArithValue that may be an fx.Vector (not `scalar_shaped`, not signless)."""
        source = self.type_table.source
        op_name = leaf.replace("_", "").lower()
        if module.rpartition(".")[2] == "vector":
            if op_name in _SCALAR_VECTOR_OPS or (op_name == "extract" and self._scalar_extract(op)):
                return SCALAR_ARITH_VALUE, f"{what} gives the value caster's ArithValue of a scalar ({source})"
            if op_name in _EITHER_SHAPE_VECTOR_OPS:
                return MAYBE_SIGNED_ARITH_VALUE, f"{what} gives the value caster's ArithValue, or an fx.Vector ({source})"
            spelled = self.spelled_vector_type(op.args[0]) if op.args and op_name in TYPED_VECTOR_OPS else None
            if spelled is not None and self.type_table.casts_vectors_of(spelled[0]):
                return self.type_table.vector(spelled[0]), f"{what} gives the value caster's fx.Vector ({source})"
            return UNKNOWN_TYPE, f"unknown: {what} gives the value caster's fx.Vector, of no element class spelled with `T`"
        if op_name == "index" or (op_name == "constant" and len(op.args) == 1 and all(
                keyword.arg == "index" for keyword in op.keywords)):
            # FlyDSL's `constant(v)` with no type: a scalar of v's Python type (`index(v)`: an index)
            return SCALAR_ARITH_VALUE, f"{what} gives the value caster's ArithValue of a scalar ({source})"
        if op_name == "constantvector":
            return UNKNOWN_TYPE, f"unknown: {what} gives the value caster's fx.Vector"
        values = op.args[1:] if op_name == "select" else [*op.args, *(keyword.value for keyword in op.keywords)]
        shape = self._shown_shape(values, depth)
        if shape == SCALAR:
            return SCALAR_ARITH_VALUE, f"{what} gives the value caster's ArithValue ({source})"
        if shape == VECTOR:
            return UNKNOWN_TYPE, f"unknown: {what} of a vector gives the value caster's fx.Vector"
        return MAYBE_SIGNED_ARITH_VALUE, f"{what} gives the value caster's ArithValue, or an fx.Vector of a vector type ({source})"

    def _shown_shape(self, operands: list[ast.expr], depth: int) -> str | None:
        """VECTOR when an operand is a vector or spells a vector type, SCALAR when one is a scalar
        (an fx scalar, an ArithValue or raw value of a scalar type) or spells a scalar type; else None.
        A Python number shows nothing: FlyDSL's builders make it a constant of the other operand's type."""
        shape = None
        for operand in operands:
            if isinstance(operand, ast.Starred):
                return None
            if self.spelled_vector_type(operand) is not None:
                return VECTOR
            found = self._typed(operand, depth)[0]
            if found.kind == VECTOR:
                return VECTOR
            if _is_scalar_shaped(found) or self._spells_scalar_type(operand):
                shape = SCALAR
        return shape

    def _spells_scalar_type(self, node: ast.expr, depth: int = 0) -> bool:
        """`T.i32`, `T.f32`, `T.index` (the table's `T` scalars), `ir.IntegerType.get_signless(32)`,
        `ir.F32Type.get()` (and the index, f16, bf16, f64 kin), or a name bound once to one."""
        if isinstance(node, ast.Name) and depth < _SPELLING_DEPTH:
            binding = self.binding_of(node)
            single = binding is not None and self.is_single_binding(binding) \
                and binding.name not in self.names_declared_global_or_nonlocal()
            statement = self._assignment_statement(binding) if single else None  # `i32, i64 = T.i32, T.i64` too
            value = _assigned_value(statement, binding.node) if statement is not None else None
            return value is not None and self._spells_scalar_type(value, depth + 1)
        if isinstance(node, ast.Call):
            return self.resolve(node.func) in _SCALAR_TYPE_GETTERS
        spelled = self._t_fact(node, self.type_table) if isinstance(node, ast.Attribute) else None
        return spelled is not None and (spelled in self.type_table.scalars or spelled == "index-type")

    def _scalar_extract(self, op: ast.Call) -> bool:
        """`vector.extract(v, static_position=[i], dynamic_position=[])` of a proven 1-D `v`: one lane."""
        keywords = {keyword.arg: keyword.value for keyword in op.keywords}
        static, dynamic = keywords.get("static_position"), keywords.get("dynamic_position")
        return len(op.args) == 1 and isinstance(static, ast.List) and len(static.elts) == 1 \
            and isinstance(dynamic, ast.List) and not dynamic.elts and self.vector_type(op.args[0]) is not None

    def _raw_op_type(self, op: ast.Call, what: str, depth: int) -> tuple[ValueType, str]:
        """A raw op's value: what the release's caster makes of its one scalar/vector result
        (the table's `results`; `_caster_made_type`), else a raw ir.Value."""
        name = self.resolve(op.func)
        if self.type_table.caster and name in self.type_table.results:
            module, _, leaf = name.rpartition(".")
            return self._caster_made_type(op, module, _op_class_builder(leaf), what, depth)
        return ValueType(RAW), what

    def _project_helpers(self, module: str) -> _ValueTypes | None:
        """The model of project module `module` its helpers' returns are typed in, for the run
        (kept: calls type them again for their arguments). It follows no further module:
        the chain stays bounded."""
        project = self.project

        def derive(name: str) -> _ValueTypes | None:
            parsed = project.parse(name)
            if parsed is None:
                return None
            model = type(self)(parsed[0], name, parsed[1], project, self.target_version)
            model.follows_project_returns = False
            return model

        return project.derived(self._helper_models_kind, module, derive)

    def _defining_module(self, module: str, leaf: str) -> tuple[str, str]:
        """Where project module `module`'s `leaf` is defined: through its re-exports
        (`from kernels.common.mem_ops import atomic_add` in kernels_common), at most
        _MAX_REEXPORTS of them; `module` itself when it defines `leaf` or imports it from
        elsewhere than the project."""
        for _ in range(_MAX_REEXPORTS):
            summary = self.project.summary(module)
            target = summary.imported.get(leaf) if summary is not None and leaf not in summary.defined else None
            if target is None or target.startswith("flydsl.") or self.project.find(target.rpartition(".")[0]) is None:
                break
            module, _, leaf = target.rpartition(".")
        return module, leaf

    @property
    def _helper_models_kind(self) -> str:
        return f"value types: helper models for {self.target_version}"

    def walked_as_helper(self) -> _ValueTypes | None:
        """The helper model (`_project_helpers`) another file's check built of this model's
        very tree, the one `ProjectIndex.take_tree` handed its check: the same walk."""
        helper = self.project.kept_derivation(self._helper_models_kind, self.module_name)
        return helper if helper is not None and helper.tree is self.tree else None

    def _call_site_return(self, model: _ValueTypes, function: ast.AST, call: ast.Call,
                          depth: int) -> tuple[ValueType, str] | None:
        """The one known type every `return` of an undecorated def of `model` (this model or a
        project module's) gives with its parameters bound to what `call` passes, positionally, by
        keyword or by default (no `*args`/`**kwargs` on either side); None when no argument's
        type is known or the returns do not agree on one."""
        if function.decorator_list or not isinstance(function, ast.FunctionDef):
            return None
        passed = _call_arguments(function.args, call)
        if passed is None:
            return None
        types = tuple((name, *self._passed_value(value, depth)) for name, value in passed.items())
        if not any(found is not None and found.known for _, found, _ in types):
            return None
        found = model._specialized_return(function, types, depth)
        return found if found[0].known else None

    def _passed_value(self, value: ast.expr | None, depth: int) -> tuple[ValueType | None, tuple[int, int] | None]:
        """What an argument gives its parameter for `_specialized_return`: its type (None for the
        default) and, for a Python int, the least and greatest value it can hold when known
        (operators and typed builders pick an fx class by whether it fits in 32 bits)."""
        if value is None:
            return None, None
        found = self._typed(value, depth)[0]
        return found, self._int_bounds(value, 0, depth) if found.kind == PY_INT else None

    def _specialized_return(self, function: ast.FunctionDef, passed: tuple, depth: int) -> tuple[ValueType, str]:
        """`_returned` with the parameters of `function` holding `passed` ((name, type or None for
        the default, the range of a Python int or None), ...), answered in a fresh memo of the
        argument-dependent queries, once per model and arguments; a recursive call, or one nested
        too deep, answers unknown."""
        key = (function, passed)
        memo = self._answers["call_site_return"]
        if key in memo:
            return memo[key]
        if key in self._call_sites or len(self._call_sites) >= _MAX_CALL_SITES:
            return UNKNOWN_TYPE, f"unknown: `{function.name}` typed for its arguments inside itself or too deep"
        bindings = self._scope_of_node[function].bindings
        defaults = parameter_defaults(function.args)
        params = dict(self._call_site_params)  # a nested helper still reads its enclosing one's
        bounds = dict(self._call_site_bounds)
        for name, found, int_range in passed:
            binding = next(b for b in bindings[name] if b.kind == "param")
            params[binding] = self._argument_type(binding, found, defaults.get(name), depth)
            if int_range is not None and params[binding][0].kind == PY_INT:
                bounds[binding] = int_range
        saved = self._answers, self._call_site_params, self._call_site_bounds, self._call_sites, self._provisional
        self._answers, self._call_site_params, self._call_site_bounds = _CallSiteAnswers(self._answers), params, bounds
        self._call_sites, self._provisional = self._call_sites + (key,), None
        try:
            found, why = self._returned(function, depth)
        finally:
            (self._answers, self._call_site_params, self._call_site_bounds, self._call_sites,
             self._provisional) = saved
        answer = (found, f"{why}, for the argument types of the call") if found.known else (found, why)
        self._remember(memo, key, answer)
        return answer

    def _annotations_hold(self, model: _ValueTypes, function: ast.AST, call: ast.Call, depth: int) -> bool:
        """Whether `call` passes each annotated parameter of `function` (of `model`) the type the
        annotation declares, or a value of no known type: the function's own return type takes the
        annotations at their word, which Python does not enforce (`cdiv(numer: int, denom: int)`
        called with an fx.Int32 returns an fx.Int32)."""
        arguments = function.args
        annotated = [a for a in (*arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs) if a.annotation is not None]
        if not annotated:
            return True
        passed = _call_arguments(arguments, call, collected=True)
        if passed is None:
            return False  # which parameter an unpacked argument reaches is not known, or the call raises
        bindings = model._scope_of_node[function].bindings
        for parameter in annotated:
            value = passed[parameter.arg]
            if value is None:
                continue  # the default
            declared = model._parameter_annotation_type(next(b for b in bindings[parameter.arg] if b.kind == "param"))
            found = self._typed(value, depth)[0]
            if declared.known and found.known and found != declared:
                return False
        return True

    def _specializing(self, function: ast.AST) -> bool:
        """Whether `function`'s returns are being typed for a call's arguments (its parameters hold them)."""
        return any(active is function for active, _ in self._call_sites)

    def _argument_type(self, binding, passed: ValueType | None, default: ast.expr | None,
                       depth: int) -> tuple[ValueType, str]:
        """What a parameter holds for one call: the type passed (or its default's), which an
        annotation must not contradict; the annotation's when the argument's is unknown."""
        name, annotation = binding.name, binding.node.annotation
        annotated = self._parameter_annotation_type(binding) if annotation is not None else UNKNOWN_TYPE
        found = self._typed(default, depth)[0] if passed is None else passed
        if found.known and annotated.known and found != annotated:
            return UNKNOWN_TYPE, f"unknown: the call passes `{name}` as {found}, annotated {annotated}"
        if found.known:
            return found, f"the call passes `{name}` as {found}"
        return (annotated, "annotation") if annotated.known else (UNKNOWN_TYPE, f"unknown: the call passes `{name}` no known type")

    def _return_type(self, function: ast.AST, depth: int) -> tuple[ValueType, str]:
        """The one known type every `return` of a module function gives (asked once per function)."""
        memo = self._answers["return_type"]
        if function not in memo:
            self._remember(memo, function, self._returned(function, depth))
        return memo[function]

    def _returned(self, function: ast.AST, depth: int) -> tuple[ValueType, str]:
        # Of a def that is no generator, the returns its guards let run (model/guards.py).
        returns = self.reachable_returns(function, depth) if self._returns_of(function) is not None else None
        if returns is None or any(node.value is None for node in returns):
            return UNKNOWN_TYPE, f"unknown: `{function.name}` does not always return a value"
        types = {self._typed(node.value, depth)[0] for node in returns}
        if len(types) != 1 or UNKNOWN_TYPE in types:
            return UNKNOWN_TYPE, f"unknown: returns of `{function.name}` differ or are unknown"
        return types.pop(), f"return of `{function.name}` at {function.lineno}:{function.col_offset + 1}"

    def _returns_of(self, function: ast.AST) -> list[ast.Return] | None:
        """`_returns(function)`, walked once a def (each name unpacked from a call of it asks)."""
        memo = self._answers["returns"]
        if function not in memo:
            memo[function] = _returns(function)
        return memo[function]

    def _unpacked_type(self, value: ast.expr, length: int, index: int, depth: int) -> tuple[ValueType, str]:
        """Element `index` of `a, b, ... = value` (`length` names, no star): `value` a call of an
        undecorated def of the module, or a name bound once to one. Only the def's returns of a tuple of
        `length` items can bind the names (any other tuple, or None, makes the unpacking
        raise); they must all give that item one known type, and every return be a tuple."""
        if isinstance(value, ast.Name):
            binding = self.binding_of(value)
            if binding is None or binding.kind != "assign" or not self.is_single_binding(binding):
                return UNKNOWN_TYPE, f"unknown: `{value.id}` is not bound once"
            value = _assigned_value(self.parent(binding.node), binding.node)
        callee = self.binding_of(value.func) if isinstance(value, ast.Call) and isinstance(value.func, ast.Name) else None
        if callee is None or callee.kind != "def" or not self.is_single_binding(callee):
            return UNKNOWN_TYPE, "unknown: unpacking of no call of a def of this module"
        function = callee.node
        if function.decorator_list:
            return UNKNOWN_TYPE, f"unknown: `{function.name}` is decorated"
        if self._specializing(function):
            return UNKNOWN_TYPE, f"unknown: `{function.name}` unpacked inside its own call-site typing"
        returns = self._returns_of(function)
        if returns is None or not all(isinstance(node.value, ast.Tuple) or node.value is None for node in returns):
            return UNKNOWN_TYPE, f"unknown: `{function.name}` does not always return a tuple"
        items = [node.value.elts for node in returns if node.value is not None and len(node.value.elts) == length]
        if not items or any(isinstance(item, ast.Starred) for elements in items for item in elements):
            return UNKNOWN_TYPE, f"unknown: no return of `{function.name}` has {length} items"
        types = {self._typed(elements[index], depth)[0] for elements in items}
        if len(types) != 1 or UNKNOWN_TYPE in types:
            return UNKNOWN_TYPE, f"unknown: returns of `{function.name}` differ or are unknown at item {index + 1}"
        return types.pop(), f"item {index + 1} of the returns of `{function.name}` at {function.lineno}:{function.col_offset + 1}"

    def _attribute_type(self, node: ast.Attribute, depth: int) -> tuple[ValueType, str]:
        name = self.resolve(node)
        if name is not None:
            for prefix in _GPU_MODULES:
                if name.startswith(prefix):
                    spelled = self.type_table.returns.get(f"flydsl.expr.gpu.{name[len(prefix):]}")
                    if spelled is not None:
                        return self.type_table.parse(spelled), self.type_table.source
        if node.attr == "result" and self._is_raw_op(node.value):
            return self._raw_op_type(node.value, "`.result` of a raw dialect op", depth)
        if node.attr == "induction_variable" and self._is_scf_for(node.value) and self.type_table.caster:
            return SCALAR_ARITH_VALUE, f"an scf.ForOp induction variable (index or integer: {self.type_table.source})"
        return UNKNOWN_TYPE, f"unknown: attribute `{node.attr}`"

    def _is_scf_for(self, node: ast.expr) -> bool:
        """`scf.ForOp(...)`, or a name bound once to it."""
        if isinstance(node, ast.Name):
            binding = self.binding_of(node)
            if binding is None or binding.kind != "assign" or not self.is_single_binding(binding):
                return False
            node = _assigned_value(self.parent(binding.node), binding.node)
        return isinstance(node, ast.Call) and self.resolve(node.func) == _RAW_DIALECTS + "scf.ForOp"

    def _subscript_type(self, node: ast.Subscript, depth: int) -> tuple[ValueType, str]:
        value = node.value
        if isinstance(value, ast.Attribute) and value.attr == "results" and self._is_raw_op(value.value):
            return self._raw_op_type(value.value, "`.results[k]` of a raw dialect op", depth)
        if not isinstance(node.slice, ast.Slice):
            elements = self.list_elements(value, depth)
            if elements is not None:
                return self._element_type(value, elements, depth)
        container, why = self._typed(value, depth)
        if container.kind == VECTOR:
            return self._vector_element_type(node, container, depth)
        return UNKNOWN_TYPE, f"unknown: subscript of {container}" if container.known else f"unknown: subscript ({why})"

    def list_elements(self, node: ast.expr, depth: int = 0) -> list[ast.expr] | None:
        """Every expression whose value the list `node` may hold, when the model sees them all: a
        list or tuple display, a list comprehension (its element), or a name bound once, in a
        function, to one of those (a parameter: to what every call passes) and only ever indexed,
        iterated, measured with `len`, appended to or stored into by index (what `append` and
        `xs[i] = v` add counts too). None when the list may escape: passed to a call, bound to
        another name, returned, or changed any other way."""
        if depth > _MAX_DEPTH:
            return None
        if isinstance(node, (ast.List, ast.Tuple)):
            return None if any(isinstance(element, ast.Starred) for element in node.elts) else list(node.elts)
        if isinstance(node, ast.ListComp):
            return [node.elt] if len(node.generators) == 1 else None
        binding = self.binding_of(node) if isinstance(node, ast.Name) else None
        if binding is None or binding.scope.kind != "function" or not self.is_single_binding(binding) \
                or self._bound_from_another_scope(binding):
            return None
        found = self._added_elements(binding)
        if found is None:
            return None
        if binding.kind == "param":
            sources = self.passed_arguments(binding) or []
        else:  # an assignment other than `xs = <value>` has no single assigned value
            sources = [self.single_assigned_value(node)] if binding.kind == "assign" else []
        if not sources or None in sources:
            return None
        for source in sources:
            elements = self.list_elements(source, depth + 1)
            if elements is None:
                return None
            found.extend(elements)
        return found

    def _added_elements(self, binding) -> list[ast.expr] | None:
        """What `xs.append(v)` and `xs[i] = v` add to the list bound by `binding`, when every read of
        the name indexes, iterates, measures or adds to it (None: the list may escape)."""
        memo = self._answers["list_additions"]
        if binding not in memo:
            memo[binding] = self._scan_additions(binding)
        found = memo[binding]
        return None if found is None else list(found)

    def _scan_additions(self, binding) -> tuple[ast.expr, ...] | None:
        added: list[ast.expr] = []
        for load in self._loads.get(binding.name, ()):
            if self.binding_of(load) is not binding:
                continue
            parent = self.parent(load)
            kind = type(parent)
            if kind is ast.Subscript and parent.value is load and not isinstance(parent.slice, ast.Slice):
                statement = self.parent(parent)
                if isinstance(parent.ctx, ast.Load):
                    continue
                if isinstance(statement, ast.Assign) and statement.targets == [parent]:
                    added.append(statement.value)
                    continue
                return None
            if kind is ast.Attribute and parent.value is load and parent.attr == "append":
                call = self.parent(parent)
                if isinstance(call, ast.Call) and call.func is parent and len(call.args) == 1 and not call.keywords \
                        and not isinstance(call.args[0], ast.Starred):
                    added.append(call.args[0])
                    continue
                return None
            if kind in (ast.For, ast.comprehension) and parent.iter is load:
                continue
            if kind is ast.Call and parent.args == [load] and not parent.keywords \
                    and self._builtin_call(parent, "len") is not None:
                continue
            return None
        return tuple(added)

    def _element_type(self, container: ast.expr, elements: list[ast.expr], depth: int) -> tuple[ValueType, str]:
        """The one type every element of a list gives (`list_elements`). In traced code a region the
        rewriter rewrites that adds to the list carries it, rebuilding its leaves as fx values
        (`_promote`): there only fx scalars keep their class."""
        if not elements:
            return UNKNOWN_TYPE, "unknown: a list of no element the model sees"
        unknown, first, other = _disagreement([(element, *self._typed(element, depth)) for element in elements])
        if unknown is not None:
            return UNKNOWN_TYPE, f"unknown: an element of the list at {_at(unknown[0])} ({unknown[2]})"
        if other is not None:
            return UNKNOWN_TYPE, (f"unknown: the list holds {first[1]} ({_at(first[0])}) "
                                  f"and {other[1]} ({_at(other[0])})")
        binding = self.binding_of(container) if isinstance(container, ast.Name) else None
        # Where the list is bound: a region there that adds to it carries it.
        if first[1].kind != SCALAR and binding is not None and self.in_traced_code(binding.node) \
                and self.carried_in(binding.scope.node, container.id):
            return UNKNOWN_TYPE, (f"unknown: a region of traced code adds to `{container.id}`, and the rewriter "
                                  f"rebuilds its {first[1]} elements as fx values")
        return first[1], f"every element of the list gives {first[1]} ({len(elements)} seen)"

    def _vector_element_type(self, node: ast.Subscript, vector: ValueType, depth: int) -> tuple[ValueType, str]:
        """`v[i]` with a Python int `i`: one static `vector.ExtractOp` wrapped in the element class."""
        index = self._typed(node.slice, depth)[0]
        if index.kind != PY_INT or self.type_table.vector_fact("__getitem__") != "static-extract":
            return UNKNOWN_TYPE, f"unknown: `{vector}` indexed by no Python int"
        return self.type_table.scalar(vector.scalar), f"element of {vector} ({self.type_table.source})"

    def _is_raw_op(self, node: ast.expr) -> bool:
        """A call of a raw dialect op class (`arith.AddIOp(...)`)."""
        if not isinstance(node, ast.Call):
            return False
        name = self.resolve(node.func) or ""
        return name.startswith(_RAW_DIALECTS) and name.rpartition(".")[2][:1].isupper()

    def _operator_type(self, op: ast.AST, left: ast.expr, right: ast.expr, depth: int) -> tuple[ValueType, str]:
        return self._combined_type(op, (left, *self._typed(left, depth)), right, depth)

    def _combined_type(self, op: ast.AST, typed_left: tuple[ast.expr, ValueType, str], right: ast.expr,
                       depth: int) -> tuple[ValueType, str]:
        """`left <op> right`, the left operand's type already known."""
        left, left_type, left_why = typed_left
        if not left_type.known:
            return UNKNOWN_TYPE, f"unknown: left operand ({left_why})"
        right_type, right_why = self._typed(right, depth)
        if not right_type.known:
            return UNKNOWN_TYPE, f"unknown: right operand ({right_why})"
        python = _python_result(op, left_type, right_type)
        if python is not None:
            return python, "Python arithmetic"
        table = self.type_table
        arith_value = _arith_value_operator_type(table, op, left_type, right_type)
        if arith_value is not None:
            return arith_value
        if table.promotion != "numeric-lattice":
            return UNKNOWN_TYPE, f"unknown: no operator promotion known for {table.release}"
        if VECTOR in (left_type.kind, right_type.kind):
            return _vector_operator_type(table, op, left_type, right_type)
        lefts, rights = self._operand_scalars(left, left_type, depth), self._operand_scalars(right, right_type, depth)
        if not lefts or not rights:
            return UNKNOWN_TYPE, "unknown: an operand is neither an fx scalar nor a Python number"
        results = {_promote(table, op, left_scalar, right_scalar) for left_scalar in lefts for right_scalar in rights}
        found = results.pop() if len(results) == 1 else UNKNOWN_TYPE
        if not found.known:
            why = "promotion not settled" if not results else "a Python int of unknown value may be an Int32 or an Int64"
            return found, f"unknown: {why}"
        return found, f"operator ({table.source})"

    def _operand_scalars(self, node: ast.expr, found: ValueType, depth: int) -> tuple[ValueType, ...]:
        """The fx scalars an operand may be in a scalar operator: itself; for a Python number,
        what `Numeric.from_python_value` makes of it (a bool a Boolean, a float a Float32, an int
        the table's `int` class, or past 32 bits its `int-wide` one): for an int whose value is
        not known, both. Empty when the operand is neither."""
        if found.kind == SCALAR:
            return (found,)
        literals = self.type_table.literals
        if found.kind in (PY_FLOAT, PY_BOOL):
            spelled = literals.get("float" if found.kind == PY_FLOAT else "bool")
            return (self.type_table.scalar(spelled),) if spelled else ()
        if found.kind != PY_INT or "int" not in literals or "int-wide" not in literals:
            return ()
        narrow, wide = self.type_table.scalar(literals["int"]), self.type_table.scalar(literals["int-wide"])
        bounds = self._int_bounds(node, 0, depth)
        if bounds is None:
            return narrow, wide
        low, high = bounds
        if -2**31 <= low and high < 2**31:
            return (narrow,)
        return (wide,) if -2**63 <= low and high < 2**63 else ()  # past 64 bits the wide class raises


def _at(node: ast.AST) -> str:
    """Where `node` starts, as reasons name a place: `line:column`."""
    return f"{node.lineno}:{node.col_offset + 1}"


def _assigned_value(statement: ast.AST, target: ast.AST) -> ast.expr | None:
    """The value bound to `target` by `x = v`, `x: T = v` or `a, b = u, v` (same length, no star)."""
    if isinstance(statement, ast.AnnAssign):
        return statement.value
    if not isinstance(statement, ast.Assign) or len(statement.targets) != 1:
        return None
    bound = statement.targets[0]
    if bound is target:
        return statement.value
    if isinstance(bound, ast.Tuple) and isinstance(statement.value, ast.Tuple) and len(bound.elts) == len(statement.value.elts):
        if not any(isinstance(item, ast.Starred) for item in bound.elts + statement.value.elts):
            for item, value in zip(bound.elts, statement.value.elts):
                if item is target:
                    return value
    return None


def _plain_functions(tree: ast.Module) -> dict[str, ast.FunctionDef]:
    """A module's top-level undecorated defs, by name (a name bound at the top level by
    more than one def or class, or by a decorated or async def, is none of them)."""
    defs: dict[str, ast.FunctionDef | None] = {}
    for statement in tree.body:
        if isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            plain = isinstance(statement, ast.FunctionDef) and not statement.decorator_list
            defs[statement.name] = statement if plain and statement.name not in defs else None
    return {name: function for name, function in defs.items() if function is not None}


def _contradicted(function: str) -> str:
    return f"unknown: the call passes `{function}` a value its parameter's annotation does not declare"


def _call_arguments(arguments: ast.arguments, call: ast.Call, *,
                    collected: bool = False) -> dict[str, ast.expr | None] | None:
    """Each named parameter -> the argument `call` passes it, or None where its default applies;
    None when the call unpacks (`*`, `**`) or would raise a TypeError, and (unless `collected`)
    when the function takes `*args` or `**kwargs`, which then collect the arguments left over."""
    if any(isinstance(value, ast.Starred) for value in call.args) or any(k.arg is None for k in call.keywords):
        return None
    if (arguments.vararg or arguments.kwarg) and not collected:
        return None
    positional = [arg.arg for arg in arguments.posonlyargs + arguments.args]
    keyword_only = [arg.arg for arg in arguments.kwonlyargs]
    if len(call.args) > len(positional) and not arguments.vararg:
        return None
    passed: dict[str, ast.expr] = dict(zip(positional, call.args))
    by_keyword = positional[len(arguments.posonlyargs):] + keyword_only
    for keyword in call.keywords:
        if keyword.arg in passed or (keyword.arg not in by_keyword and not arguments.kwarg):
            return None  # a repeated or an unknown parameter
        if keyword.arg in by_keyword:
            passed[keyword.arg] = keyword.value
    defaults = parameter_defaults(arguments)
    if any(name not in passed and name not in defaults for name in positional + keyword_only):
        return None
    return {name: passed.get(name) for name in positional + keyword_only}


def _unpacking_position(statement: ast.AST, target: ast.AST) -> tuple[int, int] | None:
    """(length, index) of `target` in `a, b, ... = v` (a single flat target tuple, no star)."""
    if not isinstance(statement, ast.Assign) or len(statement.targets) != 1:
        return None
    bound = statement.targets[0]
    if not isinstance(bound, ast.Tuple) or any(isinstance(item, ast.Starred) for item in bound.elts):
        return None
    index = next((i for i, item in enumerate(bound.elts) if item is target), None)
    return (len(bound.elts), index) if index is not None else None


_NESTED_SCOPES = frozenset({ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef})


def _returns(function: ast.AST) -> list[ast.Return] | None:
    """The `return` statements of a def, not of the functions, lambdas and classes nested in it;
    None for a generator (its call returns no such value) or no return."""
    returns = []
    pending = list(function.body)
    while pending:
        node = pending.pop()
        kind = type(node)
        if kind is ast.Return:
            returns.append(node)
        elif kind is ast.Yield or kind is ast.YieldFrom:
            return None
        if kind not in _NESTED_SCOPES:
            pending += child_nodes(node)
    return returns or None


def returns_within(statement: ast.stmt) -> list[ast.Return]:
    """The `return` statements in `statement`, not in the functions, lambdas and classes nested in it."""
    return _returns(ast.Module(body=[statement], type_ignores=[])) or []


def _python_result(op: ast.AST, left: ValueType, right: ValueType) -> ValueType | None:
    """Arithmetic of two compile-time Python numbers stays compile-time."""
    python = (PY_INT, PY_BOOL, PY_FLOAT)
    if left.kind not in python or right.kind not in python:
        return None
    if isinstance(op, ast.cmpop):
        return ValueType(PY_BOOL)
    if isinstance(op, ast.Div) or PY_FLOAT in (left.kind, right.kind):
        return ValueType(PY_FLOAT) if isinstance(op, _ARITHMETIC) else UNKNOWN_TYPE
    return ValueType(PY_INT) if isinstance(op, _ARITHMETIC + _INT_ONLY) else UNKNOWN_TYPE


def _promote(table: TypeTable, op: ast.AST, left: ValueType, right: ValueType) -> ValueType:
    """The result of a scalar operator under FlyDSL's numeric lattice
    (`_coerce_operands` / `_result_numeric_type_for_op`, 0.3.0-0.5.0)."""
    if isinstance(op, _ARITHMETIC):  # _BOOL_WIDEN_OPS: Boolean operands count as Int32
        left, right = (table.scalar("Int32") if side.scalar == "Boolean" else side for side in (left, right))
    elif not isinstance(op, _INT_ONLY + (ast.Eq, ast.NotEq, ast.Lt, ast.LtE, ast.Gt, ast.GtE)):
        return UNKNOWN_TYPE
    common = _common_type(table, left, right)
    if not common.known:
        return UNKNOWN_TYPE
    if isinstance(op, ast.cmpop):
        return table.scalar("Boolean")
    if isinstance(op, _INT_ONLY) and common.is_float:
        return UNKNOWN_TYPE  # a TypeError at trace time
    if isinstance(op, ast.Div) and not common.is_float:
        return table.scalar("Float64" if common.width > 32 else "Float32")
    return common


# An operator -> ArithValue's dunder for it, and the reflected one Python calls on a right
# ArithValue when the left operand is a Python number (comparisons are not followed reflected).
_ARITH_VALUE_DUNDERS = {
    ast.Add: ("__add__", "__radd__"), ast.Sub: ("__sub__", "__rsub__"), ast.Mult: ("__mul__", "__rmul__"),
    ast.Div: ("__truediv__", "__rtruediv__"), ast.FloorDiv: ("__floordiv__", "__rfloordiv__"),
    ast.Mod: ("__mod__", "__rmod__"), ast.Pow: ("__pow__", "__rpow__"), ast.BitAnd: ("__and__", "__rand__"),
    ast.BitOr: ("__or__", "__ror__"), ast.BitXor: ("__xor__", "__rxor__"),
    ast.LShift: ("__lshift__", "__rlshift__"), ast.RShift: ("__rshift__", "__rrshift__"),
    ast.Lt: ("__lt__", None), ast.LtE: ("__le__", None), ast.Gt: ("__gt__", None), ast.GtE: ("__ge__", None),
    ast.Eq: ("__eq__", None), ast.NotEq: ("__ne__", None),
}
# What ArithValue's operators take as the other operand without returning NotImplemented
# (`_coerce_other`: a Python number, an ArithValue, an fx scalar through its `.ir_value()`).
_ARITH_VALUE_OTHERS = (PY_INT, PY_FLOAT, PY_BOOL, ARITH_VALUE, SCALAR)


def _arith_value_operator_type(table: TypeTable, op: ast.AST, left: ValueType,
                               right: ValueType) -> tuple[ValueType, str] | None:
    """`av <op> x` (x a Python number, an ArithValue or an fx scalar) and `3 <op> av`: the
    result of ArithValue's operator, a caster-made ArithValue (signed=None) where the release's
    table says every return of the operator's helper is one (data/flydsl_types.txt `operators`);
    None when neither shape applies (an fx scalar on the left has its own operators)."""
    dunders = _ARITH_VALUE_DUNDERS.get(type(op))
    if dunders is None:
        return None
    if left.kind == ARITH_VALUE and right.kind in _ARITH_VALUE_OTHERS:
        dunder = dunders[0]
    elif right.kind == ARITH_VALUE and left.kind in (PY_INT, PY_FLOAT, PY_BOOL) and dunders[1]:
        dunder = dunders[1]  # the Python number's operator gives NotImplemented for an ir.Value
    else:
        return None
    if table.operators.get(f"flydsl.expr.arith.ArithValue.{dunder}") == ARITH_VALUE:
        arith_values = [side for side in (left, right) if side.kind == ARITH_VALUE]
        # ArithValue's ops take operands of one type: a scalar beside plain ArithValues makes them scalars.
        # Else, of a vector type, the value is an fx.Vector, or ArithValue's op gives one.
        if not (all(side.scalar_shaped for side in arith_values) or (
                all(map(plain_arith_value, arith_values)) and any(map(_is_scalar_shaped, (left, right))))):
            return MAYBE_SIGNED_ARITH_VALUE, f"`{dunder}` of an ArithValue that may be an fx.Vector"
        return SCALAR_ARITH_VALUE, f"`ArithValue.{dunder}` gives the value caster's ArithValue ({table.source})"
    return UNKNOWN_TYPE, f"unknown: `ArithValue.{dunder}` is not known to give an ArithValue in {table.release}"


def _vector_operator_type(table: TypeTable, op: ast.AST, left: ValueType, right: ValueType) -> tuple[ValueType, str]:
    """Two fx.Vectors of one element class under an operator `Vector._apply_op` promotes
    by the scalar lattice (`+ - * & | ^`): a vector of the element's result."""
    dunder = _VECTOR_DUNDERS.get(type(op))
    if left.kind != VECTOR or right.kind != VECTOR or left.scalar != right.scalar:
        return UNKNOWN_TYPE, "unknown: an operator of a vector and no vector of its element class"
    if dunder is None or table.vector_fact(dunder) != "element-lattice":
        return UNKNOWN_TYPE, f"unknown: the vector operator `{type(op).__name__}` is not followed"
    element = _promote(table, op, table.scalar(left.scalar), table.scalar(right.scalar))
    if not element.known:
        return UNKNOWN_TYPE, "unknown: promotion not settled"
    return table.vector(element.scalar), f"vector operator ({table.source})"


def _common_type(table: TypeTable, left: ValueType, right: ValueType) -> ValueType:
    if left.scalar == right.scalar:
        return left
    if left.is_float != right.is_float:  # a float and an integer: the float, widened to the integer's width
        floating, integer = (left, right) if left.is_float else (right, left)
        if floating.width >= integer.width:
            return floating
        return table.scalar("Float32" if integer.width <= 32 else "Float64")
    if left.is_float:
        wider = left if left.width > right.width else right
        if left.width != right.width and wider.width >= 16:
            return wider  # two floats of different widths: the wider (`_resolve_float_type`)
        return UNKNOWN_TYPE  # two distinct floats of one width: the rank rules are not modelled
    if left.signed == right.signed:
        return left if left.width >= right.width else right
    unsigned, signed = (left, right) if not left.signed else (right, left)
    return unsigned if unsigned.width >= signed.width else signed
