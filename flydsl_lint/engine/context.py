"""What a rule sees of one file: the source, its model, the settings, its comments and noqa, and a sink."""

from __future__ import annotations

import bisect
from collections.abc import Callable
from functools import cached_property
from typing import TypeVar

from .config import Settings
from .diagnostics import Diagnostic
from .metadata import RuleMeta
from .model import SemanticModel
from .noqa import NoqaDirective, parse_directives, parse_file_exemptions
from .source import Comment, SourceFile, find_comments

T = TypeVar("T")


class Context:
    """What a rule sees: the file, its model, the settings, and a sink."""

    def __init__(self, source: SourceFile, model: SemanticModel, settings: Settings, metadata: dict[str, RuleMeta]) -> None:
        self.source = source
        self.model = model
        self.settings = settings
        self.metadata = metadata
        self.diagnostics: list[Diagnostic] = []
        self._cache: dict[str, object] = {}  # see `cache`

    def add(self, diagnostic: Diagnostic) -> None:
        self.diagnostics.append(diagnostic)

    def cache(self, key: str, compute: Callable[[], T]) -> T:
        """`compute()`, once per file for every rule that asks: the one place a
        rule keeps what it works out about the file being checked (a helper's
        classification asked for by several rules, a table filled as they go).
        Keys are namespaced by the rule module (`"s3c.shims"`). What is worked
        out about another module is kept for the run: `ProjectIndex.derived`."""
        if key not in self._cache:
            self._cache[key] = compute()
        return self._cache[key]  # type: ignore[return-value]

    @cached_property
    def comments(self) -> list[Comment]:
        return find_comments(self.source, self.model.string_spans)

    @cached_property
    def _comment_rows(self) -> list[int]:
        """The row of each comment, ascending like `comments`, for bisecting."""
        return [comment.row for comment in self.comments]

    def comments_between(self, first_row: int, last_row: int) -> list[Comment]:
        """Comments on rows first_row..last_row (cheap when the rows have no `#`)."""
        for line in self.source.lines[first_row - 1 : last_row]:  # a loop, not a generator in any()
            if "#" in line:
                rows = self._comment_rows
                return self.comments[bisect.bisect_left(rows, first_row) : bisect.bisect_right(rows, last_row)]
        return []

    @cached_property
    def noqa(self) -> dict[int, NoqaDirective]:
        if self.settings.ignore_noqa or not self.source.mentions_noqa:
            return {}
        return parse_directives(self.comments)

    @cached_property
    def file_noqa(self) -> list[NoqaDirective]:
        """`# flydsl-lint: noqa[: codes]` exemptions of the whole file."""
        if self.settings.ignore_noqa or not self.source.mentions_noqa:
            return []
        return parse_file_exemptions(self.comments, self.source.lines)

    @cached_property
    def is_tuned_kernel(self) -> bool:
        return self.settings.is_tuned_kernel(self.source.path)

    @cached_property
    def guards_tuned_kernel(self) -> bool:  # asked by every fix: resolve the path once
        return self.settings.guards_tuned_kernel(self.source.path)
