"""Instruction counts of one serial cold run and of FlyDSL's gate, under callgrind.

Wall time on a shared machine drifts from minute to minute; the number of
instructions a run executes does not, so this is the measure to compare two
versions of the engine by (issue 7). Slow: valgrind runs about 50x slower.

    python bench/instructions.py --tree /path/to/FlyDSL        # needs valgrind on PATH
    python bench/instructions.py --tree /path/to/FlyDSL --phases   # where they go
    python bench/instructions.py --tree /path/to/FlyDSL --flake8   # the plugin's share
    python bench/instructions.py --tree /path/to/FlyDSL --families # which rules cost what

`--phases` repeats the serial run stopped after each stage (read, parse, model,
rules) and reports what each stage adds, as a share of the gate's count: the
floor a pure-Python engine cannot go under is what `ast.parse` costs.
`--families` counts the full check without each rule family (FLY0..FLY9) in
turn, and with no rule: what each family costs, and what the rules share
(resolving every call's callee, dispatch), which no single family pays.
`--flake8` counts `flake8 -j1 --select E9` with the plugin hidden and with it
(`E9,FLY`): what the plugin adds, without the machine's noise.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
import textwrap
from pathlib import Path

from bench import FLAKE8_WITHOUT_PLUGIN  # bench/bench.py, this script's neighbour

# One process, no workers, no cache: the work itself, start-up included.
LINT = textwrap.dedent(
    """\
    import sys
    from pathlib import Path
    from flydsl_lint.engine.config import load_settings
    from flydsl_lint.run.runner import run
    result = run([sys.argv[1]], load_settings(start=Path(sys.argv[1])), use_cache=False, jobs=1)
    print(len(result.diagnostics))
    """
)
# The serial run stopped after a stage: files read and decoded; + parsed; + one
# semantic model each (built and released); + every selected rule (a full check).
STAGES = ("read", "parse", "model", "rules")
PHASE = textwrap.dedent(
    f"""\
    import gc, sys
    from pathlib import Path
    from flydsl_lint.run.checker import Checker
    from flydsl_lint.engine.config import load_settings
    from flydsl_lint.engine.files import discover
    from flydsl_lint.engine.model import SemanticModel
    from flydsl_lint.engine.source import SourceFile
    gc.disable()  # as the runner does
    # An optional third argument selects rules (comma-separated prefixes; "" selects none).
    selected = tuple(filter(None, sys.argv[3].split(","))) if len(sys.argv) > 3 else None
    stage, settings = sys.argv[2], load_settings(start=Path(sys.argv[1]), select=selected)
    if stage not in {STAGES!r}:
        raise SystemExit(f"unknown stage {{stage!r}}")
    checker, found = Checker(settings), 0
    for path in discover([sys.argv[1]], settings)[0]:
        source = SourceFile.read(path)
        if stage == "parse":
            source.tree
        elif stage == "model":
            project, module, is_package = checker.project_for(source.path)
            project.start_file()
            SemanticModel(source.tree, module, is_package, project).release()
        elif stage == "rules":
            found += len(checker.check(source))
    if stage == "rules":
        print(found)  # diagnostics, as a check of the selection
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


# Set and dict order follow the hash seed, and with it what the rules compute
# first: unseeded counts of the same code differ by up to 0.1 G. A fixed seed
# (PYTHONHASHSEED in the environment, else 0) makes two versions comparable.
CHILD_ENV = {**os.environ, "PYTHONHASHSEED": os.environ.get("PYTHONHASHSEED", "0")}


def instructions(command: list[str], exit_codes: tuple[int, ...] = (0,)) -> int:
    """Instructions `command` executes; `exit_codes`: its successful exits (flake8 exits 1 on findings)."""
    completed = subprocess.run(["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null", *command],
                               check=False, capture_output=True, text=True, env=CHILD_ENV)
    match = re.search(r"Collected : (\d+)", completed.stderr)
    if completed.returncode not in exit_codes or match is None:
        raise SystemExit(f"instructions: {command[0]} failed (exit {completed.returncode}):\n{completed.stderr[-500:]}")
    return int(match.group(1))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--tree", type=Path, required=True, help="a ROCm/FlyDSL checkout (its kernels/ is linted)")
    parser.add_argument("--phases", action="store_true", help="also count the run stage by stage (four more runs)")
    parser.add_argument("--families", action="store_true", help="also count the run without each rule family, and with none (twelve more runs)")
    parser.add_argument("--flake8", action="store_true", help="also count flake8 -j1 without and with the plugin")
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
        reference = None
        if gate.is_file():
            reference = instructions([sys.executable, "-c", GATE, str(gate), str(tree)])
            print(f"FlyDSL gate:                    {reference / 1e9:.2f} G instructions")
            print(f"ratio:                          {lint / reference:.2f}")
        else:
            print(f"instructions: {gate} not found: no gate count", file=sys.stderr)
        if args.phases:
            print_phases(tree, reference)
        if args.families:
            print_families(tree, reference)
        if args.flake8:
            print_flake8(tree)
    return 0


def print_flake8(tree: Path) -> None:
    flake8 = Path(sys.executable).parent / "flake8"
    if not flake8.exists():
        print("instructions: flake8 is not installed next to this Python: no flake8 counts", file=sys.stderr)
        return
    alone = instructions([sys.executable, "-c", FLAKE8_WITHOUT_PLUGIN, "-j1", "--select", "E9", str(tree)], exit_codes=(0, 1))
    plugged = instructions([str(flake8), "-j1", "--select", "E9,FLY", str(tree)], exit_codes=(0, 1))
    print(f"\nflake8 -j1 --select E9 (plugin hidden): {alone / 1e9:.2f} G instructions")
    print(f"flake8 -j1 --select E9,FLY:             {plugged / 1e9:.2f} G instructions")
    print(f"the plugin adds:                        {(plugged / alone - 1) * 100:.1f}%")


def print_families(tree: Path, reference: int | None) -> None:
    from flydsl_lint.rules import all_rules

    def count(selected: list[str]) -> int:
        return instructions([sys.executable, "-c", PHASE, str(tree), "rules", ",".join(selected)])

    families = sorted({code[:4] for code in all_rules()})
    full, base = count(families), count([])
    print(f"\n{'without':<9}{'G':>8}{'family costs G':>16}{'/ gate':>8}")
    marginal = 0
    for family in families:
        cost = full - count([other for other in families if other != family])
        marginal += cost
        share = f"{cost / reference:.3f}" if reference else "-"
        print(f"{family + 'xx':<9}{(full - cost) / 1e9:>8.2f}{cost / 1e9:>16.2f}{share:>8}")
    shared = full - base - marginal
    print(f"every rule: {full / 1e9:.2f} G; no rule: {base / 1e9:.2f} G; rules in all {(full - base) / 1e9:.2f} G, "
          f"of which shared (call resolution, dispatch) {shared / 1e9:.2f} G")


def print_phases(tree: Path, reference: int | None) -> None:
    print(f"\n{'stage':<7}{'cumulative G':>14}{'stage adds G':>14}{'adds / gate':>13}")
    before = 0
    for stage in STAGES:
        count = instructions([sys.executable, "-c", PHASE, str(tree), stage])
        share = f"{(count - before) / reference:.3f}" if reference else "-"
        print(f"{stage:<7}{count / 1e9:>14.2f}{(count - before) / 1e9:>14.2f}{share:>13}")
        before = count


if __name__ == "__main__":
    sys.exit(main())
