"""Hostile files and destinations (issue 22): what is read, what is written, and how.

Every run is a subprocess with a timeout and an address-space limit, so a
regression that hangs on a FIFO or reads /dev/zero without bound fails the
test instead of hanging or exhausting the machine.
"""

from __future__ import annotations

import os
import resource
import stat
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.test_cli_contract import FIXED, LEGACY

TIMEOUT = 60  # seconds; a run here takes well under one
MEMORY_LIMIT = 2 << 30  # bytes of address space for one run


def _limit_memory() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY_LIMIT, MEMORY_LIMIT))


def run_cli(*args: str, cwd: Path, stdin=subprocess.DEVNULL, close_stdin: bool = False,
            input: bytes | None = None, stdout=subprocess.PIPE) -> subprocess.CompletedProcess:
    def prepare() -> None:
        _limit_memory()
        if close_stdin:
            os.close(0)

    return subprocess.run(
        [sys.executable, "-m", "flydsl_lint.frontends.cli", *args], cwd=cwd, stdin=None if input is not None else stdin,
        input=input, stdout=stdout, stderr=subprocess.PIPE, env=dict(os.environ, NO_COLOR="1"),
        timeout=TIMEOUT, preexec_fn=prepare,
    )


def errors(result: subprocess.CompletedProcess) -> list[str]:
    return result.stderr.decode().splitlines()


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """A project whose folder walks do not ask git (as outside a work tree)."""
    (tmp_path / "pyproject.toml").write_text('[tool.flydsl-lint]\ntarget-version = "0.5.0"\nrespect-gitignore = false\n')
    return tmp_path


def leftovers(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir() if p.name.endswith(".flydsl-lint"))


# --------------------------------------------------------------- reads (items 9, 13)
def test_a_walk_skips_fifos_and_device_links(project: Path) -> None:
    folder = project / "kernels"
    folder.mkdir()
    (folder / "ok.py").write_text(LEGACY)
    os.mkfifo(folder / "fifo.py")
    (folder / "zero.py").symlink_to("/dev/zero")
    (folder / "dangling.py").symlink_to("nowhere.py")

    result = run_cli("check", "--no-cache", "kernels", cwd=project)
    assert result.returncode == 1 and result.stderr == b""
    assert {line.split(":")[0] for line in result.stdout.decode().splitlines() if "FLY" in line} == {"kernels/ok.py"}
    listed = run_cli("check", "--show-files", "kernels", cwd=project)
    assert listed.stdout.decode().splitlines() == [str((folder / "ok.py").resolve())]


def test_a_named_path_that_is_not_a_regular_file_is_one_line_and_exit_2(project: Path) -> None:
    os.mkfifo(project / "fifo.py")
    (project / "zero.py").symlink_to("/dev/zero")
    result = run_cli("check", "--no-cache", "fifo.py", "zero.py", cwd=project)
    assert result.returncode == 2
    assert errors(result) == ["error: fifo.py: not a regular file (FIFO)",
                              "error: zero.py: not a regular file (character device)"]
    listed = run_cli("check", "--show-files", "fifo.py", cwd=project)
    assert (listed.returncode, errors(listed)) == (2, ["flydsl-lint: error: fifo.py: not a regular file (FIFO)"])


def test_a_file_above_max_file_size_is_refused_with_the_sizes(project: Path) -> None:
    (project / "pyproject.toml").write_text('[tool.flydsl-lint]\ntarget-version = "0.5.0"\nmax-file-size = "1 KiB"\n')
    (project / "big.py").write_text("x = 1\n" * 1000)  # 6000 bytes
    (project / "small.py").write_text(LEGACY)
    result = run_cli("check", "--no-cache", ".", cwd=project)
    assert result.returncode == 2
    assert errors(result) == ["error: big.py: file too large: 5.9 KiB > max-file-size 1 KiB"]
    assert b"small.py" in result.stdout  # the other files are still checked


def test_the_default_max_file_size_is_10_mib(project: Path) -> None:
    (project / "limit.py").write_bytes(b"# " + b"a" * (10 * 1024 * 1024 - 3) + b"\n")
    (project / "big.py").write_bytes(b"# " + b"a" * (12 * 1024 * 1024 - 3) + b"\n")
    at_the_limit = run_cli("check", "--no-cache", "limit.py", cwd=project)
    assert (at_the_limit.returncode, at_the_limit.stderr) == (0, b"")
    result = run_cli("check", "--no-cache", "big.py", cwd=project)
    assert (result.returncode, errors(result)) == (2, ["error: big.py: file too large: 12 MiB > max-file-size 10 MiB"])


@pytest.mark.parametrize("value", ['"ten"', "0", "-1", "true", '"5 PiB"'])
def test_a_bad_max_file_size_is_one_config_error(project: Path, value: str) -> None:
    (project / "pyproject.toml").write_text(f"[tool.flydsl-lint]\nmax-file-size = {value}\n")
    (project / "k.py").write_text(LEGACY)
    result = run_cli("check", "--no-cache", "k.py", cwd=project)
    assert result.returncode == 2 and len(errors(result)) == 1
    assert "`max-file-size`" in result.stderr.decode() and "must be a size" in result.stderr.decode()
    assert "pyproject.toml" in result.stderr.decode()


def test_stdin_is_bounded_and_a_fix_hands_it_back_unchanged(project: Path) -> None:
    (project / "pyproject.toml").write_text('[tool.flydsl-lint]\nmax-file-size = 1024\n')
    data = LEGACY.encode() * 100
    checked = run_cli("check", "--stdin-filename", "k.py", cwd=project, input=data)
    assert (checked.returncode, errors(checked)) == (2, ["error: k.py: file too large: more than max-file-size 1 KiB"])
    fixed = run_cli("check", "--fix", "--stdin-filename", "k.py", cwd=project, input=data)
    assert fixed.returncode == 2 and fixed.stdout == data  # an editor's buffer is never emptied


def test_closed_stdin_is_one_line_and_exit_2(project: Path) -> None:
    for args in (["--stdin-filename", "k.py"], ["-"]):
        result = run_cli("check", *args, cwd=project, close_stdin=True)
        assert (result.returncode, errors(result)) == (2, ["flydsl-lint: error: cannot read stdin: it is closed"])


# ---------------------------------------------------------- small things (item 14)
def test_a_too_deeply_nested_file_names_the_reason(project: Path) -> None:
    (project / "deep.py").write_text("x = " + "-" * 100000 + "1\n")
    result = run_cli("check", "--no-cache", "deep.py", cwd=project)
    assert result.returncode == 2
    assert errors(result) == ["error: deep.py: cannot parse: too deeply nested for Python's parser"]


@pytest.mark.parametrize("encoding", ["utf-16", "utf-16-le", "utf-16-be"])
def test_utf16_with_a_bom_is_named_as_such(project: Path, encoding: str) -> None:
    data = "x = 1\n".encode(encoding)
    if encoding != "utf-16":  # the plain codec writes its own BOM
        data = "\ufeff".encode(encoding) + data
    (project / "wide.py").write_bytes(data)
    result = run_cli("check", "--no-cache", "wide.py", cwd=project)
    assert (result.returncode, errors(result)) == (2, ["error: wide.py: UTF-16 is not supported (convert to UTF-8)"])
