"""git commands on a repository flydsl-lint only reads, with none of the repository's programs run.

A repository's configuration can make git run programs of its choosing: hooks
(`post-checkout` when a worktree is added, under `.git/hooks` or
`core.hooksPath`), an fsmonitor (on `git diff` against the working tree),
clean/smudge/process filters (on that diff and on checkout), external diff
drivers and textconv, and transports that a partial clone's lazy fetch would
start. `run` overrides all of them in the command scope, which beats every
config file, passes the settings through the environment so that git's own
child processes (`worktree add` checks out through one) inherit them, and
asks for no optional locks so that reading never rewrites the index.
"""

from __future__ import annotations

import functools
import os
import subprocess
from pathlib import Path

_SETTINGS = (
    ("core.hooksPath", "/dev/null"),
    ("core.fsmonitor", "false"),
    ("diff.external", ""),
    ("submodule.recurse", "false"),
    ("protocol.allow", "never"),
)
# Emptied for every filter driver the configuration defines (a driver has no fixed name).
_FILTER_KEYS = (("clean", ""), ("smudge", ""), ("process", ""), ("required", "false"))


def run(repo: Path, *args: str, input: bytes | None = None,
        timeout: float | None = None) -> subprocess.CompletedProcess:
    """`git -C repo args` with the settings above; stdin, stdout and stderr as bytes."""
    stdin = {"input": input} if input is not None else {"stdin": subprocess.DEVNULL}
    return subprocess.run(_argv(repo, args), env=_environment(repo), capture_output=True, timeout=timeout, **stdin)


def _argv(repo: Path, args: tuple[str, ...]) -> list[str]:
    return ["git", "--no-pager", "-C", str(repo), *args]


def _environment(repo: Path) -> dict[str, str]:
    settings = list(_SETTINGS)
    for driver in _filter_drivers(str(repo)):
        settings += [(f"filter.{driver}.{key}", value) for key, value in _FILTER_KEYS]
    return _with_settings(dict(os.environ, GIT_OPTIONAL_LOCKS="0"), settings)


def _with_settings(env: dict[str, str], settings: list[tuple[str, str]]) -> dict[str, str]:
    """GIT_CONFIG_COUNT/KEY_n/VALUE_n, after any the caller's environment already sets."""
    try:
        start = int(env.get("GIT_CONFIG_COUNT", "0"))
    except ValueError:
        start = 0
    for index, (key, value) in enumerate(settings, start):
        env[f"GIT_CONFIG_KEY_{index}"], env[f"GIT_CONFIG_VALUE_{index}"] = key, value
    env["GIT_CONFIG_COUNT"] = str(start + len(settings))
    return env


@functools.lru_cache(maxsize=None)
def _filter_drivers(repo: str) -> tuple[str, ...]:
    """Names of the filter drivers configured for `repo` (reading config runs nothing)."""
    env = _with_settings(dict(os.environ, GIT_OPTIONAL_LOCKS="0"), list(_SETTINGS))
    listed = subprocess.run(_argv(Path(repo), ("config", "-z", "--name-only", "--get-regexp", r"^filter\.")),
                            env=env, capture_output=True)
    drivers = set()
    for name in listed.stdout.decode("utf-8", "surrogateescape").split("\0"):
        section, _, rest = name.partition(".")
        driver, dot, _key = rest.rpartition(".")
        if section == "filter" and dot:
            drivers.add(driver)
    return tuple(sorted(drivers))
