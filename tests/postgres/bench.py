#!/usr/bin/env python3
"""make bench-postgres: ID functions side by side in a private PostgreSQL cluster of the
test environment (tests/postgres/cluster.py; 127.0.0.1, fsync = off,
synchronous_commit = off: the CPU cost of the key, not the disk), one per mode below,
with the installed flakeid library preloaded.
  1. per-row cost: SELECT count(f()) FROM generate_series(1, N), minus the same query
     with a constant; median of ROUNDS runs, ns per call (STAT=min: the fastest run of
     each, steadier on a machine shared with other work)
  2. single-row INSERTs with pgbench (CLIENTS clients, SECS seconds, IROUNDS rounds
     interleaved): tps with a flakeid_next(), bigserial, gen_random_uuid(),
     Instagram-style and flakeid_uuidv7() key (and PostgreSQL 18's uuidv7() on 18),
     each the table's primary key
Both under flakeid.overflow = wait (the default: at most 4096 IDs per ms) and borrow
(the throughput mode). INSERTS=0 runs the per-call part only. EXPRS='a;b': the
per-call expressions (default: the six below). LEASE_URL=URL adds a third run, borrow
with the node id leased (flakeid.lease) instead of set:
  python3 tests/env/testenv.py run --redis -- \\
    sh -c 'LEASE_URL=$FLAKEID_TEST_REDIS_URL python3 tests/postgres/bench.py'
"""

import os
import statistics
import sys

from cluster import PGBIN, Run, pg_config, require_installed

N, ROUNDS, CLIENTS, SECS, IROUNDS, INSERTS = (
    int(os.environ.get(k, d))
    for k, d in (
        ("N", 1000000),
        ("ROUNDS", 5),
        ("CLIENTS", 8),
        ("SECS", 4),
        ("IROUNDS", 5),
        ("INSERTS", 1),
    )
)
STAT = os.environ.get("STAT", "median")
# The sealed expressions use flakeid.seal_key (below): tests/vectors/seal.json's AES-256 key.
SEAL_HEX = "2b7e151628aed2a6abf7158809cf4f3cef4359d8d580aa4f7f036d6f04fc6a94"
EXPRS = os.environ.get(
    "EXPRS",
    "flakeid_next();flakeid_next_sealed();"
    f"flakeid_seal(flakeid_next(), '\\x{SEAL_HEX}'::bytea);nextval('bench_seq');"
    "gen_random_uuid();insta_next_id();flakeid_uuidv7()",
).split(";")
CONF = [
    "synchronous_commit = off",
    "full_page_writes = off",
    "shared_buffers = 256MB",
    "max_wal_size = 4GB",
    "shared_preload_libraries = 'flakeid'",
    "flakeid.node = 1",
    f"flakeid.seal_key = '{SEAL_HEX}'",
]
TABLES = ["flakeid", "bigserial", "uuid", "instagram", "flakeid_uuidv7"]
# PostgreSQL 18's uuidv7(), beside flakeid_uuidv7(), where the server has it.
MAJOR = int(pg_config("--version").split()[1].split(".")[0])
if MAJOR >= 18:
    TABLES.append("uuidv7")
    if "EXPRS" not in os.environ:
        EXPRS.append("uuidv7()")
SETUP = """
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
CREATE TABLE k_flakeid_uuidv7 (id uuid PRIMARY KEY DEFAULT flakeid_uuidv7(), v int);
"""
SETUP_18 = "CREATE TABLE k_uuidv7 (id uuid PRIMARY KEY DEFAULT uuidv7(), v int);"


def stat(xs):
    return min(xs) if STAT == "min" else statistics.median(xs)


def per_call(c, label):
    base = f"{stat([float(c.one(f'SELECT bench_ns($$1$$, {N})')) for _ in range(ROUNDS)]):.1f}"
    print(
        f"  {f'[per call, {label}]':<34} {'':>8} ns/row (baseline: count(1) = {base} ns/row)",
        flush=True,
    )
    for expr in EXPRS:
        ns = stat(
            [float(c.one(f"SELECT bench_ns($${expr}$$, {N}) - {base}")) for _ in range(ROUNDS)]
        )
        print(f"  {expr:<34} {ns:8.1f} ns/call", flush=True)


def inserts(c, label):
    print(
        f"  [single-row INSERT, {CLIENTS} clients, {SECS} s x {IROUNDS} rounds, {label}]",
        flush=True,
    )
    tps, ratios, wide = {t: [] for t in TABLES}, [], []
    for rnd in range(1, IROUNDS + 1):
        # Every other round in reverse order, so a drifting machine favours no key.
        this = {}
        for t in TABLES if rnd % 2 else TABLES[::-1]:
            c.sql(f"TRUNCATE k_{t}", "CHECKPOINT")
            out = c.pgbench(
                f"INSERT INTO k_{t} (v) VALUES (1);", "-c", str(CLIENTS), "-j", "2", "-T", str(SECS)
            )
            this[t] = next(line.split()[2] for line in out.splitlines() if line.startswith("tps"))
            tps[t].append(this[t])
        ratios.append(f"{float(this['flakeid']) / float(this['bigserial']):.3f}")
        if "uuidv7" in this:
            wide.append(f"{float(this['flakeid_uuidv7']) / float(this['uuidv7']):.3f}")
    for t in TABLES:
        print(
            f"  {'k_' + t:<34} {statistics.median(map(float, tps[t])):10.1f} tps   (rounds: "
            f"{' '.join(tps[t])})"
        )
    print(
        f"  {'flakeid / bigserial, same round':<34} {statistics.median(map(float, ratios)):10.3f}  "
        "     "
        f"(rounds: {' '.join(ratios)})",
        flush=True,
    )
    if wide:
        print(
            f"  {'flakeid_uuidv7 / uuidv7, same round':<34} "
            f"{statistics.median(map(float, wide)):10.3f}       "
            f"(rounds: {' '.join(wide)})",
            flush=True,
        )


def bench(run, name, header, label, *conf):
    c = run.cluster(name, *CONF, *conf).start_ctl()
    c.sql(stdin=SETUP + (SETUP_18 if MAJOR >= 18 else ""))
    if name == "lease":
        header += f" (held, node id {c.wait_lease()})"
    print(f"== {header}", flush=True)
    per_call(c, label)
    if INSERTS:
        inserts(c, label)
    c.stop_ctl()


def main():
    require_installed()
    version = pg_config("--version").split()[1]
    print(
        f"PostgreSQL {version} ({PGBIN}), {os.cpu_count()} cores, N = {N} rows, {STAT} of {ROUNDS}"
    )
    with Run("flakeid-pgbench.") as run:
        bench(run, "wait", "flakeid.overflow = wait (default)", "overflow = wait")
        bench(
            run,
            "borrow",
            "flakeid.overflow = borrow",
            "overflow = borrow",
            "flakeid.overflow = borrow",
        )
        if os.environ.get("LEASE_URL"):
            bench(
                run,
                "lease",
                "flakeid.overflow = borrow, flakeid.lease",
                "borrow, leased",
                "flakeid.overflow = borrow",
                "flakeid.node = -1",
                f"flakeid.lease = '{os.environ['LEASE_URL']}'",
            )
    return run.rc


if __name__ == "__main__":
    sys.exit(main())
