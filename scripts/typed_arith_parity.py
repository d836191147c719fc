#!/usr/bin/env python3
"""Compare flydsl-lint's FLY301/FLY302 with FlyDSL's own typed-arithmetic gate.

    python scripts/typed_arith_parity.py /path/to/FlyDSL-checkout [--subdir kernels]

The gate (scripts/check_typed_arithmetic_usage.py) is loaded from the given
checkout at run time and run over whole files; nothing of it is stored here.
Prints the lines it reports that we miss (must be none) and the extra lines we
report beyond it (aliases and spellings it does not resolve).
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import subprocess
import sys
from pathlib import Path


def load_gate(checkout: Path):
    path = checkout / "scripts" / "check_typed_arithmetic_usage.py"
    spec = importlib.util.spec_from_file_location("flydsl_typed_arith_gate", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up
    spec.loader.exec_module(module)
    return module.scan_source


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("checkout", type=Path)
    parser.add_argument("--subdir", default="kernels")
    args = parser.parse_args()
    tree = (args.checkout / args.subdir).resolve()
    scan_source = load_gate(args.checkout)

    gate = set()
    for path in sorted(tree.rglob("*.py")):
        for violation in scan_source(path.read_text(encoding="utf-8")):
            gate.add((str(path), violation.line))
    output = subprocess.run(
        [sys.executable, "-m", "flydsl_lint.frontends.cli", "check", str(tree), "--select", "FLY301,FLY302",
         "--output-format", "json", "--exit-zero"],
        capture_output=True, text=True, check=True,
    ).stdout
    ours = {(d["filename"], d["location"]["row"]) for d in json.loads(output)}
    missed, extra = sorted(gate - ours), sorted(ours - gate)
    print(f"gate lines: {len(gate)}  flydsl-lint lines: {len(ours)}  missed: {len(missed)}  extra: {len(extra)}")
    for path, row in missed:
        print(f"MISSED {path}:{row}")
    for path, row in extra:
        print(f"extra  {path}:{row}")
    return 1 if missed else 0


if __name__ == "__main__":
    raise SystemExit(main())
