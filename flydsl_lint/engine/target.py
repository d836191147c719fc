"""Which FlyDSL release the linted project targets, read from the project's own files.

First match wins:

1. the project's pin of `flydsl`: its requirements files (and the requirement and
   constraint files they include), pyproject.toml's `[project]` dependencies,
   optional dependencies and dependency groups and `[tool.poetry]`, setup.cfg,
   string literals of setup.py, then a lock file (uv.lock, poetry.lock, pdm.lock);
2. a FlyDSL source checkout's own `__version__`;
3. the installed `flydsl` distribution.

The project is looked for from the linted path upwards, up to the folder holding
`.git`. Nothing of it is imported or executed: setup.py is parsed, never run. An
exact pin gives that release; a range gives the lowest known release it allows,
so a fix is offered only where every release the project accepts has its API.
"""

from __future__ import annotations

import ast
import re
from functools import lru_cache
from pathlib import Path
from typing import NamedTuple

from .source import SourceError, read_data
from .versions import Version, installed_flydsl_version

MAX_PROJECT_FILE_BYTES = 4 * 1024 * 1024  # a lock file of a large project is ~1 MB
MAX_INCLUDED_FILES = 32  # requirement files followed through -r/-c, against include loops

_REQUIREMENT = re.compile(r"^\s*([A-Za-z0-9][A-Za-z0-9._-]*)\s*(?:\[[^\]]*\])?\s*(.*)$")
_SPECIFIER = re.compile(r"^\s*(===|==|!=|~=|>=|<=|>|<)\s*([^\s,;]+)\s*$")
_WHEEL_VERSION = re.compile(r"flydsl-(\d+(?:\.\d+)+)[-.]", re.IGNORECASE)
_INCLUDE = re.compile(r"^\s*(?:-r|-c|--requirement|--constraint)(?:\s*=\s*|\s+)(\S+)")
_LOCKED = re.compile(r'^name\s*=\s*"flydsl"\s*\n\s*version\s*=\s*"([^"]+)"', re.MULTILINE)
_DUNDER_VERSION = re.compile(r"""^__version__\s*=\s*["']([^"']+)["']""", re.MULTILINE)


class Target(NamedTuple):
    version: Version | None
    source: str  # where it came from, for --show-settings and the summary


class Releases(NamedTuple):
    known: tuple[Version, ...]  # oldest first
    oldest_supported: Version
    commonly_pinned: tuple[Version, ...]  # what downstream projects typically pin


@lru_cache(maxsize=1)
def releases() -> Releases:
    """The FlyDSL releases this tool knows (data/releases.txt)."""
    values: dict[str, list[str]] = {}
    with open(Path(__file__).resolve().parent.parent / "data" / "releases.txt", encoding="utf-8") as lines:
        for line in lines:
            if not line.startswith("#") and " = " in line:
                key, _, rest = line.partition(" = ")
                values[key] = rest.split()
    return Releases(tuple(Version.parse(v) for v in values["releases"]), Version.parse(values["oldest-supported"][0]),
                    tuple(Version.parse(v) for v in values.get("commonly-pinned", ())))


def discover_target(start: Path) -> Target:
    """The target release of the project that `start` (a file or folder) belongs to."""
    folders = _project_folders(start)
    for folder in folders:
        found = _pinned_in(folder)
        if found is not None:
            return found
    for folder in folders:
        found = _checkout_version(folder)
        if found is not None:
            return found
    installed = installed_flydsl_version()
    if installed is not None:
        return Target(installed, "installed flydsl")
    return Target(None, "unknown")


def _project_folders(start: Path) -> list[Path]:
    """`start`'s folder and its parents, up to the first one holding `.git`."""
    folder = start.resolve()
    if not folder.is_dir():
        folder = folder.parent
    folders = []
    for candidate in (folder, *folder.parents):
        folders.append(candidate)
        if (candidate / ".git").exists():
            break
    return folders


# -------------------------------------------------------------- pins in one folder
def _pinned_in(folder: Path) -> Target | None:
    for readers in (_requirements_pins, _pyproject_pins, _setup_cfg_pins, _setup_py_pins):
        for where, requirement in readers(folder):
            version = _lowest_allowed(requirement)
            if version is not None:
                return Target(version, f"{_shown(where, folder)} ({requirement.strip()})")
    for name in ("uv.lock", "poetry.lock", "pdm.lock"):
        text = _read(folder / name)
        match = _LOCKED.search(text) if text else None
        if match:
            try:
                return Target(Version.parse(match.group(1)), f"{name} (flydsl {match.group(1)})")
            except ValueError:
                continue
    return None


def _shown(where: Path, folder: Path) -> str:
    try:
        return str(where.relative_to(folder))
    except ValueError:
        return str(where)


def _read(path: Path) -> str | None:
    """A small regular file's text, else None (absent, special, too large, undecodable)."""
    try:
        return read_data(path, MAX_PROJECT_FILE_BYTES).decode("utf-8")
    except (SourceError, UnicodeDecodeError):
        return None


def _requirements_pins(folder: Path):
    files = sorted(folder.glob("requirements*.txt")) + sorted(folder.glob("requirements/*.txt"))
    seen: set[Path] = set()
    while files and len(seen) < MAX_INCLUDED_FILES:
        path = files.pop(0)
        if path.resolve() in seen:
            continue
        seen.add(path.resolve())
        for line in (_read(path) or "").splitlines():
            line = line.split(" #", 1)[0].strip()
            include = _INCLUDE.match(line)
            if include:
                files.append(path.parent / include.group(1))
            elif _is_flydsl(line):
                yield path, line


def _pyproject_pins(folder: Path):
    text = _read(folder / "pyproject.toml")
    if not text:
        return
    from .tomlcompat import tomllib

    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError:
        return
    where = folder / "pyproject.toml"
    project = data.get("project") if isinstance(data.get("project"), dict) else {}
    groups = [project.get("dependencies")]
    for table in (project.get("optional-dependencies"), data.get("dependency-groups")):
        if isinstance(table, dict):
            groups.extend(table.values())
    for group in groups:
        for requirement in group if isinstance(group, list) else ():
            if isinstance(requirement, str) and _is_flydsl(requirement):
                yield where, requirement
    poetry = data.get("tool", {}).get("poetry", {}) if isinstance(data.get("tool"), dict) else {}
    tables = [poetry.get("dependencies"), poetry.get("dev-dependencies")] if isinstance(poetry, dict) else []
    if isinstance(poetry, dict) and isinstance(poetry.get("group"), dict):
        tables += [g.get("dependencies") for g in poetry["group"].values() if isinstance(g, dict)]
    for table in tables:
        if isinstance(table, dict) and "flydsl" in table:
            constraint = table["flydsl"]
            if isinstance(constraint, dict):
                constraint = constraint.get("version")
            if isinstance(constraint, str):
                yield where, "flydsl" + _poetry_specifiers(constraint)


def _poetry_specifiers(constraint: str) -> str:
    """Poetry's `^0.3.1`, `~0.3.1`, `0.3.1` and `*` as PEP 440 specifiers."""
    parts = []
    for piece in constraint.split(","):
        piece = piece.strip()
        if piece in ("", "*"):
            continue
        if piece[0] in "^~" and piece[1:2] != "=":
            numbers = tuple(int(n) for n in piece[1:].split(".") if n.isdigit())
            bump = next((i for i, n in enumerate(numbers) if n), len(numbers) - 1) if piece[0] == "^" else 1
            upper = numbers[:bump] + (numbers[bump] + 1,) if bump < len(numbers) else numbers
            parts += [f">={piece[1:]}", f"<{'.'.join(map(str, upper))}"]
        elif piece[0].isdigit():
            parts.append(f"=={piece}")
        else:
            parts.append(piece)
    return ",".join(parts) or ">=0"


def _setup_cfg_pins(folder: Path):
    text = _read(folder / "setup.cfg")
    if not text:
        return
    import configparser  # here: only a project with a setup.cfg needs it

    parser = configparser.ConfigParser(interpolation=None)
    try:
        parser.read_string(text)
    except configparser.Error:
        return
    values = [parser.get("options", "install_requires", fallback="")]
    if parser.has_section("options.extras_require"):
        values += [value for _, value in parser.items("options.extras_require")]
    for value in values:
        for line in value.splitlines():
            if _is_flydsl(line):
                yield folder / "setup.cfg", line.strip()


def _setup_py_pins(folder: Path):
    text = _read(folder / "setup.py")
    if not text:
        return
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and _is_flydsl(node.value):
            yield folder / "setup.py", node.value


def _is_flydsl(requirement: str) -> bool:
    """Whether a requirement line names the `flydsl` distribution with a version."""
    match = _REQUIREMENT.match(requirement)
    if not match or re.sub(r"[-_.]+", "-", match.group(1)).lower() != "flydsl":
        return False
    rest = match.group(2).split(";", 1)[0].strip()
    return bool(rest) and (rest[0] in "=!~<>(" or rest.startswith("@"))


# ------------------------------------------------------------ specifier evaluation
def _lowest_allowed(requirement: str) -> Version | None:
    """The lowest known release a requirement allows (its own lower bound when it
    allows none of them), None when it has no bound or is unreadable."""
    rest = _REQUIREMENT.match(requirement).group(2).split(";", 1)[0].strip()
    if rest.startswith("@"):
        match = _WHEEL_VERSION.search(rest)
        return Version.parse(match.group(1)) if match else None
    specifiers = []
    for piece in rest.strip("()").split(","):
        match = _SPECIFIER.match(piece)
        if not match:
            return None
        specifiers.append((match.group(1), match.group(2)))
    lower_bounds = []
    for operator, text in specifiers:
        try:
            bound = Version.parse(text.removesuffix(".*"))
        except ValueError:
            return None
        if operator in ("==", "===", ">=", "~=", ">"):
            lower_bounds.append(bound)
    allowed = [known for known in releases().known if all(_allows(op, text, known) for op, text in specifiers)]
    if allowed:
        return allowed[0]
    # Newer than every release this tool knows: its own lower bound stands for it.
    return max(lower_bounds) if lower_bounds else None


def _allows(operator: str, text: str, version: Version) -> bool:
    if text.endswith(".*"):
        prefix = Version.parse(text[:-2]).parts[: text[:-2].count(".") + 1]
        matches = version.parts[: len(prefix)] == prefix
        return matches if operator == "==" else not matches if operator == "!=" else False
    bound = Version.parse(text)
    if operator in ("==", "==="):
        return version == bound
    if operator == "!=":
        return version != bound
    if operator == ">=":
        return version >= bound
    if operator == "<=":
        return version <= bound
    if operator == ">":
        return version > bound
    if operator == "<":
        return version < bound
    # ~=X.Y.Z: >= X.Y.Z and the same X.Y
    kept = text.count(".")
    return version >= bound and version.parts[:kept] == bound.parts[:kept]


# --------------------------------------------------------------- a FlyDSL checkout
def _checkout_version(folder: Path) -> Target | None:
    """A FlyDSL source checkout's own release, from `python/flydsl/__init__.py`."""
    init = folder / "python" / "flydsl" / "__init__.py"
    text = _read(init)
    match = _DUNDER_VERSION.search(text) if text else None
    if not match:
        return None
    try:
        return Target(Version.parse(match.group(1)), f"FlyDSL checkout ({_shown(init, folder)} says {match.group(1)})")
    except ValueError:
        return None
