"""§3c: waitcnt shims defined in another project module are found without importing it."""

from __future__ import annotations

import ast
from pathlib import Path

from tests.conftest import lint_text, write_package

GFX950 = {"target_arch": ("gfx950",)}


def _project(tmp_path: Path) -> None:
    write_package(tmp_path, {
        "sync": ("from flydsl.expr import rocdl\n\n"
                 "def wait_on(bits):\n    rocdl.s_waitcnt(bits)\n\n"
                 "def encode(vmcnt=63, expcnt=7, lgkmcnt=63):\n"
                 "    return (vmcnt & 0xF) | (expcnt << 4) | (lgkmcnt << 8) | (((vmcnt >> 4) & 0x3) << 14)\n"),
        # Neither calls s_waitcnt nor names a counter: its packer is a shim only by its use.
        "bits": "def pack(low, high):\n    return low | (high << 8)\n\ndef tile(m, n):\n    return m * n\n",
    })


def test_project_wrapper_and_named_counter_encoder_are_flagged(tmp_path):
    _project(tmp_path)
    text = (
        "from flydsl.expr import rocdl\nfrom kernels.sync import wait_on, encode\nfrom kernels.bits import tile\n\n"
        "wait_on(0x3F70)\nrocdl.s_waitcnt(encode(lgkmcnt=0))\ntile(2, 3)\n"
    )
    found = lint_text(text, tmp_path, select=("FLY362",), **GFX950)
    assert [(d.start.row, d.code) for d in found] == [(5, "FLY362"), (6, "FLY362")]
    assert "wait_on" in found[0].message and "encode" in found[1].message


def test_project_encoder_known_only_by_its_use_is_flagged(tmp_path):
    _project(tmp_path)
    text = "from flydsl.expr import rocdl\nfrom kernels.bits import pack, tile\n\ntile(1, 2)\nrocdl.s_waitcnt(pack(0, 0))\n"
    found = lint_text(text, tmp_path, select=("FLY362",), **GFX950)
    assert [(d.start.row, d.code) for d in found] == [(5, "FLY362")]
    assert "pack" in found[0].message


def test_project_modules_are_read_only_when_the_asked_function_can_be_there(tmp_path, monkeypatch):
    _project(tmp_path)
    (tmp_path / "kernels" / "loaders.py").write_text(
        "from flydsl.expr import rocdl\n\nclass Loader:\n    def wait(self):\n        rocdl.s_waitcnt(0)\n\n"
        "def \\\n        drain(bits):\n    rocdl.s_waitcnt(bits)\n"
    )
    parsed: list[str] = []  # what is parsed of loaders.py (the linted text is parsed too)
    real_parse = ast.parse

    def counting_parse(data, *args, **kwargs):
        text = data.decode() if isinstance(data, bytes) else data
        if "import Loader" not in text:
            parsed.extend(part for part in ("class Loader", "drain(bits)", "import rocdl") if part in text)
        return real_parse(data, *args, **kwargs)

    monkeypatch.setattr(ast, "parse", counting_parse)  # the rule parses through the ast module
    text = "from kernels.loaders import Loader, drain\n\nLoader()\n"
    assert lint_text(text, tmp_path, select=("FLY362",), **GFX950) == []
    assert parsed == []  # `Loader` is a class: no `def Loader` in the module, nothing read
    found = lint_text(text + "drain(0x3F70)\n", tmp_path, select=("FLY362",), **GFX950)
    assert [(d.start.row, d.code) for d in found] == [(4, "FLY362")]  # found across the line continuation
    assert sorted(parsed) == ["drain(bits)", "import rocdl"]  # its imports and the asked function, not the class

def test_project_defs_are_parsed_only_when_their_text_allows_a_shim(tmp_path, monkeypatch):
    _project(tmp_path)
    (tmp_path / "kernels" / "waits.py").write_text(
        "from flydsl.expr.rocdl import s_waitcnt as _w\n\n"
        "def drain(bits):\n    _w(bits)\n\n"  # a wrapper that spells its callee by an imported alias
        "def scale(x):\n    return x * 2\n"
    )
    parsed: list[str] = []
    real_parse = ast.parse

    def counting_parse(data, *args, **kwargs):
        text = data.decode() if isinstance(data, bytes) else data
        if "from kernels" not in text:
            parsed.extend(part for part in ("def drain", "def scale") if part in text)
        return real_parse(data, *args, **kwargs)

    monkeypatch.setattr(ast, "parse", counting_parse)
    text = "from kernels.waits import drain, scale\n\nscale(3)\ndrain(0x3F70)\n"
    found = lint_text(text, tmp_path, select=("FLY362",), **GFX950)
    assert [(d.start.row, d.code) for d in found] == [(4, "FLY362")]
    assert parsed == ["def drain"]  # `scale` names no counter, packs no bits, calls no s_waitcnt


def test_shim_definition_spans_its_name_on_rows_counted_as_the_parser_does(tmp_path):
    # A form feed breaks a line for str.splitlines(), not for Python's tokenizer: the
    # name's end column comes from the def's own row, whatever precedes it.
    shim = ("def _encode_waitcnt(vmcnt=63, expcnt=7, lgkmcnt=63):\n"
            "    return (vmcnt & 0xF) | (expcnt << 4) | (lgkmcnt << 8) | (((vmcnt >> 4) & 0x3) << 14)\n")
    for prefix, row in (("", 1), ("x = 1  # page\f break\n", 2), ("x = 1\n\f\n", 3)):
        found = lint_text(prefix + shim, tmp_path, select=("FLY363",))
        assert [(d.start.row, d.start.col, d.end.row, d.end.col) for d in found] == [(row, 0, row, 19)]
