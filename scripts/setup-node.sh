#!/usr/bin/env bash
# Node package (@flakeid/node): Node.js >= 18 with npm, and the package's
# own install (which builds the napi-rs addon with a pinned @napi-rs/cli via npx,
# and installs the bench/test devDependencies from node/package-lock.json).
# Idempotent, non-interactive; reaches only Debian and the npm registry.
set -euo pipefail
cd "$(dirname "$0")/.."

node_major() { node -p 'process.versions.node.split(".")[0]' 2>/dev/null || echo 0; }
if ! command -v npm >/dev/null 2>&1 || [ "$(node_major)" -lt 18 ]; then
  bash scripts/apt-install.sh setup-node nodejs npm
fi
[ "$(node_major)" -ge 18 ] || { echo "setup-node: Node.js >= 18 is required, got $(node --version)" >&2; exit 1; }

# `npm install`, not `npm ci`: the lockfile cannot list other platforms' optional
# packages when the registry in use lacks them, and `npm ci` then fails. It runs the
# package's `install` script, i.e. builds the addon (cargo is incremental: a no-op
# when fresh).
(cd node && npm install --no-audit --no-fund)
