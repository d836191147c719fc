"""`flydsl-lint clean`: removes this tool's caches, and nothing that is not one."""

from __future__ import annotations

from pathlib import Path

from tests.test_cli_contract import cli

LEGACY = "from flydsl.expr import arith\n\ndef k(a, b):\n    return arith.maxnumf(a, b)\n"


def test_removes_the_caches_checks_wrote_here_and_in_nested_projects(tmp_path: Path) -> None:
    (tmp_path / "k.py").write_text(LEGACY)
    nested = tmp_path / "sub"
    nested.mkdir()
    (nested / "pyproject.toml").write_text('[tool.flydsl-lint]\ncache-dir = "lint-cache"\n')
    (nested / "k.py").write_text(LEGACY)
    assert cli("check", ".", cwd=tmp_path).returncode == 1
    assert cli("check", ".", cwd=nested).returncode == 1
    caches = [tmp_path / ".flydsl-lint-cache", nested / "lint-cache"]
    assert all(folder.is_dir() for folder in caches)

    cleaned = cli("clean", ".", "sub", cwd=tmp_path)
    assert cleaned.returncode == 0, cleaned.stderr
    assert not any(folder.exists() for folder in caches)
    assert sorted(cleaned.stdout.splitlines()) == sorted(f"Removed cache {folder.resolve()}" for folder in caches)
    assert (tmp_path / "k.py").read_text() == LEGACY and (nested / "k.py").read_text() == LEGACY

    again = cli("clean", cwd=tmp_path)
    assert (again.returncode, again.stdout) == (0, "No cache found.\n")


def test_folders_that_are_not_its_caches_are_left_alone(tmp_path: Path) -> None:
    look_alike = tmp_path / "pkg" / ".flydsl-lint-cache"
    look_alike.mkdir(parents=True)
    (look_alike / "notes.txt").write_text("mine")
    # a cache-dir pointing at the project itself must never empty the project
    (tmp_path / "pyproject.toml").write_text('[tool.flydsl-lint]\ncache-dir = "."\n')
    (tmp_path / "k.py").write_text(LEGACY)

    result = cli("clean", cwd=tmp_path)
    assert result.returncode == 0
    assert (look_alike / "notes.txt").read_text() == "mine" and (tmp_path / "k.py").exists()
    warned = [line for line in result.stderr.splitlines() if "not a flydsl-lint cache" in line]
    assert {line.split(": ")[2] for line in warned} == {str(look_alike.resolve()), str(tmp_path.resolve())}
    assert result.stdout == "No cache found.\n"


def test_bad_input_is_one_line_and_exit_2(tmp_path: Path) -> None:
    missing = cli("clean", "nowhere", cwd=tmp_path)
    assert (missing.returncode, missing.stderr) == (2, "flydsl-lint: error: nowhere: no such file or directory\n")
    (tmp_path / "pyproject.toml").write_text("[tool.flydsl-lint]\ncache-dir = 3\n")
    bad = cli("clean", cwd=tmp_path)
    assert bad.returncode == 2
    assert bad.stderr.count("\n") == 1 and "cache-dir" in bad.stderr and "pyproject.toml" in bad.stderr


def test_cache_dir_from_the_command_line_or_the_environment(tmp_path: Path, monkeypatch) -> None:
    (tmp_path / "k.py").write_text(LEGACY)
    assert cli("check", "--cache-dir", "elsewhere", ".", cwd=tmp_path).returncode == 1
    assert (tmp_path / "elsewhere" / "CACHEDIR.TAG").is_file()
    assert not (tmp_path / ".flydsl-lint-cache").exists()
    monkeypatch.setenv("FLYDSL_LINT_CACHE_DIR", str(tmp_path / "from-env"))
    assert cli("check", ".", cwd=tmp_path).returncode == 1
    assert (tmp_path / "from-env" / "CACHEDIR.TAG").is_file()
    assert cli("clean", cwd=tmp_path).stdout == f"Removed cache {(tmp_path / 'from-env').resolve()}\n"
    monkeypatch.delenv("FLYDSL_LINT_CACHE_DIR")
    assert cli("clean", "--cache-dir", "elsewhere", cwd=tmp_path).stdout == f"Removed cache {(tmp_path / 'elsewhere').resolve()}\n"


def test_excluded_folders_are_not_searched(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text('[tool.flydsl-lint]\nextend-exclude = ["vendor"]\n')
    vendored = tmp_path / "vendor" / "lib"
    vendored.mkdir(parents=True)
    (vendored / "pyproject.toml").write_text("[tool.flydsl-lint]\n")
    (vendored / "k.py").write_text(LEGACY)
    assert cli("check", ".", cwd=vendored).returncode == 1
    assert cli("clean", cwd=tmp_path).stdout == "No cache found.\n"
    assert (vendored / ".flydsl-lint-cache").is_dir()
    assert cli("clean", "vendor/lib", cwd=tmp_path).stdout == f"Removed cache {(vendored / '.flydsl-lint-cache').resolve()}\n"
