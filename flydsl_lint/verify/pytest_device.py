"""pytest plugin (``-p flydsl_lint.verify.pytest_device``) for device-mode test runs.

Saves, for each FlyDSL launch, the tensor arguments after the launch (the
outputs to compare across sides) and before it (inputs to replay for timing).
Never run on GPU hardware by this project's CI.
"""

from __future__ import annotations

import inspect
import os
from collections import Counter
from pathlib import Path

import pytest
import torch
from flydsl.compiler.jit_function import JitFunction

from flydsl_lint.verify.capture import (
    COLLECT_LABEL,
    ENV_DUMP_ROOT,
    LAUNCHES_MANIFEST,
    OUTCOMES_MANIFEST,
    IMPORT_ERROR,
    OUTSIDE_ANY_TEST,
    append_json_line,
    classify_failure,
    describe_failure,
)

# Benchmark loops in tests launch the same kernel hundreds of times; the first
# few launches per launcher already cover each specialization.
MAX_LAUNCHES_PER_LAUNCHER = 4
_REPLAYABLE_SCALARS = (bool, int, float, str, type(None))

_root = Path(os.environ[ENV_DUMP_ROOT])
_root.mkdir(parents=True, exist_ok=True)
_current_test = OUTSIDE_ANY_TEST
_launch_counts: Counter = Counter()
_original_call = JitFunction.__call__


def _replay_target(func) -> str | None:
    qualname = func.__qualname__
    return None if "<locals>" in qualname else f"{func.__module__}:{qualname}"


def _recording_call(self, *args, **kwargs):
    launcher = self.func.__qualname__
    ordinal = _launch_counts[(_current_test, launcher)]
    _launch_counts[(_current_test, launcher)] += 1
    if ordinal >= MAX_LAUNCHES_PER_LAUNCHER:
        return _original_call(self, *args, **kwargs)
    arguments = inspect.signature(self.func).bind(*args, **kwargs).arguments
    inputs = {n: v.detach().clone() if isinstance(v, torch.Tensor) else v for n, v in arguments.items()}
    result = _original_call(self, *args, **kwargs)
    torch.cuda.synchronize()
    stem = _root / f"launch-{len(list(_root.glob('launch-*-out.pt'))):05d}"
    torch.save({n: v.detach().cpu() for n, v in arguments.items() if isinstance(v, torch.Tensor)}, f"{stem}-out.pt")
    replayable = all(isinstance(v, (torch.Tensor, *_REPLAYABLE_SCALARS)) for v in inputs.values())
    target = _replay_target(self.func) if replayable else None
    if target:
        torch.save(inputs, f"{stem}-in.pt")
    append_json_line(_root / LAUNCHES_MANIFEST, {
        "label": _current_test, "launcher": launcher, "ordinal": ordinal,
        "outputs": f"{stem.name}-out.pt", "inputs": f"{stem.name}-in.pt" if target else None, "target": target,
    })
    return result


JitFunction.__call__ = _recording_call


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item):
    global _current_test
    _current_test = item.nodeid
    yield
    _current_test = OUTSIDE_ANY_TEST


def pytest_exception_interact(node, call, report):
    # A test file that fails to import: an import error (a dependency missing here) proves nothing.
    if isinstance(node, pytest.Collector) and call.excinfo is not None:
        exc = call.excinfo.value
        outcome = IMPORT_ERROR if classify_failure(exc) == IMPORT_ERROR else "failed"
        append_json_line(_root / OUTCOMES_MANIFEST,
                         {"label": f"{COLLECT_LABEL}{node.nodeid}", "outcome": outcome, "message": describe_failure(exc)})


def pytest_runtest_logreport(report):
    if report.when == "call" or (report.when == "setup" and not report.passed):
        append_json_line(_root / OUTCOMES_MANIFEST, {"label": report.nodeid, "outcome": report.outcome})
