"""The model's run-time values (engine/model/run_time.py): which expressions are provably the
kernel run's, and which are visibly raw ir.Values."""

import ast
import textwrap

import pytest

from flydsl_lint.engine.model import SemanticModel
from flydsl_lint.engine.versions import Version

KERNEL = """\
import flydsl.compiler as flyc
import flydsl.expr as fx
from flydsl._mlir.dialects import arith as raw_arith

def _pick(xs, i):
    return xs[i]

@flyc.kernel
def k(a: fx.Float32, n: fx.Int32, c: fx.Constexpr[int]):
    tid = fx.thread_idx.x
    lanes = [fx.Float32(tid), -a]
    consts = [fx.Float32(1.0), fx.Float32(2.0)]
    raw = raw_arith.AddIOp(n.ir_value(), n.ir_value()).result
    probe = {expr}
    _pick([a], 0)
"""


def probed(expr: str) -> tuple[SemanticModel, ast.expr]:
    tree = ast.parse(KERNEL.format(expr=expr))
    model = SemanticModel(tree, target_version=Version.parse("0.5.0"))
    probe = next(node for node in ast.walk(tree) if isinstance(node, ast.Name) and node.id == "probe")
    return model, model.parent(probe).value


@pytest.mark.parametrize("expr, dynamic", [
    ("a", True), ("n + 1", True), ("tid < n", True), ("fx.Int32(tid)", True),  # params, ids, arithmetic, wraps
    ("-a", True), ("~n", True),  # a negation of a run-time value
    ("lanes[1]", True), ("lanes[0] * 2.0", True),  # every element of the list is a run-time value
    ("consts[0]", False), ("c", False), ("c + 1", False), ("fx.Float32(1.0)", False), ("-fx.Float32(1.0)", False),
    ("not n", False),  # `not` calls bool(): no value of the run
    ("raw", True),  # a raw op's result
    ("fx.Vector.filled(4, 1.0, fx.Float32)[2]", True),  # `Vector.__getitem__` extracts from an ir.Value
    ("fx.Vector.filled(4, 1.0, fx.Float32)[2:]", False),  # a slice is not one element
])
def test_provably_dynamic(expr, dynamic):
    model, node = probed(expr)
    assert model.provably_dynamic(node) is dynamic


def test_an_element_of_a_helpers_list_parameter_is_what_its_calls_pass():
    model, _ = probed("a")
    helper = next(node for node in model.nodes_by_type[ast.FunctionDef] if node.name == "_pick")
    element = helper.body[0].value
    assert model.provably_dynamic(element)


@pytest.mark.parametrize("expr, raw", [
    ("raw", True), ("raw_arith.AddIOp(n.ir_value(), n.ir_value())", True), ("n.ir_value()", False), ("a", False),
])
def test_visibly_raw(expr, raw):
    model, node = probed(expr)
    assert model.visibly_raw(node) is raw
    assert model.raw_dialect_call(node) is (expr.startswith("raw_arith."))


def test_a_project_helper_s_raw_op_result_is_a_run_time_value(tmp_path):
    from tests.conftest import project_model

    model, tree = project_model(tmp_path, {
        "mem": "from flydsl._mlir.dialects import llvm\ndef bump(p, v):\n    return llvm.AtomicRMWOp(1, p, v, 2).result\n"
               "def width(v):\n    return len(v)\n",
        "common": "from kernels.mem import bump, width\n",
    }, "import flydsl.expr as fx\nfrom kernels.common import bump, width\nprobe = (fx.Index(bump(p, v)), fx.Index(width(v)))\n")
    # An ir.Value is an SSA value of the traced function, whatever helper made it; a Python int is not.
    assert [model.provably_dynamic(element) for element in tree.body[-1].value.elts] == [True, False]
