"""`flydsl-lint check --show-types FILE:LINE`: what the model knows of each expression on a line."""

from __future__ import annotations

from pathlib import Path

import pytest

from flydsl_lint.frontends.cli import main

KERNEL = """import flydsl.compiler as flyc
import flydsl.expr as fx

@flyc.kernel
def k(n: fx.Int32):
    tid = fx.thread_idx.x
    off = tid * 4 + n
    lane = fx.lane_id()
"""


def _run(capsys, *argv: str) -> tuple[int, str, str]:
    capsys.readouterr()
    status = main(["check", "--no-cache", *argv])
    out, err = capsys.readouterr()
    return status, out, err


def test_each_expression_with_its_type_and_why(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    Path("k.py").write_text(KERNEL)
    status, out, err = _run(capsys, "--show-types", "k.py:7", "--target-version", "0.5.0")
    assert status == 0 and err == ""
    lines = out.splitlines()
    assert lines[0] == "# value types at k.py:7 (FlyDSL 0.5.0, command line)"
    assert "7:11  tid * 4 + n  fx.Int32  (operator (API table 0.5.0))" in lines
    assert "7:11  tid  fx.Int32  (assignment at 6:5)" in lines
    assert "7:17  4  Python int  (literal)" in lines
    assert "7:21  n  fx.Int32  (annotation)" in lines


def test_the_target_release_is_the_one_asked(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    Path("k.py").write_text(KERNEL)
    _, newer, _ = _run(capsys, "--show-types", "k.py:8", "--target-version", "0.3.2")
    _, older, _ = _run(capsys, "--show-types", "k.py:8", "--target-version", "0.3.1")
    assert "8:12  fx.lane_id()  fx.Int32  (API table 0.3.2)" in newer.splitlines()
    assert "8:12  fx.lane_id()  unknown  (unknown: no return type known for `flydsl.expr.lane_id`)" in older.splitlines()


@pytest.mark.parametrize("argument, message", [
    ("k.py", "--show-types: 'k.py' is not FILE:LINE (a line number from 1)"),
    ("k.py:0", "--show-types: 'k.py:0' is not FILE:LINE (a line number from 1)"),
    ("k.py:99", "k.py: has no line 99 (it has 8)"),
    ("missing.py:1", "missing.py: no such file"),
    ("bad.py:1", "bad.py: syntax error at 1:5: invalid syntax"),
])
def test_bad_file_or_line_is_one_line_and_exit_2(tmp_path, monkeypatch, capsys, argument, message):
    monkeypatch.chdir(tmp_path)
    Path("k.py").write_text(KERNEL)
    Path("bad.py").write_text("def (:\n")
    status, out, err = _run(capsys, "--show-types", argument)
    assert status == 2 and out == ""
    assert err == f"flydsl-lint: error: {message}\n"
