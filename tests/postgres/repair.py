"""run.py's repair section (bindings/postgres/src/restore.rs, shmem.rs): a repair does
not stop writers, and every refusal and wait is counted and named.
  - under each flakeid.clock_backwards (error, wait, monotonic), 4 pgbench clients
    insert rows with `id bigint DEFAULT flakeid_next()` while another session runs
    flakeid_resume_after(id) with an ID 20 s, then 40 s ahead of the clock: 0 failed
    inserts, each call waited at most the repair's own wait, the waits counted in
    flakeid_stats().repair_waits (the three servers side by side)
  - the UUID family's origin dropped: flakeid_uuidv7() refused (55000) after its
    bounded wait, counted in flakeid_stats().uuid_refusals and named in
    flakeid_status().uuid_last_refusal; a 64-bit refusal in refusals and
    last_refusal; a restart recreates the origin and UUIDs go on
"""

import time

from cluster import PRELOAD, bench_done, check, expect

WRITE = "INSERT INTO ids DEFAULT VALUES;"


def writers_through_repairs(run):
    policies = ("error", "wait", "monotonic")
    clusters = {}
    for i, policy in enumerate(policies):
        c = run.cluster(
            f"repair-{policy}",
            PRELOAD,
            f"flakeid.node = {40 + i}",
            f"flakeid.clock_backwards = '{policy}'",
        ).start_ctl()
        c.sql(
            "CREATE EXTENSION flakeid",
            "CREATE TABLE ids (id bigint PRIMARY KEY DEFAULT flakeid_next())",
            "INSERT INTO ids SELECT flakeid_next_many(100)",
        )
        clusters[policy] = c
    # The writers run through both repairs (about 60 s of waits), 4 clients a server;
    # pgbench ends with a non-zero status if any insert fails.
    benches = {
        p: c.pgbench(WRITE, "-c", "4", "-j", "1", "-T", "75", background=True)
        for p, c in clusters.items()
    }
    time.sleep(3)
    for ahead in (20, 40):
        sessions = {}
        for p, c in clusters.items():
            sessions[p] = c.session(
                "SELECT flakeid_resume_after(flakeid_compose(clock_timestamp() + interval "
                f"'{ahead} s', {40 + policies.index(p)}, 0))"
            )
        t0 = time.time()
        for p, s in sessions.items():
            out, err = s.communicate(timeout=ahead + 60)
            check(s.returncode == 0, f"flakeid_resume_after {ahead} s ahead ({p}): {out}{err}")
        print(
            f"  flakeid_resume_after(an ID {ahead} s ahead) on three servers: returned after "
            f"{time.time() - t0:.1f} s"
        )
    for p, c in clusters.items():
        out = bench_done(benches[p], timeout=180)
        waits, wait_us = c.row("SELECT repair_waits, repair_wait_us FROM flakeid_stats()")
        rows, distinct, refusals = c.row(
            "SELECT count(*), count(DISTINCT id), (SELECT refusals FROM flakeid_stats()) FROM ids"
        )
        failed = [line for line in out.splitlines() if "failed" in line or "aborted" in line]
        check(
            rows == distinct and refusals == "0" and int(waits) > 0,
            f"clock_backwards = {p}: {rows} rows, {distinct} distinct, {refusals} refusals, "
            f"{waits} repair waits",
        )
        # A wait lasts no longer than the repair's own (40 s) and a margin.
        check(
            int(wait_us) <= int(waits) * 45_000_000,
            f"clock_backwards = {p}: {waits} waits took {wait_us} µs",
        )
        print(
            f"  clock_backwards = {p}: pgbench 4 clients through both repairs, 0 failed inserts "
            f"({rows} rows{'; ' + failed[0].strip() if failed else ''}), {waits} waits counted "
            f"({int(wait_us) // 1000} ms)"
        )
        c.stop_ctl()


def refusals_named(run):
    c = run.cluster("refusals", PRELOAD).start_ctl()
    c.sql("CREATE EXTENSION flakeid")
    expect(
        c.one("SELECT refusals, uuid_refusals FROM flakeid_stats()").split(),
        ["0", "0"],
        "refusals at start",
    )
    # No node id: a 64-bit refusal, counted and named for its family.
    c.error("SELECT flakeid_next()")
    refusals, last = c.row(
        "SELECT t.refusals, s.last_refusal FROM flakeid_stats() t, flakeid_status() s", sep="|"
    )
    check(
        refusals == "1" and "flakeid_next()" in last,
        f"a 64-bit refusal: refusals {refusals}, last_refusal {last}",
    )
    # The UUIDs' origin dropped before their first call: refused once the wait for it
    # ends, counted and named for the 128-bit family.
    c.sql("SELECT pg_replication_origin_drop('flakeid_uuid_mark')")
    c.expect_error(
        "SELECT flakeid_uuidv7()", "55000", r'replication origin "flakeid_uuid_mark" does not exist'
    )
    refusals, uuid_refusals, last = c.row(
        "SELECT t.refusals, t.uuid_refusals, s.uuid_last_refusal "
        "FROM flakeid_stats() t, flakeid_status() s",
        sep="|",
    )
    check(
        refusals == "1"
        and uuid_refusals == "1"
        and "flakeid_uuidv7()" in last
        and "flakeid_uuid_mark" in last,
        f"a UUID refusal: refusals {refusals}, uuid_refusals {uuid_refusals}, uuid_last_refusal "
        f"{last}",
    )
    print(f"  refusals named per family: last_refusal and uuid_last_refusal: {last}")
    c.stop_ctl()
    c.start_ctl()
    expect(
        c.one("SELECT count(*) FROM (SELECT flakeid_uuidv7() FROM generate_series(1, 1000)) s"),
        "1000",
        "UUIDs after the restart recreated the origin",
    )
    c.stop_ctl()


def section_repair(run):
    print(
        "== repair: writers go on through flakeid_resume_after(id); refusals counted and named per "
        "family"
    )
    refusals_named(run)
    writers_through_repairs(run)
