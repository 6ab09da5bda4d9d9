# Documentation that never lies: `make test-docs` runs every fenced code
# block of README.md, python/ and node/ READMEs, bindings/*/README.md, go/ and java/
# READMEs and docs/*.md (tests/docs/run.py; the rule for blocks that do not run is in
# CONTRIBUTING.md, "Docs: every code block runs"):
#   python  pytest (tests/docs/test_python_blocks.py) in python/.venv, against the
#           package `pip install ./python` installed there
#   js      node, with @flakeid/node = node/ (setup-node) and @flakeid/wasm =
#           bindings/wasm/pkg (make wasm)
#   sh      bash with $(TARGET)/debug/flakeid first on PATH, each in its own network namespace
#   c       cc against include/flakeid.h and libflakeid.so (make lib-c), with an rpath
#   rust    cargo test --doc, test-rust's packages (run.py checks that the file is
#           include_str!'d by a crate); in make test and make ci, test-rust's run of them
# and, in their own suites, from the blocks `tests/docs/blocks.py extract LANG DIR` writes:
#   sql     make test-postgres (tests/postgres/run.py docs), on a private cluster
#   go      make test-go (go/docblocks_test.go), go run
#   java    make test-java (DocBlocksTest), javac and java
# and checks that every artifact name a doc mentions is one make dist writes
# (tests/docs/artifacts.py; tests/dist/run.py holds the list against dist/), and that
# every binding's documentation of the generator's options is the core's table's
# (tests/docs/options.py), and that
# every relative link of a tracked Markdown file and every path cited in
# include/flakeid.h is a file of the repository (tests/docs/links.py), and that no
# Rust crate of the workspace has a module import circle (tests/docs/imports.py: grouped
# `use` lists, globs, `self::`/`super::` paths and names re-exported by `pub use`
# resolve to the module that defines them; it first reads the fixture crate
# tests/docs/imports_fixture and fails unless it sees that crate's known circles).
# In `make test` it runs last, after the suites that build those packages.
DOCS_PY_BIN := $(CURDIR)/python/.venv/bin

.PHONY: test-docs

##@ Docs: every code block runs

# The CLI: test-rust's build (FLAKEID_CARGO_PKGS, the Makefile says why).
test-docs: python-venv setup-node lib-c wasm ## [TIER=test, ci: the Rust blocks in test-rust] every doc's code blocks, artifact names, relative links; no module import circle
	python3 tests/docs/links.py
	python3 tests/docs/imports.py
	python3 tests/docs/options.py
	$(CARGO) build -q $(FLAKEID_CARGO_PKGS)
	$(PIP_BUILD_ENV) $(DOCS_PY_BIN)/pip install --quiet './python[test,peers]'
	python3 tests/docs/run.py --cli $(TARGET)/debug --lib $(C_LIB_DIR)
	cd tests/docs && $(DOCS_PY_BIN)/pytest -q -p no:cacheprovider test_python_blocks.py
	@# The Rust blocks are doctests of the crates that include their files, run with
	@# test-rust's package selection: another selection (the three crates alone)
	@# resolves other features of tokio, futures-util, hyper, tonic ... and built the
	@# debug network stack a second time in every cold make test. In the tiers,
	@# test-rust ran these same doctests before (its last step): only a run alone runs them.
	$(if $(TIER_RELEASE),$(CARGO) test -q --doc $(RUST_TEST_PKGS))

# docs/cli.md and docs/man/*.1 from the clap declaration (crates/flakeid-cli/src/cli_docs.rs);
# `cargo test` (make test-rust) fails when the committed ones are stale.
.PHONY: cli-docs
cli-docs: ## regenerate docs/cli.md and docs/man/*.1 from the clap declaration
	FLAKEID_REGENERATE_CLI_DOCS=1 $(CARGO) test -q -p flakeid-cli --bin flakeid cli_docs
