#!/usr/bin/env python3
"""Where `flake8 --select E9,FLY` spends the time the plugin adds: its own checks,
and the cyclic garbage collector walking what the plugin keeps for the run.

    python bench/flake8_gc.py --tree /path/to/FlyDSL [--runs 3]

Runs `flake8 -j1` on the tree's kernels/ in fresh processes, alternating:
`hidden` (the plugin filtered out of discovery, as bench.py's flake8 row) and
`plugin` (`--select E9,FLY`). Each run reports its wall and CPU seconds, the
seconds inside the plugin's `run`, the seconds spent in collections by
generation (gc.callbacks) and the objects the collector tracks at exit;
the table gives medians. One process (-j1) so every collection is seen.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import textwrap
from pathlib import Path

from bench import HIDE_FLY_PLUGIN  # bench/bench.py, this script's neighbour

# The child's program: collections timed, then the plugin hidden or its `run` timed, then flake8.
COUNT_COLLECTIONS = textwrap.dedent(
    """\
    import gc, json, os, sys, time
    spent = {"gc": [0.0, 0.0, 0.0], "collections": [0, 0, 0], "plugin": 0.0}
    started = []
    def on_collection(phase, info):
        if phase == "start":
            started.append(time.perf_counter())
        else:
            spent["gc"][info["generation"]] += time.perf_counter() - started.pop()
            spent["collections"][info["generation"]] += 1
    gc.callbacks.append(on_collection)
    """
)
TIME_PLUGIN = textwrap.dedent(
    """\
    from flydsl_lint.frontends import flake8_plugin
    checks = flake8_plugin.FlyDSLChecker.run
    def timed_run(self):
        begin = time.perf_counter()
        found = list(checks(self))
        spent["plugin"] += time.perf_counter() - begin
        return iter(found)
    flake8_plugin.FlyDSLChecker.run = timed_run
    """
)
RUN_AND_SAVE = textwrap.dedent(
    """\
    from flake8.main.cli import main
    begin, cpu = time.perf_counter(), time.process_time()
    try:
        main(sys.argv[1:])
    except SystemExit:
        pass
    spent.update(wall=time.perf_counter() - begin, cpu=time.process_time() - cpu, tracked=len(gc.get_objects()))
    with open(os.environ["FLAKE8_GC_OUT"], "w") as out:
        json.dump(spent, out)
    """
)


def run_once(mode: str, target: Path, out: Path) -> dict:
    hidden = mode == "hidden"
    program = COUNT_COLLECTIONS + (HIDE_FLY_PLUGIN if hidden else TIME_PLUGIN) + RUN_AND_SAVE
    subprocess.run([sys.executable, "-c", program, "-j1", "--select", "E9" if hidden else "E9,FLY", str(target)],
                   env={**os.environ, "FLAKE8_GC_OUT": str(out)}, stdout=subprocess.DEVNULL, check=False)
    return json.loads(out.read_text())


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tree", type=Path, required=True, help="a FlyDSL checkout (its kernels/ is linted)")
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    target = args.tree / "kernels"
    if not target.is_dir():
        parser.error(f"{target}: no kernels/ folder")
    out = Path(os.environ.get("TMPDIR", "/tmp")) / f"flake8_gc_{os.getpid()}.json"
    readings: dict[str, list[dict]] = {"hidden": [], "plugin": []}
    try:
        for _ in range(args.runs):
            for mode in readings:
                readings[mode].append(run_once(mode, target, out))
    finally:
        out.unlink(missing_ok=True)
    print("| run | wall s | CPU s | in the plugin s | GC s (gen 0/1/2) | collections (gen 0/1/2) | tracked at exit |")
    print("| --- | ---: | ---: | ---: | --- | --- | ---: |")
    for mode, runs in readings.items():
        def median(key, index=None):
            return statistics.median(r[key] if index is None else r[key][index] for r in runs)
        gc_split = "/".join(f"{median('gc', g):.2f}" for g in range(3))
        collections = "/".join(f"{median('collections', g):.0f}" for g in range(3))
        print(f"| {mode} | {median('wall'):.2f} | {median('cpu'):.2f} | {median('plugin'):.2f} | "
              f"{sum(median('gc', g) for g in range(3)):.2f} ({gc_split}) | {collections} | {median('tracked'):.0f} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
