"""The flake8 plugin and `flydsl-lint check` report the same (file, row, column, code) set.

flake8 applies its own noqa to everything the plugin yields; `check` applies
the engine's. Both must agree, on fixtures with multi-line calls, bare and
per-code directives, file exemptions, and on FlyDSL's kernels/ when a checkout
is present.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

FIXTURES = Path(__file__).parent / "fixtures" / "parity"
FLYDSL_SRC = Path(os.environ.get("FLYDSL_SRC", "/work/flydsl-src"))

pytest.importorskip("flake8", reason="flake8 is a dependency of flydsl-lint")


def _flake8(files: list[str], cwd: Path, jobs: str = "1") -> set[tuple[str, int, int, str]]:
    result = subprocess.run(
        [sys.executable, "-m", "flake8", "--isolated", "--select", "FLY", "--jobs", jobs,
         "--format", "%(path)s\t%(row)d\t%(col)d\t%(code)s", *files],
        cwd=cwd, capture_output=True, text=True, timeout=600,
    )
    assert result.returncode in (0, 1), result.stderr
    found = set()
    for line in result.stdout.splitlines():
        path, row, col, code = line.split("\t")
        found.add((str((cwd / path).resolve()), int(row), int(col), code))
    return found


def _no_cache() -> list[str]:
    """`--no-cache` where the CLI has it: never leave a cache folder in a checkout we only read."""
    help_text = subprocess.run([sys.executable, "-m", "flydsl_lint.frontends.cli", "check", "--help"],
                               capture_output=True, text=True, env={**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])}).stdout
    return ["--no-cache"] if "--no-cache" in help_text else []


def _check(files: list[str], cwd: Path) -> set[tuple[str, int, int, str]]:
    result = subprocess.run(
        [sys.executable, "-m", "flydsl_lint.frontends.cli", "check", *_no_cache(), "--output-format", "json", *files],
        cwd=cwd, capture_output=True, text=True, timeout=600,
        env={**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])},
    )
    assert result.returncode in (0, 1), result.stderr
    return {
        (str(Path(row["filename"]).resolve()), row["location"]["row"], row["location"]["column"], row["code"])
        for row in json.loads(result.stdout)
    }


@pytest.fixture
def fixture_copy(tmp_path) -> Path:
    folder = tmp_path / "parity"
    shutil.copytree(FIXTURES, folder)
    return folder


def test_fixtures_agree(fixture_copy):
    files = sorted(p.name for p in fixture_copy.glob("*.py"))
    ours, theirs = _check(files, fixture_copy), _flake8(files, fixture_copy)
    assert ours == theirs, {"only check": sorted(ours - theirs), "only flake8": sorted(theirs - ours)}
    rows = {(Path(path).name, row, code) for path, row, _, code in ours if code.startswith("FLY1")}
    # the closing-row directive does not cover the call's first row, in either tool
    assert ("multiline_noqa.py", 10, "FLY111") in rows
    assert ("multiline_noqa.py", 11, "FLY111") not in rows  # inner wrap is a plain fx.Int64(tid)
    # first-row directive, backslash continuation and multi-line string all suppress
    assert not {r for r in rows if r[0] == "multiline_noqa.py" and r[1] in (14, 22, 24, 25)}
    # the continuation row's own directive covers only its own finding
    assert ("multiline_noqa.py", 19, "FLY111") in rows
    assert ("multiline_noqa.py", 18, "FLY103") not in rows
    assert {(r[1], r[2]) for r in rows if r[0] == "bare_noqa.py"} == {(13, "FLY103"), (13, "FLY111")}
    per_code = {(r[1], r[2]) for r in rows if r[0] == "per_code_noqa.py"}
    assert per_code == {(10, "FLY111"), (13, "FLY103"), (16, "FLY103")}
    # flydsl-lint's file exemption holds under flake8 too; `# flake8: noqa` skips the file in both
    assert {(r[1], r[2]) for r in rows if r[0] == "file_exemption.py"} == {(11, "FLY103")}
    assert not {r for r in ours if Path(r[0]).name == "flake8_skipped.py"}


@pytest.mark.skipif(not (FLYDSL_SRC / "kernels").is_dir(), reason=f"no FlyDSL checkout at {FLYDSL_SRC} (set FLYDSL_SRC)")
def test_flydsl_kernels_agree():
    files = sorted(str(p.relative_to(FLYDSL_SRC)) for p in (FLYDSL_SRC / "kernels").rglob("*.py"))
    ours, theirs = _check(files, FLYDSL_SRC), _flake8(files, FLYDSL_SRC, jobs="auto")
    assert ours == theirs, {"only check": sorted(ours - theirs)[:20], "only flake8": sorted(theirs - ours)[:20]}


def test_the_plugin_keeps_only_the_helper_models_the_last_file_used(tmp_path, monkeypatch):
    """flake8 collects cyclic garbage between files, so every model kept for the run would be
    walked at each full collection: after a file the plugin frees what it derived from modules
    that file did not use, and a later file derives it again with the same answer."""
    import ast
    from argparse import Namespace

    from flydsl_lint.frontends.flake8_plugin import FlyDSLChecker
    from tests.conftest import write_package

    helper = "import flydsl.expr as fx\n\n\ndef lane(v):\n    return fx.Int32(v) % 64\n"
    # `lane` returns an Int32 only the helper module's model can tell: the re-wrap is FLY112.
    kernel = "import flydsl.expr as fx\nfrom kernels.helpers import lane\n\n\ndef body(q):\n    return fx.Int32(lane(q))\n"
    plain = "import flydsl.expr as fx\n\n\ndef body(q):\n    return fx.Int32(q)\n"
    package = write_package(tmp_path, {"helpers": helper, "a": kernel, "b": kernel, "c": plain, "d": kernel})
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(FlyDSLChecker, "_checkers", {})
    monkeypatch.setattr(FlyDSLChecker, "_configs", {})
    FlyDSLChecker.parse_options(Namespace(filenames=[str(package)], select=["FLY"], extend_select=None))
    kept = []
    for name, text in (("a.py", kernel), ("b.py", kernel), ("c.py", plain), ("d.py", kernel)):
        plugin = FlyDSLChecker(ast.parse(text), str(package / name), text.splitlines(keepends=True))
        found = [(row, col, message.split()[0]) for row, col, message, _ in plugin.run()]
        assert found == ([] if text is plain else [(6, 11, "FLY112")])
        indexes = list(plugin.checker._projects.values())
        kept.append(sorted({module for index in indexes for answers in index._derived.values() for module in answers}))
    assert kept == [["kernels.helpers"], ["kernels.helpers"], [], ["kernels.helpers"]]
