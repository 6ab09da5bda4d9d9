#!/usr/bin/env bash
# Runs the `flakeid serve` tests against real servers: tests/serve/serve_test.py,
# `flakeid serve` processes (debug build) on free 127.0.0.1 ports, and for the lease
# tests the Redis and PostgreSQL of the test environment (tests/env/testenv.py).
# (The abuse suite, tests/serve/abuse_test.py, is make test-serve-abuse's.)
# What it needs installed: make test-serve's prerequisites (setup-serve, setup-lease).
#   usage: tests/serve/run.sh [unittest args for serve_test.py, e.g. Routes]
set -euo pipefail
cd "$(dirname "$0")/../.."
CARGO=${CARGO:-cargo}
target=${CARGO_TARGET_DIR:-$PWD/target}
# make's package selection (Makefile, RUST_TEST_PKGS): one build of the dependencies.
$CARGO build -q ${FLAKEID_CARGO_PKGS:--p flakeid-cli}
export FLAKEID_SERVE_VENV=${FLAKEID_SERVE_VENV:-$PWD/target/serve-venv}  # make setup-serve (mk/serve.mk)
exec python3 tests/env/testenv.py run --redis --postgres -- \
  python3 tests/serve/serve_test.py "$target/debug/flakeid" "$@"
