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
PYTHON="$VENV_PY" FLYDSL_VERSION=0.5.0 bash scripts/install_compile_toolchain.sh
# The other releases the tests compile on, one environment each (.venvs/,
# sharing torch with .venv): the oldest release each safe fix is offered for
# (the ISA proofs) and the oldest compile mode supports (verify's end-to-end
# cases); the newest, 0.5.0, is .venv's.
releases="$("$VENV_PY" -m tests.release_envs)"
for release in $releases; do
    BASE_PYTHON="$VENV_PY" bash scripts/release_env.sh "$release"
done
export FLYDSL_RELEASE_ENVS_REQUIRED=1  # a missing one fails its tests instead of skipping

# Generated rule docs must match rules.toml and the rule classes.
"$VENV_PY" -m flydsl_lint.docs --check
# pytest's exit 5 (no tests collected) fails this script like any other failure.
"$VENV_PY" -m pytest -q tests "$@"
