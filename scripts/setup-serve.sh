#!/usr/bin/env bash
# Tools for `flakeid serve` (issue 15): protoc (Debian's protobuf-compiler) to build
# the gRPC service from proto/flakeid.proto, curl for the h2c test; with --bench also
# wrk and a virtualenv with pysnowflake 0.1.3 (make bench-serve). Idempotent,
# non-interactive; installs only, starts nothing.
set -euo pipefail
need=()
command -v protoc >/dev/null 2>&1 || need+=(protobuf-compiler)
# etcd-client (the etcd lease store, in every binding) compiles etcd's protos, which
# import the well-known types.
[ -f /usr/include/google/protobuf/descriptor.proto ] || need+=(libprotobuf-dev)
command -v curl >/dev/null 2>&1 || need+=(curl)
if [ "${1:-}" = --bench ]; then
  command -v wrk >/dev/null 2>&1 || need+=(wrk)
  python3 -m venv --help >/dev/null 2>&1 || need+=(python3-venv)
fi
if [ ${#need[@]} -gt 0 ]; then
  if [ "$(id -u)" != 0 ] || ! command -v apt-get >/dev/null 2>&1; then
    echo "setup-serve: cannot install ${need[*]} (not root or no apt-get)" >&2
    exit 1
  fi
  echo "setup-serve: installing ${need[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
fi
if [ "${1:-}" = --bench ]; then
  venv=${FLAKEID_BENCH_VENV:-target/bench-serve-venv}
  if [ ! -x "$venv/bin/snowflake_start_server" ]; then
    python3 -m venv "$venv"
    "$venv/bin/pip" install -q 'pysnowflake==0.1.3'
  fi
fi
