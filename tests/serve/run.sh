#!/usr/bin/env bash
# Runs the `flakeid serve` tests (tests/serve/serve_test.py) against real servers:
# `flakeid serve` processes on free 127.0.0.1 ports, and for the lease tests the
# Redis and PostgreSQL of the test environment (tests/env/testenv.py). What it needs
# installed: make test-serve's prerequisites (setup-serve, setup-lease).
#   usage: tests/serve/run.sh [unittest args, e.g. Routes]
set -euo pipefail
cd "$(dirname "$0")/../.."
CARGO=${CARGO:-cargo}
# make's package selection (Makefile, RUST_TEST_PKGS): one build of the dependencies.
$CARGO build -q ${FLAKEID_CARGO_PKGS:--p flakeid-cli}
export FLAKEID_SERVE_VENV=${FLAKEID_SERVE_VENV:-$PWD/target/serve-venv}  # scripts/setup-serve.sh
exec python3 tests/env/testenv.py run --redis --postgres -- \
  python3 tests/serve/serve_test.py "${CARGO_TARGET_DIR:-$PWD/target}/debug/flakeid" "$@"
