"""Apply one code's fix with the real engine and compile before/after with the real flydsl wheel."""

from __future__ import annotations

import importlib.util
import os
import shutil
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from flydsl_lint.run.checker import Checker
from flydsl_lint.engine.diagnostics import Applicability
from flydsl_lint.engine.source import SourceFile
from flydsl_lint.engine.target import releases
from flydsl_lint.engine.versions import Version
from flydsl_lint.run.fix_loop import fix_source
from tests.conftest import make_settings

FLYDSL_SRC = Path(os.environ.get("FLYDSL_SRC", "/work/flydsl-src"))
# kernels/common/buffer_ops.py lives in the FlyDSL checkout, not in the wheel.
BUFFER_OPS = FLYDSL_SRC / "kernels" / "common" / "buffer_ops.py"
# Checkouts of single releases (flydsl-v<release> in this folder): a wheel is compiled with its own
# release's buffer_ops when there is one (the newest helpers build ops an old wheel lacks).
RELEASE_CHECKOUTS = Path(os.environ.get("FLYDSL_RELEASE_CHECKOUTS", "/work"))


def buffer_ops_for(release: str) -> Path:
    """The kernels/common/buffer_ops.py to compile against flydsl ``release``: its own tag's,
    else (for the newest release only) FlyDSL HEAD's. An older release is never proven with
    HEAD's helpers, which may build ops its wheel lacks: without its checkout the returned
    path is missing and the proof skips, naming it."""
    own = RELEASE_CHECKOUTS / f"flydsl-v{release}" / "kernels" / "common" / "buffer_ops.py"
    if own.is_file() or release != str(releases().known[-1]):
        return own
    return BUFFER_OPS


def flydsl_missing_reason() -> str | None:
    """Why the compile proofs cannot run here, or None. Imports flydsl for real:
    a wheel whose dependencies are missing (numpy) must skip, not fail."""
    if importlib.util.find_spec("flydsl") is None or importlib.util.find_spec("torch") is None:
        return "needs the flydsl wheel and torch: run scripts/install_compile_toolchain.sh"
    try:
        import flydsl.compiler  # noqa: F401
        import flydsl.expr  # noqa: F401
    except Exception as exc:  # pragma: no cover - depends on the machine
        return f"flydsl is installed but not importable ({type(exc).__name__}: {exc})"
    return None


@dataclass(frozen=True)
class Variant:
    module: str  # name in kernels_under_proof
    code: str | None  # None: the original source
    arch: str


def settings_for(root: Path, code: str, arch: str, release: str):
    # FLY013 judges a `noqa: FLY105` only when FLY105 ran too; FLY105 has no
    # hit in the kernels, so only FLY013 edits are made.
    select = (code, "FLY105") if code == "FLY013" else (code,)
    return make_settings(root, select=select, target_arch=(arch,), target_version=Version.parse(release))


@dataclass
class FixOutcome:
    before: str
    after: str
    safe_before: int  # diagnostics of the code with a safe fix, before
    count_before: int
    remaining: list  # diagnostics of the code after the fix


def apply_fix(source: str, code: str, arch: str, release: str, root: Path) -> FixOutcome:
    """The fix loop exactly as `flydsl-lint check --fix` runs it, for one code, targeting ``release``."""
    checker = Checker(settings_for(root, code, arch, release))
    path = str(root / "kernel_under_test.py")
    diagnostics = [d for d in checker.check(SourceFile(path, source)) if d.code == code]
    safe = [d for d in diagnostics if d.fix is not None and d.fix.applicability == Applicability.SAFE]
    result = fix_source(SourceFile(path, source), checker, unsafe=False)
    remaining = [d for d in checker.check(SourceFile(path, result.new_text)) if d.code == code]
    return FixOutcome(source, result.new_text, len(safe), len(diagnostics), remaining)


def stage_pythonpath(root: Path, release: str) -> Path | None:
    """A `kernels.common.buffer_ops` importable by the kernels compiled on ``release``,
    copied from a FlyDSL checkout at run time (never committed). None without a checkout."""
    source = buffer_ops_for(release)
    if not source.is_file():
        return None
    common = root / release / "kernels" / "common"
    common.mkdir(parents=True, exist_ok=True)
    (common.parent / "__init__.py").write_text("")
    (common / "__init__.py").write_text("")
    shutil.copy(source, common / "buffer_ops.py")
    return root / release


def compile_all(jobs: set, pythons: dict[str, str], workdir: Path, extra_paths: dict[str, Path | None]) -> dict:
    """Compile every (source, arch, release) job once, in parallel, with that release's
    interpreter (``pythons``) and its entry of ``extra_paths`` prepended to PYTHONPATH;
    {(source, arch, release): CompileResult}."""
    from flydsl_lint.verify.compile import compile_source

    previous = os.environ.get("PYTHONPATH")
    results = {}
    try:
        with ThreadPoolExecutor(max_workers=max(2, os.cpu_count() or 2)) as pool:
            # A child reads PYTHONPATH when it starts: one release's jobs at a time.
            for release in sorted({release for *_, release in jobs}):
                extra = extra_paths.get(release)
                os.environ["PYTHONPATH"] = os.pathsep.join(filter(None, [str(extra) if extra else None, previous]))
                futures = {
                    (source, arch, release): pool.submit(
                        compile_source, source, arch=arch, entry="build", workdir=workdir / release / arch,
                        python=pythons[release],
                    )
                    for source, arch, job_release in sorted(jobs) if job_release == release
                }
                results.update({job: future.result() for job, future in futures.items()})
    finally:
        if previous is None:
            os.environ.pop("PYTHONPATH", None)
        else:
            os.environ["PYTHONPATH"] = previous
    return results
