"""The two stores a rule keeps answers in: per file (`Context.cache`) and per run (`ProjectIndex.derived`)."""

from __future__ import annotations

import ast
import os

from flydsl_lint.engine.context import Context
from flydsl_lint.engine.model import SemanticModel
from flydsl_lint.engine.project import ProjectIndex
from flydsl_lint.engine.source import SourceFile
from tests.conftest import make_settings


def _context(tmp_path) -> Context:
    source = SourceFile(str(tmp_path / "k.py"), "x = 1\n")
    return Context(source, SemanticModel(source.tree), make_settings(tmp_path), {})


def test_a_file_cache_computes_each_key_once_and_a_new_file_afresh(tmp_path):
    calls = []
    first = _context(tmp_path)
    assert first.cache("t.key", lambda: calls.append(1) or ["answer"]) == ["answer"]
    assert first.cache("t.key", lambda: calls.append(2) or ["other"]) == ["answer"]
    assert _context(tmp_path).cache("t.key", lambda: calls.append(3) or ["next"]) == ["next"]
    assert calls == [1, 3]


def test_the_run_store_reads_a_module_again_once_its_file_changed(tmp_path):
    module = tmp_path / "helpers.py"
    module.write_text("A = 1\n")
    index = ProjectIndex([tmp_path])
    read = lambda name: ast.parse(index.find(name)[0].read_text()).body[0].value.value  # noqa: E731
    assert index.derived("t.value", "helpers", read) == 1
    info = module.stat()
    module.write_text("A = 2\n")
    os.utime(module, ns=(info.st_atime_ns, info.st_mtime_ns))
    assert index.derived("t.value", "helpers", read) == 1  # same version of the file: kept
    os.utime(module, ns=(info.st_atime_ns, info.st_mtime_ns + 10**9))  # a fix rewrote it
    assert index.derived("t.value", "helpers", read) == 2
    assert "helpers" in index.touched


def test_the_run_store_keeps_only_the_newest_version_of_a_module(tmp_path):
    # A language server's index lives across edits: an older version's answer is not kept.
    module = tmp_path / "helpers.py"
    module.write_text("A = 1\n")
    index = ProjectIndex([tmp_path])
    computed = []
    derive = lambda name: computed.append(name) or len(computed)  # noqa: E731
    first = module.stat().st_mtime_ns
    assert index.derived("t.count", "helpers", derive) == 1
    os.utime(module, ns=(first, first + 10**9))
    assert index.derived("t.count", "helpers", derive) == 2
    os.utime(module, ns=(first, first))  # back to the first version: derived again, not recalled
    assert index.derived("t.count", "helpers", derive) == 3
    assert index.derived("t.count", "helpers", derive) == 3


def test_a_tree_the_index_parsed_goes_once_to_the_check_of_the_same_text(tmp_path):
    (tmp_path / "helpers.py").write_text("def f():\n    return 1\n")
    index = ProjectIndex([tmp_path])
    tree, _ = index.parse("helpers")
    path = str(tmp_path / "helpers.py")
    assert index.take_tree(path, "def f():\n    return 2\n") is None  # the file changed since: parsed afresh
    index.parse("helpers")
    kept = index.take_tree(path, "def f():\n    return 1\n")
    assert ast.dump(kept) == ast.dump(tree) and index.take_tree(path, "def f():\n    return 1\n") is None
    source = SourceFile(path, "def f():\n    return 1\n")
    source.adopt_tree(kept)
    assert source.tree is kept


def test_the_index_keeps_trees_of_at_most_max_kept_tree_bytes(tmp_path, monkeypatch):
    monkeypatch.setattr("flydsl_lint.engine.project.MAX_KEPT_TREE_BYTES", 30)
    for name in ("a", "b"):
        (tmp_path / f"{name}.py").write_text("x = 1  # twenty bytes\n")
    index = ProjectIndex([tmp_path])
    index.parse("a")
    index.parse("b")  # over the bound: a's tree goes
    assert index.take_tree(str(tmp_path / "a.py"), "x = 1  # twenty bytes\n") is None
    assert index.take_tree(str(tmp_path / "b.py"), "x = 1  # twenty bytes\n") is not None


def test_the_check_of_a_helper_module_shares_the_walk_of_its_helper_model(tmp_path):
    helpers = "import flydsl.expr as fx\ndef width():\n    return fx.Int32(4)\ndef rows():\n    return fx.Int64(2)\n"
    (tmp_path / "helpers.py").write_text(helpers)
    index = ProjectIndex([tmp_path])
    kernel = SemanticModel(ast.parse("from helpers import width\nw = width()\n"), "k", False, index)
    assert str(kernel.value_type(kernel.tree.body[1].value)) == "fx.Int32"  # typed in the helper model
    own = SemanticModel(index.take_tree(str(tmp_path / "helpers.py"), helpers), "helpers", False, index)
    helper = own.walked_as_helper()
    assert helper is not None and own.nodes_by_type is helper.nodes_by_type and own._answers is not helper._answers
    own.release()  # the helper model's walk stays: it answers for the rest of the run
    assert str(helper.value_type(helper.tree.body[2].body[0].value)) == "fx.Int64"
    fresh = SemanticModel(ast.parse(helpers), "helpers", False, index)  # another tree: walked afresh
    assert fresh.walked_as_helper() is None


def test_releasing_the_index_releases_what_it_derived_and_forgets_it(tmp_path):
    (tmp_path / "helpers.py").write_text("A = 1\n")
    index = ProjectIndex([tmp_path])
    released = []

    class Model:  # what a run keeps that refers back to the index (a helper model)
        def release(self):
            released.append(self)

    model = index.derived("t.model", "helpers", lambda name: Model())
    assert index.derived("t.plain", "helpers", lambda name: 1) == 1  # no release(): only forgotten
    index.release()
    assert released == [model] and index.kept_derivation("t.model", "helpers") is None
