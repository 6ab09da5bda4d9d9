#!/usr/bin/env bash
# Runs the lease tests against real servers: a private redis-server (plain and TLS
# ports, an ACL user), a private PostgreSQL 15 cluster (ssl=on; trust, md5, SCRAM and
# certificate logins) and two etcd servers (plain with auth, and TLS with client
# certificates), all listening on 127.0.0.1 only, on free ports, in a temporary
# directory, stopped on exit. The CA, server and client certificates are made here
# with openssl, per run. A server that cannot be installed is reported and its tests
# skip with a message; everything else must pass.
#   usage: tests/lease/run.sh [extra cargo test args]
#          tests/lease/run.sh --bindings   (the new URLs through every binding)
set -euo pipefail
mode=tests
if [ "${1:-}" = --bindings ]; then mode=bindings; shift; fi
cd "$(dirname "$0")/../.."
CARGO=${CARGO:-cargo}
bash scripts/setup-lease.sh

work=$(mktemp -d /tmp/flakeid-lease.XXXXXX)
chmod 755 "$work"
redis_pid=""
pg_data=""
etcd_pids=()
etcd_dirs=()
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
  for p in "${etcd_pids[@]}"; do kill -CONT "$p" 2>/dev/null || true; kill -9 "$p" 2>/dev/null || true; done
  # A test may have restarted an etcd on its data directory (a new pid).
  for d in "${etcd_dirs[@]}"; do pkill -9 -f "data-dir $d" 2>/dev/null || true; rm -rf "$d"; done
  rm -rf "$work"
}
trap cleanup EXIT

free_port() {
  python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])' 2>/dev/null \
    || echo $((20000 + RANDOM % 20000))
}
export FLAKEID_LEASE_REQUIRE=1

# Certificates: a CA, another CA (the "wrong CA" tests), a server certificate for
# IP 127.0.0.1 only (so https://localhost is a name mismatch), a client certificate
# (CN flakeid_cert: the PostgreSQL cert login's user name).
certs="$work/certs"
mkdir -p "$certs"
(
  cd "$certs"
  ec="-newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes"
  for ca in ca other-ca; do
    openssl req -x509 $ec -keyout $ca.key -out $ca.pem -days 2 -subj "/CN=flakeid test $ca" \
      -addext basicConstraints=critical,CA:TRUE -addext keyUsage=critical,keyCertSign,cRLSign 2>/dev/null
  done
  leaf() { # name CN extensions
    openssl req $ec -keyout "$1.key" -out "$1.csr" -subj "/CN=$2" 2>/dev/null
    printf '%s\n' "$3" "basicConstraints=CA:FALSE" > "$1.ext"
    openssl x509 -req -in "$1.csr" -CA ca.pem -CAkey ca.key -CAcreateserial -days 2 -out "$1.pem" -extfile "$1.ext" 2>/dev/null
  }
  leaf server 127.0.0.1 "subjectAltName=IP:127.0.0.1"
  leaf client flakeid_cert "extendedKeyUsage=clientAuth"
  chmod 644 ./*
)
export FLAKEID_TEST_CERTS="$certs"

if command -v redis-server >/dev/null 2>&1; then
  port=$(free_port)
  tport=$(free_port)
  redis-server --port "$port" --bind 127.0.0.1 --daemonize yes --save '' --appendonly no \
    --tls-port "$tport" --tls-cert-file "$certs/server.pem" --tls-key-file "$certs/server.key" \
    --tls-ca-cert-file "$certs/ca.pem" --tls-auth-clients optional \
    --dir "$work" --pidfile "$work/redis.pid" --logfile "$work/redis.log"
  for _ in $(seq 100); do redis-cli -h 127.0.0.1 -p "$port" ping >/dev/null 2>&1 && break; sleep 0.05; done
  redis_pid=$(cat "$work/redis.pid")
  redis-cli -h 127.0.0.1 -p "$port" ACL SETUSER flakeid on '>s3cret' '~*' '&*' '+@all' >/dev/null
  export FLAKEID_TEST_REDIS_URL="redis://127.0.0.1:$port/0" FLAKEID_TEST_REDIS_PID="$redis_pid"
  export FLAKEID_TEST_REDISS_URL="rediss://flakeid:s3cret@127.0.0.1:$tport/0?ca=$certs/ca.pem&cert=$certs/client.pem&key=$certs/client.key"
  echo "lease tests: redis-server $(redis-server --version | awk '{print $3}') on 127.0.0.1:$port, TLS on $tport"
else
  echo "SKIP: redis-server could not be installed: the Redis lease tests are skipped"
  export FLAKEID_LEASE_REQUIRE=0
fi

if [ -x "$PGBIN/initdb" ] && { [ "$(id -u)" != 0 ] || id postgres >/dev/null 2>&1; }; then
  mkdir -p "$work/pg"
  [ "$(id -u)" = 0 ] && chown postgres "$work/pg"
  pg_data="$work/pg/data"
  echo secret > "$work/pg/pw"
  [ "$(id -u)" = 0 ] && chown postgres "$work/pg/pw"
  as_pg "$PGBIN/initdb" -D "$pg_data" -U postgres --pwfile="$work/pg/pw" -E UTF8 --no-sync \
    --auth-local=trust --auth-host=scram-sha-256 >"$work/pg/initdb.log"
  # One role per login method, SCRAM for everyone else; TCP on 127.0.0.1 only, TLS
  # offered (ssl=on) and required for the certificate login.
  cat > "$pg_data/pg_hba.conf" <<HBA
local all all trust
host all flakeid_trust 127.0.0.1/32 trust
host all flakeid_md5 127.0.0.1/32 md5
host all flakeid_password 127.0.0.1/32 password
hostssl all flakeid_cert 127.0.0.1/32 cert
host all all 127.0.0.1/32 scram-sha-256
HBA
  for f in server.pem server.key ca.pem; do cp "$certs/$f" "$work/pg/$f"; done
  chmod 600 "$work/pg/server.key"
  [ "$(id -u)" = 0 ] && chown postgres "$work/pg/server.key" "$work/pg/server.pem" "$work/pg/ca.pem"
  pgport=$(free_port)
  as_pg "$PGBIN/pg_ctl" -D "$pg_data" -l "$work/pg/log" -w \
    -o "-p $pgport -c listen_addresses=127.0.0.1 -k $work/pg -c fsync=off -c max_connections=200 -c ssl=on -c ssl_cert_file=$work/pg/server.pem -c ssl_key_file=$work/pg/server.key -c ssl_ca_file=$work/pg/ca.pem" start >/dev/null
  as_pg "$PGBIN/psql" -h "$work/pg" -p "$pgport" -U postgres -q >/dev/null <<SQL
CREATE ROLE flakeid_trust LOGIN SUPERUSER;
CREATE ROLE flakeid_cert LOGIN SUPERUSER;
CREATE ROLE flakeid_password LOGIN SUPERUSER PASSWORD 'plain-pw';
SET password_encryption = 'md5';
CREATE ROLE flakeid_md5 LOGIN SUPERUSER PASSWORD 'md5-pw';
SQL
  export FLAKEID_TEST_POSTGRES_URL="postgres://postgres:secret@127.0.0.1:$pgport/postgres"
  export FLAKEID_TEST_POSTGRES_TRUST_URL="postgres://flakeid_trust@127.0.0.1:$pgport/postgres"
  export FLAKEID_TEST_POSTGRES_TLS_URL="postgres://postgres:secret@127.0.0.1:$pgport/postgres?sslmode=verify-full&sslrootcert=$certs/ca.pem&channel_binding=require"
  export FLAKEID_TEST_POSTGRES_PORT="$pgport" FLAKEID_TEST_PG_DATA="$pg_data"
  export FLAKEID_TEST_PG_PID=$(head -1 "$pg_data/postmaster.pid")
  echo "lease tests: PostgreSQL 15 cluster on 127.0.0.1:$pgport"
else
  echo "SKIP: PostgreSQL 15 could not be installed: the PostgreSQL lease tests are skipped"
  export FLAKEID_LEASE_REQUIRE=0
fi

# etcd: a plain server with authentication on (user root), and a TLS server that
# requires client certificates. Debian's etcd 3.4 (etcd-server).
start_etcd() { # name extra-args...
  local name=$1; shift
  local cport pport
  cport=$(free_port); pport=$(free_port)
  local scheme=http
  case "$*" in *--cert-file*) scheme=https ;; esac
  mkdir -p "$work/etcd-$name"
  # The data directory on tmpfs when there is one: etcd fsyncs every write, and 32
  # holders on a slow disk then miss their 2 s TTLs.
  local data="$work/etcd-$name/data"
  [ -d /dev/shm ] && data=$(mktemp -d /dev/shm/flakeid-etcd-$name.XXXXXX)
  etcd_dirs+=("$data")
  etcd --name "$name" --data-dir "$data" \
    --listen-client-urls "$scheme://127.0.0.1:$cport" --advertise-client-urls "$scheme://127.0.0.1:$cport" \
    --listen-peer-urls "http://127.0.0.1:$pport" --initial-advertise-peer-urls "http://127.0.0.1:$pport" \
    --initial-cluster "$name=http://127.0.0.1:$pport" "$@" >"$work/etcd-$name/log" 2>&1 &
  etcd_pids+=($!)
  disown $! # no "Killed" job report when cleanup kills it
  eval "etcd_${name}_port=$cport etcd_${name}_pid=$! etcd_${name}_dir=$work/etcd-$name"
}
if command -v etcd >/dev/null 2>&1; then
  start_etcd plain
  start_etcd tls --cert-file "$certs/server.pem" --key-file "$certs/server.key" \
    --client-cert-auth --trusted-ca-file "$certs/ca.pem"
  ctl=(env ETCDCTL_API=3 etcdctl --endpoints "http://127.0.0.1:$etcd_plain_port" --dial-timeout 1s)
  for _ in $(seq 200); do "${ctl[@]}" endpoint health >/dev/null 2>&1 && break; sleep 0.05; done
  "${ctl[@]}" user add root:etcd-pw >/dev/null
  "${ctl[@]}" auth enable >/dev/null
  export FLAKEID_TEST_ETCD_URL="etcd://root:etcd-pw@127.0.0.1:$etcd_plain_port/" FLAKEID_TEST_ETCD_PID="$etcd_plain_pid"
  export FLAKEID_TEST_ETCDS_URL="etcds://127.0.0.1:$etcd_tls_port/?ca=$certs/ca.pem&cert=$certs/client.pem&key=$certs/client.key"
  export FLAKEID_TEST_ETCDS_PID="$etcd_tls_pid" FLAKEID_TEST_ETCDS_DIR="$etcd_tls_dir"
  echo "lease tests: etcd $(etcd --version | awk 'NR==1{print $3}') on 127.0.0.1:$etcd_plain_port (auth), TLS on $etcd_tls_port"
else
  echo "SKIP: etcd-server could not be installed: the etcd lease tests are skipped"
  export FLAKEID_LEASE_REQUIRE=0
fi

if [ "$mode" = bindings ]; then
  CARGO=$CARGO bash tests/lease/bindings.sh
  exit 0
fi
$CARGO test -p flakeid-lease-tests "$@"
$CARGO test -p flakeid-core --features lease --lib lease
$CARGO test -p flakeid-lease-net
