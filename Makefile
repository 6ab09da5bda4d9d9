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

.PHONY: all test bench lint fmt test-rust bench-rust vectors cli grpc-stubs setup-msrv
all: test

-include mk/*.mk

# Lint, then each suite in turn (scripts/run-suites.sh prints each one's wall time).
test:
	@MAKE="$(MAKE)" bash scripts/run-suites.sh lint $(TEST_TARGETS) $(TEST_TARGETS_LAST)

# Clippy for the crates built by plain cargo, also in their lean builds (no network
# leases); the Node, wasm and lease targets lint their own crates (napi / wasm32 /
# lease tests). Then: the committed gRPC stubs are what their .proto files compile
# to (no protoc: protox), each published crate builds with the Rust its
# rust-version names (scripts/msrv.sh), and the dependency budgets hold
# (scripts/check-deps.sh: lean builds, duplicate versions).
lint: setup-msrv
	$(CARGO) fmt --all -- --check
	$(CARGO) fmt --manifest-path fuzz/Cargo.toml -- --check
	$(CARGO) clippy -p flakeid-core -p flakeid-lease-net -p flakeid-cli -p flakeid-server -p flakeid-c -p flakeid-python -p flakeid-grpc-stubs --all-targets -- -D warnings
	$(CARGO) clippy -p flakeid-c -p flakeid-python -p flakeid-cli --no-default-features -- -D warnings
	RUSTDOCFLAGS="-D warnings" $(CARGO) doc -p flakeid-core --no-deps --quiet
	RUSTDOCFLAGS="-D warnings" $(CARGO) doc -p flakeid-core --no-deps --quiet --features lease
	RUSTDOCFLAGS="-D warnings" $(CARGO) doc -p flakeid-lease-net --no-deps --quiet
	$(CARGO) test -q -p flakeid-grpc-stubs
	bash scripts/msrv.sh check
	CARGO=$(CARGO) bash scripts/check-deps.sh

# The Rust toolchains of the published crates' rust-version (scripts/msrv.sh).
setup-msrv:
	bash scripts/setup-msrv.sh

# Rewrite the committed gRPC stubs from their .proto files (crates/flakeid-server/proto,
# crates/flakeid-lease-net/proto/etcd): tests/grpc-stubs, with protox (no protoc).
grpc-stubs:
	FLAKEID_REGENERATE_STUBS=1 $(CARGO) test -q -p flakeid-grpc-stubs

fmt:
	$(CARGO) fmt --all

# Rust: unit, integration, property and doc tests, and the vector staleness check.
# The core runs twice: alone (no cargo features: what wasm builds) and beside the CLI
# (which turns on the lease machinery); flakeid-lease-net's unit tests run here too
# (its stores against real servers: make test-lease).
test-rust:
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
