# `flakeid serve` (issue 15): HTTP clients against real server processes, scale-out
# and frozen-store tests on real Redis/PostgreSQL (tests/serve/run.sh).
# Bench: wrk against flakeid serve and pysnowflake side by side (not in make test).
.PHONY: test-serve bench-serve
test-serve:
	CARGO=$(CARGO) bash tests/serve/run.sh

bench-serve:
	CARGO=$(CARGO) bash tests/serve/bench.sh

TEST_TARGETS += test-serve
BENCH_TARGETS += bench-serve
