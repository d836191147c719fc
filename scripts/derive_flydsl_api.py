"""Derive flydsl_lint/data/flydsl_api.toml: which FlyDSL names exist in which release.

The table is read from the releases' own Python sources, statically: each
release's wheel is opened with zipfile (or a git tag read with `git show`),
its `flydsl` modules are parsed with `ast`, and the module-level names each
defines or re-exports are followed through `from .x import y`, `import x as
y`, star imports (honouring `__all__`) and the lazy `__getattr__` module
tables of `flydsl/expr/__init__.py`. Nothing is imported or executed. The
generated MLIR bindings under `flydsl/_mlir/` are not read: a star import of
one is recorded under [star-imports] instead of its names.

Usage (needs the network for the downloads; not run in CI, its output is committed):

    for v in 0.2.0 0.2.1 0.2.2 0.2.3 0.2.4 0.3.0 0.3.1 0.3.2 0.3.4 0.4.0 0.4.1 0.4.2 0.5.0; do
        pip download --no-deps --only-binary :all: flydsl==$v -d wheels/$v
    done
    python scripts/derive_flydsl_api.py --wheels wheels -o flydsl_lint/data/flydsl_api.toml

It also writes flydsl_lint/data/legacy_paths.txt (`--aliases-output`): for each
legacy construct, every module path that binds the same object in some
release, which the engine loads to match a construct under all its spellings.

`--wheels DIR` reads `DIR/<release>/flydsl-<release>-cp311-*x86_64.whl`.
A release with no wheel can be read from a FlyDSL git checkout or mirror
(sources under python/flydsl/): `--git-dir REPO --tag 0.2.4=v0.2.4`
(repeatable). `--check` compares instead of writing and exits 1 on a
difference. Only derived names, release ranges and parameter lists are
written, never source text.
"""

from __future__ import annotations

import argparse
import ast
import subprocess
import sys
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))
from flydsl_lint.engine.versions import Version  # noqa: E402  (the script runs from a checkout)

# Modules whose every public module-level name is listed: those the rules match
# or whose names the fixes write (grep flydsl_lint/rules/ for `flydsl.`).
MODULES = (
    "flydsl.compiler", "flydsl.expr", "flydsl.expr.arith", "flydsl.expr.buffer_ops", "flydsl.expr.gpu",
    "flydsl.expr.math", "flydsl.expr.numeric", "flydsl.expr.primitive", "flydsl.expr.rocdl",
    "flydsl.expr.rocdl.universal", "flydsl.expr.typing", "flydsl.expr.utils.arith", "flydsl.expr.vector",
    "flydsl.utils.smem_allocator",
)
# Classes whose members are listed too: the fixes write `.ir_value()` and
# `.llvm_ptr`, and the rules look for SmemAllocator bookkeeping and the
# rewriter's `scf_if_dispatch`. Each is named where it is defined in 0.5.0;
# other releases are searched for a class of the same name.
CLASSES = (
    "flydsl.expr.numeric.Numeric", "flydsl.expr.typing.Pointer", "flydsl.expr.gpu.SharedAllocator",
    "flydsl.utils.smem_allocator.SmemAllocator", "flydsl.utils.smem_allocator.SmemPtr",
    "flydsl.compiler.ast_rewriter.ReplaceIfWithDispatch",
)
# Private names the rules look for (legacy helpers and SmemAllocator bookkeeping).
LEGACY_PRIVATE = frozenset({"_to_raw", "_align", "_view_cache"})
# Leaves of the legacy constructs the rules detect: every module path binding
# one, in any flydsl module, is listed under [legacy] (and in [names]).
LEGACY_LEAVES = frozenset({
    "ArithValue", "unwrap", "index_cast", "index", "_to_raw", "maximumf", "minimumf", "maxsi", "maxui", "minsi",
    "minui", "maxnumf", "ceildivsi", "ceildivui", "create_buffer_resource", "create_buffer_resource_from_addr",
    "buffer_load", "buffer_store", "create_llvm_ptr", "SmemAllocator", "SmemPtr", "copy_atom_call", "mma_atom_call",
    "s_waitcnt", "const_expr", "ptrtoint", "make_tiled_copy", "scf_if_dispatch",
})
LEGACY_PREFIXES = ("buffer_atomic_", "mfma_", "wmma_")
# Callables whose parameter lists are recorded per release (the fixes and the
# verify tool's compile hook depend on them), by the public name to follow.
SIGNATURES = (
    "flydsl.compiler.jit_function.MlirCompiler.compile",
    "flydsl.compiler.ast_rewriter.InsertEmptyYieldForSCFFor.scf_range",  # traced `range(..., init=)`
    "flydsl.expr.rocdl.s_waitcnt", "flydsl.expr.gemm", "flydsl.expr.copy", "flydsl.expr.mma_atom_call",
    "flydsl.expr.copy_atom_call", "flydsl.expr.rocdl.make_buffer_tensor", "flydsl.expr.as_ir_value",
    "flydsl.expr.max", "flydsl.expr.min", "flydsl.expr.maxnumf", "flydsl.expr.ceildiv",
)
_SKIPPED_PACKAGE = "flydsl._mlir"


# Reading


def wheel_sources(path: Path) -> dict[str, str]:
    """File path (flydsl/expr/arith.py) -> source text of the flydsl modules in a wheel."""
    with zipfile.ZipFile(path) as archive:
        return {name: archive.read(name).decode("utf-8", "replace")
                for name in archive.namelist() if _is_module_file(name)}


def git_sources(git_dir: Path, tag: str) -> dict[str, str]:
    """File path -> source text under python/ at a tag of a FlyDSL repository."""
    listing = _git(git_dir, "ls-tree", "-r", "--name-only", tag, "python/flydsl/").splitlines()
    return {name[len("python/"):]: _git(git_dir, "show", f"{tag}:{name}")
            for name in listing if _is_module_file(name[len("python/"):])}


def _git(git_dir: Path, *arguments: str) -> str:
    return subprocess.run(["git", "-C", str(git_dir), *arguments], check=True, capture_output=True,
                          text=True, errors="replace").stdout


def _is_module_file(name: str) -> bool:
    return name.startswith("flydsl/") and name.endswith(".py") and not name.startswith("flydsl/_mlir/")


def module_name(path: str) -> str:
    """`flydsl.expr` for flydsl/expr/__init__.py, `flydsl.expr.arith` for flydsl/expr/arith.py."""
    parts = path[: -len(".py")].split("/")
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def pick_wheel(folder: Path) -> Path | None:
    wheels = sorted(folder.glob("flydsl-*-cp311-*x86_64.whl"))
    return wheels[0] if wheels else None


# One release


class Release:
    """The module-level names of one release's flydsl package, statically."""

    def __init__(self, sources: dict[str, str]) -> None:
        self.packages = {module_name(path) for path in sources if path.endswith("/__init__.py")}
        # A package shadows a same-named module file (flydsl/expr/rocdl.py beside rocdl/ in 0.2.0).
        self.trees = {module_name(path): ast.parse(text) for path, text in sorted(sources.items())
                      if path.endswith("/__init__.py") or module_name(path) not in self.packages}
        self._bindings: dict[str, dict[str, str]] = {}
        self._names: dict[str, dict[str, str]] = {}
        self.star_imports: dict[str, set[str]] = {}  # module -> generated modules star-imported

    # A module's own statements: name -> the qualified name it is bound to.
    def bindings(self, module: str) -> dict[str, str]:
        if module not in self._bindings:
            self._bindings[module] = self._read_bindings(module)
        return self._bindings[module]

    def _read_bindings(self, module: str) -> dict[str, str]:
        bound: dict[str, str] = {}
        tree = self.trees[module]
        for statement in _top_level(tree.body):
            if isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                bound[statement.name] = f"{module}.{statement.name}"
            elif isinstance(statement, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
                targets = statement.targets if isinstance(statement, ast.Assign) else [statement.target]
                for name in _target_names(targets):
                    bound[name] = f"{module}.{name}"
            elif isinstance(statement, ast.Import):
                for alias in statement.names:
                    if alias.asname:
                        bound[alias.asname] = alias.name
                    else:
                        head = alias.name.split(".")[0]
                        bound[head] = head
            elif isinstance(statement, ast.ImportFrom):
                source = _absolute(module, statement, module in self.packages)
                for alias in statement.names:
                    if alias.name == "*":
                        bound.setdefault("*", "")
                        bound["*"] += f" {source}"
                    else:
                        bound[alias.asname or alias.name] = f"{source}.{alias.name}"
            elif isinstance(statement, ast.Delete):
                for name in _target_names(statement.targets):
                    bound.pop(name, None)
        bound.update(_lazy_modules(module, tree, module in self.packages))
        return bound

    def names(self, module: str) -> dict[str, str]:
        """Every module-level name of `module`, star imports expanded."""
        if module in self._names:
            return self._names[module]
        self._names[module] = {}  # a cycle of star imports ends here
        own = dict(self.bindings(module))
        found: dict[str, str] = {}
        for source in own.pop("*", "").split():
            if source in self.trees:
                found.update(self.exported(source))
            else:  # the generated bindings (or another package): not read
                self.star_imports.setdefault(module, set()).add(source)
        found.update(own)
        self._names[module] = found
        return found

    def exported(self, module: str) -> dict[str, str]:
        """What `from module import *` binds: `__all__`, else the public names."""
        names = self.names(module)
        listed = _literal_all(self.trees[module])
        if listed is not None:
            return {name: names.get(name, f"{module}.{name}") for name in listed}
        return {name: target for name, target in names.items() if not name.startswith("_")}

    def defined(self, qualified: str, depth: int = 0) -> str | None:
        """Where a qualified name is defined (`flydsl.expr.max` -> `flydsl.expr.arith.max`),
        a module's own name for a module, or None when no module of this release binds it."""
        if depth > 20:
            return None
        if qualified in self.trees:
            return qualified
        module, _, leaf = qualified.rpartition(".")
        if not module:
            return None
        owner = self.defined(module, depth + 1)
        if owner is None:
            return None
        if owner in self.trees:
            target = self.names(owner).get(leaf)
            if target is None:
                return f"{owner}.{leaf}" if f"{owner}.{leaf}" in self.trees else None
            if target == f"{owner}.{leaf}":
                return target
            return self.defined(target, depth + 1) or (target if _outside(target) else None)
        return f"{owner}.{leaf}" if leaf in self.members(owner) else None

    def members(self, qualified_class: str) -> set[str]:
        """Names a class body binds, and the `self.x` attributes its `__init__` sets."""
        module, _, name = qualified_class.rpartition(".")
        tree = self.trees.get(module)
        node = next((n for n in _top_level(tree.body) if isinstance(n, ast.ClassDef) and n.name == name), None) \
            if tree else None
        if node is None:
            return set()
        members = set()
        for statement in node.body:
            if isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                members.add(statement.name)
                if statement.name == "__init__":
                    members |= _self_attributes(statement)
            elif isinstance(statement, (ast.Assign, ast.AnnAssign)):
                members |= set(_target_names(statement.targets if isinstance(statement, ast.Assign)
                                             else [statement.target]))
        return members

    def find_class(self, qualified_class: str) -> str | None:
        """The class `qualified_class` names, or one of the same name in its package."""
        found = self.defined(qualified_class)
        if found and self.members(found):
            return found
        name = qualified_class.rpartition(".")[2]
        package = qualified_class.split(".")[0]
        for module, tree in sorted(self.trees.items()):
            if module.startswith(package) and any(isinstance(n, ast.ClassDef) and n.name == name
                                                  for n in _top_level(tree.body)):
                return f"{module}.{name}"
        return None

    def signature(self, qualified: str) -> str | None:
        where = self.defined(qualified)
        if where is None:
            return None
        module, _, path = _split_module(self, where)
        node = _find_def(self.trees[module].body, path.split(".")) if module else None
        return _format_arguments(node.args) if node is not None else None


def _top_level(body: list[ast.stmt]):
    """Module-level statements, into `if`/`try` blocks (both branches: a name
    either may bind is listed)."""
    for statement in body:
        if isinstance(statement, ast.If):
            yield from _top_level(statement.body + statement.orelse)
        elif isinstance(statement, ast.Try):
            yield from _top_level(statement.body + [s for h in statement.handlers for s in h.body]
                                  + statement.orelse + statement.finalbody)
        else:
            yield statement


def _target_names(targets: list[ast.expr]) -> list[str]:
    names = []
    for target in targets:
        if isinstance(target, ast.Name):
            names.append(target.id)
        elif isinstance(target, (ast.Tuple, ast.List)):
            names += _target_names(target.elts)
    return names


def _self_attributes(function: ast.FunctionDef) -> set[str]:
    return {node.attr for node in ast.walk(function) if isinstance(node, ast.Attribute)
            and isinstance(node.ctx, ast.Store) and isinstance(node.value, ast.Name) and node.value.id == "self"}


def _absolute(module: str, statement: ast.ImportFrom, is_package: bool) -> str:
    if not statement.level:
        return statement.module or ""
    parts = module.split(".")
    base = parts if is_package else parts[:-1]
    base = base[: len(base) - statement.level + 1]
    return ".".join(base + ([statement.module] if statement.module else []))


def _lazy_modules(module: str, tree: ast.Module, is_package: bool) -> dict[str, str]:
    """Names a module-level `__getattr__` imports lazily from a dict of
    relative module paths (`_BACKEND_MODULES = {"rocdl": ".rocdl"}`)."""
    function = next((n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == "__getattr__"), None)
    if function is None:
        return {}
    used = {n.id for n in ast.walk(function) if isinstance(n, ast.Name)}
    lazy = {}
    for statement in tree.body:
        if not (isinstance(statement, ast.Assign) and isinstance(statement.value, ast.Dict)):
            continue
        if not any(isinstance(t, ast.Name) and t.id in used for t in statement.targets):
            continue
        for key, value in zip(statement.value.keys, statement.value.values):
            if isinstance(key, ast.Constant) and isinstance(value, ast.Constant) and str(value.value).startswith("."):
                relative = str(value.value)
                level = len(relative) - len(relative.lstrip("."))
                fake = ast.ImportFrom(module=relative.lstrip(".") or None, names=[], level=level)
                lazy[str(key.value)] = _absolute(module, fake, is_package)
    return lazy


def _literal_all(tree: ast.Module) -> list[str] | None:
    listed = None
    for statement in _top_level(tree.body):
        if isinstance(statement, (ast.Assign, ast.AugAssign)):
            targets = statement.targets if isinstance(statement, ast.Assign) else [statement.target]
            if any(isinstance(t, ast.Name) and t.id == "__all__" for t in targets):
                try:
                    value = ast.literal_eval(statement.value)
                except ValueError:
                    continue
                listed = list(value) if isinstance(statement, ast.Assign) else (listed or []) + list(value)
    return listed


def _is_flydsl(qualified: str) -> bool:
    return qualified == "flydsl" or qualified.startswith("flydsl.")


def _outside(qualified: str) -> bool:
    """A name bound from outside the modules read (the generated bindings, the standard library)."""
    return not _is_flydsl(qualified) or qualified.startswith(_SKIPPED_PACKAGE)


def _split_module(release: Release, qualified: str) -> tuple[str, str, str]:
    parts = qualified.split(".")
    for cut in range(len(parts) - 1, 0, -1):
        module = ".".join(parts[:cut])
        if module in release.trees:
            return module, ".", ".".join(parts[cut:])
    return "", "", qualified


def _find_def(body: list[ast.stmt], path: list[str]):
    for node in _top_level(body):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and node.name == path[0]:
            if len(path) == 1:
                return node if not isinstance(node, ast.ClassDef) else None
            return _find_def(node.body, path[1:])
    return None


def _format_arguments(arguments: ast.arguments) -> str:
    """`(a, b=..., *, c=..., **kwargs)`: names and whether there is a default."""
    positional = arguments.posonlyargs + arguments.args
    defaults = [None] * (len(positional) - len(arguments.defaults)) + arguments.defaults
    parts = [a.arg + ("=..." if d is not None else "") for a, d in zip(positional, defaults)]
    if arguments.posonlyargs:
        parts.insert(len(arguments.posonlyargs), "/")
    if arguments.vararg:
        parts.append(f"*{arguments.vararg.arg}")
    elif arguments.kwonlyargs:
        parts.append("*")
    parts += [a.arg + ("=..." if d is not None else "") for a, d in zip(arguments.kwonlyargs, arguments.kw_defaults)]
    if arguments.kwarg:
        parts.append(f"**{arguments.kwarg.arg}")
    return f"({', '.join(parts)})"


# The table


def listed_names(release: Release) -> set[str]:
    """The qualified names of this release that the table lists."""
    found = set()
    for module in MODULES:
        if module not in release.trees:
            continue
        found.add(module)
        for name, target in release.names(module).items():
            # Names imported from elsewhere (`typing.Optional`, `numpy`) are not FlyDSL's API.
            if (not name.startswith("_") or name in LEGACY_PRIVATE) and _is_flydsl(target):
                found.add(f"{module}.{name}")
    for qualified_class in CLASSES:
        where = release.find_class(qualified_class)
        if where is None:
            continue
        for member in release.members(where):
            if not member.startswith("_") or member in LEGACY_PRIVATE:
                found.add(f"{qualified_class}.{member}")
    return found | legacy_names(release)


def legacy_names(release: Release) -> set[str]:
    found = set()
    for module in release.trees:
        if any(part.startswith("_") for part in module.split(".")):
            continue  # a private module's names are no spelling a kernel uses
        for name in release.names(module):
            if name in LEGACY_LEAVES or name.startswith(LEGACY_PREFIXES):
                found.add(f"{module}.{name}")
    return found


def spans(present: list[bool], releases: list[str]) -> str:
    """`0.3.2-` (to the newest), `0.2.0-0.2.4`, `0.3.0`, joined with `, `."""
    parts, start = [], None
    for index, here in enumerate(present + [False]):
        if here and start is None:
            start = index
        elif not here and start is not None:
            last = index - 1
            if last == len(releases) - 1:
                parts.append(f"{releases[start]}-")
            elif last == start:
                parts.append(releases[start])
            else:
                parts.append(f"{releases[start]}-{releases[last]}")
            start = None
    return ", ".join(parts)


def build_table(loaded: dict[str, tuple[str, Release]]) -> str:
    releases = sorted(loaded, key=Version.parse)
    per_release = {version: listed_names(loaded[version][1]) for version in releases}
    every = sorted(set().union(*per_release.values()))
    lines = [
        "# Generated by scripts/derive_flydsl_api.py from each release's wheel: do not edit by hand.",
        "# [names]: the qualified FlyDSL names the rules match or the fixes write, and the releases",
        "#   they exist in (`A-` from A to the newest, `A-B` inclusive, `A` one release).",
        "# [legacy]: every module path binding a legacy construct's leaf, in any release.",
        "# [star-imports]: generated-binding modules re-exported wholesale (their names are not listed).",
        "# [signatures.\"<name>\"]: parameter lists per release (`=...`: has a default).",
        f"releases = [{', '.join(_quote(v) for v in releases)}]",
        "",
        "[sources]",
        *(f"{_quote(v)} = {_quote(loaded[v][0])}" for v in releases),
        "",
        "[names]",
    ]
    for name in every:
        lines.append(f"{_quote(name)} = {_quote(spans([name in per_release[v] for v in releases], releases))}")
    lines += ["", "[legacy]"]
    by_leaf: dict[str, set[str]] = {}
    for version in releases:
        for name in legacy_names(loaded[version][1]):
            by_leaf.setdefault(name.rpartition(".")[2], set()).add(name)
    for leaf in sorted(by_leaf):
        if leaf.startswith(LEGACY_PREFIXES):
            continue  # intrinsic names: hundreds, listed in [names]; their paths are those of `rocdl`
        lines.append(f"{_quote(leaf)} = [{', '.join(_quote(n) for n in sorted(by_leaf[leaf]))}]")
    lines += ["", "[star-imports]"]
    stars: dict[tuple[str, str], list[bool]] = {}
    for index, version in enumerate(releases):
        release = loaded[version][1]
        for module in MODULES:
            if module in release.trees:
                release.names(module)
        for module, sources in release.star_imports.items():
            for source in sources:
                stars.setdefault((module, source), [False] * len(releases))[index] = True
    for (module, source), present in sorted(stars.items()):
        if module in MODULES:
            lines.append(f"{_quote(module)}.{_quote(source)} = {_quote(spans(present, releases))}")
    for qualified in SIGNATURES:
        lines += ["", f"[signatures.{_quote(qualified)}]"]
        seen = [loaded[v][1].signature(qualified) for v in releases]
        for text in dict.fromkeys(s for s in seen if s is not None):
            lines.append(f"{_quote(spans([s == text for s in seen], releases))} = {_quote(text)}")
    return "\n".join(lines) + "\n"


def alias_groups(loaded: dict[str, tuple[str, Release]]) -> dict[str, set[str]]:
    """Each legacy construct's definition -> every public path binding it, in any release.

    Identity comes from following re-exports (`Release.defined`), never from
    equal names: the per-architecture `s_waitcnt`s are different objects.
    """
    groups: dict[str, set[str]] = {}
    definition_of: dict[str, str] = {}
    for version, (_, release) in loaded.items():
        for name in legacy_names(release):
            where = release.defined(name)
            if where is None or name.rpartition(".")[2].startswith(LEGACY_PREFIXES):
                continue
            if definition_of.setdefault(name, where) != where:
                raise SystemExit(f"{name} binds {definition_of[name]} in one release and {where} in {version}: "
                                 "decide by hand whether they are one construct")
            groups.setdefault(where, {where}).add(name)
    return {where: paths for where, paths in groups.items() if len(paths) > 1}


def build_aliases(loaded: dict[str, tuple[str, Release]]) -> str:
    lines = [
        "# Generated by scripts/derive_flydsl_api.py from each release's wheel: do not edit by hand.",
        "# Each line: a legacy construct's definition, ` = `, then every other module path that binds",
        "# the same object (re-exports followed) in some release. flydsl_lint.engine.project.followed",
        "# reads it with str.split so a rule matching one path matches them all.",
    ]
    for where, paths in sorted(alias_groups(loaded).items()):
        lines.append(f"{where} = {' '.join(sorted(paths - {where}))}")
    return "\n".join(lines) + "\n"


def _write_or_check(path: Path, text: str, check: bool) -> bool:
    """Write `text` to `path` (or, with `check`, compare): False when a check finds a difference."""
    if check:
        current = path.read_text(encoding="utf-8") if path.is_file() else ""
        print(f"{path}: {'up to date' if current == text else 'differs'}")
        return current == text
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    print(f"{path}: {text.count(chr(10))} lines")
    return True


def _quote(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--wheels", type=Path, help="folder of <release>/flydsl-<release>-cp311-*.whl")
    parser.add_argument("--git-dir", type=Path, help="a FlyDSL git repository, for --tag")
    parser.add_argument("--tag", action="append", default=[], metavar="RELEASE=TAG",
                        help="read RELEASE from TAG of --git-dir (when it has no wheel)")
    parser.add_argument("-o", "--output", type=Path, default=ROOT / "flydsl_lint" / "data" / "flydsl_api.toml")
    parser.add_argument("--aliases-output", type=Path, default=ROOT / "flydsl_lint" / "data" / "legacy_paths.txt",
                        help="where to write the legacy constructs' alias paths")
    parser.add_argument("--check", action="store_true", help="exit 1 if an output file differs, write nothing")
    options = parser.parse_args(argv)
    loaded: dict[str, tuple[str, Release]] = {}
    if options.wheels:
        for folder in sorted(p for p in options.wheels.iterdir() if p.is_dir()):
            wheel = pick_wheel(folder)
            if wheel is not None:
                loaded[folder.name] = (wheel.name, Release(wheel_sources(wheel)))
    for item in options.tag:
        version, _, tag = item.partition("=")
        if not tag or options.git_dir is None:
            parser.error(f"--tag {item!r}: give RELEASE=TAG and --git-dir")
        loaded.setdefault(version, (f"git tag {tag}", Release(git_sources(options.git_dir, tag))))
    if not loaded:
        parser.error("no release read: give --wheels and/or --git-dir with --tag")
    print(f"{len(loaded)} releases read")
    table_same = _write_or_check(options.output, build_table(loaded), options.check)
    aliases_same = _write_or_check(options.aliases_output, build_aliases(loaded), options.check)
    return 0 if table_same and aliases_same else 1


if __name__ == "__main__":
    sys.exit(main())
