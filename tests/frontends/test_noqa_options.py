"""ruff's `--ignore-noqa` (flake8's `--disable-noqa` for the plugin) and
`--isolated`, and the `-e`/`-n` short flags."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from tests.test_cli_contract import LEGACY, cli

# LEGACY's row 7 holds FLY301 and FLY111.
SUPPRESSED = "# flydsl-lint: noqa: FLY111 -- ABI widths\n" + LEGACY.replace(
    "fx.Int64(fx.Int64(a))", "fx.Int64(fx.Int64(a))  # noqa: FLY301 -- NaN max kept")


def _codes(tmp_path: Path, *args: str, name: str = "k.py") -> list[str]:
    result = cli("check", "--output-format", "json", *args, name, cwd=tmp_path)
    assert result.returncode in (0, 1), result.stderr
    return sorted(row["code"] for row in json.loads(result.stdout))


def _flake8(tmp_path: Path, *args: str) -> list[str]:
    result = subprocess.run([sys.executable, "-m", "flake8", "--select", "FLY", "--format", "%(code)s", *args, "k.py"],
                            cwd=tmp_path, capture_output=True, text=True)
    assert result.returncode in (0, 1), result.stderr
    return sorted(result.stdout.splitlines())


def test_ignore_noqa_reports_what_directives_suppress(tmp_path):
    (tmp_path / "k.py").write_text(SUPPRESSED)
    assert _codes(tmp_path, "-n") == []
    # Nothing is suppressed, so no directive is judged unused or reasonless (FLY012/FLY013).
    assert _codes(tmp_path, "-n", "--ignore-noqa") == ["FLY111", "FLY301"]


def test_ignore_noqa_is_part_of_the_cache_key(tmp_path):
    (tmp_path / "k.py").write_text(SUPPRESSED)
    assert _codes(tmp_path) == []  # fills the cache
    assert _codes(tmp_path, "--ignore-noqa") == ["FLY111", "FLY301"]
    assert _codes(tmp_path) == []


def test_ignore_noqa_checks_a_flake8_skipped_file(tmp_path):
    (tmp_path / "k.py").write_text("# flake8: noqa\n" + LEGACY)
    assert _codes(tmp_path, "-n") == []
    assert _codes(tmp_path, "-n", "--ignore-noqa") == ["FLY111", "FLY301"]


def test_flake8_disable_noqa_drops_file_exemptions_too(tmp_path):
    (tmp_path / "k.py").write_text(SUPPRESSED)
    assert _flake8(tmp_path, "--isolated") == []
    assert _flake8(tmp_path, "--isolated", "--disable-noqa") == ["FLY111", "FLY301"]


def test_isolated_reads_no_configuration(tmp_path):
    (tmp_path / "pyproject.toml").write_text('[tool.flydsl-lint]\nignore = ["FLY1"]\n')
    (tmp_path / "k.py").write_text(LEGACY)
    assert _codes(tmp_path, "-n") == ["FLY301"]
    assert _codes(tmp_path, "-n", "--isolated") == ["FLY111", "FLY301"]


def test_isolated_and_config_exclude_each_other(tmp_path):
    (tmp_path / "k.py").write_text(LEGACY)
    result = cli("check", "--isolated", "--config", "pyproject.toml", "k.py", cwd=tmp_path)
    assert (result.returncode, result.stderr.strip()) == (
        2, "flydsl-lint: error: --config and --isolated exclude each other")


def test_short_flags(tmp_path):
    (tmp_path / "k.py").write_text(LEGACY)
    result = cli("check", "-e", "-n", "k.py", cwd=tmp_path)
    assert result.returncode == 0 and "FLY301" in result.stdout
    assert not (tmp_path / ".flydsl-lint-cache").exists()
