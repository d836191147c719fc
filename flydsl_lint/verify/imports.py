"""Static import graph of a repository: which modules a changed file can reach.

Built from the AST of every Python file (nothing is imported or executed).
An edge A -> B means "A imports B"; importing ``pkg.mod`` also runs
``pkg/__init__.py``, and pytest runs every ``conftest.py`` above a test file,
so both count as imports.

A module is known by two names when they differ: its dotted path from the
repository root (``kernels/norm/x.py`` is ``kernels.norm.x``, as a test run
from the root imports it) and its name below the nearest directory without an
``__init__.py`` (``src/pkg/x.py`` is ``pkg.x``, ``op_tests/gemm_tests/ref.py``
is ``ref``), the directory pytest's default import mode puts on ``sys.path``
and a src layout installs. A name several files share is an import of each.

Only regular files are read, at most ``MAX_SOURCE_BYTES`` of each. A file
whose imports cannot be read (too large, does not parse, unreadable) is
assumed to import every module, so no test is dropped for want of reading it;
one that is not a regular file at all (a FIFO, a broken symbolic link) can be
neither imported nor collected, so it is left out. Both are listed, with the
reason, in ``ImportGraph.unanalysable`` and ``ImportGraph.not_files``.
"""

from __future__ import annotations

import ast
import hashlib
import os
from collections import deque
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable, Union

from ..engine.source import NotRegularFile, ReadWording, file_kind, read_regular

_SKIPPED_DIRS = {".git", "__pycache__", "build", "dist", "node_modules", "thirdparty", "third_party", "site-packages"}
MAX_SOURCE_BYTES = 4 << 20


@dataclass(frozen=True)
class Unreadable:
    """Why a .py file's imports could not be read."""

    reason: str
    is_file: bool  # False: not a regular file, so nothing can import or collect it


Source = Union[bytes, Unreadable]
_TOO_LARGE = f"larger than {MAX_SOURCE_BYTES >> 20} MiB"


def too_large() -> Unreadable:
    return Unreadable(_TOO_LARGE, is_file=True)


def module_name(path: str) -> str:
    """``kernels/common/x.py`` -> ``kernels.common.x``; ``pkg/__init__.py`` -> ``pkg``."""
    parts = path[: -len(".py")].split("/")
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def is_skipped(path: str) -> bool:
    """A repo-relative path under a directory the graph ignores (build output, vendored code, dot dirs)."""
    return any(part in _SKIPPED_DIRS or part.startswith(".") for part in path.split("/")[:-1])


def rooted_module_name(path: str, package_dirs: set[str]) -> str:
    """The module's name below the nearest directory up from it that is no package (has no ``__init__.py``)."""
    parts = path.split("/")
    start = len(parts) - 1
    while start > 0 and "/".join(parts[:start]) in package_dirs:
        start -= 1
    return module_name("/".join(parts[start:]))


def _skipped_directory(parent: Path, prefix: str, name: str) -> bool:
    return is_skipped(f"{prefix}{name}/") or (parent / name / "pyvenv.cfg").is_file()  # a virtual environment


def python_files(root: Path) -> list[str]:
    """Every .py path under ``root`` outside skipped directories and virtual environments (symbolic
    links to directories are not followed)."""
    found = []
    for directory, subdirectories, files in os.walk(root):
        relative = Path(directory).relative_to(root).as_posix()
        prefix = "" if relative == "." else f"{relative}/"
        # A directory named like a module is listed too: planning reports it as no file.
        found += [f"{prefix}{name}" for name in files + subdirectories if name.endswith(".py")]
        subdirectories[:] = [name for name in subdirectories if not _skipped_directory(Path(directory), prefix, name)]
    return sorted(path for path in found if not is_skipped(path))


_WORDING = ReadWording(
    missing=lambda path: "a broken symbolic link" if path.is_symlink() else "vanished",
    not_regular=lambda mode: f"not a regular file but a {file_kind(mode)}",
    too_large=lambda size, limit: _TOO_LARGE,
    failed=lambda exc: f"cannot be read: {exc.strerror}",
)


def read_source(path: Path) -> Source:
    """The bytes of a regular file (symbolic links followed), never blocking on a FIFO or device."""
    try:
        return read_regular(path, MAX_SOURCE_BYTES, _WORDING)
    except (FileNotFoundError, NotRegularFile) as exc:
        return Unreadable(exc.strerror, is_file=False)  # nothing any import or test run could read
    except OSError as exc:
        return Unreadable(exc.strerror, is_file=True)


def tree_sources(root: Path) -> Iterable[tuple[str, Source]]:
    """Every .py file of a checkout on disk."""
    return ((path, read_source(root / path)) for path in python_files(root))


def parse_source(data: bytes) -> ast.AST | Unreadable:
    try:
        return ast.parse(data.decode("utf-8", errors="replace"))
    except SyntaxError as exc:
        return Unreadable(f"does not parse (line {exc.lineno}: {exc.msg})", is_file=True)
    except ValueError as exc:  # e.g. a null byte, before Python 3.12
        return Unreadable(f"does not parse ({exc})", is_file=True)
    except (RecursionError, MemoryError):
        return Unreadable("nested too deeply to parse", is_file=True)


# What a module's import statements say, before they are resolved against its name:
# ("import", names) for `import a.b, c`, ("from", level, module, names) for `from ..m import x`.
ImportFacts = tuple[tuple, ...]


def import_facts(tree: ast.AST) -> ImportFacts:
    facts = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            facts.append(("import", tuple(alias.name for alias in node.names)))
        elif isinstance(node, ast.ImportFrom):
            facts.append(("from", node.level, node.module or "", tuple(alias.name for alias in node.names)))
    return tuple(facts)


def _imported_names(facts: ImportFacts, module: str, is_package: bool) -> set[str]:
    package = module if is_package else module.rpartition(".")[0]
    names = set()
    for fact in facts:
        if fact[0] == "import":
            names.update(fact[1])
            continue
        _, level, imported_from, aliases = fact
        if level:
            anchor = package.split(".") if package else []
            anchor = anchor[: len(anchor) - (level - 1)] if level > 1 else anchor
            base = ".".join(anchor + ([imported_from] if imported_from else []))
        else:
            base = imported_from
        if base:
            names.add(base)
        # "from pkg import mod" may import a submodule rather than a name.
        names.update(f"{base}.{alias}" if base else alias for alias in aliases)
    return names


def source_digest(source: bytes) -> str:
    return hashlib.blake2b(source, digest_size=20).hexdigest()


class ImportGraph:
    def __init__(self, known_facts: dict[str, "ImportFacts | Unreadable"] | None = None) -> None:
        self.paths_of: dict[str, set[str]] = {}  # module name -> repo-relative paths
        # path -> its package name, for package modules below a non-package folder (src/pkg/x.py -> pkg.x):
        # tests import those from wherever the package is installed, not necessarily this checkout.
        self.installed_as: dict[str, str] = {}
        self.imports: dict[str, set[str]] = {}  # path -> paths it imports
        self.unanalysable: dict[str, str] = {}  # path -> why its imports are unknown
        self.not_files: dict[str, str] = {}  # path -> why it is no module at all
        # Source digest -> its import facts: both sides of a change share almost every file, and
        # parsing is most of planning's time (`known_facts`: a cached earlier run's, see base_cache).
        self.facts_by_digest: dict[str, ImportFacts | Unreadable] = dict(known_facts or {})

    def add_tree(self, root: Path) -> "ImportGraph":
        """Add every module of a checkout on disk."""
        return self.add_sources(tree_sources(root))

    def add_sources(self, sources: Iterable[tuple[str, Source]]) -> "ImportGraph":
        """Add one side's modules; call once per side so deleted files count too."""
        facts_of, modules = {}, []
        for path, source in sources:
            facts = self._facts(source) if isinstance(source, bytes) else source
            if isinstance(facts, Unreadable):
                (self.unanalysable if facts.is_file else self.not_files)[path] = facts.reason
            else:
                facts_of[path] = facts
            if not isinstance(facts, Unreadable) or facts.is_file:
                modules.append(path)
        package_dirs = {path.rpartition("/")[0] for path in modules if path.endswith("/__init__.py")}
        rooted_names = {path: rooted_module_name(path, package_dirs) for path in modules}
        for path, rooted in rooted_names.items():
            for name in (module_name(path), rooted):
                self.paths_of.setdefault(name, set()).add(path)
            if rooted != module_name(path) and path.rpartition("/")[0] in package_dirs:
                self.installed_as[path] = rooted
        known_files = set(facts_of) | set(self.unanalysable)
        for path, facts in facts_of.items():
            targets = self.imports.setdefault(path, set())
            # Relative imports resolve the same from either name; the root-relative one always exists.
            module = module_name(path)
            imported = _imported_names(facts, module, path.endswith("__init__.py"))
            imported |= _parent_packages(module) | _parent_packages(rooted_names[path])
            for name in imported:
                for candidate in (name, *_parent_packages(name)):
                    targets.update(self.paths_of.get(candidate, ()))
            targets.discard(path)
            targets.update(_conftests_above(path, known_files))
        return self

    def _facts(self, source: bytes) -> ImportFacts | Unreadable:
        digest = source_digest(source)
        facts = self.facts_by_digest.get(digest)
        if facts is None:
            parsed = parse_source(source)
            facts = self.facts_by_digest[digest] = parsed if isinstance(parsed, Unreadable) else import_facts(parsed)
        return facts

    def dependents(self, changed: list[str]) -> set[str]:
        """``changed`` plus every file that imports one of them, transitively.

        A file whose imports are unknown may import any of them, so it is
        reached whenever anything changed.
        """
        importers: dict[str, set[str]] = {}
        for path, targets in self.imports.items():
            for target in targets:
                importers.setdefault(target, set()).add(path)
        seeds = [*changed, *self.unanalysable] if changed else []
        reached, queue = set(seeds), deque(seeds)
        while queue:
            for importer in importers.get(queue.popleft(), ()):
                if importer not in reached:
                    reached.add(importer)
                    queue.append(importer)
        return reached


def _parent_packages(module: str) -> set[str]:
    parts = module.split(".")
    return {".".join(parts[:i]) for i in range(1, len(parts))}


def _conftests_above(path: str, files: set[str]) -> set[str]:
    directory = path.rpartition("/")[0]
    conftests = set()
    while True:
        candidate = f"{directory}/conftest.py" if directory else "conftest.py"
        if candidate in files and candidate != path:
            conftests.add(candidate)
        if not directory:
            return conftests
        directory = directory.rpartition("/")[0]
