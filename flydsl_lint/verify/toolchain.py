"""Finding an ld.lld for FlyDSL's AMDGPU link step and handing it over via ROCM_PATH."""

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


def _rocm_install() -> Path | None:
    for root in (os.environ.get("ROCM_PATH"), "/opt/rocm"):
        if root and (Path(root) / "llvm" / "bin" / "ld.lld").is_file():
            return Path(root)
    return None


def _write_wrapper(shim_root: Path, command: list[str]) -> Path:
    """Lay out shim_root/llvm/bin/ld.lld as a script that execs ``command``."""
    target = shim_root / "llvm" / "bin" / "ld.lld"
    target.parent.mkdir(parents=True, exist_ok=True)
    quoted = " ".join(f"'{part}'" for part in command)
    target.write_text(f'#!/bin/sh\nexec {quoted} "$@"\n', encoding="utf-8")
    target.chmod(0o755)
    return shim_root


def find_linker(shim_root: Path) -> Linker:
    """ROCm's ld.lld first, then one on PATH, then ziglang's; shim_root hosts wrappers."""
    rocm = _rocm_install()
    if rocm is not None:
        return Linker(f"ROCm ld.lld ({rocm})", rocm)
    on_path = shutil.which("ld.lld")
    if on_path:
        return Linker(f"ld.lld on PATH ({on_path})", _write_wrapper(shim_root, [on_path]))
    if importlib.util.find_spec("ziglang") is not None:
        return Linker("ziglang ld.lld", _write_wrapper(shim_root, [sys.executable, "-m", "ziglang", "ld.lld"]))
    raise ToolchainError(NO_LINKER_MESSAGE)
