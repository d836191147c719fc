"""flydsl-lint-verify on a FlyDSL-like repository, compiled with the real flydsl wheel.

Each case runs on the oldest and the newest release compile mode supports, each
from its own environment (tests/release_envs.py; FLYDSL_RELEASES picks others).
"""

import json
import shutil
from pathlib import Path

import pytest

from flydsl_lint.verify.compare import CHANGED, COMPILE_ERROR, IDENTICAL
from tests.verify import fake_flydsl_repo
from tests.release_envs import NEWEST, OLDEST, chosen_releases, release_python
from tests.verify.conftest import run_verify

VEC_ADD = "kernels/elementwise/vec_add.py"


@pytest.fixture(scope="module", params=chosen_releases() or (OLDEST, NEWEST))
def python(request):
    """The interpreter verify runs with, one flydsl release per parameter."""
    return release_python(request.param)


@pytest.fixture(scope="module")
def repo(tmp_path_factory):
    """main = base; branch "wider" halves vec_add's vector width; branch "broken" fails to trace."""
    repo = fake_flydsl_repo.create(tmp_path_factory.mktemp("e2e") / "repo")
    git = fake_flydsl_repo.git
    git(repo, "checkout", "-q", "-b", "wider")
    fake_flydsl_repo.edit(repo, VEC_ADD, "VEC_WIDTH = 4", "VEC_WIDTH = 2")
    fake_flydsl_repo.commit_all(repo, "narrower vectors")
    git(repo, "checkout", "-q", "-b", "broken", "main")
    fake_flydsl_repo.edit(repo, VEC_ADD, "fx.arith.addf(", "fx.arith.no_such_op(")
    fake_flydsl_repo.commit_all(repo, "typo in the kernel body")
    git(repo, "checkout", "-q", "main")
    return repo


def _json_report(result):
    assert result.returncode in (0, 1), result.stderr
    return json.loads(result.stdout)


@pytest.fixture(scope="module")
def comment_only(repo, python):
    fake_flydsl_repo.edit(repo, "kernels/common/tiling.py", '"""The vec_width', '# a comment-only change\n    """The vec_width')
    try:
        return run_verify(repo, "--report", "json", python=python)
    finally:
        fake_flydsl_repo.git(repo, "checkout", "--", ".")


@pytest.fixture(scope="module")
def wider(repo, python):
    return run_verify(repo, "--base", "main", "--head", "wider", "--report", "json", python=python)


@pytest.fixture(scope="module")
def broken(repo, python):
    # Compiled afresh: a base served from the cache leaves no dumps to keep.
    result = run_verify(repo, "--base", "main", "--head", "broken", "--report", "json", "--keep", "--no-base-cache",
                        python=python)
    yield result
    shutil.rmtree(json.loads(result.stdout)["evidence_dir"], ignore_errors=True)


def test_comment_only_change_is_identical(comment_only):
    report = _json_report(comment_only)
    assert comment_only.returncode == 0
    verdicts = {(c["test_id"], c["kernel"]): c["verdict"] for c in report["comparisons"]}
    assert verdicts == {
        ("tests/kernels/test_vec_add.py::test_vec_add[4096]", "vec_add_kernel_0"): IDENTICAL,
        ("tests/kernels/test_scale.py::test_scale", "scale_kernel_0"): IDENTICAL,
        ("probe:kernels.elementwise.scale:probe_wide_scale", "scale_kernel_0"): IDENTICAL,
    }


def test_vector_width_change_names_kernel_and_resources(wider):
    report = _json_report(wider)
    assert wider.returncode == 1
    assert report["plan"]["tests"] == ["tests/kernels/test_vec_add.py"]
    (comparison,) = report["comparisons"]
    assert (comparison["kernel"], comparison["verdict"]) == ("vec_add_kernel_0", CHANGED)
    before, after = comparison["resource_deltas"]["code_bytes"]
    assert before != after
    assert comparison["isa_diff"] and comparison["histogram_deltas"]


def test_vector_width_change_terminal_summary(repo, python):
    result = run_verify(repo, "--base", "main", "--head", "wider", python=python)
    assert result.returncode == 1
    assert "changed" in result.stdout and "vec_add_kernel_0" in result.stdout and "code_bytes" in result.stdout
    assert result.stdout.rstrip().splitlines()[-1].startswith("parity broken")


def test_head_that_fails_to_compile(broken):
    report = _json_report(broken)
    assert broken.returncode == 1
    errors = [c for c in report["comparisons"] if c["verdict"] == COMPILE_ERROR]
    assert errors and all(c["side"] == "after" for c in errors)
    assert "no_such_op" in errors[0]["message"]
    assert errors[0]["test_id"] == "tests/kernels/test_vec_add.py::test_vec_add[4096]"


def test_keep_leaves_evidence_per_side_and_arch(broken):
    evidence = _json_report(broken)["evidence_dir"]
    assert evidence
    root = Path(evidence) / "evidence"
    assert sorted(p.name for p in root.iterdir()) == ["after", "before"]
    assert list((root / "before" / "gfx942" / "part-0" / "tests").glob("c*/*/*_final_isa.s"))


def test_worktrees_are_removed(repo, comment_only, wider, broken):
    listed = fake_flydsl_repo.git(repo, "worktree", "list").strip().splitlines()
    assert len(listed) == 1
