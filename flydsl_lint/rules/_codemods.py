"""Shared pieces of the structural codemods (§3 scf loops, §4 LDS): statement
blocks, whole-line deletions, fresh names and the refusal every codemod raises.

A codemod either builds all of its edits or refuses with a reason the
diagnostic shows; it never applies part of a rewrite.
"""

from __future__ import annotations

import ast
from typing import TYPE_CHECKING, Callable

from ..engine.diagnostics import Edit, Fix, Position

if TYPE_CHECKING:
    from ._base import Rule


class Refusal(Exception):
    """A codemod cannot rewrite this site; the message says why (shown in the diagnostic)."""


# What a refused site's message says before the reason; `refusal_reason` reads it back.
_REFUSAL_NOTE = "; no automatic rewrite: "


def codemod_fix(rule: "Rule", build_edits: Callable[[], list[Edit]], message: str) -> tuple[Fix | None, str]:
    """The codemod's fix and no note, or no fix and the note (the diagnostic's `{note}`)
    that says why it refused."""
    try:
        return rule.make_fix(build_edits(), message), ""
    except Refusal as refusal:
        return None, f"{_REFUSAL_NOTE}{refusal}"


def refusal_reason(message: str) -> str:
    """Why a codemod refused the site a diagnostic's `message` describes ("" when it did not)."""
    return message.partition(_REFUSAL_NOTE)[2]


class Codemod:
    """One site's structural rewrite: `edits()` builds it or raises a Refusal saying why."""

    def __init__(self, rule: "Rule", call: ast.Call) -> None:
        self.rule = rule
        self.call = call

    def bound_statement(self) -> tuple[ast.Assign, ast.Name]:
        """`name = <the op>`: the statement and its target (a rewrite needs the op's name)."""
        assignment = single_name_assignment(self.rule, self.call)
        if assignment is None:
            raise Refusal("the op is not bound to a name of its own")
        return assignment


# Blocks whose statements run unconditionally once the block runs: a construct
# built directly in one of these is not "built conditionally".
_UNCONDITIONAL_BLOCKS = (ast.Module, ast.FunctionDef, ast.AsyncFunctionDef, ast.For, ast.While, ast.With)


def kernel_function(rule: "Rule", node: ast.AST) -> ast.AST:
    """The `@flyc.kernel`/`@flyc.jit` function whose own body holds `node`, or a refusal."""
    function = rule.model.enclosing_function(node)
    if function is None or rule.model.function_kind(function) is None:
        raise Refusal("it is not in a @flyc.kernel/@flyc.jit body")
    return function


def unconditional_block(rule: "Rule", statement: ast.stmt) -> list[ast.stmt]:
    """The statement list holding `statement`, refused when it sits under an `if`/`try`/`match`."""
    parent = rule.model.parent(statement)
    if not isinstance(parent, _UNCONDITIONAL_BLOCKS) or statement not in parent.body:
        raise Refusal("it is built conditionally")
    return parent.body


def enclosing_block(rule: "Rule", statement: ast.stmt) -> list[ast.stmt]:
    """The statement list holding `statement` (a body, an `else`, a handler's body, ...)."""
    parent = rule.model.parent(statement)
    for field in ("body", "orelse", "finalbody"):
        block = getattr(parent, field, None)
        if isinstance(block, list) and statement in block:
            return block
    raise Refusal("it is not in a statement block the codemod knows")


def next_statement(block: list[ast.stmt], statement: ast.stmt) -> ast.stmt | None:
    index = block.index(statement)
    return block[index + 1] if index + 1 < len(block) else None


def single_name_assignment(rule: "Rule", value: ast.expr) -> tuple[ast.Assign, ast.Name] | None:
    """`name = value` as a statement of its own: the statement and its target."""
    statement = rule.model.parent(value)
    if isinstance(statement, ast.Assign) and statement.value is value and len(statement.targets) == 1 \
            and isinstance(statement.targets[0], ast.Name):
        return statement, statement.targets[0]
    return None


def reads_of(rule: "Rule", target: ast.Name | ast.arg) -> list[ast.Name]:
    """The reads of the name `target` (a bound Name or a parameter) binds that see this binding,
    in source order."""
    model = rule.model
    name = target.id if isinstance(target, ast.Name) else target.arg
    return [read for read in model.loads_of(name)
            if (binding := model.binding_of(read)) is not None and binding.node is target]


def reads_of_only_binding(rule: "Rule", target: ast.Name | ast.arg) -> list[ast.Name] | None:
    """reads_of `target` when it is the only binding of its name in its scope, so that every
    read sees its value; None when the name is bound more than once (a read then may see this
    binding even where the text shows another one last, as in a loop or after a branch)."""
    binding = rule.model.binding_made_by(target)
    if binding is None or not rule.model.is_single_binding(binding):
        return None
    return reads_of(rule, target)


def reads_seeing(rule: "Rule", target: ast.Name | ast.arg) -> list[ast.Name] | None:
    """The reads that may see the value `target` binds: reads_of_only_binding for a name bound
    once; for one bound more than once, the reads this binding provably reaches (the model's
    reaching_binding), when every other read of the name in its scope provably sees another
    binding. None when some read may see this one and the model cannot tell."""
    model = rule.model
    binding = model.binding_made_by(target)
    if binding is None or model.is_single_binding(binding):
        return None if binding is None else reads_of(rule, target)
    seeing = []
    for read in model.loads_of(binding.name):
        seen = model.binding_of(read)
        if seen is None or seen.scope is not binding.scope:
            continue  # another scope's own name (a closure's read of this one is this scope's: no reaching binding)
        reaching = model.reaching_binding(read)
        if reaching is None:
            return None
        if reaching.node is target:
            seeing.append(read)
    return seeing


def reads_of_value(rule: "Rule", value: ast.expr) -> list[ast.Name] | None:
    """The reads of `name` in `name = value`, every one seeing `value` (the name's only
    binding); None when `value` is not so bound."""
    assignment = single_name_assignment(rule, value)
    return None if assignment is None else reads_of_only_binding(rule, assignment[1])


def bound_once(rule: "Rule", target: ast.Name, owner: ast.AST) -> bool:
    """Whether `target` is the only binding of its name in the scope of `owner` (a function or the module)."""
    bindings = (rule.model.bindings_opened_by(owner) or {}).get(target.id, [])
    return len(bindings) == 1 and bindings[0].node is target


def fresh_name(rule: "Rule", *candidates: str) -> str:
    """The first candidate no scope of the file binds (a codemod's new variable)."""
    for name in candidates:
        if not rule.model.is_bound_anywhere(name):
            return name
    raise Refusal(f"the names {', '.join(f'`{c}`' for c in candidates)} are all taken")


def start_of(rule: "Rule", node: ast.AST) -> Position:
    return Position(node.lineno, rule.context.source.char_col(node.lineno, node.col_offset))


def end_of(rule: "Rule", node: ast.AST) -> Position:
    return Position(node.end_lineno, rule.context.source.char_col(node.end_lineno, node.end_col_offset))


def has_comments(rule: "Rule", start: Position, end: Position) -> bool:
    """Whether a comment starts inside the span from `start` to `end`."""
    return any(start <= Position(c.row, c.col) < end for c in rule.context.comments_between(start.row, end.row))


def delete_statement(rule: "Rule", statement: ast.stmt, keep_comment: bool = False) -> Edit | None:
    """Delete `statement` with its lines, or None when they hold other code or a comment.
    With `keep_comment`, a comment after the statement stays on its line, alone."""
    lines = rule.context.source.lines
    start, end = start_of(rule, statement), end_of(rule, statement)
    after = lines[end.row - 1][end.col :]
    rest = after.strip()
    if lines[start.row - 1][: start.col].strip() or (rest and not (keep_comment and rest.startswith("#"))):
        return None
    if rest:  # the comment moves to the statement's column
        return Edit(start, Position(end.row, end.col + len(after) - len(after.lstrip())), "")
    if has_comments(rule, Position(start.row, 0), Position(end.row, len(lines[end.row - 1]))):
        return None
    return Edit(Position(start.row, 0), Position(end.row + 1, 0), "")


def delete_or_pass(rule: "Rule", statement: ast.stmt, block_left_empty: bool) -> Edit:
    """Remove a statement: its lines, or `pass` in its place when the block would be left
    empty or its lines cannot go."""
    edit = None if block_left_empty else delete_statement(rule, statement)
    return edit if edit is not None else rule.replace(statement, "pass")


def replace_with_edits(rule: "Rule", node: ast.AST, template: str, edits: list[Edit]) -> tuple[Edit, list[Edit]]:
    """Replace `node` by `template` formatted with its text, the `edits` that fall inside
    it applied to that text (one fix must not hold overlapping edits); also the edits left."""
    start, end = start_of(rule, node), end_of(rule, node)
    inside = [e for e in edits if start <= e.start and e.end <= end]
    text = template.format(spliced_text(rule, start, end, inside))
    return rule.replace(node, text), [e for e in edits if e not in inside]


def spliced_text(rule: "Rule", start: Position, end: Position, edits: list[Edit]) -> str:
    """The source text from `start` to `end` with `edits`, which all fall inside it, applied."""
    lines = rule.context.source.lines[start.row - 1 : end.row]
    lines[-1] = lines[-1][: end.col]
    lines[0] = lines[0][start.col :]
    for edit in sorted(edits, reverse=True):  # from the last: earlier positions stay valid
        first, last = edit.start.row - start.row, edit.end.row - start.row
        first_col = edit.start.col - (start.col if first == 0 else 0)
        last_col = edit.end.col - (start.col if last == 0 else 0)
        lines[first : last + 1] = (lines[first][:first_col] + edit.content + lines[last][last_col:]).split("\n")
    return "\n".join(lines)


def own_nodes(body: list[ast.stmt]):
    """The nodes of `body`, not descending into nested loops (their `break`, `continue` and
    `yield` are theirs) except for `return`, which always leaves the function."""
    pending = list(body)
    while pending:
        node = pending.pop()
        yield node
        if isinstance(node, (ast.For, ast.While)):
            pending += [n for n in ast.walk(node) if isinstance(n, ast.Return)]
            continue
        pending += ast.iter_child_nodes(node)


def scope_nodes(body: list[ast.stmt]):
    """The nodes of `body`, nested loops and blocks included (a name they bind is the body's,
    and a Python `if`/`while` around it carries it), but not the insides of nested defs,
    lambdas and classes, whose names are their own."""
    pending = list(body)
    while pending:
        node = pending.pop()
        yield node
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            pending += node.decorator_list  # run where the def is
            continue
        if isinstance(node, ast.Lambda):
            continue
        pending += ast.iter_child_nodes(node)


def is_attribute_of(node: ast.expr, name: str, attribute: str) -> bool:
    return isinstance(node, ast.Attribute) and node.attr == attribute and isinstance(node.value, ast.Name) \
        and node.value.id == name


def within(outer: ast.AST, node: ast.AST) -> bool:
    return (outer.lineno, outer.col_offset) <= (node.lineno, node.col_offset) and \
        (node.end_lineno, node.end_col_offset) <= (outer.end_lineno, outer.end_col_offset)
