"""Vendored copies of FlyDSL's legacy `flydsl.expr.vector` wrappers are §3
sites like the original module (issue 27, item 3)."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

from flydsl_lint.frontends.cli import main

# The shape of FlyDSL's removed python/flydsl/expr/vector.py: thin wrappers
# around the upstream vector dialect ops.
VENDORED = """
from flydsl._mlir.dialects import vector as _vector


def extract(vector, static_position=None, dynamic_position=None):
    return _vector.extract(vector, static_position=static_position, dynamic_position=dynamic_position)


def bitcast(result_type, source):
    return _vector.BitCastOp(result_type, source).result
"""
KERNEL = """
import flydsl.expr as fx
from flydsl.expr.typing import T
{import_line}


def lanes(v, packed):
    lo = vector.extract(v, static_position=[0], dynamic_position=[])
    w = vector.bitcast(T.vec(4, T.i32), packed)
    return lo, w
"""


def _project(root: Path, vendored: str) -> None:
    (root / "pyproject.toml").write_text('[project]\nname = "pkg"\n')
    for folder in ("pkg", "pkg/utils", "pkg/kernels"):
        (root / folder).mkdir(parents=True)
        (root / folder / "__init__.py").write_text("")
    (root / "pkg/utils/vector.py").write_text(textwrap.dedent(vendored))
    (root / "pkg/kernels/absolute.py").write_text(KERNEL.format(import_line="from pkg.utils import vector"))
    (root / "pkg/kernels/relative.py").write_text(KERNEL.format(import_line="from ..utils import vector"))


def _diagnostics(capsys, root: Path, monkeypatch) -> list[tuple[str, str, int]]:
    monkeypatch.chdir(root)
    capsys.readouterr()
    main(["check", "--no-cache", "--select", "FLY321", "--output-format", "json", "pkg"])
    found = json.loads(capsys.readouterr().out)
    return sorted((Path(d["filename"]).name, d["code"], d["location"]["row"]) for d in found)


def test_calls_into_a_vendored_vector_wrapper_module_are_raw_vector_sites(tmp_path, capsys, monkeypatch):
    _project(tmp_path, VENDORED)
    found = _diagnostics(capsys, tmp_path, monkeypatch)
    rows = sorted({row for _, _, row in found})
    assert [name for name, _, _ in found] == ["absolute.py"] * 2 + ["relative.py"] * 2
    assert {code for _, code, _ in found} == {"FLY321"}
    assert rows == [8, 9]  # the two wrapper calls, not the wrapper module's own raw ops


def test_a_project_vector_module_that_defines_other_names_is_not_a_wrapper(tmp_path, capsys, monkeypatch):
    # A project's own `vector.py` (math helpers, say) that does not define the
    # legacy wrappers' names is not the legacy module.
    _project(tmp_path, "def norm(v):\n    return v\n")
    assert _diagnostics(capsys, tmp_path, monkeypatch) == []
