"""scripts/measure_safe_share.py `reasons`: what keeps diagnostics from a safe fix, grouped."""

from __future__ import annotations

import sys

from tests.conftest import script_module

measure = script_module("measure_safe_share")


def test_reason_is_the_last_balanced_parenthesis_with_names_and_positions_blanked():
    unsafe = {"message": "m", "fix": {"applicability": "unsafe", "message": "Drop the `ArithValue` wrapper (the type of "
                                      "`v` is unknown: `f` is passed `v` of unknown type at 95:23)"}}
    assert measure.reason(unsafe) == "(the type of `…` is unknown: `…` is passed `…` of unknown type at L:C)"
    nested = {"message": "Raw `arith.select`: use `c.select(a, b)` (the fx type of `x` is not known: "
                         "subscript (unknown: attribute `y`))"}
    assert measure.reason(nested) == "(the fx type of `…` is not known: subscript (unknown: attribute `…`))"
    assert measure.reason({"message": "Raw `llvm.load`: use a layout view"}) == "(no reason given)"
    assert measure.reason({"message": "Raw `arith.constant`: use an fx constant (`fx.Int32`)"}) == "(no reason given)"


def test_reasons_groups_one_cause_at_many_places(tmp_path, monkeypatch, capsys):
    tree = tmp_path / "kernels"
    tree.mkdir()
    helper = ("from flydsl.expr import arith\nfrom flydsl.expr.arith import ArithValue\n"
              "def {name}(a, b):\n    return arith.unwrap(a), ArithValue(b) * 2\n")
    (tree / "one.py").write_text(helper.format(name="scale"))
    (tree / "two.py").write_text(helper.format(name="shift"))
    monkeypatch.setattr(sys, "argv", ["measure_safe_share.py", "reasons", str(tree), "--target-version", "0.5.0"])
    assert measure.main() == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith("4 diagnostics without a safe fix outside tuned kernels, 2 reasons")
    groups = sorted(line.split("  e.g.")[0].split()[:3] for line in lines[1:])
    assert groups == [["2", "FLY101", "unsafe"], ["2", "FLY102", "unsafe"]]
    assert all("parameter `…` has no annotation, and `…` is public" in line for line in lines[1:])
