"""Rule documentation generated from rules.toml and the rule classes.

`python -m flydsl_lint.docs` writes docs/rules/*.md and docs/rules.md;
`--check` fails when the committed pages drift from their sources.
"""

from __future__ import annotations

import argparse
import inspect
import sys
import tempfile
from pathlib import Path

from .engine.config import Settings
from .engine.diagnostics import Diagnostic
from .engine.metadata import SECTIONS, load_metadata, load_redirects
from .engine.source import SourceFile
from .engine.target import releases
from .run.checker import Checker
from .rules import all_rules
from .rules._base import Invalid, Rule

_FIX_WORDS = {"safe": "Safe", "unsafe": "Unsafe (applied only with `--unsafe-fixes`)",
              "display-only": "Display-only (shown with `--diff`/`--show-fixes`, never applied)"}


def _example(rule: type[Rule]) -> Invalid:
    for case in rule.invalid:
        if case.fixed is not None or case.suggested is not None:
            return case
    return rule.invalid[0]


def reported(rule: type[Rule], case: Invalid) -> list[Diagnostic]:
    """What the checker reports for `case` under `rule` alone, in a throw-away project,
    for the newest known FlyDSL release."""
    with tempfile.TemporaryDirectory() as root:
        values = {"root": Path(root), "select": (rule.code,), "target_version": releases().known[-1],
                  "target_version_source": "docs", **case.settings}
        settings = Settings(**values)
        found = Checker(settings).check(SourceFile(str(Path(root) / case.path), case.source))
    return [diagnostic for diagnostic in found if diagnostic.code == rule.code]


def render_rule(rule: type[Rule]) -> str:
    meta = load_metadata()[rule.code]
    example = _example(rule)
    lines = [
        f"# {rule.code} {meta.name}",
        "",
        f"Guide section: {SECTIONS[meta.section].title}",
        "",
    ]
    if not meta.default:
        lines += [
            "**Off by default.** The guide lets this construct stay and asks only for a note, so the rule is",
            f"advisory: enable it with `extend-select = [\"{rule.code}\"]` (or `--extend-select {rule.code}`, or",
            "`select = [\"ALL\"]`). A prefix such as `FLY` or `FLY" + rule.code[3] + "` does not enable it.",
            "",
        ]
    lines += [
        "## What it does",
        "",
        f"Flags {meta.summary}.",
        "",
    ]
    if rule.only_in_flydsl_files:
        lines += ["Runs only in files that import flydsl (directly, or through a vendored legacy helper such as",
                  "`buffer_ops`): the project's other Python code (CUTLASS kernels, host scripts) is not checked.", ""]
    lines += [
        "## Why",
        "",
        inspect.cleandoc(rule.__doc__ or ""),
        "",
        "## Example",
        "",
        "```python",
        example.source.rstrip("\n"),
        "```",
        "",
    ]
    for diagnostic in reported(rule, example):  # the real message, not the rules.toml template
        lines += [f"Message (line {diagnostic.start.row}, column {diagnostic.start.col + 1}): {diagnostic.message}", ""]
    use_instead = example.fixed or rule.use_instead
    if use_instead:
        lines += ["## Use instead", "", "```python", use_instead.rstrip("\n"), "```", ""]
    if example.suggested and example.fixed is None:
        lines += ["## Suggested starting point (display-only)", "", "```python", example.suggested.rstrip("\n"), "```", ""]
    if meta.suggestion:
        pattern, template = meta.suggestion
        lines += [f"The suggestion rewrites the ast-grep pattern `{pattern}` as `{template}`.", ""]
    fix = _FIX_WORDS.get(meta.fix.value, meta.fix.value) if meta.fix else "No fix"
    lines += ["## Fix safety", "", f"{fix}. {meta.fix_reason}", ""]
    if meta.fix_since:
        lines += [f"The fix needs FlyDSL >= {meta.fix_since}; it is withheld for an older `target-version`.", ""]
    if meta.fix_api:
        names = ", ".join(f"`{name}`" for name in meta.fix_api)
        lines += [f"The fix writes {names} (each in every release it is offered for: `flydsl_lint/data/flydsl_api.toml`).", ""]
    if meta.candidate:
        lines += ["## Replaces", "", f"The guide's candidate search `{meta.candidate}`, with imports and aliases resolved.", ""]
    if rule.valid:
        lines += ["## Not flagged", "", "```python"]
        for case in rule.valid:
            lines += [getattr(case, "source", case).rstrip("\n"), ""]
        lines[-1:] = ["```", ""]
    return "\n".join(lines)


def render_index() -> str:
    metadata = load_metadata()
    lines = ["# Rules", "", "Generated from `rules.toml` and the rule classes by `python -m flydsl_lint.docs`.", "",
             "Fix: ✔ safe, ⚠ unsafe, 👁 display-only.", "",
             "| Code | Name | Section | Summary | Fix |", "| --- | --- | --- | --- | --- |"]
    marks = {"safe": "✔", "unsafe": "⚠", "display-only": "👁"}
    for code in all_rules():
        meta = metadata[code]
        mark = marks.get(meta.fix.value, "") if meta.fix else ""
        off = " (off by default)" if not meta.default else ""
        lines.append(f"| [{code}](rules/{code}.md) | {meta.name}{off} | §{meta.section} | {meta.summary} | {mark} |")
    return "\n".join(lines) + "\n"


def render_redirect(old: str, new: str) -> str:
    """The page left at a renamed code's old address."""
    name = load_metadata()[new].name
    return "\n".join([
        f"# {old} (renamed {new})",
        "",
        f"{old} is now [{new} {name}]({new}.md). ruff's flynt rules own FLY002 and reserve FLY001, so",
        "flydsl-lint's hygiene codes moved out of FLY00x. For one release the old code is still accepted",
        "in the configuration, on the command line (each with a one-line warning) and in `# noqa`",
        f"comments, where [FLY014](FLY014.md) offers to write {new}.",
        "",
    ])


def pages(docs: Path) -> dict[Path, str]:
    rendered = {docs / "rules" / f"{code}.md": render_rule(rule) for code, rule in all_rules().items()}
    rendered.update({docs / "rules" / f"{old}.md": render_redirect(old, new) for old, new in load_redirects().items()})
    rendered[docs / "rules.md"] = render_index()
    return rendered


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--docs", type=Path, default=Path(__file__).resolve().parent.parent / "docs")
    parser.add_argument("--check", action="store_true", help="fail if the pages differ from their sources")
    args = parser.parse_args(argv)
    expected = pages(args.docs)
    stale = sorted(p for p in (args.docs / "rules").glob("*.md") if p not in expected)
    drift = [p for p, text in expected.items() if not p.is_file() or p.read_text(encoding="utf-8") != text]
    if args.check:
        for path in drift + stale:
            print(f"{path}: out of date; run `python -m flydsl_lint.docs`", file=sys.stderr)
        return 1 if drift or stale else 0
    for path in stale:
        path.unlink()
    for path in drift:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(expected[path], encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
