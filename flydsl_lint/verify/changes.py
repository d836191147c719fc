"""Git side of the runner: which refs to compare, what changed, isolated checkouts."""

from __future__ import annotations

import contextlib
import shutil
import subprocess
import tempfile
from pathlib import Path


class GitError(RuntimeError):
    """A git operation the runner depends on failed: a setup error (exit code 2)."""


def git(repo: Path, *args: str) -> str:
    completed = subprocess.run(["git", "-C", str(repo), *args], capture_output=True, text=True)
    if completed.returncode != 0:
        raise GitError(f"git {' '.join(args)}: {completed.stderr.strip() or 'failed'}")
    return completed.stdout


def repo_root(path: Path) -> Path:
    return Path(git(path, "rev-parse", "--show-toplevel").strip())


def resolve_commit(repo: Path, ref: str) -> str:
    return git(repo, "rev-parse", "--verify", f"{ref}^{{commit}}").strip()


def default_base(repo: Path) -> str:
    """Merge-base with the upstream branch when there is one, else HEAD."""
    try:
        return git(repo, "merge-base", "HEAD", "@{upstream}").strip()
    except GitError:
        return resolve_commit(repo, "HEAD")


def changed_python_files(repo: Path, base: str, head: str | None) -> list[str]:
    """Repo-relative .py paths that differ; ``head=None`` means the working tree (incl. untracked)."""
    if head is None:
        paths = set(git(repo, "diff", "--name-only", base).split("\n"))
        paths |= set(git(repo, "ls-files", "--others", "--exclude-standard").split("\n"))
    else:
        paths = set(git(repo, "diff", "--name-only", base, head).split("\n"))
    return sorted(p for p in paths if p.endswith(".py"))


@contextlib.contextmanager
def worktree(repo: Path, ref: str, parent: Path):
    """A detached ``git worktree`` of ``ref`` under ``parent``, removed however we leave."""
    path = Path(tempfile.mkdtemp(prefix="tree-", dir=parent))
    git(repo, "worktree", "add", "--detach", "--force", str(path), ref)
    try:
        yield path
    finally:
        subprocess.run(["git", "-C", str(repo), "worktree", "remove", "--force", str(path)], capture_output=True)
        shutil.rmtree(path, ignore_errors=True)
        subprocess.run(["git", "-C", str(repo), "worktree", "prune"], capture_output=True)
