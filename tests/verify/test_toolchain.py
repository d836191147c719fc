import importlib.util
import shutil
import subprocess

import pytest

from flydsl_lint.verify import toolchain


@pytest.fixture
def no_rocm(monkeypatch, tmp_path):
    monkeypatch.setenv("ROCM_PATH", str(tmp_path / "no-rocm"))
    monkeypatch.setattr(toolchain, "_rocm_install", lambda: None)


def test_system_device_bitcode_is_handed_over(no_rocm, monkeypatch, tmp_path):
    bitcode = tmp_path / "usr" / "lib" / "x86_64-linux-gnu" / "amdgcn" / "bitcode"
    bitcode.mkdir(parents=True)
    (bitcode / "ocml.bc").write_bytes(b"BC")
    monkeypatch.setattr(toolchain, "_SYSTEM_BITCODE_GLOBS", (f"{tmp_path}/usr/lib/*/amdgcn/bitcode",))
    monkeypatch.setattr(shutil, "which", lambda name: "/usr/bin/true")
    linker = toolchain.find_linker(tmp_path / "shim")
    assert (linker.rocm_path / "amdgcn" / "bitcode" / "ocml.bc").read_bytes() == b"BC"
    assert linker.description == f"ld.lld on PATH (/usr/bin/true), device bitcode from {bitcode}"


def test_no_device_bitcode_is_said(no_rocm, monkeypatch, tmp_path):
    monkeypatch.setattr(toolchain, "_SYSTEM_BITCODE_GLOBS", (f"{tmp_path}/nothing/amdgcn/bitcode",))
    monkeypatch.setattr(shutil, "which", lambda name: "/usr/bin/true")
    linker = toolchain.find_linker(tmp_path / "shim")
    assert not (linker.rocm_path / "amdgcn").exists()
    assert linker.description.endswith("no device bitcode (kernels calling OCML do not link)")


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
    assert linker.description.startswith("ziglang ld.lld")
    wrapper = linker.rocm_path / "llvm" / "bin" / "ld.lld"
    assert "LLD" in subprocess.run([str(wrapper), "--version"], capture_output=True, text=True).stdout


def test_no_linker_names_all_three_options(no_rocm, monkeypatch, tmp_path):
    monkeypatch.setattr(shutil, "which", lambda name: None)
    monkeypatch.setattr(importlib.util, "find_spec", lambda name: None)
    with pytest.raises(toolchain.ToolchainError) as error:
        toolchain.find_linker(tmp_path / "shim")
    message = str(error.value)
    assert "ROCm" in message and "lld on PATH" in message and "ziglang" in message
