"""In-subprocess side of compile capture: records every FlyDSL compilation.

FlyDSL names a dump directory after the kernel (``<kernel>_0``), so a second
compilation of the same kernel in one process would overwrite the first. The
recorder wraps FlyDSL's MLIR compile step and points ``FLYDSL_DUMP_DIR`` at a
fresh numbered directory before each compilation, then appends one manifest
line naming the test (or probe) that asked for it. The parent process reads
the manifest; nothing here parses ISA.

When the hook itself does not fit the installed flydsl (its compile step moved
or takes other arguments) or the shim cannot be installed, the reason goes to
a manifest of its own: the parent reports that as a setup error, never as a
kernel's compile error.

Run as ``python -m flydsl_lint.verify.capture --probe module:function ...`` to
call probe entry points; the pytest plugin in ``pytest_capture`` reuses the
recorder for test runs.
"""

from __future__ import annotations

import argparse
import importlib
import inspect
import itertools
import json
import os
import sys
import traceback
from dataclasses import dataclass
from pathlib import Path

# Environment contract between the parent (compile_runner) and this process.
ENV_ARCH = "FLYDSL_VERIFY_ARCH"
ENV_DUMP_ROOT = "FLYDSL_VERIFY_DUMP_ROOT"
# JSON list of the tests asked for (paths and node ids) when some are node ids (see pytest_capture).
ENV_TESTS = "FLYDSL_VERIFY_TESTS"
COMPILES_MANIFEST = "compiles.jsonl"
OUTCOMES_MANIFEST = "outcomes.jsonl"
CALLS_MANIFEST = "calls.jsonl"  # the tests that called a FlyDSL jit function (a cached kernel too)
LAUNCHES_MANIFEST = "launches.jsonl"  # device mode
PROBE_LABEL = "probe:"  # what a probe's compilations and outcome are labelled with, before module:function
COLLECT_LABEL = "collect:"  # what a test file's or class's collection outcome is labelled with, before its node id
HOOK_ERRORS_MANIFEST = "hook-errors.jsonl"

OUTSIDE_ANY_TEST = "<module import>"


def collected_test(label: str) -> str:
    """The node id a label names: a test's own, or what a collection label was collecting."""
    return label.removeprefix(COLLECT_LABEL)


def node_id_selects(node_id: str, item_id: str) -> bool:
    """Whether ``node_id`` names ``item_id`` as pytest would: the item itself, or a function,
    class or module holding it (``f`` selects ``f[1]``, ``Class`` selects ``Class::f``)."""
    return item_id == node_id or item_id.startswith((f"{node_id}::", f"{node_id}["))


def append_json_line(path: Path, record: dict) -> None:
    with path.open("a", encoding="utf-8") as fh:
        fh.write(json.dumps(record) + "\n")


class HookError(RuntimeError):
    """Our compile hook (recorder or shim) does not fit the installed flydsl: a setup error."""


class UnsupportedRelease(HookError):
    """The installed flydsl is outside the releases compile mode has a hook for."""


def flydsl_version() -> str:
    """The version of the flydsl this process imports (not merely one installed somewhere)."""
    try:
        import flydsl

        return str(flydsl.__version__)
    except Exception:  # flydsl that does not even import: fall back to its metadata
        from importlib import metadata

        try:
            return metadata.version("flydsl")
        except metadata.PackageNotFoundError:
            return "(unknown version)"


def record_hook_error(dump_root: Path, exc: BaseException) -> None:
    reason = str(exc) if isinstance(exc, HookError) else describe_exception(exc)
    record = {"reason": reason, "flydsl": flydsl_version(), "unsupported": isinstance(exc, UnsupportedRelease)}
    append_json_line(dump_root / HOOK_ERRORS_MANIFEST, record)


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


def release_tuple(version: str) -> tuple[int, ...] | None:
    """(0, 3, 4, 1) from "0.3.4.1" or "0.5.0.dev3"; None when it is no release number."""
    parts = []
    for part in version.split("."):
        if not part.isdigit():
            break
        parts.append(int(part))
    return tuple(parts) if len(parts) >= 2 else None


@dataclass(frozen=True)
class HookShape:
    """How ``MlirCompiler.compile`` looks over a range of releases, which is what the recorder wraps.

    The recorder needs only the kernel's name (``func_name``); the parameters
    are checked anyway, so a release whose compile step was reshaped is
    reported as a misfit instead of being recorded wrongly.
    """

    first: str
    last: str
    parameters: tuple[str, ...]  # after cls, in order

    def covers(self, release: tuple[int, ...]) -> bool:
        return release_tuple(self.first) <= release <= release_tuple(self.last)

    def check(self, signature: inspect.Signature) -> None:
        found = tuple(signature.parameters)
        if "func_name" not in found:
            raise HookError(f"MlirCompiler.compile{signature} has no func_name parameter to name the kernel by")
        if found != self.parameters:
            raise HookError(f"MlirCompiler.compile{signature} is not the ({', '.join(self.parameters)}) "
                            f"of flydsl {self.first}–{self.last}")


# One shape per signature of MlirCompiler.compile (data/flydsl_api.toml
# [signatures]), from the oldest release compile mode is tested on.
HOOK_SHAPES = (
    HookShape("0.3.0", "0.4.2", ("module", "arch", "func_name", "link_libs")),
    HookShape("0.5.0", "0.5.0", ("asm", "func_name", "config")),
)
SUPPORTED_RANGE = f"{HOOK_SHAPES[0].first}–{HOOK_SHAPES[-1].last}"


def hook_shape_for(version: str) -> HookShape:
    release = release_tuple(version)
    for shape in HOOK_SHAPES:
        if release is not None and shape.covers(release[:3]):
            return shape
    raise UnsupportedRelease(f"flydsl {version} is not supported by compile mode; supported: {SUPPORTED_RANGE}")


class CompileRecorder:
    """Gives each FlyDSL compilation its own dump directory and a manifest line."""

    def __init__(self, dump_root: Path):
        self.dump_root = dump_root
        self.dump_root.mkdir(parents=True, exist_ok=True)
        self.manifest = dump_root / COMPILES_MANIFEST
        self.outcomes = dump_root / OUTCOMES_MANIFEST
        self.current_label = OUTSIDE_ANY_TEST
        self.flydsl = ""  # the release compiling, once installed
        self._sequence = itertools.count()
        self._calling_labels: set[str] = set()

    def install(self) -> None:
        self.flydsl = flydsl_version()
        shape = hook_shape_for(self.flydsl)
        try:
            from flydsl.compiler.jit_function import MlirCompiler
        except (ImportError, AttributeError) as exc:
            reason = f"flydsl.compiler.jit_function.MlirCompiler is not there ({describe_exception(exc)})"
            raise HookError(reason) from exc
        original_compile = MlirCompiler.compile  # bound classmethod
        signature = inspect.signature(original_compile)
        shape.check(signature)
        recorder = self

        def recording_compile(cls, *args, **kwargs):
            try:
                call = signature.bind(*args, **kwargs)
                call.apply_defaults()
                record = recorder._begin(call.arguments["func_name"])
            except Exception as exc:  # in our frames, before FlyDSL compiles anything
                raise recorder.hook_failed(HookError(f"MlirCompiler.compile{signature}: {exc}")) from exc
            try:
                return original_compile(*args, **kwargs)
            except BaseException as exc:
                record["error"] = describe_exception(exc)
                raise
            finally:
                append_json_line(recorder.manifest, record)

        MlirCompiler.compile = classmethod(recording_compile)

        # A test whose kernel another test compiled first compiles nothing itself: its call of the
        # jit function says it reached FlyDSL all the same.
        try:
            from flydsl.compiler.jit_function import JitFunction
        except (ImportError, AttributeError) as exc:
            reason = f"flydsl.compiler.jit_function.JitFunction is not there ({describe_exception(exc)})"
            raise HookError(reason) from exc
        original_call = JitFunction.__call__

        def recording_call(jit, *args, **kwargs):
            recorder._called()
            return original_call(jit, *args, **kwargs)

        JitFunction.__call__ = recording_call

    def _called(self) -> None:
        if self.current_label not in self._calling_labels:
            self._calling_labels.add(self.current_label)
            append_json_line(self.dump_root / CALLS_MANIFEST, {"label": self.current_label})

    def _begin(self, func_name: str) -> dict:
        """Point the next compilation at a fresh dump directory; its manifest record."""
        seq = next(self._sequence)
        # pid keeps directories apart when pytest-xdist shares one dump root.
        dump_dir = self.dump_root / f"c{os.getpid()}-{seq:04d}"
        os.environ["FLYDSL_DUMP_DIR"] = str(dump_dir)
        return {"seq": seq, "label": self.current_label, "func_name": func_name, "dump_dir": dump_dir.name,
                "flydsl": self.flydsl}

    def hook_failed(self, exc: HookError) -> HookError:
        record_hook_error(self.dump_root, exc)
        return exc

    def record_outcome(self, label: str, outcome: str, message: str = "") -> None:
        """outcome: passed | output-mismatch | compile-error | import-error | error | skipped | not-found."""
        append_json_line(self.outcomes, {"label": label, "outcome": outcome, "message": message})


IMPORT_ERROR = "import-error"
NOT_FOUND = "not-found"  # a node id the parent asked for matched no test here


def _import_error(exc: BaseException) -> ImportError | None:
    """The ImportError itself, or the one pytest's collection error was raised from."""
    if isinstance(exc, ImportError):
        return exc
    return exc.__cause__ if isinstance(exc.__cause__, ImportError) else None


def classify_failure(exc: BaseException) -> str:
    # Under the shim kernels never run, so wrong outputs are expected; errors
    # raised while FlyDSL traced or compiled are what parity cares about. A
    # test that cannot import what it needs here (pandas, say) proves nothing.
    if raised_inside_flydsl(exc):
        return "compile-error"
    if _import_error(exc) is not None:
        return IMPORT_ERROR
    if isinstance(exc, AssertionError):
        return "output-mismatch"
    return "error"


def describe_failure(exc: BaseException) -> str:
    """``describe_exception``, naming an import error by its own line rather than pytest's wrapper."""
    return describe_exception(_import_error(exc) or exc)


def start_from_environment() -> CompileRecorder:
    """Install the shim and recorder as configured by the parent process."""
    from flydsl_lint.verify import shim

    recorder = CompileRecorder(Path(os.environ[ENV_DUMP_ROOT]))
    try:
        shim.install(os.environ[ENV_ARCH])
        recorder.install()
    except Exception as exc:
        record_hook_error(recorder.dump_root, exc)
        raise
    return recorder


def run_probe(recorder: CompileRecorder, spec: str) -> None:
    module_name, _, function_name = spec.partition(":")
    label = f"{PROBE_LABEL}{spec}"
    recorder.current_label = label
    try:
        entry = getattr(importlib.import_module(module_name), function_name)
        entry()
    except Exception as exc:  # one broken probe must not hide the others
        recorder.record_outcome(label, classify_failure(exc), describe_failure(exc))
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
