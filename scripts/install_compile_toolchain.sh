#!/usr/bin/env bash
# Installs what `flydsl-lint-verify` compile mode and tests/verify need:
#   - torch 2.13.0, CPU build only (kernels' tests import torch; no GPU is used)
#   - flydsl, only when none is installed (the newest release, 0.5.0), or the
#     release asked for with FLYDSL_VERSION=0.3.1 / --flydsl-version 0.3.1;
#     an installed flydsl is never replaced unless asked
#   - numpy, which the flydsl wheel imports without declaring it, and what
#     FlyDSL's own kernel tests import besides torch and flydsl: pandas
#     (tests/test_common.py, which most of them import) and pytest, which runs them.
#     Tests needing GPU-only stacks (aiter, mori, triton) are reported as
#     "not verified" by flydsl-lint-verify instead.
#   - ziglang, whose bundled ld.lld links the code objects when neither ROCm's
#     nor a system ld.lld is available
# Idempotent: each package is installed only when missing (or not the asked-for version).
set -euo pipefail

PYTHON="${PYTHON:-python}"
TORCH_VERSION="2.13.0"
# Compile mode supports flydsl 0.3.0-0.5.0 (flydsl_lint/verify/capture.py
# HOOK_SHAPES; dump layout checked on each). The default for a machine without
# flydsl is the newest; bump deliberately.
DEFAULT_FLYDSL_VERSION="0.5.0"
FLYDSL_VERSION="${FLYDSL_VERSION:-}"
if [[ "${1:-}" == "--flydsl-version" && -n "${2:-}" ]]; then
    FLYDSL_VERSION="$2"
elif [[ $# -gt 0 ]]; then
    echo "usage: [PYTHON=python] [FLYDSL_VERSION=X] install_compile_toolchain.sh [--flydsl-version X]" >&2
    exit 2
fi
ZIGLANG_SPEC="ziglang>=0.11"
# Optional extra index holding CPU torch wheels (e.g. https://download.pytorch.org/whl/cpu)
# for machines without a local torch-2.13.0+cpu wheel in pip's find-links.
TORCH_CPU_INDEX="${TORCH_CPU_INDEX:-}"

installed_version() {
    "$PYTHON" -c "import importlib.metadata as m, sys
try: print(m.version(sys.argv[1]))
except m.PackageNotFoundError: pass" "$1"
}

torch_now="$(installed_version torch)"
if [[ "$torch_now" != "$TORCH_VERSION" && "$torch_now" != "$TORCH_VERSION+cpu" ]]; then
    # Pinning the "+cpu" local version makes a CUDA build unresolvable: plain
    # PyPI only publishes CUDA builds for Linux under the bare version.
    index_args=()
    if [[ -n "$TORCH_CPU_INDEX" ]]; then index_args=(--extra-index-url "$TORCH_CPU_INDEX"); fi
    if ! "$PYTHON" -m pip install "torch==${TORCH_VERSION}+cpu" "${index_args[@]}"; then
        echo "install_compile_toolchain: no torch ${TORCH_VERSION}+cpu wheel found;" \
             "put one in pip's find-links or set TORCH_CPU_INDEX=https://download.pytorch.org/whl/cpu" >&2
        exit 2
    fi
fi
if ! "$PYTHON" -c "import torch, sys; sys.exit(0 if torch.version.cuda is None else 1)"; then
    echo "install_compile_toolchain: a CUDA build of torch is installed; replace it with the CPU build" >&2
    exit 2
fi

flydsl_now="$(installed_version flydsl)"
if [[ -n "$FLYDSL_VERSION" && "$flydsl_now" != "$FLYDSL_VERSION" ]]; then
    "$PYTHON" -m pip install "flydsl==${FLYDSL_VERSION}"
elif [[ -z "$flydsl_now" ]]; then
    "$PYTHON" -m pip install "flydsl==${DEFAULT_FLYDSL_VERSION}"
fi

# The flydsl wheel declares no dependencies but imports numpy (flydsl.expr.numeric);
# FlyDSL's tests import pandas and run under pytest. Only missing ones are
# installed, by name alone, so pip never touches an installed flydsl or torch.
missing=()
for package in numpy pandas pytest; do
    if [[ -z "$(installed_version "$package")" ]]; then missing+=("$package"); fi
done
if [[ ${#missing[@]} -gt 0 ]]; then
    "$PYTHON" -m pip install "${missing[@]}"
fi

if [[ -z "$(installed_version ziglang)" ]]; then
    "$PYTHON" -m pip install "$ZIGLANG_SPEC"
fi

"$PYTHON" - <<'PY'
import flydsl, torch
print(f"compile toolchain ready: flydsl {flydsl.__version__}, torch {torch.__version__}")
PY
