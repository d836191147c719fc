"""Issue 26 item 3 with real compilations: a cached base is not compiled again, and
splitting the work over processes (--jobs) does not change the report."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from flydsl_lint.verify.capture import COMPILES_MANIFEST
from tests.verify import fake_flydsl_repo
from tests.verify.conftest import requires_flydsl, run_verify

pytestmark = requires_flydsl

TILING = "kernels/common/tiling.py"


@pytest.fixture(scope="module")
def repo(tmp_path_factory):
    """main = base; branch "comment" adds a comment to the helper every test and the probe import."""
    repo = fake_flydsl_repo.create(tmp_path_factory.mktemp("cached") / "repo")
    fake_flydsl_repo.git(repo, "checkout", "-q", "-b", "comment")
    fake_flydsl_repo.edit(repo, TILING, '"""The vec_width', '# a comment-only change\n    """The vec_width')
    fake_flydsl_repo.commit_all(repo, "comment")
    fake_flydsl_repo.git(repo, "checkout", "-q", "main")
    return repo


def verify(repo: Path, cache: Path, *args: str) -> tuple[dict, dict[str, int]]:
    """The JSON report and the compilations each side ran, counted from the kept evidence."""
    result = run_verify(repo, "--base", "main", "--head", "comment", "--report", "json", "--keep",
                        "--base-cache-dir", str(cache), *args)
    assert result.returncode == 0, result.stdout + result.stderr
    report = json.loads(result.stdout)
    evidence = Path(report["evidence_dir"])
    try:
        compiled = {side: sum(path.read_text().count("\n")
                              for path in (evidence / "evidence" / side).glob(f"**/{COMPILES_MANIFEST}"))
                    for side in ("before", "after")}
    finally:
        shutil.rmtree(evidence)
    return report, compiled


@pytest.fixture(scope="module")
def runs(repo, tmp_path_factory):
    cache = tmp_path_factory.mktemp("base-cache") / "cache"
    serial = verify(repo, cache, "--jobs", "1", "--no-base-cache")
    cold = verify(repo, cache, "--jobs", "3")
    warm = verify(repo, cache, "--jobs", "3")
    return {"serial": serial, "cold": cold, "warm": warm}


def test_jobs_give_the_same_report_as_one_process(runs):
    (serial, serial_compiled), (cold, cold_compiled) = runs["serial"], runs["cold"]
    assert cold["comparisons"] == serial["comparisons"]
    assert {c["verdict"] for c in cold["comparisons"]} == {"identical"}
    assert len(cold["comparisons"]) == 3  # two tests and the probe
    assert cold["notes"] == serial["notes"]
    assert cold_compiled == serial_compiled == {"before": 3, "after": 3}


def test_a_cached_base_compiles_only_the_head(runs):
    (cold, _), (warm, warm_compiled) = runs["cold"], runs["warm"]
    assert warm_compiled == {"before": 0, "after": 3}
    assert warm["comparisons"] == cold["comparisons"]
    [cache_note] = [note for note in warm["notes"] if "base cache" in note]
    assert cache_note == "base side served from the base cache (3 capture group(s), gfx942): not compiled again"
    assert not [note for note in cold["notes"] if "base cache" in note]


def test_a_cache_folder_that_is_not_ours_is_left_alone(repo, tmp_path):
    folder = tmp_path / "victim"
    folder.mkdir()
    (folder / "data.txt").write_text("keep")
    result = run_verify(repo, "--base", "main", "--head", "comment", "--base-cache-dir", str(folder),
                        "--tests", "tests/kernels/test_scale.py")
    assert result.returncode == 0, result.stderr
    assert result.stderr.splitlines()[0] == (f"flydsl-lint-verify: warning: {folder}: not empty and not a "
                                             "flydsl-lint-verify cache (no CACHEDIR.TAG of ours); running "
                                             "without the base cache")
    assert [line for line in result.stderr.splitlines() if "warning" in line] == result.stderr.splitlines()[:1]
    assert sorted(p.name for p in folder.iterdir()) == ["data.txt"]
