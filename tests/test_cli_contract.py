"""The CLI's contract from the foundation issue: exit codes, bad input, config, fixes on disk."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

LEGACY = textwrap.dedent(
    """\
    import flydsl.expr as fx
    from flydsl.expr import arith

    def k(a: fx.Float32, b: fx.Float32):
        # arith.maximumf(a, b) in a comment is not code
        doc = "arith.maximumf(a, b) in a string is not code"
        return arith.maximumf(a, b), fx.Int64(fx.Int64(a))
    """
)
FIXED = textwrap.dedent(
    """\
    import flydsl.expr as fx

    def k(a: fx.Float32, b: fx.Float32):
        # arith.maximumf(a, b) in a comment is not code
        doc = "arith.maximumf(a, b) in a string is not code"
        return fx.max(a, b), fx.Int64(a)
    """
)


def cli(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    env = dict(os.environ, NO_COLOR="1")
    return subprocess.run(
        [sys.executable, "-m", "flydsl_lint.frontends.cli", *args], cwd=cwd, capture_output=True, text=True, env=env
    )


@pytest.fixture
def project(tmp_path):
    (tmp_path / "pyproject.toml").write_text('[tool.flydsl-lint]\ntarget-version = "0.5.0"\n')
    return tmp_path


def test_exit_codes_and_json_schema(project):
    (project / "clean.py").write_text("import flydsl.expr as fx\nv = fx.max(a, b)\n")
    assert cli("check", "clean.py", cwd=project).returncode == 0
    (project / "k.py").write_text(LEGACY)
    result = cli("check", "k.py", "--output-format", "json", cwd=project)
    assert result.returncode == 1
    rows = json.loads(result.stdout)
    assert {(r["code"], r["location"]["row"]) for r in rows} == {("FLY301", 7), ("FLY111", 7)}
    first = next(r for r in rows if r["code"] == "FLY301")
    assert first["location"] == {"row": 7, "column": 12}
    assert first["end_location"]["row"] == 7
    assert first["fix"]["applicability"] == "safe"
    assert first["fix"]["edits"][0]["content"] == "fx.max"
    assert first["noqa_row"] == 7 and first["filename"] == str(project / "k.py")
    assert set(first) == {"cell", "code", "end_location", "filename", "fix", "location", "message", "noqa_row", "url"}
    assert cli("check", "k.py", "--exit-zero", cwd=project).returncode == 0


def test_select_ignore_prefixes(project):
    (project / "k.py").write_text(LEGACY)
    only_1 = json.loads(cli("check", "k.py", "--select", "FLY1", "--output-format", "json", cwd=project).stdout)
    assert {r["code"] for r in only_1} == {"FLY111"}
    ignored = json.loads(cli("check", "k.py", "--ignore", "FLY11", "--output-format", "json", cwd=project).stdout)
    assert {r["code"] for r in ignored} == {"FLY301"}


def test_fix_writes_atomically_and_is_idempotent(project):
    target = project / "k.py"
    target.write_text(LEGACY)
    target.chmod(0o750)
    result = cli("check", "--fix", "k.py", cwd=project)
    assert result.returncode == 0, result.stdout + result.stderr
    assert target.read_text() == FIXED
    assert stat.S_IMODE(target.stat().st_mode) == 0o750
    left = sorted(p.name for p in project.iterdir() if p.name != ".flydsl-lint-cache")  # the result cache is expected
    assert left == ["k.py", "pyproject.toml"]  # no temp files left
    assert cli("check", "--fix", "k.py", cwd=project).returncode == 0
    assert target.read_text() == FIXED


def test_fix_keeps_bom_crlf_and_encoding(project):
    target = project / "k.py"
    target.write_bytes(b"\xef\xbb\xbf" + LEGACY.replace("\n", "\r\n").encode())
    assert cli("check", "--fix", "k.py", cwd=project).returncode == 0
    assert target.read_bytes() == b"\xef\xbb\xbf" + FIXED.replace("\n", "\r\n").encode()
    latin = project / "latin.py"
    text = "# -*- coding: latin-1 -*-\n# caf\xe9\nimport flydsl.expr as fx\nv = fx.Int32(fx.Int32(x))\n"
    latin.write_bytes(text.encode("latin-1"))
    assert cli("check", "--fix", "latin.py", cwd=project).returncode == 0
    assert latin.read_bytes() == text.replace("fx.Int32(fx.Int32(x))", "fx.Int32(x)").encode("latin-1")


def test_diff_writes_nothing(project):
    target = project / "k.py"
    target.write_text(LEGACY)
    result = cli("check", "--diff", "k.py", cwd=project)
    assert result.returncode == 1
    assert "+    return fx.max(a, b), fx.Int64(a)" in result.stdout
    assert target.read_text() == LEGACY


def test_bad_files_are_reported_and_the_rest_still_checked(project):
    (project / "good.py").write_text(LEGACY)
    (project / "syntax.py").write_text("def broken(:\n")
    (project / "latin.py").write_bytes(b"x = '\xff\xfe'\n")
    (project / "binary.py").write_bytes(b"x = 1\x00\n")
    result = cli("check", ".", "missing.py", "--output-format", "json", cwd=project)
    assert result.returncode == 2
    errors = [line for line in result.stderr.splitlines() if line.startswith("error:")]
    assert len(errors) == 4, result.stderr
    assert any("syntax.py: syntax error at 1:" in line for line in errors)
    assert any("latin.py: cannot decode as utf-8" in line for line in errors)
    assert any("binary.py: binary file" in line for line in errors)
    assert any("missing.py: no such file or directory" in line for line in errors)
    assert {r["code"] for r in json.loads(result.stdout)} == {"FLY301", "FLY111"}


@pytest.mark.parametrize("command", ["check", "migrate", "clean"])
def test_an_empty_path_is_an_error_not_the_current_folder(project, command):
    (project / "k.py").write_text(LEGACY)  # what checking "." would find
    result = cli(command, "", cwd=project)
    assert result.returncode == 2 and result.stdout == ""
    assert result.stderr.count("\n") == 1 and result.stderr.endswith('"": an empty path names no file or folder\n')
    assert (project / "k.py").read_text() == LEGACY


@pytest.mark.parametrize("option, error", [
    ("--select=", "argument --select: '' names no code"),
    ("--ignore=,", "argument --ignore: ',' names no code"),
    ("--target-version=", "--target-version: '' is not a version like 0.5.0"),
    ("--show-types=", "--show-types: '' is not FILE:LINE"),
    ("--config=", "argument --config: '' names nothing"),
    ("--cache-dir=", "argument --cache-dir: '' names nothing"),
    ("--output-file=", "argument -o/--output-file: '' names nothing"),
])
def test_an_empty_option_value_is_an_error_not_the_option_left_out(project, option, error):
    """`--select "$CODES"` with the variable unset must not pass every file by checking nothing."""
    (project / "k.py").write_text(LEGACY)
    result = cli("check", option, "k.py", cwd=project)
    assert result.returncode == 2 and result.stdout == "", result.stderr
    assert error in result.stderr.splitlines()[-1], result.stderr


@pytest.mark.skipif(os.geteuid() == 0, reason="root can read a chmod 000 file")
def test_unreadable_file(project):
    target = project / "k.py"
    target.write_text(LEGACY)
    target.chmod(0)
    result = cli("check", "k.py", cwd=project)
    assert result.returncode == 2 and "k.py: cannot read" in result.stderr


@pytest.mark.parametrize(
    "config, message",
    [
        ('[tool.flydsl-lint]\nselect = "FLY"\n', "`select` must be a list of strings"),
        ('[tool.flydsl-lint]\nselekt = ["FLY"]\n', "unknown key `selekt`"),
        ('[tool.flydsl-lint]\ntarget-version = "latest"\n', "`target-version`"),
        ('[tool.flydsl-lint]\ntarget-arch = ["sm_90"]\n', "`target-arch` has 'sm_90'"),
        ('[tool.flydsl-lint]\nignore = ["E501"]\n', "not a FLY code"),
        ('[tool.flydsl-lint]\nextend-select = ["FLY999"]\n', "`extend-select` has 'FLY999', which selects no rule"),
        ("[tool.flydsl-lint\n", "invalid TOML"),
    ],
)
def test_bad_config_is_one_clear_error(tmp_path, config, message):
    (tmp_path / "pyproject.toml").write_text(config)
    (tmp_path / "k.py").write_text("x = 1\n")
    result = cli("check", "k.py", cwd=tmp_path)
    assert result.returncode == 2
    assert len(result.stderr.strip().splitlines()) == 1
    assert message in result.stderr and "pyproject.toml" in result.stderr


@pytest.mark.parametrize("option, value, message", [
    ("--select", "XYZ", "argument --select: 'XYZ' is not a FLY code or prefix"),
    ("--extend-select", "FLY1O1", "argument --extend-select: 'FLY1O1' is not a FLY code or prefix"),
    ("--ignore", "FLY3,FLY999", "argument --ignore: 'FLY999' selects no rule (see `flydsl-lint rules`)"),
])
def test_a_selector_that_selects_nothing_is_an_error_not_a_clean_run(tmp_path, option, value, message):
    """As ruff: a typo in a code would otherwise check nothing (or ignore nothing) and pass."""
    (tmp_path / "k.py").write_text(LEGACY)
    result = cli("check", "k.py", option, value, cwd=tmp_path)
    assert result.returncode == 2 and result.stderr.strip().splitlines()[-1].endswith(message), result.stderr
    assert cli("check", "k.py", option, "FLY1", "--exit-zero", cwd=tmp_path).returncode == 0  # a prefix of rules


def test_config_file_settings_apply(tmp_path):
    (tmp_path / "pyproject.toml").write_text(
        '[tool.flydsl-lint]\nignore = ["FLY3"]\nper-file-ignores = {"legacy/*" = ["FLY1"]}\nextend-exclude = ["generated"]\n'
    )
    for name in ("k.py", "legacy/old.py", "generated/g.py"):
        (tmp_path / name).parent.mkdir(exist_ok=True)
        (tmp_path / name).write_text(LEGACY)
    rows = json.loads(cli("check", ".", "--output-format", "json", cwd=tmp_path).stdout)
    assert sorted((Path(r["filename"]).relative_to(tmp_path).as_posix(), r["code"]) for r in rows) == [("k.py", "FLY111")]


def test_noqa_forms(project):
    (project / "k.py").write_text(
        "import flydsl.expr as fx\n"
        "a = fx.Int64(fx.Int64(x))  # noqa\n"
        "b = fx.Int64(fx.Int64(x))  # noqa: FLY111\n"
        "c = fx.Int64(fx.Int64(x))  # noqa:FLY1\n"
        "d = fx.Int64(fx.Int64(x))  # noqa: FLY301\n"
        "e = fx.Int64(\n    fx.Int64(x)\n)  # noqa: FLY111 -- kept on purpose\n"
    )
    rows = json.loads(cli("check", "k.py", "--output-format", "json", "--select", "FLY1", cwd=project).stdout)
    # As in flake8, a noqa on a call's closing row does not cover its first row (a newline
    # inside brackets ends flake8's noqa line), so `e` (row 6) is still reported.
    assert [r["location"]["row"] for r in rows] == [5, 6]


def test_gitignored_files_are_skipped(tmp_path):
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    (tmp_path / ".gitignore").write_text("ignored/\n")
    for name in ("k.py", "ignored/k.py"):
        (tmp_path / name).parent.mkdir(exist_ok=True)
        (tmp_path / name).write_text(LEGACY)
    rows = json.loads(cli("check", ".", "--output-format", "json", cwd=tmp_path).stdout)
    assert {Path(r["filename"]).relative_to(tmp_path).as_posix() for r in rows} == {"k.py"}


def test_linted_code_is_never_imported_or_executed(project):
    marker = project / "marker"
    (project / "evil.py").write_text(
        f"import pathlib\npathlib.Path({str(marker)!r}).write_text('ran')\n"
        "import flydsl.expr as fx\nv = fx.Int32(fx.Int32(1))\n"
    )
    (project / "user.py").write_text("from evil import v\nimport evil\n")
    result = cli("check", "--fix", ".", cwd=project)
    assert result.returncode == 0
    assert not marker.exists()
    assert "flydsl" not in subprocess.run(
        [sys.executable, "-c", "import sys, flydsl_lint.frontends.cli as c; c.main(['check', '--exit-zero', '.']); "
         "print(' '.join(m for m in sys.modules if m.startswith('flydsl') and not m.startswith('flydsl_lint')))"],
        cwd=project, capture_output=True, text=True,
    ).stdout.split("\n")[-2]


def test_rule_and_rules_commands(project):
    listing = cli("rules", cwd=project)
    assert listing.returncode == 0 and "FLY301" in listing.stdout
    page = cli("rule", "fly301", cwd=project)
    assert page.returncode == 0 and page.stdout.startswith("# FLY301 raw-typed-arithmetic")
    assert cli("rule", "FLY999", cwd=project).returncode == 2


def _state(pid: int) -> str | None:
    """A process's state letter from /proc (Z: zombie), None when it is gone."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return None


def _children(pid: int) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if int(fields[1]) == pid and fields[0] != "Z":
                found.append(int(entry.name))
    return found


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads the process table from /proc")
def test_interrupting_a_parallel_run_stops_its_workers(project):
    import signal
    import time

    for index in range(300):  # some 3 s of work: the signal must land before the run ends, even on a loaded machine
        (project / f"k{index}.py").write_text(LEGACY * 100)
    env = dict(os.environ, NO_COLOR="1")
    process = subprocess.Popen([sys.executable, "-m", "flydsl_lint.frontends.cli", "check", ".", "--no-cache"],
                               cwd=project, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, env=env)
    deadline = time.monotonic() + 30
    workers: list[int] = []
    while not workers and process.poll() is None and time.monotonic() < deadline:
        time.sleep(0.02)
        workers = _children(process.pid)
    if not workers:
        process.wait()
        pytest.skip("the run ended before a worker was seen")
    process.send_signal(signal.SIGINT)
    assert process.wait(timeout=30) == 130
    assert "interrupted" in process.stderr.read()
    time.sleep(0.2)
    assert [pid for pid in workers if _state(pid) not in (None, "Z")] == []  # none left running


def stdin_cli(data: bytes, *args: str, cwd: Path) -> subprocess.CompletedProcess:
    env = dict(os.environ, NO_COLOR="1")
    return subprocess.run([sys.executable, "-m", "flydsl_lint.frontends.cli", "check", *args], cwd=cwd, input=data,
                          capture_output=True, env=env)


def test_stdin_is_checked_under_its_given_name_and_settings(project):
    (project / "pyproject.toml").write_text(
        '[tool.flydsl-lint]\ntarget-version = "0.5.0"\nper-file-ignores = { "legacy/*" = ["FLY111"] }\n')
    source = b"import flydsl.expr as fx\nv = fx.Int32(fx.Int32(1))\n"
    plain = stdin_cli(source, "-", cwd=project)
    assert plain.returncode == 1 and plain.stdout.decode().startswith("-:2:5: FLY111")
    named = stdin_cli(source, "--stdin-filename", "kernels/new.py", "--output-format", "json", cwd=project)
    rows = json.loads(named.stdout)  # JSON names files absolutely, as ruff does
    assert [(Path(r["filename"]).relative_to(project).as_posix(), r["code"]) for r in rows] == [("kernels/new.py", "FLY111")]
    ignored = stdin_cli(source, "-", "--stdin-filename", "legacy/old.py", cwd=project)  # per-file-ignores by the name
    assert ignored.returncode == 0, ignored.stdout + ignored.stderr
    assert (project / "kernels").exists() is False  # nothing is written for stdin


def test_stdin_fix_writes_the_fixed_source_to_stdout_and_the_report_to_stderr(project):
    source = b"import flydsl.expr as fx\nv = fx.Int32(fx.Int32(1))  # keep\n"
    fixed = stdin_cli(source, "-", "--fix", cwd=project)
    assert fixed.returncode == 0, fixed.stderr
    assert fixed.stdout == b"import flydsl.expr as fx\nv = fx.Int32(1)  # keep\n"
    assert b"1 fixed" in fixed.stderr
    diff = stdin_cli(source, "-", "--diff", cwd=project)
    assert diff.returncode == 1 and b"+v = fx.Int32(1)  # keep" in diff.stdout
    crlf = stdin_cli(source.replace(b"\n", b"\r\n"), "-", "--fix", "--statistics", cwd=project)
    assert crlf.stdout == b"import flydsl.expr as fx\r\nv = fx.Int32(1)  # keep\r\n"  # line endings kept
    counted = stdin_cli(source, "-", "--statistics", cwd=project)
    assert counted.returncode == 1 and b"FLY111" in counted.stdout and b"-:2" not in counted.stdout


@pytest.mark.parametrize("data, reason", [(b"x = (\n", "syntax error"), (b"x = '\xff'\n", "cannot decode")])
def test_stdin_that_cannot_be_checked_comes_back_unchanged(project, data, reason):
    fixed = stdin_cli(data, "--stdin-filename", "k.py", "--fix", cwd=project)
    assert fixed.returncode == 2 and fixed.stdout == data  # an editor's buffer is never lost
    assert fixed.stderr.decode().count("\n") == 1 and reason in fixed.stderr.decode() and "k.py" in fixed.stderr.decode()


def test_stdin_excluded_by_name_with_force_exclude_passes_through(project):
    (project / "pyproject.toml").write_text('[tool.flydsl-lint]\ntarget-version = "0.5.0"\nextend-exclude = ["vendor"]\n')
    source = b"import flydsl.expr as fx\nv = fx.Int32(fx.Int32(1))\n"
    kept = stdin_cli(source, "--stdin-filename", "vendor/k.py", "--force-exclude", "--fix", cwd=project)
    assert kept.returncode == 0 and kept.stdout == source
    assert stdin_cli(source, "--stdin-filename", "vendor/k.py", cwd=project).returncode == 1  # named alone: checked
    mixed = stdin_cli(source, "-", "other.py", cwd=project)
    assert mixed.returncode == 2 and b"stdin" in mixed.stderr


def test_jobs_choose_the_processes_not_the_result(project):
    for index in range(4):
        (project / f"k{index}.py").write_text(LEGACY)
    outputs = {jobs: cli("check", "--no-cache", "-j", jobs, "--output-format", "json", ".", cwd=project)
               for jobs in ("1", "2", "3")}
    assert {result.returncode for result in outputs.values()} == {1}
    assert len({result.stdout for result in outputs.values()}) == 1 and len(json.loads(outputs["1"].stdout)) == 8
    bad = cli("check", "--jobs", "0", ".", cwd=project)
    assert bad.returncode == 2 and "'0' is not a number of processes" in bad.stderr


def test_the_console_script_exit_keeps_the_whole_report(project):
    # `entry` ends the process with os._exit: the report (here far larger than a
    # pipe's buffer) must be flushed first, and the exit code kept.
    for index in range(60):
        (project / f"k{index}.py").write_text(LEGACY)
    result = cli("check", "--no-cache", "--output-format", "json", ".", cwd=project)
    assert result.returncode == 1 and len(result.stdout) > 65536
    assert len(json.loads(result.stdout)) == 120 and result.stderr == ""


def test_a_reader_that_leaves_early_gets_no_traceback(project):
    for index in range(60):
        (project / f"k{index}.py").write_text(LEGACY)
    command = [sys.executable, "-m", "flydsl_lint.frontends.cli", "check", "--no-cache", "--output-format", "full", "."]
    process = subprocess.Popen(command, cwd=project, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    process.stdout.read(100)
    process.stdout.close()  # like `| head -c 100`
    stderr = process.stderr.read().decode()
    assert process.wait() == 0 and stderr == ""


def test_start_up_imports_stay_lazy(tmp_path):
    """A check of a folder without a pyproject.toml imports neither json, tomllib, pkgutil nor
    dataclasses with its inspect (those two and dataclasses' generated methods were a quarter of
    a one-file run's instructions): only what a bare interpreter already has may bring them."""
    (tmp_path / "k.py").write_text(LEGACY)
    probe = ("import sys; from flydsl_lint.frontends.cli import main; code = main(['check', '--no-cache', 'k.py']); "
             "print(' '.join(sorted(sys.modules)), file=sys.stderr)")
    # The marshal copy of rules.toml is written as .pyc files are: not under PYTHONDONTWRITEBYTECODE.
    environment = {name: value for name, value in os.environ.items() if name != "PYTHONDONTWRITEBYTECODE"}
    bare = subprocess.run([sys.executable, "-c", "import sys; print(' '.join(sys.modules))"],
                          capture_output=True, text=True, check=True, env=environment).stdout.split()
    run = subprocess.run([sys.executable, "-c", probe], cwd=tmp_path, capture_output=True, text=True, env=environment)
    loaded = set(run.stderr.split())
    assert "flydsl_lint.rules.s8_comments" in loaded  # the run checked the file
    assert {"dataclasses", "inspect", "json", "tomllib", "pkgutil"} & (loaded - set(bare)) == set()
