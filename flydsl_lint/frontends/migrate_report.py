"""What `flydsl-lint migrate` did or would do: the dry-run plan, the terminal summary, Markdown and JSON.

The JSON schema (version 1) is documented in docs/migrate.md.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

from .migrate import (APPLIED_UNPROVEN, KEPT, NOT_PROVEN, REFUSED, REVERTED, Candidate, ModuleOutcome, ModulePlan,
                      worst_case_attempts)

SCHEMA_VERSION = 1
STATUSES = (KEPT, REVERTED, NOT_PROVEN, APPLIED_UNPROVEN)  # of the candidate fixes


@dataclass
class MigrateReport:
    outcomes: list[ModuleOutcome]
    archs: list[str]

    def counts(self) -> dict[str, int]:
        """Candidate fixes per status, then the refused codemod sites."""
        found = dict.fromkeys(STATUSES, 0)
        for outcome in self.outcomes:
            for candidate in outcome.plan.candidates:
                found[outcome.status_of(candidate.family)] += 1
        found[REFUSED] = sum(len(o.plan.refused) for o in self.outcomes)
        return found

    @property
    def exit_code(self) -> int:
        """0 when every candidate fix was kept; 1 when any was reverted, not proven or applied unproven.
        A refused site is no failure of migrate (like ruff's `--fix-only`, which does not exit
        non-zero for what it cannot fix): `flydsl-lint check` still reports it."""
        counts = self.counts()
        return 0 if counts[KEPT] == sum(counts[s] for s in STATUSES) else 1


def _rows(outcome: ModuleOutcome) -> list[tuple[Candidate, str]]:
    """The module's candidates and refused sites with their status, in source order."""
    rows = [(c, outcome.status_of(c.family)) for c in outcome.plan.candidates]
    rows += [(c, REFUSED) for c in outcome.plan.refused]
    return sorted(rows, key=lambda row: (row[0].line, row[0].column, row[0].code))


def module_status(outcome: ModuleOutcome) -> str:
    statuses = {outcome.status_of(f) for f in outcome.plan.families}
    if not statuses:
        return REFUSED  # only refused sites
    if statuses == {KEPT}:
        return "migrated"
    if KEPT in statuses:
        return "partly migrated"
    return statuses.pop() if len(statuses) == 1 else REVERTED


def _comparison_dict(c) -> dict:
    return {"kernel": c.kernel, "arch": c.arch, "test_id": c.test_id, "verdict": c.verdict, "side": c.side,
            "change": c.change, "message": c.message.splitlines()[0] if c.message else "",
            "resource_deltas": {name: list(pair) for name, pair in c.resource_deltas.items()},
            "histogram_deltas": {name: list(pair) for name, pair in c.histogram_deltas.items()},
            "isa_diff": c.isa_diff}


def _module_dict(outcome: ModuleOutcome) -> dict:
    plan = outcome.plan
    return {
        "path": plan.relative,
        "status": module_status(outcome),
        "tests": plan.tests,
        "probes": plan.probes,
        "families": {f: outcome.status_of(f) for f in plan.families},
        "verify_runs": sum(a.verified for a in outcome.attempts),
        "attempts": [{"families": list(a.families), "result": a.result, "reason": a.reason, "notes": a.notes,
                      "breaking": [_comparison_dict(c) for c in a.breaking]} for a in outcome.attempts],
        "diagnostics": [_diagnostic_dict(c, status) for c, status in _rows(outcome)],
    }


def _diagnostic_dict(c: Candidate, status: str) -> dict:
    found = {"code": c.code, "line": c.line, "column": c.column, "message": c.message, "family": c.family,
             "status": status}
    if status == REFUSED:
        found["reason"] = c.refusal
    return found


def render_json(report: MigrateReport) -> str:
    return json.dumps({"version": SCHEMA_VERSION, "archs": report.archs, "summary": report.counts(),
                       "modules": [_module_dict(o) for o in report.outcomes]}, indent=2) + "\n"


def _family_reason(outcome: ModuleOutcome, family: str) -> str:
    """Why a family was not kept: the last attempt that tried it and failed."""
    if not outcome.plan.covered:
        return "no test or probe imports this module"
    for attempt in reversed(outcome.attempts):
        if family in attempt.families and not attempt.proven:
            return attempt.reason
    return ""


def _counts_sentence(counts: dict[str, int]) -> str:
    return ", ".join(f"{counts[s]} {s}" for s in STATUSES) + f" fixes; {counts[REFUSED]} codemod sites refused."


def render_markdown(report: MigrateReport) -> str:
    counts = report.counts()
    lines = ["# flydsl-lint migrate", "",
             f"Archs {', '.join(report.archs)}: {_counts_sentence(counts)}", "",
             "| module | status | tests and probes | families |", "|---|---|---|---|"]
    for outcome in report.outcomes:
        plan = outcome.plan
        covering = ", ".join(f"`{t}`" for t in plan.tests + plan.probes) or "none"
        families = _family_statuses(outcome, ": ")
        lines.append(f"| `{plan.relative}` | {module_status(outcome)} | {covering} | {families} |")
    lines.append("")
    for outcome in report.outcomes:
        lines += [f"## `{outcome.plan.relative}`", "", "| line | code | status | message |", "|---|---|---|---|"]
        lines += [f"| {c.line}:{c.column} | {c.code} | {status} | {c.message} |" for c, status in _rows(outcome)]
        lines.append("")
        for family in outcome.plan.families:
            reason = _family_reason(outcome, family) if outcome.status_of(family) != KEPT else ""
            if reason:
                lines.append(f"- {family} {outcome.status_of(family)}: {reason}")
        notes = sorted({note for a in outcome.attempts if a.proven and set(a.families) <= set(outcome.kept)
                        for note in a.notes})
        lines += [f"- note: {note}" for note in notes]
        for attempt in outcome.attempts:
            for c in attempt.breaking:
                if c.isa_diff:
                    lines += ["", f"<details><summary>ISA diff with {', '.join(attempt.families)}: {c.kernel} "
                                  f"[{c.arch}] {c.test_id}</summary>", "", "```diff", *c.isa_diff, "```", "", "</details>"]
        lines.append("")
    return "\n".join(lines)


def render_terminal(report: MigrateReport) -> str:
    lines = []
    for outcome in report.outcomes:
        families = _family_statuses(outcome, " ")
        lines.append(f"{outcome.plan.relative}: {module_status(outcome)} ({families})")
        for family in outcome.plan.families:
            reason = _family_reason(outcome, family) if outcome.status_of(family) != KEPT else ""
            if reason:
                lines.append(f"  {family}: {reason}")
        for attempt in outcome.attempts:
            if attempt.proven and set(attempt.families) == set(outcome.kept):
                lines += [f"  note: {note}" for note in attempt.notes]
        lines += _refused_lines(outcome.plan)
    lines.append(_counts_sentence(report.counts()))
    return "\n".join(lines)


def _family_statuses(outcome: ModuleOutcome, separator: str) -> str:
    """`FLY1: kept, FLY5: reverted, 2 refused` (the separator between family and status)."""
    plan = outcome.plan
    return ", ".join([f"{f}{separator}{outcome.status_of(f)}" for f in plan.families]
                     + ([f"{len(plan.refused)} refused"] if plan.refused else []))


def _refused_lines(plan: ModulePlan) -> list[str]:
    return [f"  refused {c.code} at {c.line}:{c.column}: {c.refusal}" for c in plan.refused]


def render_plan(modules: list[ModulePlan], archs: list[str]) -> str:
    """--dry-run: what would be tried, and the most verify runs it can take; nothing is compiled or written."""
    lines = [f"archs: {', '.join(archs)}"]
    total = 0
    for module in modules:
        if not module.candidates:
            lines.append(f"{module.relative}: no fixes, {len(module.refused)} refused")
            lines += _refused_lines(module)
            continue
        runs = worst_case_attempts(len(module.families)) if module.covered else 0
        total += runs
        per_family = ", ".join(f"{f} ({sum(c.family == f for c in module.candidates)})" for f in module.families)
        lines.append(f"{module.relative}: {len(module.candidates)} fixes: {per_family}")
        covering = module.tests + module.probes
        lines.append(f"  proven by: {', '.join(covering)}" if covering else "  proven by: nothing (not proven: left unchanged unless --unproven)")
        lines.append(f"  verify runs: at most {runs}")
        lines += _refused_lines(module)
    with_fixes = sum(bool(m.candidates) for m in modules)
    refused = sum(len(m.refused) for m in modules)
    lines.append(f"{with_fixes} modules with fixes, at most {total} verify runs"
                 + (f"; {refused} codemod sites refused" if refused else ""))
    return "\n".join(lines)
