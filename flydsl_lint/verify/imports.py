"""Static import graph of a repository: which modules a changed file can reach.

Built from the AST of every Python file (nothing is imported or executed).
An edge A -> B means "A imports B"; importing ``pkg.mod`` also runs
``pkg/__init__.py``, and pytest runs every ``conftest.py`` above a test file,
so both count as imports.
"""

from __future__ import annotations

import ast
from collections import deque
from pathlib import Path

_SKIPPED_DIRS = {".git", "__pycache__", "build", "dist", "node_modules", "thirdparty", "third_party"}


def module_name(path: str) -> str:
    """``kernels/common/x.py`` -> ``kernels.common.x``; ``pkg/__init__.py`` -> ``pkg``."""
    parts = path[: -len(".py")].split("/")
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def python_files(root: Path) -> list[str]:
    files = []
    for path in root.rglob("*.py"):
        relative = path.relative_to(root)
        if any(part in _SKIPPED_DIRS or part.startswith(".") for part in relative.parts[:-1]):
            continue
        files.append(relative.as_posix())
    return sorted(files)


def _imported_names(tree: ast.AST, module: str, is_package: bool) -> set[str]:
    package = module if is_package else module.rpartition(".")[0]
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                anchor = package.split(".") if package else []
                anchor = anchor[: len(anchor) - (node.level - 1)] if node.level > 1 else anchor
                base = ".".join(anchor + ([node.module] if node.module else []))
            else:
                base = node.module or ""
            if base:
                names.add(base)
            # "from pkg import mod" may import a submodule rather than a name.
            names.update(f"{base}.{alias.name}" if base else alias.name for alias in node.names)
    return names


class ImportGraph:
    def __init__(self) -> None:
        self.path_of: dict[str, str] = {}  # module -> repo-relative path
        self.imports: dict[str, set[str]] = {}  # path -> paths it imports

    def add_tree(self, root: Path) -> "ImportGraph":
        """Add every module of a checkout; call once per side so deleted files count too."""
        files = python_files(root)
        known_files = set(files)
        for path in files:
            self.path_of[module_name(path)] = path
        for path in files:
            try:
                tree = ast.parse((root / path).read_text(encoding="utf-8", errors="replace"))
            except SyntaxError:
                tree = ast.Module(body=[], type_ignores=[])  # a broken file still depends on its packages
            module = module_name(path)
            targets = self.imports.setdefault(path, set())
            for name in _imported_names(tree, module, path.endswith("__init__.py")) | _parent_packages(module):
                for candidate in (name, *_parent_packages(name)):
                    if candidate in self.path_of and self.path_of[candidate] != path:
                        targets.add(self.path_of[candidate])
            targets.update(_conftests_above(path, known_files))
        return self

    def dependents(self, changed: list[str]) -> set[str]:
        """``changed`` plus every file that imports one of them, transitively."""
        importers: dict[str, set[str]] = {}
        for path, targets in self.imports.items():
            for target in targets:
                importers.setdefault(target, set()).add(path)
        reached, queue = set(changed), deque(changed)
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
