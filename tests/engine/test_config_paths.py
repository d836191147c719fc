"""Path questions of Settings: excludes, per-file ignores and tuned kernels, relative to a resolved root."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from flydsl_lint.engine.config import Settings


@pytest.fixture
def root(tmp_path):
    (tmp_path / "kernels" / "attention").mkdir(parents=True)
    (tmp_path / "pkg.egg-info").mkdir()
    return tmp_path


def test_plain_exclude_names_match_whole_components(root):
    settings = Settings(root=root, extend_exclude=("build",))
    assert settings.is_excluded(root / "build" / "x.py")
    assert settings.is_excluded(root / "kernels" / "build")
    assert not settings.is_excluded(root / "builds" / "x.py")  # a component, not a substring
    assert not settings.is_excluded(root / "kernels" / "rebuild.py")


def test_wildcard_and_path_patterns(root):
    settings = Settings(root=root, extend_exclude=("kernels/attention", "gen_*.py"))
    assert settings.is_excluded(root / "pkg.egg-info")  # the default `*.egg-info`
    assert settings.is_excluded(root / "kernels" / "attention" / "mha.py")
    assert not settings.is_excluded(root / "attention" / "mha.py")  # a path pattern starts at the root
    assert settings.is_excluded(root / "kernels" / "gen_tables.py")
    assert not settings.is_excluded(root / "kernels" / "tables.py")


def test_paths_are_taken_relative_to_the_resolved_root(root, tmp_path_factory, monkeypatch):
    link = tmp_path_factory.mktemp("links") / "checkout"
    os.symlink(root, link)
    settings = Settings(root=link, per_file_ignores=(("kernels/*", ("FLY1",)),), tuned_kernels=("kernels/attention/*",))
    assert settings.ignored_for(str(root / "kernels" / "a.py")) == ("FLY1",)  # the real path, the linked root
    assert settings.is_tuned_kernel(str(link / "kernels" / "attention" / "mha.py"))
    monkeypatch.chdir(root)
    assert Settings(root=link, per_file_ignores=(("kernels/*", ("FLY1",)),)).ignored_for("kernels/a.py") == ("FLY1",)
    assert settings.ignored_for("/elsewhere/kernels/a.py") == ()  # outside the root: only absolute patterns could match


def test_a_discoverys_exclusion_test_agrees_with_is_excluded(root, tmp_path_factory, monkeypatch):
    """exclusion_test resolves each folder once; symlinks, `..`, relative paths
    and a root below the asked folder must answer as is_excluded does."""
    (root / "build").mkdir()
    (root / "kernels" / "gen_tables.py").write_text("")
    (root / "kernels" / "mha.py").write_text("")
    outside = tmp_path_factory.mktemp("outside")
    (outside / "build").mkdir()
    (outside / "ok.py").write_text("")
    os.symlink(outside / "ok.py", root / "kernels" / "linked_out.py")  # a file linked from outside the root
    os.symlink(root / "build", root / "kernels" / "linked_build")  # a folder linked to an excluded one
    os.symlink(root / "kernels", outside / "linked_kernels")  # the root's files reached from outside it
    os.symlink(root / "kernels" / "gen_tables.py", root / "kernels" / "tables.py")  # excluded by its target's name
    # The root is kernels/; its own name excludes paths outside it (as given), never the root itself.
    settings = Settings(root=root / "kernels", extend_exclude=("gen_*.py", "attention/*", "linked_build", "kernels"))
    paths = [root, root / "build", root / "kernels", root / "kernels" / "gen_tables.py", root / "kernels" / "mha.py",
             root / "kernels" / "attention", root / "kernels" / "attention" / "x.py", root / "kernels" / "linked_out.py",
             root / "kernels" / "linked_build", root / "kernels" / "tables.py", root / "kernels" / "..",
             root / "kernels" / "attention" / "..",
             outside / "build", outside / "ok.py", outside / "linked_kernels" / "gen_tables.py",
             outside / "linked_kernels" / "mha.py", Path("kernels") / "gen_tables.py", Path("build"), Path("mha.py")]
    monkeypatch.chdir(root)
    excluded = settings.exclusion_test()
    answers = [(str(p), excluded(p), settings.is_excluded(p)) for p in paths]
    assert [a for a in answers if a[1] != a[2]] == []
    assert sum(a[1] for a in answers) >= 5  # the cases exclude something: the agreement is not all False


def test_git_is_asked_only_inside_a_work_tree(tmp_path, monkeypatch):
    import subprocess

    from flydsl_lint.engine import files

    monkeypatch.delenv("GIT_DIR", raising=False)
    calls = []
    real_run = subprocess.run
    monkeypatch.setattr(subprocess, "run", lambda *a, **k: calls.append(a) or real_run(*a, **k))
    (tmp_path / "plain").mkdir()
    assert files._git_listing(tmp_path / "plain") is None and calls == []  # no .git here or above
    real_run(["git", "init", "-q", str(tmp_path / "repo")], check=True)
    (tmp_path / "repo" / "sub").mkdir()
    (tmp_path / "repo" / "sub" / "k.py").write_text("x = 1\n")
    assert files._git_listing(tmp_path / "repo" / "sub") == [tmp_path / "repo" / "sub" / "k.py"]
    assert len(calls) == 1


def test_named_files_are_checked_unless_force_exclude(root):
    from flydsl_lint.engine.config import ConfigError, load_settings
    from flydsl_lint.engine.files import discover

    (root / "build").mkdir()
    (root / "build" / "gen.py").write_text("x = 1\n")
    (root / "kernels" / "k.py").write_text("x = 1\n")
    named = [str(root / "build" / "gen.py"), str(root / "kernels" / "k.py")]
    assert len(discover(named, Settings(root=root))[0]) == 2  # named on the command line: checked
    forced, missing = discover(named, Settings(root=root, force_exclude=True))
    assert forced == [root / "kernels" / "k.py"] and missing == []
    (root / "pyproject.toml").write_text("[tool.flydsl-lint]\nforce-exclude = true\n")
    assert load_settings(start=root).force_exclude
    (root / "pyproject.toml").write_text('[tool.flydsl-lint]\nforce-exclude = "yes"\n')
    with pytest.raises(ConfigError, match="force-exclude"):
        load_settings(start=root)


def test_every_setting_is_documented():
    """Each Settings field a config can set has its row in docs/configuration.md."""
    from flydsl_lint.engine.config import Settings

    docs = (Path(__file__).resolve().parents[2] / "docs" / "configuration.md").read_text()
    # Not keys: derived from where the config is, or a command-line-only switch (as in ruff).
    derived = {"root", "config_file", "target_version_source", "cache_dir_source", "ignore_noqa", "named_tuned_kernels"}
    keys = [name.replace("_", "-") for name in Settings._fields if name not in derived]
    assert len(keys) >= 17
    assert [key for key in keys if f"| `{key}` |" not in docs] == []
