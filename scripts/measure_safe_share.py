#!/usr/bin/env python3
"""How much of the §1 + §3 debt gets a safe fix (issue 25), rerunnable by anyone.

    python scripts/measure_safe_share.py share TREE [--target-version 0.5.0]
    python scripts/measure_safe_share.py edits TREE -n 60 --seed 25 [--codes FLY101,FLY341]
    python scripts/measure_safe_share.py fixed TREE [--target-version 0.5.0]
    python scripts/measure_safe_share.py reasons TREE [--target-version 0.5.0] [--codes FLY344]

`share` counts the §1 (FLY1xx) and §3 (FLY3xx: arith, scf, vector, memory,
math, llvm pointers, s_waitcnt) diagnostics outside the tuned kernels (the
tool's `tuned-kernels` default: their fixes are never applied unless asked for
by name, so none of their diagnostics counts, with a fix or without), and the
share of them whose fix is safe, per code. `edits` prints a random sample of
safe fixes (the line before, the edit after) to read against the guide.
`fixed` runs the safe `--fix` (which repeats until no fix applies) on a copy
of the tree and counts the same diagnostics before and after: the share the
fix removes, which may exceed `share` where one fix makes another's types known.
`reasons` groups the diagnostics without a safe fix by code, applicability and
the reason their message gives (its last parenthesis, names and positions
blanked), largest group first: what stands between the tree and a higher share.
The tree is linted with the given target; the tuned kernels are the tool's
defaults. Nothing is written into the tree.
"""

from __future__ import annotations

import argparse
import fnmatch
import json
import random
import re
import shutil
import subprocess
import sys
import tempfile
from collections import Counter, defaultdict
from pathlib import Path

from flydsl_lint.engine.config import DEFAULT_TUNED_KERNELS


def diagnostics(args) -> list[dict]:
    command = [args.linter, "check", str(args.tree), "--isolated", "--no-cache", "--exit-zero", "--select", "FLY1,FLY3",
               "--output-format", "json-lines", "--target-version", args.target_version, "--target-arch", args.target_arch]
    run = subprocess.run(command, capture_output=True, text=True, check=True)
    return [json.loads(line) for line in run.stdout.splitlines() if line.strip()]


def applicability(diagnostic: dict) -> str:
    return (diagnostic.get("fix") or {}).get("applicability", "none")


def in_tuned_kernel(tree: Path, diagnostic: dict) -> bool:
    relative = Path(diagnostic["filename"]).resolve().relative_to(tree.resolve()).as_posix()
    return any(fnmatch.fnmatch(part, pattern) for part in relative.split("/") for pattern in DEFAULT_TUNED_KERNELS)


def outside_tuned(args) -> list[dict]:
    return [d for d in diagnostics(args) if not in_tuned_kernel(args.tree, d)]


def share(args) -> int:
    rows = outside_tuned(args)
    per_code: defaultdict[str, Counter] = defaultdict(Counter)
    for row in rows:
        per_code[row["code"]][applicability(row)] += 1
    safe = sum(counts["safe"] for counts in per_code.values())
    for code, counts in sorted(per_code.items(), key=lambda item: -sum(item[1].values())):
        print(f"{code}  {sum(counts.values()):5d}  safe {counts['safe']:5d}  unsafe {counts['unsafe']:5d}  none {counts['none']:5d}")
    print(f"§1+§3 outside tuned kernels: {len(rows)} diagnostics, {safe} with a safe fix, share {safe / max(1, len(rows)):.3f}"
          f" (target {args.target_version}, arch {args.target_arch})")
    return 0


def edits(args) -> int:
    codes = set(args.codes.split(",")) if args.codes else None
    safe = [d for d in diagnostics(args) if applicability(d) == "safe" and (codes is None or d["code"] in codes)]
    random.seed(args.seed)
    picked = random.sample(safe, min(args.n, len(safe)))
    print(f"{len(picked)} of {len(safe)} safe fixes, seed {args.seed}")
    for number, d in enumerate(picked, 1):
        line = Path(d["filename"]).read_text(encoding="utf-8").splitlines()[d["location"]["row"] - 1].strip()
        contents = " | ".join(edit["content"] for edit in d["fix"]["edits"] if edit["content"])
        print(f"{number:2d}. {d['code']} {d['filename']}:{d['location']['row']}\n    before: {line[:150]}\n"
              f"    edit:   {contents[:150]}")
    return 0


def reason(diagnostic: dict) -> str:
    """The last parenthesis of the fix's message (unsafe) or the diagnostic's (no fix), with quoted
    names and source positions blanked so that one cause at many places is one group."""
    text = (diagnostic.get("fix") or {}).get("message") or diagnostic["message"]
    depth, start = 0, None
    for position in range(len(text) - 1, -1, -1):  # the balanced parenthesis that ends the text
        depth += {")": 1, "(": -1}.get(text[position], 0)
        if depth == 0:
            start = position if text[position] == "(" else None
            break
    found = re.sub(r"\b\d+:\d+\b", "L:C", re.sub(r"`[^`]*`", "`…`", text[start:])) if text.endswith(")") and start is not None else ""
    # A parenthesis that only names the replacement (`use an fx constant (`fx.Int32`)`) is no reason.
    return "(no reason given)" if found in ("", "(`…`)") else found


def reasons(args) -> int:
    codes = set(args.codes.split(",")) if args.codes else None
    rows = [d for d in outside_tuned(args) if applicability(d) != "safe" and (codes is None or d["code"] in codes)]
    groups: defaultdict[tuple[str, str, str], list[dict]] = defaultdict(list)
    for row in rows:
        groups[(row["code"], applicability(row), reason(row))].append(row)
    print(f"{len(rows)} diagnostics without a safe fix outside tuned kernels, {len(groups)} reasons "
          f"(target {args.target_version}, arch {args.target_arch})")
    for (code, fix, why), members in sorted(groups.items(), key=lambda item: (-len(item[1]), item[0])):
        first = members[0]
        where = f"{Path(first['filename']).resolve().relative_to(args.tree.resolve())}:{first['location']['row']}"
        print(f"{len(members):4d}  {code} {fix:6s}  {why[:160]}  e.g. {where}")
    return 0


def fixed(args) -> int:
    before = len(outside_tuned(args))
    with tempfile.TemporaryDirectory() as scratch:
        copy = Path(scratch) / args.tree.name
        shutil.copytree(args.tree, copy)
        subprocess.run([args.linter, "check", str(copy), "--isolated", "--no-cache", "--exit-zero", "--quiet", "--fix",
                        "--target-version", args.target_version, "--target-arch", args.target_arch],
                       capture_output=True, check=True)
        after = len(outside_tuned(argparse.Namespace(**{**vars(args), "tree": copy})))
    print(f"§1+§3 outside tuned kernels: {before} diagnostics before the safe --fix, {after} after; "
          f"share fixed {(before - after) / max(1, before):.3f} (target {args.target_version}, arch {args.target_arch})")
    return 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("what", choices=["share", "edits", "fixed", "reasons"])
    parser.add_argument("tree", type=Path)
    parser.add_argument("--target-version", default="0.5.0")
    parser.add_argument("--target-arch", default="gfx942,gfx950")
    parser.add_argument("--linter", default=str(Path(sys.executable).with_name("flydsl-lint")))
    parser.add_argument("--codes", help="comma-separated codes to sample (edits) or group (reasons)")
    parser.add_argument("-n", type=int, default=60)
    parser.add_argument("--seed", type=int, default=25)
    args = parser.parse_args()
    return {"share": share, "edits": edits, "fixed": fixed, "reasons": reasons}[args.what](args)


if __name__ == "__main__":
    raise SystemExit(main())
