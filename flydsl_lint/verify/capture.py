"""In-subprocess side of compile capture: records every FlyDSL compilation.

FlyDSL names a dump directory after the kernel (``<kernel>_0``), so a second
compilation of the same kernel in one process would overwrite the first. The
recorder wraps FlyDSL's MLIR compile step and points ``FLYDSL_DUMP_DIR`` at a
fresh numbered directory before each compilation, then appends one manifest
line naming the test (or probe) that asked for it. The parent process reads
the manifest; nothing here parses ISA.

Run as ``python -m flydsl_lint.verify.capture --probe module:function ...`` to
call probe entry points; the pytest plugin in ``pytest_capture`` reuses the
recorder for test runs.
"""

from __future__ import annotations

import argparse
import importlib
import itertools
import json
import os
import sys
import traceback
from pathlib import Path

# Environment contract between the parent (compile_runner) and this process.
ENV_ARCH = "FLYDSL_VERIFY_ARCH"
ENV_DUMP_ROOT = "FLYDSL_VERIFY_DUMP_ROOT"
COMPILES_MANIFEST = "compiles.jsonl"
OUTCOMES_MANIFEST = "outcomes.jsonl"
LAUNCHES_MANIFEST = "launches.jsonl"  # device mode

OUTSIDE_ANY_TEST = "<module import>"


def append_json_line(path: Path, record: dict) -> None:
    with path.open("a", encoding="utf-8") as fh:
        fh.write(json.dumps(record) + "\n")


def _flydsl_package_dir() -> str:
    import flydsl

    return os.path.dirname(os.path.abspath(flydsl.__file__))


def raised_inside_flydsl(exc: BaseException) -> bool:
    """True when FlyDSL itself was on the stack: the error came from tracing or compiling."""
    flydsl_dir = _flydsl_package_dir() + os.sep
    tb = exc.__traceback__
    while tb is not None:
        if os.path.abspath(tb.tb_frame.f_code.co_filename).startswith(flydsl_dir):
            return True
        tb = tb.tb_next
    return isinstance(exc.__cause__, BaseException) and raised_inside_flydsl(exc.__cause__)


def describe_exception(exc: BaseException) -> str:
    """Type and message of the exception, as the traceback's last line shows them."""
    lines = traceback.format_exception_only(type(exc), exc)
    return "".join(lines).strip()


class CompileRecorder:
    """Gives each FlyDSL compilation its own dump directory and a manifest line."""

    def __init__(self, dump_root: Path):
        self.dump_root = dump_root
        self.dump_root.mkdir(parents=True, exist_ok=True)
        self.manifest = dump_root / COMPILES_MANIFEST
        self.outcomes = dump_root / OUTCOMES_MANIFEST
        self.current_label = OUTSIDE_ANY_TEST
        self._sequence = itertools.count()

    def install(self) -> None:
        from flydsl.compiler.jit_function import MlirCompiler

        original_compile = MlirCompiler.compile  # bound classmethod
        recorder = self

        def recording_compile(cls, asm, *, func_name, config, **kwargs):
            seq = next(recorder._sequence)
            # pid keeps directories apart when pytest-xdist shares one dump root.
            dump_dir = recorder.dump_root / f"c{os.getpid()}-{seq:04d}"
            os.environ["FLYDSL_DUMP_DIR"] = str(dump_dir)
            record = {"seq": seq, "label": recorder.current_label, "func_name": func_name, "dump_dir": dump_dir.name}
            try:
                return original_compile(asm, func_name=func_name, config=config, **kwargs)
            except BaseException as exc:
                record["error"] = describe_exception(exc)
                raise
            finally:
                append_json_line(recorder.manifest, record)

        MlirCompiler.compile = classmethod(recording_compile)

    def record_outcome(self, label: str, outcome: str, message: str = "") -> None:
        """outcome: passed | output-mismatch | compile-error | error | skipped."""
        append_json_line(self.outcomes, {"label": label, "outcome": outcome, "message": message})


def classify_failure(exc: BaseException) -> str:
    # Under the shim kernels never run, so wrong outputs are expected; errors
    # raised while FlyDSL traced or compiled are what parity cares about.
    if raised_inside_flydsl(exc):
        return "compile-error"
    if isinstance(exc, AssertionError):
        return "output-mismatch"
    return "error"


def start_from_environment() -> CompileRecorder:
    """Install the shim and recorder as configured by the parent process."""
    from flydsl_lint.verify import shim

    shim.install(os.environ[ENV_ARCH])
    recorder = CompileRecorder(Path(os.environ[ENV_DUMP_ROOT]))
    recorder.install()
    return recorder


def run_probe(recorder: CompileRecorder, spec: str) -> None:
    module_name, _, function_name = spec.partition(":")
    label = f"probe:{spec}"
    recorder.current_label = label
    try:
        entry = getattr(importlib.import_module(module_name), function_name)
        entry()
    except Exception as exc:  # one broken probe must not hide the others
        recorder.record_outcome(label, classify_failure(exc), describe_exception(exc))
    else:
        recorder.record_outcome(label, "passed")
    finally:
        recorder.current_label = OUTSIDE_ANY_TEST


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--probe", action="append", default=[], help="module:function to call")
    args = parser.parse_args(argv)
    sys.path.insert(0, os.getcwd())
    recorder = start_from_environment()
    for spec in args.probe:
        run_probe(recorder, spec)
    return 0


if __name__ == "__main__":
    sys.exit(main())
