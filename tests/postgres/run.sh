#!/usr/bin/env bash
# Integration tests of the PostgreSQL extension, on the flakeid
# library that `make install-postgres` put into Debian's PostgreSQL 15. Starts
# private clusters on 127.0.0.1 (ports below the ephemeral range, temporary
# directories, every cluster stopped on exit). Sections, in this order:
#   basic     preloaded, flakeid.datacenter = 11, flakeid.worker = 21: 8 concurrent
#             pgbench clients insert rows with `id bigint DEFAULT flakeid_next()`;
#             zero duplicates, every ID with the configured node; the shared vectors
#             (tests/vectors) through SQL; IDs made in SQL decode the same in the Rust
#             CLI, Python and Node (when built); 100 sessions; 4 sessions taking
#             800,000 IDs at once; partition pruning and index use by flakeid_in_range
#   plain     not preloaded: flakeid_next() is an ERROR saying how; pure functions work
#   borrow    flakeid.layout = discord, flakeid.overflow = borrow: a burst past the cap
#   settings  ALTER SYSTEM refuses a bad node, layout or typo'd flakeid.* name and a
#             node/datacenter conflict (naming setting, range and file); a reload logs
#             a bad value; a bad value at start is refused by flakeid_next() naming it
#             and the file; an unset node is an error, not node 0
#   schema    installed in a schema outside search_path, with look-alike types,
#             functions and operators in public: same results; no backtrace in DETAIL
#             or CONTEXT; error LOCATIONs name the SQL function
#   upgrade   CREATE EXTENSION flakeid VERSION '0.1.0' + ALTER EXTENSION UPDATE equals a
#             fresh install; pg_dump/pg_restore of a table with DEFAULT flakeid_next()
#   standby   a physical standby (pg_basebackup -R) refuses flakeid_next() and _many()
#             (25006) and has the primary's high-water mark
#   promote   the standby promoted while its old primary keeps issuing: refused until
#             renumbered, then 0 IDs shared with the old primary
#   crash     kill -9 of a backend while borrowing seconds ahead (postmaster restart):
#             0 duplicates
#   clock     failover to a standby whose clock is behind (libfaketime), confirmed
#             with flakeid_confirm_node(): refused while behind, then 0 duplicates
#   copies    tests/postgres/copies.py: a base backup and a standby without
#             standby.signal started as primaries (refused as copies), PITR of a
#             borrowing server then confirmed, pg_upgrade of a borrowing server, kill -9
#             of the postmaster then pg_ctl start, passwords of a lease URL in the log:
#             0 duplicates across both sides, no password shown
#   lease     flakeid.lease on the Redis, PostgreSQL and etcd of tests/env/testenv.py
#             (run.sh starts them when FLAKEID_TEST_REDIS_URL is unset): a bad URL,
#             a conflict with flakeid.node and a short TTL refused by ALTER SYSTEM
#             (no password in any message), the URL hidden from non-superusers; per
#             store, two clusters on one URL lease two node ids and share no ID; the
#             store wiped: flakeid_next() refuses, then resumes by itself, 0 IDs
#             shared; a standby takes no lease, and promoted while its old primary
#             keeps issuing it leases its own node id: 0 IDs shared, no operator step
#   docs      every ```sql block of README.md and docs/*.md, as written: each
#             in a database of its own on a server set up as the README says (preloaded,
#             flakeid.node = 1), with the extension created unless the block creates it;
#             blocks come from tests/docs/blocks.py (the one parser of the docs' fences);
#             a failure names the doc and the line
#   usage: tests/postgres/run.sh [SECTION...]     (PGBENCH_SECS, default 4)
set -euo pipefail
cd "$(dirname "$0")/../.."
CARGO=${CARGO:-cargo}
. tests/postgres/lib.sh
SECS=${PGBENCH_SECS:-4}
FAKETIME_LIB=/usr/lib/x86_64-linux-gnu/faketime/libfaketime.so.1
ALL=(basic plain borrow settings schema upgrade standby promote crash clock copies lease docs)
SECTIONS=("$@")
[ ${#SECTIONS[@]} -gt 0 ] || SECTIONS=("${ALL[@]}")
[ -f "$($PGBIN/pg_config --pkglibdir)/flakeid.so" ] || { echo "flakeid.so is not installed: run make install-postgres" >&2; exit 1; }
# The lease section needs the stores of the one test environment: start them for
# the whole run (and stop them after it).
if [[ " ${SECTIONS[*]} " == *" lease "* ]] && [ -z "${FLAKEID_TEST_REDIS_URL:-}" ]; then
  "${MAKE:-make}" --no-print-directory setup-lease
  exec python3 tests/env/testenv.py run --redis --postgres --etcd -- bash "$0" "${SECTIONS[@]}"
fi

work=$(mktemp -d /tmp/flakeid-postgres.XXXXXX)
chmod 755 "$work"
clusters=()
cleanup() {
  local rc=$?
  if [ "$rc" != 0 ]; then
    # What the servers said, for the failure above.
    for d in "${clusters[@]}"; do
      [ -f "$(dirname "$d")/log" ] && { echo "--- $(dirname "$d")/log (last 25 lines)"; tail -25 "$(dirname "$d")/log"; } >&2
    done
  fi
  for d in "${clusters[@]}"; do
    [ -f "$d/postmaster.pid" ] && as_pg "$PGBIN/pg_ctl" -D "$d" -m immediate -w stop >/dev/null 2>&1 || true
  done
  rm -rf "$work"
}
trap cleanup EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

# new_cluster NAME 'postgresql.conf lines' → a cluster in $work/NAME/data, made by the
# test environment (tests/env/testenv.py initdb: 127.0.0.1 only, its socket in
# $work/NAME, fsync = off, every TCP login and replication trusted); this script
# starts and stops it itself (start, stop).
new_cluster() {
  local dir=$work/$1 args=() line
  while IFS= read -r line; do [ -n "$line" ] && args+=(--conf "$line"); done <<<"max_connections = 120
$2"
  python3 tests/env/testenv.py initdb "$dir" --trust "${args[@]}" >"$work/$1.initdb.log" \
    || { cat "$work/$1.initdb.log" >&2; fail "testenv.py initdb $dir"; }
  clusters+=("$dir/data")
}
# start NAME PORT [VAR=value...]: the environment of the postmaster (libfaketime)
start() {
  local name=$1 port=$2
  shift 2
  as_pg env "$@" "$PGBIN/pg_ctl" -D "$work/$name/data" -l "$work/$name/log" -w -t 60 -o "-p $port" start >/dev/null
}
stop() { as_pg "$PGBIN/pg_ctl" -D "$work/$1/data" -m fast -w stop >/dev/null; }
# psql on PORT, quiet, stopping at the first error; q prints unaligned results
sql() { local p=$1; shift; psql -h 127.0.0.1 -p "$p" -U postgres -d "${DB:-postgres}" -X -q -v ON_ERROR_STOP=1 "$@"; }
q() { sql "$1" -At -F ' ' -c "$2"; }
# expect_error PORT SQL SQLSTATE REGEX: fails unless SQL fails with that SQLSTATE and a
# message matching REGEX; never with a Rust backtrace or a location in error.rs.
expect_error() {
  local out
  if out=$(sql "$1" -v VERBOSITY=verbose -c "$2" 2>&1); then
    echo "$out"; fail "no error from: $2"
  fi
  # (Here-strings, not pipes: grep -q stops reading at the first match, and a writer
  # still writing then dies of SIGPIPE, which pipefail would report as a failure.)
  grep -q "ERROR:  $3:" <<<"$out" || { echo "$out"; fail "not SQLSTATE $3: $2"; }
  grep -Eq -- "$4" <<<"$out" || { echo "$out"; fail "message does not match /$4/: $2"; }
  if grep -Eiq 'backtrace|rust_begin_unwind|std::panicking|error\.rs:' <<<"$out"; then
    echo "$out"; fail "a Rust backtrace or error.rs location reached the client: $2"
  fi
  grep -m1 'ERROR:' <<<"$out" | sed 's/^/  refused: /'
}
# wait_replay PRIMARY_PORT STANDBY_PORT: the standby has replayed all the primary wrote
wait_replay() {
  local lsn i
  lsn=$(q "$1" "SELECT pg_current_wal_lsn()")
  for i in $(seq 600); do
    [ "$(q "$2" "SELECT pg_last_wal_replay_lsn() >= '$lsn'")" = t ] && return 0
    sleep 0.05
  done
  fail "the standby on port $2 did not replay up to $lsn"
}
# basebackup FROM_PORT NAME: a physical standby of the cluster on FROM_PORT in $work/NAME
basebackup() {
  mkdir -p "$work/$2"
  [ "$(id -u)" = 0 ] && chown postgres "$work/$2"
  as_pg "$PGBIN/pg_basebackup" -h 127.0.0.1 -p "$1" -U postgres -D "$work/$2/data" -R -X stream --no-sync
  clusters+=("$work/$2/data")
}
# wait_accepting PORT: after a crash restart
wait_accepting() {
  local i
  for i in $(seq 600); do
    q "$1" "SELECT 1" >/dev/null 2>&1 && return 0
    sleep 0.05
  done
  fail "the server on port $1 did not come back"
}

# burst PORT NODE LAYOUT: 4 sessions at once take 200,000 IDs each, far past the
# layout's 4,096 per ms: all unique, every one with the server's node id.
burst() {
  local pids=() p
  sql "$1" -c "CREATE TABLE burst (id bigint)"
  for _ in 1 2 3; do sql "$1" -c "INSERT INTO burst SELECT flakeid_next_many(200000)" & pids+=($!); done
  sql "$1" -c "INSERT INTO burst SELECT flakeid_next() FROM generate_series(1, 200000)" & pids+=($!)
  for p in "${pids[@]}"; do wait "$p"; done
  read -r n dups other <<<"$(q "$1" "SELECT count(*), count(*) - count(DISTINCT id),
      count(*) FILTER (WHERE (flakeid_decompose(id, '$3')).node <> $2) FROM burst")"
  echo "  burst, 4 sessions: $n IDs, $dups duplicates, $other with another node id"
  [ "$n" = 800000 ] && [ "$dups" = 0 ] && [ "$other" = 0 ] || fail "burst"
}

section_basic() {
  echo "== basic: preloaded cluster: pgbench, vectors, cross-language decode"
  # make's package selection (Makefile, RUST_TEST_PKGS): one build of the dependencies.
  $CARGO build -q ${FLAKEID_CARGO_PKGS:--p flakeid-cli}
  local cli=${CARGO_TARGET_DIR:-$PWD/target}/debug/flakeid port
  new_cluster main "shared_preload_libraries = 'flakeid'
flakeid.datacenter = 11
flakeid.worker = 21"
  free_port port
  start main "$port"
  sql "$port" -c "CREATE EXTENSION flakeid" \
    -c "CREATE TABLE items (id bigint NOT NULL DEFAULT flakeid_next(), client int NOT NULL)"
  echo 'INSERT INTO items (client) VALUES (:client_id);' > "$work/insert.sql"
  pgbench -h 127.0.0.1 -p "$port" -U postgres -n -c 8 -j 2 -T "$SECS" -f "$work/insert.sql" postgres >"$work/pgbench.log" 2>&1 \
    || { cat "$work/pgbench.log"; exit 1; }
  grep -E '^(number of (transactions actually processed|failed)|tps)' "$work/pgbench.log" | sed 's/^/  pgbench: /'
  read -r rows distinct clients wrong_node <<<"$(q "$port" "
    SELECT count(*), count(DISTINCT id), count(DISTINCT client),
           count(*) FILTER (WHERE (d.datacenter, d.worker, d.node) <> (11, 21, 11 << 5 | 21))
      FROM items, LATERAL flakeid_decompose(id) d")"
  echo "  $rows rows from $clients clients, $distinct distinct IDs, $wrong_node with another node id"
  [ "$rows" -gt 1000 ] && [ "$rows" = "$distinct" ] && [ "$clients" = 8 ] && [ "$wrong_node" = 0 ] \
    || fail "duplicates, too few rows, or a wrong node id"
  # Many connections, one generator: 100 sessions each take 105 IDs, in batches and singly.
  echo 'INSERT INTO many SELECT flakeid_next_many(20) UNION ALL SELECT flakeid_next();' > "$work/many.sql"
  sql "$port" -c "CREATE TABLE many (id bigint)"
  pgbench -h 127.0.0.1 -p "$port" -U postgres -n -c 100 -j 2 -t 5 -f "$work/many.sql" postgres >"$work/many.log" 2>&1 \
    || { cat "$work/many.log"; exit 1; }
  read -r n dups <<<"$(q "$port" "SELECT count(*), count(*) - count(DISTINCT id) FROM many")"
  [ "$n" = 10500 ] && [ "$dups" = 0 ] || fail "$n IDs from 100 sessions, $dups duplicates"
  echo "  100 sessions: $n IDs, no duplicates"
  burst "$port" $((11 << 5 | 21)) snowflake
  # flakeid_stats(), read from yet another session: every ID of every session so far
  # counted exactly once (each backend adds its counts when its transaction ends),
  # the burst's waits for the next ms counted, no lead in overflow = wait.
  local issued waits wait_us lead rollbacks failed
  failed=$(sed -n 's/^number of failed transactions: \([0-9]*\).*/\1/p' "$work/pgbench.log")
  read -r issued waits wait_us lead rollbacks <<<"$(q "$port" \
    "SELECT ids_issued, tick_waits, tick_wait_us, lead_ms, clock_rollbacks FROM flakeid_stats()")"
  echo "  flakeid_stats(): $issued IDs issued, $waits tick waits ($wait_us µs), lead $lead ms, $rollbacks rollbacks"
  [ "${failed:-0}" = 0 ] && [ "$issued" = $((rows + 10500 + 800000)) ] \
    || fail "flakeid_stats() counted $issued IDs, the sessions took $((rows + 10500 + 800000)) ($failed failed)"
  [ "$waits" -gt 0 ] && [ "$wait_us" -gt 0 ] && [ "$lead" = 0 ] && [ "$rollbacks" = 0 ] \
    || fail "flakeid_stats() after the burst: $waits waits, $wait_us µs, lead $lead, $rollbacks rollbacks"

  python3 tests/postgres/crosscheck.py vectors psql -h 127.0.0.1 -p "$port" -U postgres -d postgres -X -q -v ON_ERROR_STOP=1

  # Time ranges prune partitions and use indexes (flakeid_in_range; PostgreSQL 15
  # plans `id <@ int8range` as a filter only). The form without a layout name is
  # STABLE: partitions are pruned at executor start (Subplans Removed).
  local plans
  plans=$(sql "$port" -At \
    -c "CREATE TABLE ev (id bigint NOT NULL DEFAULT flakeid_next()) PARTITION BY RANGE (id)" \
    -c "CREATE TABLE ev_10 PARTITION OF ev FOR VALUES FROM (flakeid_first_at('2026-10-01')) TO (flakeid_first_at('2026-11-01'))" \
    -c "CREATE TABLE ev_11 PARTITION OF ev FOR VALUES FROM (flakeid_first_at('2026-11-01')) TO (flakeid_first_at('2026-12-01'))" \
    -c "EXPLAIN (COSTS OFF) SELECT * FROM ev WHERE flakeid_in_range(id, '[2026-11-22, 2026-11-23)')" \
    -c "EXPLAIN (COSTS OFF) SELECT * FROM ev WHERE flakeid_in_range(id, '[2026-10-22, 2026-10-23)', 'snowflake')" \
    -c "CREATE INDEX ON items (id)" -c "SET enable_seqscan = off" \
    -c "EXPLAIN (COSTS OFF) SELECT count(*) FROM items WHERE flakeid_in_range(id, tstzrange(now() - interval '1 s', now()))")
  [ "$(grep -c 'on ev_1[01]' <<<"$plans")" = 2 ] && grep -q 'on ev_11' <<<"$plans" && grep -q 'on ev_10' <<<"$plans" \
    && grep -q 'Index Cond: ((id >=' <<<"$plans" \
    || { echo "$plans"; fail "flakeid_in_range neither pruned partitions nor used the index"; }
  echo "  flakeid_in_range: partitions pruned (one scanned per query), B-tree index used"
  sql "$port" -At -c "SELECT id, (extract(epoch FROM d.ts) * 1000)::bigint, d.datacenter, d.worker, d.node, d.sequence,
      flakeid_encode(id, 'base62'), flakeid_encode(id, 'base32'), flakeid_encode(id, 'hex')
    FROM (SELECT id FROM flakeid_next_many(300) id UNION ALL (SELECT id FROM items LIMIT 300)) i, LATERAL flakeid_decompose(id) d" \
    > "$work/ids.txt"
  python3 tests/postgres/crosscheck.py decode "$work/ids.txt" "$cli"
}

section_plain() {
  echo "== plain: not preloaded: a clear error, pure functions still work"
  local port
  new_cluster plain ""
  free_port port
  start plain "$port"
  sql "$port" -c "CREATE EXTENSION flakeid"
  expect_error "$port" "SELECT flakeid_next()" 55000 "shared_preload_libraries = 'flakeid'"
  expect_error "$port" "SELECT flakeid_next_many(3)" 55000 "^ERROR:  55000: flakeid_next_many\(\) needs the flakeid library preloaded"
  [ "$(q "$port" "SELECT flakeid_encode(910499571847892992, 'base62')")" = "15G63YLn9Ae" ] || fail "pure functions (seed vector 001 in base62)"
}

section_borrow() {
  echo "== borrow: another layout and overflow = borrow"
  local port issued lead
  new_cluster borrow "shared_preload_libraries = 'flakeid'
flakeid.layout = 'discord'
flakeid.node = 7
flakeid.overflow = 'borrow'"
  free_port port
  start borrow "$port"
  sql "$port" -c "CREATE EXTENSION flakeid"
  burst "$port" 7 discord
  # Borrowing runs ahead of the clock, never past flakeid.max_borrow_ms (2000).
  read -r issued lead <<<"$(q "$port" "SELECT ids_issued, lead_ms FROM flakeid_stats()")"
  echo "  flakeid_stats(): $issued IDs issued, lead $lead ms"
  [ "$issued" = 800000 ] && [ "$lead" -le 2000 ] || fail "flakeid_stats() after a borrowing burst: $issued IDs, lead $lead ms"
  # Functions without a layout name read the server's flakeid.layout.
  [ "$(q "$port" "SELECT abs(extract(epoch FROM flakeid_timestamp(flakeid_next()) - now())) < 10
      AND flakeid_first_at(now()) = flakeid_first_at(now(), 'discord')")" = t ] || fail "the server's layout is not discord"
}

section_settings() {
  echo "== settings: refused when set, naming the setting, its range and its file"
  local port data=$work/conf/data
  new_cluster conf "shared_preload_libraries = 'flakeid'
flakeid.node = 5"
  free_port port
  start conf "$port"
  sql "$port" -c "CREATE EXTENSION flakeid"
  expect_error "$port" "ALTER SYSTEM SET flakeid.node = 5000" 22023 \
    'invalid value for parameter "flakeid.node": node must be in 0\.\.=1023, got 5000'
  expect_error "$port" "ALTER SYSTEM SET flakeid.layout = 'bogus'" 22023 \
    'invalid value for parameter "flakeid.layout": layout must be one of snowflake, .*got "bogus"'
  expect_error "$port" "ALTER SYSTEM SET flakeid.wroker = 7" 42704 '"flakeid.wroker"'
  expect_error "$port" "ALTER SYSTEM SET flakeid.clock_backwards = 'later'" 22023 'flakeid.clock_backwards'
  expect_error "$port" "ALTER SYSTEM SET flakeid.max_wait_ms = 86400001" 22023 'flakeid.max_wait_ms.*86400000'
  expect_error "$port" "ALTER SYSTEM SET flakeid.max_sequence = 5" 22023 \
    'invalid value for parameter "flakeid.max_sequence": max_sequence must be 2\^k - 1 in 0\.\.=4095 .*got 5 \(flakeid.layout is snowflake\)'
  expect_error "$port" "ALTER SYSTEM SET flakeid.datacenter = 3" 22023 \
    "flakeid.datacenter = 3 cannot be set while flakeid.node = 5 \($data/postgresql.conf line [0-9]+\) is set"
  # A layout and node changed in two steps: each is checked against the other as the
  # files hold it (what the next start applies), not against the running values.
  sql "$port" -c "ALTER SYSTEM SET flakeid.layout = 'sonyflake'" -c "ALTER SYSTEM SET flakeid.node = 60000"
  expect_error "$port" "ALTER SYSTEM SET flakeid.layout = 'discord'" 22023 \
    "the discord layout cannot hold flakeid.node = 60000 \($data/postgresql.auto.conf line [0-9]+\)"
  # A bad value written by hand is reported at reload, before any restart.
  echo "flakeid.worker = 3" >> "$data/postgresql.conf"
  q "$port" "SELECT pg_reload_conf()" >/dev/null
  local i
  for i in $(seq 600); do grep -q 'invalid value for parameter "flakeid.worker"' "$work/conf/log" && break; sleep 0.05; done
  grep -m1 'invalid value for parameter "flakeid.worker"' "$work/conf/log" | sed 's/^.*LOG: */  reload: /'
  grep -q 'flakeid.worker = 3 cannot be set while flakeid.node = 60000' "$work/conf/log" || fail "the reload did not report flakeid.worker"
  sed -i '$d' "$data/postgresql.conf"
  # The two-step change applies at the next start.
  stop conf
  start conf "$port"
  [ "$(q "$port" "SELECT (flakeid_decompose(flakeid_next(), 'sonyflake')).node")" = 60000 ] || fail "sonyflake node 60000"
  echo "  ALTER SYSTEM flakeid.layout = 'sonyflake', flakeid.node = 60000: applied at restart"

  # A bad value at start (in postgresql.auto.conf by hand): the server starts (a
  # setting must not take the database down), warns, and flakeid_next() refuses.
  stop conf
  printf '%s\n' "flakeid.layout = 'snowflake'" "flakeid.node = 5000" > "$data/postgresql.auto.conf"
  start conf "$port"
  grep -q 'WARNING:  invalid value for parameter "flakeid.node": node must be in 0..=1023, got 5000' "$work/conf/log" \
    || fail "no warning at start for flakeid.node = 5000"
  expect_error "$port" "SELECT flakeid_next()" 22023 \
    "flakeid.node = 5000 \($data/postgresql.auto.conf line 2\) was refused when the server started"
  expect_error "$port" "SELECT * FROM flakeid_next_many(2)" 22023 'LOCATION:  flakeid_next_many, server\.rs'

  # No node at all: an error, never node 0.
  stop conf
  : > "$data/postgresql.auto.conf"
  sed -i '/^flakeid\.node/d' "$data/postgresql.conf"
  start conf "$port"
  expect_error "$port" "SELECT flakeid_next()" 22023 "this server has no node id: flakeid.node, flakeid.datacenter and flakeid.worker, or flakeid.lease must be set"

  # node and datacenter/worker both in postgresql.conf: the error names both settings.
  stop conf
  printf '%s\n' "flakeid.node = 5" "flakeid.datacenter = 1" "flakeid.worker = 2" >> "$data/postgresql.conf"
  start conf "$port"
  expect_error "$port" "SELECT flakeid_next()" 22023 \
    "invalid value for parameter \"flakeid.datacenter\": flakeid.datacenter = 1 cannot be set while flakeid.node = 5 is set"
  stop conf

  # flakeid.max_sequence = 0: one ID per ms, so a batch waits out a tick for each ID
  # after the first, and flakeid_stats() counts those waits.
  local seq_data=$work/seq/data issued waits wait_us
  new_cluster seq "shared_preload_libraries = 'flakeid'
flakeid.node = 6
flakeid.max_sequence = 0"
  start seq "$port"
  sql "$port" -c "CREATE EXTENSION flakeid"
  [ "$(q "$port" "SELECT count(*), count(DISTINCT d.ts), max(d.sequence), min(d.node)
      FROM flakeid_next_many(50) id, flakeid_decompose(id) d")" = "50 50 0 6" ] \
    || fail "flakeid.max_sequence = 0: not one ID per ms"
  read -r issued waits wait_us <<<"$(q "$port" "SELECT ids_issued, tick_waits, tick_wait_us FROM flakeid_stats()")"
  echo "  flakeid.max_sequence = 0: 50 IDs in 50 ms; flakeid_stats(): $issued issued, $waits tick waits, $wait_us µs"
  [ "$issued" = 50 ] && [ "$waits" -ge 40 ] && [ "$waits" -le 49 ] && [ "$wait_us" -ge 20000 ] \
    || fail "flakeid_stats() with max_sequence = 0: $issued issued, $waits waits, $wait_us µs"

  # flakeid.lease_ttl_ms without flakeid.lease means nothing: refused as the core
  # refuses it (naming the setting and its file), not ignored.
  stop seq
  echo "flakeid.lease_ttl_ms = 5000" >> "$seq_data/postgresql.conf"
  start seq "$port"
  expect_error "$port" "SELECT flakeid_next()" 22023 \
    'invalid value for parameter "flakeid.lease_ttl_ms": lease_ttl_ms is set but lease is not'
  expect_error "$port" "SELECT flakeid_next()" 22023 "HINT:  flakeid.lease_ttl_ms is set in $seq_data/postgresql.conf line [0-9]+"
}

section_schema() {
  echo "== schema: installed outside search_path, look-alikes in public"
  local port out
  new_cluster schema "shared_preload_libraries = 'flakeid'
flakeid.datacenter = 17
flakeid.worker = 25"
  free_port port
  start schema "$port"
  sql "$port" <<'SQL'
CREATE SCHEMA ext;
CREATE EXTENSION flakeid SCHEMA ext;
-- Look-alikes a search_path could find first: none may change a result.
CREATE TYPE public.flakeid_parts AS (ts text, datacenter text, worker text, node text, sequence text, extra int);
CREATE FUNCTION public.flakeid_range(tstzrange) RETURNS int8range LANGUAGE sql AS 'SELECT int8range(0, NULL)';
CREATE FUNCTION public.flakeid_range(tstzrange, text) RETURNS int8range LANGUAGE sql AS 'SELECT int8range(0, NULL)';
CREATE FUNCTION public.lower(int8range) RETURNS bigint LANGUAGE sql AS 'SELECT 0::bigint';
CREATE FUNCTION public.yes(bigint, bigint) RETURNS boolean LANGUAGE sql AS 'SELECT true';
CREATE OPERATOR public.>= (LEFTARG = bigint, RIGHTARG = bigint, FUNCTION = public.yes);
CREATE OPERATOR public.<= (LEFTARG = bigint, RIGHTARG = bigint, FUNCTION = public.yes);
CREATE TABLE public.items (id bigint PRIMARY KEY DEFAULT ext.flakeid_next(), v int);
SQL
  out=$(sql "$port" -At -F ' ' <<'SQL'
SET search_path = public, pg_catalog;
INSERT INTO items (v) SELECT g FROM generate_series(1, 100) g;
SELECT pg_typeof(ext.flakeid_decompose(910499571847892992)), (ext.flakeid_decompose(910499571847892992)).worker,
       (ext.flakeid_decompose(910499571847892992, 'snowflake')).node;
SELECT count(*) FROM items, ext.flakeid_decompose(id) d WHERE (d.datacenter, d.worker) = (17, 25);
SELECT ext.flakeid_in_range(0, '[2026-11-22, 2026-11-23)'), ext.flakeid_in_range(0, '[2026-11-22, 2026-11-23)', 'snowflake'),
       ext.flakeid_in_range(ext.flakeid_compose('2026-11-22 12:00+00', 1, 0), '[2026-11-22, 2026-11-23)');
SQL
  )
  echo "$out" | sed 's/^/  /'
  [ "$out" = "ext.flakeid_parts 25 569
100
f f t" ] || fail "a look-alike in public changed a result, or the extension failed outside search_path"
  # Errors: SQLSTATE and message, no Rust backtrace, a LOCATION in the SQL function's file.
  expect_error "$port" "SELECT ext.flakeid_decompose(-5)" 22003 'invalid value for argument "id"'
  expect_error "$port" "SELECT ext.flakeid_first_at('infinity'::timestamptz)" 22008 'LOCATION:  flakeid, time_range\.rs'
  expect_error "$port" "SELECT ext.flakeid_decode('zz!', 'base62')" 22P02 'LOCATION:  flakeid, text\.rs'
  expect_error "$port" "SELECT ext.flakeid_compose(now(), 5000, 0)" 22023 'invalid value for argument "node"'
  # Only the forms with a layout name are IMMUTABLE (usable in generated columns).
  expect_error "$port" "CREATE TABLE public.bad (id bigint, at timestamptz GENERATED ALWAYS AS (ext.flakeid_timestamp(id)) STORED)" \
    42P17 'generation expression is not immutable'
  sql "$port" -c "CREATE TABLE public.good (id bigint, at timestamptz GENERATED ALWAYS AS (ext.flakeid_timestamp(id, 'snowflake')) STORED)"
}

section_upgrade() {
  echo "== upgrade: ALTER EXTENSION UPDATE from 0.1.0, pg_dump and pg_restore"
  local port version
  new_cluster upgrade "shared_preload_libraries = 'flakeid'
flakeid.node = 4"
  free_port port
  start upgrade "$port"
  version=$(awk -F"'" '/^default_version/ {print $2}' "$($PGBIN/pg_config --sharedir)/extension/flakeid.control")
  sql "$port" -c "CREATE DATABASE updated" -c "CREATE DATABASE fresh" -c "CREATE DATABASE restored"
  DB=updated sql "$port" -c "CREATE SCHEMA ext" -c "CREATE EXTENSION flakeid VERSION '0.1.0' SCHEMA ext" \
    -c "CREATE TABLE events (id bigint PRIMARY KEY DEFAULT ext.flakeid_next(), body text)" \
    -c "INSERT INTO events (body) SELECT 'before' FROM generate_series(1, 500)" \
    -c "ALTER EXTENSION flakeid UPDATE" \
    -c "INSERT INTO events (body) SELECT 'after' FROM generate_series(1, 500)"
  DB=fresh sql "$port" -c "CREATE SCHEMA ext" -c "CREATE EXTENSION flakeid SCHEMA ext"
  local catalog="SELECT e.extversion, p.proname, pg_get_function_identity_arguments(p.oid), p.provolatile, p.proparallel,
      p.proisstrict, p.prosrc, p.probin, pg_get_function_result(p.oid), p.proacl, obj_description(p.oid, 'pg_proc')
    FROM pg_extension e JOIN pg_depend d ON d.refobjid = e.oid AND d.deptype = 'e' AND d.classid = 'pg_proc'::regclass
    JOIN pg_proc p ON p.oid = d.objid WHERE e.extname = 'flakeid'
    UNION ALL
    SELECT e.extversion, t.typname, string_agg(a.attname || ' ' || format_type(a.atttypid, a.atttypmod), ', ' ORDER BY a.attnum),
      NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL
    FROM pg_extension e JOIN pg_depend d ON d.refobjid = e.oid AND d.deptype = 'e' AND d.classid = 'pg_type'::regclass
    JOIN pg_type t ON t.oid = d.objid JOIN pg_attribute a ON a.attrelid = t.typrelid AND a.attnum > 0
    WHERE e.extname = 'flakeid' GROUP BY 1, 2 ORDER BY 2, 3"
  DB=updated q "$port" "$catalog" > "$work/updated.txt"
  DB=fresh q "$port" "$catalog" > "$work/fresh.txt"
  diff "$work/updated.txt" "$work/fresh.txt" || fail "ALTER EXTENSION flakeid UPDATE from 0.1.0 differs from a fresh $version install"
  grep -c . "$work/fresh.txt" | sed "s/^/  0.1.0 updated to $version equals a fresh install: /; s/$/ objects compared/"
  [ "$(DB=updated q "$port" "SELECT count(DISTINCT id), count(*) FILTER (WHERE (ext.flakeid_decompose(id)).node <> 4) FROM events")" = "1000 0" ] \
    || fail "IDs before and after the update"

  # pg_dump/pg_restore: the schema, the extension and DEFAULT ext.flakeid_next() come back.
  DB=fresh sql "$port" -c "CREATE TABLE public.events (id bigint PRIMARY KEY DEFAULT ext.flakeid_next(),
      at timestamptz GENERATED ALWAYS AS (ext.flakeid_timestamp(id, 'snowflake')) STORED, body text)" \
    -c "INSERT INTO events (body) SELECT 'dumped' FROM generate_series(1, 1000)"
  "$PGBIN/pg_dump" -h 127.0.0.1 -p "$port" -U postgres -Fc -f "$work/fresh.dump" fresh
  "$PGBIN/pg_restore" -h 127.0.0.1 -p "$port" -U postgres -d restored --exit-on-error "$work/fresh.dump"
  DB=restored sql "$port" -c "INSERT INTO events (body) SELECT 'restored' FROM generate_series(1, 1000)"
  read -r n distinct same_at default <<<"$(DB=restored q "$port" "SELECT count(*), count(DISTINCT id),
      count(*) FILTER (WHERE at = ext.flakeid_timestamp(id, 'snowflake')),
      (SELECT pg_get_expr(adbin, adrelid) FROM pg_attrdef WHERE adrelid = 'events'::regclass AND adnum = 1) FROM events")"
  echo "  pg_dump | pg_restore: $n rows, $distinct distinct IDs, default $default"
  [ "$n" = 2000 ] && [ "$distinct" = 2000 ] && [ "$same_at" = 2000 ] && [ "$default" = "ext.flakeid_next()" ] \
    || fail "pg_dump/pg_restore of a table with DEFAULT flakeid_next()"
}

# One primary and its physical standby serve the standby and promote sections.
primary_port=""
standby_port=""
section_standby() {
  echo "== standby: a physical standby (pg_basebackup -R) refuses to issue IDs"
  new_cluster primary "shared_preload_libraries = 'flakeid'
flakeid.node = 1"
  free_port primary_port
  start primary "$primary_port"
  sql "$primary_port" -c "CREATE EXTENSION flakeid" \
    -c "CREATE TABLE ids (id bigint PRIMARY KEY DEFAULT flakeid_next(), side text NOT NULL)" \
    -c "INSERT INTO ids (side) SELECT 'primary' FROM generate_series(1, 1000)"
  basebackup "$primary_port" standby
  free_port standby_port
  start standby "$standby_port"
  sql "$primary_port" -c "INSERT INTO ids (side) SELECT 'primary' FROM generate_series(1, 1000)"
  wait_replay "$primary_port" "$standby_port"
  expect_error "$standby_port" "SELECT flakeid_next()" 25006 "cannot execute flakeid_next\(\) during recovery"
  expect_error "$standby_port" "SELECT * FROM flakeid_next_many(10)" 25006 "cannot execute flakeid_next_many\(\) during recovery"
  expect_error "$primary_port" "BEGIN READ ONLY; SELECT flakeid_next()" 25006 "cannot execute flakeid_next\(\) in a read-only transaction"
  # The standby replayed the primary's high-water mark: it covers every ID issued.
  [ "$(q "$standby_port" "SELECT s.state = 'standby: refusing' AND s.high_water_mark >= (SELECT max(flakeid_timestamp(id)) FROM ids)
      FROM flakeid_status() s")" = t ] || fail "the standby's state or high-water mark"
  echo "  the standby has the primary's high-water mark"
  # The runbook's step on a standby: ALTER SYSTEM works there (checked like anywhere).
  expect_error "$standby_port" "ALTER SYSTEM SET flakeid.node = 1024" 22023 'node must be in 0\.\.=1023, got 1024'
  sql "$standby_port" -c "ALTER SYSTEM SET flakeid.node = 1"
}

section_promote() {
  echo "== promote: the standby promoted while the old primary keeps issuing"
  [ -n "$standby_port" ] || section_standby
  echo 'INSERT INTO ids (side) VALUES ($$primary$$);' > "$work/primary.sql"
  pgbench -h 127.0.0.1 -p "$primary_port" -U postgres -n -c 4 -j 2 -T 10 -f "$work/primary.sql" postgres >"$work/primary-pgbench.log" 2>&1 &
  local bench=$!
  as_pg "$PGBIN/pg_ctl" -D "$work/standby/data" -w promote >/dev/null
  expect_error "$standby_port" "SELECT flakeid_next()" 55000 \
    "this server was promoted \(timeline 1 to 2\) and still has the node id 1 its former primary issued under"
  expect_error "$standby_port" "SELECT * FROM flakeid_next_many(5)" 55000 "flakeid_next_many\(\): this server was promoted"
  [ "$(q "$standby_port" "SELECT state FROM flakeid_status()")" = "promoted: refusing until the node id is changed or confirmed" ] \
    || fail "flakeid_status() after the promotion"
  # Renumbered, it issues under its own node id (while the old primary issues under 1).
  sql "$standby_port" -c "ALTER SYSTEM SET flakeid.node = 2"
  as_pg "$PGBIN/pg_ctl" -D "$work/standby/data" -m fast -w restart -o "-p $standby_port" -l "$work/standby/log" >/dev/null
  local i
  for i in $(seq 8); do
    sql "$standby_port" -c "INSERT INTO ids (side) SELECT 'promoted' FROM generate_series(1, 5000)"
    sleep 0.2
  done
  wait "$bench" || { cat "$work/primary-pgbench.log"; fail "pgbench on the old primary"; }
  sql "$standby_port" -c "\copy (SELECT id FROM ids WHERE side = 'promoted') TO '$work/promoted.ids'"
  read -r old promoted shared other_node <<<"$(sql "$primary_port" -At -F ' ' \
    -c "CREATE TEMP TABLE promoted (id bigint)" -c "\copy promoted FROM '$work/promoted.ids'" \
    -c "SELECT (SELECT count(*) FROM ids), (SELECT count(*) FROM promoted),
         (SELECT count(*) FROM promoted JOIN ids USING (id)),
         (SELECT count(*) FROM promoted WHERE (flakeid_decompose(id)).node <> 2)")"
  echo "  old primary: $old IDs (node 1); promoted: $promoted IDs (node 2); shared: $shared"
  [ "$promoted" = 40000 ] && [ "$shared" = 0 ] && [ "$other_node" = 0 ] && [ "$old" -gt 2000 ] || fail "IDs shared after the promotion"
}

section_crash() {
  echo "== crash: kill -9 of a backend while borrowing ahead; the postmaster restarts"
  local port lead
  # A new cluster's first IDs start at the far end of its borrow window (its empty
  # mark may be a pg_upgrade's: docs/postgres.md), here 10 s ahead; sonyflake issues
  # 256 IDs per 10 ms tick there.
  new_cluster crash "shared_preload_libraries = 'flakeid'
flakeid.layout = 'sonyflake'
flakeid.node = 7
flakeid.overflow = 'borrow'
flakeid.max_borrow_ms = 10000"
  free_port port
  start crash "$port"
  sql "$port" -c "CREATE EXTENSION flakeid" -c "CREATE TABLE ids (id bigint PRIMARY KEY)" \
    -c "INSERT INTO ids SELECT flakeid_next_many(20000)"
  lead=$(q "$port" "SELECT extract(epoch FROM flakeid_timestamp(max(id)) - clock_timestamp())::int FROM ids")
  [ "$lead" -ge 3 ] || fail "only $lead s ahead of the clock"
  local ready_before sleeper pid="" i
  ready_before=$(grep -c 'database system is ready to accept connections' "$work/crash/log")
  sql "$port" -c "SELECT pg_sleep(60)" >/dev/null 2>&1 &
  sleeper=$!
  for i in $(seq 200); do
    pid=$(q "$port" "SELECT pid FROM pg_stat_activity WHERE query = 'SELECT pg_sleep(60)'")
    [ -n "$pid" ] && break
    sleep 0.05
  done
  [ -n "$pid" ] || fail "no backend to kill"
  kill -9 "$pid"
  wait "$sleeper" 2>/dev/null || true
  # Connect only once the postmaster has restarted (not to the server before it noticed).
  for i in $(seq 600); do
    [ "$(grep -c 'database system is ready to accept connections' "$work/crash/log")" -gt "$ready_before" ] && break
    sleep 0.05
  done
  grep -q 'all server processes terminated; reinitializing' "$work/crash/log" || fail "no crash restart"
  wait_accepting "$port"
  # Still ahead after the restart: otherwise this test would prove nothing.
  [ "$(q "$port" "SELECT flakeid_timestamp(max(id)) > clock_timestamp() FROM ids")" = t ] \
    || fail "the restart took longer than the borrowed lead"
  sql "$port" -c "INSERT INTO ids SELECT flakeid_next_many(20000)" \
    -c "INSERT INTO ids SELECT flakeid_next() FROM generate_series(1, 1000)"
  [ "$(q "$port" "SELECT count(*), count(DISTINCT id) FROM ids")" = "41000 41000" ] || fail "IDs after the crash"
  echo "  $lead s ahead at the crash; 21,000 IDs after the restart: 0 duplicates"
}

section_clock() {
  echo "== clock: failover to a standby whose clock is behind (libfaketime)"
  [ -f "$FAKETIME_LIB" ] || fail "libfaketime is not installed (make setup-postgres installs faketime)"
  local pport sport clockfile=$work/clock.faketime t0 behind rollbacks max_ms
  new_cluster old "shared_preload_libraries = 'flakeid'
flakeid.node = 9"
  free_port pport
  start old "$pport"
  sql "$pport" -c "CREATE EXTENSION flakeid" -c "CREATE TABLE ids (id bigint PRIMARY KEY DEFAULT flakeid_next(), side text)"
  basebackup "$pport" new
  free_port sport
  # Rewritten by rename: libfaketime re-reads it on every call (never half-written).
  set_clock() { echo "$1" > "$clockfile.tmp" && chmod 644 "$clockfile.tmp" && mv "$clockfile.tmp" "$clockfile"; }
  set_clock "+0"
  # Only the wall clock is stepped (PostgreSQL's timeouts use the monotonic one).
  start new "$sport" LD_PRELOAD="$FAKETIME_LIB" FAKETIME_TIMESTAMP_FILE="$clockfile" FAKETIME_NO_CACHE=1 FAKETIME_DONT_FAKE_MONOTONIC=1
  t0=$(date +%s.%N)
  echo 'INSERT INTO ids (side) VALUES ($$old$$);' > "$work/old.sql"
  pgbench -h 127.0.0.1 -p "$pport" -U postgres -n -c 8 -j 2 -T 4 -f "$work/old.sql" postgres >"$work/old-pgbench.log" 2>&1 \
    || { cat "$work/old-pgbench.log"; exit 1; }
  wait_replay "$pport" "$sport"
  stop old
  as_pg "$PGBIN/pg_ctl" -D "$work/new/data" -w promote >/dev/null
  # The old primary is gone for good: the operator confirms the node id.
  q "$sport" "SELECT flakeid_confirm_node(9)" | sed 's/^/  confirmed: /'
  # Now its clock reads about 1.5 s after the old primary's first ID of the last 4 s.
  behind=$(python3 -c "import time; print(round(time.time() - $t0 - 1.5, 3))")
  set_clock "-$behind"
  expect_error "$sport" "SELECT count(*) FROM flakeid_next_many(1000000) AS n(id) JOIN ids USING (id)" 55000 \
    "flakeid_next_many\(\): the clock is [0-9]+ ms behind IDs this server already issued"
  expect_error "$sport" "INSERT INTO ids (side) VALUES ('new')" 55000 "flakeid_next\(\): the clock is"
  # Both refusals are clock rollbacks in flakeid_stats(), with how far behind.
  read -r rollbacks max_ms <<<"$(q "$sport" "SELECT clock_rollbacks, max_rollback_ms FROM flakeid_stats()")"
  echo "  flakeid_stats(): $rollbacks clock rollbacks, the largest $max_ms ms"
  [ "$rollbacks" = 2 ] && [ "$max_ms" -gt 500 ] || fail "flakeid_stats(): $rollbacks rollbacks, largest $max_ms ms"
  set_clock "+0"
  read -r shared <<<"$(q "$sport" "SELECT count(*) FROM flakeid_next_many(1000000) AS n(id) JOIN ids USING (id)")"
  sql "$sport" -c "INSERT INTO ids (side) SELECT 'new' FROM generate_series(1, 10000)"
  [ "$shared" = 0 ] && [ "$(q "$sport" "SELECT count(*) FILTER (WHERE side = 'new') FROM ids")" = 10000 ] \
    || fail "$shared IDs repeated after the failover"
  echo "  clock caught up: 1,010,000 IDs, 0 shared with the old primary's $(q "$sport" "SELECT count(*) FROM ids WHERE side = 'old'")"
}

# lease_status PORT: "state node" of the server's lease (flakeid_status())
lease_status() { q "$1" "SELECT coalesce(lease_state, '-'), coalesce(node, -1) FROM flakeid_status()"; }
# wait_lease PORT: until the server holds its lease; prints its node id
wait_lease() {
  local i st
  for i in $(seq 400); do
    st=$(lease_status "$1" 2>/dev/null || true)
    [ "${st% *}" = held ] && { echo "${st#* }"; return 0; }
    sleep 0.05
  done
  fail "the server on port $1 holds no lease after 20 s: $st"
}
# restart_with NAME PORT: a fast restart (settings of ALTER SYSTEM take effect)
restart_with() { as_pg "$PGBIN/pg_ctl" -D "$work/$1/data" -m fast -w restart -o "-p $2" -l "$work/$1/log" >/dev/null; }

section_lease() {
  echo "== lease: flakeid.lease on Redis, PostgreSQL and etcd"
  [ -n "${FLAKEID_TEST_REDIS_URL:-}" ] && [ -n "${FLAKEID_TEST_POSTGRES_URL:-}" ] && [ -n "${FLAKEID_TEST_ETCD_URL:-}" ] \
    || fail "the lease section needs Redis, PostgreSQL and etcd (make setup-lease, tests/env/testenv.py)"
  local pa pb out ns=pg$$ na nb
  # The ACL user of the test Redis: a URL with a password, which no message may show.
  local redis_url="redis://flakeid:s3cret@${FLAKEID_TEST_REDIS_URL#redis://}"
  local redis_port=${FLAKEID_TEST_REDIS_URL##*:}
  redis_port=${redis_port%%/*}
  local etcd_endpoint=${FLAKEID_TEST_ETCD_URL#*@}
  etcd_endpoint=http://${etcd_endpoint%/}
  new_cluster la "shared_preload_libraries = 'flakeid'
flakeid.lease_ttl_ms = 2000"
  new_cluster lb "shared_preload_libraries = 'flakeid'
flakeid.lease_ttl_ms = 2000"
  free_port pa
  free_port pb
  start la "$pa"
  start lb "$pb"
  sql "$pa" -c "CREATE EXTENSION flakeid" -c "CREATE TABLE ids (id bigint PRIMARY KEY, side text)"
  sql "$pb" -c "CREATE EXTENSION flakeid" -c "CREATE TABLE ids (id bigint PRIMARY KEY, side text)"

  # Settings: checked by ALTER SYSTEM, naming the setting; no password shown.
  expect_error "$pa" "ALTER SYSTEM SET flakeid.lease = 'zk://127.0.0.1:2181/'" 22023 \
    'invalid value for parameter "flakeid.lease": .*zk'
  out=$(sql "$pa" -c "ALTER SYSTEM SET flakeid.lease = 'redis://flakeid:hunter2@127.0.0.1:6379/0?namespace=no/slash'" 2>&1 || true)
  grep -q 'ERROR:  invalid value for parameter "flakeid.lease"' <<<"$out" || { echo "$out"; fail "a bad namespace accepted"; }
  ! grep -q hunter2 <<<"$out" || { echo "$out"; fail "a refused lease URL's password reached the client"; }
  echo "  refused: $(head -1 <<<"$out")"
  expect_error "$pa" "ALTER SYSTEM SET flakeid.lease_ttl_ms = 500" 22023 'flakeid.lease_ttl_ms'
  sql "$pa" -c "ALTER SYSTEM SET flakeid.node = 3"
  expect_error "$pa" "ALTER SYSTEM SET flakeid.lease = '$redis_url'" 22023 \
    'flakeid.lease cannot be set while flakeid.node = 3 \(.*postgresql.auto.conf line [0-9]+\) is set'
  sql "$pa" -c "ALTER SYSTEM RESET flakeid.node"
  # Only those who may read every setting see the URL (GUC_SUPERUSER_ONLY).
  sql "$pa" -c "CREATE ROLE app LOGIN"
  out=$(psql -h 127.0.0.1 -p "$pa" -U app -d postgres -X -q -c "SHOW flakeid.lease" 2>&1 || true)
  grep -q 'must be superuser or have privileges of pg_read_all_settings' <<<"$out" || { echo "$out"; fail "SHOW flakeid.lease as a plain user"; }

  # Per store: two servers on one URL lease two node ids and share no ID.
  local store url st left
  for store in redis postgres etcd; do
    case $store in
      redis) url="$redis_url?namespace=$ns" ;;
      postgres) url="$FLAKEID_TEST_POSTGRES_URL?namespace=$ns" ;;
      etcd) url="${FLAKEID_TEST_ETCD_URL}?namespace=$ns" ;;
    esac
    sql "$pa" -c "ALTER SYSTEM SET flakeid.lease = '$url'"
    sql "$pb" -c "ALTER SYSTEM SET flakeid.lease = '$url'"
    restart_with la "$pa"
    restart_with lb "$pb"
    na=$(wait_lease "$pa")
    nb=$(wait_lease "$pb")
    [ "$na" != "$nb" ] || fail "$store: both servers leased node id $na"
    sql "$pa" -c "INSERT INTO ids SELECT id, '$store' FROM flakeid_next_many(20000) id"
    sql "$pb" -c "INSERT INTO ids SELECT id, '$store' FROM flakeid_next_many(20000) id"
    [ "$(q "$pa" "SELECT count(*) FROM ids WHERE side = '$store' AND (flakeid_decompose(id)).node = $na")" = 20000 ] \
      || fail "$store: IDs of server A without its leased node id $na"
    echo "  $store: two servers leased node ids $na and $nb; 20,000 IDs each"
    # flakeid_stats() has the lease's state and the ms left on it (TTL 2000 ms).
    read -r st left <<<"$(q "$pa" "SELECT lease_state, lease_remaining_ms FROM flakeid_stats()")"
    [ "$st" = held ] && [ "$left" -gt 0 ] && [ "$left" -le 2000 ] || fail "$store: flakeid_stats(): lease $st, $left ms left"
    # The store wiped while both issue: refused, then resumed by themselves.
    q "$pa" "CREATE OR REPLACE FUNCTION watch(secs float8, OUT refused int, OUT issued_after int, OUT msg text) LANGUAGE plpgsql AS \$\$
      DECLARE t0 timestamptz := clock_timestamp(); BEGIN
        refused := 0; issued_after := 0;
        WHILE clock_timestamp() < t0 + secs * interval '1 s' LOOP
          BEGIN
            INSERT INTO ids VALUES (flakeid_next(), 'watch-$store');
            IF refused > 0 THEN issued_after := issued_after + 1; EXIT WHEN issued_after >= 200; END IF;
          EXCEPTION WHEN object_not_in_prerequisite_state THEN refused := refused + 1; msg := SQLERRM;
          END;
          PERFORM pg_sleep(0.005);
        END LOOP;
      END \$\$" >/dev/null
    q "$pa" "SELECT * FROM watch(25)" > "$work/watch.txt" &
    local watcher=$!
    sleep 1
    case $store in
      redis) redis-cli -h 127.0.0.1 -p "$redis_port" FLUSHALL >/dev/null ;;
      postgres) psql "$FLAKEID_TEST_POSTGRES_URL" -X -q -c "TRUNCATE flakeid_worker_node" ;;
      etcd) ETCDCTL_API=3 etcdctl --endpoints "$etcd_endpoint" --user root:etcd-pw del --prefix "flakeid/$ns/" >/dev/null ;;
    esac
    wait "$watcher" || fail "$store: watch()"
    read -r refused after msg <<<"$(cat "$work/watch.txt")"
    echo "  $store wiped: $refused calls refused, then $after issued; refused: $msg"
    [ "$refused" -gt 0 ] && [ "$after" = 200 ] || fail "$store: the lost lease was not refused, or did not recover"
    grep -q 'does not hold its node-id lease' <<<"$msg" || fail "$store: the refusal's message"
    ! grep -q -e s3cret -e secret -e etcd-pw <<<"$msg" || fail "$store: a password in the refusal"
    sql "$pb" -c "INSERT INTO ids SELECT id, 'after-$store' FROM flakeid_next_many(5000) id"
    sql "$pa" -c "INSERT INTO ids SELECT id, 'after-$store' FROM flakeid_next_many(5000) id"
  done
  # Both servers' IDs together: none shared.
  sql "$pb" -c "\copy ids TO '$work/lb.ids'"
  read -r total distinct <<<"$(sql "$pa" -At -F ' ' -c "CREATE TEMP TABLE b (id bigint, side text)" \
    -c "\copy b FROM '$work/lb.ids'" -c "SELECT count(*), count(DISTINCT id) FROM (SELECT id FROM ids UNION ALL SELECT id FROM b) u")"
  echo "  both servers, every store: $total IDs, $distinct distinct"
  [ "$total" = "$distinct" ] || fail "IDs shared between the two leased servers"
  # (PostgreSQL itself logs a failed statement as typed: the refused ALTER SYSTEMs.)
  ! grep -v 'STATEMENT:  ALTER SYSTEM' "$work/la/log" "$work/lb/log" | grep -e s3cret -e 'secret@' -e etcd-pw \
    || fail "a password in the server log"
  [ "$(q "$pa" "SELECT lease FROM flakeid_status()")" = "${url/root:etcd-pw@/root:***@}" ] || fail "flakeid_status().lease: $(q "$pa" "SELECT lease FROM flakeid_status()")"

  # Failover with leases: the standby takes no lease; promoted while its old
  # primary keeps issuing, it leases a node id of its own: no operator step.
  local sp ns2=pgpromote$$
  url="$redis_url?namespace=$ns2"
  stop lb
  sql "$pa" -c "ALTER SYSTEM SET flakeid.lease = '$url'" -c "DROP TABLE ids" \
    -c "CREATE TABLE ids (id bigint PRIMARY KEY DEFAULT flakeid_next(), side text NOT NULL)"
  restart_with la "$pa"
  na=$(wait_lease "$pa")
  sql "$pa" -c "INSERT INTO ids (side) SELECT 'primary' FROM generate_series(1, 1000)"
  basebackup "$pa" ls
  free_port sp
  start ls "$sp"
  wait_replay "$pa" "$sp"
  expect_error "$sp" "SELECT flakeid_next()" 25006 "during recovery"
  [ "$(redis-cli -h 127.0.0.1 -p "$redis_port" KEYS "flakeid:$ns2:node:*" | grep -c .)" = 1 ] \
    || fail "the standby took a lease"
  echo 'INSERT INTO ids (side) VALUES ($$primary$$);' > "$work/lprimary.sql"
  pgbench -h 127.0.0.1 -p "$pa" -U postgres -n -c 4 -j 2 -T 8 -f "$work/lprimary.sql" postgres >"$work/lprimary.log" 2>&1 &
  local bench=$! i ns_node
  sleep 1
  as_pg "$PGBIN/pg_ctl" -D "$work/ls/data" -w promote >/dev/null
  ns_node=$(wait_lease "$sp")
  [ "$ns_node" != "$na" ] || fail "the promoted standby leased its old primary's node id $na"
  expect_error "$sp" "SELECT flakeid_confirm_node($ns_node)" 55000 "leases its node id .*nothing to confirm"
  for i in $(seq 8); do
    sql "$sp" -c "INSERT INTO ids (side) SELECT 'promoted' FROM generate_series(1, 5000)"
    sleep 0.2
  done
  wait "$bench" || { cat "$work/lprimary.log"; fail "pgbench on the old primary"; }
  sql "$sp" -c "\copy (SELECT id FROM ids WHERE side = 'promoted') TO '$work/lpromoted.ids'"
  read -r old promoted shared other_node <<<"$(sql "$pa" -At -F ' ' \
    -c "CREATE TEMP TABLE promoted (id bigint)" -c "\copy promoted FROM '$work/lpromoted.ids'" \
    -c "SELECT (SELECT count(*) FROM ids), (SELECT count(*) FROM promoted),
         (SELECT count(*) FROM promoted JOIN ids USING (id)),
         (SELECT count(*) FROM promoted WHERE (flakeid_decompose(id)).node <> $ns_node)")"
  echo "  promoted with leases: old primary $old IDs (node $na), promoted $promoted IDs (node $ns_node), shared: $shared"
  [ "$promoted" = 40000 ] && [ "$shared" = 0 ] && [ "$other_node" = 0 ] && [ "$old" -gt 1000 ] || fail "IDs shared after the promotion"
}

section_copies() {
  python3 tests/postgres/copies.py || fail "tests/postgres/copies.py"
}

# --- docs: the SQL blocks of the docs ---
section_docs() {
  echo "== docs: the SQL blocks of README.md and docs/*.md, as written"
  local port dir=$work/docs-sql n=0 file doc line out
  new_cluster docs "shared_preload_libraries = 'flakeid'
flakeid.node = 1"
  free_port port
  start docs "$port"
  python3 tests/docs/blocks.py extract sql "$dir" >/dev/null
  while IFS=$'\t' read -r file doc line; do
    n=$((n + 1))
    sql "$port" -c "CREATE DATABASE doc$n"
    grep -Eqi 'CREATE[[:space:]]+EXTENSION' "$dir/$file" || DB=doc$n sql "$port" -c "CREATE EXTENSION flakeid"
    # psql names the block's file and line: name the doc's instead.
    if ! out=$(DB=doc$n sql "$port" -f "$dir/$file" 2>&1); then
      awk -v f="psql:$dir/$file:" -v doc="$doc" -v at="$line" \
        'index($0, f) == 1 { rest = substr($0, length(f) + 1); n = rest + 0; sub(/^[0-9]+/, "", rest); $0 = doc ":" (at + n) rest } 1' \
        <<<"$out" >&2
      fail "$doc:$line: the SQL block failed (make test-postgres runs every sql block as written: CONTRIBUTING.md, Docs)"
    fi
    # A block's ALTER SYSTEM is not the next one's setting.
    sql "$port" -c "ALTER SYSTEM RESET ALL"
    echo "  $doc:$line: ok"
  done <"$dir/index.tsv"
  [ "$n" -gt 0 ] || fail "no sql blocks found in the docs (tests/docs/blocks.py extract sql)"
  echo "  $n SQL blocks ran"
}

for s in "${SECTIONS[@]}"; do
  [[ " ${ALL[*]} " == *" $s "* ]] || fail "unknown section $s (sections: ${ALL[*]})"
  "section_$s"
done
echo "postgres integration tests passed (${SECTIONS[*]})"
