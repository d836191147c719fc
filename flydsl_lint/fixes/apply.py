"""Apply chosen fixes to a text: non-overlapping edits in one sweep, then the imports they emptied removed."""

from __future__ import annotations

import ast
import bisect
import re
from collections import Counter
from collections.abc import Callable

from ..engine.deletions import blank_lines_to_drop, definition_removal
from ..engine.diagnostics import Diagnostic, Edit, Position, fix_applies
from ..engine.model import Binding, SemanticModel
from ..engine.source import SourceFile

MAX_PASSES = 10  # rounds of fixes (run/fix_loop.py) and of alias removal


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


def choose_fixes(diagnostics: list[Diagnostic], unsafe: bool) -> list[Diagnostic]:
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
    """Drop the simple aliases (`_uw = _arith._to_raw`), integer constants
    (`VMCNT_MAX = 63`) and helper defs (a `_s_waitcnt(val)` shim whose calls the
    fixes replaced) that were used before the fixes and are used no more.

    Only a statement of its own, directly in the module or a function body, and
    the only binding of its name there, goes. A module-level name is kept when
    `__all__` lists it or `used_elsewhere(name)` (another project file may import
    it); a file that reads names dynamically (`globals()`, `eval`, ...) keeps all.
    Comments stay, as for imports, except inside a removed def, whose own they
    are. What a removal empties in turn goes in the next round (the constants
    a shim read).
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
        edits = [edit for edit in (definition_removal(source, statement, alone) if isinstance(statement, ast.FunctionDef)
                                   else _statement_removal(source, statement, alone) for statement, alone in dead) if edit]
        if not edits:
            return text
        text = apply_edits(text, edits, newline)
    return text


# Calls that read a scope's names by string: no name is provably dead in such a file.
_DYNAMIC_NAMES = re.compile(r"\b(?:globals|locals|vars|eval|exec|__getattr__)\b")


def _debris_candidates(text: str) -> dict[tuple[str, str], tuple[ast.stmt, bool, Binding]]:
    """(enclosing defs' names, bound name) -> (statement, alone in its block, binding)
    for each `name = <dotted name>` or `name = <int literal>` statement and each
    plain helper def (`_is_plain_helper`; `_`-private at module level) directly in
    the module or a function body that is the only binding of its name there, not
    declared global or nonlocal, and, at module level, spelled by no string of the
    module (`__all__` lists it, or `getattr` may be given it)."""
    model = SemanticModel(ast.parse(text))
    model.count_uses()
    spelled = model.strings  # `__all__` entries, or a name `getattr` may be given
    found: dict[tuple[str, str], tuple[ast.stmt, bool, Binding]] = {}
    for scope in model.scopes:
        if scope.kind not in ("module", "function"):
            continue
        body = scope.node.body
        for name, bindings in scope.bindings.items():
            if len(bindings) != 1 or name in scope.declared_global or name in scope.declared_nonlocal:
                continue
            binding = bindings[0]
            if binding.kind == "def":
                statement = binding.node
                # A public def of a module may be API to code outside the project.
                if not _is_plain_helper(statement) or statement not in body or (scope.kind == "module" and not name.startswith("_")):
                    continue
            else:
                statement = model.parent(binding.node)
                if binding.kind != "assign" or not _is_debris_shape(statement) or statement not in body:
                    continue
            if scope.kind == "module" and name in spelled:
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


def _is_plain_helper(statement: ast.AST) -> bool:
    """An undecorated `def` whose statement runs nothing but the binding: no default or
    annotation calls anything (those run when the def does, and may emit IR)."""
    if not isinstance(statement, ast.FunctionDef) or statement.decorator_list:
        return False
    arguments = statement.args
    evaluated = [*arguments.defaults, *(d for d in arguments.kw_defaults if d is not None), statement.returns,
                 *(a.annotation for a in (*arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs,
                                          arguments.vararg, arguments.kwarg) if a is not None)]
    return not any(isinstance(node, (ast.Call, ast.NamedExpr, ast.Await, ast.Yield, ast.YieldFrom))
                   for part in evaluated if part is not None for node in ast.walk(part))


def _scope_path(model: SemanticModel, scope) -> str:
    names = []
    while scope is not None and scope.kind != "module":
        names.append(getattr(scope.node, "name", "<lambda>"))
        scope = scope.parent
    return ".".join(reversed(names))


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
        last = statement.end_lineno + blank_lines_to_drop(source.lines, statement.lineno, statement.end_lineno)
        return Edit(Position(statement.lineno, 0), Position(last + 1, 0), "")
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
