"""A rule's `call_names`/`call_modules`/`call_own_code` only save work: with every filter lifted,
each rule reports exactly the same over every rule's inline cases."""

from __future__ import annotations

from flydsl_lint.rules._base import Valid
from flydsl_lint.rules import all_rules
from tests.conftest import lint_text

RULES = all_rules()
FILTERED = [cls for cls in RULES.values()
            if cls.call_names is not None or cls.call_modules is not None or cls.call_own_code]


def _every_case():
    for rule in RULES.values():
        for case in [*rule.valid, *rule.invalid]:
            case = Valid(case) if isinstance(case, str) else case
            yield case.source, case.path, case.settings


def _report(tmp_path) -> list[list[tuple]]:
    return [[(d.code, d.start.row, d.start.col, d.message) for d in lint_text(source, tmp_path, name=path, **settings)]
            for source, path, settings in _every_case()]


def test_filters_change_no_diagnostic(tmp_path, monkeypatch):
    assert len(FILTERED) > 30  # most call rules declare what they look at
    filtered = _report(tmp_path)
    assert sum(map(len, filtered)) > 200  # the cases flag plenty: the comparison has something to compare
    for cls in FILTERED:
        monkeypatch.setattr(cls, "call_names", None)
        monkeypatch.setattr(cls, "call_modules", None)
        monkeypatch.setattr(cls, "call_own_code", False)
    assert _report(tmp_path) == filtered
