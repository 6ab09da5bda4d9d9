# A fleet with no node id configured (tests/fleet/run.py): pods (their own mount, UTS
# and pid namespaces, /tmp and /run) leasing from the fixture's kube-apiserver, with
# RBAC and without; container-like processes and unusable host guard directories
# outside Kubernetes; each through the Python package and the CLI. Needs root
# (unshare, mount), as make ci runs. After test-lease-bindings in make ci, which
# leaves the package installed and the CLI built: here they are checks, not builds.
.PHONY: test-fleet
##@ A fleet with no node id: pods, containers, host guards

# The CLI: test-rust's build (FLAKEID_CARGO_PKGS, mk/rust.mk says why).
test-fleet: setup-lease kube-apiserver python-venv ## pods on the fixture's kube-apiserver (RBAC allowed, denied), containers, unusable guards: no node id
	$(PIP_BUILD_ENV) $(PY_BIN)/pip install --quiet ./python
	$(CARGO) build -q $(FLAKEID_CARGO_PKGS)
	PY=$(PY_BIN)/python FLAKEID_CLI=$(TARGET)/debug/flakeid \
	  python3 tests/env/testenv.py run --kube -- python3 tests/fleet/run.py
