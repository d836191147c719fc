"""FLY001-FLY003 are FLY011-FLY013: ruff's flynt rules own FLY002 (and reserve
FLY001), so no code of ours may be one of theirs. The old codes are accepted, with
a warning, for one release; a noqa code that may be ruff's is never flagged or removed."""

from __future__ import annotations

import json

import pytest

from flydsl_lint.rules import all_rules
from flydsl_lint.engine.metadata import load_redirects
from tests.conftest import fix_text, lint_text
from tests.test_cli_contract import cli

RUFF_NOQA = "def f(a, b):\n    return ' '.join((a, b))  # noqa: FLY002\n"


def test_no_code_of_ours_is_one_of_ruffs():
    assert not {"FLY001", "FLY002"} & set(all_rules())
    assert load_redirects() == {"FLY001": "FLY011", "FLY002": "FLY012", "FLY003": "FLY013"}


def test_fix_keeps_a_noqa_meant_for_ruff(tmp_path):
    (tmp_path / "k.py").write_text(RUFF_NOQA)
    result = cli("check", "--no-cache", "--select", "ALL", "--fix", "k.py", cwd=tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr
    assert (tmp_path / "k.py").read_text() == RUFF_NOQA


@pytest.mark.parametrize("noqa", ["FLY", "FLY0", "FLY00", "FLY002"])
def test_a_code_that_may_be_ruffs_is_never_called_unused(tmp_path, noqa):
    text = f"x = 1  # noqa: {noqa}\n"
    assert lint_text(text, tmp_path, select=("ALL",)) == []
    assert fix_text(text, tmp_path, select=("ALL",)) == text


def test_an_old_code_in_a_noqa_still_suppresses_and_is_redirected(tmp_path):
    text = "from flydsl.expr import arith\nm = arith.maximumf(a, b)  # noqa: FLY301, FLY002\n"
    found = lint_text(text, tmp_path, select=("FLY301", "FLY012", "FLY013", "FLY014"))
    assert [(d.code, d.message) for d in found] == [
        ("FLY014", "`FLY002` is the old code of `FLY012` (renamed so that no FLY code of ours is one of ruff's): "
                   "write `FLY012`; the old code is accepted until the next release")]
    fixed = fix_text(text, tmp_path, select=("FLY301", "FLY012", "FLY013", "FLY014"))
    assert fixed.endswith("# noqa: FLY301, FLY012\n")


def test_old_codes_in_the_configuration_warn_once_and_map_to_the_new_ones(tmp_path):
    (tmp_path / "k.py").write_text("from flydsl.expr import arith\nm = arith.maximumf(a, b)  # noqa: FLY301\n")
    (tmp_path / "pyproject.toml").write_text('[tool.flydsl-lint]\nignore = ["FLY002"]\n')
    result = cli("check", "--no-cache", "--output-format", "json", "k.py", cwd=tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr
    assert json.loads(result.stdout) == []  # FLY012 (the reasonless noqa) is ignored
    assert result.stderr.splitlines() == [
        f"flydsl-lint: warning: {tmp_path / 'pyproject.toml'}: `ignore`: FLY002 is now FLY012; "
        "the old code is accepted until the next release"]


def test_old_codes_on_the_command_line_map_to_the_new_ones(tmp_path):
    (tmp_path / "k.py").write_text("x = 1  # noqa: FLY301\n")
    result = cli("check", "--no-cache", "--output-format", "json", "--select", "FLY003,FLY301", "k.py", cwd=tmp_path)
    assert result.returncode == 1
    assert [row["code"] for row in json.loads(result.stdout)] == ["FLY013"]
    assert "the command line: FLY003 is now FLY013" in result.stderr
