"""Issue 22: the fix engine under hostile input.

Safe fixes never change a file's comments (compared as tokens, not as
substrings of the new text), and choosing fixes and looking up comments stay
near-linear in the number of fixes and comments (counted, not timed).
"""

from __future__ import annotations

import io
import itertools
import random
import tokenize
from collections import Counter

import pytest

from flydsl_lint.run.checker import Checker
from flydsl_lint.engine.context import Context
from flydsl_lint.engine.diagnostics import Applicability, Diagnostic, Edit, Fix, Position, fix_applies
from flydsl_lint.engine.model import SemanticModel
from flydsl_lint.rules import all_rules
from flydsl_lint.engine.source import SourceFile
from flydsl_lint.fixes import apply
from flydsl_lint.run.fix_loop import fix_source
from flydsl_lint.fixes.apply import remove_unused_imports
from tests.conftest import fix_text, lint_text, make_settings


def comment_tokens(text: str) -> Counter:
    tokens = tokenize.generate_tokens(io.StringIO(text).readline)
    return Counter(token.string for token in tokens if token.type == tokenize.COMMENT)


# ----------------------------------------------------------- dropped comments
STRING_HOLDS_THE_COMMENT = 'import flydsl.expr as fx\nz = fx.Int32(fx.Int32(tbl["# hi"])  # hi\n)\n'
REPEATED_TODO = "import flydsl.expr as fx\nz = fx.Int32(fx.Int32(y  # TODO\n)  # TODO\n)\n"


@pytest.mark.parametrize("text", [STRING_HOLDS_THE_COMMENT, REPEATED_TODO], ids=["in-a-string", "repeated"])
def test_a_fix_dropping_a_comment_is_unsafe_even_if_the_new_text_spells_it(tmp_path, text):
    [diagnostic] = lint_text(text, tmp_path)
    assert diagnostic.code == "FLY111"
    assert diagnostic.fix.applicability is Applicability.UNSAFE
    assert diagnostic.fix.message.endswith("(drops a comment)")
    assert fix_text(text, tmp_path) == text  # safe --fix leaves it
    fixed = fix_text(text, tmp_path, unsafe=True)
    assert "fx.Int32(fx.Int32(" not in fixed  # --unsafe-fixes still applies it


def test_a_fix_re_emitting_every_comment_it_replaces_stays_safe(tmp_path):
    text = "import flydsl.expr as fx\nz = fx.Int32(fx.Int32(y  # TODO\n))  # TODO\n"
    [diagnostic] = lint_text(text, tmp_path)
    assert diagnostic.fix.applicability is Applicability.SAFE
    fixed = fix_text(text, tmp_path)
    assert fixed == "import flydsl.expr as fx\nz = fx.Int32(y  # TODO\n)  # TODO\n"
    assert comment_tokens(fixed) == comment_tokens(text)


@pytest.fixture
def double_wrap_rule(tmp_path):
    """FLY111 on a file with comments, to hand `make_fix` edits directly."""
    text = "import flydsl.expr as fx\nz = f(a,  # one\n      b)  # two\n"
    source = SourceFile(str(tmp_path / "k.py"), text)
    checker = Checker(make_settings(tmp_path))
    context = Context(source, SemanticModel(source.tree), checker.settings, checker.metadata)
    return all_rules()["FLY111"](context)


def _fix(rule, *edits):
    return rule.make_fix(list(edits), "Rewrite")


def test_make_fix_compares_comment_tokens_per_fix(double_wrap_rule):
    rule = double_wrap_rule
    span_with_one = (Position(2, 4), Position(3, 6))  # `f(a,  # one\n      b`
    assert _fix(rule, Edit(*span_with_one, "f(a,  # one\n      b")).applicability is Applicability.SAFE
    assert _fix(rule, Edit(*span_with_one, "f(a, b")).message == "Rewrite (drops a comment)"
    assert _fix(rule, Edit(*span_with_one, 'f(a, "# one"\n      b')).applicability is Applicability.UNSAFE
    # A comment moved from one edit of the fix to another is kept.
    moved = _fix(rule, Edit(*span_with_one, "f(a,\n      b"), Edit(Position(3, 7), Position(3, 7), "  # one\n"))
    assert moved.applicability is Applicability.SAFE
    # Adding a comment changes the file's comments too.
    assert _fix(rule, Edit(Position(2, 4), Position(2, 5), "g  # new\n")).applicability is Applicability.UNSAFE
    # Cutting into a comment, or inserting inside one, cannot keep it.
    assert _fix(rule, Edit(Position(2, 11), Position(2, 13), "")).applicability is Applicability.UNSAFE
    assert _fix(rule, Edit(Position(3, 12), Position(3, 12), "x")).applicability is Applicability.UNSAFE
    # An edit that only touches the code beside a comment is not affected by it.
    assert _fix(rule, Edit(Position(3, 6), Position(3, 7), ")")).applicability is Applicability.SAFE
    assert _fix(rule, Edit(Position(3, 9), Position(3, 9), " ")).applicability is Applicability.SAFE


def test_removing_an_emptied_import_keeps_its_comment(tmp_path):
    text = "from flydsl.expr import arith  # legacy ops\nm = arith.maxnumf(a, b)\n"
    fixed = fix_text(text, tmp_path)
    assert fixed == "# legacy ops\nimport flydsl.expr as fx\nm = fx.maxnumf(a, b)\n"  # was `pass  # legacy ops`


@pytest.mark.parametrize("before, after, expected", [
    ("import os  # why\nuse(os)\n", "import os  # why\nuse(1)\n", "# why\nuse(1)\n"),
    ("if x:\n    import os  # why\nuse(os)\n", "if x:\n    import os  # why\nuse(1)\n", "if x:\n    pass  # why\nuse(1)\n"),
    # A comment inside the statement would go with it: the statement stays.
    ("from m import (  # why\n    a,\n)\nuse(a)\n",) + ("from m import (  # why\n    a,\n)\nuse(1)\n",) * 2,
    ("from m import (\n    a,  # why a\n)\nuse(a)\n",) + ("from m import (\n    a,  # why a\n)\nuse(1)\n",) * 2,
])
def test_removing_an_emptied_import_never_drops_a_comment(before, after, expected):
    assert remove_unused_imports(before, after, "\n") == expected


@pytest.mark.parametrize("block", ["if x:\n    pass\nelse:\n", "try:\n    pass\nfinally:\n",
                                   "for i in y:\n    pass\nelse:\n"])
def test_an_import_alone_in_an_else_or_finally_block_leaves_a_pass(block):
    before = f"{block}    import os\nuse(os)\n"
    assert remove_unused_imports(before, before.replace("use(os)", "use(1)"), "\n") == f"{block}    pass\nuse(1)\n"


# ------------------------------------------------------------- fix selection
def _naive_choose(diagnostics, unsafe):
    """The selection rule: in source order, a fix is taken unless it overlaps a chosen one."""
    chosen = []
    for diagnostic in sorted(diagnostics, key=lambda d: (d.start, d.code)):
        if fix_applies(diagnostic.fix, unsafe) and not any(diagnostic.fix.overlaps(c.fix) for c in chosen):
            chosen.append(diagnostic)
    return chosen


def _random_diagnostics(generator: random.Random, count: int) -> list[Diagnostic]:
    def position():
        return Position(generator.randint(1, 4), generator.randint(0, 6))

    diagnostics = []
    for _ in range(count):
        edits = []
        for _ in range(generator.randint(1, 3)):
            start = position()
            end = start if generator.random() < 0.4 else max(start, position())
            edits.append(Edit(start, end, "x"))
        applicability = generator.choice([Applicability.SAFE, Applicability.SAFE, Applicability.UNSAFE,
                                          Applicability.DISPLAY])
        first = min(edit.start for edit in edits)
        code = generator.choice(["FLY101", "FLY111", "FLY301"])
        diagnostics.append(Diagnostic(code, "m", "k.py", first, first, Fix(tuple(sorted(edits)), applicability)))
    return diagnostics


@pytest.mark.parametrize("seed", range(300))
def test_choose_takes_exactly_what_pairwise_overlap_checks_take(seed):
    generator = random.Random(seed)
    diagnostics = _random_diagnostics(generator, generator.randint(1, 12))
    unsafe = seed % 2 == 0
    assert apply.choose_fixes(diagnostics, unsafe) == _naive_choose(diagnostics, unsafe)


def test_insertions_at_one_point_race_and_touching_edits_do_not():
    def diagnostic(row, *edits):
        return Diagnostic("FLY111", "m", "k.py", Position(row, 0), Position(row, 0), Fix(edits, Applicability.SAFE))

    at = Position(1, 3)
    first = diagnostic(1, Edit(at, at, "a"))
    second = diagnostic(2, Edit(at, at, "b"))  # the same insertion point: not taken
    touching = diagnostic(3, Edit(Position(1, 0), at, "c"), Edit(at, Position(1, 5), "d"))
    inside = diagnostic(4, Edit(Position(1, 0), Position(1, 5), "e"))  # would swallow the insertion
    assert apply.choose_fixes([first, second, touching, inside], unsafe=False) == [first, touching]


def test_choosing_among_many_fixes_does_not_compare_every_pair(monkeypatch):
    calls = Counter()
    original = Edit.overlaps

    def counted(self, other):
        calls["edit"] += 1
        return original(self, other)

    monkeypatch.setattr(Edit, "overlaps", counted)
    fixes = 2000
    diagnostics = [Diagnostic("FLY111", "m", "k.py", Position(row, 4), Position(row, 9),
                              Fix((Edit(Position(row, 4), Position(row, 9), "x"),), Applicability.SAFE))
                   for row in range(1, fixes + 1)]
    assert len(apply.choose_fixes(diagnostics, unsafe=False)) == fixes
    assert calls["edit"] <= 4 * fixes  # pairwise checks were fixes**2 / 2


# ------------------------------------------------------------ comment look-up
class CountingList(list):
    """A list that counts the elements iterated over."""

    visits = 0

    def __iter__(self):
        for item in list.__iter__(self):
            CountingList.visits += 1
            yield item


def test_comment_lookups_do_not_scan_every_comment_per_call(tmp_path, monkeypatch):
    rows = 3000
    text = "import flydsl.expr as fx\n" + "".join(f"x{i} = fx.Int32(fx.Int32(y))  # c\n" for i in range(rows))
    source = SourceFile(str(tmp_path / "k.py"), text)
    checker = Checker(make_settings(tmp_path, select=("FLY111",)))
    found = Context.comments.func

    monkeypatch.setattr(Context, "comments", property(lambda self: self.__dict__.setdefault(
        "_counted", CountingList(found(self)))))
    CountingList.visits = 0
    assert len(checker.check(source)) == rows
    assert CountingList.visits <= 3 * rows  # one scan per call was rows**2


def test_comments_between_returns_the_comments_of_those_rows(tmp_path):
    text = "a = 1  # one\nb = '#'\n# three\n\nc = 2  # five\n"
    source = SourceFile(str(tmp_path / "k.py"), text)
    context = Context(source, SemanticModel(source.tree), make_settings(tmp_path), {})
    assert [c.text for c in context.comments_between(1, 5)] == ["# one", "# three", "# five"]
    assert [c.row for c in context.comments_between(2, 4)] == [3]
    assert context.comments_between(2, 2) == [] and context.comments_between(4, 4) == []
    assert [c.row for c in context.comments_between(5, 9)] == [5]


# ---------------------------------------------------------------- the fix path
def test_many_imports_emptied_in_many_scopes_are_removed_in_one_pass_over_them(tmp_path, monkeypatch):
    functions = 300
    text = "".join(f"def f{i}(a, b):\n    from flydsl.expr import arith as ar{i}\n    return ar{i}.maxnumf(a, b)\n"
                   for i in range(functions))
    calls = Counter()
    original = SemanticModel.is_bound_anywhere_else
    monkeypatch.setattr(SemanticModel, "is_bound_anywhere_else",
                        lambda self, binding: calls.update(["call"]) or original(self, binding))
    result = fix_source(SourceFile(str(tmp_path / "k.py"), text), Checker(make_settings(tmp_path)))
    assert result.new_text.count("fx.maxnumf(a, b)") == functions
    assert "import arith" not in result.new_text and result.new_text.count("def f") == functions
    assert calls["call"] == 0  # each call walked every scope: functions**2 in all


@pytest.mark.parametrize("text, checks", [
    ("import flydsl.expr as fx\nv = fx.Int32(a)\n", 1),  # nothing to fix: one check
    ("import flydsl.expr as fx\nv = fx.Int32(fx.Int32(a))\n", 2),  # a pass, then the check finding nothing
    ("from flydsl.expr import arith\nm = arith.maxnumf(a, b)\n", 3),  # ... and one after the import clean-up
])
def test_fixing_checks_the_final_text_once(tmp_path, monkeypatch, text, checks):
    checker = Checker(make_settings(tmp_path))
    checked = []
    original = checker.check
    monkeypatch.setattr(checker, "check", lambda source, **kw: checked.append(source.text) or original(source, **kw))
    result = fix_source(SourceFile(str(tmp_path / "k.py"), text), checker)
    assert len(checked) == checks and checked[-1] == result.new_text
    assert result.remaining == original(SourceFile(str(tmp_path / "k.py"), result.new_text))


# ---------------------------------------------- found by test_fuzz_fixes.py
@pytest.mark.parametrize("text, fixed", [
    # `(a) + b` starts with a parenthesis but is not parenthesized as a whole.
    ("from flydsl.expr.arith import ArithValue\nv = ArithValue((a) + b) * 2\n", "v = ((a) + b) * 2\n"),
    ("from flydsl.expr import arith\nc = arith.unwrap((a  # hi\n    ) >= b)\n", "c = ((a  # hi\n    ) >= b).ir_value()\n"),
    ("from flydsl.expr import arith\nc = arith.unwrap((a, b))\n", "c = (a, b).ir_value()\n"),
    ("from flydsl.expr import arith\nc = arith.unwrap((a)(b))\n", "c = (a)(b).ir_value()\n"),
])
def test_an_operand_starting_with_a_parenthesis_keeps_its_precedence(tmp_path, text, fixed):
    assert fix_text(text, tmp_path, unsafe=True) == fixed
