"""`flydsl-lint check --diff-base REF`: report only what a change adds.

The rows added or changed since REF come from a zero-context `git diff`
(working tree against REF, so uncommitted edits count; in CI the tree is the
head commit). Untracked files count as entirely new. A diagnostic is reported
when any row of its range was added, as FlyDSL's typed-arithmetic gate
(scripts/check_typed_arithmetic_usage.py) decides.
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

from .. import readonly_git
from ..engine.source import read_regular

_HUNK_RE = re.compile(r"^@@ -\d+(?:,\d+)? \+(\d+)(?:,(\d+))? @@")


class DiffBaseError(Exception):
    """git could not tell what changed (not a repository, unknown REF)."""


def parse_added_lines(diff: str, top: Path) -> dict[Path, set[int]]:
    """Added row numbers per file (absolute paths) from `git diff --unified=0` output."""
    added: dict[Path, set[int]] = {}
    current: Path | None = None
    in_header = False  # between `diff --git` and the first hunk: `+++ ` names the file
    for line in diff.splitlines():
        if line.startswith("diff --git "):
            current, in_header = None, True
            continue
        if in_header and line.startswith("+++ "):
            name = line[4:]
            if name.startswith('"') and name.endswith('"'):
                name = _unquote(name[1:-1])
            current = (top / name[2:]).resolve() if name.startswith("b/") else None
            if current is not None:
                added.setdefault(current, set())
            continue
        match = _HUNK_RE.match(line)
        if match:
            in_header = False
        if match and current is not None:
            start, count = int(match.group(1)), int(match.group(2) if match.group(2) is not None else 1)
            added[current].update(range(start, start + count))
    return {path: rows for path, rows in added.items() if rows}


_ESCAPES = {"t": "\t", "n": "\n", '"': '"', "\\": "\\"}


def _unquote(name: str) -> str:
    """git's C-style quoting of unusual paths (core.quotePath=false keeps non-ASCII as is)."""
    return re.sub(r"\\(.)", lambda m: _ESCAPES.get(m.group(1), m.group(1)), name)


def _git(args: list[str], cwd: Path) -> str:
    """git in `cwd`, running nothing the repository configures (hooks, fsmonitor, filters, diff drivers)."""
    try:
        result = readonly_git.run(cwd, "-c", "core.quotePath=false", *args, timeout=120)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise DiffBaseError(f"cannot run git: {exc}") from None
    if result.returncode != 0:
        message = result.stderr.decode("utf-8", "replace").strip().splitlines()
        raise DiffBaseError(message[-1] if message else f"git {' '.join(args)} failed")
    return result.stdout.decode("utf-8", "surrogateescape")


def added_lines(ref: str, cwd: Path, max_file_size: int) -> dict[Path, set[int]]:
    """Rows added or changed since `ref` in the repository holding `cwd`; untracked files whole
    (one larger than `max_file_size` or not a regular file is refused by the check anyway)."""
    cwd = cwd.resolve()
    if not cwd.is_dir():
        cwd = cwd.parent if cwd.parent.is_dir() else Path.cwd()
    top = Path(_git(["rev-parse", "--show-toplevel"], cwd).strip())
    _git(["rev-parse", "--verify", "--quiet", f"{ref}^{{commit}}"], cwd)
    diff = _git(["diff", "--no-color", "--no-ext-diff", "--no-textconv", "--unified=0", "--diff-filter=ACMR",
                 ref, "--"], top)
    added = parse_added_lines(diff, top)
    for name in _git(["ls-files", "-z", "--others", "--exclude-standard"], top).split("\0"):
        if name.endswith((".py", ".pyi")):
            path = (top / name).resolve()
            try:
                count = len(read_regular(path, max_file_size).splitlines()) or 1
            except OSError:
                continue
            added[path] = set(range(1, count + 1))
    return added


def keep(diagnostic, added: dict[Path, set[int]]) -> bool:
    rows = added.get(Path(diagnostic.path).resolve())
    return bool(rows) and any(row in rows for row in range(diagnostic.start.row, diagnostic.end.row + 1))


def restrict(paths: list[str], settings, added: dict[Path, set[int]]) -> list[str]:
    """The files under `paths` that have added rows (missing paths kept, so they are reported)."""
    from ..engine.files import discover

    files, missing = discover(paths, settings)
    return [str(path) for path in files if path.resolve() in added] + [m.path for m in missing]


def filter_result(result, added: dict[Path, set[int]]):
    for file_result in result.files:
        file_result.diagnostics = [d for d in file_result.diagnostics if keep(d, added)]
    return result
