#!/usr/bin/env bash
# Builds the @flakeid/wasm package into bindings/wasm/pkg/ (not committed):
#   pkg/node/  wasm-bindgen --target nodejs (CommonJS, synchronous load)
#   pkg/web/   wasm-bindgen --target web (ES module; `await init()` first) for
#              browsers, Deno, Bun and edge workers
#   pkg/package.json naming @flakeid/wasm, with conditional exports and types.
# The .wasm is optimized with wasm-opt from the npm package binaryen. The wasm32 target
# and wasm-bindgen-cli: make setup-wasm (a prerequisite).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
cd "$root"

[ -x "$here/node_modules/.bin/wasm-opt" ] || (cd "$here" && npm install --no-audit --no-fund)

# A target dir of its own, so the wasm build neither waits on nor invalidates host builds.
export CARGO_TARGET_DIR="${FLAKEID_WASM_TARGET_DIR:-$(realpath -m "${CARGO_TARGET_DIR:-$root/target}")/wasm-build}"
# Release with fat LTO and one codegen unit (the shipped settings; Cargo.toml's
# [profile.release] is left at Cargo's defaults for quick first builds of the CLI).
# Sealing (aes, fpe, flakeid-seal) optimized for size: at -O3 LLVM unrolls the
# three software AES key schedules (wasm has no AES instructions) into 20 KB of
# `Sealer`'s code; "s" keeps the .wasm 24 KB smaller, and a seal stays in the
# microseconds (bindings/wasm/test/package.test.mjs has the numbers). The ID engine
# keeps -O3.
size_opt=()
for crate in aes fpe flakeid-seal; do
  size_opt+=(--config "profile.release.package.$crate.opt-level=\"s\"")
done
CARGO_PROFILE_RELEASE_LTO=fat CARGO_PROFILE_RELEASE_CODEGEN_UNITS=1 \
  cargo build --release --target wasm32-unknown-unknown -p flakeid-wasm "${size_opt[@]}"
wasm="$CARGO_TARGET_DIR/wasm32-unknown-unknown/release/flakeid_wasm.wasm"

pkg="$here/pkg"
# Nothing to do when the package was made from these very inputs (the .wasm, this
# script, the README, the version and the tools): a warm `make test` then skips
# wasm-bindgen and wasm-opt -O3, about 10 s each time the package is needed.
version=$(sed -n '/^\[workspace.package\]/,/^\[/s/^version = "\(.*\)"/\1/p' Cargo.toml)
stamp="$CARGO_TARGET_DIR/flakeid-wasm-pkg.inputs"
inputs=$( { sha256sum "$wasm" "$here/build.sh" "$here/README.md" "$root/LICENSE-MIT" "$root/LICENSE-APACHE"
  echo "$version"; wasm-bindgen --version; "$here/node_modules/.bin/wasm-opt" --version; } | sha256sum)
if [ -f "$pkg/package.json" ] && [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$inputs" ]; then
  echo "@flakeid/wasm $version in $pkg is up to date"
  exit 0
fi
rm -f "$stamp"
rm -rf "$pkg"
# One .wasm for both builds: with the same --out-name the two targets write the same
# module byte for byte (its imports are named for the out-name), so the Node glue
# loads web/flakeid_bg.wasm and the package carries the module once (the tarball's
# budget, tests/dist/run.py, counts it once).
wasm-bindgen "$wasm" --target nodejs --out-dir "$pkg/node" --out-name flakeid
wasm-bindgen "$wasm" --target web --out-dir "$pkg/web" --out-name flakeid
cmp -s "$pkg/node/flakeid_bg.wasm" "$pkg/web/flakeid_bg.wasm" \
  || { echo "build.sh: wasm-bindgen wrote different modules for nodejs and web" >&2; exit 1; }
# shellcheck disable=SC2016 # the glue's JS template literal, not a shell expansion
load='${__dirname}/flakeid_bg.wasm'
[ "$(grep -cF "$load" "$pkg/node/flakeid.js")" = 1 ] \
  || { echo "build.sh: the Node glue's wasm path ($load) is not there once: wasm-bindgen changed" >&2; exit 1; }
sed "s|\${__dirname}/flakeid_bg.wasm|\${__dirname}/../web/flakeid_bg.wasm|" "$pkg/node/flakeid.js" > "$pkg/node/index.js"
mv "$pkg/node/flakeid.d.ts" "$pkg/node/index.d.ts"
rm "$pkg/node/flakeid.js" "$pkg/node/flakeid_bg.wasm" "$pkg/node/flakeid_bg.wasm.d.ts"

# The features rustc enables by default for wasm32 (multivalue: Result returns).
opt_features=(--enable-bulk-memory --enable-nontrapping-float-to-int --enable-sign-ext
  --enable-mutable-globals --enable-reference-types --enable-multivalue)
f="$pkg/web/flakeid_bg.wasm"
"$here/node_modules/.bin/wasm-opt" -O3 "${opt_features[@]}" --strip-debug --strip-producers "$f" -o "$f.opt"
mv "$f.opt" "$f"
echo '{ "type": "module" }' > "$pkg/web/package.json"
cp "$here/README.md" "$pkg/README.md"
cp "$root/LICENSE-MIT" "$root/LICENSE-APACHE" "$pkg/"

cat > "$pkg/package.json" <<JSON
{
  "name": "@flakeid/wasm",
  "version": "$version",
  "description": "k-ordered, collision-free, decodable 64-bit Snowflake-family IDs: the flakeid engine as WebAssembly (browsers, edge runtimes, Node)",
  "license": "MIT OR Apache-2.0",
  "homepage": "https://github.com/flakeid/flakeid/tree/main/bindings/wasm#readme",
  "repository": { "type": "git", "url": "git+https://github.com/flakeid/flakeid.git", "directory": "bindings/wasm" },
  "main": "./node/index.js",
  "types": "./node/index.d.ts",
  "exports": {
    ".": {
      "node": { "types": "./node/index.d.ts", "default": "./node/index.js" },
      "default": { "types": "./web/flakeid.d.ts", "default": "./web/flakeid.js" }
    },
    "./node": { "types": "./node/index.d.ts", "default": "./node/index.js" },
    "./web": { "types": "./web/flakeid.d.ts", "default": "./web/flakeid.js" },
    "./web/flakeid_bg.wasm": "./web/flakeid_bg.wasm"
  },
  "files": ["node", "web", "README.md", "LICENSE-MIT", "LICENSE-APACHE"],
  "sideEffects": false
}
JSON

raw=$(stat -c %s "$pkg/web/flakeid_bg.wasm")
gz=$(gzip -9 -c "$pkg/web/flakeid_bg.wasm" | wc -c)
echo "@flakeid/wasm $version built in $pkg: optimized .wasm $raw bytes raw, $gz bytes gzip -9"
# The 100 KB budget is checked by test/package.test.mjs.
echo "$inputs" > "$stamp"
