"""The target FlyDSL release comes from the linted project's own files."""

from pathlib import Path

import pytest

from flydsl_lint.engine import target as target_module
from flydsl_lint.engine.target import discover_target
from flydsl_lint.engine.versions import Version


@pytest.fixture(autouse=True)
def nothing_installed(monkeypatch):
    """The machine's own flydsl must not decide these cases."""
    monkeypatch.setattr(target_module, "installed_flydsl_version", lambda: None)


def project(tmp_path: Path, files: dict[str, str]) -> Path:
    (tmp_path / ".git").mkdir(exist_ok=True)
    for name, text in files.items():
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    (tmp_path / "pkg").mkdir(exist_ok=True)
    return tmp_path / "pkg"


@pytest.mark.parametrize(
    "files, version, source",
    [
        ({"requirements.txt": "torch\nflydsl==0.3.1  # pinned\n"}, "0.3.1", "requirements.txt (flydsl==0.3.1)"),
        ({"requirements-dev.txt": "-r base/reqs.txt\n", "base/reqs.txt": "flydsl>=0.3.2,<0.5\n"}, "0.3.2",
         "base/reqs.txt (flydsl>=0.3.2,<0.5)"),
        ({"requirements.txt": "-c constraints.txt\nflydsl\n", "constraints.txt": "flydsl~=0.4.0\n"}, "0.4.0",
         "constraints.txt (flydsl~=0.4.0)"),
        ({"pyproject.toml": '[project]\nname = "x"\ndependencies = ["numpy", "flydsl >= 0.3.3"]\n'}, "0.3.4",
         "pyproject.toml (flydsl >= 0.3.3)"),
        ({"pyproject.toml": '[project]\nname = "x"\n[project.optional-dependencies]\ngpu = ["flydsl==0.4.1"]\n'},
         "0.4.1", "pyproject.toml (flydsl==0.4.1)"),
        ({"pyproject.toml": '[tool.poetry.dependencies]\npython = "^3.10"\nflydsl = "^0.3.1"\n'}, "0.3.1",
         "pyproject.toml (flydsl>=0.3.1,<0.4)"),
        ({"pyproject.toml": '[tool.poetry.dependencies]\nflydsl = {version = "0.4.2", optional = true}\n'}, "0.4.2",
         "pyproject.toml (flydsl==0.4.2)"),
        ({"setup.cfg": "[options]\ninstall_requires =\n    numpy\n    flydsl==0.3.0\n"}, "0.3.0",
         "setup.cfg (flydsl==0.3.0)"),
        ({"setup.py": 'from setuptools import setup\nPIN = "flydsl==0.3.1"\nsetup(install_requires=[PIN])\n'},
         "0.3.1", "setup.py (flydsl==0.3.1)"),
        ({"uv.lock": 'version = 1\n[[package]]\nname = "flydsl"\nversion = "0.4.0"\nsource = {}\n'}, "0.4.0",
         "uv.lock (flydsl 0.4.0)"),
        ({"requirements.txt": "flydsl @ https://example.invalid/flydsl-0.3.2-cp311-linux_x86_64.whl\n"}, "0.3.2",
         "requirements.txt (flydsl @ https://example.invalid/flydsl-0.3.2-cp311-linux_x86_64.whl)"),
        ({"requirements.txt": "flydsl>=0.9\n"}, "0.9.0", "requirements.txt (flydsl>=0.9)"),
        ({"requirements.txt": "flydsl==0.3.*\n"}, "0.3.0", "requirements.txt (flydsl==0.3.*)"),
        ({"requirements.txt": "flydsl!=0.3.0,>=0.3,<0.4\n"}, "0.3.1", "requirements.txt (flydsl!=0.3.0,>=0.3,<0.4)"),
    ],
)
def test_a_pin_gives_the_lowest_release_it_allows(tmp_path, files, version, source):
    found = discover_target(project(tmp_path, files))
    assert (str(found.version), found.source) == (version, source)


def test_requirements_win_over_setup_py_and_declarations_over_a_lock(tmp_path):
    start = project(tmp_path, {
        "requirements.txt": "flydsl==0.3.1\n",
        "setup.py": 'setup(install_requires=["flydsl==0.5.0"])\n',
        "uv.lock": '[[package]]\nname = "flydsl"\nversion = "0.5.0"\n',
    })
    assert discover_target(start).version == Version.parse("0.3.1")


def test_the_nearest_project_wins_and_the_walk_stops_at_the_repository(tmp_path):
    (tmp_path / "requirements.txt").write_text("flydsl==0.3.0\n")  # outside the repository: never read
    repo = tmp_path / "repo"
    repo.mkdir()
    start = project(repo, {"sub/requirements.txt": "flydsl==0.4.2\n"})
    assert discover_target(start).source == "unknown"
    assert discover_target(repo / "sub").version == Version.parse("0.4.2")


def test_setup_py_is_parsed_never_run(tmp_path):
    marker = tmp_path / "ran"
    start = project(tmp_path, {"setup.py": f'open({str(marker)!r}, "w")\nREQ = "flydsl==0.3.2"\n'})
    assert discover_target(start).version == Version.parse("0.3.2")
    assert not marker.exists()


def test_a_flydsl_checkout_gives_its_own_version(tmp_path):
    start = project(tmp_path, {"python/flydsl/__init__.py": '# header\n__version__ = "0.3.2"\n'})
    found = discover_target(start)
    assert (str(found.version), found.source) == ("0.3.2", "FlyDSL checkout (python/flydsl/__init__.py says 0.3.2)")


def test_the_installed_release_comes_last(tmp_path, monkeypatch):
    monkeypatch.setattr(target_module, "installed_flydsl_version", lambda: Version.parse("0.5.0"))
    assert discover_target(project(tmp_path, {"requirements.txt": "numpy\n"})) == (Version.parse("0.5.0"), "installed flydsl")
    assert discover_target(project(tmp_path, {"requirements.txt": "flydsl==0.3.1\n"})).version == Version.parse("0.3.1")


@pytest.mark.parametrize("files", [
    {"requirements.txt": "flydsl\n"},  # no version: not a pin
    {"requirements.txt": "flydsl-extras==0.3.1\nnot_flydsl==0.3.1\n"},
    {"requirements.txt": "-r requirements.txt\n"},  # an include loop ends
    {"pyproject.toml": "this is [not toml"},
    {"setup.py": "def broken(:\n"},
    {"setup.cfg": "[options\ninstall_requires = flydsl==0.3.1\n"},
    {"requirements.txt": "flydsl==banana\n"},
])
def test_unreadable_or_versionless_files_give_no_target(tmp_path, files):
    assert discover_target(project(tmp_path, files)) == (None, "unknown")


def test_special_files_are_not_read(tmp_path):
    import os

    start = project(tmp_path, {})
    os.mkfifo(tmp_path / "requirements.txt")  # reading it would block forever
    (tmp_path / "setup.py").symlink_to("/dev/zero")
    assert discover_target(start) == (None, "unknown")


def test_the_known_releases_are_those_the_api_table_was_derived_from():
    from flydsl_lint.engine.tomlcompat import tomllib

    table = Path(target_module.__file__).resolve().parent.parent / "data" / "flydsl_api.toml"
    with open(table, "rb") as handle:
        derived = [Version.parse(v) for v in tomllib.load(handle)["releases"]]
    assert list(target_module.releases().known) == derived
