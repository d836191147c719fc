"""The real ``Device`` for AMD GPUs. Never run on GPU hardware by this project's CI.

Tests run in a pytest subprocess per side with ``pytest_device`` capturing
launches; timing replays captured launches in one long-lived worker process
per side (``device_worker``), so the runner can alternate A B A B.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import flydsl_lint
from flydsl_lint.verify.capture import ENV_DUMP_ROOT, LAUNCHES_MANIFEST, OUTCOMES_MANIFEST
from flydsl_lint.verify.device import Launch, LaunchKey, SideRun


def _environment(tree: Path, evidence_dir: Path, gpu: str) -> dict[str, str]:
    env = dict(os.environ)
    package_parent = str(Path(flydsl_lint.__file__).resolve().parents[1])
    env.update({
        "HIP_VISIBLE_DEVICES": gpu,
        "FLYDSL_RUNTIME_ENABLE_CACHE": "0",
        ENV_DUMP_ROOT: str(evidence_dir),
        "PYTHONPATH": os.pathsep.join(filter(None, [str(tree), package_parent, env.get("PYTHONPATH")])),
        "PYTHONDONTWRITEBYTECODE": "1",
    })
    return env


def _json_lines(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines()] if path.is_file() else []


class RocmDevice:
    def run_tests(self, tree: Path, tests: list[str], evidence_dir: Path, gpu: str) -> SideRun:
        import torch

        evidence_dir.mkdir(parents=True, exist_ok=True)
        command = [sys.executable, "-m", "pytest", "-p", "flydsl_lint.verify.pytest_device",
                   "-p", "no:cacheprovider", "-q", "--tb=short", "--continue-on-collection-errors",
                   f"--rootdir={tree}", *tests]
        with (evidence_dir / "pytest.log").open("w") as log:
            subprocess.run(command, cwd=tree, env=_environment(tree, evidence_dir, gpu), stdout=log,
                           stderr=subprocess.STDOUT)
        records = _json_lines(evidence_dir / OUTCOMES_MANIFEST)
        run = SideRun(outcomes={r["label"]: r["outcome"] for r in records},
                      messages={r["label"]: r["message"] for r in records if "message" in r})
        for record in _json_lines(evidence_dir / LAUNCHES_MANIFEST):
            key = LaunchKey(record["label"], record["launcher"], record["ordinal"])
            replay = (record["target"], str(evidence_dir / record["inputs"])) if record["target"] else None
            run.launches[key] = Launch(key, torch.load(evidence_dir / record["outputs"]), replay)
        return run

    def open_timer(self, tree: Path, evidence_dir: Path, gpu: str) -> "WorkerTimer":
        return WorkerTimer(tree, _environment(tree, evidence_dir, gpu))


class WorkerTimer:
    """Talks JSON lines to a ``device_worker`` process that reruns captured launches."""

    def __init__(self, tree: Path, env: dict[str, str]):
        self._process = subprocess.Popen([sys.executable, "-m", "flydsl_lint.verify.device_worker"], cwd=tree,
                                         env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)

    def seconds(self, launch: Launch) -> float:
        target, inputs = launch.replay
        self._process.stdin.write(json.dumps({"target": target, "inputs": inputs}) + "\n")
        self._process.stdin.flush()
        reply = json.loads(self._process.stdout.readline())
        if "error" in reply:
            raise RuntimeError(f"replaying {target}: {reply['error']}")
        return reply["seconds"]

    def close(self) -> None:
        self._process.stdin.close()
        self._process.wait(timeout=60)
