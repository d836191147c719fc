"""Rendering a verify run: terminal summary, JSON, Markdown, GitHub annotations."""

from __future__ import annotations

import json
import os
import sys
from collections import Counter
from dataclasses import asdict, dataclass, field
from pathlib import Path

from flydsl_lint.verify.capture import COMPILES_MANIFEST, IMPORT_ERROR, PROBE_LABEL, collected_test
from flydsl_lint.verify.compare import (
    IDENTICAL, NONDETERMINISTIC, SAME_BACKEND_INPUT, KernelComparison, Unverified, first_line,
)
from flydsl_lint.verify.plan import Plan

EXIT_PARITY = 0
EXIT_BROKEN = 1
EXIT_SETUP = 2

DEVICE_MODE_DISCLAIMER = (
    "device mode has only been exercised against a fake device; "
    "this project's CI never ran it on AMD GPU hardware"
)


def _count(number: int, noun: str) -> str:
    return f"{number} {noun}{'' if number == 1 else 's'}"


@dataclass
class KeptEvidence:
    """What ``--keep`` leaves of one side: where, and what is in it."""

    side: str
    source: str  # what was compiled: "commit ..., its worktree removed" or "working tree ..."
    directories: list[str]
    compilations: int
    isa_files: int
    logs: list[str]  # relative to their side's directory

    @classmethod
    def scan(cls, side: str, source: str, evidence_root: Path) -> "KeptEvidence":
        # Compile mode keeps <root>/<side>/<arch>, device mode <root>/gpu<N>/<side>.
        directories = sorted(evidence_root.glob(side)) + sorted(evidence_root.glob(f"gpu*/{side}"))
        files = [path for directory in directories for path in directory.rglob("*") if path.is_file()]
        return cls(
            side, source, [str(d) for d in directories],
            compilations=sum(p.read_bytes().count(b"\n") for p in files if p.name == COMPILES_MANIFEST),
            isa_files=sum(p.name.endswith("_final_isa.s") for p in files),
            logs=sorted(str(p.relative_to(d)) for d in directories for p in d.rglob("*.log")),
        )

    def line(self) -> str:
        return (f"kept {self.side} ({self.source}): {', '.join(self.directories) or '(nothing)'}: "
                f"{_count(self.compilations, 'compilation')}, {_count(self.isa_files, 'ISA file')} (*_final_isa.s), "
                f"logs {', '.join(self.logs) or '(none)'}")


@dataclass
class VerifyReport:
    plan: Plan
    comparisons: list[KernelComparison] = field(default_factory=list)
    device_findings: list = field(default_factory=list)  # device.DeviceFinding
    notes: list[str] = field(default_factory=list)
    unverified: list[Unverified] = field(default_factory=list)
    evidence_dir: Path | None = None
    kept: list[KeptEvidence] = field(default_factory=list)  # with --keep: one per side
    elapsed_seconds: float = 0.0

    @property
    def broken(self) -> list:
        return [c for c in self.comparisons if c.breaks_parity] + [f for f in self.device_findings if f.breaks_parity]

    @property
    def nondeterministic(self) -> list[KernelComparison]:
        """Specializations that compiled differently from themselves: they prove nothing either way."""
        return [c for c in self.comparisons if c.verdict == NONDETERMINISTIC]

    @property
    def exit_code(self) -> int:
        """1 when parity is broken; else 2 when a test could not be run here (a setup problem) or a
        kernel compiles differently from itself; else 0."""
        if self.broken:
            return EXIT_BROKEN
        return EXIT_SETUP if self.unverified or self.nondeterministic else EXIT_PARITY

    def unverified_tests(self) -> dict[tuple[str, str], list[str]]:
        """(test, reason) -> the archs it could not be run for, in report order."""
        grouped: dict[tuple[str, str], list[str]] = {}
        for item in self.unverified:
            grouped.setdefault((item.test, item.reason), []).append(item.arch)
        return grouped

    def verdict(self) -> str:
        if self.broken:
            return "parity broken"
        reasons = []
        if self.unverified:
            names = {item.test.split("::")[0] for item in self.unverified}
            probes = sum(name.startswith(PROBE_LABEL) for name in names)
            counts = [_count(count, what) for count, what in ((len(names) - probes, "test file"), (probes, "probe"))
                      if count]
            reasons.append(f"{' and '.join(counts)} could not be run here")
        if self.nondeterministic:
            count = _count(len(self.nondeterministic), "specialization")
            reasons.append(f"{count} compiled differently when captured again")
        return f"parity not verified: {'; '.join(reasons)}" if reasons else "parity holds"


NO_KERNEL_REASONS_SHOWN = 10
_IMPORT_ERRORS = ("ModuleNotFoundError", "ImportError", "E ModuleNotFoundError", "E ImportError")


def _outcome_reason(outcome: str, message: str) -> str:
    """Why one test or probe compiled no kernel, in a few words."""
    detail = first_line(message)
    if outcome == "passed":
        return "passed without compiling a kernel"
    if outcome == IMPORT_ERROR or (outcome == "error" and detail.startswith(_IMPORT_ERRORS)):
        outcome = "import error"
    return f"{outcome} ({detail.removeprefix('E ').strip()})" if detail else outcome


def _test_file(label: str) -> str:
    return collected_test(label).split("::")[0]


def no_kernel_compiled_message(plan: Plan, outcomes: dict[str, dict[str, tuple[str, str]]]) -> str:
    """One line naming, per arch and test, why no kernel was compiled: skipped
    (with pytest's reason), import or other error, no test ran, or passed
    without reaching a compile."""
    reasons, tally = [], Counter()
    for arch in plan.archs:
        ran = outcomes.get(arch, {})
        for label, (outcome, message) in sorted(ran.items()):
            why = _outcome_reason(outcome, message)
            reasons.append(f"[{arch}] {collected_test(label)}: {why}")
            tally[f"[{arch}] {why}"] += 1
        seen = {_test_file(label) for label in ran}
        missing = [test for test in plan.tests if test.split("::")[0] not in seen]
        reasons += [f"[{arch}] {test}: no test ran" for test in missing]
        tally[f"[{arch}] no test ran"] += len(missing)
    if not reasons:
        return "no kernel was compiled on either side (no test or probe recorded an outcome; see the logs with --keep)"
    hidden = len(reasons) - NO_KERNEL_REASONS_SHOWN
    shown = "; ".join(reasons[:NO_KERNEL_REASONS_SHOWN])
    if hidden > 0:
        # Past the first few, what the many have in common: each reason with how many it stopped.
        counted = ", ".join(f"{count} {why}" for why, count in tally.most_common() if count)
        shown += f"; and {hidden} more (see the logs with --keep); by reason: {counted}"
    return f"no kernel was compiled on either side: {shown}"


def _format_resources(deltas: dict) -> str:
    return ", ".join(f"{name} {old}->{new}" for name, (old, new) in deltas.items())


def _where(c: KernelComparison) -> str:
    occurrence = f" #{c.occurrence + 1}" if c.occurrence else ""
    return f"{c.test_id} [{c.arch}] {c.kernel}{occurrence}"


def _comparison_line(c: KernelComparison) -> str:
    line = f"{c.verdict:<13} {_where(c)}"
    if c.side:
        line += f" ({c.side}): {c.message.splitlines()[0] if c.message else ''}"
    if c.change:
        line += f"  {c.change}"
    elif c.resource_deltas:
        line += f"  resources: {_format_resources(c.resource_deltas)}"
    if c.message and not c.side:
        line += f"  note: {c.message.splitlines()[0]}"
    if c.histogram_deltas:
        line += f"  classes: {_format_resources(c.histogram_deltas)}"
    return line


def render_terminal(report: VerifyReport) -> str:
    plan = report.plan
    lines = [f"flydsl-lint-verify: {plan.mode} mode, {plan.base[:12]} -> {plan.head}, archs {','.join(plan.archs)}"]
    if plan.mode == "device":
        lines.append(f"note: {DEVICE_MODE_DISCLAIMER}")
    lines += [f"note: {n}" for n in plan.notes + report.notes]
    identical = sum(c.verdict == IDENTICAL for c in report.comparisons)
    same_input = sum(c.verdict == SAME_BACKEND_INPUT for c in report.comparisons)
    if report.comparisons:
        lines.append(f"{len(report.comparisons)} specializations compared, {identical} identical"
                     + (f", {same_input} with the same backend input" if same_input else ""))
    lines += [_comparison_line(c) for c in report.comparisons if c.verdict != IDENTICAL]
    lines += [f.summary() for f in report.device_findings if f.breaks_parity]
    lines += [f"not verified  {test} [{','.join(archs)}]: {reason}"
              for (test, reason), archs in report.unverified_tests().items()]
    if report.evidence_dir and not report.kept:
        lines.append(f"evidence kept in {report.evidence_dir}")
    lines += [kept.line() for kept in report.kept]
    lines.append(f"{report.verdict()} ({report.elapsed_seconds:.1f}s)")
    return "\n".join(lines)


def render_json(report: VerifyReport) -> str:
    return json.dumps(
        {
            "exit_code": report.exit_code,
            "plan": report.plan.as_dict(),
            "comparisons": [asdict(c) for c in report.comparisons],
            "device": [f.as_dict() for f in report.device_findings],
            "notes": report.notes,
            "unverified": [asdict(item) for item in report.unverified],
            "evidence_dir": str(report.evidence_dir) if report.evidence_dir else None,
            "kept": [asdict(kept) for kept in report.kept],
            "elapsed_seconds": round(report.elapsed_seconds, 2),
        },
        indent=2,
    )


def render_markdown(report: VerifyReport) -> str:
    plan = report.plan
    icon = {EXIT_BROKEN: ":x:", EXIT_SETUP: ":warning:"}.get(report.exit_code, ":white_check_mark:")
    status = f"{icon} {report.verdict()}"
    lines = [
        f"## flydsl-lint-verify: {status}",
        "",
        f"{plan.mode} mode, `{plan.base[:12]}` -> `{plan.head}`, archs {', '.join(plan.archs)}, "
        f"{len(plan.tests)} test files, {len(plan.probes)} probes",
        "",
    ]
    if plan.mode == "device":
        lines += [f"> {DEVICE_MODE_DISCLAIMER}", ""]
    if report.comparisons or report.unverified:
        lines += ["| verdict | test | arch | kernel | resources | instruction classes |", "|---|---|---|---|---|---|"]
        lines += [f"| not verified | `{test}` | {','.join(archs)} | | {reason} | |"
                  for (test, reason), archs in report.unverified_tests().items()]
        for c in report.comparisons:
            detail = c.message.splitlines()[0] if c.message else ""
            resources = c.change or _format_resources(c.resource_deltas) or detail
            lines.append(
                f"| {c.verdict}{f' ({c.side})' if c.side else ''} | `{c.test_id}` | {c.arch} | `{c.kernel}` "
                f"| {resources} | {_format_resources(c.histogram_deltas)} |"
            )
        lines.append("")
    for c in report.comparisons:
        if c.isa_diff:
            lines += [f"<details><summary>ISA diff: {_where(c)}</summary>", "", "```diff", *c.isa_diff, "```",
                      "", "</details>", ""]
    if report.device_findings:
        lines += ["| device check | result |", "|---|---|"]
        lines += [f"| {f.kind} | {f.summary()} |" for f in report.device_findings]
        lines.append("")
    lines += [f"- {n}" for n in plan.notes + report.notes]
    return "\n".join(lines) + "\n"


def _escape_annotation(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def render_github(report: VerifyReport) -> str:
    """Workflow-command annotations; the Markdown report also goes to $GITHUB_STEP_SUMMARY."""
    lines = []
    for c in report.comparisons:
        if c.breaks_parity:
            file = c.test_id.split("::")[0]
            file_arg = f"file={file}," if file.endswith(".py") else ""
            body = _comparison_line(c) + (f"\n{c.message}" if "\n" in c.message else "")
            lines.append(f"::error {file_arg}title=FlyDSL parity: {c.verdict}::{_escape_annotation(body)}")
    for f in report.device_findings:
        if f.breaks_parity:
            lines.append(f"::error title=FlyDSL device parity: {f.kind}::{_escape_annotation(f.summary())}")
    for c in report.nondeterministic:
        lines.append(f"::warning file={c.test_id.split('::')[0]},title=FlyDSL parity: not verified::"
                     f"{_escape_annotation(_comparison_line(c))}")
    for (test, reason), archs in report.unverified_tests().items():
        body = f"not verified [{','.join(archs)}]: {reason}"
        file = test.split("::")[0]
        lines.append(f"::warning file={file},title=FlyDSL parity: not verified::{_escape_annotation(body)}")
    for note in report.plan.notes + report.notes:
        lines.append(f"::notice title=flydsl-lint-verify::{_escape_annotation(note)}")
    summary_path = os.environ.get("GITHUB_STEP_SUMMARY")
    if summary_path:
        with open(summary_path, "a", encoding="utf-8") as fh:
            fh.write(render_markdown(report))
    lines.append(render_terminal(report))
    return "\n".join(lines)


RENDERERS = {"json": render_json, "markdown": render_markdown, "github": render_github}


class ProgressBar:
    """A single self-overwriting line on stderr, only when stderr is a terminal."""

    WIDTH = 30

    def __init__(self, stream=None):
        self.stream = stream or sys.stderr
        self.enabled = self.stream.isatty()
        self._drawn = False

    def update(self, done: int, total: int, label: str) -> None:
        if not self.enabled or total <= 0:
            return
        filled = self.WIDTH * done // total
        bar = "#" * filled + "-" * (self.WIDTH - filled)
        self.stream.write(f"\r[{bar}] {done}/{total} {label}\x1b[K")  # \x1b[K clears the rest of the line
        self.stream.flush()
        self._drawn = True

    def close(self) -> None:
        if self._drawn:
            self.stream.write("\r\x1b[K")
            self.stream.flush()
            self._drawn = False
