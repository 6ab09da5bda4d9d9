# Rust: the workspace's setup, lint, tests, vectors, benches and the core's model
# check (`make help` lists the targets, one line each).

##@ Rust: lint, tests, vectors, benches
# rustfmt and clippy, the wasm32 target (lint checks the wasm crate for it), libfaketime:
# the CLI's --state restart tests set the wall clock back (crates/flakeid-cli/tests/state.rs),
# the lease step watch's test moves it ahead (crates/flakeid-core/src/lease/steps.rs).
.PHONY: setup-rust setup-ports check-ports lint fmt grpc-stubs test-rust vectors bench-rust bench-seal bench test-loom stress
setup-rust: ## rustfmt, clippy, the wasm32 target, libfaketime
	@have=$$(rustup component list --installed); grep -q '^clippy' <<<"$$have" && grep -q '^rustfmt' <<<"$$have" \
	  || $(RUSTUP) component add rustfmt clippy
	@have=$$(rustup target list --installed); grep -qx wasm32-unknown-unknown <<<"$$have" \
	  || $(RUSTUP) target add wasm32-unknown-unknown
	@$(APT_INSTALL) setup-rust $(call need-file,/usr/lib/*/faketime/libfaketime.so.1,faketime)

# The published crates where make test's builds do not reach them, compile-only:
# - the core for macOS (x86_64, arm64) and for Windows the way users build it (its
#   tests run under Wine: test-windows): clippy -D warnings of the library, bare,
#   with `lease`, with `lease` and `uuid7`, so every per-OS cfg (the boot clock, file
#   locks, node sources) compiles warning-free. The core's build script only sets a
#   cfg (host_guard) and it has no C, so no SDK or linker is needed;
# - flakeid-core, -lease-net, -server and -cli on the toolchain of their rust-version
#   (scripts/msrv.sh check; the toolchains: minimal profile, each installed once).
# Target directories of their own: make ci runs it in the background (the Makefile's
# CI_BACKGROUND), beside suites whose cargo locks $(TARGET).
PORTS_TARGET_DIR := $(TARGET)/ports
PORT_TRIPLES := x86_64-apple-darwin aarch64-apple-darwin x86_64-pc-windows-gnu
# - the core without std (`default-features = false`: bare, with `serde`, with
#   `portable-atomic`) for a no_std + alloc target with no OS (thumbv7em: no 64-bit
#   atomics, so its generators come with `portable-atomic` only) and for
#   wasm32-unknown-unknown (setup-rust adds it), whose 64-bit atomics bring the
#   generators in (test-rust runs them without std, with `portable-atomic`:
#   crates/flakeid-core/tests/no_std.rs).
NO_STD_TRIPLES := thumbv7em-none-eabihf wasm32-unknown-unknown
# Then the one port that runs: tests/no_std, the core without std (`portable-atomic`)
# in a program for a Cortex-M4, run by qemu-system-arm (its runner:
# tests/no_std/.cargo/config.toml, which cargo reads only from that directory, hence
# the `cd`). It checks a generator on the program's clock and the shared vectors, and
# exits non-zero on the first failed check; run twice, as firmware builds
# portable-atomic's 64-bit atomics: its default global locks, then with interrupts off
# (`--features interrupts`, whose check calls the generator from a SysTick handler).
# Its own workspace and lock file; clippy -D warnings here, where the target is.
NO_STD_RUN := cd tests/no_std && CARGO_TARGET_DIR=$(PORTS_TARGET_DIR)/no_std-qemu $(CARGO)
setup-ports: setup-rust ## the Rust targets (macOS x86_64 and arm64, windows-gnu, thumbv7em), MSRV toolchains and qemu-system-arm of check-ports
	@for t in $(PORT_TRIPLES) thumbv7em-none-eabihf; do rustup target list --installed | grep -qx $$t || $(RUSTUP) target add $$t; done
	@$(APT_INSTALL) setup-ports $(call need,qemu-system-arm,qemu-system-arm)
	@for v in $$(bash scripts/msrv.sh versions); do rustup run "$$v" rustc --version >/dev/null 2>&1 \
	  || { echo "setup-ports: installing Rust $$v"; $(RUSTUP) toolchain install "$$v" --profile minimal; }; done

check-ports: setup-ports ## the core's library for macOS and Windows (clippy -D warnings, bare, lease, lease and uuid7) and without std, run on a Cortex-M4 under qemu; the published crates at their rust-version
	@for t in $(PORT_TRIPLES); do for f in "" "--features lease" "--features lease,uuid7"; do \
	  echo "CARGO_TARGET_DIR=$(PORTS_TARGET_DIR) $(CARGO) clippy -p flakeid-core --lib $$f --target $$t -- -D warnings"; \
	  CARGO_TARGET_DIR=$(PORTS_TARGET_DIR) $(CARGO) clippy --quiet -p flakeid-core --lib $$f --target $$t -- -D warnings || exit 1; done; done
	@for t in $(NO_STD_TRIPLES); do for f in "" "--features serde" "--features portable-atomic"; do \
	  echo "CARGO_TARGET_DIR=$(PORTS_TARGET_DIR) $(CARGO) clippy -p flakeid-core --lib --no-default-features $$f --target $$t -- -D warnings"; \
	  CARGO_TARGET_DIR=$(PORTS_TARGET_DIR) $(CARGO) clippy --quiet -p flakeid-core --lib --no-default-features $$f --target $$t -- -D warnings || exit 1; done; done
	bash scripts/msrv.sh check
	$(NO_STD_RUN) clippy --quiet --locked --features interrupts -- -D warnings
	$(NO_STD_RUN) run --quiet --locked
	$(NO_STD_RUN) run --quiet --locked --features interrupts

# The benches (crates/flakeid-bench, the core's) that need the core's features: the
# workspace's builds turn them on (lint's clippy, test-rust's third build), so that
# every bench is compiled and run once in those; and the core's serde feature, for its
# tests (crates/flakeid-core/tests/serde.rs) and doc example.
BENCH_FEATURES := --features flakeid-bench/lease,flakeid-bench/uuid7,flakeid-core/serde

# Lint: every crate's rustfmt, clippy (-D warnings) and rustdoc, here and nowhere
# else. The core alone (no features: what wasm builds), then the workspace at once
# (one feature set: the lease stores on), the lean builds of the bindings and the CLI
# (no network leases, no sealing), the wasm crate for wasm32; lint-postgres is the
# extension's own workspace and toolchain (make ci, mk/postgres.mk). Then: every public
# target has a help line (lint-help), the dependency budgets hold
# (scripts/check-deps.sh: lean builds, duplicate versions), no recipe or script
# names a fixed path into cargo's output, no placeholder host is back
# (scripts/check-names.py, which names the few RFC 2606 names it allows, and why),
# and every file and section a build file's comment points to is there, with no
# commit hash or timing beside it (scripts/check-pointers.py).
# TIER=ci and release (and alone) add the check that compiles the most for what a
# change rarely breaks, which make test leaves out: the gRPC stubs regenerated by
# protox and tonic-prost-build. (The MSRV toolchain's check is check-ports'.)
lint: setup-rust lint-help lint-workflows lint-python lint-js ## [TIER=test: no stubs] rustfmt, clippy -D warnings, rustdoc, dependency budgets, help lines, names, pointers, workflows, ruff, eslint, gRPC stubs
	python3 scripts/check-names.py
	python3 scripts/check-pointers.py
	$(CARGO) fmt --all -- --check
	$(CARGO) fmt --manifest-path fuzz/Cargo.toml -- --check
	$(CARGO) fmt --manifest-path tests/no_std/Cargo.toml -- --check
	$(CARGO) clippy -p flakeid-core -p flakeid-bench --all-targets -- -D warnings
	$(CARGO) clippy --workspace --exclude flakeid-wasm --all-targets $(BENCH_FEATURES) -- -D warnings
	$(CARGO) clippy -p flakeid-c -p flakeid-python -p flakeid-cli --no-default-features -- -D warnings
	CARGO_TARGET_DIR=$(WASM_TARGET_DIR) $(CARGO) clippy --target wasm32-unknown-unknown -p flakeid-wasm -- -D warnings
	RUSTDOCFLAGS="-D warnings" $(CARGO) doc -p flakeid-core --no-deps --quiet
	RUSTDOCFLAGS="-D warnings" $(CARGO) doc -p flakeid-core --no-deps --quiet --features lease,uuid
	RUSTDOCFLAGS="-D warnings" $(CARGO) doc -p flakeid-lease-net --no-deps --quiet
	RUSTDOCFLAGS="-D warnings" $(CARGO) doc -p flakeid-seal --no-deps --quiet
	CARGO=$(CARGO) bash scripts/check-deps.sh
	@# The other workspaces' lock files are current (a crate they build changed its
	@# dependencies: `cargo update --workspace` there), here rather than in make ci's builds.
	for m in fuzz bindings/postgres tests/no_std; do $(CARGO) update -q --workspace --locked --manifest-path $$m/Cargo.toml; done
	@# Cargo's outputs are reached through $$(TARGET) or $$CARGO_TARGET_DIR: a fixed
	@# target/ path is not there when CARGO_TARGET_DIR is set. Caught: a profile's or
	@# the host's directory under target/ (in Python's path joins too), and a cargo
	@# target directory of its own (wasm's, MSRV's) set to a fixed target/.
	@# (scripts/dist.sh's FLAKEID_WASM_TARGET_DIR is left to its owner: excluded.)
	@! git grep -nE '(^|[^A-Za-z0-9_}.$$-])target/(debug|release|dist)/|target/[$$][(]HOST_TRIPLE[)]|"target", *"(debug|release|dist)"|TARGET_DIR *[:?]?= *"?([$$][(]CURDIR[)]/|[$$]root/)?target/|TARGET_DIR:-([$$]root/)?target/' \
	  -- Makefile mk scripts tests bindings go java node python crates ':!*.md' ':!scripts/dist.sh' \
	  | grep -vE '^[^:]+:[0-9]+:\s*(#|//)' \
	  || { echo "lint: a path into cargo's output above is fixed to target/: use \$$(TARGET) or \$${CARGO_TARGET_DIR:-...}" >&2; exit 1; }
	@# The static library's system libraries are spelled in go/native_libs.go only
	@# (scripts/native-libs.sh reads them for everything else).
	@! git grep -nE -- '-l(bcrypt|gcc_s)|-framework Core[F]oundation' -- ':!go/native_libs.go' \
	  || { echo "lint: a list of the static library's system libraries above: read it with scripts/native-libs.sh" >&2; exit 1; }
	$(if $(TIER_CI),$(CARGO) test -q -p flakeid-grpc-stubs)


fmt: setup-ruff ## rustfmt the workspace, ruff format the Python
	$(CARGO) fmt --all
	$(PY_TOOLS)/bin/ruff format .

# Rewrite the committed gRPC stubs from their .proto files (crates/flakeid-server/proto,
# crates/flakeid-lease-net/proto/etcd): tests/grpc-stubs, with protox (no protoc).
grpc-stubs: ## rewrite the committed gRPC stubs from their .proto files (protox, no protoc)
	FLAKEID_REGENERATE_STUBS=1 $(CARGO) test -q -p flakeid-grpc-stubs

# Rust: unit, integration, property, vector (staleness included) and doc tests of the
# core, CLI, server, sealing (flakeid-seal), the C ABI's Rust side (panic boundary,
# status table, include/flakeid.h freshness) and file leases, in ONE cargo invocation:
# one feature set, so each dependency is compiled once (separate `-p` runs each
# compiled the lease stack again with other features). Lease tests on Redis,
# PostgreSQL and etcd skip here (no FLAKEID_TEST_* URLs); make test-lease runs them.
# The core is built alone first (with flakeid-js, the JS value rules over it, and its
# benches): no cargo features, what the wasm build has. The test binaries of the
# three builds then run side by side (scripts/cargo-apart.py --binaries: each whole,
# with a host guard of its own).
# Every debug build of the CLI for a suite (serve, leases through the bindings,
# PostgreSQL, faults, docs) is the same selection with the test targets
# (FLAKEID_CARGO_PKGS: --all-targets), so that it resolves the features test-rust's
# build did, dev-dependencies included, and finds it built: a plain `cargo build` of
# these packages leaves the dev-dependencies out, turns fewer features of serde,
# tower, tonic, hyper-util and fpe on, and compiled them and every crate of the
# workspace above them again (docs/development.md, "Where the time goes").
RUST_TEST_PKGS := -p flakeid-core -p flakeid-lease-net -p flakeid-cli -p flakeid-server -p flakeid-seal -p flakeid-c -p flakeid-lease-tests \
  -p flakeid-faults-driver -p flakeid-bench $(BENCH_FEATURES)
export FLAKEID_CARGO_PKGS := $(RUST_TEST_PKGS) --all-targets
test-rust: ## core, CLI, server, sealing, the C ABI's Rust side, file leases, vectors: unit, property, doc tests
	CARGO=$(CARGO) python3 scripts/cargo-apart.py --binaries -p flakeid-core -p flakeid-js -p flakeid-bench --all-targets , \
	  -p flakeid-core --features uuid --test uuid_generator , -p flakeid-core --no-default-features --features portable-atomic --test no_std , \
	  $(RUST_TEST_PKGS) --all-targets
	$(CARGO) test $(RUST_TEST_PKGS) --doc

# tests/vectors/*.json from the programs in crates/flakeid-core/tests/vectors.rs and
# crates/flakeid-seal/tests/vectors.rs (seal.json) and crates/flakeid-js/tests/vectors.rs
# (js/refusals.json).
vectors: ## regenerate tests/vectors/*.json and js/ (the core's, sealing's and flakeid-js's programs)
	FLAKEID_REGENERATE_VECTORS=1 $(CARGO) test -p flakeid-core --test vectors vectors_are_fresh
	FLAKEID_REGENERATE_VECTORS=1 $(CARGO) test -p flakeid-seal --test vectors vectors_are_fresh
	FLAKEID_REGENERATE_VECTORS=1 $(CARGO) test -p flakeid-js --test vectors vectors_are_fresh

# The generator's counter protocol and the shared lease gate (the PostgreSQL
# extension's) under the loom model checker: the real code, built with `--cfg loom`
# so its atomics and thread-locals are loom's, explored over every interleaving up to
# LOOM_MAX_PREEMPTIONS (default 2) in crates/flakeid-core/tests/loom.rs. Its own target dir: the cfg flag
# rebuilds everything (the core alone, with its lease feature: quick). Each model prints
# its CPU seconds and executions, and fails over its budget of executions at the default
# bound (docs/development.md, "The loom models' budget").
test-loom: ## the generator's counter protocol and the shared lease gate under the loom model checker
	RUSTFLAGS="--cfg loom" CARGO_TARGET_DIR=$(TARGET)/loom CARGO=$(CARGO) python3 scripts/cargo-apart.py \
	  -p flakeid-core --features lease --release --test loom

# The real-clock contention tests, longer than make test and make ci (the Makefile's *_STRESS_SECS).
STRESS_SECS ?= 30
stress: ## the real-clock contention tests for STRESS_SECS (30 s)
	FLAKEID_STRESS_SECS=$(STRESS_SECS) $(CARGO) test -p flakeid-core --release --test race -- --test-threads 1

bench-rust: ## the core's criterion benches (crates/flakeid-bench)
	$(CARGO) bench -p flakeid-bench

bench-seal: ## seal/unseal ns per ID (criterion)
	$(CARGO) bench -p flakeid-seal

BENCH_TARGETS := bench-rust bench-c bench-seal bench-lease bench-python bench-node bench-wasm bench-serve \
  bench-postgres bench-go bench-java
bench: $(BENCH_TARGETS) ## every bench (docs/performance.md has the figures)
