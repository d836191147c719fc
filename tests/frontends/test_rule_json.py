"""Machine-readable rule pages and statistics, as ruff's: `rule [CODE | --all] --output-format json`,
`rules --output-format json` and `check --statistics --output-format json`."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from flydsl_lint.docs import render_rule
from flydsl_lint.rules import all_rules
from flydsl_lint.engine.metadata import load_metadata
from tests.test_cli_contract import LEGACY, cli

FIX_WORDS = {"Fix is always available.", "Fix is sometimes available.", "Fix is not available."}


def _json(tmp_path: Path, *args: str):
    result = cli(*args, cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


def test_one_rule_as_json_matches_its_metadata(tmp_path):
    meta = load_metadata()["FLY301"]
    page = _json(tmp_path, "rule", "fly301", "--output-format", "json")
    assert page["code"] == "FLY301" and page["name"] == meta.name and page["linter"] == "flydsl-lint"
    assert page["summary"] == meta.summary and page["message_formats"] == [meta.message]
    assert page["section"] == meta.section and page["explanation"] == render_rule(all_rules()["FLY301"])
    # A safe fix, withheld below FlyDSL 0.3.2: not every diagnostic carries one.
    assert (page["fix"], page["fix_applicability"], page["fix_since"]) == ("Fix is sometimes available.", "safe", "0.3.2")


def test_every_rule_as_json_in_code_order(tmp_path):
    pages = _json(tmp_path, "rule", "--all", "--output-format", "json")
    codes = [page["code"] for page in pages]
    assert codes == list(all_rules()) == sorted(codes)
    metadata = load_metadata()
    for page in pages:
        meta = metadata[page["code"]]
        assert page["fix_applicability"] == (meta.fix.value if meta.fix else None)
        assert page["fix"] in FIX_WORDS and (page["fix"] == "Fix is not available.") == (meta.fix is None)
        assert page["fix_since"] == meta.fix_since and page["explanation"].startswith(f"# {meta.code} {meta.name}\n")
    assert _json(tmp_path, "rules", "--output-format", "json") == pages


def test_every_rule_as_text_is_each_page_in_turn(tmp_path):
    result = cli("rule", "--all", cwd=tmp_path)
    assert result.returncode == 0
    metadata = load_metadata()
    for code in all_rules():
        assert f"\n# {code} {metadata[code].name}\n" in "\n" + result.stdout
    assert result.stdout == "\n".join(render_rule(rule) for rule in all_rules().values())
    assert cli("rule", "FLY301", cwd=tmp_path).stdout == render_rule(all_rules()["FLY301"])  # unchanged


@pytest.mark.parametrize("args", [("rule",), ("rule", "FLY301", "--all"), ("rule", "FLY999")])
def test_rule_usage_errors_exit_2_with_one_line(tmp_path, args):
    result = cli(*args, cwd=tmp_path)
    assert result.returncode == 2 and result.stdout == ""
    assert len(result.stderr.splitlines()) == 1 and result.stderr.startswith("flydsl-lint: error: ")


@pytest.mark.parametrize(
    "args, fixable",
    [((), {"FLY301": 1, "FLY111": 1}), (("--unfixable", "FLY301"), {"FLY301": 0, "FLY111": 1})],
)
def test_statistics_as_json(tmp_path, args, fixable):
    (tmp_path / "k.py").write_text(LEGACY)
    result = cli("check", "--no-cache", "--statistics", "--output-format", "json", *args, "k.py", cwd=tmp_path)
    assert result.returncode == 1, result.stderr
    rows = json.loads(result.stdout)
    names = {code: meta.name for code, meta in load_metadata().items()}
    assert rows == [{"code": code, "name": names[code], "count": 1, "fixable": fixable[code]}
                    for code in ("FLY301", "FLY111")]
    text = cli("check", "--no-cache", "--statistics", *args, "k.py", cwd=tmp_path).stdout
    assert [line.split("\t")[1] for line in text.splitlines()] == [row["code"] for row in rows]  # same order


def test_statistics_as_json_to_a_file_and_other_formats_keep_the_rows(tmp_path):
    (tmp_path / "k.py").write_text(LEGACY)
    cli("check", "--no-cache", "--statistics", "--output-format", "json", "-o", "stats.json", "k.py", cwd=tmp_path)
    assert {row["code"]: row["count"] for row in json.loads((tmp_path / "stats.json").read_text())} == {
        "FLY301": 1, "FLY111": 1}
    grouped = cli("check", "--no-cache", "--statistics", "--output-format", "grouped", "k.py", cwd=tmp_path).stdout
    metadata = load_metadata()
    assert grouped.splitlines() == [f"    1\t{code}\t[*] {metadata[code].name}" for code in ("FLY301", "FLY111")]
