#!/usr/bin/env bash
# Usage: scripts/release_env.sh VERSION [DIR]
#
# Creates (or reuses) a Python environment holding flydsl==VERSION, for the
# tests that compile on another FlyDSL release than the main venv's (the ISA
# proofs of safe fixes, verify's end-to-end cases). DIR defaults to
# .venvs/flydsl-VERSION under the repository (gitignored).
#
# Only flydsl itself is installed into it. torch, numpy, ziglang and pytest come
# from a base environment (BASE_PYTHON, default .venv/bin/python, which
# scripts/install_compile_toolchain.sh has equipped) through a .pth line. site
# appends .pth lines after the environment's own site-packages, so the env's
# flydsl shadows the base's. A private torch per release would cost ~95 s and
# 1.4 GB more per environment; this way one costs ~20 s and 300 MB.
# Idempotent: an environment that already imports flydsl VERSION is kept.
set -euo pipefail
cd "$(dirname "$0")/.."

if [[ $# -lt 1 || $# -gt 2 ]]; then
    echo "usage: scripts/release_env.sh VERSION [DIR]" >&2
    exit 2
fi
VERSION="$1"
DIR="${2:-.venvs/flydsl-$VERSION}"
BASE_PYTHON="${BASE_PYTHON:-$PWD/.venv/bin/python}"

if [[ ! -x "$BASE_PYTHON" ]]; then
    echo "release_env: base python $BASE_PYTHON not found; create .venv first (scripts/test.sh) or set BASE_PYTHON" >&2
    exit 2
fi
if ! "$BASE_PYTHON" -c "import torch, numpy, ziglang, pytest" 2>/dev/null; then
    echo "release_env: $BASE_PYTHON lacks torch/numpy/ziglang/pytest; run PYTHON=$BASE_PYTHON bash scripts/install_compile_toolchain.sh" >&2
    exit 2
fi

# The version flydsl reports when imported by the env's python, with the base
# visible: exactly what the tests will see.
imported_version() {
    "$DIR/bin/python" -c "import flydsl; print(flydsl.__version__)" 2>/dev/null || true
}

if [[ -x "$DIR/bin/python" && "$(imported_version)" == "$VERSION" ]]; then
    echo "release env ready: $DIR (flydsl $VERSION)"
    exit 0
fi

base_purelib="$("$BASE_PYTHON" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')"
# venv run from inside a venv builds on the same base interpreter, so the
# base's compiled packages (torch) fit the new environment.
"$BASE_PYTHON" -m venv "$DIR"
env_purelib="$("$DIR/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')"
# The wheel declares no dependencies; numpy comes from the base.
"$DIR/bin/python" -m pip install -q --disable-pip-version-check --no-deps "flydsl==$VERSION"
# "zz-" sorts last among .pth files; the line itself lands after site-packages.
echo "$base_purelib" > "$env_purelib/zz-flydsl-lint-base.pth"

got="$(imported_version)"
if [[ "$got" != "$VERSION" ]]; then
    echo "release_env: $DIR imports flydsl ${got:-(none)}, not $VERSION" >&2
    exit 2
fi
echo "release env ready: $DIR (flydsl $VERSION)"
