"""fx.Vector values in the value-type layer (engine/model/types.py): each source of a vector
type or of a scalar reached through one, and its "unknown stays unknown" twin."""

import ast
import textwrap

import pytest

from flydsl_lint.engine.model import SemanticModel
from flydsl_lint.engine.versions import Version
from tests.conftest import derive_types_script

HEADER = ("import flydsl.compiler as flyc\nimport flydsl.expr as fx\nfrom flydsl._mlir import ir\n"
          "from flydsl._mlir.dialects import vector\nfrom flydsl.expr import arith\nfrom flydsl.expr.typing import T\n")


def type_of(body: str, release: str = "0.5.0") -> str:
    """The type of the last `probe = <expr>`'s expression, as `str(ValueType)`."""
    tree = ast.parse(HEADER + textwrap.dedent(body))
    model = SemanticModel(tree, target_version=Version.parse(release))
    probe = [node for node in ast.walk(tree) if isinstance(node, ast.Name) and node.id == "probe"][-1]
    return str(model.value_type(model.parent(probe).value))


@pytest.mark.parametrize("expr, expected", [
    ("fx.Vector.filled(4, 0x7FFFFFFF, fx.Int32)", "fx.Vector of fx.Int32"),
    ("fx.Vector.filled(4, 0, dtype=fx.Float16)", "fx.Vector of fx.Float16"),
    ("fx.Vector(v).to(fx.Float32)", "fx.Vector of fx.Float32"),  # whatever v's element class
    ("fx.Vector(v).bitcast(fx.Int32)", "fx.Vector of fx.Int32"),
    ("fx.Vector.filled(4, 0, fx.Int32).to(fx.Float16)", "fx.Vector of fx.Float16"),
    ("fx.Vector.filled(4, 0, fx.Int32).ir_value()", "fx.Vector of fx.Int32"),  # returns self
    ("arith.unwrap(fx.Vector.filled(4, 0, fx.Int32))", "fx.Vector of fx.Int32"),  # `_to_raw`: an ir.Value unchanged
    ("fx.Vector.filled(4, 0, fx.Float32).reduce('max')", "fx.Float32"),
    ("fx.Vector.filled(4, 0, fx.Float32)[1]", "fx.Float32"),
    ("fx.Vector.filled(4, 0, fx.Int32) & fx.Vector.filled(4, 1, fx.Int32)", "fx.Vector of fx.Int32"),
    ("fx.Vector.filled(4, 0, fx.Float32) * fx.Vector.filled(4, 1, fx.Float32)", "fx.Vector of fx.Float32"),
    ("fx.Vector.from_elements([a, b], fx.Float32)", "fx.Vector of fx.Float32"),
    ("fx.Vector.from_elements(parts, dtype=fx.Int64)", "fx.Vector of fx.Int64"),  # each element coerced
    ("fx.Vector.from_elements([a, b], fx.Float32).reduce('max')", "fx.Float32"),
    ("fx.Vector(fx.Vector.filled(4, 0, fx.BFloat16))", "fx.Vector of fx.BFloat16"),  # its element class again
    ("fx.Vector(fx.Vector(v).bitcast(fx.Int32))", "fx.Vector of fx.Int32"),
    ("fx.Vector(vector.from_elements(T.f32x2, [a, b]))", "fx.Vector of fx.Float32"),  # a raw vector's T spelling
    ("fx.make_rmem_tensor(1, fx.Float32)", "tensor of fx.Float32"),
    ("fx.memref_load_vec(fx.make_rmem_tensor(fx.make_layout(4, 1), fx.Int32))", "fx.Vector of fx.Int32"),
    ("fx.memref_load_vec(fx.make_rmem_tensor(1, fx.BFloat16))[0]", "fx.BFloat16"),
    ("fx.ptr_load(p, result_type=fx.Vector.make_type(4, fx.Float32))", "fx.Vector of fx.Float32"),
    ("fx.ptr_load(p, T.vec(2, T.bf16))[1]", "fx.BFloat16"),
    ("fx.recast_iter(fx.Float32, p)", "pointer to fx.Float32"),
    ("fx.make_view(fx.recast_iter(fx.BFloat16, p), fx.make_layout(8, 1)).load()", "fx.Vector of fx.BFloat16"),
    ("fx.make_view(fx.recast_iter(fx.Float32, p), layout).load()[0]", "fx.Float32"),
])
def test_vector_sources(expr, expected):
    assert type_of(f"probe = {expr}\n") == expected


@pytest.mark.parametrize("expr", [
    "fx.Vector(v)",  # the element class is the value's: not known
    "fx.Vector(v).reduce('max')",
    "fx.Vector(v)[0]",
    "fx.Vector.filled(4, 0, dtype)",  # no fx scalar class
    "fx.Vector.filled(4, 0)",
    "fx.Vector(v).to(T.f32)",
    "fx.Vector(v).to(ir.Value)",  # `.to(ir.Value)` returns the vector itself
    "fx.Vector(v).bitcast(fx.Int32, x)",
    "fx.Vector.filled(4, 0, fx.Float32)[i]",  # an index of no known type
    "fx.Vector.filled(4, 0, fx.Float32)[0:2]",
    "fx.Vector.filled(4, 0, fx.Float32).shuffle(w, [0, 1])",  # not followed
    "fx.Vector.filled(4, 0, fx.Int32) & fx.Vector.filled(4, 1, fx.Int64)",  # two element classes
    "fx.Vector.filled(4, 0, fx.Int32) & 1",  # a vector and a literal
    "fx.Int32(a) + fx.Vector.filled(4, 1, fx.Int32)",
    "fx.Vector.filled(4, 0, fx.Float32) & fx.Vector.filled(4, 1, fx.Float32)",  # a TypeError at trace time
    "fx.Vector.filled(4, 0, fx.Int32) / fx.Vector.filled(4, 1, fx.Int32)",  # not followed
    "fx.Vector.filled(4, 0, fx.Int32) < fx.Vector.filled(4, 1, fx.Int32)",
    "v.reduce('max')", "v.to(fx.Float32)", "v[0]",
    "fx.Vector.from_elements([a, b])",  # the first element's class
    "fx.Vector.from_elements([a, b], dtype)",
    "fx.Vector(fx.Vector.filled(4, 0, fx.Uint32))",  # its signless elements come back as Int32
    "fx.Vector(fx.Vector.filled(4, 0, fx.Int32), dtype=fx.Uint32)",
    "fx.Vector(fx.Vector.filled(4, 0, fx.Float32), (2, 2))",
    "fx.make_rmem_tensor(1, fx.Uint32)",  # its dtype is the class of a signless i32: Int32
    "fx.memref_load_vec(fx.make_rmem_tensor(1, fx.Uint32))",
    "fx.make_rmem_tensor(1, dtype)",
    "fx.memref_load_vec(t)",  # a tensor of no known dtype
    "fx.memref_load_vec(fx.make_rmem_tensor(1, fx.Float32), 0)",
    "fx.make_view(fx.recast_iter(fx.Uint32, p), layout).load()",  # a tensor of i32: Int32 lanes
    "fx.make_view(p, layout).load()",  # a pointer of no known element type
    "fx.make_view(fx.recast_iter(fx.Float32, p), layout).load(1)",
    "fx.ptr_load(p)",  # the pointer's element type
    "fx.ptr_load(p, result_type=fx.Float32)",  # a scalar: 0.3.x wraps it by its MLIR type, not the class
    "fx.ptr_load(p, result_type=fx.Vector.make_type(4, fx.Uint32))",  # signless i32 lanes: an Int32 vector
    "fx.ptr_load(p, result_type=fx.Vector.make_type(n, fx.Float32))",
])
def test_unknown_stays_unknown(expr):
    assert type_of(f"probe = {expr}\n") == "unknown"


def test_a_chain_through_names_bound_once():
    body = """
    @flyc.jit
    def k(q_src):
        abs_mask = fx.Vector.filled(4, 0x7FFFFFFF, fx.Int32)
        q_f32 = fx.Vector(q_src).to(fx.Float32)
        q_abs = (q_f32.bitcast(fx.Int32) & abs_mask).bitcast(fx.Float32)
        probe = q_abs.reduce("max")
    """
    assert type_of(body) == "fx.Float32"


def test_a_vector_rebound_in_traced_code_stays_unknown():
    body = """
    @flyc.jit
    def k(q_src, chunks):
        v = fx.Vector(q_src).to(fx.Float32)
        for v in chunks:
            pass
        probe = v.reduce("max")
    """
    assert type_of(body) == "unknown"


def test_no_vector_facts_no_vector_types():
    # 0.2.4 has no fx.Vector facts in the table: every source stays unknown.
    for expr in ("fx.Vector.filled(4, 0, fx.Int32)", "fx.Vector(v).to(fx.Float32)", "fx.Vector(v).bitcast(fx.Int32)"):
        assert type_of(f"probe = {expr}\n", release="0.2.4") == "unknown"


_VECTOR_SOURCE = '''\
class Vector(ArithValue):
    def __init__(self, value, shape=None, dtype=None):
        if not isinstance(value, ir.Value) and hasattr(value, "ir_value"):
            value = value.ir_value()
        vty = ir.VectorType(value.type)
        if dtype is None:
            dtype = Numeric.from_ir_type(vty.element_type)
    @classmethod
    def from_elements(cls, elements, dtype=None):
        raw_elements = [_to_raw(cls._coerce_element(element, dtype)) for element in elements]
        res = vector.from_elements(vec_ty, raw_elements)
        return cls(res, (len(elements),), dtype)
    def to(self, dtype, *, rounding_mode=None):
        if dtype is ir.Value:
            return self
        src_dtype = self._dtype
        if src_dtype is dtype:
            return self
        res = fp_to_fp(self, dtype.ir_type)
        return Vector(res, self._shape, dtype)
    def reduce(self, op, init_val=None, reduction_profile=None, *, fastmath=None):
        et = element_type(self.type)
        kwargs = {}
        res = vector.reduction(et, kind, self, **kwargs)
        return self._dtype(res)
    @classmethod
    def filled(cls, shape, fill_value, dtype):
        val = vector.broadcast(vec_ty, fill_value.ir_value())
        return cls(val, shape, dtype)
    def _apply_op(self, method_name, op, other, flip=False):
        common_dtype = _common_numeric_type_for_op(self_dtype, other_dtype, op) if other_dtype is not None else self_dtype
        result_dtype = _result_numeric_type_for_op(common_dtype, op)
        return self._wrap_op_result(result, shape, result_dtype)
    def __add__(self, other):
        return self.apply_op(operator.add, other)
    def __and__(self, other):
        return self.apply_op(operator.and_, other)
    def __mul__(self, other):
        return vector_mul(self, other)
'''


_NUMERIC_SOURCE = '''\
class Numeric:
    @staticmethod
    def from_ir_type(ir_type):
        ir2dsl_map = {T.bool(): Boolean, T.f32(): Float32, T.i32(): Int32, T.si32(): Int32, T.ui32(): Uint32}
        return ir2dsl_map[ir_type]
'''


_TENSOR_SOURCES = {
    "flydsl/expr/derived.py": (
        "def make_rmem_tensor(shape_or_layout, dtype):\n"
        "    layout = shape_or_layout\n"
        "    tensorTy = fly.MemRefType.get(dtype.ir_type, layout.type, fly.AddressSpace.Register)\n"
        "    return memref_alloca(tensorTy, layout=layout)\n"),
    "flydsl/expr/primitive.py": (
        "def memref_alloca(memref_type, layout):\n    return fly.memref_alloca(memref_type, layout)\n"
        "def memref_load_vec(memref):\n"
        "    dtype = None if isinstance(memref.type, CoordTensorType) else memref.dtype\n"
        "    return Vector(fly.memref_load_vec(memref), memref.shape.unpack(), dtype)\n"
        "def recast_iter(result_type, src):\n    if isinstance(result_type, type):\n"
        "        if issubclass(result_type, Numeric):\n            result_type = result_type.ir_type\n"
        "        result_type = PointerType.get(result_type, src.memspace, src.alignment)\n"
        "    return fly.recast_iter(result_type, src)\n"
        "def make_view(iter, layout):\n    return fly.make_view(iter, layout)\n"),
    "flydsl/expr/typing.py": (
        "@ir.register_value_caster(MemRefType.static_typeid, replace=True)\n"
        "class Tensor(BuiltinDslType):\n"
        "    @property\n    def element_type(self):\n        return Numeric.from_ir_type(self.type.element_type)\n"
        "    @property\n    def dtype(self):\n        return self.element_type\n"
        "    def load(self):\n        return memref_load_vec(self)\n"),
}


def test_the_derive_script_follows_a_register_tensor_to_its_load():
    assert derive_types_script().tensor_facts(_TENSOR_SOURCES) == {
        "flydsl.expr.make_rmem_tensor": "register-tensor-of-dtype",
        "flydsl.expr.memref_load_vec": "vector-of-tensor-dtype",
        "flydsl.expr.recast_iter": "pointer-of-class",
        "flydsl.expr.make_view": "tensor-of-pointer-element",
        "flydsl.expr.Tensor.load": "vector-of-tensor-dtype",
    }


@pytest.mark.parametrize("path, shown, changed", [
    ("flydsl/expr/typing.py", "return self.element_type", "return Float32"),  # a dtype of its own
    ("flydsl/expr/typing.py", "@ir.register_value_caster", "@other"),  # no caster makes memrefs Tensors
    ("flydsl/expr/primitive.py", "memref.shape.unpack(), dtype)", "memref.shape.unpack())"),
    ("flydsl/expr/derived.py", "fly.AddressSpace.Register", "fly.AddressSpace.Shared"),
    ("flydsl/expr/typing.py", "return memref_load_vec(self)", "return self.copy_out()"),
    ("flydsl/expr/primitive.py", "src.memspace, src.alignment)", "AddressSpace.Global, 1)"),
])
def test_the_derive_script_records_no_tensor_fact_a_step_does_not_show(path, shown, changed):
    sources = dict(_TENSOR_SOURCES, **{path: _TENSOR_SOURCES[path].replace(shown, changed)})
    assert derive_types_script().tensor_facts(sources) == {}


_POINTER_LOAD_SOURCES = {
    "flydsl/expr/primitive.py": (
        "@dsl_loc_tracing\n@dsl_wrap_result\ndef ptr_load(ptr, result_type=None):\n"
        "    if result_type is None:\n        result_type = ptr.element_type\n"
        "    if not isinstance(result_type, ir.Type):\n        result_type = result_type.ir_type\n"
        "    return fly.ptr_load(result_type, ptr)\n"),
    "flydsl/expr/typing.py": (
        "def as_dsl_value(value, exemplar=None):\n"
        "    if exemplar is not None and isinstance(value, ir.Value):\n"
        "        if isclass(exemplar):\n            return exemplar(value)\n"
        "        if isinstance(exemplar, Numeric):\n            return type(exemplar)(value)\n"
        "    if isinstance(value, DslType):\n        return value\n"
        "    return Numeric.from_ir_type(value.type)(value)\n"),
}
_POINTER_LOAD_WRAPPED = ("    if not isinstance(result_type, ir.Type):\n        result_type = result_type.ir_type\n"
                         "    return fly.ptr_load(result_type, ptr)\n",
                         "    ir_result_type = result_type if isinstance(result_type, ir.Type) else result_type.ir_type\n"
                         "    return as_dsl_value(fly.ptr_load(ir_result_type, ptr), result_type)\n")


def test_the_derive_script_reads_the_vector_type_make_type_spells():
    make_type = ("class Vector(ArithValue):\n    @staticmethod\n    def make_type(shape, dtype):\n"
                 "        shape = Vector._canonical_shape(shape)\n"
                 "        return ir.VectorType.get([Vector._numel_from_shape(shape)], dtype.ir_type)\n")
    derive = derive_types_script()
    assert derive.vector_facts(ast.parse(make_type)) == {"flydsl.expr.typing.Vector.make_type": "flat-type-of-dtype"}
    assert derive.vector_facts(ast.parse(make_type.replace("dtype.ir_type", "T.i32()"))) == {}


def test_the_derive_script_follows_a_pointer_load_of_either_shape():
    derive = derive_types_script()
    assert derive.pointer_load_facts(_POINTER_LOAD_SOURCES) == {"flydsl.expr.ptr_load": "caster-value-of-result-type"}
    later = dict(_POINTER_LOAD_SOURCES, **{"flydsl/expr/primitive.py": _POINTER_LOAD_SOURCES["flydsl/expr/primitive.py"]
                 .replace("@dsl_wrap_result\n", "").replace(*_POINTER_LOAD_WRAPPED)})
    assert derive.pointer_load_facts(later) == {"flydsl.expr.ptr_load": "caster-value-of-result-type"}


@pytest.mark.parametrize("path, shown, changed", [
    ("flydsl/expr/primitive.py", "@dsl_wrap_result\n", ""),  # the raw result, unwrapped
    ("flydsl/expr/primitive.py", "return fly.ptr_load(result_type, ptr)", "return Vector(fly.ptr_load(result_type, ptr))"),
    ("flydsl/expr/typing.py", "    if isinstance(value, DslType):\n        return value\n", ""),  # rewrapped by type
])
def test_the_derive_script_records_no_pointer_load_fact_a_step_does_not_show(path, shown, changed):
    sources = dict(_POINTER_LOAD_SOURCES, **{path: _POINTER_LOAD_SOURCES[path].replace(shown, changed)})
    assert derive_types_script().pointer_load_facts(sources) == {}


def test_the_derive_script_reads_the_classes_a_vector_element_type_maps_back_to():
    # Never Uint32: its vector elements are signless i32, which map to Int32.
    assert derive_types_script().ir_round_trip_classes(ast.parse(_NUMERIC_SOURCE)) == ["Float32", "Int32"]
    assert derive_types_script().ir_round_trip_classes(ast.parse("class Numeric:\n    pass\n")) == []


def test_the_derive_script_records_what_the_vector_methods_return():
    assert derive_types_script().vector_facts(ast.parse(_VECTOR_SOURCE)) == {
        "flydsl.expr.typing.Vector.__init__": "ir-element-class",
        "flydsl.expr.typing.Vector.from_elements": "coerces-elements",
        "flydsl.expr.typing.Vector.to": "dtype-vector",
        "flydsl.expr.typing.Vector.reduce": "element-scalar",
        "flydsl.expr.typing.Vector.filled": "dtype-vector",
        "flydsl.expr.typing.Vector.__add__": "element-lattice",
        "flydsl.expr.typing.Vector.__and__": "element-lattice",  # `__mul__` takes another path: not recorded
    }


def test_the_derive_script_records_nothing_the_source_does_not_show():
    changed = (_VECTOR_SOURCE.replace("return self._dtype(res)", "return res")
               .replace("return cls(val, shape, dtype)", "return cls(val)")
               .replace("return Vector(res, self._shape, dtype)", "return Vector(res)")
               .replace("result_dtype = _result_numeric_type_for_op(common_dtype, op)", "result_dtype = common_dtype")
               .replace("return cls(res, (len(elements),), dtype)", "return res")
               .replace("dtype = Numeric.from_ir_type(vty.element_type)", "dtype = Float32"))
    assert derive_types_script().vector_facts(ast.parse(changed)) == {}


_VECTOR_CASTER = '''\
@ir.register_value_caster(ir.VectorType.static_typeid, replace=True)
class Vector(ArithValue):
    def __init__(self, value, shape=None, dtype=None):
        vty = ir.VectorType(value.type)
        if shape is None:
            shape = tuple(vty.shape)
        if dtype is None:
            dtype = Numeric.from_ir_type(vty.element_type)
'''


def test_the_derive_script_tells_whether_vector_is_the_value_caster_of_vector_types():
    derive = derive_types_script()
    assert derive.vector_facts(ast.parse(_VECTOR_CASTER))["flydsl.expr.typing.Vector"] == "value-caster"
    # Registered without `replace` (ArithValue's registration stands), under another base, or
    # not taking its lanes or element class from the type: no fact.
    for changed in (_VECTOR_CASTER.replace(", replace=True", ""), _VECTOR_CASTER.replace("(ArithValue)", "(ir.Value)"),
                    _VECTOR_CASTER.replace("shape = tuple(vty.shape)", "shape = (1,)"),
                    _VECTOR_CASTER.replace("Numeric.from_ir_type(vty.element_type)", "Float32")):
        assert "flydsl.expr.typing.Vector" not in derive.vector_facts(ast.parse(changed))


@pytest.mark.parametrize("body, expected", [
    ("probe = fx.Float16\n", {"Float16"}),
    ("cls = fx.BFloat16 if bf16 else fx.Float16\nprobe = cls\n", {"BFloat16", "Float16"}),
    ("kinds = {'f16': fx.Float16, 'f32': fx.Float32}\nprobe = {'f16': fx.Float16, 'f32': fx.Float32}[key]\n",
     {"Float16", "Float32"}),
    ("a = fx.Int32\nb = a\nprobe = b if wide else fx.Int64\n", {"Int32", "Int64"}),
    ("probe = fx.Float16 if bf16 else other\n", None),  # a value of no known class
    ("probe = {'f16': fx.Float16, **more}[key]\n", None),  # a dict that may hold anything
    ("cls = fx.Float16\ncls = fx.Float32\nprobe = cls\n", None),  # bound twice
])
def test_scalar_class_choices(body, expected):
    tree = ast.parse(HEADER + body)
    model = SemanticModel(tree, target_version=Version.parse("0.5.0"))
    probe = [node for node in ast.walk(tree) if isinstance(node, ast.Name) and node.id == "probe"][-1]
    found = model.scalar_class_choices(model.parent(probe).value)
    assert (set(found) if found is not None else None) == expected


_OPERAND_TYPED_SOURCES = {
    "flydsl/_mlir/dialects/_math_ops_gen.py": (
        "class AbsFOp(_ods_ir.OpView):\n    def __init__(self, operand, *, fastmath=None, results=None, loc=None, ip=None):\n"
        "        operands = []\n        operands.append(operand)\n"
        "        if results is None: results = [operands[0].type] * 1\n        super().__init__(results=results)\n"
        "def absf(operand, *, fastmath=None, loc=None, ip=None):\n    return AbsFOp(operand=operand, fastmath=fastmath).result\n"),
    "flydsl/expr/math.py": (
        "from .._mlir.dialects import math\n"
        "def dsl_math_wrap_result(fn=None):\n    def wrapper(*args, **kwargs):\n        def dsl_wrap(value):\n"
        "            if is_vector:\n                elem_dtype = Numeric.from_ir_type(ir.VectorType(value.type).element_type)\n"
        "                return Vector(value, first.shape, elem_dtype)\n"
        "            return Numeric.from_ir_type(value.type)(value)\n    return wrapper\n"
        "@dsl_loc_tracing\n@dsl_math_wrap_result\ndef absf(x, *, fastmath=None):\n"
        "    return math.absf(as_ir_value(x), fastmath=fastmath)\n"),
}


@pytest.mark.parametrize("path, shown, changed", [
    ("flydsl/_mlir/dialects/_math_ops_gen.py", "[operands[0].type] * 1", "[_ods_ir.IntegerType.get_signless(1)] * 1"),
    ("flydsl/expr/math.py", "math.absf(as_ir_value(x)", "math.absf(as_ir_value(y)"),  # not its first parameter
    ("flydsl/expr/math.py", "return Numeric.from_ir_type(value.type)(value)", "return value"),  # left raw
    ("flydsl/expr/math.py", "@dsl_math_wrap_result\n", "@dsl_math_wrap_result(preserve_numeric_type=True)\n"),
])
def test_the_derive_script_records_builders_of_their_first_operand_s_type(path, shown, changed):
    derive = derive_types_script()
    assert derive.operand_typed_results(_OPERAND_TYPED_SOURCES) == {"flydsl.expr.math.absf": "first-operand"}
    sources = dict(_OPERAND_TYPED_SOURCES, **{path: _OPERAND_TYPED_SOURCES[path].replace(shown, changed)})
    assert derive.operand_typed_results(sources) == {}
