"""rules.toml is read through a marshal copy kept like a .pyc: same data, never stale."""

import marshal
import os
import sys

import pytest

from flydsl_lint.engine import metadata
from flydsl_lint.engine.metadata import read_rules_toml

TOML = b'[rules.FLY101]\nname = "first"\n'


@pytest.fixture
def writes_copies(monkeypatch):
    monkeypatch.setattr(sys, "dont_write_bytecode", False)


def _copy(path):
    return path.parent / "__pycache__" / f"{path.name}.{sys.implementation.cache_tag}.marshal"


def _forbid_parsing(monkeypatch):
    from flydsl_lint.engine.tomlcompat import tomllib

    def refuse(*args, **kwargs):
        raise AssertionError("parsed although the copy matches")

    monkeypatch.setattr(tomllib, "loads", refuse)


def test_copy_is_written_then_served(tmp_path, monkeypatch, writes_copies):
    path = tmp_path / "rules.toml"
    path.write_bytes(TOML)
    assert read_rules_toml(path) == {"rules": {"FLY101": {"name": "first"}}}
    assert marshal.loads(_copy(path).read_bytes())[0] == TOML
    _forbid_parsing(monkeypatch)
    assert read_rules_toml(path) == {"rules": {"FLY101": {"name": "first"}}}


def test_edited_file_is_parsed_again(tmp_path, writes_copies):
    path = tmp_path / "rules.toml"
    path.write_bytes(TOML)
    read_rules_toml(path)
    stat = path.stat()
    path.write_bytes(TOML.replace(b"first", b"other"))  # same size
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns))  # and the same time: the bytes decide
    assert read_rules_toml(path)["rules"]["FLY101"]["name"] == "other"
    assert read_rules_toml(path)["rules"]["FLY101"]["name"] == "other"


@pytest.mark.parametrize("damage", [b"", b"not marshal", marshal.dumps(("one", "two", "three"))])
def test_damaged_copy_is_parsed_past(tmp_path, writes_copies, damage):
    path = tmp_path / "rules.toml"
    path.write_bytes(TOML)
    _copy(path).parent.mkdir()
    _copy(path).write_bytes(damage)
    assert read_rules_toml(path)["rules"]["FLY101"]["name"] == "first"
    assert marshal.loads(_copy(path).read_bytes())[0] == TOML  # and replaced


def test_no_copy_with_dont_write_bytecode(tmp_path, monkeypatch):
    monkeypatch.setattr(sys, "dont_write_bytecode", True)
    path = tmp_path / "rules.toml"
    path.write_bytes(TOML)
    assert read_rules_toml(path)["rules"]["FLY101"]["name"] == "first"
    assert not (tmp_path / "__pycache__").exists()


def test_read_only_install_is_no_error(tmp_path, monkeypatch, writes_copies):
    path = tmp_path / "rules.toml"
    path.write_bytes(TOML)

    def read_only(*args, **kwargs):
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr(os, "replace", read_only)
    assert read_rules_toml(path)["rules"]["FLY101"]["name"] == "first"
    assert list((tmp_path / "__pycache__").iterdir()) == []  # the temporary file is gone too


def test_unwritable_copy_is_no_error(tmp_path, writes_copies):
    path = tmp_path / "rules.toml"
    path.write_bytes(TOML)
    (tmp_path / "__pycache__").write_text("a file where the folder would go")
    assert read_rules_toml(path)["rules"]["FLY101"]["name"] == "first"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["__pycache__", "rules.toml"]


def test_shipped_rules_load_through_the_copy(monkeypatch, writes_copies):
    metadata.load_metadata.cache_clear()
    try:
        first = metadata.load_metadata()
        metadata.load_metadata.cache_clear()
        _forbid_parsing(monkeypatch)
        assert metadata.load_metadata() == first
    finally:
        metadata.load_metadata.cache_clear()


@pytest.mark.parametrize("template, fields", [("plain", set()), ("`{op}` on {what}", {"op", "what"}),
                                              ("{{literal}} {name}", {"name"})])
def test_message_fields_are_the_templates_named_fields(template, fields):
    assert metadata.message_fields(template) == fields


@pytest.mark.parametrize("template", ["{}", "{0}", "{a.b}", "{x[0]}", "one { brace"])
def test_a_message_template_that_cannot_be_filled_by_name_is_refused(template):
    with pytest.raises(ValueError):
        metadata.message_fields(template)


def test_a_report_must_fill_exactly_the_messages_fields(tmp_path):
    from flydsl_lint.rules import all_rules
    from flydsl_lint.run.checker import Checker
    from flydsl_lint.engine.source import SourceFile
    from tests.conftest import make_settings

    rule = all_rules()["FLY301"]  # message: Legacy typed-arithmetic spelling `{spelling}`: use `{replacement}`
    assert rule.message_fields == {"spelling", "replacement"}
    checker = Checker(make_settings(tmp_path, select=("FLY301",)))
    source = SourceFile(str(tmp_path / "k.py"), "from flydsl.expr import arith\nm = arith.maximumf(a, b)\n")
    original = rule.visit_Call

    def reports_without_fields(self, node):
        self.report(node)

    rule.visit_Call = reports_without_fields
    try:
        with pytest.raises(Exception, match="message fields"):
            checker.check(source)
    finally:
        rule.visit_Call = original
