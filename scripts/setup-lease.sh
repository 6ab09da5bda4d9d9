#!/usr/bin/env bash
# Servers for the node-id lease tests: Debian's redis-server, etcd
# (etcd-server, etcdctl), openssl for the test certificates, and PostgreSQL 15 (on
# the image; installed from Debian if missing). Idempotent, non-interactive;
# installs only, starts nothing (tests/env/testenv.py does).
set -euo pipefail
need=()
command -v redis-server >/dev/null 2>&1 || need+=(redis-server)
[ -x /usr/lib/postgresql/15/bin/initdb ] || need+=(postgresql-15)
command -v etcd >/dev/null 2>&1 || need+=(etcd-server)
command -v etcdctl >/dev/null 2>&1 || need+=(etcd-client)
command -v openssl >/dev/null 2>&1 || need+=(openssl)
bash "$(dirname "$0")/apt-install.sh" setup-lease "${need[@]}"
