#!/usr/bin/env python3
"""Issue-3 measurements for every rule family, rerunnable by anyone.

    python scripts/measure_all.py recall            # recall on FlyDSL cleanup history
    python scripts/measure_all.py noise TREE        # diagnostics per 1,000 lines, per family
    python scripts/measure_all.py sample TREE -n 60 # a random sample to judge by hand

History is read from a bare FlyDSL mirror (--repo); each commit's parent is
archived into a temporary folder at run time. Nothing fetched is stored here.
"""

from __future__ import annotations

import argparse
import json
import random
import subprocess
import sys
from collections import Counter
from pathlib import Path
from types import SimpleNamespace

sys.path.insert(0, str(Path(__file__).resolve().parent))
import measure_family  # noqa: E402

# No cleanup commit removes §1b double wraps or §8/§9 constructs in a way a
# line regex can count; those families are measured by precision samples.
# family: (--select, construct regex of a removed legacy line, guide-keep regex or None, commits)
FAMILIES = {
    "§1 ArithValue/index helpers": (
        "FLY10", r"\bArithValue\s*\(|\b_to_raw\b|\barith\.(unwrap|index_cast|index)\s*\(", None,
        ["7a6572f5", "f7db21e0", "daee90e4", "09987abd", "33efd75e", "7d861b1c"]),
    "§2 buffer_ops": (
        "FLY2", measure_family.PRESETS["FLY2"], None,
        ["6ca05b88", "4d4a6355", "90b999b2", "c0edc8a7", "33efd75e", "e07991f8", "7d861b1c", "7e6dca08",
         "3df2d7c7", "a83412bf", "f5c50f45", "7a6572f5"]),
    "§3 typed arithmetic": (
        "FLY30", r"\barith\.(maximumf|minimumf|maxsi|maxui|minsi|minui|maxnumf|ceildivsi|ceildivui)\s*\(|\.(maximumf|minimumf)\s*\(",
        None, ["92ca7ece", "c0edc8a7"]),
    "§3 scf": ("FLY31,FLY5", r"\bscf\.(ForOp|IfOp|YieldOp|WhileOp)\b|\b_if_then\b", None,
               ["ff196ddf", "4d4a6355", "90b999b2", "33efd75e", "a83412bf", "7a6572f5", "4be56142"]),
    "§3 vector": ("FLY32", r"\bvector\.(extract|bitcast|splat|broadcast|from_elements|load|store|shuffle|reduction|shape_cast)\b",
                  None, ["f7db21e0", "7dac0826", "7e6dca08", "33efd75e", "a83412bf", "6ca05b88", "7a6572f5"]),
    "§3 llvm": ("FLY33", r"\bllvm\.(load|store|getelementptr|mlir\.constant|GEPOp|LoadOp|StoreOp)\b",
                r"volatile_|ordering=|syncscope|alias_scopes|noalias_scopes|tbaa",
                ["7a6572f5", "a83412bf", "33efd75e", "4be56142"]),
    "§3 raw arith ops": (
        "FLY34", r"\barith\.(addi|addf|subi|subf|muli|mulf|divf|divsi|remsi|andi|ori|xori|shli|shrsi|constant|select|cmpi|cmpf|negf)\s*\(",
        r"fastmath\s*=|CmpIPredicate\.(ult|ule|ugt|uge)|CmpFPredicate\.(one|ueq|ult|ule|ugt|uge|une|ord|uno)|\b(unwrap|_raw|as_mlir_value|_to_raw)\(",
        ["7a6572f5", "daee90e4", "c0edc8a7", "7e6dca08", "33efd75e", "a83412bf", "ff196ddf", "f7db21e0"]),
    "§3b llvm_ptr": ("FLY35", measure_family.PRESETS["FLY35"], None,
                     ["772f0703", "09987abd", "a83412bf", "8bd4c535", "90b999b2", "33efd75e", "ff196ddf", "f5c50f45"]),
    "§3c s_waitcnt": (
        "FLY36", r"\bs_waitcnt\s*\((?!\s*(vmcnt|lgkmcnt|expcnt)\s*=)|\b_encode_waitcnt\b|\b_s_waitcnt\b|\b[A-Z_]*CNT_[0-9A-Z_]*\s*=(?!=)|0x[Cc]07[Ff]",
        None, ["4be56142", "8bd4c535", "f5c50f45", "7a6572f5", "4d4a6355"]),
    "§4 SmemAllocator": ("FLY4", measure_family.PRESETS["FLY4"], None,
                         ["7025256e", "09987abd", "90b999b2", "33efd75e", "a83412bf", "f5c50f45", "7a6572f5", "4d4a6355"]),
    "§6 raw MFMA": ("FLY6", r"\b(mfma|wmma)_(scale16_|scale_)?(f32|i32|f16|bf16)_\d+x\d+x\d+", None,
                    ["780f0f29", "f5c50f45", "8bd4c535", "a83412bf", "90b999b2", "4be56142"]),
    "§7 atom calls": ("FLY7", r"\b(copy_atom_call|mma_atom_call)\s*\(", None, ["772f0703"]),
}


def recall(args) -> int:
    rows = []
    for family, (select, construct, keep, commits) in FAMILIES.items():
        options = SimpleNamespace(repo=args.repo, under="kernels", select=select, construct=construct, keep=keep,
                                  target_version=args.target_version, linter=args.linter)
        total = hit = 0
        for sha in commits:
            t, h, _ = measure_family.measure(options, sha)
            total, hit = total + t, hit + h
        rows.append((family, select, total, hit))
        rate = f"{100 * hit / total:.1f}%" if total else "n/a"
        print(f"{family:<28} {select:<11} removed {total:5d}  flagged {hit:5d}  recall {rate}", flush=True)
    total, hit = sum(r[2] for r in rows), sum(r[3] for r in rows)
    print(f"{'overall':<28} {'':<11} removed {total:5d}  flagged {hit:5d}  recall {100 * hit / total:.1f}%")
    return 0


def _diagnostics(args) -> list[dict]:
    run = subprocess.run([args.linter, "check", str(args.tree), "--output-format", "json", "--exit-zero", "--no-cache",
                          "--target-version", args.target_version], capture_output=True, text=True, check=True)
    return json.loads(run.stdout)


def noise(args) -> int:
    lines = sum(len(p.read_text(encoding="utf-8", errors="replace").splitlines()) for p in Path(args.tree).rglob("*.py"))
    counts = Counter(d["code"][:4] for d in _diagnostics(args))
    print(f"{lines} lines")
    for family, count in sorted(counts.items()):
        print(f"{family}xx  {count:5d} diagnostics  {1000 * count / lines:6.2f} per 1,000 lines")
    return 0


def sample(args) -> int:
    diagnostics = _diagnostics(args)
    size = min(args.n, len(diagnostics))
    population = ", ".join(f"{code} {count}" for code, count in sorted(Counter(d["code"] for d in diagnostics).items()))
    print(f"sample of {size} from {len(diagnostics)} diagnostics (seed {args.seed}): {population or 'none'}")
    random.seed(args.seed)
    for d in random.sample(diagnostics, size):
        line = Path(d["filename"]).read_text(encoding="utf-8").splitlines()[d["location"]["row"] - 1].strip()
        print(f"{d['code']} {d['filename']}:{d['location']['row']}  {line[:140]}\n      {d['message'][:160]}")
    return 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("what", choices=["recall", "noise", "sample"])
    parser.add_argument("tree", nargs="?", type=Path, help="a kernels/ folder (noise, sample)")
    parser.add_argument("--repo", default="/work/.mirror/ROCm+FlyDSL/repo")
    parser.add_argument("--target-version", default="0.3.2")
    parser.add_argument("--linter", default=str(Path(sys.executable).with_name("flydsl-lint")))
    parser.add_argument("-n", type=int, default=60)
    parser.add_argument("--seed", type=int, default=2026)
    args = parser.parse_args()
    if args.what != "recall" and args.tree is None:
        parser.error(f"{args.what} needs a TREE")
    return {"recall": recall, "noise": noise, "sample": sample}[args.what](args)


if __name__ == "__main__":
    raise SystemExit(main())
