# Node package: node/ (@flakeid/node) over the napi-rs crate bindings/node. Its JS
# suite (node --test) runs on the native addon (test-node) and on the wasm build
# (FLAKEID_BACKEND=wasm: test-node-wasm needs bindings/wasm/pkg/node and fails loudly
# without; test-wasm-node builds it first). The bench: node/bench/bench.mjs.
NODE_TESTS := test/*.test.mjs
# The JS suite on the wasm build (test-node-wasm, test-wasm-node).
NODE_WASM_TEST = cd node && FLAKEID_BACKEND=wasm node --test $(NODE_TESTS)


.PHONY: setup-node setup-eslint lint-js test-node test-node-wasm bench-node

##@ Node: node/ (@flakeid/node), napi-rs
# Node.js >= 18 with npm (Debian's when missing), then the package's own install:
# it builds the addon with a pinned @napi-rs/cli via npx, regenerates node/index.js
# and node/index.d.ts, and installs the bench/test devDependencies from
# node/package-lock.json. `npm install`, not `npm ci`: the lockfile cannot list other
# platforms' optional packages when the registry in use lacks them, and `npm ci` then
# fails. It runs again only when one of its inputs (NODE_SRC, the generated files
# among them) is newer than its stamp: napi's CLI forces its first build in a fresh
# target directory (NAPI_FORCE_BUILD_FLAKEID_NODE), so the next run rebuilt the addon
# whatever changed, a second link of the addon in a cold run.
NODE_MAJOR = $$(node -p 'process.versions.node.split(".")[0]' 2>/dev/null || echo 0)
# In node_modules, like mk/faults.mk's venv stamp: gone with it. It holds the dist
# profile's settings the addon was built with (make test's differ: the Makefile's
# TIER), so that a make ci after a make test builds the shipped addon again.
NODE_STAMP := node/node_modules/.flakeid-installed
NODE_BUILD := lto=$(CARGO_PROFILE_DIST_LTO) codegen-units=$(CARGO_PROFILE_DIST_CODEGEN_UNITS)
NODE_SRC := $(shell git ls-files bindings/node crates/flakeid-core crates/flakeid-js crates/flakeid-lease-net \
  crates/flakeid-seal 2>/dev/null) node/package.json node/package-lock.json node/index.js node/index.d.ts \
  Cargo.toml Cargo.lock
setup-node: ## Node.js >= 18 and npm; npm install in node/ (builds the addon) when its inputs changed
	@command -v npm >/dev/null 2>&1 && [ $(NODE_MAJOR) -ge 18 ] || $(APT_INSTALL) setup-node nodejs npm
	@[ $(NODE_MAJOR) -ge 18 ] || { echo "setup-node: Node.js >= 18 is required, got $$(node --version)" >&2; exit 1; }
	@[ -f $(NODE_STAMP) ] && [ "$$(cat $(NODE_STAMP))" = "$(NODE_BUILD)" ] \
	  && [ -z "$$(find $(NODE_SRC) -newer $(NODE_STAMP) 2>/dev/null | head -n 1)" ] \
	  || { echo "cd node && npm install --no-audit --no-fund"; (cd node && npm install --no-audit --no-fund) \
	    && echo "$(NODE_BUILD)" >$(NODE_STAMP); }

# eslint, pinned in scripts/lint-js/package-lock.json (with its recommended rules and the
# globals package), installed there by `npm ci` when its lock file is newer than its
# install (not in node/: make lint builds no addon). Its settings: eslint.config.mjs there.
LINT_JS := scripts/lint-js
setup-eslint: ## eslint (pinned, npm) in scripts/lint-js
	@command -v npm >/dev/null 2>&1 && [ $(NODE_MAJOR) -ge 18 ] || $(APT_INSTALL) setup-eslint nodejs npm
	@[ -x $(LINT_JS)/node_modules/.bin/eslint ] \
	  && [ -z "$$(find $(LINT_JS)/package.json $(LINT_JS)/package-lock.json -newer $(LINT_JS)/node_modules/.package-lock.json 2>/dev/null)" ] \
	  || { echo "cd $(LINT_JS) && npm ci --no-audit --no-fund"; cd $(LINT_JS) && npm ci --no-audit --no-fund; }

# The files git tracks (eslint reads no .gitignore: python/.venv holds Django's JS).
lint-js: setup-eslint ## eslint (its recommended rules) over the repository's JS
	$(LINT_JS)/node_modules/.bin/eslint --config $(LINT_JS)/eslint.config.mjs --no-warn-ignored \
	  $$(git ls-files '*.js' '*.mjs' '*.cjs')

# The ORMs and pg are node/'s devDependencies (pinned in package-lock.json, installed
# by setup-node); they run on the fixture's PostgreSQL (setup-postgres-fixture).
test-node: setup-node setup-postgres-fixture ## [TIER=test: no frameworks] the addon built, its generated index.js/.d.ts fresh, the JS suite (native); Drizzle, Kysely, pg
	@git diff --quiet -- node/index.js node/index.d.ts || { git --no-pager diff --stat -- node/index.js node/index.d.ts; \
	  echo "node/index.js or node/index.d.ts changed when rebuilt: commit the regenerated files" >&2; exit 1; }
	bash scripts/suite.sh node $(if $(TIER_CI),--frameworks)

test-node-wasm: ## the JS suite on the wasm build as it is (make test-wasm-node builds it first)
	$(NODE_WASM_TEST)

bench-node: setup-node ## beside flake-idgen, @sapphire/snowflake, uuid
	cd node && node bench/bench.mjs
