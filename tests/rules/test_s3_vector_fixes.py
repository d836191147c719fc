"""FLY321's `fx.Vector` fixes: which vector types are proven, where the value may go, which releases."""

from __future__ import annotations

import ast
import textwrap

from flydsl_lint.engine.diagnostics import Applicability
from flydsl_lint.engine.versions import Version
from tests.conftest import derive_types_script, fix_text, lint_text

HEADER = "from flydsl._mlir.dialects import arith, vector\nfrom flydsl.expr import as_ir_value\nfrom flydsl.expr.typing import T\n"


def _fixes(tmp_path, body: str, **settings):
    found = [d for d in lint_text(HEADER + body, tmp_path, select=("FLY321",), **settings) if d.code == "FLY321"]
    return [(d.start.row - 3, d.fix and d.fix.applicability) for d in found]


def test_a_name_bound_once_spells_the_result_type(tmp_path):
    body = ("i64 = T.i64\nvec_t = T.vec(2, i64)\nv = vector.from_elements(vec_t, [as_ir_value(a), as_ir_value(b)])\n"
            "w = arith.addi(v, c)\n")
    assert _fixes(tmp_path, body) == [(3, Applicability.SAFE)]
    assert "v = fx.Vector.from_elements([as_ir_value(a), as_ir_value(b)], fx.Int64)\n" in fix_text(
        HEADER + body, tmp_path, select=("FLY321",))


def test_the_raw_vector_already_is_the_fx_vector_wherever_it_goes(tmp_path):
    # The value caster of vector types is fx.Vector, of the element class `Numeric.from_ir_type` gives:
    # returned, or read by operators and methods, the raw op's value is the one the method gives.
    body = ("def f(a, b):\n    v = vector.from_elements(T.i64x2, [as_ir_value(a), as_ir_value(b)])\n    return v\n"
            "def g(a, b):\n    v = vector.from_elements(T.i64x2, [as_ir_value(a), as_ir_value(b)])\n"
            "    arith.addi(v, v)\n    return v.bitcast(T.f16x8), v + v\n")
    assert _fixes(tmp_path, body) == [(2, Applicability.SAFE), (5, Applicability.SAFE)]
    # Of an element class that does not come back (Int128 is no class `from_ir_type` gives), only
    # where the value meets raw ops alone.
    wide = "v = vector.from_elements(T.vec(2, T.i128), [as_ir_value(a), as_ir_value(b)])\n"
    assert _fixes(tmp_path, wide + "w = arith.addi(v, v)\n") == [(1, Applicability.SAFE)]
    assert _fixes(tmp_path, wide + "w = v + v\n") == [(1, Applicability.UNSAFE)]


def test_a_name_bound_twice_proves_nothing(tmp_path):
    body = ("v = vector.from_elements(T.i64x2, [as_ir_value(a), as_ir_value(b)])\n"
            "v = other(v)\nw = arith.addi(vector.extract(as_ir_value(v), static_position=[0], dynamic_position=[]), c)\n")
    assert _fixes(tmp_path, body)[1] == (3, None)


def test_no_fix_for_other_bits_an_index_out_of_range_a_dynamic_position_or_unknown_elements(tmp_path):
    body = ("pair = vector.from_elements(T.i64x2, [as_ir_value(a), as_ir_value(b)])\n"
            "h = arith.addi(vector.bitcast(T.f16x4, as_ir_value(pair)), c)\n"
            "e = arith.addi(as_ir_value(vector.extract(as_ir_value(pair), static_position=[2], dynamic_position=[])), c)\n"
            "d = arith.addi(as_ir_value(vector.extract(as_ir_value(pair), static_position=[], dynamic_position=[i])), c)\n"
            "u = arith.addi(vector.from_elements(T.vec(2, T.i64), [a, b]), c)\n")
    assert _fixes(tmp_path, body) == [(1, Applicability.SAFE), (2, None), (3, None), (4, None), (5, None)]


def test_an_empty_vector_type_is_not_proven(tmp_path):
    body = "w = arith.addi(vector.from_elements(T.vec(0, T.i64), []), c)\n"
    assert _fixes(tmp_path, body) == [(1, None)]


def test_no_fix_before_the_release_the_vector_facts_start(tmp_path):
    body = "w = arith.addi(vector.from_elements(T.i64x2, [as_ir_value(a), as_ir_value(b)]), c)\n"
    assert _fixes(tmp_path, body, target_version=Version.parse("0.3.0")) == [(1, Applicability.SAFE)]
    assert _fixes(tmp_path, body, target_version=Version.parse("0.2.4")) == [(1, None)]


def test_the_derive_script_records_the_vector_types_and_methods_the_source_shows():
    typing = ast.parse(textwrap.dedent('''\
        class Types:
            @property
            def i64(self):
                return Int64.ir_type
            @property
            def f16x4(self):
                return self.vec(4, Float16.ir_type)
            @property
            def odd(self):
                return self.vec(n, Float16.ir_type)
            def vec(self, n: int, elem: ir.Type) -> ir.Type:
                return ir.VectorType.get([int(n)], elem)
        class Vector(ArithValue):
            def bitcast(self, dtype):
                src_bits = self.numel * self._dtype.width
                dst_count = src_bits // dtype.width
                dst_vec_ty = ir.VectorType.get([dst_count], dtype.ir_type)
                res = vector.BitCastOp(dst_vec_ty, self).result
                return Vector(res, (dst_count,), dtype)
            def __getitem__(self, idx):
                return vector.extract(self, idx)
    '''))
    assert derive_types_script().vector_facts(typing) == {
        "flydsl.expr.typing.T.i64": "Int64",
        "flydsl.expr.typing.T.f16x4": "Float16x4",
        "flydsl.expr.typing.T.vec": "count-element",
        "flydsl.expr.typing.Vector.bitcast": "same-bits",  # `__getitem__` emits another op: not recorded
    }
