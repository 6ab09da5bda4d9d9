#!/usr/bin/env bash
# What `make test-fuzz` / `make fuzz` need: the nightly toolchain (on the image;
# installed through rustup if missing) and cargo-fuzz, pinned. Idempotent.
set -euo pipefail
CARGO_FUZZ_VERSION=0.13.2
if ! cargo +nightly --version >/dev/null 2>&1; then
  echo "setup-fuzz: installing the nightly toolchain"
  rustup toolchain install nightly --profile minimal
fi
if ! cargo fuzz --version 2>/dev/null | grep -q " $CARGO_FUZZ_VERSION"; then
  echo "setup-fuzz: installing cargo-fuzz $CARGO_FUZZ_VERSION"
  cargo install cargo-fuzz --version "$CARGO_FUZZ_VERSION" --locked
fi
