"""pytest plugin (``-p flydsl_lint.verify.pytest_capture``) for compile-mode test runs.

Loaded before the target repository's conftest files, so the CUDA-on-CPU shim
is in place before anything imports torch-dependent FlyDSL code. Each
compilation is attributed to the test id that triggered it, and each test's
outcome is classified (see ``capture.classify_failure``).
"""

from __future__ import annotations

import pytest

from flydsl_lint.verify.capture import OUTSIDE_ANY_TEST, classify_failure, describe_failure, start_from_environment

_recorder = start_from_environment()


@pytest.hookimpl(hookwrapper=True)
def pytest_make_collect_report(collector):
    # Module-level code may compile kernels while pytest imports the file.
    _recorder.current_label = f"collect:{collector.nodeid}"
    yield
    _recorder.current_label = OUTSIDE_ANY_TEST


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item):
    _recorder.current_label = item.nodeid
    yield
    _recorder.current_label = OUTSIDE_ANY_TEST


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    report = outcome.get_result()
    if call.when == "call" and report.passed:
        _recorder.record_outcome(item.nodeid, "passed")
    elif report.skipped and call.when != "teardown":
        _recorder.record_outcome(item.nodeid, "skipped", str(call.excinfo.value) if call.excinfo else "")
    elif report.failed and call.excinfo is not None:
        exc = call.excinfo.value
        _recorder.record_outcome(item.nodeid, classify_failure(exc), describe_failure(exc))


def pytest_exception_interact(node, call, report):
    # Test failures are classified in pytest_runtest_makereport; this catches
    # files that fail to import, e.g. a kernel module that no longer traces.
    if isinstance(node, pytest.Collector) and call.excinfo is not None:
        exc = call.excinfo.value
        _recorder.record_outcome(f"collect:{node.nodeid}", classify_failure(exc), describe_failure(exc))
