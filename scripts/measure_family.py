#!/usr/bin/env python3
"""Recall of a rule family on FlyDSL cleanup commits.

For each commit: archive the parent's `kernels/` into a temporary folder, lint
it with `flydsl-lint check --select <family>`, and check that every line the
commit removed that uses a legacy construct of the family (a regex over the
line's code, comments and strings blanked) carries a diagnostic of the family.
Import lines and `def` headers are not counted (rules flag uses). Nothing is
written into this repository; the FlyDSL history is read from a bare mirror.

    scripts/measure_family.py --repo /work/.mirror/ROCm+FlyDSL/repo \
        --select FLY4 --construct '\\b(SmemAllocator|SmemPtr)\\b|\\.(finalize|get_base)\\(' 7025256e 09987abd
"""

from __future__ import annotations

import argparse
import ast
import io
import json
import re
import subprocess
import sys
import tarfile
import tempfile
import tokenize
from pathlib import Path

PRESETS = {
    "FLY2": r"\b(create_buffer_resource(_from_addr)?|buffer_load|buffer_store|buffer_atomic_\w+)\s*\(",
    "FLY35": r"\b(create_llvm_ptr|_create_llvm_ptr|get_llvm_ptr|element_ptr|IntToPtrOp)\s*\(",
    "FLY4": r"\b(SmemAllocator|SmemPtr)\b|\.(finalize|get_base)\s*\(",
}


def git(repo: str, *args: str) -> bytes:
    return subprocess.run(["git", "-C", repo, *args], check=True, capture_output=True).stdout


def removed_lines(repo: str, sha: str, under: str) -> dict[str, list[int]]:
    """Old-side line numbers of removed lines, per file."""
    diff = git(repo, "show", "--format=", "--unified=0", "--no-renames", sha, "--", under).decode("utf-8", "replace")
    result: dict[str, list[int]] = {}
    current = None
    row = 0
    for line in diff.splitlines():
        if line.startswith("--- "):
            current = line[6:] if line.startswith("--- a/") else None
        elif line.startswith("@@"):
            match = re.match(r"@@ -(\d+)(?:,(\d+))? ", line)
            row = int(match.group(1))
        elif line.startswith("-") and not line.startswith("---") and current:
            result.setdefault(current, []).append(row)
            row += 1
    return result


def code_rows(text: str) -> tuple[dict[int, str], set[int]]:
    """Each row's code with comments and string literals blanked; rows of
    import statements and def/class headers (not counted)."""
    rows = text.splitlines()
    blanked = {i + 1: list(line) for i, line in enumerate(rows)}
    try:
        for token in tokenize.generate_tokens(io.StringIO(text).readline):
            if token.type in (tokenize.COMMENT, tokenize.STRING) or token.type == getattr(tokenize, "FSTRING_MIDDLE", -1):
                (r0, c0), (r1, c1) = token.start, token.end
                for r in range(r0, r1 + 1):
                    chars = blanked.get(r)
                    if chars is None:
                        continue
                    lo = c0 if r == r0 else 0
                    hi = c1 if r == r1 else len(chars)
                    for c in range(lo, min(hi, len(chars))):
                        chars[c] = " "
    except (tokenize.TokenError, IndentationError, SyntaxError):
        pass
    skipped: set[int] = set()
    try:
        tree = ast.parse(text)
    except SyntaxError:
        tree = None
    if tree is not None:
        for node in ast.walk(tree):
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                skipped.update(range(node.lineno, node.end_lineno + 1))
            elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                skipped.add(node.lineno)
    return {r: "".join(chars) for r, chars in blanked.items()}, skipped


def _statement_text(text: str, row: int, span: int = 6) -> str:
    """The removed row and a few after it: a call's keywords often sit on later rows."""
    return "\n".join(text.splitlines()[row - 1 : row - 1 + span])


def lint(folder: Path, select: str, target: str, linter: str) -> list[dict]:
    run = subprocess.run(
        [linter, "check", str(folder), "--select", select, "--output-format", "json", "--exit-zero",
         "--target-version", target],
        capture_output=True, text=True,
    )
    if run.returncode != 0:
        sys.exit(f"flydsl-lint failed on {folder}:\n{run.stderr}")
    return json.loads(run.stdout or "[]")


def measure(args, sha: str) -> tuple[int, int, list[str]]:
    construct = re.compile(args.construct)
    keep = re.compile(args.keep) if getattr(args, "keep", None) else None
    removed = removed_lines(args.repo, sha, args.under)
    with tempfile.TemporaryDirectory(prefix=f"measure-{sha[:8]}-") as tmp:
        archive = git(args.repo, "archive", f"{sha}^", args.under)
        with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
            tar.extractall(tmp, filter="data") if sys.version_info >= (3, 12) else tar.extractall(tmp)
        diagnostics = lint(Path(tmp) / args.under, args.select, args.target_version, args.linter)
        covered: dict[str, set[int]] = {}
        for d in diagnostics:
            name = str(Path(d["filename"]).resolve().relative_to(Path(tmp).resolve()))
            covered.setdefault(name, set()).update(range(d["location"]["row"], d["end_location"]["row"] + 1))
        total = hit = 0
        misses = []
        for name, rows in sorted(removed.items()):
            path = Path(tmp) / name
            if not name.endswith(".py") or not path.is_file():
                continue
            text = path.read_text(encoding="utf-8", errors="replace")
            code, skipped = code_rows(text)
            for row in rows:
                if row in skipped or not construct.search(code.get(row, "")):
                    continue
                if keep is not None and keep.search(_statement_text(text, row)):
                    continue  # a construct the guide says to keep (e.g. non-default fastmath)
                total += 1
                if row in covered.get(name, ()):
                    hit += 1
                else:
                    misses.append(f"{sha[:8]} {name}:{row}: {text.splitlines()[row - 1].strip()}")
    return total, hit, misses


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("commits", nargs="+", help="commit shas (the parent of each is linted)")
    parser.add_argument("--repo", default="/work/.mirror/ROCm+FlyDSL/repo")
    parser.add_argument("--select", required=True, help="code prefix(es) passed to flydsl-lint --select")
    parser.add_argument("--construct", help="regex for a removed line's legacy construct (default: preset of --select)")
    parser.add_argument("--keep", help="regex for removed lines the guide says to keep; they are not counted")
    parser.add_argument("--under", default="kernels")
    parser.add_argument("--target-version", default="0.3.2")
    parser.add_argument("--linter", default=str(Path(sys.executable).with_name("flydsl-lint")))
    parser.add_argument("--show-misses", action="store_true")
    args = parser.parse_args(argv)
    if args.construct is None:
        key = args.select.split(",")[0]
        if key not in PRESETS:
            parser.error(f"no preset construct for {key}; pass --construct")
        args.construct = PRESETS[key]
    grand_total = grand_hit = 0
    all_misses = []
    for sha in args.commits:
        total, hit, misses = measure(args, sha)
        grand_total += total
        grand_hit += hit
        all_misses += misses
        rate = f"{100 * hit / total:.1f}%" if total else "n/a"
        print(f"{sha[:8]}  removed construct lines {total:4d}  flagged {hit:4d}  recall {rate}")
    rate = f"{100 * grand_hit / grand_total:.1f}%" if grand_total else "n/a"
    print(f"TOTAL     removed construct lines {grand_total:4d}  flagged {grand_hit:4d}  recall {rate}")
    if args.show_misses:
        print("\n".join(all_misses))
    return 0


if __name__ == "__main__":
    sys.exit(main())
