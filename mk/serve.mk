# `flakeid serve`: HTTP clients against real server processes, scale-out
# and frozen-store tests on the test environment's Redis and PostgreSQL
# (tests/serve/run.py, tests/env/testenv.py); test-serve-abuse: the memory budget and
# the probes under attack, against the static CLI of the release archives
# (tests/serve/abuse_test.py, run by tests/serve/run.py abuse).
# Bench: wrk against flakeid serve beside an axum hello world (4 and 64 connections),
# p99 at half the peak, TLS vs plaintext, pysnowflake, bulk and gRPC (not in make ci).
.PHONY: setup-serve setup-serve-bench test-serve test-serve-abuse bench-serve
##@ flakeid serve
# curl (the h2c and gRPC clients), ip (iproute2: the IPv6 clients' network namespace of
# tests/serve/limits_test.py's Ipv6ClientsGrouped) and a venv, the one both suites run
# in, with, pinned: schemathesis, for the OpenAPI check (tests/serve/metrics_test.py
# runs it), h2, the HTTP/2 client of the abuse suite's window attack
# (tests/serve/abuse_test.py), and protobuf, the runtime that writes and reads the
# gRPC tests' messages (tests/serve/grpc_client.py); for the bench also wrk, openssl
# (the TLS run's certificate) and a venv with pysnowflake 0.1.3. Installs only,
# starts nothing.
SCHEMATHESIS := 4.32.5
H2 := 4.4.1
PROTOBUF := 7.36.2
SERVE_VENV = $${FLAKEID_SERVE_VENV:-target/serve-venv}
SERVE_BENCH_VENV = $${FLAKEID_BENCH_VENV:-target/bench-serve-venv}
setup-serve: ## curl; schemathesis, h2 and protobuf (pinned) in target/serve-venv
	@$(APT_INSTALL) setup-serve $(call need,curl,curl) $(call need,ip,iproute2) $(need-venv)
	@[ "$$($(SERVE_VENV)/bin/schemathesis --version 2>/dev/null)" = "schemathesis, version $(SCHEMATHESIS)" ] \
	  && [ "$$($(SERVE_VENV)/bin/python -c 'import h2; print(h2.__version__)' 2>/dev/null)" = "$(H2)" ] \
	  && [ "$$($(SERVE_VENV)/bin/python -c 'import google.protobuf as p; print(p.__version__)' 2>/dev/null)" = "$(PROTOBUF)" ] \
	  || { python3 -m venv $(SERVE_VENV) \
	    && $(SERVE_VENV)/bin/pip install -q schemathesis==$(SCHEMATHESIS) h2==$(H2) protobuf==$(PROTOBUF); }

setup-serve-bench: setup-serve
	@$(APT_INSTALL) setup-serve $(call need,wrk,wrk) $(call need,openssl,openssl)
	@[ -x $(SERVE_BENCH_VENV)/bin/snowflake_start_server ] \
	  || { python3 -m venv $(SERVE_BENCH_VENV) && $(SERVE_BENCH_VENV)/bin/pip install -q 'pysnowflake==0.1.3'; }

test-serve: setup-serve setup-lease ## HTTP clients against real servers, scale-out, frozen stores
	CARGO=$(CARGO) $(SERVE_VENV)/bin/python tests/serve/run.py

# The abuse suite attacks the CLI users download: the host's static CLI of the
# release archives (make dist-cli, TIER=ci: the host's alone, not release-check's
# cross builds; the dist profile, musl). A debug build's allocations and speed are
# not what users run. make ci builds it in the background for test-dist (the
# Makefile's CI_BACKGROUND), so the suite finds it built; a release build of its own,
# as before, compiled the CLI and its network stack once more.
SERVE_ABUSE_CLI = $(TARGET)/static-cli/x86_64-unknown-linux-musl/dist/flakeid
test-serve-abuse: setup-serve ## the memory budget and the probes under attack (the static CLI of the release archives)
	$(MAKE) --no-print-directory dist-cli TIER=ci
	$(SERVE_VENV)/bin/python -W ignore::ResourceWarning tests/serve/run.py abuse $(SERVE_ABUSE_CLI)

bench-serve: setup-serve-bench ## wrk against flakeid serve beside an axum hello world, TLS, gRPC, bulk
	CARGO=$(CARGO) bash tests/serve/bench.sh
