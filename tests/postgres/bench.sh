#!/usr/bin/env bash
# make bench-postgres: ID functions side by side in a private PostgreSQL
# 15 cluster of the test environment (tests/env/testenv.py; 127.0.0.1, fsync = off,
# synchronous_commit = off: the CPU cost of the key, not the disk), one per mode
# below, with the installed flakeid library preloaded.
#   1. per-row cost: SELECT count(f()) FROM generate_series(1, N), minus the same
#      query with a constant; median of ROUNDS runs, ns per call (STAT=min: the
#      fastest run of each, steadier on a machine shared with other work)
#   2. single-row INSERTs with pgbench (CLIENTS clients, SECS seconds, IROUNDS rounds
#      interleaved): tps with a flakeid_next(), bigserial, gen_random_uuid() and
#      Instagram-style key, each the table's primary key
# Both under flakeid.overflow = wait (the default: at most 4096 IDs per ms) and
# borrow (the throughput mode). INSERTS=0 runs the per-call part only. LEASE_URL=URL
# adds a third run, borrow with the node id leased (flakeid.lease) instead of set:
#   python3 tests/env/testenv.py run --redis -- \
#     sh -c 'LEASE_URL=$FLAKEID_TEST_REDIS_URL bash tests/postgres/bench.sh'

set -euo pipefail
cd "$(dirname "$0")/../.."
PGBIN=/usr/lib/postgresql/15/bin
N=${N:-1000000}
ROUNDS=${ROUNDS:-5}
CLIENTS=${CLIENTS:-8}
SECS=${SECS:-4}
IROUNDS=${IROUNDS:-5}
INSERTS=${INSERTS:-1}
STAT=${STAT:-median}
# EXPRS='a;b': the per-call expressions (default: these six; the sealed ones use
# flakeid.seal_key, set below, and tests/vectors/seal.json's AES-256 key)
SEAL_HEX=2b7e151628aed2a6abf7158809cf4f3cef4359d8d580aa4f7f036d6f04fc6a94
IFS=';' read -r -a EXPR_LIST <<<"${EXPRS:-flakeid_next();flakeid_next_sealed();flakeid_seal(flakeid_next(), '\\x$SEAL_HEX'::bytea);nextval('bench_seq');gen_random_uuid();insta_next_id()}"
[ -f "$($PGBIN/pg_config --pkglibdir)/flakeid.so" ] || { echo "run make install-postgres first" >&2; exit 1; }

# Each run below gets a cluster of its own from the test environment
# (tests/env/testenv.py: 127.0.0.1, fsync = off) with these lines in its
# postgresql.conf; this script runs again inside it (BENCH_RUN) and logs in as the
# environment's trust login, a superuser.
CONF=("synchronous_commit = off" "full_page_writes = off" "shared_buffers = 256MB" "max_wal_size = 4GB"
      "shared_preload_libraries = 'flakeid'" "flakeid.node = 1" "flakeid.seal_key = '$SEAL_HEX'")
if [ -z "${BENCH_RUN:-}" ]; then
  bench_run() { # bench_run NAME [conf line...]
    local name=$1 args=() line
    shift
    for line in "${CONF[@]}" "$@"; do args+=(--pg-conf "$line"); done
    BENCH_RUN=$name python3 tests/env/testenv.py run --postgres "${args[@]}" -- bash "$0"
  }
  echo "PostgreSQL $("$PGBIN/postgres" --version | awk '{print $3}'), $(nproc) cores, N = $N rows, $STAT of $ROUNDS"
  bench_run wait
  bench_run borrow "flakeid.overflow = borrow"
  if [ -n "${LEASE_URL:-}" ]; then
    bench_run lease "flakeid.overflow = borrow" "flakeid.node = -1" "flakeid.lease = '$LEASE_URL'"
  fi
  exit 0
fi

work=$(mktemp -d /tmp/flakeid-pgbench.XXXXXX)
trap 'rm -rf "$work"' EXIT
DB="$FLAKEID_TEST_POSTGRES_TRUST_URL?sslmode=disable"  # (the environment's cluster also serves TLS)
PSQL=(psql "$DB" -X -q -v ON_ERROR_STOP=1)
"${PSQL[@]}" <<'SQL'
CREATE EXTENSION flakeid;
CREATE SEQUENCE bench_seq;
-- Instagram's function (2012 engineering blog): 41 bits of ms, 13 of shard, 10 of sequence.
CREATE SEQUENCE insta_seq;
CREATE FUNCTION insta_next_id(OUT result bigint) LANGUAGE plpgsql AS $$
DECLARE
    our_epoch bigint := 1314220021721;
    seq_id bigint;
    now_millis bigint;
    shard_id int := 5;
BEGIN
    SELECT nextval('insta_seq') % 1024 INTO seq_id;
    SELECT FLOOR(EXTRACT(EPOCH FROM clock_timestamp()) * 1000) INTO now_millis;
    result := (now_millis - our_epoch) << 23;
    result := result | (shard_id << 10);
    result := result | (seq_id);
END;
$$;
-- ns per row of count(expr) over generate_series(1, n)
CREATE FUNCTION bench_ns(expr text, n int) RETURNS float8 LANGUAGE plpgsql AS $$
DECLARE t0 timestamptz;
BEGIN
    t0 := clock_timestamp();
    EXECUTE format('SELECT count(%s) FROM generate_series(1, %s)', expr, n);
    RETURN extract(epoch FROM clock_timestamp() - t0) * 1e9 / n;
END $$;
CREATE TABLE k_flakeid (id bigint PRIMARY KEY DEFAULT flakeid_next(), v int);
CREATE TABLE k_bigserial (id bigserial PRIMARY KEY, v int);
CREATE TABLE k_uuid (id uuid PRIMARY KEY DEFAULT gen_random_uuid(), v int);
CREATE TABLE k_instagram (id bigint PRIMARY KEY DEFAULT insta_next_id(), v int);
SQL

median() { sort -n | awk '{a[NR]=$1} END {m=(NR%2)?a[(NR+1)/2]:(a[NR/2]+a[NR/2+1])/2; printf "%.1f", m}'; }
stat() { if [ "$STAT" = min ]; then sort -n | awk 'NR == 1 {printf "%.1f", $1}'; else median; fi; }

per_call() { # per_call LABEL
  local base
  base=$(for _ in $(seq "$ROUNDS"); do "${PSQL[@]}" -At -c "SELECT bench_ns('1', $N)"; done | stat)
  printf '  %-34s %8s ns/row (baseline: count(1) = %s ns/row)\n' "[per call, $1]" "" "$base"
  for expr in "${EXPR_LIST[@]}"; do
    local ns
    ns=$(for _ in $(seq "$ROUNDS"); do "${PSQL[@]}" -At -c "SELECT bench_ns(\$\$$expr\$\$, $N) - $base"; done | stat)
    printf '  %-34s %8s ns/call\n' "$expr" "$ns"
  done
}

inserts() { # inserts LABEL
  printf '  [single-row INSERT, %s clients, %s s x %s rounds, %s]\n' "$CLIENTS" "$SECS" "$IROUNDS" "$1"
  local tables=(flakeid bigserial uuid instagram) order t r
  declare -A tps=()
  for t in "${tables[@]}"; do echo "INSERT INTO k_$t (v) VALUES (1);" > "$work/ins_$t.sql"; done
  ratios=""
  for round in $(seq "$IROUNDS"); do
    # Every other round in reverse order, so a drifting machine favours no key.
    if [ $((round % 2)) = 1 ]; then order=("${tables[@]}"); else order=(instagram uuid bigserial flakeid); fi
    declare -A this=()
    for t in "${order[@]}"; do
      "${PSQL[@]}" -c "TRUNCATE k_$t" -c "CHECKPOINT"
      r=$(pgbench -n -c "$CLIENTS" -j 2 -T "$SECS" -f "$work/ins_$t.sql" "$DB" 2>&1 \
        | awk '/^tps/ {print $3}')
      tps[$t]+="$r "
      this[$t]=$r
    done
    ratios+="$(awk -v a="${this[flakeid]}" -v b="${this[bigserial]}" 'BEGIN {printf "%.3f", a / b}') "
  done
  for t in "${tables[@]}"; do
    printf '  %-34s %10s tps   (rounds: %s)\n' "k_$t" "$(tr ' ' '\n' <<<"${tps[$t]}" | grep . | median)" "${tps[$t]% }"
  done
  printf '  %-34s %10s       (rounds: %s)\n' "flakeid / bigserial, same round" \
    "$(tr ' ' '\n' <<<"$ratios" | grep . | sort -n | awk '{a[NR]=$1} END {m=(NR%2)?a[(NR+1)/2]:(a[NR/2]+a[NR/2+1])/2; printf "%.3f", m}')" "${ratios% }"
}

case $BENCH_RUN in
  wait) label="overflow = wait"; echo "== flakeid.overflow = wait (default)" ;;
  borrow) label="overflow = borrow"; echo "== flakeid.overflow = borrow" ;;
  lease)
    for _ in $(seq 400); do
      [ "$("${PSQL[@]}" -At -c "SELECT lease_state FROM flakeid_status()")" = held ] && break
      sleep 0.05
    done
    label="borrow, leased"
    echo "== flakeid.overflow = borrow, flakeid.lease ($("${PSQL[@]}" -At -c "SELECT lease_state || ', node id ' || node FROM flakeid_status()"))"
    ;;
esac
per_call "$label"
[ "$INSERTS" = 0 ] || inserts "$label"
