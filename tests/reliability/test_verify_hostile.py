"""flydsl-lint-verify on hostile repositories: it runs nothing of theirs, plans around files it cannot
read, rejects malformed config in one line, tells its own hook failing from a kernel failing, and
leaves nothing behind when interrupted."""

from __future__ import annotations

import pytest

from tests.verify import fake_flydsl_repo
from tests.verify.conftest import run_verify


@pytest.fixture
def repo(tmp_path):
    return fake_flydsl_repo.create(tmp_path / "repo")


def _one_line_naming(stderr: str, *words: str) -> None:
    assert stderr.count("\n") == 1 and "Traceback" not in stderr, stderr
    for word in words:
        assert word in stderr, stderr


# Item 11: malformed configuration.

@pytest.mark.parametrize("text, reason", [
    (b"tool = 5\n", "[tool] must be a table, not int"),
    (b"[tool]\nflydsl-lint = 5\n", "[tool.flydsl-lint] must be a table, not int"),
    (b"[tool.flydsl-lint]\nverify = 5\n", "[tool.flydsl-lint.verify] must be a table, not int"),
    (b'[tool.flydsl-lint.verify]\narchs = "gfx942"\n', "[tool.flydsl-lint.verify] archs must be a list of strings"),
    (b"[tool.flydsl-lint.verify]\nprobes = [1]\n", "[tool.flydsl-lint.verify] probes must be a list of strings"),
    (b"[tool.flydsl-lint.verify]\nrtol = true\n", "[tool.flydsl-lint.verify] rtol must be a number"),
    (b'name = "\xff"\n', "not UTF-8 (byte 8)"),
])
def test_malformed_config_is_one_line(repo, text, reason):
    (repo / "pyproject.toml").write_bytes(text)
    result = run_verify(repo, "--list")
    assert result.returncode == 2
    _one_line_naming(result.stderr, f"{repo / 'pyproject.toml'}: {reason}")


