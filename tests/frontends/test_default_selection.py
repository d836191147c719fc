"""Advisory rules (their own verdict: "it may stay; note why") are off by default.

They run only when selected by their exact code (`select`/`extend-select`,
`--select`/`--extend-select`) or by `ALL`; a prefix (`FLY`, `FLY2`, `FLY20`)
does not enable them, so `select = ["FLY"]` written out is the default set.
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from flydsl_lint.docs import render_rule
from flydsl_lint.rules import all_rules
from flydsl_lint.engine.metadata import load_metadata
from tests.test_cli_contract import cli

# FLY203 (a raw-address buffer resource), FLY202 (a manual-offset load), FLY353 (an
# !llvm.ptr from an LDS offset): one of each.
KERNEL = """\
from flydsl.expr import buffer_ops

rsrc = buffer_ops.create_buffer_resource_from_addr(addr)
def load(r, i):
    return buffer_ops.buffer_load(r, i * 4, vec_width=1)
lds_ptr = buffer_ops.create_llvm_ptr(lds_addr, address_space=3)
"""
ADVISORY = {"FLY203", "FLY353"}


def _codes(tmp_path, *args: str, config: str | None = None) -> set[str]:
    (tmp_path / "k.py").write_text(KERNEL)
    if config is not None:
        (tmp_path / "pyproject.toml").write_text(f"[tool.flydsl-lint]\n{config}\n")
    result = cli("check", "--no-cache", "--output-format", "json", *args, "k.py", cwd=tmp_path)
    assert result.returncode in (0, 1), result.stderr
    return {row["code"] for row in json.loads(result.stdout)}


def test_the_advisory_rules_are_exactly_the_ones_whose_verdict_lets_the_code_stay():
    metadata = load_metadata()
    assert {code for code, meta in metadata.items() if not meta.default} == ADVISORY
    for code in ADVISORY:
        assert "may stay" in metadata[code].message


def test_advisory_rules_are_off_by_default(tmp_path):
    assert _codes(tmp_path) == {"FLY202"}


@pytest.mark.parametrize("config", ['select = ["FLY"]', 'select = ["FLY2", "FLY3"]', 'select = ["FLY20", "FLY35"]'])
def test_a_prefix_selection_does_not_enable_them(tmp_path, config):
    assert _codes(tmp_path, config=config) == {"FLY202"}


@pytest.mark.parametrize(
    "args, config, expected",
    [
        (("--select", "FLY203"), None, {"FLY203"}),
        (("--extend-select", "FLY203"), None, {"FLY202", "FLY203"}),
        (("--extend-select", "FLY203,FLY353"), None, {"FLY202", "FLY203", "FLY353"}),
        ((), 'extend-select = ["FLY353"]', {"FLY202", "FLY353"}),
        ((), 'select = ["ALL"]', {"FLY202", "FLY203", "FLY353"}),
        ((), 'select = ["ALL"]\nignore = ["FLY2"]', {"FLY353"}),
        (("--select", "ALL", "--ignore", "FLY203"), None, {"FLY202", "FLY353"}),
    ],
)
def test_an_exact_code_or_all_enables_them(tmp_path, args, config, expected):
    assert _codes(tmp_path, *args, config=config) == expected


def test_show_settings_lists_them_only_when_enabled(tmp_path):
    (tmp_path / "k.py").write_text(KERNEL)
    for args, enabled in (((), False), (("--extend-select", "FLY203"), True)):
        result = cli("check", "--show-settings", *args, "k.py", cwd=tmp_path)
        line = next(line for line in result.stdout.splitlines() if line.startswith("enabled-rules = "))
        assert ("FLY203" in json.loads(line.partition(" = ")[2])) is enabled


def test_rule_page_and_rules_listing_say_off_by_default(tmp_path):
    rules = all_rules()
    for code in ADVISORY:
        page = render_rule(rules[code])
        assert "Off by default" in page and f'extend-select = ["{code}"]' in page
    assert "Off by default" not in render_rule(rules["FLY202"])
    listing = cli("rules", cwd=tmp_path).stdout.splitlines()
    marked = {line.split()[0] for line in listing if "(off by default)" in line}
    assert marked == ADVISORY


@pytest.mark.parametrize("select, expected", [
    ("FLY", {"FLY202"}), ("FLY2", {"FLY202"}), ("FLY203", {"FLY203"}), ("FLY202,FLY203", {"FLY202", "FLY203"})])
def test_flake8_runs_an_advisory_rule_only_when_its_code_is_selected(tmp_path, select, expected):
    pytest.importorskip("flake8")
    (tmp_path / "k.py").write_text(KERNEL)
    result = subprocess.run([sys.executable, "-m", "flake8", "--isolated", "--select", select, "--format",
                             "%(code)s", "k.py"], cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert result.returncode == 1, result.stderr
    assert set(result.stdout.split()) == expected
