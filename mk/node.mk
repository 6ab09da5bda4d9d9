# Node package: node/ (@flakeid/node) over the napi-rs crate bindings/node.
#   make test-node        build the addon (npm install), check the committed generated
#                         index.js / index.d.ts are fresh, then the JS suite
#                         (node --test) on the native backend
#   make test-node-wasm   the same JS suite on the wasm build (FLAKEID_BACKEND=wasm; needs
#                         bindings/wasm/pkg/node from bindings/wasm/build.sh, fails loudly without;
#                         make test-wasm-node builds it first)
#   make bench-node       node/bench/bench.mjs: one table beside flake-idgen, @sapphire/snowflake, uuid
NODE_TESTS := test/*.test.mjs


.PHONY: setup-node test-node test-node-wasm bench-node

# Builds the addon and regenerates node/index.js and node/index.d.ts.
setup-node:
	bash scripts/setup-node.sh

test-node: setup-node
	@git diff --quiet -- node/index.js node/index.d.ts || { git --no-pager diff --stat -- node/index.js node/index.d.ts; \
	  echo "node/index.js or node/index.d.ts changed when rebuilt: commit the regenerated files" >&2; exit 1; }
	cd node && node --test $(NODE_TESTS)

test-node-wasm:
	cd node && FLAKEID_BACKEND=wasm node --test $(NODE_TESTS)

bench-node: setup-node
	cd node && node bench/bench.mjs
