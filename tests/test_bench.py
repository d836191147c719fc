"""The benchmark scripts keep working: bench.py on a small generated corpus,
and the scripts instructions.py hands to callgrind, run here without it."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parent.parent / "bench"
EXAMPLES = Path(__file__).resolve().parent.parent / "examples"


@pytest.fixture(scope="module")
def instructions():
    sys.path.insert(0, str(BENCH))
    try:
        import instructions
    finally:
        sys.path.remove(str(BENCH))
    return instructions


@pytest.fixture
def kernels(tmp_path: Path) -> Path:
    tree = tmp_path / "kernels"
    shutil.copytree(EXAMPLES, tree)
    return tree


def test_bench_times_each_tool_on_a_generated_corpus(tmp_path: Path) -> None:
    numbers_file = tmp_path / "numbers.json"
    subprocess.run([sys.executable, str(BENCH / "bench.py"), "--runs", "1", "--scale", "1", "--scale-runs", "1",
                    "--synthetic-files", "3", "--json", str(numbers_file)],
                   check=True, capture_output=True, text=True, timeout=600)
    numbers = json.loads(numbers_file.read_text())
    assert (numbers["tree"], numbers["files"]) == ("synthetic", 4)  # three kernels and the package's __init__
    for row in ("cold", "cold+write", "cached", "one-file"):
        assert numbers["report"][row]["wall"] > 0, row
    assert "gate" in numbers["skipped"]  # no checkout given, so no gate row
    assert numbers["scaling"]["1"]["files"] == 4


def test_the_serial_run_counts_what_the_cli_reports(instructions, kernels: Path) -> None:
    counted = subprocess.run([sys.executable, "-c", instructions.LINT, str(kernels)],
                             check=True, capture_output=True, text=True)
    report = subprocess.run([sys.executable, "-m", "flydsl_lint.frontends.cli", "check", "--no-cache", "--exit-zero",
                             "--output-format", "json", str(kernels)], check=True, capture_output=True, text=True)
    assert int(counted.stdout) == len(json.loads(report.stdout)) > 0


@pytest.mark.parametrize("stage", ["read", "parse", "model", "rules"])
def test_every_phase_script_runs(instructions, kernels: Path, stage: str) -> None:
    assert stage in instructions.STAGES
    completed = subprocess.run([sys.executable, "-c", instructions.PHASE, str(kernels), stage],
                               check=False, capture_output=True, text=True)
    assert completed.returncode == 0, completed.stderr


@pytest.mark.parametrize("selected", ["", "FLY", "FLY3"])
def test_the_rules_stage_checks_the_selected_rules(instructions, kernels: Path, selected: str) -> None:
    counted = subprocess.run([sys.executable, "-c", instructions.PHASE, str(kernels), "rules", selected],
                             check=True, capture_output=True, text=True)
    report = subprocess.run([sys.executable, "-m", "flydsl_lint.frontends.cli", "check", "--no-cache", "--exit-zero",
                             "--output-format", "json", "--select", selected or "FLY", str(kernels)],
                            check=True, capture_output=True, text=True)
    expected = len(json.loads(report.stdout)) if selected else 0
    assert int(counted.stdout) == expected
    assert expected or not selected  # the examples have findings in every selection tried


def test_an_unknown_phase_is_an_error(instructions, kernels: Path) -> None:
    completed = subprocess.run([sys.executable, "-c", instructions.PHASE, str(kernels), "lint"],
                               check=False, capture_output=True, text=True)
    assert completed.returncode == 1 and "unknown stage 'lint'" in completed.stderr


@pytest.mark.skipif(shutil.which("valgrind") is None, reason="valgrind is not installed")
def test_a_failed_run_is_an_error_not_a_count(instructions) -> None:
    with pytest.raises(SystemExit, match="exit 3"):
        instructions.instructions([sys.executable, "-c", "raise SystemExit(3)"])
    assert instructions.instructions([sys.executable, "-c", "raise SystemExit(3)"], exit_codes=(3,)) > 0


def test_fix_scaling_times_check_and_fix_per_size(tmp_path: Path) -> None:
    numbers_file = tmp_path / "numbers.json"
    completed = subprocess.run([sys.executable, str(BENCH / "bench.py"), "--fix-scaling", "20,40", "--scale-runs", "1",
                                "--json", str(numbers_file)], check=True, capture_output=True, text=True, timeout=600)
    rows = json.loads(numbers_file.read_text())["fix_scaling"]
    assert sorted(rows) == ["20", "40"]
    for fixes, row in rows.items():
        assert row["lines"] == int(fixes) + 2 and row["check"] > 0 and row["fix"] > 0, row
    assert "fix scaling" in completed.stdout


def test_bench_verify_mode_times_cold_and_warm_runs(tmp_path: Path) -> None:
    """--verify on a FlyDSL-like checkout: one cold run, one warm candidate, their ratio; the checkout untouched."""
    pytest.importorskip("flydsl")
    pytest.importorskip("torch")
    from tests.verify import fake_flydsl_repo

    tree = fake_flydsl_repo.create(tmp_path / "flydsl")
    head = fake_flydsl_repo.git(tree, "rev-parse", "HEAD")
    numbers_file = tmp_path / "numbers.json"
    subprocess.run([sys.executable, str(BENCH / "bench.py"), "--tree", str(tree), "--verify",
                    "tests/kernels/test_scale.py", "--runs", "1", "--candidates", "1", "--jobs", "1",
                    "--json", str(numbers_file)], check=True, capture_output=True, text=True, timeout=1200,
                   env=dict(os.environ, XDG_CACHE_HOME=str(tmp_path / "cache-home")))  # the key, not in ~
    [round_] = json.loads(numbers_file.read_text())["rounds"]
    assert round_["plan"]["wall"] > 0 and round_["cold"]["wall"] > 0 and len(round_["warm"]) == 1
    assert round_["warm_over_cold_wall"] == round_["warm"][0]["wall"] / round_["cold"]["wall"]
    assert fake_flydsl_repo.git(tree, "rev-parse", "HEAD") == head
    assert fake_flydsl_repo.git(tree, "status", "--porcelain") == ""
    assert fake_flydsl_repo.git(tree, "worktree", "list").count("\n") == 1
