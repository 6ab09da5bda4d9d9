"""run.py's uuid section: the 128-bit family in SQL (bindings/postgres/src/uuid.rs).
  - tests/vectors/uuid.json through SQL: UUIDv7 bits, ULID and TypeID text, the
    conversions, the time bounds, and every refusal with its SQLSTATE and position
  - no node id set: 8 pgbench clients insert rows with `id uuid DEFAULT
    flakeid_uuidv7()`; every (ms, counter) prefix distinct across the backends (one
    increasing sequence per server, not per backend), each session's IDs increasing
  - `WHERE id BETWEEN flakeid_uuidv7_first_at(a) AND flakeid_uuidv7_last_at(b)` is an
    index condition
  - PostgreSQL 18 and later: flakeid_uuid_timestamp and flakeid_uuid_version agree
    with uuid_extract_timestamp and uuid_extract_version on our IDs, on uuidv7()'s and
    on gen_random_uuid()'s
"""
import re

from cluster import MAJOR, PRELOAD, check, expect, load_vectors

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
        checks += [(f"uuid7 {case['uuid']} ms", f"(extract(epoch FROM flakeid_uuid_timestamp({u})) * 1000)::bigint",
                    str(case["ms"])),
                   (f"uuid7 {case['uuid']} version", f"flakeid_uuid_version({u})", "7"),
                   (f"uuid7 {case['uuid']} ulid", f"flakeid_uuid_to_ulid({u})", case["ulid"]),
                   (f"uuid7 {case['uuid']} typeid", f"flakeid_typeid_format('user', {u})", case["typeid"]),
                   (f"uuid7 {case['uuid']} bytes", f"encode(uuid_send({u}), 'hex')", case["bytes"])]
    for case in v["conversions"]:
        checks += [(f"ulid {case['ulid']}", f"flakeid_ulid_to_uuid({q(case['ulid'])})", case["uuid"]),
                   (f"uuid {case['uuid']}", f"flakeid_uuid_to_ulid({q(case['uuid'])}::uuid)", case["ulid"])]
    for case in v["typeid_valid"]:
        checks.append((f"typeid {case['name']}", f"(SELECT prefix || ' ' || id FROM flakeid_typeid_parse({q(case['typeid'])}))",
                       f"{case['prefix']} {case['uuid']}"))
        checks.append((f"typeid {case['name']} format", f"flakeid_typeid_format({q(case['prefix'])}, {q(case['uuid'])})",
                       case["typeid"]))
    for case in v["ranges"]:
        if case["start_ms"] != case["end_ms"]:
            continue  # SQL's bounds are per millisecond: first_at(a) .. last_at(b)
        ts = f"('epoch'::timestamptz + {case['start_ms']} * interval '1 ms')"
        checks += [(f"range {case['start_ms']} first", f"flakeid_uuidv7_first_at({ts})", case["first"]),
                   (f"range {case['start_ms']} last", f"flakeid_uuidv7_last_at({ts})", case["last"])]
    for case in v["text_aliases"]:
        if case["kind"] == "ulid":
            checks.append((f"alias {case['text']}", f"flakeid_ulid_to_uuid({q(case['text'])})", case["uuid"]))
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
        refusals.append((f"SELECT flakeid_typeid_format({q(case['prefix'])}, gen_random_uuid())", case))
    for sql, case in refusals:
        code, out = c.error(sql)
        check(code == SQLSTATE[case["error"]], f"{sql}: SQLSTATE {code}, expected {SQLSTATE[case['error']]}\n{out}")
        if "position" in case:
            check(f"DETAIL:  At position {case['position']} of" in out,
                  f"{sql}: the message does not name position {case['position']}\n{out}")
    print(f"  tests/vectors/uuid.json: {len(checks)} results and {len(refusals)} refusals through SQL")


def section_uuid(run):
    print("== uuid: UUIDv7, ULID and TypeID: vectors, one sequence per server, ranges, PostgreSQL 18's functions")
    # No node id: a UUID needs none.
    c = run.cluster("uuid", PRELOAD).start_ctl()
    c.sql("CREATE EXTENSION flakeid",
          "CREATE TABLE u (id uuid NOT NULL DEFAULT flakeid_uuidv7(), client int NOT NULL, n bigserial)")
    vectors(c)
    c.pgbench("INSERT INTO u (client) VALUES (:client_id);", "-c", "8", "-j", "2", "-T", SECS)
    # The (ms, counter) prefix: 48 bits of time, version, 12 + 4 bits of counter. One
    # counter per backend would give two backends the same prefix in one millisecond.
    rows, distinct, prefixes, clients, bad = c.row("""
        SELECT count(*), count(DISTINCT id),
               count(DISTINCT (substring(uuid_send(id) FROM 1 FOR 8), get_byte(uuid_send(id), 8) >> 2)),
               count(DISTINCT client),
               count(*) FILTER (WHERE flakeid_uuid_version(id) IS DISTINCT FROM 7
                                   OR abs(extract(epoch FROM flakeid_uuid_timestamp(id) - now())) > 60)
          FROM u""")
    print(f"  pgbench, 8 clients: {rows} rows, {distinct} distinct, {prefixes} distinct (ms, counter) prefixes, "
          f"{bad} not a UUIDv7 of now")
    check(int(rows) > 1000 and rows == distinct == prefixes and clients == "8" and bad == "0",
          "two backends issued one (ms, counter) prefix, a duplicate, or a UUID not a v7 of now")
    # Each session's rows in the order it inserted them (bigserial): increasing.
    backwards = c.one("""SELECT count(*) FROM (SELECT id < lag(id) OVER (PARTITION BY client ORDER BY n) AS back
                           FROM u) s WHERE back""")
    check(backwards == "0", f"{backwards} UUIDs below their session's previous one")
    # One session after another, within a millisecond or not: still increasing.
    seq = [c.one("SELECT flakeid_uuidv7()") for _ in range(5)]
    check(seq == sorted(seq) and len(set(seq)) == 5, f"sessions one after another went back: {seq}")
    expect(c.one("SELECT flakeid_ulid() ~ '^[0-7][0-9A-HJKMNP-TV-Z]{25}$', flakeid_typeid('user') ~ '^user_[0-7][0-9a-hjkmnp-tv-z]{25}$'"),
           "t t", "flakeid_ulid() and flakeid_typeid() text")
    c.expect_error("SELECT flakeid_typeid('User')", "22023", r'invalid value for argument "prefix"')
    c.expect_error("SELECT flakeid_uuidv7_first_at('infinity')", "22008", "infinity")
    # Time bounds as index conditions.
    plan = c.sql("CREATE INDEX ON u (id)", "SET enable_seqscan = off",
                 "EXPLAIN (COSTS OFF) SELECT count(*) FROM u WHERE id BETWEEN flakeid_uuidv7_first_at(now() - interval '1 h') "
                 "AND flakeid_uuidv7_last_at(now())", fields=True)
    check("Index Cond: ((id >=" in plan, f"the time bounds are no index condition:\n{plan}")
    within = c.one("SELECT count(*) FROM u WHERE id BETWEEN flakeid_uuidv7_first_at(now() - interval '1 h') "
                   "AND flakeid_uuidv7_last_at(clock_timestamp() + interval '1 s')")
    check(within == rows, f"{within} of {rows} rows within the last hour's bounds")
    print("  BETWEEN flakeid_uuidv7_first_at(a) AND flakeid_uuidv7_last_at(b): an index condition, every row found")
    if MAJOR >= 18:
        agree = c.one("""SELECT count(*) FILTER (WHERE flakeid_uuid_timestamp(x) IS NOT DISTINCT FROM uuid_extract_timestamp(x)
                                               AND flakeid_uuid_version(x) IS NOT DISTINCT FROM uuid_extract_version(x)),
                                count(*)
                           FROM (SELECT id AS x FROM u UNION ALL SELECT uuidv7() FROM generate_series(1, 1000)
                                 UNION ALL SELECT gen_random_uuid() FROM generate_series(1, 1000)
                                 UNION ALL VALUES ('00000000-0000-0000-0000-000000000000'::uuid),
                                                  ('ffffffff-ffff-ffff-ffff-ffffffffffff'::uuid)) s""")
        same, n = agree.split()
        check(same == n, f"flakeid_uuid_timestamp/version disagree with PostgreSQL {MAJOR}'s on {int(n) - int(same)} of {n}")
        print(f"  PostgreSQL {MAJOR}: uuid_extract_timestamp and uuid_extract_version agree on {n} UUIDs")
    c.stop_ctl()
