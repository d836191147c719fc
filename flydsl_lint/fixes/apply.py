"""Apply fixes to a fixed point and write the result without ever losing a file."""

from __future__ import annotations

import ast
import bisect
import os
import re
import stat
import tempfile
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path

from ..engine.checker import Checker
from ..engine.diagnostics import Diagnostic, Edit, Position, fix_applies
from ..engine.model import Binding, SemanticModel
from ..engine.source import SourceError, SourceFile, file_kind

MAX_PASSES = 10


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


def apply_edits(text: str, edits: list[Edit], newline: str) -> str:
    """Apply non-overlapping edits (positions in the original text), last first."""
    starts = [0]
    index = text.find("\n")
    # Row starts in characters; "\r" alone is not a line break for our edits.
    while index != -1:
        starts.append(index + 1)
        index = text.find("\n", index + 1)
    pieces = []
    cursor = len(text)
    def offset(position: Position) -> int:
        if position.row > len(starts):  # an insertion after the last line
            return len(text)
        return starts[position.row - 1] + position.col

    for edit in sorted(edits, reverse=True):
        begin, end = offset(edit.start), offset(edit.end)
        content = edit.content.replace("\r\n", "\n").replace("\n", newline)
        if begin == len(text) and text and not text.endswith(("\n", "\r")):
            content = newline + content
        pieces.append(text[end:cursor])
        pieces.append(content)
        cursor = begin
    pieces.append(text[:cursor])
    return "".join(reversed(pieces))


def _choose(diagnostics: list[Diagnostic], unsafe: bool) -> list[Diagnostic]:
    """In source order, each fix that overlaps no fix chosen before it (`Fix.overlaps`)."""
    candidates = sorted((d for d in diagnostics if fix_applies(d.fix, unsafe)), key=lambda d: (d.start, d.code))
    taken = _ChosenEdits([position for d in candidates for edit in d.fix.edits for position in (edit.start, edit.end)])
    chosen: list[Diagnostic] = []
    for diagnostic in candidates:
        if not any(taken.overlaps(edit) for edit in diagnostic.fix.edits):
            chosen.append(diagnostic)
            for edit in diagnostic.fix.edits:
                taken.add(edit)
    return chosen


class _ChosenEdits:
    """The edits of the chosen fixes, asked `Edit.overlaps` against all at once
    in O(log n) rather than one by one (n^2 for a file with n fixes).

    Every position a candidate edit can have is known up front, so positions
    are ranked once and two Fenwick trees over the ranks hold, for the chosen
    replacements, the furthest end among those starting before a rank, and for
    the chosen insertions, how many stand at each rank.
    """

    def __init__(self, positions: list[Position]) -> None:
        self._rank = {position: rank for rank, position in enumerate(sorted(set(positions)))}
        self._furthest_end = [-1] * (len(self._rank) + 1)  # prefix maxima of replacement end ranks, by start rank
        self._insertion_count = [0] * (len(self._rank) + 1)  # prefix sums of insertions, by rank
        self._insertion_points: set[int] = set()

    def overlaps(self, edit: Edit) -> bool:
        start, end = self._rank[edit.start], self._rank[edit.end]
        if start == end:  # an insertion: another at its point, or a replacement strictly around it
            return start in self._insertion_points or self._furthest_end_before(start) > start
        # A replacement [c, d) with c < end and d > start, or an insertion strictly inside.
        return self._furthest_end_before(end) > start or self._insertions_before(end) > self._insertions_before(start + 1)

    def add(self, edit: Edit) -> None:
        start, end = self._rank[edit.start], self._rank[edit.end]
        index = start + 1
        if start == end:
            self._insertion_points.add(start)
            while index < len(self._insertion_count):
                self._insertion_count[index] += 1
                index += index & -index
            return
        while index < len(self._furthest_end):
            self._furthest_end[index] = max(self._furthest_end[index], end)
            index += index & -index

    def _furthest_end_before(self, rank: int) -> int:
        """The largest end rank of a chosen replacement starting at a rank below `rank` (-1: none)."""
        furthest = -1
        while rank > 0:
            furthest = max(furthest, self._furthest_end[rank])
            rank -= rank & -rank
        return furthest

    def _insertions_before(self, rank: int) -> int:
        """How many chosen insertions stand at ranks below `rank`."""
        count = 0
        while rank > 0:
            count += self._insertion_count[rank]
            rank -= rank & -rank
        return count


def _used_imports(text: str) -> dict[tuple[str, int], int]:
    """(bound name, binding row) -> uses, for every import binding."""
    model = SemanticModel(ast.parse(text))
    model.count_uses()
    return {(b.name, b.node.lineno if hasattr(b.node, "lineno") else 0): b.used for b in model.import_bindings()}


def remove_unused_imports(original: str, text: str, newline: str) -> str:
    """Drop imports that were used before the fixes and are used no more.

    Only imports the fixes emptied are touched; an import unused from the
    start stays, since its side effects may be wanted. Comments stay too: a
    statement holding one inside is kept whole.
    """
    before_names = {name for (name, _), uses in _used_imports(original).items() if uses}
    tree = ast.parse(text)
    model = SemanticModel(tree)
    model.count_uses()
    imports_of_name = Counter(binding.name for binding in model.import_bindings())
    dead = {
        id(binding.node)
        for binding in model.import_bindings()
        # A name another import also binds is kept with it.
        if binding.used == 0 and binding.name in before_names and imports_of_name[binding.name] == 1
    }
    if not dead:
        return text
    edits: list[Edit] = []
    source = SourceFile(path="<fix>", text=text)
    for statement in model.nodes(ast.Import) + model.nodes(ast.ImportFrom):
        kept = [alias for alias in statement.names if id(alias) not in dead]
        if len(kept) == len(statement.names):
            continue
        if kept:
            edits.extend(_alias_removals(source, statement.names, dead))
            continue
        removal = _statement_removal(source, statement, _alone_in_its_block(model, statement))
        if removal is not None:
            edits.append(removal)
    return apply_edits(text, edits, newline)


def remove_dead_aliases(original: str, text: str, newline: str, used_elsewhere: Callable[[str], bool]) -> str:
    """Drop the simple aliases (`_uw = _arith._to_raw`) and integer constants
    (`VMCNT_MAX = 63`) that were used before the fixes and are used no more.

    Only a statement of its own, directly in the module or a function body, and
    the only binding of its name there, goes. A module-level name is kept when
    `__all__` lists it or `used_elsewhere(name)` (another project file may import
    it); a file that reads names dynamically (`globals()`, `eval`, ...) keeps all.
    Comments stay, as for imports. Aliases emptied in turn go in the next round.
    """
    if _DYNAMIC_NAMES.search(original):
        return text
    used_before = {key for key, (_, _, binding) in _debris_candidates(original).items() if binding.used}
    for _ in range(MAX_PASSES):
        candidates = _debris_candidates(text)
        dead = [(statement, alone) for key, (statement, alone, binding) in candidates.items()
                if key in used_before and binding.used == 0
                and not (binding.scope.kind == "module" and used_elsewhere(binding.name))]
        if not dead:
            return text
        source = SourceFile(path="<fix>", text=text)
        edits = [edit for edit in (_statement_removal(source, statement, alone) for statement, alone in dead) if edit]
        if not edits:
            return text
        text = apply_edits(text, edits, newline)
    return text


# Calls that read a scope's names by string: no name is provably dead in such a file.
_DYNAMIC_NAMES = re.compile(r"\b(?:globals|locals|vars|eval|exec|__getattr__)\b")


def _debris_candidates(text: str) -> dict[tuple[str, str], tuple[ast.stmt, bool, Binding]]:
    """(enclosing defs' names, bound name) -> (statement, alone in its block, binding)
    for each `name = <dotted name>` or `name = <int literal>` statement directly in
    the module or a function body that is the only binding of its name there,
    not declared global or nonlocal, and not listed in `__all__`."""
    model = SemanticModel(ast.parse(text))
    model.count_uses()
    exported = _all_names(model.tree)
    found: dict[tuple[str, str], tuple[ast.stmt, bool, Binding]] = {}
    for scope in model.scopes:
        if scope.kind not in ("module", "function"):
            continue
        body = scope.node.body
        for name, bindings in scope.bindings.items():
            if len(bindings) != 1 or name in scope.declared_global or name in scope.declared_nonlocal:
                continue
            binding = bindings[0]
            statement = model.parent(binding.node)
            if binding.kind != "assign" or not _is_debris_shape(statement) or statement not in body:
                continue
            if scope.kind == "module" and name in exported:
                continue
            found[(_scope_path(model, scope), name)] = (statement, len(body) == 1, binding)
    return found


def _is_debris_shape(statement: ast.AST | None) -> bool:
    if not isinstance(statement, ast.Assign) or len(statement.targets) != 1 or not isinstance(statement.targets[0], ast.Name):
        return False
    value = statement.value
    if isinstance(value, ast.Constant):
        return type(value.value) is int
    while isinstance(value, ast.Attribute):
        value = value.value
    return isinstance(value, ast.Name)


def _scope_path(model: SemanticModel, scope) -> str:
    names = []
    while scope is not None and scope.kind != "module":
        names.append(getattr(scope.node, "name", "<lambda>"))
        scope = scope.parent
    return ".".join(reversed(names))


def _all_names(tree: ast.Module) -> set[str]:
    """The string entries of a module-level `__all__` (assigned, extended or added to)."""
    names: set[str] = set()
    for node in tree.body:
        targets = node.targets if isinstance(node, ast.Assign) else [node.target] if isinstance(node, (ast.AugAssign, ast.AnnAssign)) else []
        if any(isinstance(t, ast.Name) and t.id == "__all__" for t in targets) and node.value is not None:
            names.update(c.value for c in ast.walk(node.value) if isinstance(c, ast.Constant) and isinstance(c.value, str))
    return names


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
    from ..engine.files import discover

    index = checker.project_for(path)[0]
    files, _ = discover([str(root) for root in index.roots], checker.settings)
    seen = {os.path.realpath(path)}
    for file in files:
        real = os.path.realpath(file)
        if real in seen:
            continue
        seen.add(real)
        try:
            yield Path(real).read_text(encoding="utf-8", errors="replace")
        except OSError:
            continue  # unreadable: its check reports it


def _alone_in_its_block(model: SemanticModel, statement: ast.stmt) -> bool:
    """Whether `statement` is the only one of a body, else or finally block (which then needs a `pass`)."""
    parent = model.parent(statement)
    for field in ("body", "orelse", "finalbody"):
        block = getattr(parent, field, None)
        if isinstance(block, list) and len(block) == 1 and block[0] is statement:
            return True
    return False


def _statement_removal(source: SourceFile, statement: ast.stmt, alone: bool) -> Edit | None:
    """The edit deleting a whole import statement: its lines, or up to the
    comment after it, or `pass` in its place; None if a comment lies inside it."""
    start = Position(statement.lineno, source.char_col(statement.lineno, statement.col_offset))
    end = Position(statement.end_lineno, source.char_col(statement.end_lineno, statement.end_col_offset))
    if "#" in source.text[source.offset(*start) : source.offset(*end)]:
        return None  # an import holds no string, so this is a comment between its names
    before = source.lines[statement.lineno - 1][: start.col]
    after = source.lines[statement.end_lineno - 1][end.col :]
    if alone or before.strip():
        return Edit(start, end, "pass")
    if not after.strip():
        return Edit(Position(statement.lineno, 0), Position(statement.end_lineno + 1, 0), "")
    if after.lstrip().startswith("#"):  # the comment stays, where the statement stood
        return Edit(start, Position(end.row, end.col + len(after) - len(after.lstrip())), "")
    return Edit(start, end, "pass")


def _alias_removals(source: SourceFile, aliases: list[ast.alias], dead: set[int]) -> list[Edit]:
    """Edits deleting the dead names of an import in place, keeping its layout.

    A run of dead names is cut up to the next kept name (or, at the end, from
    the previous kept name), so commas and line breaks stay balanced. Where
    that span holds a comment, only the names and their commas go.
    """
    def start(alias: ast.alias) -> int:
        return source.offset(alias.lineno, source.char_col(alias.lineno, alias.col_offset))

    def end(alias: ast.alias) -> int:
        return source.offset(alias.end_lineno, source.char_col(alias.end_lineno, alias.end_col_offset))

    spans: list[tuple[int, int]] = []
    index = 0
    while index < len(aliases):
        if id(aliases[index]) not in dead:
            index += 1
            continue
        last = index
        while last + 1 < len(aliases) and id(aliases[last + 1]) in dead:
            last += 1
        if last + 1 < len(aliases):
            span = (start(aliases[index]), start(aliases[last + 1]))
        else:
            span = (end(aliases[index - 1]), end(aliases[last]))
        if "#" in source.text[span[0] : span[1]]:
            spans.extend(_name_and_comma(source.text, start(a), end(a)) for a in aliases[index : last + 1])
        else:
            spans.append(span)
        index = last + 1
    return [Edit(_position(source, lo), _position(source, hi), "") for lo, hi in spans]


def _name_and_comma(text: str, lo: int, hi: int) -> tuple[int, int]:
    after = hi
    while after < len(text) and text[after] in " \t":
        after += 1
    return (lo, after + 1) if after < len(text) and text[after] == "," else (lo, hi)


def _position(source: SourceFile, offset: int) -> Position:
    row = bisect.bisect_right(source.line_starts, offset)
    return Position(row, offset - source.line_starts[row - 1])


def fix_source(source: SourceFile, checker: Checker, unsafe: bool = False) -> FixResult:
    """Apply fixes until none is left (bounded); the result must parse."""
    text = source.text
    applied: Counter = Counter()
    current = source
    remaining: list[Diagnostic] | None = None  # the diagnostics of `current`, once known
    for _ in range(MAX_PASSES):
        remaining = checker.check(current)
        chosen = _choose(remaining, unsafe)
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


def write_atomic(path: Path, data: bytes) -> None:
    """Give the file at `path` the contents `data`, so that an interruption leaves old or new, never half.

    The file is replaced, never the name in front of it: a symlink is followed, its
    target replaced and the link kept. An existing file keeps its mode and, as far
    as this user may set them, its owner and group; a new one gets the umask's mode.
    A file with several hard links, or anything but a regular file, is refused with an
    OSError: replacing it would split the links or the node, and writing into it in
    place could leave it half-written.
    """
    target = Path(os.path.realpath(path))
    info: os.stat_result | None
    try:
        info = os.stat(target)
    except FileNotFoundError:
        info = None
        umask = os.umask(0)
        os.umask(umask)
        mode = 0o666 & ~umask
    else:
        _check_replaceable(info)
        mode = stat.S_IMODE(info.st_mode)
    handle, temporary = tempfile.mkstemp(prefix=f".{target.name}.", suffix=TEMPORARY_SUFFIX, dir=target.parent)
    try:
        with os.fdopen(handle, "wb") as stream:
            if info is not None:
                _keep_owner(stream.fileno(), info)
            stream.write(data)
            stream.flush()
            os.fsync(stream.fileno())
        os.chmod(temporary, mode)  # after the owner: changing it clears set-id bits
        os.replace(temporary, target)
    except BaseException:
        try:
            os.unlink(temporary)
        except FileNotFoundError:
            pass
        raise


def _check_replaceable(info: os.stat_result) -> None:
    if not stat.S_ISREG(info.st_mode):
        raise OSError(f"not a regular file ({file_kind(info.st_mode)})")
    if info.st_nlink > 1:
        raise OSError(f"has {info.st_nlink} hard links; left untouched "
                      "(replacing it would split them, writing in place could leave it half-written)")


def _keep_owner(descriptor: int, info: os.stat_result) -> None:
    """Give the new file the old one's owner and group, or its group alone, as far as allowed."""
    if not hasattr(os, "fchown"):
        return
    for owner in (info.st_uid, -1):  # only root may give a file away; a member may set its group
        try:
            os.fchown(descriptor, owner, info.st_gid)
            return
        except OSError:
            continue


# write_atomic's temporaries are named `.NAME.` + mkstemp's 8 characters + this suffix.
TEMPORARY_SUFFIX = ".flydsl-lint"
_TEMPORARY_NAME = re.compile(r"\..+\.[a-z0-9_]{8}" + re.escape(TEMPORARY_SUFFIX))
# A temporary this recent may be a write under way in another run.
LEFTOVER_MIN_AGE = 60.0


def leftover_temporaries(start: Path, excluded: Callable[[Path], bool]) -> list[Path]:
    """The temporaries of write_atomic that an interrupted run left in `start` and
    below it (not in folders `excluded` rejects): regular files, not links, named
    exactly as it names them and unchanged for LEFTOVER_MIN_AGE seconds."""
    found: list[Path] = []
    oldest_allowed = time.time() - LEFTOVER_MIN_AGE
    for folder, subfolders, names in os.walk(start):
        subfolders[:] = [sub for sub in subfolders if not excluded(Path(folder) / sub)]
        for name in names:
            if not _TEMPORARY_NAME.fullmatch(name):
                continue
            path = Path(folder) / name
            try:
                info = path.lstat()
            except OSError:
                continue
            if stat.S_ISREG(info.st_mode) and info.st_mtime < oldest_allowed:
                found.append(path)
    return sorted(found)
