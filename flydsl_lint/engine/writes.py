"""Writing a file without ever losing it: atomic replacement, and finding what an interrupted write left."""

from __future__ import annotations

import os
import re
import stat
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from .source import file_kind


def write_atomic(path: Path, data: bytes) -> None:
    """Give the file at `path` the contents `data`, so that an interruption leaves old or new, never half.

    The file is replaced, never the name in front of it: a symlink is followed, its
    target replaced and the link kept. An existing file keeps its mode and, as far
    as this user may set them, its owner and group; a new one gets the umask's mode.
    A file with several hard links, or anything but a regular file, is refused with an
    OSError: replacing it would split the links or the node, and writing into it in
    place could leave it half-written.
    """
    target = Path(os.path.realpath(path))
    info: os.stat_result | None
    try:
        info = os.stat(target)
    except FileNotFoundError:
        info = None
        umask = os.umask(0)
        os.umask(umask)
        mode = 0o666 & ~umask
    else:
        _check_replaceable(info)
        mode = stat.S_IMODE(info.st_mode)
    handle, temporary = tempfile.mkstemp(prefix=f".{target.name}.", suffix=TEMPORARY_SUFFIX, dir=target.parent)
    try:
        with os.fdopen(handle, "wb") as stream:
            if info is not None:
                _keep_owner(stream.fileno(), info)
            stream.write(data)
            stream.flush()
            os.fsync(stream.fileno())
        os.chmod(temporary, mode)  # after the owner: changing it clears set-id bits
        os.replace(temporary, target)
    except BaseException:
        try:
            os.unlink(temporary)
        except FileNotFoundError:
            pass
        raise


def _check_replaceable(info: os.stat_result) -> None:
    if not stat.S_ISREG(info.st_mode):
        raise OSError(f"not a regular file ({file_kind(info.st_mode)})")
    if info.st_nlink > 1:
        raise OSError(f"has {info.st_nlink} hard links; left untouched "
                      "(replacing it would split them, writing in place could leave it half-written)")


def _keep_owner(descriptor: int, info: os.stat_result) -> None:
    """Give the new file the old one's owner and group, or its group alone, as far as allowed."""
    if not hasattr(os, "fchown"):
        return
    for owner in (info.st_uid, -1):  # only root may give a file away; a member may set its group
        try:
            os.fchown(descriptor, owner, info.st_gid)
            return
        except OSError:
            continue


# write_atomic's temporaries are named `.NAME.` + mkstemp's 8 characters + this suffix.
TEMPORARY_SUFFIX = ".flydsl-lint"
_TEMPORARY_NAME = re.compile(r"\..+\.[a-z0-9_]{8}" + re.escape(TEMPORARY_SUFFIX))
# A temporary this recent may be a write under way in another run.
LEFTOVER_MIN_AGE = 60.0


def leftover_temporaries(start: Path, excluded: Callable[[Path], bool]) -> list[Path]:
    """The temporaries of write_atomic that an interrupted run left in `start` and
    below it (not in folders `excluded` rejects): regular files, not links, named
    exactly as it names them and unchanged for LEFTOVER_MIN_AGE seconds."""
    found: list[Path] = []
    oldest_allowed = time.time() - LEFTOVER_MIN_AGE
    for folder, subfolders, names in os.walk(start):
        subfolders[:] = [sub for sub in subfolders if not excluded(Path(folder) / sub)]
        for name in names:
            if not _TEMPORARY_NAME.fullmatch(name):
                continue
            path = Path(folder) / name
            try:
                info = path.lstat()
            except OSError:
                continue
            if stat.S_ISREG(info.st_mode) and info.st_mtime < oldest_allowed:
                found.append(path)
    return sorted(found)
