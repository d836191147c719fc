"""The CLI habits a ruff user brings (issue 27, item 6)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from flydsl_lint.frontends.cli import main

ALIAS = "from flydsl.expr import arith\nv = arith._to_raw(x)\n"  # FLY104, a safe fix
WAIT = "from flydsl.expr import rocdl\nrocdl.s_waitcnt(0)\n"  # FLY361: unsafe without a target arch


def _run(capsys, *argv: str) -> tuple[int, str, str]:
    capsys.readouterr()
    status = main(["check", "--no-cache", *argv] if argv and argv[0] != "--" else list(argv[1:]))
    out, err = capsys.readouterr()
    return status, out, err


def test_paths_after_options_are_paths(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    Path("a.py").write_text(ALIAS)
    Path("b.py").write_text(ALIAS)
    status, out, _ = _run(capsys, "a.py", "--select", "FLY104", "b.py", "-q")
    assert status == 1
    assert [line.split(":")[0] for line in out.splitlines()] == ["a.py", "b.py"]
    with pytest.raises(SystemExit) as exited:
        main(["check", "a.py", "--no-such-option", "b.py"])
    assert exited.value.code == 2
    assert "unrecognized arguments: --no-such-option" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main(["rules", "extra"])  # a command without paths still refuses leftovers


def test_show_fixes_without_fix_writes_nothing_and_claims_no_fix(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    Path("a.py").write_text(ALIAS)
    status, out, err = _run(capsys, "--show-fixes", "a.py")
    assert Path("a.py").read_text() == ALIAS
    assert "fixed" not in out
    assert "Found 1 error.\n" in out and "[*] 1 fixable with the `--fix` option." in out
    assert "Would fix 1 error." in err
    assert status == 1


def test_config_file_with_a_tool_table_or_bare_keys(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    Path("a.py").write_text(ALIAS + WAIT)
    Path("tool.toml").write_text('[tool.flydsl-lint]\nselect = ["FLY361"]\n')
    Path("bare.toml").write_text('select = ["FLY361"]\n')
    for config in ("tool.toml", "bare.toml"):
        status, out, err = _run(capsys, "--config", config, "-q", "a.py")
        assert (status, err) == (1, ""), config
        assert [line.split(" ")[1] for line in out.splitlines()] == ["FLY361"], config
    Path("bad.toml").write_text('[tool.flydsl-lint]\nselekt = ["FLY361"]\n')
    status, _, err = _run(capsys, "--config", "bad.toml", "a.py")
    assert status == 2 and "bad.toml" in err and "selekt" in err


def test_target_arch_flag_makes_waitcnt_fixes_safe_and_the_summary_says_so(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    Path("w.py").write_text(WAIT)
    status, out, _ = _run(capsys, "--isolated", "w.py")
    assert "1 unsafe fix would be safe with a target arch: set `target-arch` (or --target-arch gfx942,...)." in out
    assert "[*]" not in out
    status, out, _ = _run(capsys, "--isolated", "--target-arch", "gfx950", "w.py")
    assert "w.py:2:1: FLY361 [*]" in out and "target arch" not in out
    status, _, err = _run(capsys, "--isolated", "--target-arch", "gfx9x", "w.py")
    assert status == 2 and err == "flydsl-lint: error: --target-arch: 'gfx9x' is not a gfx target like gfx942\n"


def test_rule_by_name_and_by_redirected_code(capsys):
    status, by_name, _ = _run(capsys, "--", "rule", "raw-value-helper")
    assert status == 0 and by_name.startswith("# FLY104 raw-value-helper")
    status, redirected, err = _run(capsys, "--", "rule", "FLY001")
    assert status == 0 and redirected.startswith("# FLY011 ") and err == "flydsl-lint: note: FLY001 is now FLY011\n"
    status, _, err = _run(capsys, "--", "rule", "no-such-rule")
    assert status == 2 and "unknown rule 'no-such-rule'" in err


def test_rules_has_a_legend_telling_unsafe_from_display_only(capsys):
    from flydsl_lint.engine.metadata import load_metadata

    status, out, _ = _run(capsys, "--", "rules")
    legend, *lines = out.splitlines()
    assert "[*] safe" in legend and "[~] unsafe" in legend and "[.] display-only" in legend
    by_code = {line.split()[0]: line for line in lines}
    for code, meta in load_metadata().items():
        marker = {None: None, "safe": "[*]", "unsafe": "[~]", "display-only": "[.]"}[meta.fix.value if meta.fix else None]
        assert (marker or "§") in by_code[code].split()[1], code


def test_server_help_explains_the_server():
    shown = subprocess.run([sys.executable, "-m", "flydsl_lint.frontends.cli", "server", "--help"],
                           capture_output=True, text=True, timeout=60)
    assert shown.returncode == 0
    assert "Language Server Protocol" in shown.stdout and "stdin" in shown.stdout and "flydsl-lint[lsp]" in shown.stdout


def test_json_url_is_absolute_or_absent(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    Path("a.py").write_text(ALIAS)
    monkeypatch.setenv("FLYDSL_LINT_DOCS_URL", "https://example.org/flydsl-lint/docs/rules/")
    _, out, _ = _run(capsys, "--output-format", "json", "a.py")
    assert json.loads(out)[0]["url"] == "https://example.org/flydsl-lint/docs/rules/FLY104.md"
    monkeypatch.delenv("FLYDSL_LINT_DOCS_URL")
    import flydsl_lint.frontends.output as output

    monkeypatch.setattr(output, "_docs_uri", lambda code: None)  # an installed wheel: no pages on disk
    _, out, _ = _run(capsys, "--output-format", "json", "a.py")
    assert json.loads(out)[0]["url"] is None
    _, out, _ = _run(capsys, "--output-format", "rdjson", "a.py")
    assert json.loads(out)["diagnostics"][0]["code"] == {"value": "FLY104"}
