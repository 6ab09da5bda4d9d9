# Python package: `make test-python`, `make bench-python`.
# Builds the package the way users install it — `pip install ./python` into a fresh
# venv (python/.venv, git-ignored) — then runs pytest and mypy.stubtest against it.
PYTHON ?= python3
PY_VENV := python/.venv
PY_BIN := $(CURDIR)/$(PY_VENV)/bin

.PHONY: setup-python setup-ruff lint-python test-python bench-python python-venv

##@ Python: python/ (flakeid-engine), pyo3
# A Python >= 3.9 with venv and pip (Debian's when missing); maturin, pytest and mypy
# come from PyPI into python/.venv; cargo is the workspace's toolchain.
PY_USABLE = $(PYTHON) -c 'import sys, venv, ensurepip; sys.exit(sys.version_info < (3, 9))' >/dev/null 2>&1
setup-python: ## a Python >= 3.9 with venv and pip
	@$(PY_USABLE) || $(APT_INSTALL) setup-python python3 python3-venv python3-pip
	@$(PY_USABLE) || { echo "setup-python: no usable $(PYTHON) (need >= 3.9 with venv + ensurepip)" >&2; exit 1; }

python-venv: setup-python
	test -x $(PY_BIN)/python || $(PYTHON) -m venv $(PY_VENV)

# ruff, pinned, from PyPI into a tools venv of its own (not python/.venv: make lint
# builds no wheel); its settings are ruff.toml's, at the root.
RUFF_VERSION := 0.17.5
PY_TOOLS := $(CURDIR)/target/py-tools
setup-ruff: setup-python ## ruff (pinned, PyPI) in target/py-tools
	@$(PY_TOOLS)/bin/ruff --version 2>/dev/null | grep -qx 'ruff $(RUFF_VERSION)' || { \
	  echo "setup-ruff: installing ruff $(RUFF_VERSION)"; \
	  [ -x $(PY_TOOLS)/bin/pip ] || $(PYTHON) -m venv $(PY_TOOLS); \
	  $(PY_TOOLS)/bin/pip install --quiet --disable-pip-version-check ruff==$(RUFF_VERSION); }

lint-python: setup-ruff ## ruff over the repository's Python: pycodestyle and pyflakes at 100 columns, and its format
	$(PY_TOOLS)/bin/ruff check .
	$(PY_TOOLS)/bin/ruff format --check .

# pip always rebuilds and reinstalls a local folder, so the tests see the current source.
# Then the framework adapters (python/tests-frameworks: Django, SQLAlchemy sync and
# async, Pydantic, docs/frameworks.md's blocks; the pinned test-frameworks extra) on
# SQLite and the fixture's PostgreSQL (setup-postgres-fixture); make test (TIER=test)
# leaves the adapters to make ci.
test-python: python-venv setup-postgres-fixture ## [TIER=test: no frameworks] pip install ./python into python/.venv, pytest, mypy.stubtest; Django, SQLAlchemy, Pydantic
	$(PIP_BUILD_ENV) PYTHON=$(PY_BIN)/python bash scripts/suite.sh python $(if $(TIER_CI),--frameworks)

bench-python: python-venv ## the package beside its peers
	$(PIP_BUILD_ENV) $(PY_BIN)/pip install --quiet './python[bench]'
	cd $(PY_VENV) && $(PY_BIN)/python $(CURDIR)/python/benchmarks/bench.py
