#!/usr/bin/env bash
# What `make test-python` needs: a Python >= 3.9 with venv and pip (maturin, pytest
# and mypy come from PyPI into python/.venv; cargo is the workspace's toolchain).
# Idempotent and non-interactive; a no-op when all is present.
set -euo pipefail
PYTHON="${PYTHON:-python3}"
ok() {
  command -v "$PYTHON" >/dev/null 2>&1 &&
    "$PYTHON" -c 'import sys, venv, ensurepip; sys.exit(sys.version_info < (3, 9))' >/dev/null 2>&1
}
if ok; then
  exit 0
fi
bash "$(dirname "$0")/apt-install.sh" setup-python python3 python3-venv python3-pip
ok || { echo "setup-python: no usable $PYTHON (need >= 3.9 with venv + ensurepip)" >&2; exit 1; }
