"""`flydsl-lint server`: a real LSP exchange over stdio with a spawned server."""

from __future__ import annotations

import os

import pytest

from .lsp_client import Client

pytest.importorskip("pygls", reason="the language server needs the `lsp` extra (pygls, lsprotocol)")

KERNEL = (
    "import flydsl.expr as fx\n"
    "from flydsl.expr import arith\n"
    "from flydsl.expr.arith import ArithValue\n"
    "from flydsl.expr.typing import T\n"
    "a = arith.index_cast(T.index, x)\n"
    "b = ArithValue(y) + 1\n"
    "c = fx.Int64(fx.Int64(x))  # keep me\n"
)


def _apply(text: str, edits: list[dict]) -> str:
    lines = text.splitlines(keepends=True)
    offsets = [0]
    for line in lines:
        offsets.append(offsets[-1] + len(line))

    def offset(position):
        return offsets[position["line"]] + position["character"]

    for edit in sorted(edits, key=lambda e: offset(e["range"]["start"]), reverse=True):
        text = text[: offset(edit["range"]["start"])] + edit["newText"] + text[offset(edit["range"]["end"]) :]
    return text


@pytest.fixture
def client(tmp_path):
    (tmp_path / "pyproject.toml").write_text('[tool.flydsl-lint]\nselect = ["FLY1"]\ntarget-version = "0.5.0"\n')
    client = Client(tmp_path)
    yield client
    client.close()


def test_lsp_end_to_end(client, tmp_path):
    init = client.request("initialize", {"processId": os.getpid(), "rootUri": tmp_path.as_uri(), "capabilities": {}})
    capabilities = init["result"]["capabilities"]
    assert "source.fixAll.flydsl-lint" in capabilities["codeActionProvider"]["codeActionKinds"]
    client.notify("initialized", {})

    path = tmp_path / "kernel.py"
    path.write_text("")  # on disk the file is empty: the server lints the buffer
    uri = path.as_uri()
    client.notify("textDocument/didOpen", {"textDocument": {"uri": uri, "languageId": "python", "version": 1, "text": KERNEL}})
    published = client.diagnostics(uri)
    assert published["version"] == 1
    found = {(d["code"], d["range"]["start"]["line"], d["range"]["start"]["character"]) for d in published["diagnostics"]}
    assert found == {("FLY103", 4, 4), ("FLY101", 5, 4), ("FLY111", 6, 4)}
    assert all(d["source"] == "flydsl-lint" for d in published["diagnostics"])

    # one quick fix per fixable diagnostic in the range; the unsafe one says so
    everything = {"start": {"line": 0, "character": 0}, "end": {"line": 7, "character": 0}}
    actions = client.request("textDocument/codeAction", {
        "textDocument": {"uri": uri}, "range": everything,
        "context": {"diagnostics": published["diagnostics"], "only": ["quickfix"]},
    })["result"]
    titles = sorted(action["title"] for action in actions)
    assert titles == [
        "FLY101: Drop the `ArithValue` wrapper (the type of `y` is unknown: `y` is not bound in this module) (unsafe fix)",
        "FLY103: Replace with `fx.Index(x)`",
        "FLY111: Drop the outer `Int64` wrap",
    ]
    fly103 = next(a for a in actions if a["title"].startswith("FLY103"))
    assert fly103["kind"] == "quickfix" and fly103["isPreferred"] is True
    assert _apply(KERNEL, fly103["edit"]["changes"][uri]).splitlines()[4] == "a = fx.Index(x)"

    # fix all: safe fixes only (FLY101's unsafe fix stays out), comments kept
    fix_all = client.request("textDocument/codeAction", {
        "textDocument": {"uri": uri}, "range": everything,
        "context": {"diagnostics": [], "only": ["source.fixAll"]},
    })["result"]
    assert [a["kind"] for a in fix_all] == ["source.fixAll.flydsl-lint"]
    fixed = _apply(KERNEL, fix_all[0]["edit"]["changes"][uri])
    assert "a = fx.Index(x)\n" in fixed and "c = fx.Int64(x)  # keep me\n" in fixed
    assert "b = ArithValue(y) + 1\n" in fixed

    # a change republishes for the new version
    client.notify("textDocument/didChange", {
        "textDocument": {"uri": uri, "version": 2}, "contentChanges": [{"text": fixed}],
    })
    again = client.diagnostics(uri)
    assert again["version"] == 2 and [d["code"] for d in again["diagnostics"]] == ["FLY101"]

    # save republishes too
    path.write_text(fixed)
    client.notify("textDocument/didSave", {"textDocument": {"uri": uri}})
    assert [d["code"] for d in client.diagnostics(uri)["diagnostics"]] == ["FLY101"]

    assert client.request("shutdown", None)["result"] is None
    client.notify("exit", None)
    assert client.process.wait(timeout=30) == 0


def test_lsp_reads_workspace_configuration(client, tmp_path):
    (tmp_path / "pyproject.toml").write_text('[tool.flydsl-lint]\nselect = ["FLY111"]\n')
    client.request("initialize", {"processId": None, "rootUri": tmp_path.as_uri(), "capabilities": {}})
    client.notify("initialized", {})
    uri = (tmp_path / "other.py").as_uri()
    client.notify("textDocument/didOpen", {"textDocument": {"uri": uri, "languageId": "python", "version": 1, "text": KERNEL}})
    assert [d["code"] for d in client.diagnostics(uri)["diagnostics"]] == ["FLY111"]
    client.request("shutdown", None)
    client.notify("exit", None)
    assert client.process.wait(timeout=30) == 0
