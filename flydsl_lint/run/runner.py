"""A run over many files: discovery, the result cache, checking or fixing each
file (in worker processes when there is enough work), collecting results.

Speed notes (see bench/): the cyclic garbage collector is switched off for
the run, because every checked tree is released by reference counting
(`SemanticModel.release`); a fully cached run never imports a rule; worker
processes are forked only when the uncached work is large enough to repay
them, they inherit the parent's already-built `Checker`, and the parent checks
files beside them rather than feeding a pool (`_run_forked`).
"""

from __future__ import annotations

import gc
import os
import sys
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import NamedTuple

from ..engine.config import Settings
from ..engine.diagnostics import Diagnostic, fix_applies
from ..engine.files import discover
from ..engine.source import DEFAULT_MAX_FILE_SIZE, SourceError, SourceFile, read_data
from .collector import collector_paused

# Below this much uncached source, forking workers costs more than it saves.
PARALLEL_MIN_BYTES = 256 * 1024


class FileResult:
    __slots__ = ("path", "diagnostics", "error", "fixed", "diff")

    def __init__(self, path: str, diagnostics: list[Diagnostic] | None = None, error: str | None = None,
                 fixed: Counter | None = None, diff: str = "") -> None:
        self.path = path
        self.diagnostics = diagnostics if diagnostics is not None else []
        self.error = error  # one line: "<path>: <reason>"
        self.fixed = fixed if fixed is not None else Counter()
        self.diff = diff


class RunResult:
    __slots__ = ("files", "target")

    def __init__(self, files: list[FileResult] | None = None, target: tuple[str | None, str] = (None, "unknown")) -> None:
        self.files = files if files is not None else []
        self.target = target  # (the FlyDSL release fixes were gated on, where it came from)

    @property
    def diagnostics(self) -> list[Diagnostic]:
        return [d for result in self.files for d in result.diagnostics]

    @property
    def errors(self) -> list[str]:
        return [result.error for result in self.files if result.error]

    @property
    def fixed(self) -> Counter:
        total: Counter = Counter()
        for result in self.files:
            total.update(result.fixed)
        return total


class Mode(NamedTuple):
    fix: bool = False
    unsafe_fixes: bool = False
    diff: bool = False  # compute fixes, show them, write nothing

    @property
    def writes(self) -> bool:
        return self.fix and not self.diff


def check_path(path: Path, checker, mode: Mode) -> FileResult:
    """Check (and maybe fix) one file without the cache; never raises for a bad file."""
    return _Job(checker, None, mode).run(path)


class _Job:
    """Checks files for one run: the checker (built on first need) and the cache."""

    def __init__(self, checker, cache, mode: Mode, settings: Settings | None = None) -> None:
        self._checker = checker
        self.cache = cache
        self.mode = mode
        self.settings = settings
        self._keys: dict[Path, tuple[str, list, Path]] = {}  # see `_key`
        self._folders: dict[str, tuple[str, Path]] = {}  # see module_name_for
        self.max_file_size = settings.max_file_size if settings is not None else DEFAULT_MAX_FILE_SIZE

    @property
    def checker(self):
        if self._checker is None:
            from .checker import Checker

            self._checker = Checker(self.settings)
        return self._checker

    def release(self) -> None:
        """Free what the checker, if one was built, kept for the run (`Checker.release`)."""
        if self._checker is not None:
            self._checker.release()

    # ------------------------------------------------------------ the cache
    def _key(self, path: Path) -> tuple[str, list, Path]:
        """The resolved path, module key and package root of a file; worked out
        once a run (looked up, then stored after the check)."""
        key = self._keys.get(path)
        if key is None:
            from ..engine.project import module_name_for

            module, is_package, package_root = module_name_for(path, self._folders, self.settings.src)
            key = self._keys[path] = (str(path.resolve()), [module, is_package, str(package_root)], package_root)
        return key

    def cached(self, path: Path) -> FileResult | None:
        """The cached result, if valid and usable in this mode."""
        from .cache import content_digest

        if not self.cache.may_hold_entries():
            return None  # a first run: nothing to find, so no file is read and hashed for it
        name = str(path)
        try:
            data = read_data(path, self.max_file_size)
        except SourceError:
            return None  # reported by the uncached path
        resolved, module_key, _ = self._key(path)
        hit = self.cache.lookup(resolved, content_digest(data), module_key, name)
        if hit is None:
            return None
        diagnostics, error = hit
        if error is not None:
            return FileResult(name, error=f"{name}: {error}")
        if self.mode.fix or self.mode.diff:
            if any(fix_applies(d.fix, self.mode.unsafe_fixes) for d in diagnostics):
                return None  # there is something to fix: run the fix loop
        return FileResult(name, diagnostics)

    def _store(self, path: Path, data: bytes, diagnostics: list[Diagnostic], error: str | None, index) -> None:
        from .cache import content_digest

        resolved, module_key, package_root = self._key(path)
        deps = self.cache.dependencies(index.touched, package_root)
        self.cache.store(resolved, content_digest(data), module_key, deps, diagnostics, error)

    # ------------------------------------------------------------- checking
    def run(self, path: Path) -> FileResult:
        """Check (and maybe fix) one file; never raises for a bad file."""
        name = str(path)
        try:
            data = read_data(path, self.max_file_size)
        except SourceError as exc:
            return FileResult(name, error=str(exc))
        checker = self.checker
        index = None
        if self.cache is not None:
            index = checker.project_for(name)[0]  # its `touched` modules become this file's dependencies
        try:
            source = SourceFile.from_bytes(name, data)
            if not (self.mode.fix or self.mode.diff):
                diagnostics = checker.check(source)
                if index is not None:
                    self._store(path, data, diagnostics, None, index)
                return FileResult(name, diagnostics)
            return self._fix(path, data, source, checker, index)
        except SourceError as exc:
            if index is not None and not (self.mode.fix or self.mode.diff):  # a fix loop's failure is not the file's
                self._store(path, data, [], exc.reason, index)
            return FileResult(name, error=str(exc))
        except OSError as exc:
            return FileResult(name, error=f"{name}: cannot write: {exc.strerror or exc}")

    def _fix(self, path: Path, data: bytes, source: SourceFile, checker, index) -> FileResult:
        from ..engine.writes import write_atomic

        result, new_text = _fix_loop(str(path), source, checker, self.mode)
        if new_text is None:
            if index is not None and not result.diff:  # nothing to fix: the remaining diagnostics are this content's
                self._store(path, data, result.diagnostics, None, index)
            return result
        new_data = source.encode(new_text)
        write_atomic(path, new_data)
        if index is not None:  # the remaining diagnostics are those of what was written
            self._store(path, new_data, result.diagnostics, None, index)
        return result


def _fix_loop(name: str, source: SourceFile, checker, mode: Mode) -> tuple[FileResult, str | None]:
    """The fix loop's result for `source` (a diff in diff mode), and the text to
    write: None when nothing changed or nothing is to be written."""
    from .fix_loop import fix_source

    outcome = fix_source(source, checker, unsafe=mode.unsafe_fixes)
    result = FileResult(name, outcome.remaining, fixed=outcome.applied)
    if not outcome.changed:
        return result, None
    if mode.diff:
        result.diff = _unified_diff(name, source.text, outcome.new_text)
        result.diagnostics = checker.check(source)
        return result, None
    return result, outcome.new_text


def _unified_diff(name: str, old_text: str, new_text: str) -> str:
    import difflib

    return "".join(difflib.unified_diff(old_text.splitlines(keepends=True), new_text.splitlines(keepends=True),
                                        fromfile=f"a/{name}", tofile=f"b/{name}"))


def check_data(name: str, data: bytes, settings: Settings, mode: Mode = Mode()) -> tuple[FileResult, bytes]:
    """Check (and maybe fix) source that is not read from disk (stdin), named
    `name` for the configuration and the output: the result, and the source to
    hand back (fixed in fix mode; as given otherwise or when it cannot be checked)."""
    from .checker import Checker

    checker = Checker(settings)
    try:
        source = SourceFile.from_bytes(name, data)
        if not (mode.fix or mode.diff):
            return FileResult(name, checker.check(source)), data
        result, new_text = _fix_loop(name, source, checker, mode)
        return result, data if new_text is None else source.encode(new_text)
    except SourceError as exc:
        return FileResult(name, error=str(exc)), data


# ------------------------------------------------------------- worker processes
_WORKER_JOB: _Job | None = None


def _worker_init(settings: Settings, mode: Mode, use_cache: bool) -> None:
    global _WORKER_JOB
    import signal

    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the parent handles Ctrl-C
    gc.disable()
    from .cache import Cache

    _WORKER_JOB = _Job(None, Cache(settings) if use_cache else None, mode, settings)


def _worker_run(item: tuple[int, str]) -> tuple[int, FileResult]:
    index, path = item
    assert _WORKER_JOB is not None
    return index, _WORKER_JOB.run(Path(path))


def _cpu_count() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def _sizes(paths: list[Path]) -> list[int]:
    sizes = []
    for path in paths:
        try:
            sizes.append(path.stat().st_size)
        except OSError:
            sizes.append(0)
    return sizes


def _run_forked(job: _Job, todo: list[tuple[int, Path]], sizes: list[int], workers: int) -> list[tuple[int, FileResult]]:
    """Check `todo` in this process and `workers - 1` forked children.

    Every process takes the next file, largest files first, so the last to
    finish has a small file; a child pickles each result as it goes and sends
    them through a pipe when it is done. No pool: the parent works instead of
    feeding workers, and nothing is sent per file. Files a failed child took
    are checked here afterwards.
    """
    import io
    import pickle
    import signal

    order = [todo[i] for i in sorted(range(len(todo)), key=lambda i: -sizes[i])]
    # The position of the next file to take travels as the one token in a pipe:
    # reading it is taking the turn (a pipe read of a whole small write is
    # atomic), writing the successor hands it on. Cheaper to set up than
    # multiprocessing's lock and shared memory, whose import alone delays the fork.
    token_read, token_write = os.pipe()
    os.write(token_write, (0).to_bytes(8, "little"))

    def work(keep: Callable[[tuple[int, FileResult]], object]) -> None:
        while True:
            taken = int.from_bytes(os.read(token_read, 8), "little")
            os.write(token_write, (taken + 1).to_bytes(8, "little"))
            if taken >= len(order):
                return
            position, path = order[taken]
            keep((position, job.run(path)))

    # Built once (rule imports, rules.toml) for every child to inherit. Not after the fork:
    # Ctrl-C during the parent's rule imports then ended the run by signal instead of exit 130.
    job.checker
    gc.freeze()  # inherited objects stay out of the children's collections and pages stay shared
    children: list[tuple[int, int]] = []
    try:
        for _ in range(workers - 1):
            read_end, write_end = os.pipe()
            pid = os.fork()
            if pid == 0:  # the child: work, send, exit without running the parent's clean-up
                status = 1
                try:
                    os.close(read_end)
                    # Pickled file by file while the parent still works: a dump of
                    # them all at the end kept the parent waiting for it.
                    payload = io.BytesIO()
                    work(pickle.Pickler(payload, protocol=pickle.HIGHEST_PROTOCOL).dump)
                    with os.fdopen(write_end, "wb") as pipe:
                        pipe.write(payload.getbuffer())
                    status = 0
                finally:
                    os._exit(status)
            os.close(write_end)
            children.append((pid, read_end))
        results: list[tuple[int, FileResult]] = []
        work(results.append)
        while children:
            pid, read_end = children[-1]
            with os.fdopen(read_end, "rb") as pipe:
                payload = pipe.read()
            _, status = os.waitpid(pid, 0)
            children.pop()
            if status == 0:
                results += _unpickle_all(payload)
    finally:
        for pid, read_end in children:  # interrupted: stop the others
            for step in (lambda: os.kill(pid, signal.SIGTERM), lambda: os.waitpid(pid, 0), lambda: os.close(read_end)):
                try:
                    step()
                except OSError:
                    pass
        os.close(token_read)
        os.close(token_write)
        gc.unfreeze()
    checked = {position for position, _ in results}
    results += [(position, job.run(path)) for position, path in todo if position not in checked]
    return results


def _unpickle_all(payload: bytes) -> list:
    """The objects pickled one after another into `payload` by one Pickler."""
    import io
    import pickle

    unpickler = pickle.Unpickler(io.BytesIO(payload))
    found = []
    while True:
        try:
            found.append(unpickler.load())
        except EOFError:
            return found


def _run_parallel(job: _Job, todo: list[tuple[int, Path]], sizes: list[int], workers: int,
                  settings: Settings, mode: Mode, use_cache: bool) -> list[tuple[int, FileResult]]:
    if hasattr(os, "fork") and not _is_macos():  # macOS: fork is unsafe with system frameworks loaded
        return _run_forked(job, todo, sizes, workers)
    import multiprocessing

    # Spawned workers (macOS, Windows) inherit nothing: each builds its own job.
    # Largest files first, one at a time: the last worker to finish has a small file.
    order = sorted(range(len(todo)), key=lambda i: -sizes[i])
    items = [(todo[i][0], str(todo[i][1])) for i in order]
    with multiprocessing.get_context().Pool(workers, initializer=_worker_init, initargs=(settings, mode, use_cache)) as pool:
        results = list(pool.imap_unordered(_worker_run, items, chunksize=1))
        pool.close()
        pool.join()
    return results


# glibc's mallopt() parameters (malloc.h): how much free memory at the top of the heap it keeps
# before giving it back to the system, and the size from which a block gets its own mapping.
_M_TRIM_THRESHOLD, _M_MMAP_THRESHOLD = -1, -3
_MMAP_THRESHOLD_MAX = 32 << 20  # glibc's ceiling for M_MMAP_THRESHOLD on 64-bit systems


def keep_freed_memory() -> bool:
    """Ask glibc to keep freed heap memory instead of returning it at once;
    True if it was asked. Each file's tree and model are freed before the
    next file's are built, and memory returned in between is faulted in again.
    Blocks of a big file's maps and lists (4 to 32 MiB) are mapped apart and
    unmapped when freed unless the mapping threshold is raised. Over FlyDSL's
    kernels/ (two processes) that was 32k page faults with the trim threshold
    alone and 26k with both, for 2 MiB more peak memory. A batch run ends soon
    after; a long-lived process (flake8, the language server) never calls this."""
    if not sys.platform.startswith("linux"):
        return False
    try:
        import ctypes

        libc = ctypes.CDLL(None)
        return libc.mallopt(_M_TRIM_THRESHOLD, 1 << 30) == 1 and libc.mallopt(_M_MMAP_THRESHOLD, _MMAP_THRESHOLD_MAX) == 1
    except (OSError, AttributeError):  # no C library handle, or not glibc's
        return False


def _is_macos() -> bool:
    return sys.platform == "darwin"


def target_of(settings: Settings) -> tuple[str | None, str]:
    """The target release as a run reports it: its number (None: unknown) and its source."""
    version = settings.target_version
    return (str(version) if version is not None else None), settings.target_version_source


def run(paths: list[str], settings: Settings, mode: Mode = Mode(), use_cache: bool = True,
        jobs: int | None = None) -> RunResult:
    """Check or fix `paths`. `jobs`: worker processes (None: by the work and the CPUs; 1: none)."""
    files, missing = discover(paths, settings)
    result = RunResult([FileResult(bad.path, error=f"{bad.path}: {bad.reason}") for bad in missing], target_of(settings))
    cache = None
    if use_cache:
        from .cache import Cache

        cache = Cache(settings)
    job = _Job(None, cache, mode, settings)
    with collector_paused():
        try:
            results: list[FileResult | None] = [None] * len(files)
            todo: list[tuple[int, Path]] = []
            for position, path in enumerate(files):
                hit = job.cached(path) if cache is not None else None
                if hit is None:
                    todo.append((position, path))
                else:
                    results[position] = hit
            sizes = _sizes([path for _, path in todo])
            batch = sum(sizes) >= PARALLEL_MIN_BYTES
            if batch:
                keep_freed_memory()
            workers = min(jobs or _cpu_count(), len(todo))
            parallel = workers >= 2 and not mode.writes and (jobs is not None or batch)
            if parallel:
                for position, file_result in _run_parallel(job, todo, sizes, workers, settings, mode, use_cache):
                    results[position] = file_result
            else:
                for position, path in todo:
                    results[position] = job.run(path)
            result.files.extend(r for r in results if r is not None)
        finally:
            job.release()  # before the collector is back
    return result
