"""Fix one file to a fixed point: check, apply the chosen fixes, re-parse, repeat."""

from __future__ import annotations

import os
import re
from collections import Counter
from collections.abc import Callable

from ..engine.diagnostics import Diagnostic
from ..engine.files import discover
from ..engine.source import SourceError, SourceFile, read_regular
from ..fixes.apply import MAX_PASSES, apply_edits, choose_fixes, remove_dead_aliases, remove_unused_imports
from .checker import Checker


class FixResult:
    __slots__ = ("source", "new_text", "applied", "remaining")

    def __init__(self, source: SourceFile, new_text: str, applied: Counter, remaining: list[Diagnostic]) -> None:
        self.source = source
        self.new_text = new_text
        self.applied = applied  # code -> fixes applied
        self.remaining = remaining

    @property
    def changed(self) -> bool:
        return self.new_text != self.source.text


def fix_source(source: SourceFile, checker: Checker, unsafe: bool = False) -> FixResult:
    """Apply fixes until none is left (bounded); the result must parse."""
    text = source.text
    applied: Counter = Counter()
    current = source
    remaining: list[Diagnostic] | None = None  # the diagnostics of `current`, once known
    for _ in range(MAX_PASSES):
        remaining = checker.check(current)
        chosen = choose_fixes(remaining, unsafe)
        if not chosen:
            break
        text = apply_edits(text, [edit for d in chosen for edit in d.fix.edits], source.newline)
        applied.update(d.code for d in chosen)
        current, remaining = SourceFile(source.path, text, source.encoding, source.bom, source.newline), None
        try:
            current.tree
        except SourceError as exc:
            codes = ", ".join(sorted(set(d.code for d in chosen)))
            raise SourceError(source.path, f"fixes for {codes} produced invalid code ({exc.reason}); file left untouched") from None
    if applied:
        cleaned = remove_dead_aliases(source.text, text, source.newline, _used_elsewhere_in_project(checker, source))
        cleaned = remove_unused_imports(source.text, cleaned, source.newline)
        if cleaned != text:
            text = cleaned
            current, remaining = SourceFile(source.path, text, source.encoding, source.bom, source.newline), None
            try:
                current.tree
            except SourceError as exc:
                raise SourceError(source.path, f"removing names the fixes left unused produced invalid code ({exc.reason}); file left untouched") from None
    if remaining is None:  # the last pass's fixes or the import clean-up changed the text
        remaining = checker.check(current)
    return FixResult(source, text, applied, remaining)


def _used_elsewhere_in_project(checker: Checker, source: SourceFile) -> Callable[[str], bool]:
    """Whether another Python file under the source roots of `source`'s project
    mentions a name as a word (it may import it): the files are read on the
    first question only, as few fixes leave a module-level name unused."""
    texts: list[str] | None = None

    def used(name: str) -> bool:
        nonlocal texts
        if texts is None:
            texts = list(_other_project_texts(checker, source.path))
        word = re.compile(rf"\b{re.escape(name)}\b")
        return any(word.search(text) for text in texts)

    return used


def _other_project_texts(checker: Checker, path: str):
    index = checker.project_for(path)[0]
    files, _ = discover([str(root) for root in index.roots], checker.settings)
    seen = {os.path.realpath(path)}
    for file in files:
        real = os.path.realpath(file)
        if real in seen:
            continue
        seen.add(real)
        try:
            yield read_regular(real, checker.settings.max_file_size).decode("utf-8", errors="replace")
        except OSError:
            continue  # unreadable: its check reports it
