"""Git side of the runner: which refs to compare, what changed, and each commit's Python sources.

Every command goes through ``readonly_git``, so nothing the repository
configures (hooks, filters, fsmonitor, diff drivers) runs. Planning reads
commits from the object store; only a run checks a commit out (``scratch``).
"""

from __future__ import annotations

from pathlib import Path
from typing import Iterator

from flydsl_lint import readonly_git
from flydsl_lint.verify.imports import MAX_SOURCE_BYTES, Source, Unreadable, is_skipped, too_large


class GitError(RuntimeError):
    """A git operation the runner depends on failed: a setup error (exit code 2)."""


def git_bytes(repo: Path, *args: str, input: bytes | None = None) -> bytes:
    try:
        completed = readonly_git.run(repo, *args, input=input)
    except OSError as exc:
        raise GitError(f"cannot run git: {exc.strerror}") from None
    if completed.returncode != 0:
        message = completed.stderr.decode("utf-8", "replace").strip()
        raise GitError(f"git {' '.join(args)}: {message or 'failed'}")
    return completed.stdout


def git(repo: Path, *args: str) -> str:
    return git_bytes(repo, *args).decode("utf-8", "surrogateescape")


def repo_root(path: Path) -> Path:
    return Path(git(path, "rev-parse", "--show-toplevel").strip())


def resolve_commit(repo: Path, ref: str) -> str:
    return git(repo, "rev-parse", "--verify", "--end-of-options", f"{ref}^{{commit}}").strip()


def has_path(repo: Path, commit: str | None, path: str) -> bool:
    """Whether `commit` (None: the working tree) has a file or folder at repo-relative `path`."""
    if commit is None:
        return (repo / path).exists()
    return readonly_git.run(repo, "cat-file", "-e", f"{commit}:{path}").returncode == 0


def default_base(repo: Path) -> str:
    """Merge-base with the upstream branch when there is one, else HEAD."""
    try:
        return git(repo, "merge-base", "HEAD", "@{upstream}").strip()
    except GitError:
        return resolve_commit(repo, "HEAD")


def _names(output: str) -> set[str]:
    return {name for name in output.split("\0") if name}


def changed_python_files(repo: Path, base: str, head: str | None) -> list[str]:
    """Repo-relative .py paths that differ; ``head=None`` means the working tree (incl. untracked)."""
    diff = ["diff", "-z", "--name-only", "--no-ext-diff", "--no-textconv", base]
    if head is None:
        paths = _names(git(repo, *diff, "--"))
        paths |= _names(git(repo, "ls-files", "-z", "--others", "--exclude-standard"))
    else:
        paths = _names(git(repo, *diff, head, "--"))
    return sorted(p for p in paths if p.endswith(".py"))


def commit_sources(repo: Path, commit: str) -> Iterator[tuple[str, Source]]:
    """Every .py file of ``commit`` (as ``imports.python_files`` picks them), read from the object store."""
    blobs: dict[str, str] = {}
    for entry in git(repo, "ls-tree", "-r", "-z", "-l", "--full-tree", commit).split("\0"):
        meta, _, path = entry.partition("\t")
        if not path.endswith(".py") or is_skipped(path):
            continue
        mode, kind, oid, size = meta.split()
        if kind != "blob":
            yield path, Unreadable(f"not a file but a {kind}", is_file=False)
        elif mode == "120000":
            yield path, Unreadable("a symbolic link: its target is not read", is_file=True)
        elif int(size) > MAX_SOURCE_BYTES:
            yield path, too_large()
        else:
            blobs[path] = oid
    contents = _read_blobs(repo, set(blobs.values()))
    for path, oid in sorted(blobs.items()):
        yield path, contents.get(oid, Unreadable("missing from the object store", is_file=True))


def _read_blobs(repo: Path, oids: set[str]) -> dict[str, bytes]:
    """One ``git cat-file --batch`` for all of them; a missing object is left out."""
    if not oids:
        return {}
    output = git_bytes(repo, "cat-file", "--batch", input="".join(f"{oid}\n" for oid in oids).encode())
    contents, position = {}, 0
    while position < len(output):
        end = output.index(b"\n", position)
        oid, _, rest = output[position:end].decode().partition(" ")
        position = end + 1
        if rest == "missing":
            continue
        size = int(rest.split()[1])
        contents[oid] = output[position:position + size]
        position += size + 1  # the contents are followed by a newline
    return contents
