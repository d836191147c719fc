"""One bounded reader of regular files (engine/source.read_regular) behind the
source, config, cache and verify reads; each caller keeps its own wording."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from flydsl_lint.engine.config import ConfigError, read_toml
from flydsl_lint.verify.imports import MAX_SOURCE_BYTES, Unreadable, read_source


@pytest.fixture
def opened(monkeypatch):
    """The paths os.open is asked to open."""
    paths: list[str] = []
    real_open = os.open

    def recording_open(path, *args, **kwargs):
        paths.append(os.fspath(path))
        return real_open(path, *args, **kwargs)

    monkeypatch.setattr(os, "open", recording_open)
    return paths


def test_a_config_that_is_a_device_is_refused_unopened(opened):
    with pytest.raises(ConfigError, match=r"^/dev/zero: cannot read config: not a regular file"):
        read_toml(Path("/dev/zero"))
    assert "/dev/zero" not in opened  # a device may act on being opened


def test_a_config_over_the_limit_is_refused_unread(tmp_path, opened):
    huge = tmp_path / "huge.toml"
    with open(huge, "wb") as handle:
        handle.truncate(2 << 20)  # sparse: its size says enough
    with pytest.raises(ConfigError, match=r"cannot read config: larger than 1048576 bytes$"):
        read_toml(huge)
    assert str(huge) not in opened


def test_verify_refuses_a_huge_module_unread(tmp_path, opened):
    huge = tmp_path / "huge.py"
    with open(huge, "wb") as handle:
        handle.truncate(MAX_SOURCE_BYTES + 1)
    assert read_source(huge) == Unreadable("larger than 4 MiB", is_file=True)
    assert str(huge) not in opened


def test_each_caller_names_what_it_refuses_in_its_own_words(tmp_path):
    from flydsl_lint.engine.source import NotRegularFile, ReadWording, RefusedFile, read_regular

    wording = ReadWording(missing=lambda path: f"no {path.name}", not_regular=lambda mode: "odd",
                          too_large=lambda size, limit: f"{size} > {limit}", failed=lambda exc: "failed")

    def refusal(path: Path, **options) -> tuple[type, str]:
        with pytest.raises(OSError) as raised:
            read_regular(path, 10, wording, **options)
        return type(raised.value), raised.value.strerror

    (tmp_path / "big.py").write_bytes(b"x" * 11)
    (tmp_path / "ok.py").write_bytes(b"x = 1\n")
    (tmp_path / "link.py").symlink_to(tmp_path / "ok.py")
    os.mkfifo(tmp_path / "fifo.py")
    assert refusal(tmp_path / "gone.py") == (FileNotFoundError, "no gone.py")
    assert refusal(tmp_path / "fifo.py") == (NotRegularFile, "odd")
    assert refusal(tmp_path) == (NotRegularFile, "odd")
    assert refusal(tmp_path / "big.py") == (RefusedFile, "11 > 10")
    # the cache reads its entries without following symbolic links
    assert refusal(tmp_path / "link.py", follow_symlinks=False) == (NotRegularFile, "odd")
    assert read_regular(tmp_path / "link.py", 10, wording) == b"x = 1\n"
