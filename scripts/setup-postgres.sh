#!/usr/bin/env bash
# Tools for the PostgreSQL extension: Debian's PostgreSQL 15 server and
# headers, libclang (pgrx's bindgen), sudo (`cargo pgrx test --runas postgres`),
# faketime (the failover test's slow clock), the Rust 1.96.0 toolchain pgrx 0.19
# needs, cargo-pgrx 0.19.3, and `cargo pgrx init` for Debian's pg_config. Idempotent and non-interactive: each step is skipped when
# already done. Installs only, starts nothing.
set -euo pipefail
PG_CONFIG=${PG_CONFIG:-/usr/lib/postgresql/15/bin/pg_config}
TOOLCHAIN=1.96.0
PGRX_VERSION=0.19.3

need=()
[ -x /usr/lib/postgresql/15/bin/initdb ] || need+=(postgresql-15)
command -v pgbench >/dev/null 2>&1 || need+=(postgresql-client-15)
[ -x "$PG_CONFIG" ] && [ -f "$("$PG_CONFIG" --includedir-server 2>/dev/null)/postgres.h" ] || need+=(postgresql-server-dev-15)
# bindgen needs libclang and clang's own headers: the -dev package, not just libclang1.
dpkg-query -W -f='${Status}' libclang-dev 2>/dev/null | grep -q 'install ok installed' || need+=(libclang-dev)
command -v sudo >/dev/null 2>&1 || need+=(sudo)
# tests/postgres/run.sh runs a promoted standby with its clock set back (libfaketime).
[ -f /usr/lib/x86_64-linux-gnu/faketime/libfaketime.so.1 ] || need+=(faketime)
bash "$(dirname "$0")/apt-install.sh" setup-postgres "${need[@]}"

if ! rustup run "$TOOLCHAIN" rustc --version >/dev/null 2>&1; then
  echo "setup-postgres: installing Rust $TOOLCHAIN"
  rustup toolchain install "$TOOLCHAIN" --profile minimal
fi
rustup component add rustfmt clippy --toolchain "$TOOLCHAIN" >/dev/null 2>&1

# --debug (as scripts/setup-wasm.sh does for wasm-bindgen-cli): cargo-pgrx only drives
# cargo and reads the built library's schema section, its own run time is small next
# to the builds it starts, and an unoptimised build of its 257 crates takes far less
# CPU time (193 CPU-s; CONTRIBUTING.md, Where the time goes).
if [ "$(cargo pgrx --version 2>/dev/null | awk '{print $2}')" != "$PGRX_VERSION" ]; then
  echo "setup-postgres: installing cargo-pgrx $PGRX_VERSION (2-3 minutes)"
  cargo "+$TOOLCHAIN" install cargo-pgrx --version "$PGRX_VERSION" --locked --debug
fi

pgrx_home=${PGRX_HOME:-$HOME/.pgrx}
if ! grep -q "^pg15 *= *\"$PG_CONFIG\"" "$pgrx_home/config.toml" 2>/dev/null; then
  echo "setup-postgres: cargo pgrx init --pg15 $PG_CONFIG"
  cargo "+$TOOLCHAIN" pgrx init --pg15 "$PG_CONFIG"
fi
