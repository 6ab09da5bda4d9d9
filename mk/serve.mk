# `flakeid serve`: HTTP clients against real server processes, scale-out
# and frozen-store tests on the test environment's Redis and PostgreSQL
# (tests/serve/run.sh, tests/env/testenv.py); then the memory budget and the probes
# under attack, against a release build (tests/serve/abuse_test.py).
# Bench: wrk against flakeid serve beside an axum hello world (4 and 64 connections),
# p99 at half the peak, TLS vs plaintext, pysnowflake, bulk and gRPC (not in make ci).
.PHONY: setup-serve setup-serve-bench test-serve bench-serve
##@ flakeid serve
# curl (the h2c test) and a venv with schemathesis, pinned, for the OpenAPI check
# (tests/serve/serve_test.py runs it); for the bench also wrk, openssl (the TLS run's
# certificate) and a venv with pysnowflake 0.1.3. Installs only, starts nothing.
SCHEMATHESIS := 4.32.5
SERVE_VENV = $${FLAKEID_SERVE_VENV:-target/serve-venv}
SERVE_BENCH_VENV = $${FLAKEID_BENCH_VENV:-target/bench-serve-venv}
setup-serve: ## curl; schemathesis (pinned) in target/serve-venv
	@$(APT_INSTALL) setup-serve $(call need,curl,curl) $(need-venv)
	@[ "$$($(SERVE_VENV)/bin/schemathesis --version 2>/dev/null)" = "schemathesis, version $(SCHEMATHESIS)" ] \
	  || { python3 -m venv $(SERVE_VENV) && $(SERVE_VENV)/bin/pip install -q schemathesis==$(SCHEMATHESIS); }

setup-serve-bench: setup-serve
	@$(APT_INSTALL) setup-serve $(call need,wrk,wrk) $(call need,openssl,openssl)
	@[ -x $(SERVE_BENCH_VENV)/bin/snowflake_start_server ] \
	  || { python3 -m venv $(SERVE_BENCH_VENV) && $(SERVE_BENCH_VENV)/bin/pip install -q 'pysnowflake==0.1.3'; }

test-serve: setup-serve setup-lease ## HTTP clients against real servers, scale-out, frozen stores; the abuse suite
	CARGO=$(CARGO) bash tests/serve/run.sh

bench-serve: setup-serve-bench ## wrk against flakeid serve beside an axum hello world, TLS, gRPC, bulk
	CARGO=$(CARGO) bash tests/serve/bench.sh
