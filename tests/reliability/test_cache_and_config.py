"""Issue 22, items 1, 4 and 11: the cache never deletes or trusts what is not its
own, and a malformed configuration is one line and exit 2 in every front end."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from flydsl_lint.run.cache import CACHEDIR_TAG, KEEP_FINGERPRINTS
from flydsl_lint.engine.diagnostics import Diagnostic, Position
from flydsl_lint.run.runner import FileResult, RunResult
from flydsl_lint.frontends.output import FORMATS

LEGACY = "from flydsl.expr import arith\n\ndef k(a, b):\n    return arith.maxnumf(a, b)\n"
FINDING = "k.py:4:12: FLY301"


@pytest.fixture(autouse=True)
def own_key(tmp_path, monkeypatch):
    """Each test its own user key (the subprocesses inherit the variable)."""
    from flydsl_lint.run import cache

    monkeypatch.setenv("FLYDSL_LINT_KEY_FILE", str(tmp_path / "user-home" / "entry-key"))
    monkeypatch.setattr(cache, "_USER_KEY", None, raising=False)


def _run(args: list[str], cwd: Path, **env: str) -> subprocess.CompletedProcess:
    environment = {key: value for key, value in os.environ.items() if key != "FLYDSL_LINT_CACHE_DIR"}
    environment.update(NO_COLOR="1", **env)
    return subprocess.run([sys.executable, *args], cwd=cwd, capture_output=True, text=True, env=environment,
                          timeout=120, stdin=subprocess.DEVNULL)


def check(*args: str, cwd: Path, **env: str) -> subprocess.CompletedProcess:
    return _run(["-m", "flydsl_lint.frontends.cli", "check", *args], cwd, **env)


def flake8(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    return _run(["-m", "flake8", "--select", "FLY", *args], cwd)


def _tree(root: Path) -> dict[str, bytes | None]:
    """Every path under `root` with its content (None for a folder)."""
    return {str(p.relative_to(root)): None if p.is_dir() else p.read_bytes() for p in sorted(root.rglob("*"))}


# ------------------------------------------------------------------ item 1: prune
def _victim(root: Path) -> Path:
    victim = root / "victim"
    for name in ("v1.0", "valuable_data", "vault", *(f"v{i}" for i in range(KEEP_FINGERPRINTS + 2))):
        (victim / name).mkdir(parents=True)
        (victim / name / "precious.txt").write_text(name)
    return victim


def test_a_cache_dir_holding_other_folders_is_left_alone(tmp_path):
    (tmp_path / "k.py").write_text(LEGACY)
    victim = _victim(tmp_path)
    before = _tree(victim)
    result = check("--cache-dir", "victim", "k.py", cwd=tmp_path)
    assert (result.returncode, result.stdout.splitlines()[0].split(" [*]")[0]) == (1, FINDING)
    assert _tree(victim) == before  # nothing deleted, no CACHEDIR.TAG or .gitignore added
    assert result.stderr == (f"flydsl-lint: warning: {victim}: not empty and not a flydsl-lint cache "
                             "(no CACHEDIR.TAG of ours); running without the cache\n")


def test_prune_removes_only_our_fingerprint_folders_in_a_tagged_cache(tmp_path):
    import shutil

    (tmp_path / "k.py").write_text(LEGACY)
    cache = tmp_path / "c"
    assert check("--cache-dir", "c", "k.py", cwd=tmp_path).returncode == 1
    assert (cache / "CACHEDIR.TAG").read_text() == CACHEDIR_TAG
    [runs_own] = cache.glob("v2-*")
    shutil.rmtree(runs_own)  # the next run creates it again, and prunes
    ours = [cache / f"v2-{i:024x}" for i in range(KEEP_FINGERPRINTS + 2)]
    strangers = [cache / name for name in ("vault", "v1.0", "v2-short", f"v2-{'g' * 24}")]
    for age, folder in enumerate(ours + strangers):
        folder.mkdir()
        os.utime(folder, (1000 + age, 1000 + age))
    assert check("--cache-dir", "c", "k.py", cwd=tmp_path).returncode == 1
    assert all(folder.is_dir() for folder in strangers)
    assert sum(folder.is_dir() for folder in ours) == KEEP_FINGERPRINTS - 1  # the newest, beside the run's own


def test_a_projects_cache_dir_outside_the_project_is_refused(tmp_path):
    project = tmp_path / "repo"
    project.mkdir()
    (project / "k.py").write_text(LEGACY)
    (project / "pyproject.toml").write_text('[tool.flydsl-lint]\ncache-dir = "../elsewhere"\n')
    victim = _victim(tmp_path / "elsewhere")
    (tmp_path / "elsewhere" / "CACHEDIR.TAG").write_text(CACHEDIR_TAG)  # even a cache of ours
    before = _tree(tmp_path / "elsewhere")
    result = check("k.py", cwd=project)
    assert (result.returncode, result.stdout.splitlines()[0].split(" [*]")[0]) == (1, FINDING)
    assert _tree(tmp_path / "elsewhere") == before and victim.is_dir()
    assert result.stderr == (f"flydsl-lint: warning: {project / 'pyproject.toml'}: `cache-dir` = '../elsewhere' "
                             f"lies outside the project ({project}); only --cache-dir or FLYDSL_LINT_CACHE_DIR "
                             "may put the cache there; running without the cache\n")


def test_a_default_cache_dir_linked_out_of_the_project_is_refused(tmp_path):
    project = tmp_path / "repo"
    project.mkdir()
    (project / "k.py").write_text(LEGACY)
    (tmp_path / "empty").mkdir()
    (project / ".flydsl-lint-cache").symlink_to(tmp_path / "empty")
    result = check("k.py", cwd=project)
    assert result.returncode == 1 and "lies outside the project" in result.stderr
    assert list((tmp_path / "empty").iterdir()) == []


@pytest.mark.parametrize("how", ["flag", "environment"])
def test_the_users_own_cache_dir_may_be_anywhere(tmp_path, how):
    project = tmp_path / "repo"
    project.mkdir()
    (project / "k.py").write_text(LEGACY)
    (tmp_path / "empty").mkdir()  # an empty folder becomes a cache
    args, env = (["--cache-dir", "../empty"], {}) if how == "flag" else ([], {"FLYDSL_LINT_CACHE_DIR": "../empty"})
    result = check(*args, "k.py", cwd=project, **env)
    assert (result.returncode, result.stderr) == (1, "")
    assert (tmp_path / "empty" / "CACHEDIR.TAG").read_text() == CACHEDIR_TAG
    assert list((tmp_path / "empty").glob("v2-*/*.json"))


# ---------------------------------------------------------- item 4: forged entries
def _cached_project(tmp_path: Path) -> tuple[Path, Path]:
    """A project checked once: its folder and its one cache entry."""
    project = tmp_path / "repo"
    project.mkdir()
    (project / "k.py").write_text(LEGACY)
    assert check("k.py", cwd=project).returncode == 1
    [entry] = (project / ".flydsl-lint-cache").glob("v*/*.json")
    return project, entry


def _payload(entry: Path) -> dict:
    return json.loads(entry.read_bytes().partition(b"\n")[2])


def _sign(payload: bytes) -> bytes:
    """An entry as this user's own key signs it: what only a forger holding the key could write."""
    from flydsl_lint.run.cache import _signature, user_key

    return _signature(user_key(), payload) + b"\n" + payload


def _with(entry: Path, **fields) -> bytes:
    return json.dumps({**_payload(entry), **fields}).encode()


def _assert_finding_reported(project: Path) -> None:
    """The run reports what an uncached run does: the forged entry was a miss."""
    result = check("k.py", cwd=project)
    assert (result.returncode, result.stderr) == (1, "")
    assert result.stdout.startswith(FINDING) and "\x1b" not in result.stdout
    assert result.stdout == check("--no-cache", "k.py", cwd=project).stdout


FORGERIES = {
    "no diagnostics": lambda entry: _with(entry, diagnostics=[]),
    "an ANSI message": lambda entry: _with(entry, diagnostics=[["FLY301", "\x1b[2J\x1b]0;pwned\x07", 4, 11, 4, 25,
                                                                 None, 4, False, None]]),
    "a deep nest": lambda entry: b'{"path":' + b"[" * 100_000 + b"]" * 100_000 + b"}",
    "a string row": lambda entry: _with(entry, diagnostics=["FLY301xxx"]),
}


@pytest.mark.parametrize("forgery", FORGERIES)
def test_an_entry_written_without_the_users_key_is_a_miss(tmp_path, forgery):
    """An entry shipped in a repository (as the old format wrote it, or with any signature line)."""
    project, entry = _cached_project(tmp_path)
    forged = FORGERIES[forgery](entry)
    for content in (forged, b"0" * 40 + b"\n" + forged):
        entry.write_bytes(content)
        _assert_finding_reported(project)


SIGNED_FORGERIES = {
    # (a message with escapes, if signed, is printed escaped: test_terminal_formats_print_no_control_character)
    **{name: forge for name, forge in FORGERIES.items() if name not in ("no diagnostics", "an ANSI message")},
    "an unknown code": lambda entry: _with(entry, diagnostics=[["FLY999", "m", 4, 11, 4, 25, None, 4, False, None]]),
    "a negative column": lambda entry: _with(entry, diagnostics=[["FLY301", "m", 4, -1, 4, 25, None, 4, False, None]]),
    "a bool row": lambda entry: _with(entry, diagnostics=[["FLY301", "m", True, 1, 4, 25, None, 4, False, None]]),
    "an end before the start": lambda entry: _with(entry, diagnostics=[["FLY301", "m", 4, 11, 3, 25, None, 4, False, None]]),
    "a huge message": lambda entry: _with(entry, diagnostics=[["FLY301", "m" * 20_000, 4, 11, 4, 25, None, 4, False, None]]),
    "a bad applicability": lambda entry: _with(entry, diagnostics=[["FLY301", "m", 4, 11, 4, 25,
                                                                      [[[4, 11, 4, 25, "x"]], "always", ""], 4, False, None]]),
    "a held-back fix naming another release": lambda entry: _with(entry, diagnostics=[["FLY301", "m", 4, 11, 4, 25, None, 4, False, "9.9"]]),
    "a row of the old length": lambda entry: _with(entry, diagnostics=[["FLY301", "m", 4, 11, 4, 25, None, 4, False]]),
    "a dependency on a device": lambda entry: _with(entry, deps=[["/dev/zero", None]], diagnostics=[]),
    "a string error": lambda entry: _with(entry, error=["syntax error"]),
    "an extra key": lambda entry: _with(entry, extra=1),
}


@pytest.mark.parametrize("forgery", SIGNED_FORGERIES)
def test_even_a_signed_entry_is_checked_field_by_field(tmp_path, forgery):
    project, entry = _cached_project(tmp_path)
    entry.write_bytes(_sign(SIGNED_FORGERIES[forgery](entry)))
    _assert_finding_reported(project)


def test_an_entry_that_is_a_fifo_or_too_large_is_a_miss(tmp_path):
    project, entry = _cached_project(tmp_path)
    hiding = _sign(_with(entry, diagnostics=[]) + b" " * (16 << 20))  # valid JSON, signed, but too large
    entry.unlink()
    os.mkfifo(entry)  # opened without blocking, and not a regular file: a miss, not a hang
    _assert_finding_reported(project)
    entry.unlink()
    entry.write_bytes(hiding)
    _assert_finding_reported(project)


def test_a_signed_entry_of_the_users_own_is_still_served(tmp_path, monkeypatch):
    """The strict check accepts what `store` writes: a second run needs no checker."""
    project, entry = _cached_project(tmp_path)
    entry.write_bytes(_sign(_with(entry, diagnostics=[["FLY301", "from the cache", 4, 11, 4, 25, None, 4, False, None]])))
    assert check("k.py", cwd=project).stdout.startswith(f"{FINDING} from the cache")


def test_no_key_no_cache(tmp_path):
    """A key that can be neither read nor made (a read-only home): the run checks everything, writes no entry."""
    project = tmp_path / "repo"
    project.mkdir()
    (project / "k.py").write_text(LEGACY)
    (tmp_path / "home-is-a-file").write_text("")
    result = check("k.py", cwd=project, FLYDSL_LINT_KEY_FILE=str(tmp_path / "home-is-a-file" / "key"))
    assert result.returncode == 1 and result.stdout.startswith(FINDING)
    assert not list(project.glob(".flydsl-lint-cache/v*/*.json"))


# --------------------------------------------------------- escaping what is printed
HOSTILE = Diagnostic("FLY301", "use \x1b[31mfx.max\x1b[0m\x07\u202e", "evil\x1b]0;t\x07.py", Position(1, 0), Position(1, 4))


@pytest.mark.parametrize("fmt", ["text", "concise", "full", "grouped", "github", "pylint", "junit"])
def test_terminal_formats_print_no_control_character(fmt):
    import io

    stream = io.StringIO()
    FORMATS[fmt](RunResult([FileResult(HOSTILE.path, [HOSTILE])]), stream, {})
    out = stream.getvalue()
    assert not {"\x1b", "\x07", "\u202e"} & set(out)
    assert "\\x1b[31mfx.max" in out and "\\u202e" in out


def test_error_lines_print_no_control_character(tmp_path):
    (tmp_path / "bad\x1b[2J.py").write_text("def f(:\n")
    result = check("--no-cache", ".", cwd=tmp_path)
    assert result.returncode == 2 and "\x1b" not in result.stderr and "bad\\x1b[2J.py" in result.stderr


# ------------------------------------------------------------- item 11: the config
PYPROJECTS = {
    "tool is an integer": (b"tool = 5\n", "`tool` must be a table, not an integer"),
    "tool is a string": (b'tool = "flydsl-lint"\n', "`tool` must be a table, not a string"),
    "the table is a string": (b'[tool]\nflydsl-lint = "x"\n', "`tool.flydsl-lint` must be a table, not a string"),
    "the table is an array": (b"[[tool.flydsl-lint]]\n", "`tool.flydsl-lint` must be a table, not an array"),
    "not UTF-8": (b'[tool.flydsl-lint]\nselect = ["\xff"]\n', "not UTF-8 text (byte 0xff at offset 30)"),
    "not TOML": (b"[tool.flydsl-lint\n", "invalid TOML: "),
    "nested too deeply": (b"a = " + b"[" * 100_000, "invalid TOML: nested too deeply"),
    "select is a string": (b'[tool.flydsl-lint]\nselect = "FLY"\n', "`select` must be a list of strings"),
    "ignore has an integer": (b"[tool.flydsl-lint]\nignore = [5]\n", "`ignore` must be a list of strings"),
    "per-file-ignores is an array": (b"[tool.flydsl-lint]\nper-file-ignores = []\n", "`per-file-ignores` must be a table"),
    "per-file-ignores holds a string": (b'[tool.flydsl-lint]\nper-file-ignores = {"a" = "FLY1"}\n',
                                        "`per-file-ignores.a` must be a list of strings"),
    "target-version is an integer": (b"[tool.flydsl-lint]\ntarget-version = 5\n",
                                     "`target-version` must be a string, not an integer"),
    "target-arch is an integer": (b"[tool.flydsl-lint]\ntarget-arch = 942\n", "`target-arch` must be a list of strings"),
    "respect-gitignore is a string": (b'[tool.flydsl-lint]\nrespect-gitignore = "yes"\n',
                                      "`respect-gitignore` must be true or false"),
    "cache-dir is a table": (b"[tool.flydsl-lint]\ncache-dir = {}\n", "`cache-dir` must be a string, not a table"),
    "cache-dir is empty": (b'[tool.flydsl-lint]\ncache-dir = ""\n', "`cache-dir` is empty; name a folder"),
    "cache-dir holds a NUL": (b'[tool.flydsl-lint]\ncache-dir = "a\\u0000b"\n', "`cache-dir` contains a NUL character"),
    "src holds a NUL": (b'[tool.flydsl-lint]\nsrc = ["\\u0000"]\n', "`src` has a string with a NUL character"),
    "output-format is a date": (b"[tool.flydsl-lint]\noutput-format = 2024-01-01\n",
                                "`output-format` must be a string, not a date or time"),
    "an unknown key": (b"[tool.flydsl-lint]\nselct = []\n", "unknown key `selct` in [tool.flydsl-lint]"),
}


def _one_error_line(result: subprocess.CompletedProcess, where: Path, reason: str) -> None:
    assert result.returncode == 2, result.stderr
    assert "Traceback" not in result.stderr and len(result.stderr.splitlines()) == 1, result.stderr
    assert result.stderr.startswith(f"flydsl-lint: error: {where}: {reason}"), result.stderr


@pytest.mark.parametrize("shape", PYPROJECTS)
def test_a_malformed_pyproject_is_one_line_and_exit_2(tmp_path, shape):
    content, reason = PYPROJECTS[shape]
    (tmp_path / "pyproject.toml").write_bytes(content)
    (tmp_path / "k.py").write_text(LEGACY)
    _one_error_line(check("--no-cache", "k.py", cwd=tmp_path), tmp_path / "pyproject.toml", reason)
    _one_error_line(flake8("k.py", cwd=tmp_path), tmp_path / "pyproject.toml", reason)


def _fifo(tmp_path: Path) -> Path:
    os.mkfifo(tmp_path / "fifo.toml")
    return tmp_path / "fifo.toml"


def _huge(tmp_path: Path) -> Path:
    (tmp_path / "huge.toml").write_bytes(b"# padding\n" * 200_000)
    return tmp_path / "huge.toml"


CONFIG_FILES = {
    "a folder": (lambda tmp_path: tmp_path, "cannot read config: Is a directory"),
    "/dev/zero": (lambda tmp_path: Path("/dev/zero"), "cannot read config: not a regular file"),
    "a FIFO": (_fifo, "cannot read config: not a regular file"),
    "a missing file": (lambda tmp_path: tmp_path / "nowhere.toml", "config file not found"),
    "a file over 1 MiB": (_huge, "cannot read config: larger than 1048576 bytes"),
}


@pytest.mark.parametrize("shape", CONFIG_FILES)
def test_a_config_option_that_is_no_readable_file_is_one_line_and_exit_2(tmp_path, shape):
    make, reason = CONFIG_FILES[shape]
    config = make(tmp_path)
    (tmp_path / "k.py").write_text(LEGACY)
    _one_error_line(check("--no-cache", "--config", str(config), "k.py", cwd=tmp_path), config, reason)


def test_a_bare_config_file_is_checked_as_the_table(tmp_path):
    (tmp_path / "lint.toml").write_text("select = 5\n")
    (tmp_path / "k.py").write_text(LEGACY)
    _one_error_line(check("--config", "lint.toml", "k.py", cwd=tmp_path), Path("lint.toml"),
                    "`select` must be a list of strings")


def test_a_nested_projects_bad_config_under_flake8_names_the_file_without_a_traceback(tmp_path):
    (tmp_path / "k.py").write_text(LEGACY)
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "k.py").write_text(LEGACY)
    (tmp_path / "sub" / "pyproject.toml").write_text("tool = 5\n")
    result = flake8("-j", "2", ".", cwd=tmp_path)
    assert result.returncode == 1 and "Traceback" not in result.stdout + result.stderr
    assert f"{tmp_path / 'sub' / 'pyproject.toml'}: `tool` must be a table, not an integer" in result.stdout


def test_load_settings_is_the_one_entry_point_with_a_one_line_message(tmp_path):
    from flydsl_lint.engine.config import ConfigError, load_settings

    (tmp_path / "pyproject.toml").write_bytes(b'[tool.flydsl-lint]\nselect = ["\n\x1b"]\n')
    with pytest.raises(ConfigError) as raised:
        load_settings(start=tmp_path)
    assert raised.value.message.startswith(f"{tmp_path / 'pyproject.toml'}: invalid TOML: ")
    assert "\n" not in raised.value.message and str(raised.value) == raised.value.message
