"""FLY0xx: unused / unreasoned noqa agree between the CLI and flake8; fixes."""

from __future__ import annotations

import pytest

from tests.conftest import fix_text, lint_text

pytest.importorskip("flake8", reason="flake8 is a dependency of flydsl-lint")

from tests.frontends.test_flake8_parity import _check, _flake8  # noqa: E402

NOQA_FILE = '''\
import flydsl.expr as fx
from flydsl.expr import arith


def f(a, b, x):
    m = arith.maximumf(a, b)  # noqa: FLY301
    n = arith.maximumf(a, b)  # noqa: FLY301 -- keeps the NaN-propagating max
    y = x + 1  # noqa: FLY301
    z = x + 2  # noqa: FLY301, FLY013
    w = fx.Int32(fx.Int32(x))  # noqa: FLY111, FLY301 -- reference parity
    v = arith.maximumf(  # noqa: FLY301 -- first row of a call
        a, b)
    # noqa: FLY103
    u = x  # noqa: FLY999, E501
    return m, n, y, z, w, v, u
'''


def test_cli_and_flake8_report_the_same_noqa_findings(tmp_path):
    (tmp_path / "noqa_hygiene.py").write_text(NOQA_FILE)
    ours, theirs = _check(["noqa_hygiene.py"], tmp_path), _flake8(["noqa_hygiene.py"], tmp_path)
    assert ours == theirs, {"only check": sorted(ours - theirs), "only flake8": sorted(theirs - ours)}
    found = {(row, code) for _, row, _, code in ours if code in ("FLY012", "FLY013")}
    assert found == {(6, "FLY012"), (8, "FLY013"), (10, "FLY013"), (13, "FLY013")}


def test_narrow_select_never_calls_a_directive_unused(tmp_path):
    found = lint_text(NOQA_FILE, tmp_path, select=("FLY013",))
    assert [d for d in found if d.code == "FLY013"] == []


def test_unused_noqa_fix(tmp_path):
    fixed = fix_text(NOQA_FILE, tmp_path, select=("FLY",))
    assert "    y = x + 1\n" in fixed
    assert "# noqa: FLY111 -- reference parity" in fixed
    assert "# noqa: FLY103" not in fixed
    assert "# noqa: FLY301, FLY013" in fixed  # FLY013 names itself: left alone
