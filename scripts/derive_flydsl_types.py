"""Derive flydsl_lint/data/flydsl_types.txt: the value types FlyDSL's API gives, per release.

Read statically from each release's wheel, like scripts/derive_flydsl_api.py
(whose readers it reuses): nothing is imported or executed. Per release it
records

- the fx scalar classes of `flydsl/expr/numeric.py` (the `width=` / `signed=`
  keywords of their class statements, and whether they derive from `Float`);
- the scalar a Python literal becomes in an operator (`Numeric.from_python_value`);
- what the `Numeric` methods every scalar class inherits return: the receiver's
  class (`maximumf`, `shrui`, ...: `return type(self)(...)`), the class passed
  (`bitcast(dtype)`), or the common type of the two operands (`select`);
- whether the scalar operators follow the promotion lattice of
  `_resolve_numeric_type` (same type -> it; integers -> the wider, unsigned on
  a tie; comparisons -> Boolean);
- the type of `thread_idx.x`-style attributes (module-level `Tuple3D(...)`
  objects of `flydsl/expr/gpu.py` and `Tuple3D`'s default dtype) and of
  `flydsl/expr/gpu.py` functions whose only return wraps in one scalar class;
- what the AST rewriter makes a `range(...)` loop's variables: the induction
  variable `scf_for_dispatch` passes (bounds cast to i32) for a loop without
  `init=`, and what `scf_range` yields (index bounds, raw iter args) with it;
- how `ArithValue` treats values (`flydsl/expr/utils/arith.py`): whether it is
  the MLIR value caster of every integer, index, float and vector type (then
  every raw value of a scalar type already is an `ArithValue` with `signed=None`;
  of a vector type, see `Vector` below),
  whether `ArithValue(v)` sets `signed` from its argument (resetting a value's
  signedness), whether a scalar's `.ir_value()` carries the class's signedness
  (`with_signedness`), whether `_to_raw` / `unwrap` return an `ir.Value`
  unchanged, and whether `ArithValue.select` is the module's `select` statement
  for statement (FLY344's fix on an ArithValue condition);
- the raw `arith` / `math` / `vector` ops (builder functions and op classes)
  that give one result of a scalar or vector type (`return XOp(...).result`,
  no `OpResult[MemRefType]`-like annotation): a caster-made `ArithValue`; and
  the `flydsl.expr.arith` functions and `ArithValue` methods whose every
  return is such a value (`constant`, `bitcast`, `cmpi`, `ArithValue.trunci`);
  and the builders of `flydsl.expr.arith` / `flydsl.expr.math` under
  `dsl_math_wrap_result`, which return that value when their first operand is
  no fx value, and with `preserve_numeric_type` the first operand's class when
  it is one (`arith.shrui`); the `flydsl.expr.arith` helpers returning
  `arith.SelectOp(...).result` (`select`), whose result has the type of the
  values selected: a caster-made `ArithValue` when they are scalars or vectors;
- whether `fx.Vector` replaces ArithValue as the value caster of vector types
  (`replace=True`), taking its lanes and element class from the type: then a raw
  op's vector result is an `fx.Vector`, whose operators and methods are its own;
- the vector types `T` spells (`flydsl/expr/typing.py` `Types`): `T.f16x4` is
  `Float16x4` (`self.vec(4, Float16.ir_type)`), `T.i64` the element `Int64`,
  `T.vec(n, elem)` a `count-element` vector type; and the `fx.Vector` methods
  FLY321's fixes write, by what they emit: `from_elements` coercing each element
  to the dtype before one `vector.from_elements`, `bitcast` one `vector.BitCastOp`
  to the same bits (a vector of the class passed), `[i]` one static `vector.ExtractOp`
  wrapped in the dtype; `to(T)` and `filled(shape, x, T)` a vector of T, `reduce(op)`
  one `vector.reduction` wrapped in the element class, and the operators `+ - * & | ^`
  (`apply_op`) the element classes' promotion by the scalar lattice;
- the base class of `Numeric`, `ArithValue` and `Vector` and whether each defines
  `ir_value`, which decide a helper's `isinstance` / `hasattr` guards.

Each fact is written with the releases it holds in (`A-`, `A-B`, `A`, joined
with `,`), one `section fact releases value` line each: the engine reads it with
str.split, as data/releases.txt, so no TOML parser is imported at start-up. Usage, from a folder of wheels as derive_flydsl_api.py reads them:

    python scripts/derive_flydsl_types.py --wheels wheels [--check]
"""

from __future__ import annotations

import argparse
import ast
import copy as copy_module
import sys
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "scripts"))
sys.path.insert(0, str(ROOT))
from derive_flydsl_api import Release, _write_or_check, pick_wheel, spans, wheel_sources  # noqa: E402
from flydsl_lint.engine.versions import Version  # noqa: E402

FIRST_RELEASE = Version.parse("0.3.0")  # the numeric lattice and the rewriter's typed loops start here
OUTPUT = ROOT / "flydsl_lint" / "data" / "flydsl_types.txt"
ARITH_VALUE = "arith-value"
SELF_OR_ARITH_VALUE = "self-or-arith-value"  # a method returning its receiver or a caster-made ArithValue
# `arith.SelectOp(c, a, b).result`: of the type of `a` and `b`, so a caster-made ArithValue when that is a
# scalar or vector type (the op's builder is left out of the raw table: it selects any type).
ARITH_VALUE_OF_OPERANDS = "arith-value-of-operands"


def _parse(sources: dict[str, str], path: str) -> ast.Module | None:
    text = sources.get(path)
    return ast.parse(text) if text is not None else None


def _top_defs(tree: ast.Module | None) -> dict[str, ast.AST]:
    return {node.name: node for node in (tree.body if tree else ())
            if isinstance(node, (ast.FunctionDef, ast.ClassDef))}


def _method(cls: ast.AST | None, name: str) -> ast.FunctionDef | None:
    """The method `name` of the class `cls` (None without either)."""
    return next((n for n in getattr(cls, "body", ()) if isinstance(n, ast.FunctionDef) and n.name == name), None)


def scalar_classes(numeric: ast.Module | None) -> dict[str, dict]:
    """`Int32` -> {width, signed, float} for each class with a `width=` keyword."""
    classes: dict[str, dict] = {}
    bases_of: dict[str, list[str]] = {}
    for node in _top_defs(numeric).values():
        if not isinstance(node, ast.ClassDef):
            continue
        bases_of[node.name] = [base.id for base in node.bases if isinstance(base, ast.Name)]
        keywords = {k.arg: k.value for k in node.keywords if isinstance(k.value, ast.Constant)}
        if "width" in keywords:
            classes[node.name] = {"width": keywords["width"].value,
                                  "signed": keywords["signed"].value if "signed" in keywords else None}

    def derives_from(name: str, ancestor: str) -> bool:
        pending = list(bases_of.get(name, ()))
        while pending:
            base = pending.pop()
            if base == ancestor:
                return True
            pending += bases_of.get(base, ())
        return False

    found = {}
    for name, facts in classes.items():
        if name in ("Integer", "Float"):
            continue  # abstract bases
        is_float = derives_from(name, "Float")
        if not is_float and not derives_from(name, "Integer"):
            continue
        found[name] = {"width": facts["width"], "signed": bool(facts["signed"]) if not is_float else None,
                       "float": is_float}
    return found


def literal_scalars(numeric: ast.Module | None) -> dict[str, str]:
    """`int` -> `Int32` from `if isinstance(value, int): return Int32(value) if ... else Int64(value)`
    in from_python_value, and `int-wide` -> `Int64`, the class of an int past the test's range."""
    found: dict[str, str] = {}
    numeric_class = _top_defs(numeric).get("Numeric")
    method = next((node for node in getattr(numeric_class, "body", ())
                   if isinstance(node, ast.FunctionDef) and node.name == "from_python_value"), None)
    for node in ast.walk(method) if method else ():
        if not (isinstance(node, ast.If) and isinstance(node.test, ast.Call)
                and getattr(node.test.func, "id", None) == "isinstance" and len(node.test.args) == 2):
            continue
        kind = getattr(node.test.args[1], "id", None)
        returned = node.body[0].value if node.body and isinstance(node.body[0], ast.Return) else None
        if isinstance(returned, ast.IfExp):
            wide = returned.orelse
            if kind == "int" and isinstance(wide, ast.Call) and isinstance(wide.func, ast.Name):
                found["int-wide"] = wide.func.id
            returned = returned.body  # the in-range case: Int32 unless the literal needs 64 bits
        if kind in ("int", "float", "bool") and isinstance(returned, ast.Call) and isinstance(returned.func, ast.Name):
            found[kind] = returned.func.id
    return found


def _method_body(method: ast.FunctionDef) -> list[ast.stmt]:
    """A method's statements past its docstring."""
    body = method.body
    return body[1:] if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant) else body


def _select_gives_common_type(select: ast.FunctionDef, coerce: ast.FunctionDef | None) -> bool:
    """`Numeric.select(a, b)`: both operands coerced to Numeric (`_try_coerce_rhs`: a Numeric as
    it is, a Python number through `as_numeric`), converted `.to(dest)` with `dest` the
    `_resolve_numeric_type` of the two, returned as such when the condition is a compile-time
    one, else `as_dsl_value(result, dest)`, which is `dest(result)`."""
    text = ast.unparse(select)
    shape = ("dest = _resolve_numeric_type(type(tv), type(fv))",
             "true_value, false_value, exemplar = (tv.to(dest), fv.to(dest), dest)",
             "return true_value if bool(cond.value) else false_value", "return as_dsl_value(result, exemplar)")
    coerced = ast.unparse(coerce) if coerce is not None else ""
    return all(line in text for line in shape) and "if isinstance(rhs, Numeric):\n        return rhs" in coerced \
        and "if isinstance(rhs, (int, float, bool)):\n        return as_numeric(rhs)" in coerced


def scalar_methods(numeric: ast.Module | None) -> dict[str, str]:
    """What the methods of `Numeric` every scalar class inherits return:
    `receiver-class` for `return type(self)(self.ir_value().<op>(...))` (`maximumf`, `shuffle_xor`, ...):
    the receiver's class wrapping the result of an op on its ir.Value, so a run-time value,
    `argument-class` for `bitcast(dtype)`'s `return dtype(res)` behind an
    `issubclass(dtype, Numeric)` check, `common-type` for `select`. A method a
    class of numeric.py overrides, or decorated otherwise than `dsl_loc_tracing`, is left out."""
    defs = _top_defs(numeric)
    numeric_class = defs.get("Numeric")
    if not isinstance(numeric_class, ast.ClassDef):
        return {}
    overridden = {node.name for cls in defs.values() if isinstance(cls, ast.ClassDef) and cls is not numeric_class
                  for node in cls.body if isinstance(node, ast.FunctionDef)}
    found: dict[str, str] = {}
    for method in numeric_class.body:
        if not isinstance(method, ast.FunctionDef) or method.name.startswith("_") or method.name in overridden \
                or any(ast.unparse(decorator) != "dsl_loc_tracing" for decorator in method.decorator_list):
            continue
        body, params = _method_body(method), [a.arg for a in method.args.args]
        last = body[-1] if body else None
        returned = last.value if isinstance(last, ast.Return) else None
        called = ast.unparse(returned.func) if isinstance(returned, ast.Call) else None
        if len(body) == 1 and called == "type(self)" and _op_on_own_ir_value(returned):
            found[f"flydsl.expr.numeric.Numeric.{method.name}"] = "receiver-class"
        elif len(params) == 2 and called == params[1] and f"issubclass({params[1]}, Numeric)" in ast.unparse(method) \
                and sum(isinstance(node, ast.Return) for node in ast.walk(method)) == 1:
            found[f"flydsl.expr.numeric.Numeric.{method.name}"] = "argument-class"
        elif method.name == "select" and _select_gives_common_type(method, defs.get("_try_coerce_rhs")):
            found[f"flydsl.expr.numeric.Numeric.{method.name}"] = "common-type"
    return found


def _op_on_own_ir_value(wrapped: ast.Call) -> bool:
    """`type(self)(self.ir_value().<op>(...))`: one argument, a method call on `self.ir_value()`."""
    if len(wrapped.args) != 1 or wrapped.keywords:
        return False
    inner = wrapped.args[0]
    return isinstance(inner, ast.Call) and isinstance(inner.func, ast.Attribute) \
        and ast.unparse(inner.func.value) == "self.ir_value()"


def has_promotion_lattice(numeric: ast.Module | None) -> bool:
    defs = _top_defs(numeric)
    return all(name in defs for name in ("_resolve_numeric_type", "_result_numeric_type_for_op", "_make_binop"))


def gpu_returns(gpu: ast.Module | None, typing: ast.Module | None, scalars: dict,
                generated: ast.Module | None) -> dict[str, str]:
    """`flydsl.expr.gpu.thread_idx.x` -> `Int32`, `flydsl.expr.gpu.lane_id()` -> `Int32`; and the
    index ids: `flydsl._mlir.dialects.gpu.thread_id()` -> `raw:index`, a generated builder annotated
    `-> _ods_ir.OpResult[_ods_ir.IndexType]`, and `flydsl.expr.gpu.thread_id()`, whose one return
    is that builder's call."""
    found: dict[str, str] = {}
    index_builders = {node.name for node in getattr(generated, "body", ())
                      if isinstance(node, ast.FunctionDef) and node.returns is not None
                      and ast.unparse(node.returns) == "_ods_ir.OpResult[_ods_ir.IndexType]"}
    found.update({f"flydsl._mlir.dialects.gpu.{name}()": "raw:index" for name in index_builders})
    dialect_aliases = [alias for alias, dialect in _dialect_aliases(gpu).items() if dialect == "gpu"] if gpu else []
    tuple3d = _top_defs(typing).get("Tuple3D")
    init = _method(tuple3d, "__init__")
    dtype = None
    if init is not None:
        names = [a.arg for a in init.args.args]
        defaults = dict(zip(names[len(names) - len(init.args.defaults):], init.args.defaults))
        default = defaults.get("dtype")
        dtype = default.id if isinstance(default, ast.Name) and default.id in scalars else None
    for node in gpu.body if gpu else ():
        if (dtype and isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name)
                and isinstance(node.value, ast.Call) and getattr(node.value.func, "id", None) == "Tuple3D"
                and len(node.value.args) == 1 and not node.value.keywords):
            for axis in "xyz":
                found[f"flydsl.expr.gpu.{node.targets[0].id}.{axis}"] = dtype
        elif isinstance(node, ast.FunctionDef):
            returns = [n for n in ast.walk(node) if isinstance(n, ast.Return)]
            called = returns[0].value.func if len(returns) == 1 and isinstance(returns[0].value, ast.Call) else None
            if getattr(called, "id", None) in scalars:
                found[f"flydsl.expr.gpu.{node.name}()"] = called.id
            elif (isinstance(called, ast.Attribute) and isinstance(called.value, ast.Name)
                    and called.value.id in dialect_aliases and called.attr in index_builders):
                found[f"flydsl.expr.gpu.{node.name}()"] = "raw:index"
    return found


def loop_variables(rewriter: ast.Module | None) -> dict[str, str]:
    """What `range` loop variables are in traced code, from the rewriter's loop builders."""
    methods = {node.name: node for node in ast.walk(rewriter) if isinstance(node, ast.FunctionDef)} if rewriter else {}
    found: dict[str, str] = {}
    dispatch, scf_range = methods.get("scf_for_dispatch"), methods.get("scf_range")
    if dispatch is not None and "_transform_for_auto" in methods:
        text = ast.unparse(dispatch)
        if "get_signless(32)" in text and "body_fn(iv" in text and "iv = for_op.induction_variable" in text:
            found["range"] = "raw:i32"  # bounds cast to i32, the raw block argument passed on
    if scf_range is not None:
        text = ast.unparse(scf_range)
        if "_to_index(start)" in text and "yield (for_op.induction_variable, list(for_op.inner_iter_args))" in text:
            found["range-init"] = "raw:index"
            found["range-init-state"] = "raw"
    return found


# The MLIR types ArithValue must be the caster of for a raw scalar or vector to be an ArithValue.
_CASTER_TYPES = frozenset({"IntegerType", "IndexType", "F16Type", "F32Type", "F64Type", "BF16Type", "VectorType"})
# An `OpResult[X]` annotation naming one of these is still a value the caster makes an ArithValue.
_CASTER_RESULTS = frozenset({"IntegerType", "IndexType", "FloatType", "VectorType"})
_CASTER_DIALECTS = ("arith", "math", "vector")  # their ops work on scalars and vectors (never on memrefs in FlyDSL)
# Builders of those dialects whose result may be of any type (pre-0.5.0 annotations do not say):
# `vector.type_cast` gives a memref, `arith.select` selects values of any type (pointers too).
_ANY_TYPE_RESULTS = frozenset({"type_cast", "select"})


def arith_value_facts(arith: ast.Module | None, numeric: ast.Module | None) -> dict[str, str]:
    """How ArithValue treats values: caster, `ArithValue(v)` signedness, `.ir_value()`, `_to_raw`/`unwrap`."""
    defs = _top_defs(arith)
    found: dict[str, str] = {}
    arith_value = defs.get("ArithValue")
    if arith_value is not None:
        registered = {decorator.args[0].value.attr for decorator in arith_value.decorator_list
                      if isinstance(decorator, ast.Call) and ast.unparse(decorator.func) == "ir.register_value_caster"
                      and decorator.args and isinstance(decorator.args[0], ast.Attribute)
                      and isinstance(decorator.args[0].value, ast.Attribute)}
        if _CASTER_TYPES <= registered:
            found["caster"] = "scalar-and-vector"
        init = _method(arith_value, "__init__")
        if init is not None and "self.signed = signed and " in ast.unparse(init) \
                and [a.arg for a in init.args.args] == ["self", "v", "signed"] \
                and isinstance(init.args.defaults[-1], ast.Constant) and init.args.defaults[-1].value is None:
            found["arith-value-signed"] = "argument"  # ArithValue(v) is signed=None, whatever v carried
    numeric_class = _top_defs(numeric).get("Numeric")
    to = _method(numeric_class, "to")
    if to is not None and "res.with_signedness(getattr(type(self), 'signed', None))" in ast.unparse(to):
        found["ir-value"] = "with-signedness"  # a dynamic value; a compile-time one is a fresh constant
    to_raw, unwrap = defs.get("_to_raw"), defs.get("unwrap")
    if to_raw is not None and unwrap is not None:
        first = to_raw.body[1] if isinstance(to_raw.body[0], ast.Expr) else to_raw.body[0]  # past the docstring
        if ast.unparse(first) == "if isinstance(v, ir.Value):\n    return v" \
                and ast.unparse(unwrap.body[-1]) == "return _to_raw(val)":
            found["to-raw"] = "identity"
    index_cast = defs.get("index_cast")
    if index_cast is not None and [ast.unparse(s) for s in index_cast.body if not isinstance(s, ast.Expr)] == [
            "v = _to_raw(value)", "if v.type == target_type:\n    return v",
            "return arith.IndexCastOp(target_type, v).result"]:
        found["index-cast"] = "to-raw-or-caster"  # the value itself when of the type, else the op's
    if arith_value is not None and _method_is_function(arith_value, defs.get("select"), "condition"):
        found["arith-value-select"] = "select-function"  # `c.select(a, b)` runs `select(c, a, b)`'s very body
    return found


def _method_is_function(cls: ast.ClassDef, function: ast.AST | None, receiver: str) -> bool:
    """Whether `cls`'s method of `function`'s name has the function's decorators and statements,
    its `self` standing for the function's first parameter `receiver` (docstrings aside)."""
    method = _method(cls, function.name) if isinstance(function, ast.FunctionDef) else None
    if method is None:
        return False
    parameters = [a.arg for a in function.args.args]
    if parameters[:1] != [receiver] or [a.arg for a in method.args.args] != ["self", *parameters[1:]]:
        return False
    renamed = [ast.unparse(_renamed(s, "self", receiver)) for s in _method_body(method)]
    return [ast.unparse(d) for d in method.decorator_list] + renamed == \
        [ast.unparse(d) for d in function.decorator_list] + [ast.unparse(s) for s in _method_body(function)]


def _renamed(node: ast.AST, old: str, new: str) -> ast.AST:
    """A copy of `node` whose names `old` read `new`."""
    copy = copy_module.deepcopy(node)
    for name in ast.walk(copy):
        if isinstance(name, ast.Name) and name.id == old:
            name.id = new
    return copy


def _return_values(function: ast.FunctionDef) -> list[ast.expr | None]:
    """The value of every `return` in `function` (None for a bare `return`), nested ones included."""
    return [node.value for node in ast.walk(function) if isinstance(node, ast.Return)]


def _returned_op_class(function: ast.FunctionDef) -> str | None:
    """`XOp` for a builder whose body is `return XOp(...).result`."""
    statement = function.body[-1] if len(function.body) == 1 else None
    value = statement.value if isinstance(statement, ast.Return) else None
    if isinstance(value, ast.Attribute) and value.attr == "result" and isinstance(value.value, ast.Call) \
            and isinstance(value.value.func, ast.Name):
        return value.value.func.id
    return None


def _annotated_elsewhere(function: ast.FunctionDef) -> bool:
    """An `OpResult[MemRefType]`-like return annotation: a value the caster leaves raw."""
    returns = function.returns
    if not (isinstance(returns, ast.Subscript) and isinstance(returns.slice, ast.Attribute)):
        return False
    return returns.slice.attr not in _CASTER_RESULTS


def caster_results(sources: dict[str, str]) -> dict[str, str]:
    """`flydsl._mlir.dialects.arith.addi` / `...AddIOp` -> `arith-value` for single-result scalar/vector ops."""
    found: dict[str, str] = {}
    for dialect in _CASTER_DIALECTS:
        module = f"flydsl._mlir.dialects.{dialect}"
        classes: set[str] = set()
        for node in _top_defs(_parse(sources, f"flydsl/_mlir/dialects/_{dialect}_ops_gen.py")).values():
            op_class = _returned_op_class(node) if isinstance(node, ast.FunctionDef) else None
            if op_class is not None and node.name not in _ANY_TYPE_RESULTS and not _annotated_elsewhere(node):
                classes.add(op_class)
                found[f"{module}.{node.name}"] = ARITH_VALUE
        for node in _top_defs(_parse(sources, f"flydsl/_mlir/dialects/{dialect}.py")).values():
            # A hand-written builder (`arith.constant`) over one of those op classes.
            returned = node.body[-1] if isinstance(node, ast.FunctionDef) else None
            if isinstance(returned, ast.Return) and isinstance(returned.value, ast.Call) \
                    and ast.unparse(returned.value.func) in ("_get_op_result_or_op_results", "_get_op_result_or_value") \
                    and len(returned.value.args) == 1 and isinstance(returned.value.args[0], ast.Call) \
                    and getattr(returned.value.args[0].func, "id", None) in classes:
                found[f"{module}.{node.name}"] = ARITH_VALUE
        for op_class in classes:
            found[f"{module}.{op_class}"] = ARITH_VALUE
    return found


def dialect_sources(wheel: Path) -> dict[str, str]:
    """The raw dialect modules caster_results reads (wheel_sources leaves flydsl/_mlir/ out)."""
    wanted = {f"flydsl/_mlir/dialects/{name}.py" for dialect in _CASTER_DIALECTS for name in (dialect, f"_{dialect}_ops_gen")}
    wanted.add("flydsl/_mlir/dialects/_gpu_ops_gen.py")  # the index ids (gpu_returns)
    with zipfile.ZipFile(wheel) as archive:
        return {name: archive.read(name).decode("utf-8", "replace") for name in archive.namelist() if name in wanted}


def _dialect_aliases(tree: ast.Module) -> dict[str, str]:
    """`_math` -> `math` for every `from ..._mlir.dialects import math as _math` in the module."""
    return {alias.asname or alias.name: alias.name for node in ast.walk(tree)
            if isinstance(node, ast.ImportFrom) and (node.module or "").endswith("_mlir.dialects")
            for alias in node.names}


def _caster_made(value: ast.expr, aliases: dict[str, str], known: dict[str, str], local: dict[str, str]) -> bool:
    """`arith.addi(...)`, `arith.AddIOp(...).result` of a table op, or a call of a local function known to give one."""
    call = value.value if isinstance(value, ast.Attribute) and value.attr == "result" else value
    if not isinstance(call, ast.Call):
        return False
    func = call.func
    if isinstance(func, ast.Name):
        return local.get(func.id) == ARITH_VALUE and call is value
    if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) and func.value.id in aliases:
        name = f"flydsl._mlir.dialects.{aliases[func.value.id]}.{func.attr}"
        return name in known and (call is not value) == func.attr[:1].isupper()
    return False


def _function_result(function: ast.FunctionDef, aliases, known, local) -> str | None:
    """`arith-value` when every return gives a caster-made ArithValue; `self-or-arith-value`
    when some return `self` (a method: then it is the receiver). A decorator other than
    `dsl_loc_tracing` (which only sets the ops' location) may change the result: None."""
    if any(ast.unparse(decorator) != "dsl_loc_tracing" for decorator in function.decorator_list):
        return None
    return _returns_result(function, aliases, known, local)


# `dsl_math_wrap_result` (flydsl/expr/math.py) as a decorator -> what the wrapped builder then returns.
_WRAPPED_RESULTS = {"dsl_math_wrap_result": "arith-value-unless-numeric",
                    "dsl_math_wrap_result(preserve_numeric_type=True)": "numeric-class-or-arith-value"}


def wraps_after_first_operand(math_module: ast.Module | None) -> bool:
    """Whether `dsl_math_wrap_result` shapes the result after the first positional argument:
    that argument not a Numeric/Vector -> the builder's value as it is; a Numeric with
    `preserve_numeric_type` -> `type(first)(value)` (without it, `Numeric.from_ir_type` of the
    result's MLIR type, which the source does not settle)."""
    wrap = _top_defs(math_module).get("dsl_math_wrap_result")
    text = " ".join(ast.unparse(wrap).split()) if wrap is not None else ""  # indentation aside
    shape = ("first = args[0] if args else None", "is_numeric = isinstance(first, Numeric)",
             "if not (is_vector or is_numeric): return tuple(result) if not isinstance(result, ir.Value) "
             "and hasattr(result, '__iter__') else result",
             "if preserve_numeric_type: return type(first)(value)")
    return all(line in text for line in shape)


def _wrapped_result(function: ast.FunctionDef, aliases, known, local, wraps: bool) -> str | None:
    """A builder of flydsl/expr/arith.py or math.py: `arith-value` when it is not wrapped and every
    return is a caster-made value (`cmpi`); under `dsl_math_wrap_result` (read by `wraps`) the
    `_WRAPPED_RESULTS` kind of a builder whose every return is a caster-made value."""
    decorators = [ast.unparse(d) for d in function.decorator_list if ast.unparse(d) != "dsl_loc_tracing"]
    if not decorators:
        return _returns_result(function, aliases, known, local)
    if len(decorators) == 1 and decorators[0] in _WRAPPED_RESULTS and wraps \
            and _returns_result(function, aliases, known, local) == ARITH_VALUE:
        return _WRAPPED_RESULTS[decorators[0]]
    return None


def _returns_result(function: ast.FunctionDef, aliases, known, local) -> str | None:
    returned = _return_values(function)
    if not returned or any(value is None for value in returned):
        return None
    if any(isinstance(value, ast.Name) and value.id == "self" for value in returned):
        rest = [value for value in returned if not (isinstance(value, ast.Name) and value.id == "self")]
        return SELF_OR_ARITH_VALUE if rest and all(_caster_made(v, aliases, known, local) for v in rest) else None
    return ARITH_VALUE if all(_caster_made(value, aliases, known, local) for value in returned) else None


def _selects(function: ast.FunctionDef, aliases: dict[str, str]) -> bool:
    """Every return is `arith.SelectOp(...).result` (only `dsl_loc_tracing` decorating it)."""
    if any(ast.unparse(decorator) != "dsl_loc_tracing" for decorator in function.decorator_list):
        return False
    returned = _return_values(function)
    return bool(returned) and all(
        isinstance(value, ast.Attribute) and value.attr == "result" and isinstance(value.value, ast.Call)
        and isinstance(value.value.func, ast.Attribute) and value.value.func.attr == "SelectOp"
        and isinstance(value.value.func.value, ast.Name) and aliases.get(value.value.func.value.id) == "arith"
        for value in returned)


def wrapper_results(sources: dict[str, str], raw: dict[str, str]) -> dict[str, str]:
    """`flydsl.expr.arith.constant` / `flydsl.expr.arith.ArithValue.bitcast` -> the caster-made
    ArithValue they return: helpers of flydsl/expr/utils/arith.py (and ArithValue's methods) whose
    every return is a table op's value, and the raw builders flydsl/expr/arith.py star-imports."""
    utils, expr_arith = _parse(sources, "flydsl/expr/utils/arith.py"), _parse(sources, "flydsl/expr/arith.py")
    if utils is None or expr_arith is None:
        return {}
    aliases = _dialect_aliases(utils)
    helpers: dict[str, str] = {}
    functions = [node for node in utils.body if isinstance(node, ast.FunctionDef)]
    helpers.update({function.name: ARITH_VALUE_OF_OPERANDS for function in functions if _selects(function, aliases)})
    changed = True
    while changed:  # a helper may return another helper's value (`index` returns `constant(...)`)
        changed = False
        for function in functions:
            if function.name not in helpers and _function_result(function, aliases, raw, helpers) == ARITH_VALUE:
                helpers[function.name] = ARITH_VALUE
                changed = True
    found: dict[str, str] = {}
    arith_value = _top_defs(utils).get("ArithValue")
    for method in getattr(arith_value, "body", ()):
        if isinstance(method, ast.FunctionDef) and not method.name.startswith("_"):
            result = _function_result(method, aliases, raw, helpers)
            if result is not None:
                found[f"flydsl.expr.arith.ArithValue.{method.name}"] = result
    wraps = wraps_after_first_operand(_parse(sources, "flydsl/expr/math.py"))
    # What flydsl/expr/arith.py binds: a star import of the raw arith builders, then its own names.
    star = any(isinstance(node, ast.ImportFrom) and node.module == "_mlir.dialects.arith" and node.level == 2
               and node.names[0].name == "*" for node in expr_arith.body)
    own: dict[str, str | None] = {}
    expr_aliases = _dialect_aliases(expr_arith)
    for node in expr_arith.body:
        if isinstance(node, ast.FunctionDef):
            own[node.name] = _wrapped_result(node, expr_aliases, raw, {}, wraps)
        elif isinstance(node, ast.ClassDef):
            own[node.name] = None
        elif isinstance(node, ast.Assign):
            own.update({target.id: None for target in node.targets if isinstance(target, ast.Name)})
        elif isinstance(node, ast.ImportFrom) and node.names[0].name != "*":
            from_utils = node.module == "utils.arith" and node.level == 1
            own.update({alias.asname or alias.name: helpers.get(alias.name) if from_utils else None for alias in node.names})
    for name, result in raw.items():
        module, _, leaf = name.rpartition(".")
        if star and module == "flydsl._mlir.dialects.arith" and leaf[:1].islower() and leaf not in own:
            found[f"flydsl.expr.arith.{leaf}"] = result
    found.update({f"flydsl.expr.arith.{name}": result for name, result in own.items() if result is not None})
    return found | math_results(_parse(sources, "flydsl/expr/math.py"), raw, wraps)


# `ArithValue.__add__ = partialmethod(_binary_op, op="add")`: the module-level helpers operators are bound to.
_PARTIAL = "partialmethod"


def _dispatched_builders(function: ast.FunctionDef, tables: set[str]) -> set[str]:
    """Names a function binds from one of `tables` (`fn = _BITWISE_OPS[op]`,
    `float_fn, int_fn = _ARITH_OPS[op]`): each is one of that table's raw builders."""
    names: set[str] = set()
    for node in ast.walk(function):
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.value, ast.Subscript) \
                and isinstance(node.value.value, ast.Name) and node.value.value.id in tables:
            target = node.targets[0]
            items = target.elts if isinstance(target, ast.Tuple) else [target]
            names.update(item.id for item in items if isinstance(item, ast.Name))
    return names


def _builder_tables(utils: ast.Module, aliases: dict[str, str], raw: dict[str, str]) -> set[str]:
    """Module-level `_X = {"add": (arith.addf, arith.addi), ...}` dicts whose every value
    (or tuple item) names a raw builder of the table (a caster-made result when called)."""
    tables = set()
    for node in utils.body:
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name) \
                and isinstance(node.value, ast.Dict) and node.value.values:
            items = [i for v in node.value.values for i in (v.elts if isinstance(v, ast.Tuple) else [v])]
            if all(isinstance(i, ast.Attribute) and isinstance(i.value, ast.Name) and i.value.id in aliases
                   and raw.get(f"flydsl._mlir.dialects.{aliases[i.value.id]}.{i.attr}") == ARITH_VALUE
                   and i.attr[:1].islower() for i in items):
                tables.add(node.targets[0].id)
    return tables


def _operator_result(function: ast.FunctionDef, aliases, raw, helpers, tables) -> str | None:
    """`arith-value` when every return of an operator helper is a caster-made value (a raw
    builder, one dispatched from a builder table, or a helper giving one) or `NotImplemented`
    (Python then asks the other operand); `self-or-arith-value` when some return `self`."""
    if any(ast.unparse(decorator) != "dsl_loc_tracing" for decorator in function.decorator_list):
        return None
    dispatched = _dispatched_builders(function, tables)
    returned = _return_values(function)
    if not returned or any(value is None for value in returned):
        return None
    kinds = set()
    for value in returned:
        if isinstance(value, ast.Name) and value.id in ("NotImplemented", "self"):
            kinds.add(value.id)
        elif isinstance(value, ast.Call) and isinstance(value.func, ast.Name) and value.func.id in dispatched:
            kinds.add(ARITH_VALUE)
        elif _caster_made(value, aliases, raw, helpers):
            kinds.add(ARITH_VALUE)
        else:
            return None
    if ARITH_VALUE not in kinds:
        return None
    return SELF_OR_ARITH_VALUE if "self" in kinds else ARITH_VALUE


def arith_value_operators(sources: dict[str, str], raw: dict[str, str]) -> dict[str, str]:
    """`flydsl.expr.arith.ArithValue.__add__` -> what ArithValue's operators return: the helper each
    dunder is bound to (`partialmethod(_binary_op, op="add")`, `_neg_op`), when every return of it
    is a caster-made ArithValue (signed=None); plus `literal-operand own-type-constant` when
    `_coerce_other` turns a Python number into `arith_const(other, self.type)` (a constant of the
    ArithValue's own MLIR type, with its signedness) before anything else."""
    utils = _parse(sources, "flydsl/expr/utils/arith.py")
    if utils is None:
        return {}
    aliases = _dialect_aliases(utils)
    tables = _builder_tables(utils, aliases, raw)
    functions = {node.name: node for node in utils.body if isinstance(node, ast.FunctionDef)}
    helpers: dict[str, str] = {}
    changed = True
    while changed:  # `_rbinary_op` returns `_binary_op(...)`
        changed = False
        for name, function in functions.items():
            if name in helpers:
                continue
            result = _operator_result(function, aliases, raw, helpers, tables)
            if result is not None:
                helpers[name] = result
                changed = True
    found: dict[str, str] = {}
    arith_value = _top_defs(utils).get("ArithValue")
    for node in getattr(arith_value, "body", ()):
        if not (isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name)):
            continue
        dunder, value = node.targets[0].id, node.value
        if isinstance(value, ast.Call) and ast.unparse(value.func) == _PARTIAL and value.args:
            value = value.args[0]
        if dunder.startswith("__") and isinstance(value, ast.Name) and value.id in helpers:
            found[f"flydsl.expr.arith.ArithValue.{dunder}"] = helpers[value.id]
    coerce = functions.get("_coerce_other")
    first = coerce.body[0] if coerce is not None and coerce.body else None
    if first is not None and " ".join(ast.unparse(first).split()) == (
            "if isinstance(other, (int, float, bool)): return arith_const(other, self.type).with_signedness(self.signed)"):
        found["literal-operand"] = "own-type-constant"
    return found


def math_results(math_module: ast.Module | None, raw: dict[str, str], wraps: bool) -> dict[str, str]:
    """`flydsl.expr.math.exp2` -> what the builders of flydsl/expr/math.py return (`_wrapped_result`)."""
    aliases = _dialect_aliases(math_module) if math_module is not None else {}
    found = {}
    for node in math_module.body if math_module is not None else ():
        result = _wrapped_result(node, aliases, raw, {}, wraps) if isinstance(node, ast.FunctionDef) \
            and not node.name.startswith("_") else None
        if result is not None:
            found[f"flydsl.expr.math.{node.name}"] = result
    return found


# The typed builders of flydsl/expr/arith.py (0.3.2-: `fx.max`, `fx.min`, `fx.ceildiv`) turn each
# operand into an fx value and return the operands' common class, by the steps below; what
# `_resolve_typed_operands` is called with decides which operands it takes.
_TYPED_OPERAND_STEPS = {
    "_normalize_typed_operand": ("if isinstance(value, (Numeric, Vector)):\n        return value",
                                 "return Numeric.from_ir_type(value.type)(value)",
                                 "if isinstance(value, (bool, int, float)):\n        return as_numeric(value)"),
    "_validated_operand_dtype": ("if dtype is Index:\n        raise",
                                 "if dtype is Boolean:\n        if not bool_widen:\n            raise",
                                 "return Int32", "if integer_only and (not dtype.is_integer):\n        raise",
                                 "if dtype.is_float and dtype not in (Float16, BFloat16, Float32, Float64):\n        raise"),
    "_resolve_typed_operands": ("normalized = [_normalize_typed_operand(value, operation) for value in values]",
                                "_validated_operand_dtype(dtype, operation, bool_widen=bool_widen, integer_only=integer_only)",
                                "common_dtype = _resolve_numeric_type(common_dtype, dtype)",
                                "return (prepared, common_dtype, result_shape, all_static)"),
    "_wrap_typed_result": ("if shape is None:\n        return dtype(result)",),
}
# `_resolve_typed_operands(...)`'s keywords -> the fact: Booleans counted as Int32 (`max`, `min`),
# or integers only, a Boolean refused (`ceildiv`).
_TYPED_OPERAND_FACTS = {(("bool_widen", True),): "promoted-operands",
                        (("integer_only", True),): "promoted-integer-operands"}


def typed_operand_results(expr_arith: ast.Module | None) -> dict[str, str]:
    """`flydsl.expr.arith.max` -> `promoted-operands`: a builder whose operands all pass through
    `_resolve_typed_operands` and whose every return is the common class (`dtype(...)`,
    `_wrap_typed_result(x, dtype, shape)`: an fx scalar unless an operand is a vector) or the one
    operand (`prepared[0]`); a builder returning only such a builder's call (`max` -> `_extreme`)
    has its fact. None of it unless every step of _TYPED_OPERAND_STEPS shows in the release."""
    defs = _top_defs(expr_arith)
    for name, parts in _TYPED_OPERAND_STEPS.items():
        text = ast.unparse(defs[name]) if name in defs else ""
        if not all(part in text for part in parts):
            return {}
    facts: dict[str, str] = {}
    for function in (node for node in defs.values() if isinstance(node, ast.FunctionDef)):
        fact = _typed_operand_fact(function)
        if fact is not None:
            facts[function.name] = fact
    for function in (node for node in defs.values() if isinstance(node, ast.FunctionDef)):
        returned = _return_values(function)
        called = {getattr(value.func, "id", None) if isinstance(value, ast.Call) else None for value in returned}
        if function.name not in facts and len(called) == 1 and called <= facts.keys():
            facts[function.name] = facts[called.pop()]
    return {f"flydsl.expr.arith.{name}": fact for name, fact in facts.items() if not name.startswith("_")}


def _typed_operand_fact(function: ast.FunctionDef) -> str | None:
    """The fact of a builder whose statement `prepared, dtype, shape, all_static =
    _resolve_typed_operands(operands, name, <keywords>)` is followed only by returns of the
    common class or of `prepared[0]`; None for any other function."""
    if any(ast.unparse(decorator) != "dsl_loc_tracing" for decorator in function.decorator_list):
        return None
    resolved = [node for node in ast.walk(function) if isinstance(node, ast.Assign)
                and ast.unparse(node.targets[0]) == "(prepared, dtype, shape, all_static)"
                and isinstance(node.value, ast.Call) and ast.unparse(node.value.func) == "_resolve_typed_operands"]
    if len(resolved) != 1:
        return None
    keywords = tuple((k.arg, k.value.value) for k in resolved[0].value.keywords if isinstance(k.value, ast.Constant))
    if len(keywords) != len(resolved[0].value.keywords) or keywords not in _TYPED_OPERAND_FACTS:
        return None
    returned = _return_values(function)
    common = ("prepared[0]",)
    if not returned or not all(value is not None and (ast.unparse(value) in common or (
            isinstance(value, ast.Call) and ast.unparse(value.func) == "dtype" and len(value.args) == 1) or (
            isinstance(value, ast.Call) and ast.unparse(value.func) == "_wrap_typed_result"
            and [ast.unparse(a) for a in value.args[1:]] == ["dtype", "shape"])) for value in returned):
        return None
    # Every other binding of `dtype` or `prepared` would break the reading of the returns.
    rebound = [node for node in ast.walk(function) if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store)
               and node.id in ("dtype", "prepared")]
    return _TYPED_OPERAND_FACTS[keywords] if len(rebound) == 2 else None


def reexported_results(results: dict[str, str], release: Release) -> dict[str, str]:
    """`flydsl.expr.maxnumf` for `flydsl.expr.arith.maxnumf`: each module-level builder of
    flydsl/expr/arith.py and math.py under every other path of the `flydsl.expr` package that
    binds the very same object in this release (re-exports followed by `Release.defined`)."""
    found: dict[str, str] = {}
    for name, result in results.items():
        module, _, leaf = name.rpartition(".")
        if module not in ("flydsl.expr.arith", "flydsl.expr.math"):
            continue
        where = release.defined(name)
        public = f"flydsl.expr.{leaf}"
        if where is not None and public not in results and release.defined(public) == where:
            found[public] = result
    return found


# `dsl_math_wrap_result` wraps the result of an fx scalar or vector first operand by the class
# `Numeric.from_ir_type` gives the result's (element) type.
_WRAPS_BY_RESULT_TYPE = ("elem_dtype = Numeric.from_ir_type(ir.VectorType(value.type).element_type)",
                         "return Vector(value, first.shape, elem_dtype)", "return Numeric.from_ir_type(value.type)(value)")


def _first_operand_typed(op_class: ast.AST | None) -> bool:
    """An op class whose builder gives its one result its first operand's type, when none is given."""
    init = _method(op_class, "__init__") if isinstance(op_class, ast.ClassDef) else None
    return init is not None and any(ast.unparse(statement) == "if results is None:\n    results = [operands[0].type] * 1"
                                    for statement in init.body)


def operand_typed_results(sources: dict[str, str]) -> dict[str, str]:
    """`flydsl.expr.arith.maximumf` / `flydsl.expr.math.absf` -> `first-operand`: a bare
    `dsl_math_wrap_result` builder of flydsl/expr/arith.py or math.py whose every return is a raw
    builder of an op with its first operand's type (`_first_operand_typed`) on the builder's first
    parameter (itself or `as_ir_value` of it). Wrapping the result by `Numeric.from_ir_type` of
    that type, it keeps an fx scalar or vector first operand's class where the class maps back."""
    same: set[str] = set()
    for dialect in _CASTER_DIALECTS:
        defs = _top_defs(_parse(sources, f"flydsl/_mlir/dialects/_{dialect}_ops_gen.py"))
        classes = {name for name, node in defs.items() if _first_operand_typed(node)}
        same |= {f"{dialect}.{name}" for name, node in defs.items()
                 if isinstance(node, ast.FunctionDef) and _returned_op_class(node) in classes}
    if not _code_shows(sources, "flydsl/expr/math.py", "dsl_math_wrap_result", _WRAPS_BY_RESULT_TYPE):
        return {}
    found: dict[str, str] = {}
    for module in ("arith", "math"):
        tree = _parse(sources, f"flydsl/expr/{module}.py")
        aliases = _dialect_aliases(tree) if tree is not None else {}
        for function in tree.body if tree is not None else ():
            if not isinstance(function, ast.FunctionDef) or not function.args.args or \
                    [ast.unparse(d) for d in function.decorator_list] != ["dsl_loc_tracing", "dsl_math_wrap_result"]:
                continue
            first = function.args.args[0].arg
            returned = _return_values(function)
            if returned and all(_builds_on(value, first, aliases, same) for value in returned):
                found[f"flydsl.expr.{module}.{function.name}"] = "first-operand"
    return found


def _builds_on(value: ast.expr | None, first: str, aliases: dict[str, str], same: set[str]) -> bool:
    """`math.absf(as_ir_value(x), ...)`: a call of one of the `same` builders on `first`."""
    if not (isinstance(value, ast.Call) and value.args and isinstance(value.func, ast.Attribute)
            and isinstance(value.func.value, ast.Name)):
        return False
    dialect = aliases.get(value.func.value.id, value.func.value.id)
    return f"{dialect}.{value.func.attr}" in same and ast.unparse(value.args[0]) in (first, f"as_ir_value({first})")


def _returned(function: ast.FunctionDef) -> ast.expr | None:
    statement = function.body[-1] if function.body else None
    return statement.value if isinstance(statement, ast.Return) else None


def _element_class(node: ast.expr) -> str | None:
    """`Float16.ir_type` -> `Float16`."""
    if isinstance(node, ast.Attribute) and node.attr == "ir_type" and isinstance(node.value, ast.Name):
        return node.value.id
    return None


def _spelled_type(function: ast.FunctionDef) -> str | None:
    """What a `Types` method returns: `Float16` (an element type), `Float16x4`, `count-element`
    (`vec`) or `index-type`."""
    value = _returned(function)
    if ast.unparse(value) == "ir.VectorType.get([int(n)], elem)" if value is not None else False:
        return "count-element"
    if value is not None and ast.unparse(value) == "ir.IndexType.get()":
        return "index-type"  # a scalar type of no fx class's elements
    element = _element_class(value)
    if element is not None:
        return element
    if (isinstance(value, ast.Call) and ast.unparse(value.func) == "self.vec" and len(value.args) == 2
            and isinstance(value.args[0], ast.Constant) and type(value.args[0].value) is int):
        element = _element_class(value.args[1])
        return f"{element}x{value.args[0].value}" if element else None
    return None


# The fx.Vector methods FLY321's fixes write and the value-type layer follows, and the code
# that shows what each emits and returns (a tuple among the parts: one of its spellings).
_VECTOR_METHOD_SHAPES = {
    # `Vector.from_elements(elements, T)`: each element coerced to T, the result a vector of T.
    "from_elements": ("coerces-elements", ("_to_raw(cls._coerce_element(element, dtype)) for element in elements",
                                          "vector.from_elements(vec_ty, raw_elements)",
                                          ("return cls(res, dtype=dtype)", "return cls(res, (len(elements),), dtype)"))),
    # `fx.Vector(v)`: the same value, of the class `Numeric.from_ir_type` gives its element type.
    "__init__": ("ir-element-class", ("value = value.ir_value()", "dtype = Numeric.from_ir_type(vty.element_type)")),
    "bitcast": ("same-bits", ("src_bits = self.numel * self._dtype.width", "vector.BitCastOp(dst_vec_ty, self)",
                              "return Vector(res, (dst_count,), dtype)")),
    "__getitem__": ("static-extract", ("vector.ExtractOp(self, static_position=[idx], dynamic_position=[]).result",
                                       "return self._dtype(res)")),
    # `v.to(T)`: a vector of T (itself when it already is one).
    "to": ("dtype-vector", ("if src_dtype is dtype:\n        return self", "return Vector(res, self._shape, dtype)")),
    # `Vector.filled(shape, x, T)`: a vector of T.
    "filled": ("dtype-vector", ("return cls(val, shape, dtype)",)),
    # `v.reduce(op)`: one `vector.reduction` wrapped in the element class.
    "reduce": ("element-scalar", ("res = vector.reduction(et, kind, self, **kwargs)", "return self._dtype(res)")),
    # `Vector.make_type(n, T)`: the flat MLIR vector type of n elements of T's `ir_type`.
    "make_type": ("flat-type-of-dtype", ("return ir.VectorType.get([Vector._numel_from_shape(shape)], dtype.ir_type)",)),
}
# `v + w`: the operators that promote the element classes by the scalar lattice (`_apply_op`).
_VECTOR_OPERATORS = ("add", "sub", "mul", "and_", "or_", "xor")
_VECTOR_LATTICE = ("common_dtype = _common_numeric_type_for_op(self_dtype, other_dtype, op) if other_dtype is not None "
                   "else self_dtype", "result_dtype = _result_numeric_type_for_op(common_dtype, op)",
                   "return self._wrap_op_result(result, shape, result_dtype)")


def _shows(code: str, part: str | tuple[str, ...]) -> bool:
    return part in code if isinstance(part, str) else any(spelling in code for spelling in part)


def _code_shows(sources: dict[str, str], path: str, name: str, parts: tuple) -> bool:
    """Whether the top-level def or class `name` of `path` shows every part (`_shows`)."""
    node = _top_defs(_parse(sources, path)).get(name)
    return node is not None and all(_shows(ast.unparse(node), part) for part in parts)


def _is_vector_caster(vector: ast.AST | None) -> bool:
    """Whether `class Vector(ArithValue)` replaces ArithValue as the value caster of every vector
    type (`@ir.register_value_caster(ir.VectorType.static_typeid, replace=True)`; ArithValue
    registers itself first, without `replace`, when the module defining its base loads) and takes
    its lanes and element class from the value's type: then a raw op's vector result is an
    `fx.Vector`, not a plain ArithValue."""
    if not isinstance(vector, ast.ClassDef) or [ast.unparse(base) for base in vector.bases] != ["ArithValue"]:
        return False
    init = _method(vector, "__init__")
    takes_type = init is not None and all(part in ast.unparse(init) for part in (
        "shape = tuple(vty.shape)", "dtype = Numeric.from_ir_type(vty.element_type)"))
    return takes_type and any(
        ast.unparse(decorator) == "ir.register_value_caster(ir.VectorType.static_typeid, replace=True)"
        for decorator in vector.decorator_list)


def vector_facts(typing: ast.Module | None) -> dict[str, str]:
    """`flydsl.expr.typing.T.f16x4` -> `Float16x4`, `flydsl.expr.typing.Vector.bitcast` -> `same-bits`, ..."""
    defs = _top_defs(typing)
    found = {}
    for function in getattr(defs.get("Types"), "body", ()):
        spelled = _spelled_type(function) if isinstance(function, ast.FunctionDef) else None
        if spelled is not None:
            found[f"flydsl.expr.typing.T.{function.name}"] = spelled
    for method in getattr(defs.get("Vector"), "body", ()):
        shape = _VECTOR_METHOD_SHAPES.get(getattr(method, "name", ""))
        if shape is not None and all(_shows(ast.unparse(method), part) for part in shape[1]):
            found[f"flydsl.expr.typing.Vector.{method.name}"] = shape[0]
    if _is_vector_caster(defs.get("Vector")):
        found["flydsl.expr.typing.Vector"] = "value-caster"
    methods = {method.name: ast.unparse(method) for method in getattr(defs.get("Vector"), "body", ())
               if isinstance(method, ast.FunctionDef)}
    if all(part in methods.get("_apply_op", "") for part in _VECTOR_LATTICE):
        for operator in _VECTOR_OPERATORS:
            dunder = f"__{operator.rstrip('_')}__"
            if f"return self.apply_op(operator.{operator}, other)" in methods.get(dunder, ""):
                found[f"flydsl.expr.typing.Vector.{dunder}"] = "element-lattice"
    return found


# The value classes a helper's guards test (`isinstance(v, ir.Value)`, `hasattr(v, "ir_value")`), by file.
_VALUE_CLASSES = (("Numeric", "flydsl/expr/numeric.py"), ("ArithValue", "flydsl/expr/utils/arith.py"),
                  ("Vector", "flydsl/expr/typing.py"))


def class_facts(sources: dict[str, str]) -> dict[str, dict]:
    """`Vector` -> {"base": "ArithValue", "ir-value-method": True}: each value class's one base
    (`object` when it names none: a metaclass keyword is no base) and whether its body defines `ir_value`."""
    found = {}
    for name, path in _VALUE_CLASSES:
        cls = _top_defs(_parse(sources, path)).get(name)
        if not isinstance(cls, ast.ClassDef) or len(cls.bases) > 1:
            continue
        base = ast.unparse(cls.bases[0]) if cls.bases else "object"
        defines = any(isinstance(node, ast.FunctionDef) and node.name == "ir_value" for node in cls.body)
        found[name] = {"base": base, "ir-value-method": defines}
    return found


# The element types a vector of an fx class carries (`Vector.make_type` uses the class's `ir_type`,
# signless for every integer class): a class spelled by one of them maps back to itself.
_ELEMENT_IR_TYPES = ("f64", "f32", "f16", "bf16", "i64", "i32", "i16", "i8")


def ir_round_trip_classes(numeric: ast.Module | None) -> list[str]:
    """The classes `Numeric.from_ir_type` gives for a float or signless integer element type
    (`T.i32()` -> `Int32`): `fx.Vector(v)` of a vector of one of them, and a tensor of one, has
    that class again."""
    for node in ast.walk(numeric) if numeric else ():
        if isinstance(node, ast.FunctionDef) and node.name == "from_ir_type":
            mapping = next((n.value for n in ast.walk(node) if isinstance(n, ast.Assign)
                            and ast.unparse(n.targets[0]) == "ir2dsl_map" and isinstance(n.value, ast.Dict)), None)
            if mapping is None:
                return []
            return [value.id for key, value in zip(mapping.keys, mapping.values)
                    if isinstance(value, ast.Name) and key is not None
                    and ast.unparse(key) in {f"T.{name}()" for name in _ELEMENT_IR_TYPES}]
    return []


# Register tensors (`fx.make_rmem_tensor(shape, T)`) and what a whole-tensor load gives: the code
# that shows each step, by file and function (or class).
_TENSOR_SHAPES = {
    "make_rmem_tensor": ("flydsl/expr/derived.py", "register-tensor-of-dtype", (
        "fly.MemRefType.get(dtype.ir_type, layout.type, fly.AddressSpace.Register)",
        "return memref_alloca(tensorTy, layout=layout)")),
    "memref_alloca": ("flydsl/expr/primitive.py", None, ("return fly.memref_alloca(memref_type, layout)",)),
    # The value caster makes every memref a `Tensor`, whose dtype is its element type's class.
    "Tensor": ("flydsl/expr/typing.py", None, (
        "@ir.register_value_caster(MemRefType.static_typeid, replace=True)",
        "return Numeric.from_ir_type(self.type.element_type)", "def dtype(self):\n        return self.element_type")),
    "memref_load_vec": ("flydsl/expr/primitive.py", "vector-of-tensor-dtype", (
        "dtype = None if isinstance(memref.type, CoordTensorType) else memref.dtype",
        "return Vector(fly.memref_load_vec(memref), memref.shape.unpack(), dtype)")),
    # A view of a typed pointer (`fx.make_view(fx.recast_iter(T, p), layout)`) is a memref of the
    # pointer's element type, so a Tensor of that class; `view.load()` is `memref_load_vec(view)`.
    "recast_iter": ("flydsl/expr/primitive.py", "pointer-of-class", (
        "result_type = result_type.ir_type", "result_type = PointerType.get(result_type, src.memspace, src.alignment)",
        "return fly.recast_iter(result_type, src)")),
    "make_view": ("flydsl/expr/primitive.py", "tensor-of-pointer-element", ("return fly.make_view(iter, layout)",)),
    "Tensor.load": ("flydsl/expr/typing.py", "vector-of-tensor-dtype", ("def load(self):\n        return memref_load_vec(self)",)),
}


def tensor_facts(sources: dict[str, str]) -> dict[str, str]:
    """`flydsl.expr.make_rmem_tensor` -> `register-tensor-of-dtype` (a Tensor whose dtype is the
    class passed, for the classes `ir_round_trip_classes` records), `flydsl.expr.memref_load_vec`
    -> `vector-of-tensor-dtype`, and the steps of a view of a typed pointer, when every step of
    `_TENSOR_SHAPES` shows in the release's code."""
    if not all(_code_shows(sources, path, name.partition(".")[0], parts)  # `Tensor.load`: in its class
               for name, (path, _, parts) in _TENSOR_SHAPES.items()):
        return {}
    return {f"flydsl.expr.{name}": fact for name, (_, fact, _) in _TENSOR_SHAPES.items() if fact}


# `fx.ptr_load(p, result_type=t)` loads a value of type t and hands it back as `as_dsl_value` does
# with no DSL class to build (a `@dsl_wrap_result` op, or `as_dsl_value(value, t)` of an MLIR type
# t): a value the caster made (an fx.Vector for a vector type) is returned as it is.
_POINTER_LOAD = ("flydsl/expr/primitive.py", "ptr_load", (
    ("@dsl_wrap_result\ndef ptr_load(ptr, result_type=None):", "ir_result_type = result_type if isinstance(result_type, ir.Type)"),
    ("return fly.ptr_load(result_type, ptr)", "return as_dsl_value(fly.ptr_load(ir_result_type, ptr), result_type)")))
_KEEPS_DSL_VALUES = ("flydsl/expr/typing.py", "as_dsl_value", (
    "if isinstance(exemplar, Numeric):\n            return type(exemplar)(value)",
    "if isinstance(value, DslType):\n        return value"))


def pointer_load_facts(sources: dict[str, str]) -> dict[str, str]:
    """`flydsl.expr.ptr_load` -> `caster-value-of-result-type` when the release's code shows it."""
    if not all(_code_shows(sources, *shape) for shape in (_POINTER_LOAD, _KEEPS_DSL_VALUES)):
        return {}
    return {"flydsl.expr.ptr_load": "caster-value-of-result-type"}


def _round_trip_fact(numeric: ast.Module | None) -> dict[str, str]:
    classes = ir_round_trip_classes(numeric)
    return {"flydsl.expr.numeric.Numeric.from_ir_type": ",".join(classes)} if classes else {}


def derive(sources: dict[str, str]) -> dict[str, dict[str, object]]:
    """Section -> fact -> value for one release."""
    numeric = _parse(sources, "flydsl/expr/numeric.py")
    scalars = scalar_classes(numeric)
    return {
        "scalars": {name: scalars[name] for name in sorted(scalars)},
        "literals": literal_scalars(numeric),
        "operators": ({"promotion": "numeric-lattice"} if has_promotion_lattice(numeric) else {})
        | arith_value_operators(sources, raw := caster_results(sources)),
        "methods": scalar_methods(numeric),
        "returns": gpu_returns(_parse(sources, "flydsl/expr/gpu.py"), _parse(sources, "flydsl/expr/typing.py"), scalars,
                               _parse(sources, "flydsl/_mlir/dialects/_gpu_ops_gen.py")),
        "loops": loop_variables(_parse(sources, "flydsl/compiler/ast_rewriter.py")),
        "values": arith_value_facts(_parse(sources, "flydsl/expr/utils/arith.py"), numeric),
        "results": raw | (builders := wrapper_results(sources, raw) | typed_operand_results(
            _parse(sources, "flydsl/expr/arith.py"))) | reexported_results(builders, Release(sources)),
        "vectors": vector_facts(_parse(sources, "flydsl/expr/typing.py")) | tensor_facts(sources)
        | pointer_load_facts(sources) | _round_trip_fact(numeric),
        "classes": class_facts(sources),
        "operand-typed": (typed := operand_typed_results(sources)) | reexported_results(typed, Release(sources)),
    }


def _value(value: object) -> str:
    """A fact's value as one whitespace-free word: `Int32`, `raw:i32`, `width=32,signed=true,float=false`."""
    if isinstance(value, dict):
        return ",".join(f"{key}={_value(item)}" for key, item in value.items() if item is not None)
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def build_table(derived: dict[str, dict]) -> str:
    releases = sorted(derived, key=Version.parse)
    lines = [
        "# Generated by scripts/derive_flydsl_types.py from each release's wheel: do not edit by hand.",
        "# `section fact releases value` lines, read with str.split (no TOML parser at start-up):",
        "# releases are `A-` (to the newest), `A-B` (inclusive) or `A`, joined with `,`; a type is an",
        "# fx scalar class name, `raw` (an ir.Value), `raw:<mlir type>` or `arith-value` (a caster-made",
        "# ArithValue, signed=None). engine/model/types.py reads the lines covering the target release.",
        f"releases {' '.join(releases)}",
    ]
    for section in ("scalars", "literals", "operators", "methods", "returns", "loops", "values", "results", "vectors",
                    "classes", "operand-typed"):
        for fact in sorted({fact for release in releases for fact in derived[release][section]}):
            values = []  # distinct values in release order
            for release in releases:
                value = derived[release][section].get(fact)
                if value is not None and value not in values:
                    values.append(value)
            for value in values:
                span = spans([derived[r][section].get(fact) == value for r in releases], releases).replace(", ", ",")
                lines.append(f"{section} {fact} {span} {_value(value)}")
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--wheels", type=Path, required=True, help="folder of <release>/flydsl-<release>-cp311-*.whl")
    parser.add_argument("-o", "--output", type=Path, default=OUTPUT)
    parser.add_argument("--check", action="store_true", help="exit 1 if the output differs, write nothing")
    options = parser.parse_args(argv)
    derived = {}
    for folder in sorted(p for p in options.wheels.iterdir() if p.is_dir()):
        wheel = pick_wheel(folder)
        if wheel is not None and Version.parse(folder.name) >= FIRST_RELEASE:
            derived[folder.name] = derive(wheel_sources(wheel) | dialect_sources(wheel))
    if not derived:
        parser.error(f"no wheel of a release >= {FIRST_RELEASE} under {options.wheels}")
    print(f"{len(derived)} releases read")
    return 0 if _write_or_check(options.output, build_table(derived), options.check) else 1


if __name__ == "__main__":
    sys.exit(main())
