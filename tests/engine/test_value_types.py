"""The model's value types (engine/model/types.py): each source of a type, and unknown staying unknown."""

import ast
import textwrap

import pytest

from flydsl_lint.engine.model import SemanticModel
from flydsl_lint.engine.versions import Version
from tests.conftest import derive_types_script

HEADER = "import flydsl.compiler as flyc\nimport flydsl.expr as fx\nfrom flydsl.expr.arith import ArithValue, unwrap\n"


def type_of(body: str, release: str | None = "0.5.0", header: str = HEADER) -> str:
    """The type of the last line's expression (`probe = <expr>`) as `str(ValueType)`."""
    return explain(body, release, header)[0]


def explain(body: str, release: str | None = "0.5.0", header: str = HEADER) -> tuple[str, str]:
    tree = ast.parse(header + textwrap.dedent(body))
    model = SemanticModel(tree, target_version=Version.parse(release) if release else None)
    probe = [node for node in ast.walk(tree) if isinstance(node, ast.Name) and node.id == "probe"][-1]
    found, why = model.explain_type(model.parent(probe).value)
    return str(found), why


@pytest.mark.parametrize("expr, expected", [
    ("3", "Python int"), ("3.5", "Python float"), ("True", "Python bool"), ("'s'", "unknown"),
    ("fx.Int32(x)", "fx.Int32"), ("fx.Index(x)", "fx.Index"), ("fx.Float16(x)", "fx.Float16"),
    ("ArithValue(x)", "ArithValue (signed=None, of a scalar or vector type)"), ("unwrap(x)", "ir.Value"), ("fx.as_ir_value(x)", "ir.Value"),
    ("ArithValue(fx.Int32(x).ir_value())", "ArithValue (signed=None)"),  # of a scalar type, shown
    ("fx.Int32(x).ir_value()", "ArithValue (i32, signedness unknown)"), ("fx.Int32(x).to(fx.Int64)", "fx.Int64"),
    ("x.ir_value()", "unknown"), ("x.to(fx.Int64)", "unknown"), ("x", "unknown"), ("helper(x)", "unknown"),
    ("fx.thread_idx.x", "fx.Int32"), ("fx.gpu.block_idx.y", "fx.Int32"), ("fx.lane_id()", "fx.Int32"),
    # A method of an API value the name resolves to: the value's own.
    ("fx.thread_idx.x.ir_value()", "ArithValue (i32, signedness unknown)"), ("fx.block_idx.y.to(fx.Int64)", "fx.Int64"),
    ("2 * 3", "Python int"), ("7 / 2", "Python float"), ("1 < 2", "Python bool"),
])
def test_expression_sources(expr, expected):
    assert type_of(f"probe = {expr}\n") == expected


@pytest.mark.parametrize("expr, expected", [
    ("fx.Int32(a) + 1", "fx.Int32"),
    ("4 * fx.Int32(a)", "fx.Int32"),
    ("fx.Int64(a) + 1", "fx.Int64"),  # the literal is an Int32: the wider wins
    ("fx.Int16(a) + 1", "fx.Int32"),  # ... so a narrow scalar is promoted, not kept
    ("fx.Uint32(a) + 1", "fx.Uint32"),  # same width, mixed sign: unsigned
    ("fx.Int32(a) + fx.Int64(b)", "fx.Int64"),
    ("fx.Float16(a) * 2", "fx.Float32"),  # a float widened to the integer's width
    ("fx.Int32(a) / 2", "fx.Float32"),
    ("fx.Int32(a) < 4", "fx.Boolean"),
    ("fx.Float32(a) & 1", "unknown"),  # a TypeError at trace time
    ("fx.Float16(a) + fx.BFloat16(b)", "unknown"),  # float ranks are not modelled
    ("fx.Float16(a) * 0.5", "fx.Float32"),  # floats of two widths: the wider
    ("fx.Float64(a) - fx.Float32(b)", "fx.Float64"),
    ("fx.Int32(a) + 2147483648", "fx.Int64"),  # a literal past 32 bits becomes an Int64
    ("fx.Int32(a) + 2**40", "unknown"),  # no value known for `**`: an Int32 or an Int64
    ("fx.Int32(a) + a", "unknown"),
])
def test_operator_promotion(expr, expected):
    assert type_of(f"probe = {expr}\n") == expected


@pytest.mark.parametrize("body, expected", [
    # A Python int of unknown value is an Int32 or an Int64 in the operator: known where both agree.
    ("n = len(a)\nprobe = fx.Int64(a) + n\n", "fx.Int64"),
    ("n = len(a)\nprobe = n * fx.Index(a)\n", "fx.Index"),  # the wider unsigned wins either way
    ("n = len(a)\nprobe = fx.Int32(a) < n\n", "fx.Boolean"),
    ("n = len(a)\nprobe = fx.Boolean(a).select(fx.Int64(b), n)\n", "fx.Int64"),
    ("n = len(a)\nprobe = fx.Int32(a) + n\n", "unknown"),
    ("n = len(a)\nprobe = fx.Float32(a) * n\n", "unknown"),  # an Int64 would widen it to Float64
    # ... and bounded ints (`int_bounds`) are the one class their range gives.
    ("for i in range(4):\n    probe = fx.Int32(a) * (i * 16)\n", "fx.Int32"),
    ("for i in [1, 2**33]:\n    probe = fx.Int32(a) * i\n", "unknown"),  # Int32 on one pass, Int64 on the other
    ("for i in range(4):\n    probe = fx.Int32(a) * (i << 40)\n", "fx.Int64"),
    # A Python float or bool is always a Float32 or a Boolean.
    ("f = float(a)\nprobe = fx.Float32(a) * f\n", "fx.Float32"),
    ("f = float(a)\nprobe = f - fx.Float64(a)\n", "fx.Float64"),
])
def test_python_number_operands_of_unknown_value(body, expected):
    assert type_of(body) == expected


def test_an_int_of_unknown_value_says_which_classes_it_may_be():
    assert explain("n = len(a)\nprobe = fx.Int32(a) + n\n") == (
        "unknown", "unknown: a Python int of unknown value may be an Int32 or an Int64")


def test_the_derive_script_reads_both_classes_of_a_python_int():
    numeric = ast.parse(textwrap.dedent('''\
        class Numeric:
            @staticmethod
            def from_python_value(value):
                if isinstance(value, bool):
                    return Boolean(value)
                elif isinstance(value, int):
                    return Int32(value) if -2147483648 <= value <= 2147483647 else Int64(value)
                elif isinstance(value, float):
                    return Float32(value)
        '''))
    assert derive_types_script().literal_scalars(numeric) == {
        "bool": "Boolean", "int": "Int32", "int-wide": "Int64", "float": "Float32"}


def test_assignments_parameters_and_unpacking():
    body = """
    @flyc.kernel
    def k(n: fx.Int32, t: fx.Tensor, c: fx.Constexpr[int], plain):
        tid = fx.thread_idx.x
        a, b = fx.Int64(n), 3
        probe = (tid, n, t, c, plain, a, b)
    """
    tree = ast.parse(HEADER + textwrap.dedent(body))
    model = SemanticModel(tree, target_version=Version.parse("0.5.0"))
    probe = next(node for node in ast.walk(tree) if isinstance(node, ast.Name) and node.id == "probe")
    found = [str(model.value_type(element)) for element in model.parent(probe).value.elts]
    assert found == ["fx.Int32", "fx.Int32", "tensor", "Python int", "unknown", "fx.Int64", "Python int"]
    assert model.explain_type(model.parent(probe).value.elts[0])[1] == "assignment at 7:5"


def test_a_conditional_expression_has_the_type_both_branches_give():
    assert explain("probe = 64 if wide else 32\n") == ("Python int", "both branches of a conditional expression (literal)")
    assert type_of("probe = fx.Int32(a) if c else fx.Int32(b)\n") == "fx.Int32"
    assert type_of("probe = fx.Int32(a) if c else fx.Int64(b)\n") == "unknown"
    assert type_of("probe = fx.Int32(a) if c else b\n") == "unknown"
    # In traced code a run-time condition makes the rewriter build an scf.if and rebuild the
    # promoted then-branch: only an fx scalar keeps its class; a compile-time one picks in Python.
    kernel = "@flyc.kernel\ndef k(n: fx.Int32, c: fx.Constexpr[bool]):\n"
    assert type_of(kernel + "    probe = fx.Int32(n) if n > 0 else fx.Int32(0)\n") == "fx.Int32"
    assert explain(kernel + "    probe = 1 if n > 0 else 2\n")[1].startswith(
        "unknown: a conditional expression in traced code whose condition may be a run-time value")
    assert type_of(kernel + "    probe = ArithValue(n) if n > 0 else ArithValue(n)\n") == "unknown"
    assert type_of(kernel + "    probe = 1 if c else 2\n") == "Python int"


def model_of(body: str, release: str = "0.5.0") -> tuple[SemanticModel, ast.Module]:
    tree = ast.parse(HEADER + textwrap.dedent(body))
    return SemanticModel(tree, target_version=Version.parse(release)), tree


def test_a_name_bound_more_than_once_has_the_type_its_bindings_agree_on():
    assert explain("x = fx.Int32(a)\nx = fx.Int32(b)\nprobe = x\n") == (
        "fx.Int32", "every binding of `x` gives fx.Int32 (2 bindings)")
    # A binding reading the name itself is checked by assuming the agreed type and confirming it.
    assert type_of("x = fx.Int32(a)\nx = x + 1\nprobe = x\n") == "fx.Int32"
    assert type_of("x = fx.Int32(a)\nx += 1\nx *= 4\nprobe = x\n") == "fx.Int32"
    assert type_of("def f(n: fx.Int64):\n    y = n\n    n = y + 1\n    probe = n\n") == "fx.Int64"
    # Plain Python code runs as written: Python numbers may agree too.
    assert type_of("def f(c):\n    x = 1\n    if c:\n        x = 2\n    probe = x\n") == "Python int"
    assert type_of("for i in range(4):\n    pass\nfor i in range(8):\n    probe = i\n") == "Python int"


def test_the_read_inside_its_own_rebinding_has_the_agreed_type():
    # FLY302 asks the receiver of `x = x.maximumf(y)` first: that very read must see the type
    # the check assumes, not the answer in progress for itself.
    model, tree = model_of("x = fx.Float32(a)\nfor i in range(4):\n    x = x.maximumf(b)\n")
    receiver = tree.body[-1].body[0].value.func.value
    assert model.explain_type(receiver) == (model.type_table.scalar("Float32"),
                                            "every binding of `x` gives fx.Float32 (2 bindings)")
    model, tree = model_of("x = fx.Int16(a)\nx = x + 1\n")  # ... and one that does not confirm stays unknown
    assert str(model.value_type(tree.body[-1].value.left)) == "unknown"


def test_a_rebound_name_stays_unknown_unless_every_binding_agrees():
    found, why = explain("x = fx.Int32(a)\nx = fx.Int64(a)\nprobe = x\n")
    assert found == "unknown" and why == "unknown: `x` is bound more than once, at 5:1 to fx.Int64 (assignment at 5:1)"
    assert type_of("x = fx.Int32(a)\nx = helper(a)\nprobe = x\n") == "unknown"
    found, why = explain("x = helper(a)\nx = x + 1\nprobe = x\n")
    assert found == "unknown" and "to no known type" in why
    # A self-reference that does not confirm: Int16 + 1 is an Int32.
    assert type_of("x = fx.Int16(a)\nx = x + 1\nprobe = x\n") == "unknown"


def test_an_unknown_rebound_name_says_why_the_binding_a_read_sees_is_unknown():
    # In a function the read sees its block's last binding: its own reason is the one to fix.
    found, why = explain("def f(a, c):\n    v = fx.Int32(a) < c\n    v = helper(a)\n    probe = v\n")
    assert (found, why) == ("unknown", "unknown: no return type known for `helper` (not resolved)")
    found, why = explain("def f(a, c):\n    if c:\n        v = helper(a)\n    else:\n        v = other(a)\n    probe = v\n")
    assert (found, why) == ("unknown", "unknown: `v` is bound more than once, to no known type")  # no one binding


def test_answers_computed_under_a_refuted_assumption_do_not_survive():
    model, tree = model_of("x = fx.Int16(a)\nx = x + 1\ny = x + 1\nprobe = x\n")
    probe = tree.body[-1].value
    assert str(model.value_type(probe)) == "unknown"
    # `x + 1` gave an Int32 while `x` was assumed an Int16: that answer is gone with the assumption.
    rebinding, use = tree.body[-3].value, tree.body[-2].value
    assert [str(model.value_type(node)) for node in (rebinding, use, rebinding.left)] == ["unknown"] * 3


def test_a_rebinding_asked_first_agrees_with_the_others():
    # `m = m.maximumf(v)` asked for its value first (as FLY302 asks of its call): the check of `m`
    # types that very value under its assumption, not as a cycle.
    source = "@flyc.kernel\ndef k(a: fx.Float32):\n    m = fx.Float32(0.0)\n    for q in [1, 2]:\n" \
             "        m = m.maximumf(a)\n    for s in [8, 4]:\n        m = m.maximumf(m.shuffle_xor(fx.Int32(s), fx.Int32(64)))\n"
    model, tree = model_of(source)
    first = tree.body[-1].body[1].body[0].value
    found, why = model.explain_type(first)
    assert str(found) == "fx.Float32", why
    assert str(model.value_type(first.func.value)) == "fx.Float32"
    # A rebinding to another type still refutes the assumption, whichever expression is asked first.
    model, tree = model_of(source.replace("m.maximumf(a)", "fx.Int32(m.maximumf(a))"))
    inner = tree.body[-1].body[1].body[0].value.args[0]
    assert [str(model.value_type(node)) for node in (inner, inner.func.value)] == ["unknown"] * 2


def test_in_traced_code_only_fx_scalars_agree():
    # The rewriter rebuilds a value carried through a dynamic `if`/`for` from its promoted entry value:
    # an fx scalar keeps its class, a Python int or an ArithValue becomes an fx value.
    carried = """
    @flyc.kernel
    def k(n: fx.Int32):
        x = {init}
        if n > 0:
            x = {again}
        probe = x
    """
    assert type_of(carried.format(init="fx.Int32(0)", again="x + n")) == "fx.Int32"
    found, why = explain(carried.format(init="0", again="1"))
    assert found == "unknown" and "in traced code" in why and "Python int" in why
    assert type_of(carried.format(init="ArithValue(n)", again="ArithValue(n)")) == "unknown"
    loop = "@flyc.kernel\ndef k(n: fx.Int32):\n    acc = fx.Float32(0.0)\n" \
           "    for i in range(n):\n        acc = acc + fx.Float32(1.0)\n    probe = acc\n"
    assert type_of(loop) == "fx.Float32"
    # The same bindings in a plain helper agree.
    assert type_of("def h(n: fx.Int32):\n    x = ArithValue(n)\n    if n:\n        x = ArithValue(n)\n    probe = x\n") \
        == "ArithValue (signed=None)"
    # ... and in traced code where no region the rewriter rewrites carries the name: a loop over
    # a list or a `range_constexpr` is Python's own.
    unrolled = "@flyc.kernel\ndef k(n: fx.Int32):\n    x = ArithValue(n)\n" \
               "    for s in {loop}:\n        x = x + ArithValue(n)\n    probe = x\n"
    assert type_of(unrolled.format(loop="[1, 2]")) == "ArithValue (signed=None)"
    assert type_of(unrolled.format(loop="fx.range_constexpr(2)")) == "ArithValue (signed=None)"
    assert type_of(unrolled.format(loop="range(2)")) == "unknown"
    # A rewritten region elsewhere in the function that calls a method of the name carries it too.
    method = "@flyc.kernel\ndef k(n: fx.Int32):\n    x = ArithValue(n)\n    x = x + ArithValue(n)\n" \
             "    if n > 0:\n        x.owner.attributes\n    probe = x\n"
    assert type_of(method) == "ArithValue (signed=None)"  # an attribute read is no method call
    assert type_of(method.replace("x.owner.attributes", "x.select(n, n)")) == "unknown"


REBUILDING_IF = """
@flyc.kernel
def k(x: fx.Float32, n: fx.Int32, c: fx.Constexpr[int]):
    in_range = fx.thread_idx.x < n
    m = fx.Float32(0.0)
    if {test}:
        m = ArithValue(x)
    {between}
    probe = m
"""


def test_a_read_after_an_scf_if_sees_the_fx_scalar_the_name_entered_it_as():
    # The rewriter rebuilds what a branch assigned from the entry value's class, whatever the branch gave.
    assert explain(REBUILDING_IF.format(test="in_range", between="pass")) == (
        "fx.Float32", "the `if` at 9:5 rebuilds `m` as the fx.Float32 it was on entry (assignment at 8:5)")
    assert type_of(REBUILDING_IF.format(test="x > 0.0", between="y = m")) == "fx.Float32"
    # A later binding is the one the read sees.
    assert type_of(REBUILDING_IF.format(test="in_range", between="m = ArithValue(x)")) == "ArithValue (signed=None)"


@pytest.mark.parametrize("test, between", [
    ("c > 2", "pass"),  # a compile-time test: Python runs one branch, which may leave the ArithValue
    ("fx.const_expr(in_range)", "pass"),
    ("in_range", "if in_range:\n        m = ArithValue(x)"),  # ... or a later `if` of an ArithValue
    ("(t := in_range)", "pass"),  # a binding in a test: not the branches' own
])
def test_a_read_after_an_if_that_does_not_provably_rebuild_the_name_stays_unknown(test, between):
    assert type_of(REBUILDING_IF.format(test=test, between=between)) == "unknown"


def test_an_if_rebuilds_only_an_fx_scalar_as_its_class():
    body = REBUILDING_IF.format(test="in_range", between="pass").replace("m = fx.Float32(0.0)", "m = ArithValue(x)")
    assert type_of(body.replace("        m = ArithValue(x)", "        m = fx.Float32(x)")) == "unknown"


@pytest.mark.parametrize("body, expected", [
    # A helper only ever called with list displays: its elements are what every call passes.
    ("def _h(xs, i):\n    probe = xs[i]\n_h([fx.Float32(a)], 0)\n_h([fx.Float32(b), fx.Float32(c)], 1)\n",
     "fx.Float32"),
    # A list the function builds with `append` and item stores, indexed, iterated and measured.
    ("def f(a: fx.Int32):\n    xs = []\n    for k in range(len(xs)):\n        xs.append(a + 1)\n"
     "    xs[0] = fx.Int32(7)\n    probe = xs[1]\n", "fx.Int32"),
    ("def f(a: fx.Int32):\n    xs = [a, a * 2]\n    for x in xs:\n        probe = x\n", "fx.Int32"),
    ("def f(a: fx.Int32):\n    xs = [a * k for k in range(4)]\n    probe = xs[3]\n", "fx.Int32"),
    ("def f(a: fx.Int32):\n    probe = [a, a][0]\n", "fx.Int32"),
    # Elements of two types, or one the model does not know.
    ("def f(a: fx.Int32):\n    xs = [a]\n    xs.append(fx.Int64(a))\n    probe = xs[0]\n", "unknown"),
    ("def f(a: fx.Int32):\n    xs = [a]\n    xs[0] = helper(a)\n    probe = xs[0]\n", "unknown"),
    # A list that may escape: passed to a call, aliased, extended, rebound, sliced or returned.
    ("def f(a: fx.Int32):\n    xs = [a]\n    helper(xs)\n    probe = xs[0]\n", "unknown"),
    ("def f(a: fx.Int32):\n    xs = [a]\n    ys = xs\n    probe = xs[0]\n", "unknown"),
    ("def f(a: fx.Int32):\n    xs = [a]\n    xs.extend(ys)\n    probe = xs[0]\n", "unknown"),
    ("def f(a: fx.Int32):\n    xs = [a]\n    xs += ys\n    probe = xs[0]\n", "unknown"),
    ("def f(a: fx.Int32):\n    xs = [a]\n    probe = xs[0:1]\n", "unknown"),
    ("def f(a: fx.Int32):\n    xs = [a]\n    probe = xs[0]\n    return xs\n", "unknown"),
    # A list passed by name, or a helper whose callers are not all seen.
    ("def _h(xs):\n    probe = xs[0]\nys = [fx.Int32(a)]\n_h(ys)\n", "unknown"),
    ("def h(xs):\n    probe = xs[0]\nh([fx.Int32(a)])\n", "unknown"),
])
def test_an_element_of_a_list_has_the_type_every_element_the_model_sees_gives(body, expected):
    assert type_of(body) == expected


def test_in_traced_code_a_list_a_region_adds_to_keeps_only_fx_scalar_elements():
    # The rewriter carries a list a dynamic `if` appends to, and rebuilds its leaves as fx values.
    kernel = "@flyc.kernel\ndef k(n: fx.Int32):\n    xs = [{value}]\n    if n > 0:\n        xs.append({value})\n" \
             "    probe = xs[0]\n"
    assert type_of(kernel.format(value="n + 1")) == "fx.Int32"
    found, why = explain(kernel.format(value="ArithValue(n)"))
    assert found == "unknown" and "rebuilds its ArithValue (signed=None) elements as fx values" in why
    # ... also where a helper of the kernel reads it: the region is where the list is bound.
    nested = kernel.format(value="ArithValue(n)").replace("    probe = xs[0]\n", "    def h():\n        probe = xs[0]\n")
    assert type_of(nested) == "unknown"
    # Appended outside any region, an ArithValue stays one.
    assert type_of(kernel.format(value="ArithValue(n)").replace("    if n > 0:\n        xs", "    xs")) \
        == "ArithValue (signed=None)"


@pytest.mark.parametrize("body", [
    "x = fx.Int32(a)\nwith ctx() as x:\n    pass\nprobe = x\n",
    "x = fx.Int32(a)\ntry:\n    pass\nexcept E as x:\n    pass\nprobe = x\n",
    "x = fx.Int32(a)\nfrom m import x\nprobe = x\n",
    "x = fx.Int32(a)\nif (x := fx.Int32(b)):\n    pass\nprobe = x\n",
    "x = fx.Int32(a)\ndel x\nx = fx.Int32(b)\nprobe = x\n",
    "x = fx.Int32(a)\nx, y = f()\nprobe = x\n",
])
def test_other_bindings_keep_a_rebound_name_unknown(body):
    assert type_of(body) == "unknown"


def test_a_name_another_function_rebinds_is_unknown():
    found, why = explain("x = fx.Int32(a)\ndef f():\n    global x\n    x = 3\nprobe = x\n")
    assert found == "unknown" and why == "unknown: `x` is declared global or nonlocal"
    nested = "def f():\n    x = fx.Int32(a)\n    def g():\n        nonlocal x\n        x = 3\n    probe = x\n"
    assert type_of(nested) == "unknown"


def test_rebinding_chains_stay_bounded():
    # A long chain of rebinding: no deep recursion, one check of its bindings.
    model, tree = model_of("x = fx.Int32(a)\n" + "x = x + 1\n" * 1200 + "probe = x\n")
    assert str(model.value_type(tree.body[-1].value)) == "fx.Int32"
    assert model._answers["rebound_checks"][None] == 2 * 1201
    # Rebound names each defined through the next: every name is checked once, not once per path.
    chain = "".join(f"a{i} = a{i + 1} + 1\na{i} = a{i + 1} + 2\n" for i in reversed(range(12)))
    model, tree = model_of(f"a12 = fx.Int32(q)\n{chain}probe = a0\n")
    assert str(model.value_type(tree.body[-1].value)) == "fx.Int32"
    assert model._answers["rebound_checks"][None] == 12 * 4


def test_helper_returns_in_the_module():
    assert type_of("def lane(v):\n    return fx.Int32(v) % 64\nprobe = lane(q)\n") == "fx.Int32"
    # Two returns of different types, or one without a value: unknown.
    assert type_of("def f(v):\n    if v:\n        return fx.Int32(v)\n    return fx.Int64(v)\nprobe = f(q)\n") == "unknown"
    assert type_of("def f(v):\n    if v:\n        return\n    return fx.Int64(v)\nprobe = f(q)\n") == "unknown"
    # One that may fall off its end returns None there.
    assert type_of("def f(v):\n    if v:\n        return fx.Int64(v)\nprobe = f(q)\n") == "unknown"
    assert type_of("def f(v):\n    if v:\n        return fx.Int64(v)\n    else:\n        raise ValueError(v)\nprobe = f(q)\n") \
        == "fx.Int64"


def test_a_generator_returns_no_value_of_its_return_type():
    assert type_of("def lane(v):\n    yield v\n    return fx.Int32(v)\nprobe = lane(q)\n") == "unknown"


UNPACKED = """
def pair(v, flag):
    if flag:
        return fx.Int32(v), fx.Float32(v), 1
    {other}
@flyc.jit
def traced(v):
    return fx.Int32(v), fx.Float32(v)
@flyc.kernel
def k(n: fx.Int32):
    {unpack}
    probe = (a, b)
"""


@pytest.mark.parametrize("other, unpack, expected", [
    ("return fx.Int32(v), fx.Float32(v)", "a, b = pair(n, True)", ["fx.Int32", "fx.Float32"]),
    # A return of another length cannot bind these names (the unpacking raises): not counted.
    ("return fx.Int32(v), fx.Float32(v)", "a, b, c = pair(n, True)", ["fx.Int32", "fx.Float32"]),
    ("return fx.Int32(v), fx.Float32(v)", "r = pair(n, True)\n    a, b = r", ["fx.Int32", "fx.Float32"]),
    ("if v:\n        return fx.Int64(v), fx.Float32(v)\n    return fx.Int32(v), fx.Float32(v)", "a, b = pair(n, True)",
     ["unknown", "fx.Float32"]),  # the returns disagree
    ("return v", "a, b = pair(n, True)", ["unknown", "unknown"]),  # a return of unknown shape
    ("return fx.Int32(v), fx.Float32(v)", "a, *b = pair(n, True)", ["unknown", "unknown"]),  # starred
    ("yield 1", "a, b = pair(n, True)", ["unknown", "unknown"]),  # a generator
    ("pass", "a, b = pair(n, True)", ["unknown", "unknown"]),  # may return None
    ("return fx.Int32(v), fx.Float32(v)", "a, b = traced(n)", ["unknown", "unknown"]),  # a decorated def
])
def test_unpacking_the_tuples_a_helper_returns(other, unpack, expected):
    tree = ast.parse(HEADER + UNPACKED.format(other=other, unpack=unpack))
    model = SemanticModel(tree, target_version=Version.parse("0.5.0"))
    probe = [node for node in ast.walk(tree) if isinstance(node, ast.Name) and node.id == "probe"][-1]
    assert [str(model.value_type(element)) for element in model.parent(probe).value.elts] == expected


NESTED_HELPER = """
@flyc.kernel
def k(n: fx.Int32):
    def lane(v, w=4{params}):
        probe = (v, w)
        return v
{calls}
"""


def nested_helper_types(calls: str, params: str = "", decorator: str = "") -> list[str]:
    source = NESTED_HELPER.format(params=params, calls=textwrap.indent(textwrap.dedent(calls), "    "))
    source = source.replace("    def lane", f"    {decorator}\n    def lane") if decorator else source
    model, tree = model_of(source)
    probe = [node for node in ast.walk(tree) if isinstance(node, ast.Name) and node.id == "probe"][-1]
    return [str(model.value_type(element)) for element in model.parent(probe).value.elts]


def test_parameters_of_a_nested_helper_have_the_type_every_call_passes():
    # Positionally, by keyword, or the default when a call leaves it out.
    assert nested_helper_types("lane(n)\nlane(n + 1, w=8)\nx = lane(v=fx.Int32(2))\n") == ["fx.Int32", "Python int"]
    model, tree = model_of(NESTED_HELPER.format(params="", calls="    lane(n)"))
    probe = [node for node in ast.walk(tree) if isinstance(node, ast.Name) and node.id == "probe"][-1]
    assert model.explain_type(model.parent(probe).value.elts[0])[1] == "every call of `lane` passes `v` as one type (1 calls)"


@pytest.mark.parametrize("calls, params, decorator", [
    ("lane(n)\nlane(fx.Int64(n))\n", "", ""),  # the calls disagree
    ("lane(n)\nlane(q)\n", "", ""),  # a call passes an unknown
    ("lane(n)\nf = lane\n", "", ""),  # passed as a value: a caller we cannot see
    ("lane(n)\nreturn lane\n", "", ""),
    ("lane(n)\nlane(*args)\n", "", ""),  # unpacks
    ("lane(n)\n", ", *rest", ""),  # takes *args
    ("lane(n)\n", "", "@cached"),  # decorated
    ("", "", ""),  # never called
])
def test_parameters_of_a_nested_helper_stay_unknown_unless_every_call_agrees(calls, params, decorator):
    assert nested_helper_types(calls, params, decorator)[0] == "unknown"


def test_parameters_passed_through_themselves_or_of_module_functions_stay_unknown():
    recursive = "@flyc.kernel\ndef k(n: fx.Int32):\n    def f(v):\n        probe = v\n        f(v + 1)\n    f(n)\n"
    assert type_of(recursive) == "unknown"
    # A module-level function may be imported and called from elsewhere.
    assert type_of("def f(v):\n    probe = v\nf(fx.Int32(1))\n") == "unknown"
    # A default disagreeing with what the calls pass.
    assert nested_helper_types("lane(n, fx.Int32(8))\nlane(n)\n")[1] == "unknown"


def test_raw_dialect_results():
    header = HEADER + "from flydsl._mlir.dialects import arith as _arith\n"
    # Their scalar result is made an ArithValue of signed=None by the value caster; a vector one an
    # fx.Vector (the caster of vector types). An operand shows which: of operands of no known type, either.
    scalar = "s = fx.Int32(x).ir_value()\n"
    assert type_of(scalar + "probe = _arith.addi(s, b)\n", header=header) == "ArithValue (signed=None)"
    assert type_of(scalar + "probe = _arith.AddIOp(b, s).result\n", header=header) == "ArithValue (signed=None)"
    assert type_of(scalar + "probe = _arith.AddIOp(s, s).results[0]\n", header=header) == "ArithValue (signed=None)"
    assert type_of("probe = _arith.addi(a, b)\n", header=header) == "ArithValue or fx.Vector"
    assert type_of("probe = _arith.AddIOp(a, b).result\n", header=header) == "ArithValue or fx.Vector"
    pair = "from flydsl._mlir.dialects import vector\nfrom flydsl.expr.typing import T\nv = vector.from_elements(T.i32x2, [a, b])\n"
    assert type_of(pair + "probe = v\n", header=header) == "fx.Vector of fx.Int32"
    assert type_of(pair + "probe = _arith.addi(v, v)\n", header=header) == "unknown"
    assert type_of("probe = _arith.AddIOp(a, b)\n", header=header) == "unknown"  # the op, not a value


def test_range_loop_variables_follow_the_rewriter():
    traced = """
    @flyc.kernel
    def k(n: fx.Int32):
        for i in range(0, n):
            probe = i
    """
    assert explain(traced) == ("ArithValue (i32, signed=None)", "API table 0.5.0 (range loop at 7:9)")
    with_init = """
    @flyc.kernel
    def k(n: fx.Int32):
        for iv, [acc] in range(0, n, 1, init=[fx.Float32(0.0)]):
            probe = (iv, acc)
    """
    tree = ast.parse(HEADER + textwrap.dedent(with_init))
    model = SemanticModel(tree, target_version=Version.parse("0.5.0"))
    probe = next(node for node in ast.walk(tree) if isinstance(node, ast.Name) and node.id == "probe")
    assert [str(model.value_type(e)) for e in model.parent(probe).value.elts] == ["ArithValue (index, signed=None)", "ir.Value"]
    # The iter args as one name are a Python list, not a value.
    state = "@flyc.kernel\ndef k(n: fx.Int32):\n    for iv, state in range(0, n, init=[n]):\n        probe = state\n"
    assert type_of(state) == "unknown"
    assert type_of("for i in range(4):\n    probe = i\n") == "Python int"  # plain Python outside traced code
    constexpr = "@flyc.kernel\ndef k():\n    for i in fx.range_constexpr(4):\n        probe = i\n"
    assert type_of(constexpr) == "Python int"


def test_builtin_conversions_give_python_values():
    for call, expected in (("int(x)", "Python int"), ("len(x)", "Python int"), ("float(x)", "Python float"), ("bool(x)", "Python bool")):
        assert explain(f"@flyc.kernel\ndef k(x):\n    probe = {call}\n") == (expected, f"builtin `{call[:-3]}(...)`")
    # Rebound, or a builtin whose result type depends on its arguments: unknown.
    assert type_of("def float(v):\n    return v\nprobe = float(x)\n") == "unknown"
    assert type_of("probe = abs(x)\n") == "unknown"
    # Python's math of Python numbers: a float, an int for the rounding functions; of others, unknown.
    assert type_of("import math\nprobe = math.sqrt(2.0)\n") == "Python float"
    assert type_of("import math\nprobe = math.ceil(len(x) / 4)\n") == "Python int"
    assert type_of("import math\nprobe = math.sqrt(x)\n") == "unknown"
    assert type_of("from flydsl.expr import math\nprobe = math.sqrt(2.0)\n") != "Python float"
    # min, max and abs of Python numbers of one kind give that kind; of an int and a float, either.
    assert type_of("probe = min(len(x), 4)\n") == "Python int"
    assert type_of("probe = abs(float(x))\n") == "Python float"
    assert type_of("probe = max(len(x), 0.5)\n") == "unknown"
    assert type_of("probe = max([1, 2])\n") == "unknown"
    assert type_of("from flydsl.expr import *\nprobe = max(len(x), 4)\n") == "unknown"  # fx.max
    # A star import from outside FlyDSL may bind the name; FlyDSL's own do not.
    assert type_of("from helpers import *\nprobe = float(x)\n") == "unknown"
    assert type_of("from flydsl.expr import *\nprobe = float(x)\n") == "Python float"


def test_loops_over_a_display_of_python_ints_bind_python_ints():
    traced = "@flyc.kernel\ndef k(n: fx.Int32):\n    for sh in {}:\n        probe = sh\n"
    assert explain(traced.format("[32, 16, 8]"))[0] == "Python int"
    assert explain(traced.format("(1, 2 * 3)"))[0] == "Python int"
    # A run-time value among them, an empty display, or a name the rewriter's check matches: unknown.
    for display in ("[n, 4]", "[]", "[for_each, 4]"):
        assert explain(traced.format(display))[0] == "unknown", display
    # A display that reads the loop's own target (an outer loop's previous value): no endless recursion.
    assert type_of("for x in [x, 1]:\n    probe = x\n") == "unknown"
    assert type_of("x = 1\nwhile c:\n    for x in [x + 1, 2]:\n        probe = x\n") == "Python int"


def test_comprehension_targets_are_python_ints_over_a_range():
    # The rewriter rewrites `for` statements only: a comprehension's range is the builtin, in traced code too.
    def element_type(comprehension: str) -> str:
        tree = ast.parse(HEADER + f"@flyc.kernel\ndef k(n: fx.Int32, items):\n    probe = {comprehension}\n")
        model = SemanticModel(tree, target_version=Version.parse("0.5.0"))
        return str(model.value_type(next(node for node in ast.walk(tree) if isinstance(node, ast.ListComp)).elt))

    for iterable in ("range(4)", "range(0, 8, 2)", "range(n)", "fx.range_constexpr(4)"):
        assert element_type(f"[i for i in {iterable}]") == "Python int", iterable
    # Over anything else, or unpacked, the target stays unknown.
    for comprehension in ("[i for i in items]", "[i for i in enumerate(items)]", "[j for i, j in enumerate(items)]"):
        assert element_type(comprehension) == "unknown", comprehension


@pytest.mark.parametrize("expr, expected, why", [
    # ArithValue(v) resets the signedness: signed=None whatever v carried.
    ("ArithValue(fx.Uint32(x).ir_value())", "ArithValue (signed=None)", "`ArithValue(v)` sets signed=None (API table 0.5.0)"),
    ("ArithValue(x, True)", "ArithValue (signedness unknown, of a scalar or vector type)", "`ArithValue(v, signed)`"),
    ("ArithValue(x, signed=s)", "ArithValue (signedness unknown, of a scalar or vector type)", "`ArithValue(v, signed)`"),
    ("ArithValue(x, signed=None)", "ArithValue (signed=None, of a scalar or vector type)",
     "`ArithValue(v)` sets signed=None (API table 0.5.0)"),
    ("ArithValue(x).with_signedness(False)", "ArithValue (signedness unknown, of a scalar or vector type)",
     "`.with_signedness(...)`"),
    # A dynamic integer's .ir_value() is with_signedness(cls.signed); a float has none.
    ("fx.Uint32(x).ir_value()", "ArithValue (i32, signedness unknown)", "`.ir_value()` of fx.Uint32 carries signed=False (API table 0.5.0)"),
    ("fx.Float32(x).ir_value()", "ArithValue (f32, signed=None)", "`.ir_value()` of fx.Float32: a float has no signedness"),
    # unwrap/_to_raw return an ir.Value unchanged, signedness and all; a scalar's .ir_value().
    ("unwrap(ArithValue(x))", "ArithValue (signed=None, of a scalar or vector type)",
     "`unwrap` returns an ir.Value unchanged (`ArithValue(v)` sets signed=None (API table 0.5.0))"),
    ("unwrap(fx.Int32(x))", "ArithValue (i32, signedness unknown)", "`.ir_value()` of fx.Int32 carries signed=True (API table 0.5.0)"),
    ("unwrap(x)", "ir.Value", "unwrap(...)"),
])
def test_arith_value_signedness(expr, expected, why):
    assert explain(f"probe = {expr}\n") == (expected, why)


@pytest.mark.parametrize("expr, expected", [
    ("arith.index_cast(T.i32, ArithValue(x))", "ArithValue (signed=None)"),  # itself, or the cast's
    ("arith.index_cast(T.index, fx.Int32(x))", "ArithValue (signedness unknown)"),  # its .ir_value() is signed
    ("arith.index_cast(T.i32, unwrap(x))", "ir.Value"),  # a raw value of that type comes back as it is
    ("arith.index_cast(T.i32, x)", "unknown"),
])
def test_index_cast_gives_its_operand_or_the_casts_arith_value(expr, expected):
    header = "from flydsl.expr import arith\nfrom flydsl.expr.typing import T\n"
    assert type_of(f"{header}probe = {expr}\n") == expected
    assert type_of(f"{header}probe = {expr}\n", release="0.3.0") == expected


@pytest.mark.parametrize("expr, expected", [
    ("arith.select(c, fx.Int32(x), fx.Int32(y))", "ArithValue (signed=None)"),
    ("arith.select(c, fx.Float32(x), 0.0)", "ArithValue (signed=None)"),  # the literal becomes a constant of that type
    ("arith.select(c, arith.constant(1), y)", "ArithValue (signed=None)"),
    ("arith.select(c, x, y)", "unknown"),  # may be memrefs or pointers: the caster leaves those raw
    ("arith.select(c, 1, 2)", "unknown"),  # fails at trace time
    ("arith.select(c, unwrap(x), y)", "unknown"),  # an ir.Value of no known type
    ("arith.select(c, fx.Int32(x))", "unknown"),
])
def test_select_gives_an_arith_value_of_its_values_type(expr, expected):
    assert type_of(f"from flydsl.expr import arith\nprobe = {expr}\n") == expected
    assert type_of(f"from flydsl.expr import arith\nprobe = {expr}\n", release="0.3.0") == expected


def test_raw_results_the_caster_leaves_alone():
    header = HEADER + "from flydsl._mlir.dialects import arith, llvm, rocdl, scf, vector\n"
    # Any type: a pointer select, a memref type_cast, an llvm or rocdl op, a multi-result op.
    for expr in ("arith.SelectOp(c, p, q).result", "vector.TypeCastOp(t, m).result", "rocdl.ReadlaneOp(t, v, 0).result"):
        assert type_of(f"probe = {expr}\n", header=header) == "ir.Value", expr
    # A builder outside the table may return its op (no result) or a result list: not even an ir.Value.
    for expr in ("arith.select(c, p, q)", "vector.type_cast(t, m)", "llvm.load(t, p)", "arith.addui_extended(a, b)",
                 "vector.store(v, m, [])", "rocdl.sched_barrier(0)"):
        found, why = explain(f"probe = {expr}\n", header=header)
        assert found == "unknown" and "may return an op or a result list" in why, expr
    # `extract` of a source of no known rank may give a vector; one lane of a proven 1-D vector is a scalar.
    assert type_of("probe = vector.extract(v, [], [0])\n", header=header) == "ArithValue or fx.Vector"
    assert type_of("from flydsl.expr.typing import T\nv = vector.from_elements(T.i32x2, [a, b])\n"
                   "probe = vector.extract(v, static_position=[0], dynamic_position=[])\n", header=header) \
        == "ArithValue (signed=None)"
    assert type_of("probe = arith.constant(t, 3)\n", header=header) == "ArithValue or fx.Vector"  # `t` may be a vector type
    assert type_of("from flydsl.expr.typing import T\nprobe = arith.constant(T.i32, 3)\n", header=header) \
        == "ArithValue (signed=None)"
    loop = "loop = scf.ForOp(lb, ub, step, [acc])\nprobe = loop.induction_variable\n"
    assert explain(loop, header=header) == ("ArithValue (signed=None)",
                                            "an scf.ForOp induction variable (index or integer: API table 0.5.0)")
    # A release before the table's first knows no caster.
    assert type_of("probe = arith.AddIOp(a, b).result\n", release="0.2.4", header=header) == "ir.Value"


def test_arith_helpers_and_methods_giving_caster_made_values():
    header = HEADER + "from flydsl.expr import arith\nfrom flydsl.expr.typing import T\n"
    # flydsl.expr.arith's helpers whose every return is a table op (`constant` -> `arith.constant`,
    # `index` -> `constant(...)`), and the raw builders it star-imports.
    for expr in ("arith.constant(3, type=T.i32)", "arith.constant(3)", "arith.index(4)", "arith.shli(s, b)",
                 "arith.bitcast(T.i32, v)"):
        assert type_of(f"s = fx.Int32(x).ir_value()\nprobe = {expr}\n", header=header) == "ArithValue (signed=None)", expr
    assert type_of("probe = arith.shli(a, b)\n", header=header) == "ArithValue or fx.Vector"  # of operands of no known shape
    assert type_of("probe = arith.constant(3, type=t)\n", header=header) == "ArithValue or fx.Vector"
    # Its own cmpi/cmpf return the raw builder's value; select (of any type) and index_cast (which
    # may return its operand): unknown.
    for expr in ("arith.cmpi(p, s, b)", "arith.cmpf(p, a, s)"):
        assert type_of(f"s = fx.Float32(x).ir_value()\nprobe = {expr}\n", header=header) == "ArithValue (signed=None)", expr
    assert type_of("probe = arith.cmpi(p, a, b)\n", header=header) == "ArithValue or fx.Vector"
    for expr in ("arith.select(c, a, b)", "arith.index_cast(T.index, v)"):
        assert type_of(f"probe = {expr}\n", header=header) == "unknown", expr
    # ArithValue methods build arith ops; index_cast may return its receiver, signless only if that is.
    assert type_of("probe = ArithValue(x).trunci(T.i16).extui(T.i32)\n", header=header) == "ArithValue (signed=None)"
    assert type_of("probe = ArithValue(x).index_cast(T.index)\n", header=header) == "ArithValue (signed=None)"
    assert explain("probe = fx.Int32(x).ir_value().index_cast(T.index)\n", header=header) == (
        "ArithValue (signedness unknown)", "`ArithValue.index_cast` may return its receiver, ArithValue (i32, signedness unknown)")
    assert type_of("probe = ArithValue(x).shuffle_xor(1, 64)\n", header=header) == "unknown"  # a gpu op


@pytest.mark.parametrize("expr, expected", [
    # Numeric's proxies are `type(self)(...)`; bitcast(dtype) is `dtype(res)`.
    ("fx.Float32(a).maximumf(b)", "fx.Float32"), ("fx.Float16(a).exp2()", "fx.Float16"),
    ("fx.Int32(a).shuffle_xor(1, 64)", "fx.Int32"), ("fx.Uint32(a).shrui(2)", "fx.Uint32"),
    ("fx.Int32(a).bitcast(fx.Float32)", "fx.Float32"),
    # select: the _resolve_numeric_type of the two operands (a literal is what from_python_value makes it).
    ("(fx.Int32(a) < 3).select(fx.Int32(a), 0)", "fx.Int32"),
    ("(fx.Int32(a) < 3).select(fx.Int64(a), fx.Uint32(b))", "fx.Int64"),
    ("(fx.Int32(a) < 3).select(1.5, 2)", "fx.Float32"),
    # Unknown stays unknown: an unknown operand or class, a non-Boolean condition, a receiver not known.
    ("(fx.Int32(a) < 3).select(x, 0)", "unknown"), ("(fx.Int32(a) < 3).select(fx.Float16(a), fx.BFloat16(b))", "unknown"),
    ("fx.Int32(a).bitcast(T.f32)", "unknown"), ("fx.Int32(a).select(1, 2)", "unknown"), ("x.maximumf(b)", "unknown"),
    ("fx.Float32(a).rsqrt()", "unknown"),
])
def test_methods_of_fx_scalars(expr, expected):
    assert type_of(f"probe = {expr}\n") == expected


def test_methods_of_fx_scalars_come_from_the_release():
    assert explain("probe = fx.Float32(a).maximumf(b)\n", release="0.3.0") == (
        "fx.Float32", "`fx.Float32.maximumf` (API table 0.3.0)")
    assert type_of("probe = fx.Float32(a).maximumf(b)\n", release="0.2.4") == "unknown"  # before the table


@pytest.mark.parametrize("expr, expected", [
    # dsl_math_wrap_result: an ir.Value first operand -> the builder's value, which the caster makes an ArithValue;
    # of a scalar type shown, an ArithValue; else it may be an fx.Vector.
    ("fmath.exp2(ArithValue(fx.Float32(a).ir_value()))", "ArithValue (signed=None)"),
    ("arith.maximumf(fx.Float32(a).ir_value(), b)", "ArithValue (signed=None)"),
    ("fmath.exp2(ArithValue(a))", "ArithValue or fx.Vector"), ("arith.maximumf(ArithValue(a), b)", "ArithValue or fx.Vector"), ("fx.math.rsqrt(unwrap(a))", "ArithValue or fx.Vector"),
    # ... an fx scalar one -> Numeric.from_ir_type of the result's MLIR type: the operand's class where the op
    # gives its first operand's type (`operand-typed`) and the class maps back, else not settled,
    ("fmath.exp2(fx.Float32(a))", "fx.Float32"), ("arith.maximumf(fx.BFloat16(a), b)", "fx.BFloat16"),
    ("fmath.absf(fx.Vector.filled(4, 0.0, fx.Float32))", "fx.Vector of fx.Float32"),
    ("fmath.ctpop(fx.Uint32(a))", "unknown"),  # its i32 result comes back as an Int32
    ("fmath.isnan(fx.Float32(a))", "unknown"),  # an i1 result
    # ... unless the builder preserves the numeric type (shrui): the operand's class.
    ("arith.shrui(fx.Uint32(a), 2)", "fx.Uint32"), ("arith.shrui(ArithValue(a), 2)", "ArithValue or fx.Vector"),
    ("fmath.exp2(x)", "unknown"), ("arith.shrui(value=fx.Uint32(a), amount=2)", "unknown"),
])
def test_wrapped_math_builders(expr, expected):
    header = HEADER + "from flydsl.expr import arith, math as fmath\n"
    assert type_of(f"probe = {expr}\n", header=header) == expected


def test_wrapped_math_builders_come_from_the_release():
    header = HEADER + "from flydsl.expr import arith\n"
    # flydsl.expr.arith.maxnumf wraps its result by hand before 0.3.2, with dsl_math_wrap_result from it.
    assert type_of("probe = arith.maxnumf(ArithValue(a), b)\n", release="0.3.1", header=header) == "unknown"
    assert type_of("probe = arith.maxnumf(ArithValue(fx.Float32(a).ir_value()), b)\n", release="0.3.2", header=header) \
        == "ArithValue (signed=None)"


def test_the_release_decides_api_facts():
    assert type_of("probe = fx.lane_id()\n", release="0.3.2") == "fx.Int32"
    found, why = explain("probe = fx.lane_id()\n", release="0.3.1")
    assert found == "unknown" and "no return type known" in why
    # A release before the table's first knows no promotion: unknown, never guessed.
    assert type_of("probe = fx.Int32(a)\n", release="0.2.4") == "fx.Int32"
    found, why = explain("probe = fx.Int32(a) + 1\n", release="0.2.4")
    assert found == "unknown" and "no operator promotion known for 0.2.4" in why
    # No target: the oldest supported release, as fix gating takes it.
    assert type_of("probe = fx.thread_idx.x\n", release=None) == "fx.Int32"


@pytest.mark.parametrize("release, expected", [("0.3.0", "unknown"), ("0.3.1", "ArithValue (index, signed=None)"),
                                               ("0.5.0", "ArithValue (index, signed=None)")])
def test_the_gpu_dialects_ids_are_index_arith_values_where_their_builders_say_so(release, expected):
    # From 0.3.1 the generated builders are annotated `OpResult[IndexType]` (0.3.0's say `OpResult`):
    # the caster makes the index an ArithValue, raw or through flydsl.expr.gpu's wrappers.
    header = HEADER + "from flydsl.expr import gpu\nfrom flydsl._mlir.dialects import gpu as raw_gpu\n"
    assert type_of("probe = gpu.thread_id('x')\n", release, header) == expected
    assert type_of("probe = raw_gpu.block_dim('y')\n", release, header) == expected
    assert type_of("probe = gpu.barrier()\n", release, header) == "unknown"


def test_the_derive_script_reads_the_index_ids_of_the_gpu_dialect():
    derive = derive_types_script()
    generated = ast.parse(textwrap.dedent('''\
        def thread_id(dimension, *, loc=None, ip=None) -> _ods_ir.OpResult[_ods_ir.IndexType]:
          return ThreadIdOp(dimension=dimension, loc=loc, ip=ip).result
        def shuffle(value, offset, width, mode, *, loc=None, ip=None) -> _ods_ir.OpResultList:
          return ShuffleOp(value, offset, width, mode, loc=loc, ip=ip).results
        def block_id(dimension, *, loc=None, ip=None) -> _ods_ir.OpResult:
          return BlockIdOp(dimension=dimension, loc=loc, ip=ip).result
    '''))
    expr_gpu = ast.parse(textwrap.dedent('''\
        from .._mlir.dialects import gpu
        def thread_id(*args, **kwargs):
            return gpu.thread_id(*args, **kwargs)
        def block_id(*args, **kwargs):
            return gpu.block_id(*args, **kwargs)
    '''))
    # block_id's annotation does not say index (0.3.0's builders): not recorded.
    assert derive.gpu_returns(expr_gpu, None, {}, generated) == {
        "flydsl._mlir.dialects.gpu.thread_id()": "raw:index", "flydsl.expr.gpu.thread_id()": "raw:index"}


def test_cycles_and_deep_expressions_are_unknown_not_a_crash():
    assert type_of("def f(v):\n    return f(v)\nprobe = f(1)\n") == "unknown"
    deep = "fx.Int32(a)" + " + 1" * 300  # deeper than the inference bound, shallow enough to parse
    assert type_of(f"probe = {deep}\n") == "unknown"
    chain = "".join(f"v{i} = v{i - 1} + 1\n" for i in range(1, 400))
    assert type_of(f"v0 = fx.Int32(a)\n{chain}probe = v399\n") == "unknown"
    assert type_of(f"v0 = fx.Int32(a)\n{chain}probe = v3\n") == "fx.Int32"


MODULE_HELPER = """
def _lane(v, w=4):
    probe = (v, w)
    return v
@flyc.kernel
def k(n: fx.Int32):
{calls}
"""


def module_helper_types(calls: str, source: str = MODULE_HELPER, project=None, module: str = "") -> list[str]:
    tree = ast.parse(HEADER + source.format(calls=textwrap.indent(textwrap.dedent(calls), "    ")))
    model = SemanticModel(tree, module, False, project, Version.parse("0.5.0"))
    probe = [node for node in ast.walk(tree) if isinstance(node, ast.Name) and node.id == "probe"][-1]
    return [str(model.value_type(element)) for element in model.parent(probe).value.elts]


def test_parameters_of_a_private_module_helper_have_the_type_every_call_passes():
    # `_lane` is private, not in `__all__`, and no other project file names it: its callers are these.
    assert module_helper_types("_lane(n)\n_lane(fx.Int32(fx.thread_idx.x) & 15, w=8)\n") == ["fx.Int32", "Python int"]


def module_helper_reason(calls: str, source: str = MODULE_HELPER, project=None, module: str = "") -> str:
    """Why the first element of the helper's `probe` (its first parameter) has the type it has."""
    tree = ast.parse(HEADER + source.format(calls=textwrap.indent(textwrap.dedent(calls), "    ")))
    model = SemanticModel(tree, module, False, project, Version.parse("0.5.0"))
    probe = [node for node in ast.walk(tree) if isinstance(node, ast.Name) and node.id == "probe"][-1]
    return model.explain_type(model.parent(probe).value.elts[0])[1]


@pytest.mark.parametrize("calls, source, why", [
    # public: another module may call it
    ("lane(n)\n", MODULE_HELPER.replace("_lane", "lane"), "`lane` is public"),
    ("_lane(n)\n", "__all__ = ['_lane']\n" + MODULE_HELPER, "a string of the module names `_lane`"),  # exported
    # named in a string (getattr, globals())
    ("_lane(n)\n", MODULE_HELPER + "HELPERS = ('_lane',)\n", "a string of the module names `_lane`"),
    ("_lane(n)\n", MODULE_HELPER + "run = globals()[name]\n", "the module reads its names dynamically"),
    ("_lane(n)\n", MODULE_HELPER.replace("def _lane", "@functools.cache\ndef _lane"), "`_lane` is decorated"),
    # Two known types: both named, with the calls passing them.
    ("_lane(n)\n_lane(fx.Int64(n))\n", MODULE_HELPER, "the calls of `_lane` pass `v` fx.Int32 at 10:11 and fx.Int64 at 11:11"),
    # A value of unknown type: where it is passed (`--show-types` of that line says why).
    ("_lane(n)\n_lane(q)\n", MODULE_HELPER, "`_lane` is passed `v` of unknown type at 11:11"),
    ("_lane(n)\nf = _lane\n", MODULE_HELPER, "`_lane` is used here other than as a callee"),  # passed as a value
    ("_lane(n)\n", MODULE_HELPER + "def _lane(v):\n    return v\n", "`_lane` is bound more than once"),
])
def test_parameters_of_a_module_helper_stay_unknown_unless_every_caller_is_visible(calls, source, why):
    assert module_helper_types(calls, source)[0] == "unknown"
    # The reason says which caller may be unseen, so a reader knows what to change.
    reason = module_helper_reason(calls, source)
    assert reason.startswith("unknown: ") and reason.endswith(why)
    if not why.startswith(("the calls", "`_lane` is passed")):
        assert reason == f"unknown: parameter `v` has no annotation, and {why}"


def test_a_lambda_parameter_is_unknown_and_says_its_calls_are_not_followed():
    source = "def _lane(v, w=4):\n    return v\n@flyc.kernel\ndef k(n: fx.Int32):\n{calls}\n"
    calls = "scale = lambda x: (probe := (x, 1))\nscale(n)\n"
    assert module_helper_types(calls, source)[0] == "unknown"
    assert module_helper_reason(calls, source) == (
        "unknown: parameter `x` has no annotation, and a lambda's calls are not followed")


def test_a_private_module_helper_another_project_file_names_stays_unknown(tmp_path):
    from flydsl_lint.engine.project import ProjectIndex
    from tests.conftest import write_package

    package = write_package(tmp_path, {"k": "", "other": "import flydsl.expr as fx\n"})
    project = ProjectIndex([tmp_path])
    assert module_helper_types("_lane(n)\n", project=project, module="kernels.k")[0] == "fx.Int32"
    assert "kernels.other" in project.touched  # a dependency of the answer, for the result cache
    # Another module may import it and pass what it likes.
    (package / "other.py").write_text("from kernels.k import _lane\n_lane(1.5)\n")
    assert module_helper_types("_lane(n)\n", project=ProjectIndex([tmp_path]), module="kernels.k")[0] == "unknown"
    assert module_helper_reason("_lane(n)\n", project=ProjectIndex([tmp_path]), module="kernels.k") == (
        "unknown: parameter `v` has no annotation, and kernels/other.py names `_lane`")


@pytest.mark.parametrize("other, reaches", [
    ("def _lane(v):\n    return v\n_lane(1.5)\n", False),  # its own `_lane`: it names no module k
    ("import kernels.k as kk\nkk._lane(1.5)\n", True),
    ("from . import k\nk._lane(1.5)\n", True),
    ("from .k import *\n_lane(1.5)\n", True),  # no star import brings it, but it names both
    ("import kernels.other as ak\nak._lane(1.5)\n", False),  # `k` only inside other words
    ("import kernels.kx as kx\nfrom . import k\nk._lane(1.5)\n", True),  # a whole `k` after some inside words
])
def test_another_file_reaches_a_private_helper_only_by_naming_its_module(tmp_path, other, reaches):
    from flydsl_lint.engine.project import ProjectIndex
    from tests.conftest import write_package

    write_package(tmp_path, {"k": "", "other": other})
    found = module_helper_types("_lane(n)\n", project=ProjectIndex([tmp_path]), module="kernels.k")[0]
    assert found == ("unknown" if reaches else "fx.Int32")


def test_a_private_helper_of_a_package_is_reached_by_any_file_naming_it(tmp_path):
    from flydsl_lint.engine.project import ProjectIndex
    from tests.conftest import write_package

    # `from . import _lane` in a module of package `kernels` names no module: the word is enough.
    write_package(tmp_path, {"other": "from . import _lane\n_lane(1.5)\n"})
    assert module_helper_types("_lane(n)\n", project=ProjectIndex([tmp_path]), module="kernels")[0] == "unknown"


def test_helper_returns_across_project_modules(tmp_path):
    from flydsl_lint.engine.project import ProjectIndex
    from tests.conftest import write_package

    write_package(tmp_path, {
        "helpers": "import flydsl.expr as fx\nfrom kernels.deeper import deep\n"
                   "def lane(v):\n    return fx.Int32(v) % 64\n"
                   "def mixed(v):\n    if v:\n        return fx.Int32(v)\n    return fx.Int64(v)\n"
                   "def via(v):\n    return deep(v)\n"
                   "@decorated\ndef launcher(v):\n    return fx.Int32(v)\n",
        "deeper": "import flydsl.expr as fx\ndef deep(v):\n    return fx.Int64(v)\n",
    })
    source = "from kernels.helpers import lane, mixed, via, launcher\nprobe = (lane(q), mixed(q), via(q), launcher(q))\n"
    tree = ast.parse(source)
    model = SemanticModel(tree, "kernels.k", False, ProjectIndex([tmp_path]), Version.parse("0.5.0"))
    found = [model.explain_type(element) for element in tree.body[1].value.elts]
    assert found[0] == (model.value_type(tree.body[1].value.elts[0]), "return of `lane` in kernels.helpers")
    assert str(found[0][0]) == "fx.Int32"
    # Different returns; a helper of a helper's module (not followed: the chain stays bounded);
    # a decorated def (a launcher, not a value): unknown.
    assert [str(type_) for type_, _ in found[1:]] == ["unknown", "unknown", "unknown"]


def test_the_derive_script_records_only_what_the_sources_show():
    derive = derive_types_script()
    generated = textwrap.dedent('''\
        def addi(lhs, rhs, *, loc=None, ip=None) -> _ods_ir.OpResult:
          return AddIOp(lhs=lhs, rhs=rhs, loc=loc, ip=ip).result
        def select(c, a, b, *, loc=None, ip=None) -> _ods_ir.OpResult:
          return SelectOp(c, a, b, loc=loc, ip=ip).result
        def cast(m, *, loc=None, ip=None) -> _ods_ir.OpResult[_ods_ir.MemRefType]:
          return CastOp(m, loc=loc, ip=ip).result
        def addui_extended(lhs, rhs, *, loc=None, ip=None) -> _ods_ir.OpResultList:
          return AddUIExtendedOp(lhs, rhs, loc=loc, ip=ip).results
    ''')
    utils = textwrap.dedent('''\
        from ..._mlir.dialects import arith
        def shli(lhs, rhs):
            return arith.ShLIOp(lhs, rhs).result
        def index(value):
            return shli(value, value)
        @cached
        def andi(lhs, rhs):
            return arith.AndIOp(lhs, rhs).result
        def _to_raw(v):
            if hasattr(v, "ir_value"):
                return v.ir_value()
            return v
        def unwrap(val, *, type=None, index=False):
            return _to_raw(val)
        @dsl_loc_tracing
        def select(condition, true_value, false_value):
            return arith.SelectOp(_to_raw(condition), _to_raw(true_value), _to_raw(false_value)).result
        def pick(condition, true_value, false_value):
            return arith.SelectOp(condition, true_value, false_value)
    ''')
    expr_arith = textwrap.dedent('''\
        from .._mlir.dialects.arith import *
        from .utils.arith import shli, index, andi, select, pick
        def addi(lhs, rhs):
            return lhs + rhs
    ''')
    sources = {"flydsl/_mlir/dialects/_arith_ops_gen.py": generated, "flydsl/expr/utils/arith.py": utils,
               "flydsl/expr/arith.py": expr_arith}
    raw = derive.caster_results(sources)
    # One result of a scalar/vector op: recorded; any-type, memref and result-list ops: not.
    assert raw == {"flydsl._mlir.dialects.arith.addi": "arith-value", "flydsl._mlir.dialects.arith.AddIOp": "arith-value"}
    # A helper over a table op (or over such a helper) is; a decorated one, or a name
    # flydsl/expr/arith.py rebinds over its star import (its own addi), is not.
    # A select's result has its values' type: an ArithValue when they are scalars or vectors
    # (`pick` returns the op, not its result).
    assert derive.wrapper_results(sources, raw | {"flydsl._mlir.dialects.arith.ShLIOp": "arith-value"}) == {
        "flydsl.expr.arith.shli": "arith-value", "flydsl.expr.arith.index": "arith-value",
        "flydsl.expr.arith.select": "arith-value-of-operands"}
    # _to_raw that does not return an ir.Value first is no identity.
    assert "to-raw" not in derive.arith_value_facts(ast.parse(utils), None)
    # index_cast: the value itself when of the type, else the cast op's result; another body is no fact.
    cast = textwrap.dedent('''\
        def index_cast(target_type, value):
            """Cast."""
            v = _to_raw(value)
            if v.type == target_type:
                return v
            return arith.IndexCastOp(target_type, v).result
    ''')
    assert derive.arith_value_facts(ast.parse(cast), None) == {"index-cast": "to-raw-or-caster"}
    changed = cast.replace("return v\n", "return arith.IndexCastOp(target_type, v).result\n", 1)
    assert "index-cast" not in derive.arith_value_facts(ast.parse(changed), None)


def test_the_derive_script_tells_whether_arith_value_select_is_the_select_function():
    derive = derive_types_script()
    utils = textwrap.dedent('''\
        class ArithValue(ir.Value):
            @dsl_loc_tracing
            def select(self, true_value, false_value):
                """Ternary select."""
                true_value = _select_raw_operand(true_value, false_value)
                false_value = _select_raw_operand(false_value, true_value)
                return arith.SelectOp(_to_raw(self), true_value, false_value).result
        @dsl_loc_tracing
        def select(condition, true_value, false_value):
            """Select."""
            true_value = _select_raw_operand(true_value, false_value)
            false_value = _select_raw_operand(false_value, true_value)
            return arith.SelectOp(_to_raw(condition), true_value, false_value).result
    ''')
    assert derive.arith_value_facts(ast.parse(utils), None)["arith-value-select"] == "select-function"
    # Another statement, another decorator or another parameter: no fact.
    for changed in (utils.replace("_to_raw(self)", "self", 1), utils.replace("    @dsl_loc_tracing\n", "", 1),
                    utils.replace("self, true_value, false_value", "self, true_value, false_value, fastmath=None", 1)):
        assert "arith-value-select" not in derive.arith_value_facts(ast.parse(changed), None)


def test_the_derive_script_reads_scalar_methods_from_numeric():
    derive = derive_types_script()
    numeric = textwrap.dedent('''\
        def _try_coerce_rhs(rhs):
            if isinstance(rhs, Numeric):
                return rhs
            if isinstance(rhs, (int, float, bool)):
                return as_numeric(rhs)
            return None
        class Numeric:
            def select(self, true_value, false_value):
                tv = _try_coerce_rhs(true_value)
                fv = _try_coerce_rhs(false_value)
                if tv is not None and fv is not None:
                    dest = _resolve_numeric_type(type(tv), type(fv))
                    true_value, false_value, exemplar = tv.to(dest), fv.to(dest), dest
                    if cond.is_static():
                        return true_value if bool(cond.value) else false_value
                result = ArithValue(cond).select(true_value, false_value)
                return as_dsl_value(result, exemplar)
            def maximumf(self, other):
                """Float maximum."""
                return type(self)(self.ir_value().maximumf(_to_raw(other)))
            def exp2(self):
                return type(self)(self.ir_value().exp2())
            def shrui(self, amount):
                v = self.ir_value()
                return type(self)(v.shrui(amount))
            @dsl_loc_tracing
            def bitcast(self, dtype):
                if not issubclass(dtype, Numeric):
                    raise TypeError(dtype)
                return dtype(arith.bitcast(dtype.ir_type, self.ir_value()))
            @cached
            def addf(self, other):
                return type(self)(self.ir_value().addf(other))
            def neg(self):
                return type(self)(-self.value)
        class Float(Numeric):
            def exp2(self):
                return Float32(self.ir_value().exp2())
    ''')
    # exp2 is overridden by a class, shrui does more than one thing, addf has another decorator,
    # neg wraps no op on the receiver's ir.Value (it may wrap a Python value).
    assert derive.scalar_methods(ast.parse(numeric)) == {
        "flydsl.expr.numeric.Numeric.select": "common-type", "flydsl.expr.numeric.Numeric.maximumf": "receiver-class",
        "flydsl.expr.numeric.Numeric.bitcast": "argument-class"}
    # A select that does not convert both operands to their common type is not recorded.
    assert "flydsl.expr.numeric.Numeric.select" not in derive.scalar_methods(
        ast.parse(numeric.replace("tv.to(dest), fv.to(dest), dest", "tv, fv, dest")))


def test_the_derive_script_reads_wrapped_math_builders():
    derive = derive_types_script()
    math_module = textwrap.dedent('''\
        from .._mlir.dialects import math
        def dsl_math_wrap_result(fn=None, *, exemplar=None, preserve_numeric_type=False):
            def wrapper(*args, **kwargs):
                if exemplar is None:
                    first = args[0] if args else None
                is_vector = isinstance(first, Vector)
                is_numeric = isinstance(first, Numeric)
                result = fn(*args, **kwargs)
                if not (is_vector or is_numeric):
                    return tuple(result) if not isinstance(result, ir.Value) and hasattr(result, "__iter__") else result
                def dsl_wrap(value):
                    if preserve_numeric_type:
                        return type(first)(value)
                    return Numeric.from_ir_type(value.type)(value)
                return dsl_wrap(result)
            return wrapper
        @dsl_loc_tracing
        @dsl_math_wrap_result
        def exp2(x, *, fastmath=None):
            return math.exp2(as_ir_value(x), fastmath=fastmath)
        @dsl_math_wrap_result(preserve_numeric_type=True)
        def absi(x):
            return math.absi(as_ir_value(x))
        @dsl_math_wrap_result(exemplar="y")
        def atan2(y, x):
            return math.atan2(as_ir_value(y), as_ir_value(x))
        @dsl_math_wrap_result
        def erf(x):
            return math.ErfOp(as_ir_value(x))
    ''')
    raw = {f"flydsl._mlir.dialects.math.{name}": "arith-value" for name in ("exp2", "absi", "atan2", "erf")}
    tree = ast.parse(math_module)
    assert derive.wraps_after_first_operand(tree)
    # Another exemplar, or a builder returning the op rather than its value: left out.
    assert derive.math_results(tree, raw, True) == {
        "flydsl.expr.math.exp2": "arith-value-unless-numeric", "flydsl.expr.math.absi": "numeric-class-or-arith-value"}
    # A wrapper that does not hand back a non-fx operand's result as it is settles nothing.
    assert not derive.wraps_after_first_operand(ast.parse(math_module.replace("else result", "else Float32(result)")))
    assert derive.math_results(tree, raw, False) == {}


def test_a_read_of_a_rebound_name_has_the_type_of_the_one_binding_reaching_it():
    # Straight-line in one block: the nearest assignment before the read is the one it sees.
    found, why = explain("def f(a):\n    x = fx.Int32(a)\n    probe = x\n    x = fx.Int64(a)\n")
    assert (found, why) == ("fx.Int32", "assignment at 5:5")
    assert type_of("def f(a):\n    x = fx.Int32(a)\n    x = fx.Int64(x)\n    probe = x + 1\n") == "fx.Int64"
    assert type_of("def f(a):\n    x = fx.Int16(a)\n    x += 1\n    probe = x\n    x = q\n") == "fx.Int32"
    # The parameter, for a read in the function's own block before any rebinding.
    assert type_of("def f(n: fx.Int64):\n    probe = n\n    n = q\n") == "fx.Int64"
    # In traced code too, with no region between that could carry the name.
    traced = "@flyc.kernel\ndef k(n: fx.Int32):\n    x = ArithValue(n)\n    if n > 0:\n        y = n\n    probe = x\n    x = q\n"
    assert type_of(traced) == "ArithValue (signed=None)"
    # A `for` target, for a read in the loop's own body: bound again before each run of it.
    loops = "def f(a):\n    for i in fx.range_constexpr(4):\n        probe = i * 2\n        i = q\n    for i in range(a):\n        y = i\n"
    assert explain(loops) == ("Python int", "Python arithmetic")
    # A read nested in a compound statement of that block, when nothing in the statement binds the
    # name (no loop in it brings a later binding back round) and, in traced code, no region around
    # the read carries it.
    assert type_of("def f(a, c):\n    x = fx.Int32(a)\n    if c:\n        probe = x\n    x = q\n") == "fx.Int32"
    assert type_of("def f(a, c):\n    x = fx.Int64(a)\n    for i in range(4):\n        while c:\n"
                   "            probe = x\n    x = q\n") == "fx.Int64"
    assert type_of("def f(a, c):\n    for i in fx.range_constexpr(4):\n        if c:\n            probe = i\n"
                   "    i = q\n") == "Python int"
    assert type_of("@flyc.kernel\ndef k(n: fx.Int32):\n    x = ArithValue(n)\n    if n > 0:\n        probe = x\n"
                   "    x = q\n") == "ArithValue (signed=None)"


def test_the_last_iteration_of_a_python_loop_that_always_runs_reaches_past_it():
    # `for s in [32, 16]: x = x.maximumf(...)` leaves x as the body's assignment made it: the loop runs,
    # unrolled by Python, at least once, and nothing in it can skip the assignment.
    loop = "def f(a, c):\n    x = q\n    {loop}:\n        y = c\n        x = fx.Int32(a)\n    probe = x\n"
    for header in ("for s in [32, 16]", "for s in (1,)", "for s in fx.range_constexpr(1, 4)"):
        assert type_of(loop.format(loop=header)) == "fx.Int32", header
    nested = "def f(a):\n    x = q\n    for i in fx.range_constexpr(2):\n        for s in [8, 4]:\n" \
             "            x = fx.Int64(a)\n    probe = x\n"
    assert type_of(nested) == "fx.Int64"
    traced = "@flyc.kernel\ndef k(n: fx.Int32):\n    x = 1\n    for s in [8, 4]:\n        x = n + s\n    probe = x\n"
    assert type_of(traced) == "fx.Int32"
    # No such loop: it may run no time (an empty display, an empty or unknown range, a range the
    # rewriter turns into an scf.for), skip the assignment (`break`, `continue`, a branch around it),
    # or end through its `else`.
    for header in ("for s in []", "for s in fx.range_constexpr(0)", "for s in fx.range_constexpr(c)",
                   "for s in [*c]", "for s in range(4)", "for s in c", "while c"):
        assert type_of(loop.format(loop=header)) == "unknown", header
    for body in ("        if c:\n            continue\n        x = fx.Int32(a)\n",
                 "        x = fx.Int32(a)\n        if c:\n            break\n",
                 "        if c:\n            x = fx.Int32(a)\n"):
        assert type_of("def f(a, c):\n    x = q\n    for s in [1, 2]:\n" + body + "    probe = x\n") == "unknown"
    assert type_of("def f(a, c):\n    x = q\n    for s in [1, 2]:\n        x = fx.Int32(a)\n    else:\n"
                   "        pass\n    probe = x\n") == "unknown"
    # A `break` of a nested loop leaves only that loop.
    assert type_of("def f(a, c):\n    x = q\n    for s in [1, 2]:\n        for t in c:\n            break\n"
                   "        x = fx.Int32(a)\n    probe = x\n") == "fx.Int32"


@pytest.mark.parametrize("body", [
    # A rebinding in a branch or a loop may reach the read.
    "def f(a, c):\n    x = fx.Int32(a)\n    if c:\n        x = q\n    probe = x\n",
    "def f(a):\n    x = fx.Int32(a)\n    for i in range(4):\n        probe = x\n        x = q\n",
    "def f(a):\n    x = fx.Int32(a)\n    while x < 4:\n        x = q\n    probe = x\n",
    "def f(a):\n    x = fx.Int32(a)\n    while probe := x:\n        x = q\n",
    "def f(n: fx.Int64):\n    for i in range(4):\n        probe = n\n        n = q\n",  # the parameter, in a loop
    # A loop target read after the loop, in a nested block, or after a rebinding in the body.
    "def f(a):\n    for i in fx.range_constexpr(4):\n        pass\n    probe = i\n    i = q\n",
    "def f(a, c):\n    for i in fx.range_constexpr(4):\n        if c:\n            i = q\n        probe = i\n",
    "def f(a):\n    x = fx.Int32(a)\n    probe = [x for _ in a]\n    x = q\n",  # another scope reads it
    "def f(a):\n    x = fx.Int32(a)\n    def g():\n        probe = x\n    x = q\n",
    "def f(a):\n    x = fx.Int32(a)\n    y = (x := q) + x\n    probe = x\n",  # a walrus in between
    "def f(a):\n    x, x = fx.Int32(a), q\n    probe = x\n",
    # A compound statement that binds the name as well, around or beside the nested read.
    "def f(a, c):\n    x = fx.Int32(a)\n    for i in range(4):\n        if c:\n            probe = x\n        x = q\n",
    "def f(a, c):\n    x = fx.Int32(a)\n    if c:\n        probe = x\n    else:\n        x = q\n    x = q\n",
    # Traced code: a dynamic region calling a method of the name carries and rebuilds it.
    "@flyc.kernel\ndef k(n: fx.Int32):\n    x = ArithValue(n)\n    if n > 0:\n        x.owner()\n        probe = x\n    x = q\n",
    "@flyc.kernel\ndef k(n: fx.Int32):\n    x = ArithValue(n)\n    if n > 0:\n        x.owner()\n    probe = x\n    x = q\n",
])
def test_a_rebound_name_no_one_binding_provably_reaches_stays_unknown(body):
    assert type_of(body) == "unknown"


def test_a_name_bound_once_that_a_region_carries_is_rebuilt_from_then_on():
    # The rewriter carries a name a traced `if`/`for` calls a method of or stores into, and from the
    # region on the name holds `_promote(x)`'s fx rebuild: a bound ArithValue or number is no longer one.
    kernel = "@flyc.kernel\ndef k(n: fx.Int32, t):\n    x = {value}\n{before}    {region}:\n        {use}\n{after}"
    def probe(value="ArithValue(n)", use="y = x.bitcast(t)", region="if n > 0", before="", after="    probe = x\n"):
        return explain(kernel.format(value=value, use=use, region=region, before=before, after=after))
    found, why = probe()
    assert found == "unknown" and "rewriter carries it" in why and "ArithValue" in why
    assert probe(use="x[0] = n")[0] == probe(use="x.owner.attr = n")[0] == "unknown"  # stores into it
    assert probe(region="for i in range(n)")[0] == "unknown"
    assert probe(after="", use="probe = x.bitcast(t) + x")[0] == "unknown"  # inside the region too
    assert probe(value="3", use="x.bit_length()")[0] == "unknown"
    # A read before the region, an fx scalar, a region that only reads it, plain Python: the type stays.
    assert probe(before="    probe = x\n", after="")[0] == "ArithValue (signed=None)"
    assert probe(value="fx.Int32(n)", use="y = x.to(fx.Int64)")[0] == "fx.Int32"
    assert probe(use="y = x + n")[0] == "ArithValue (signed=None)"
    assert probe(region="for i in fx.range_constexpr(4)")[0] == probe(region="for s in [8, 4]")[0] \
        == "ArithValue (signed=None)"  # Python's own loops: the rewriter carries nothing through them
    assert type_of("def f(n, t):\n    x = ArithValue(n)\n    if n:\n        x.owner()\n    probe = x\n") \
        == "ArithValue (signed=None, of a scalar or vector type)"


def test_the_assigned_value_a_read_provably_sees():
    def seen(body):
        model, tree = model_of(body)
        read = max((n for n in ast.walk(tree) if isinstance(n, ast.Name) and n.id == "x" and isinstance(n.ctx, ast.Load)),
                   key=lambda n: (n.lineno, n.col_offset))  # the last read
        value = model.reaching_assigned_value(read)
        return None if value is None else ast.unparse(value)
    assert seen("def f(a):\n    x = a + 1\n    y = x\n") == "a + 1"  # its one binding
    assert seen("def f(a):\n    x = a + 1\n    x = x * 2\n    y = x\n") == "x * 2"  # the reaching one
    assert seen("def f(a, c):\n    x = a\n    if c:\n        x = 2\n    y = x\n") is None  # none provably
    assert seen("def f(a):\n    x = a\n    x += 1\n    y = x\n") is None  # no plain assignment


def test_a_helper_call_has_the_return_type_its_arguments_give():
    # Called with two types, the helper returns no one type; each call returns its own.
    helper = "def half(v, d=2):\n    return v // fx.Int32(d)\n"
    assert type_of(helper + "probe = (half(fx.Int32(a)), half(fx.Int64(a)))\n") == "unknown"  # a tuple: no rule
    assert type_of(helper + "x = half(fx.Int64(a))\nprobe = half(fx.Int32(a))\n") == "fx.Int32"
    found, why = explain(helper + "x = half(fx.Int32(a))\nprobe = half(fx.Int64(a), d=4)\n")
    assert (found, why) == ("fx.Int64", "return of `half` at 4:1, for the argument types of the call")
    # The parameter rebound in the helper, and a helper of the helper, follow the arguments too.
    chained = "def lo(v):\n    v = v & 15\n    return v\ndef f(v):\n    return lo(v) + 1\n"
    assert type_of(chained + "x = f(fx.Int16(a))\nprobe = f(fx.Int64(a))\n") == "fx.Int64"


@pytest.mark.parametrize("call", [
    "half(q)",  # no argument of a known type
    "half(fx.Int32(a), 2, 3)",  # too many arguments: a TypeError
    "half(fx.Int32(a), e=2)",  # no such parameter
    "half(*args)",
    "half(fx.Int32(a), **kw)",
    "again(fx.Int32(a), 3)",  # recursive
    "annotated(fx.Int64(a), fx.Int32(b))",  # the annotation says otherwise
    "decorated(fx.Int32(a))",
    "float_half(fx.Float32(a))",  # the returns still do not agree
])
def test_a_helper_call_stays_unknown_unless_its_arguments_settle_the_returns(call):
    helpers = ("def half(v, d=2):\n    return v // fx.Int32(d)\n"
               "def again(v, n):\n    if n:\n        return again(v, n - 1)\n    return v\n"
               "def annotated(v: fx.Int32, w):\n    return v + w\n"
               "@cached\ndef decorated(v):\n    return v + 1\n"
               "def float_half(v):\n    if v:\n        return v\n    return fx.Int32(v)\n")
    calls = "x = half(fx.Int64(a))\nx = again(fx.Int64(a), 2)\nx = decorated(fx.Int64(a))\n"
    assert type_of(helpers + calls + f"probe = {call}\n") == "unknown"


def test_a_helper_call_across_project_modules_has_the_return_type_its_arguments_give(tmp_path):
    from flydsl_lint.engine.project import ProjectIndex
    from tests.conftest import write_package

    write_package(tmp_path, {"helpers": "import flydsl.expr as fx\n"
                                        "def udiv(value, divisor: int):\n    if divisor == 1:\n"
                                        "        return shift(value, divisor)\n    return value // fx.Int32(divisor)\n"
                                        "def shift(value, divisor):\n    return value >> fx.Int32(divisor)\n"})
    source = "import flydsl.expr as fx\nfrom kernels.helpers import udiv\nprobe = (udiv(fx.Int32(q), 4), udiv(q, 4))\n"
    tree = ast.parse(source)
    model = SemanticModel(tree, "kernels.k", False, ProjectIndex([tmp_path]), Version.parse("0.5.0"))
    found = [model.explain_type(element) for element in tree.body[-1].value.elts]
    assert found[0] == (model.type_table.scalar("Int32"),
                        "return of `udiv` at 2:1, for the argument types of the call in kernels.helpers")
    assert str(found[1][0]) == "unknown"


def test_a_helper_calling_itself_with_other_arguments_is_not_typed_for_the_outer_ones():
    # Inside `f(fx.Int32(a), 1)` the inner call passes an Int64: its return is not the outer call's.
    body = "def f(v, n):\n    if n:\n        y = f(fx.Int64(v), 0)\n        return y\n    return v\nprobe = f(fx.Int32(a), 1)\n"
    assert type_of(body) == "unknown"


@pytest.mark.parametrize("expr, expected", [
    ("ArithValue(s) + 1", "ArithValue (signed=None)"),
    ("ArithValue(s) * ArithValue(s)", "ArithValue (signed=None)"),
    ("ArithValue(a) + fx.Int32(b)", "ArithValue (signed=None)"),  # `_coerce_other` takes `b.ir_value()`: a scalar
    ("ArithValue(a).bitcast(T.i32) >> 23", "ArithValue (signed=None)"),  # a scalar type given
    ("ArithValue(s) < 3.0", "ArithValue (signed=None)"),
    ("254 - ArithValue(s)", "ArithValue (signed=None)"),  # int.__sub__ gives NotImplemented: `__rsub__`
    # Of a vector type ArithValue's op gives an fx.Vector: of no shape shown, either.
    ("ArithValue(a) + 1", "ArithValue or fx.Vector"), ("ArithValue(a) * ArithValue(b)", "ArithValue or fx.Vector"), ("254 - ArithValue(a)", "ArithValue or fx.Vector"),
    ("2 < ArithValue(a)", "unknown"),  # the reflected comparison is not followed
    ("fx.Int32(b) + ArithValue(a)", "unknown"),  # the fx scalar's own operator
    ("ArithValue(a) + a", "unknown"),
    ("ArithValue(a) is None", "unknown"),
])
def test_arith_value_operators(expr, expected):
    assert type_of(f"from flydsl.expr.typing import T\ns = fx.Float32(x).ir_value()\nprobe = {expr}\n") == expected


def test_arith_value_operators_need_the_release_fact():
    # Below the first release the table covers, no operator fact: unknown stays unknown.
    assert type_of("probe = ArithValue(a) + 1\n", release="0.2.0") == "unknown"


def test_the_derive_script_reads_arith_value_operators():
    derive = derive_types_script()
    utils = textwrap.dedent('''\
        from ..._mlir.dialects import arith, math
        def arith_const(value, ty=None):
            return arith.constant(ty, value)
        @dsl_loc_tracing
        def _coerce_other(self, other):
            if isinstance(other, (int, float, bool)):
                return arith_const(other, self.type).with_signedness(self.signed)
            return other
        _OPS = {"add": (arith.addf, arith.addi)}
        _MIXED = {"and": (arith.andi, helper)}
        @dsl_loc_tracing
        def _binary_op(self, other, op):
            other = _coerce_other(self, other)
            if other is NotImplemented:
                return NotImplemented
            float_fn, int_fn = _OPS[op]
            if self.is_float:
                return float_fn(self, other)
            return math.floor(int_fn(self, other))
        def _rbinary_op(self, other, op):
            return _binary_op(other, self, op)
        def _bitwise_op(self, other, op):
            fn = _MIXED[op]
            return fn(self, other)
        def _abs_op(self):
            if not self.signed:
                return self
            return math.absi(self)
        @cached
        def _neg_op(self):
            return arith.negf(self)
        class ArithValue(ir.Value):
            __add__ = partialmethod(_binary_op, op="add")
            __radd__ = partialmethod(_rbinary_op, op="add")
            __and__ = partialmethod(_bitwise_op, op="and")
            __abs__ = _abs_op
            __neg__ = _neg_op
    ''')
    raw = {f"flydsl._mlir.dialects.{name}": "arith-value"
           for name in ("arith.addf", "arith.addi", "arith.andi", "arith.negf", "arith.constant", "math.floor", "math.absi")}
    found = derive.arith_value_operators({"flydsl/expr/utils/arith.py": utils}, raw)
    # A builder table with a non-builder value (`_MIXED`), another decorator (`_neg_op`): not recorded.
    assert found == {"flydsl.expr.arith.ArithValue.__add__": "arith-value",
                     "flydsl.expr.arith.ArithValue.__radd__": "arith-value",
                     "flydsl.expr.arith.ArithValue.__abs__": "self-or-arith-value",
                     "literal-operand": "own-type-constant"}
    # A literal coerced to a constant of its own type, not the ArithValue's: no literal fact.
    changed = utils.replace("arith_const(other, self.type)", "arith_const(other)")
    assert "literal-operand" not in derive.arith_value_operators({"flydsl/expr/utils/arith.py": changed}, raw)


def test_a_builtin_number_annotation_is_trusted_outside_kernels_and_jit_functions():
    # Host code and the helpers kernels call run as plain Python: `int` is what a type checker reads.
    assert explain("def build(n: int, s: float, q: bool):\n    probe = (n * 2, s, q)[0]\n")[0] == "unknown"  # a tuple
    assert type_of("def build(n: int):\n    probe = n * 2\n") == "Python int"
    assert type_of("def build(s: float):\n    probe = s\n") == "Python float"
    assert type_of("def build(n: int):\n    def helper():\n        probe = n\n") == "Python int"
    # FlyDSL makes the parameters of a kernel or jit function values of its own.
    assert type_of("@flyc.kernel\ndef k(n: int):\n    probe = n\n") == "unknown"
    assert type_of("@flyc.jit\ndef j(n: int):\n    probe = n\n") == "unknown"
    # A module that rebinds the name: not the builtin.
    assert type_of("int = fx.Int32\ndef build(n: int):\n    probe = n\n") != "Python int"


def test_the_cause_of_an_unknown_type_is_the_end_of_its_chain():
    def cause(body):
        model, tree = model_of(body)
        probe = [n for n in ast.walk(tree) if isinstance(n, ast.Name) and n.id == "probe"][-1]
        return model.unknown_cause(model.parent(probe).value)
    # `(v + 1) < 4` -> left operand -> left operand -> the parameter: what the user can wrap.
    assert cause("def f(v):\n    probe = (v + 1) < 4\n") == "parameter `v` has no annotation, and `f` is public"
    assert cause("def f(a):\n    probe = helper(a) * fx.Int32(2)\n") == "no return type known for `helper` (not resolved)"
    assert cause("def f(v: fx.Int32):\n    probe = (v + 1) < 4\n") is None  # known: no cause


TYPED_BUILDERS = '''\
def _normalize_typed_operand(value, operation):
    if isinstance(value, (Numeric, Vector)):
        return value
    if isinstance(value, ir.Value):
        return Numeric.from_ir_type(value.type)(value)
    if isinstance(value, (bool, int, float)):
        return as_numeric(value)
    raise TypeError(operation)
def _validated_operand_dtype(dtype, operation, *, bool_widen, integer_only):
    if dtype is Index:
        raise TypeError(operation)
    if dtype is Boolean:
        if not bool_widen:
            raise TypeError(operation)
        return Int32
    if integer_only and not dtype.is_integer:
        raise TypeError(operation)
    if dtype.is_float and dtype not in (Float16, BFloat16, Float32, Float64):
        raise TypeError(operation)
    return dtype
def _resolve_typed_operands(values, operation, *, bool_widen=False, integer_only=False):
    normalized = [_normalize_typed_operand(value, operation) for value in values]
    dtypes = []
    for value in normalized:
        dtype = type(value)
        dtypes.append(_validated_operand_dtype(dtype, operation, bool_widen=bool_widen, integer_only=integer_only))
    common_dtype = dtypes[0]
    for dtype in dtypes[1:]:
        common_dtype = _resolve_numeric_type(common_dtype, dtype)
    return prepared, common_dtype, result_shape, all_static
def _wrap_typed_result(result, dtype, shape):
    if shape is None:
        return dtype(result)
    return Vector(result, shape, dtype)
def _extreme(is_max, operands):
    prepared, dtype, shape, all_static = _resolve_typed_operands(operands, "max", bool_widen=True)
    if len(prepared) == 1:
        return prepared[0]
    if all_static:
        return dtype(prepared[0].value)
    return _wrap_typed_result(maxsi(prepared), dtype, shape)
@dsl_loc_tracing
def max(*operands):
    return _extreme(True, operands)
def ceildiv(lhs, rhs):
    prepared, dtype, shape, all_static = _resolve_typed_operands((lhs, rhs), "ceildiv", integer_only=True)
    return _wrap_typed_result(ceildivsi(*prepared), dtype, shape)
def floordiv(lhs, rhs):
    prepared, dtype, shape, all_static = _resolve_typed_operands((lhs, rhs), "floordiv", integer_only=True)
    return prepared
'''


def test_the_derive_script_reads_the_typed_builders_and_their_reexports():
    derive = derive_types_script()
    found = derive.typed_operand_results(ast.parse(TYPED_BUILDERS))
    # `floordiv` returns the operands, not their common class: no fact.
    assert found == {"flydsl.expr.arith.max": "promoted-operands", "flydsl.expr.arith.ceildiv": "promoted-integer-operands"}
    # A step that reads otherwise (Boolean operands taken as they are) is no fact for any of them.
    changed = TYPED_BUILDERS.replace("        return Int32\n", "        return Boolean\n")
    assert derive.typed_operand_results(ast.parse(changed)) == {}
    # Re-exports: `flydsl.expr` binds arith's `max`, and its own `ceildiv` shadows arith's.
    from derive_flydsl_api import Release

    release = Release({"flydsl/__init__.py": "", "flydsl/expr/__init__.py": "from .arith import *\nfrom .own import *\n",
                       "flydsl/expr/arith.py": TYPED_BUILDERS, "flydsl/expr/own.py": "def ceildiv(a, b):\n    return a\n"})
    assert derive.reexported_results(found, release) == {"flydsl.expr.max": "promoted-operands"}


@pytest.mark.parametrize("expression, release, expected", [
    ("fx.max(n, 3)", "0.5.0", "fx.Int32"),
    ("fx.arith.max(n, 3)", "0.5.0", "fx.Int32"),
    ("fx.max(n, 1 << 40)", "0.5.0", "fx.Int64"),  # the int is an Int64
    ("fx.max(n, w)", "0.5.0", "fx.Int64"),
    ("fx.max(flag, n)", "0.5.0", "fx.Int32"),  # a Boolean counts as an Int32
    ("fx.max(h, f)", "0.5.0", "fx.Float32"),
    ("fx.max(n)", "0.5.0", "fx.Int32"),
    ("fx.ceildiv(n, 64)", "0.5.0", "fx.Int32"),
    ("fx.ceildiv(u, 4)", "0.3.2", "fx.Uint32"),
    ("fx.ceildiv(n, 64)", "0.3.1", "unknown"),  # no typed builder before 0.3.2
    ("fx.ceildiv(f, 2)", "0.5.0", "unknown"),  # integers only: a TypeError at trace time
    ("fx.ceildiv(flag, 2)", "0.5.0", "unknown"),
    ("fx.max(i, n)", "0.5.0", "unknown"),  # an Index is refused
    ("fx.max(n, unknown_int)", "0.5.0", "unknown"),  # an int of unknown value: Int32 or Int64
    ("fx.max(n, raw)", "0.5.0", "unknown"),
    ("fx.max([n, n])", "0.5.0", "unknown"),
])
def test_the_typed_builders_give_their_operands_common_class(expression, release, expected):
    body = ("def f(n: fx.Int32, w: fx.Int64, u: fx.Uint32, flag: fx.Boolean, h: fx.Float16, f: fx.Float32,"
            " i: fx.Index, unknown_int: int, raw):\n"
            f"    probe = {expression}\n")
    assert type_of(body, release) == expected


def test_a_helper_typed_for_one_call_knows_the_python_ints_it_is_passed():
    # `cdiv(n, 64)` takes the typed branch, whose `fx.ceildiv(n, 64)` is an Int32 only because 64 fits
    # in 32 bits; with an int of unknown value it may be an Int64.
    helper = ("def cdiv(a, b):\n    if isinstance(a, fx.Numeric) or isinstance(b, fx.Numeric):\n"
              "        return fx.ceildiv(a, b)\n    return -(-a // b)\n"
              "def twice(a, b):\n    return a * (b * 2)\n")
    body = "def f(n: fx.Int32, k: int):\n    probe = {}\n"
    assert type_of(helper + body.format("cdiv(n, 64)")) == "fx.Int32"
    assert type_of(helper + body.format("cdiv(n, 1 << 40)")) == "fx.Int64"
    assert type_of(helper + body.format("cdiv(n, k)")) == "unknown"
    assert type_of(helper + body.format("cdiv(64, 4)")) == "Python int"
    # The bounds go through the helper's arithmetic: (1 << 30) * 2 no longer fits in 32 bits.
    assert type_of(helper + body.format("twice(n, 1 << 29)")) == "fx.Int32"
    assert type_of(helper + body.format("twice(n, 1 << 30)")) == "fx.Int64"


@pytest.mark.parametrize("spelling", [
    "T.i32", "T.index", "ir.IntegerType.get_signless(32)", "ir.F32Type.get()", "i32", "index", "twice",
])
def test_a_spelled_scalar_type_shows_a_caster_made_value_is_no_vector(spelling):
    # The value caster makes a raw value of a scalar type an ArithValue, of a vector type an fx.Vector:
    # a constant of a type spelled as a scalar one (through names bound once, unpacked too) is the former.
    header = HEADER + ("from flydsl._mlir import ir\nfrom flydsl.expr import arith\nfrom flydsl.expr.typing import T\n"
                       "i32, index = T.i32, T.index\ntwice = i32\n")
    assert type_of(f"probe = arith.constant(3, type={spelling})\n", header=header) == "ArithValue (signed=None)"
    assert type_of("probe = arith.constant(3, type=T.f32x4)\n", header=header) == "unknown"  # the caster's fx.Vector
    assert type_of("probe = arith.constant(3, type=spelled_elsewhere)\n", header=header) == "ArithValue or fx.Vector"


def test_the_derive_script_reads_the_index_type_t_spells():
    derive = derive_types_script()
    types = ast.parse("class Types:\n    @property\n    def index(self) -> ir.Type:\n        return ir.IndexType.get()\n"
                      "    @property\n    def other(self) -> ir.Type:\n        return ir.IndexType.get(ctx)\n")
    assert derive.vector_facts(types) == {"flydsl.expr.typing.T.index": "index-type"}


def test_a_helper_re_exported_by_another_project_module_is_typed_where_it_is_defined(tmp_path):
    from tests.conftest import project_model

    model, tree = project_model(tmp_path, {
        "impl": "import flydsl.expr as fx\ndef lane(v):\n    return fx.Int32(v) % 64\n"
                "def cdiv(numer: int, denom: int) -> int:\n    return (numer + denom - 1) // denom\n",
        "common": "from kernels.impl import lane, cdiv as ceildiv\n",
    }, "import flydsl.expr as fx\nfrom kernels.common import lane, ceildiv\n"
       "probe = (lane(q), ceildiv(7, 2), ceildiv(n, 2), ceildiv(fx.Int32(q), 2))\n")
    found = [model.explain_type(element) for element in tree.body[-1].value.elts]
    assert found[0] == (model.type_table.scalar("Int32"), "return of `lane` in kernels.impl")
    # The annotations are taken at their word where the call does not contradict them; an
    # fx.Int32 passed as `numer: int` makes the return an fx value, not the annotated int.
    assert [str(type_) for type_, _ in found[1:]] == ["Python int", "Python int", "unknown"]


def test_a_number_imported_from_a_project_module_has_its_module_s_type(tmp_path):
    from tests.conftest import project_model

    model, tree = project_model(tmp_path, {
        "consts": "import flydsl.expr as fx\nBLOCKS = 80\nSCALE = 1.0 / BLOCKS\nPACKED = True\n"
                  "TWICE = 1\nTWICE = 2\nLANE = fx.Int32(4)\nSHAPE = (4, 4)\n",
        "common": "from kernels.consts import BLOCKS as MAX_BLOCKS\n",
    }, "from kernels.consts import SCALE, PACKED, TWICE, LANE, SHAPE, MISSING\n"
       "from kernels.common import MAX_BLOCKS\n"
       "probe = (MAX_BLOCKS * 8, SCALE, PACKED, TWICE, LANE, SHAPE, MISSING)\n")
    found = [str(model.value_type(element)) for element in tree.body[-1].value.elts]
    # Bound twice, a value of the kernel's run, a tuple and a name the module lacks stay unknown.
    assert found == ["Python int", "Python float", "Python bool", "unknown", "unknown", "unknown", "unknown"]


@pytest.mark.parametrize("call, expected", [
    ("half(8)", "Python int"),
    ("half(n)", "Python int"),  # nothing contradicts the annotation
    ("half(fx.Int32(a))", "unknown"),  # Python does not enforce `v: int`: an fx value comes back
    ("half(v=fx.Int64(a))", "unknown"),
])
def test_a_helper_s_annotations_hold_only_where_the_call_keeps_them(call, expected):
    assert type_of(f"def half(v: int):\n    return v // 2\nprobe = {call}\n") == expected


@pytest.mark.parametrize("call, expected", [
    ("widen(fx.Int32(a))", "fx.Int32"),
    ("widen(fx.Int32(a), 5, mode=1)", "fx.Int32"),  # `*rest` and `**options` collect the others
    ("widen(fx.Int64(a))", "unknown"),  # `v: fx.Int32` contradicted
    ("widen(fx.Int32(a), v=fx.Int32(b))", "unknown"),  # `v` given twice: the call raises a TypeError
    ("widen(*values)", "unknown"),  # which parameter takes what is not known
])
def test_annotations_are_checked_against_the_parameters_a_call_reaches(call, expected):
    assert type_of(f"def widen(v: fx.Int32, *rest, **options):\n    return v + 1\nprobe = {call}\n") == expected
