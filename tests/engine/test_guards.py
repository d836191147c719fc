"""Guards a helper's returns are typed through (engine/model/guards.py): the `if` tests the value
types of one call's arguments decide, and only those."""

import ast
import textwrap

import pytest

from flydsl_lint.engine.model import SemanticModel
from flydsl_lint.engine.versions import Version
from tests.conftest import derive_types_script
from tests.engine.test_value_types import HEADER, type_of

HELPERS = """
from flydsl._mlir import ir
from flydsl.expr import const_expr
def _raw(v):
    if not isinstance(v, ir.Value) and hasattr(v, "ir_value"):
        return v.ir_value()
    return v
def widen(v):
    if const_expr(isinstance(v, int)):
        return fx.Int64(v)
    return v
def typed(v):
    if isinstance(v, (fx.Numeric, fx.Vector)):
        return fx.Float32(v)
    else:
        return fx.Int32(v)
def exact(v):
    if isinstance(v, fx.Float32):
        return v
    return fx.Int16(v)
def has_value(v):
    if hasattr(v, "ir_value"):
        return fx.Int64(v)
    return fx.Int32(v)
def vector_or(v):
    if isinstance(v, fx.Vector):
        return fx.Int64(v)
    return fx.Int32(v)
def defaulted(v, w=None):
    if w is None:
        return fx.Int32(v)
    return w
def decided_by_value(v):
    if v > 0:
        return fx.Int32(v)
    return fx.Int64(v)
@flyc.kernel
def k(n: fx.Int32, s: fx.Float32):
    probe = {expr}
"""


def helper_type(expr: str) -> str:
    return type_of(HELPERS.format(expr=expr))


@pytest.mark.parametrize("expr, expected", [
    # An fx scalar is no ir.Value and has `ir_value`; an ArithValue is an ir.Value.
    ("_raw(n)", "ArithValue (i32, signedness unknown)"),
    ("_raw(ArithValue(n))", "ArithValue (signed=None)"),
    ("_raw(q)", "unknown"),  # an argument of unknown type decides nothing
    # Python's classes: a bool is an int, an fx value none of them; `const_expr(...)` is its argument.
    ("widen(3)", "fx.Int64"), ("widen(True)", "fx.Int64"), ("widen(n)", "fx.Int32"), ("widen(2.5)", "Python float"),
    # A tuple of classes: any one; a class of FlyDSL's own.
    ("typed(n)", "fx.Float32"), ("typed(fx.Vector.filled(4, 0.0, fx.Float32))", "fx.Float32"), ("typed(3)", "fx.Int32"),
    ("typed(ArithValue(n))", "unknown"),  # no Numeric, but an ArithValue may be an fx.Vector
    # A scalar class: its own values are its instances; another scalar class's may be (a subclass): open.
    ("exact(s)", "fx.Float32"), ("exact(3)", "fx.Int16"), ("exact(n)", "unknown"),
    # `hasattr(v, "ir_value")`: an fx value has it, a Python number not; an ArithValue may be an fx.Vector.
    ("has_value(n)", "fx.Int64"), ("has_value(3)", "fx.Int32"), ("has_value(ArithValue(n))", "unknown"),
    ("vector_or(n)", "fx.Int32"), ("vector_or(ArithValue(n))", "unknown"),
    # `is None`: a value of a known kind is not None; a defaulted None decides nothing.
    ("defaulted(n, s)", "fx.Float32"), ("defaulted(n)", "unknown"),
    # A test of the value itself is not decided by its type: both returns count.
    ("decided_by_value(n)", "unknown"),
])
def test_guards_decided_by_the_argument_types(expr, expected):
    assert helper_type(expr) == expected


def test_a_shadowed_builtin_decides_nothing():
    body = ("def isinstance(v, c):\n    return True\n"
            "def pick(v):\n    if isinstance(v, int):\n        return fx.Int64(v)\n    return fx.Int32(v)\n"
            "probe = pick(3)\n")
    assert type_of(body) == "unknown"


def test_a_taken_branch_that_returns_ends_the_block():
    body = ("def pick(v):\n    if isinstance(v, int):\n        return fx.Int64(v)\n    x = v + 1\n"
            "    return x.whatever()\n"
            "probe = pick(3)\n")
    assert type_of(body) == "fx.Int64"
    # Undecided, the branch may fall through to the other return.
    assert type_of(body.replace("pick(3)", "pick(q)")) == "unknown"


def test_a_decided_branch_that_falls_through_still_needs_a_return_after_it():
    body = "def pick(v):\n    if isinstance(v, int):\n        v = fx.Int64(v)\nprobe = pick(3)\n"
    assert type_of(body) == "unknown"  # falls off the end: returns None


def test_returns_in_loops_all_count():
    body = ("def pick(v):\n    for i in range(4):\n        if isinstance(v, int):\n            return fx.Int64(v)\n"
            "    return fx.Int32(v)\nprobe = pick(3)\n")
    assert type_of(body) == "unknown"  # the loop's return and the one after it disagree


def test_the_derive_script_reads_the_value_classes():
    derive = derive_types_script()
    sources = {
        "flydsl/expr/numeric.py": "class Numeric(metaclass=NumericMeta):\n    def ir_value(self):\n        pass\n",
        "flydsl/expr/utils/arith.py": "class ArithValue(ir.Value):\n    def __init__(self, v):\n        pass\n",
        "flydsl/expr/typing.py": textwrap.dedent("""\
            class Vector(ArithValue, Mixin):
                def ir_value(self):
                    return self
        """),
    }
    assert derive.class_facts(sources) == {
        "Numeric": {"base": "object", "ir-value-method": True},
        "ArithValue": {"base": "ir.Value", "ir-value-method": False},
    }  # two bases: not followed


NARROWED = """
from flydsl.expr import const_expr
def to_raw(v, w, u, flag):
    if isinstance(v, int):
        probe_int = v
    else:
        probe_else = v
    if const_expr(flag and isinstance(u, float)):
        probe_float = u
    if isinstance(w, int):
        w = w + 1
        probe_rebound = w
    if isinstance(v, fx.Int32):
        probe_fx = v
    if isinstance(v, int):
        def later():
            return v
        probe_nested = later
"""


def guarded(name: str) -> str | None:
    tree = ast.parse(HEADER + NARROWED)
    model = SemanticModel(tree, target_version=Version.parse("0.5.0"))
    target = next(node for node in ast.walk(tree) if isinstance(node, ast.Name) and node.id == name)
    value = model.parent(target).value
    if isinstance(value, ast.Name) and value.id == "later":  # the read inside the nested def
        value = next(node for node in ast.walk(tree) if isinstance(node, ast.Return) and isinstance(node.value, ast.Name)).value
    return model.guarded_class(value)


@pytest.mark.parametrize("name, expected", [
    ("probe_int", "int"), ("probe_else", None), ("probe_float", "float"),
    # A rebound parameter, a class of FlyDSL's own, a read in a nested def: not narrowed.
    ("probe_rebound", None), ("probe_fx", None), ("probe_nested", None),
])
def test_an_isinstance_guard_narrows_a_parameter_in_its_body(name, expected):
    assert guarded(name) == expected
