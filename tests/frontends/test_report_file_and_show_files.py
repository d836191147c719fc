"""`check -o/--output-file` (the report to a file, as CI uploads want it),
`check --show-files` (what discovery picks, to debug exclusions) and
`check --show-settings` (what configuration applies to a file), as in ruff."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

from tests.test_cli_contract import FIXED, LEGACY, cli


def test_the_report_goes_to_the_file_and_only_there(tmp_path: Path) -> None:
    (tmp_path / "k.py").write_text(LEGACY)
    to_stdout = cli("check", "--no-cache", "--output-format", "json", ".", cwd=tmp_path)
    to_file = cli("check", "--no-cache", "--output-format", "json", "-o", "reports/lint.json", ".", cwd=tmp_path)
    assert (to_file.returncode, to_file.stdout) == (to_stdout.returncode, "") == (1, "")
    report = tmp_path / "reports" / "lint.json"
    assert report.read_text() == to_stdout.stdout and json.loads(report.read_text())
    assert stat.S_IMODE(report.stat().st_mode) == 0o666 & ~_umask()  # a new file, not mkstemp's 0600

    report.chmod(0o640)  # a second run replaces the report and keeps its mode
    (tmp_path / "k.py").write_text(FIXED)
    again = cli("check", "--no-cache", "--output-format", "json", "--output-file", str(report), ".", cwd=tmp_path)
    assert again.returncode == 0 and json.loads(report.read_text()) == []
    assert stat.S_IMODE(report.stat().st_mode) == 0o640
    assert [p.name for p in report.parent.iterdir()] == ["lint.json"]  # no temporary left behind


def test_statistics_and_fix_reports_go_to_the_file_too(tmp_path: Path) -> None:
    (tmp_path / "k.py").write_text(LEGACY)
    counted = cli("check", "--no-cache", "--statistics", "-o", "stats.txt", ".", cwd=tmp_path)
    assert counted.returncode == 1 and counted.stdout == ""
    assert "FLY" in (tmp_path / "stats.txt").read_text()
    fixed = cli("check", "--no-cache", "--fix", "-o", "after-fix.txt", ".", cwd=tmp_path)
    assert (fixed.returncode, fixed.stdout) == (0, "") and (tmp_path / "k.py").read_text() == FIXED
    assert (tmp_path / "after-fix.txt").read_text() == "Found 2 errors (2 fixed, 0 remaining).\n"


def test_a_folder_as_report_is_refused_before_anything_is_fixed(tmp_path: Path) -> None:
    (tmp_path / "k.py").write_text(LEGACY)
    (tmp_path / "out").mkdir()
    refused = cli("check", "--no-cache", "--fix", "-o", "out", ".", cwd=tmp_path)
    assert (refused.returncode, refused.stderr) == (2, "flydsl-lint: error: out: is a folder; --output-file wants a file\n")
    assert (tmp_path / "k.py").read_text() == LEGACY


def test_an_unwritable_report_is_one_line_and_exit_2(tmp_path: Path) -> None:
    (tmp_path / "k.py").write_text(LEGACY)
    (tmp_path / "blocker").write_text("a file where a folder should be")
    failed = cli("check", "--no-cache", "-o", "blocker/report.txt", ".", cwd=tmp_path)
    assert failed.returncode == 2 and failed.stdout == ""
    assert failed.stderr.count("\n") == 1 and failed.stderr.startswith("flydsl-lint: error: blocker/report.txt: cannot write")
    assert (tmp_path / "blocker").read_text() == "a file where a folder should be"


def test_show_files_lists_what_discovery_picks(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text('[tool.flydsl-lint]\nextend-exclude = ["generated"]\n')
    for name in ("a.py", "pkg/b.py", "generated/c.py", ".venv/d.py", "notes.txt"):
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(LEGACY)
    shown = cli("check", "--show-files", cwd=tmp_path)
    assert shown.returncode == 0, shown.stderr
    assert shown.stdout.splitlines() == [str((tmp_path / name).resolve()) for name in ("a.py", "pkg/b.py")]
    assert not (tmp_path / ".flydsl-lint-cache").exists()  # nothing was checked

    missing = cli("check", "--show-files", "a.py", "nowhere.py", cwd=tmp_path)
    assert missing.returncode == 2 and missing.stdout.splitlines() == [str((tmp_path / "a.py").resolve())]
    assert missing.stderr == "flydsl-lint: error: nowhere.py: no such file or directory\n"


def test_show_settings_prints_what_applies_to_a_file(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.delenv("FLYDSL_LINT_TARGET_VERSION")  # the config's target-version is what this shows
    (tmp_path / "pyproject.toml").write_text(
        '[tool.flydsl-lint]\nselect = ["FLY3"]\nignore = ["FLY302"]\ntarget-version = "0.5.0"\n'
        'per-file-ignores = {"pkg/*" = ["FLY36"]}\n')
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "k.py").write_text(LEGACY)
    shown = cli("check", "--show-settings", "--ignore", "FLY31", "pkg/k.py", cwd=tmp_path)
    assert shown.returncode == 0, shown.stderr
    settings = dict(line.split(" = ", 1) for line in shown.stdout.splitlines() if not line.startswith("#"))
    values = {key: json.loads(value) for key, value in settings.items()}
    assert values["config-file"] == str(tmp_path / "pyproject.toml")
    assert (values["select"], values["ignore"]) == (["FLY3"], ["FLY302", "FLY31"])  # the command line's too
    assert (values["target-version"], values["target-version-source"]) == ("0.5.0", "target-version in pyproject.toml")
    assert values["per-file-ignores"] == {"pkg/*": ["FLY36"]} and values["ignored-here"] == ["FLY36"]
    listed = [line.split()[0] for line in cli("rules", cwd=tmp_path).stdout.splitlines()]
    # FLY353 is advisory: a prefix does not select it (tests/frontends/test_default_selection.py).
    expected = [code for code in listed if code.startswith("FLY3") and code not in ("FLY302", "FLY353")
                and not code.startswith("FLY31")]
    assert values["enabled-rules"] == expected and "FLY361" in expected
    assert (values["excluded"], values["tuned-kernel"]) == (False, False)

    missing = cli("check", "--show-settings", "nowhere.py", cwd=tmp_path)
    assert (missing.returncode, missing.stderr) == (2, "flydsl-lint: error: nowhere.py: no such file or directory\n")


def _umask() -> int:
    current = os.umask(0)
    os.umask(current)
    return current
