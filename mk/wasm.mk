# WebAssembly package @flakeid/wasm: bindings/wasm (wasm-bindgen crate flakeid-wasm),
# built by bindings/wasm/build.sh (pkg/node, pkg/web and pkg/package.json, wasm-opt'd;
# it prints the .wasm's raw and gzip sizes). Its tests: the Node package's suite on
# the wasm build, the wasm-only tests (bindings/wasm/test) and the headless-Chromium
# test (bindings/wasm/browser-test).
WASM_DIR := bindings/wasm
WASM_TARGET_DIR := $(TARGET)/wasm-build
# Node 20 has WebSocket (for the DevTools protocol) only behind a flag; later Nodes by default.
WASM_WS_FLAG = $(shell node -e "process.stdout.write(typeof WebSocket === 'function' ? '' : '--experimental-websocket')")


.PHONY: setup-wasm setup-browser wasm test-wasm test-wasm-node test-wasm-browser bench-wasm

##@ WebAssembly: bindings/wasm (@flakeid/wasm)
# The wasm32 target (setup-rust), wasm-bindgen-cli at the version Cargo.toml pins
# (`wasm-bindgen = "=…"`), skipped when `wasm-bindgen --version` matches, and npm's
# binaryen (wasm-opt; Debian's binaryen 108 emits broken output) with the bench's
# comparison, in bindings/wasm/node_modules. wasm-bindgen-cli: no --locked (a
# dependency of the locked set is missing from the registry mirror); --debug:
# unoptimised, it compiles in less than half the CPU time (a cold bootstrap's cost)
# and writes the same files (bindings/wasm/build.sh's two runs, byte for byte)
# (docs/development.md, "Where the time goes"); without debug info and with the one
# binary the build runs (not the test runner's), a fifth less again
# (docs/development.md, "make test on a fresh machine").
WASM_BINDGEN_VERSION = $(shell sed -n 's/^wasm-bindgen = "=\([0-9.]*\)".*/\1/p' Cargo.toml)
setup-wasm: setup-rust ## wasm-bindgen-cli (pinned), npm's wasm-opt
	@[ -n "$(WASM_BINDGEN_VERSION)" ] || { echo "setup-wasm: no wasm-bindgen pin in Cargo.toml" >&2; exit 1; }
	@have=$$(wasm-bindgen --version 2>/dev/null | awk '{print $$2}' || true); [ "$$have" = $(WASM_BINDGEN_VERSION) ] \
	  || { echo "setup-wasm: installing wasm-bindgen-cli $(WASM_BINDGEN_VERSION) (found: $${have:-none}; about a minute)"; \
	    CARGO_PROFILE_DEV_DEBUG=false cargo install wasm-bindgen-cli --version $(WASM_BINDGEN_VERSION) --debug \
	      --bin wasm-bindgen; }
	@[ -x $(WASM_DIR)/node_modules/.bin/wasm-opt ] && [ -d $(WASM_DIR)/node_modules/nodejs-snowflake ] \
	  || { echo "setup-wasm: npm install in $(WASM_DIR)"; cd $(WASM_DIR) && npm install --no-audit --no-fund; }

# The browser test drives Debian's Chromium headless.
setup-browser: ## Debian's Chromium, for the headless browser test
	@$(APT_INSTALL) setup-browser $(call need-file,/usr/bin/chromium,chromium)

wasm: setup-wasm ## the wasm package: bindings/wasm/pkg (node and web builds), wasm-opt'd
	FLAKEID_WASM_TARGET_DIR=$(WASM_TARGET_DIR) bash $(WASM_DIR)/build.sh

# setup-node (node.mk) installs node/'s npm dependencies, which node/test loads. make
# test builds the package in the background (wasm>test-wasm-node), and BUILT names it.
test-wasm-node: $(if $(filter wasm,$(BUILT)),,wasm) setup-node ## build, the Node package's JS suite on it, the wasm-only tests
	$(NODE_WASM_TEST)
	cd $(WASM_DIR) && node --test test/*.test.mjs

test-wasm-browser: wasm setup-browser ## the headless-Chromium test
	cd $(WASM_DIR) && node $(WASM_WS_FLAG) --test browser-test/*.test.mjs

test-wasm: test-wasm-node test-wasm-browser ## both

bench-wasm: wasm ## nextId() per call beside a JS BigInt version and nodejs-snowflake
	cd $(WASM_DIR) && node bench/next-id.mjs
