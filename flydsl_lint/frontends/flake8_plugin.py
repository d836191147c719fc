"""flake8 extension `FLY`: the same diagnostics as `flydsl-lint check`.

flake8 owns selection, noqa and per-file-ignores here, so the plugin reports
every diagnostic before suppression and lets flake8 filter. File exemptions
(`# flydsl-lint: noqa`), which flake8 does not know, the plugin applies itself,
unless flake8 runs with --disable-noqa.
"""

from __future__ import annotations

import ast
import gc
from collections.abc import Iterator
from pathlib import Path

from .. import __version__


class FlyDSLChecker:
    name = "flydsl-lint"
    version = __version__
    _checkers: dict = {}  # (configuration, flake8 options) -> Checker, shared by the files of a run
    _configs: dict = {}  # folder -> its nearest configuration, looked up once a run
    _disable_noqa = False  # flake8's --disable-noqa

    def __init__(self, tree: ast.Module, filename: str, lines: list[str]) -> None:
        self.tree = tree
        self.filename = filename
        self.lines = lines

    @classmethod
    def parse_options(cls, options) -> None:
        """flake8 hands every plugin its parsed options once a run."""
        cls._disable_noqa = bool(getattr(options, "disable_noqa", False))

    def _checker(self):
        from ..engine.checker import Checker
        from ..engine.config import ConfigError, find_config, load_settings

        folder = Path(self.filename).resolve().parent if self.filename not in ("stdin", "-") else None
        if folder not in self._configs:
            self._configs[folder] = find_config(folder) if folder is not None else None
        config = self._configs[folder]
        key = (str(config), self._disable_noqa)
        if key not in self._checkers:
            try:
                settings = load_settings(config, Path(self.filename).resolve().parent)
            except ConfigError:
                settings = load_settings(None, Path.cwd())  # flake8 reports its own config; ours falls back
            self._checkers[key] = Checker(settings._replace(select=("FLY",), ignore=(), per_file_ignores=(),
                                                            ignore_noqa=self._disable_noqa))
        return self._checkers[key]

    def run(self) -> Iterator[tuple[int, int, str, type]]:
        from ..engine.source import SourceFile

        source = SourceFile(self.filename, "".join(self.lines))
        source._tree = self.tree  # flake8 already parsed this file
        collector_was_on = gc.isenabled()
        gc.disable()  # as in the CLI: the model frees its own cycles (SemanticModel.release)
        try:
            diagnostics = self._checker().check(source, apply_noqa=False)
        finally:
            if collector_was_on:
                gc.enable()
        for diagnostic in diagnostics:
            yield diagnostic.start.row, diagnostic.start.col, f"{diagnostic.code} {diagnostic.message}", type(self)
