# flakeid's one entry point for humans and CI. Three tiers (CONTRIBUTING.md):
#   make test            the contributor's loop: every language's own suite and lint
#   make ci              what .ci/run runs: make test, then real stores, serve, the
#                        PostgreSQL extension and its .deb, faults, fuzz, loom, Go, Java,
#                        and the host's release artifacts installed with no Rust
#   make release-check   the full cross matrix (aarch64, musl, qemu); not in CI
#   make soak SUITE=<suite> N=<n>   one suite N times in a row (finding a flake)
# A suite is a make target; what it needs installed is its prerequisite (setup-*,
# scripts/setup-*.sh, idempotent), so `make test-node` works alone on a fresh machine.
# mk/<name>.mk defines a language's suites; the tables below say which run, in order.
SHELL := /bin/bash
.SHELLFLAGS := -eu -o pipefail -c
CARGO ?= cargo
export CARGO_TERM_COLOR ?= never

# ---------------------------------------------------------------------------------
# The suites, in the order each tier runs them (scripts/run-suites.sh runs them in
# turn, stops at the first failure and prints each one's wall and CPU seconds).
TEST_SUITES := \
  lint \
  test-rust \
  test-c \
  test-python \
  test-node \
  test-wasm-node \
  test-go \
  test-java \
  test-docs

CI_SUITES := \
  $(TEST_SUITES) \
  lint-ci \
  lint-postgres \
  test-loom \
  test-fuzz \
  ci-prebuild-start \
  test-lease \
  test-lease-bindings \
  test-serve \
  test-wasm-browser \
  test-go-stores \
  test-java-stores \
  test-faults \
  ci-prebuild-wait \
  test-postgres \
  test-artifacts

RELEASE_SUITES := \
  test-dist \
  release-check-go \
  release-check-java
# ci-prebuild-start .. -wait: the suites between them mostly wait (leases, serve, Go's
# and Java's stores, faults), so the two longest builds of the rest (the extension's
# release build for its .deb, the static CLI) run beside them in the background, as
# SCHED_IDLE (scripts/ci-prebuild.sh says how and why, and why not from the start).
# test-postgres comes after test-python and test-node: tests/postgres/run.sh decodes
# SQL-made IDs with the packages they installed; it also builds the extension's .deb
# and installs it with apt (test-postgres-deb). test-artifacts builds this machine's
# release artifacts (dist/, emptied first) and installs them with no Rust on PATH.
# ---------------------------------------------------------------------------------

# What each tier installs (scripts/bootstrap.sh TIER = make setup-TIER, several at
# once). The setups that compile come first, so that the downloads (apt, npm, PyPI,
# Maven, toolchains) run beside them instead of after them: setup-postgres (cargo
# install cargo-pgrx), setup-wasm (cargo install wasm-bindgen-cli), setup-node (the
# addon's build).
SETUP_TEST := setup-rust setup-wasm setup-node setup-c setup-python setup-go setup-java
SETUP_CI := setup-postgres $(SETUP_TEST) setup-msrv setup-lease setup-serve setup-browser setup-fuzz \
  setup-faults setup-dist-host
SETUP_RELEASE := $(SETUP_CI) setup-dist setup-go-release

.PHONY: all test ci release-check soak ci-prebuild-start ci-prebuild-wait lint lint-postgres fmt test-rust bench-rust bench vectors cli \
  setup-test setup-ci setup-release setup-rust setup-msrv grpc-stubs lint-ci
all: test

# The real-clock contention tests (Rust, C, Python) run FLAKEID_STRESS_SECS each:
# 0.5 s in make test, 3 s in make ci (a suite run alone: 3 s; make stress: 30 s).
TEST_STRESS_SECS ?= 0.5
CI_STRESS_SECS ?= 3
test:
	@FLAKEID_STRESS_SECS=$(TEST_STRESS_SECS) MAKE="$(MAKE)" bash scripts/run-suites.sh $(TEST_SUITES)

ci:
	@FLAKEID_STRESS_SECS=$(CI_STRESS_SECS) MAKE="$(MAKE)" bash scripts/run-suites.sh $(CI_SUITES)

release-check:
	@MAKE="$(MAKE)" bash scripts/run-suites.sh $(RELEASE_SUITES)

ci-prebuild-start: setup-postgres setup-dist-host
	@MAKE="$(MAKE)" bash scripts/ci-prebuild.sh start

ci-prebuild-wait:
	@bash scripts/ci-prebuild.sh wait

# `make soak SUITE=test-lease N=20`: stops at the first failing run and says which.
N ?= 10
soak:
	@test -n "$(SUITE)" || { echo "usage: make soak SUITE=<suite> N=<n>; suites: $(CI_SUITES) $(RELEASE_SUITES)" >&2; exit 2; }
	@for i in $$(seq $(N)); do echo "== soak $(SUITE): run $$i of $(N)"; \
	  $(MAKE) --no-print-directory $(SUITE) || { echo "soak: $(SUITE) failed on run $$i of $(N)" >&2; exit 1; }; done; \
	  echo "soak: $(SUITE) passed $(N) runs in a row"

setup-test: $(SETUP_TEST)
setup-ci: $(SETUP_CI)
setup-release: $(SETUP_RELEASE)

# rustfmt and clippy, the wasm32 target (lint checks the wasm crate for it), libfaketime.
setup-rust:
	@have=$$(rustup component list --installed); grep -q '^clippy' <<<"$$have" && grep -q '^rustfmt' <<<"$$have" \
	  || rustup component add rustfmt clippy
	@have=$$(rustup target list --installed); grep -qx wasm32-unknown-unknown <<<"$$have" \
	  || rustup target add wasm32-unknown-unknown
	@# libfaketime: the CLI's --state restart tests set the wall clock back (crates/flakeid-cli/tests/state.rs),
	@# the lease step watch's test moves it ahead (crates/flakeid-core/src/lease/steps.rs).
	@ls /usr/lib/*/faketime/libfaketime.so.1 >/dev/null 2>&1 || bash scripts/apt-install.sh setup-rust faketime

# The Rust toolchains of the published crates' rust-version (scripts/msrv.sh).
setup-msrv:
	bash scripts/setup-msrv.sh

# Rewrite the committed gRPC stubs from their .proto files (crates/flakeid-server/proto,
# crates/flakeid-lease-net/proto/etcd): tests/grpc-stubs, with protox (no protoc).
grpc-stubs:
	FLAKEID_REGENERATE_STUBS=1 $(CARGO) test -q -p flakeid-grpc-stubs

# The shipped-settings builds of the bindings in make test (the Node addon, the C
# library, the Python module: profile dist, LTO across crates) all name this machine's
# target explicitly, as napi-rs always does (target/<host>/dist): each LTO build of a
# cdylib then reuses the others' dependencies (bitcode only), instead of compiling the
# network stack once per binding (docs/performance.md, Where the time goes).
HOST_TRIPLE := $(or $(shell rustc -vV 2>/dev/null | sed -n 's/^host: //p'),no-rustc-on-PATH)
# Cargo's output directory, as cargo picks it: $$CARGO_TARGET_DIR when set, else
# target/. Made absolute and exported, so that a relative value means the same in
# every recipe that changes directory and in every script; each path to a cargo
# output (the CLI, the C library, the faults' drivers) starts with $(TARGET).
ifneq ($(strip $(CARGO_TARGET_DIR)),)
override CARGO_TARGET_DIR := $(abspath $(CARGO_TARGET_DIR))
export CARGO_TARGET_DIR
endif
TARGET := $(or $(CARGO_TARGET_DIR),$(CURDIR)/target)
# maturin (pip install ./python) passes --target only when asked; this asks.
PIP_BUILD_ENV := CARGO_BUILD_TARGET=$(HOST_TRIPLE)

-include mk/*.mk

# ---------------------------------------------------------------------------------
# Lint: every crate's rustfmt, clippy (-D warnings) and rustdoc, here and nowhere
# else. The core alone (no features: what wasm builds), then the workspace at once
# (one feature set: the lease stores on), the lean builds of the bindings and the CLI
# (no network leases, no sealing), the wasm crate for wasm32; lint-postgres is the
# extension's own workspace and toolchain (make ci). Then: the committed gRPC stubs
# are what their .proto files compile to (no protoc: protox), each published crate
# builds with the Rust its rust-version names (scripts/msrv.sh), and the dependency
# budgets hold (scripts/check-deps.sh: lean builds, duplicate versions).
# Lint, all of it here: `lint` in make test; `lint-ci`, the two checks that compile
# the most for what a change rarely breaks (about 125 CPU-s cold: the MSRV
# toolchain's check of the workspace, and the gRPC stubs regenerated by protox and
# tonic-prost-build), in make ci; `lint-postgres`, the extension's own workspace.
lint: setup-rust
	$(CARGO) fmt --all -- --check
	$(CARGO) fmt --manifest-path fuzz/Cargo.toml -- --check
	$(CARGO) clippy -p flakeid-core --all-targets -- -D warnings
	$(CARGO) clippy --workspace --exclude flakeid-wasm --all-targets -- -D warnings
	$(CARGO) clippy -p flakeid-c -p flakeid-python -p flakeid-cli --no-default-features -- -D warnings
	CARGO_TARGET_DIR=$(WASM_TARGET_DIR) $(CARGO) clippy --target wasm32-unknown-unknown -p flakeid-wasm -- -D warnings
	RUSTDOCFLAGS="-D warnings" $(CARGO) doc -p flakeid-core --no-deps --quiet
	RUSTDOCFLAGS="-D warnings" $(CARGO) doc -p flakeid-core --no-deps --quiet --features lease
	RUSTDOCFLAGS="-D warnings" $(CARGO) doc -p flakeid-lease-net --no-deps --quiet
	RUSTDOCFLAGS="-D warnings" $(CARGO) doc -p flakeid-seal --no-deps --quiet
	CARGO=$(CARGO) bash scripts/check-deps.sh
	@# Cargo's outputs are reached through $$(TARGET) or $$CARGO_TARGET_DIR: a fixed
	@# target/ path is not there when CARGO_TARGET_DIR is set.
	@! git grep -nE '(^|[^A-Za-z0-9_}.$$-])target/(debug|release|dist)/|target/[$$][(]HOST_TRIPLE[)]' \
	  -- Makefile mk scripts tests bindings go java node python crates ':!*.md' | grep -vE '^[^:]+:[0-9]+:\s*(#|//)' \
	  || { echo "lint: a path into cargo's output above is fixed to target/: use \$$(TARGET) or \$${CARGO_TARGET_DIR:-...}" >&2; exit 1; }

lint-ci: setup-rust setup-msrv
	$(CARGO) test -q -p flakeid-grpc-stubs
	bash scripts/msrv.sh check

lint-postgres: setup-postgres
	cd $(PG_CRATE) && cargo fmt -- --check
	cd $(PG_CRATE) && cargo clippy --features pg_test --tests -- -D warnings

fmt:
	$(CARGO) fmt --all

# ---------------------------------------------------------------------------------
# Rust: unit, integration, property, vector (staleness included) and doc tests of the
# core, CLI, server, sealing (flakeid-seal), the C ABI's Rust side (panic boundary,
# status table, include/flakeid.h freshness) and file leases, in ONE cargo invocation:
# one feature set, so each dependency is compiled once (separate `-p` runs each
# compiled the lease stack again with other features). Lease tests on Redis,
# PostgreSQL and etcd skip here (no FLAKEID_TEST_* URLs); make test-lease runs them.
# The core runs alone first (with flakeid-js, the JS value rules over it): no cargo
# features, what the wasm build has.
# Every debug build of the CLI for a suite (serve, leases through the bindings,
# PostgreSQL, faults, docs) is the same selection with the test targets
# (FLAKEID_CARGO_PKGS: --all-targets), so that it resolves the features test-rust's
# build did, dev-dependencies included, and finds it built: a plain `cargo build` of
# these packages leaves the dev-dependencies out, turns fewer features of serde,
# tower, tonic, hyper-util and fpe on, and compiled them and every crate of the
# workspace above them again (CONTRIBUTING.md, "Where the time goes").
RUST_TEST_PKGS := -p flakeid-core -p flakeid-lease-net -p flakeid-cli -p flakeid-server -p flakeid-seal -p flakeid-c -p flakeid-lease-tests \
  -p flakeid-faults-driver
export FLAKEID_CARGO_PKGS := $(RUST_TEST_PKGS) --all-targets
test-rust:
	$(CARGO) test -p flakeid-core -p flakeid-js --all-targets
	$(CARGO) test $(RUST_TEST_PKGS) --all-targets
	$(CARGO) test $(RUST_TEST_PKGS) --doc

# Regenerate tests/vectors/*.json from the program in crates/flakeid-core/tests/vectors.rs.
vectors:
	FLAKEID_REGENERATE_VECTORS=1 $(CARGO) test -p flakeid-core --test vectors vectors_are_fresh

bench-rust:
	$(CARGO) bench -p flakeid-core

BENCH_TARGETS := bench-rust bench-c bench-seal bench-lease bench-python bench-node bench-wasm bench-serve \
  bench-postgres bench-go bench-java
bench: $(BENCH_TARGETS)

cli:
	$(CARGO) run --release -p flakeid-cli -- generate -n 5
