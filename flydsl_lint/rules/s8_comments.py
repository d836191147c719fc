"""§8 trim comments and dead code: banners, commented-out code, blank-line runs.

Every fix here deletes or rewrites comment lines and blank lines only, so the
fixed module has the same AST as before (tests/rules/test_s8_comments.py
proves it over a corpus). Docstrings are strings, never comments: untouched.
"""

from __future__ import annotations

import ast
import bisect
import io
import keyword
import re
import textwrap
import tokenize
import unicodedata
import warnings

from ..engine.diagnostics import Applicability, Edit, Position
from ..engine.source import Comment
from ._base import Invalid, Rule, register

# Characters a banner is drawn with (ASCII and the box-drawing dashes kernels use).
# `+` and `|` are left out on purpose: they draw tables and layout diagrams.
_FILL = frozenset("=-#*~_─━═—–")
_MIN_SEPARATOR = 8
# Three fill characters in a row inside a title: a table or an arrow, not a header.
_FILL_TRIPLE = re.compile("([" + re.escape("".join(sorted(_FILL))) + r"])\1\1")
_ALNUM = re.compile(r"[A-Za-z0-9]")
# Tool directives and pragmas: never commented-out code, never a banner.
_PRAGMA_RE = re.compile(
    r"^\s*(noqa|type\s*:|pragma|fmt\s*:|isort\s*:|pylint\s*:|mypy\s*:|pyright\s*:|ruff\s*:|flake8|nosec|yapf\s*:|"
    r"-\*-|!|SPDX|Copyright)",
    re.IGNORECASE,
)
# The pattern's first three characters, lowercased (`!` alone is a whole
# pragma). Ignoring case, an ASCII character matches only its own other case
# (non-ASCII `ſ`, `ı` or `K` may match more), so a comment whose first three
# characters are ASCII and none of these, nor `!` first, needs no match.
_PRAGMA_STARTS = frozenset({"noq", "typ", "pra", "fmt", "iso", "pyl", "myp", "pyr", "ruf", "fla", "nos", "yap", "-*-",
                            "spd", "cop"})


# The rules of this module run only in files that import FlyDSL: every case does.
_FX = "import flydsl.expr as fx\n"


def full_line_comments(rule: Rule) -> list[Comment]:
    """Comments that are alone on their line (no code before the `#`); once a file."""
    lines = rule.context.source.lines
    return rule.context.cache("s8.full_line", lambda: [c for c in rule.context.comments
                                                       if not lines[c.row - 1][: c.col].strip()])


def fill_edged_comments(rule: Rule) -> list[Comment]:
    """Full-line comments whose text after the `#` starts or ends with a fill
    character: the only ones FLY801 and FLY802 look at; once a file."""
    return rule.context.cache("s8.fill_edged", lambda: [
        c for c in full_line_comments(rule) if c.text.rstrip()[-1] in _FILL or c.text[1:].lstrip()[:1] in _FILL])


def delete_rows(rule: Rule, first: int, last: int) -> Edit:
    """An edit that removes physical rows first..last with their line breaks."""
    lines = rule.context.source.lines
    if last < len(lines):
        return Edit(Position(first, 0), Position(last + 1, 0), "")
    if first > 1:  # the final line has no line break: take the previous one
        return Edit(Position(first - 1, len(lines[first - 2])), Position(last, len(lines[last - 1])), "")
    return Edit(Position(first, 0), Position(last, len(lines[last - 1])), "")


def _is_blank(rule: Rule, row: int) -> bool:
    lines = rule.context.source.lines
    return 0 < row <= len(lines) and not lines[row - 1].strip() and row not in rule.model.string_spans


def _separator(text: str) -> bool:
    """`# =====`, `# -----`, `##########`, `# ─────`: fill characters only."""
    body = text.strip()
    if body[-1] not in _FILL:
        return False  # most comments: a fill line ends in fill
    if set(body) == {"#"}:
        return len(body) >= _MIN_SEPARATOR
    body = body[1:]
    if body[:2].strip() != body[:2].lstrip() or body.startswith("  "):
        return False  # the fill is indented inside a comment block: part of a diagram
    body = body.strip()
    return len(body) >= _MIN_SEPARATOR and set(body) <= _FILL


@register
class BannerSeparator(Rule):
    """A comment line drawn only with `=`, `-`, `#`, `*` or box-drawing dashes
    is an ASCII banner: it carries no information and the guide says to keep
    one concise header per section, not a frame around it. The title line of a
    boxed banner is kept (see FLY802 for a title padded with fill). Separator
    lines indented inside a comment block, or next to `|` table rows, are
    diagrams and are not flagged. The fix deletes the line (and one blank line
    when the separator stood alone between two blank lines)."""

    code = "FLY801"
    only_in_flydsl_files = True
    edits_comments = True  # deleting / rewriting comments is the point of this fix
    valid = [
        _FX + "# Softmax section\nx = 1\n",
        _FX + "# +------+------+\n# | lane | row  |\n# +------+------+\nx = 1\n",
        _FX + "# row layout:\n#   lane 0..31\n#   ----------\nx = 1\n",
        _FX + "x = 1  # ----------\n",
        _FX + "s = '''\n# ==========\n'''\n",
        _FX + "# --\nx = 1\n",
        _FX + "# | col 0 | col 1 |\n# -----------------\n# | a     | b     |\nx = 1\n",
        "# ==========================\n# CUTLASS epilogue\n# ==========================\nimport cutlass\n",  # not FlyDSL
    ]
    invalid = [
        Invalid(_FX + "# ==========================\n# Softmax\n# ==========================\nx = 1\n",
                fixed=_FX + "# Softmax\nx = 1\n", count=2),
        Invalid(_FX + "def f():\n    x = 1\n\n    # --------------------------------\n\n    return x\n",
                fixed=_FX + "def f():\n    x = 1\n\n    return x\n"),
        Invalid(_FX + "x = 1\n##########################\n", fixed=_FX + "x = 1\n"),
        Invalid(_FX + "# ────────────────────────\nx = 1\n", fixed=_FX + "x = 1\n"),
    ]

    def check_file(self) -> None:
        lines = self.context.source.lines
        by_row = {c.row: c for c in full_line_comments(self)}
        for comment in fill_edged_comments(self):  # a separator ends in fill
            if not _separator(comment.text):
                continue
            neighbours = [by_row.get(comment.row - 1), by_row.get(comment.row + 1)]
            if any(n is not None and "|" in n.text for n in neighbours):
                continue  # a table rule
            first = last = comment.row
            if _is_blank(self, comment.row - 1) and _is_blank(self, comment.row + 1):
                last += 1
            end_col = len(lines[comment.row - 1])
            fix = self.make_fix([delete_rows(self, first, last)], "Delete the banner line")
            self.report(start=Position(comment.row, comment.col), end=Position(comment.row, end_col), fix=fix)


def _fill_run(body: str, at_end: bool) -> int:
    """Length of the run of one fill character at the start (or end) of
    `body`; 0 unless it is two or longer."""
    edge = body[-1] if at_end else body[0]
    if edge not in _FILL:
        return 0
    length = len(body) - len(body.rstrip(edge) if at_end else body.lstrip(edge))
    return length if length >= 2 else 0


def _decorated_title(text: str) -> str | None:
    """The title of `# ---- title ----` / `# ── title ────`, else None."""
    body = text.strip()[1:]
    if body.startswith("#") or not body.strip():
        return None
    body = body.strip()
    if body[0] not in _FILL and body[-1] not in _FILL:
        return None  # undecorated on both sides
    if _ALNUM.search(body) is None:
        return None  # no title: fill and punctuation only
    # `# ---- title ----`, `# ── title ─────`, `# ===== title`: a title padded by runs
    # of one fill character (two or more); the title holds the letters and digits.
    lead = body[: _fill_run(body, at_end=False)]
    trail = body[len(body) - _fill_run(body, at_end=True):]
    title = body[len(lead): len(body) - len(trail)].strip()
    if not lead and not trail:
        return None
    # Decoration, not punctuation: a run of >= 3 on each decorated side, >= 6 in all,
    # and the title itself holds no long fill run (tables, arrows).
    # One rule-like run (>= 8) makes a banner; `# --- inputs ---` is a plain header.
    # Box-drawing dashes (`# ── title ──`) are decoration at any length; ASCII fill needs a rule-like run.
    boxed = bool(lead or trail) and set(lead + trail) <= set("─━═")
    if not boxed and ((lead and len(lead) < 2) or (trail and len(trail) < 3)
                      or max(len(lead), len(trail)) < _MIN_SEPARATOR):
        return None
    if not lead and len(title) < 3:
        return None
    if _FILL_TRIPLE.search(title) or "|" in title or "+" in title[:1]:
        return None
    if lead and not trail and len(lead) < 4:
        return None
    return title


@register
class DecoratedHeader(Rule):
    """A section header padded with long runs of `-`, `=`, `#` or box-drawing
    dashes (`# ──── Prologue ────────────`) is an ASCII banner around a header.
    The guide keeps one concise header per section: `# Prologue`. The fix
    rewrites the comment to its title; the code is untouched."""

    code = "FLY802"
    only_in_flydsl_files = True
    edits_comments = True  # deleting / rewriting comments is the point of this fix
    valid = [
        _FX + "# Prologue\nx = 1\n",
        _FX + "# a -- b\nx = 1\n",
        _FX + "# x = a - b  -- see the ISA note\nx = 1\n",
        _FX + "x = 1  # ---- trailing ----\n",
        _FX + "# --- \nx = 1\n",
        _FX + "# lane -> row ---> col\nx = 1\n",
        _FX + "#   ---- inside a diagram ----\nx = 1\n",
        _FX + "# --- inputs ---\nx = 1\n",
        _FX + "# ---- Helper: resolve page index ----\nx = 1\n",
        "import cutlass\n# ── Epilogue ────────────────────\nx = 1\n",  # not FlyDSL code
    ]
    invalid = [
        Invalid(_FX + "# ── Kernel geometry constants ────────────────────\nBLOCK = 64\n",
                fixed=_FX + "# Kernel geometry constants\nBLOCK = 64\n"),
        Invalid(_FX + "def f():\n    # ---------------- O store ----------------\n    return 1\n",
                fixed=_FX + "def f():\n    # O store\n    return 1\n"),
        Invalid(_FX + "# ── fast path (gfx950 D=128) ──\nx = 1\n", fixed=_FX + "# fast path (gfx950 D=128)\nx = 1\n"),
        Invalid(_FX + "# ============ runtime dispatch on bid_x < H ============\nx = 1\n",
                fixed=_FX + "# runtime dispatch on bid_x < H\nx = 1\n"),
    ]

    def check_file(self) -> None:
        lines = self.context.source.lines
        for comment in fill_edged_comments(self):  # a title is decorated at one end at least
            if comment.text[1:3].startswith("  "):
                continue  # indented inside a comment block: a diagram
            title = _decorated_title(comment.text)
            if title is None:
                continue
            end = Position(comment.row, len(lines[comment.row - 1].rstrip()))
            start = Position(comment.row, comment.col)
            fix = self.make_fix([Edit(start, end, f"# {title}")], "Keep the title only")
            self.report(start=start, end=end, fix=fix)


# ---------------------------------------------------------- commented-out code
_STRONG_CALL_NAMES = frozenset({"print", "breakpoint", "setattr", "delattr", "exec", "eval"})


def _has_dotted_call(node: ast.AST) -> bool:
    return any(
        isinstance(n, ast.Call) and (isinstance(n.func, ast.Attribute) or
                                     (isinstance(n.func, ast.Name) and n.func.id in _STRONG_CALL_NAMES))
        for n in ast.walk(node)
    )


def _statement_kind(statement: ast.stmt) -> str:
    """'strong' (unmistakably code), 'prose' (also a sentence), or 'neutral'."""
    if isinstance(statement, (ast.Import, ast.ImportFrom)):
        return "strong" if not isinstance(statement, ast.Import) or all("." in a.name or a.asname for a in statement.names) else "neutral"
    if isinstance(statement, (ast.If, ast.For, ast.While, ast.With, ast.FunctionDef, ast.AsyncFunctionDef,
                              ast.ClassDef, ast.Try, ast.AsyncFor, ast.AsyncWith)):
        return "strong"
    if isinstance(statement, ast.Expr):
        value = statement.value
        if isinstance(value, ast.Call) and _has_dotted_call(value):
            return "strong"
        if isinstance(value, (ast.Name, ast.Constant, ast.BoolOp, ast.Compare, ast.Tuple, ast.BinOp, ast.UnaryOp,
                              ast.Subscript, ast.List, ast.Set, ast.Attribute, ast.Starred)):
            return "prose"
        return "neutral"
    if isinstance(statement, (ast.Assign, ast.AugAssign)):
        targets = statement.targets if isinstance(statement, ast.Assign) else [statement.target]
        if statement.value is not None and _has_dotted_call(statement.value):
            return "strong"
        if any(isinstance(t, (ast.Attribute, ast.Subscript)) for t in targets) and not isinstance(statement.value, ast.Constant):
            return "neutral"
        return "neutral"
    if isinstance(statement, ast.AnnAssign):
        return "prose" if statement.value is None else ("strong" if _has_dotted_call(statement.value) else "neutral")
    if isinstance(statement, (ast.Return, ast.Raise, ast.Assert, ast.Delete)):
        return "strong" if _has_dotted_call(statement) else "neutral"
    return "neutral"  # pass / break / continue / global ...


# What each "strong" statement kind contains: a call's `(`, or the keyword of an
# import or compound statement. Words that merely end in one (`entry`) match
# too: a rare extra match only costs the full look.
_STRONG_KEYWORD = re.compile(r"(?:import|if|for|while|with|def|class|try)\b")


# A program never ends in one of these: an operator still missing its right
# operand, an unclosed bracket, or a `:` with no body after it (not `*`:
# `from m import *` ends in it).
_DANGLING = frozenset("+-/%=<>&|^~@:([{")


def _dangles(line: str) -> bool:
    """Whether a window ending with `line` is a syntax error, seen without
    parsing: the line has no quote and its code ends in a `_DANGLING` character
    (`-----`), or in a `.` after neither a digit (`1.`) nor a `.` (`...`), as
    sentences do. A string open at the line's start cannot close without a
    quote: also an error."""
    if "'" in line or '"' in line:
        return False
    code = line.split("#", 1)[0].rstrip(" \t\f")  # the comment and blanks after the last token
    if not code:
        return False
    return code[-1] in _DANGLING or (code[-1] == "." and len(code) > 1 and code[-2] not in "0123456789.")


def _parses(lines: list[str]) -> list[ast.stmt] | None:
    if _dangles(lines[-1]):
        return None  # checked in a few operations; a failing parse costs as much as a good one
    text = textwrap.dedent("\n".join(lines))
    if not text.strip() or text.startswith((" ", "\t")):
        return None
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            tree = ast.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    return tree.body


# Two names side by side (`the offset`) are a syntax error unless one is a
# (soft) keyword. A window of lines without quotes has no strings, so such a
# pair before a `#` means the window cannot parse: checked without parsing.
_KEYWORDS = frozenset(keyword.kwlist) | frozenset(keyword.softkwlist) | {"type", "match", "case", "_"}


def _by_first_letter(words: frozenset[str]) -> str:
    """An alternation of `words` that branches on their first letter: the regex
    engine then tries one group of words at a position, not every word."""
    rests: dict[str, list[str]] = {}
    for word in sorted(words):
        rests.setdefault(word[0], []).append(re.escape(word[1:]))
    return "|".join(first + (f"(?:{'|'.join(tails)})" if tails != [""] else "") for first, tails in rests.items())


# A name token that is no keyword; the leading lookahead keeps the keyword test
# off positions where no name starts.
_NAME = rf"(?=[A-Za-z_])(?!(?:{_by_first_letter(_KEYWORDS)})(?!\w))[A-Za-z_]\w*"
# Two such names with only blanks between them; the first starts a token (it is
# not an attribute, nor inside a number or a longer name).
_NAME_PAIR = re.compile(rf"(?<![\w.]){_NAME}[ \t]+{_NAME}")
_WORD_CHARS = re.compile(r"\w*")
_NEVER_IN_CODE = frozenset("$?`")  # outside strings and comments
_NO_STATEMENT_STARTS = tuple("=)]},;:|&^/%<>")


def _unstringed(line: str) -> str:
    """The part of a line tokenized as code when no string is open at its start:
    up to the first `#` or quote (a name touching the quote may be a string prefix)."""
    if "#" not in line and "'" not in line and '"' not in line:
        return line  # most lines: all code
    cut = len(line)
    for mark in "#'\"":
        found = line.find(mark)
        if 0 <= found < cut:
            cut = found
    code = line[:cut]
    if cut < len(line) and line[cut] != "#":
        code = code[: cut - _WORD_CHARS.match(code[::-1]).end()]  # drop the trailing name
    return code


def _never_parses(code: str) -> bool:
    """Code (see `_unstringed`) no program can contain: two non-keyword names
    separated only by blanks (`the offset`), or a character Python rejects."""
    if _NAME_PAIR.search(code):  # one search: a loop over the names costs several times more
        return True
    if not code.isascii():
        for char in code:
            if ord(char) > 127 and not ("a" + char).isidentifier() and not (
                    "a" + unicodedata.normalize("NFKC", char)).isidentifier():
                return True
    return not _NEVER_IN_CODE.isdisjoint(code)


def code_runs(texts: list[str]) -> list[tuple[int, int]]:
    """(first, last) index ranges of lines that are commented-out code.

    A run must parse as Python on its own, contain at least one statement that
    is unmistakably code (an import, a compound statement, a call of a dotted
    name), and none that also reads as a sentence or formula (`a and b`,
    `x == y`, a bare name). Formula comments such as `off = row * K + col`
    stay: they are the layout math the guide keeps.
    """
    joined = "\n".join(texts)
    if "(" not in joined and _STRONG_KEYWORD.search(joined) is None:
        return []  # no line can hold a strong statement: prose only
    runs: list[tuple[int, int]] = []
    index = 0
    count = len(texts)
    quoted = ["'" in text or '"' in text for text in texts]
    hopeless: list[bool | None] = [None] * count  # _never_parses of the line, on demand
    while index < count:
        found = None
        if texts[index].strip() and not texts[index].startswith((" ", "\t")):
            # The first line no window from `index` can parse through: no string
            # is open at its start (no quote above it) and its code part is invalid.
            barrier = index if texts[index].lstrip(" \t\f").startswith(_NO_STATEMENT_STARTS) else count
            for row in range(index, min(count, index + 60, barrier)):
                if hopeless[row] is None:
                    hopeless[row] = _never_parses(_unstringed(texts[row]))
                if hopeless[row]:
                    barrier = row
                    break
                if quoted[row]:
                    break
            # Windows holding the barrier line (no string can be open there) are syntax errors.
            for end in range(min(index + 60, barrier), index, -1):
                body = _parses(texts[index:end])
                if body is None:
                    continue
                kinds = [_statement_kind(s) for s in body]
                if "prose" not in kinds and "strong" in kinds:
                    found = end
                break  # the longest parsing run decides
        if found is None:
            index += 1
            continue
        runs.append((index, found - 1))
        index = found
    return runs


def fix_safety(lines: list[str]) -> Applicability:
    """How safe deleting a run of commented-out code is (the lines after `# `).

    Safe only for pure code: two statements or more (those nested in a
    compound statement count) and no words a person wrote around them, which
    are a comment inside the run (`x = f(y)  # see #123`) or an annotation
    label (`Previously: x = f(y)` parses as one). With such words the fix is
    display-only; a lone statement, which may be a remark quoting code, is
    unsafe."""
    text = textwrap.dedent("\n".join(lines))
    body = ast.parse(text).body  # the run parsed once already (code_runs)
    statements = [node for statement in body for node in ast.walk(statement) if isinstance(node, ast.stmt)]
    if any(isinstance(node, ast.AnnAssign) for node in statements) or _has_comment(text):
        return Applicability.DISPLAY
    return Applicability.SAFE if len(statements) >= 2 else Applicability.UNSAFE


def _has_comment(text: str) -> bool:
    if "#" not in text:
        return False
    return any(token.type == tokenize.COMMENT for token in tokenize.generate_tokens(io.StringIO(text).readline))


@register
class CommentedOutCode(Rule):
    """Commented-out code is dead: it is not compiled, drifts from the code
    around it and hides what the kernel really does; version control keeps
    old variants. Flagged only when a run of comment lines parses as Python and
    holds a statement no sentence looks like (an import, a compound statement,
    a call of a dotted name such as `fx.copy(...)`). Layout and offset formulas
    (`v_offset = (row * K + col) * 2`), ISA snippets, pragmas, URLs and code
    examples introduced by a sentence ending in `:` or `e.g.` are explanations
    the guide keeps and are never flagged.

    Pragmas, `noqa` directives and lines with a URL are never part of a run."""

    code = "FLY803"
    only_in_flydsl_files = True
    edits_comments = True  # deleting / rewriting comments is the point of this fix
    valid = [
        _FX + "# VRAM addressing: row = lane / 4, col = (lane % 4) * 16\nx = 1\n",
        _FX + "# v_offset = (row * QK_HEAD_DIM + col) * sizeof(fp8)\nx = 1\n",
        _FX + "# scale_val = amax * rstd * SQRT2 / FP8_MAX\nx = 1\n",
        _FX + "# noqa: F401\nimport os\n",
        _FX + "# type: ignore\nx = 1\n",
        _FX + "# See https://github.com/ROCm/FlyDSL/issues/1\nx = 1\n",
        _FX + "# v_mfma_f32_16x16x16_f16 v[0:3], v[4:5], v[6:7], v[0:3]\nx = 1\n",
        _FX + "# s_waitcnt vmcnt(0) lgkmcnt(0)\nx = 1\n",
        _FX + "# Traits and factory\nx = 1\n",
        _FX + "# min(kv_start + remain_kv, kv_end) == kv_end\nx = 1\n",
        _FX + "# The rewriter needs a typed value, e.g.:\n#     v = fx.Int32(5)\nx = 1\n",
        _FX + "# Usage:\n#   out = fx.copy(atom, src, dst)\nx = 1\n",
        _FX + "# sigmoid_x = 1 / (1 + exp(-x))\nx = 1\n",
        _FX + "# fmt: off\nx = [1,\n     2]\n# fmt: on\n",
        _FX + "x = 1  # y = fx.Int32(x)\n",
        _FX + "s = '''\n# y = fx.Int32(x)\n'''\n",
        "import torch\nx = 1\n# y = torch.zeros(4).cuda()\nz = x\n",  # not FlyDSL code
    ]
    invalid = [
        Invalid("import flydsl.expr as fx\nx = 1\n# all_below = fx.Boolean(False).ir_value()\ny = x\n",
                fixed="import flydsl.expr as fx\nx = 1\ny = x\n", unsafe=True,
                at=(3, 1), message='Commented-out code (1 line(s)): delete it; version control keeps old variants'),
        Invalid(_FX + "def f(n):\n    for i in range(n):\n        pass\n        # if i > 2:\n        #     rocdl.sched_dswr(1)\n    return n\n",
                fixed=_FX + "def f(n):\n    for i in range(n):\n        pass\n    return n\n"),
        Invalid(_FX + "x = 1\n# Old path:\n# from kernels.common import buffer_ops\n# rsrc = buffer_ops.create_buffer_resource(A)\ny = 2\n",
                fixed=_FX + "x = 1\n# Old path:\ny = 2\n"),
        Invalid(_FX + "x = 1\n# out = fx.copy(atom, a, b)  # see #123: slower on gfx942\ny = 2\n",
                suggested=_FX + "x = 1\ny = 2\n"),
    ]

    def check_file(self) -> None:
        lines = self.context.source.lines
        for block in self._blocks():
            texts = [c.text[2:] if c.text.startswith(" ", 1) else c.text[1:] for c in block]  # after `# `
            for first, last in code_runs(texts):
                if self._introduced_example(block, texts, first):
                    continue
                rows = (block[first].row, block[last].row)
                start = Position(rows[0], block[first].col)
                end = Position(rows[1], len(lines[rows[1] - 1]))
                fix = self.make_fix([delete_rows(self, rows[0], rows[1])], "Delete the commented-out code",
                                    fix_safety(texts[first: last + 1]))
                self.report(start=start, end=end, fix=fix, lines=rows[1] - rows[0] + 1)

    def _blocks(self) -> list[list[Comment]]:
        """Consecutive full-line comments at one column; pragmas split blocks."""
        blocks: list[list[Comment]] = []
        current: list[Comment] = []
        for comment in full_line_comments(self):
            body = comment.text[1:]
            lead = body.lstrip()
            start = lead[:3]
            pragma = (start.lower() in _PRAGMA_STARTS or not start.isascii() or start.startswith("!")
                      ) and _PRAGMA_RE.match(body) is not None
            skip = pragma or "://" in body or lead.startswith((">>>", "...", "$ "))  # `#!` is a pragma
            if current and (comment.row != current[-1].row + 1 or comment.col != current[-1].col or skip):
                blocks.append(current)
                current = []
            if not skip:
                current.append(comment)
        if current:
            blocks.append(current)
        return blocks

    @staticmethod
    def _introduced_example(block: list[Comment], texts: list[str], first: int) -> bool:
        """Code shown as an example: after a sentence ending in `:`/`e.g.`, or
        indented deeper than the prose around it."""
        if first == 0:
            return False
        before = texts[first - 1].rstrip()
        lowered = before.lower()
        if lowered.endswith(("e.g.", "e.g.:", "i.e.", "example:", "usage:", "like:", "such as:", "for example:",
                              "instead:", "equivalent:", "before:", "after:", "becomes:", "is:")):
            return True
        indent = len(texts[first]) - len(texts[first].lstrip())
        prose_indent = len(before) - len(before.lstrip())
        return indent > prose_indent


@register
class BlankLineRun(Rule):
    """Two or more blank lines in a row inside a function split one body into
    visual pieces without saying why; the guide removes such runs (PEP 8 and
    pycodestyle's E303 agree). Blank lines inside strings are content, never
    touched. The fix keeps one blank line."""

    code = "FLY804"
    only_in_flydsl_files = True
    edits_comments = True  # deleting / rewriting comments is the point of this fix
    valid = [
        _FX + "def f():\n    x = 1\n\n    return x\n",
        _FX + "def f():\n    return 1\n\n\ndef g():\n    return 2\n",
        _FX + "def f():\n    s = '''\n\n\n'''\n    return s\n",
        _FX + "x = 1\n\n\ny = 2\n",
        "def f():\n    x = 1\n\n\n    return x\n",  # not FlyDSL code
    ]
    invalid = [
        Invalid(_FX + "def f():\n    x = 1\n\n\n    return x\n", fixed=_FX + "def f():\n    x = 1\n\n    return x\n"),
        Invalid(_FX + "def f():\n    def g():\n        a = 1\n\n\n\n        return a\n    return g\n",
                fixed=_FX + "def f():\n    def g():\n        a = 1\n\n        return a\n    return g\n"),
    ]

    def check_file(self) -> None:
        lines = self.context.source.lines
        blank = [row for row, line in enumerate(lines, 1) if not line or line.isspace()]  # `not line.strip()`, cheaper
        blank_rows = set(blank)
        # A run is two blank rows or more: only rows next to another blank row can be in one.
        paired = [row for row in blank if row - 1 in blank_rows or row + 1 in blank_rows]
        if not paired:
            return
        # Function bodies open at their first statement's row and close after their last row;
        # a row is inside one when more have opened than closed by it (asked for paired rows only).
        functions = [f for kind in (ast.FunctionDef, ast.AsyncFunctionDef) for f in self.model.nodes(kind) if f.body]
        opens = sorted(function.body[0].lineno for function in functions)
        closes = sorted(function.end_lineno + 1 for function in functions)
        # Runs of blank rows in function bodies (outside strings), longer than one.
        runs: list[list[int]] = []
        for row in paired:
            if bisect.bisect_right(opens, row) > bisect.bisect_right(closes, row) and _is_blank(self, row):
                if runs and runs[-1][-1] == row - 1:
                    runs[-1].append(row)
                else:
                    runs.append([row])
        for run in runs:
            first, last = run[0], run[-1]
            if last > first:
                fix = self.make_fix([delete_rows(self, first + 1, last)], "Keep one blank line")
                self.report(start=Position(first + 1, 0), end=Position(last, 0), fix=fix, count=last - first + 1)
