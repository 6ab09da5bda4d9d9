#!/usr/bin/env bash
# Tools for `flakeid serve` (issue 15): protoc (scripts/setup-protoc.sh) to build
# the gRPC service from proto/flakeid.proto, curl for the h2c test; with --bench also
# wrk and a virtualenv with pysnowflake 0.1.3 (make bench-serve). Idempotent,
# non-interactive; installs only, starts nothing.
set -euo pipefail
need=()
command -v curl >/dev/null 2>&1 || need+=(curl)
if [ "${1:-}" = --bench ]; then
  command -v wrk >/dev/null 2>&1 || need+=(wrk)
  python3 -m venv --help >/dev/null 2>&1 || need+=(python3-venv)
fi
bash "$(dirname "$0")/apt-install.sh" setup-serve "${need[@]}"
if [ "${1:-}" = --bench ]; then
  venv=${FLAKEID_BENCH_VENV:-target/bench-serve-venv}
  if [ ! -x "$venv/bin/snowflake_start_server" ]; then
    python3 -m venv "$venv"
    "$venv/bin/pip" install -q 'pysnowflake==0.1.3'
  fi
fi
