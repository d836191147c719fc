"""flake8 extension `FLY`: the same diagnostics as `flydsl-lint check`.

flake8 owns selection, noqa and per-file-ignores here, so the plugin reports
every diagnostic before suppression and lets flake8 filter. File exemptions
(`# flydsl-lint: noqa`), which flake8 does not know, the plugin applies itself,
unless flake8 runs with --disable-noqa.

A bad [tool.flydsl-lint] stops the run, as it stops `flydsl-lint check`: the
configuration of each path flake8 was given is read before any file is checked,
and an error is one line on stderr and exit status 2. A bad configuration met
only later (a nested project's) fails the file's check, which flake8 reports as
one line naming the file and the reason.
"""

from __future__ import annotations

import ast
import sys
from collections.abc import Iterator
from pathlib import Path

from .. import __version__


class FlyDSLChecker:
    name = "flydsl-lint"
    version = __version__
    _checkers: dict = {}  # (configuration, flake8 options) -> Checker, shared by the files of a run
    _configs: dict = {}  # folder -> its nearest configuration, looked up once a run
    _disable_noqa = False  # flake8's --disable-noqa
    _advisory: tuple[str, ...] = ()  # off-by-default codes flake8's --select/--extend-select name exactly

    def __init__(self, tree: ast.Module, filename: str, lines: list[str]) -> None:
        self.tree = tree
        self.filename = filename
        self.lines = lines
        # Here, not in `run`: flake8 reports an exception raised while it builds a plugin as
        # one line naming the file (a bad nested configuration), one raised while it iterates as a traceback.
        self.checker = self._checker()

    @classmethod
    def parse_options(cls, options) -> None:
        """flake8 hands every plugin its parsed options once a run, before any file is checked."""
        cls._disable_noqa = bool(getattr(options, "disable_noqa", False))
        named = [*(getattr(options, "select", None) or ()), *(getattr(options, "extend_select", None) or ())]
        cls._advisory = tuple(code for code in named if code.startswith("FLY"))
        cls._check_configurations(getattr(options, "filenames", None) or ["."],
                                  getattr(options, "stdin_display_name", "stdin"))

    @staticmethod
    def _check_configurations(paths: list[str], stdin_name: str) -> None:
        """Read the configuration each of `paths` is checked with; a bad one ends
        the run with its one-line error and exit status 2, as `flydsl-lint check` does."""
        from ..engine.config import ConfigError, find_config, load_settings

        for name in paths:
            path = Path(stdin_name if name == "-" else name)
            folder = path if path.is_dir() else path.parent
            if not folder.is_dir():
                continue  # flake8 reports the missing path itself
            try:
                load_settings(find_config(folder), folder)
            except ConfigError as exc:
                print(f"flydsl-lint: error: {exc.message}", file=sys.stderr)
                raise SystemExit(2) from None

    def _checker(self):
        from ..run.checker import Checker
        from ..engine.config import find_config, load_settings

        folder = Path(self.filename).resolve().parent if self.filename not in ("stdin", "-") else None
        if folder not in self._configs:
            self._configs[folder] = find_config(folder) if folder is not None else None
        config = self._configs[folder]
        key = (str(config), self._disable_noqa, self._advisory)
        if key not in self._checkers:
            settings = load_settings(config, Path(self.filename).resolve().parent)
            # Every FLY rule, and the advisory ones flake8's selection names by their exact code, as the CLI does.
            self._checkers[key] = Checker(settings._replace(select=("FLY",), extend_select=self._advisory, ignore=(),
                                                            per_file_ignores=(), ignore_noqa=self._disable_noqa))
        return self._checkers[key]

    def run(self) -> Iterator[tuple[int, int, str, type]]:
        from ..engine.source import SourceFile
        from ..run.collector import collector_paused

        source = SourceFile(self.filename, "".join(self.lines))
        source._tree = self.tree  # flake8 already parsed this file
        with collector_paused():
            try:
                diagnostics = self.checker.check(source, apply_noqa=False)
            finally:
                # flake8 runs the cyclic collector between files, and each full collection would
                # walk every helper model kept for the run (bench/flake8_gc.py): keep only those
                # the file used, which the next file, often its neighbour, may use again.
                self.checker.release_unused()
        for diagnostic in diagnostics:
            yield diagnostic.start.row, diagnostic.start.col, f"{diagnostic.code} {diagnostic.message}", type(self)
