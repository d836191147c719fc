"""flydsl-lint-verify on a downstream layout, compiled with the installed flydsl: a test at the
repository root is found and compiled, a test that cannot import a dependency is "not verified"
(exit 2, never parity), and --keep names each side's evidence."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

from tests.verify import fake_flydsl_repo
from tests.verify.conftest import requires_flydsl, run_verify

MISSING = "flydsl_lint_missing_dependency"
NEEDS_MISSING = "tests/kernels/test_needs_a_dependency.py"


@requires_flydsl
def test_root_test_compiles_unimportable_test_is_not_verified_and_keep_names_the_evidence(tmp_path):
    repo = fake_flydsl_repo.create(tmp_path / "repo")
    (repo / "test_top.py").write_text(fake_flydsl_repo.TEST_VEC_ADD)
    # As in FlyDSL: pytest's rootdir would be tests/, so its node ids would lack the tests/ prefix.
    (repo / "tests/pytest.ini").write_text("[pytest]\ntestpaths = .\n")
    (repo / NEEDS_MISSING).write_text(f"import {MISSING}  # noqa: F401\nfrom kernels.elementwise import vec_add\n\n\n"
                                      "def test_nothing():\n    pass\n")
    fake_flydsl_repo.commit_all(repo, "a root test and one needing a missing dependency")
    fake_flydsl_repo.edit(repo, "kernels/elementwise/vec_add.py", '"""C = A', '# comment only\n"""C = A')

    result = run_verify(repo, "--keep")
    kept = re.findall(r"^kept (?:before|after) \(.*?\): (\S+):", result.stdout, re.MULTILINE)
    kept += re.findall(r"\(evidence kept in (\S+)\)$", result.stderr)  # a run that stopped early
    try:
        assert result.returncode == 2, result.stdout + result.stderr
        lines = result.stdout.splitlines()
        assert f"not verified  {NEEDS_MISSING} [gfx942]: ModuleNotFoundError: No module named '{MISSING}'" in lines
        assert re.search(r"^\d+ specializations compared, (\d+) identical$", result.stdout, re.MULTILINE)
        assert "test_top.py::test_vec_add" not in result.stdout  # identical, so not listed
        assert "collect:" not in result.stdout
        assert lines[-1].startswith("parity not verified: 1 test file could not be run here")
        assert [line.split(" (")[0] for line in lines if line.startswith("kept ")] == ["kept before", "kept after"]
        assert re.search(r"^kept after \(working tree .*\): .*: [1-9]\d* compilations?, [1-9]\d* ISA files? "
                         r"\(\*_final_isa\.s\), logs gfx942/part-0/tests\.log(, gfx942/part-\d+/tests\.log)*$", result.stdout, re.MULTILINE), result.stdout
        assert len(kept) == 2 and all(Path(k).is_dir() for k in kept)
    finally:
        for directory in kept:
            shutil.rmtree(directory.partition("/evidence/")[0], ignore_errors=True)


@requires_flydsl
def test_test_ids_are_repository_relative_whatever_pytests_rootdir(tmp_path):
    repo = fake_flydsl_repo.create(tmp_path / "repo")
    (repo / "tests/pytest.ini").write_text("[pytest]\ntestpaths = .\n")  # FlyDSL's: rootdir would be tests/
    (repo / NEEDS_MISSING).write_text(f"import {MISSING}  # noqa: F401\n")
    fake_flydsl_repo.commit_all(repo, "a test needing a missing dependency")
    result = run_verify(repo, "--tests", NEEDS_MISSING)
    assert result.returncode == 2
    assert result.stderr == (f"flydsl-lint-verify: setup error: no kernel was compiled on either side: [gfx942] "
                             f"{NEEDS_MISSING}: import error (ModuleNotFoundError: No module named '{MISSING}')\n")
