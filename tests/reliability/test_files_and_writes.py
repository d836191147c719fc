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
import tempfile
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


# ------------------------------------------------------------------ writes (item 3)
def test_fix_through_a_symlink_fixes_the_target_and_keeps_the_link(project: Path) -> None:
    elsewhere = project / "elsewhere"
    elsewhere.mkdir()
    target = elsewhere / "real.py"
    target.write_text(LEGACY)
    target.chmod(0o640)
    (project / "named.py").symlink_to("elsewhere/real.py")
    walked = project / "walked"
    walked.mkdir()
    (walked / "k.py").symlink_to("../elsewhere/real.py")

    result = run_cli("check", "--no-cache", "--fix", "named.py", cwd=project)
    assert result.returncode == 0, result.stderr
    assert os.readlink(project / "named.py") == "elsewhere/real.py"
    assert target.read_text() == FIXED and stat.S_IMODE(target.stat().st_mode) == 0o640
    assert leftovers(project) == leftovers(elsewhere) == []

    target.write_text(LEGACY)  # the same through a folder walk
    result = run_cli("check", "--no-cache", "--fix", "walked", cwd=project)
    assert result.returncode == 0, result.stderr
    assert (walked / "k.py").is_symlink() and os.readlink(walked / "k.py") == "../elsewhere/real.py"
    assert target.read_text() == FIXED and leftovers(walked) == leftovers(elsewhere) == []


def test_a_hard_linked_file_is_left_untouched_with_one_line_naming_it(project: Path) -> None:
    linked, other_name, plain = project / "linked.py", project / "other_name.py", project / "plain.py"
    linked.write_text(LEGACY)
    os.link(linked, other_name)
    plain.write_text(LEGACY)
    inode = linked.stat().st_ino

    result = run_cli("check", "--no-cache", "--fix", "linked.py", "plain.py", cwd=project)
    assert result.returncode == 2
    assert errors(result) == ["error: linked.py: cannot write: has 2 hard links; left untouched "
                              "(replacing it would split them, writing in place could leave it half-written)"]
    for name in (linked, other_name):
        assert (name.stat().st_ino, name.stat().st_nlink, name.read_text()) == (inode, 2, LEGACY)
    assert plain.read_text() == FIXED  # the other files are still fixed
    assert leftovers(project) == []


def test_add_noqa_through_a_symlink_writes_the_target(project: Path) -> None:
    (project / "real.py").write_text(LEGACY)
    (project / "link.py").symlink_to("real.py")
    result = run_cli("check", "--no-cache", "--add-noqa", "link.py", cwd=project)
    assert result.returncode == 0, result.stderr
    assert (project / "link.py").is_symlink() and "# noqa: FLY" in (project / "real.py").read_text()


@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() != 0, reason="giving a file away needs root")
def test_a_fixed_file_keeps_its_owner_and_group(project: Path) -> None:
    kernel = project / "k.py"
    kernel.write_text(LEGACY)
    os.chown(kernel, 4321, 8765)
    assert run_cli("check", "--no-cache", "--fix", "k.py", cwd=project).returncode == 0
    assert (kernel.stat().st_uid, kernel.stat().st_gid, kernel.read_text()) == (4321, 8765, FIXED)


def test_output_file_onto_a_fifo_writes_into_it(project: Path) -> None:
    (project / "k.py").write_text(LEGACY)
    fifo = project / "report.fifo"
    os.mkfifo(fifo)
    reader = subprocess.Popen(["cat", str(fifo)], stdout=subprocess.PIPE)
    try:
        result = run_cli("check", "--no-cache", "-o", "report.fifo", "k.py", cwd=project)
        report, _ = reader.communicate(timeout=TIMEOUT)  # a FIFO replaced by a file is never opened: cat waits
    finally:
        reader.kill()
        reader.wait()
    assert result.returncode == 1, result.stderr
    assert b"FLY301" in report and result.stdout == b""
    assert stat.S_ISFIFO(fifo.lstat().st_mode)


def test_output_file_naming_our_own_stdout_writes_to_it(project: Path) -> None:
    (project / "k.py").write_text(LEGACY)
    piped = run_cli("check", "--no-cache", "-o", "/proc/self/fd/1", "k.py", cwd=project)
    assert piped.returncode == 1, piped.stderr
    assert b"FLY301" in piped.stdout

    log = project / "run.log"  # a regular file opened for appending: kept, the report added
    log.write_bytes(b"earlier lines\n")
    inode = log.stat().st_ino
    with open(log, "ab") as stream:
        appended = run_cli("check", "--no-cache", "-o", "/proc/self/fd/1", "k.py", cwd=project, stdout=stream)
    assert appended.returncode == 1, appended.stderr
    assert log.read_bytes().startswith(b"earlier lines\n") and b"FLY301" in log.read_bytes()
    assert log.stat().st_ino == inode


def test_output_file_onto_a_character_device_writes_into_it(project: Path) -> None:
    (project / "k.py").write_text(LEGACY)
    (project / "null.txt").symlink_to("/dev/null")
    result = run_cli("check", "--no-cache", "-o", "null.txt", "k.py", cwd=project)
    assert result.returncode == 1, result.stderr
    assert os.readlink(project / "null.txt") == "/dev/null" and stat.S_ISCHR(os.stat("/dev/null").st_mode)


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


def test_project_modules_a_check_reads_are_read_boundedly(project: Path) -> None:
    # The check of k.py reads other project files: the modules it imports, and every
    # file under the source roots to tell whether `_doubled` is called from elsewhere.
    # A FIFO or a /dev/zero link there is unreadable (so `_doubled` may be), never a
    # read that blocks or does not end.
    folder = project / "kernels"
    folder.mkdir()
    (folder / "__init__.py").write_text("")
    (folder / "k.py").write_text(
        "import flydsl.compiler as flyc\nimport flydsl.expr as fx\n\n"
        "from .zero import zero_helper\nfrom .fifo import fifo_helper\n\n\n"
        "def _doubled(count):\n    return fx.Int32(count) * 2\n\n\n"
        "@flyc.kernel\ndef scale_kernel(n: fx.Int32):\n    tid = fx.Int32(fx.thread_idx.x)\n"
        "    zero_helper(fifo_helper(_doubled(tid), n))\n"
    )
    os.mkfifo(folder / "fifo.py")
    (folder / "zero.py").symlink_to("/dev/zero")
    result = run_cli("check", "--no-cache", "--select", "FLY112", "kernels/k.py", cwd=project)
    assert (result.returncode, result.stderr) == (1, b"")
    assert [line.split(" ")[:2] for line in result.stdout.decode().splitlines() if "FLY" in line] == [
        ["kernels/k.py:14:11:", "FLY112"]]  # not row 9: an unreadable file may call `_doubled`


def test_a_project_module_above_max_file_size_is_not_read_for_its_helpers(project: Path) -> None:
    # `helpers.count()` returns an Int32, so `fx.Int32(helpers.count())` re-wraps one (FLY112):
    # known only by reading helpers.py, which max-file-size refuses once it is padded past it.
    (project / "pyproject.toml").write_text('[tool.flydsl-lint]\ntarget-version = "0.5.0"\n'
                                            'respect-gitignore = false\nmax-file-size = "1 KiB"\n')
    folder = project / "kernels"
    folder.mkdir()
    (folder / "__init__.py").write_text("")
    helper = "import flydsl.expr as fx\n\n\ndef count():\n    return fx.Int32(fx.thread_idx.x)\n"
    (folder / "helpers.py").write_text(helper)
    (folder / "k.py").write_text("import flydsl.expr as fx\n\nfrom . import helpers\n\nn = fx.Int32(helpers.count())\n")
    reported = run_cli("check", "--no-cache", "--select", "FLY112", "kernels/k.py", cwd=project)
    assert reported.returncode == 1 and b"kernels/k.py:5:5: FLY112" in reported.stdout
    (folder / "helpers.py").write_text(helper + "#" * 2000 + "\n")
    refused = run_cli("check", "--no-cache", "--select", "FLY112", "kernels/k.py", cwd=project)
    assert (refused.returncode, refused.stderr) == (0, b"")


def test_diff_base_skips_an_untracked_device_link(project: Path) -> None:
    # git lists an untracked symbolic link (not a FIFO): its rows are not counted through it
    for command in (["init", "-q", "."], ["add", "pyproject.toml"], ["commit", "-qm", "base"]):
        subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@t", *command], cwd=project, check=True)
    (project / "zero.py").symlink_to("/dev/zero")
    (project / "new.py").write_text(LEGACY)
    result = run_cli("check", "--no-cache", "--diff-base", "HEAD", "--select", "FLY1", "new.py", cwd=project)
    assert result.returncode == 1 and result.stderr == b""
    assert result.stdout.decode().startswith("new.py:")


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


def test_clean_removes_old_leftover_temporaries_of_ours_only(project: Path) -> None:
    sub = project / "kernels"
    sub.mkdir()
    handle, named_by_mkstemp = tempfile.mkstemp(prefix=".k.py.", suffix=".flydsl-lint", dir=sub)  # as write_atomic
    os.close(handle)
    old, by_mkstemp = sub / ".k.py.a1b2_c3d.flydsl-lint", Path(named_by_mkstemp)
    fresh = sub / ".k.py.zzzz9999.flydsl-lint"
    look_alikes = [sub / ".k.py.flydsl-lint", sub / "k.py.a1b2c3d4.flydsl-lint", sub / ".k.py.a1b2c3d4e.flydsl-lint"]
    for path in [old, fresh, *look_alikes]:
        path.write_text("half")
    link = sub / ".j.py.abcdefgh.flydsl-lint"
    link.symlink_to("k.py")
    folder = sub / ".d.py.abcdefgh.flydsl-lint"
    folder.mkdir()
    an_hour_ago = time.time() - 3600
    for path in [old, by_mkstemp, *look_alikes]:
        os.utime(path, (an_hour_ago, an_hour_ago))
    os.utime(link, (an_hour_ago, an_hour_ago), follow_symlinks=False)

    result = run_cli("clean", cwd=project)
    assert result.returncode == 0, result.stderr
    assert result.stdout.decode().splitlines() == sorted(f"Removed leftover temporary file {path.resolve()}"
                                                         for path in (old, by_mkstemp))
    assert not old.exists() and not by_mkstemp.exists() and fresh.exists() and folder.is_dir() and link.is_symlink()
    assert all(path.exists() for path in look_alikes)


def test_write_atomic_refuses_what_is_not_a_regular_file(tmp_path: Path) -> None:
    """A file swapped for a FIFO between the read and the write of a fix is not replaced."""
    from flydsl_lint.engine.writes import write_atomic

    fifo = tmp_path / "k.py"
    os.mkfifo(fifo)
    with pytest.raises(OSError, match=r"^not a regular file \(FIFO\)$"):
        write_atomic(fifo, b"x = 1\n")
    assert stat.S_ISFIFO(fifo.lstat().st_mode) and leftovers(tmp_path) == []
