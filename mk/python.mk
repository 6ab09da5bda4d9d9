# Python package: `make test-python`, `make bench-python`.
# Builds the package the way users install it — `pip install ./python` into a fresh
# venv (python/.venv, git-ignored) — then runs pytest and mypy.stubtest against it.
PYTHON ?= python3
PY_VENV := python/.venv
PY_BIN := $(CURDIR)/$(PY_VENV)/bin

.PHONY: setup-python test-python bench-python python-venv

setup-python:
	bash scripts/setup-python.sh

python-venv: setup-python
	test -x $(PY_BIN)/python || $(PYTHON) -m venv $(PY_VENV)

# pip always rebuilds and reinstalls a local folder, so the tests see the current source.
test-python: python-venv
	$(PIP_BUILD_ENV) $(PY_BIN)/pip install --quiet './python[test]'
	cd python && $(PY_BIN)/pytest tests
	# Run from outside python/ so the installed package (not the source folder) is checked.
	cd $(PY_VENV) && $(PY_BIN)/python -m mypy.stubtest flakeid

bench-python: python-venv
	$(PIP_BUILD_ENV) $(PY_BIN)/pip install --quiet './python[bench]'
	cd $(PY_VENV) && $(PY_BIN)/python $(CURDIR)/python/benchmarks/bench.py
