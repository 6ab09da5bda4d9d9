"""run.py's uuid section: the 128-bit family in SQL (bindings/postgres/src/uuid.rs).
  - tests/vectors/uuid.json through SQL: UUIDv7 bits, ULID and TypeID text, the
    conversions, the time bounds, and every refusal with its SQLSTATE and position
  - no node id set: 8 pgbench clients insert rows with `id uuid DEFAULT
    flakeid_uuidv7()`; every (ms, counter) prefix distinct across the backends (one
    increasing sequence per server, not per backend), each session's IDs increasing
  - `WHERE id BETWEEN flakeid_uuidv7_first_at(a) AND flakeid_uuidv7_last_at(b)` is an
    index condition
  - tests/vectors/wide.json's explicit times and shifts through flakeid_uuidv7_at(ts)
    and flakeid_uuidv7(shift interval); flakeid_uuidv7_many(n) strictly increasing
    between the single calls around it, `n` refused as flakeid_next_many's
  - PostgreSQL 18 and later: flakeid_uuid_timestamp and flakeid_uuid_version agree
    with uuid_extract_timestamp and uuid_extract_version on our IDs, on uuidv7()'s and
    on gen_random_uuid()'s; flakeid_uuidv7(shift) and uuidv7(shift) carry the same time
section_uuidfloor (its own section: clusters on faketime clocks): the sequence goes on
above every UUID issued before a restart, a restart onto a clock 120 s behind (never
refused: the timestamp advances from the floor, the lead in flakeid_status()), a
failover and a restore; a restart onto a clock 3,600 s behind (20,000 UUIDs above
the floor, 0 refused, the lead in flakeid_status()); with flakeid.max_borrow_ms 30 s,
120 s and 600 s, after a start and a restart, and with 120 s after a failover and
flakeid_confirm_node(), with either family called first: 0 UUID calls refused, none
stamped ahead of a clock that did not move.
"""

import os
import time

from cluster import (
    FAKETIME_LIB,
    MAJOR,
    PRELOAD,
    check,
    expect,
    faketime_env,
    load_vectors,
    set_clock,
)

SECS = "3"
# The SQLSTATE each expected error kind maps to (bindings/postgres/src/error.rs).
SQLSTATE = {"config": "22023", "parse": "22P02"}


def q(text):
    return "'" + str(text).replace("'", "''") + "'"


def vectors(c):
    """Each check is one SQL expression giving text, the expected text beside it."""
    v = load_vectors("uuid.json")
    checks = []
    for case in v["uuid7"]:
        u = q(case["uuid"]) + "::uuid"
        checks += [
            (
                f"uuid7 {case['uuid']} ms",
                f"(extract(epoch FROM flakeid_uuid_timestamp({u})) * 1000)::bigint",
                str(case["ms"]),
            ),
            (f"uuid7 {case['uuid']} version", f"flakeid_uuid_version({u})", "7"),
            (f"uuid7 {case['uuid']} ulid", f"flakeid_uuid_to_ulid({u})", case["ulid"]),
            (f"uuid7 {case['uuid']} typeid", f"flakeid_typeid_format('user', {u})", case["typeid"]),
            (f"uuid7 {case['uuid']} bytes", f"encode(uuid_send({u}), 'hex')", case["bytes"]),
        ]
    for case in v["conversions"]:
        checks += [
            (f"ulid {case['ulid']}", f"flakeid_ulid_to_uuid({q(case['ulid'])})", case["uuid"]),
            (
                f"uuid {case['uuid']}",
                f"flakeid_uuid_to_ulid({q(case['uuid'])}::uuid)",
                case["ulid"],
            ),
        ]
    for case in v["typeid_valid"]:
        checks.append(
            (
                f"typeid {case['name']}",
                f"(SELECT prefix || ' ' || id FROM flakeid_typeid_parse({q(case['typeid'])}))",
                f"{case['prefix']} {case['uuid']}",
            )
        )
        checks.append(
            (
                f"typeid {case['name']} format",
                f"flakeid_typeid_format({q(case['prefix'])}, {q(case['uuid'])})",
                case["typeid"],
            )
        )
    for case in v["ranges"]:
        if case["start_ms"] != case["end_ms"]:
            continue  # SQL's bounds are per millisecond: first_at(a) .. last_at(b)
        ts = f"('epoch'::timestamptz + {case['start_ms']} * interval '1 ms')"
        checks += [
            (f"range {case['start_ms']} first", f"flakeid_uuidv7_first_at({ts})", case["first"]),
            (f"range {case['start_ms']} last", f"flakeid_uuidv7_last_at({ts})", case["last"]),
        ]
    for case in v["text_aliases"]:
        if case["kind"] == "ulid":
            checks.append(
                (f"alias {case['text']}", f"flakeid_ulid_to_uuid({q(case['text'])})", case["uuid"])
            )
    exprs = ", ".join(f"({e})::text" for _, e, _ in checks)
    got = c.one(f"SELECT concat_ws(E'\\n', {exprs})").split("\n")
    check(len(got) == len(checks), f"{len(got)} results for {len(checks)} checks")
    for (label, expr, want), have in zip(checks, got):
        check(have == want, f"uuid vector {label}: {expr} gave {have}, expected {want}")
    # The refusals: the SQLSTATE of the case's kind, the position where it has one.
    refusals = []
    for case in v["typeid_invalid"]:
        refusals.append((f"SELECT flakeid_typeid_parse({q(case['typeid'])})", case))
    for case in v["bad"]:
        if case["kind"] == "ulid":
            refusals.append((f"SELECT flakeid_ulid_to_uuid({q(case['text'])})", case))
        elif case["kind"] == "typeid":
            refusals.append((f"SELECT flakeid_typeid_parse({q(case['text'])})", case))
    for case in v["prefix_errors"]:
        refusals.append(
            (f"SELECT flakeid_typeid_format({q(case['prefix'])}, gen_random_uuid())", case)
        )
    for sql, case in refusals:
        code, out = c.error(sql)
        check(
            code == SQLSTATE[case["error"]],
            f"{sql}: SQLSTATE {code}, expected {SQLSTATE[case['error']]}\n{out}",
        )
        if "position" in case:
            check(
                f"DETAIL:  At position {case['position']} of" in out,
                f"{sql}: the message does not name position {case['position']}\n{out}",
            )
    print(
        f"  tests/vectors/uuid.json: {len(checks)} results and {len(refusals)} refusals through SQL"
    )


def section_uuid(run):
    print(
        "== uuid: UUIDv7, ULID and TypeID: vectors, one sequence per server, ranges, PostgreSQL "
        "18's functions"
    )
    # No node id: a UUID needs none.
    c = run.cluster("uuid", PRELOAD).start_ctl()
    c.sql(
        "CREATE EXTENSION flakeid",
        "CREATE TABLE u (id uuid NOT NULL DEFAULT flakeid_uuidv7(), client int NOT NULL, n "
        "bigserial)",
    )
    vectors(c)
    c.pgbench("INSERT INTO u (client) VALUES (:client_id);", "-c", "8", "-j", "2", "-T", SECS)
    # The (ms, counter) prefix: 48 bits of time, version, 12 + 4 bits of counter. One
    # counter per backend would give two backends the same prefix in one millisecond.
    rows, distinct, prefixes, clients, bad = c.row("""
        SELECT count(*), count(DISTINCT id),
               count(DISTINCT (substring(uuid_send(id) FROM 1 FOR 8), get_byte(uuid_send(id), 8) >>
                   2)),
               count(DISTINCT client),
               count(*) FILTER (WHERE flakeid_uuid_version(id) IS DISTINCT FROM 7
                                   OR abs(extract(epoch FROM flakeid_uuid_timestamp(id) - now())) >
                                       60)
          FROM u""")
    print(
        f"  pgbench, 8 clients: {rows} rows, {distinct} distinct, {prefixes} distinct (ms, "
        "counter) prefixes, "
        f"{bad} not a UUIDv7 of now"
    )
    check(
        int(rows) > 1000 and rows == distinct == prefixes and clients == "8" and bad == "0",
        "two backends issued one (ms, counter) prefix, a duplicate, or a UUID not a v7 of now",
    )
    # Each session's rows in the order it inserted them (bigserial): increasing.
    backwards = c.one("""SELECT count(*) FROM (SELECT id < lag(id) OVER (PARTITION BY client ORDER
                              BY n) AS back
                           FROM u) s WHERE back""")
    check(backwards == "0", f"{backwards} UUIDs below their session's previous one")
    # One session after another, within a millisecond or not: still increasing.
    seq = [c.one("SELECT flakeid_uuidv7()") for _ in range(5)]
    check(seq == sorted(seq) and len(set(seq)) == 5, f"sessions one after another went back: {seq}")
    expect(
        c.one(
            "SELECT flakeid_ulid() ~ '^[0-7][0-9A-HJKMNP-TV-Z]{25}$', flakeid_typeid('user') ~ "
            "'^user_[0-7][0-9a-hjkmnp-tv-z]{25}$'"
        ),
        "t t",
        "flakeid_ulid() and flakeid_typeid() text",
    )
    c.expect_error("SELECT flakeid_typeid('User')", "22023", r'invalid value for argument "prefix"')
    c.expect_error("SELECT flakeid_uuidv7_first_at('infinity')", "22008", "infinity")
    # Time bounds as index conditions.
    plan = c.sql(
        "CREATE INDEX ON u (id)",
        "SET enable_seqscan = off",
        "EXPLAIN (COSTS OFF) SELECT count(*) FROM u WHERE id BETWEEN flakeid_uuidv7_first_at(now() "
        "- interval '1 h') "
        "AND flakeid_uuidv7_last_at(now())",
        fields=True,
    )
    check("Index Cond: ((id >=" in plan, f"the time bounds are no index condition:\n{plan}")
    within = c.one(
        "SELECT count(*) FROM u WHERE id BETWEEN flakeid_uuidv7_first_at(now() - interval '1 h') "
        "AND flakeid_uuidv7_last_at(clock_timestamp() + interval '1 s')"
    )
    check(within == rows, f"{within} of {rows} rows within the last hour's bounds")
    print(
        "  BETWEEN flakeid_uuidv7_first_at(a) AND flakeid_uuidv7_last_at(b): an index condition, "
        "every row found"
    )
    explicit_times(c)
    batches(c)
    if MAJOR >= 18:
        # The same calendar arithmetic as 18's uuidv7(shift): the two times within the
        # statement's few milliseconds, for shifts of days, months and years.
        for shift in ("-1 day", "1 hour", "-1 month 3 days", "-30 years", "0"):
            ours, theirs, same = c.row(
                f"""SELECT (extract(epoch FROM flakeid_uuid_timestamp(a)) * 1000)::bigint,
                           (extract(epoch FROM uuid_extract_timestamp(b)) * 1000)::bigint,
                           uuid_extract_version(a) = uuid_extract_version(b)
                      FROM (SELECT flakeid_uuidv7(interval {q(shift)}) AS a, uuidv7(interval
                          {q(shift)}) AS b) s"""
            )
            check(
                same == "t" and abs(int(ours) - int(theirs)) < 1000,
                f"flakeid_uuidv7({shift!r}) at {ours} ms, PostgreSQL {MAJOR}'s uuidv7 at {theirs} "
                "ms",
            )
        print(
            f"  PostgreSQL {MAJOR}: flakeid_uuidv7(shift) and uuidv7(shift) carry the same time "
            "for 5 shifts"
        )
        agree = c.one("""SELECT count(*) FILTER (WHERE flakeid_uuid_timestamp(x) IS NOT DISTINCT
                              FROM uuid_extract_timestamp(x)
                                               AND flakeid_uuid_version(x) IS NOT DISTINCT FROM
                                                   uuid_extract_version(x)),
                                count(*)
                           FROM (SELECT id AS x FROM u UNION ALL SELECT uuidv7() FROM
                               generate_series(1, 1000)
                                 UNION ALL SELECT gen_random_uuid() FROM generate_series(1, 1000)
                                 UNION ALL VALUES ('00000000-0000-0000-0000-000000000000'::uuid),
                                                  ('ffffffff-ffff-ffff-ffff-ffffffffffff'::uuid))
                                                      s""")
        same, n = agree.split()
        check(
            same == n,
            f"flakeid_uuid_timestamp/version disagree with PostgreSQL {MAJOR}'s on "
            f"{int(n) - int(same)} of {n}",
        )
        print(
            f"  PostgreSQL {MAJOR}: uuid_extract_timestamp and uuid_extract_version agree on {n} "
            "UUIDs"
        )
    c.stop_ctl()


def explicit_times(c):
    """tests/vectors/wide.json's explicit times and shifts, through SQL (the cases a
    timestamptz and an interval can hold)."""
    v = load_vectors("wide.json")
    ran = 0
    for case in v["explicit_times"]:
        ms = case["unix_ms"]
        if ms >= 2**53:
            continue  # past timestamptz's range: PostgreSQL refuses it before the call
        sql = (
            f"SELECT replace(flakeid_uuidv7_at('epoch'::timestamptz + {ms} * interval '1 "
            "ms')::text, '-', '')"
        )
        if "error" in case:
            c.expect_error(sql, SQLSTATE[case["error"]], r'invalid value for argument "ts"')
        else:
            u = c.one(sql)
            check(
                u[:12] == case["time_hex"] and u[12] == "7" and u[16] in "89ab", f"{sql} gave {u}"
            )
        ran += 1
    for case in v["shifts"]:
        shift = case["shift_ms"]
        if abs(shift) >= 2**53:
            continue  # past an interval's range
        sql = f"flakeid_uuidv7({shift} * interval '1 ms')"
        if "error" in case:
            c.expect_error(
                f"SELECT {sql}",
                SQLSTATE[case["error"]],
                r'invalid value for argument "shift": clock_timestamp\(\) \+ shift is .*, outside '
                r"a "
                r"UUIDv7's times: 1970-01-01 .* to 10889-08-02 ",
            )
        else:
            before, at, after = c.row(
                f"SELECT (extract(epoch FROM clock_timestamp()) * 1000)::bigint, "
                f"(extract(epoch FROM flakeid_uuid_timestamp({sql})) * 1000)::bigint, "
                f"(extract(epoch FROM clock_timestamp()) * 1000)::bigint"
            )
            check(
                int(before) + shift - 1 <= int(at) <= int(after) + shift + 1,
                f"{sql}: {at} ms, not between {before} and {after} shifted by {shift}",
            )
        ran += 1
    # Before 1970, through either argument: refused naming it and a UUIDv7's range.
    for sql, arg in (
        ("flakeid_uuidv7_at('1969-12-31 23:59:59.999+00')", "ts"),
        ("flakeid_uuidv7(- (clock_timestamp() - '1969-12-31 23:00+00'))", "shift"),
        ("flakeid_uuidv7_first_at('1960-01-01')", "ts"),
        ("flakeid_uuidv7_last_at('10889-08-03')", "ts"),
    ):
        c.expect_error(
            f"SELECT {sql}",
            "22023",
            rf'invalid value for argument "{arg}": .* is .*, '
            r"outside a UUIDv7's times: 1970-01-01 ",
        )
        ran += 1
    # Outside the sequence: the next UUID still follows the last one.
    a, b, c2 = c.row("SELECT flakeid_uuidv7(), flakeid_uuidv7_at('2000-01-01'), flakeid_uuidv7()")
    check(a < c2 and b < a, f"an explicit time moved the sequence: {a} {b} {c2}")
    print(f"  tests/vectors/wide.json: {ran} explicit times and shifts through SQL")


def batches(c):
    """flakeid_uuidv7_many(n): strictly increasing, in order with the calls around it."""
    c.sql(
        "CREATE TABLE ub (k serial, id uuid)",
        "INSERT INTO ub (id) SELECT flakeid_uuidv7()",
        "INSERT INTO ub (id) SELECT flakeid_uuidv7_many(10000)",
        "INSERT INTO ub (id) SELECT flakeid_uuidv7()",
    )
    rows, distinct, back, v7 = c.row("""SELECT count(*), count(DISTINCT id),
                                               count(*) FILTER (WHERE id <= prev),
                                               count(*) FILTER (WHERE flakeid_uuid_version(id) = 7)
                                          FROM (SELECT id, lag(id) OVER (ORDER BY k) AS prev FROM
                                              ub) s""")
    check(
        rows == distinct == v7 == "10002" and back == "0",
        f"flakeid_uuidv7_many: {rows} rows, {distinct} distinct, {back} not above the one before, "
        f"{v7} v7",
    )
    expect(c.one("SELECT count(*) FROM flakeid_uuidv7_many(0)"), "0", "flakeid_uuidv7_many(0)")
    c.expect_error("SELECT flakeid_uuidv7_many(-1)", "22023", r'invalid value for argument "n"')
    print("  flakeid_uuidv7_many(10000) between two single calls: 10,002 strictly increasing")
    # A LIMIT stops it, in FROM too: 10,000,000 UUIDs made whole would spill past
    # temp_file_limit (work_mem 64kB), and the sequence would move 152 ms.
    got = c.sql(
        "SET work_mem = '64kB'",
        "SET temp_file_limit = '1MB'",
        "SELECT count(*) FROM (SELECT * FROM flakeid_uuidv7_many(10000000) LIMIT 5) s",
        "SELECT count(*) FROM (SELECT flakeid_uuidv7_many(10000000) LIMIT 5) s",
        fields=True,
    )
    expect(
        got.split(),
        ["5", "5"],
        "LIMIT 5 of flakeid_uuidv7_many(10000000) in FROM and in a select list",
    )
    print(
        "  LIMIT 5 of flakeid_uuidv7_many(10000000), in FROM and in a select list: 5 rows, no "
        "temporary file"
    )


def section_uuidfloor(run):
    print(
        "== uuidfloor: flakeid_uuidv7() above every UUID issued before a restart, a failover and a "
        "restore"
    )
    check(
        os.path.exists(FAKETIME_LIB),
        "libfaketime is not installed (make setup-postgres installs faketime)",
    )
    clock_a = os.path.join(run.work, "uuid-a.faketime")
    clock_b = os.path.join(run.work, "uuid-b.faketime")
    set_clock(clock_a, "+0")
    set_clock(clock_b, "-5")
    a = run.cluster("ua", PRELOAD).start_ctl(env=faketime_env(clock_a))
    a.sql("CREATE EXTENSION flakeid", "CREATE TABLE u (id uuid PRIMARY KEY, side text)")
    a.sql("INSERT INTO u SELECT flakeid_uuidv7(), 'first' FROM generate_series(1, 20000)")

    def below(c, table, side, before):
        """How many of `side`'s UUIDs are not above every one of `before`'s."""
        # No max(uuid) before PostgreSQL 18: the largest by the index.
        return c.one(
            f"SELECT count(*) FROM {table} WHERE side = '{side}' "
            f"AND id <= (SELECT id FROM {table} WHERE side = '{before}' ORDER BY id DESC LIMIT 1)"
        )

    def restart_behind(secs, side, before):
        """A restart onto a clock `secs` behind, then 20,000 UUIDs: how many are not
        above `before`'s, how many calls were refused, uuid_lead_ms."""
        a.stop_ctl()
        set_clock(clock_a, f"-{secs}")
        a.start_ctl(env=faketime_env(clock_a))
        a.sql(
            f"INSERT INTO u SELECT flakeid_uuidv7(), '{side}' FROM generate_series(1, 10000)",
            f"INSERT INTO u SELECT flakeid_uuidv7_many(10000), '{side}'",
        )
        n = below(a, "u", side, before)
        refused, lead = a.row(
            "SELECT t.uuid_refusals, s.uuid_lead_ms FROM flakeid_stats() t, flakeid_status() s"
        )
        check(
            n == "0" and refused == "0",
            f"a restart onto a clock {secs} s behind: {n} of 20,000 new UUIDs below the ones "
            "before it, "
            f"{refused} refused",
        )
        return int(lead)

    # A restart onto a clock 5 s behind: the sequence goes on above the mark.
    restart_behind(5, "restart", "first")
    print("  restart onto a clock 5 s behind: 0 of 20,000 new UUIDs below the 20,000 before it")

    # A restart onto a clock 120 s, then 3,600 s behind the floor: never refused (never
    # an hour's outage); the sequence goes on above the floor (its timestamps advancing
    # from there), the lead stated.
    for secs, side, before in ((120, "far", "restart"), (3600, "hour", "far")):
        lead = restart_behind(secs, side, before)
        check(
            secs * 1000 - 25_000 <= lead <= secs * 1000 + 5_000,
            f"flakeid_status().uuid_lead_ms {lead} on a clock {secs} s behind the floor",
        )
        print(
            f"  restart onto a clock {secs:,} s behind: 0 of 20,000 new UUIDs below the ones "
            "before it, "
            f"0 refused; uuid_lead_ms {lead}"
        )

    # A failover to a standby whose clock is 5 s behind. A session on the standby
    # calls before the old primary's last UUIDs and again after the promotion.
    set_clock(clock_a, "+0")
    b = run.cluster("ub").copy_from(a, standby=True).start_ctl(env=faketime_env(clock_b))
    b.wait_replayed(a)
    waits = "DO $$ BEGIN WHILE pg_is_in_recovery() LOOP PERFORM pg_sleep(0.05); END LOOP; END $$"
    stale = b.session(
        "INSERT INTO u SELECT flakeid_uuidv7(), 'stale' FROM generate_series(1, 1000)",
        "-c",
        "SELECT flakeid_uuidv7()",
        "-c",
        waits,
    )
    deadline = time.time() + 30
    while (
        b.one("SELECT count(*) FROM pg_stat_activity WHERE query LIKE 'DO $$ BEGIN WHILE%'") != "1"
    ):
        check(time.time() < deadline, "the standby's session did not start")
        time.sleep(0.05)
    a.sql("INSERT INTO u SELECT flakeid_uuidv7(), 'primary' FROM generate_series(1, 20000)")
    b.wait_replayed(a)
    a.stop_ctl()
    b.promote()
    # The old session calls first after the promotion (a new one's generator is built
    # above the mark it reads, which would move the shared word for it).
    out, err = stale.communicate(timeout=60)
    check(stale.returncode == 0, f"the standby's session failed: {out}{err}")
    b.sql("INSERT INTO u SELECT flakeid_uuidv7(), 'promoted' FROM generate_series(1, 20000)")
    for side in ("promoted", "stale"):
        n = below(b, "u", side, "primary")
        check(
            n == "0", f"{n} UUIDs of the {side} session after the failover below the old primary's"
        )
    print(
        "  failover to a standby 5 s behind: 0 of 21,000 new UUIDs (1,000 from a session that "
        "called "
        "before the promotion) below the old primary's"
    )

    # Rows restored from a server whose clock ran 30 s ahead: below them until
    # flakeid_resume_after(its largest id), above them after.
    b.sql(
        "CREATE TABLE r (id uuid PRIMARY KEY, side text)",
        "INSERT INTO r SELECT flakeid_uuidv7_at(clock_timestamp() + interval '30 s'), 'restored' "
        "FROM generate_series(1, 5000)",
        "INSERT INTO r SELECT flakeid_uuidv7(), 'unaware' FROM generate_series(1, 100)",
    )
    n = below(b, "r", "unaware", "restored")
    check(
        n == "100",
        f"{n} of 100: the restore scenario does not put new UUIDs below the restored rows",
    )
    resumed = b.one(
        "SELECT flakeid_resume_after(id) FROM r WHERE side = 'restored' ORDER BY id DESC LIMIT 1"
    )
    b.sql(
        "INSERT INTO r SELECT flakeid_uuidv7(), 'after' FROM generate_series(1, 5000)",
        "INSERT INTO r SELECT flakeid_uuidv7_many(5000), 'after'",
    )
    n = below(b, "r", "after", "restored")
    check(n == "0", f"{n} of 10,000 UUIDs after flakeid_resume_after(uuid) below the restored rows")
    rc, out = b.attempt("SELECT flakeid_resume_after(gen_random_uuid())")
    check(rc != 0 and "22" in out, f"flakeid_resume_after(a v4 UUID) was taken: {out}")
    print(
        "  rows restored from a clock 30 s ahead: 100 of 100 below them, then after "
        "flakeid_resume_after "
        f"(resumes after {resumed}) 0 of 10,000"
    )
    b.stop_ctl()
    uuids_beside_borrowing(run)


def borrowing_cluster(run, name, node, max_borrow_ms):
    """A started cluster of node `node` that borrows up to `max_borrow_ms` and waits
    out a clock stepped back (up to 5 s)."""
    return run.cluster(
        name,
        PRELOAD,
        f"flakeid.node = {node}",
        "flakeid.overflow = 'borrow'",
        f"flakeid.max_borrow_ms = {max_borrow_ms}",
        "flakeid.clock_backwards = 'wait'",
        "flakeid.max_wait_ms = 5000",
    ).start_ctl()


def uuids_beside_borrowing(run):
    """flakeid.max_borrow_ms of 30 s, 120 s and 600 s (a new cluster's 64-bit IDs start
    that far ahead, and its 64-bit mark with them), after a start and after a
    restart, with either family called first: every UUID call issues, and no UUID is
    stamped ahead of a clock that did not move (its own mark, not the 64-bit one)."""
    calls = {
        "uuid": "SELECT count(*) FROM (SELECT flakeid_uuidv7() FROM generate_series(1, 500)) s",
        "next": "SELECT count(*) FROM (SELECT flakeid_next() FROM generate_series(1, 500)) s",
    }
    for secs in (30, 120, 600):
        for first in ("next", "uuid"):
            c = borrowing_cluster(run, f"ub{secs}{first}", 3, secs * 1000)
            c.sql("CREATE EXTENSION flakeid", "CREATE TABLE u (id uuid PRIMARY KEY)")
            for when in ("start", "restart"):
                if when == "restart":
                    c.stop_ctl()
                    c.start_ctl()
                both_families(c, calls, first, f"max_borrow_ms {secs} s, after a {when}")
                c.sql(
                    "INSERT INTO u SELECT flakeid_uuidv7() FROM generate_series(1, 1000)",
                    "INSERT INTO u SELECT flakeid_uuidv7_many(1000)",
                )
                ahead = newest_ahead(c)
                lead = int(c.one("SELECT uuid_lead_ms FROM flakeid_status()"))
                check(
                    ahead < 1 and lead < 1000,
                    f"max_borrow_ms {secs} s, after a {when}, {first} first: the newest UUID "
                    f"{ahead:.1f} s "
                    f"ahead of the clock, uuid_lead_ms {lead}",
                )
            c.stop_ctl()
    print(
        "  max_borrow_ms 30 s, 120 s, 600 s; after a start and a restart; either family first: "
        "0 UUID calls refused, none stamped ahead of the clock"
    )
    failover_beside_borrowing(run, calls)


def both_families(c, calls, first, what):
    """Each family's calls, `first` first: neither refused."""
    for name in (first, "uuid" if first == "next" else "next"):
        rc, out = c.attempt(calls[name])
        check(rc == 0, f"{what}, {name} called {'first' if name == first else 'second'}: {out}")


def newest_ahead(c):
    """How far the newest UUID of table u is ahead of the clock (s), read after it."""
    return float(
        c.one(
            "SELECT extract(epoch FROM flakeid_uuid_timestamp(id) - clock_timestamp()) "
            "FROM u ORDER BY id DESC LIMIT 1"
        )
    )


def failover_beside_borrowing(run, calls):
    """A failover and flakeid_confirm_node() with max_borrow_ms 120 s (the confirmed
    64-bit family resumes 120 s ahead of the clock): with either family called first,
    0 UUID calls refused, none below the old primary's, none stamped ahead."""
    for first in ("next", "uuid"):
        p = borrowing_cluster(run, f"ufp{first}", 4, 120000)
        p.sql(
            "CREATE EXTENSION flakeid",
            "CREATE TABLE u (id uuid PRIMARY KEY, side text)",
            "INSERT INTO u SELECT flakeid_uuidv7(), 'primary' FROM generate_series(1, 1000)",
            "SELECT flakeid_next()",
        )
        s = run.cluster(f"ufs{first}").copy_from(p, standby=True).start_ctl()
        s.wait_replayed(p)
        p.stop_ctl()
        s.promote()
        confirmed = s.one("SELECT flakeid_confirm_node(4)")
        both_families(
            s, calls, first, "after a failover and flakeid_confirm_node() (max_borrow_ms 120 s)"
        )
        s.sql(
            "INSERT INTO u SELECT flakeid_uuidv7(), 'promoted' FROM generate_series(1, 1000)",
            "INSERT INTO u SELECT flakeid_uuidv7_many(1000), 'promoted'",
        )
        below, refused, lead = s.row(
            "SELECT count(*) FILTER (WHERE side = 'promoted' AND id <= (SELECT id FROM u WHERE "
            "side = 'primary' "
            "ORDER BY id DESC LIMIT 1)), (SELECT uuid_refusals FROM flakeid_stats()), "
            "(SELECT uuid_lead_ms FROM flakeid_status()) FROM u"
        )
        ahead = newest_ahead(s)
        check(
            below == "0" and refused == "0" and int(lead) < 1000 and ahead < 1,
            f"after a failover and flakeid_confirm_node() (max_borrow_ms 120 s), {first} first: "
            f"{below} of "
            f"2,000 UUIDs below the old primary's, {refused} refused, uuid_lead_ms {lead}, the "
            "newest "
            f"{ahead:.1f} s ahead of the clock ({confirmed})",
        )
        s.stop_ctl()
    print(
        "  failover + flakeid_confirm_node() with max_borrow_ms 120 s, either family first: 0 UUID "
        "calls "
        "refused, 0 of 2,000 below the old primary's, none stamped ahead of the clock, "
        "uuid_lead_ms < 1000"
    )
