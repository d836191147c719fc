"""Verdicts for one kernel specialization compiled before and after a change."""

from __future__ import annotations

import difflib
from collections.abc import Sequence
from dataclasses import dataclass, field

from flydsl_lint.verify.isa import KernelIsa, Resources

IDENTICAL = "identical"
CHANGED = "changed"
ONLY_BEFORE = "only-before"
ONLY_AFTER = "only-after"
COMPILE_ERROR = "compile-error"
# Changed, but a side compiled differently from itself when captured again: proves nothing either way.
NONDETERMINISTIC = "nondeterministic"
# The code objects differ, but the IR handed to the backend is the same on both sides (source
# locations aside): the change did not change what was compiled; the backend's output varies.
SAME_BACKEND_INPUT = "same-backend-input"

PARITY_BREAKING = frozenset({CHANGED, ONLY_BEFORE, ONLY_AFTER, COMPILE_ERROR})

DIFF_CONTEXT_LINES = 2
DIFF_MAX_LINES = 80


def first_line(message: str) -> str:
    """The line of an error message that names it."""
    lines = [line for line in message.splitlines() if line.strip()]
    # pytest's collection errors end with the line that names the real exception.
    return (lines[-1] if lines and lines[-1].startswith("E ") else lines[0] if lines else "").strip()


@dataclass
class KernelComparison:
    kernel: str
    arch: str
    verdict: str
    resource_deltas: dict[str, tuple[int | None, int | None]] = field(default_factory=dict)
    histogram_deltas: dict[str, tuple[int, int]] = field(default_factory=dict)
    isa_diff: list[str] = field(default_factory=list)
    # Identifies the specialization in a larger run: test id and compile order.
    test_id: str = ""
    occurrence: int = 0
    side: str = ""  # for compile-error: "before" or "after"
    message: str = ""
    change: str = ""  # for changed: what moved, in one line (see `describe_change`)

    @property
    def breaks_parity(self) -> bool:
        return self.verdict in PARITY_BREAKING


@dataclass(frozen=True)
class Unverified:
    """A test file (or test) that could not be run here, so it proves nothing either way."""

    test: str
    arch: str
    reason: str  # the import error's one line


def resource_deltas(before: Resources, after: Resources) -> dict[str, tuple[int | None, int | None]]:
    """Only the resources whose value moved, as (before, after)."""
    old, new = before.as_dict(), after.as_dict()
    return {name: (old[name], new[name]) for name in old if old[name] != new[name]}


def histogram_deltas(before: dict[str, int], after: dict[str, int]) -> dict[str, tuple[int, int]]:
    classes = sorted(set(before) | set(after))
    return {c: (before.get(c, 0), after.get(c, 0)) for c in classes if before.get(c, 0) != after.get(c, 0)}


def _first_difference(old: Sequence[str], new: Sequence[str]) -> int:
    """The index of the first line the two differ at (the shorter's length when one extends the other)."""
    return next((i for i, (a, b) in enumerate(zip(old, new)) if a != b), min(len(old), len(new)))


def _shown(instructions: Sequence[str], index: int) -> str:
    return f"`{instructions[index]}`" if index < len(instructions) else "(none)"


def describe_change(before: KernelIsa, after: KernelIsa, resources: dict[str, tuple[int | None, int | None]]) -> str:
    """One line saying what changed: the instruction count, where the
    normalized ISA first differs (1-based, with both sides' instruction), and
    the resources that moved."""
    old, new = before.instructions, after.instructions
    parts = [f"instructions {len(old)}->{len(new)}" if len(old) != len(new) else f"same {len(old)} instructions"]
    first = _first_difference(old, new)
    if old != new:
        parts.append(f"first difference at instruction {first + 1}: {_shown(old, first)} -> {_shown(new, first)}")
    if resources:
        parts.append("resources " + ", ".join(f"{name} {a}->{b}" for name, (a, b) in resources.items()))
    return "; ".join(parts)


def compare_kernels(before: KernelIsa | None, after: KernelIsa | None) -> KernelComparison:
    """The verdict for one specialization: its kernel's code (and resources), then the host code
    that launches it (`KernelIsa.host`): a kernel compiled alike but launched with another grid
    or other arguments is changed too."""
    comparison = _compare_kernel_code(before, after)
    if comparison.verdict not in (IDENTICAL, SAME_BACKEND_INPUT) or before.host is None or after.host is None \
            or before.host == after.host:
        return comparison
    diff = list(difflib.unified_diff(before.host, after.host, "before (host)", "after (host)",
                                     n=DIFF_CONTEXT_LINES, lineterm=""))
    first = _first_difference(before.host, after.host)
    return KernelComparison(
        before.name, before.arch, CHANGED, isa_diff=diff[:DIFF_MAX_LINES],
        message="; ".join(filter(None, ["the kernel compiles alike, but the host code launching it differs "
                                        "(its grid, block or arguments)", comparison.message])),
        change=f"host code, first difference at line {first + 1}: {_shown(before.host, first)} -> "
               f"{_shown(after.host, first)}")


def _compare_kernel_code(before: KernelIsa | None, after: KernelIsa | None) -> KernelComparison:
    if before is None and after is None:
        raise ValueError("nothing to compare")
    if before is None:
        return KernelComparison(after.name, after.arch, ONLY_AFTER, resource_deltas(Resources(), after.resources))
    if after is None:
        return KernelComparison(before.name, before.arch, ONLY_BEFORE, resource_deltas(before.resources, Resources()))
    notes = sorted(set(before.evidence_errors) | set(after.evidence_errors))
    message = "; ".join(notes)
    resources = resource_deltas(before.resources, after.resources)
    by_code_object = before.code_object is not None and after.code_object is not None
    if by_code_object:
        # The code object is what runs; the .s text is a second, separate ISA
        # run whose counts (e.g. .vgpr_count) are not reproducible.
        if before.code_object == after.code_object:
            return KernelComparison(before.name, before.arch, IDENTICAL, message=message)
        if before.backend_input is not None and before.backend_input == after.backend_input:
            same = ("the backend was given the same IR on both sides (source locations aside), "
                    "yet its code objects differ: the backend's own variation, not the change's")
            return KernelComparison(before.name, before.arch, SAME_BACKEND_INPUT, resource_deltas=resources,
                                    message="; ".join([same, *notes]),
                                    change=describe_change(before, after, resources))
    elif before.instructions == after.instructions and not resources:
        return KernelComparison(before.name, before.arch, IDENTICAL, message=message)
    diff = list(
        difflib.unified_diff(
            before.instructions, after.instructions, "before", "after", n=DIFF_CONTEXT_LINES, lineterm=""
        )
    )
    if by_code_object and not diff and not resources:
        notes.insert(0, "code objects differ; normalized ISA and resources are the same")
        message = "; ".join(notes)
    return KernelComparison(
        before.name,
        before.arch,
        CHANGED,
        resource_deltas=resources,
        histogram_deltas=histogram_deltas(before.histogram, after.histogram),
        isa_diff=diff[:DIFF_MAX_LINES],
        message=message,
        change=describe_change(before, after, resources),
    )
