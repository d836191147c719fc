"""Which files a run checks: explicit paths, directory walks, excludes, .gitignore."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import NamedTuple

from .config import Settings
from .source import file_kind


class BadPath(NamedTuple):
    """A path named on the command line that cannot be checked, and why."""

    path: str
    reason: str = "no such file or directory"


EMPTY_PATH = BadPath('""', "an empty path names no file or folder")


def _in_git_work_tree(folder: Path) -> bool:
    """Whether git could list `folder`: a `.git` in it or above, or GIT_DIR set."""
    if "GIT_DIR" in os.environ:
        return True
    start = folder.resolve()
    return any((candidate / ".git").exists() for candidate in (start, *start.parents))


def _git_listing(folder: Path) -> list[Path] | None:
    """Tracked and untracked-but-not-ignored files under `folder`, or None outside git."""
    if not _in_git_work_tree(folder):
        return None  # spares a folder walk outside git the subprocess import and git's own start
    import subprocess  # only a folder walk needs it; keeps one-file runs' start-up small

    try:
        result = subprocess.run(
            # core.fsmonitor=false: the repository's fsmonitor program must not run (see readonly_git).
            ["git", "-c", "core.fsmonitor=false", "-C", str(folder), "ls-files", "-z", "--cached", "--others",
             "--exclude-standard", "--", "."],
            capture_output=True,
            timeout=30,
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    if result.returncode != 0:
        return None
    return [folder / name for name in result.stdout.decode("utf-8", "surrogateescape").split("\0") if name]


def _walk(folder: Path, excluded: Callable[[Path], bool]) -> list[Path]:
    """The regular *.py/*.pyi files below `folder`. FIFOs, devices and dangling
    links are skipped without a word, as git's listing and ruff skip them: a
    walk names no file, and opening one could block or never end."""
    found = []
    for current, dirs, names in os.walk(folder):
        base = Path(current)
        dirs[:] = sorted(d for d in dirs if not excluded(base / d))
        found.extend(path for path in (base / name for name in sorted(names) if name.endswith((".py", ".pyi")))
                     if path.is_file())
    return found


def _bad_path(raw: str) -> BadPath:
    """Why a named path that is neither a regular file nor a folder cannot be checked."""
    try:
        mode = os.stat(raw).st_mode
    except FileNotFoundError:
        return BadPath(raw)
    except OSError as exc:
        return BadPath(raw, f"cannot read: {exc.strerror or exc}")
    return BadPath(raw, f"not a regular file ({file_kind(mode)})")


def discover(paths: list[str], settings: Settings) -> tuple[list[Path], list[BadPath]]:
    """Python files to check, in a stable order, and the named paths that cannot
    be checked (missing, or neither a regular file nor a folder).

    A file named on the command line is checked unless `force-exclude` is set
    and an exclude matches it (pre-commit names every staged file); directories
    are walked with `exclude`/`extend-exclude` and, inside a git work tree, .gitignore.
    """
    files: list[Path] = []
    missing: list[BadPath] = []
    excluded = settings.exclusion_test()
    for raw in paths:
        path = Path(raw)
        if not raw:  # Path("") is ".": a script's unset variable must not check the whole folder
            missing.append(EMPTY_PATH)
        elif path.is_file():
            if not (settings.force_exclude and excluded(path)):
                files.append(path)
        elif path.is_dir():
            listing = _git_listing(path) if settings.respect_gitignore else None
            if listing is None:
                candidates = _walk(path, excluded)
            else:
                candidates = [p for p in listing if p.suffix in (".py", ".pyi") and p.is_file()]
            files.extend(p for p in candidates if not excluded(p))
        else:
            missing.append(_bad_path(raw))
    unique = list(dict.fromkeys(os.path.normpath(p) for p in files))
    return [Path(p) for p in sorted(unique)], missing
