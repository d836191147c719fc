"""A persistent per-file cache of check results.

An entry is found by the file's resolved path under a directory named by the
run's fingerprint: cache format, tool version, Python version, a hash of the
linter's own rule and engine sources and of rules.toml (so an upgrade, or an
edit of an editable install, never reads old results) and the settings'
fingerprint. The entry is used only if it still matches

- the file's content hash,
- the file's module name and package root (an `__init__.py` added or removed
  above it changes how relative imports resolve), and
- every project module it may have read: each module looked up through its
  project index so far in the run (conservative: rules may memoize what they
  read for an earlier file), as each path the index would probe for it, with
  the content hash of the file there or "absent". A change to a module that
  re-exports a name invalidates the files that resolved through it.

Entries are JSON (never unpickled: a cache folder may come from anywhere),
written to a temporary file and renamed into place, so concurrent runs see a
whole entry or none.

A cache folder may come from anywhere (a repository can ship one), so an entry
is trusted only when it carries the keyed digest of its content under the
user's own key (`user_key`, kept outside every project), and only after a
strict check of its every field (`_diagnostic_from_entry`). Anything else (an
unreadable, oversized, deeply nested, malformed or unsigned entry) is a miss.
The cache writes only into a folder it created, an empty one or one already
tagged as ours, and prunes only our fingerprint folders inside a tagged one.
"""

from __future__ import annotations

import json
import os
import re
import sys
from pathlib import Path

from ..engine.diagnostics import Applicability, Diagnostic, Edit, Fix, Position

CACHE_FORMAT = 2  # 2: entries carry the keyed digest of their content
KEEP_FINGERPRINTS = 8  # older fingerprint folders (upgrades, other settings) are pruned
FINGERPRINT_FOLDER = re.compile(r"v[0-9]+-[0-9a-f]{24}")  # the only names `_prune` removes
MAX_ENTRY_BYTES = 16 << 20  # an entry file larger than this is a miss, never read whole
MAX_MESSAGE_CHARS = 10_000  # a diagnostic's or a fix's message, an error reason
MAX_DEPENDENCY_BYTES = 1 << 30  # a project module larger than this counts as absent
# The tag (https://bford.info/cachedir/) that marks a folder as this tool's cache: backup
# tools skip it, and `flydsl-lint clean` removes only folders that carry it.
CACHEDIR_TAG = "Signature: 8a477f597d28d172789f06886806bc55\n# a flydsl-lint cache; see https://bford.info/cachedir/\n"


try:
    from _blake2 import blake2b  # hashlib itself loads OpenSSL: a start-up cost a cached run need not pay
except ImportError:  # pragma: no cover
    from hashlib import blake2b


def _digest(data: bytes) -> str:
    return blake2b(data, digest_size=20).hexdigest()


KEY_FILE_VARIABLE = "FLYDSL_LINT_KEY_FILE"  # where the user's key is kept, for tests and odd homes
_USER_KEY: bytes | None = None


def user_key_path() -> Path:
    """$FLYDSL_LINT_KEY_FILE, else `flydsl-lint/entry-key` in the user's cache home."""
    chosen = os.environ.get(KEY_FILE_VARIABLE)
    if chosen:
        return Path(chosen)
    home = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(home) / "flydsl-lint" / "entry-key"


def user_key() -> bytes | None:
    """The user's secret that signs cache entries, made on first need; None when it
    can be neither read nor made (a read-only home): the run goes without a cache."""
    global _USER_KEY
    if _USER_KEY is None:
        from ..engine.source import read_regular

        path = user_key_path()
        try:
            key = read_regular(path, 1024)
        except FileNotFoundError:
            key = _make_user_key(path)
        except OSError:
            key = b""
        _USER_KEY = key if len(key) >= 32 else b""
    return _USER_KEY or None


def _make_user_key(path: Path) -> bytes:
    """A new random key at `path`, readable by the user only; b"" when it cannot be written."""
    key = os.urandom(32).hex().encode()
    temporary = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        with open(os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600), "wb") as handle:
            handle.write(key)
        os.replace(temporary, path)  # concurrent first runs: the last key wins, the others' entries just miss
    except OSError:
        try:
            os.unlink(temporary)
        except OSError:
            pass
        return b""
    return key


def _signature(key: bytes, payload: bytes) -> bytes:
    return blake2b(payload, digest_size=20, key=key).hexdigest().encode()


_TOOL_FINGERPRINT: str | None = None


def fingerprint_sources() -> list[Path]:
    """The package files whose content shapes diagnostics: the engine (with its
    model), the rules, the fixes and the data tables they read."""
    package = Path(__file__).resolve().parent.parent
    sources: list[Path] = []
    for folder in ("engine", "engine/model", "rules", "fixes"):
        sources.extend(sorted((package / folder).glob("*.py")))
    return sources + sorted((package / "data").glob("*.t*"))  # .txt and .toml tables


def tool_fingerprint() -> str:
    """Version, Python, and the content of every source that shapes diagnostics."""
    global _TOOL_FINGERPRINT
    if _TOOL_FINGERPRINT is None:
        from .. import __version__
        from ..engine.metadata import rules_toml_path

        hasher = blake2b(digest_size=20)
        hasher.update(f"{CACHE_FORMAT}|{__version__}|{sys.implementation.cache_tag}|{sys.version}".encode())
        for source in [rules_toml_path(), *fingerprint_sources()]:
            try:
                data = source.read_bytes()
            except OSError:
                data = b"<unreadable>"
            hasher.update(f"\0{source.name}\0{len(data)}\0".encode())
            hasher.update(data)
        _TOOL_FINGERPRINT = hasher.hexdigest()
    return _TOOL_FINGERPRINT


# ------------------------------------------------------------ diagnostics <-> JSON
def _fix_to_json(fix: Fix | None) -> list | None:
    if fix is None:
        return None
    edits = [[e.start.row, e.start.col, e.end.row, e.end.col, e.content] for e in fix.edits]
    return [edits, fix.applicability.value, fix.message]


class InvalidEntry(ValueError):
    """A cache entry that is not exactly what `store` writes: a miss."""


def _require(condition: bool) -> None:
    if not condition:
        raise InvalidEntry


def _is_count(value: object) -> bool:
    """A non-negative int (not a bool, which is an int to Python)."""
    return type(value) is int and value >= 0


def _text(value: object, limit: int | None = MAX_MESSAGE_CHARS) -> str:
    _require(type(value) is str and (limit is None or len(value) <= limit))
    return value  # type: ignore[return-value]


def _range(r1: object, c1: object, r2: object, c2: object) -> tuple[Position, Position]:
    _require(_is_count(r1) and _is_count(c1) and _is_count(r2) and _is_count(c2))
    start, end = Position(r1, c1), Position(r2, c2)  # type: ignore[arg-type]
    _require(start <= end)
    return start, end


_APPLICABILITIES = {a.value: a for a in Applicability}


def _fix_from_json(data: object) -> Fix | None:
    if data is None:
        return None
    _require(type(data) is list and len(data) == 3)
    edits, applicability, message = data  # type: ignore[misc]
    _require(type(edits) is list and bool(edits) and applicability in _APPLICABILITIES)
    parsed = []
    for edit in edits:
        _require(type(edit) is list and len(edit) == 5)
        parsed.append(Edit(*_range(*edit[:4]), _text(edit[4], limit=None)))  # content: bounded by the entry's size
    return Fix(tuple(parsed), _APPLICABILITIES[applicability], _text(message))


def diagnostic_to_json(d: Diagnostic) -> list:
    return [d.code, d.message, d.start.row, d.start.col, d.end.row, d.end.col, _fix_to_json(d.fix), d.noqa_row, d.suppressed,
            d.fix_needs]


def diagnostic_from_json(data: object, path: str) -> Diagnostic:
    """The diagnostic a row of an entry holds; InvalidEntry unless every field has
    the type and range `diagnostic_to_json` writes and the code is a known rule's."""
    from ..engine.metadata import load_metadata

    _require(type(data) is list and len(data) == 10)
    code, message, r1, c1, r2, c2, fix, noqa_row, suppressed, fix_needs = data  # type: ignore[misc]
    _require(type(code) is str and code in load_metadata() and _is_count(noqa_row) and type(suppressed) is bool)
    _require(fix_needs is None or (type(fix_needs) is str and _release_a_fix_may_need(code, fix_needs)))
    start, end = _range(r1, c1, r2, c2)
    return Diagnostic(code, _text(message), path, start, end, _fix_from_json(fix), noqa_row, suppressed, fix_needs)


def _release_a_fix_may_need(code: str, release: str) -> bool:
    """The rule's fix-since, or (a fix's own `since`) a FlyDSL release the tool knows."""
    from ..engine.metadata import load_metadata
    from ..engine.target import releases

    return release == load_metadata()[code].fix_since or release in {str(known) for known in releases().known}


def _dependency(item: object) -> tuple[str, str | None]:
    """A [path, digest] pair of an entry: an absolute .py path, a digest or None."""
    _require(type(item) is list and len(item) == 2)
    path, digest = item  # type: ignore[misc]
    _require(type(path) is str and path.endswith(".py") and os.path.isabs(path) and "\0" not in path)
    _require(digest is None or (type(digest) is str and len(digest) == 40))
    return path, digest


# ------------------------------------------------------------------- the cache
def cache_root(settings) -> Path:
    """The configured cache folder; a relative `cache-dir` is relative to the settings' root."""
    folder = Path(settings.cache_dir)
    return folder if folder.is_absolute() else settings.root / folder


class Cache:
    """One run's view of the cache folder; safe to share between processes."""

    def __init__(self, settings) -> None:
        self.root = folder = cache_root(settings)
        key = _digest(f"{tool_fingerprint()}|{settings.fingerprint()}".encode())
        self.folder = folder / f"v{CACHE_FORMAT}-{key[:24]}"
        self.key = user_key()
        self.writable = self.key is not None
        self._folder_ready = False  # see _ensure_folder
        self._file_digests: dict[str, str | None] = {}  # dependency path -> digest, per run
        # Most files import the same few modules: their probes are worked out once a run.
        self._roots: dict[Path, tuple[Path, ...]] = {}  # package root -> the roots to probe
        self._probes: dict[tuple[str, tuple[Path, ...]], list[list]] = {}  # (module, roots) -> probes
        self._settings = settings

    # -------------------------------------------------------------- helpers
    def _entry_path(self, resolved: str) -> Path:
        return self.folder / f"{_digest(resolved.encode())[:32]}.json"

    def file_digest(self, path: str) -> str | None:
        """Digest of a dependency's content, None when no regular file is there; memoized per run.

        Opened without blocking: a FIFO named like a module must not stall the run."""
        if path not in self._file_digests:
            from ..engine.source import read_regular

            try:
                self._file_digests[path] = _digest(read_regular(path, MAX_DEPENDENCY_BYTES))
            except OSError:
                self._file_digests[path] = None
        return self._file_digests[path]

    def dependencies(self, modules: set[str], package_root: Path) -> list[list]:
        """Every path the project index probes for `modules`, with its digest.

        Probed over every configured source root, present or not, so that a
        module appearing in a new root invalidates too.
        """
        roots = self._roots.get(package_root)
        if roots is None:
            found: list[Path] = []
            for root in [self._settings.root / src for src in self._settings.src] + [package_root]:
                root = root.resolve()
                if root not in found:
                    found.append(root)
            roots = self._roots[package_root] = tuple(found)
        probes: list[list] = []
        for module in sorted(modules):
            if module:
                known = self._probes.get((module, roots))
                if known is None:
                    known = self._probes[(module, roots)] = self._module_probes(module, roots)
                probes += known
        return probes

    def _module_probes(self, module: str, roots: tuple[Path, ...]) -> list[list]:
        """[path, digest] of each file probed for `module`, root by root, up to the first found."""
        relative = Path(*module.split("."))
        probes: list[list] = []
        for root in roots:
            for candidate in (root / relative / "__init__.py", root / relative.with_suffix(".py")):
                digest = self.file_digest(str(candidate))
                probes.append([str(candidate), digest])
                if digest is not None:
                    return probes
        return probes

    # --------------------------------------------------------------- lookup
    def may_hold_entries(self) -> bool:
        """False while the run's folder is absent (or no key signs entries), when every look-up misses."""
        return self.key is not None and self.folder.is_dir()

    def lookup(self, resolved: str, data_digest: str, module_key: list, name: str):
        """(diagnostics, error reason) for a valid entry, else None."""
        try:
            entry = self._read_entry(resolved)
            if entry["path"] != resolved or entry["digest"] != data_digest or entry["module"] != module_key:
                return None
            _require(type(entry["deps"]) is list and type(entry["diagnostics"]) is list)
            for path, digest in map(_dependency, entry["deps"]):
                if self.file_digest(path) != digest:
                    return None
            error = entry["error"]
            _require(error is None or type(error) is str and len(error) <= MAX_MESSAGE_CHARS)
            diagnostics = [diagnostic_from_json(item, name) for item in entry["diagnostics"]]
            return diagnostics, error
        except (OSError, ValueError, KeyError, TypeError, RecursionError):
            return None  # missing, partial, forged or malformed: a miss

    def _read_entry(self, resolved: str) -> dict:
        """The entry for `resolved`, its signature checked; OSError or ValueError otherwise."""
        from ..engine.source import read_regular

        data = read_regular(self._entry_path(resolved), MAX_ENTRY_BYTES, follow_symlinks=False)
        signature, _, payload = data.partition(b"\n")
        # A plain comparison: no one who could forge an entry can time this one.
        _require(self.key is not None and signature == _signature(self.key, payload))
        entry = json.loads(payload)  # nesting is bounded by the interpreter: RecursionError, a miss
        _require(type(entry) is dict and set(entry) == _ENTRY_KEYS)
        return entry

    # ---------------------------------------------------------------- store
    def store(self, resolved: str, data_digest: str, module_key: list, deps: list[list],
              diagnostics: list[Diagnostic], error: str | None) -> None:
        if not self.writable:
            return
        entry = {
            "path": resolved,
            "digest": data_digest,
            "module": module_key,
            "deps": deps,
            "error": error,
            "diagnostics": [diagnostic_to_json(d) for d in diagnostics],
        }
        payload = json.dumps(entry, separators=(",", ":")).encode()
        target = self._entry_path(resolved)
        temporary = target.with_name(f".{target.name}.{os.getpid()}.tmp")  # one writer per process at a time
        try:
            self._ensure_folder()
            with open(temporary, "wb") as handle:
                handle.write(_signature(self.key, payload) + b"\n" + payload)
            os.replace(temporary, target)  # atomic: readers see the old entry or the new one
        except OSError:
            self.writable = False  # read-only tree, full disk: run on without a cache
            try:
                os.unlink(temporary)
            except OSError:
                pass

    def _ensure_folder(self) -> None:
        """The run's folder, in a root that is ours; OSError when the root is another's
        or the folder a link (entries would be written wherever it points)."""
        if self._folder_ready:
            return
        if self.folder.is_symlink():
            raise OSError(f"{self.folder}: a link, not a cache folder")
        if not self.folder.is_dir():
            claim_root(self.root)
            self.folder.mkdir(exist_ok=True)
            self._prune()
        self._folder_ready = True

    def _prune(self) -> None:
        """Keep the newest few fingerprint folders; old tool versions' entries go.
        Only in a root tagged as ours, and only folders named as ours."""
        if not is_cache_folder(self.root):
            return
        try:
            folders = [p for p in self.root.iterdir()
                       if FINGERPRINT_FOLDER.fullmatch(p.name) and p.is_dir() and not p.is_symlink()]
            folders.sort(key=lambda p: p.stat().st_mtime, reverse=True)
        except OSError:
            return
        import shutil

        for old in folders[KEEP_FINGERPRINTS:]:
            if old != self.folder:
                shutil.rmtree(old, ignore_errors=True)


_ENTRY_KEYS = {"path", "digest", "module", "deps", "error", "diagnostics"}


def claim_root(root: Path) -> None:
    """Make `root` a cache folder of ours: create and tag it, or tag it when it is
    empty; a folder already tagged is kept. Any other folder (or a file) is
    someone else's: OSError, and nothing is written there."""
    if is_cache_folder(root):
        return
    root.mkdir(parents=True, exist_ok=True)  # FileExistsError for a file
    if any(name != "CACHEDIR.TAG" for name in os.listdir(root)):
        raise OSError(f"{root}: not empty and not a flydsl-lint cache")
    (root / "CACHEDIR.TAG").write_text(CACHEDIR_TAG)  # first: a concurrent run then sees a cache of ours
    (root / ".gitignore").write_text("# created by flydsl-lint\n*\n")


def unusable_reason(settings) -> str | None:
    """Why the configured cache folder must not be used this run, else None:
    a folder chosen by the linted project (its config, or the default) that
    resolves outside the project, or an existing folder that is not ours."""
    root = cache_root(settings)
    if settings.cache_dir_source != "command line":
        project = os.path.realpath(settings.root)
        if os.path.commonpath([project, os.path.realpath(root)]) != project:
            where = f"{settings.config_file}: `cache-dir` = {settings.cache_dir!r}" if settings.config_file else str(root)
            return (f"{where} lies outside the project ({project}); only --cache-dir or "
                    f"FLYDSL_LINT_CACHE_DIR may put the cache there")
    if root.exists() and not is_cache_folder(root):
        if not root.is_dir():
            return f"{root}: not a folder"
        try:
            if any(name != "CACHEDIR.TAG" for name in os.listdir(root)):
                return f"{root}: not empty and not a flydsl-lint cache (no CACHEDIR.TAG of ours)"
        except OSError as exc:
            return f"{root}: cannot read the cache folder: {exc.strerror or exc}"
    return None


def content_digest(data: bytes) -> str:
    return _digest(data)


# ------------------------------------------------------------------- cleaning
def is_cache_folder(folder: Path) -> bool:
    """Whether `folder` is a cache this tool wrote (its CACHEDIR.TAG is ours)."""
    try:
        return (folder / "CACHEDIR.TAG").read_text(encoding="utf-8", errors="replace") == CACHEDIR_TAG
    except OSError:
        return False


def find_caches(start: Path, configured: Path, names: set[str], excluded) -> tuple[list[Path], list[Path]]:
    """(caches, look-alikes): the configured cache folder and every folder
    under `start` named like a cache that is ours, not looking inside folders
    `excluded(path)` rejects; folders so named (or the configured one) without
    our tag come back apart, never to be removed."""
    caches: list[Path] = []
    others: list[Path] = []

    def sort(folder: Path) -> None:
        folder = folder.resolve()
        if folder not in caches and folder not in others:
            (caches if is_cache_folder(folder) else others).append(folder)

    if configured.is_dir():
        sort(configured)
    if start.is_dir():
        for folder, subfolders, _ in os.walk(start):
            for name in names & set(subfolders):
                sort(Path(folder) / name)
            # never into a cache, nor where the linter never looks (.git, .venv, ...)
            subfolders[:] = [sub for sub in subfolders if sub not in names and not excluded(Path(folder) / sub)]
    return caches, others
