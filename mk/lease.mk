# Node-id leases. File leases run in make test (test-rust: the
# flakeid-lease-tests crate, whose store tests skip there); make ci runs the store
# tests on the real servers tests/env/testenv.py starts, and the lease URLs through
# every binding (tests/lease/run.py bindings). bench-lease is the core's bench: no
# store, no network crates to build.
# Same packages as test-rust (RUST_TEST_PKGS): one feature set, no second build. `--lib`:
# unit tests that need a real store (flakeid-lease-net's etcd forced interleaving).
# tests/lease/run.py stores runs them in groups side by side, each group with servers
# of its own (they mostly wait out TTLs, using little CPU).
LEASE_STORE_TESTS := --lib --test lease_redis --test lease_postgres --test lease_etcd --test lease_tls --test lease_k8s
.PHONY: setup-postgres-fixture setup-lease kube-apiserver test-lease test-lease-bindings bench-lease
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

# The Kubernetes Lease store's tests need a real kube-apiserver: built from the
# Go module proxy's k8s.io/kubernetes (tests/env/kube/go.mod: its staging modules
# replaced by their published releases) once per version into the cache directory
# the fixture reads (testenv.py kube_apiserver_binary); cached, a no-op. Cold: 117 MB
# of modules, 14-15 CPU-min, 1.7 GB of memory at its peak, a 102 MB binary
# (docs/leases.md, "Kubernetes lease costs").
KUBE_VERSION = $(shell sed -n 's|^require k8s.io/kubernetes ||p' tests/env/kube/go.mod)
KUBE_APISERVER = $${XDG_CACHE_HOME:-$$HOME/.cache}/flakeid/kube-apiserver-$(KUBE_VERSION)/kube-apiserver
kube-apiserver: setup-go ## kube-apiserver for the k8s:// lease tests, built once from the Go module proxy (cached)
	@bin=$(KUBE_APISERVER); v=$(KUBE_VERSION); minor=$${v#v1.}; minor=$${minor%%.*}; \
	if [ -x "$$bin" ]; then echo "kube-apiserver $$v: $$bin (cached)"; exit 0; fi; \
	echo "kube-apiserver $$v: building into $$bin (once)"; mkdir -p "$$(dirname "$$bin")"; \
	cd tests/env/kube && CGO_ENABLED=0 $(GO) build -trimpath -ldflags "-s -w \
	  -X k8s.io/component-base/version.gitVersion=$$v -X k8s.io/component-base/version.gitMajor=1 \
	  -X k8s.io/component-base/version.gitMinor=$$minor" -o "$$bin.tmp" k8s.io/kubernetes/cmd/kube-apiserver; \
	mv "$$bin.tmp" "$$bin"

test-lease: setup-lease kube-apiserver ## the multi-process store tests on real Redis, PostgreSQL, etcd (plain and TLS) and kube-apiserver
	CARGO=$(CARGO) python3 tests/lease/run.py stores $(RUST_TEST_PKGS) $(LEASE_STORE_TESTS)

# Needs the Python package (installed here), the Node addon and libflakeid.
test-lease-bindings: setup-lease kube-apiserver python-venv setup-node lib-c ## the lease URLs through the CLI, Python, Node and C
	$(PIP_BUILD_ENV) $(PY_BIN)/pip install --quiet ./python
	CARGO=$(CARGO) C_LIB_DIR=$(C_LIB_DIR) python3 tests/lease/run.py bindings

bench-lease: ## what the lease check adds to next_id()
	$(CARGO) bench -p flakeid-bench --features lease --bench lease
