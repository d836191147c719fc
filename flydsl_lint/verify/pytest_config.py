"""Which files of a repository are test files, as its pytest configuration says.

pytest takes its settings from the first configuration file it finds going up
from the tests it is given: ``pytest.ini`` or ``.pytest.ini`` (even without a
``[pytest]`` section), else a ``pyproject.toml`` with
``[tool.pytest.ini_options]``, a ``tox.ini`` with ``[pytest]`` or a
``setup.cfg`` with ``[tool:pytest]``. Each test file is judged by the
nearest such file within the repository: its ``python_files`` patterns
(default ``test_*.py`` and ``*_test.py``) and, when set, its ``testpaths``.
Configuration is read from the working tree on disk; nothing is imported.
"""

from __future__ import annotations

import configparser
import fnmatch
import posixpath
import shlex
from dataclasses import dataclass
from pathlib import Path

from flydsl_lint.engine.tomlcompat import tomllib
from flydsl_lint.verify.config import ConfigError

DEFAULT_PYTHON_FILES = ("test_*.py", "*_test.py")
# (file name, section holding pytest's settings; None: the file counts even without one), in pytest's order.
_CANDIDATES = (("pytest.ini", None), (".pytest.ini", None), ("pyproject.toml", "tool.pytest.ini_options"),
               ("tox.ini", "pytest"), ("setup.cfg", "tool:pytest"))


@dataclass(frozen=True)
class PytestConfig:
    python_files: tuple[str, ...] = DEFAULT_PYTHON_FILES
    testpaths: tuple[str, ...] = ()  # repo-relative, possibly glob patterns


def _read_text(path: Path, shown: str) -> str:
    try:
        return path.read_bytes().decode("utf-8")
    except OSError as exc:
        raise ConfigError(f"{shown}: cannot be read: {exc.strerror}") from None
    except UnicodeDecodeError as exc:
        raise ConfigError(f"{shown}: not UTF-8 (byte {exc.start})") from None


def _toml_options(text: str, shown: str) -> dict | None:
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{shown}: {exc}") from None
    options = data.get("tool", {}).get("pytest", {}) if isinstance(data.get("tool"), dict) else {}
    options = options.get("ini_options") if isinstance(options, dict) else None
    return options if isinstance(options, dict) else None


def _ini_options(text: str, section: str | None, shown: str) -> dict | None:
    parser = configparser.RawConfigParser()
    try:
        parser.read_string(text, source=shown)
    except configparser.Error as exc:
        raise ConfigError(f"{shown}: {str(exc).splitlines()[0]}") from None
    if section is None:  # pytest.ini: its [pytest] section, or nothing at all
        return dict(parser["pytest"]) if parser.has_section("pytest") else {}
    return dict(parser[section]) if parser.has_section(section) else None


def _as_list(value, shown: str, key: str) -> tuple[str, ...]:
    """An ini value is split like a command line; TOML gives a list of strings (or one string)."""
    if isinstance(value, str):
        try:
            return tuple(shlex.split(value))
        except ValueError as exc:
            raise ConfigError(f"{shown}: {key}: {exc}") from None
    if isinstance(value, list) and all(isinstance(item, str) for item in value):
        return tuple(value)
    raise ConfigError(f"{shown}: {key} must be a list of strings")


def read_config(root: Path, directory: str) -> PytestConfig | None:
    """The pytest configuration held in ``directory`` (repo-relative), or None when it holds none."""
    for name, section in _CANDIDATES:
        relative = posixpath.join(directory, name) if directory else name
        path = root / relative
        if not path.is_file():
            continue
        text = _read_text(path, relative)
        options = _toml_options(text, relative) if name == "pyproject.toml" else _ini_options(text, section, relative)
        if options is None:
            continue
        python_files = _as_list(options.get("python_files", list(DEFAULT_PYTHON_FILES)), relative, "python_files")
        testpaths = _as_list(options.get("testpaths", []), relative, "testpaths")
        return PytestConfig(python_files, tuple(posixpath.normpath(posixpath.join(directory, p)) for p in testpaths))
    return None


def _matches(path: str, pattern: str) -> bool:
    """pytest's rule: a pattern without a slash matches the file name, one with a slash the path's end."""
    if "/" not in pattern:
        return fnmatch.fnmatch(posixpath.basename(path), pattern)
    return fnmatch.fnmatch(path, pattern) or fnmatch.fnmatch(path, f"*/{pattern}")


def _under(path: str, directory: str) -> bool:
    return directory in (".", "") or path == directory or path.startswith(directory.rstrip("/") + "/")


def _under_pattern(path: str, pattern: str) -> bool:
    """``path`` is ``pattern`` or inside a directory matching it (testpaths may be globs)."""
    if _under(path, pattern):
        return True
    parts = path.split("/")
    return any(fnmatch.fnmatch("/".join(parts[:i]), pattern) for i in range(1, len(parts) + 1))


class TestFiles:
    """Decides, per repo-relative path, whether pytest would treat it as a test file here.

    ``test_dirs`` (``[tool.flydsl-lint.verify] test-dirs``), when given,
    further restricts test files to those directories.
    """

    __test__ = False  # not a pytest test class, whatever its name

    def __init__(self, root: Path, test_dirs: list[str] = ()):
        self.root = root
        self.test_dirs = list(test_dirs)
        self._configs: dict[str, PytestConfig | None] = {}  # directory -> its own config

    def config_for(self, path: str) -> PytestConfig:
        """The nearest configuration above ``path`` within the repository, else pytest's defaults."""
        directory = posixpath.dirname(path)
        while True:
            if directory not in self._configs:
                self._configs[directory] = read_config(self.root, directory)
            if self._configs[directory] is not None:
                return self._configs[directory]
            if not directory:
                return PytestConfig()
            directory = posixpath.dirname(directory)

    def is_test(self, path: str) -> bool:
        if posixpath.basename(path) == "conftest.py":
            return False
        if self.test_dirs and not any(_under(path, d) for d in self.test_dirs):
            return False
        config = self.config_for(path)
        if config.testpaths and not any(_under_pattern(path, p) for p in config.testpaths):
            return False
        return any(_matches(path, pattern) for pattern in config.python_files)
