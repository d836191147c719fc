"""`flydsl-lint server`: a language server over stdio (pygls; the `lsp` extra).

Publishes diagnostics when a document is opened, changed or saved; offers a
quick fix per fixable diagnostic (unsafe ones say so in the title; display-only
rewrites are not offered) and a `source.fixAll.flydsl-lint` action that applies
safe fixes only. Settings come from the nearest pyproject.toml with a
[tool.flydsl-lint] table above each document, as on the command line.

Checks run on one worker thread, so a large document never blocks the message
loop, and they are coalesced: a change restarts its document's short debounce,
and a check a newer change or a close has superseded is dropped (before it
starts) or not published (after).
"""

from __future__ import annotations

import functools
import itertools
import logging
import re
import sys
from pathlib import Path
from typing import NamedTuple

FIX_ALL_KIND = "source.fixAll.flydsl-lint"
SOURCE = "flydsl-lint"
STATS_METHOD = "flydsl-lint/stats"
DEBOUNCE_SECONDS = 0.25  # initializationOptions {"debounce": seconds} overrides it
# Until settings carry a max-file-size: a document larger than this is reported, not checked.
MAX_DOCUMENT_BYTES = 10 * 1024 * 1024
# A message may carry a whole document, JSON-escaped; a Content-Length above this is refused
# unread (a lying one would otherwise swallow every later message, or exhaust memory).
MAX_MESSAGE_BYTES = 8 * MAX_DOCUMENT_BYTES
MAX_HEADER_LINE = 64 * 1024
_CONTENT_LENGTH = re.compile(rb"Content-Length: (\d+)\r\n")


def log(message: str) -> None:
    sys.stderr.write(f"flydsl-lint server: {message}\n")
    sys.stderr.flush()


class OneLineLogFormatter(logging.Formatter):
    """pygls logs a message it cannot handle (invalid JSON, not JSON-RPC, wrong params) with a
    traceback, as exc_info or in the text; the editor's log gets one line saying what and why,
    as for every other error of the server."""

    def format(self, record: logging.LogRecord) -> str:
        error = record.exc_info[1] if record.exc_info else None
        reason = f": {type(error).__name__}: {error}" if error is not None else ""
        what = (record.getMessage().strip().splitlines() or [""])[0]
        return " ".join(f"flydsl-lint server: {what}{reason}".split())[:MAX_HEADER_LINE]


def _log_pygls_in_one_line() -> None:
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(OneLineLogFormatter())
    pygls_logger = logging.getLogger("pygls")
    pygls_logger.addHandler(handler)
    pygls_logger.setLevel(logging.WARNING)
    pygls_logger.propagate = False


class CannotCheck(Exception):
    """A document cannot be checked; the one-line reason is shown at its first line."""


class SettingsError(CannotCheck):
    """The document's settings cannot be read: the CLI's one-line `<path>: <reason>`."""


class Linter:
    """Settings and checkers per config file; lints buffer text, never the file on disk.

    Used from the one worker thread only."""

    def __init__(self) -> None:
        self._checkers: dict[str, object] = {}

    def reset(self) -> None:
        self._checkers.clear()

    def checker_for(self, path: Path):
        """The document's checker; a config that cannot be read raises SettingsError and
        is read again on the next check (nothing is kept for it)."""
        from ..run.checker import Checker
        from ..engine.config import ConfigError, find_config, load_settings

        folder = path.parent if path.parent.is_dir() else Path.cwd()
        try:
            config = find_config(folder)
            key = str(config)
            if key not in self._checkers:
                self._checkers[key] = Checker(load_settings(config, folder))
        except ConfigError as exc:
            raise SettingsError(str(exc)) from None
        except Exception as exc:  # the loader must not take the server down
            raise SettingsError(f"{_config_near(folder)}: cannot read settings: {type(exc).__name__}: {exc}") from None
        return self._checkers[key]

    def source(self, path: Path, text: str):
        from ..engine.source import SourceFile

        size = len(text.encode("utf-8", "surrogatepass"))
        if size > MAX_DOCUMENT_BYTES:
            raise CannotCheck(f"{path}: too large to check ({size} bytes, the limit is {MAX_DOCUMENT_BYTES})")
        return SourceFile(str(path), text)

    def check(self, path: Path, text: str) -> list:
        from ..engine.source import SourceError

        checker = self.checker_for(path)
        try:
            if not checker.settings.is_excluded(path):
                return checker.check(self.source(path, text))
        except SourceError as exc:
            log(str(exc))
        return []

    def fix_all(self, path: Path, text: str) -> str | None:
        """The text after every safe fix, or None when nothing changes or the file cannot be fixed."""
        from ..engine.source import SourceError
        from ..run.fix_loop import fix_source

        try:
            outcome = fix_source(self.source(path, text), self.checker_for(path), unsafe=False)
        except SourceError as exc:
            log(str(exc))
            return None
        return outcome.new_text if outcome.changed else None


def _config_near(folder: Path) -> Path:
    """The pyproject.toml the loader failed on, to name it in the error: the nearest one."""
    for parent in [folder, *folder.parents]:
        if (parent / "pyproject.toml").is_file():
            return parent / "pyproject.toml"
    return folder


class CheckScheduler:
    """One pending check per document, coalesced.

    `schedule` (re)starts the document's timer; when it fires, `snapshot(uri)` (None:
    no longer open) is taken on the loop and `check(snapshot)` runs on `executor`
    (one worker thread). A later `schedule` or `cancel` supersedes it: a superseded
    check is dropped before it starts, and a superseded result is discarded, so
    `publish(uri, result)` only ever sees the latest text's result.
    """

    def __init__(self, loop, executor, snapshot, check, publish, delay: float = DEBOUNCE_SECONDS) -> None:
        self.loop, self.executor, self.delay = loop, executor, delay
        self._snapshot, self._check, self._publish = snapshot, check, publish
        self._tokens = itertools.count()
        self._latest: dict[str, int] = {}  # uri -> the token of its one live check
        self._timers: dict = {}
        self._counts = {"checks": 0, "dropped": 0, "discarded": 0}

    def schedule(self, uri: str, delay: float | None = None) -> None:
        token = self._supersede(uri)
        self._latest[uri] = token
        self._timers[uri] = self.loop.call_later(self.delay if delay is None else delay, self._start, uri, token)

    def cancel(self, uri: str) -> None:
        self._supersede(uri)

    def stats(self) -> dict[str, int]:
        return dict(self._counts)

    def _supersede(self, uri: str) -> int:
        timer = self._timers.pop(uri, None)
        if timer is not None:
            timer.cancel()
        self._latest.pop(uri, None)
        return next(self._tokens)

    def _is_latest(self, uri: str, token: int) -> bool:
        return self._latest.get(uri) == token

    def _start(self, uri: str, token: int) -> None:
        self._timers.pop(uri, None)
        snapshot = self._snapshot(uri)
        if snapshot is None:
            return
        future = self.loop.run_in_executor(self.executor, self._run, uri, token, snapshot)
        future.add_done_callback(functools.partial(self._finish, uri, token))

    def _run(self, uri: str, token: int, snapshot):
        """On the worker thread."""
        if not self._is_latest(uri, token):
            self._counts["dropped"] += 1
            return None
        self._counts["checks"] += 1
        return self._check(snapshot)

    def _finish(self, uri: str, token: int, future) -> None:
        if future.cancelled():
            return
        if future.exception() is not None:
            log(f"{uri}: check failed: {type(future.exception()).__name__}: {future.exception()}")
            return
        result = future.result()
        if result is None:
            return
        if self._is_latest(uri, token):
            self._publish(uri, result)
        else:
            self._counts["discarded"] += 1


class BoundedStdin:
    """stdin for pygls' reader, refusing a Content-Length over MAX_MESSAGE_BYTES.

    The refused header is dropped (logged), so the reader never allocates or waits
    for its body: the lines after it are skipped as junk until the next header.
    Lines are read at most MAX_HEADER_LINE bytes at a time, so junk never piles up."""

    def __init__(self, stream) -> None:
        self._stream = stream

    def readline(self) -> bytes:
        line = self._stream.readline(MAX_HEADER_LINE)
        match = _CONTENT_LENGTH.fullmatch(line)
        if match and int(match.group(1)) > MAX_MESSAGE_BYTES:
            log(f"refused a message of Content-Length {int(match.group(1))} (the limit is {MAX_MESSAGE_BYTES})")
            return b"X-Refused-" + line
        return line

    def read(self, size: int) -> bytes:
        return self._stream.read(size)


def _column(line: str, col: int, encoding: str) -> int:
    """A character column as the client counts (UTF-16 code units unless negotiated otherwise)."""
    prefix = line[:col]
    if encoding == "utf-8":
        return len(prefix.encode("utf-8"))
    if encoding == "utf-32" or prefix.isascii():
        return len(prefix)
    return len(prefix.encode("utf-16-le")) // 2


def _position(lines: list[str], row: int, col: int, encoding: str):
    from lsprotocol import types as lsp

    line = lines[row - 1] if 0 < row <= len(lines) else ""
    return lsp.Position(line=row - 1, character=_column(line, col, encoding))


def _range(lines: list[str], start, end, encoding: str):
    from lsprotocol import types as lsp

    return lsp.Range(start=_position(lines, start.row, start.col, encoding), end=_position(lines, end.row, end.col, encoding))


def _lines(text: str) -> list[str]:
    return re.split(r"\r\n|\r|\n", text)


def to_lsp_diagnostic(diagnostic, lines: list[str], encoding: str):
    from lsprotocol import types as lsp

    from .output import _docs_uri

    href = _docs_uri(diagnostic.code)
    data = {"fix": diagnostic.fix.applicability.value} if diagnostic.fix is not None else None
    return lsp.Diagnostic(
        range=_range(lines, diagnostic.start, diagnostic.end, encoding),
        message=diagnostic.message,
        severity=lsp.DiagnosticSeverity.Warning,
        code=diagnostic.code,
        code_description=lsp.CodeDescription(href=href) if href else None,
        source=SOURCE,
        data=data,
    )


def _path_for(uri: str) -> Path:
    from pygls.uris import to_fs_path

    path = to_fs_path(uri)
    return Path(path) if path else Path.cwd() / "untitled.py"


def _whole_document_edit(text: str, new_text: str, encoding: str):
    from lsprotocol import types as lsp

    lines = _lines(text)
    end = lsp.Position(line=len(lines) - 1, character=_column(lines[-1], len(lines[-1]), encoding))
    return lsp.TextEdit(range=lsp.Range(start=lsp.Position(line=0, character=0), end=end), new_text=new_text)


class Report(NamedTuple):
    """A check's outcome, built on the worker thread and published on the loop."""

    version: int | None
    diagnostics: list
    settings_error: str | None = None


def _problem_diagnostic(message: str):
    """The one-line reason a document was not checked, at its first line."""
    from lsprotocol import types as lsp

    start = lsp.Position(line=0, character=0)
    return lsp.Diagnostic(
        range=lsp.Range(start=start, end=start), message=message, severity=lsp.DiagnosticSeverity.Error, source=SOURCE,
    )


def _protocol_class():
    from lsprotocol import types as lsp
    from pygls.exceptions import JsonRpcException
    from pygls.protocol import LanguageServerProtocol
    from pygls.protocol.language_server import lsp_method

    class Protocol(LanguageServerProtocol):
        """pygls' protocol, answering what it would drop."""

        def structure_message(self, data):
            try:
                return super().structure_message(data)
            except JsonRpcException as error:
                # pygls logs a request whose params do not parse and leaves it unanswered:
                # answer it, so the client does not wait for ever
                if "method" in data and isinstance(data.get("id"), (int, str)):
                    self._send_response(data["id"], error=error.to_response_error())
                raise

        @lsp_method(lsp.TEXT_DOCUMENT_DID_CHANGE)
        def lsp_text_document__did_change(self, params: lsp.DidChangeTextDocumentParams):
            if _open_document(self._server, params.text_document.uri) is None:
                log(f"{params.text_document.uri}: didChange for a document that is not open; ignored")
                return
            yield from super().lsp_text_document__did_change(params)

    return Protocol


def _open_document(server, uri: str):
    """The editor's buffer for `uri`, or None when it is not open (never the file on disk)."""
    from urllib.parse import unquote

    return server.workspace.text_documents.get(unquote(uri))


def _debounce(options) -> float:
    value = options.get("debounce", DEBOUNCE_SECONDS) if isinstance(options, dict) else DEBOUNCE_SECONDS
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 <= value <= 10:
        log(f"initializationOptions: `debounce` = {value!r} is not a number of seconds from 0 to 10; using {DEBOUNCE_SECONDS}")
        return DEBOUNCE_SECONDS
    return float(value)


def create_server():
    import asyncio
    from concurrent.futures import ThreadPoolExecutor

    from lsprotocol import types as lsp
    from pygls.lsp.server import LanguageServer

    from .. import __version__
    from ..engine.diagnostics import Applicability

    server = LanguageServer("flydsl-lint", __version__, protocol_cls=_protocol_class())
    linter = Linter()
    worker = ThreadPoolExecutor(max_workers=1, thread_name_prefix="flydsl-lint-check")
    scheduler: CheckScheduler
    shown_settings_error: str | None = None  # shown once, not on every keystroke

    def encoding() -> str:
        value = server.workspace.position_encoding
        return str(getattr(value, "value", value) or "utf-16")

    def snapshot(uri: str):
        document = _open_document(server, uri)
        return None if document is None else (uri, document.source, document.version, encoding())

    def check(snapshot) -> Report:
        uri, text, version, enc = snapshot
        path = _path_for(uri)
        try:
            found = linter.check(path, text)
        except SettingsError as exc:
            return Report(version, [_problem_diagnostic(str(exc))], settings_error=str(exc))
        except CannotCheck as exc:
            log(str(exc))
            return Report(version, [_problem_diagnostic(str(exc))])
        except Exception as exc:  # a bug in a rule: say so, keep serving
            message = f"{path}: internal error: {type(exc).__name__}: {exc}"
            log(message)
            return Report(version, [_problem_diagnostic(message)])
        lines = _lines(text)
        return Report(version, [to_lsp_diagnostic(d, lines, enc) for d in found])

    def publish(uri: str, report: Report) -> None:
        nonlocal shown_settings_error
        if report.settings_error is not None and report.settings_error != shown_settings_error:
            log(report.settings_error)
            server.window_show_message(lsp.ShowMessageParams(type=lsp.MessageType.Error, message=report.settings_error))
        shown_settings_error = report.settings_error
        server.text_document_publish_diagnostics(
            lsp.PublishDiagnosticsParams(uri=uri, version=report.version, diagnostics=report.diagnostics)
        )

    @server.feature(lsp.INITIALIZE)
    def initialize(ls, params: lsp.InitializeParams) -> None:
        # pygls refuses documents before initialize, so every handler below has a scheduler
        nonlocal scheduler
        scheduler = CheckScheduler(
            asyncio.get_running_loop(), worker, snapshot, check, publish, _debounce(params.initialization_options),
        )

    @server.feature(lsp.TEXT_DOCUMENT_DID_OPEN)
    def did_open(ls, params: lsp.DidOpenTextDocumentParams) -> None:
        scheduler.schedule(params.text_document.uri, delay=0)

    @server.feature(lsp.TEXT_DOCUMENT_DID_CHANGE)
    def did_change(ls, params: lsp.DidChangeTextDocumentParams) -> None:
        scheduler.schedule(params.text_document.uri)

    @server.feature(lsp.TEXT_DOCUMENT_DID_SAVE)
    def did_save(ls, params: lsp.DidSaveTextDocumentParams) -> None:
        worker.submit(linter.reset)  # settings or project re-exports may have changed on disk
        if params.text_document.uri.endswith(".toml"):
            for uri in list(server.workspace.text_documents):
                if uri.endswith((".py", ".pyi")):
                    scheduler.schedule(uri, delay=0)
        else:
            scheduler.schedule(params.text_document.uri, delay=0)

    @server.feature(lsp.TEXT_DOCUMENT_DID_CLOSE)
    def did_close(ls, params: lsp.DidCloseTextDocumentParams) -> None:
        scheduler.cancel(params.text_document.uri)
        server.text_document_publish_diagnostics(lsp.PublishDiagnosticsParams(uri=params.text_document.uri, diagnostics=[]))

    @server.feature(lsp.SHUTDOWN)
    def shutdown(ls, params) -> None:
        for uri in list(server.workspace.text_documents):
            scheduler.cancel(uri)
        worker.shutdown(wait=False, cancel_futures=True)

    @server.feature(STATS_METHOD)
    def stats(ls, params) -> dict[str, int]:
        """Checks run, dropped before they started and discarded after: for tests and bug reports."""
        return scheduler.stats()

    def actions_for(uri, text, only, first, last, enc) -> list[lsp.CodeAction]:
        """On the worker thread."""
        path = _path_for(uri)
        lines = _lines(text)
        wanted = lambda kind: not only or any(kind == k or kind.startswith(f"{k}.") for k in only)  # noqa: E731
        actions: list[lsp.CodeAction] = []
        if wanted(lsp.CodeActionKind.QuickFix):
            for diagnostic in linter.check(path, text):
                fix = diagnostic.fix
                if fix is None or fix.applicability is Applicability.DISPLAY:
                    continue
                if diagnostic.end.row < first or diagnostic.start.row > last:
                    continue
                unsafe = fix.applicability is Applicability.UNSAFE
                title = f"{diagnostic.code}: {fix.message or 'apply fix'}" + (" (unsafe fix)" if unsafe else "")
                edits = [lsp.TextEdit(range=_range(lines, e.start, e.end, enc), new_text=e.content) for e in fix.edits]
                actions.append(lsp.CodeAction(
                    title=title, kind=lsp.CodeActionKind.QuickFix, is_preferred=not unsafe,
                    diagnostics=[to_lsp_diagnostic(diagnostic, lines, enc)],
                    edit=lsp.WorkspaceEdit(changes={uri: edits}),
                ))
        if wanted(FIX_ALL_KIND):
            new_text = linter.fix_all(path, text)
            if new_text is not None:
                actions.append(lsp.CodeAction(
                    title="flydsl-lint: fix all safe fixes", kind=FIX_ALL_KIND,
                    edit=lsp.WorkspaceEdit(changes={uri: [_whole_document_edit(text, new_text, enc)]}),
                ))
        return actions

    def safe_actions_for(*args) -> list[lsp.CodeAction]:
        try:
            return actions_for(*args)
        except CannotCheck:
            return []  # the document's diagnostics already say why

    @server.feature(
        lsp.TEXT_DOCUMENT_CODE_ACTION,
        lsp.CodeActionOptions(code_action_kinds=[lsp.CodeActionKind.QuickFix, FIX_ALL_KIND], resolve_provider=False),
    )
    async def code_action(ls, params: lsp.CodeActionParams) -> list[lsp.CodeAction]:
        uri = params.text_document.uri
        document = _open_document(server, uri)
        if document is None:
            return []
        first, last = params.range.start.line + 1, params.range.end.line + 1
        return await asyncio.get_running_loop().run_in_executor(
            worker, safe_actions_for, uri, document.source, params.context.only, first, last, encoding(),
        )

    return server


def main() -> int:
    try:
        server = create_server()
    except ImportError as exc:
        print(f"flydsl-lint server needs the `lsp` extra (pip install 'flydsl-lint[lsp]'): {exc}", file=sys.stderr)
        return 2
    _log_pygls_in_one_line()
    server.start_io(stdin=BoundedStdin(sys.stdin.buffer))
    return 0
