import subprocess

import pytest

from flydsl_lint.verify import changes
from flydsl_lint.verify.config import ConfigError, VerifyConfig, load_config
from flydsl_lint.verify.imports import ImportGraph, module_name
from flydsl_lint.verify.plan import build_plan
from flydsl_lint.verify.pytest_config import TestFiles
from flydsl_lint.verify.scratch import Scratch
from tests.verify import fake_flydsl_repo
from tests.verify.conftest import run_verify


@pytest.fixture
def repo(tmp_path):
    return fake_flydsl_repo.create(tmp_path / "repo")


def _plan(repo, changed, **overrides):
    graph = ImportGraph().add_tree(repo)
    return build_plan(graph=graph, changed=changed, config=load_config(repo), test_files=TestFiles(repo),
                      base="b", head="h", archs=["gfx942"], mode="compile", **overrides)


def test_module_names():
    assert module_name("kernels/common/tiling.py") == "kernels.common.tiling"
    assert module_name("kernels/__init__.py") == "kernels"


def test_shared_helper_change_reaches_every_kernel_and_test(repo):
    plan = _plan(repo, ["kernels/common/tiling.py"])
    assert plan.kernels == ["kernels/common/tiling.py", "kernels/elementwise/scale.py", "kernels/elementwise/vec_add.py"]
    assert plan.tests == ["tests/kernels/test_scale.py", "tests/kernels/test_vec_add.py"]
    assert plan.probes == ["kernels.elementwise.scale:probe_wide_scale"]


def test_a_probe_of_no_module_in_the_checkout_is_noted(repo):
    pyproject = repo / "pyproject.toml"
    pyproject.write_text(pyproject.read_text().replace(
        '"kernels.elementwise.scale:probe_wide_scale"',
        '"kernels.elementwise.scale:probe_wide_scale", "kernels.attention.probe_gone:probe_rows"'))
    plan = _plan(repo, ["kernels/common/tiling.py"])
    assert plan.probes == ["kernels.elementwise.scale:probe_wide_scale"]
    assert plan.notes == ["probe kernels.attention.probe_gone:probe_rows: no module kernels.attention.probe_gone "
                          "in the checkout (either side), so it never runs"]


def test_kernel_change_reaches_only_its_tests(repo):
    plan = _plan(repo, ["kernels/elementwise/vec_add.py"])
    assert plan.tests == ["tests/kernels/test_vec_add.py"]
    assert plan.probes == []


def test_relative_imports_and_conftest_count(repo):
    (repo / "kernels/elementwise/fused.py").write_text("from .vec_add import vec_add\n")
    (repo / "tests/kernels/test_fused.py").write_text("from kernels.elementwise import fused\n")
    (repo / "tests/kernels/conftest.py").write_text("import kernels.common.tiling\n")
    plan = _plan(repo, ["kernels/elementwise/vec_add.py"])
    assert "tests/kernels/test_fused.py" in plan.tests
    conftest_plan = _plan(repo, ["tests/kernels/conftest.py"])
    assert conftest_plan.tests == ["tests/kernels/test_fused.py", "tests/kernels/test_scale.py",
                                   "tests/kernels/test_vec_add.py"]


def test_overrides(repo):
    assert _plan(repo, [], tests_override=["tests/kernels/test_scale.py::test_scale"]).tests == [
        "tests/kernels/test_scale.py::test_scale"]
    assert _plan(repo, [], kernels_override=["kernels/elementwise/scale.py"]).tests == ["tests/kernels/test_scale.py"]
    assert _plan(repo, []).notes == ["no Python files changed"]


def test_config_defaults_and_validation(tmp_path):
    assert load_config(tmp_path) == VerifyConfig()
    (tmp_path / "pyproject.toml").write_text('[tool.flydsl-lint.verify]\nperf-threshold = 1\narchs = ["gfx950"]\n')
    config = load_config(tmp_path)
    assert (config.perf_threshold, config.archs) == (1.0, ["gfx950"])
    (tmp_path / "pyproject.toml").write_text('[tool.flydsl-lint.verify]\nprobes = ["no_colon"]\n')
    with pytest.raises(ConfigError, match="module:function"):
        load_config(tmp_path)
    (tmp_path / "pyproject.toml").write_text('[tool.flydsl-lint.verify]\nunknown = 1\n')
    with pytest.raises(ConfigError, match="unknown key"):
        load_config(tmp_path)


def test_changed_files_cover_working_tree_and_untracked(repo):
    base = changes.resolve_commit(repo, "HEAD")
    fake_flydsl_repo.edit(repo, "kernels/elementwise/scale.py", "VEC_WIDTH = 2", "VEC_WIDTH = 4")
    (repo / "kernels/new_helper.py").write_text("")
    assert changes.changed_python_files(repo, base, None) == ["kernels/elementwise/scale.py", "kernels/new_helper.py"]
    head = fake_flydsl_repo.commit_all(repo, "wider scale")
    assert changes.changed_python_files(repo, base, head) == ["kernels/elementwise/scale.py", "kernels/new_helper.py"]
    assert changes.default_base(repo) == head  # no upstream configured


def test_worktree_is_removed_even_on_error(repo):
    scratch = Scratch()
    with pytest.raises(RuntimeError):
        try:
            scratch.open(repo)
            tree = scratch.worktree("HEAD")
            assert (tree / "kernels/elementwise/vec_add.py").is_file()
            raise RuntimeError("boom")
        finally:
            scratch.close()
    assert not tree.exists() and not scratch.path.exists() and scratch.leftovers == []
    listed = subprocess.run(["git", "-C", str(repo), "worktree", "list"], capture_output=True, text=True).stdout
    assert len(listed.strip().splitlines()) == 1


def test_cli_list_prints_plan_without_running(repo):
    fake_flydsl_repo.edit(repo, "kernels/common/tiling.py", '"""Per-thread', '"""Per thread')
    result = run_verify(repo, "--list")
    assert result.returncode == 0, result.stderr
    assert "tests/kernels/test_vec_add.py" in result.stdout and "tests/kernels/test_scale.py" in result.stdout
    assert "kernels.elementwise.scale:probe_wide_scale" in result.stdout


def test_cli_bad_ref_is_a_setup_error(repo):
    result = run_verify(repo, "--base", "no-such-ref", "--list")
    assert result.returncode == 2
    assert result.stderr.strip().count("\n") == 0 and "no-such-ref" in result.stderr


def test_cli_list_splits_on_commas_outside_parameter_ids(repo):
    result = run_verify(repo, "--list", "--tests", "tests/kernels/test_scale.py,tests/kernels/test_vec_add.py::test_vec_add[a,b]")
    assert "  tests/kernels/test_scale.py\n  tests/kernels/test_vec_add.py::test_vec_add[a,b]\n" in result.stdout


def test_cli_device_mode_without_gpu_is_a_setup_error(repo):
    result = run_verify(repo, "--mode", "device", "--kernels", "kernels.elementwise.scale",
                        env={"HIP_VISIBLE_DEVICES": "", "ROCR_VISIBLE_DEVICES": ""})
    if result.returncode != 2:
        pytest.skip("an AMD GPU is visible here")
    assert "device mode needs an AMD GPU" in result.stderr
