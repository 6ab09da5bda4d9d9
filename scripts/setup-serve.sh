#!/usr/bin/env bash
# Tools for `flakeid serve`: curl for the h2c test and a virtualenv with
# schemathesis (PyPI, pinned) for the OpenAPI check; with --bench also wrk and a
# virtualenv with pysnowflake 0.1.3 (make bench-serve). Idempotent,
# non-interactive; installs only, starts nothing.
set -euo pipefail
need=()
command -v curl >/dev/null 2>&1 || need+=(curl)
python3 -m venv --help >/dev/null 2>&1 || need+=(python3-venv)
if [ "${1:-}" = --bench ]; then
  command -v wrk >/dev/null 2>&1 || need+=(wrk)
  command -v openssl >/dev/null 2>&1 || need+=(openssl)  # the TLS run's certificate
fi
bash "$(dirname "$0")/apt-install.sh" setup-serve "${need[@]}"
# tests/serve/serve_test.py (OpenApi) runs this venv's schemathesis.
SCHEMATHESIS=4.32.5
tvenv=${FLAKEID_SERVE_VENV:-target/serve-venv}
if [ "$("$tvenv/bin/schemathesis" --version 2>/dev/null)" != "schemathesis, version $SCHEMATHESIS" ]; then
  python3 -m venv "$tvenv"
  "$tvenv/bin/pip" install -q "schemathesis==$SCHEMATHESIS"
fi
if [ "${1:-}" = --bench ]; then
  venv=${FLAKEID_BENCH_VENV:-target/bench-serve-venv}
  if [ ! -x "$venv/bin/snowflake_start_server" ]; then
    python3 -m venv "$venv"
    "$venv/bin/pip" install -q 'pysnowflake==0.1.3'
  fi
fi
