#!/usr/bin/env bash
# Runs the `flakeid serve` tests (tests/serve/serve_test.py) against real servers:
# `flakeid serve` processes on free 127.0.0.1 ports, and for the lease tests a
# private redis-server and PostgreSQL 15 cluster started here exactly as
# tests/lease/run.sh starts them (127.0.0.1 only, free ports, stopped on exit).
#   usage: tests/serve/run.sh [unittest args, e.g. Routes]
set -euo pipefail
cd "$(dirname "$0")/../.."
CARGO=${CARGO:-cargo}
bash scripts/setup-serve.sh
bash scripts/setup-lease.sh
$CARGO build -q -p flakeid-cli
bin=$PWD/target/debug/flakeid

work=$(mktemp -d /tmp/flakeid-serve.XXXXXX)
chmod 755 "$work"
redis_pid=""
pg_data=""
PGBIN=/usr/lib/postgresql/15/bin
as_pg() { if [ "$(id -u)" = 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi; }
cleanup() {
  # Continue first, in case a failed test left a server stopped.
  if [ -n "$redis_pid" ]; then kill -CONT "$redis_pid" 2>/dev/null || true; kill "$redis_pid" 2>/dev/null || true; fi
  if [ -n "$pg_data" ] && [ -f "$pg_data/postmaster.pid" ]; then
    pm=$(head -1 "$pg_data/postmaster.pid")
    kill -CONT "$pm" 2>/dev/null || true
    for c in $(cat /proc/[0-9]*/stat 2>/dev/null | awk -v pm="$pm" '$4 == pm {print $1}'); do kill -CONT "$c" 2>/dev/null || true; done
    as_pg "$PGBIN/pg_ctl" -D "$pg_data" -m immediate -w stop >/dev/null 2>&1 || true
  fi
  rm -rf "$work"
}
trap cleanup EXIT

free_port() {
  python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])' 2>/dev/null \
    || echo $((20000 + RANDOM % 20000))
}

if command -v redis-server >/dev/null 2>&1; then
  port=$(free_port)
  redis-server --port "$port" --bind 127.0.0.1 --daemonize yes --save '' --appendonly no \
    --dir "$work" --pidfile "$work/redis.pid" --logfile "$work/redis.log"
  for _ in $(seq 100); do redis-cli -h 127.0.0.1 -p "$port" ping >/dev/null 2>&1 && break; sleep 0.05; done
  redis_pid=$(cat "$work/redis.pid")
  export FLAKEID_TEST_REDIS_URL="redis://127.0.0.1:$port/0" FLAKEID_TEST_REDIS_PID="$redis_pid"
  echo "serve tests: redis-server $(redis-server --version | awk '{print $3}') on 127.0.0.1:$port"
else
  echo "SKIP: redis-server could not be installed: the Redis serve tests are skipped"
fi

if [ -x "$PGBIN/initdb" ] && { [ "$(id -u)" != 0 ] || id postgres >/dev/null 2>&1; }; then
  mkdir -p "$work/pg"
  [ "$(id -u)" = 0 ] && chown postgres "$work/pg"
  pg_data="$work/pg/data"
  echo secret > "$work/pg/pw"
  [ "$(id -u)" = 0 ] && chown postgres "$work/pg/pw"
  as_pg "$PGBIN/initdb" -D "$pg_data" -U postgres --pwfile="$work/pg/pw" -E UTF8 --no-sync \
    --auth-local=trust --auth-host=scram-sha-256 >"$work/pg/initdb.log"
  # A trust login for one role, SCRAM for everyone else; TCP on 127.0.0.1 only.
  cat > "$pg_data/pg_hba.conf" <<HBA
local all all trust
host all flakeid_trust 127.0.0.1/32 trust
host all all 127.0.0.1/32 scram-sha-256
HBA
  pgport=$(free_port)
  as_pg "$PGBIN/pg_ctl" -D "$pg_data" -l "$work/pg/log" -w \
    -o "-p $pgport -c listen_addresses=127.0.0.1 -k $work/pg -c fsync=off -c max_connections=200" start >/dev/null
  as_pg "$PGBIN/psql" -h "$work/pg" -p "$pgport" -U postgres -qc "CREATE ROLE flakeid_trust LOGIN SUPERUSER" >/dev/null
  export FLAKEID_TEST_POSTGRES_URL="postgres://postgres:secret@127.0.0.1:$pgport/postgres"
  export FLAKEID_TEST_POSTGRES_TRUST_URL="postgres://flakeid_trust@127.0.0.1:$pgport/postgres"
  export FLAKEID_TEST_PG_PID=$(head -1 "$pg_data/postmaster.pid")
  echo "serve tests: PostgreSQL 15 cluster on 127.0.0.1:$pgport"
else
  echo "SKIP: PostgreSQL 15 could not be installed: the PostgreSQL serve tests are skipped"
fi

python3 tests/serve/serve_test.py "$bin" "$@"
