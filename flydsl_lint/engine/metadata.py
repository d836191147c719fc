"""Rule metadata, read from rules.toml: the single source of every code's facts."""

from __future__ import annotations

import marshal
import re
import sys
from functools import lru_cache
from pathlib import Path
from typing import NamedTuple

from .diagnostics import Applicability


_CODE_RE = re.compile(r"^FLY\d{3}$")


class Section(NamedTuple):
    family: str  # the code prefix of its rules
    title: str  # as the rule pages name it


# The guide's sections, the one table of their codes and titles.
SECTIONS = {
    "0": Section("FLY0", "Project boundaries and tool hygiene"),
    "1": Section("FLY1", "§1 ArithValue and index helpers"),
    "1b": Section("FLY1", "§1b Redundant fx.* wraps"),
    "2": Section("FLY2", "§2 buffer_ops → make_buffer_tensor"),
    "3": Section("FLY3", "§3 Raw upstream dialects"),
    "3b": Section("FLY3", "§3b fly.ptr → !llvm.ptr"),
    "3c": Section("FLY3", "§3c Manual s_waitcnt bitfields"),
    "4": Section("FLY4", "§4 SmemAllocator → SharedAllocator"),
    "5": Section("FLY5", "§5 Runtime branches in helpers"),
    "6": Section("FLY6", "§6 Raw MFMA → MMA atom + fx.gemm"),
    "7": Section("FLY7", "§7 Tiled copy/MMA"),
    "7a": Section("FLY7", "§7a Tiled copy/MMA (TV layout)"),
    "7b": Section("FLY7", "§7b fx.copy / fx.gemm over *_atom_call"),
    "8": Section("FLY8", "§8 Comments and dead code"),
    "9": Section("FLY9", "§9 Launch overhead and shared helpers"),
}
_REQUIRED = ("name", "section", "summary", "message", "fix", "fix-reason")
_OPTIONAL = ("fix-since", "fix-api", "candidate", "unfixable-note", "suggest-pattern", "suggest-rewrite", "default")


class RuleMeta(NamedTuple):
    code: str
    name: str
    section: str
    summary: str
    message: str
    fix: Applicability | None  # None: the rule offers no fix
    fix_reason: str
    fix_since: str | None = None  # first FlyDSL release with the replacement API
    fix_api: tuple[str, ...] | None = None  # the FlyDSL names the fix writes (data/flydsl_api.toml)
    candidate: str | None = None  # the guide's ripgrep line this rule replaces
    # ast-grep pattern and rewrite spelling a display-only structural suggestion
    suggestion: tuple[str, str] | None = None
    # False for an advisory rule: run only when selected by its exact code or ALL
    default: bool = True


def rules_toml_path() -> Path:
    here = Path(__file__).resolve().parent.parent
    shipped = here / "rules.toml"  # inside an installed wheel
    return shipped if shipped.is_file() else here.parent / "rules.toml"


def read_rules_toml(source: Path) -> dict:
    """The parsed TOML, from a marshal copy kept beside it as Python keeps a
    .pyc: parsing rules.toml took a tenth of a one-file run. The copy holds
    the bytes it was parsed from and serves only their exact equal; it is
    written as .pyc files are (not with PYTHONDONTWRITEBYTECODE), atomically,
    and never where it cannot be."""
    data = source.read_bytes()
    copy = source.parent / "__pycache__" / f"{source.name}.{sys.implementation.cache_tag}.marshal"
    try:
        parsed_from, parsed = marshal.loads(copy.read_bytes())
        if parsed_from == data:
            return parsed
    except (OSError, ValueError, EOFError, TypeError):
        pass  # no copy yet, another Python's, or damaged: parse
    from .tomlcompat import tomllib

    parsed = tomllib.loads(data.decode("utf-8"))
    if not sys.dont_write_bytecode:
        from .writes import write_atomic

        try:
            payload = marshal.dumps((data, parsed))
            copy.parent.mkdir(exist_ok=True)
            write_atomic(copy, payload)  # concurrent runs: readers see a whole copy or none
        except (OSError, ValueError):  # a read-only install, or a TOML date marshal cannot keep
            pass
    return parsed


@lru_cache(maxsize=None)
def load_metadata(path: str | None = None) -> dict[str, RuleMeta]:
    source = Path(path) if path else rules_toml_path()
    data = read_rules_toml(source)
    metas: dict[str, RuleMeta] = {}
    for code, entry in data.get("rules", {}).items():
        where = f"{source}: [rules.{code}]"
        if not _CODE_RE.match(code):
            raise ValueError(f"{where}: a code is FLY followed by three digits")
        missing = [key for key in _REQUIRED if key not in entry]
        unknown = [key for key in entry if key not in _REQUIRED + _OPTIONAL]
        if missing or unknown:
            raise ValueError(f"{where}: missing {missing}, unknown {unknown}")
        section = SECTIONS.get(str(entry["section"]))
        if section is None or not code.startswith(section.family):
            raise ValueError(f"{where}: section {entry['section']!r} does not belong to {code[:4]}xx")
        fix = None if entry["fix"] == "none" else Applicability.parse(entry["fix"])
        if ("suggest-pattern" in entry) != ("suggest-rewrite" in entry):
            raise ValueError(f"{where}: suggest-pattern and suggest-rewrite go together")
        fix_api = entry.get("fix-api")
        if fix_api is not None and not (isinstance(fix_api, list) and all(isinstance(n, str) for n in fix_api)):
            raise ValueError(f"{where}: fix-api is a list of qualified FlyDSL names")
        if fix_api is not None and fix is None:
            raise ValueError(f"{where}: fix-api names what a fix writes; this rule has fix = \"none\"")
        if "suggest-pattern" in entry and fix is not Applicability.DISPLAY:
            raise ValueError(f"{where}: a suggestion is display-only; set fix = \"display-only\"")
        if not isinstance(entry.get("default", True), bool):
            raise ValueError(f"{where}: default is true or false")
        try:
            message_fields(entry["message"])
        except ValueError as exc:
            raise ValueError(f"{where}: message: {exc}") from None
        metas[code] = RuleMeta(
            code=code,
            name=entry["name"],
            section=str(entry["section"]),
            summary=entry["summary"],
            message=entry["message"],
            fix=fix,
            fix_reason=entry["fix-reason"],
            fix_since=entry.get("fix-since"),
            fix_api=tuple(fix_api) if fix_api is not None else None,
            candidate=entry.get("candidate"),
            suggestion=(entry["suggest-pattern"], entry["suggest-rewrite"]) if "suggest-pattern" in entry else None,
            default=entry.get("default", True),
        )
    return metas


@lru_cache(maxsize=None)
def load_redirects(path: str | None = None) -> dict[str, str]:
    """Renamed codes, old -> new (rules.toml's [redirects]): still accepted, with a warning."""
    source = Path(path) if path else rules_toml_path()
    redirects = read_rules_toml(source).get("redirects", {})
    metas = load_metadata(path)
    for old, new in redirects.items():
        if not _CODE_RE.match(old) or old in metas or new not in metas:
            raise ValueError(f"{source}: [redirects] {old} = {new!r}: the old code must be free and the new one a rule")
    return dict(redirects)


def message_fields(template: str) -> frozenset[str]:
    """The `{name}` fields of a message template; ValueError for a template
    `str.format` cannot fill by keyword (`{}`, `{0}`, `{a.b}`, a lone brace)."""
    import string

    fields = set()
    for _, name, _, _ in string.Formatter().parse(template):
        if name is None:
            continue
        if not name.isidentifier():
            raise ValueError(f"{{{name}}} is not a `{{name}}` field")
        fields.add(name)
    return frozenset(fields)
