"""File exemptions: `# flydsl-lint: noqa[: codes]` and flake8's `# flake8: noqa`."""

import subprocess
import sys

import pytest

from flydsl_lint.run.checker import Checker
from flydsl_lint.engine.noqa import parse_file_exemptions, skipped_by_flake8
from flydsl_lint.engine.source import SourceFile, find_comments

from ..conftest import make_settings

WRAPS = "import flydsl.expr as fx\nfrom flydsl.expr import arith\nfrom flydsl.expr.typing import T\n" \
        "lane = fx.Int64(fx.Int64(tid))\nrow = arith.index_cast(T.index, n)\n"


def _exemptions(text: str):
    source = SourceFile("k.py", text)
    return parse_file_exemptions(find_comments(source, {}), source.lines)


@pytest.mark.parametrize("comment, codes, reason", [
    ("# flydsl-lint: noqa", None, ""),
    ("# flydsl-lint: noqa -- generated from the tuner", None, "generated from the tuner"),
    ("# flydsl-lint: noqa: FLY111", ("FLY111",), ""),
    ("#flydsl-lint:noqa:fly111, FLY8 -- ABI widths", ("FLY111", "FLY8"), "ABI widths"),
    ("    # FLYDSL-LINT: NOQA: FLY2 FLY3", ("FLY2", "FLY3"), ""),
])
def test_exemptions_parse(comment, codes, reason):
    (found,) = _exemptions(f"x = 1\n{comment}\n")
    assert (found.codes, found.reason, found.row, found.file_level) == (codes, reason, 2, True)


@pytest.mark.parametrize("text", [
    "x = 1  # flydsl-lint: noqa\n",  # trailing: reads as a line directive, exempts nothing
    "# flydsl-lint: noqa FLY111\n",  # codes without the colon: malformed, not a blanket
    "# flydsl-lint: noqa: generated\n",  # a colon without codes
    "s = '''\n# flydsl-lint: noqa\n'''\n",  # not a comment
    "# flydsl-lint: noqa-ish\n",
])
def test_what_is_no_exemption(text):
    source = SourceFile("k.py", text)
    spans = {2: [(0, 1 << 30)]} if text.startswith("s = ") else {}
    assert parse_file_exemptions(find_comments(source, spans), source.lines) == []


@pytest.mark.parametrize("line, skipped", [
    ("# flake8: noqa", True),
    ("# flake8=noqa", True),
    ("    # FLAKE8: NOQA: E501", True),  # flake8 skips the whole file even with codes
    ("#flake8: noqa", False),  # flake8's pattern wants the space
    ("x = 1  # flake8: noqa", False),  # only at the start of a line
    ("\f# flake8: noqa", True),  # a form feed is whitespace
    ("# fla\u212ae8: noqa", True),  # KELVIN SIGN matches `k` when the case is ignored
])
def test_flake8_file_noqa_is_flake8s(line, skipped):
    assert skipped_by_flake8(["x = 1", line]) is skipped


@pytest.mark.parametrize("text, skipped", [
    ("x = 1\r# flake8: noqa\r", True),
    ("x = 1\r\n  # FLAKE8=NOQA\r\n", True),
    ("x = 1\n# flake8:\nnoqa\n", False),  # the directive is one line
    ("x = 1\r# flake8:\rnoqa\r", False),
])
def test_flake8_file_noqa_on_each_line_ending(text, skipped):
    assert skipped_by_flake8(SourceFile("k.py", text).lines) is skipped


def test_exemption_suppresses_its_codes_only(lint):
    codes = [d.code for d in lint("# flydsl-lint: noqa: FLY111 -- ABI widths\n" + WRAPS)]
    assert "FLY111" not in codes and "FLY103" in codes


def test_blanket_exemption_suppresses_every_fly_code(lint):
    assert lint("# flydsl-lint: noqa\n" + WRAPS) == []


def test_host_filtering_noqa_still_gets_exemptions_applied(tmp_path):
    """flake8 filters `# noqa` itself but knows nothing of file exemptions."""
    text = "# flydsl-lint: noqa: FLY111 -- ABI widths\n" + WRAPS.replace("(T.index, n)", "(T.index, n)  # noqa: FLY103")
    diagnostics = Checker(make_settings(tmp_path)).check(SourceFile(str(tmp_path / "k.py"), text), apply_noqa=False)
    assert [(d.code, d.suppressed) for d in diagnostics if d.code in ("FLY111", "FLY103")] == [("FLY103", True)]


def test_exemption_without_reason_and_unused_codes_are_reported(lint):
    found = {d.code: d.message for d in lint("# flydsl-lint: noqa: FLY111, FLY301\n" + WRAPS)}
    assert found["FLY012"].startswith("`# flydsl-lint: noqa: FLY111, FLY301` keeps a boundary without a reason")
    assert found["FLY013"] == "Unused `noqa` code(s) FLY301: nothing in this file is flagged"


def test_flake8_skipped_file_is_not_even_parsed(tmp_path):
    target = tmp_path / "broken.py"
    target.write_text("# flake8: noqa\ndef broken(:\n")
    result = subprocess.run([sys.executable, "-m", "flydsl_lint.frontends.cli", "check", "--no-cache", str(target)],
                            capture_output=True, text=True)
    assert (result.returncode, result.stderr) == (0, ""), result
