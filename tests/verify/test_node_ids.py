"""Node ids given with --tests, when a test file skips itself at this arch or an id matches nothing.

FlyDSL's arch-specific test files skip at module level (``test_gemm_a16w16_gfx950.py`` on gfx942).
pytest answers a node id inside such a file with "found no collectors" and runs none of the other
tests of the process, which verify used to report as a compile error of both sides: parity broken.
"""

import json

import pytest

from flydsl_lint.verify.compare import IDENTICAL
from tests.release_envs import NEWEST, release_python
from tests.verify import fake_flydsl_repo
from tests.verify.conftest import run_verify

TEST_GFX950_ONLY = '''\
import os

import pytest

if os.environ.get("ARCH") != "gfx950":
    pytest.skip("requires gfx950", allow_module_level=True)

from kernels.elementwise.vec_add import BLOCK_DIM, vec_add  # noqa: E402


def test_vec_add_wide():
    import torch

    a = torch.randn(4096, device="cuda")
    vec_add(a, a, torch.empty_like(a), a.numel(), BLOCK_DIM, 8, stream=torch.cuda.current_stream())
'''
GFX950_ONLY = "tests/kernels/test_gfx950_only.py"
VEC_ADD_TEST = "tests/kernels/test_vec_add.py"


@pytest.fixture(scope="module")
def python():
    return release_python(NEWEST)


@pytest.fixture(scope="module")
def repo(tmp_path_factory):
    repo = fake_flydsl_repo.create(tmp_path_factory.mktemp("node-ids") / "repo")
    (repo / GFX950_ONLY).write_text(TEST_GFX950_ONLY, encoding="utf-8")
    fake_flydsl_repo.commit_all(repo, "a test file for gfx950 only")
    return repo


def _verify(repo, python, *tests):
    return run_verify(repo, "--base", "main", "--arch", "gfx942", "--jobs", "1", "--no-base-cache",
                      "--tests", ",".join(tests), "--report", "json", python=python)


def test_a_node_id_in_a_file_skipped_at_this_arch_does_not_stop_the_other_tests(repo, python):
    result = _verify(repo, python, VEC_ADD_TEST, f"{GFX950_ONLY}::test_vec_add_wide")
    assert result.returncode == 0, result.stdout + result.stderr
    report = json.loads(result.stdout)
    verdicts = {(c["test_id"], c["kernel"]): c["verdict"] for c in report["comparisons"]}
    assert verdicts == {(f"{VEC_ADD_TEST}::test_vec_add[4096]", "vec_add_kernel_0"): IDENTICAL}


def test_a_file_skipped_at_this_arch_is_named_with_pytests_reason(repo, python):
    result = _verify(repo, python, f"{GFX950_ONLY}::test_vec_add_wide")
    assert result.returncode == 2
    [line] = result.stderr.strip().splitlines()
    assert f"[gfx942] {GFX950_ONLY}: skipped (requires gfx950)" in line, line


def test_a_node_id_matching_no_test_is_not_verified(repo, python):
    result = _verify(repo, python, VEC_ADD_TEST, f"{VEC_ADD_TEST}::test_vec_add[9999]")
    assert result.returncode == 2, result.stdout + result.stderr
    report = json.loads(result.stdout)
    assert [c["verdict"] for c in report["comparisons"]] == [IDENTICAL]
    assert report["unverified"] == [{"test": f"{VEC_ADD_TEST}::test_vec_add[9999]", "arch": "gfx942",
                                     "reason": "no test matches this node id here"}]
