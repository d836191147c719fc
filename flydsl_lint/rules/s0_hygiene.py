"""FLY0xx project boundaries and tool hygiene: target-neutral expr/, reasoned noqa."""

from __future__ import annotations

import ast
import re

from ..engine.diagnostics import Edit, Position
from ..engine.metadata import load_redirects
from ..engine.noqa import NoqaDirective, mark_exempt
from ..engine.project import absolute_module
from ._base import Invalid, Rule, Valid, register, registered_rules

# What FlyDSL's tests/unit/test_expr_optional_rocdl.py forbids `import flydsl.expr`
# to load: the ROCDL bindings and dialects, and the backend modules that
# flydsl.expr only exposes lazily (rocdl, tdm_ops, buffer_ops, random.rocdl).
BACKEND_MODULES = (
    "flydsl._mlir._mlir_libs._mlirDialectsFlyROCDL",
    "flydsl._mlir.dialects.fly_rocdl",
    "flydsl._mlir.dialects.rocdl",
    "flydsl.expr.rocdl",
    "flydsl.expr.tdm_ops",
    "flydsl.expr.buffer_ops",
    "flydsl.extension.random.rocdl",
)
_EXPR_PATH = re.compile(r"(?:^|/)flydsl/expr/(?P<rest>.+)\.py$")


def _is_backend(module: str) -> bool:
    return any(module == b or module.startswith(b + ".") for b in BACKEND_MODULES)


@register
class ExprBackendImport(Rule):
    """`python/flydsl/expr/` is the target-neutral layer: `import flydsl.expr`
    must work without the ROCDL bindings, and the backend modules (`rocdl`,
    `tdm_ops`, `buffer_ops`) are reached lazily. FlyDSL guards this with
    tests/unit/test_expr_optional_rocdl.py, which blocks exactly the modules
    this rule matches. Flagged: a module-level import of them in an expr/
    module outside the `expr/rocdl/` backend package. Imports inside a
    function, under `if TYPE_CHECKING:` or in a `try/except ImportError` are
    lazy or optional and stay. The generic `llvm` dialect is not flagged: the
    guard test allows it and expr/ uses it for extern calls."""

    code = "FLY011"
    _path = "python/flydsl/expr/numeric.py"
    valid = [
        Valid("from .._mlir.dialects import llvm\n", path=_path),
        Valid("def f():\n    from .._mlir.dialects import rocdl\n    return rocdl\n", path=_path),
        Valid("try:\n    from . import rocdl\nexcept ImportError:\n    rocdl = None\n", path=_path),
        Valid("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from .rocdl import MFMA\n", path=_path),
        Valid("from flydsl._mlir.dialects import rocdl\n", path="python/flydsl/expr/rocdl/universal.py"),
        Valid("from flydsl._mlir.dialects import rocdl\n", path="kernels/gemm/gemm.py"),
        Valid("from .._mlir.dialects import rocdl\n", path="python/flydsl/expr/buffer_ops.py"),
    ]
    invalid = [
        Invalid("from .._mlir.dialects import rocdl\n", path=_path,
                at=(1, 1), message='`flydsl._mlir.dialects.rocdl` imported at module level in expr/: expr/ must stay target-neutral (test_expr_optional_rocdl.py); import it lazily inside the function that needs it'),
        Invalid("from . import buffer_ops\n", path="python/flydsl/expr/__init__.py"),
        Invalid("import flydsl._mlir.dialects.rocdl as _rocdl\nfrom .rocdl import tdm_ops\n", path=_path, count=2),
    ]

    def check_file(self) -> None:
        match = _EXPR_PATH.search(self.context.source.path.replace("\\", "/"))
        if match is None or match.group("rest").startswith("rocdl/"):
            return
        rest = match.group("rest").split("/")
        is_package = rest[-1] == "__init__"
        module = ".".join(["flydsl", "expr"] + (rest[:-1] if is_package else rest))
        if _is_backend(module):
            return  # the backend module itself (expr/rocdl.py, expr/buffer_ops.py before 0.3.0)
        for statement in self.model.nodes(ast.Import) + self.model.nodes(ast.ImportFrom):
            if not self._eager(statement):
                continue
            for target in self._targets(statement, module, is_package):
                if _is_backend(target):
                    self.report(statement, module=target)
                    break

    @staticmethod
    def _targets(statement: ast.Import | ast.ImportFrom, module: str, is_package: bool) -> list[str]:
        if isinstance(statement, ast.Import):
            return [alias.name for alias in statement.names]
        base = absolute_module(module, is_package, statement.level, statement.module)
        if base is None:
            return []
        return [base] + [f"{base}.{alias.name}" for alias in statement.names if alias.name != "*"]

    def _eager(self, statement: ast.stmt) -> bool:
        """Runs when the module is imported, and failure is not tolerated."""
        for ancestor in self.model.ancestors(statement):
            if isinstance(ancestor, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
                return False
            if isinstance(ancestor, ast.Try) and any(_catches_import_error(h) for h in ancestor.handlers):
                if any(statement is s or _contains(s, statement) for s in ancestor.body):
                    return False
            if isinstance(ancestor, ast.If) and _is_type_checking(ancestor.test):
                return False
        return True


def _contains(outer: ast.AST, inner: ast.AST) -> bool:
    return any(node is inner for node in ast.walk(outer))


def _catches_import_error(handler: ast.ExceptHandler) -> bool:
    if handler.type is None:
        return True
    types = handler.type.elts if isinstance(handler.type, ast.Tuple) else [handler.type]
    return any(isinstance(t, ast.Name) and t.id in ("ImportError", "ModuleNotFoundError", "Exception") for t in types)


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


# ruff's flynt codes: FLY002 (static-join-to-f-string), FLY001 reserved. A noqa
# code that names one of them (FLY002, FLY00, FLY0, FLY) may be there for ruff.
RUFF_FLY_CODES = ("FLY001", "FLY002")


def _fly_codes(directive: NoqaDirective) -> list[str]:
    return [code for code in directive.codes or () if code.startswith("FLY")]


def _may_be_ruffs(code: str) -> bool:
    return any(ruff_code.startswith(code) for ruff_code in RUFF_FLY_CODES)


class _NoqaRule(Rule):
    """Shared plumbing: a diagnostic about a noqa comment on that comment."""

    def _report_directive(self, directive: NoqaDirective, fix=None, **args) -> None:
        start, end = Position(directive.row, directive.col), Position(directive.row, directive.end_col)
        before = len(self.context.diagnostics)
        self.report(start=start, end=end, fix=fix, **args)
        diagnostic = self.context.diagnostics[before]
        # Reported after noqa matching: honour a directive naming this code
        # here, or a file exemption, so the CLI and flake8 (which filters itself) agree.
        mark_exempt([diagnostic], [directive, *self.context.file_noqa])

    def directives(self) -> list[NoqaDirective]:
        """The file's line directives, then its file exemptions."""
        return [*self.context.noqa.values(), *self.context.file_noqa]


@register
class NoqaWithoutReason(_NoqaRule):
    """A `# noqa: FLYxxx` that suppresses a finding keeps a raw boundary or a
    legacy construct on purpose. The guide asks to record why a boundary
    remains; without the reason the next cleanup cannot tell a deliberate
    boundary from a forgotten one. Write the reason after the codes:
    `# noqa: FLY311 -- scf.IfOp keeps the rewriter's unsupported yield
    contract`. A file exemption `# flydsl-lint: noqa: FLY8` needs one just
    the same. Only directives that suppress a FLY finding are judged (one
    that suppresses nothing is FLY013); bare `# noqa` and other tools' codes
    are left alone, and a blanket `# flydsl-lint: noqa` exempts the file from
    this rule too (name the codes to keep it judged)."""

    code = "FLY012"
    valid = [
        "from flydsl.expr import arith\nm = arith.maximumf(a, b)  # noqa: FLY301 -- keeps NaN-propagating max\n",
        "x = 1  # noqa: E501\n",
        "from flydsl.expr import arith\nm = arith.maximumf(a, b)  # noqa\n",
    ]
    invalid = [
        Invalid("from flydsl.expr import arith\nm = arith.maximumf(a, b)  # noqa: FLY301\n",
                settings={"extend_select": ("FLY301",)}),
        Invalid("from flydsl.expr import arith\nm = arith.maximumf(a, b)  # noqa: FLY3, E501\n",
                settings={"extend_select": ("FLY301",)}),
        Invalid("# flydsl-lint: noqa: FLY301\nfrom flydsl.expr import arith\nm = arith.maximumf(a, b)\n",
                settings={"extend_select": ("FLY301",)}),
    ]
    use_instead = "m = arith.maximumf(a, b)  # noqa: FLY301 -- keeps NaN-propagating max for the reference"

    def check_suppressions(self) -> None:
        for directive in self.directives():
            used = sorted(code for code in directive.used if code.startswith("FLY") and code != self.code)
            if not _fly_codes(directive) or not used or directive.reason:
                continue
            self._report_directive(directive, codes=", ".join(_fly_codes(directive)), head=directive.head)


@register
class UnusedNoqa(_NoqaRule):
    """A `# noqa: FLYxxx` that suppresses nothing hides nothing but still
    claims there is a boundary here; it outlives the code it was written for
    and would silence a real finding later (ruff's RUF100 for FLY codes).
    A code is judged only when every rule it names ran on this file (selected
    and not per-file-ignored), so a narrow `--select` never makes a directive
    look unused. File exemptions (`# flydsl-lint: noqa: FLY8`) are judged
    over the whole file. Unknown FLY codes and other tools' codes are left
    alone, and so is a code that also names one of ruff's flynt codes
    (`FLY002`, `FLY00`, `FLY0`, `FLY`: the directive may be there for ruff).
    A renamed code (`FLY003`) is FLY014's. The fix removes the unused FLY
    codes, or the whole comment when none is left."""

    code = "FLY013"
    edits_comments = True  # deleting / rewriting comments is the point of this fix
    valid = [
        Valid("from flydsl.expr import arith\nm = arith.maximumf(a, b)  # noqa: FLY301 -- NaN max\n",
              settings={"extend_select": ("FLY301",)}),
        "x = 1  # noqa: FLY301\n",  # FLY301 did not run (not selected): not judged
        "x = 1  # noqa: E501\n",
        "x = 1  # noqa\n",
        Valid("x = 1  # noqa: FLY999\n", settings={"extend_select": ("FLY999",)}),
        Valid("x = 1  # noqa: FLY013\n"),
        # ruff's own FLY002 (static-join-to-f-string), and prefixes that cover it: never ours to judge.
        Valid("s = ' '.join((a, b))  # noqa: FLY002\n"),
        Valid("s = ' '.join((a, b))  # noqa: FLY, FLY0\n", settings={"extend_select": ("ALL",)}),
    ]
    invalid = [
        Invalid("x = 1  # noqa: FLY301 -- stale\n", fixed="x = 1\n", settings={"extend_select": ("FLY301",)}),
        Invalid("from flydsl.expr import arith\nm = arith.maximumf(a, b)  # noqa: FLY301, FLY302, E501 -- NaN max\n",
                fixed="from flydsl.expr import arith\nm = arith.maximumf(a, b)  # noqa: FLY301, E501 -- NaN max\n",
                settings={"extend_select": ("FLY301", "FLY302")}),
        Invalid("# flydsl-lint: noqa: FLY301, FLY8 -- generated\nx = 1\n", fixed="# flydsl-lint: noqa: FLY8 -- generated\nx = 1\n",
                settings={"extend_select": ("FLY301",)}),
        Invalid("# flydsl-lint: noqa: FLY301\nx = 1\n", fixed="x = 1\n", settings={"extend_select": ("FLY301",)}),
        Invalid("def f():\n    # noqa: FLY301\n    return 1\n", fixed="def f():\n    return 1\n",
                settings={"extend_select": ("FLY301",)}),
        Invalid("x = 1  # keep it  # noqa: FLY301\n", fixed="x = 1  # keep it\n",
                settings={"extend_select": ("FLY301",)}),
    ]

    def check_suppressions(self) -> None:
        directives = self.directives()
        if not directives:
            return  # most files: spares matching every rule against the selection (long with a --select list)
        registered = list(registered_rules())
        ignored = self.settings.ignored_for(self.context.source.path)
        active = {c for c in registered if self.settings.is_selected(c) and not (ignored and c.startswith(ignored))}
        for directive in directives:
            unused = []
            for code in _fly_codes(directive):
                named = [c for c in registered if c.startswith(code)]
                if code == self.code or not named or not all(c in active for c in named) or _may_be_ruffs(code):
                    continue  # unknown, some rule it names did not run here, or perhaps ruff's
                if not any(used.startswith(code) for used in directive.used):
                    unused.append(code)
            if unused:
                fix = self.make_fix([self._removal(directive, unused)], f"Remove unused `{', '.join(unused)}`")
                self._report_directive(directive, fix=fix, codes=", ".join(unused),
                                       scope="in this file" if directive.file_level else "here")

    def _removal(self, directive: NoqaDirective, unused: list[str]) -> Edit:
        line = self.context.source.lines[directive.row - 1]
        kept = [code for code in directive.codes or () if code not in unused]
        if kept:
            rest = directive.rest.strip()
            suffix = f" {rest}" if rest else ""
            return Edit(Position(directive.row, directive.col), Position(directive.row, directive.end_col),
                        f"{directive.head}: {', '.join(kept)}{suffix}")
        before = line[: directive.col].rstrip()
        if not before:  # the directive is the whole line
            if directive.row < len(self.context.source.lines):
                return Edit(Position(directive.row, 0), Position(directive.row + 1, 0), "")
            return Edit(Position(directive.row, 0), Position(directive.row, len(line)), "")
        return Edit(Position(directive.row, len(before)), Position(directive.row, directive.end_col), "")


@register
class RedirectedNoqa(_NoqaRule):
    """FLY001, FLY002 and FLY003 were renamed FLY011, FLY012 and FLY013:
    ruff's flynt rules own FLY002 (and reserve FLY001), so a `# noqa: FLY002`
    meant for ruff was indistinguishable from one meant for flydsl-lint. For
    one release the old code in a `# noqa` still suppresses its new code's
    findings, and this rule reports the directive once it does. An old code
    that suppresses none of ours is left alone: it may be ruff's. The fix
    writes the new code in place of the old one."""

    code = "FLY014"
    edits_comments = True  # rewriting the directive is the point of this fix
    valid = [
        "s = ' '.join((a, b))  # noqa: FLY002\n",  # ruff's code, suppressing nothing of ours
        Valid("x = 1  # noqa: FLY003\n", settings={"extend_select": ("FLY013",)}),
    ]
    invalid = [
        Invalid("from flydsl.expr import arith\nm = arith.maximumf(a, b)  # noqa: FLY301, FLY002\n",
                fixed="from flydsl.expr import arith\nm = arith.maximumf(a, b)  # noqa: FLY301, FLY012\n",
                settings={"extend_select": ("FLY301", "FLY012")},
                at=(2, 27), message="`FLY002` is the old code of `FLY012` (renamed so that no FLY code of ours is one of ruff's): write `FLY012`; the old code is accepted until the next release"),
        Invalid("# flydsl-lint: noqa: FLY001 -- vendored\nfrom .._mlir.dialects import rocdl\n",
                fixed="# flydsl-lint: noqa: FLY011 -- vendored\nfrom .._mlir.dialects import rocdl\n",
                settings={"extend_select": ("FLY011",)}, path="python/flydsl/expr/numeric.py"),
    ]

    def check_suppressions(self) -> None:
        redirects = load_redirects()
        for directive in self.directives():
            for old in directive.codes or ():
                new = redirects.get(old)
                if new is not None and any(used.startswith(new) for used in directive.used):
                    self._report_directive(directive, fix=self.make_fix([self._rename(directive, old, new)],
                                                                          f"Write `{new}`"), old=old, new=new)

    def _rename(self, directive: NoqaDirective, old: str, new: str) -> Edit:
        codes = ", ".join(new if code == old else code for code in directive.codes or ())
        rest = directive.rest.strip()
        return Edit(Position(directive.row, directive.col), Position(directive.row, directive.end_col),
                    f"{directive.head}: {codes}" + (f" {rest}" if rest else ""))
