# One entry point for humans and CI: `make test` runs every test of every language.
# Each language adds its targets in mk/<name>.mk and appends itself to TEST_TARGETS
# and BENCH_TARGETS.
SHELL := /bin/bash
.SHELLFLAGS := -eu -o pipefail -c
CARGO ?= cargo
export CARGO_TERM_COLOR ?= never

TEST_TARGETS := test-rust
BENCH_TARGETS := bench-rust

.PHONY: all test bench lint fmt test-rust bench-rust vectors cli
all: test

-include mk/*.mk

test: lint $(TEST_TARGETS)
	@echo "make test: every suite passed ($(TEST_TARGETS))"

lint:
	$(CARGO) fmt --all -- --check
	$(CARGO) clippy --all-targets -- -D warnings

fmt:
	$(CARGO) fmt --all

# Rust: unit, integration, property and doc tests, and the vector staleness check.
test-rust:
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
