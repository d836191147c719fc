"""Issues 25/26 with real compilations: a test whose kernel compiles one way on one capture and
another way on the next (standing in for FlyDSL 0.5.0's backend on moe_sorting) is not verified."""

from __future__ import annotations

import json
import textwrap

from tests.verify import fake_flydsl_repo
from tests.verify.conftest import requires_flydsl, run_verify

pytestmark = requires_flydsl

FLAKY_TEST = '''\
import os
from pathlib import Path

import torch

from kernels.elementwise.scale import BLOCK_DIM, scale


def test_flaky_scale():
    """vec_width 4 on capture number FLAKY_RUN (0-based, counted in FLAKY_COUNTER), else 2."""
    counter = Path(os.environ["FLAKY_COUNTER"])
    run = int(counter.read_text()) if counter.exists() else 0
    counter.write_text(str(run + 1))
    vec_width = 4 if run == int(os.environ["FLAKY_RUN"]) else 2
    x = torch.randn(2048, device="cuda")
    scale(x, torch.empty_like(x), 0.5, x.numel(), BLOCK_DIM, vec_width, stream=torch.cuda.current_stream())
'''


def test_a_kernel_that_compiles_differently_on_the_head_once_is_not_verified(tmp_path):
    repo = fake_flydsl_repo.create(tmp_path / "repo")
    (repo / "tests/kernels/test_flaky.py").write_text(textwrap.dedent(FLAKY_TEST))
    fake_flydsl_repo.commit_all(repo, "a flaky test")
    counter = tmp_path / "captures"
    result = run_verify(repo, "--base", "main", "--head", "main", "--tests", "tests/kernels/test_flaky.py",
                        "--jobs", "1", "--no-base-cache", "--report", "json",
                        env={"FLAKY_COUNTER": str(counter), "FLAKY_RUN": "1"})  # the head's first capture
    report = json.loads(result.stdout)
    assert result.returncode == 2, result.stdout + result.stderr
    [flaky] = [c for c in report["comparisons"] if c["test_id"].startswith("tests/kernels/test_flaky.py")]
    assert flaky["verdict"] == "nondeterministic"
    assert flaky["message"] == ("not verified: the kernel compiles differently from itself "
                                "(nondeterministic: 1 of 2 recaptures differ)")
    assert {c["verdict"] for c in report["comparisons"] if c is not flaky} <= {"identical"}
    assert counter.read_text() == "4"  # base, head, then each once more
