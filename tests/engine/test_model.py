"""The semantic model: import/alias resolution, shadowing, kernels, re-exports."""

from __future__ import annotations

import ast
import textwrap
from pathlib import Path

import pytest

from flydsl_lint.engine.model import SemanticModel
from flydsl_lint.engine.project import ProjectIndex, module_name_for

FOLLOWS = frozenset({"unwrap", "buffer_load", "buffer_store"})  # the leaves these tests follow through re-exports


def calls(source: str, module: str = "", is_package: bool = False, project: ProjectIndex | None = None):
    tree = ast.parse(textwrap.dedent(source))
    model = SemanticModel(tree, module, is_package, project)
    return model, {ast.unparse(c.func): model.resolve(c.func) for c in model.nodes(ast.Call)}


@pytest.mark.parametrize(
    "source, callee, expected",
    [
        ("import flydsl.expr.arith as A\nA.unwrap(x)", "A.unwrap", "flydsl.expr.arith.unwrap"),
        ("import flydsl.expr\nflydsl.expr.arith.unwrap(x)", "flydsl.expr.arith.unwrap", "flydsl.expr.arith.unwrap"),
        ("from flydsl.expr import arith as ar\nar.unwrap(x)", "ar.unwrap", "flydsl.expr.arith.unwrap"),
        ("from flydsl.expr.arith import unwrap as uw\nuw(x)", "uw", "flydsl.expr.arith.unwrap"),
        ("import flydsl.expr as fx\nfx.arith.unwrap(x)", "fx.arith.unwrap", "flydsl.expr.arith.unwrap"),
        ("from flydsl.expr.arith import *\nunwrap(x)", "unwrap", "flydsl.expr.arith.unwrap"),
        ("from flydsl.expr import arith\nuw = arith.unwrap\nuw(x)", "uw", "flydsl.expr.arith.unwrap"),
        (
            "try:\n    from flydsl.expr import arith\nexcept ImportError:\n    from old_flydsl import arith\narith.unwrap(x)",
            "arith.unwrap",
            "flydsl.expr.arith.unwrap",
        ),
        ("def f():\n    from flydsl.expr import arith\n    return arith.unwrap(x)", "arith.unwrap", "flydsl.expr.arith.unwrap"),
        ("from flydsl.expr import arith\nclass K:\n    def m(self):\n        return arith.unwrap(x)", "arith.unwrap", "flydsl.expr.arith.unwrap"),
    ],
)
def test_import_forms_resolve(source, callee, expected):
    _, resolved = calls(source)
    assert resolved[callee] == expected


@pytest.mark.parametrize(
    "shadowing",
    [
        "arith = make_arith()",
        "def arith(): ...",
        "class arith: ...",
        "for arith in things: ...",
        "with ctx() as arith: ...",
        "import numpy as arith",
        "from other import arith",
        "arith: object = None",
        "(arith := 3)",
    ],
)
def test_rebinding_shadows_the_import(shadowing):
    _, resolved = calls(f"from flydsl.expr import arith\n{shadowing}\narith.unwrap(x)")
    assert resolved["arith.unwrap"] != "flydsl.expr.arith.unwrap"


@pytest.mark.parametrize(
    "source",
    [
        "from flydsl.expr import arith\ndef f(arith):\n    return arith.unwrap(x)",
        "from flydsl.expr import arith\ndef f(*, arith=None):\n    return arith.unwrap(x)",
        "from flydsl.expr import arith\nlam = lambda arith: arith.unwrap(x)",
        "from flydsl.expr import arith\nvals = [arith.unwrap(x) for arith in mods]",
        "from flydsl.expr import arith\ntry:\n    pass\nexcept Exception as arith:\n    arith.unwrap(x)",
        "from flydsl.expr import arith\ndef f():\n    arith = other\n    return arith.unwrap(x)",
    ],
)
def test_local_bindings_shadow(source):
    _, resolved = calls(source)
    assert resolved["arith.unwrap"] is None


def test_use_before_a_later_rebinding_still_resolves():
    _, resolved = calls("from flydsl.expr import arith\nfirst = arith.unwrap(x)\narith = None\n")
    assert resolved["arith.unwrap"] == "flydsl.expr.arith.unwrap"


def test_parallel_assignment_aliases_each_element():
    _, resolved = calls("from flydsl.expr import arith\nfrom flydsl.expr.typing import T\n"
                        "i32, i64 = T.i32, T.i64\n[add, mul] = [arith.addi, arith.muli]\ni32(); i64(); add(); mul()")
    assert [resolved[name] for name in ("i32", "i64", "add", "mul")] == [
        "flydsl.expr.typing.T.i32", "flydsl.expr.typing.T.i64", "flydsl.expr.arith.addi", "flydsl.expr.arith.muli"]
    # Not one to one, starred, nested or bound again: no alias.
    for source in ("a, b = pair\n", "a, b = T.i32, *rest\n", "a, (b, c) = T.i32, (T.i64, T.f32)\n",
                   "a, b = T.i32, T.i64\na = T.f32\n"):
        _, resolved = calls("from flydsl.expr.typing import T\n" + source + "a()")
        assert resolved["a"] is None, source


def test_builtins_and_unknown_names_do_not_resolve():
    _, resolved = calls("print(x)\nunknown_fn(y)\n")
    assert resolved == {"print": None, "unknown_fn": None}


def test_kernel_and_jit_bodies_under_any_alias():
    model, _ = calls(
        """
        import flydsl.compiler as C
        from flydsl.compiler import jit as J

        @C.kernel
        def k():
            def inner():
                a()
            b()

        @J
        def launcher():
            c()

        @C.kernel(name="x")
        def k2():
            d()

        def host():
            e()
        """
    )
    traced = {ast.unparse(c.func): model.in_traced_code(c) for c in model.nodes(ast.Call) if isinstance(c.func, ast.Name) and len(c.func.id) == 1}
    assert traced == {"a": True, "b": True, "c": True, "d": True, "e": False}
    kinds = {f.name: model.function_kind(f) for f in model.nodes(ast.FunctionDef)}
    assert kinds == {"k": "kernel", "inner": None, "launcher": "jit", "k2": "kernel", "host": None}


def test_decorator_named_kernel_from_elsewhere_is_not_a_kernel():
    model, _ = calls("from mylib import kernel\n@kernel\ndef k():\n    pass\n")
    assert model.function_kind(model.nodes(ast.FunctionDef)[0]) is None


def _write(root: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text))


def _project_calls(root: Path, relative: str):
    path = root / relative
    module, is_package, package_root = module_name_for(path)
    index = ProjectIndex([package_root], follows=FOLLOWS)
    return calls(path.read_text(), module, is_package, index)[1]


def test_a_star_import_may_bind_a_builtin_name_the_project_module_defines(tmp_path):
    _write(tmp_path, {"pkg/__init__.py": "", "pkg/shims.py": "def float(v):\n    return v\n",
                      "pkg/plain.py": "LANES = 4\n", "pkg/k.py": "from pkg.shims import *\nfrom pkg.plain import *\n"})
    module, is_package, package_root = module_name_for(tmp_path / "pkg" / "k.py")
    tree = ast.parse((tmp_path / "pkg" / "k.py").read_text())
    model = SemanticModel(tree, module, is_package, ProjectIndex([package_root], follows=FOLLOWS))
    assert model.star_import_may_bind("float")
    assert not model.star_import_may_bind("len")


def test_relative_imports_and_project_reexports(tmp_path):
    _write(
        tmp_path,
        {
            "kernels/__init__.py": "",
            "kernels/common/__init__.py": "from .buffer_ops import buffer_load\n",
            "kernels/common/buffer_ops.py": "def buffer_load(*a): ...\ndef buffer_store(*a): ...\n",
            "kernels/common/utils.py": "from kernels.common.buffer_ops import *\n",
            "kernels/norm/__init__.py": "",
            "kernels/norm/k.py": """
                from ..common import buffer_load as bl
                from . import sibling
                from kernels.common.utils import buffer_store
                from kernels.common import buffer_ops
                bl(r, 0)
                buffer_store(v, r, 0)
                buffer_ops.buffer_load(r, 1)
                sibling.thing()
            """,
        },
    )
    resolved = _project_calls(tmp_path, "kernels/norm/k.py")
    assert resolved["bl"] == "kernels.common.buffer_ops.buffer_load"
    assert resolved["buffer_store"] == "kernels.common.buffer_ops.buffer_store"
    assert resolved["buffer_ops.buffer_load"] == "kernels.common.buffer_ops.buffer_load"
    assert resolved["sibling.thing"] == "kernels.norm.sibling.thing"


def test_vendored_legacy_module_is_recognised_without_configuration(tmp_path):
    _write(
        tmp_path,
        {
            "myproj/__init__.py": "",
            "myproj/vendor/__init__.py": "",
            "myproj/vendor/buffer_ops.py": "def buffer_load(rsrc, offset, vec_width=1, dtype=None): ...\n",
            "myproj/kernel.py": "from myproj.vendor import buffer_ops\nbuffer_ops.buffer_load(r, 0)\n",
            "myproj/other/__init__.py": "",
            "myproj/other/buffer_ops.py": "def unrelated(): ...\n",
            "myproj/kernel2.py": "from myproj.other import buffer_ops\nbuffer_ops.buffer_load(r, 0)\n",
        },
    )
    assert _project_calls(tmp_path, "myproj/kernel.py")["buffer_ops.buffer_load"] == "kernels.common.buffer_ops.buffer_load"
    # A module merely named like a legacy module, not defining the helper, is not one.
    assert _project_calls(tmp_path, "myproj/kernel2.py")["buffer_ops.buffer_load"] == "myproj.other.buffer_ops.buffer_load"


def test_configured_legacy_root(tmp_path):
    _write(tmp_path, {"ext/__init__.py": "", "ext/k.py": "from thirdparty.buffer_ops import buffer_load\nbuffer_load(r, 0)\n"})
    path = tmp_path / "ext/k.py"
    module, is_package, root = module_name_for(path)
    index = ProjectIndex([root], legacy_roots=("thirdparty",), follows=FOLLOWS)
    _, resolved = calls(path.read_text(), module, is_package, index)
    assert resolved["buffer_load"] == "kernels.common.buffer_ops.buffer_load"


def test_module_name_for_follows_symlinks_and_remembers_folders(tmp_path, monkeypatch):
    _write(tmp_path, {"pkg/__init__.py": "", "pkg/sub/__init__.py": "", "pkg/sub/m.py": "", "top.py": ""})
    (tmp_path / "linked.py").symlink_to(tmp_path / "pkg/sub/m.py")
    (tmp_path / "pkglink").symlink_to(tmp_path / "pkg")
    monkeypatch.chdir(tmp_path)
    expected = {
        "pkg/sub/m.py": ("pkg.sub.m", False), "pkg/sub/__init__.py": ("pkg.sub", True), "top.py": ("top", False),
        "linked.py": ("pkg.sub.m", False), "pkglink/sub/m.py": ("pkg.sub.m", False),
        "pkg/sub/../sub/m.py": ("pkg.sub.m", False), str(tmp_path / "pkg/sub/m.py"): ("pkg.sub.m", False),
    }
    folders: dict = {}
    for name, (module, is_package) in expected.items():
        for memo in (None, folders, folders):  # without a memo, filling it, answered from it
            assert module_name_for(Path(name), memo) == (module, is_package, tmp_path.resolve()), name
    assert len(folders) == 5  # one entry per folder as spelled


def test_local_name_for_spells_replacements_with_existing_imports():
    model, _ = calls("import flydsl.expr as fx\nfrom flydsl.expr import rocdl\n")
    assert model.local_name_for("flydsl.expr.max") == "fx.max"
    assert model.local_name_for("flydsl.expr.rocdl.s_waitcnt") == "rocdl.s_waitcnt"
    assert model.local_name_for("torch.zeros") is None


def test_dialect_module_passed_to_a_helper_resolves_through_the_parameter():
    _, resolved = calls(
        """
        from flydsl.expr import arith
        from flydsl._mlir.dialects import vector as vec

        def epilog(arith, v, out, vector=vec):
            arith.unwrap(v)
            vector.extract(out)

        def other(arith):
            arith.unwrap(1)

        epilog(arith, 1, 2)
        epilog(arith=arith, v=3, out=4)
        other(arith)
        other(make_something())
        """
    )
    assert resolved["arith.unwrap"] is None  # `other` is called with two different things
    model, _ = calls(
        "from flydsl.expr import arith\ndef epilog(arith, v):\n    return arith.unwrap(v)\nepilog(arith, 1)\n"
    )
    call = next(c for c in model.nodes(ast.Call) if ast.unparse(c.func) == "arith.unwrap")
    assert model.resolve(call.func) == "flydsl.expr.arith.unwrap"


def test_parameter_without_calls_or_of_a_method_stays_unresolved():
    model, _ = calls(
        "from flydsl.expr import arith\n"
        "def lonely(arith):\n    return arith.unwrap(1)\n"
        "class K:\n    def m(self, arith):\n        return arith.unwrap(2)\n"
        "K().m(arith)\n"
    )
    assert [model.resolve(c.func) for c in model.nodes(ast.Call) if ast.unparse(c.func) == "arith.unwrap"] == [None, None]


def test_exported_helper_taking_a_dialect_named_parameter():
    model, _ = calls(
        "import flydsl.expr as fx\n"
        "def extract_sub8(acc, base, *, vector, lanes: int):\n    return vector.shuffle(acc, acc, [base])\n"
        "def annotated(vector: list):\n    return vector.shuffle(1)\n"
    )
    resolved = [model.resolve(c.func) for c in model.nodes(ast.Call)]
    assert resolved == ["flydsl._mlir.dialects.vector.shuffle", None]
    plain, _ = calls("def extract(acc, *, vector):\n    return vector.shuffle(acc)\n")
    assert [plain.resolve(c.func) for c in plain.nodes(ast.Call)] == [None]  # no FlyDSL in this file


def test_names_and_constants_are_not_listed_by_type_and_no_rule_can_ask_for_them():
    from flydsl_lint.rules._base import Rule, register

    model, _ = calls("x = f(1)\n")
    assert [type(n).__name__ for n in model.nodes(ast.Assign)] == ["Assign"]
    assert [n.id for n in model.loads_of("f")] == ["f"] and model.parent(model.loads_of("f")[0]) is model.nodes(ast.Call)[0]
    for kind in (ast.Name, ast.Constant):
        with pytest.raises(ValueError):
            model.nodes(kind)

    class VisitsNames(Rule):
        code = "FLY999"

        def visit_Name(self, node):
            pass

    with pytest.raises(TypeError, match="Name"):
        register(VisitsNames)


def test_name_assignments_are_single_name_targets_with_a_value():
    model, _ = calls("a = 1\nb: int = 2\nc: int\nd = e = 3\nf, g = 4, 5\nh.i = 6\nj += 7\n")
    assert [(node.lineno, target.id, value.value) for node, target, value in model.name_assignments()] == [
        (1, "a", 1), (2, "b", 2)]


def test_class_keywords_are_listed_with_their_class_as_parent():
    model = SemanticModel(ast.parse("class K(Base, metaclass=Meta, flag=f(x)):\n    pass\nf(y=1)\n"))
    keywords = model.nodes(ast.keyword)
    assert [k.arg for k in keywords] == ["metaclass", "flag", "y"]  # source order
    assert isinstance(model.parent(keywords[0]), ast.ClassDef)
    assert model.parent(keywords[1].value) is keywords[1]
    assert model.resolve(keywords[0].value) is None  # still read in the enclosing scope


def test_release_forgets_every_memoized_answer():
    model = SemanticModel(ast.parse("import flydsl.expr as fx\nfx.max(a)\n"))
    call = model.nodes(ast.Call)[0]
    assert model.resolve(call.func) == "flydsl.expr.max"
    model.local_name_for("flydsl.expr.max")
    model.release()
    assert not model._answers and not model._parents and not model.nodes_by_type


@pytest.mark.parametrize(
    "source, value",
    [
        ("TILE = 16\nuse(TILE)", "16"),
        ("def f():\n    TILE = 16\n    def g():\n        return use(TILE)\n    return g", "16"),
        ("TILE = 16\ndef widen():\n    global TILE\n    TILE = 32\nuse(TILE)", None),
        ("def f():\n    TILE = 16\n    def g():\n        nonlocal TILE\n        TILE = 32\n    return use(TILE)", None),
        ("TILE = 16\nif wide:\n    TILE = 32\nuse(TILE)", None),
    ],
)
def test_single_assigned_value_refuses_names_rebound_through_global_or_nonlocal(source, value):
    model, _ = calls(source)
    read = next(c.args[0] for c in model.nodes(ast.Call) if ast.unparse(c.func) == "use")
    found = model.single_assigned_value(read)
    assert (None if found is None else ast.unparse(found)) == value
