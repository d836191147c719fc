"""Affected tests and kernels are found wherever a downstream project keeps them.

Each layout is one a real FlyDSL user has: a test file at the repository root
(xytpai/flydsl-examples), kernels in top-level packages of their own
(how-to-optimize-in-flydsl), aiter-style ``op_tests/<family>_tests/`` folders
without ``__init__.py`` importing their siblings by bare name, a src layout,
and pytest's own ``testpaths`` / ``python_files`` settings.
"""

from __future__ import annotations

import pytest

from flydsl_lint.verify.config import ConfigError, load_config
from flydsl_lint.verify.imports import ImportGraph, python_files
from flydsl_lint.verify.plan import build_plan
from flydsl_lint.verify.pytest_config import TestFiles
from tests.verify import fake_flydsl_repo
from tests.verify.conftest import run_verify

KERNEL = "import flydsl.expr as fx\n\n\ndef build():\n    return fx\n"


def _write(root, files: dict[str, str]):
    for relative, text in files.items():
        path = root / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return root


def _plan(root, changed):
    config = load_config(root)
    return build_plan(graph=ImportGraph().add_tree(root), changed=changed, config=config,
                      test_files=TestFiles(root, config.test_dirs), base="b", head="h", archs=["gfx942"],
                      mode="compile")


def test_a_test_file_at_the_repository_root(tmp_path):
    root = _write(tmp_path, {
        "kernels/__init__.py": "",
        "kernels/gemm_utils.py": KERNEL,
        "kernels/gemm.py": "from kernels.gemm_utils import build\n",
        "test_gemm.py": "from kernels.gemm import build\n",
        "gemm_tune.py": "from kernels.gemm import build\n",
    })
    plan = _plan(root, ["kernels/gemm_utils.py"])
    assert plan.tests == ["test_gemm.py"]
    assert plan.kernels == ["gemm_tune.py", "kernels/gemm.py", "kernels/gemm_utils.py"]


def test_kernel_packages_outside_kernels(tmp_path):
    root = _write(tmp_path, {
        "common/__init__.py": "", "common/dsl.py": KERNEL,
        "reduce/__init__.py": "from .reduce_v7 import build\n",
        "reduce/reduce_v7.py": "from common.dsl import build\n",
        "common/registry.py": "def all_ops():\n    import reduce  # noqa: F401\n",
        "tests/test_kernels.py": "from common import registry\n",
    })
    plan = _plan(root, ["reduce/reduce_v7.py"])
    assert plan.tests == ["tests/test_kernels.py"]
    assert plan.kernels == ["common/registry.py", "reduce/__init__.py", "reduce/reduce_v7.py"]


def test_op_tests_folders_import_their_siblings_by_bare_name(tmp_path):
    root = _write(tmp_path, {
        "src/fastops/__init__.py": "", "src/fastops/gemm.py": KERNEL, "src/fastops/norm.py": KERNEL,
        "op_tests/gemm_tests/gemm_ref.py": "from fastops.gemm import build\n",
        "op_tests/gemm_tests/test_gemm.py": "import gemm_ref\n",
        "op_tests/norm_tests/test_norm.py": "from fastops import norm\n",
    })
    assert _plan(root, ["src/fastops/gemm.py"]).tests == ["op_tests/gemm_tests/test_gemm.py"]
    assert _plan(root, ["src/fastops/norm.py"]).tests == ["op_tests/norm_tests/test_norm.py"]
    # Test helpers beside the tests are not kernels.
    assert _plan(root, ["src/fastops/gemm.py"]).kernels == ["src/fastops/gemm.py"]


def test_pytest_testpaths_and_python_files_are_respected(tmp_path):
    root = _write(tmp_path, {
        "pyproject.toml": '[tool.pytest.ini_options]\ntestpaths = ["checks"]\npython_files = ["check_*.py"]\n',
        "kernels/k.py": KERNEL,
        "checks/check_k.py": "import kernels.k\n",
        "checks/test_k.py": "import kernels.k\n",  # not a python_files match: pytest would not collect it
        "scripts/check_bench.py": "import kernels.k\n",  # outside testpaths
    })
    assert _plan(root, ["kernels/k.py"]).tests == ["checks/check_k.py"]


@pytest.mark.parametrize("name, text", [
    ("pytest.ini", "[pytest]\ntestpaths = unit\n"),
    ("tox.ini", "[pytest]\ntestpaths = unit\n"),
    ("setup.cfg", "[tool:pytest]\ntestpaths = unit\n"),
])
def test_the_nearest_pytest_ini_file_decides(tmp_path, name, text):
    root = _write(tmp_path, {
        f"tests/{name}": text, "kernels/k.py": KERNEL,
        "tests/unit/test_a.py": "import kernels.k\n", "tests/perf/test_b.py": "import kernels.k\n",
        "test_top.py": "import kernels.k\n",
    })
    assert _plan(root, ["kernels/k.py"]).tests == ["test_top.py", "tests/unit/test_a.py"]


def test_a_malformed_pytest_ini_is_a_config_error_naming_it(tmp_path):
    root = _write(tmp_path, {"tests/pytest.ini": "[pytest\ntestpaths = x\n", "tests/test_a.py": ""})
    with pytest.raises(ConfigError, match=r"tests/pytest\.ini: "):
        TestFiles(root, []).is_test("tests/test_a.py")


def test_virtual_environments_and_site_packages_are_not_the_project(tmp_path):
    root = _write(tmp_path, {
        "kernels/k.py": KERNEL,
        "venv/pyvenv.cfg": "home = /usr/bin\n",
        "venv/lib/python3.11/site-packages/thing/test_thing.py": "import kernels.k\n",
        "vendor/site-packages/other/test_other.py": "import kernels.k\n",
        "tests/test_k.py": "import kernels.k\n",
    })
    assert python_files(root) == ["kernels/k.py", "tests/test_k.py"]
    assert _plan(root, ["kernels/k.py"]).tests == ["tests/test_k.py"]


def test_cli_list_finds_a_root_test_of_a_comment_only_change(tmp_path):
    repo = fake_flydsl_repo.create(tmp_path / "repo")
    (repo / "test_top.py").write_text("from kernels.elementwise.vec_add import vec_add\n")
    fake_flydsl_repo.commit_all(repo, "a test at the root")
    fake_flydsl_repo.edit(repo, "kernels/elementwise/vec_add.py", '"""C = A', '# comment only\n"""C = A')
    result = run_verify(repo, "--list")
    assert result.returncode == 0, result.stderr
    assert "tests:\n  test_top.py\n  tests/kernels/test_vec_add.py\n" in result.stdout


def test_a_change_in_a_src_layout_package_says_it_may_go_unverified(tmp_path):
    root = _write(tmp_path, {
        "python/fastops/__init__.py": "", "python/fastops/gemm.py": KERNEL,
        "tests/test_gemm.py": "from fastops.gemm import build\n",
    })
    plan = _plan(root, ["python/fastops/gemm.py"])
    assert plan.tests == ["tests/test_gemm.py"]
    assert plan.notes == ["python/fastops/gemm.py: tests import it as fastops.gemm from wherever that package is "
                          "installed, which may not be this checkout: its change may go unverified"]
