"""A cache of base-side capture results, so N candidates against one base compile it once.

An entry holds what one capture process found (specializations, compile
failures, test outcomes) for the base side. It is found by the digest of its
key, and the key is stored in the entry and compared whole:

- the git tree of the base commit (not the commit: a rebase that keeps the tree hits),
- the test items and probes that process ran (a test's results may depend on
  what ran before it in the same process: FlyDSL's in-memory caches may
  skip a specialization already compiled, so a group is cached as a group),
- the arch,
- the environment: Python, the flydsl and torch distributions (version,
  location and the digest of their RECORD, which lists every installed file's
  hash), the digest of verify's own sources (the shim and parser shape what is
  recorded), the linker, and every environment variable the capture reads
  (COMPILE_ONLY, ARCH, PYTHONPATH, ROCM_*, HIP_*, FLYDSL_* but our own
  FLYDSL_LINT_*).

Entries are JSON (never unpickled) signed with a key of the user's that is kept
outside every repository; an unsigned, forged, malformed or oversized entry, or
one whose stored key is not the asked-for one, is a miss, never a result. The
cache writes only into a folder it created, an empty one or one tagged as ours
(CACHEDIR.TAG), and an entry appears whole or not at all (write, then rename).
"""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import sys
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path
from typing import Sequence

import flydsl_lint
from flydsl_lint.verify.compile import CompileFailure, CompileResult, SpecializationKey
from flydsl_lint.verify.imports import ImportFacts, Unreadable
from flydsl_lint.verify.isa import KernelIsa, Resources
from flydsl_lint.verify.toolchain import Linker

ENTRY_FORMAT = 4  # 2: kernels carry backend_input; 3: the labels that called a jit function, messages in <repo> terms; 4: host code
MAX_ENTRY_BYTES = 256 << 20  # a whole test file's ISA; larger is a miss, never read
CACHE_DIR_VARIABLE = "FLYDSL_LINT_VERIFY_CACHE_DIR"
CACHEDIR_TAG = ("Signature: 8a477f597d28d172789f06886806bc55\n"
                "# a flydsl-lint-verify base cache; see https://bford.info/cachedir/\n")
KEY_FILE = "verify-key"
# Environment variables a capture process (or FlyDSL in it) reads; FLYDSL_LINT_* are ours.
_ENVIRONMENT_NAMES = ("COMPILE_ONLY", "ARCH", "PYTHONPATH", "LD_LIBRARY_PATH")
_ENVIRONMENT_PREFIXES = ("FLYDSL_", "ROCM_", "HIP_", "HSA_")


class CacheFolderError(OSError):
    """The cache folder is not ours to write: the run goes on without the cache."""


def user_cache_home() -> Path:
    home = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(home) / "flydsl-lint"


def default_cache_dir() -> Path:
    """$FLYDSL_LINT_VERIFY_CACHE_DIR, else `flydsl-lint/verify-base` in the user's cache home."""
    chosen = os.environ.get(CACHE_DIR_VARIABLE)
    return Path(chosen) if chosen else user_cache_home() / "verify-base"


def _digest(data: bytes) -> str:
    return hashlib.blake2b(data, digest_size=20).hexdigest()


def _distribution(name: str) -> dict | None:
    """What identifies an installed distribution: version, location, RECORD digest."""
    try:
        dist = metadata.distribution(name)
    except metadata.PackageNotFoundError:
        return None
    record = dist.read_text("RECORD") or ""
    return {"version": dist.version, "location": str(dist.locate_file("")), "record": _digest(record.encode())}


def _verify_sources_digest() -> str:
    """flydsl-lint's version and every verify source: a change to the shim or the parser is a miss."""
    hasher = hashlib.blake2b(digest_size=20)
    hasher.update(flydsl_lint.__version__.encode())
    for source in sorted(Path(__file__).resolve().parent.glob("*.py")):
        data = source.read_bytes()
        hasher.update(f"\0{source.name}\0{len(data)}\0".encode())
        hasher.update(data)
    return hasher.hexdigest()


def _relevant_environment() -> dict[str, str]:
    return {name: value for name, value in sorted(os.environ.items())
            if (name in _ENVIRONMENT_NAMES or name.startswith(_ENVIRONMENT_PREFIXES))
            and not name.startswith("FLYDSL_LINT_")}


def environment_fingerprint(linker: Linker) -> dict:
    """The environment part of every key of this run (computed once per run)."""
    return {
        "python": f"{sys.implementation.cache_tag}|{sys.version}|{sys.executable}",
        "flydsl": _distribution("flydsl"),
        "torch": _distribution("torch"),
        "verify": _verify_sources_digest(),
        "linker": linker.description,
        "environment": _relevant_environment(),
    }


@dataclass(frozen=True)
class BaseKey:
    tree: str  # git tree hash of the base commit
    arch: str
    tests: tuple[str, ...]
    probes: tuple[str, ...]

    def as_json(self, environment: dict) -> dict:
        return {"format": ENTRY_FORMAT, "tree": self.tree, "arch": self.arch, "tests": list(self.tests),
                "probes": list(self.probes), "environment": environment}


# ------------------------------------------------------------ result <-> JSON
class InvalidEntry(ValueError):
    """Not exactly what `store` writes: a miss."""


def _require(condition: bool) -> None:
    if not condition:
        raise InvalidEntry


def _text(value: object) -> str:
    _require(type(value) is str)
    return value  # type: ignore[return-value]


def _texts(value: object) -> list[str]:
    _require(type(value) is list)
    return [_text(item) for item in value]  # type: ignore[union-attr]


def _count(value: object) -> int:
    _require(type(value) is int and value >= 0)
    return value  # type: ignore[return-value]


def _optional_count(value: object) -> int | None:
    return None if value is None else _count(value)


def _kernel_to_json(kernel: KernelIsa) -> dict:
    return {"name": kernel.name, "arch": kernel.arch, "instructions": kernel.instructions,
            "resources": kernel.resources.as_dict(), "histogram": kernel.histogram,
            "code_object": kernel.code_object, "evidence_errors": kernel.evidence_errors,
            "backend_input": kernel.backend_input, "host": None if kernel.host is None else list(kernel.host)}


_RESOURCE_FIELDS = set(Resources().as_dict())


def _kernel_from_json(data: object) -> KernelIsa:
    _require(type(data) is dict and set(data) == {"name", "arch", "instructions", "resources", "histogram",
                                                  "code_object", "evidence_errors", "backend_input", "host"})
    resources, histogram = data["resources"], data["histogram"]  # type: ignore[index]
    _require(type(resources) is dict and set(resources) == _RESOURCE_FIELDS and type(histogram) is dict)
    code_object = data["code_object"]  # type: ignore[index]
    backend_input = data["backend_input"]  # type: ignore[index]
    _require(all(digest is None or type(digest) is str for digest in (code_object, backend_input)))
    return KernelIsa(
        name=_text(data["name"]), arch=_text(data["arch"]),  # type: ignore[index]
        instructions=_texts(data["instructions"]),  # type: ignore[index]
        resources=Resources(**{field: _optional_count(value) for field, value in resources.items()}),
        histogram={_text(name): _count(count) for name, count in histogram.items()},
        code_object=code_object, evidence_errors=_texts(data["evidence_errors"]),  # type: ignore[index]
        backend_input=backend_input,
        host=None if data["host"] is None else tuple(_texts(data["host"])),  # type: ignore[index]
    )


def result_to_json(result: CompileResult) -> dict:
    return {
        "specializations": [[key.label, key.kernel, key.occurrence, _kernel_to_json(kernel)]
                            for key, kernel in sorted(result.specializations.items())],
        "failures": [[f.label, f.func_name, f.message] for f in result.failures],
        "outcomes": [[label, outcome, message] for label, (outcome, message) in sorted(result.outcomes.items())],
        "flydsl_versions": sorted(result.flydsl_versions),
        "calling": sorted(result.calling),
    }


def _rows(value: object, width: int) -> list[list]:
    _require(type(value) is list and all(type(row) is list and len(row) == width for row in value))
    return value  # type: ignore[return-value]


def result_from_json(data: object, arch: str, evidence_dir: Path) -> CompileResult:
    _require(type(data) is dict
             and set(data) == {"specializations", "failures", "outcomes", "flydsl_versions", "calling"})
    fields: dict = data  # type: ignore[assignment]
    result = CompileResult(arch, evidence_dir, flydsl_versions=set(_texts(fields["flydsl_versions"])),
                           calling=set(_texts(fields["calling"])))
    for label, kernel, occurrence, isa in _rows(fields["specializations"], 4):
        key = SpecializationKey(_text(label), _text(kernel), _count(occurrence))
        result.specializations[key] = _kernel_from_json(isa)
    result.failures = [CompileFailure(*_texts(row)) for row in _rows(fields["failures"], 3)]
    for label, outcome, message in _rows(fields["outcomes"], 3):
        result.outcomes[_text(label)] = (_text(outcome), _text(message))
    return result


def cacheable(result: CompileResult) -> bool:
    """A result worth keeping: no capture process failed as a whole (a timeout, an early exit),
    which load or chance may cause; a kernel's compile error is the tree's and is kept."""
    return not any(failure.label in ("tests", "probes") for failure in result.failures)


# ------------------------------------------------------------------- the cache
def is_ours(folder: Path) -> bool:
    try:
        return (folder / "CACHEDIR.TAG").read_text(encoding="utf-8", errors="replace") == CACHEDIR_TAG
    except OSError:
        return False


def _claim(root: Path) -> None:
    """Create and tag `root`, or tag it when empty; another's folder is a CacheFolderError."""
    if is_ours(root):
        return
    if root.is_symlink() or (root.exists() and not root.is_dir()):
        raise CacheFolderError(f"{root}: not a folder")
    root.mkdir(parents=True, exist_ok=True)
    if any(name != "CACHEDIR.TAG" for name in os.listdir(root)):
        raise CacheFolderError(f"{root}: not empty and not a flydsl-lint-verify cache (no CACHEDIR.TAG of ours)")
    (root / "CACHEDIR.TAG").write_text(CACHEDIR_TAG, encoding="utf-8")


def _user_key(path: Path) -> bytes:
    """The secret that signs entries, made (readable by the user only) on first use."""
    try:
        with open(path, "rb") as handle:
            key = handle.read(1024)
        if len(key) >= 32:
            return key
    except FileNotFoundError:
        pass
    key = os.urandom(32).hex().encode()
    path.parent.mkdir(parents=True, exist_ok=True)
    temporary = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    with open(os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600), "wb") as handle:
        handle.write(key)
    os.replace(temporary, path)
    return key


def _signature(key: bytes, payload: bytes) -> bytes:
    return hmac.new(key, payload, "blake2b").hexdigest().encode()


def _read_signed(path: Path, key: bytes) -> bytes:
    """An entry's payload; ValueError when it is a link, oversized, unsigned or forged."""
    if path.is_symlink() or path.stat().st_size > MAX_ENTRY_BYTES:
        raise ValueError(f"{path}: not an entry to read")
    signature, _, payload = path.read_bytes().partition(b"\n")
    _require(hmac.compare_digest(signature, _signature(key, payload)))
    return payload


def _write_signed(path: Path, key: bytes, payload: bytes) -> None:
    """Write, then rename: an entry appears whole or not at all (a failed write leaves none)."""
    temporary = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        temporary.write_bytes(_signature(key, payload) + b"\n" + payload)
        os.replace(temporary, path)
    except OSError:
        temporary.unlink(missing_ok=True)


class BaseCache:
    """Base-side capture results of one run's base tree, under the user's signing key."""

    def __init__(self, root: Path, *, tree: str, environment: dict, key_path: Path | None = None):
        _claim(root)
        self.root = root
        self.tree = tree
        self.environment = environment
        self._key = _user_key(key_path or user_cache_home() / KEY_FILE)
        self.hits: list[BaseKey] = []

    def _entry_path(self, key_json: dict) -> Path:
        return self.root / f"{_digest(json.dumps(key_json, sort_keys=True).encode())}.json"

    def key(self, arch: str, tests: Sequence[str], probes: Sequence[str]) -> BaseKey:
        return BaseKey(self.tree, arch, tuple(tests), tuple(probes))

    def lookup(self, key: BaseKey, evidence_dir: Path) -> CompileResult | None:
        """The stored result for `key`, or None: missing, unsigned, forged or malformed."""
        key_json = key.as_json(self.environment)
        try:
            entry = json.loads(_read_signed(self._entry_path(key_json), self._key))
            _require(type(entry) is dict and set(entry) == {"key", "result"} and entry["key"] == key_json)
            result = result_from_json(entry["result"], key.arch, evidence_dir)
        except (OSError, ValueError, TypeError, RecursionError):
            return None
        self.hits.append(key)
        return result

    def store(self, key: BaseKey, result: CompileResult) -> None:
        """Keep `result` for `key` (only a whole-run result); a write that fails leaves no entry."""
        if not cacheable(result):
            return
        key_json = key.as_json(self.environment)
        payload = json.dumps({"key": key_json, "result": result_to_json(result)}, separators=(",", ":")).encode()
        _write_signed(self._entry_path(key_json), self._key, payload)


# ------------------------------------------------------------ import facts
def _facts_to_json(facts: ImportFacts | Unreadable) -> object:
    if isinstance(facts, Unreadable):
        return {"unreadable": facts.reason, "is_file": facts.is_file}
    return [list(fact[:-1]) + [list(fact[-1])] for fact in facts]


def _facts_from_json(data: object) -> ImportFacts | Unreadable:
    if type(data) is dict:
        _require(set(data) == {"unreadable", "is_file"} and type(data["is_file"]) is bool)
        return Unreadable(_text(data["unreadable"]), data["is_file"])
    _require(type(data) is list)
    facts = []
    for fact in data:
        _require(type(fact) is list and fact[:1] in (["import"], ["from"]))
        if fact[0] == "import":
            _require(len(fact) == 2)
            facts.append(("import", tuple(_texts(fact[1]))))
        else:
            _require(len(fact) == 4 and type(fact[1]) is int and fact[1] >= 0)
            facts.append(("from", fact[1], _text(fact[2]), tuple(_texts(fact[3]))))
    return tuple(facts)


class ImportFactsCache:
    """The import facts of the sources a run planned with, found by the base tree: planning
    against a cached base reads its files but parses only what the head side changed."""

    def __init__(self, root: Path, *, tree: str, key_path: Path | None = None):
        _claim(root)
        self._key = _user_key(key_path or user_cache_home() / KEY_FILE)
        # verify's own sources decide what a fact is: a new parser never reads an old entry.
        self._path = root / f"imports-{_digest(f'{tree} {_verify_sources_digest()}'.encode())}.json"

    def lookup(self) -> dict[str, ImportFacts | Unreadable]:
        """Source digest -> facts, or {} for a missing, forged or malformed entry."""
        try:
            entry = json.loads(_read_signed(self._path, self._key))
            _require(type(entry) is dict)
            return {_text(digest): _facts_from_json(facts) for digest, facts in entry.items()}
        except (OSError, ValueError, TypeError, RecursionError):
            return {}

    def store(self, facts_by_digest: dict[str, ImportFacts | Unreadable]) -> None:
        payload = json.dumps({digest: _facts_to_json(facts) for digest, facts in facts_by_digest.items()},
                             separators=(",", ":")).encode()
        _write_signed(self._path, self._key, payload)
