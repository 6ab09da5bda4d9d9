#!/usr/bin/env bash
# The Rust toolchains `make lint` proves the published crates' rust-version with
# (`cargo +<msrv> check`): each manifest's rust-version, read from Cargo.toml files
# so that there is one place to change it. Minimal profile; a no-op when present.
set -euo pipefail
cd "$(dirname "$0")/.."
for v in $(bash scripts/msrv.sh versions); do
  if ! rustup run "$v" rustc --version >/dev/null 2>&1; then
    echo "setup-msrv: installing Rust $v"
    rustup toolchain install "$v" --profile minimal
  fi
done
