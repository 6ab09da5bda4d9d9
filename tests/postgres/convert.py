"""convert_sequence_to_flakeid(table, column), the way in for an existing table, on a
private cluster of the one test environment (tests/postgres/cluster.py), with the
flakeid library installed into the PostgreSQL under test: run.py's section
"convert" (`tests/postgres/run.py convert` runs it alone).

  live      a bigserial table under 4 pgbench clients inserting without pause:
            converted in one short transaction (lock_timeout set, as
            docs/postgres.md says); no insert fails, no ID repeats, every ID after
            the switch is the server's and above every sequence ID, the owned
            sequence is gone
  identity  GENERATED ALWAYS AS IDENTITY: converted; the identity and its sequence
            are gone, inserts get flakeid_next()
  rollback  converted inside a transaction that rolls back: the sequence default
            and the sequence are back
  refused   an integer column, a column without a sequence default, a table
            holding an ID above what the layout issues now, and one whose sequence
            handed out such an ID (no row holds it) are refused, with
            SQLSTATE and a message naming the table; nothing changes; a sequence
            the column does not own stays
"""

from cluster import PRELOAD, bench_done, check, expect

NODE = 6


def default_of(c, table):
    return c.one(f"SELECT pg_get_expr(adbin, adrelid) FROM pg_attrdef WHERE adrelid = '{table}'::regclass AND adnum = 1")


def live(c):
    print("== live: a bigserial table under 4 inserting clients")
    c.sql("CREATE TABLE orders (id bigserial PRIMARY KEY, body text NOT NULL)",
          "INSERT INTO orders (body) SELECT 'old' FROM generate_series(1, 20000)")
    bench = c.pgbench("INSERT INTO orders (body) VALUES ('during');", "-c", "4", "-j", "2", "-T", "4",
                      background=True)
    # Let the clients run on the sequence for a while, then switch under them.
    c.sql("SELECT pg_sleep(1)")
    top = c.one("SET lock_timeout = '5s'; SELECT convert_sequence_to_flakeid('orders', 'id')")
    out = bench_done(bench)
    failed = [line for line in out.splitlines() if "failed" in line]
    n, distinct, seq_ids, new_ids, new_other_node, below = c.row(f"""SELECT count(*), count(DISTINCT id),
        count(*) FILTER (WHERE id <= {top}), count(*) FILTER (WHERE id > {top}),
        count(*) FILTER (WHERE id > {top} AND (flakeid_decompose(id)).node <> {NODE}),
        count(*) FILTER (WHERE id > {top} AND id < flakeid_first_at(now() - interval '1 hour')) FROM orders""")
    print(f"  converted at ID {top}: {n} rows, {distinct} distinct; {seq_ids} from the sequence, {new_ids} from "
          f"flakeid_next(); default now {default_of(c, 'orders')}; pgbench: {' '.join(failed) or 'ok'}")
    check(int(top) > 20000, "no insert ran on the sequence during the test")
    check(n == distinct, f"{int(n) - int(distinct)} IDs repeat")
    check(int(new_ids) > 0, "no insert after the switch")
    expect((new_other_node, below), ("0", "0"), "IDs after the switch not the server's, or not above the sequence's")
    expect(default_of(c, "orders"), "flakeid_next()", "the default")
    expect(c.one("SELECT count(*) FROM pg_class WHERE relname = 'orders_id_seq'"), "0", "the owned sequence")
    check(all(" 0 (0.000%)" in line for line in failed) or not failed, f"inserts failed:\n{out}")


def identity(c):
    print("== identity: GENERATED ALWAYS AS IDENTITY")
    c.sql("CREATE TABLE items (id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY, body text)",
          "INSERT INTO items (body) SELECT 'old' FROM generate_series(1, 500)")
    top = c.one("SELECT convert_sequence_to_flakeid('items', 'id')")
    c.sql("INSERT INTO items (body) SELECT 'new' FROM generate_series(1, 500)")
    ident, n, above = c.row("""SELECT (SELECT attidentity = '' FROM pg_attribute WHERE attrelid = 'items'::regclass
        AND attname = 'id'), count(DISTINCT id), count(*) FILTER (WHERE body = 'new' AND id > 500) FROM items""")
    print(f"  converted at ID {top}: identity dropped {ident}, {n} distinct IDs, {above} new ones above it")
    expect((top, ident, n, above), ("500", "t", "1000", "500"), "the identity column converted")
    expect(default_of(c, "items"), "flakeid_next()", "the default")


def rollback(c):
    print("== rollback: the conversion is transactional")
    c.sql("CREATE TABLE notes (id bigserial PRIMARY KEY)", "INSERT INTO notes DEFAULT VALUES")
    c.sql("BEGIN", "SELECT convert_sequence_to_flakeid('notes', 'id')", "ROLLBACK")
    c.sql("INSERT INTO notes DEFAULT VALUES")
    default, ids = default_of(c, "notes"), c.one("SELECT string_agg(id::text, ',' ORDER BY id) FROM notes")
    print(f"  after ROLLBACK: default {default}, IDs {ids}")
    expect((default, ids), ("nextval('notes_id_seq'::regclass)", "1,2"), "the sequence after a rolled-back conversion")


def refused(c):
    print("== refused: not bigint, no sequence, IDs above what the layout issues now")
    c.sql("CREATE TABLE small (id serial PRIMARY KEY)",
          "CREATE TABLE plain (id bigint PRIMARY KEY)",
          "CREATE TABLE ahead (id bigserial PRIMARY KEY)",
          "INSERT INTO ahead VALUES (flakeid_first_at(now() + interval '1 day'))",
          "CREATE TABLE handed (id bigserial PRIMARY KEY)",
          "SELECT setval('handed_id_seq', flakeid_first_at(now() + interval '1 day'))",
          "CREATE SEQUENCE shared_seq",
          "CREATE TABLE shares (id bigint PRIMARY KEY DEFAULT nextval('shared_seq'))",
          "INSERT INTO shares DEFAULT VALUES")
    c.expect_error("SELECT convert_sequence_to_flakeid('small', 'id')", "42804", r"small\.id is integer, and flakeid IDs need bigint")
    c.expect_error("SELECT convert_sequence_to_flakeid('plain', 'id')", "55000", r"plain\.id has no sequence or IDENTITY default")
    c.expect_error("SELECT convert_sequence_to_flakeid('plain', 'nope')", "42703", r"plain has no column nope")
    c.expect_error("SELECT convert_sequence_to_flakeid('ahead', 'id')", "55000",
                   r"ahead\.id holds or was given IDs up to [0-9]+, and flakeid_next\(\) issues IDs from")
    # A value the sequence handed out, though no row holds it (yet), counts.
    c.expect_error("SELECT convert_sequence_to_flakeid('handed', 'id')", "55000", r"handed\.id holds or was given IDs up to")
    expect(default_of(c, "ahead"), "nextval('ahead_id_seq'::regclass)", "the default of a refused table")
    c.sql("SELECT convert_sequence_to_flakeid('shares', 'id')")
    expect(c.one("SELECT count(*) FROM pg_class WHERE relname = 'shared_seq'"), "1", "a sequence the column does not own")


def section_convert(run):
    c = run.cluster("convert", PRELOAD, f"flakeid.node = {NODE}").start_ctl()
    c.sql("CREATE EXTENSION flakeid")
    for scenario in (live, identity, rollback, refused):
        scenario(c)
