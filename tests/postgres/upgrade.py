#!/usr/bin/env python3
"""pg_upgrade from one major to another, and back: the first normal start of every
cluster that took part in a pg_upgrade resumes after now + the largest borrow window
either cluster recorded (docs/postgres.md, "Copies, restores and upgrades"). Every ID
of every server involved is counted; each scenario repeated IDs before (issue 54).

The source major's PostgreSQL is FLAKEID_PGBIN_FROM (by default the one under test,
FLAKEID_PGBIN: a pg_upgrade within the major), the target's FLAKEID_PGBIN; flakeid.so
must be installed in both (make test-postgres-upgrade does: PG_FROM=16 PG=18).

  smoke    a borrowing source (10 s window, 8 s ahead) upgraded into a target that was
           smoke-tested first (CREATE EXTENSION, flakeid_next(), dropped): the target
           has an owner record of its own, yet resumes after the source's IDs
  revert   then the target issues while borrowing, is stopped, and the source (copy
           mode: untouched) is started again: it resumes after the target's IDs
  config   a target whose configuration lacks the source's flakeid.overflow = 'borrow'
           and max_borrow_ms: it waits out the source's recorded window (its
           flakeid_status() saying how many ms are left; a call made meanwhile waits
           and gets its ID), then issues
  plain    a new target with the source's borrow settings, never started before
           (run.py's pg_upgrade section leaves it to copies.py's upgrade scenario)
  uuid     a source whose clock ran 30 s ahead, restarted onto the right clock (its
           UUIDs go on above the floor, 30 s ahead), upgraded: 0 of 20,000 new UUIDs
           below its largest (the UUID mark carried by its file, flakeid_uuid_mark)

usage: tests/postgres/upgrade.py [SCENARIO...]   (smoke and revert run together)
"""

import contextlib
import os
import re
import sys
import time

import cluster
from cluster import PRELOAD, Fail, Run, check, chosen, run_pg, wait_until
import testenv  # noqa: E402
from testenv import chown_postgres  # noqa: E402

TO = cluster.PGBIN
FROM = os.environ.get("FLAKEID_PGBIN_FROM", TO)
WINDOW_MS = 10_000
# One ID per ms (max_sequence = 0): N IDs at once run N ms ahead of the clock.
BORROWING = [PRELOAD, "flakeid.node = 1", "flakeid.max_sequence = 0", "flakeid.overflow = 'borrow'"]
AHEAD = 8000


def major_of(pgbin):
    out = run_pg([f"{pgbin}/pg_config", "--version"]).stdout
    return int(out.split()[1].split(".")[0])


@contextlib.contextmanager
def binaries(pgbin):
    """cluster.py and testenv run `pgbin`'s programs meanwhile (the source's server)."""
    saved = cluster.PGBIN, testenv.PGBIN
    cluster.PGBIN = testenv.PGBIN = pgbin
    try:
        yield
    finally:
        cluster.PGBIN, testenv.PGBIN = saved


def dups(*sides):
    every = [i for side in sides for i in side]
    return len(every) - len(set(every)), len(every)


def report(how, *sides):
    n, total = dups(*sides)
    print(f"  RESULT {how}: duplicates: {n} of {total} IDs")
    return n


def source(run, name):
    """A started source-major server borrowing up to WINDOW_MS ahead: first started
    with a 100 ms window (an empty mark starts at its window's far end), then
    restarted with the whole window to borrow."""
    with binaries(FROM):
        s = run.cluster(name, *BORROWING, "flakeid.max_borrow_ms = 100").start_ctl()
        s.sql(
            "CREATE EXTENSION flakeid",
            "CREATE TABLE ids (id bigint NOT NULL, side text NOT NULL)",
            "INSERT INTO ids VALUES (flakeid_next(), 'first')",
            f"ALTER SYSTEM SET flakeid.max_borrow_ms = {WINDOW_MS}",
        )
        s.restart_ctl()
    return s


def borrow(s, side):
    """AHEAD IDs at once (AHEAD ms ahead of the clock); how far ahead the last is (s)."""
    s.sql(f"INSERT INTO ids SELECT flakeid_next_many({AHEAD}), '{side}'")
    return float(
        s.one(
            f"SELECT extract(epoch FROM flakeid_timestamp(max(id)) - clock_timestamp()) "
            f"FROM ids WHERE side = '{side}'"
        )
    )


def target(run, name, *conf):
    """A new target-major cluster (initdb'd, not started), its checksums as the
    source's (18's initdb turns them on; pg_upgrade wants both alike)."""
    t = run.cluster(name, *conf).init()
    if major_of(TO) >= 18 and major_of(FROM) < 18:
        run_pg([f"{TO}/pg_checksums", "--disable", "-D", t.data])
    return t


def upgrade(run, s, t):
    """pg_upgrade (copy mode) of the stopped `s` into `t`; its time (s)."""
    cwd = os.path.join(run.work, f"pg_upgrade-{t.name}")
    os.makedirs(cwd)
    chown_postgres(cwd)
    t0 = time.monotonic()
    run_pg(
        [
            f"{TO}/pg_upgrade",
            "-b",
            FROM,
            "-B",
            TO,
            "-d",
            s.data,
            "-D",
            t.data,
            "-U",
            "postgres",
            "-p",
            str(testenv.free_port()),
            "-P",
            str(testenv.free_port()),
            "-s",
            cwd,
        ],
        cwd=cwd,
        timeout=600,
    )
    return time.monotonic() - t0


def resumed(c):
    """flakeid_status()'s state and why it resumed where it did (a library without
    the column: why not)."""
    try:
        return c.row("SELECT state, coalesce(resumed_because, '-') FROM flakeid_status()", sep="|")
    except Fail as err:
        return ["?", str(err).splitlines()[-1]]


def scenario_smoke(run):
    print(
        f"== smoke + revert: pg_upgrade {major_of(FROM)} -> {major_of(TO)} into a smoke-tested "
        "target, "
        f"then back to the source"
    )
    s = source(run, "smoke-from")
    # The DBA's smoke test of the new cluster, before the old one's last IDs.
    t = target(run, "smoke-to", *BORROWING, "flakeid.max_borrow_ms = 100").start_ctl()
    t.sql("CREATE DATABASE scratch")
    t.sql("CREATE EXTENSION flakeid", "SELECT flakeid_next()", db="scratch")
    t.sql("DROP DATABASE scratch", f"ALTER SYSTEM SET flakeid.max_borrow_ms = {WINDOW_MS}")
    t.stop_ctl()
    lead = borrow(s, "old")
    old = s.ids()
    with binaries(FROM):
        s.stop_ctl()
    took = upgrade(run, s, t)
    print(
        f"  the source: {len(old)} IDs, its last {lead:.1f} s ahead; pg_upgrade took {took:.1f} s"
    )
    t.start_ctl()
    state = t.verdict(timeout=3 * WINDOW_MS / 1000)
    check(state == "ready", f"the upgraded target: {state}")
    lead = borrow(t, "new")
    new = t.ids("side = 'new'")
    print(f"  the target: {len(new)} IDs, its last {lead:.1f} s ahead; {resumed(t)}")
    smoke = report(f"smoke-tested target {major_of(FROM)}->{major_of(TO)}", old, new)
    t.stop_ctl()
    # The way back: the source, untouched by copy mode, started again.
    with binaries(FROM):
        s.start_ctl()
        state = s.verdict(timeout=3 * WINDOW_MS / 1000)
        check(state == "ready", f"the reverted source: {state}")
        s.sql(f"INSERT INTO ids SELECT flakeid_next_many({AHEAD // 4}), 'reverted'")
        again = s.ids("side = 'reverted'")
        why = resumed(s)
        print(f"  the source again: {len(again)} IDs; {why}")
        revert = report(f"revert {major_of(TO)}->{major_of(FROM)}", old, new, again)
        s.stop_ctl()
    check(
        smoke == 0 and revert == 0,
        f"IDs repeated: {smoke} after pg_upgrade, {revert} across it and the revert",
    )
    check(
        "pg_upgrade" in why[1],
        f"the reverted source does not say it resumed after pg_upgrade: {why}",
    )


def scenario_config(run):
    print(
        f"== config: pg_upgrade {major_of(FROM)} -> {major_of(TO)} into a target without "
        "flakeid.overflow = 'borrow'"
    )
    s = source(run, "config-from")
    lead = borrow(s, "old")
    old = s.ids()
    with binaries(FROM):
        s.stop_ctl()
    t = target(run, "config-to", PRELOAD, "flakeid.node = 1", "flakeid.max_sequence = 0")
    took = upgrade(run, s, t)
    print(
        f"  the source: {len(old)} IDs, its last {lead:.1f} s ahead; pg_upgrade took {took:.1f} s"
    )
    t0 = time.monotonic()
    t.start_ctl()
    # While it waits, flakeid_status() says how long is left; a call made then waits
    # it out (it ends within the call's 10 s) and gets its ID.
    waiting = []

    def says_left():
        waiting[:] = [t.status()]
        return not waiting[0].startswith("checking") or "no ID for another" in waiting[0]

    wait_until(says_left, 30, "the target's state during its wait")
    left = re.search(
        r"^checking: the first start after pg_upgrade: no ID for another ([0-9]+) ms \(before ",
        waiting[0],
    )
    check(
        left and 0 < int(left.group(1)) <= WINDOW_MS,
        f"the waiting target's flakeid_status(): {waiting[0]}",
    )
    first = int(t.one("SELECT flakeid_next()"))
    print(f"  while it waited: {waiting[0]}; a call then got its ID when the wait ended")
    state = t.verdict(timeout=3 * WINDOW_MS / 1000)
    check(state == "ready", f"the upgraded target: {state}")
    new = [first] + [int(x) for x in t.one("SELECT flakeid_next_many(2000)").split()]
    why = resumed(t)
    print(f"  the target: ready {time.monotonic() - t0:.1f} s after its start; {why}")
    n = report(f"target without borrow settings {major_of(FROM)}->{major_of(TO)}", old, new)
    check(n == 0, f"{n} IDs repeated after pg_upgrade")
    check(
        "pg_upgrade" in why[1] and f"{WINDOW_MS} ms" in why[1],
        f"the target does not say it resumed after the source's window: {why}",
    )
    t.stop_ctl()


def scenario_plain(run):
    print(
        f"== plain: pg_upgrade {major_of(FROM)} -> {major_of(TO)} into a new target with the same "
        "borrow settings"
    )
    s = source(run, "plain-from")
    lead = borrow(s, "old")
    old = s.ids()
    with binaries(FROM):
        s.stop_ctl()
    t = target(run, "plain-to", *BORROWING, f"flakeid.max_borrow_ms = {WINDOW_MS}")
    took = upgrade(run, s, t)
    print(
        f"  the source: {len(old)} IDs, its last {lead:.1f} s ahead; pg_upgrade took {took:.1f} s"
    )
    t.start_ctl()
    state = t.verdict(timeout=3 * WINDOW_MS / 1000)
    check(state == "ready", f"the upgraded target: {state}")
    new = [int(x) for x in t.one("SELECT flakeid_next_many(2000)").split()]
    print(f"  the target: {resumed(t)}")
    n = report(f"new target {major_of(FROM)}->{major_of(TO)}", old, new)
    check(n == 0, f"{n} IDs repeated after pg_upgrade")
    t.stop_ctl()


def scenario_uuid(run):
    print(
        f"== uuid: pg_upgrade {major_of(FROM)} -> {major_of(TO)} of a UUID table whose last UUIDs "
        "lead the clock"
    )
    clock = os.path.join(run.work, "uuid-from.faketime")
    # Its clock 30 s ahead, then set right: a restart onto it goes on above the floor,
    # its UUIDs 30 s ahead of the clock the upgraded cluster reads.
    cluster.set_clock(clock, "+30")
    with binaries(FROM):
        s = run.cluster("uuid-from", PRELOAD, "flakeid.node = 1").start_ctl(
            env=cluster.faketime_env(clock)
        )
        s.sql(
            "CREATE EXTENSION flakeid",
            "CREATE TABLE u (id uuid PRIMARY KEY, side text NOT NULL)",
            "INSERT INTO u SELECT flakeid_uuidv7(), 'old' FROM generate_series(1, 10000)",
        )
        s.stop_ctl()
        cluster.set_clock(clock, "+0")
        s.start_ctl(env=cluster.faketime_env(clock))
        s.sql("INSERT INTO u SELECT flakeid_uuidv7(), 'old' FROM generate_series(1, 10000)")
        lead = s.one("SELECT uuid_lead_ms FROM flakeid_status()")
        s.stop_ctl()
    t = target(run, "uuid-to", PRELOAD, "flakeid.node = 1")
    took = upgrade(run, s, t)
    print(f"  the source: 20,000 UUIDs, uuid_lead_ms {lead}; pg_upgrade took {took:.1f} s")
    t.start_ctl()
    state = t.verdict(timeout=30)
    check(state == "ready", f"the upgraded target: {state}")
    t.sql(
        "INSERT INTO u SELECT flakeid_uuidv7(), 'new' FROM generate_series(1, 10000)",
        "INSERT INTO u SELECT flakeid_uuidv7_many(10000), 'new'",
    )
    below = t.one(
        "SELECT count(*) FROM u WHERE side = 'new' "
        "AND id <= (SELECT id FROM u WHERE side = 'old' ORDER BY id DESC LIMIT 1)"
    )
    print(
        f"  RESULT uuid order {major_of(FROM)}->{major_of(TO)}: {below} of 20,000 new UUIDs below "
        "the old largest"
    )
    check(below == "0", f"{below} of 20,000 new UUIDs after pg_upgrade below the old largest")
    t.stop_ctl()


SCENARIOS = {
    "smoke": scenario_smoke,
    "config": scenario_config,
    "plain": scenario_plain,
    "uuid": scenario_uuid,
}


def main(argv):
    picked = chosen(argv, SCENARIOS, "scenario")
    if picked is None:
        return 2
    for pgbin in {FROM, TO}:
        if not os.path.exists(
            os.path.join(run_pg([f"{pgbin}/pg_config", "--pkglibdir"]).stdout.strip(), "flakeid.so")
        ):
            print(f"FAIL: flakeid.so is not installed in {pgbin}'s PostgreSQL", file=sys.stderr)
            return 1
    print(f"pg_upgrade from PostgreSQL {major_of(FROM)} ({FROM}) to {major_of(TO)} ({TO})")
    with Run("flakeid-upgrade.", log_lines=20) as run:
        for name in picked:
            t0 = time.monotonic()
            SCENARIOS[name](run)
            print(f"  ({time.monotonic() - t0:.1f} s)")
    return run.rc


if __name__ == "__main__":
    try:
        sys.exit(main(sys.argv[1:]))
    except Fail as err:
        print(f"FAIL: {err}", file=sys.stderr)
        sys.exit(1)
