"""Device mode: run affected tests on real AMD GPUs, compare pass/fail, outputs and speed.

Everything hardware-specific sits behind ``Device``; the comparison logic here
is tested against a fake device. ``RocmDevice`` is the real implementation and
has never been run on GPU hardware by this project's CI.
"""

from __future__ import annotations

import os
import statistics
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from flydsl_lint.verify.capture import IMPORT_ERROR, collected_test
from flydsl_lint.verify.compare import Unverified
from flydsl_lint.verify.config import VerifyConfig
from flydsl_lint.verify.plan import Plan

BEFORE, AFTER = "before", "after"
WARMUP_PAIRS = 3
TIMED_PAIRS = 21


@dataclass(frozen=True, order=True)
class LaunchKey:
    test_id: str
    launcher: str
    ordinal: int  # n-th launch of this launcher within the test


@dataclass
class Launch:
    key: LaunchKey
    outputs: dict[str, Any]  # argument name -> tensor after the launch
    replay: Any = None  # device-specific handle a LaunchTimer needs to rerun the launch


@dataclass
class SideRun:
    # test id -> passed | failed | skipped; "collect:<file>" -> import-error | failed
    outcomes: dict[str, str] = field(default_factory=dict)
    launches: dict[LaunchKey, Launch] = field(default_factory=dict)
    messages: dict[str, str] = field(default_factory=dict)  # label -> why it failed to collect


class LaunchTimer(Protocol):
    def seconds(self, launch: Launch) -> float:
        """Run ``launch`` once more and return its device time."""

    def close(self) -> None: ...


class Device(Protocol):
    def run_tests(self, tree: Path, tests: list[str], evidence_dir: Path, gpu: str) -> SideRun: ...

    def open_timer(self, tree: Path, evidence_dir: Path, gpu: str) -> LaunchTimer: ...


@dataclass
class DeviceFinding:
    kind: str  # test | numerics | perf
    subject: str
    verdict: str
    detail: str = ""
    breaks_parity: bool = False

    def summary(self) -> str:
        return f"{self.kind:<8} {self.verdict:<19} {self.subject}" + (f"  {self.detail}" if self.detail else "")

    def as_dict(self) -> dict:
        return {"kind": self.kind, "subject": self.subject, "verdict": self.verdict, "detail": self.detail,
                "breaks_parity": self.breaks_parity}


def visible_amd_gpus() -> list[str]:
    """GPU ids to use, one worker each: HIP_VISIBLE_DEVICES if set, else the KFD topology."""
    for variable in ("HIP_VISIBLE_DEVICES", "ROCR_VISIBLE_DEVICES"):
        if os.environ.get(variable):
            return [g.strip() for g in os.environ[variable].split(",") if g.strip()]
    nodes = Path("/sys/class/kfd/kfd/topology/nodes")
    if not nodes.is_dir():
        return []
    gpus = []
    for node in sorted(nodes.iterdir(), key=lambda p: int(p.name) if p.name.isdigit() else -1):
        gpu_id = node / "gpu_id"
        if gpu_id.is_file() and gpu_id.read_text().strip() not in ("", "0"):  # 0 = a CPU node
            gpus.append(str(len(gpus)))
    return gpus


NOT_VERIFIED = "not verified"


def unverified(findings: list[DeviceFinding]) -> list[Unverified]:
    return [Unverified(f.subject, "device", f.detail) for f in findings if f.verdict == NOT_VERIFIED]


def compare_test_outcomes(before: SideRun, after: SideRun) -> list[DeviceFinding]:
    findings = []
    for test_id in sorted(set(before.outcomes) | set(after.outcomes)):
        old, new = before.outcomes.get(test_id, "absent"), after.outcomes.get(test_id, "absent")
        if old == IMPORT_ERROR:
            # The before side could not import it: no evidence either way. (An import only the
            # after side lacks shows as its tests regressing.)
            reason = before.messages.get(test_id, "")
            reason = after.messages.get(test_id, reason) if new == IMPORT_ERROR else f"{reason} (before the change)"
            findings.append(DeviceFinding("test", collected_test(test_id), NOT_VERIFIED, reason))
            continue
        if old == new:
            continue
        regressed = old == "passed" and new != "passed"
        findings.append(DeviceFinding("test", test_id, "regressed" if regressed else f"{old}->{new}",
                                      f"{old} before, {new} after", breaks_parity=regressed))
    return findings


def compare_outputs(before: dict[str, Any], after: dict[str, Any], *, rtol: float, atol: float) -> tuple[str, str]:
    """(verdict, detail): bitwise-identical, within-tolerance or mismatch."""
    import torch

    if before.keys() != after.keys():
        return "mismatch", f"outputs {sorted(before)} vs {sorted(after)}"
    worst, verdict = 0.0, "bitwise-identical"
    for name in sorted(before):
        old, new = before[name], after[name]
        if old.shape != new.shape or old.dtype != new.dtype:
            return "mismatch", f"{name}: {tuple(old.shape)}/{old.dtype} vs {tuple(new.shape)}/{new.dtype}"
        if torch.equal(old.reshape(-1).view(torch.uint8), new.reshape(-1).view(torch.uint8)):
            continue
        old_f, new_f = old.double(), new.double()
        if not torch.allclose(old_f, new_f, rtol=rtol, atol=atol, equal_nan=True):
            error = (old_f - new_f).abs().nan_to_num(nan=float("inf")).max().item()
            return "mismatch", f"{name}: max abs diff {error:.3g} (rtol {rtol}, atol {atol})"
        verdict = "within-tolerance"
        worst = max(worst, (old_f - new_f).abs().nan_to_num(nan=0.0).max().item())
    return verdict, f"max abs diff {worst:.3g}" if verdict == "within-tolerance" else ""


@dataclass
class PairedTiming:
    median_ratio: float  # after / before; > 1 means slower
    low: float  # 25th percentile of the ratios
    high: float  # 75th percentile


def paired_ratios(before: LaunchTimer, after: LaunchTimer, launches: tuple[Launch, Launch]) -> PairedTiming:
    """Alternate A B A B ... so drift (clocks, temperature) hits both sides alike."""
    ratios = []
    for pair in range(WARMUP_PAIRS + TIMED_PAIRS):
        a = before.seconds(launches[0])
        b = after.seconds(launches[1])
        if pair >= WARMUP_PAIRS:
            ratios.append(b / a)
    quartiles = statistics.quantiles(ratios, n=4)
    return PairedTiming(statistics.median(ratios), quartiles[0], quartiles[2])


def compare_launches(before: SideRun, after: SideRun, config: VerifyConfig) -> list[DeviceFinding]:
    findings = []
    for key in sorted(set(before.launches) | set(after.launches)):
        subject = f"{key.test_id} {key.launcher}#{key.ordinal + 1}"
        if key not in after.launches or key not in before.launches:
            side = "only-before" if key in before.launches else "only-after"
            findings.append(DeviceFinding("numerics", subject, side, breaks_parity=True))
            continue
        verdict, detail = compare_outputs(before.launches[key].outputs, after.launches[key].outputs,
                                          rtol=config.rtol, atol=config.atol)
        findings.append(DeviceFinding("numerics", subject, verdict, detail, breaks_parity=verdict == "mismatch"))
    return findings


def measure_performance(
    before: SideRun, after: SideRun, timers: tuple[LaunchTimer, LaunchTimer], config: VerifyConfig
) -> list[DeviceFinding]:
    findings = []
    for key in sorted(set(before.launches) & set(after.launches)):
        if before.launches[key].replay is None or after.launches[key].replay is None:
            findings.append(DeviceFinding("perf", f"{key.test_id} {key.launcher}#{key.ordinal + 1}", "not-replayable",
                                          "launcher is not importable at module level"))
            continue
        timing = paired_ratios(*timers, (before.launches[key], after.launches[key]))
        slower = timing.median_ratio > 1 + config.perf_threshold
        detail = (f"median {timing.median_ratio:.3f}x (IQR {timing.low:.3f}-{timing.high:.3f}), "
                  f"limit {1 + config.perf_threshold:.3f}x")
        findings.append(DeviceFinding("perf", f"{key.test_id} {key.launcher}#{key.ordinal + 1}",
                                      "slower" if slower else "ok", detail, breaks_parity=slower))
    return findings


def _verify_on_gpu(plan: Plan, trees: dict[str, Path], tests: list[str], *, config: VerifyConfig,
                   device: Device, evidence_root: Path, gpu: str) -> list[DeviceFinding]:
    runs = {}
    for side in (BEFORE, AFTER):
        side_tests = [t for t in tests if (trees[side] / t.split("::")[0]).exists()]
        runs[side] = device.run_tests(trees[side], side_tests, evidence_root / f"gpu{gpu}" / side, gpu)
    findings = compare_test_outcomes(runs[BEFORE], runs[AFTER]) + compare_launches(runs[BEFORE], runs[AFTER], config)
    timers = tuple(device.open_timer(trees[side], evidence_root / f"gpu{gpu}" / side, gpu) for side in (BEFORE, AFTER))
    try:
        findings += measure_performance(runs[BEFORE], runs[AFTER], timers, config)
    finally:
        for timer in timers:
            timer.close()
    return findings


def run_device_mode(plan: Plan, trees: dict[str, Path], *, config: VerifyConfig, device: Device,
                    evidence_root: Path, gpus: list[str]) -> list[DeviceFinding]:
    """One worker per GPU; test files are dealt round-robin so each runs both sides on one GPU."""
    shards = {gpu: plan.tests[i :: len(gpus)] for i, gpu in enumerate(gpus)}
    with ThreadPoolExecutor(max_workers=len(gpus)) as pool:
        futures = [
            pool.submit(_verify_on_gpu, plan, trees, shard, config=config, device=device,
                        evidence_root=evidence_root, gpu=gpu)
            for gpu, shard in shards.items() if shard
        ]
        return [finding for future in futures for finding in future.result()]
