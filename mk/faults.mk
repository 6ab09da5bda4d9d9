# The fault suite (docs/faults.md): leased generators (flakeid serve, and
# in-process Python, Node and Rust generators) in their own network namespaces, a
# real lease store (Redis, PostgreSQL, etcd; plain and TLS) in another, a nemesis
# drawn from a printed seed, and a checker that shares no code with the generator.
#   make test-faults                 ~2 min, the six stores, 20 s of faults each, two at
#                                    once in topologies of their own (make ci)
#   make faults-long                 >= 30 min, 5 min of faults per store (not in CI)
#   make test-faults FAULTS_SEED=N   replay a run's schedule of faults
#   make test-faults FAULTS_DOC=1    also rewrite the tables in docs/faults.md
# Needs root (namespaces, nftables). Results: target/faults/<date>-<run>/; a test run
# leaves the tree clean unless FAULTS_DOC=1 (faults-long always writes the tables).
FAULTS_SEED ?=
FAULTS_ARGS ?=
FAULTS_DOC ?=
FAULTS_PY := $(CURDIR)/target/faults/venv/bin/python

.PHONY: setup-faults faults-build test-faults faults-long faults-clean

setup-faults: setup-lease
	bash scripts/setup-faults.sh

# The generators under test: the CLI (flakeid serve), the Rust driver, the Python
# package (into the suite's venv; pip rebuilds a folder every time, so only when a
# source it is built from changed) and the Node addon (setup-node, mk/node.mk).
FAULTS_PY_STAMP := target/faults/venv/.flakeid-installed
FAULTS_PY_SRC := $(shell git ls-files python bindings/python crates/flakeid-core crates/flakeid-lease-net 2>/dev/null) Cargo.lock

faults-build: setup-faults setup-node $(FAULTS_PY_STAMP)
	$(CARGO) build $(FLAKEID_CARGO_PKGS)

$(FAULTS_PY_STAMP): $(FAULTS_PY_SRC) | setup-faults
	$(PIP_BUILD_ENV) $(FAULTS_PY) -m pip install --quiet ./python
	touch $@

test-faults: faults-build
	python3 tests/faults/run.py short $(if $(FAULTS_DOC),,--no-doc) $(if $(FAULTS_SEED),--seed $(FAULTS_SEED)) $(FAULTS_ARGS)

faults-long: faults-build
	python3 tests/faults/run.py long $(if $(FAULTS_SEED),--seed $(FAULTS_SEED)) $(FAULTS_ARGS)

# Namespaces, processes and files left by a run that was killed (every run also
# removes those of dead runs when it starts).
faults-clean:
	python3 tests/faults/run.py cleanup
