"""Rules declared `only_in_flydsl_files` (the §8 comment rules, FLY901/FLY902)
run only in files that import FlyDSL (issue 27): a project's CUTLASS or host
code is not FlyDSL kernel code and its banners are not this linter's business."""

from __future__ import annotations

import ast
import textwrap
from pathlib import Path

import pytest

from flydsl_lint.docs import render_rule
from flydsl_lint.engine.model import SemanticModel
from flydsl_lint.engine.project import ProjectIndex
from flydsl_lint.engine.source import SourceFile
from flydsl_lint.rules import all_rules
from flydsl_lint.run.checker import Checker
from tests.conftest import lint_text, make_settings

# One site of each scoped rule: FLY801, FLY802, FLY803, FLY804, FLY901.
BODY = """\
# ==========================
# ---------------- O store ----------------
x = 1
# y = fx.Boolean(False).ir_value()


def f():
    a = 1


    return a


LOG2E = 1.4426950408889634
"""
SCOPED = ("FLY801", "FLY802", "FLY803", "FLY804", "FLY901")


def _codes(text: str, tmp_path: Path, name: str = "kernel.py", **settings) -> list[str]:
    return sorted(d.code for d in lint_text(text, tmp_path, name=name, select=("FLY8", "FLY9"), **settings))


def test_the_comment_and_reuse_rules_declare_the_scope():
    scoped = sorted(code for code, cls in all_rules().items() if cls.only_in_flydsl_files)
    assert scoped == ["FLY801", "FLY802", "FLY803", "FLY804", "FLY901", "FLY902"]


def test_a_file_that_never_imports_flydsl_is_not_flagged(tmp_path):
    assert _codes("import cutlass\nimport flydsl_lint\n" + BODY, tmp_path) == []


@pytest.mark.parametrize("imports", [
    "import flydsl\n",
    "import flydsl.expr as fx\n",
    "from flydsl.expr import arith\n",
    "from flydsl.expr.typing import *\n",
    "import kernels.common.buffer_ops\n",  # FlyDSL's own legacy helper module
    "from kernels.common import buffer_ops\n",
    "try:\n    import flydsl.compiler as flyc\nexcept ImportError:\n    flyc = None\n",
    "def load():\n    import flydsl.expr as fx\n    return fx\n",
])
def test_any_import_of_flydsl_makes_the_rules_run(imports, tmp_path):
    assert _codes(imports + BODY, tmp_path) == list(SCOPED)


def _package(root: Path, helper: str) -> None:
    (root / "pkg" / "utils").mkdir(parents=True)
    (root / "pkg" / "kernels").mkdir()
    for folder in ("pkg", "pkg/utils", "pkg/kernels"):
        (root / folder / "__init__.py").write_text("")
    (root / "pkg" / "utils" / "buffer_ops.py").write_text(helper)


def test_a_relative_import_of_a_vendored_legacy_helper_counts(tmp_path):
    _package(tmp_path, "from flydsl._mlir.dialects import rocdl\n\ndef create_buffer_resource(t):\n    return t\n")
    found = _codes("from ..utils import buffer_ops\n" + BODY, tmp_path, name="pkg/kernels/k.py")
    assert found == list(SCOPED)


def test_a_helper_named_like_a_legacy_one_counts_only_if_it_is_flydsls(tmp_path):
    _package(tmp_path, "import numpy\n\ndef create_buffer_resource(t):\n    return t\n")
    assert _codes("from ..utils import buffer_ops\n" + BODY, tmp_path, name="pkg/kernels/k.py") == []
    # under legacy-module-roots the project says it is a vendored copy of FlyDSL's helper
    found = _codes("from ..utils.buffer_ops import create_buffer_resource\n" + BODY, tmp_path,
                   name="pkg/kernels/k.py", legacy_module_roots=("pkg.utils",))
    assert found == list(SCOPED)


@pytest.mark.parametrize("order", [("plain", "flydsl"), ("flydsl", "plain")])
def test_one_checker_scopes_each_file_on_its_own(order, tmp_path):
    """The checker's per-file plan is worked out once per kind of file, not once a run."""
    texts = {"plain": "import cutlass\n" + BODY, "flydsl": "import flydsl.expr as fx\n" + BODY}
    checker = Checker(make_settings(tmp_path, select=("FLY8", "FLY9")))
    found = {kind: sorted(d.code for d in checker.check(SourceFile(str(tmp_path / f"{kind}.py"), texts[kind])))
             for kind in order}
    assert found == {"plain": [], "flydsl": list(SCOPED)}


def _imports_flydsl(source: str, module: str = "", project: ProjectIndex | None = None) -> bool:
    return SemanticModel(ast.parse(textwrap.dedent(source)), module, False, project).imports_flydsl()


@pytest.mark.parametrize("source, expected", [
    ("import flydsl.expr.arith\n", True),
    ("from flydsl import compiler as flyc\n", True),
    ("from flydsl.expr import *\n", True),
    ("import kernels.common.buffer_ops as buffer_ops\n", True),
    ("import flydsl_lint\nimport flydslx\nfrom cutlass import cute\n", False),
    ("x = 'import flydsl'\n# import flydsl\n", False),
])
def test_the_model_knows_whether_a_module_imports_flydsl(source, expected):
    assert _imports_flydsl(source) is expected


def test_a_project_re_export_of_flydsl_counts(tmp_path):
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "__init__.py").write_text("")
    (tmp_path / "pkg" / "dsl.py").write_text("from flydsl.expr.arith import unwrap\n")
    project = ProjectIndex([tmp_path], follows=frozenset({"unwrap"}))
    assert _imports_flydsl("from .dsl import unwrap\n", "pkg.k", project) is True
    assert _imports_flydsl("from .dsl import other\n", "pkg.k", project) is False


def test_the_rule_page_states_the_scope():
    rules = all_rules()
    assert "Runs only in files that import flydsl" in render_rule(rules["FLY801"])
    assert "Runs only in files that import flydsl" not in render_rule(rules["FLY301"])
