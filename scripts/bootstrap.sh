#!/usr/bin/env bash
# Installs what `make test` needs on a fresh machine; a no-op when all is present.
# Each language's own setup lives in scripts/setup-<name>.sh and is also called by
# its make target, so `make test-<name>` works on its own.
set -euo pipefail
cd "$(dirname "$0")/.."
# A cold run takes about 15 GB in the checkout (target/, dist/) and 5 GB of
# toolchains; say what there is, so a full disk is recognised as such when a step
# later fails with ENOSPC.
df -h . /tmp 2>/dev/null | sed 's/^/bootstrap: /' || true
rustup component add rustfmt clippy >/dev/null 2>&1 || true
for s in scripts/setup-*.sh; do
  [ -e "$s" ] || continue
  echo "bootstrap: $s"
  bash "$s"
done
