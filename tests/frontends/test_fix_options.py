"""ruff's fix and reporting options: `fixable`/`unfixable`/`extend-fixable`,
`--fix-only`, `--exit-non-zero-on-fix`, `-q/--quiet`, `-s/--silent`, and
`--exclude`/`--extend-exclude` on the command line."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.test_cli_contract import FIXED, LEGACY, cli

# LEGACY has two findings with safe fixes: FLY301 (row 7, arith.maximumf -> fx.max)
# and FLY111 (row 7, fx.Int64(fx.Int64(a)) -> fx.Int64(a)).


def _fixes(tmp_path: Path, *args: str) -> dict[str, str | None]:
    """code -> the fix's applicability (None: reported without a fix)."""
    result = cli("check", "--no-cache", "--output-format", "json", *args, "k.py", cwd=tmp_path)
    assert result.returncode == 1, result.stderr
    return {row["code"]: row["fix"] and row["fix"]["applicability"] for row in json.loads(result.stdout)}


@pytest.mark.parametrize(
    "args, expected",
    [
        ((), {"FLY301": "safe", "FLY111": "safe"}),
        (("--unfixable", "FLY301"), {"FLY301": None, "FLY111": "safe"}),
        (("--fixable", "FLY1"), {"FLY301": None, "FLY111": "safe"}),
        (("--fixable", "FLY1", "--extend-fixable", "FLY301"), {"FLY301": "safe", "FLY111": "safe"}),
        # The most specific prefix wins, as for select/ignore.
        (("--fixable", "FLY3", "--unfixable", "FLY30"), {"FLY301": None, "FLY111": None}),
        (("--unfixable", "FLY3", "--extend-fixable", "FLY301"), {"FLY301": "safe", "FLY111": "safe"}),
    ],
)
def test_fixable_and_unfixable_on_the_command_line(tmp_path, args, expected):
    (tmp_path / "k.py").write_text(LEGACY)
    assert _fixes(tmp_path, *args) == expected


def test_unfixable_in_the_config_is_reported_and_never_fixed(tmp_path):
    (tmp_path / "pyproject.toml").write_text('[tool.flydsl-lint]\nunfixable = ["FLY301"]\n')
    (tmp_path / "k.py").write_text(LEGACY)
    text = cli("check", "--no-cache", "k.py", cwd=tmp_path).stdout
    assert "k.py:7:12: FLY301 Legacy" in text and "FLY301 [*]" not in text  # reported, without the fix marker
    assert "FLY111 [*]" in text and "[*] 1 fixable with the `--fix` option." in text
    fixed = cli("check", "--no-cache", "--fix", "k.py", cwd=tmp_path)
    assert fixed.returncode == 1 and "arith.maximumf(a, b), fx.Int64(a)" in (tmp_path / "k.py").read_text()
    assert "(1 fixed, 1 remaining)" in fixed.stdout


def test_a_cached_result_follows_the_fixable_settings(tmp_path):
    (tmp_path / "k.py").write_text(LEGACY)
    first = cli("check", "--output-format", "json", "k.py", cwd=tmp_path)
    assert all(row["fix"] for row in json.loads(first.stdout))
    second = cli("check", "--output-format", "json", "--unfixable", "FLY", "k.py", cwd=tmp_path)
    assert [row["fix"] for row in json.loads(second.stdout)] == [None, None]


def test_a_bad_fixable_code_is_one_clear_error(tmp_path):
    (tmp_path / "pyproject.toml").write_text('[tool.flydsl-lint]\nunfixable = ["E501"]\n')
    (tmp_path / "k.py").write_text(LEGACY)
    result = cli("check", "k.py", cwd=tmp_path)
    assert result.returncode == 2 and result.stdout == ""
    assert result.stderr.strip().splitlines() == [
        f"flydsl-lint: error: {tmp_path / 'pyproject.toml'}: `unfixable` has 'E501', which is not a FLY code or prefix"
    ]


def test_fix_only_fixes_and_ignores_what_is_left(tmp_path):
    (tmp_path / "k.py").write_text(LEGACY)
    result = cli("check", "--no-cache", "--fix-only", "--unfixable", "FLY301", "k.py", cwd=tmp_path)
    # FLY301 is left (unfixable): --fix-only neither reports it nor fails on it.
    assert (result.returncode, result.stdout) == (0, "Fixed 1 error.\n")
    assert "arith.maximumf(a, b), fx.Int64(a)" in (tmp_path / "k.py").read_text()
    again = cli("check", "--no-cache", "--fix-only", "--unfixable", "FLY301", "k.py", cwd=tmp_path)
    assert (again.returncode, again.stdout) == (0, "No errors fixed.\n")
    told = cli("check", "--no-cache", "--fix-only", "--exit-non-zero-on-fix", "k.py", cwd=tmp_path)
    assert (told.returncode, told.stdout) == (1, "Fixed 1 error.\n") and (tmp_path / "k.py").read_text() == FIXED


def test_exit_non_zero_on_fix_with_fix(tmp_path):
    (tmp_path / "k.py").write_text(LEGACY)
    plain = cli("check", "--no-cache", "--fix", "k.py", cwd=tmp_path)
    assert plain.returncode == 0  # everything fixed, nothing left
    (tmp_path / "k.py").write_text(LEGACY)
    told = cli("check", "--no-cache", "--fix", "--exit-non-zero-on-fix", "k.py", cwd=tmp_path)
    assert told.returncode == 1 and (tmp_path / "k.py").read_text() == FIXED
    clean = cli("check", "--no-cache", "--fix", "--exit-non-zero-on-fix", "k.py", cwd=tmp_path)
    assert clean.returncode == 0  # nothing to fix the second time
    zero = cli("check", "--no-cache", "--fix", "--exit-non-zero-on-fix", "--exit-zero", "k.py", cwd=tmp_path)
    assert zero.returncode == 0


def test_quiet_prints_diagnostics_and_nothing_else(tmp_path):
    (tmp_path / "k.py").write_text(LEGACY)
    (tmp_path / "clean.py").write_text("x = 1\n")
    loud = cli("check", "--no-cache", "k.py", cwd=tmp_path).stdout.splitlines()
    quiet = cli("check", "--no-cache", "-q", "k.py", cwd=tmp_path)
    assert quiet.returncode == 1 and quiet.stdout.splitlines() == [line for line in loud if line.startswith("k.py:")]
    assert len(quiet.stdout.splitlines()) == 2
    assert cli("check", "--no-cache", "--quiet", "clean.py", cwd=tmp_path).stdout == ""
    diff = cli("check", "--no-cache", "-q", "--diff", "k.py", cwd=tmp_path)
    assert diff.returncode == 1 and diff.stdout.startswith("---") and diff.stderr == ""


def test_silent_prints_nothing_but_errors(tmp_path):
    (tmp_path / "k.py").write_text(LEGACY)
    silent = cli("check", "--no-cache", "-s", "k.py", cwd=tmp_path)
    assert (silent.returncode, silent.stdout, silent.stderr) == (1, "", "")
    fixed = cli("check", "--no-cache", "--silent", "--fix", "k.py", cwd=tmp_path)
    assert (fixed.returncode, fixed.stdout) == (0, "") and (tmp_path / "k.py").read_text() == FIXED
    (tmp_path / "bad.py").write_bytes(b"\xff\xfe not utf-8 \x80\n")
    broken = cli("check", "--no-cache", "-s", "bad.py", cwd=tmp_path)
    assert broken.returncode == 2 and broken.stdout == "" and "bad.py" in broken.stderr


def test_exclude_patterns_on_the_command_line(tmp_path):
    for name in ("k.py", "generated/g.py", "vendor/v.py"):
        (tmp_path / name).parent.mkdir(exist_ok=True)
        (tmp_path / name).write_text(LEGACY)

    def checked(*args: str) -> list[str]:
        rows = json.loads(cli("check", "--no-cache", "--output-format", "json", *args, ".", cwd=tmp_path).stdout)
        return sorted({Path(row["filename"]).relative_to(tmp_path).as_posix() for row in rows})

    assert checked() == ["generated/g.py", "k.py", "vendor/v.py"]
    assert checked("--extend-exclude", "generated,vendor") == ["k.py"]
    assert checked("--exclude", "vendor") == ["generated/g.py", "k.py"]
    # --extend-exclude adds to the configured list; --exclude replaces `exclude` only.
    (tmp_path / "pyproject.toml").write_text('[tool.flydsl-lint]\nextend-exclude = ["vendor"]\n')
    assert checked("--extend-exclude", "generated") == ["k.py"]
    assert checked("--exclude", "k.py") == ["generated/g.py"]


def test_output_format_from_the_config_and_the_environment(tmp_path, monkeypatch):
    (tmp_path / "pyproject.toml").write_text('[tool.flydsl-lint]\noutput-format = "pylint"\n')
    (tmp_path / "k.py").write_text(LEGACY)
    monkeypatch.delenv("FLYDSL_LINT_OUTPUT_FORMAT", raising=False)
    configured = cli("check", "--no-cache", "k.py", cwd=tmp_path)
    assert configured.returncode == 1
    assert sorted(line.split(" ", 2)[:2] for line in configured.stdout.splitlines()) == [
        ["k.py:7:", "[FLY111]"], ["k.py:7:", "[FLY301]"]]  # pylint lines, no summary
    # The environment variable beats the config; the command line beats both.
    monkeypatch.setenv("FLYDSL_LINT_OUTPUT_FORMAT", "json")
    assert len(json.loads(cli("check", "--no-cache", "k.py", cwd=tmp_path).stdout)) == 2
    grouped = cli("check", "--no-cache", "--output-format", "grouped", "k.py", cwd=tmp_path).stdout
    assert grouped.splitlines()[0] == "k.py:"


@pytest.mark.parametrize(
    "config, variable, message",
    [
        ('output-format = "xml"', None, "pyproject.toml: `output-format` = 'xml' is not one of"),
        ("output-format = 1", None, "pyproject.toml: `output-format` must be a string"),
        ("", "xml", "$FLYDSL_LINT_OUTPUT_FORMAT = 'xml' is not one of"),
    ],
)
def test_a_bad_output_format_setting_is_one_clear_error(tmp_path, monkeypatch, config, variable, message):
    (tmp_path / "pyproject.toml").write_text(f"[tool.flydsl-lint]\n{config}\n")
    (tmp_path / "k.py").write_text(LEGACY)
    if variable is None:
        monkeypatch.delenv("FLYDSL_LINT_OUTPUT_FORMAT", raising=False)
    else:
        monkeypatch.setenv("FLYDSL_LINT_OUTPUT_FORMAT", variable)
    result = cli("check", "--no-cache", "k.py", cwd=tmp_path)
    assert result.returncode == 2 and result.stdout == ""
    assert len(result.stderr.strip().splitlines()) == 1 and message in result.stderr


def test_fix_only_keeps_a_machine_format_parsable(tmp_path):
    (tmp_path / "k.py").write_text(LEGACY)
    result = cli("check", "--no-cache", "--fix-only", "--output-format", "json", "k.py", cwd=tmp_path)
    assert (result.returncode, json.loads(result.stdout), result.stderr) == (0, [], "Fixed 2 errors.\n")
    (tmp_path / "k.py").write_text(LEGACY)
    sarif = cli("check", "--no-cache", "--fix-only", "-q", "--output-format", "sarif", "k.py", cwd=tmp_path)
    assert json.loads(sarif.stdout)["runs"][0]["results"] == [] and sarif.stderr == ""
