"""Fixes leave no debris: aliases and integer constants they made unused go (issue 27, item 4)."""

from __future__ import annotations

import textwrap
from pathlib import Path

from flydsl_lint.fixes.apply import remove_dead_aliases
from flydsl_lint.frontends.cli import main


def _never(name: str) -> bool:
    return False


def test_an_alias_and_a_constant_used_before_and_unused_after_go_keeping_comments():
    before = "import m\n_uw = m.helpers._to_raw  # shorthand\nVMCNT_0 = 0x3F70\nuse(_uw(x), VMCNT_0)\n"
    after = before.replace("use(_uw(x), VMCNT_0)", "use(x)")
    assert remove_dead_aliases(before, after, "\n", _never) == "import m\n# shorthand\nuse(x)\n"


def test_names_unused_before_the_fix_or_still_used_stay():
    before = "import m\n_uw = m.f\nSPARE = 3\nKEPT = 4\nuse(_uw(x), KEPT)\n"
    after = before.replace("use(_uw(x), KEPT)", "use(x, KEPT)")
    assert remove_dead_aliases(before, after, "\n", _never) == "import m\nSPARE = 3\nKEPT = 4\nuse(x, KEPT)\n"


def test_exported_rebound_dynamic_or_used_elsewhere_names_stay():
    cases = {
        "__all__ = ['_uw']\n_uw = m.f\nuse(_uw(x))\n": "__all__ = ['_uw']\n_uw = m.f\nuse(x)\n",
        "_uw = m.f\nif c:\n    _uw = m.g\nuse(_uw(x))\n": "_uw = m.f\nif c:\n    _uw = m.g\nuse(x)\n",
        "_uw = m.f\nuse(_uw(x), globals())\n": "_uw = m.f\nuse(x, globals())\n",
        "def f():\n    global _uw\n    _uw = m.f\n    use(_uw(x))\n": "def f():\n    global _uw\n    _uw = m.f\n    use(x)\n",
    }
    for before, after in cases.items():
        assert remove_dead_aliases(before, after, "\n", _never) == after, before
    before, after = "_uw = m.f\nuse(_uw(x))\n", "_uw = m.f\nuse(x)\n"
    assert remove_dead_aliases(before, after, "\n", lambda name: name == "_uw") == after
    # A function's own alias cannot be imported: it goes whatever other files say.
    before = "def f():\n    _uw = m.f\n    return _uw(x)\n"
    assert remove_dead_aliases(before, "def f():\n    _uw = m.f\n    return x\n", "\n", lambda name: True) == (
        "def f():\n    return x\n")
    # The only statement of a body becomes `pass`; an alias of the removed alias goes next.
    before = "def f():\n    r = m.f\n\ndef g():\n    w = m.f\n    v = w\n    return v(x)\nuse(f)\n"
    after = before.replace("return v(x)", "return x")
    assert remove_dead_aliases(before, after, "\n", _never) == "def f():\n    r = m.f\n\ndef g():\n    return x\nuse(f)\n"


KERNEL = """\
import flydsl.compiler as flyc
import flydsl.expr as fx
from flydsl.expr import arith as _arith
from flydsl.expr import rocdl

_uw = _arith._to_raw  # why: shorthand
_LGKMCNT_0_ONLY = 0xC07F


@flyc.kernel
def k(a: fx.Int32):
    b = _uw(a + 1)
    rocdl.s_waitcnt(_LGKMCNT_0_ONLY)
"""


def _fix(tmp_path: Path, monkeypatch, files: dict[str, str]) -> str:
    (tmp_path / "pyproject.toml").write_text('[tool.flydsl-lint]\ntarget-arch = ["gfx950"]\nselect = ["FLY104", "FLY361"]\n')
    for name, text in files.items():
        (tmp_path / name).write_text(textwrap.dedent(text))
    monkeypatch.chdir(tmp_path)
    main(["check", "--no-cache", "--fix", "-q", "k.py"])
    return (tmp_path / "k.py").read_text()


def test_fix_removes_the_alias_the_constant_and_then_the_import(tmp_path, monkeypatch, capsys):
    fixed = _fix(tmp_path, monkeypatch, {"k.py": KERNEL})
    assert "_uw" not in fixed and "_LGKMCNT_0_ONLY" not in fixed and "_arith" not in fixed
    assert "# why: shorthand\n" in fixed
    assert "b = fx.as_ir_value(a + 1)\n" in fixed and "rocdl.s_waitcnt(lgkmcnt=0)\n" in fixed


def test_fix_keeps_a_module_name_another_project_file_imports(tmp_path, monkeypatch, capsys):
    fixed = _fix(tmp_path, monkeypatch, {"k.py": KERNEL, "other.py": "from k import _LGKMCNT_0_ONLY\n"})
    assert "_LGKMCNT_0_ONLY = 0xC07F\n" in fixed
    assert "_uw" not in fixed
