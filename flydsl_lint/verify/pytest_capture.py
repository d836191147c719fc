"""pytest plugin (``-p flydsl_lint.verify.pytest_capture``) for compile-mode test runs.

Loaded before the target repository's conftest files, so the CUDA-on-CPU shim
is in place before anything imports torch-dependent FlyDSL code. Each
compilation is attributed to the test id that triggered it, and each test's
outcome is classified (see ``capture.classify_failure``).
"""

from __future__ import annotations

import json
import os

import pytest

from flydsl_lint.verify.capture import (
    COLLECT_LABEL, ENV_TESTS, NOT_FOUND, OUTSIDE_ANY_TEST, classify_failure, describe_failure, node_id_selects,
    start_from_environment,
)

_recorder = start_from_environment()
_tests: list[str] = json.loads(os.environ.get(ENV_TESTS, "[]"))


def _file(node_id: str) -> str:
    return node_id.split("::")[0]


def pytest_collection_modifyitems(config, items):
    """Run what the parent's node ids name; a file it also named whole runs whole. An id that
    names no test of a file collected here is recorded as not found."""
    node_ids = [test for test in _tests if "::" in test]
    whole_files = {test for test in _tests if "::" not in test}
    collected_files = {_file(item.nodeid) for item in items}
    for node_id in node_ids:
        if _file(node_id) in collected_files and not any(node_id_selects(node_id, item.nodeid) for item in items):
            _recorder.record_outcome(node_id, NOT_FOUND, "no test matches this node id here")
    restricted = {_file(node_id) for node_id in node_ids} - whole_files
    kept, deselected = [], []
    for item in items:
        wanted = _file(item.nodeid) not in restricted or any(node_id_selects(n, item.nodeid) for n in node_ids)
        (kept if wanted else deselected).append(item)
    if deselected:
        config.hook.pytest_deselected(items=deselected)
        items[:] = kept


def pytest_collectreport(report):
    # A test file that skips itself at module level (another arch's tests, say) says why.
    if report.skipped and isinstance(report.longrepr, tuple):
        _recorder.record_outcome(f"{COLLECT_LABEL}{report.nodeid}", "skipped", report.longrepr[2].removeprefix("Skipped: "))


@pytest.hookimpl(hookwrapper=True)
def pytest_make_collect_report(collector):
    # Module-level code may compile kernels while pytest imports the file.
    _recorder.current_label = f"{COLLECT_LABEL}{collector.nodeid}"
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
        _recorder.record_outcome(f"{COLLECT_LABEL}{node.nodeid}", classify_failure(exc), describe_failure(exc))
