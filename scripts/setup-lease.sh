#!/usr/bin/env bash
# Servers for the node-id lease tests (issues 7, 13): Debian's redis-server, etcd
# (etcd-server, etcdctl), openssl for the test certificates, and PostgreSQL 15 (on
# the image; installed from Debian if missing). Idempotent, non-interactive;
# installs only, starts nothing (tests/lease/run.sh does).
set -euo pipefail
need=()
command -v redis-server >/dev/null 2>&1 || need+=(redis-server)
[ -x /usr/lib/postgresql/15/bin/initdb ] || need+=(postgresql-15)
command -v etcd >/dev/null 2>&1 || need+=(etcd-server)
command -v etcdctl >/dev/null 2>&1 || need+=(etcd-client)
command -v openssl >/dev/null 2>&1 || need+=(openssl)
if [ ${#need[@]} -gt 0 ]; then
  if [ "$(id -u)" != 0 ] || ! command -v apt-get >/dev/null 2>&1; then
    echo "setup-lease: cannot install ${need[*]} (not root or no apt-get); their lease tests will be skipped" >&2
    exit 0
  fi
  echo "setup-lease: installing ${need[*]}"
  export DEBIAN_FRONTEND=noninteractive
  if ! { apt-get update -qq && apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null; }; then
    echo "setup-lease: installing ${need[*]} failed; their lease tests will be skipped" >&2
  fi
fi
