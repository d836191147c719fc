"""Every rule's inline valid/invalid cases (Fixit style), run through the real engine."""

from __future__ import annotations

import pytest

from flydsl_lint.engine.diagnostics import Applicability
from flydsl_lint.engine.model import SemanticModel
from flydsl_lint.engine.source import SourceFile
from flydsl_lint.rules._base import Invalid, Valid
from flydsl_lint.rules import all_rules
from flydsl_lint.engine.metadata import load_metadata
from flydsl_lint.fixes.apply import apply_edits
from tests.conftest import fix_text, lint_text

RULES = all_rules()


def _cases(kind: str):
    for code, rule in RULES.items():
        for index, case in enumerate(getattr(rule, kind)):
            yield pytest.param(code, case, id=f"{code}-{kind}-{index}")


@pytest.mark.parametrize("code, case", list(_cases("valid")))
def test_valid_case_is_not_flagged(code, case, tmp_path):
    case = case if isinstance(case, Valid) else Valid(case)
    found = [d for d in lint_text(case.source, tmp_path, name=case.path, select=(code,), **case.settings) if d.code == code]
    assert found == []


@pytest.mark.parametrize("code, case", list(_cases("invalid")))
def test_invalid_case_is_flagged_and_fixed(code, case: Invalid, tmp_path):
    found = [d for d in lint_text(case.source, tmp_path, name=case.path, select=(code,), **case.settings) if d.code == code]
    assert len(found) == case.count, [f"{d.start.row}:{d.start.col} {d.message}" for d in found]
    for diagnostic in found:
        assert "{" not in diagnostic.message, "message placeholders left unfilled"
    if case.at is not None:
        assert (found[0].start.row, found[0].start.col + 1) == case.at
    if case.message is not None:
        assert found[0].message == case.message
    if case.suggested is not None:
        suggestions = [d.fix for d in found if d.fix and d.fix.applicability is Applicability.DISPLAY]
        assert len(suggestions) == 1
        assert apply_edits(case.source, list(suggestions[0].edits), "\n") == case.suggested
        assert fix_text(case.source, tmp_path, unsafe=True, name=case.path, select=(code,), **case.settings) == case.source
    if case.fixed is None:
        assert all(d.fix is None or d.fix.applicability is Applicability.DISPLAY for d in found)
        return
    fixed = fix_text(case.source, tmp_path, unsafe=case.unsafe, name=case.path, select=(code,), **case.settings)
    assert fixed == case.fixed
    assert fix_text(fixed, tmp_path, unsafe=True, name=case.path, select=(code,), **case.settings) == fixed, "a second fix pass changed the code"
    if case.unsafe:
        assert fix_text(case.source, tmp_path, unsafe=False, name=case.path, select=(code,), **case.settings) == case.source


def test_every_rule_has_metadata_and_cases():
    metadata = load_metadata()
    assert sorted(metadata) == sorted(RULES), "rules.toml and the rule classes must list the same codes"
    for code, rule in RULES.items():
        assert rule.valid and rule.invalid, f"{code} needs valid and invalid cases"
        assert (rule.__doc__ or "").strip(), f"{code} needs a docstring (its Why)"
        has_fix_case = any(case.fixed is not None or case.suggested is not None for case in rule.invalid)
        if metadata[code].fix is None:
            assert not has_fix_case, f"{code} declares no fix but a case expects one"
        else:
            assert has_fix_case, f"{code} declares a fix but no case shows it"


def test_a_good_sample_of_cases_says_where_and_what_it_reports():
    pinned = [code for code, rule in RULES.items() if any(case.at and case.message for case in rule.invalid)]
    assert len(pinned) >= 20, pinned


SCOPED_VALID = [pytest.param(code, case, id=f"{code}-valid-{index}") for code, rule in RULES.items()
                if rule.only_in_flydsl_files for index, case in enumerate(rule.valid)]


@pytest.mark.parametrize("code, case", SCOPED_VALID)
def test_a_valid_case_of_a_flydsl_only_rule_is_flydsl_code_or_shows_the_scope(code, case, tmp_path):
    """A rule that runs only in FlyDSL files passes any other file unread: a valid
    case without a FlyDSL import proves nothing unless importing FlyDSL makes it flagged."""
    case = case if isinstance(case, Valid) else Valid(case)
    source = SourceFile(case.path, case.source)
    if SemanticModel(source.tree).imports_flydsl():
        return
    found = lint_text("import flydsl\n" + case.source, tmp_path, name=case.path, select=(code,), **case.settings)
    assert {d.code for d in found} == {code}, "a case outside FlyDSL code must show what the scope leaves out"


@pytest.mark.parametrize("code", sorted(code for code, rule in RULES.items() if rule.only_in_flydsl_files))
def test_a_flydsl_only_rule_shows_a_file_outside_flydsl_is_not_flagged(code):
    cases = [case if isinstance(case, Valid) else Valid(case) for case in RULES[code].valid]
    assert any(not SemanticModel(SourceFile(c.path, c.source).tree).imports_flydsl() for c in cases)
