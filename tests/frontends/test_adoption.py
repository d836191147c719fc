"""`--add-noqa` and `--diff-base`: adopting the linter without fixing everything first."""

from __future__ import annotations

import ast
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from flydsl_lint.engine.source import SourceFile
from flydsl_lint.frontends.add_noqa import add_noqa_to_source
from flydsl_lint.frontends.diff_base import parse_added_lines
from tests.conftest import lint_text

ROOT = Path(__file__).resolve().parents[2]
HEADER = "import flydsl.expr as fx\nfrom flydsl.expr import arith\nfrom flydsl.expr.arith import ArithValue\nfrom flydsl.expr.typing import T\n"


def cli(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "NO_COLOR": "1"}
    return subprocess.run([sys.executable, "-m", "flydsl_lint.frontends.cli", *args], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=120)


def add(text: str, tmp_path: Path, reason: str = "TODO: migrate") -> str:
    diagnostics = lint_text(text, tmp_path, select=("FLY1",))
    new_text, _ = add_noqa_to_source(SourceFile(str(tmp_path / "kernel.py"), text), diagnostics, reason)
    assert ast.dump(ast.parse(new_text)) == ast.dump(ast.parse(text))
    assert lint_text(new_text, tmp_path, select=("FLY1",)) == [], new_text
    return new_text


def test_add_noqa_writes_reasoned_directives(tmp_path):
    text = HEADER + "a = ArithValue(x)\nb = fx.Int64(fx.Int64(x))   \n"
    assert add(text, tmp_path).splitlines()[4:] == [
        "a = ArithValue(x)  # noqa: FLY101 -- TODO: migrate",
        "b = fx.Int64(fx.Int64(x))  # noqa: FLY111 -- TODO: migrate",
    ]


def test_add_noqa_merges_codes_and_keeps_existing_reason_and_comments(tmp_path):
    text = HEADER + (
        "a = ArithValue(fx.Int64(fx.Int64(x)))  # noqa: FLY101 -- raw value from the old helper\n"
        "b = ArithValue(x)  # noqa: E501\n"
        "c = ArithValue(x)  # why it is here\n"
        "d = ArithValue(x) + arith.index_cast(T.index, x)\n"
    )
    lines = add(text, tmp_path, reason="legacy").splitlines()[4:]
    assert lines == [
        "a = ArithValue(fx.Int64(fx.Int64(x)))  # noqa: FLY101, FLY111 -- raw value from the old helper",
        "b = ArithValue(x)  # noqa: E501, FLY101 -- legacy",
        "c = ArithValue(x)  # why it is here  # noqa: FLY101 -- legacy",
        "d = ArithValue(x) + arith.index_cast(T.index, x)  # noqa: FLY101, FLY103 -- legacy",
    ]


def test_add_noqa_on_multiline_statements_uses_rows_flake8_accepts(tmp_path):
    text = HEADER + (
        "a = fx.Int64(\n    fx.Int64(x))\n"  # finding on row 5: the comment goes on row 5
        "b = fx.Int64(fx.Int64(x)) + \\\n    1\n"  # backslash row cannot take a comment: row 8
        's = """one\ntwo""" + str(ArithValue(x))\n'  # finding inside a string's rows: its last row
        'u = str(ArithValue(x)) + """one\ntwo"""\n'  # row 11 ends inside the string: row 12
    )
    lines = add(text, tmp_path).splitlines()
    assert lines[4] == "a = fx.Int64(  # noqa: FLY111 -- TODO: migrate"
    assert lines[6] == "b = fx.Int64(fx.Int64(x)) + \\"
    assert lines[7] == "    1  # noqa: FLY111 -- TODO: migrate"
    assert lines[9] == 'two""" + str(ArithValue(x))  # noqa: FLY101 -- TODO: migrate'
    assert lines[10] == 'u = str(ArithValue(x)) + """one'
    assert lines[11] == 'two"""  # noqa: FLY101 -- TODO: migrate'


def test_add_noqa_keeps_crlf_and_is_idempotent(tmp_path):
    text = (HEADER + "a = ArithValue(x)\nb = 1\n").replace("\n", "\r\n")
    once = add(text, tmp_path)
    assert once.count("\r\n") == text.count("\r\n") and "\n" not in once.replace("\r\n", "")
    assert add(once, tmp_path) == once


def test_add_noqa_cli_writes_files_and_later_checks_pass(tmp_path):
    (tmp_path / "k.py").write_text(HEADER + "a = ArithValue(x)\nb = fx.Int64(fx.Int64(x))\n")
    result = cli("check", "--select", "FLY1", "--add-noqa", "--noqa-reason", "kept for 0.3 users", "k.py", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert "Added 2 noqa directives in 1 file." in result.stderr
    assert "# noqa: FLY101 -- kept for 0.3 users" in (tmp_path / "k.py").read_text()
    assert cli("check", "--select", "FLY1", "k.py", cwd=tmp_path).returncode == 0
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".k.py")] == []  # no temp files
    flake8 = subprocess.run([sys.executable, "-m", "flake8", "--isolated", "--select", "FLY1", "k.py"],
                            cwd=tmp_path, capture_output=True, text=True)
    assert flake8.returncode == 0, flake8.stdout


def test_add_noqa_refuses_fix(tmp_path):
    (tmp_path / "k.py").write_text(HEADER)
    assert cli("check", "--add-noqa", "--fix", "k.py", cwd=tmp_path).returncode == 2


def test_parse_added_lines(tmp_path):
    diff = (
        "diff --git a/k.py b/k.py\n--- a/k.py\n+++ b/k.py\n@@ -3 +3,2 @@\n-x\n+y\n+++ z\n"
        "@@ -10,2 +11,0 @@\n-gone\n-gone\n"
        "diff --git a/new.py b/new.py\nnew file mode 100644\n--- /dev/null\n+++ b/new.py\n@@ -0,0 +1 @@\n+a\n"
        "diff --git a/old.py b/old.py\ndeleted file mode 100644\n--- a/old.py\n+++ /dev/null\n@@ -1 +0,0 @@\n-a\n"
    )
    assert parse_added_lines(diff, tmp_path) == {(tmp_path / "k.py").resolve(): {3, 4}, (tmp_path / "new.py").resolve(): {1}}


def _git(*args: str, cwd: Path) -> None:
    subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@t", *args], cwd=cwd, check=True, capture_output=True)


@pytest.fixture
def repo(tmp_path) -> Path:
    _git("init", "-q", ".", cwd=tmp_path)
    (tmp_path / "k.py").write_text(HEADER + "a = ArithValue(x)\nb = 1\nc = 2\n")
    _git("add", "k.py", cwd=tmp_path)
    _git("commit", "-qm", "base", cwd=tmp_path)
    return tmp_path


def test_diff_base_reports_only_added_and_changed_lines(repo):
    (repo / "k.py").write_text(
        HEADER + "a = ArithValue(x)\nb = fx.Int64(fx.Int64(\n    x))\nc = ArithValue(\n    fx.Int64(fx.Int64(x)))\n"
    )
    (repo / "new.py").write_text(HEADER + "n = ArithValue(x)\n")  # untracked: every row is new
    (repo / "untouched.py").write_text(HEADER)
    _git("add", "untouched.py", cwd=repo)
    result = cli("check", "--select", "FLY1", "--diff-base", "HEAD", "--output-format", "json", ".", cwd=repo)
    assert result.returncode == 1, result.stderr
    found = sorted((Path(r["filename"]).name, r["location"]["row"], r["code"]) for r in json.loads(result.stdout))
    # row 5 (a) is unchanged; b changed on row 6; c's range (rows 8-9) was added
    assert found == [("k.py", 6, "FLY111"), ("k.py", 8, "FLY101"), ("k.py", 9, "FLY111"), ("new.py", 5, "FLY101")]
    full = json.loads(cli("check", "--select", "FLY1", "--output-format", "json", ".", cwd=repo).stdout)
    assert len(full) == len(found) + 1


def test_diff_base_counts_a_diagnostic_when_any_row_of_its_range_was_added(repo):
    (repo / "k.py").write_text(HEADER + "a = ArithValue(\n    x)\nb = 1\nc = 2\n")
    result = cli("check", "--select", "FLY1", "--diff-base", "HEAD", "--output-format", "json", "k.py", cwd=repo)
    rows = json.loads(result.stdout)
    assert [(r["location"]["row"], r["code"]) for r in rows] == [(5, "FLY101")]


def test_diff_base_clean_and_bad_ref(repo):
    assert cli("check", "--select", "FLY1", "--diff-base", "HEAD", ".", cwd=repo).returncode == 0
    bad = cli("check", "--diff-base", "no-such-ref", ".", cwd=repo)
    assert bad.returncode == 2 and "--diff-base no-such-ref" in bad.stderr
