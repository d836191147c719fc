"""The installed FlyDSL version is read from metadata on sys.path, like importlib.metadata."""

from __future__ import annotations

import sys

import pytest

from flydsl_lint.engine import versions
from flydsl_lint.engine.versions import Version


@pytest.fixture
def fresh(monkeypatch):
    versions.installed_flydsl_version.cache_clear()
    yield monkeypatch
    versions.installed_flydsl_version.cache_clear()


def _dist(root, name: str, metadata: str, file: str = "METADATA") -> None:
    folder = root / name
    folder.mkdir(parents=True)
    (folder / file).write_text(metadata)


def test_first_flydsl_distribution_on_sys_path_wins(tmp_path, fresh):
    _dist(tmp_path / "a", "flydsl_lint-0.1.0.dist-info", "Name: flydsl-lint\nVersion: 9.9.9\n")
    _dist(tmp_path / "a", "FlyDSL-0.4.1.dist-info", "Metadata-Version: 2.1\nName: flydsl\nVersion: 0.4.1\n\nbody\n")
    _dist(tmp_path / "b", "flydsl-0.5.0.dist-info", "Name: flydsl\nVersion: 0.5.0\n")
    fresh.setattr(sys, "path", [str(tmp_path / "missing"), str(tmp_path / "a"), str(tmp_path / "b")])
    assert versions.installed_flydsl_version() == Version.parse("0.4.1")


def test_egg_info_and_absence(tmp_path, fresh):
    _dist(tmp_path, "flydsl.egg-info", "Name: flydsl\nVersion: 0.3.4.1\n", file="PKG-INFO")
    fresh.setattr(sys, "path", [str(tmp_path)])
    assert versions.installed_flydsl_version() == Version.parse("0.3.4.1")
    versions.installed_flydsl_version.cache_clear()
    fresh.setattr(sys, "path", [str(tmp_path / "nothing-here")])
    assert versions.installed_flydsl_version() is None


def test_matches_importlib_metadata_for_this_environment(fresh):
    from importlib import metadata

    try:
        expected = Version.parse(metadata.version("flydsl"))
    except metadata.PackageNotFoundError:
        expected = None
    assert versions.installed_flydsl_version() == expected
