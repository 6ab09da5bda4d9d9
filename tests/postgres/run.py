#!/usr/bin/env python3
"""Integration tests of the PostgreSQL extension, on the flakeid library installed
into the PostgreSQL under test (Debian's 15, or FLAKEID_PGBIN's: `make
test-postgres PG=<major>`, tests/postgres/cluster.py). Starts private clusters of the one
test environment (tests/postgres/cluster.py, tests/env/testenv.py: 127.0.0.1, ports
below the ephemeral range, temporary directories, every cluster stopped on exit).
Sections (run.py runs crash and clock first, then the others in this order; those
in APART below run in processes of their own beside them and are reported after
them):
  basic     preloaded, flakeid.datacenter = 11, flakeid.worker = 21: 8 concurrent
            pgbench clients insert rows with `id bigint DEFAULT flakeid_next()`;
            zero duplicates, every ID with the configured node; the shared vectors
            (tests/vectors) through SQL; IDs made in SQL decode the same in the Rust
            CLI, Python and Node (when built); 100 sessions; 4 sessions taking
            800,000 IDs at once; partition pruning and index use by flakeid_in_range
  plain     not preloaded: flakeid_next() is an ERROR saying how; pure functions work
  functions flakeid.datacenter = 3, flakeid.worker = 7: each SQL function's results
            (the seed and seal vectors, ranges, encodings), its errors (SQLSTATE, the
            argument named, never the seal key), volatility, read-only transactions,
            a look-alike type on search_path, flakeid_confirm_node(), flakeid_stats(),
            who may set and read flakeid.seal_key
  borrow    flakeid.layout = discord, flakeid.overflow = borrow: a burst past the cap
  settings  ALTER SYSTEM refuses a bad node, layout or typo'd flakeid.* name and a
            node-and-datacenter conflict (naming setting, range and file); a reload logs
            a bad value; a bad value at start is refused by flakeid_next() naming it
            and the file; an unset node is an error, not node 0
  options   each case of tests/vectors/options.json as flakeid.* settings at server
            start: built, or refused naming the case's field
  schema    installed in a schema outside search_path, with look-alike types,
            functions and operators in public: same results; no backtrace in DETAIL
            or CONTEXT; error LOCATIONs name the SQL function
  upgrade   CREATE EXTENSION flakeid VERSION '0.1.0' + ALTER EXTENSION UPDATE equals a
            fresh install; pg_dump/pg_restore of a table with DEFAULT flakeid_next()
  standby   a physical standby (pg_basebackup -R) refuses flakeid_next() and _many()
            (25006) and has the primary's high-water mark
  promote   the standby promoted while its old primary keeps issuing: refused until
            renumbered, then 0 IDs shared with the old primary
  crash     kill -9 of a backend while borrowing seconds ahead (postmaster restart):
            0 duplicates
  clock     failover to a standby whose clock is behind (libfaketime), confirmed
            with flakeid_confirm_node(): refused while behind, then 0 duplicates
  copies    tests/postgres/copies.py: a base backup and a standby without
            standby.signal started as primaries (refused as copies), PITR of a
            borrowing server then confirmed, pg_upgrade of a borrowing server, kill -9
            of the postmaster then pg_ctl start, passwords of a lease URL in the log:
            0 duplicates across both sides, no password shown
  lease     flakeid.lease on the Redis, PostgreSQL and etcd of tests/env/testenv.py
            (run.py starts them when FLAKEID_TEST_REDIS_URL is unset): a bad URL,
            a conflict with flakeid.node and a short TTL refused by ALTER SYSTEM
            (no password in any message), the URL hidden from non-superusers; per
            store, two clusters on one URL lease two node ids and share no ID; the
            store wiped: flakeid_next() refuses, then resumes by itself, 0 IDs
            shared; a standby takes no lease, and promoted while its old primary
            keeps issuing it leases its own node id: 0 IDs shared, no operator step
  convert   tests/postgres/convert.py: convert_sequence_to_flakeid() on a bigserial table
            under concurrent inserts, an IDENTITY, in a rolled-back transaction,
            and its refusals
  uuid      tests/postgres/wide.py: the 128-bit family (UUIDv7, ULID, TypeID): the
            shared vectors, one increasing sequence per server under 8 pgbench
            clients with no node id set, time bounds as index conditions, explicit
            times, shifts and batches, and on 18 agreement with uuid_extract_timestamp,
            uuid_extract_version and uuidv7(shift)
  uuidfloor tests/postgres/wide.py: flakeid_uuidv7() above every UUID issued before a
            restart onto a clock 5 s and 120 s behind (never refused, its lead in
            flakeid_status()), a failover to a standby whose clock is behind (a session
            that called before the promotion included), and rows restored from a
            server whose clock ran ahead, after flakeid_resume_after(uuid); with
            flakeid.max_borrow_ms 30 s, 120 s and 600 s, after a start and a restart,
            either family first: 0 UUID calls refused, none stamped ahead
  repair    tests/postgres/repair.py: under each flakeid.clock_backwards, 4 pgbench
            clients insert through flakeid_resume_after(id) 20 s and 40 s ahead: 0
            failed inserts, the waits counted; refusals of either family counted in
            flakeid_stats() and named in flakeid_status()
  logical   tests/postgres/peers.py: two primaries on one node id with logical
            replication: the apply worker's duplicate key carries the HINT naming the
            cause and the check, flakeid_status().peer_node names it; another node
            id's duplicate gets none
  firstuuid tests/postgres/peers.py: three new clusters' first flakeid_uuidv7(), at
            once, on a busy host: none fails on a missing replication origin
  order     tests/postgres/order.py: 8 sessions, each call of flakeid_next() and
            flakeid_uuidv7() made after reading the latest value any session got:
            each result above every value returned before its call began
  docs      every ```sql block of README.md and docs/*.md, as written: each
            in a database of its own on a server set up as the README says (preloaded,
            flakeid.node = 1), with the extension created unless the block creates it;
            blocks come from tests/docs/blocks.py (the one parser of the docs' fences);
            a failure names the doc and the line

usage: tests/postgres/run.py [SECTION...]     (PGBENCH_SECS, default 4)
"""

import os
import re
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
import time

import cluster
import crosscheck
from cluster import (
    FAKETIME_LIB,
    MAJOR,
    PGBIN,
    PRELOAD,
    ROOT,
    Fail,
    Run,
    bench_done,
    check,
    chosen,
    expect,
    load_vectors,
    pg_config,
    require_installed,
    wait_until,
)
from cases import Cases  # noqa: E402  (tests/env, on the path cluster.py set)
from convert import section_convert
from order import section_order
from peers import section_firstuuid, section_logical
from repair import section_repair
from wide import section_uuid, section_uuidfloor

SECS = os.environ.get("PGBENCH_SECS", "4")


def burst(c, node, layout):
    """4 sessions at once take 200,000 IDs each, far past the layout's 4,096 per ms:
    all unique, every one with the server's node id."""
    c.sql("CREATE TABLE burst (id bigint)")
    sessions = [c.session("INSERT INTO burst SELECT flakeid_next_many(200000)") for _ in range(3)]
    sessions.append(
        c.session("INSERT INTO burst SELECT flakeid_next() FROM generate_series(1, 200000)")
    )
    for p in sessions:
        out, err = p.communicate(timeout=600)
        check(p.returncode == 0, f"a burst session failed: {out}{err}")
    n, dups, other = c.row(f"""SELECT count(*), count(*) - count(DISTINCT id),
        count(*) FILTER (WHERE (flakeid_decompose(id, '{layout}')).node <> {node}) FROM burst""")
    print(f"  burst, 4 sessions: {n} IDs, {dups} duplicates, {other} with another node id")
    check(n == "800000" and dups == "0" and other == "0", "burst")


def section_basic(run):
    print("== basic: preloaded cluster: pgbench, vectors, cross-language decode")
    # make's package selection (Makefile, RUST_TEST_PKGS): one build of the dependencies.
    cargo = os.environ.get("CARGO", "cargo")
    subprocess.run(
        [
            cargo,
            "build",
            "-q",
            *shlex.split(os.environ.get("FLAKEID_CARGO_PKGS") or "-p flakeid-cli"),
        ],
        check=True,
        cwd=ROOT,
    )
    cli = os.path.join(
        os.environ.get("CARGO_TARGET_DIR") or os.path.join(ROOT, "target"), "debug", "flakeid"
    )
    c = run.cluster("main", PRELOAD, "flakeid.datacenter = 11", "flakeid.worker = 21").start_ctl()
    c.sql(
        "CREATE EXTENSION flakeid",
        "CREATE TABLE items (id bigint NOT NULL DEFAULT flakeid_next(), client int NOT NULL)",
    )
    log = c.pgbench(
        "INSERT INTO items (client) VALUES (:client_id);", "-c", "8", "-j", "2", "-T", SECS
    )
    for line in log.splitlines():
        if re.match(r"^(number of (transactions actually processed|failed)|tps)", line):
            print(f"  pgbench: {line}")
    rows, distinct, clients, wrong_node = c.row("""
        SELECT count(*), count(DISTINCT id), count(DISTINCT client),
               count(*) FILTER (WHERE (d.datacenter, d.worker, d.node) <> (11, 21, 11 << 5 | 21))
          FROM items, LATERAL flakeid_decompose(id) d""")
    print(
        f"  {rows} rows from {clients} clients, {distinct} distinct IDs, {wrong_node} with another "
        "node id"
    )
    check(
        int(rows) > 1000 and rows == distinct and clients == "8" and wrong_node == "0",
        "duplicates, too few rows, or a wrong node id",
    )
    # Many connections, one generator: 100 sessions each take 105 IDs, in batches and singly.
    c.sql("CREATE TABLE many (id bigint)")
    c.pgbench(
        "INSERT INTO many SELECT flakeid_next_many(20) UNION ALL SELECT flakeid_next();",
        "-c",
        "100",
        "-j",
        "2",
        "-t",
        "5",
    )
    n, dups = c.row("SELECT count(*), count(*) - count(DISTINCT id) FROM many")
    check(n == "10500" and dups == "0", f"{n} IDs from 100 sessions, {dups} duplicates")
    print(f"  100 sessions: {n} IDs, no duplicates")
    burst(c, 11 << 5 | 21, "snowflake")
    # flakeid_stats(), read from yet another session: every ID of every session so far
    # counted exactly once (each backend adds its counts when its transaction ends),
    # the burst's waits for the next ms counted, no lead in overflow = wait.
    m = re.search(r"^number of failed transactions: ([0-9]*)", log, re.M)
    failed = m.group(1) if m and m.group(1) else "0"
    issued, waits, wait_us, lead, rollbacks = c.row(
        "SELECT ids_issued, tick_waits, tick_wait_us, lead_ms, clock_rollbacks FROM flakeid_stats()"
    )
    print(
        f"  flakeid_stats(): {issued} IDs issued, {waits} tick waits ({wait_us} µs), lead {lead} "
        "ms, "
        f"{rollbacks} rollbacks"
    )
    took = int(rows) + 10500 + 800000
    check(
        failed == "0" and int(issued) == took,
        f"flakeid_stats() counted {issued} IDs, the sessions took {took} ({failed} failed)",
    )
    check(
        int(waits) > 0 and int(wait_us) > 0 and lead == "0" and rollbacks == "0",
        f"flakeid_stats() after the burst: {waits} waits, {wait_us} µs, lead {lead}, {rollbacks} "
        "rollbacks",
    )

    crosscheck.vectors(c)

    # Time ranges prune partitions and use indexes (flakeid_in_range; PostgreSQL 15
    # plans `id <@ int8range` as a filter only). The form without a layout name is
    # STABLE: partitions are pruned at executor start (Subplans Removed).
    plans = c.sql(
        "CREATE TABLE ev (id bigint NOT NULL DEFAULT flakeid_next()) PARTITION BY RANGE (id)",
        "CREATE TABLE ev_10 PARTITION OF ev FOR VALUES FROM (flakeid_first_at('2026-10-01')) TO "
        "(flakeid_first_at('2026-11-01'))",
        "CREATE TABLE ev_11 PARTITION OF ev FOR VALUES FROM (flakeid_first_at('2026-11-01')) TO "
        "(flakeid_first_at('2026-12-01'))",
        "EXPLAIN (COSTS OFF) SELECT * FROM ev WHERE flakeid_in_range(id, '[2026-11-22, "
        "2026-11-23)')",
        "EXPLAIN (COSTS OFF) SELECT * FROM ev WHERE flakeid_in_range(id, '[2026-10-22, "
        "2026-10-23)', 'snowflake')",
        "CREATE INDEX ON items (id)",
        "SET enable_seqscan = off",
        "EXPLAIN (COSTS OFF) SELECT count(*) FROM items WHERE flakeid_in_range(id, tstzrange(now() "
        "- interval '1 s', now()))",
        fields=True,
    )
    scans = [line for line in plans.splitlines() if re.search(r"on ev_1[01]", line)]
    check(
        len(scans) == 2
        and "on ev_11" in plans
        and "on ev_10" in plans
        and "Index Cond: ((id >=" in plans,
        f"flakeid_in_range neither pruned partitions nor used the index:\n{plans}",
    )
    print("  flakeid_in_range: partitions pruned (one scanned per query), B-tree index used")
    # IDs made in SQL and what SQL says of each ('|' between fields, as crosscheck.decode
    # reads them).
    made = c.sql(
        """SELECT id, (extract(epoch FROM d.ts) * 1000)::bigint, d.datacenter, d.worker, d.node,
                d.sequence,
            flakeid_encode(id, 'base62'), flakeid_encode(id, 'base32'), flakeid_encode(id, 'hex')
          FROM (SELECT id FROM flakeid_next_many(300) id UNION ALL (SELECT id FROM items LIMIT
              300)) i,
            LATERAL flakeid_decompose(id) d""",
        fields="|",
    )
    crosscheck.decode(made, cli)


def section_plain(run):
    print("== plain: not preloaded: a clear error, pure functions still work")
    c = run.cluster("plain").start_ctl()
    c.sql("CREATE EXTENSION flakeid")
    c.expect_error("SELECT flakeid_next()", "55000", "shared_preload_libraries = 'flakeid'")
    c.expect_error(
        "SELECT flakeid_next_many(3)",
        "55000",
        r"^ERROR:  55000: flakeid_next_many\(\) needs the flakeid library preloaded",
    )
    c.expect_error(
        "SELECT flakeid_uuidv7()",
        "55000",
        r"^ERROR:  55000: flakeid_uuidv7\(\) needs the flakeid library preloaded",
    )
    expect(
        c.one("SELECT flakeid_encode(910499571847892992, 'base62')"),
        "15G63YLn9Ae",
        "pure functions (seed vector 001 in base62)",
    )
    c.stop_ctl()
    host_guard(run)


def host_guard(run):
    """The host guard on one host, held by each server's launcher from when it can
    issue: two servers on one flakeid.node, the second refused (its status says so)
    until the first stops, then issuing without a restart; a same-host standby started
    before its primary, which takes no guard and logs nothing of it; a clean failover
    to it, after which nothing names the stopped old primary."""
    guard = os.path.join(run.work, "host-guard")
    os.makedirs(guard, mode=0o1777)
    os.chmod(guard, 0o1777)
    env = {"FLAKEID_HOST_GUARD": guard}
    first = run.cluster("guard1", PRELOAD, "flakeid.node = 7").start_ctl(env=env)
    second = run.cluster("guard2", PRELOAD, "flakeid.node = 7").start_ctl(env=env)
    for c in (first, second):
        c.sql("CREATE EXTENSION flakeid")
    expect(int(c_node(first)), 7, "the first server issues on node 7")
    out = second.expect_error(
        "SELECT flakeid_next()",
        "55000",
        r"node id 7 of this layout is (already )?in use on this host by process [0-9]+",
    )
    holder = int(re.search(r"by process ([0-9]+)", out).group(1))
    expect(
        parent_pid(holder),
        first.postmaster_pid(),
        "the guard's holder is a process of the first server",
    )
    check(
        re.match(
            r"host guard: refusing: node id 7 of this layout is (already )?in use on this host",
            second.status(),
        ),
        f"the refused server's flakeid_status(): {second.status()}",
    )
    expect(
        second.one("SELECT refusals FROM flakeid_stats()"),
        "1",
        "the refused call in flakeid_stats().refusals",
    )
    confirmed = second.one("SELECT flakeid_confirm_node(7)")
    check(
        "but no ID is issued while the host guard is refused: node id 7" in confirmed,
        f"flakeid_confirm_node() on a server the host guard refuses: {confirmed}",
    )
    first.stop_ctl()
    expect(
        int(c_node(second)), 7, "after the first stopped, the second takes node 7 without a restart"
    )
    expect(second.status(), "ready", "flakeid_status() once the guard is taken")
    print("  refused while another server held node 7; issued once it stopped, without a restart")
    second.stop_ctl()

    primary = run.cluster("guard-primary", PRELOAD, "flakeid.node = 8").start_ctl(env=env)
    primary.sql(
        "CREATE EXTENSION flakeid",
        "CREATE TABLE ids (id bigint PRIMARY KEY DEFAULT flakeid_next())",
        "INSERT INTO ids SELECT flakeid_next() FROM generate_series(1, 1000)",
    )
    standby = run.cluster("guard-standby").copy_from(primary, standby=True)
    primary.stop_ctl()
    standby.start_ctl(env=env)
    primary.start_ctl(env=env)
    primary.sql("INSERT INTO ids SELECT flakeid_next() FROM generate_series(1, 20)")
    expect(primary.status(), "ready", "the primary started after its same-host standby")
    standby.wait_replayed(primary)
    alarming = [
        line for line in standby.log_text().splitlines() if "flakeid" in line and "WARNING" in line
    ]
    expect(alarming, [], "the same-host standby's warnings")
    print("  a same-host standby started first: its primary issues, the standby logs no warning")
    old_pid = primary.postmaster_pid()
    primary.stop_ctl()
    standby.promote()
    standby.expect_error("SELECT flakeid_next()", "55000", r"this server was promoted")
    confirmed = standby.one("SELECT flakeid_confirm_node(8)")
    check(
        "host guard" not in confirmed, f"flakeid_confirm_node() after a clean failover: {confirmed}"
    )
    expect(standby.status(), "ready", "flakeid_status() after a clean same-host failover")
    standby.sql("INSERT INTO ids SELECT flakeid_next() FROM generate_series(1, 20)")
    expect(
        standby.one("SELECT count(*), count(DISTINCT id) FROM ids"),
        "1040 1040",
        "IDs after the failover",
    )
    check(
        "in use on this host" not in standby.log_text()
        and f"process {old_pid}" not in standby.log_text(),
        "the promoted server's log names the stopped old primary",
    )
    print(
        "  a clean same-host failover: confirmed, ready, 20 IDs; nothing names the stopped old "
        "primary"
    )
    standby.stop_ctl()


def parent_pid(pid):
    with open(f"/proc/{pid}/stat") as f:
        return int(f.read().rsplit(")", 1)[1].split()[1])


def c_node(c):
    return c.one("SELECT (flakeid_decompose(flakeid_next())).node")


# NIST's FF1 sample key for AES-128, as in tests/vectors/seal.json, whose first
# snowflake group (no tweak) gives 910499571847892992 → 575246358720680725.
KEY = r"'\x2b7e151628aed2a6abf7158809cf4f3c'::bytea"


def section_functions(run):
    print("== functions: each SQL function's results, errors, volatility and privileges")
    c = run.cluster(
        "functions", PRELOAD, "flakeid.datacenter = 3", "flakeid.worker = 7"
    ).start_ctl()
    # t.failure(q): the SQLSTATE and message `q` fails with (PL/pgSQL catches the ERROR
    # in a subtransaction); t.read_only(q): the same inside a read-only transaction.
    c.sql(
        "CREATE EXTENSION flakeid",
        "CREATE SCHEMA t",
        "GRANT USAGE ON SCHEMA t TO PUBLIC",
        *(
            f"""CREATE FUNCTION t.{name}(q text) RETURNS text LANGUAGE plpgsql AS $$
            BEGIN {setup} EXECUTE q; RETURN 'no error';
            EXCEPTION WHEN others THEN RETURN SQLSTATE || ': ' || SQLERRM; END $$"""
            for name, setup in (
                ("failure", ""),
                ("read_only", "SET LOCAL transaction_read_only = on;"),
            )
        ),
    )

    def failure(sql, *before):
        return c.sql(*before, f"SELECT t.failure($q${sql}$q$)", fields=True)

    def zero(what, sql):
        expect(c.one(sql), "0", what)

    zero(
        "flakeid_next() out of order or with another node id",
        """WITH ids AS (SELECT o, flakeid_next() AS id FROM generate_series(1, 2000) o)
            SELECT count(*) FILTER (WHERE id <= prev OR (d.datacenter, d.worker, d.node) <> (3, 7,
                3 << 5 | 7))
              FROM (SELECT id, lag(id) OVER (ORDER BY o) AS prev FROM ids) s, LATERAL
                  flakeid_decompose(id) d""",
    )
    expect(
        c.row("""SELECT (SELECT count(*) FROM (SELECT id, lag(id) OVER (ORDER BY o) AS prev
                              FROM flakeid_next_many(50000) WITH ORDINALITY AS t(id, o)) s
                             WHERE prev IS NULL OR id > prev),
                           (SELECT count(DISTINCT id) FROM flakeid_next_many(10000) AS id),
                           (SELECT count(*) FROM flakeid_next_many(0))"""),
        ["50000", "10000", "0"],
        "flakeid_next_many(): increasing, distinct, none for 0",
    )
    # A LIMIT stops it, in FROM too: one run of 4,096 made, not 10,000,000 (which would
    # also spill past temp_file_limit with work_mem 64kB).
    issued = "SELECT ids_issued FROM flakeid_stats()"
    before = int(c.one(issued))
    got = c.sql(
        "SET work_mem = '64kB'",
        "SET temp_file_limit = '1MB'",
        "SELECT count(*) FROM (SELECT * FROM flakeid_next_many(10000000) LIMIT 5) s",
        "SELECT count(*) FROM (SELECT flakeid_next_many(10000000) LIMIT 5) s",
        fields=True,
    )
    made = int(c.one(issued)) - before
    check(
        got.split() == ["5", "5"] and made <= 2 * 4096,
        f"LIMIT 5 of flakeid_next_many(10000000): {got.split()} rows, {made} IDs made",
    )

    # flakeid_stats(), read by another session: every ID of the sessions between counted
    # (a backend adds its counts as its transaction ends); overflow = wait: never ahead
    # of the clock; no rollback; no lease (NULLs).
    stats = (
        "SELECT ids_issued, lead_ms, clock_rollbacks, lease_state IS NULL, lease_remaining_ms "
        "IS NULL FROM flakeid_stats()"
    )
    before = c.row(stats)
    c.sql(
        "SELECT count(*) FROM flakeid_next_many(50000)",
        *["SELECT flakeid_next()"] * 7,
        "SELECT count(*) FROM (SELECT flakeid_next() FROM generate_series(1, 993)) s",
    )
    after = c.row(stats)
    expect(
        [int(after[0]) - int(before[0]), *after[1:]], [51000, "0", "0", "t", "t"], "flakeid_stats()"
    )

    expect(
        c.sql(
            "CREATE TABLE filled (id bigint PRIMARY KEY DEFAULT flakeid_next(), v int)",
            "INSERT INTO filled (v) SELECT g FROM generate_series(1, 5000) g",
            "SELECT count(*) FROM (SELECT id > lag(id) OVER (ORDER BY v) AS up FROM filled) s "
            "WHERE up",
            fields=True,
        ),
        "4999",
        "a DEFAULT flakeid_next() column out of order",
    )

    # Seed vector 001: 1505914988849 ms, datacenter 17, worker 25, sequence 0 (snowflake).
    expect(
        c.row("""SELECT flakeid_compose(to_timestamp(1505914988.849), 17 << 5 | 25, 0, 'snowflake'),
                           (extract(epoch FROM ts) * 1000)::bigint, format('%s/%s/%s/%s',
                               datacenter, worker, node, sequence),
                           pg_typeof(flakeid_decompose(910499571847892992)),
                           flakeid_timestamp(910499571847892992) = to_timestamp(1505914988.849)
                      FROM flakeid_decompose(910499571847892992, 'snowflake')"""),
        ["910499571847892992", "1505914988849", "17/25/569/0", "flakeid_parts", "t"],
        "seed vector 001",
    )
    expect(
        c.one("""SELECT flakeid_first_at(t) = flakeid_compose(t, 0, 0)
                       AND flakeid_last_at(t) = flakeid_compose(t, 1023, 4095)
                       AND flakeid_range(tstzrange(t, t + interval '1 ms'))
                           = int8range(flakeid_first_at(t), flakeid_last_at(t), '[]')
                      FROM (VALUES (to_timestamp(1700000000.123))) v(t)"""),
        "t",
        "first, last and range of a tick",
    )
    # Every bound kind, bounds on and between tick starts, with a 10 ms-tick layout too.
    zero(
        "flakeid_range() and flakeid_timestamp() disagree",
        """WITH layouts(l) AS (VALUES ('snowflake'), ('sonyflake'), ('baidu')),
                 ids AS (SELECT l, flakeid_compose(to_timestamp(1700000000) + g * interval
                     '250 us', 0, 0, l) AS id
                           FROM layouts, generate_series(-40000, 40000, 7) g),
                 ranges AS (SELECT tstzrange(to_timestamp(1700000000) + a * interval '1 ms',
                                             to_timestamp(1700000000) + b * interval '1 ms', k) AS r
                              FROM (VALUES (-3.5, 2.0), (0, 10), (0.25, 1000), (-1000, -0.5), (5,
                                  5)) x(a, b),
                                   (VALUES ('[]'), ('[)'), ('(]'), ('()')) y(k))
            SELECT count(*) FROM ids, ranges WHERE (flakeid_timestamp(id, l) <@ r) <> (id <@
                flakeid_range(r, l))""",
    )
    zero(
        "flakeid_in_range() and flakeid_range() disagree",
        """SELECT count(*) FROM generate_series(2124291769758646272 - 5000000, 2124291769758646272
                + 5000000, 4099) id,
                   (VALUES (tstzrange('2026-11-22', '2026-11-22 00:00:00.0011', '(]')), ('(,)'),
                       ('empty'),
                           (tstzrange('2026-11-21 23:59:59.999', '2026-11-22 00:00:00.001'))) r(r)
             WHERE (id <@ flakeid_range(r)) <> flakeid_in_range(id, r)""",
    )
    expect(
        c.one("""SELECT flakeid_range(tstzrange(NULL, NULL)) = int8range(0, NULL)
                       AND isempty(flakeid_range(tstzrange('1960-01-01', '1961-01-01')))
                       AND isempty(flakeid_range('empty'::tstzrange))"""),
        "t",
        "open and empty ranges",
    )
    # Without the encoding only where the text is unambiguous: the encodings of 0 are
    # all zeros, which read as a zero-padded int too (one decode rule with the CLI and
    # the service: such text asks for the encoding).
    expect(
        c.row("""SELECT bool_and(flakeid_decode(flakeid_encode(id, e), e) = id
                                    AND (id = 0 OR flakeid_decode(flakeid_encode(id, e)) = id)),
                           min(flakeid_encode(910499571847892992, 'hex'))
                      FROM (VALUES (0::bigint), (910499571847892992), (9223372036854775807)) v(id),
                           (VALUES ('base62'), ('base32'), ('hex')) w(e)"""),
        ["t", "0ca2be895c239000"],
        "encodings round trip",
    )

    # Bad input: its SQLSTATE, and a message naming the argument (and its range).
    for sql, want in (
        (
            "SELECT flakeid_first_at(now(), 'nope')",
            '22023: invalid value for argument "layout": layout must be '
            'one of snowflake, flake, discord, sonyflake, baidu, instagram, js53, got "nope"',
        ),
        (
            "SELECT flakeid_compose(now(), 5000, 0, 'snowflake')",
            '22023: invalid value for argument "node": node must be in 0..=1023, got 5000',
        ),
        (
            "SELECT flakeid_encode(-1, 'hex')",
            '22003: invalid value for argument "id": a flakeid is never negative, got -1',
        ),
        ("SELECT flakeid_decode('abc!', 'base62')", '22P02: invalid input for argument "text"'),
        (
            "SELECT flakeid_decode('zzzzzzzzzzzzzzzz', 'hex')",
            '22P02: invalid input for argument "text"',
        ),
        ("SELECT flakeid_encode(1, 'base64')", '22023: invalid value for argument "encoding"'),
        ("SELECT flakeid_timestamp(1, 'snowflak')", '22023: invalid value for argument "layout"'),
        (
            "SELECT flakeid_compose(now(), 0, 4096, 'snowflake')",
            '22023: invalid value for argument "sequence"',
        ),
        ("SELECT flakeid_decompose(-5)", '22003: invalid value for argument "id"'),
        ("SELECT flakeid_first_at('1960-01-01'::timestamptz)", "22008: "),
        ("SELECT flakeid_first_at('infinity'::timestamptz)", "22008: "),
        ("SELECT flakeid_next_many(-1)", '22023: invalid value for argument "n"'),
    ):
        got = failure(sql)
        check(got.startswith(want), f"{sql}: got {got!r}, want {want!r}...")

    # IMMUTABLE only when the arguments alone decide (a layout name, or no layout at
    # all); STABLE when flakeid.layout does; VOLATILE for the generator.
    expect(
        c.row(
            r"""SELECT coalesce(string_agg(format('%s(%s) is %s', proname,
                    pg_get_function_identity_arguments(oid),
                                                  provolatile), ', ') FILTER (WHERE provolatile <>
                                                      CASE
            WHEN proname IN ('flakeid_next', 'flakeid_next_many_rows', 'flakeid_next_sealed',
                'flakeid_confirm_node',
                             'flakeid_resume_after', 'flakeid_status', 'flakeid_stats',
                                 'flakeid_uuidv7', 'flakeid_ulid',
                             'flakeid_typeid', 'flakeid_uuidv7_many_rows', 'flakeid_uuidv7_at')
                                 THEN 'v'
            -- SQL wrappers PostgreSQL inlines (so a LIMIT stops them) only when not
            -- VOLATILE: they call the VOLATILE _rows functions (src/generate.rs).
            WHEN proname IN ('flakeid_next_many', 'flakeid_uuidv7_many') THEN 's'
            WHEN proname IN ('flakeid_encode', 'flakeid_decode') THEN 'i'
            -- The 128-bit family's readers: no layout, the arguments alone decide.
            WHEN proname ~ '^flakeid_(uuid|ulid|typeid)' THEN 'i'
            WHEN 'layout' = ANY (proargnames) THEN 'i'
            ELSE 's' END), 'right'), count(*)
          FROM pg_proc WHERE proname LIKE 'flakeid\_%'""",
            sep="|",
        ),
        ["right", "46"],
        "the functions' volatility",
    )
    expect(
        c.one(
            "SELECT string_agg(provolatile::text, '') FROM pg_proc WHERE proname = "
            "'convert_sequence_to_flakeid'"
        ),
        "v",
        "convert_sequence_to_flakeid() is VOLATILE",
    )

    expect(
        c.sql(
            "CREATE TEMP TABLE ids AS SELECT flakeid_next_many(20000) AS id",
            """SELECT s.high_water_mark >= (SELECT flakeid_timestamp(max(id)) FROM ids) AND s.state
                    = 'ready'
                      FROM flakeid_status() s""",
            fields=True,
        ),
        "t",
        "the high-water mark behind an ID",
    )
    for sql, want in (
        ("SELECT flakeid_next()", "flakeid_next()"),
        ("SELECT count(*) FROM flakeid_next_many(3)", "flakeid_next_many()"),
        ("SELECT nextval('ro_seq')", "nextval()"),
    ):
        expect(
            c.sql(
                "CREATE SEQUENCE IF NOT EXISTS ro_seq",
                f"SELECT t.read_only($q${sql}$q$)",
                fields=True,
            ),
            f"25006: cannot execute {want} in a read-only transaction",
            "a read-only transaction, as nextval",
        )
    expect(
        c.sql(
            "BEGIN",
            "CREATE SCHEMA lookalike",
            "CREATE TYPE lookalike.flakeid_parts AS (ts text, worker text)",
            "SET LOCAL search_path = lookalike, public",
            """SELECT format('%s %s', pg_typeof(flakeid_decompose(910499571847892992)),
                                  (flakeid_decompose(910499571847892992, 'snowflake')).worker)""",
            "ROLLBACK",
            fields=True,
        ),
        "public.flakeid_parts 25",
        "a look-alike type first on search_path",
    )

    # Confirming another node id is refused. On a server already issuing, confirming
    # changes nothing a backend resumes after: its durable mark is reserved ahead of
    # the clock, and a backend started after the confirmation must not start there
    # (its clock would be "behind", an error under flakeid.clock_backwards = 'fail').
    expect(
        failure("SELECT flakeid_confirm_node(5)"),
        "22023: flakeid_confirm_node(): this server's node id is 103, not 5",
        "confirming another node id",
    )
    c.one("SELECT count(*) FROM flakeid_next_many(10000)")
    confirmed = c.one("SELECT flakeid_confirm_node(103)")
    check(
        confirmed.startswith("node id 103 may issue IDs on timeline 1")
        and "borrowed" not in confirmed,
        confirmed,
    )
    expect(
        c.one("SELECT count(*) FROM flakeid_next_many(1000)"),
        "1000",
        "a backend started after the confirmation",
    )

    # Rows written elsewhere (a restore, another server with this node id) that hold the
    # IDs a default issues next: PostgreSQL's duplicate-key error, with a HINT naming the
    # table and flakeid_resume_after. The statement's own second insert of an ID it was
    # given once (a CTE, a batch used twice) wrote a row after the ID was issued: no
    # HINT, nor for an ID the application inserts again in a later command.
    restored = (
        r"HINT:  This server issued (?P<key>[0-9]+) in this statement, which has written no "
        r"row since, and a row of public\.{t} already holds it: rows written elsewhere "
        r"(.|\n)* SELECT flakeid_resume_after\(max\(id\)\) FROM public\.{t};"
    )

    def restored_table(name):
        """A table whose default is flakeid_next(), holding the IDs node 103 issues in
        the next 3 s (sequences 0 to 15 of each ms), as a restore would."""
        c.sql(
            f"CREATE TABLE {name} (id bigint PRIMARY KEY DEFAULT flakeid_next(), note text)",
            f"""INSERT INTO {name}
                   SELECT flakeid_compose(t0 + i * interval '1 ms', 103, s), 'restored'
                   FROM (SELECT clock_timestamp() AS t0) t, generate_series(0, 2999) i,
                       generate_series(0, 15) s""",
        )

    restored_table("restored")
    out = c.expect_error(
        "INSERT INTO restored (note) SELECT 'new' FROM generate_series(1, 10)",
        "23505",
        r'duplicate key value violates unique constraint "restored_pkey"(.|\n)*'
        + restored.format(t="restored"),
    )
    key = re.search(r"HINT:  This server issued ([0-9]+)", out).group(1)
    expect(
        c.one(f"SELECT count(*) FROM public.restored WHERE id = {key}"),
        "1",
        "the row the HINT names",
    )
    # Rows the statement wrote before the default that meets a restored row: the count
    # of rows written moved, the default's ID was issued after it.
    c.expect_error(
        "INSERT INTO restored (id, note) VALUES (1, 'mine'), (2, 'mine'), (DEFAULT, 'new')",
        "23505",
        restored.format(t="restored"),
    )
    # COPY's defaults, issued for its buffered rows before they are inserted.
    c.expect_error(
        "COPY restored (note) FROM PROGRAM 'seq 1 100'", "23505", restored.format(t="restored")
    )
    # The statement's own duplicates: no HINT.
    c.sql("CREATE TABLE mine (id bigint PRIMARY KEY)")
    for how, sql in (
        (
            "a CTE",
            "WITH one AS (SELECT flakeid_next() AS id) "
            "INSERT INTO mine SELECT id FROM one UNION ALL SELECT id FROM one",
        ),
        (
            "a batch used twice",
            "WITH b AS MATERIALIZED (SELECT flakeid_next_many(3) AS id) "
            "INSERT INTO mine SELECT id FROM b UNION ALL SELECT id FROM b",
        ),
    ):
        out = c.expect_error(
            sql, "23505", r'duplicate key value violates unique constraint "mine_pkey"'
        )
        check("HINT" not in out, f"{how} inserting one ID twice got the restore HINT:\n{out}")
    # After a subtransaction's abort inside the statement (a PL/pgSQL block that caught
    # an error in a query) its count of rows is not known: the HINT names both causes
    # and the query that tells them apart.
    c.sql(
        """CREATE FUNCTION swallowed() RETURNS bigint LANGUAGE plpgsql AS $$
           BEGIN
             BEGIN PERFORM 1 / x FROM (VALUES (0)) v(x); EXCEPTION WHEN division_by_zero THEN END;
             RETURN flakeid_next();
           END $$"""
    )
    out = c.expect_error(
        "WITH one AS MATERIALIZED (SELECT swallowed() AS id) "
        "INSERT INTO mine SELECT id FROM one UNION ALL SELECT id FROM one",
        "23505",
        r"HINT:  This server issued (?P<key>[0-9]+) in this statement, and a row of public\.mine "
        r"already holds it\. Either the statement inserted (?P=key) twice itself(.|\n)* SELECT id "
        r"FROM public\.mine WHERE id = (?P=key); finds the row only in the second case",
    )
    # A caught error in a query no executor runs around (a DO block's own, failing as
    # it runs: random() is not folded away) leaves the count unknown until its
    # transaction ends, not after: the next statement's duplicate on a restored row
    # gets the HINT that names the repair.
    restored_table("restored_later")
    r = subprocess.run(
        c.tcp_args("-v", "VERBOSITY=verbose"),
        capture_output=True,
        text=True,
        input="DO $$BEGIN BEGIN PERFORM 1 / x FROM (SELECT (random() * 0)::int AS x) v; "
        "EXCEPTION WHEN division_by_zero THEN END; END $$;\n"
        "COPY restored_later (note) FROM PROGRAM 'seq 1 100';\n",
        timeout=60,
    )
    out = r.stdout + r.stderr
    check(
        re.search(restored.format(t="restored_later"), out) is not None,
        f"COPY onto restored rows after a DO block's caught error, in its session:\n{out}",
    )
    c.sql("CREATE TABLE own (id bigint PRIMARY KEY)")
    out = c.expect_error(
        """DO $$DECLARE i bigint := flakeid_next();
                            BEGIN INSERT INTO own VALUES (i); INSERT INTO own VALUES (i); END $$""",
        "23505",
        r'duplicate key value violates unique constraint "own_pkey"',
    )
    check(
        "HINT" not in out, f"an ID inserted twice by the application got the restore HINT:\n{out}"
    )
    # The same through COPY in one session (which starts no executor: a command of its
    # own all the same).
    r = subprocess.run(
        c.tcp_args("-v", "VERBOSITY=verbose", "-v", "ON_ERROR_STOP=1"),
        capture_output=True,
        text=True,
        input="SELECT flakeid_next() AS own \\gset\n\\set cmd 'echo ' :own\n"
        "COPY own FROM PROGRAM :'cmd';\nCOPY own FROM PROGRAM :'cmd';\n",
        timeout=60,
    )
    out = r.stdout + r.stderr
    check(
        r.returncode != 0 and "ERROR:  23505" in out, f"COPY of one ID twice did not fail:\n{out}"
    )
    check(
        "HINT" not in out, f"an ID copied in twice by the application got the restore HINT:\n{out}"
    )

    # flakeid_resume_after(id): every later ID above `id`, in every session; refused
    # for a negative ID, one far ahead of the clock, a read-only transaction and a
    # plain user.
    ahead = c.one("SELECT flakeid_compose(clock_timestamp() + interval '300 ms', 103, 5)")
    c.one(f"SELECT flakeid_resume_after({ahead})")
    expect(
        c.one(
            f"SELECT flakeid_next() > {ahead}, (SELECT min(id) FROM flakeid_next_many(100) id) > "
            f"{ahead}"
        ),
        "t t",
        "IDs after flakeid_resume_after()",
    )
    expect(
        failure("SELECT flakeid_resume_after(-5)")[:49],
        '22003: invalid value for argument "id": a flakeid',
        "flakeid_resume_after() of a negative ID",
    )
    check(
        failure(
            "SELECT flakeid_resume_after(flakeid_compose(now() + interval '1 day', 103, 0))"
        ).startswith('22023: invalid value for argument "id": '),
        "flakeid_resume_after() of an ID a day ahead",
    )
    expect(
        c.sql("SELECT t.read_only($q$SELECT flakeid_resume_after(1)$q$)", fields=True),
        "25006: cannot execute flakeid_resume_after() in a read-only transaction",
        "flakeid_resume_after() read-only",
    )
    expect(
        c.sql(
            "BEGIN",
            "CREATE ROLE flakeid_restorer",
            "SET LOCAL ROLE flakeid_restorer",
            "SELECT t.failure($q$SELECT flakeid_resume_after(1)$q$)",
            "ROLLBACK",
            fields=True,
        )[:6],
        "42501:",
        "flakeid_resume_after() by a plain user",
    )

    expect(
        c.row(f"""SELECT flakeid_seal(910499571847892992, {KEY}), flakeid_seal(910499571847892992,
                      {KEY}, '', 'snowflake'),
                            flakeid_unseal(575246358720680725, {KEY}),
                            flakeid_seal(910499571847892992, {KEY}, 'orders') <> 575246358720680725,
                            flakeid_unseal(flakeid_seal(910499571847892992, {KEY}, 'orders'),
                                {KEY}, 'orders'::bytea)"""),
        [
            "575246358720680725",
            "575246358720680725",
            "910499571847892992",
            "t",
            "910499571847892992",
        ],
        "the seal vectors, a tweak and their inverses",
    )
    # Every row of a table, and back (one cached sealer for the statement); a 64-bit
    # layout's sealed IDs use the whole bigint, negatives included.
    same, negative, back = c.row(f"""SELECT
        (SELECT count(*) FROM (SELECT id, flakeid_unseal(flakeid_seal(id, {KEY}), {KEY}) AS again
                                 FROM flakeid_next_many(5000) AS id) s WHERE id = again),
        (SELECT count(*) FROM generate_series(1, 200) g WHERE flakeid_seal(g, {KEY}, '', 'discord')
            < 0),
        (SELECT count(*) FROM generate_series(1, 200) g
          WHERE flakeid_unseal(flakeid_seal(g, {KEY}, '', 'discord'), {KEY}, '', 'discord') = g)""")
    check(
        same == "5000" and 40 <= int(negative) <= 160 and back == "200",
        f"sealing a table: {same} {negative} {back}",
    )
    for sql, want in (
        (
            r"SELECT flakeid_seal(1, '\x00112233445566778899aabbccddee'::bytea)",
            '22023: invalid value for argument "key": key must be 16, 24 or 32 bytes',
        ),
        (
            f"SELECT flakeid_seal(-1, {KEY})",
            '22023: invalid value for argument "id": id must be in 0..=9223372036854775807, got -1',
        ),
        (
            f"SELECT flakeid_unseal(-5, {KEY}, '', 'snowflake')",
            '22023: invalid value for argument "id"',
        ),
        (
            f"SELECT flakeid_seal(1, {KEY}, '', 'nope')",
            '22023: invalid value for argument "layout"',
        ),
    ):
        got = failure(sql)
        check(
            got.startswith(want) and "2b7e15" not in got and "00112233" not in got,
            f"{sql}: got {got!r}",
        )

    # flakeid_next_sealed() needs flakeid.seal_key, seals with it (the cache follows
    # the setting), and never shows it.
    expect(
        failure("SELECT flakeid_next_sealed()"),
        "55000: flakeid_next_sealed() needs a key: flakeid.seal_key is not set",
        "next_sealed without a key",
    )
    got = failure("SELECT flakeid_next_sealed()", "SET flakeid.seal_key = 'abcdef'")
    check(
        got.startswith(
            '22023: invalid value for parameter "flakeid.seal_key": key must be 32, 48 or 64 hex '
            "digits"
        )
        and "abcdef" not in got,
        got,
    )
    unordered, plain_up, node, other_node, listed = c.sql(
        "SET flakeid.seal_key = '2b7e151628aed2a6 abf7158809cf4f3c'",
        f"""CREATE TEMP TABLE s AS SELECT o, id, flakeid_unseal(id, {KEY}) AS plain
              FROM (SELECT o, flakeid_next_sealed() AS id FROM generate_series(1, 50) o) x""",
        "SET flakeid.seal_key = '000102030405060708090a0b0c0d0e0f'",
        r"""SELECT (SELECT count(*) FILTER (WHERE id < prev) FROM (SELECT id, lag(id) OVER (ORDER
                BY o) prev FROM s) a),
                   (SELECT count(*) FILTER (WHERE plain > prev) FROM (SELECT plain, lag(plain) OVER
                       (ORDER BY o) prev FROM s) b),
                   (SELECT min((flakeid_decompose(plain)).node) FROM s),
                   (flakeid_unseal(flakeid_next_sealed(),
                       '\x000102030405060708090a0b0c0d0e0f'::bytea) >> 12) & 1023,
                   (SELECT count(*) FROM pg_show_all_settings() WHERE name = 'flakeid.seal_key')""",
        fields=True,
    ).split(" ")
    check(
        int(unordered) > 0
        and plain_up == "49"
        and node == "103"
        and other_node == "103"
        and listed == "0",
        f"next_sealed: {unordered} out of order sealed, {plain_up}/49 in order unsealed, node "
        f"{node} and "
        f"{other_node} under another key, listed {listed}",
    )
    # Only superusers set or read the key; anyone may issue sealed IDs with it.
    read, set_, sealed = c.sql(
        "BEGIN",
        "CREATE ROLE flakeid_plain_user",
        "SET flakeid.seal_key = '000102030405060708090a0b0c0d0e0f'",
        "SET LOCAL ROLE flakeid_plain_user",
        "SELECT t.failure($q$SELECT current_setting('flakeid.seal_key')$q$)",
        "SELECT t.failure($q$SET flakeid.seal_key = '00112233445566778899aabbccddeeff'$q$)",
        "SELECT flakeid_next_sealed() >= 0",
        "ROLLBACK",
        fields=True,
    ).splitlines()
    check(
        read.startswith("42501: ")
        and "000102" not in read
        and set_.startswith("42501: ")
        and sealed == "t",
        f"the seal key and a plain user: read {read!r}, set {set_!r}, sealed {sealed}",
    )

    # Every option of the core's table (tests/vectors/options.json) is a setting
    # flakeid.<name>, or one of these, for the reason given; docs/postgres.md lists
    # each either way.
    not_settings = {
        "clock": "a manual clock for tests: a handle, not a value; the server reads the OS clock",
        "state": "a file for one process's high-water mark: the server keeps its own, WAL-logged",
        "require_node": "the server always requires a node source",
        "single_instance": "the server always requires a node source: it never picks one on the "
        "host",
    }
    options = [o["name"] for o in load_vectors("options.json")["options"]]
    with open(os.path.join(ROOT, "docs", "postgres.md")) as f:
        docs = f.read()
    settings = c.one(
        "SELECT string_agg(name, ' ') FROM pg_settings WHERE name LIKE 'flakeid.%'"
    ).split()
    for name in options:
        setting = f"flakeid.{name}" in settings
        check(
            setting != (name in not_settings),
            f"{name}: a setting flakeid.{name} or a reason why not (one)",
        )
        row = f"`flakeid.{name}`" if setting else f"`{name}`"
        check(row in docs, f"docs/postgres.md does not list {row}")


def section_borrow(run):
    print("== borrow: another layout and overflow = borrow")
    c = run.cluster(
        "borrow",
        PRELOAD,
        "flakeid.layout = 'discord'",
        "flakeid.node = 7",
        "flakeid.overflow = 'borrow'",
    ).start_ctl()
    c.sql("CREATE EXTENSION flakeid")
    burst(c, 7, "discord")
    # Borrowing runs ahead of the clock, never past flakeid.max_borrow_ms (2000).
    issued, lead = c.row("SELECT ids_issued, lead_ms FROM flakeid_stats()")
    print(f"  flakeid_stats(): {issued} IDs issued, lead {lead} ms")
    check(
        issued == "800000" and int(lead) <= 2000,
        f"flakeid_stats() after a borrowing burst: {issued} IDs, lead {lead} ms",
    )
    # Functions without a layout name read the server's flakeid.layout.
    expect(
        c.one("""SELECT abs(extract(epoch FROM flakeid_timestamp(flakeid_next()) - now())) < 10
          AND flakeid_first_at(now()) = flakeid_first_at(now(), 'discord')"""),
        "t",
        "the server's layout is not discord",
    )


def origins(run):
    """flakeid's 4 replication origins, against the setting each major counts them by
    (17 and older: max_replication_slots; 18: max_active_replication_origins): too
    few refuses the server at start, naming the setting; on 18 no slot is needed."""
    setting = "max_active_replication_origins" if MAJOR >= 18 else "max_replication_slots"
    print(f"== settings: the origins need {setting} >= 4 on PostgreSQL {MAJOR}")
    c = run.cluster("origins", PRELOAD, "flakeid.node = 5", f"{setting} = 3").start_ctl()
    c.sql("CREATE EXTENSION flakeid")
    state = c.verdict()
    check(
        state.startswith("failed: ") and f"need {setting} >= 4 (it is 3" in state,
        f"the start-up check with {setting} = 3: {state}",
    )
    c.expect_error(
        "SELECT flakeid_next()", "55000", rf"start-up check failed: .*need {setting} >= 4 \(it is 3"
    )
    c.stop_ctl()
    if MAJOR >= 18:
        c.append_conf(f"{setting} = 4", "max_replication_slots = 0", "max_wal_senders = 0")
        c.start_ctl()
        expect(c.verdict(), "ready", f"{setting} = 4 and max_replication_slots = 0")
        c.sql("SELECT flakeid_next_many(1000)")
        print("  max_replication_slots = 0, max_active_replication_origins = 4: ready, 1000 IDs")
        c.stop_ctl()


def section_settings(run):
    origins(run)
    print("== settings: refused when set, naming the setting, its range and its file")
    c = run.cluster("conf", PRELOAD, "flakeid.node = 5").start_ctl()
    data = re.escape(c.data)
    conf = os.path.join(c.data, "postgresql.conf")
    auto = os.path.join(c.data, "postgresql.auto.conf")
    c.sql("CREATE EXTENSION flakeid")
    c.expect_error(
        "ALTER SYSTEM SET flakeid.node = 5000",
        "22023",
        r'invalid value for parameter "flakeid.node": node must be in 0\.\.=1023, got 5000',
    )
    c.expect_error(
        "ALTER SYSTEM SET flakeid.layout = 'bogus'",
        "22023",
        r'invalid value for parameter "flakeid.layout": layout must be one of snowflake, .*got '
        r'"bogus"',
    )
    # (17 refuses a name under a reserved prefix before looking it up: 42602, not 42704.)
    c.expect_error(
        "ALTER SYSTEM SET flakeid.wroker = 7",
        "42602" if MAJOR >= 17 else "42704",
        r'"flakeid.wroker"',
    )
    c.expect_error(
        "ALTER SYSTEM SET flakeid.clock_backwards = 'later'", "22023", r"flakeid.clock_backwards"
    )
    c.expect_error(
        "ALTER SYSTEM SET flakeid.max_wait_ms = 86400001", "22023", r"flakeid.max_wait_ms.*86400000"
    )
    c.expect_error(
        "ALTER SYSTEM SET flakeid.max_sequence = 5",
        "22023",
        r'invalid value for parameter "flakeid.max_sequence": max_sequence must be 2\^k - 1 in '
        r"0\.\.=4095 .*got 5 \(flakeid.layout is snowflake\)",
    )
    c.expect_error(
        "ALTER SYSTEM SET flakeid.datacenter = 3",
        "22023",
        rf"flakeid.datacenter = 3 cannot be set while flakeid.node = 5 \({data}/postgresql.conf "
        r"line "
        r"[0-9]+\) is set",
    )
    # A layout and node changed in two steps: each is checked against the other as the
    # files hold it (what the next start applies), not against the running values.
    c.sql("ALTER SYSTEM SET flakeid.layout = 'sonyflake'", "ALTER SYSTEM SET flakeid.node = 60000")
    c.expect_error(
        "ALTER SYSTEM SET flakeid.layout = 'discord'",
        "22023",
        rf"the discord layout cannot hold flakeid.node = 60000 \({data}/postgresql.auto.conf line "
        r"[0-9]+\)",
    )
    # A bad value written by hand is reported at reload, before any restart.
    with open(conf) as f:
        original = f.read()
    with open(conf, "a") as f:
        f.write("flakeid.worker = 3\nflakeid.max_wait_ms = 0x10\n")
    lines = original.count("\n") + 2
    c.sql("SELECT pg_reload_conf()")
    bad = 'invalid value for parameter "flakeid.worker"'
    wait_until(lambda: bad in c.log_text(), 30, "the reload did not report flakeid.worker")
    reported = next(line for line in c.log_text().splitlines() if bad in line)
    print("  reload: " + re.sub(r"^.*LOG: *", "", reported))
    check(
        "flakeid.worker = 3 cannot be set while flakeid.node = 60000" in c.log_text(),
        "the reload did not report flakeid.worker",
    )
    # A reload reads the text too: PostgreSQL alone would read 0x10 as 16. (The
    # postmaster logs it after flakeid.worker's line, the file's order.)
    reported = (
        r'invalid value for parameter "flakeid.max_wait_ms": max_wait_ms must be a whole number in '
        r'0\.\.=86400000, got "0x10"\n.*HINT:  flakeid.max_wait_ms = 0x10 is set in '
        rf"{data}/postgresql.conf line {lines}; integer settings take decimal integers only"
    )
    wait_until(
        lambda: re.search(reported, c.log_text()),
        30,
        "the reload did not report flakeid.max_wait_ms = 0x10",
    )
    with open(conf, "w") as f:
        f.write(original)
    # The two-step change applies at the next start.
    c.stop_ctl()
    c.start_ctl()
    expect(
        c.one("SELECT (flakeid_decompose(flakeid_next(), 'sonyflake')).node"),
        "60000",
        "sonyflake node 60000",
    )
    print("  ALTER SYSTEM flakeid.layout = 'sonyflake', flakeid.node = 60000: applied at restart")

    # A bad value at start (in postgresql.auto.conf by hand): the server starts (a
    # setting must not take the database down), warns, and flakeid_next() refuses.
    c.stop_ctl()
    with open(auto, "w") as f:
        f.write("flakeid.layout = 'snowflake'\nflakeid.node = 5000\n")
    c.start_ctl()
    check(
        'WARNING:  invalid value for parameter "flakeid.node": node must be in 0..=1023, got 5000'
        in c.log_text(),
        "no warning at start for flakeid.node = 5000",
    )
    c.expect_error(
        "SELECT flakeid_next()",
        "22023",
        rf"flakeid.node = 5000 \({data}/postgresql.auto.conf line 2\) was refused when the server "
        r"started",
    )
    c.expect_error(
        "SELECT * FROM flakeid_next_many(2)", "22023", r"LOCATION:  flakeid_next_many, server\.rs"
    )
    # A value PostgreSQL itself refuses (not an integer): named with its file and line too.
    c.stop_ctl()
    with open(auto, "w") as f:
        f.write("flakeid.node = 'abc'\n")
    c.start_ctl()
    c.expect_error(
        "SELECT flakeid_next()",
        "22023",
        r'invalid value for parameter "flakeid.node": node must be a number, "env:VAR", '
        r'"hostname", '
        r'"mac" or "ipv4", got "abc"(.|\n)*'
        rf"flakeid.node = abc \({data}/postgresql.auto.conf line 1\) was refused when the server "
        r"started",
    )
    # Integer settings take decimal integers only: alone, PostgreSQL reads 1.5 and 2.5 as
    # 2, 0x10 as 16 and 010 as 8 without a word, and refuses 99999999999 as no integer.
    # Refused by ALTER SYSTEM, and in a file at start by every call, in the engine's
    # words, naming the value, the file and the line.
    not_node = r'node must be a number, "env:VAR", "hostname", "mac" or "ipv4", got "{}"'
    for typed, value, reason in [
        ("1.5", "1.5", not_node.format(r"1\.5")),
        ("'2.5'", "2.5", not_node.format(r"2\.5")),
        ("'0x10'", "0x10", not_node.format("0x10")),
        (
            "'010'",
            "010",
            r'node must be a whole number in 0\.\.=[0-9]+, got "010" '
            r"\(PostgreSQL reads a leading 0 as octal\)",
        ),
        ("99999999999", "99999999999", r"node must be in 0\.\.=1023, got 99999999999"),
    ]:
        c.expect_error(
            f"ALTER SYSTEM SET flakeid.node = {typed}",
            "22023",
            rf'invalid value for parameter "flakeid.node": {reason}',
        )
        c.stop_ctl()
        with open(auto, "w") as f:
            f.write(f"flakeid.node = '{value}'\n")
        c.start_ctl()
        c.expect_error(
            "SELECT flakeid_next()",
            "22023",
            rf'invalid value for parameter "flakeid.node": {reason}(.|\n)*flakeid.node = '
            rf"{re.escape(value)} "
            rf"\({data}/postgresql.auto.conf line 1\) was refused when the server started",
        )
    if MAJOR >= 16:
        # From 16 the SQL parser reads these unquoted as numbers before any hook sees them.
        for typed in ("0x10", "0o20", "0b1", "1_000", "- 0x10"):
            c.expect_error(
                f"ALTER SYSTEM SET flakeid.node = {typed}",
                "22023",
                r'invalid value for parameter "flakeid.node": node must be '
                rf'(a number, .*|in 0\.\.=1023, )got "{re.escape(typed.replace(" ", ""))}"',
            )
        c.expect_error(
            "ALTER SYSTEM SET flakeid.max_borrow_ms = 0x10",
            "22023",
            r'invalid value for parameter "flakeid.max_borrow_ms": max_borrow_ms must be a whole '
            r"number "
            r'in 0\.\.=86400000, got "0x10"',
        )
    c.expect_error(
        "ALTER SYSTEM SET flakeid.max_wait_ms = 1.5",
        "22023",
        r'invalid value for parameter "flakeid.max_wait_ms": max_wait_ms must be a whole number in '
        r'0\.\.=86400000, got "1\.5"',
    )
    c.expect_error(
        "ALTER SYSTEM SET flakeid.max_borrow_ms = '0x10'",
        "22023",
        r'invalid value for parameter "flakeid.max_borrow_ms": max_borrow_ms must be a whole '
        r"number in "
        r'0\.\.=86400000, got "0x10"',
    )
    c.sql("ALTER SYSTEM SET flakeid.max_wait_ms = 1500", "ALTER SYSTEM RESET flakeid.max_wait_ms")

    # No node at all: an error, never node 0.
    c.stop_ctl()
    open(auto, "w").close()
    with open(conf) as f:
        kept = [line for line in f if not line.startswith("flakeid.node")]
    with open(conf, "w") as f:
        f.writelines(kept)
    c.start_ctl()
    c.expect_error(
        "SELECT flakeid_next()",
        "22023",
        "this server has no node id: flakeid.node, flakeid.datacenter and flakeid.worker, or "
        "flakeid.lease must be set",
    )

    # node and datacenter/worker both in postgresql.conf: the error names both settings.
    c.stop_ctl()
    c.append_conf("flakeid.node = 5", "flakeid.datacenter = 1", "flakeid.worker = 2")
    c.start_ctl()
    c.expect_error(
        "SELECT flakeid_next()",
        "22023",
        r'invalid value for parameter "flakeid.datacenter": flakeid.datacenter = 1 cannot be set '
        r"while "
        r"flakeid.node = 5 is set",
    )
    c.stop_ctl()

    # flakeid.max_sequence = 0: one ID per ms, so a batch waits out a tick for each ID
    # after the first, and flakeid_stats() counts those waits.
    s = run.cluster("seq", PRELOAD, "flakeid.node = 6", "flakeid.max_sequence = 0")
    s.port = c.port
    s.start_ctl()
    s.sql("CREATE EXTENSION flakeid")
    expect(
        s.one("""SELECT count(*), count(DISTINCT d.ts), max(d.sequence), min(d.node)
          FROM flakeid_next_many(50) id, flakeid_decompose(id) d"""),
        "50 50 0 6",
        "flakeid.max_sequence = 0: not one ID per ms",
    )
    issued, waits, wait_us = s.row(
        "SELECT ids_issued, tick_waits, tick_wait_us FROM flakeid_stats()"
    )
    print(
        f"  flakeid.max_sequence = 0: 50 IDs in 50 ms; flakeid_stats(): {issued} issued, {waits} "
        "tick waits, "
        f"{wait_us} µs"
    )
    check(
        issued == "50" and 40 <= int(waits) <= 49 and int(wait_us) >= 20000,
        f"flakeid_stats() with max_sequence = 0: {issued} issued, {waits} waits, {wait_us} µs",
    )

    # flakeid.lease_ttl_ms without flakeid.lease means nothing: refused as the core
    # refuses it (naming the setting and its file), not ignored.
    s.stop_ctl()
    s.append_conf("flakeid.lease_ttl_ms = 5000")
    s.start_ctl()
    s.expect_error(
        "SELECT flakeid_next()",
        "22023",
        r'invalid value for parameter "flakeid.lease_ttl_ms": lease_ttl_ms is set but lease is not',
    )
    s.expect_error(
        "SELECT flakeid_next()",
        "22023",
        rf"HINT:  flakeid.lease_ttl_ms is set in {re.escape(s.data)}/postgresql.conf line [0-9]+",
    )


def section_options(run):
    """Each case of tests/vectors/options.json, as every binding runs them, through the
    server's settings: its options in postgresql.conf as flakeid.<name> (with
    flakeid.node = 0 when the case gives no node id: a server needs one), on a fresh
    cluster each (a borrowing case leaves a high-water mark ahead of the clock that the
    next would rightly refuse). A case that builds must start without a warning, issue
    an ID and show each value in pg_settings; a refused one must be refused naming
    flakeid.<field> (invalid_parameter_value): as a WARNING at start (PostgreSQL's own
    range check, or the check hook) or by flakeid_next(). `state`'s,
    `require_node`'s and `single_instance`'s cases are skipped: they are not
    settings (the functions section says why)."""
    print("== options: tests/vectors/options.json through the settings")
    cases = load_vectors("options.json")["cases"]
    refused = re.compile(r'parameter "flakeid\.([a-z_]+)"')
    settings, ran, skipped = None, 0, 0
    for i, case in enumerate(cases):
        opts = {"layout": case["layout"], **case["options"]}
        if {"state", "require_node", "single_instance"} & opts.keys():
            skipped += 1
            continue
        if not {"node", "datacenter", "worker", "lease"} & opts.keys():
            opts["node"] = 0
        c = run.cluster(
            f"options{i}", PRELOAD, *(f"flakeid.{k} = '{v}'" for k, v in opts.items())
        ).start_ctl()
        c.sql("CREATE EXTENSION flakeid")
        shown = dict(
            line.split("|")
            for line in c.one(
                "SELECT string_agg(name || '|' || setting, E'\\n') FROM pg_settings WHERE name "
                "LIKE 'flakeid.%'"
            ).splitlines()
        )
        settings = settings or set(shown)
        check(
            all(f"flakeid.{k}" in settings for k in opts),
            f"{case}: an option that is not a setting",
        )
        warned = {
            m.group(1)
            for line in c.log_text().splitlines()
            if "WARNING:" in line
            for m in [refused.search(line)]
            if m
        }
        rc, out = c.attempt("SELECT flakeid_next()")
        errors = {m.group(1) for m in refused.finditer(out) if "ERROR:  22023:" in out}
        what = f"{case['layout']} {case['options']}"
        if "error" not in case:
            check(rc == 0 and not warned, f"{what}: refused ({sorted(warned)}): {out}")
            for name, value in opts.items():
                expect(shown.get(f"flakeid.{name}"), str(value), f"{what}: flakeid.{name}")
        else:
            expect(case["error"], "config", f"{what}: a kind this section maps (config: 22023)")
            check(
                case["field"] in warned | errors,
                f"{what}: not refused naming flakeid.{case['field']} (warned {sorted(warned)}): "
                f"{out}",
            )
        c.stop_ctl()
        shutil.rmtree(c.dir, ignore_errors=True)
        ran += 1
        print(f"  {what}: {'refused, flakeid.' + case['field'] if 'error' in case else 'built'}")
    not_settings = sum(
        bool({"state", "require_node", "single_instance"} & case["options"].keys())
        for case in cases
    )
    check(
        ran >= 20 and skipped == not_settings,
        f"ran {ran}, skipped {skipped}, state, require_node and single_instance cases "
        f"{not_settings}",
    )


LOOK_ALIKES = """
CREATE SCHEMA ext;
CREATE EXTENSION flakeid SCHEMA ext;
-- Look-alikes a search_path could find first: none may change a result.
CREATE TYPE public.flakeid_parts AS (ts text, datacenter text, worker text, node text, sequence
    text, extra int);
CREATE FUNCTION public.flakeid_range(tstzrange) RETURNS int8range LANGUAGE sql AS
    'SELECT int8range(0, NULL)';
CREATE FUNCTION public.flakeid_range(tstzrange, text) RETURNS int8range LANGUAGE sql AS
    'SELECT int8range(0, NULL)';
CREATE FUNCTION public.lower(int8range) RETURNS bigint LANGUAGE sql AS 'SELECT 0::bigint';
CREATE FUNCTION public.yes(bigint, bigint) RETURNS boolean LANGUAGE sql AS 'SELECT true';
CREATE OPERATOR public.>= (LEFTARG = bigint, RIGHTARG = bigint, FUNCTION = public.yes);
CREATE OPERATOR public.<= (LEFTARG = bigint, RIGHTARG = bigint, FUNCTION = public.yes);
CREATE TABLE public.items (id bigint PRIMARY KEY DEFAULT ext.flakeid_next(), v int);
"""

SCHEMA_QUERIES = """
SET search_path = public, pg_catalog;
INSERT INTO items (v) SELECT g FROM generate_series(1, 100) g;
SELECT pg_typeof(ext.flakeid_decompose(910499571847892992)),
       (ext.flakeid_decompose(910499571847892992)).worker,
       (ext.flakeid_decompose(910499571847892992, 'snowflake')).node;
SELECT count(*) FROM items, ext.flakeid_decompose(id) d WHERE (d.datacenter, d.worker) = (17, 25);
SELECT ext.flakeid_in_range(0, '[2026-11-22, 2026-11-23)'),
       ext.flakeid_in_range(0, '[2026-11-22, 2026-11-23)', 'snowflake'),
       ext.flakeid_in_range(ext.flakeid_compose('2026-11-22 12:00+00', 1, 0),
                            '[2026-11-22, 2026-11-23)');
"""


def section_schema(run):
    print("== schema: installed outside search_path, look-alikes in public")
    c = run.cluster("schema", PRELOAD, "flakeid.datacenter = 17", "flakeid.worker = 25").start_ctl()
    c.sql(stdin=LOOK_ALIKES)
    out = c.sql(stdin=SCHEMA_QUERIES, fields=True)
    for line in out.splitlines():
        print(f"  {line}")
    expect(
        out,
        "ext.flakeid_parts 25 569\n100\nf f t",
        "a look-alike in public changed a result, or the extension failed outside search_path",
    )
    # Errors: SQLSTATE and message, no Rust backtrace, a LOCATION in the SQL function's file.
    c.expect_error("SELECT ext.flakeid_decompose(-5)", "22003", r'invalid value for argument "id"')
    c.expect_error(
        "SELECT ext.flakeid_first_at('infinity'::timestamptz)",
        "22008",
        r"LOCATION:  flakeid, time_range\.rs",
    )
    c.expect_error(
        "SELECT ext.flakeid_decode('zz!', 'base62')", "22P02", r"LOCATION:  flakeid, parts\.rs"
    )
    c.expect_error(
        "SELECT ext.flakeid_compose(now(), 5000, 0)", "22023", r'invalid value for argument "node"'
    )
    # Only the forms with a layout name are IMMUTABLE (usable in generated columns).
    c.expect_error(
        "CREATE TABLE public.bad (id bigint, at timestamptz GENERATED ALWAYS AS "
        "(ext.flakeid_timestamp(id)) STORED)",
        "42P17",
        "generation expression is not immutable",
    )
    c.sql(
        "CREATE TABLE public.good (id bigint, at timestamptz GENERATED ALWAYS AS "
        "(ext.flakeid_timestamp(id, 'snowflake')) STORED)"
    )


# Every function and type of the extension as the catalog holds it.
CATALOG = """SELECT e.extversion, p.proname, pg_get_function_identity_arguments(p.oid),
                  p.provolatile, p.proparallel,
      p.proisstrict, p.prosrc, p.probin, pg_get_function_result(p.oid), p.proacl,
          obj_description(p.oid, 'pg_proc')
    FROM pg_extension e JOIN pg_depend d ON d.refobjid = e.oid AND d.deptype = 'e' AND d.classid =
        'pg_proc'::regclass
    JOIN pg_proc p ON p.oid = d.objid WHERE e.extname = 'flakeid'
    UNION ALL
    SELECT e.extversion, t.typname, string_agg(a.attname || ' ' || format_type(a.atttypid,
        a.atttypmod), ', ' ORDER BY a.attnum),
      NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL
    FROM pg_extension e JOIN pg_depend d ON d.refobjid = e.oid AND d.deptype = 'e' AND d.classid =
        'pg_type'::regclass
    JOIN pg_type t ON t.oid = d.objid JOIN pg_attribute a ON a.attrelid = t.typrelid AND a.attnum >
        0
    WHERE e.extname = 'flakeid' GROUP BY 1, 2 ORDER BY 2, 3"""


def section_upgrade(run):
    print("== upgrade: ALTER EXTENSION UPDATE from 0.1.0, pg_dump and pg_restore")
    import difflib

    c = run.cluster("upgrade", PRELOAD, "flakeid.node = 4").start_ctl()
    with open(os.path.join(pg_config("--sharedir"), "extension", "flakeid.control")) as f:
        version = re.search(r"^default_version\s*=\s*'([^']*)'", f.read(), re.M).group(1)
    c.sql("CREATE DATABASE updated", "CREATE DATABASE fresh", "CREATE DATABASE restored")
    c.sql(
        "CREATE SCHEMA ext",
        "CREATE EXTENSION flakeid VERSION '0.1.0' SCHEMA ext",
        "CREATE TABLE events (id bigint PRIMARY KEY DEFAULT ext.flakeid_next(), body text)",
        "INSERT INTO events (body) SELECT 'before' FROM generate_series(1, 500)",
        "ALTER EXTENSION flakeid UPDATE",
        "INSERT INTO events (body) SELECT 'after' FROM generate_series(1, 500)",
        db="updated",
    )
    c.sql("CREATE SCHEMA ext", "CREATE EXTENSION flakeid SCHEMA ext", db="fresh")
    updated = c.one(CATALOG, db="updated").splitlines()
    fresh = c.one(CATALOG, db="fresh").splitlines()
    check(
        updated == fresh,
        f"ALTER EXTENSION flakeid UPDATE from 0.1.0 differs from a fresh {version} install:\n"
        + "\n".join(difflib.unified_diff(updated, fresh, "updated", "fresh", lineterm="")),
    )
    print(
        f"  0.1.0 updated to {version} equals a fresh install: {len([x for x in fresh if x])} "
        "objects compared"
    )
    expect(
        c.one(
            "SELECT count(DISTINCT id), count(*) FILTER (WHERE (ext.flakeid_decompose(id)).node <> "
            "4) FROM events",
            db="updated",
        ),
        "1000 0",
        "IDs before and after the update",
    )

    # pg_dump/pg_restore: the schema, the extension and DEFAULT ext.flakeid_next() come back.
    c.sql(
        """CREATE TABLE public.events (id bigint PRIMARY KEY DEFAULT ext.flakeid_next(),
          at timestamptz GENERATED ALWAYS AS (ext.flakeid_timestamp(id, 'snowflake')) STORED, body
              text)""",
        "INSERT INTO events (body) SELECT 'dumped' FROM generate_series(1, 1000)",
        db="fresh",
    )
    dump = os.path.join(run.work, "fresh.dump")
    conn = ["-h", "127.0.0.1", "-p", str(c.port), "-U", "postgres"]
    for cmd in (
        [f"{PGBIN}/pg_dump", *conn, "-Fc", "-f", dump, "fresh"],
        [f"{PGBIN}/pg_restore", *conn, "-d", "restored", "--exit-on-error", dump],
    ):
        r = subprocess.run(cmd, capture_output=True, text=True)
        check(r.returncode == 0, f"{os.path.basename(cmd[0])} failed: {r.stdout}{r.stderr}")
    c.sql(
        "INSERT INTO events (body) SELECT 'restored' FROM generate_series(1, 1000)", db="restored"
    )
    n, distinct, same_at, default = c.row(
        """SELECT count(*), count(DISTINCT id),
          count(*) FILTER (WHERE at = ext.flakeid_timestamp(id, 'snowflake')),
          (SELECT pg_get_expr(adbin, adrelid) FROM pg_attrdef WHERE adrelid = 'events'::regclass
              AND adnum = 1)
        FROM events""",
        db="restored",
    )
    print(f"  pg_dump | pg_restore: {n} rows, {distinct} distinct IDs, default {default}")
    check(
        n == "2000"
        and distinct == "2000"
        and same_at == "2000"
        and default == "ext.flakeid_next()",
        "pg_dump/pg_restore of a table with DEFAULT flakeid_next()",
    )


# One primary and its physical standby serve the standby and promote sections.
PAIR = {}


def section_standby(run):
    print("== standby: a physical standby (pg_basebackup -R) refuses to issue IDs")
    p = run.cluster("primary", PRELOAD, "flakeid.node = 1").start_ctl()
    p.sql(
        "CREATE EXTENSION flakeid",
        "CREATE TABLE ids (id bigint PRIMARY KEY DEFAULT flakeid_next(), side text NOT NULL)",
        "INSERT INTO ids (side) SELECT 'primary' FROM generate_series(1, 1000)",
    )
    s = run.cluster("standby").copy_from(p, standby=True).start_ctl()
    p.sql("INSERT INTO ids (side) SELECT 'primary' FROM generate_series(1, 1000)")
    s.wait_replayed(p)
    s.expect_error(
        "SELECT flakeid_next()", "25006", r"cannot execute flakeid_next\(\) during recovery"
    )
    s.expect_error(
        "SELECT * FROM flakeid_next_many(10)",
        "25006",
        r"cannot execute flakeid_next_many\(\) during recovery",
    )
    p.expect_error(
        "BEGIN READ ONLY; SELECT flakeid_next()",
        "25006",
        r"cannot execute flakeid_next\(\) in a read-only transaction",
    )
    # The standby replayed the primary's high-water mark: it covers every ID issued.
    expect(
        s.one("""SELECT s.state = 'standby: refusing' AND s.high_water_mark >= (SELECT
                      max(flakeid_timestamp(id)) FROM ids)
          FROM flakeid_status() s"""),
        "t",
        "the standby's state or high-water mark",
    )
    print("  the standby has the primary's high-water mark")
    # The runbook's step on a standby: ALTER SYSTEM works there (checked like anywhere).
    s.expect_error(
        "ALTER SYSTEM SET flakeid.node = 1024", "22023", r"node must be in 0\.\.=1023, got 1024"
    )
    s.sql("ALTER SYSTEM SET flakeid.node = 1")
    PAIR.update(primary=p, standby=s)


def primary_inserts(primary, secs):
    """4 sessions inserting into `ids` (side 'primary') for `secs` seconds, in the
    background (finish with `bench_done`)."""
    return primary.pgbench(
        "INSERT INTO ids (side) VALUES ($$primary$$);",
        "-c",
        "4",
        "-j",
        "2",
        "-T",
        str(secs),
        background=True,
    )


def promoted_beside(primary, promoted, bench, run, node):
    """The promoted server inserts 40,000 IDs (side 'promoted') while `bench` inserts
    on `primary`, its old primary; then its IDs, copied to `primary`: (old primary's
    count, promoted count, shared, promoted IDs without `node`)."""
    for _ in range(8):
        promoted.sql("INSERT INTO ids (side) SELECT 'promoted' FROM generate_series(1, 5000)")
        time.sleep(0.2)  # (spreads the promoted server's IDs over the old primary's run)
    bench_done(bench)
    path = os.path.join(run.work, f"{promoted.name}.ids")
    promoted.sql(f"\\copy (SELECT id FROM ids WHERE side = 'promoted') TO '{path}'")
    return primary.sql(
        "CREATE TEMP TABLE promoted (id bigint)",
        f"\\copy promoted FROM '{path}'",
        f"""SELECT (SELECT count(*) FROM ids), (SELECT count(*) FROM promoted),
             (SELECT count(*) FROM promoted JOIN ids USING (id)),
             (SELECT count(*) FROM promoted WHERE (flakeid_decompose(id)).node <> {node})""",
        fields=True,
    ).split(" ")


def section_promote(run):
    print("== promote: the standby promoted while the old primary keeps issuing")
    if not PAIR:
        section_standby(run)
    p, s = PAIR["primary"], PAIR["standby"]
    bench = primary_inserts(p, 10)
    s.promote()
    s.expect_error(
        "SELECT flakeid_next()",
        "55000",
        r"this server was promoted \(timeline 1 to 2\) and still has the node id 1 its former "
        r"primary "
        r"issued under",
    )
    s.expect_error(
        "SELECT * FROM flakeid_next_many(5)",
        "55000",
        r"flakeid_next_many\(\): this server was promoted",
    )
    expect(
        s.status(),
        "promoted: refusing until the node id is changed or confirmed",
        "flakeid_status() after the promotion",
    )
    # Renumbered, it issues under its own node id (while the old primary issues under 1).
    s.sql("ALTER SYSTEM SET flakeid.node = 2")
    s.restart_ctl()
    old, promoted, shared, other_node = promoted_beside(p, s, bench, run, 2)
    print(f"  old primary: {old} IDs (node 1); promoted: {promoted} IDs (node 2); shared: {shared}")
    check(
        promoted == "40000" and shared == "0" and other_node == "0" and int(old) > 2000,
        "IDs shared after the promotion",
    )


def section_crash(run):
    print("== crash: kill -9 of a backend while borrowing ahead; the postmaster restarts")
    # A new cluster's first IDs start at the far end of its borrow window (its empty
    # mark may be a pg_upgrade's: docs/postgres.md), here 10 s ahead; sonyflake issues
    # 256 IDs per 10 ms tick there.
    # A restart resumes right after the mark, which is past the last ID's tick: a
    # restart quicker than that margin (seen with PyPI's 14 and 18 on an idle machine) finds
    # the clock more than max_borrow_ms behind it, so the first IDs wait for the
    # clock ('wait', up to max_wait_ms) instead of refusing.
    c = run.cluster(
        "crash",
        PRELOAD,
        "flakeid.layout = 'sonyflake'",
        "flakeid.node = 7",
        "flakeid.overflow = 'borrow'",
        "flakeid.max_borrow_ms = 10000",
        "flakeid.clock_backwards = 'wait'",
        "flakeid.max_wait_ms = 5000",
    ).start_ctl()
    c.sql(
        "CREATE EXTENSION flakeid",
        "CREATE TABLE ids (id bigint PRIMARY KEY)",
        "INSERT INTO ids SELECT flakeid_next_many(20000)",
    )
    lead = int(
        c.one(
            "SELECT extract(epoch FROM flakeid_timestamp(max(id)) - clock_timestamp())::int FROM "
            "ids"
        )
    )
    check(lead >= 3, f"only {lead} s ahead of the clock")
    ready = "database system is ready to accept connections"
    ready_before = c.log_text().count(ready)
    sleeper = c.session("SELECT pg_sleep(60)")
    pid = []

    def sleeping():
        pid[:] = c.one(
            "SELECT pid FROM pg_stat_activity WHERE query = 'SELECT pg_sleep(60)'"
        ).split()
        return bool(pid)

    wait_until(sleeping, 10, "no backend to kill")
    os.kill(int(pid[0]), signal.SIGKILL)
    sleeper.communicate(timeout=60)
    # Connect only once the postmaster has restarted (not to the server before it noticed).
    wait_until(
        lambda: c.log_text().count(ready) > ready_before, 30, "the postmaster did not restart"
    )
    check("all server processes terminated; reinitializing" in c.log_text(), "no crash restart")
    wait_until(c.accepting, 30, f"the server on port {c.port} did not come back")
    # Still ahead after the restart: otherwise this test would prove nothing.
    expect(
        c.one("SELECT flakeid_timestamp(max(id)) > clock_timestamp() FROM ids"),
        "t",
        "the restart took longer than the borrowed lead",
    )
    c.sql(
        "INSERT INTO ids SELECT flakeid_next_many(20000)",
        "INSERT INTO ids SELECT flakeid_next() FROM generate_series(1, 1000)",
    )
    expect(
        c.one("SELECT count(*), count(DISTINCT id) FROM ids"), "41000 41000", "IDs after the crash"
    )
    print(f"  {lead} s ahead at the crash; 21,000 IDs after the restart: 0 duplicates")


def section_clock(run):
    print("== clock: failover to a standby whose clock is behind (libfaketime)")
    check(
        os.path.exists(FAKETIME_LIB),
        "libfaketime is not installed (make setup-postgres installs faketime)",
    )
    clockfile = os.path.join(run.work, "clock.faketime")

    def set_clock(offset):
        cluster.set_clock(clockfile, offset)

    old = run.cluster("old", PRELOAD, "flakeid.node = 9").start_ctl()
    old.sql(
        "CREATE EXTENSION flakeid",
        "CREATE TABLE ids (id bigint PRIMARY KEY DEFAULT flakeid_next(), side text)",
    )
    new = run.cluster("new").copy_from(old, standby=True)
    set_clock("+0")
    # Only the wall clock is stepped (PostgreSQL's timeouts use the monotonic one).
    new.start_ctl(env=cluster.faketime_env(clockfile))
    t0 = time.time()
    old.pgbench("INSERT INTO ids (side) VALUES ($$old$$);", "-c", "8", "-j", "2", "-T", "4")
    new.wait_replayed(old)
    old.stop_ctl()
    new.promote()
    # The old primary is gone for good: the operator confirms the node id.
    print(f"  confirmed: {new.one('SELECT flakeid_confirm_node(9)')}")
    # Now its clock reads about 1.5 s after the old primary's first ID of the last 4 s.
    set_clock(f"-{round(time.time() - t0 - 1.5, 3)}")
    new.expect_error(
        "SELECT count(*) FROM flakeid_next_many(1000000) AS n(id) JOIN ids USING (id)",
        "55000",
        r"flakeid_next_many\(\): the clock is [0-9]+ ms behind IDs this server already issued",
    )
    new.expect_error(
        "INSERT INTO ids (side) VALUES ('new')", "55000", r"flakeid_next\(\): the clock is"
    )
    # Both refusals are clock rollbacks in flakeid_stats(), with how far behind.
    rollbacks, max_ms = new.row("SELECT clock_rollbacks, max_rollback_ms FROM flakeid_stats()")
    print(f"  flakeid_stats(): {rollbacks} clock rollbacks, the largest {max_ms} ms")
    check(
        rollbacks == "2" and int(max_ms) > 500,
        f"flakeid_stats(): {rollbacks} rollbacks, largest {max_ms} ms",
    )
    set_clock("+0")
    shared = new.one("SELECT count(*) FROM flakeid_next_many(1000000) AS n(id) JOIN ids USING (id)")
    new.sql("INSERT INTO ids (side) SELECT 'new' FROM generate_series(1, 10000)")
    check(
        shared == "0"
        and new.one("SELECT count(*) FILTER (WHERE side = 'new') FROM ids") == "10000",
        f"{shared} IDs repeated after the failover",
    )
    old_ids = new.one("SELECT count(*) FROM ids WHERE side = 'old'")
    print(f"  clock caught up: 1,010,000 IDs, 0 shared with the old primary's {old_ids}")


def wait_sessions(c, where, count, what):
    """Until `count` sessions of pg_stat_activity match `where`."""
    wait_until(
        lambda: int(c.one(f"SELECT count(*) FROM pg_stat_activity WHERE {where}")) >= count,
        30,
        what,
    )


WATCH = """CREATE OR REPLACE FUNCTION watch(secs float8, OUT refused int, OUT issued_after int, OUT
                msg text)
  LANGUAGE plpgsql AS $$
  DECLARE t0 timestamptz := clock_timestamp(); BEGIN
    refused := 0; issued_after := 0;
    WHILE clock_timestamp() < t0 + secs * interval '1 s' LOOP
      BEGIN
        INSERT INTO ids VALUES (flakeid_next(), 'watch-STORE');
        IF refused > 0 THEN issued_after := issued_after + 1; EXIT WHEN issued_after >= 200; END IF;
      EXCEPTION WHEN object_not_in_prerequisite_state THEN refused := refused + 1; msg := SQLERRM;
      END;
      PERFORM pg_sleep(0.005);
    END LOOP;
  END $$"""


def section_lease(run):
    print("== lease: flakeid.lease on Redis, PostgreSQL and etcd")
    env = os.environ
    check(
        all(env.get(f"FLAKEID_TEST_{s}_URL") for s in ("REDIS", "POSTGRES", "ETCD")),
        "the lease section needs Redis, PostgreSQL and etcd (make setup-lease, "
        "tests/env/testenv.py)",
    )
    ns = f"pg{os.getpid()}"
    # The ACL user of the test Redis: a URL with a password, which no message may show.
    redis_hostport = env["FLAKEID_TEST_REDIS_URL"].removeprefix("redis://")
    redis_url = f"redis://flakeid:s3cret@{redis_hostport}"
    redis_port = redis_hostport.split(":")[-1].split("/")[0]
    etcd_endpoint = "http://" + env["FLAKEID_TEST_ETCD_URL"].split("@", 1)[-1].rstrip("/")
    a = run.cluster("la", PRELOAD, "flakeid.lease_ttl_ms = 2000").start_ctl()
    b = run.cluster("lb", PRELOAD, "flakeid.lease_ttl_ms = 2000").start_ctl()
    for c in (a, b):
        c.sql("CREATE EXTENSION flakeid", "CREATE TABLE ids (id bigint PRIMARY KEY, side text)")

    def redis_cli(*args):
        r = subprocess.run(
            ["redis-cli", "-h", "127.0.0.1", "-p", redis_port, *args],
            capture_output=True,
            text=True,
        )
        check(r.returncode == 0, f"redis-cli {' '.join(args)}: {r.stdout}{r.stderr}")
        return r.stdout

    # Settings: checked by ALTER SYSTEM, naming the setting; no password shown.
    a.expect_error(
        "ALTER SYSTEM SET flakeid.lease = 'zk://127.0.0.1:2181/'",
        "22023",
        r'invalid value for parameter "flakeid.lease": .*zk',
    )
    out = a.expect_error(
        "ALTER SYSTEM SET flakeid.lease = "
        "'redis://flakeid:hunter2@127.0.0.1:6379/0?namespace=no/slash'",
        "22023",
        r'invalid value for parameter "flakeid.lease"',
    )
    check("hunter2" not in out, f"a refused lease URL's password reached the client:\n{out}")
    a.expect_error("ALTER SYSTEM SET flakeid.lease_ttl_ms = 500", "22023", r"flakeid.lease_ttl_ms")
    a.sql("ALTER SYSTEM SET flakeid.node = 3")
    a.expect_error(
        f"ALTER SYSTEM SET flakeid.lease = '{redis_url}'",
        "22023",
        r"flakeid.lease cannot be set while flakeid.node = 3 \(.*postgresql.auto.conf line "
        r"[0-9]+\) is set",
    )
    a.sql("ALTER SYSTEM RESET flakeid.node")
    # Only those who may read every setting see the URL (GUC_SUPERUSER_ONLY).
    a.sql("CREATE ROLE app LOGIN")
    rc, out = a.attempt("SHOW flakeid.lease", user="app")
    # (Each major words it differently; each names the role.)
    check(rc != 0 and "pg_read_all_settings" in out, f"SHOW flakeid.lease as a plain user:\n{out}")

    # Per store: two servers on one URL lease two node ids and share no ID.
    urls = {
        "redis": f"{redis_url}?namespace={ns}",
        "postgres": f"{env['FLAKEID_TEST_POSTGRES_URL']}?namespace={ns}",
        "etcd": f"{env['FLAKEID_TEST_ETCD_URL']}?namespace={ns}",
    }
    for store, url in urls.items():
        for c in (a, b):
            c.sql(f"ALTER SYSTEM SET flakeid.lease = '{url}'")
        for c in (a, b):
            c.restart_ctl()
        na, nb = a.wait_lease(), b.wait_lease()
        check(na != nb, f"{store}: both servers leased node id {na}")
        for c in (a, b):
            c.sql(f"INSERT INTO ids SELECT id, '{store}' FROM flakeid_next_many(20000) id")
        expect(
            a.one(
                f"SELECT count(*) FROM ids WHERE side = '{store}' AND (flakeid_decompose(id)).node "
                f"= {na}"
            ),
            "20000",
            f"{store}: IDs of server A without its leased node id {na}",
        )
        print(f"  {store}: two servers leased node ids {na} and {nb}; 20,000 IDs each")
        # flakeid_stats() has the lease's state and the ms left on it (TTL 2000 ms).
        st, left = a.row("SELECT lease_state, lease_remaining_ms FROM flakeid_stats()")
        check(
            st == "held" and 0 < int(left) <= 2000,
            f"{store}: flakeid_stats(): lease {st}, {left} ms left",
        )
        # The store wiped while both issue: refused, then resumed by themselves.
        a.sql(WATCH.replace("STORE", store))
        watcher = a.session("SELECT * FROM watch(25)", "-At", "-F", " ")
        wait_sessions(
            a,
            "state = 'active' AND query = 'SELECT * FROM watch(25)'",
            1,
            f"{store}: watch() did not start",
        )
        if store == "redis":
            redis_cli("FLUSHALL")
        elif store == "postgres":
            r = subprocess.run(
                [
                    "psql",
                    env["FLAKEID_TEST_POSTGRES_URL"],
                    "-X",
                    "-q",
                    "-c",
                    "TRUNCATE flakeid_worker_node",
                ],
                capture_output=True,
                text=True,
            )
            check(r.returncode == 0, f"TRUNCATE flakeid_worker_node: {r.stderr}")
        else:
            r = subprocess.run(
                [
                    "etcdctl",
                    "--endpoints",
                    etcd_endpoint,
                    "--user",
                    "root:etcd-pw",
                    "del",
                    "--prefix",
                    f"flakeid/{ns}/",
                ],
                capture_output=True,
                text=True,
                env={**env, "ETCDCTL_API": "3"},
            )
            check(r.returncode == 0, f"etcdctl del: {r.stderr}")
        out, err = watcher.communicate(timeout=120)
        check(watcher.returncode == 0, f"{store}: watch(): {err}")
        refused, after, msg = out.rstrip("\n").split(" ", 2)
        print(f"  {store} wiped: {refused} calls refused, then {after} issued; refused: {msg}")
        check(
            int(refused) > 0 and after == "200",
            f"{store}: the lost lease was not refused, or did not recover",
        )
        check("does not hold its node-id lease" in msg, f"{store}: the refusal's message")
        check(
            not any(s in msg for s in ("s3cret", "secret", "etcd-pw")),
            f"{store}: a password in the refusal",
        )
        b.sql(f"INSERT INTO ids SELECT id, 'after-{store}' FROM flakeid_next_many(5000) id")
        a.sql(f"INSERT INTO ids SELECT id, 'after-{store}' FROM flakeid_next_many(5000) id")
    # Both servers' IDs together: none shared.
    path = os.path.join(run.work, "lb.ids")
    b.sql(f"\\copy ids TO '{path}'")
    total, distinct = a.sql(
        "CREATE TEMP TABLE b (id bigint, side text)",
        f"\\copy b FROM '{path}'",
        "SELECT count(*), count(DISTINCT id) "
        "FROM (SELECT id FROM ids UNION ALL SELECT id FROM b) u",
        fields=True,
    ).split(" ")
    print(f"  both servers, every store: {total} IDs, {distinct} distinct")
    check(total == distinct, "IDs shared between the two leased servers")
    # (PostgreSQL itself logs a failed statement as typed: the refused ALTER SYSTEMs.)
    leaked = [
        line
        for c in (a, b)
        for line in c.log_text().splitlines()
        if "STATEMENT:  ALTER SYSTEM" not in line
        and any(s in line for s in ("s3cret", "secret@", "etcd-pw"))
    ]
    check(not leaked, "a password in the server log:\n" + "\n".join(leaked))
    shown = a.one("SELECT lease FROM flakeid_status()")
    check(shown == url.replace("root:etcd-pw@", "root:***@"), f"flakeid_status().lease: {shown}")

    # Failover with leases: the standby takes no lease; promoted while its old
    # primary keeps issuing, it leases a node id of its own: no operator step.
    ns2 = f"pgpromote{os.getpid()}"
    url = f"{redis_url}?namespace={ns2}"
    b.stop_ctl()
    a.sql(
        f"ALTER SYSTEM SET flakeid.lease = '{url}'",
        "DROP TABLE ids",
        "CREATE TABLE ids (id bigint PRIMARY KEY DEFAULT flakeid_next(), side text NOT NULL)",
    )
    a.restart_ctl()
    na = a.wait_lease()
    a.sql("INSERT INTO ids (side) SELECT 'primary' FROM generate_series(1, 1000)")
    s = run.cluster("ls").copy_from(a, standby=True).start_ctl()
    s.wait_replayed(a)
    s.expect_error("SELECT flakeid_next()", "25006", "during recovery")
    keys = [k for k in redis_cli("KEYS", f"flakeid:{ns2}:node:*").splitlines() if k]
    check(len(keys) == 1, f"the standby took a lease: {keys}")
    bench = primary_inserts(a, 8)
    wait_sessions(
        a, "application_name = 'pgbench'", 4, "pgbench on the old primary did not connect"
    )
    s.promote()
    ns_node = s.wait_lease()
    check(ns_node != na, f"the promoted standby leased its old primary's node id {na}")
    s.expect_error(
        f"SELECT flakeid_confirm_node({ns_node})",
        "55000",
        "leases its node id .*nothing to confirm",
    )
    old, promoted, shared, other_node = promoted_beside(a, s, bench, run, ns_node)
    print(
        f"  promoted with leases: old primary {old} IDs (node {na}), promoted {promoted} IDs (node "
        f"{ns_node}), "
        f"shared: {shared}"
    )
    check(
        promoted == "40000" and shared == "0" and other_node == "0" and int(old) > 1000,
        "IDs shared after the promotion",
    )


def section_copies(run):
    # A process of its own: its kill scenario makes its process a subreaper (prctl),
    # which in run.py would make every later postmaster pg_ctl starts run.py's child.
    r = subprocess.run([sys.executable, os.path.join(ROOT, "tests", "postgres", "copies.py")])
    check(r.returncode == 0, "tests/postgres/copies.py")


def section_pg_upgrade(run):
    # pg_upgrade within the major under test (make test-postgres-upgrade runs it from
    # 16 to 18): a smoke-tested target, a revert, a target without the borrow settings,
    # a UUID table whose last UUIDs lead the clock. (Its plain scenario is copies.py's
    # upgrade.)
    r = subprocess.run(
        [
            sys.executable,
            os.path.join(ROOT, "tests", "postgres", "upgrade.py"),
            "smoke",
            "config",
            "uuid",
        ]
    )
    check(r.returncode == 0, "tests/postgres/upgrade.py")


def section_docs(run):
    print("== docs: the SQL blocks of README.md and docs/*.md, as written")
    c = run.cluster("docs", PRELOAD, "flakeid.node = 1").start_ctl()
    out_dir = os.path.join(run.work, "docs-sql")
    subprocess.run(
        [sys.executable, "tests/docs/blocks.py", "extract", "sql", out_dir],
        cwd=ROOT,
        check=True,
        stdout=subprocess.DEVNULL,
    )
    with open(os.path.join(out_dir, "index.tsv")) as f:
        blocks = [line.rstrip("\n").split("\t") for line in f if line.strip()]
    check(blocks, "no sql blocks found in the docs (tests/docs/blocks.py extract sql)")
    for n, (name, doc, line) in enumerate(blocks, 1):
        db = f"doc{n}"
        path = os.path.join(out_dir, name)
        c.sql(f"CREATE DATABASE {db}")
        with open(path) as f:
            if not re.search(r"CREATE\s+EXTENSION", f.read(), re.I):
                c.sql("CREATE EXTENSION flakeid", db=db)
        r = subprocess.run(c.tcp_args("-f", path, db=db), capture_output=True, text=True)
        if r.returncode != 0:
            # psql names the block's file and line: name the doc's instead.
            prefix = f"psql:{path}:"

            def in_doc(m):
                return f"{doc}:{int(line) + int(m.group(1))}"

            said = "\n".join(
                re.sub(rf"^{re.escape(prefix)}([0-9]+)", in_doc, x)
                for x in (r.stdout + r.stderr).splitlines()
            )
            raise Fail(
                f"{doc}:{line}: the SQL block failed (make test-postgres runs every sql block as "
                "written: "
                f"CONTRIBUTING.md, Docs)\n{said}"
            )
        # A block's ALTER SYSTEM is not the next one's setting.
        c.sql("ALTER SYSTEM RESET ALL")
        print(f"  {doc}:{line}: ok")
    print(f"  {len(blocks)} SQL blocks ran")


SECTIONS = {
    "basic": section_basic,
    "plain": section_plain,
    "functions": section_functions,
    "borrow": section_borrow,
    "settings": section_settings,
    "options": section_options,
    "schema": section_schema,
    "upgrade": section_upgrade,
    "standby": section_standby,
    "promote": section_promote,
    "crash": section_crash,
    "clock": section_clock,
    "copies": section_copies,
    "pg_upgrade": section_pg_upgrade,
    "lease": section_lease,
    "convert": section_convert,
    "uuid": section_uuid,
    "uuidfloor": section_uuidfloor,
    "order": section_order,
    "repair": section_repair,
    "logical": section_logical,
    "firstuuid": section_firstuuid,
    "docs": section_docs,
}


# The sections that mostly wait (repair's writers waiting out its repairs,
# pg_upgrade's servers stopping and starting and its
# borrow windows passing; lease's servers restarting and leases lapsing after a
# store is wiped; copies' borrow windows and restores; convert's pgbench clients
# beside each conversion), and options, whose fresh cluster per case needs nothing of
# the others, run in processes of their own, on clusters of their own, beside the
# other sections; each one's output is shown, and its case recorded, after theirs.
# FIRST runs before they start: crash's restarted server must come back within its
# borrowed lead (seconds), and clock's refusals need the clock the test set back to
# be still behind (about 2 s), so neither runs beside them.
APART = ("options", "pg_upgrade", "lease", "copies", "convert", "repair")
FIRST = ("crash", "clock")
APART_FAILED = "it ran in a process of its own: its output is above"


def start_apart(name):
    """`run.py --apart NAME` in the background, its output in a temporary file."""
    out = tempfile.TemporaryFile(mode="w+")
    proc = subprocess.Popen(
        [sys.executable, os.path.abspath(__file__), "--apart", name],
        stdout=out,
        stderr=subprocess.STDOUT,
        stdin=subprocess.DEVNULL,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )
    return proc, out


def finish_apart(proc, out):
    """Waits for a section started apart; prints its output; whether it passed."""
    rc = proc.wait()
    out.seek(0)
    sys.stdout.write(out.read())
    sys.stdout.flush()
    out.close()
    return rc == 0


def run_apart(name):
    """One section alone (the child of start_apart): 0 when it passed."""
    with Run("flakeid-postgres.", max_connections=120) as run:
        SECTIONS[name](run)
    return run.rc


def main(argv):
    if argv[:1] == ["--apart"]:
        return run_apart(argv[1])
    picked = chosen(argv, SECTIONS, "section")
    if picked is None:
        return 2
    os.chdir(ROOT)
    require_installed()
    # The lease section needs the stores of the one test environment: start them for
    # the whole run (and stop them after it).
    if "lease" in picked and not os.environ.get("FLAKEID_TEST_REDIS_URL"):
        subprocess.run(
            [os.environ.get("MAKE", "make"), "--no-print-directory", "setup-lease"], check=True
        )
        env_py = os.path.join(ROOT, "tests", "env", "testenv.py")
        os.execvp(
            sys.executable,
            [
                sys.executable,
                env_py,
                "run",
                "--redis",
                "--postgres",
                "--etcd",
                "--",
                sys.executable,
                os.path.abspath(__file__),
                *picked,
            ],
        )
    print(f"PostgreSQL {MAJOR} ({PGBIN})")
    # FIRST, then the others, then those apart (started once FIRST have run).
    apart_names = [name for name in picked if name in APART] if len(picked) > 1 else []
    picked = (
        [name for name in picked if name in FIRST]
        + [name for name in picked if name not in FIRST and name not in apart_names]
        + apart_names
    )
    apart, started = {}, False
    # Each section a case (tests/env/cases.py), in that order; the first that fails ends
    # the run (its servers' logs are shown), and the sections after it count as failed,
    # not run. A section started apart is waited for in any case, and counted as it ended.
    cases = Cases("test-postgres")
    failed = None
    with Run("flakeid-postgres.", max_connections=120) as run:
        for name in picked:
            if not started and name not in FIRST:
                apart, started = {section: start_apart(section) for section in apart_names}, True
            if name not in apart:
                SECTIONS[name](run)
                cases.passed(name)
            elif finish_apart(*apart.pop(name)):
                cases.passed(name)
            else:
                cases.failed(name, APART_FAILED)
                failed = name
                break
    if run.rc:
        failed = picked[len(cases.passes)]
        cases.failed(failed, str(run.error).strip() or type(run.error).__name__)
    for name in picked[picked.index(failed) + 1 :] if failed else []:
        if name in apart:
            ok = finish_apart(*apart.pop(name))
            cases.record(name, ok, "" if ok else APART_FAILED)
        else:
            cases.failed(name, f"not run: section {failed} failed first")
    return cases.finish()


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
