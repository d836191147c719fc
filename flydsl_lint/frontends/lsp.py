"""`flydsl-lint server`: a language server over stdio (pygls; the `lsp` extra).

Publishes diagnostics when a document is opened, changed or saved; offers a
quick fix per fixable diagnostic (unsafe ones say so in the title; display-only
rewrites are not offered) and a `source.fixAll.flydsl-lint` action that applies
safe fixes only. Settings come from the nearest pyproject.toml with a
[tool.flydsl-lint] table above each document, as on the command line.
"""

from __future__ import annotations

import sys
from pathlib import Path

FIX_ALL_KIND = "source.fixAll.flydsl-lint"
SOURCE = "flydsl-lint"


class Linter:
    """Settings and checkers per config file; lints buffer text, never the file on disk."""

    def __init__(self) -> None:
        self._checkers: dict[str, object] = {}

    def reset(self) -> None:
        self._checkers.clear()

    def checker_for(self, path: Path):
        from ..engine.checker import Checker
        from ..engine.config import ConfigError, find_config, load_settings

        folder = path.parent if path.parent.is_dir() else Path.cwd()
        config = find_config(folder)
        key = str(config)
        if key not in self._checkers:
            try:
                settings = load_settings(config, folder)
            except ConfigError as exc:
                sys.stderr.write(f"flydsl-lint server: {exc}; using defaults\n")
                settings = load_settings(None, folder)
            self._checkers[key] = Checker(settings)
        return self._checkers[key]

    def source(self, path: Path, text: str):
        from ..engine.source import SourceFile

        return SourceFile(str(path), text)

    def check(self, path: Path, text: str) -> list:
        from ..engine.source import SourceError

        checker = self.checker_for(path)
        try:
            if not checker.settings.is_excluded(path):
                return checker.check(self.source(path, text))
        except SourceError as exc:
            sys.stderr.write(f"flydsl-lint server: {exc}\n")
        return []

    def fix_all(self, path: Path, text: str) -> str | None:
        """The text after every safe fix, or None when nothing changes or the file cannot be fixed."""
        from ..engine.source import SourceError
        from ..fixes.apply import fix_source

        try:
            outcome = fix_source(self.source(path, text), self.checker_for(path), unsafe=False)
        except SourceError as exc:
            sys.stderr.write(f"flydsl-lint server: {exc}\n")
            return None
        return outcome.new_text if outcome.changed else None


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
    import re

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


def create_server():
    from lsprotocol import types as lsp
    from pygls.lsp.server import LanguageServer

    from .. import __version__
    from ..engine.diagnostics import Applicability

    server = LanguageServer("flydsl-lint", __version__)
    linter = Linter()

    def encoding() -> str:
        value = server.workspace.position_encoding
        return str(getattr(value, "value", value) or "utf-16")

    def publish(uri: str) -> None:
        document = server.workspace.get_text_document(uri)
        lines = _lines(document.source)
        found = linter.check(_path_for(uri), document.source)
        server.text_document_publish_diagnostics(
            lsp.PublishDiagnosticsParams(
                uri=uri, version=document.version,
                diagnostics=[to_lsp_diagnostic(d, lines, encoding()) for d in found],
            )
        )

    @server.feature(lsp.TEXT_DOCUMENT_DID_OPEN)
    def did_open(ls, params: lsp.DidOpenTextDocumentParams) -> None:
        publish(params.text_document.uri)

    @server.feature(lsp.TEXT_DOCUMENT_DID_CHANGE)
    def did_change(ls, params: lsp.DidChangeTextDocumentParams) -> None:
        publish(params.text_document.uri)

    @server.feature(lsp.TEXT_DOCUMENT_DID_SAVE)
    def did_save(ls, params: lsp.DidSaveTextDocumentParams) -> None:
        linter.reset()  # settings or project re-exports may have changed on disk
        if params.text_document.uri.endswith(".toml"):
            for uri in list(server.workspace.text_documents):
                if uri.endswith((".py", ".pyi")):
                    publish(uri)
        else:
            publish(params.text_document.uri)

    @server.feature(lsp.TEXT_DOCUMENT_DID_CLOSE)
    def did_close(ls, params: lsp.DidCloseTextDocumentParams) -> None:
        server.text_document_publish_diagnostics(lsp.PublishDiagnosticsParams(uri=params.text_document.uri, diagnostics=[]))

    @server.feature(
        lsp.TEXT_DOCUMENT_CODE_ACTION,
        lsp.CodeActionOptions(code_action_kinds=[lsp.CodeActionKind.QuickFix, FIX_ALL_KIND], resolve_provider=False),
    )
    def code_action(ls, params: lsp.CodeActionParams) -> list[lsp.CodeAction]:
        uri = params.text_document.uri
        document = server.workspace.get_text_document(uri)
        text, path, enc = document.source, _path_for(uri), encoding()
        lines = _lines(text)
        only = params.context.only
        wanted = lambda kind: not only or any(kind == k or kind.startswith(f"{k}.") for k in only)  # noqa: E731
        actions: list[lsp.CodeAction] = []
        if wanted(lsp.CodeActionKind.QuickFix):
            first, last = params.range.start.line + 1, params.range.end.line + 1
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

    return server


def main() -> int:
    try:
        server = create_server()
    except ImportError as exc:
        print(f"flydsl-lint server needs the `lsp` extra (pip install 'flydsl-lint[lsp]'): {exc}", file=sys.stderr)
        return 2
    server.start_io()
    return 0
