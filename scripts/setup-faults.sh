#!/usr/bin/env bash
# What the fault suite (tests/faults, `make test-faults`, docs/faults.md) needs:
# beside the lease servers (setup-lease, its make prerequisite), libfaketime,
# nftables, iproute2 (ip netns) and util-linux (nsenter, unshare, setpriv) from Debian, and a venv target/faults/venv with the checker's one
# PyPI package, pinned (the flakeid package is installed into it by mk/faults.mk,
# since it is built from this tree). Idempotent; installs only, starts nothing.
set -euo pipefail
cd "$(dirname "$0")/.."
need=()
ls /usr/lib/*/faketime/libfaketime.so.1 >/dev/null 2>&1 || need+=(faketime)
command -v nft >/dev/null 2>&1 || need+=(nftables)
command -v ip >/dev/null 2>&1 || need+=(iproute2)
for tool in nsenter unshare setpriv; do
  command -v "$tool" >/dev/null 2>&1 || { need+=(util-linux); break; }
done
command -v hostname >/dev/null 2>&1 || need+=(hostname)
bash scripts/apt-install.sh setup-faults "${need[@]}"

# The checker's numpy (sorting tens of millions of IDs); the harness is stdlib only.
NUMPY=2.2.6
venv=target/faults/venv
[ -x "$venv/bin/python" ] || "${PYTHON:-python3}" -m venv "$venv"
if [ "$("$venv/bin/python" -c 'import numpy; print(numpy.__version__)' 2>/dev/null)" != "$NUMPY" ]; then
  "$venv/bin/pip" install --quiet "numpy==$NUMPY"
fi
