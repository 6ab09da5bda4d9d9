# WebAssembly package @flakeid/wasm: bindings/wasm (wasm-bindgen crate flakeid-wasm).
#   make wasm-build   bindings/wasm/build.sh: pkg/node (nodejs) + pkg/web (web) + pkg/package.json,
#                     wasm-opt'd; prints the .wasm's raw and gzip sizes
#   make test-wasm-node     build, the Node package's suite on the wasm build (node/test,
#                           FLAKEID_BACKEND=wasm) and the wasm-only tests (bindings/wasm/test)
#   make test-wasm-browser  the headless-Chromium test (bindings/wasm/browser-test; make ci)
#   make test-wasm          both
#   make bench-wasm   nextId() per call beside seed 002's JS BigInt algorithm and nodejs-snowflake
WASM_DIR := bindings/wasm
WASM_TARGET_DIR := $(CURDIR)/target/wasm-build
# Node 20 has WebSocket (for the DevTools protocol) only behind a flag; later Nodes by default.
WASM_WS_FLAG = $(shell node -e "process.stdout.write(typeof WebSocket === 'function' ? '' : '--experimental-websocket')")


.PHONY: setup-wasm setup-browser wasm wasm-build test-wasm test-wasm-node test-wasm-browser bench-wasm

# `make wasm`: the README's name for the build.
wasm: wasm-build

setup-wasm: setup-rust
	bash scripts/setup-wasm.sh

setup-browser:
	bash scripts/setup-wasm.sh browser

wasm-build: setup-wasm
	FLAKEID_WASM_TARGET_DIR=$(WASM_TARGET_DIR) bash $(WASM_DIR)/build.sh

# setup-node (node.mk) installs node/'s npm dependencies, which node/test loads.
test-wasm-node: wasm-build setup-node
	cd node && FLAKEID_BACKEND=wasm node --test test/*.test.mjs
	cd $(WASM_DIR) && node --test test/*.test.mjs

test-wasm-browser: wasm-build setup-browser
	cd $(WASM_DIR) && node $(WASM_WS_FLAG) --test browser-test/*.test.mjs

test-wasm: test-wasm-node test-wasm-browser

bench-wasm: wasm-build
	cd $(WASM_DIR) && node bench/next-id.mjs
