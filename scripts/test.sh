#!/usr/bin/env bash
# Set up everything the tests need on a fresh machine, then run them all.
# Used as-is by .ci/run; the README's second command.
set -euo pipefail
cd "$(dirname "$0")/.."

python3 -m venv .venv
VENV_PY="$PWD/.venv/bin/python"
"$VENV_PY" -m pip install -q -e '.[test]'
# Compile-mode tooling for the verifier and the ISA proofs of safe fixes:
# flydsl, a CPU build of torch 2.13.0 and ziglang's ld.lld.
PYTHON="$VENV_PY" bash scripts/install_compile_toolchain.sh

# Generated rule docs must match rules.toml and the rule classes.
"$VENV_PY" -m flydsl_lint.docs --check
# pytest's exit 5 (no tests collected) fails this script like any other failure.
"$VENV_PY" -m pytest -q tests "$@"
