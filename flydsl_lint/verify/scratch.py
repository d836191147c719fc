"""The run's temporary directory and the worktrees in it, removed (and the removal checked) however the run ends.

Ctrl-C and SIGTERM (raised as KeyboardInterrupt) are held back while a
directory or worktree is created and recorded, and while they are removed:
an interrupt then lands before or after, never between creating something and
knowing it must go. git inherits the blocked signals, so a Ctrl-C on the
terminal cannot kill a ``git worktree add`` halfway either.
"""

from __future__ import annotations

import contextlib
import shutil
import tempfile
from pathlib import Path

from flydsl_lint.verify.changes import GitError, git
from flydsl_lint.verify.signals import signals_held


class Scratch:
    """A temporary directory (``open``), checkouts in it (``worktree``), all removed by ``close``.

    Worktrees are always removed; ``keep`` keeps the directory (dumps and logs).
    """

    def __init__(self) -> None:
        self.repo: Path | None = None
        self.keep = False
        self.path: Path | None = None
        self.worktrees: list[Path] = []
        self.leftovers: list[str] = []  # what ``close`` could not remove

    def open(self, repo: Path, keep: bool = False) -> None:
        self.repo, self.keep = repo, keep
        with signals_held():
            self.path = Path(tempfile.mkdtemp(prefix="flydsl-verify-"))

    def worktree(self, ref: str) -> Path:
        """A detached checkout of ``ref`` (git runs none of the repository's hooks or filters)."""
        with signals_held():
            path = Path(tempfile.mkdtemp(prefix="tree-", dir=self.path))
            self.worktrees.append(path)
            git(self.repo, "worktree", "add", "--detach", "--force", str(path), ref)
        return path

    def close(self) -> None:
        if self.path is None:
            return
        with signals_held():
            self.leftovers = self._remove_worktrees()
            if not self.keep:
                shutil.rmtree(self.path, ignore_errors=True)
                if self.path.exists():
                    self.leftovers.append(str(self.path))

    def _remove_worktrees(self) -> list[str]:
        """Remove ours (even half-created or locked ones), then check that git lists none of them."""
        for path in self.worktrees:
            with contextlib.suppress(GitError):
                git(self.repo, "worktree", "remove", "--force", "--force", str(path))
            shutil.rmtree(path, ignore_errors=True)
        with contextlib.suppress(GitError):
            git(self.repo, "worktree", "prune")
        if not self.worktrees:
            return []
        ours = {path.resolve() for path in self.worktrees}
        try:
            listing = git(self.repo, "worktree", "list", "--porcelain", "-z")
        except GitError as exc:
            return [f"worktrees under {self.path} (cannot list them: {exc})"]
        listed = (field.partition(" ")[2] for field in listing.split("\0") if field.startswith("worktree "))
        return [path for path in listed if Path(path).resolve() in ours]
