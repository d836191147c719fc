"""[tool.flydsl-lint] in pyproject.toml, validated into Settings."""

from __future__ import annotations

import fnmatch
import functools
import os
import re
from collections.abc import Callable
from pathlib import Path
from typing import NamedTuple

from .versions import Version, installed_flydsl_version

DEFAULT_CACHE_DIR = ".flydsl-lint-cache"
DEFAULT_EXCLUDE = (
    ".git", ".hg", ".svn", ".venv", "venv", "__pycache__", "build", "dist", "node_modules",
    ".tox", ".nox", ".eggs", "*.egg-info", ".mypy_cache", ".pytest_cache", ".ruff_cache", DEFAULT_CACHE_DIR,
)
DEFAULT_TUNED_KERNELS = ("flash_attn_gfx950.py", "mla_fwd_decode_*")
KNOWN_ARCHES = re.compile(r"^gfx(9\d\d|9[0-9a-f]{2}|10\d\d|11\d\d|12\d\d)$")
_CODE_PREFIX = re.compile(r"^FLY\d{0,3}$")
_WILDCARD = re.compile(r"[*?[]")


class ConfigError(Exception):
    """A bad setting; the message names the file and the key."""


class Settings(NamedTuple):
    root: Path  # the configuration file's folder (else where the run starts); patterns are relative to it
    config_file: Path | None = None
    select: tuple[str, ...] = ("FLY",)
    ignore: tuple[str, ...] = ()
    extend_select: tuple[str, ...] = ()
    per_file_ignores: tuple[tuple[str, tuple[str, ...]], ...] = ()
    # Codes whose fixes are offered (and applied by --fix); the others are reported without one.
    fixable: tuple[str, ...] = ("FLY",)
    unfixable: tuple[str, ...] = ()
    extend_fixable: tuple[str, ...] = ()
    exclude: tuple[str, ...] = DEFAULT_EXCLUDE
    extend_exclude: tuple[str, ...] = ()
    respect_gitignore: bool = True
    force_exclude: bool = False  # excludes apply to files named on the command line too (pre-commit)
    target_version: Version | None = None
    target_version_source: str = "unknown"
    target_arch: tuple[str, ...] = ()
    legacy_module_roots: tuple[str, ...] = ()
    src: tuple[str, ...] = (".", "python", "src")
    tuned_kernels: tuple[str, ...] = DEFAULT_TUNED_KERNELS
    cache_dir: str = DEFAULT_CACHE_DIR
    output_format: str | None = None  # the report's format when the command line names none
    ignore_noqa: bool = False  # `# noqa` and file exemptions suppress nothing (ruff's --ignore-noqa)

    def is_selected(self, code: str) -> bool:
        """Most specific prefix wins, as in ruff; ties go to ignore."""
        return _most_specific(code, self.select + self.extend_select, self.ignore)

    def is_fixable(self, code: str) -> bool:
        """Whether `code`'s fixes are offered: ruff's fixable/unfixable, by the same precedence."""
        return _most_specific(code, self.fixable + self.extend_fixable, self.unfixable)

    def ignored_for(self, path: str) -> tuple[str, ...]:
        if not self.per_file_ignores:
            return ()
        relative = _relative(path, self.root)
        codes: list[str] = []
        for pattern, ignored in self.per_file_ignores:
            if _path_matches(relative, pattern):
                codes.extend(ignored)
        return tuple(codes)

    def is_excluded(self, path: Path) -> bool:
        return self._excludes(_relative(str(path), self.root))

    def exclusion_test(self) -> Callable[[Path], bool]:
        """`is_excluded` for the many paths of one discovery: each folder is
        resolved once, and a path is resolved on its own only when it is a
        symlink (resolving every path took a system call per component)."""
        folders: dict[str, tuple[str, bool]] = {}

        def excluded(path: Path) -> bool:
            name = os.fspath(path)
            folder, leaf = os.path.split(name)
            if leaf in ("", ".", "..") or os.path.islink(name):
                return self.is_excluded(path)
            known = folders.get(folder)
            if known is None:
                known = folders[folder] = _relative_and_inside(folder or ".", self.root)
            relative, inside = known
            if not inside:
                return self.is_excluded(path)  # the root may lie below this folder
            return self._excludes(leaf if relative == "." else f"{relative}/{leaf}")

        return excluded

    def _excludes(self, relative: str) -> bool:
        return _matches_any(relative, self.exclude + self.extend_exclude)

    def is_tuned_kernel(self, path: str) -> bool:
        return _matches_any(_relative(path, self.root), self.tuned_kernels)

    def fingerprint(self) -> str:
        """Everything that can change a file's diagnostics, for the cache key."""
        parts = (
            self.select, self.ignore, self.extend_select, self.per_file_ignores, str(self.target_version),
            self.fixable, self.unfixable, self.extend_fixable,
            self.target_arch, self.legacy_module_roots, self.src, self.tuned_kernels, str(self.root),
            self.ignore_noqa,
        )
        return repr(parts)


def _most_specific(code: str, included: tuple[str, ...], excluded: tuple[str, ...]) -> bool:
    """Whether the longest prefix of `code` listed is an included one (ties: excluded)."""
    chosen, included_here = -1, False
    for prefix in included:
        if code.startswith(prefix) and len(prefix) > chosen:
            chosen, included_here = len(prefix), True
    for prefix in excluded:
        if code.startswith(prefix) and len(prefix) >= chosen:
            chosen, included_here = len(prefix), False
    return included_here


def _relative(path: str, root: Path) -> str:
    """`path` relative to the settings root, both resolved (a path outside: as given)."""
    return _relative_and_inside(path, root)[0]


def _relative_and_inside(path: str, root: Path) -> tuple[str, bool]:
    """`_relative(path, root)`, and whether the path is the root or inside it."""
    resolved = os.path.realpath(path)
    base = (_resolved_root(root) if root.is_absolute() else os.path.realpath(root)).rstrip(os.sep)
    if os.path.normcase(resolved) == os.path.normcase(base):
        return ".", True
    if os.path.normcase(resolved).startswith(os.path.normcase(base) + os.sep):
        return Path(resolved[len(base) + 1 :]).as_posix(), True
    return Path(path).as_posix(), False


@functools.lru_cache(maxsize=16)
def _resolved_root(root: Path) -> str:
    """A settings root resolved once per run (every discovered file asks)."""
    return os.path.realpath(root)


def _path_matches(relative: str, pattern: str) -> bool:
    """gitignore-like: a bare name matches any component, a path matches from the root."""
    pattern = pattern.rstrip("/")
    if "/" in pattern:
        return fnmatch.fnmatchcase(relative, pattern) or fnmatch.fnmatchcase(relative, pattern + "/*")
    if not _WILDCARD.search(pattern):  # a plain name: most excludes
        return pattern in relative.split("/")
    return any(fnmatch.fnmatchcase(part, pattern) for part in relative.split("/"))


def _matches_any(relative: str, patterns: tuple[str, ...]) -> bool:
    """`any(_path_matches(relative, p) for p in patterns)`, with the plain names
    (most excludes) tested as one set."""
    names, others = _sorted_patterns(patterns)
    return not names.isdisjoint(relative.split("/")) or any(_path_matches(relative, p) for p in others)


@functools.lru_cache(maxsize=16)
def _sorted_patterns(patterns: tuple[str, ...]) -> tuple[frozenset[str], tuple[str, ...]]:
    """The plain names among `patterns` (no `/`, no wildcard), and the rest."""
    stripped = [pattern.rstrip("/") for pattern in patterns]
    names = frozenset(p for p in stripped if "/" not in p and not _WILDCARD.search(p))
    return names, tuple(p for p in stripped if p not in names)


def find_config(start: Path) -> Path | None:
    """The nearest pyproject.toml with a [tool.flydsl-lint] table, walking up."""
    start = start.resolve()
    for folder in [start, *start.parents] if start.is_dir() else [start.parent, *start.parent.parents]:
        candidate = folder / "pyproject.toml"
        if candidate.is_file():
            # Imported here: a tree without a pyproject.toml never needs it.
            from .tomlcompat import tomllib

            try:
                with open(candidate, "rb") as handle:
                    data = tomllib.load(handle)
            except (OSError, tomllib.TOMLDecodeError):
                return candidate  # reported by load_settings with its reason
            if "flydsl-lint" in data.get("tool", {}):
                return candidate
    return None


def _string_list(value: object, key: str, where: str) -> tuple[str, ...]:
    if isinstance(value, str) or not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ConfigError(f"{where}: `{key}` must be a list of strings")
    return tuple(value)


def _codes(value: object, key: str, where: str) -> tuple[str, ...]:
    codes = _string_list(value, key, where)
    for code in codes:
        if not _CODE_PREFIX.match(code):
            raise ConfigError(f"{where}: `{key}` has {code!r}, which is not a FLY code or prefix")
    return codes


def _parse_table(table: dict, where: str) -> dict:
    parsed: dict = {}
    for key, value in table.items():
        if key in ("select", "ignore", "extend-select", "fixable", "unfixable", "extend-fixable"):
            parsed[key.replace("-", "_")] = _codes(value, key, where)
        elif key in ("exclude", "extend-exclude", "legacy-module-roots", "src", "tuned-kernels"):
            parsed[key.replace("-", "_")] = _string_list(value, key, where)
        elif key == "per-file-ignores":
            if not isinstance(value, dict):
                raise ConfigError(f"{where}: `per-file-ignores` must be a table of pattern = [codes]")
            parsed["per_file_ignores"] = tuple(
                (pattern, _codes(codes, f"per-file-ignores.{pattern}", where)) for pattern, codes in value.items()
            )
        elif key == "target-version":
            try:
                parsed["target_version"] = Version.parse(str(value))
            except ValueError:
                raise ConfigError(f"{where}: `target-version` = {value!r} is not a FlyDSL version like \"0.5.0\"") from None
            parsed["target_version_source"] = "config"
        elif key == "target-arch":
            arches = _string_list([value] if isinstance(value, str) else value, key, where)
            bad = [arch for arch in arches if not KNOWN_ARCHES.match(arch)]
            if bad:
                raise ConfigError(f"{where}: `target-arch` has {bad[0]!r}, not a gfx target like \"gfx942\"")
            parsed["target_arch"] = arches
        elif key in ("respect-gitignore", "force-exclude"):
            if not isinstance(value, bool):
                raise ConfigError(f"{where}: `{key}` must be true or false")
            parsed[key.replace("-", "_")] = value
        elif key in ("cache-dir", "output-format"):  # output-format's names are the CLI's to check
            if not isinstance(value, str):
                raise ConfigError(f"{where}: `{key}` must be a string")
            parsed[key.replace("-", "_")] = value
        elif key == "verify":
            continue  # read by flydsl-lint-verify
        else:
            raise ConfigError(f"{where}: unknown key `{key}` in [tool.flydsl-lint]")
    return parsed


def load_settings(config: Path | None = None, start: Path | None = None, isolated: bool = False,
                  **overrides: object) -> Settings:
    """Settings from an explicit file, else the nearest pyproject.toml, else
    defaults (always the defaults when `isolated`, as ruff's --isolated)."""
    path = None if isolated else config if config is not None else find_config(start or Path.cwd())
    parsed: dict = {}
    root = (start or Path.cwd()).resolve()
    if root.is_file():
        root = root.parent
    if path is not None:
        from .tomlcompat import tomllib

        where = str(path)
        try:
            with open(path, "rb") as handle:
                data = tomllib.load(handle)
        except FileNotFoundError:
            raise ConfigError(f"{where}: config file not found") from None
        except OSError as exc:
            raise ConfigError(f"{where}: cannot read config: {exc.strerror or exc}") from None
        except tomllib.TOMLDecodeError as exc:
            raise ConfigError(f"{where}: invalid TOML: {exc}") from None
        table = data.get("tool", {}).get("flydsl-lint", {}) if path.name == "pyproject.toml" else data
        if not isinstance(table, dict):
            raise ConfigError(f"{where}: [tool.flydsl-lint] must be a table")
        parsed = _parse_table(table, where)
        root = path.resolve().parent
    settings = Settings(root=root, config_file=path, **parsed)
    settings = settings._replace(**{k: v for k, v in overrides.items() if v is not None})
    if settings.target_version is None:
        installed = installed_flydsl_version()
        if installed is not None:
            settings = settings._replace(target_version=installed, target_version_source="installed flydsl")
    return settings
