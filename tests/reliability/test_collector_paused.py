"""The CLI and the flake8 plugin check with the cyclic collector off and give it back as they
found it: a collection in the middle of a check walks the tree and models being built."""

from __future__ import annotations

import ast
import gc
from argparse import Namespace

import pytest

from flydsl_lint.run.checker import Checker
from flydsl_lint.run.collector import collector_paused

KERNEL = "import flydsl.expr as fx\n\n\ndef body(q):\n    return fx.Int32(fx.Int32(q))\n"


@pytest.fixture
def collector_on():
    was_on = gc.isenabled()
    gc.enable()
    yield
    if not was_on:
        gc.disable()


def test_the_collector_is_off_inside_and_restored_after_even_on_error(collector_on):
    with collector_paused():
        assert not gc.isenabled()
    assert gc.isenabled()
    with pytest.raises(KeyError), collector_paused():
        raise KeyError("boom")
    assert gc.isenabled()
    gc.disable()
    with collector_paused():
        assert not gc.isenabled()
    assert not gc.isenabled()  # off before, off after


@pytest.fixture
def seen_during_checks(monkeypatch) -> list[bool]:
    """Whether the collector was on in each `Checker.check` call."""
    seen: list[bool] = []
    check = Checker.check

    def recording(self, *args, **kwargs):
        seen.append(gc.isenabled())
        return check(self, *args, **kwargs)

    monkeypatch.setattr(Checker, "check", recording)
    return seen


def test_the_flake8_plugin_checks_with_the_collector_off(tmp_path, monkeypatch, collector_on, seen_during_checks):
    from flydsl_lint.frontends.flake8_plugin import FlyDSLChecker

    path = tmp_path / "k.py"
    path.write_text(KERNEL)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(FlyDSLChecker, "_checkers", {})
    monkeypatch.setattr(FlyDSLChecker, "_configs", {})
    FlyDSLChecker.parse_options(Namespace(filenames=[str(path)], select=["FLY"], extend_select=None))
    plugin = FlyDSLChecker(ast.parse(KERNEL), str(path), KERNEL.splitlines(keepends=True))
    assert [text.split()[0] for _, _, text, _ in plugin.run()] == ["FLY111"]
    assert seen_during_checks == [False]
    assert gc.isenabled()


def test_a_command_line_run_checks_with_the_collector_off(tmp_path, collector_on, seen_during_checks):
    from flydsl_lint.engine.config import load_settings
    from flydsl_lint.run.runner import run

    (tmp_path / "k.py").write_text(KERNEL)
    result = run([str(tmp_path / "k.py")], load_settings(None, tmp_path), use_cache=False, jobs=1)
    assert [d.code for f in result.files for d in f.diagnostics] == ["FLY111"]
    assert seen_during_checks == [False]
    assert gc.isenabled()
