"""Device-mode logic against a fake device (no AMD GPU exists in CI)."""

import itertools

import pytest

from flydsl_lint.verify import device
from flydsl_lint.verify.capture import IMPORT_ERROR
from flydsl_lint.verify.compare import Unverified
from flydsl_lint.verify.config import VerifyConfig
from flydsl_lint.verify.device import Launch, LaunchKey, SideRun
from flydsl_lint.verify.plan import Plan
from flydsl_lint.verify.report import EXIT_SETUP, VerifyReport

torch = pytest.importorskip("torch")

KEY = LaunchKey("tests/kernels/test_vec_add.py::test_vec_add", "vec_add", 0)


class FakeTimer:
    def __init__(self, seconds_per_run):
        self._times = iter(seconds_per_run)
        self.calls = 0

    def seconds(self, launch):
        self.calls += 1
        return next(self._times)

    def close(self):
        self.closed = True


class FakeDevice:
    """Serves canned per-side runs and timings; records which GPU ran which tests."""

    def __init__(self, runs, before_seconds=1.0, after_seconds=1.0):
        self.runs = runs
        self.seconds = {"before": before_seconds, "after": after_seconds}
        self.calls = []

    def run_tests(self, tree, tests, evidence_dir, gpu):
        self.calls.append((tree.name, tuple(tests), gpu))
        return self.runs[tree.name]

    def open_timer(self, tree, evidence_dir, gpu):
        return FakeTimer(itertools.repeat(self.seconds[tree.name]))


def _side(outcome="passed", output=None, replay="launcher"):
    output = torch.arange(8, dtype=torch.float32) if output is None else output
    return SideRun({KEY.test_id: outcome}, {KEY: Launch(KEY, {"C": output}, replay)})


def _run(fake, tmp_path, tests=(KEY.test_id.split("::")[0],), gpus=("0",)):
    trees = {}
    for side in ("before", "after"):
        trees[side] = tmp_path / side
        for test in tests:
            (trees[side] / test).parent.mkdir(parents=True, exist_ok=True)
            (trees[side] / test).write_text("")
    plan = Plan("b", "h", [], [], list(tests), [], ["gfx942"], "device")
    return device.run_device_mode(plan, trees, config=VerifyConfig(), device=fake, evidence_root=tmp_path / "ev",
                                  gpus=list(gpus))


def _by_kind(findings):
    return {f.kind: f for f in findings}


def test_identical_outputs_and_speed_hold_parity(tmp_path):
    findings = _run(FakeDevice({"before": _side(), "after": _side()}), tmp_path)
    kinds = _by_kind(findings)
    assert kinds["numerics"].verdict == "bitwise-identical"
    assert kinds["perf"].verdict == "ok" and "median 1.000x" in kinds["perf"].detail
    assert "test" not in kinds and not any(f.breaks_parity for f in findings)


def test_regressed_test_and_numeric_mismatch_break_parity(tmp_path):
    wrong = torch.arange(8, dtype=torch.float32) + 1
    findings = _run(FakeDevice({"before": _side(), "after": _side("failed", wrong)}), tmp_path)
    kinds = _by_kind(findings)
    assert kinds["test"].verdict == "regressed" and kinds["test"].breaks_parity
    assert kinds["numerics"].verdict == "mismatch" and "max abs diff 1" in kinds["numerics"].detail


def test_tolerance_band():
    before = {"C": torch.tensor([1.0, 2.0])}
    assert device.compare_outputs(before, {"C": torch.tensor([1.0, 2.0])}, rtol=1e-3, atol=0)[0] == "bitwise-identical"
    assert device.compare_outputs(before, {"C": torch.tensor([1.0, 2.0001])}, rtol=1e-3, atol=0)[0] == "within-tolerance"
    assert device.compare_outputs(before, {"C": torch.tensor([1.0, 2.1])}, rtol=1e-3, atol=0)[0] == "mismatch"
    assert device.compare_outputs(before, {"C": torch.tensor([1, 2])}, rtol=1e-3, atol=0)[0] == "mismatch"
    nan = {"C": torch.tensor([float("nan")])}
    assert device.compare_outputs(nan, nan, rtol=0, atol=0)[0] == "bitwise-identical"


def test_slower_head_fails_above_threshold(tmp_path):
    slow = _by_kind(_run(FakeDevice({"before": _side(), "after": _side()}, after_seconds=1.03), tmp_path))["perf"]
    assert slow.verdict == "slower" and slow.breaks_parity and "1.030x" in slow.detail
    within = _by_kind(_run(FakeDevice({"before": _side(), "after": _side()}, after_seconds=1.01), tmp_path))["perf"]
    assert within.verdict == "ok"


def test_paired_runs_alternate_and_report_spread():
    order = []

    class Recording(FakeTimer):
        def __init__(self, name, times):
            super().__init__(times)
            self.name = name

        def seconds(self, launch):
            order.append(self.name)
            return super().seconds(launch)

    before = Recording("A", itertools.repeat(1.0))
    after = Recording("B", itertools.cycle([0.9, 1.0, 1.1, 1.2]))
    timing = device.paired_ratios(before, after, (None, None))
    assert order[:6] == ["A", "B", "A", "B", "A", "B"]
    assert before.calls == after.calls == device.WARMUP_PAIRS + device.TIMED_PAIRS
    assert timing.low < timing.median_ratio < timing.high


def test_missing_launch_and_unreplayable_launcher(tmp_path):
    before, after = _side(replay=None), SideRun({KEY.test_id: "passed"}, {})
    findings = _run(FakeDevice({"before": before, "after": after}), tmp_path)
    assert [(f.kind, f.verdict) for f in findings] == [("numerics", "only-before")]
    unreplayable = _run(FakeDevice({"before": _side(replay=None), "after": _side()}), tmp_path)
    assert _by_kind(unreplayable)["perf"].verdict == "not-replayable"


def test_one_worker_per_gpu_each_running_both_sides(tmp_path):
    tests = ("tests/kernels/test_a.py", "tests/kernels/test_b.py", "tests/kernels/test_c.py")
    fake = FakeDevice({"before": SideRun(), "after": SideRun()})
    _run(fake, tmp_path, tests=tests, gpus=("0", "1"))
    by_gpu = {}
    for side, shard, gpu in fake.calls:
        by_gpu.setdefault(gpu, set()).add((side, shard))
    assert by_gpu == {
        "0": {("before", tests[0::2]), ("after", tests[0::2])},
        "1": {("before", tests[1::2]), ("after", tests[1::2])},
    }


def test_visible_gpus_from_environment(monkeypatch):
    monkeypatch.setenv("HIP_VISIBLE_DEVICES", "2,3")
    assert device.visible_amd_gpus() == ["2", "3"]
    monkeypatch.delenv("HIP_VISIBLE_DEVICES")
    monkeypatch.delenv("ROCR_VISIBLE_DEVICES", raising=False)
    assert isinstance(device.visible_amd_gpus(), list)


def test_a_test_file_neither_side_can_import_is_not_verified(tmp_path):
    label, reason = "collect:tests/kernels/test_moe.py", "ModuleNotFoundError: No module named 'pandas'"
    unimportable = SideRun({label: IMPORT_ERROR}, messages={label: reason})
    findings = _run(FakeDevice({"before": unimportable, "after": unimportable}), tmp_path)
    assert device.unverified(findings) == [Unverified("tests/kernels/test_moe.py", "device", reason)]
    report = VerifyReport(Plan("b", "h", [], [], ["tests/kernels/test_moe.py"], [], ["gfx942"], "device"),
                          device_findings=findings, unverified=device.unverified(findings))
    assert report.exit_code == EXIT_SETUP
