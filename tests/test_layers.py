"""The package's layers only point down, and no modules import each other in a circle.

engine <- rules <- fixes <- run <- front ends; verify beside them, sharing only
the engine. One front end, migrate, uses verify to prove its fixes. Every import counts: module-level, function-local and those under
`if TYPE_CHECKING:`. A module's layer is its folder (docs.py, which renders rule
pages through the checker, is a front end).
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "flydsl_lint"

# Layer -> rank: a module may import its own layer and those ranked lower.
RANKS = {"root": 0, "engine": 1, "rules": 2, "fixes": 3, "run": 4, "frontends": 5}
# verify shares only the engine (and the package root's __version__).
VERIFY_MAY_IMPORT = {"root", "engine", "verify"}
# The front-end modules of `flydsl-lint migrate`: the only ones outside verify that may import it.
VERIFY_USERS = ("flydsl_lint.frontends.migrate", "flydsl_lint.frontends.migrate_command")
# Modules beside the layers: the root ones import nothing of the package, so every layer may use them.
TOP_LEVEL_LAYERS = {"__init__": "root", "readonly_git": "root", "docs": "frontends"}


def module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def layer_of(module: str) -> str:
    parts = module.split(".")
    if len(parts) == 1:
        return "root"
    if parts[1] in RANKS or parts[1] == "verify":
        return parts[1]
    return TOP_LEVEL_LAYERS[parts[1]]


def imported_modules(path: Path, module: str, modules: set[str]) -> set[str]:
    """The package's modules `path` imports, anywhere in it; `from a import b` counts as
    an import of `a.b` when that is a module, else of `a`."""
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                source = ".".join(base + ([node.module] if node.module else []))
            else:
                source = node.module or ""
            names = [f"{source}.{alias.name}" if f"{source}.{alias.name}" in modules else source
                     for alias in node.names]
        else:
            continue
        found.update(name for name in names if name.split(".")[0] == "flydsl_lint")
    found.discard(module)
    return found


def import_graph() -> dict[str, set[str]]:
    paths = {module_name(path): path for path in PACKAGE.rglob("*.py")}
    modules = set(paths)
    return {module: imported_modules(path, module, modules) for module, path in paths.items()}


def allowed(importer: str, imported: str) -> bool:
    low, high = layer_of(imported), layer_of(importer)
    if high == "verify":
        return low in VERIFY_MAY_IMPORT
    if low == "verify":
        return importer in VERIFY_USERS
    return RANKS[low] <= RANKS[high]


def test_the_graph_sees_every_layer():
    layers = {layer_of(module) for module in import_graph()}
    assert layers == set(RANKS) | {"verify"}


def test_no_import_points_up_a_layer():
    upward = [f"{importer} ({layer_of(importer)}) -> {imported} ({layer_of(imported)})"
              for importer, imports in sorted(import_graph().items()) for imported in sorted(imports)
              if not allowed(importer, imported)]
    assert upward == [], "upward imports:\n" + "\n".join(upward)


def find_circle(graph: dict[str, set[str]]) -> list[str] | None:
    """A cycle of imports as a list of modules (first == last), or None."""
    state: dict[str, str] = {}  # module -> "open" while on the path, "done" after
    path: list[str] = []

    def visit(module: str) -> list[str] | None:
        state[module] = "open"
        path.append(module)
        for imported in sorted(graph.get(module, ())):
            if state.get(imported) == "open":
                return path[path.index(imported):] + [imported]
            if imported not in state:
                circle = visit(imported)
                if circle:
                    return circle
        path.pop()
        state[module] = "done"
        return None

    for module in sorted(graph):
        if module not in state:
            circle = visit(module)
            if circle:
                return circle
    return None


def test_no_modules_import_each_other_in_a_circle():
    circle = find_circle(import_graph())
    assert circle is None, "import circle: " + " -> ".join(circle)


@pytest.mark.parametrize("graph, expected", [
    ({"a": {"b"}, "b": {"c"}, "c": {"a"}}, ["a", "b", "c", "a"]),
    ({"a": {"b"}, "b": {"c"}, "c": set()}, None),
])
def test_find_circle_finds_exactly_the_circles(graph, expected):
    assert find_circle(graph) == expected


@pytest.mark.parametrize("importer, imported, expected", [
    ("flydsl_lint.engine.model", "flydsl_lint.rules._base", False),
    ("flydsl_lint.rules._base", "flydsl_lint.engine.model", True),
    ("flydsl_lint.fixes.apply", "flydsl_lint.run.checker", False),
    ("flydsl_lint.docs", "flydsl_lint.run.checker", True),
    ("flydsl_lint.verify.cli", "flydsl_lint.engine.config", True),
    ("flydsl_lint.verify.cli", "flydsl_lint.run.runner", False),
    ("flydsl_lint.frontends.cli", "flydsl_lint.verify.cli", False),
    ("flydsl_lint.frontends.migrate", "flydsl_lint.verify.runner", True),
    ("flydsl_lint.frontends.migrate_report", "flydsl_lint.verify.runner", False),
    ("flydsl_lint.verify.runner", "flydsl_lint.frontends.migrate", False),
])
def test_layer_rules(importer, imported, expected):
    assert allowed(importer, imported) is expected
