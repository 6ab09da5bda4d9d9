#!/usr/bin/env bash
# Integration tests of the PostgreSQL extension (issue 16), on the flakeid library
# that `make install-postgres` put into Debian's PostgreSQL 15. Starts private
# clusters on 127.0.0.1 (free ports, temporary directories, stopped on exit), as
# tests/lease/run.sh does:
#   1. preloaded, flakeid.datacenter = 11, flakeid.worker = 21: 8 concurrent pgbench
#      clients insert rows with `id bigint DEFAULT flakeid_next()` for a few seconds;
#      zero duplicates, every ID decodes to the configured node; the shared vectors
#      (tests/vectors) through SQL; IDs made in SQL decode the same in the Rust CLI,
#      Python and Node (those two when their packages are built); 100 sessions, and
#      4 sessions taking 800,000 IDs at once (past the 4,096 per ms cap).
#   2. not preloaded: flakeid_next() is an ERROR saying how to enable it; the pure
#      functions still work.
#   3. flakeid.layout = discord, flakeid.overflow = borrow: a burst far past the cap.
#   4. a bad flakeid.node: the server refuses to start and says which setting.
#   usage: tests/postgres/run.sh        (PGBENCH_SECS, default 4)
set -euo pipefail
cd "$(dirname "$0")/../.."
CARGO=${CARGO:-cargo}
PGBIN=/usr/lib/postgresql/15/bin
SECS=${PGBENCH_SECS:-4}
[ -f "$($PGBIN/pg_config --pkglibdir)/flakeid.so" ] || { echo "flakeid.so is not installed: run make install-postgres" >&2; exit 1; }
$CARGO build -q -p flakeid-cli
cli=$PWD/target/debug/flakeid

work=$(mktemp -d /tmp/flakeid-postgres.XXXXXX)
chmod 755 "$work"
clusters=()
as_pg() { if [ "$(id -u)" = 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi; }
cleanup() {
  for d in "${clusters[@]}"; do
    [ -f "$d/postmaster.pid" ] && as_pg "$PGBIN/pg_ctl" -D "$d" -m immediate -w stop >/dev/null 2>&1 || true
  done
  rm -rf "$work"
}
trap cleanup EXIT
free_port() {
  python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

# new_cluster NAME 'postgresql.conf lines' → initdb'd data directory in $work/NAME/data
new_cluster() {
  local dir=$work/$1
  mkdir -p "$dir"
  [ "$(id -u)" = 0 ] && chown postgres "$dir"
  as_pg "$PGBIN/initdb" -D "$dir/data" -U postgres -E UTF8 --no-sync --auth=trust >"$dir/initdb.log"
  printf '%s\n' "listen_addresses = '127.0.0.1'" "unix_socket_directories = '$dir'" "fsync = off" \
    "max_connections = 120" "$2" >> "$dir/data/postgresql.conf"
  clusters+=("$dir/data")
}
start() { # start NAME PORT
  as_pg "$PGBIN/pg_ctl" -D "$work/$1/data" -l "$work/$1/log" -w -o "-p $2" start >/dev/null
}

# burst PORT NODE LAYOUT: 4 sessions at once take 200,000 IDs each, far past the
# layout's 4,096 per ms: all unique, every one with the server's node id.
burst() {
  local psql=(psql -h 127.0.0.1 -p "$1" -U postgres -d postgres -X -q -v ON_ERROR_STOP=1) pids=() p
  "${psql[@]}" -c "CREATE TABLE burst (id bigint)"
  for _ in 1 2 3; do "${psql[@]}" -c "INSERT INTO burst SELECT flakeid_next_many(200000)" & pids+=($!); done
  "${psql[@]}" -c "INSERT INTO burst SELECT flakeid_next() FROM generate_series(1, 200000)" & pids+=($!)
  for p in "${pids[@]}"; do wait "$p"; done
  read -r n dups other <<<"$("${psql[@]}" -At -F ' ' -c "SELECT count(*), count(*) - count(DISTINCT id),
      count(*) FILTER (WHERE (flakeid_decompose(id, '$3')).node <> $2) FROM burst")"
  echo "  burst, 4 sessions: $n IDs, $dups duplicates, $other with another node id"
  [ "$n" = 800000 ] && [ "$dups" = 0 ] && [ "$other" = 0 ] || { echo "FAIL: burst" >&2; exit 1; }
}

echo "== 1. preloaded cluster: pgbench, vectors, cross-language decode"
new_cluster main "shared_preload_libraries = 'flakeid'
flakeid.datacenter = 11
flakeid.worker = 21"
port=$(free_port)
start main "$port"
PSQL=(psql -h 127.0.0.1 -p "$port" -U postgres -d postgres -X -q -v ON_ERROR_STOP=1)
"${PSQL[@]}" -c "CREATE EXTENSION flakeid" \
  -c "CREATE TABLE items (id bigint NOT NULL DEFAULT flakeid_next(), client int NOT NULL)"
echo 'INSERT INTO items (client) VALUES (:client_id);' > "$work/insert.sql"
pgbench -h 127.0.0.1 -p "$port" -U postgres -n -c 8 -j 2 -T "$SECS" -f "$work/insert.sql" postgres >"$work/pgbench.log" 2>&1 \
  || { cat "$work/pgbench.log"; exit 1; }
grep -E '^(number of (transactions actually processed|failed)|tps)' "$work/pgbench.log" | sed 's/^/  pgbench: /'
read -r rows distinct clients wrong_node <<<"$("${PSQL[@]}" -At -F ' ' -c "
  SELECT count(*), count(DISTINCT id), count(DISTINCT client),
         count(*) FILTER (WHERE (d.datacenter, d.worker, d.node) <> (11, 21, 11 << 5 | 21))
    FROM items, LATERAL flakeid_decompose(id) d")"
echo "  $rows rows from $clients clients, $distinct distinct IDs, $wrong_node with another node id"
[ "$rows" -gt 1000 ] && [ "$rows" = "$distinct" ] && [ "$clients" = 8 ] && [ "$wrong_node" = 0 ] \
  || { echo "FAIL: duplicates, too few rows, or a wrong node id" >&2; exit 1; }
# Many connections, one generator: 100 sessions each take 105 IDs, in batches and singly.
echo 'INSERT INTO many SELECT flakeid_next_many(20) UNION ALL SELECT flakeid_next();' > "$work/many.sql"
"${PSQL[@]}" -c "CREATE TABLE many (id bigint)"
pgbench -h 127.0.0.1 -p "$port" -U postgres -n -c 100 -j 2 -t 5 -f "$work/many.sql" postgres >"$work/many.log" 2>&1 \
  || { cat "$work/many.log"; exit 1; }
read -r n dups <<<"$("${PSQL[@]}" -At -F ' ' -c "SELECT count(*), count(*) - count(DISTINCT id) FROM many")"
[ "$n" = 10500 ] && [ "$dups" = 0 ] || { echo "FAIL: $n IDs from 100 sessions, $dups duplicates" >&2; exit 1; }
echo "  100 sessions: $n IDs, no duplicates"
burst "$port" $((11 << 5 | 21)) snowflake

python3 tests/postgres/crosscheck.py vectors "${PSQL[@]}"

# Time ranges prune partitions and use indexes (flakeid_in_range; PostgreSQL 15 plans
# `id <@ int8range` as a filter only).
plans=$("${PSQL[@]}" -At \
  -c "CREATE TABLE ev (id bigint NOT NULL DEFAULT flakeid_next()) PARTITION BY RANGE (id)" \
  -c "CREATE TABLE ev_10 PARTITION OF ev FOR VALUES FROM (flakeid_first_at('2026-10-01')) TO (flakeid_first_at('2026-11-01'))" \
  -c "CREATE TABLE ev_11 PARTITION OF ev FOR VALUES FROM (flakeid_first_at('2026-11-01')) TO (flakeid_first_at('2026-12-01'))" \
  -c "EXPLAIN (COSTS OFF) SELECT * FROM ev WHERE flakeid_in_range(id, '[2026-11-22, 2026-11-23)')" \
  -c "CREATE INDEX ON items (id)" -c "SET enable_seqscan = off" \
  -c "EXPLAIN (COSTS OFF) SELECT count(*) FROM items WHERE flakeid_in_range(id, tstzrange(now() - interval '1 s', now()))")
echo "$plans" | grep -q 'on ev_11' && ! echo "$plans" | grep -q 'on ev_10' && echo "$plans" | grep -q 'Index Cond: ((id >=' \
  || { echo "$plans"; echo "FAIL: flakeid_in_range neither pruned partitions nor used the index" >&2; exit 1; }
echo "  flakeid_in_range: partitions pruned at plan time, B-tree index used"
"${PSQL[@]}" -At -c "SELECT id, (extract(epoch FROM d.ts) * 1000)::bigint, d.datacenter, d.worker, d.node, d.sequence,
    flakeid_encode(id, 'base62'), flakeid_encode(id, 'base32'), flakeid_encode(id, 'hex')
  FROM (SELECT id FROM flakeid_next_many(300) id UNION ALL (SELECT id FROM items LIMIT 300)) i, LATERAL flakeid_decompose(id) d" > "$work/ids.txt"
python3 tests/postgres/crosscheck.py decode "$work/ids.txt" "$cli"

echo "== 2. not preloaded: a clear error, pure functions still work"
new_cluster plain ""
port2=$(free_port)
start plain "$port2"
PSQL2=(psql -h 127.0.0.1 -p "$port2" -U postgres -d postgres -X -q -v ON_ERROR_STOP=1)
"${PSQL2[@]}" -c "CREATE EXTENSION flakeid"
msg=$("${PSQL2[@]}" -v VERBOSITY=verbose -c "SELECT flakeid_next()" 2>&1 || true)
echo "$msg" | sed 's/^/  /'
echo "$msg" | grep -q "55000" && echo "$msg" | grep -q "shared_preload_libraries = 'flakeid'" \
  || { echo "FAIL: no clear error without preloading" >&2; exit 1; }
[ "$("${PSQL2[@]}" -At -c "SELECT flakeid_encode(910499571847892992, 'base62')")" = "$("$cli" decode 910499571847892992 --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["base62"])')" ]

echo "== 3. another layout and overflow = borrow"
new_cluster borrow "shared_preload_libraries = 'flakeid'
flakeid.layout = 'discord'
flakeid.node = 7
flakeid.overflow = 'borrow'"
port3=$(free_port)
start borrow "$port3"
psql -h 127.0.0.1 -p "$port3" -U postgres -d postgres -X -q -v ON_ERROR_STOP=1 -c "CREATE EXTENSION flakeid"
burst "$port3" 7 discord
# Functions without a layout name read the server's flakeid.layout.
[ "$(psql -h 127.0.0.1 -p "$port3" -U postgres -d postgres -X -At -c \
  "SELECT abs(extract(epoch FROM flakeid_timestamp(flakeid_next()) - now())) < 10 AND flakeid_first_at(now()) = flakeid_first_at(now(), 'discord')")" = t ] \
  || { echo "FAIL: the server's layout is not discord" >&2; exit 1; }

echo "== 4. a bad setting: the server refuses to start, naming it"
new_cluster bad "shared_preload_libraries = 'flakeid'
flakeid.node = 5000"
if start bad "$(free_port)" 2>/dev/null; then echo "FAIL: started with flakeid.node = 5000" >&2; exit 1; fi
grep -h 'flakeid.node' "$work/bad/log" | sed 's/^/  /'
grep -q 'invalid value for parameter "flakeid.node": node must be in 0..=1023, got 5000' "$work/bad/log" \
  || { echo "FAIL: the log does not name flakeid.node" >&2; exit 1; }
echo "postgres integration tests passed"
