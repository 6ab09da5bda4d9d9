# One entry point for humans and CI: `make test` runs every test of every language.
# Each language adds its targets in mk/<name>.mk and appends itself to TEST_TARGETS
# and BENCH_TARGETS.
SHELL := /bin/bash
.SHELLFLAGS := -eu -o pipefail -c
CARGO ?= cargo
export CARGO_TERM_COLOR ?= never

TEST_TARGETS := test-rust
# Suites that use what others built (test-postgres decodes with the Python and Node packages).
TEST_TARGETS_LAST :=
BENCH_TARGETS := bench-rust

.PHONY: all test bench lint fmt test-rust bench-rust vectors cli setup-protoc
all: test

# protoc: etcd-client (the etcd lease store) and flakeid-server compile protos.
setup-protoc:
	bash scripts/setup-protoc.sh

-include mk/*.mk

# Lint, then each suite in turn (scripts/run-suites.sh prints each one's wall time).
test:
	@MAKE="$(MAKE)" bash scripts/run-suites.sh lint $(TEST_TARGETS) $(TEST_TARGETS_LAST)

# Clippy for the crates built by plain cargo; the Node, wasm and lease targets lint
# their own crates (napi / wasm32 / lease features).
lint: setup-protoc
	$(CARGO) fmt --all -- --check
	$(CARGO) fmt --manifest-path fuzz/Cargo.toml -- --check
	$(CARGO) clippy -p flakeid-core -p flakeid-cli -p flakeid-server -p flakeid-c -p flakeid-python --all-targets -- -D warnings
	RUSTDOCFLAGS="-D warnings" $(CARGO) doc -p flakeid-core --no-deps --quiet
	RUSTDOCFLAGS="-D warnings" $(CARGO) doc -p flakeid-core --no-deps --quiet --features leases
	bash scripts/check-shared-deps.sh

fmt:
	$(CARGO) fmt --all

# Rust: unit, integration, property and doc tests, and the vector staleness check.
# The core runs twice: alone (no cargo features: what wasm builds) and beside the CLI
# (which turns on the lease backends).
test-rust: setup-protoc
	$(CARGO) test -p flakeid-core --all-targets
	$(CARGO) clippy -p flakeid-core --all-targets -- -D warnings
	$(CARGO) test --all-targets
	$(CARGO) test --doc

# Regenerate tests/vectors/*.json from the program in crates/flakeid-core/tests/vectors.rs.
vectors:
	FLAKEID_REGENERATE_VECTORS=1 $(CARGO) test -p flakeid-core --test vectors vectors_are_fresh

bench-rust:
	$(CARGO) bench -p flakeid-core

bench: $(BENCH_TARGETS)

cli:
	$(CARGO) run --release -p flakeid-cli -- generate -n 5
