"""Compile capture: run kernel tests or entry points under COMPILE_ONLY and collect ISA.

Each call runs FlyDSL in fresh subprocesses (with the CUDA-on-CPU shim, no
compile cache and a dump directory per compilation) and returns the parsed
kernels keyed by specialization. ``compile_source`` and ``compare`` are the
public API other tests use to prove a rewrite leaves the ISA unchanged::

    before = compile_source(src, arch="gfx942", entry="build", workdir=tmp / "a")
    after = compile_source(fixed, arch="gfx942", entry="build", workdir=tmp / "b")
    assert all(c.verdict == "identical" for c in compare(before, after))
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import tempfile
import threading
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

import flydsl_lint
from flydsl_lint.verify import capture
from flydsl_lint.verify.compare import COMPILE_ERROR, KernelComparison, compare_kernels
from flydsl_lint.verify.isa import KernelIsa, parse_dump_dir
from flydsl_lint.verify.toolchain import Linker, find_linker

DEFAULT_TIMEOUT_SECONDS = 1800
LOG_TAIL_CHARS = 2000


@dataclass(frozen=True, order=True)
class SpecializationKey:
    """One compiled kernel: who asked for it, which kernel, and its compile order within that test."""

    label: str  # pytest node id, or "probe:module:function"
    kernel: str
    occurrence: int  # 0 for the first compilation of this kernel by this label


@dataclass
class CompileFailure:
    label: str
    func_name: str
    message: str


@dataclass
class CompileResult:
    arch: str
    evidence_dir: Path
    specializations: dict[SpecializationKey, KernelIsa] = field(default_factory=dict)
    failures: list[CompileFailure] = field(default_factory=list)
    outcomes: dict[str, tuple[str, str]] = field(default_factory=dict)  # label -> (outcome, message)
    flydsl_versions: set[str] = field(default_factory=set)  # the releases that compiled
    calling: set[str] = field(default_factory=set)  # the labels that called a FlyDSL jit function

    @property
    def ok(self) -> bool:
        return not self.failures

    @property
    def kernels(self) -> dict[str, KernelIsa]:
        """By kernel name; a kernel compiled again is listed as ``name#2``, ``name#3``..."""
        return {
            key.kernel if key.occurrence == 0 else f"{key.kernel}#{key.occurrence + 1}": isa
            for key, isa in sorted(self.specializations.items())
        }


def _capture_environment(tree: Path, arch: str, dump_root: Path, linker: Linker) -> dict[str, str]:
    env = dict(os.environ)
    package_parent = str(Path(flydsl_lint.__file__).resolve().parents[1])
    env.update(
        {
            "COMPILE_ONLY": "1",
            "ARCH": arch,
            "FLYDSL_GPU_ARCH": arch,  # FlyDSL and tests read the arch through get_rocm_arch()
            "FLYDSL_RUNTIME_ENABLE_CACHE": "0",
            "FLYDSL_DUMP_IR": "1",
            "FLYDSL_DUMP_DIR": str(dump_root / "unattributed"),
            "ROCM_PATH": str(linker.rocm_path),
            capture.ENV_ARCH: arch,
            capture.ENV_DUMP_ROOT: str(dump_root),
            "PYTHONPATH": os.pathsep.join(filter(None, [str(tree), package_parent, env.get("PYTHONPATH")])),
            "PYTHONDONTWRITEBYTECODE": "1",  # leave the user's tree as we found it
        }
    )
    return env


_live_processes: set[subprocess.Popen] = set()
_live_lock = threading.Lock()
_stopping = threading.Event()


def kill_running_captures() -> None:
    """Kill every capture subprocess still running (on Ctrl-C, from any thread)."""
    _stopping.set()
    with _live_lock:
        for process in _live_processes:
            process.kill()


def _run(command: list[str], *, cwd: Path, env: dict, log_path: Path, timeout: float) -> tuple[int | None, str]:
    """Run to completion; returns (exit code or None on timeout, log tail)."""
    with log_path.open("w", encoding="utf-8") as log, _live_lock:
        if _stopping.is_set():
            raise KeyboardInterrupt
        # The child keeps its own copy of the log descriptor.
        process = subprocess.Popen(command, cwd=cwd, env=env, stdout=log, stderr=subprocess.STDOUT)
        _live_processes.add(process)
    try:
        returncode = process.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        returncode = None
    finally:
        process.kill()  # no-op once exited; never leave a compiler running
        process.wait()
        with _live_lock:
            _live_processes.discard(process)
    return returncode, log_path.read_text(encoding="utf-8", errors="replace")[-LOG_TAIL_CHARS:]


KILLED_BY = "killed by "


def killed_message(number: int) -> str:
    """What ended a capture run that a signal killed (SIGKILL mostly comes from the out-of-memory killer)."""
    try:
        name = signal.Signals(number).name
    except ValueError:
        name = f"signal {number}"
    return KILLED_BY + name + (" (the system's out-of-memory killer?)" if number == signal.SIGKILL else "")


def _read_json_lines(path: Path) -> list[dict]:
    if not path.is_file():
        return []
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def _raise_hook_error(dump_root: Path) -> None:
    """A failure of our own hook makes every result of the run meaningless: stop with its reason."""
    for record in _read_json_lines(dump_root / capture.HOOK_ERRORS_MANIFEST):
        if record.get("unsupported"):
            raise capture.UnsupportedRelease(record["reason"])
        raise capture.HookError(f"the compile hook does not fit the installed flydsl {record['flydsl']}: "
                                f"{record['reason']}")


# Where a message names the checkout it was captured in: each side has its own, so a failure the
# change does not touch reads the same on both sides only once the checkout is out of it.
REPO_PLACEHOLDER = "<repo>"


def collect_evidence(dump_root: Path, result: CompileResult, tree: Path) -> None:
    """Fold one capture process's manifests and dumps into ``result`` (messages naming ``tree``,
    the checkout it ran in, name it ``<repo>``)."""
    roots = sorted({str(tree), str(tree.resolve())}, key=len, reverse=True)

    def in_repo_terms(message: str) -> str:
        for root in roots:
            message = message.replace(root, REPO_PLACEHOLDER)
        return message

    occurrences: Counter = Counter()
    for record in _read_json_lines(dump_root / capture.COMPILES_MANIFEST):
        result.flydsl_versions.add(record["flydsl"])
        if "error" in record:
            result.failures.append(CompileFailure(record["label"], record["func_name"], in_repo_terms(record["error"])))
            continue
        for kernel in parse_dump_dir(dump_root / record["dump_dir"]):
            key = SpecializationKey(record["label"], kernel.name, occurrences[(record["label"], kernel.name)])
            occurrences[(record["label"], kernel.name)] += 1
            result.specializations[key] = kernel
    result.calling.update(record["label"] for record in _read_json_lines(dump_root / capture.CALLS_MANIFEST))
    failed_labels = {failure.label for failure in result.failures}
    for record in _read_json_lines(dump_root / capture.OUTCOMES_MANIFEST):
        message = in_repo_terms(record["message"])
        result.outcomes[record["label"]] = (record["outcome"], message)
        # Errors while tracing never reach the compile step; report them once.
        if record["outcome"] == COMPILE_ERROR and record["label"] not in failed_labels:
            result.failures.append(CompileFailure(record["label"], "", message))


def _pytest_paths(tests: list[str]) -> list[str]:
    """The files (or folders) holding ``tests``, for pytest's command line.

    Node ids are not passed there but selected by the capture plugin: pytest answers one
    inside a file that skips itself at this arch (FlyDSL's gfx950-only tests on gfx942) with
    "found no collectors" and then runs none of the other tests.
    """
    return list(dict.fromkeys(test.split("::")[0] for test in tests))


def run_capture(
    tree: Path,
    *,
    arch: str,
    evidence_dir: Path,
    linker: Linker,
    tests: list[str] = (),
    probes: list[str] = (),
    timeout: float = DEFAULT_TIMEOUT_SECONDS,
    python: str = sys.executable,
) -> CompileResult:
    """Compile everything ``tests`` and ``probes`` (run inside ``tree``) ask for, for one arch.

    ``python`` is the interpreter whose flydsl compiles (another release's environment, say).
    """
    result = CompileResult(arch, evidence_dir)
    runs = []
    if tests:
        # A test file that cannot be collected here (a missing dependency) must not stop the others;
        # the tree as rootdir keeps node ids repo-relative when the tests' pytest.ini is deeper (FlyDSL's).
        pytest_command = [python, "-m", "pytest", "-p", "flydsl_lint.verify.pytest_capture",
                          "-p", "no:cacheprovider", "-q", "--tb=short", "--no-header",
                          "--continue-on-collection-errors", f"--rootdir={tree}", *_pytest_paths(tests)]
        runs.append(("tests", pytest_command))
    if probes:
        probe_args = [arg for spec in probes for arg in ("--probe", spec)]
        runs.append(("probes", [python, "-m", "flydsl_lint.verify.capture", *probe_args]))
    # pytest exits 1 when tests fail, which outputs compared under the shim are
    # expected to do; a probe has no such excuse.
    tolerated_exits = {"tests": (0, 1), "probes": (0,)}
    for name, command in runs:
        dump_root = evidence_dir / name
        dump_root.mkdir(parents=True, exist_ok=True)
        env = _capture_environment(tree, arch, dump_root, linker)
        if any("::" in test for test in tests):
            env[capture.ENV_TESTS] = json.dumps(list(tests))
        returncode, log_tail = _run(command, cwd=tree, env=env, log_path=evidence_dir / f"{name}.log", timeout=timeout)
        _raise_hook_error(dump_root)
        collect_evidence(dump_root, result, tree)
        if returncode is None:
            result.failures.append(CompileFailure(name, "", f"timed out after {timeout:.0f}s"))
        elif returncode < 0:
            result.failures.append(CompileFailure(name, "", killed_message(-returncode)))
        elif returncode not in tolerated_exits[name] and not result.outcomes:
            # Without a single recorded outcome the run never got going (say,
            # flydsl failed to import): that is a failure, not an empty success.
            result.failures.append(CompileFailure(name, "", f"exit code {returncode}:\n{log_tail}"))
    return result


def compile_source(
    source: str,
    *,
    arch: str,
    entry: str,
    workdir: Path,
    module_name: str = "kernel_under_test",
    timeout: float = 600,
    python: str = sys.executable,
) -> CompileResult:
    """Compile the kernels that ``source``'s function ``entry`` builds, for ``arch``.

    ``entry`` takes no arguments and builds/launches kernels with fixed shapes;
    torch tensors on "cuda" work through the CUDA-on-CPU shim. Evidence stays
    under ``workdir`` (a fresh subdirectory per call).
    """
    workdir.mkdir(parents=True, exist_ok=True)
    run_dir = Path(tempfile.mkdtemp(prefix=f"compile-{arch}-", dir=workdir))
    source_dir = run_dir / "src"
    source_dir.mkdir()
    (source_dir / f"{module_name}.py").write_text(source, encoding="utf-8")
    linker = find_linker(run_dir / "toolchain")
    return run_capture(
        source_dir,
        arch=arch,
        evidence_dir=run_dir / "evidence",
        linker=linker,
        probes=[f"{module_name}:{entry}"],
        timeout=timeout,
        python=python,
    )


def compare(before: CompileResult, after: CompileResult) -> list[KernelComparison]:
    """Verdict for every specialization on either side, plus one entry per compile failure."""
    comparisons = []
    for key in sorted(set(before.specializations) | set(after.specializations)):
        comparison = compare_kernels(before.specializations.get(key), after.specializations.get(key))
        comparison.test_id, comparison.occurrence = key.label, key.occurrence
        comparisons.append(comparison)
    for side, result in (("before", before), ("after", after)):
        for failure in result.failures:
            comparisons.append(
                KernelComparison(failure.func_name or "?", result.arch, COMPILE_ERROR, test_id=failure.label,
                                 side=side, message=failure.message)
            )
    return comparisons
