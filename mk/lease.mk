# Node-id leases (issue 7): multi-process tests against a real redis-server, a
# private PostgreSQL 15 cluster and file locks, all started by tests/lease/run.sh
# on 127.0.0.1. Bench: what the lease check adds to next_id().
.PHONY: test-lease test-lease-bindings bench-lease
test-lease:
	$(CARGO) clippy -p flakeid-core -p flakeid-lease-net -p flakeid-lease-tests --all-targets --features flakeid-core/lease -- -D warnings
	CARGO=$(CARGO) bash tests/lease/run.sh

# The lease URLs through the CLI, Python, Node and C (issue 13), against the same
# servers; needs the Python package (installed here), the Node addon and libflakeid.
test-lease-bindings: python-venv setup-node lib-c
	$(PY_BIN)/pip install --quiet ./python
	CARGO=$(CARGO) bash tests/lease/run.sh --bindings

bench-lease:
	$(CARGO) bench -p flakeid-lease-tests --bench leased

TEST_TARGETS += test-lease test-lease-bindings
BENCH_TARGETS += bench-lease
