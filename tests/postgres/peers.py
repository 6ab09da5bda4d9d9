"""run.py's logical and firstuuid sections.

section_logical: two primaries on one node id (7) with logical replication, as an
operator who broke "one node id per primary" would have them (docs/postgres.md,
"Logical replication between primaries"). A publishes `orders`, B subscribes; an ID A
issued is already in B's table (B issued it too, under the same node id): B's apply
worker stops on the duplicate key, and its error carries the HINT naming the cause
(another primary on node id 7) and the check; B's flakeid_status().peer_node names
the subscription's worker and the ID. A duplicate of an ID with another node id (8:
not this server's) gets no such HINT.

section_firstuuid: a new cluster's first flakeid_uuidv7(), called as soon as the
server accepts connections while two processes keep the host's CPUs busy, three
new clusters: the start-up worker that creates flakeid's replication origins may
start late, and the call waits for it instead of failing on a missing origin.
"""

import subprocess
import sys

from cluster import PRELOAD, check, wait_until

NODE7 = [PRELOAD, "flakeid.node = 7", "wal_level = logical"]
HINT = "another primary of the setup issues IDs under node id 7"


def section_logical(run):
    print(
        "== logical: two primaries on one node id with logical replication: the apply worker's "
        "HINT, peer_node"
    )
    a = run.cluster("logical-a", *NODE7).start()
    b = run.cluster("logical-b", *NODE7).start()
    for c in (a, b):
        c.sql(
            "CREATE EXTENSION flakeid",
            "CREATE TABLE orders (id bigint PRIMARY KEY DEFAULT flakeid_next(), side text)",
        )
    a.sql("CREATE PUBLICATION orders_pub FOR TABLE orders")
    b.sql(
        f"CREATE SUBSCRIPTION from_a CONNECTION 'host=127.0.0.1 port={a.port} user=postgres "
        "dbname=postgres' "
        "PUBLICATION orders_pub WITH (copy_data = false)"
    )
    wait_until(
        lambda: b.one("SELECT count(*) FROM pg_stat_subscription WHERE pid IS NOT NULL") == "1",
        30,
        "B's apply worker did not start",
    )
    # Rows that replicate: no conflict yet, and nothing noted.
    a.sql("INSERT INTO orders (side) SELECT 'a' FROM generate_series(1, 100)")
    wait_until(
        lambda: b.one("SELECT count(*) FROM orders") == "100", 30, "A's rows did not reach B"
    )
    check(
        b.one("SELECT peer_node IS NULL FROM flakeid_status()") == "t",
        "peer_node set before any conflict",
    )
    # Each issues the same ID for a different row (one node id on both: B's row is
    # written with the value A issued, as B's own flakeid_next() would have).
    same = a.one("SELECT flakeid_next()")
    written_on_both(a, b, same)
    wait_until(lambda: HINT in b.log_text(), 10, "the apply worker's duplicate key has no HINT")
    said = next(line for line in b.log_text().splitlines() if HINT in line)
    print(f"  {said.strip()[:220]}...")
    check(
        f"received {same} from a replication peer" in said
        and "SELECT node FROM flakeid_status()" in said
        and "Logical replication between primaries" in said,
        f"the HINT: {said}",
    )
    peer = b.one("SELECT peer_node FROM flakeid_status()")
    print(f"  flakeid_status().peer_node: {peer}")
    check(
        f"applied {same} into public.orders, an ID with this server's node id 7" in peer
        and "subscription" in peer,
        f"peer_node: {peer}",
    )
    # B's row removed, the apply goes on. An ID of node id 8 (not this server's):
    # the same duplicate, no HINT about node ids.
    b.sql(f"DELETE FROM orders WHERE id = {same}")
    wait_until(
        lambda: b.one(f"SELECT side FROM orders WHERE id = {same}") == "a",
        30,
        "the apply did not resume",
    )
    other = b.one("SELECT flakeid_compose(clock_timestamp(), 8, 0)")
    written_on_both(a, b, other)
    log = b.log_text()
    after = log[log.index(f"Key (id)=({other})") :].splitlines()
    check(
        not any("HINT" in line for line in after[:3]), f"node 8's duplicate got a HINT: {after[:3]}"
    )
    print(f"  a duplicate of {other} (node id 8): no HINT")
    b.sql("DROP SUBSCRIPTION from_a")
    a.stop()
    b.stop()


def written_on_both(a, b, id):
    """`id` written on B, then on A: waits until B's apply worker meets it."""
    b.sql(f"INSERT INTO orders VALUES ({id}, 'b')")
    a.sql(f"INSERT INTO orders VALUES ({id}, 'a')")
    wait_until(
        lambda: f"Key (id)=({id})" in b.log_text(),
        30,
        f"B's apply worker met no duplicate of {id}",
    )


def busy():
    """A process that keeps one CPU busy until killed."""
    return subprocess.Popen([sys.executable, "-c", "while True: pass"])


def section_firstuuid(run):
    print(
        "== firstuuid: a new cluster's first flakeid_uuidv7(), at once, on a busy host (three "
        "clusters)"
    )
    burners = [busy(), busy()]
    try:
        for i in range(3):
            c = run.cluster(f"firstuuid-{i}", PRELOAD).start_ctl()
            code, out = c.attempt("CREATE EXTENSION flakeid; SELECT flakeid_uuidv7() IS NOT NULL")
            print(f"  cluster {i}: {out.strip().splitlines()[-1] if out.strip() else out!r}")
            check(code == 0 and out.strip().endswith("t"), f"the first UUID call failed:\n{out}")
            c.stop_ctl()
    finally:
        for p in burners:
            p.kill()
            p.wait()
