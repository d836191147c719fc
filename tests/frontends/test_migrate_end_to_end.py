"""`flydsl-lint migrate` on tests/fixtures/migrate_repo, compiled with the real flydsl wheel (compile mode).

kernels/accumulate.py (a hand-built scf.ForOp and a SmemAllocator) is migrated, the structural
codemods FLY311 and FLY401 included, and proven identical; kernels/offset.py's rewrite is refused (its original does not trace, so nothing can
be proven); kernels/helpers.py has no test and is left alone.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.frontends.test_migrate import FIXTURE, ROOT, snapshot
from tests.verify.conftest import requires_flydsl

pytestmark = requires_flydsl

# The per-call fixes, then the structural codemods: FLY311 rewrites the hand-built scf.ForOp (its
# FLY313 yield goes with it), FLY401 the SmemAllocator (its FLY402 view and FLY403 bookkeeping too).
EXISTING_FIXES = ("FLY1", "FLY3", "FLY7")
STRUCTURAL_CODEMODS = ("FLY311", "FLY313", "FLY401", "FLY402", "FLY403")
SELECT = ",".join(EXISTING_FIXES + STRUCTURAL_CODEMODS)


def start_migrate(repo: Path, temporary: Path, *args: str) -> subprocess.Popen:
    """migrate in a subprocess whose temporary files all go under `temporary`."""
    env = dict(os.environ, PYTHONPATH=str(ROOT), TMPDIR=str(temporary))
    return subprocess.Popen([sys.executable, "-m", "flydsl_lint.frontends.cli", "migrate", "--select", SELECT, *args],
                            cwd=repo, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


@pytest.fixture(scope="module")
def migrated(tmp_path_factory):
    root = tmp_path_factory.mktemp("migrate")
    repo, temporary = root / "repo", root / "tmp"
    shutil.copytree(FIXTURE, repo)
    temporary.mkdir()
    before = snapshot(repo)
    process = start_migrate(repo, temporary, "--report", str(root / "report.md"), "--report", str(root / "report.json"))
    stdout, stderr = process.communicate(timeout=900)
    return {"repo": repo, "root": root, "temporary": temporary, "before": before, "returncode": process.returncode,
            "stdout": stdout, "stderr": stderr, "report": json.loads((root / "report.json").read_text())}


def test_the_kernel_with_a_hand_built_loop_and_smem_allocator_is_migrated(migrated):
    text = (migrated["repo"] / "kernels" / "accumulate.py").read_text()
    assert "fx.copy_atom_call" not in text and "arith.maximumf" not in text
    assert "peer = (lane + shift) % BLOCK" in text and "fx.max(staged" in text
    assert "scf.ForOp" not in text and "scf.YieldOp" not in text and "SmemAllocator" not in text and "SmemPtr" not in text
    assert "    for iv, state in range(lower, upper, step, init=[fx.as_ir_value(x)]):\n" in text
    assert "        state = yield [_arith.AddFOp(running, fx.as_ir_value(x)).result]\n" in text
    assert "    lds = fx.SharedAllocator().allocate(SharedStorage).peek()\n" in text
    assert "    partial: fx.Array[fx.Float32, BLOCK, 16]\n" in text
    (module,) = [m for m in migrated["report"]["modules"] if m["path"] == "kernels/accumulate.py"]
    assert module["status"] == "migrated" and module["verify_runs"] == 1
    assert module["tests"] == ["tests/kernels/test_accumulate.py"]
    assert {d["code"]: d["status"] for d in module["diagnostics"]} == {
        "FLY112": "kept", "FLY301": "kept", "FLY311": "kept", "FLY401": "kept", "FLY701": "kept"}
    # Identical, not merely "LDS shrank": the struct's 256 bytes are the region SmemAllocator reserved.
    assert module["attempts"] == [{"families": ["FLY1", "FLY3", "FLY4", "FLY7"], "result": "proven", "reason": "",
                                   "notes": [], "breaking": []}]


def test_the_rewrite_that_cannot_be_proven_is_refused_and_the_file_kept(migrated):
    path = "kernels/offset.py"
    assert (migrated["repo"] / path).read_bytes() == migrated["before"][path]
    (module,) = [m for m in migrated["report"]["modules"] if m["path"] == path]
    assert module["status"] == "reverted"
    assert module["diagnostics"][0]["code"] == "FLY341" and module["diagnostics"][0]["status"] == "reverted"
    (attempt,) = module["attempts"]
    assert attempt["result"] == "broken"
    assert attempt["reason"] == ("compile-error (before) [gfx942] tests/kernels/test_offset.py::test_offset: "
                                 "AttributeError: 'Int32' object has no attribute 'type'; and 1 more")
    assert any(c["verdict"] == "compile-error" and "has no attribute 'type'" in c["message"]
               for c in attempt["breaking"])


def test_the_uncovered_module_is_not_proven_and_unchanged(migrated):
    path = "kernels/helpers.py"
    assert (migrated["repo"] / path).read_bytes() == migrated["before"][path]
    assert migrated["report"]["summary"] == {"kept": 8, "reverted": 1, "not-proven": 1, "applied-unproven": 0, "refused": 0}


def test_exit_status_summary_and_markdown_report(migrated):
    assert migrated["returncode"] == 1, migrated["stderr"]
    assert migrated["stdout"].splitlines()[0] == (
        "kernels/accumulate.py: migrated (FLY1 kept, FLY3 kept, FLY4 kept, FLY7 kept)")
    assert migrated["stdout"].splitlines()[-1] == "8 kept, 1 reverted, 1 not-proven, 0 applied-unproven fixes; 0 codemod sites refused."
    markdown = (migrated["root"] / "report.md").read_text()
    assert "| `kernels/offset.py` | reverted | `tests/kernels/test_offset.py` | FLY3: reverted |" in markdown
    assert "| 49:24 | FLY301 | kept |" in markdown
    assert "| 38:12 | FLY311 | kept | Raw `scf.ForOp`: use a Python loop in traced code" in markdown
    assert "| 15:13 | FLY401 | kept | `SmemAllocator` is the legacy LDS path" in markdown


def test_nothing_is_left_behind(migrated):
    assert list(migrated["temporary"].iterdir()) == []
    changed = {p for p, data in snapshot(migrated["repo"]).items() if migrated["before"].get(p) != data}
    assert changed == {"kernels/accumulate.py"}


@pytest.mark.parametrize("interrupt", [signal.SIGINT, signal.SIGTERM])
def test_ctrl_c_during_verify_restores_every_file_and_leaves_no_temporary(tmp_path, interrupt):
    repo, temporary = tmp_path / "repo", tmp_path / "tmp"
    shutil.copytree(FIXTURE, repo)
    temporary.mkdir()
    # The covering test is slow, so the interrupt lands while verify compiles.
    test = repo / "tests" / "kernels" / "test_accumulate.py"
    test.write_text(test.read_text().replace("def test_accumulate():\n",
                                             "def test_accumulate():\n    import time; time.sleep(120)\n"))
    before = snapshot(repo)
    process = start_migrate(repo, temporary, "--report", str(tmp_path / "report.json"))
    deadline = time.monotonic() + 300
    while not list(temporary.glob("flydsl-verify-*/runs/1/*/gfx942/part-*/tests.log")):
        assert process.poll() is None and time.monotonic() < deadline, process.communicate()
        time.sleep(0.2)
    time.sleep(1)
    process.send_signal(interrupt)
    stdout, stderr = process.communicate(timeout=120)
    assert process.returncode == 130, stderr
    assert stderr.strip().splitlines()[-1] == (
        "flydsl-lint migrate: interrupted; no file was changed and the scratch copy is removed")
    assert snapshot(repo) == before
    assert list(temporary.iterdir()) == []
    assert not (tmp_path / "report.json").exists()
