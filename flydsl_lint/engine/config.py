"""[tool.flydsl-lint] in pyproject.toml, validated into Settings."""

from __future__ import annotations

import fnmatch
import functools
import os
import re
import sys
from collections.abc import Callable
from pathlib import Path
from typing import NamedTuple

from .source import DEFAULT_MAX_FILE_SIZE, read_regular
from .versions import Version

DEFAULT_CACHE_DIR = ".flydsl-lint-cache"
TARGET_VERSION_VARIABLE = "FLYDSL_LINT_TARGET_VERSION"  # between --target-version and target-version
DEFAULT_EXCLUDE = (
    ".git", ".hg", ".svn", ".venv", "venv", "__pycache__", "build", "dist", "node_modules",
    ".tox", ".nox", ".eggs", "*.egg-info", ".mypy_cache", ".pytest_cache", ".ruff_cache", DEFAULT_CACHE_DIR,
)
DEFAULT_TUNED_KERNELS = ("flash_attn_gfx950.py", "mla_fwd_decode_*")
KNOWN_ARCHES = re.compile(r"^gfx(9\d\d|9[0-9a-f]{2}|10\d\d|11\d\d|12\d\d)$")
_CODE_PREFIX = re.compile(r"^(FLY\d{0,3}|ALL)$")
ALL = "ALL"  # ruff's selector for every rule, the advisory (default = false) ones included
_WILDCARD = re.compile(r"[*?[]")
MAX_CONFIG_BYTES = 1 << 20  # a configuration file larger than this is refused, never read whole
# Characters a terminal acts on or that reorder what it shows: C0 (but tab), DEL, C1,
# the Unicode line separators and the bidirectional overrides.
_CONTROL = re.compile("[\x00-\x08\x0a-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069]")


def escape_controls(text: str) -> str:
    """`text` with every control character spelled as an escape (`\\x1b`), so that
    printing a message or a path from a file can neither drive the terminal nor
    break a one-line report."""
    if _CONTROL.search(text) is None:
        return text
    return _CONTROL.sub(lambda match: match.group().encode("unicode_escape").decode("ascii"), text)


class ConfigError(Exception):
    """A bad setting or an unreadable configuration file.

    `message` is the one line every front end reports: `<path>: <reason>`.
    """

    def __init__(self, message: str) -> None:
        self.message = escape_controls(message)
        super().__init__(self.message)


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
    # Who chose `cache_dir`: "default", "config" (the linted project's file) or "command line"
    # (--cache-dir, FLYDSL_LINT_CACHE_DIR: the user's own). Only the user's may lie outside `root`.
    cache_dir_source: str = "default"
    output_format: str | None = None  # the report's format when the command line names none
    ignore_noqa: bool = False  # `# noqa` and file exemptions suppress nothing (ruff's --ignore-noqa)
    fix_tuned_kernels: bool = False  # the user's opt-in: fixes apply to tuned kernels too
    # Tuned kernels named on the command line (resolved paths): naming one is an opt-in for it.
    named_tuned_kernels: tuple[str, ...] = ()
    max_file_size: int = DEFAULT_MAX_FILE_SIZE  # bytes; larger files are refused unread

    def is_selected(self, code: str) -> bool:
        """Most specific prefix wins, as in ruff; ties go to ignore. An advisory
        rule (rules.toml `default = false`) is selected only by its exact code
        or by ALL, never by a prefix: `select = ["FLY"]` is the default set."""
        selected = self.select + self.extend_select
        if code in _advisory_codes():
            selected = tuple(selector for selector in selected if selector in (code, ALL))
        return _most_specific(code, selected, self.ignore)

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

    def guards_tuned_kernel(self, path: str) -> bool:
        """Whether `path` is a tuned kernel whose fixes are shown, never applied: it was not
        named on the command line and `fix-tuned-kernels` is off."""
        return (self.is_tuned_kernel(path) and not self.fix_tuned_kernels
                and os.path.realpath(path) not in self.named_tuned_kernels)

    def fingerprint(self) -> str:
        """Everything that can change a file's diagnostics, for the cache key."""
        parts = (
            self.select, self.ignore, self.extend_select, self.per_file_ignores, str(self.target_version),
            self.fixable, self.unfixable, self.extend_fixable,
            self.target_arch, self.legacy_module_roots, self.src, self.tuned_kernels, str(self.root),
            self.ignore_noqa, self.fix_tuned_kernels, self.named_tuned_kernels,
        )
        return repr(parts)


def _most_specific(code: str, included: tuple[str, ...], excluded: tuple[str, ...]) -> bool:
    """Whether the longest prefix of `code` listed is an included one (ties:
    excluded). ALL is the shortest prefix of all."""
    chosen, included_here = -1, False
    for prefix in included:
        prefix = "" if prefix == ALL else prefix
        if code.startswith(prefix) and len(prefix) > chosen:
            chosen, included_here = len(prefix), True
    for prefix in excluded:
        prefix = "" if prefix == ALL else prefix
        if code.startswith(prefix) and len(prefix) >= chosen:
            chosen, included_here = len(prefix), False
    return included_here


@functools.lru_cache(maxsize=1)
def _advisory_codes() -> frozenset[str]:
    from .metadata import load_metadata

    return frozenset(code for code, meta in load_metadata().items() if not meta.default)


_warned: set[tuple[str, str]] = set()


def redirect_codes(codes: tuple[str, ...], where: str) -> tuple[str, ...]:
    """`codes` with renamed ones (rules.toml's [redirects]) replaced by their
    new code, each with a one-line warning on stderr (once per place and code)."""
    from .metadata import load_redirects

    redirects = load_redirects()
    if redirects.keys().isdisjoint(codes):
        return codes
    for old in codes:
        if old in redirects and (where, old) not in _warned:
            _warned.add((where, old))
            print(f"flydsl-lint: warning: {where}: {old} is now {redirects[old]}; the old code is accepted "
                  "until the next release", file=sys.stderr)
    return tuple(redirects.get(code, code) for code in codes)


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
            try:
                tool = read_toml(candidate).get("tool", {})
            except ConfigError:
                return candidate  # reported by load_settings with its reason
            if not isinstance(tool, dict) or "flydsl-lint" in tool:
                return candidate  # a malformed `tool` too: load_settings says what is wrong
    return None


def read_toml(path: Path) -> dict:
    """The TOML document in `path`; ConfigError naming the file and the reason when
    it cannot be read (missing, a folder, a device, too large), is not UTF-8, or is
    not TOML."""
    # Imported here: a tree without a pyproject.toml never needs it.
    from .tomlcompat import tomllib

    where = str(path)
    try:
        data = read_regular(path, MAX_CONFIG_BYTES)
    except FileNotFoundError:
        raise ConfigError(f"{where}: config file not found") from None
    except OSError as exc:
        raise ConfigError(f"{where}: cannot read config: {exc.strerror or exc}") from None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ConfigError(f"{where}: not UTF-8 text (byte 0x{data[exc.start]:02x} at offset {exc.start})") from None
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{where}: invalid TOML: {exc}") from None
    except RecursionError:
        raise ConfigError(f"{where}: invalid TOML: nested too deeply") from None


def _toml_type(value: object) -> str:
    """How TOML calls the type of `value`, for error messages."""
    names = {bool: "a boolean", int: "an integer", float: "a float", str: "a string", list: "an array", dict: "a table"}
    return names.get(type(value), "a date or time")


def _string(value: object, key: str, where: str) -> str:
    if not isinstance(value, str):
        raise ConfigError(f"{where}: `{key}` must be a string, not {_toml_type(value)}")
    if "\0" in value:
        raise ConfigError(f"{where}: `{key}` contains a NUL character")
    return value


def _string_list(value: object, key: str, where: str) -> tuple[str, ...]:
    if isinstance(value, str) or not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ConfigError(f"{where}: `{key}` must be a list of strings")
    if any("\0" in v for v in value):
        raise ConfigError(f"{where}: `{key}` has a string with a NUL character")
    return tuple(value)


def checked_arches(arches: tuple[str, ...] | list[str], where: str) -> tuple[str, ...] | list[str]:
    """`arches` if each is a gfx target, as the command lines take them (`--target-arch`, verify's
    `--arch`); else the ConfigError that names `where` and the first that is not."""
    bad = [arch for arch in arches if not KNOWN_ARCHES.match(arch)]
    if bad or not arches:
        raise ConfigError(f"{where}: {bad[0] if bad else ''!r} is not a gfx target like gfx942")
    return arches


class SelectorError(ConfigError):
    """A code selector that is no FLY code or prefix, or that selects no rule."""

    def __init__(self, where: str, code: str, why: str) -> None:
        super().__init__(f"{where} has {code!r}, which {why}")
        self.code, self.why = code, why


def selectors(codes: tuple[str, ...], where: str) -> tuple[str, ...]:
    """`codes` redirected (see `redirect_codes`), each ALL or a FLY code or prefix that selects at
    least one rule: as in ruff, a typo (`FLY1O1`, `FLY999`) is an error, not a silent no-op."""
    from .metadata import load_metadata

    for code in codes:
        if not _CODE_PREFIX.match(code):
            raise SelectorError(where, code, "is not a FLY code or prefix")
    redirected = redirect_codes(codes, where)
    known = load_metadata()
    for code in redirected:
        if code != ALL and not any(rule.startswith(code) for rule in known):
            raise SelectorError(where, code, "selects no rule (see `flydsl-lint rules`)")
    return redirected


def _codes(value: object, key: str, where: str) -> tuple[str, ...]:
    return selectors(_string_list(value, key, where), f"{where}: `{key}`")


_SIZE = re.compile(r"^\s*(\d+)\s*(bytes|B|KiB|MiB|GiB)?\s*$")
_SIZE_UNITS = {None: 1, "bytes": 1, "B": 1, "KiB": 1 << 10, "MiB": 1 << 20, "GiB": 1 << 30}


def _size(value: object, key: str, where: str) -> int:
    """A positive size: a number of bytes, or a string like "10 MiB" (B, KiB, MiB, GiB)."""
    match = _SIZE.match(value) if isinstance(value, str) else None
    if isinstance(value, int) and not isinstance(value, bool):
        size = value
    elif match:
        size = int(match.group(1)) * _SIZE_UNITS[match.group(2)]
    else:
        size = 0
    if size <= 0:
        raise ConfigError(f"{where}: `{key}` = {value!r} must be a size like 1048576 or \"10 MiB\"")
    return size


def _release(text: str, named: str) -> Version:
    """The FlyDSL release `text` names; ConfigError saying which setting (`named`) is wrong."""
    try:
        return Version.parse(text)
    except ValueError:
        raise ConfigError(f"{named} = {text!r} is not a FlyDSL version like \"0.5.0\"") from None


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
            parsed["target_version"] = _release(_string(value, key, where), f"{where}: `target-version`")
            parsed["target_version_source"] = f"target-version in {Path(where).name}"
        elif key == "target-arch":
            arches = _string_list([value] if isinstance(value, str) else value, key, where)
            bad = [arch for arch in arches if not KNOWN_ARCHES.match(arch)]
            if bad:
                raise ConfigError(f"{where}: `target-arch` has {bad[0]!r}, not a gfx target like \"gfx942\"")
            parsed["target_arch"] = arches
        elif key in ("respect-gitignore", "force-exclude", "fix-tuned-kernels"):
            if not isinstance(value, bool):
                raise ConfigError(f"{where}: `{key}` must be true or false")
            parsed[key.replace("-", "_")] = value
        elif key == "cache-dir":
            if not _string(value, key, where):
                raise ConfigError(f"{where}: `cache-dir` is empty; name a folder")
            parsed["cache_dir"], parsed["cache_dir_source"] = value, "config"
        elif key == "output-format":  # its names are the CLI's to check
            parsed["output_format"] = _string(value, key, where)
        elif key == "max-file-size":
            parsed["max_file_size"] = _size(value, key, where)
        elif key == "verify":
            continue  # read by flydsl-lint-verify
        else:
            raise ConfigError(f"{where}: unknown key `{key}` in [tool.flydsl-lint]")
    return parsed


def _tool_table(pyproject: dict, where: str) -> dict:
    """The [tool.flydsl-lint] table of a parsed pyproject.toml ({} when absent)."""
    tool = pyproject.get("tool", {})
    if not isinstance(tool, dict):
        raise ConfigError(f"{where}: `tool` must be a table, not {_toml_type(tool)}")
    table = tool.get("flydsl-lint", {})
    if not isinstance(table, dict):
        raise ConfigError(f"{where}: `tool.flydsl-lint` must be a table, not {_toml_type(table)}")
    return table


def load_settings(config: Path | None = None, start: Path | None = None, isolated: bool = False,
                  **overrides: object) -> Settings:
    """Settings from an explicit file, else the nearest pyproject.toml, else
    defaults (always the defaults when `isolated`, as ruff's --isolated).

    Every front end calls this: a file that cannot be read, is not TOML or holds
    a bad value raises ConfigError, whose `message` is the one line to report."""
    path = None if isolated else config if config is not None else find_config(start or Path.cwd())
    parsed: dict = {}
    root = (start or Path.cwd()).resolve()
    if root.is_file():
        root = root.parent
    if path is not None:
        where = str(path)
        data = read_toml(path)
        # A pyproject.toml, or any file whose only table is [tool.flydsl-lint]; else bare keys.
        table = _tool_table(data, where) if path.name == "pyproject.toml" or list(data) == ["tool"] else data
        parsed = _parse_table(table, where)
        root = path.resolve().parent
    settings = Settings(root=root, config_file=path, **parsed)
    settings = settings._replace(**{k: v for k, v in overrides.items() if v is not None})
    chosen = os.environ.get(TARGET_VERSION_VARIABLE)
    if chosen and overrides.get("target_version") is None:  # the user's own: above the project's config
        settings = settings._replace(target_version=_release(chosen, f"${TARGET_VERSION_VARIABLE}"),
                                     target_version_source=f"${TARGET_VERSION_VARIABLE}")
    if settings.target_version is None:
        from .target import discover_target  # not needed when the config names the target

        found = discover_target(start or Path.cwd())
        settings = settings._replace(target_version=found.version, target_version_source=found.source)
    return settings
