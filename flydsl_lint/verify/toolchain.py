"""Finding an ld.lld (and ROCm's device bitcode) for FlyDSL's AMDGPU link step, handed over via ROCM_PATH."""

from __future__ import annotations

import importlib.util
import os
import shutil
import sys
from dataclasses import dataclass
from pathlib import Path


class ToolchainError(RuntimeError):
    """No usable linker: a setup error (exit code 2)."""


NO_LINKER_MESSAGE = (
    "no ld.lld found for linking AMDGPU code objects; install one of: "
    "ROCm (ROCM_PATH or /opt/rocm with llvm/bin/ld.lld), "
    "a system lld on PATH (e.g. apt-get install lld), "
    "or PyPI ziglang (pip install ziglang, used as `python -m ziglang ld.lld`)"
)


@dataclass(frozen=True)
class Linker:
    description: str
    rocm_path: Path  # a directory holding llvm/bin/ld.lld, as FlyDSL expects


# Where distributions put ROCm's device libraries (ocml.bc, ockl.bc) without a
# ROCm install: Debian's and Ubuntu's rocm-device-libs, Fedora's.
_SYSTEM_BITCODE_GLOBS = ("/usr/lib/*/amdgcn/bitcode", "/usr/lib/amdgcn/bitcode", "/usr/lib64/amdgcn/bitcode")


def _system_bitcode() -> Path | None:
    for pattern in _SYSTEM_BITCODE_GLOBS:
        for folder in sorted(Path("/").glob(pattern.lstrip("/"))):
            if (folder / "ocml.bc").is_file():
                return folder
    return None


def _rocm_install() -> Path | None:
    for root in (os.environ.get("ROCM_PATH"), "/opt/rocm"):
        if root and (Path(root) / "llvm" / "bin" / "ld.lld").is_file():
            return Path(root)
    return None


def _write_shim(shim_root: Path, description: str, command: list[str]) -> Linker:
    """Lay out shim_root as a ROCM_PATH: llvm/bin/ld.lld execs ``command``, and
    amdgcn/bitcode is the system's device bitcode when there is one (kernels
    that call OCML, such as exp2 in a softmax, link it)."""
    target = shim_root / "llvm" / "bin" / "ld.lld"
    target.parent.mkdir(parents=True, exist_ok=True)
    quoted = " ".join(f"'{part}'" for part in command)
    target.write_text(f'#!/bin/sh\nexec {quoted} "$@"\n', encoding="utf-8")
    target.chmod(0o755)
    bitcode = _system_bitcode()
    if bitcode is None:
        return Linker(f"{description}, no device bitcode (kernels calling OCML do not link)", shim_root)
    (shim_root / "amdgcn").mkdir(exist_ok=True)
    (shim_root / "amdgcn" / "bitcode").symlink_to(bitcode, target_is_directory=True)
    return Linker(f"{description}, device bitcode from {bitcode}", shim_root)


def find_linker(shim_root: Path) -> Linker:
    """ROCm's ld.lld first, then one on PATH, then ziglang's; shim_root hosts wrappers."""
    rocm = _rocm_install()
    if rocm is not None:
        return Linker(f"ROCm ld.lld ({rocm})", rocm)
    on_path = shutil.which("ld.lld")
    if on_path:
        return _write_shim(shim_root, f"ld.lld on PATH ({on_path})", [on_path])
    if importlib.util.find_spec("ziglang") is not None:
        return _write_shim(shim_root, "ziglang ld.lld", [sys.executable, "-m", "ziglang", "ld.lld"])
    raise ToolchainError(NO_LINKER_MESSAGE)
