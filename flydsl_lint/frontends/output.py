"""Output formats for `flydsl-lint check --output-format`.

Messages, paths and quoted source lines come from files that may be hostile
(or from a cache such a file could shape): the formats read by a terminal or a
log print every control character in them as an escape (`escape_controls`); the
JSON formats escape them already.
"""

from __future__ import annotations

import os
import sys
from collections import Counter
from collections.abc import Callable
from typing import TextIO

from ..engine.config import escape_controls
from ..engine.diagnostics import Applicability, Diagnostic, Edit, fix_applies
from ..engine.metadata import load_metadata
from ..run.runner import RunResult

DOCS_PATH = "docs/rules/{code}.md"
# The rule pages' published folder, e.g. https://github.com/<org>/flydsl-lint/blob/main/docs/rules
DOCS_URL_VARIABLE = "FLYDSL_LINT_DOCS_URL"


def rule_url(code: str) -> str | None:
    """An absolute link to a rule's page, or None: under $FLYDSL_LINT_DOCS_URL
    when that is an http(s) URL, else the page of this checkout's docs (a
    file: URI); an installed wheel ships no pages, so it has none. Never a
    relative path, which no reader of the report could resolve."""
    base = os.environ.get(DOCS_URL_VARIABLE, "").rstrip("/")
    if base.startswith(("https://", "http://")):
        return f"{base}/{code}.md"
    return _docs_uri(code)


def _edit_json(edit: Edit) -> dict:
    return {
        "content": edit.content,
        "location": {"row": edit.start.row, "column": edit.start.col + 1},
        "end_location": {"row": edit.end.row, "column": edit.end.col + 1},
    }


def diagnostic_json(diagnostic: Diagnostic) -> dict:
    """One diagnostic in ruff's JSON schema (rows and columns 1-based)."""
    fix = None
    if diagnostic.fix is not None:
        fix = {
            "applicability": diagnostic.fix.applicability.value,
            "message": diagnostic.fix.message,
            "edits": [_edit_json(edit) for edit in diagnostic.fix.edits],
        }
    return {
        "cell": None,
        "code": diagnostic.code,
        "end_location": {"row": diagnostic.end.row, "column": diagnostic.end.col + 1},
        "filename": os.path.abspath(diagnostic.path),
        "fix": fix,
        "location": {"row": diagnostic.start.row, "column": diagnostic.start.col + 1},
        "message": diagnostic.message,
        "noqa_row": diagnostic.noqa_row,
        "url": rule_url(diagnostic.code),
    }


def _write_document(value: object, stream: TextIO, sort_keys: bool = False) -> None:
    """One indented JSON document and a newline (json is imported by the formats that need it)."""
    import json

    json.dump(value, stream, indent=2, sort_keys=sort_keys)
    stream.write("\n")


def write_json(result: RunResult, stream: TextIO, options: dict) -> None:
    _write_document([diagnostic_json(d) for d in result.diagnostics], stream)


def write_text(result: RunResult, stream: TextIO, options: dict) -> None:
    unsafe = options.get("unsafe_fixes", False)
    style = Style.for_stream(stream, options)
    # One write: an unbuffered stdout (PYTHONUNBUFFERED, common in CI) makes each write a system call.
    stream.write("".join(_concise_line(d, unsafe, style) for d in result.diagnostics))
    write_summary(result, stream, options)


def _concise_line(d: Diagnostic, unsafe: bool, style: "Style") -> str:
    path, message = escape_controls(d.path), escape_controls(d.message)
    if not style.enabled:  # the usual case (a pipe, a file, CI): the same line without five colour calls
        marker = " [*]" if fix_applies(d.fix, unsafe) else ""
        return f"{path}:{d.start.row}:{d.start.col + 1}: {d.code}{marker} {message}\n"
    marker = style.cyan(" [*]") if fix_applies(d.fix, unsafe) else ""
    where = f"{style.bold(path)}{style.cyan(':')}{d.start.row}{style.cyan(':')}{d.start.col + 1}{style.cyan(':')}"
    return f"{where} {style.red(d.code)}{marker} {message}\n"


def write_summary(result: RunResult, stream: TextIO, options: dict) -> None:
    if options.get("quiet"):
        return  # -q: the diagnostics, nothing else
    unsafe = options.get("unsafe_fixes", False)
    style = Style.for_stream(stream, options)
    diagnostics = result.diagnostics
    fixed = sum(result.fixed.values())
    if not diagnostics:
        if fixed:
            stream.write(style.bold(f"Found {fixed} error{'s' * (fixed != 1)} ({fixed} fixed, 0 remaining).") + "\n")
        elif not result.errors:
            stream.write(style.green("All checks passed!") + "\n")
        return
    total = len(diagnostics) + fixed
    if fixed:
        stream.write(style.bold(f"Found {total} error{'s' * (total != 1)} ({fixed} fixed, {len(diagnostics)} remaining).") + "\n")
    else:
        stream.write(style.bold(f"Found {total} error{'s' * (total != 1)}.") + "\n")
    fixable = sum(fix_applies(d.fix, unsafe) for d in diagnostics)
    if fixable:
        stream.write(f"{style.cyan('[*]')} {fixable} fixable with the `--fix` option.\n")
    hidden = sum(1 for d in diagnostics if d.fix is not None and d.fix.applicability is Applicability.UNSAFE) if not unsafe else 0
    if hidden:
        stream.write(f"{hidden} hidden fix{'es' * (hidden != 1)} can be enabled with the `--unsafe-fixes` option.\n")
    display = sum(1 for d in diagnostics if d.fix is not None and d.fix.applicability is Applicability.DISPLAY)
    if display:
        stream.write(f"{display} suggested rewrite{'s' * (display != 1)} (display-only) can be shown with `--show-fixes`.\n")
    held_back = held_back_line(result)
    if held_back:
        stream.write(held_back + "\n")
    if not options.get("target_arch", True):
        waiting = sum(1 for d in diagnostics if _unsafe_for_want_of_an_arch(d))
        if waiting:
            stream.write(f"{waiting} unsafe fix{'es' * (waiting != 1)} would be safe with a target arch: "
                         "set `target-arch` (or --target-arch gfx942,...).\n")


def _unsafe_for_want_of_an_arch(diagnostic: Diagnostic) -> bool:
    from ..rules import all_rules

    rule = all_rules().get(diagnostic.code)
    return (diagnostic.fix is not None and diagnostic.fix.applicability is Applicability.UNSAFE
            and getattr(rule, "fix_safe_with_target_arch", False))


def held_back_line(result: RunResult) -> str | None:
    """`31 fixes need FlyDSL >= 0.3.2; target 0.3.1 from requirements.txt (...)`, if any fix was held back."""
    from ..engine.versions import Version

    needs = Counter(d.fix_needs for d in result.diagnostics if d.fix_needs)
    if not needs:
        return None
    counts = [f"{count} fix{'es' * (count != 1)} need{'s' * (count == 1)} FlyDSL >= {release}"
              for release, count in sorted(needs.items(), key=lambda item: Version.parse(item[0]))]
    version, source = result.target
    if version is None:
        where = "target unknown: set `target-version` (or --target-version), or pin flydsl in the project"
    else:
        where = f"target {version} from {source}"
    return f"{', '.join(counts)}; {where}"


def write_statistics(result: RunResult, stream: TextIO, options: dict, fmt: str = "text") -> None:
    """Diagnostics per code, most common first: a JSON list for `json`, text rows for any other format."""
    metadata = load_metadata()
    counts = Counter(d.code for d in result.diagnostics)
    fixable = Counter(d.code for d in result.diagnostics if fix_applies(d.fix, options.get("unsafe_fixes", False)))
    if fmt == "json":
        rows = [{"code": code, "name": metadata[code].name, "count": count, "fixable": fixable[code]}
                for code, count in counts.most_common()]
        _write_document(rows, stream)
        return
    for code, count in counts.most_common():
        marker = "[*]" if fixable[code] else "   "
        stream.write(f"{count:5d}\t{code}\t{marker} {metadata[code].name}\n")


# ------------------------------------------------------------------ colour
class Style:
    """ANSI colour, on for a TTY; NO_COLOR turns it off, FORCE_COLOR on (NO_COLOR wins)."""

    def __init__(self, enabled: bool) -> None:
        self.enabled = enabled

    @classmethod
    def for_stream(cls, stream: TextIO, options: dict | None = None) -> "Style":
        return cls(colour_enabled(stream, (options or {}).get("color")))

    def _wrap(self, code: str, text: str) -> str:
        return f"\x1b[{code}m{text}\x1b[0m" if self.enabled and text else text

    def bold(self, text: str) -> str:
        return self._wrap("1", text)

    def red(self, text: str) -> str:
        return self._wrap("1;31", text)

    def green(self, text: str) -> str:
        return self._wrap("1;32", text)

    def cyan(self, text: str) -> str:
        return self._wrap("36", text)

    def blue(self, text: str) -> str:
        return self._wrap("1;34", text)

    def dim(self, text: str) -> str:
        return self._wrap("2", text)


def colour_enabled(stream: TextIO, forced: bool | None = None, environ: dict | None = None) -> bool:
    if forced is not None:
        return forced
    environ = os.environ if environ is None else environ
    if environ.get("NO_COLOR"):
        return False
    if environ.get("FORCE_COLOR"):
        return True
    if environ.get("TERM") == "dumb":
        return False
    isatty = getattr(stream, "isatty", None)
    try:
        return bool(isatty and isatty())
    except (ValueError, OSError):
        return False


# ------------------------------------------------------------------ more formats
class _Sources:
    """Each file's text, read once, for formats that quote source lines."""

    def __init__(self) -> None:
        self._cache: dict[str, object] = {}

    def get(self, path: str):
        from ..engine.source import SourceError, SourceFile

        if path not in self._cache:
            try:
                self._cache[path] = SourceFile.read(path)
            except SourceError:
                self._cache[path] = None
        return self._cache[path]


def write_concise(result: RunResult, stream: TextIO, options: dict) -> None:
    write_text(result, stream, options)


def write_grouped(result: RunResult, stream: TextIO, options: dict) -> None:
    """ruff's `grouped`: one heading per file, then row:col CODE message."""
    unsafe = options.get("unsafe_fixes", False)
    style = Style.for_stream(stream, options)
    by_path: dict[str, list[Diagnostic]] = {}
    for d in result.diagnostics:
        by_path.setdefault(d.path, []).append(d)
    for path, diagnostics in by_path.items():
        path = escape_controls(path)
        stream.write(style.bold(style.blue(path) if style.enabled else path) + style.cyan(":") + "\n")
        width_row = max(len(str(d.start.row)) for d in diagnostics)
        width_col = max(len(str(d.start.col + 1)) for d in diagnostics)
        for d in diagnostics:
            marker = style.cyan(" [*]") if fix_applies(d.fix, unsafe) else ""
            row, col = str(d.start.row).rjust(width_row), str(d.start.col + 1).ljust(width_col)
            stream.write(f"  {row}{style.cyan(':')}{col} {style.red(d.code)}{marker} {escape_controls(d.message)}\n")
        stream.write("\n")
    write_summary(result, stream, options)


_FIX_TITLES = {Applicability.SAFE: "Safe fix", Applicability.UNSAFE: "Unsafe fix",
               Applicability.DISPLAY: "Suggested rewrite (display-only)"}


def fix_preview(source, fix) -> list[str]:
    """The fix as `-`/`+` lines: the changed rows before and after (no context)."""
    import difflib

    from ..fixes.apply import apply_edits

    after = apply_edits(source.text, list(fix.edits), "\n").split("\n")
    before = source.text.replace("\r\n", "\n").split("\n")
    lines = []
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(None, before, after, autojunk=False).get_opcodes():
        if tag == "equal":
            continue
        lines += [("-", i + 1, before[i]) for i in range(i1, i2)]
        lines += [("+", j + 1, after[j]) for j in range(j1, j2)]
    return [f"{sign} {row:>4} | {escape_controls(text)}" for sign, row, text in lines]


def write_full(result: RunResult, stream: TextIO, options: dict) -> None:
    """Each diagnostic with its source lines, carets under the range, and the fix."""
    unsafe = options.get("unsafe_fixes", False)
    style = Style.for_stream(stream, options)
    sources = _Sources()
    for d in result.diagnostics:
        stream.write(_concise_line(d, unsafe, style))
        source = sources.get(d.path)
        if source is None:
            stream.write("\n")
            continue
        last = min(d.end.row, d.start.row + 5, len(source.lines))
        gutter = len(str(last))
        bar = style.blue(" " * gutter + " |")
        stream.write(bar + "\n")
        for row in range(d.start.row, last + 1):
            line = source.lines[row - 1]
            stream.write(f"{style.blue(str(row).rjust(gutter) + ' |')} {escape_controls(line)}\n")
            lo = d.start.col if row == d.start.row else len(line) - len(line.lstrip())
            hi = d.end.col if row == d.end.row else len(line)
            carets = "^" * max(1, hi - lo)
            label = f" {d.code}" if row == last else ""
            stream.write(f"{bar} {' ' * lo}{style.red(carets + label)}\n")
        if last < d.end.row:
            stream.write(f"{bar} {style.dim('...')}\n")
        stream.write(bar + "\n")
        if d.fix is not None:
            title = _FIX_TITLES[d.fix.applicability]
            message = f": {escape_controls(d.fix.message)}" if d.fix.message else ""
            stream.write(f"{style.blue(' ' * gutter + ' =')} {style.bold('help')}: {title}{message}\n")
            for line in fix_preview(source, d.fix):
                stream.write("    " + (style.green(line) if line.startswith("+") else style.red(line)) + "\n")
        stream.write("\n")
    write_summary(result, stream, options)


def write_json_lines(result: RunResult, stream: TextIO, options: dict) -> None:
    import json

    for d in result.diagnostics:
        stream.write(json.dumps(diagnostic_json(d)) + "\n")


def _gh_escape_data(text: str) -> str:
    """A workflow command's escapes, and the other control characters spelled out (the log is a terminal's)."""
    return escape_controls(text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A"))


def _gh_escape_property(text: str) -> str:
    return _gh_escape_data(text).replace(":", "%3A").replace(",", "%2C")


def write_github(result: RunResult, stream: TextIO, options: dict) -> None:
    """GitHub Actions workflow commands: one annotation per diagnostic."""
    for d in result.diagnostics:
        properties = ",".join(
            f"{key}={_gh_escape_property(str(value))}"
            for key, value in (
                ("file", d.path), ("line", d.start.row), ("col", d.start.col + 1),
                ("endLine", d.end.row), ("endColumn", d.end.col + 1), ("title", d.code),
            )
        )
        message = f"{d.path}:{d.start.row}:{d.start.col + 1}: {d.code} {d.message}"
        stream.write(f"::error {properties}::{_gh_escape_data(message)}\n")


def write_junit(result: RunResult, stream: TextIO, options: dict) -> None:
    """JUnit XML: a test suite per file, a failing test case per diagnostic."""
    import xml.etree.ElementTree as ET

    diagnostics = result.diagnostics
    root = ET.Element("testsuites", name="flydsl-lint", tests=str(max(1, len(diagnostics))),
                      failures=str(len(diagnostics)), errors=str(len(result.errors)))
    by_path: dict[str, list[Diagnostic]] = {}
    for d in diagnostics:
        by_path.setdefault(d.path, []).append(d)
    for path, items in by_path.items():
        path = escape_controls(path)
        suite = ET.SubElement(root, "testsuite", name=path, tests=str(len(items)), failures=str(len(items)), errors="0")
        for d in items:
            case = ET.SubElement(suite, "testcase", name=f"org.flydsl-lint.{d.code}", classname=path,
                                 line=str(d.start.row), column=str(d.start.col + 1))
            message = escape_controls(d.message)  # XML 1.0 cannot hold most control characters at all
            failure = ET.SubElement(case, "failure", message=message)
            failure.text = f"line {d.start.row}, col {d.start.col + 1}, {message}"
    if not by_path:
        suite = ET.SubElement(root, "testsuite", name="flydsl-lint", tests="1", failures="0", errors=str(len(result.errors)))
        ET.SubElement(suite, "testcase", name="No errors found", classname="flydsl-lint")
    for error in result.errors:
        suite = root.find("testsuite")
        case = ET.SubElement(suite, "testcase", name="flydsl-lint.file-error", classname=error.split(":", 1)[0])
        ET.SubElement(case, "error", message=error)
    stream.write('<?xml version="1.0" encoding="UTF-8"?>\n')
    stream.write(ET.tostring(root, encoding="unicode"))
    stream.write("\n")


def _see(code: str) -> str:
    url = rule_url(code)
    return f"\n\nSee [{code}]({url})." if url else ""


def _docs_uri(code: str) -> str | None:
    """An absolute URI for a rule's page, when the docs are on disk (a checkout)."""
    from pathlib import Path

    page = Path(__file__).resolve().parents[2] / DOCS_PATH.format(code=code)
    return page.as_uri() if page.is_file() else None


def _sarif_uri(path: str) -> dict:
    from pathlib import Path

    absolute = Path(path).resolve()
    try:
        return {"uri": absolute.relative_to(Path.cwd().resolve()).as_posix(), "uriBaseId": "%SRCROOT%"}
    except ValueError:
        return {"uri": absolute.as_uri()}


def _sarif_region(start, end) -> dict:
    return {"startLine": start.row, "startColumn": start.col + 1, "endLine": end.row, "endColumn": end.col + 1}


def sarif_log(result: RunResult) -> dict:
    from pathlib import Path

    from .. import __version__

    metadata = load_metadata()
    codes = sorted(metadata)
    index = {code: i for i, code in enumerate(codes)}
    rules = []
    for code in codes:
        meta = metadata[code]
        fix = meta.fix.value if meta.fix else "none"
        rule = {
            "id": code,
            "name": meta.name,
            "shortDescription": {"text": meta.summary.replace("`", "")},
            "fullDescription": {"text": meta.message},
            "help": {
                "text": f"{meta.message}\nFix: {fix}. {meta.fix_reason}",
                "markdown": f"{meta.message}\n\n**Fix:** {fix}. {meta.fix_reason}" + _see(code),
            },
            "defaultConfiguration": {"level": "error"},
            "properties": {"section": meta.section, "fix": fix, "tags": [f"guide-section-{meta.section}"]},
        }
        if meta.fix_since:
            rule["properties"]["fixSince"] = meta.fix_since
        uri = rule_url(code)
        if uri:
            rule["helpUri"] = uri
        rules.append(rule)
    results = []
    for d in result.diagnostics:
        item = {
            "ruleId": d.code,
            "ruleIndex": index[d.code],
            "level": "error",
            "message": {"text": d.message},
            "locations": [{"physicalLocation": {"artifactLocation": _sarif_uri(d.path),
                                                "region": _sarif_region(d.start, d.end)}}],
        }
        if d.fix is not None:
            item["fixes"] = [{
                "description": {"text": d.fix.message or "fix"},
                "artifactChanges": [{
                    "artifactLocation": _sarif_uri(d.path),
                    "replacements": [
                        {"deletedRegion": _sarif_region(e.start, e.end), "insertedContent": {"text": e.content}}
                        for e in d.fix.edits
                    ],
                }],
                "properties": {"applicability": d.fix.applicability.value},
            }]
        results.append(item)
    run = {
        "tool": {"driver": {"name": "flydsl-lint", "version": __version__, "semanticVersion": __version__,
                            "rules": rules}},
        "originalUriBaseIds": {"%SRCROOT%": {"uri": Path.cwd().resolve().as_uri() + "/"}},
        "results": results,
        "properties": {"flydslTarget": {"version": result.target[0], "source": result.target[1]}},
        "invocations": [{
            "executionSuccessful": not result.errors,
            "toolExecutionNotifications": [{"level": "error", "message": {"text": error}} for error in result.errors],
        }],
    }
    return {
        "$schema": "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json",
        "version": "2.1.0",
        "runs": [run],
    }


def write_sarif(result: RunResult, stream: TextIO, options: dict) -> None:
    _write_document(sarif_log(result), stream)


def _project_path(path: str, project_dir: str) -> str:
    from pathlib import Path

    absolute = os.path.abspath(path)
    try:
        return Path(os.path.relpath(absolute, project_dir)).as_posix()
    except ValueError:  # another drive on Windows: no relative path exists
        return Path(absolute).as_posix()


def gitlab_report(result: RunResult) -> list[dict]:
    """GitLab Code Quality issues; paths relative to $CI_PROJECT_DIR (else the current folder)."""
    import hashlib  # here, not at the top: loading it costs every run's start-up ~4 ms

    project_dir = os.environ.get("CI_PROJECT_DIR") or os.getcwd()
    sources = _Sources()
    seen: set[str] = set()
    issues = []
    for d in result.diagnostics:
        path = _project_path(d.path, project_dir)
        source = sources.get(d.path)
        flagged = source.lines[d.start.row - 1:d.end.row] if source is not None else []
        # No row in the key, and the flagged lines stripped: GitLab matches findings across
        # commits by fingerprint, so code moving or being re-indented must keep it.
        key = "\0".join([path, d.code, d.message, *(line.strip() for line in flagged)])
        fingerprint = hashlib.sha256(key.encode()).hexdigest()
        while fingerprint in seen:  # the same finding again in the file: chain the hash, in report order
            fingerprint = hashlib.sha256(f"{fingerprint}\0{key}".encode()).hexdigest()
        seen.add(fingerprint)
        issues.append({
            # GitLab's widget shows only the description, so it names the code too.
            "description": f"{d.code}: {d.message}",
            "check_name": d.code,
            "fingerprint": fingerprint,
            "severity": "major",
            "location": {"path": path, "lines": {"begin": d.start.row, "end": d.end.row}},
        })
    return issues


def write_gitlab(result: RunResult, stream: TextIO, options: dict) -> None:
    _write_document(gitlab_report(result), stream, sort_keys=True)


def write_pylint(result: RunResult, stream: TextIO, options: dict) -> None:
    """pylint's parseable lines, which many CI log parsers already read."""
    stream.writelines(f"{escape_controls(d.path)}:{d.start.row}: [{d.code}] {escape_controls(d.message)}\n"
                      for d in result.diagnostics)


def _rdjson_range(start, end) -> dict:
    return {"start": {"line": start.row, "column": start.col + 1}, "end": {"line": end.row, "column": end.col + 1}}


def rdjson_log(result: RunResult, options: dict) -> dict:
    """reviewdog's Diagnostic Format; a fix the run would apply becomes suggestions."""
    unsafe = options.get("unsafe_fixes", False)
    diagnostics = []
    for d in result.diagnostics:
        item = {
            "message": d.message,
            "location": {"path": d.path, "range": _rdjson_range(d.start, d.end)},
            "code": {"value": d.code},
        }
        url = rule_url(d.code)
        if url:
            item["code"]["url"] = url
        if fix_applies(d.fix, unsafe):  # reviewdog offers suggestions as one-click changes: only trusted ones
            item["suggestions"] = [{"range": _rdjson_range(e.start, e.end), "text": e.content} for e in d.fix.edits]
        diagnostics.append(item)
    return {"source": {"name": "flydsl-lint"}, "severity": "WARNING", "diagnostics": diagnostics}


def write_rdjson(result: RunResult, stream: TextIO, options: dict) -> None:
    _write_document(rdjson_log(result, options), stream, sort_keys=True)


FORMATS: dict[str, Callable[[RunResult, TextIO, dict], None]] = {
    "text": write_text,
    "json": write_json,
    "json-lines": write_json_lines,
    "concise": write_concise,
    "full": write_full,
    "grouped": write_grouped,
    "github": write_github,
    "junit": write_junit,
    "sarif": write_sarif,
    "gitlab": write_gitlab,
    "pylint": write_pylint,
    "rdjson": write_rdjson,
}


def write(result: RunResult, fmt: str, options: dict, stream: TextIO | None = None) -> None:
    FORMATS[fmt](result, stream if stream is not None else sys.stdout, options)
