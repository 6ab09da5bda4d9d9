# `flakeid serve`: HTTP clients against real server processes, scale-out
# and frozen-store tests on the test environment's Redis and PostgreSQL
# (tests/serve/run.sh, tests/env/testenv.py); then the memory budget and the probes
# under attack, against a release build (tests/serve/abuse_test.py).
# Bench: wrk against flakeid serve beside an axum hello world (4 and 64 connections),
# p99 at half the peak, TLS vs plaintext, pysnowflake, bulk and gRPC (not in make ci).
.PHONY: setup-serve setup-serve-bench test-serve bench-serve
setup-serve:
	bash scripts/setup-serve.sh

setup-serve-bench: setup-serve
	bash scripts/setup-serve.sh --bench

test-serve: setup-serve setup-lease
	CARGO=$(CARGO) bash tests/serve/run.sh

bench-serve: setup-serve-bench
	CARGO=$(CARGO) bash tests/serve/bench.sh
