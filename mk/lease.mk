# Node-id leases. File leases run in make test (test-rust: the
# flakeid-lease-tests crate, whose store tests skip there); make ci runs the store
# tests on the real servers tests/env/testenv.py starts, and the lease URLs through
# every binding (tests/lease/run.py bindings). bench-lease is the core's bench: no
# store, no network crates to build.
# Same packages as test-rust (RUST_TEST_PKGS): one feature set, no second build. `--lib`:
# unit tests that need a real store (flakeid-lease-net's etcd forced interleaving).
# tests/lease/run.py stores runs them in groups side by side, each group with servers
# of its own (they mostly wait out TTLs, using little CPU).
LEASE_STORE_TESTS := --lib --test lease_redis --test lease_postgres --test lease_etcd --test lease_tls
.PHONY: setup-postgres-fixture setup-lease test-lease test-lease-bindings bench-lease
##@ Node-id leases on real stores
# The test fixture's servers (tests/env/testenv.py starts them; these install only):
# its PostgreSQL, Debian's 15 (on the image; installed if missing), is what every
# language's framework tests need; the lease stores add Debian's redis-server, etcd
# (etcd-server, etcdctl) and openssl for the test certificates.
PG_FIXTURE_INITDB := /usr/lib/postgresql/15/bin/initdb
setup-postgres-fixture: ## PostgreSQL 15 (Debian) for the test fixture: the framework adapters' tests
	@$(APT_INSTALL) setup-postgres-fixture $(call need-file,$(PG_FIXTURE_INITDB),postgresql-15)

setup-lease: setup-postgres-fixture ## Redis, etcd, openssl and the fixture's PostgreSQL (Debian); the fixture starts them
	@$(APT_INSTALL) setup-lease $(call need,redis-server,redis-server) $(call need,etcd,etcd-server) \
	  $(call need,etcdctl,etcd-client) $(call need,openssl,openssl)

test-lease: setup-lease ## the multi-process store tests on real Redis, PostgreSQL, etcd, plain and TLS
	CARGO=$(CARGO) python3 tests/lease/run.py stores $(RUST_TEST_PKGS) $(LEASE_STORE_TESTS)

# Needs the Python package (installed here), the Node addon and libflakeid.
test-lease-bindings: setup-lease python-venv setup-node lib-c ## the lease URLs through the CLI, Python, Node and C
	$(PIP_BUILD_ENV) $(PY_BIN)/pip install --quiet ./python
	CARGO=$(CARGO) C_LIB_DIR=$(C_LIB_DIR) python3 tests/lease/run.py bindings

bench-lease: ## what the lease check adds to next_id()
	$(CARGO) bench -p flakeid-bench --features lease --bench lease
