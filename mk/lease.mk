# Node-id leases (issue 7): multi-process tests against a real redis-server, a
# private PostgreSQL 15 cluster and file locks, all started by tests/lease/run.sh
# on 127.0.0.1. Bench: what the lease check adds to next_id().
.PHONY: test-lease bench-lease
test-lease:
	$(CARGO) clippy -p flakeid-core -p flakeid-lease-tests --all-targets --features flakeid-core/leases -- -D warnings
	CARGO=$(CARGO) bash tests/lease/run.sh

bench-lease:
	$(CARGO) bench -p flakeid-lease-tests --bench leased

TEST_TARGETS += test-lease
BENCH_TARGETS += bench-lease
