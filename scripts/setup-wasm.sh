#!/usr/bin/env bash
# Installs what the WebAssembly package needs; a no-op when all is present.
#   scripts/setup-wasm.sh            toolchain and npm tools (make setup-wasm: the build and the Node tests)
#   scripts/setup-wasm.sh toolchain  only the wasm32 target and wasm-bindgen-cli (the build needs no more)
#   scripts/setup-wasm.sh browser    only Debian's Chromium (make setup-browser: the browser test, make ci)
set -euo pipefail
cd "$(dirname "$0")/.."

# The browser test drives Debian's Chromium headless.
if [ "${1:-}" = browser ]; then
  [ -x /usr/bin/chromium ] || bash scripts/apt-install.sh setup-wasm chromium
  exit 0
fi

# Must equal the `wasm-bindgen = "=…"` pin in the root Cargo.toml.
WASM_BINDGEN_VERSION=$(sed -n 's/^wasm-bindgen = "=\([0-9.]*\)".*/\1/p' Cargo.toml)
[ -n "$WASM_BINDGEN_VERSION" ] || { echo "setup-wasm: no wasm-bindgen pin in Cargo.toml" >&2; exit 1; }

if ! rustup target list --installed | grep -qx wasm32-unknown-unknown; then
  echo "setup-wasm: adding the wasm32-unknown-unknown target"
  rustup target add wasm32-unknown-unknown
fi

have=$(wasm-bindgen --version 2>/dev/null | awk '{print $2}' || true)
if [ "$have" != "$WASM_BINDGEN_VERSION" ]; then
  echo "setup-wasm: installing wasm-bindgen-cli $WASM_BINDGEN_VERSION (found: ${have:-none}; about a minute)"
  # No --locked: a dependency of the locked set is missing from the registry mirror.
  # --debug: unoptimised, it compiles in 121 CPU-s instead of 273 (a cold bootstrap's
  # cost) and writes the same files (bindings/wasm/build.sh's two runs, byte for
  # byte), in 0.3 CPU-s instead of 0.05 (CONTRIBUTING.md, "Where the time goes").
  cargo install wasm-bindgen-cli --version "$WASM_BINDGEN_VERSION" --debug
fi

[ "${1:-all}" = toolchain ] && exit 0

# wasm-opt (npm binaryen; Debian's binaryen 108 emits broken output) and the bench's comparison.
if [ ! -x bindings/wasm/node_modules/.bin/wasm-opt ] || [ ! -d bindings/wasm/node_modules/nodejs-snowflake ]; then
  echo "setup-wasm: npm install in bindings/wasm"
  (cd bindings/wasm && npm install --no-audit --no-fund)
fi
