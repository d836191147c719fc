"""`flydsl-lint server` under load and hostile input: coalesced checks, bounded
work, config errors reported, and garbage from the editor survived."""

from __future__ import annotations

import json

import pytest

from tests.frontends.lsp_client import Client
from tests.frontends.test_lsp import KERNEL

pytest.importorskip("pygls", reason="the language server needs the `lsp` extra (pygls, lsprotocol)")

from flydsl_lint.frontends.lsp import MAX_DOCUMENT_BYTES, CheckScheduler  # noqa: E402

CONFIG = '[tool.flydsl-lint]\nselect = ["FLY1"]\ntarget-version = "0.5.0"\n'
PUBLISH = "textDocument/publishDiagnostics"


@pytest.fixture
def client(tmp_path):
    (tmp_path / "pyproject.toml").write_text(CONFIG)
    client = Client(tmp_path)
    client.request("initialize", {"processId": None, "rootUri": tmp_path.as_uri(), "capabilities": {}})
    client.notify("initialized", {})
    yield client
    client.close()


def _open(client: Client, uri: str, text: str, version: int = 1) -> None:
    client.notify("textDocument/didOpen", {"textDocument": {"uri": uri, "languageId": "python", "version": version, "text": text}})


def _codes(published: dict) -> list[str]:
    return sorted(d.get("code", "") for d in published["diagnostics"])


def _still_serving(client: Client, tmp_path, name: str = "after.py") -> None:
    """A normal didOpen still yields its diagnostics."""
    uri = (tmp_path / name).as_uri()
    _open(client, uri, KERNEL)
    assert _codes(client.diagnostics(uri)) == ["FLY101", "FLY103", "FLY111"]


# --- the scheduler, on a fake clock and a worker run by hand ---------------------------


class FakeLoop:
    """`call_later` on a clock the test advances; `run_in_executor` queues the job
    until the test runs the worker."""

    class Handle:
        def __init__(self, due, callback, args):
            self.due, self.callback, self.args, self.cancelled = due, callback, args, False

        def cancel(self):
            self.cancelled = True

    class Future:
        def __init__(self):
            self.callbacks, self.value = [], None

        def add_done_callback(self, callback):
            self.callbacks.append(callback)

        def cancelled(self):
            return False

        def exception(self):
            return None

        def result(self):
            return self.value

    def __init__(self):
        self.now, self.timers, self.jobs = 0.0, [], []

    def call_later(self, delay, callback, *args):
        handle = self.Handle(self.now + delay, callback, args)
        self.timers.append(handle)
        return handle

    def run_in_executor(self, executor, job, *args):
        future = self.Future()
        self.jobs.append((future, job, args))
        return future

    def advance(self, seconds):
        self.now += seconds
        due = [t for t in self.timers if t.due <= self.now and not t.cancelled]
        self.timers = [t for t in self.timers if t not in due]
        for timer in due:
            timer.callback(*timer.args)

    def run_worker(self):
        while self.jobs:
            future, job, args = self.jobs.pop(0)
            future.value = job(*args)
            for callback in future.callbacks:
                callback(future)


def _scheduler(texts: dict, published: list):
    loop = FakeLoop()
    scheduler = CheckScheduler(
        loop, executor=None, delay=0.25,
        snapshot=lambda uri: texts.get(uri),
        check=lambda text: f"checked {text}",
        publish=lambda uri, result: published.append((uri, result)),
    )
    return loop, scheduler


def test_scheduler_coalesces_a_burst_of_changes_into_one_check_of_the_last_text():
    texts, published = {"a": "v0"}, []
    loop, scheduler = _scheduler(texts, published)
    for version in range(1, 201):
        texts["a"] = f"v{version}"
        scheduler.schedule("a")
        loop.advance(0.01)
    loop.advance(0.25)
    loop.run_worker()
    assert published == [("a", "checked v200")]
    assert scheduler.stats() == {"checks": 1, "dropped": 0, "discarded": 0}


def test_scheduler_drops_a_superseded_check_before_it_starts():
    texts, published = {"a": "v1", "b": "b1"}, []
    loop, scheduler = _scheduler(texts, published)
    scheduler.schedule("b")
    scheduler.schedule("a")
    loop.advance(0.3)  # both queued behind a busy worker
    texts["a"] = "v2"
    scheduler.schedule("a")  # supersedes the queued check of v1
    loop.run_worker()
    loop.advance(0.3)
    loop.run_worker()
    assert published == [("b", "checked b1"), ("a", "checked v2")]
    assert scheduler.stats() == {"checks": 2, "dropped": 1, "discarded": 0}


def test_scheduler_never_publishes_a_result_for_an_older_version():
    texts, published = {"a": "v1"}, []
    loop, scheduler = _scheduler(texts, published)
    scheduler.schedule("a")
    loop.advance(0.3)
    future, job, args = loop.jobs.pop(0)
    future.value = job(*args)  # the check of v1 runs ...
    texts["a"] = "v2"
    scheduler.schedule("a")  # ... a change comes in while it runs ...
    for callback in future.callbacks:
        callback(future)  # ... and its result arrives after the change
    assert published == []
    loop.advance(0.3)
    loop.run_worker()
    assert published == [("a", "checked v2")]
    assert scheduler.stats() == {"checks": 2, "dropped": 0, "discarded": 1}


def test_scheduler_cancel_stops_a_pending_check():
    texts, published = {"a": "v1"}, []
    loop, scheduler = _scheduler(texts, published)
    scheduler.schedule("a")
    scheduler.cancel("a")
    loop.advance(1)
    loop.run_worker()
    assert published == [] and scheduler.stats()["checks"] == 0


# --- the real server over stdio ----------------------------------------------------------


def _big_document(lines: int = 3000) -> str:
    header, body = KERNEL.split("a = ", 1)
    filler = "".join(f"value_{i} = {i}\n" for i in range(lines - KERNEL.count("\n")))
    return header + filler + "a = " + body


def test_rapid_changes_run_few_checks_and_publish_the_final_text(client, tmp_path):
    uri = (tmp_path / "big.py").as_uri()
    text = _big_document()
    _open(client, uri, text)
    assert client.diagnostics(uri)["version"] == 1
    end = text.count("\n")
    for version in range(2, 202):  # 200 changes, each appending a line that FLY103 flags
        line = end + version - 2
        client.notify("textDocument/didChange", {
            "textDocument": {"uri": uri, "version": version},
            "contentChanges": [{
                "range": {"start": {"line": line, "character": 0}, "end": {"line": line, "character": 0}},
                "text": "n = arith.index_cast(T.index, x)\n",
            }],
        })
    final = client.wait(lambda m: m.get("method") == PUBLISH and m["params"].get("version") == 201, timeout=300)["params"]
    assert _codes(final) == sorted(["FLY101", "FLY103", "FLY111"] + ["FLY103"] * 200)
    assert final["diagnostics"][-1]["range"]["start"]["line"] == end + 199
    stats = client.request("flydsl-lint/stats", None)["result"]
    assert 2 <= stats["checks"] <= 20  # before the fix: one check per change, 201


def test_close_cancels_the_pending_check_and_clears_diagnostics(client, tmp_path):
    uri = (tmp_path / "closing.py").as_uri()
    _open(client, uri, KERNEL)
    assert client.diagnostics(uri)["diagnostics"]
    client.notify("textDocument/didChange", {"textDocument": {"uri": uri, "version": 2}, "contentChanges": [{"text": KERNEL * 2}]})
    client.notify("textDocument/didClose", {"textDocument": {"uri": uri}})
    assert client.diagnostics(uri)["diagnostics"] == []
    other = (tmp_path / "other.py").as_uri()
    _open(client, other, KERNEL)
    # the closed document's check would have published before this one
    later = client.wait(lambda m: m.get("method") == PUBLISH and m["params"]["uri"] in (uri, other))
    assert later["params"]["uri"] == other


def test_a_document_over_the_size_limit_is_reported_not_checked(client, tmp_path):
    uri = (tmp_path / "huge.py").as_uri()
    filler = "x = 1\n" * (MAX_DOCUMENT_BYTES // 6 + 1)
    _open(client, uri, KERNEL + filler)
    published = client.diagnostics(uri, timeout=120)
    [diagnostic] = published["diagnostics"]
    assert "too large" in diagnostic["message"] and str(tmp_path / "huge.py") in diagnostic["message"]
    assert diagnostic["range"]["start"] == {"line": 0, "character": 0} and diagnostic["severity"] == 1
    actions = client.request("textDocument/codeAction", {
        "textDocument": {"uri": uri}, "range": {"start": {"line": 0, "character": 0}, "end": {"line": 9, "character": 0}},
        "context": {"diagnostics": []},
    })
    assert actions["result"] == []
    _still_serving(client, tmp_path)


BROKEN_CONFIGS = {
    "tool-is-an-integer": b"tool = 5\n",
    "tool-is-a-string": b'tool = "flydsl-lint"\n',
    "not-utf-8": b'[tool.flydsl-lint]\nselect = ["FLY1"]\n# \xff\xfe\n',
    "unknown-key": b"[tool.flydsl-lint]\nbogus = 1\n",
}


@pytest.mark.parametrize("content", BROKEN_CONFIGS.values(), ids=BROKEN_CONFIGS.keys())
def test_a_config_error_is_reported_and_the_server_recovers_once_it_is_fixed(client, tmp_path, content):
    config = tmp_path / "pyproject.toml"
    config.write_bytes(content)
    uri = (tmp_path / "kernel.py").as_uri()
    _open(client, uri, KERNEL)
    shown = client.wait(lambda m: m.get("method") == "window/showMessage")["params"]
    published = client.diagnostics(uri)
    [diagnostic] = published["diagnostics"]
    assert diagnostic["message"] == shown["message"] and shown["type"] == 1
    assert diagnostic["message"].startswith(f"{config}: ") and "\n" not in diagnostic["message"]
    assert diagnostic["range"]["start"] == {"line": 0, "character": 0} and diagnostic["severity"] == 1

    config.write_text(CONFIG)
    client.notify("textDocument/didSave", {"textDocument": {"uri": config.as_uri()}})
    assert _codes(client.diagnostics(uri)) == ["FLY101", "FLY103", "FLY111"]


# --- garbage from the editor ---------------------------------------------------------------


def test_invalid_json_and_wrong_typed_params_are_survived(client, tmp_path):
    body = b"{not json"
    client.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
    client.write(b"Content-Length: 5\r\n\r\n\xff\xfe[]]")
    client.notify("textDocument/didOpen", {"textDocument": 5})
    client.send({"id": 900, "method": "textDocument/codeAction", "params": {"textDocument": 5}})
    answer = client.wait(lambda m: m.get("id") == 900)
    assert answer["error"]["code"] == -32602  # invalid params: the request is answered, not left hanging
    _still_serving(client, tmp_path)
    assert client.request("shutdown", None)["result"] is None
    client.notify("exit", None)
    assert client.process.wait(timeout=30) == 0
    stderr = client.process.stderr.read().decode()
    assert "Traceback" not in stderr  # one line per message it could not handle, saying why
    assert all(line.startswith("flydsl-lint server: ") for line in stderr.splitlines()), stderr
    assert ("flydsl-lint server: Unable to handle message: JSONDecodeError: Expecting property name enclosed "
            "in double quotes: line 1 column 2 (char 1)") in stderr.splitlines()
    assert "flydsl-lint server: Unable to handle message: UnicodeDecodeError: 'utf-16-le' codec can't decode " \
           "byte 0x5d in position 4: truncated data" in stderr.splitlines()


def test_a_change_to_a_document_never_opened_is_logged_not_shown(client, tmp_path):
    ghost = (tmp_path / "ghost.py").as_uri()
    client.notify("textDocument/didChange", {"textDocument": {"uri": ghost, "version": 2}, "contentChanges": [{"text": KERNEL}]})
    _still_serving(client, tmp_path)
    assert client.request("shutdown", None)["result"] is None
    client.notify("exit", None)
    assert client.process.wait(timeout=30) == 0
    stderr = client.process.stderr.read().decode()
    assert f"{ghost}: didChange for a document that is not open; ignored" in stderr
    seen = []
    while not client.messages.empty():
        seen.append(client.messages.get())
    assert not [m for m in seen if m.get("method") == "window/showMessage"]
    assert not [m for m in seen if m.get("method") == PUBLISH and m["params"]["uri"] == ghost]


def test_out_of_bounds_ranges_in_incremental_changes(client, tmp_path):
    uri = (tmp_path / "k.py").as_uri()
    _open(client, uri, KERNEL)
    client.diagnostics(uri)
    beyond = {"start": {"line": 500, "character": 3}, "end": {"line": 900, "character": 99}}
    backwards = {"start": {"line": 5, "character": 3}, "end": {"line": 1, "character": 99}}
    negative = {"start": {"line": -3, "character": -3}, "end": {"line": 1, "character": 99}}
    for version, change_range in enumerate([beyond, backwards, negative], start=2):
        client.notify("textDocument/didChange", {
            "textDocument": {"uri": uri, "version": version}, "contentChanges": [{"range": change_range, "text": "zz"}],
        })
    client.notify("textDocument/didChange", {"textDocument": {"uri": uri, "version": 9}, "contentChanges": [{"text": KERNEL}]})
    final = client.wait(lambda m: m.get("method") == PUBLISH and m["params"].get("version") == 9)["params"]
    assert _codes(final) == ["FLY101", "FLY103", "FLY111"]
    _still_serving(client, tmp_path)


def test_a_code_action_for_a_document_not_open_reads_nothing_from_disk(client, tmp_path):
    on_disk = tmp_path / "closed.py"
    on_disk.write_text(KERNEL)
    everything = {"start": {"line": 0, "character": 0}, "end": {"line": 9, "character": 0}}
    for uri in (on_disk.as_uri(), (tmp_path / "missing.py").as_uri(), "untitled:Untitled-9"):
        answer = client.request("textDocument/codeAction", {
            "textDocument": {"uri": uri}, "range": everything, "context": {"diagnostics": []},
        })
        assert answer.get("result") == [], answer
    _still_serving(client, tmp_path)


def test_an_untitled_buffer_is_checked(client, tmp_path):
    uri = "untitled:Untitled-1"
    _open(client, uri, KERNEL)
    assert _codes(client.diagnostics(uri)) == ["FLY101", "FLY103", "FLY111"]


@pytest.mark.parametrize("length", [10**14, 10**9])
def test_a_huge_content_length_is_refused_and_the_server_resyncs(client, tmp_path, length):
    client.write(b"Content-Length: %d\r\n\r\n" % length)
    _still_serving(client, tmp_path)
    assert client.process.poll() is None


def test_a_message_that_is_not_an_object(client, tmp_path):
    for body in (b"5", b"[1, 2]", json.dumps({"id": 1}).encode(), json.dumps({"jsonrpc": "2.0", "method": 5}).encode()):
        client.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
    _still_serving(client, tmp_path)
