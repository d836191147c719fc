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
