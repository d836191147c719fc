#!/usr/bin/env python3
"""Benchmark flydsl-lint against its peers on one tree (issue 7).

    python bench/bench.py --tree /path/to/FlyDSL        # a ROCm/FlyDSL checkout: lints its kernels/
    python bench/bench.py                               # a generated corpus of kernel-like files
    python bench/bench.py --tree ... --runs 7 --scale 1,4,16 --json out.json
    python bench/bench.py --fix-scaling 1000,2000,4000  # check and --fix on one file with that many fixes

Everything runs as a fresh process (interpreter start-up included), tools are
alternated within each round so load changes hit all of them alike, and each
row reports the median wall time, its ratio to the upstream gate, and the
median CPU time (user+sys of the process and its workers). The trees are
copied to a temporary folder first: caches are written there, never into the
checkout.

Rows:
  gate            FlyDSL's scripts/check_typed_arithmetic_usage.py `scan_source`
                  over every file, imported from the checkout at run time
  cold            `flydsl-lint check --no-cache` (every FLY rule)
  cold+write      the same with the cache on, after deleting it (first run)
  cached          a re-run over the unchanged tree
  one-file        one kernel file, --no-cache (the pre-commit/editor case)
  one-file-cached the same file with a warm cache
  flake8          flake8 --select E9 with the FLY plugin hidden from flake8
  flake8+FLY      flake8 --select E9,FLY
  ruff            ruff check --select E,W,F,I --no-cache (a speed reference)
A peer that is not installed or not found is skipped and reported as such.

`--verify TEST --tree FlyDSL` instead times flydsl-lint-verify (compile mode) on one
FlyDSL test file: cold (empty base cache), then each of `--candidates` other
candidate changes against the same base with the cache warm, as same-run
ratios (issue 26: a warm re-verification should cost at most 0.55 of a cold
one), and the cost of planning alone (`--list`), which every run pays. A
candidate is a commit adding a comment to the test file, so every run
compiles the same specializations and finds them identical. The checkout is
cloned (`git clone --shared`) into a temporary folder and never written to.

`--fix-scaling N1,N2,...` instead times `check` and `check --fix` on one
generated file with N fixes each (one `fx.Int32(fx.Int32(a))  # c` line per
fix, a comment on every line), to show that fixing grows linearly.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

PYTHON = sys.executable
BIN = Path(sys.executable).parent
GATE_RELATIVE = Path("scripts/check_typed_arithmetic_usage.py")

# Runs the gate's own scan_source over every .py file, loaded from the checkout.
GATE_DRIVER = textwrap.dedent(
    """\
    import importlib.util, sys
    from pathlib import Path
    spec = importlib.util.spec_from_file_location("flydsl_gate", sys.argv[1])
    module = importlib.util.module_from_spec(spec)
    sys.modules["flydsl_gate"] = module
    spec.loader.exec_module(module)
    count = 0
    for path in sorted(Path(sys.argv[2]).rglob("*.py")):
        count += len(module.scan_source(path.read_text(encoding="utf-8")))
    print(count)
    """
)

# Filters the flydsl-lint entry point out of flake8's plugin discovery (run before flake8's main).
HIDE_FLY_PLUGIN = textwrap.dedent(
    """\
    from flake8.plugins import finder
    original = finder._find_importlib_plugins
    def without_fly():
        for plugin in original():
            if plugin.package.replace("_", "-") != "flydsl-lint":
                yield plugin
    finder._find_importlib_plugins = without_fly
    """
)
# flake8 with the flydsl-lint entry point hidden.
FLAKE8_WITHOUT_PLUGIN = "import sys\n" + HIDE_FLY_PLUGIN + "from flake8.main.cli import main\nsys.exit(main(sys.argv[1:]))\n"


# ------------------------------------------------------------------ corpus
SYNTHETIC_FILE = textwrap.dedent(
    '''\
    """Synthetic kernel module {index} for the flydsl-lint benchmark."""

    import flydsl.compiler as flyc
    import flydsl.expr as fx
    from flydsl.expr import arith, rocdl
    from flydsl.expr.typing import T

    BLOCK_{index} = 256
    WAVES = 4


    def helper_{index}(a, b):
        return arith.maximumf(a, b)

    '''
)
SYNTHETIC_KERNEL = textwrap.dedent(
    '''\

    @flyc.kernel
    def kernel_{index}_{k}(x: fx.Tensor, y: fx.Tensor, n: fx.Int32):
        tid = fx.thread_idx.x
        bid = fx.block_idx.x
        acc = fx.Float32(0.0)
        base = bid * BLOCK_{index} + tid
        for i in range(0, 8):
            v = x[base + i * WAVES]
            # scale then clamp; legacy spellings kept on purpose
            acc = arith.maximumf(acc, v * fx.Float32(0.5))
            w = fx.Int64(fx.Int64(i))
            acc = acc + arith.index_cast(T.i32, w)
        rocdl.s_waitcnt(0)
        y[base] = fx.max(acc, fx.Float32(1.0))
        return helper_{index}(acc, acc)

    '''
)


def synthetic_corpus(folder: Path, files: int, kernels_per_file: int = 12) -> Path:
    package = folder / "kernels"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text("")
    for index in range(files):
        text = SYNTHETIC_FILE.format(index=index)
        text += "".join(SYNTHETIC_KERNEL.format(index=index, k=k) for k in range(kernels_per_file))
        (package / f"kernel_{index:03d}.py").write_text(text)
    return package


FIX_SCALING_HEADER = "import flydsl.expr as fx\n\n"
FIX_SCALING_LINE = "v{index} = fx.Int32(fx.Int32(a{index}))  # c\n"  # one safe FLY111 fix, a comment beside it


def fix_scaling_file(folder: Path, fixes: int) -> Path:
    """One module whose check finds `fixes` safe fixes, each on a line with a comment."""
    path = folder / f"fixes_{fixes}.py"
    path.write_text(FIX_SCALING_HEADER + "".join(FIX_SCALING_LINE.format(index=i) for i in range(fixes)))
    return path


def scaled_tree(source: Path, folder: Path, factor: int) -> Path:
    """`factor` copies of `source` (a package folder) as sibling packages under folder/tree."""
    tree = folder / f"x{factor}"
    tree.mkdir(parents=True)
    for copy in range(factor):
        shutil.copytree(source, tree / (source.name if copy == 0 else f"{source.name}_copy{copy}"),
                        ignore=shutil.ignore_patterns(".flydsl-lint-cache", "__pycache__"))
    return tree


def count_lines(tree: Path) -> tuple[int, int]:
    files = sorted(tree.rglob("*.py"))
    return len(files), sum(len(p.read_bytes().splitlines()) for p in files)


# ------------------------------------------------------------- measurement
# Measure the tool as installed: an installed package has its bytecode. (This
# dev environment sets PYTHONDONTWRITEBYTECODE, which would recompile every
# module on every start.) --keep-env measures with the environment as it is.
CHILD_ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}


def measure(command: list[str], cwd: Path, stderr: Path | None = None) -> tuple[float, float, int, int]:
    """(wall s, cpu s of the process and its reaped workers, peak RSS KiB of the largest, exit code);
    the command's stderr goes to the file ``stderr`` when given."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    with open(stderr or os.devnull, "wb") as errors:
        process = subprocess.Popen(command, cwd=cwd, stdout=subprocess.DEVNULL, stderr=errors, env=CHILD_ENV)
    _, status, usage = os.wait4(process.pid, 0)
    wall = time.perf_counter() - start
    process.returncode = os.waitstatus_to_exitcode(status)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu, usage.ru_maxrss, process.returncode


def peak_memory(command: list[str], cwd: Path) -> int:
    """Peak RSS (KiB) of the largest process a command starts, its workers included."""
    probe = ("import resource, subprocess, sys; subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, "
             "stderr=subprocess.DEVNULL); print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)")
    out = subprocess.run([PYTHON, "-c", probe, *command], cwd=cwd, capture_output=True, text=True, env=CHILD_ENV)
    return int(out.stdout.strip() or 0)


class Bench:
    def __init__(self, runs: int) -> None:
        self.runs = runs
        self.skipped: dict[str, str] = {}

    def tools(self, tree: Path, gate: Path | None, one_file: Path) -> dict[str, dict]:
        """name -> {command, cwd, prepare}; peers that are missing land in self.skipped."""
        lint = [str(BIN / "flydsl-lint"), "check", "--exit-zero"]
        cache = tree / ".flydsl-lint-cache"
        target = str(tree)
        tools: dict[str, dict] = {}
        if gate is not None:
            tools["gate"] = {"command": [PYTHON, "-c", GATE_DRIVER, str(gate), target]}
        else:
            self.skipped["gate"] = "no FlyDSL checkout given (--tree): the upstream gate is loaded from it"
        tools["cold"] = {"command": lint + ["--no-cache", target]}
        tools["cold+write"] = {"command": lint + [target], "prepare": lambda: shutil.rmtree(cache, ignore_errors=True)}
        tools["cached"] = {"command": lint + [target], "warm": True}
        tools["one-file"] = {"command": lint + ["--no-cache", str(one_file)]}
        tools["one-file-cached"] = {"command": lint + [str(one_file)], "warm": True}
        flake8 = BIN / "flake8"
        if flake8.exists():
            tools["flake8"] = {"command": [PYTHON, "-c", FLAKE8_WITHOUT_PLUGIN, "--select", "E9", target]}
            tools["flake8+FLY"] = {"command": [str(flake8), "--select", "E9,FLY", target]}
        else:
            self.skipped["flake8"] = "flake8 is not installed next to this Python"
        ruff = shutil.which("ruff", path=str(BIN)) or shutil.which("ruff")
        if ruff:
            tools["ruff"] = {"command": [ruff, "check", "--select", "E,W,F,I", "--no-cache", "--exit-zero", "--quiet", target]}
        else:
            self.skipped["ruff"] = "ruff is not installed (pip install ruff)"
        return tools

    def run(self, tree: Path, gate: Path | None, one_file: Path, only: set[str] | None = None) -> dict[str, dict]:
        tools = self.tools(tree, gate, one_file)
        if only:
            tools = {name: spec for name, spec in tools.items() if name in only}
        samples: dict[str, list[tuple[float, float, int]]] = {name: [] for name in tools}
        # warm-up (file cache, .pyc) and a first populated cache for the "cached" rows
        subprocess.run(tools["cold+write"]["command"] if "cold+write" in tools else
                       [str(BIN / "flydsl-lint"), "check", "--exit-zero", str(tree)],
                       cwd=tree, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=CHILD_ENV)
        for _ in range(self.runs):
            for name, spec in tools.items():  # alternate the tools within each round
                if spec.get("prepare"):
                    spec["prepare"]()
                if spec.get("warm"):  # make sure the cache is populated for this tree
                    subprocess.run([str(BIN / "flydsl-lint"), "check", "--exit-zero", str(tree)],
                                   cwd=tree, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=CHILD_ENV)
                    if name == "one-file-cached":
                        subprocess.run(spec["command"], cwd=tree, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                       env=CHILD_ENV)
                wall, cpu, rss, code = measure(spec["command"], tree)
                if code not in (0, 1):
                    raise SystemExit(f"bench: {name} failed with exit code {code}: {' '.join(spec['command'])}")
                samples[name].append((wall, cpu, rss))
        report = {}
        for name, values in samples.items():
            report[name] = {
                "wall": statistics.median(v[0] for v in values),
                "cpu": statistics.median(v[1] for v in values),
                "rss_kib": max(v[2] for v in values),
                "runs": len(values),
            }
        for name in ("cold", "flake8+FLY", "gate"):
            if name in tools:
                report[name]["peak_kib_with_workers"] = peak_memory(tools[name]["command"], tree)
        return report


def fix_scaling(work: Path, sizes: list[int], runs: int) -> dict[int, dict]:
    """Median wall s of `check` and `check --fix` on one file per size (a fresh copy per --fix run)."""
    lint = [str(BIN / "flydsl-lint"), "check", "--no-cache", "--exit-zero", "--isolated", "--select", "FLY"]
    rows = {}
    for fixes in sizes:
        folder = work / f"fixes-{fixes}"
        folder.mkdir()
        original = fix_scaling_file(folder, fixes)
        target = folder / "target.py"
        checks, fixing = [], []
        for _ in range(runs):
            shutil.copyfile(original, target)
            checks.append(measure(lint + [str(target)], folder))
            fixing.append(measure(lint + ["--fix", str(target)], folder))
        for name, samples in (("check", checks), ("fix", fixing)):
            failed = [code for *_, code in samples if code not in (0, 1)]
            if failed:
                raise SystemExit(f"bench: {name} of {fixes} fixes failed with exit code {failed[0]}")
        if target.read_text().count("fx.Int32(fx.Int32(") != 0:
            raise SystemExit(f"bench: --fix left fixes in the {fixes}-fix file")
        rows[fixes] = {"lines": fixes + 2, "check": statistics.median(s[0] for s in checks),
                       "fix": statistics.median(s[0] for s in fixing), "fix_rss_kib": max(s[2] for s in fixing)}
        shutil.rmtree(folder, ignore_errors=True)
    return rows


def print_fix_scaling(rows: dict[int, dict]) -> None:
    print("\nfix scaling (median wall s of one file; per-1k = time per 1000 fixes, flat means linear)")
    print(f"  {'fixes':>7}{'check':>9}{'per-1k':>8}{'--fix':>9}{'per-1k':>8}{'fix MiB':>9}")
    for fixes, row in rows.items():
        per = 1000 / fixes
        print(f"  {fixes:>7}{row['check']:>9.2f}{row['check'] * per:>8.3f}{row['fix']:>9.2f}{row['fix'] * per:>8.3f}"
              f"{row['fix_rss_kib'] / 1024:>9.1f}")


def machine() -> str:
    cpus = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    model = ""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    return f"{platform.system()} {platform.machine()}, {cpus} CPUs {model}, Python {platform.python_version()}, load {load:.1f}"


def print_table(title: str, report: dict[str, dict]) -> None:
    gate = report.get("gate", {}).get("wall")
    print(f"\n{title}")
    print(f"  {'tool':<16}{'median wall s':>14}{'x gate':>9}{'median cpu s':>14}{'peak MiB':>10}")
    for name, row in report.items():
        ratio = f"{row['wall'] / gate:.2f}" if gate else "-"
        peak = row.get("peak_kib_with_workers", row["rss_kib"]) / 1024
        print(f"  {name:<16}{row['wall']:>14.3f}{ratio:>9}{row['cpu']:>14.3f}{peak:>10.1f}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--tree", type=Path, help="a ROCm/FlyDSL checkout (its kernels/ is linted, its gate timed)")
    parser.add_argument("--runs", type=int, default=5, help="rounds per measurement (median reported)")
    parser.add_argument("--scale", default="1,4,16", help="tree multiples for the scaling table (comma list)")
    parser.add_argument("--scale-runs", type=int, default=3, help="rounds per scaling point")
    parser.add_argument("--synthetic-files", type=int, default=94, help="files in the generated corpus")
    parser.add_argument("--fix-scaling", metavar="N,N,...",
                        help="only time check and --fix on one generated file with each number of fixes")
    parser.add_argument("--verify", metavar="TEST",
                        help="only time flydsl-lint-verify on this test file of the --tree checkout, cold vs warm cache")
    parser.add_argument("--candidates", type=int, default=2, help="--verify: warm candidates per round")
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1, help="--verify: its --jobs")
    parser.add_argument("--json", type=Path, help="also write the numbers as JSON here")
    parser.add_argument("--keep-env", action="store_true", help="keep PYTHONDONTWRITEBYTECODE if set")
    args = parser.parse_args(argv)
    if args.keep_env:
        CHILD_ENV.update(os.environ)
    else:  # compile once so every measured start finds its bytecode
        subprocess.run([PYTHON, "-m", "compileall", "-q", str(Path(__file__).resolve().parents[1] / "flydsl_lint")],
                       env=CHILD_ENV, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)

    work = Path(tempfile.mkdtemp(prefix="flydsl-lint-bench-"))
    try:
        if args.fix_scaling:
            return run_fix_scaling(args, work)
        if args.verify:
            return run_verify_bench(args, work)
        if args.tree is not None:
            kernels = args.tree / "kernels"
            gate = args.tree / GATE_RELATIVE
            if not kernels.is_dir():
                raise SystemExit(f"bench: {kernels} is not a folder; --tree wants a FlyDSL checkout")
            if not gate.is_file():
                print(f"bench: {gate} not found: the gate row is skipped", file=sys.stderr)
                gate = None
            source = work / "source" / "kernels"
            shutil.copytree(kernels, source, ignore=shutil.ignore_patterns(".flydsl-lint-cache", "__pycache__"))
        else:
            gate = None
            source = synthetic_corpus(work / "source", args.synthetic_files)
        bench = Bench(args.runs)
        results: dict = {"machine": machine(), "date": time.strftime("%Y-%m-%d"), "tree": str(args.tree or "synthetic")}

        tree = scaled_tree(source, work, 1)
        files = sorted(tree.rglob("*.py"), key=lambda p: p.stat().st_size)
        one_file = files[len(files) // 2]  # a median-sized file
        count, lines = count_lines(tree)
        results["files"], results["lines"], results["one_file_lines"] = count, lines, len(one_file.read_bytes().splitlines())
        print(f"{results['date']}  {results['machine']}")
        print(f"tree: {results['tree']} ({count} files, {lines} lines); one-file row: {one_file.name} ({results['one_file_lines']} lines)")
        report = bench.run(tree, gate, one_file)
        results["report"] = report
        print_table(f"medians of {args.runs} alternating rounds", report)
        if "flake8" in report and "flake8+FLY" in report:
            added = report["flake8+FLY"]["wall"] / report["flake8"]["wall"] - 1
            print(f"  flake8 --select FLY adds {added * 100:.0f}% to flake8's own run time")
            results["flake8_added"] = added

        scaling = {}
        for factor in [int(f) for f in args.scale.split(",") if f.strip()]:
            scaled = tree if factor == 1 else scaled_tree(source, work, factor)
            only = {"gate", "cold", "cold+write", "cached"}
            row = Bench(args.scale_runs).run(scaled, gate, one_file, only)
            count, lines = count_lines(scaled)
            scaling[factor] = {"files": count, "lines": lines, **{k: v["wall"] for k, v in row.items()},
                               "cold_cpu": row["cold"]["cpu"], "cold_peak_kib": row["cold"].get("peak_kib_with_workers")}
            if factor != 1:
                shutil.rmtree(scaled, ignore_errors=True)
        results["scaling"] = scaling
        base = scaling.get(1)
        print("\nscaling (median wall s; per-1x = time / factor, flat means linear)")
        print(f"  {'x':>4}{'files':>7}{'lines':>9}{'gate':>8}{'cold':>8}{'per-1x':>8}{'cached':>8}{'per-1x':>8}{'cold MiB':>10}")
        for factor, row in scaling.items():
            gate_text = f"{row['gate']:>8.2f}" if "gate" in row else f"{'-':>8}"
            print(f"  {factor:>4}{row['files']:>7}{row['lines']:>9}{gate_text}{row['cold']:>8.2f}{row['cold'] / factor:>8.2f}"
                  f"{row['cached']:>8.2f}{row['cached'] / factor:>8.2f}{(row['cold_peak_kib'] or 0) / 1024:>10.1f}")
        del base
        for name, reason in bench.skipped.items():
            print(f"skipped {name}: {reason}")
        results["skipped"] = bench.skipped
        if args.json:
            args.json.write_text(json.dumps(results, indent=2))
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return 0


def run_fix_scaling(args: argparse.Namespace, work: Path) -> int:
    sizes = [int(n) for n in args.fix_scaling.split(",") if n.strip()]
    results = {"machine": machine(), "date": time.strftime("%Y-%m-%d")}
    print(f"{results['date']}  {results['machine']}")
    results["fix_scaling"] = fix_scaling(work, sizes, args.scale_runs)
    print_fix_scaling(results["fix_scaling"])
    if args.json:
        args.json.write_text(json.dumps(results, indent=2))
    return 0


def _git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True, text=True).stdout


def candidate_commits(repo: Path, test: str, count: int) -> tuple[str, list[str]]:
    """(base commit, one commit per candidate on it): each adds its own comment to ``test``."""
    base = _git(repo, "rev-parse", "HEAD").strip()
    candidates = []
    for number in range(count):
        _git(repo, "checkout", "-q", "--detach", base)
        with (repo / test).open("a", encoding="utf-8") as handle:
            handle.write(f"# bench candidate {number}\n")
        _git(repo, "-c", "user.name=bench", "-c", "user.email=bench@example.invalid", "commit", "-q", "-am",
             f"candidate {number}")
        candidates.append(_git(repo, "rev-parse", "HEAD").strip())
    _git(repo, "checkout", "-q", "--detach", base)
    return base, candidates


def run_verify_bench(args: argparse.Namespace, work: Path) -> int:
    if args.tree is None or not (args.tree / args.verify).is_file():
        raise SystemExit(f"bench: --verify wants a test file of the --tree checkout; {args.verify} is not one")
    repo = work / "repo"
    subprocess.run(["git", "clone", "-q", "--shared", str(args.tree), str(repo)], check=True)
    base, candidates = candidate_commits(repo, args.verify, 1 + args.candidates)
    results: dict = {"machine": machine(), "date": time.strftime("%Y-%m-%d"), "tree": str(args.tree),
                     "test": args.verify, "jobs": args.jobs, "rounds": []}
    print(f"{results['date']}  {results['machine']}\nverify {args.verify}, --jobs {args.jobs}")

    def verify(head: str, cache: Path, *extra: str) -> dict:
        command = [PYTHON, "-m", "flydsl_lint.verify.cli", "--repo", str(repo), "--mode", "compile",
                   "--base", base, "--head", head, "--tests", args.verify, "--jobs", str(args.jobs),
                   "--base-cache-dir", str(cache), *extra]
        errors = work / "verify.stderr"
        wall, cpu, _, status = measure(command, repo, stderr=errors)
        if status != 0:
            last = errors.read_text(encoding="utf-8", errors="replace").strip().splitlines()[-1:]
            raise SystemExit(f"bench: verify exited {status}: {' '.join(command)}: {''.join(last)}")
        return {"wall": wall, "cpu": cpu}

    for round_number in range(args.runs):
        cache = work / f"cache-{round_number}"
        plan = verify(candidates[0], cache, "--list")  # planning alone: what every run pays before compiling
        cold = verify(candidates[0], cache)
        warm = [verify(head, cache) for head in candidates[1:]]
        row = {"plan": plan, "cold": cold, "warm": warm,
               "warm_over_cold_wall": statistics.median(w["wall"] for w in warm) / cold["wall"],
               "warm_over_cold_cpu": statistics.median(w["cpu"] for w in warm) / cold["cpu"]}
        results["rounds"].append(row)
        warm_walls = ", ".join(f"{w['wall']:.1f}" for w in warm)
        print(f"  round {round_number + 1}: plan only {plan['wall']:.1f} s wall ({plan['cpu']:.1f} s cpu), "
              f"cold {cold['wall']:.1f} s wall ({cold['cpu']:.1f} s cpu), warm {warm_walls} s wall; "
              f"warm/cold {row['warm_over_cold_wall']:.2f} wall, {row['warm_over_cold_cpu']:.2f} cpu")
    results["machine_after"] = machine()
    print(f"  after: {results['machine_after']}")
    if args.json:
        args.json.write_text(json.dumps(results, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
