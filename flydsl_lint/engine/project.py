"""The linted project's own modules: where they live and what they re-export.

Kernel files import helpers through their project (`from kernels.common.utils
import buffer_load`, `from .buffer_ops import *`, `__init__.py` re-exports).
To resolve such a name to the module that defines it, we read the project
module's top-level statements; the code is never imported or executed.
"""

from __future__ import annotations

import ast
import functools
import os
import re
from collections.abc import Callable, Collection
from pathlib import Path
from typing import TypeVar

from .segments import Outline, read_outline
from .source import DEFAULT_MAX_FILE_SIZE, read_regular

T = TypeVar("T")

# A project with more Python files than this under its source roots is not read to
# tell whether a name is used outside its module: the name may be.
MAX_SCANNED_FILES = 5000
# The source bytes of the trees `ProjectIndex.parse` keeps for the checks of their own files at most
# (a tree takes about fifty times its source): a long-lived process keeps no more.
MAX_KEPT_TREE_BYTES = 512 * 1024
# A private name (`_helper`) as the project files are indexed by: every `\b_helper\b` is one
# of these tokens (a `_tail` of `head_tail` too, which only makes the answer more cautious).
_PRIVATE_NAME = re.compile(r"_\w+")
_WORD_CHARACTER = re.compile(r"\w")

# Legacy helper modules by their canonical path. A project module whose last
# component matches one of these names and that defines the helper is treated
# as a vendored copy of it.
LEGACY_MODULES = {
    "flydsl.expr.buffer_ops": "buffer_ops",
    "kernels.common.buffer_ops": "buffer_ops",
    "kernels.common.mem_ops": "mem_ops",
    "flydsl.utils.smem_allocator": "smem_allocator",
    "kernels.common.smem_allocator": "smem_allocator",
    # FlyDSL's thin wrappers around the vector dialect, since removed
    # (python/flydsl/expr/vector.py); downstream projects vendor copies.
    "flydsl.expr.vector": "vector",
}
# Where a vendored copy's names resolve to: the legacy module rules match on.
_CANONICAL_LEGACY = {
    "buffer_ops": "kernels.common.buffer_ops",
    "mem_ops": "kernels.common.mem_ops",
    "smem_allocator": "flydsl.utils.smem_allocator",
    "vector": "flydsl.expr.vector",
}
LEGACY_MODULE_NAMES = frozenset(LEGACY_MODULES.values())

# For each legacy FlyDSL construct, every module path binding it in some release.
_LEGACY_PATHS = Path(__file__).resolve().parent.parent / "data" / "legacy_paths.txt"


@functools.lru_cache(maxsize=None)
def legacy_aliases() -> dict[str, frozenset[str]]:
    """Qualified name -> all the paths that bind the same FlyDSL object in some
    release (data/legacy_paths.txt, generated from the wheels)."""
    aliases: dict[str, frozenset[str]] = {}
    with open(_LEGACY_PATHS, encoding="utf-8") as lines:
        for line in lines:
            if line.startswith("#"):
                continue
            definition, _, others = line.partition(" = ")
            paths = frozenset([definition, *others.split()])
            aliases.update(dict.fromkeys(paths, paths))
    return aliases


def release_paths(*qualified_names: str) -> frozenset[str]:
    """The qualified names a rule matches, with every path that spells the same
    FlyDSL object in some release (`flydsl.expr.typing.ArithValue` for
    `flydsl.expr.arith.ArithValue`), so no rule needs per-release knowledge."""
    aliases = legacy_aliases()
    return frozenset(qualified_names).union(*(aliases.get(name, ()) for name in qualified_names))


class ModuleSummary:
    """What a module binds at top level, as far as the linter needs."""

    __slots__ = ("name", "is_package", "defined", "imported", "star_modules")

    def __init__(self, name: str, is_package: bool) -> None:
        self.name = name
        self.is_package = is_package
        self.defined: set[str] = set()  # def / class / assignment
        self.imported: dict[str, str] = {}  # local name -> qualified name
        self.star_modules: list[str] = []


def absolute_module(current: str, is_package: bool, level: int, module: str | None) -> str | None:
    """Resolve `from <level dots><module> import ...` inside module `current`."""
    if level == 0:
        return module
    parts = current.split(".") if current else []
    if not is_package:
        parts = parts[:-1]
    if level - 1 > len(parts):
        return None
    base = parts[: len(parts) - (level - 1)]
    if module:
        base.append(module)
    return ".".join(base) or None


def summarize(name: str, is_package: bool, statements: list[ast.stmt]) -> ModuleSummary:
    """What a module's top-level `statements` bind (defs and classes are read
    by name only, so an outline's stand-ins do)."""
    summary = ModuleSummary(name, is_package)
    pending = list(statements)
    while pending:
        stmt = pending.pop(0)
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            summary.defined.add(stmt.name)
            summary.imported.pop(stmt.name, None)  # a later def shadows an import
        elif isinstance(stmt, ast.Import):
            for alias in stmt.names:
                if alias.asname:
                    summary.imported[alias.asname] = alias.name
                else:
                    head = alias.name.split(".")[0]
                    summary.imported[head] = head
        elif isinstance(stmt, ast.ImportFrom):
            source = absolute_module(name, is_package, stmt.level, stmt.module)
            if source is None:
                continue
            for alias in stmt.names:
                if alias.name == "*":
                    summary.star_modules.append(source)
                else:
                    summary.imported[alias.asname or alias.name] = f"{source}.{alias.name}"
        elif isinstance(stmt, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
            targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
            for target in targets:
                for node in ast.walk(target):
                    if isinstance(node, ast.Name):
                        summary.defined.add(node.id)
                        summary.imported.pop(node.id, None)
        elif isinstance(stmt, (ast.If, ast.Try, ast.With)):
            # Conditional and guarded imports still bind at top level.
            pending[:0] = list(stmt.body) + list(getattr(stmt, "orelse", []))
            for handler in getattr(stmt, "handlers", []):
                pending.extend(handler.body)
    return summary


# Files that mark a project's root folder; its `src` entries are source roots.
PROJECT_MARKERS = ("pyproject.toml", "setup.py", "setup.cfg", ".git")
DEFAULT_SRC = (".", "python", "src")


def module_name_for(path: Path, folders: dict[str, tuple[str, Path]] | None = None,
                    src: tuple[str, ...] = DEFAULT_SRC) -> tuple[str, bool, Path]:
    """Dotted module name of a file from its package folders, and its root.

    The name comes from the folders holding `__init__.py` above the file; when
    the top package sits in a folder without one (a namespace package, such as
    `aiter/ops/` above `aiter/ops/flydsl/`) below a source root of the file's
    project (`src` entries of the folder holding a `PROJECT_MARKERS` file), the
    name starts at that source root, as Python imports it. So a file has the
    same name however much of the tree is linted.

    `folders`, kept by the caller for a run, remembers each folder's package
    and root: a run's files share a few folders, so each file costs one
    `lstat` instead of resolving every path component and probing for
    `__init__.py` up the tree.
    """
    name = os.fspath(path)
    if os.path.islink(name):
        name = os.path.realpath(name)
    folder, file_name = os.path.split(name)
    known = folders.get(folder) if folders is not None else None
    if known is None:
        known = _package_of(Path(os.path.realpath(folder or ".")), src)
        if folders is not None:
            folders[folder] = known
    package, root = known
    is_package = file_name == "__init__.py"
    if is_package:
        return package, True, root
    stem = Path(file_name).stem
    return f"{package}.{stem}" if package else stem, False, root


def _package_of(folder: Path, src: tuple[str, ...]) -> tuple[str, Path]:
    """The dotted package a (resolved) folder is, and the folder its top package lives in."""
    parts: list[str] = []
    while (folder / "__init__.py").exists():
        parts.insert(0, folder.name)
        folder = folder.parent
    if parts:
        source_root = _enclosing_source_root(folder, src)
        if source_root is not None:
            parts[:0] = folder.relative_to(source_root).parts
            folder = source_root
    return ".".join(parts), folder


def project_root_of(folder: Path) -> Path | None:
    """The nearest folder at or above `folder` holding a project marker file."""
    for candidate in (folder, *folder.parents):
        if any((candidate / marker).exists() for marker in PROJECT_MARKERS):
            return candidate
    return None


def _enclosing_source_root(folder: Path, src: tuple[str, ...]) -> Path | None:
    """The deepest source root of the project around `folder` above it, when
    `folder` is not one itself and the folders between have names Python can
    import (as namespace packages); else None."""
    project_root = project_root_of(folder)
    if project_root is None:
        return None
    roots = [Path(os.path.normpath(project_root / entry)) for entry in src]
    if folder in roots:
        return None  # the top package already sits in a source root (`src/pkg/`)
    above = [root for root in roots if root in folder.parents]
    if not above:
        return None
    deepest = max(above, key=lambda root: len(root.parts))
    return deepest if all(part.isidentifier() for part in folder.relative_to(deepest).parts) else None


def source_roots(settings_root: Path, package_root: Path, src: tuple[str, ...]) -> list[Path]:
    """Where a file's project modules are looked up, in order: the `src` entries
    of the settings root, then those of the file's project root (so a subtree
    linted alone finds the rest of its project), then its package root."""
    bases = [settings_root]
    project_root = project_root_of(package_root.resolve())
    if project_root is not None:
        bases.append(project_root)
    roots = [base / entry for base in bases for entry in src]
    return [root for root in roots if root.is_dir()] + [package_root]


class ProjectIndex:
    """Finds and summarizes project modules under a set of source roots."""

    def __init__(self, roots: list[Path] | None = None, legacy_roots: tuple[str, ...] = (),
                 follows: frozenset[str] = frozenset(), max_file_size: int = DEFAULT_MAX_FILE_SIZE) -> None:
        # The leaf names some rule matches on (`Rule.follows`): following a name
        # through project modules means reading them, so only these are followed.
        self.follows = follows
        # A project file is read as a checked one is: a larger one, a FIFO or a device
        # (`x.py -> /dev/zero`) counts as unreadable, never as a read that does not end.
        self.max_file_size = max_file_size
        self.roots: list[Path] = []
        self._found: dict[str, tuple[Path, bool] | None] = {}  # module -> where it lives (a run's files do not move)
        for root in roots or []:
            self.add_root(root)
        self.legacy_roots = legacy_roots
        self._summaries: dict[str, ModuleSummary | None] = {}
        # What rules derive from other project modules, kept for the run (see `derived`).
        # kind -> module -> (the version of its file it was derived from, what was derived).
        self._derived: dict[str, dict[str, tuple[int | None, object]]] = {}
        # The modules looked up for the file being checked (by `find`, `summary`
        # or `derived`, also when answered from memory): the result cache
        # records them as that file's dependencies.
        self.touched: set[str] = set()
        self._index: tuple[dict[str, tuple[str, ...]], list[str], list[str]] | None = None  # see _private_names
        self._words_named: dict[tuple[str, str], bool] = {}  # (path, word) -> `_names_word`, with the index
        # The trees `parse` made that no check has taken yet (`take_tree`): real path -> (bytes, tree).
        self._kept_trees: dict[str, tuple[bytes, ast.Module]] = {}
        self._files_read = False

    def start_file(self) -> None:
        """A new file's check begins: its dependencies are counted afresh."""
        self.touched = set()

    def derived(self, kind: str, module: str, compute: Callable[[str], T]) -> T:
        """What a rule derives from project module `module` (`compute(module)`):
        the run's one store, recorded as a dependency of every file asking.
        Computed once per run and version of the module's file, so a module a
        fix rewrote earlier in the run is read again; only the newest version's is
        kept, so a long-lived index (the language server's) does not grow with edits."""
        found = self.find(module)  # records the dependency
        try:
            version = found[0].stat().st_mtime_ns if found is not None else None
        except OSError:
            version = None
        cache = self._derived.setdefault(kind, {})
        kept = cache.get(module)
        if kept is None or kept[0] != version:
            kept = cache[module] = version, compute(module)
        return kept[1]  # type: ignore[return-value]

    def release(self, keep: Collection[str] = ()) -> None:
        """Drop what the run derived, but from the modules in `keep`, calling `release()` on
        each value that has one (the value types' helper models), and the trees kept for
        checks to come. Those models and the index refer to one another; so freed by
        reference counting, they leave the cyclic collector (off during a run) no heap of
        them to walk through when it runs next. What was read (outlines, summaries, the
        private-name index) stays."""
        for answers in self._derived.values():
            for module in [module for module in answers if module not in keep]:
                release = getattr(answers.pop(module)[1], "release", None)
                if release is not None:
                    release()
        self._kept_trees.clear()

    def kept_derivation(self, kind: str, module: str) -> object | None:
        """What `derived` keeps for `module`, if it computed anything yet; records no
        dependency, so it is for sharing work, never for an answer."""
        kept = self._derived.get(kind, {}).get(module)
        return kept[1] if kept is not None else None

    def mentioned_elsewhere(self, module: str, word: str) -> str | None:
        """Why a Python file under the source roots other than `module`'s own may import or call
        the private name `word` (`_helper`): it mentions `word` as a word (`kernels/b.py names
        `_helper``) and, unless `module` is a package (`from . import _helper` names no module),
        also the module's own last name, which every import of it spells (`from .a import
        _helper`, `a._helper`); None when none does. A file defining a `_helper` of its own
        does not reach this one. The files are read once a run, on the first question, into an
        index of the private names they mention (each becomes a dependency of the file asking,
        for the result cache); the few that mention `word` are read again for the module's
        name. Also a reason where the index cannot tell: too many files to read, an unreadable
        one, `word` no private name."""
        index = self._private_names()
        if index is None:
            return "the project has too many files to read"
        if not _PRIVATE_NAME.fullmatch(word):
            return f"`{word}` is no private name"
        mentions, unreadable, modules = index
        self.touched.update(modules)
        found = self.find(module)
        own = os.path.realpath(found[0]) if found is not None else None
        unread = sorted(path for path in unreadable if path != own)
        if unread:
            return f"{self._relative(unread[0])} cannot be read"
        mentioning = set(mentions.get(word, ())) - {own}
        if found is not None and not found[1]:
            mentioning = {path for path in mentioning if self._names_word(path, module.rpartition(".")[2])}
        first = min(mentioning, default=None)
        return f"{self._relative(first)} names `{word}`" if first is not None else None

    def _names_word(self, path: str, word: str) -> bool:
        """Whether the file at `path` holds `word` as a whole word (or cannot be read again)."""
        key = (path, word)
        if key not in self._words_named:
            try:
                text = read_regular(path, self.max_file_size).decode("utf-8", errors="replace")
            except OSError:
                text = None
            self._words_named[key] = text is None or _holds_word(text, word)
        return self._words_named[key]

    def _relative(self, path: str) -> str:
        """`path` relative to the outermost source root holding it."""
        holding = [str(root) for root in self.roots if os.path.commonpath([path, str(root)]) == str(root)]
        return os.path.relpath(path, min(holding, key=len)) if holding else path

    def _private_names(self) -> tuple[dict[str, tuple[str, ...]], list[str], list[str]] | None:
        """Private name -> the real paths of the project files that mention it, the unreadable
        files' paths and every file's module name; None if there are too many files to read."""
        if not self._files_read:
            self._files_read = True
            self._words_named.clear()
            self._index = _index_private_names(self.roots, self.max_file_size)
        return self._index

    def add_root(self, root: Path) -> None:
        root = root.resolve()
        if root not in self.roots:
            self.roots.append(root)
            self._found.clear()
            self._files_read = False

    def find(self, module: str) -> tuple[Path, bool] | None:
        self.touched.add(module)
        try:
            return self._found[module]
        except KeyError:
            pass
        found = self._found[module] = self._find(module)
        return found

    def _find(self, module: str) -> tuple[Path, bool] | None:
        relative = Path(*module.split("."))
        for root in self.roots:
            package = root / relative / "__init__.py"
            if package.is_file():
                return package, True
            plain = root / relative.with_suffix(".py")
            if plain.is_file():
                return plain, False
        return None

    def summary(self, module: str) -> ModuleSummary | None:
        self.touched.add(module)
        if module in self._summaries:
            return self._summaries[module]
        self._summaries[module] = None  # guards against import cycles
        outlined = self.outline(module)
        if outlined is not None:
            module_outline, is_package = outlined
            self._summaries[module] = summarize(module, is_package, module_outline.statements)
        return self._summaries[module]

    def outline(self, module: str) -> tuple[Outline, bool] | None:
        """A project module's outline (function bodies unparsed) and whether it
        is a package; None if absent or unparsable. Not kept, as `parse`."""
        source = self.source(module)
        module_outline = read_outline(source[0]) if source is not None else None
        return (module_outline, source[1]) if module_outline is not None else None

    def parse(self, module: str) -> tuple[ast.Module, bool] | None:
        """A project module's tree and whether it is a package; None if absent or unparsable.

        Callers cache what they derive from it (see `derived`); the index keeps the tree
        only for the check of the module's own file later in the run (`take_tree`).
        """
        source = self.source(module)
        if source is None:
            return None
        data, is_package = source
        try:
            tree = ast.parse(data)
        except (SyntaxError, ValueError):
            return None
        self._keep_tree(os.path.realpath(self.find(module)[0]), data, tree)
        return tree, is_package

    def _keep_tree(self, path: str, data: bytes, tree: ast.Module) -> None:
        self._kept_trees.pop(path, None)
        self._kept_trees[path] = data, tree
        kept = sum(len(data) for data, _ in self._kept_trees.values())
        while kept > MAX_KEPT_TREE_BYTES:  # the oldest go first
            oldest = next(iter(self._kept_trees))
            kept -= len(self._kept_trees.pop(oldest)[0])

    def take_tree(self, path: str, text: str) -> ast.Module | None:
        """The tree `parse` made of the file at `path`, if it read the UTF-8 encoding of
        `text` (CPython parses a str as that encoding: the tree is the one `ast.parse(text)`
        gives), once: a module another file's check read for its helpers is not parsed twice."""
        kept = self._kept_trees.pop(os.path.realpath(path), None)
        if kept is None:
            return None
        data, tree = kept
        return tree if text.encode("utf-8", "surrogatepass") == data else None

    def source(self, module: str) -> tuple[bytes, bool] | None:
        """A project module's bytes and whether it is a package; None if absent, unreadable,
        larger than max-file-size or not a regular file."""
        found = self.find(module)
        if found is None:
            return None
        path, is_package = found
        try:
            return read_regular(path, self.max_file_size), is_package
        except OSError:
            return None

    def canonical(self, qualified: str, _depth: int = 0) -> str:
        """Follow project re-exports of `qualified` to its defining module.

        FlyDSL's own names and the canonical legacy modules are final: rules
        are written against their public paths.
        """
        module, _, name = qualified.rpartition(".")
        if name not in self.follows or not module or _depth > 16 or self.is_final(module):
            return qualified
        summary = self.summary(module)
        if summary is None:
            return self._vendored(qualified, module, name, None)
        if name in summary.imported:
            return self.canonical(summary.imported[name], _depth + 1)
        if name in summary.defined:
            return self._vendored(qualified, module, name, summary)
        for star in summary.star_modules:
            star_summary = self.summary(star)
            if star_summary is None:
                if self.is_final(star):
                    return self.canonical(f"{star}.{name}", _depth + 1)
                continue
            if name in star_summary.defined or name in star_summary.imported or star_summary.star_modules:
                resolved = self.canonical(f"{star}.{name}", _depth + 1)
                if resolved != f"{star}.{name}" or name in star_summary.defined or name in star_summary.imported:
                    return resolved
        return qualified

    def _vendored(self, qualified: str, module: str, name: str, summary: ModuleSummary | None) -> str:
        last = module.rpartition(".")[2]
        if last not in LEGACY_MODULE_NAMES:
            return qualified
        if self._under_legacy_root(module) or (summary is not None and name in summary.defined):
            return f"{_CANONICAL_LEGACY[last]}.{name}"
        return qualified

    def _under_legacy_root(self, module: str) -> bool:
        return any(module == root or module.startswith(root + ".") for root in self.legacy_roots)

    def reaches_flydsl(self, imported: str) -> bool:
        """Whether importing `imported` (a module, or a name in one) imports FlyDSL:
        a FlyDSL module or a legacy helper module (`kernels.common.buffer_ops`),
        a project re-export the index follows to one, or a project's vendored
        copy of a legacy helper (named like one, under `legacy-module-roots`
        or itself importing FlyDSL)."""
        resolved = self.canonical(imported)
        return _names_flydsl(resolved) or any(self._is_vendored_legacy(name)
                                              for name in (resolved, resolved.rpartition(".")[0]))

    def _is_vendored_legacy(self, module: str) -> bool:
        if module.rpartition(".")[2] not in LEGACY_MODULE_NAMES:
            return False
        if self._under_legacy_root(module):
            return True
        summary = self.summary(module)
        return summary is not None and any(
            _names_flydsl(target) for target in [*summary.imported.values(), *summary.star_modules])

    @staticmethod
    def is_final(module: str) -> bool:
        return module == "flydsl" or module.startswith("flydsl.") or module in LEGACY_MODULES


def _index_private_names(roots: list[Path], max_file_size: int) -> tuple[dict[str, tuple[str, ...]], list[str], list[str]] | None:
    """Of the Python files under `roots`: private name -> the real paths of those that mention
    it; the real paths of those unreadable (or larger than `max_file_size`, or not regular
    files); the module names of those whose path is an importable name under the first root
    holding it. None if there are more than MAX_SCANNED_FILES. One text is held at a time: a
    run started below a big root (a home or temporary folder) read thousands at once."""
    mentions: dict[str, list[str]] = {}
    unreadable: list[str] = []
    modules: dict[str, str | None] = {}  # real path -> module name
    for root in roots:
        for folder, subfolders, names in os.walk(root):
            subfolders[:] = [name for name in subfolders if not _skipped_folder(Path(folder) / name)]
            for name in names:
                if not name.endswith(".py"):
                    continue
                path = os.path.realpath(os.path.join(folder, name))
                if path in modules:
                    continue
                if len(modules) == MAX_SCANNED_FILES:
                    return None
                modules[path] = _module_of(Path(folder, name).relative_to(root))
                try:
                    text = read_regular(path, max_file_size).decode("utf-8", errors="replace")
                except OSError:
                    unreadable.append(path)  # it may name anything
                    continue
                for mentioned in set(_PRIVATE_NAME.findall(text)):
                    mentions.setdefault(mentioned, []).append(path)
    # Tuples of strings, which the cyclic collector stops tracking: a host that collects
    # between files (flake8) then does not walk some 10k containers at every full collection.
    return {name: tuple(paths) for name, paths in mentions.items()}, unreadable, [name for name in modules.values() if name]


def _holds_word(text: str, word: str) -> bool:
    """Whether `text` holds `word` with no word character on either side. The pattern starts
    with the word itself, so `re` jumps from one occurrence to the next; a leading look-behind
    made it try every position (4.3 against 0.08 ms over a 230 kB file)."""
    return any(found.start() == 0 or not _WORD_CHARACTER.match(text, found.start() - 1)
               for found in re.finditer(rf"{re.escape(word)}(?!\w)", text))


def _skipped_folder(folder: Path) -> bool:
    return folder.name.startswith(".") or folder.name == "__pycache__" or (folder / "pyvenv.cfg").exists()


def _module_of(relative: Path) -> str | None:
    parts = list(relative.with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts) if parts and all(part.isidentifier() for part in parts) else None


def _names_flydsl(qualified: str) -> bool:
    """Whether `qualified` is a FlyDSL module or a name in one (legacy helper modules included)."""
    return ProjectIndex.is_final(qualified) or ProjectIndex.is_final(qualified.rpartition(".")[0])


def unresolved_project_modules(index: ProjectIndex, path: Path, module: str) -> list[str]:
    """The modules a file's check looked up in `index` that look like the
    project's own but that no source root holds: their top package is the
    file's own or the name of a folder above the file. Each is named up to its
    first missing component; a name a found module or package binds
    (`pkg.mod.Class`) is an attribute, not a missing module."""
    heads = {module.partition(".")[0], *path.resolve().parent.parts}
    missing = set()
    for name in sorted(index.touched):
        if name.partition(".")[0] in heads and not index.is_final(name):
            first_missing = _first_missing_module(index, name)
            if first_missing is not None:
                missing.add(first_missing)
    return sorted(name for name in missing if not any(name.startswith(other + ".") for other in missing))


def _first_missing_module(index: ProjectIndex, name: str) -> str | None:
    """`name` cut after its first component that is neither found as a module
    nor bound by the package above it; None when every component is."""
    parts = name.split(".")
    for end in range(len(parts), 0, -1):
        found = index.find(".".join(parts[:end]))
        if found is None:
            continue
        if end == len(parts) or not found[1]:
            return None  # the whole name, or an attribute of a plain module
        summary = index.summary(".".join(parts[:end]))
        bound = summary is not None and (parts[end] in summary.defined or parts[end] in summary.imported)
        return None if bound else ".".join(parts[: end + 1])
    return name  # not even its top package is found
