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
whole entry or none. An unreadable or malformed entry is a miss.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

from .diagnostics import Applicability, Diagnostic, Edit, Fix, Position

CACHE_FORMAT = 1
KEEP_FINGERPRINTS = 8  # older fingerprint folders (upgrades, other settings) are pruned
# The tag (https://bford.info/cachedir/) that marks a folder as this tool's cache: backup
# tools skip it, and `flydsl-lint clean` removes only folders that carry it.
CACHEDIR_TAG = "Signature: 8a477f597d28d172789f06886806bc55\n# a flydsl-lint cache; see https://bford.info/cachedir/\n"


try:
    from _blake2 import blake2b  # hashlib itself loads OpenSSL: a start-up cost a cached run need not pay
except ImportError:  # pragma: no cover
    from hashlib import blake2b


def _digest(data: bytes) -> str:
    return blake2b(data, digest_size=20).hexdigest()


_TOOL_FINGERPRINT: str | None = None


def tool_fingerprint() -> str:
    """Version, Python, and the content of every source that shapes diagnostics."""
    global _TOOL_FINGERPRINT
    if _TOOL_FINGERPRINT is None:
        from .. import __version__
        from .registry import rules_toml_path

        package = Path(__file__).resolve().parent.parent
        hasher = blake2b(digest_size=20)
        hasher.update(f"{CACHE_FORMAT}|{__version__}|{sys.implementation.cache_tag}|{sys.version}".encode())
        sources = [rules_toml_path()]
        for folder in ("engine", "rules", "fixes"):
            sources.extend(sorted((package / folder).glob("*.py")))
        for source in sources:
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


def _fix_from_json(data: list | None) -> Fix | None:
    if data is None:
        return None
    edits, applicability, message = data
    return Fix(
        tuple(Edit(Position(a, b), Position(c, d), content) for a, b, c, d, content in edits),
        Applicability(applicability),
        message,
    )


def diagnostic_to_json(d: Diagnostic) -> list:
    return [d.code, d.message, d.start.row, d.start.col, d.end.row, d.end.col, _fix_to_json(d.fix), d.noqa_row, d.suppressed]


def diagnostic_from_json(data: list, path: str) -> Diagnostic:
    code, message, r1, c1, r2, c2, fix, noqa_row, suppressed = data
    return Diagnostic(code, message, path, Position(r1, c1), Position(r2, c2), _fix_from_json(fix), noqa_row, suppressed)


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
        self.writable = True
        self._file_digests: dict[str, str | None] = {}  # dependency path -> digest, per run
        # Most files import the same few modules: their probes are worked out once a run.
        self._roots: dict[Path, tuple[Path, ...]] = {}  # package root -> the roots to probe
        self._probes: dict[tuple[str, tuple[Path, ...]], list[list]] = {}  # (module, roots) -> probes
        self._settings = settings

    # -------------------------------------------------------------- helpers
    def _entry_path(self, resolved: str) -> Path:
        return self.folder / f"{_digest(resolved.encode())[:32]}.json"

    def file_digest(self, path: str) -> str | None:
        """Digest of a dependency's content, None when no file is there; memoized per run."""
        if path not in self._file_digests:
            try:
                with open(path, "rb") as handle:
                    self._file_digests[path] = _digest(handle.read())
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
        """False while the run's folder is absent, when every look-up misses."""
        return self.folder.is_dir()

    def lookup(self, resolved: str, data_digest: str, module_key: list, name: str):
        """(diagnostics, error reason) for a valid entry, else None."""
        try:
            with open(self._entry_path(resolved), "rb") as handle:
                entry = json.loads(handle.read())
            if entry["path"] != resolved or entry["digest"] != data_digest or entry["module"] != module_key:
                return None
            for path, digest in entry["deps"]:
                if self.file_digest(path) != digest:
                    return None
            diagnostics = [diagnostic_from_json(item, name) for item in entry["diagnostics"]]
            return diagnostics, entry["error"]
        except (OSError, ValueError, KeyError, TypeError, IndexError):
            return None  # missing, partial or malformed: a miss

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
                handle.write(payload)
            os.replace(temporary, target)  # atomic: readers see the old entry or the new one
        except OSError:
            self.writable = False  # read-only tree, full disk: run on without a cache
            try:
                os.unlink(temporary)
            except OSError:
                pass

    def _ensure_folder(self) -> None:
        if self.folder.is_dir():
            return
        fresh = not self.root.is_dir()
        self.folder.mkdir(parents=True, exist_ok=True)
        if fresh:
            (self.root / ".gitignore").write_text("# created by flydsl-lint\n*\n")
            (self.root / "CACHEDIR.TAG").write_text(CACHEDIR_TAG)
        self._prune()

    def _prune(self) -> None:
        """Keep the newest few fingerprint folders; old tool versions' entries go."""
        try:
            folders = [p for p in self.root.iterdir() if p.is_dir() and p.name.startswith("v")]
            folders.sort(key=lambda p: p.stat().st_mtime, reverse=True)
        except OSError:
            return
        import shutil

        for old in folders[KEEP_FINGERPRINTS:]:
            if old != self.folder:
                shutil.rmtree(old, ignore_errors=True)


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
