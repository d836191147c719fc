"""Fixes leave no debris: aliases, integer constants and helper defs they made unused go (issue 27, item 4)."""

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



SHIM = """\
import m

_VMCNT_LO_MASK = 0xF
_LGKMCNT_BASE = 0x3F70  # lgkmcnt and expcnt at their maximum


def _wait_vm(n):
    # vmcnt only: the other counters are maxed
    m.s_waitcnt((n & _VMCNT_LO_MASK) | _LGKMCNT_BASE)


def body():
    _wait_vm(0)
"""


def test_a_helper_def_used_before_and_unused_after_goes_then_the_constants_it_read():
    after = SHIM.replace("    _wait_vm(0)\n", "    m.s_waitcnt(vmcnt=0)\n")
    assert remove_dead_aliases(SHIM, after, "\n", _never) == (
        "import m\n\n# lgkmcnt and expcnt at their maximum\n\n\n"
        "# vmcnt only: the other counters are maxed\n\n\ndef body():\n    m.s_waitcnt(vmcnt=0)\n")


def test_a_nested_helper_goes_and_blank_lines_do_not_pile_up():
    before = "def k(t):\n    x = 1\n\n    def wait(n):\n        t.w(n)\n\n    def other():\n        return x\n\n    wait(0)\n    return other\n"
    after = before.replace("    wait(0)\n", "    t.w(0)\n")
    assert remove_dead_aliases(before, after, "\n", _never) == (
        "def k(t):\n    x = 1\n\n    def other():\n        return x\n\n    t.w(0)\n    return other\n")
    # The only statement of its block: `pass` in its place.
    before = "def k(t):\n    if t:\n        def wait(n):\n            t.w(n)\n        wait(0)\n"
    after = before.replace("        wait(0)\n", "")
    assert remove_dead_aliases(before, after, "\n", _never) == "def k(t):\n    if t:\n        def wait(n):\n            t.w(n)\n"
    before = "def k(t):\n    def wait(n):\n        t.w(n)\n    wait(0)\n"
    assert remove_dead_aliases(before, "def k(t):\n    def wait(n):\n        t.w(n)\n    t.w(0)\n", "\n", _never) == (
        "def k(t):\n    t.w(0)\n")


def test_helper_defs_that_may_still_be_reached_or_run_code_stay():
    cases = {
        # public: code outside the project may import it
        "def wait(n):\n    m.w(n)\nwait(0)\n": "def wait(n):\n    m.w(n)\nm.w(0)\n",
        # decorated: the decorator may register it
        "@reg\ndef _wait(n):\n    m.w(n)\n_wait(0)\n": "@reg\ndef _wait(n):\n    m.w(n)\nm.w(0)\n",
        # a default evaluated when the def runs may emit code
        "def _wait(n, c=m.make()):\n    m.w(n, c)\n_wait(0)\n": "def _wait(n, c=m.make()):\n    m.w(n, c)\nm.w(0)\n",
        # a string spells the name: getattr or __all__ may reach it
        "__all__ = ['_wait']\ndef _wait(n):\n    m.w(n)\n_wait(0)\n": "__all__ = ['_wait']\ndef _wait(n):\n    m.w(n)\nm.w(0)\n",
        # bound twice
        "def _wait(n):\n    m.w(n)\nif c:\n    def _wait(n):\n        m.v(n)\n_wait(0)\n":
            "def _wait(n):\n    m.w(n)\nif c:\n    def _wait(n):\n        m.v(n)\nm.w(0)\n",
        # still called
        "def _wait(n):\n    m.w(n)\n_wait(0)\n_wait(1)\n": "def _wait(n):\n    m.w(n)\nm.w(0)\n_wait(1)\n",
    }
    for before, after in cases.items():
        assert remove_dead_aliases(before, after, "\n", _never) == after, before
    before, after = "def _wait(n):\n    m.w(n)\n_wait(0)\n", "def _wait(n):\n    m.w(n)\nm.w(0)\n"
    assert remove_dead_aliases(before, after, "\n", lambda name: name == "_wait") == after
    assert remove_dead_aliases(before, after, "\n", _never) == "m.w(0)\n"


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


SHIM_KERNEL = """\
import flydsl.compiler as flyc
import flydsl.expr as fx
from flydsl.expr import rocdl

_LGKMCNT_EXPCNT_BASE = 0x3F70


def _wait_vmcnt(n):
    rocdl.s_waitcnt((n & 0xF) | _LGKMCNT_EXPCNT_BASE | (((n >> 4) & 0x3) << 14))


@flyc.kernel
def k(a: fx.Int32):
    _wait_vmcnt(0)
    _wait_vmcnt(2)
"""


def test_fix_removes_a_waitcnt_shim_once_its_calls_are_replaced(tmp_path, monkeypatch, capsys):
    (tmp_path / "pyproject.toml").write_text('[tool.flydsl-lint]\ntarget-arch = ["gfx942", "gfx950"]\nselect = ["FLY362"]\n')
    (tmp_path / "k.py").write_text(SHIM_KERNEL)
    monkeypatch.chdir(tmp_path)
    main(["check", "--no-cache", "--fix", "-q", "k.py"])
    fixed = (tmp_path / "k.py").read_text()
    assert "_wait_vmcnt" not in fixed and "_LGKMCNT_EXPCNT_BASE" not in fixed
    assert "    rocdl.s_waitcnt(vmcnt=0)\n    rocdl.s_waitcnt(vmcnt=2)\n" in fixed
    compile(fixed, "k.py", "exec")
