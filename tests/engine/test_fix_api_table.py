"""Fixes write only FlyDSL API that exists at the release they are offered for (issue 24).

rules.toml's `fix-api` names what each fix writes; flydsl_lint/data/flydsl_api.toml,
derived from the release wheels by scripts/derive_flydsl_api.py, says in which
releases each name exists.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from flydsl_lint.rules import all_rules
from flydsl_lint.engine.metadata import load_metadata
from flydsl_lint.engine.tomlcompat import tomllib
from flydsl_lint.engine.versions import Version
from flydsl_lint.rules.s3_arith import _METHODS, TYPED_ARITH
from flydsl_lint.rules.s3_math import MATH_WRAPPED
from tests.conftest import lint_text

API_TABLE = Path(__file__).resolve().parents[2] / "flydsl_lint" / "data" / "flydsl_api.toml"
API = tomllib.loads(API_TABLE.read_text(encoding="utf-8"))
RELEASES = [Version.parse(text) for text in API["releases"]]
NEWEST = RELEASES[-1]
METADATA = load_metadata()
FIXING = {code: meta for code, meta in METADATA.items() if meta.fix is not None}

# Rules whose fix-since is later than the first release with all their fix-api
# names. The names exist earlier; what else the fix relies on there is not in
# the table, so these stay as declared until someone checks them.
LATER_THAN_THE_NAMES_NEED = {
    # Set together with the §1/§1b rules; their fixes write fx.Index,
    # Numeric.ir_value (both from 0.1.5) or no name at all. Unverified.
    "FLY101", "FLY102", "FLY103", "FLY105", "FLY111", "FLY112", "FLY113",
    # The fix keeps `num_records_bytes=`, which make_buffer_tensor takes from 0.2.0
    # (test_fy201_needs_num_records_bytes).
    "FLY201",
    # Structural codemods: what they rely on is the rewriter's lowering of Python
    # control flow (range(..., init=), if, while), proven from 0.3.0, the oldest
    # supported release (tests/proofs/test_codemods_compile_identically.py).
    "FLY311", "FLY312", "FLY501", "FLY503",
    # The migrated LDS crashes the tracer before 0.4.2 (an index-typed
    # memref_load/memref_store coordinate), though the names exist earlier.
    "FLY401",
    # Their fixes rely on how typed operators, `.select` and raw ops treat fx
    # values, read from the 0.3.0-0.5.0 wheels and proven there (tests/proofs).
    "FLY341", "FLY342", "FLY343", "FLY344",
    # fx.Vector exists from 0.1.5; what its methods emit and that raw values are
    # ArithValues (ir.Values the raw ops take) is read from the 0.3.0-0.5.0 wheels
    # (data/flydsl_types.txt `vectors`) and proven there (tests/proofs).
    "FLY321",
}


def releases_in(spans: str) -> set[Version]:
    """The releases a table entry names: `0.3.2-`, `0.2.0-0.2.4`, `0.3.0`, joined with `, `."""
    found: set[Version] = set()
    for span in spans.split(","):
        first, dash, last = span.strip().partition("-")
        low = Version.parse(first)
        high = Version.parse(last) if last else NEWEST if dash else low
        found |= {release for release in RELEASES if low <= release <= high}
    return found


def has_name(name: str, release: Version) -> bool:
    return name in API["names"] and release in releases_in(API["names"][name])


def offered_from(meta) -> list[Version]:
    """The table's releases the checker offers the rule's fix for."""
    since = Version.parse(meta.fix_since) if meta.fix_since else None
    return [release for release in RELEASES if since is None or release >= since]


def test_releases_parse_as_spans():
    assert releases_in("0.3.2-") == {r for r in RELEASES if r >= Version.parse("0.3.2")}
    assert releases_in("0.2.0-0.2.1, 0.5.0") == {Version.parse("0.2.0"), Version.parse("0.2.1"), NEWEST}


def test_every_fixing_rule_says_what_its_fix_writes():
    undeclared = sorted(code for code, meta in FIXING.items() if meta.fix_api is None)
    assert undeclared == [], f"declare fix-api in rules.toml ([] for a fix that writes no FlyDSL name): {undeclared}"


@pytest.mark.parametrize("code", sorted(FIXING))
def test_fix_api_exists_from_fix_since_to_the_newest_release(code):
    meta = FIXING[code]
    missing = {name: [str(r) for r in offered_from(meta) if not has_name(name, r)] for name in meta.fix_api or ()}
    missing = {name: releases for name, releases in missing.items() if releases}
    assert missing == {}, f"{code} fix-since {meta.fix_since}: its fix writes names absent in {missing}"


def test_fix_since_is_no_later_than_the_names_need_except_where_known():
    later = set()
    for code, meta in FIXING.items():
        if not meta.fix_since:
            continue
        first = next(r for r in RELEASES if all(has_name(n, s) for n in meta.fix_api for s in RELEASES if s >= r))
        if Version.parse(meta.fix_since) > first:
            later.add(code)
    assert later == LATER_THAN_THE_NAMES_NEED


def test_fly201_needs_num_records_bytes():
    signatures = API["signatures"]["flydsl.expr.rocdl.make_buffer_tensor"]
    with_keyword = set().union(*(releases_in(s) for s, text in signatures.items() if "num_records_bytes" in text))
    assert min(with_keyword) == Version.parse(METADATA["FLY201"].fix_since)


@pytest.mark.parametrize("code, written", [
    ("FLY301", {f"flydsl.expr.{name}" for name in TYPED_ARITH.values()}),
    ("FLY302", {f"flydsl.expr.{name}" for name in _METHODS.values()}),
    ("FLY333", {f"flydsl.expr.{name}" for name in MATH_WRAPPED}),
    ("FLY701", {f"flydsl.expr.{all_rules()['FLY701'].replacement}"}),
    ("FLY702", {f"flydsl.expr.{all_rules()['FLY702'].replacement}"}),
])
def test_fix_api_lists_the_names_the_rule_code_writes(code, written):
    assert set(METADATA[code].fix_api) == written


def _fixing_cases():
    for code, rule in all_rules().items():
        if FIXING.get(code) and FIXING[code].fix_api:
            for index, case in enumerate(rule.invalid):
                if case.fixed is not None or case.suggested is not None:
                    yield pytest.param(code, case, id=f"{code}-{index}")


@pytest.mark.parametrize("code, case", list(_fixing_cases()))
def test_check_offers_no_fix_whose_api_the_target_lacks(code, case, tmp_path):
    """At each release of the table as the target, a fix is offered only if every
    name it writes exists there; otherwise the diagnostic stays and names the
    release the fix needs."""
    names = FIXING[code].fix_api
    for release in RELEASES:
        settings = {**case.settings, "target_version": release}
        found = [d for d in lint_text(case.source, tmp_path, name=case.path, select=(code,), **settings)
                 if d.code == code]
        assert found, f"{code} not reported with target {release}"
        offered = [d for d in found if d.fix is not None]
        absent = [name for name in names if not has_name(name, release)]
        assert not (offered and absent), f"{code} offers a fix writing {absent[:3]} ({len(absent)} absent) at {release}"
        if absent:
            assert any(f"fix needs FlyDSL >= {FIXING[code].fix_since}" in d.message for d in found)


_ENTRY = ('[rules.FLY301]\nname = "n"\nsection = "3"\nsummary = "s"\nmessage = "m"\nfix = "{fix}"\n'
          'fix-reason = "r"\nfix-api = {api}\n')


@pytest.mark.parametrize("fix, api, error", [
    ("safe", '"flydsl.expr.max"', "fix-api is a list of qualified FlyDSL names"),
    ("safe", "[1]", "fix-api is a list of qualified FlyDSL names"),
    ("none", '["flydsl.expr.max"]', 'this rule has fix = "none"'),
])
def test_rules_toml_rejects_a_malformed_fix_api(tmp_path, fix, api, error):
    path = tmp_path / "rules.toml"
    path.write_text(_ENTRY.format(fix=fix, api=api))
    with pytest.raises(ValueError, match=error) as raised:
        load_metadata(str(path))
    assert f"{path}: [rules.FLY301]" in str(raised.value)


def test_rules_toml_reads_fix_api(tmp_path):
    path = tmp_path / "rules.toml"
    path.write_text(_ENTRY.format(fix="safe", api='["flydsl.expr.max", "flydsl.expr.min"]'))
    assert load_metadata(str(path))["FLY301"].fix_api == ("flydsl.expr.max", "flydsl.expr.min")
