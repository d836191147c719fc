"""Instruction counts of one serial cold run and of FlyDSL's gate, under callgrind.

Wall time on a shared machine drifts from minute to minute; the number of
instructions a run executes does not, so this is the measure to compare two
versions of the engine by (issue 7). Slow: valgrind runs about 50x slower.

    python bench/instructions.py --tree /path/to/FlyDSL        # needs valgrind on PATH
"""

from __future__ import annotations

import argparse
import re
import shutil
import subprocess
import sys
import tempfile
import textwrap
from pathlib import Path

# One process, no workers, no cache: the work itself, start-up included.
LINT = textwrap.dedent(
    """\
    import sys
    from pathlib import Path
    from flydsl_lint.engine.config import load_settings
    from flydsl_lint.engine.runner import run
    result = run([sys.argv[1]], load_settings(start=Path(sys.argv[1])), use_cache=False, jobs=1)
    print(len(result.diagnostics))
    """
)
GATE = textwrap.dedent(
    """\
    import importlib.util, sys
    from pathlib import Path
    spec = importlib.util.spec_from_file_location("flydsl_gate", sys.argv[1])
    module = importlib.util.module_from_spec(spec)
    sys.modules["flydsl_gate"] = module
    spec.loader.exec_module(module)
    print(sum(len(module.scan_source(p.read_text(encoding="utf-8"))) for p in sorted(Path(sys.argv[2]).rglob("*.py"))))
    """
)


def instructions(command: list[str]) -> int:
    completed = subprocess.run(["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null", *command],
                               capture_output=True, text=True, check=True)
    match = re.search(r"Collected : (\d+)", completed.stderr)
    if match is None:
        raise SystemExit(f"instructions: no count in valgrind's output:\n{completed.stderr[-500:]}")
    return int(match.group(1))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--tree", type=Path, required=True, help="a ROCm/FlyDSL checkout (its kernels/ is linted)")
    args = parser.parse_args(argv)
    if shutil.which("valgrind") is None:
        print("instructions: valgrind is not on PATH", file=sys.stderr)
        return 2
    kernels, gate = args.tree / "kernels", args.tree / "scripts" / "check_typed_arithmetic_usage.py"
    if not kernels.is_dir():
        print(f"instructions: {kernels} is not a folder; --tree wants a FlyDSL checkout", file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory(prefix="flydsl-lint-instructions-") as work:
        tree = Path(work) / "kernels"  # the package keeps its name, so project imports resolve as in the checkout
        shutil.copytree(kernels, tree, ignore=shutil.ignore_patterns("__pycache__", ".flydsl-lint-cache"))
        lint = instructions([sys.executable, "-c", LINT, str(tree)])
        print(f"flydsl-lint (serial, no cache): {lint / 1e9:.2f} G instructions")
        if gate.is_file():
            reference = instructions([sys.executable, "-c", GATE, str(gate), str(tree)])
            print(f"FlyDSL gate:                    {reference / 1e9:.2f} G instructions")
            print(f"ratio:                          {lint / reference:.2f}")
        else:
            print(f"instructions: {gate} not found: no gate count", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
