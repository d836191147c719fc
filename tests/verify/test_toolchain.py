import importlib.util
import shutil
import subprocess

import pytest

from flydsl_lint.verify import toolchain


@pytest.fixture
def no_rocm(monkeypatch, tmp_path):
    monkeypatch.setenv("ROCM_PATH", str(tmp_path / "no-rocm"))
    monkeypatch.setattr(toolchain, "_rocm_install", lambda: None)


def test_rocm_install_wins(monkeypatch, tmp_path):
    lld = tmp_path / "rocm" / "llvm" / "bin" / "ld.lld"
    lld.parent.mkdir(parents=True)
    lld.write_text("")
    monkeypatch.setenv("ROCM_PATH", str(tmp_path / "rocm"))
    assert toolchain.find_linker(tmp_path / "shim").rocm_path == tmp_path / "rocm"


def test_path_lld_is_wrapped(no_rocm, monkeypatch, tmp_path):
    monkeypatch.setattr(shutil, "which", lambda name: "/usr/bin/true")
    linker = toolchain.find_linker(tmp_path / "shim")
    wrapper = linker.rocm_path / "llvm" / "bin" / "ld.lld"
    assert subprocess.run([str(wrapper), "--version"]).returncode == 0


def test_ziglang_fallback(no_rocm, monkeypatch, tmp_path):
    monkeypatch.setattr(shutil, "which", lambda name: None)
    if importlib.util.find_spec("ziglang") is None:
        pytest.skip("ziglang not installed")
    linker = toolchain.find_linker(tmp_path / "shim")
    assert linker.description == "ziglang ld.lld"
    wrapper = linker.rocm_path / "llvm" / "bin" / "ld.lld"
    assert "LLD" in subprocess.run([str(wrapper), "--version"], capture_output=True, text=True).stdout


def test_no_linker_names_all_three_options(no_rocm, monkeypatch, tmp_path):
    monkeypatch.setattr(shutil, "which", lambda name: None)
    monkeypatch.setattr(importlib.util, "find_spec", lambda name: None)
    with pytest.raises(toolchain.ToolchainError) as error:
        toolchain.find_linker(tmp_path / "shim")
    message = str(error.value)
    assert "ROCm" in message and "lld on PATH" in message and "ziglang" in message
