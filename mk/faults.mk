# The fault suite (docs/faults.md): leased generators (flakeid serve, and
# in-process Python, Node and Rust generators) in their own network namespaces, a
# real lease store (Redis, PostgreSQL, etcd; plain and TLS) in another, a nemesis
# drawn from a printed seed, and a checker that shares no code with the generator.
# test-faults runs two stores at once, in topologies of their own; FAULTS_SEED=N
# replays a run's schedule of faults, FAULTS_DOC=1 also rewrites docs/faults.md's tables.
# The checker's own cases (tests/faults/checker/check_test.py, on a recorded scenario)
# run first. Needs root (namespaces, nftables). Results: target/faults/<date>-<run>/; a test run
# leaves the tree clean unless FAULTS_DOC=1 (faults-long always writes the tables).
FAULTS_SEED ?=
FAULTS_ARGS ?=
FAULTS_DOC ?=
FAULTS_VENV := target/faults/venv
FAULTS_PY := $(CURDIR)/$(FAULTS_VENV)/bin/python

.PHONY: setup-faults faults-build test-faults faults-long faults-clean

##@ Faults (docs/faults.md; needs root)
# Beside the lease servers (setup-lease): libfaketime, nftables, iproute2 (ip netns),
# util-linux (nsenter, unshare, setpriv) and hostname from Debian, and a venv
# target/faults/venv with the checker's one PyPI package, numpy (sorting tens of
# millions of IDs), pinned; the harness is stdlib only, and the flakeid package is
# installed into the venv below, since it is built from this tree.
FAULTS_NUMPY := 2.2.6
setup-faults: setup-lease ## nftables, iproute2, util-linux, libfaketime; the checker's venv (numpy)
	@$(APT_INSTALL) setup-faults $(call need-file,/usr/lib/*/faketime/libfaketime.so.1,faketime) $(call need,nft,nftables) \
	  $(call need,ip,iproute2) $(if $(and $(shell command -v nsenter),$(shell command -v unshare),$(shell command -v setpriv)),,util-linux) \
	  $(call need,hostname,hostname)
	@[ -x $(FAULTS_VENV)/bin/python ] || $(PYTHON) -m venv $(FAULTS_VENV)
	@[ "$$($(FAULTS_VENV)/bin/python -c 'import numpy; print(numpy.__version__)' 2>/dev/null)" = $(FAULTS_NUMPY) ] \
	  || $(FAULTS_VENV)/bin/pip install --quiet numpy==$(FAULTS_NUMPY)

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

test-faults: faults-build ## six stores, 20 s of faults each (FAULTS_SEED=N replays; FAULTS_DOC=1)
	$(FAULTS_PY) tests/faults/checker/check_test.py
	python3 tests/faults/run.py short $(if $(FAULTS_DOC),,--no-doc) $(if $(FAULTS_SEED),--seed $(FAULTS_SEED)) $(FAULTS_ARGS)

faults-long: faults-build ## 5 min of faults per store; rewrites docs/faults.md's tables
	python3 tests/faults/run.py long $(if $(FAULTS_SEED),--seed $(FAULTS_SEED)) $(FAULTS_ARGS)

# Namespaces, processes and files left by a run that was killed (every run also
# removes those of dead runs when it starts).
faults-clean: ## namespaces, processes and files a killed run left
	python3 tests/faults/run.py cleanup
