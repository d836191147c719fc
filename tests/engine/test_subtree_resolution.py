"""Vendored helpers resolve the same however much of a project is linted (issue 27, item 3)."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest

from flydsl_lint.frontends.cli import main

VENDORED = """
def create_buffer_resource(t, max_size=False):
    return t
def buffer_load(rsrc, offset, vec_width=1, dtype=None):
    return rsrc
def buffer_store(data, rsrc, offset):
    return None
"""
KERNEL = """
import flydsl.compiler as flyc
import flydsl.expr as fx
{import_line}


@flyc.kernel
def k(A: fx.Tensor):
    rsrc = buffer_ops.create_buffer_resource(A, max_size=True)
    v = buffer_ops.buffer_load(rsrc, fx.thread_idx.x, vec_width=4)
    buffer_ops.buffer_store(v, rsrc, fx.thread_idx.x)
"""
PACKAGE = "aiter/ops/flydsl"


def _project(root: Path, *, layout: str, marker: str = "pyproject.toml") -> Path:
    """A downstream project vendoring buffer_ops under `aiter/ops/flydsl/utils/`;
    returns the folder the package tree starts in."""
    base = root / "src" if layout == "src" else root
    (root / marker).write_text('[project]\nname = "aiter"\n' if marker == "pyproject.toml" else "")
    folders = ["aiter", "aiter/ops", PACKAGE, f"{PACKAGE}/utils", f"{PACKAGE}/kernels"]
    for folder in folders:
        (base / folder).mkdir(parents=True, exist_ok=True)
        namespace = layout == "namespace" and folder in ("aiter", "aiter/ops")  # as ROCm/aiter's aiter/ops/
        if not namespace:
            (base / folder / "__init__.py").write_text("")
    (base / PACKAGE / "utils/buffer_ops.py").write_text(textwrap.dedent(VENDORED))
    for name, line in (("absolute", "from aiter.ops.flydsl.utils import buffer_ops"),
                       ("relative", "from ..utils import buffer_ops")):
        (base / PACKAGE / f"kernels/{name}.py").write_text(KERNEL.format(import_line=line))
    return base


def _codes(capsys, cwd: Path, target: str, monkeypatch) -> list[tuple[str, str]]:
    """(kernel file name, code) of every diagnostic of `check target` run from `cwd`."""
    monkeypatch.chdir(cwd)
    capsys.readouterr()
    main(["check", "--no-cache", "--output-format", "json", target])
    return sorted((Path(d["filename"]).name, d["code"]) for d in json.loads(capsys.readouterr().out))


@pytest.mark.parametrize("layout", ["packages", "namespace", "src"])
@pytest.mark.parametrize("marker", ["pyproject.toml", ".git"])
def test_subtree_lint_finds_the_vendored_helpers_of_a_root_lint(tmp_path, capsys, monkeypatch, layout, marker):
    base = _project(tmp_path, layout=layout, marker=marker)
    from_root = _codes(capsys, tmp_path, ".", monkeypatch)
    # Both kernels, absolute and relative import alike, use the vendored helpers.
    for kernel in ("absolute.py", "relative.py"):
        assert sum(name == kernel for name, _ in from_root) == 3, from_root
    subtree = base / PACKAGE
    assert _codes(capsys, tmp_path, str(subtree.relative_to(tmp_path)), monkeypatch) == from_root
    assert _codes(capsys, subtree, ".", monkeypatch) == from_root
    assert _codes(capsys, subtree / "kernels", "absolute.py", monkeypatch) == [c for c in from_root if c[0] == "absolute.py"]


def _show_settings(capsys, monkeypatch, cwd: Path, target: str) -> dict[str, object]:
    monkeypatch.chdir(cwd)
    capsys.readouterr()
    assert main(["check", "--show-settings", target]) == 0
    lines = capsys.readouterr().out.splitlines()[1:]
    return {key: json.loads(value) for key, _, value in (line.partition(" = ") for line in lines)}


def test_show_settings_names_the_module_and_what_it_cannot_resolve(tmp_path, capsys, monkeypatch):
    base = _project(tmp_path, layout="namespace")
    kernels = base / PACKAGE / "kernels"
    (kernels / "absolute.py").write_text(KERNEL.format(import_line="from aiter.ops.flydsl.helpers import buffer_ops"))
    shown = _show_settings(capsys, monkeypatch, kernels, "absolute.py")
    assert shown["module"] == "aiter.ops.flydsl.kernels.absolute"
    assert str(tmp_path.resolve()) in shown["source-roots"]
    assert shown["unresolved-project-modules"] == ["aiter.ops.flydsl.helpers (imported by absolute.py)"]
    # A folder: every file below it is looked at; the relative import resolves.
    assert _show_settings(capsys, monkeypatch, base / PACKAGE, ".")["unresolved-project-modules"] == [
        "aiter.ops.flydsl.helpers (imported by kernels/absolute.py)"]
    # Third-party and FlyDSL modules are not the project's: never listed.
    (kernels / "absolute.py").write_text(KERNEL.format(import_line="from torchlib.utils import buffer_ops"))
    assert _show_settings(capsys, monkeypatch, kernels, "absolute.py")["unresolved-project-modules"] == []
