"""Building blocks for fixes: they edit only the flagged construct and keep style."""

from __future__ import annotations

import ast
from typing import TYPE_CHECKING

from ..engine.diagnostics import Edit, Position

if TYPE_CHECKING:
    from ._base import Rule

# Expressions that never need parentheses wherever they land.
_ATOMIC = (ast.Name, ast.Attribute, ast.Call, ast.Subscript, ast.Constant, ast.List, ast.Dict, ast.Set,
           ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp, ast.JoinedStr)
# Places where any expression fits without parentheses.
_OPEN_CONTEXTS = (ast.keyword, ast.Return, ast.Expr, ast.Assign, ast.AnnAssign, ast.AugAssign)


# Python's binding strengths (the language reference's precedence table), loosest first.
_BINARY_OPERATORS = {ast.BitOr: 6, ast.BitXor: 7, ast.BitAnd: 8, ast.LShift: 9, ast.RShift: 9, ast.Add: 10,
                     ast.Sub: 10, ast.Mult: 11, ast.MatMult: 11, ast.Div: 11, ast.FloorDiv: 11, ast.Mod: 11,
                     ast.Pow: 13}
_ADDITIVE = (ast.Add, ast.Sub)
_MULTIPLICATIVE = (ast.Mult, ast.Div, ast.FloorDiv, ast.Mod, ast.MatMult)


def _binding(node: ast.AST) -> int | None:
    """How tightly an operator expression binds; None for what is always parenthesized here."""
    if isinstance(node, ast.BinOp):
        return _BINARY_OPERATORS[type(node.op)]
    if isinstance(node, ast.UnaryOp):
        return 4 if isinstance(node.op, ast.Not) else 12
    if isinstance(node, ast.Compare):
        return 5
    if isinstance(node, ast.BoolOp):
        return 2 if isinstance(node.op, ast.Or) else 3
    if isinstance(node, ast.IfExp):
        return 1
    if isinstance(node, ast.Await):
        return 14
    return None


def _reads_as_one_operand(node: ast.expr, replaced: ast.expr, parent: ast.AST) -> bool:
    """Whether `node` bare in `replaced`'s place is one operand of `parent` to Python and plainly to a
    reader too: a product in a sum, arithmetic in a comparison, a comparison in `and`/`or`/`not`, a
    left operand of the same operator. Elsewhere the parentheses stay even where Python would not
    need them (`a & (n - 1)`, `-(a ** b)`, `(a // b) * c`)."""
    inner, outer = _binding(node), _binding(parent)
    if inner is None or outer is None:
        return False
    if isinstance(parent, (ast.BoolOp, ast.Compare, ast.IfExp, ast.Await)) or isinstance(parent, ast.UnaryOp) \
            and isinstance(parent.op, ast.Not):
        return inner > outer  # and/or levels and comparisons stay apart: they flatten or chain
    if not isinstance(parent, ast.BinOp) or isinstance(parent.op, ast.Pow):
        return False
    if isinstance(node, ast.UnaryOp):
        return not isinstance(node.op, ast.Not)  # `a * -b`
    if not isinstance(node, ast.BinOp):
        return False
    if isinstance(node.op, ast.Pow):
        return isinstance(parent.op, _ADDITIVE + _MULTIPLICATIVE)  # `a * b ** 2`
    if isinstance(node.op, _MULTIPLICATIVE) and isinstance(parent.op, _ADDITIVE):
        return True
    same_level = type(node.op) is type(parent.op) or isinstance(node.op, _ADDITIVE) and isinstance(parent.op, _ADDITIVE)
    return same_level and parent.left is replaced  # `a - b + c`, `a * b * c`


def needs_parentheses(rule: "Rule", node: ast.expr, replaced: ast.expr) -> bool:
    """Whether `node`'s text must be parenthesized when it takes `replaced`'s place."""
    parent = rule.model.parent(replaced)
    if isinstance(node, ast.Constant) and type(node.value) is int and isinstance(parent, ast.Attribute):
        return True  # `4.bit_length()` would read as a float
    if isinstance(node, _ATOMIC) or is_parenthesized(rule.text(node)):
        return False
    if isinstance(parent, ast.Call) and replaced in parent.args:
        return isinstance(node, ast.NamedExpr)
    if isinstance(node, ast.NamedExpr):  # `x = y := 1` does not parse
        return True
    if isinstance(parent, _OPEN_CONTEXTS):
        return False
    if isinstance(parent, (ast.Tuple, ast.List, ast.Set)) and not isinstance(node, ast.Starred):
        return isinstance(node, (ast.Lambda, ast.IfExp)) and isinstance(parent, ast.Tuple)
    if isinstance(parent, (ast.BinOp, ast.UnaryOp, ast.Compare, ast.BoolOp, ast.IfExp, ast.Await)):
        return not _reads_as_one_operand(node, replaced, parent)
    return True


def is_parenthesized(text: str) -> bool:
    """Whether an expression's text is one parenthesized whole: its first `(`
    closes at its last character (`(a, b)`, not `(a) + b` nor `(a), b`)."""
    if not (text.startswith("(") and text.endswith(")")):
        return False
    import io
    import tokenize  # imported here: only fixes of expressions starting with `(` need it

    lines = text.split("\n")
    last = (len(lines), len(lines[-1]))
    depth = 0
    try:
        for token in tokenize.generate_tokens(io.StringIO(text).readline):
            if token.type != tokenize.OP:
                continue
            if token.string in "([{":
                depth += 1
            elif token.string in ")]}":
                depth -= 1
                if depth == 0:
                    return token.end == last
    except (tokenize.TokenError, SyntaxError):
        pass
    return False  # cannot tell: parentheses added to a whole are harmless


def replace_with_argument(rule: "Rule", call: ast.Call, argument: ast.expr) -> Edit:
    """`wrap(x)` -> `x`, keeping `x`'s text (comments inside it included)."""
    text = rule.text(argument)
    if needs_parentheses(rule, argument, call):
        text = f"({text})"
    return rule.replace(call, text)


def replace_callee(rule: "Rule", call: ast.Call, callee: str) -> Edit:
    """`old.name(args)` -> `callee(args)`; arguments and their layout are untouched."""
    return rule.replace(call.func, callee)


def as_method_receiver(rule: "Rule", node: ast.expr) -> str:
    """Text of `node` usable before `.method()`."""
    text = rule.text(node)
    if isinstance(node, (ast.Name, ast.Attribute, ast.Call, ast.Subscript)) or is_parenthesized(text):
        return text
    return f"({text})"


def reference(rule: "Rule", qualified: str, alias: str, module: str) -> tuple[str, list[Edit]] | None:
    """Spell `qualified` (e.g. `flydsl.expr.max`) the way this file can reach it.

    Uses an existing import when one reaches it (`fx.max`); otherwise adds
    `import <module> as <alias>` after the module's imports, unless `alias` is
    taken, in which case there is no safe spelling and the caller offers no fix.
    """
    local = rule.model.local_name_for(qualified)
    if local is not None:
        return local, []
    if rule.model.is_bound_anywhere(alias):
        return None
    tail = qualified[len(module) + 1 :] if qualified.startswith(module + ".") else None
    if tail is None:
        return None
    return f"{alias}.{tail}", [_import_edit(rule, f"import {module} as {alias}")]


def fx_wrap(rule: "Rule", node: ast.AST, fx_class: str, argument: ast.expr,
            suffix: str = "") -> tuple[str, list[Edit]] | None:
    """`fx.<fx_class>(argument)<suffix>` in place of `node`: its text, spelled as the file reaches
    flydsl.expr (`reference`), and the edits; None when there is no safe spelling."""
    spelled = reference(rule, f"flydsl.expr.{fx_class}", "fx", "flydsl.expr")
    if spelled is None:
        return None
    callee, imports = spelled
    text = f"{callee}({rule.text(argument)}){suffix}"
    return text, [rule.replace(node, text), *imports]


def run_time_constant_fix(rule: "Rule", node: ast.AST, fx_class: str, number: ast.expr):
    """`node`, a raw constant of the Python number `number`, -> `fx.<fx_class>(number).ir_value()`: a
    compile-time fx value's `.ir_value()` is `arith_const(number, type)`, the same `arith.constant`
    and the same caster-made ArithValue (signed=None) (expr/numeric.py `Numeric.to`,
    expr/utils/arith.py, 0.3.0 to 0.5.0). It stays a run-time value, never folds."""
    built = fx_wrap(rule, node, fx_class, number, ".ir_value()")
    if built is None:
        return None
    text, edits = built
    return rule.make_fix(edits, f"Replace with `{text}`: the same run-time constant")


def _import_edit(rule: "Rule", statement: str) -> Edit:
    """The import on its own line after the module's docstring and leading imports; with neither,
    after a leading comment block that a blank line ends (a license header stays first)."""
    body = rule.model.tree.body
    row = None
    for index, stmt in enumerate(body):
        is_docstring = index == 0 and isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant) and isinstance(stmt.value.value, str)
        if is_docstring or isinstance(stmt, (ast.Import, ast.ImportFrom)):
            row = stmt.end_lineno + 1
        else:
            break
    if row is None:
        lines = rule.context.source.lines
        header = next((number for number, line in enumerate(lines) if not line.startswith("#")), len(lines))
        row = header + 1 if header and header < len(lines) and not lines[header].strip() else 1
    return Edit(Position(row, 0), Position(row, 0), statement + "\n")
