#!/usr/bin/env python3
"""Copies, restores, upgrades and a killed postmaster: the PostgreSQL extension on
private clusters made by the one test environment (tests/env/testenv.py), on the
flakeid library installed into the PostgreSQL under test (cluster.py: Debian's 15
unless FLAKEID_PGBIN says otherwise). Each scenario counts the
duplicates among every ID both servers issued; each failed on the extension before
it recognised copies (docs/postgres.md, "Copies, restores and upgrades").

  clone     a base backup (no -R) started as a second primary with the same node id,
            both running: the copy refuses (55000, "copy"); renumbered, the two share
            no ID
  unsignal  a standby made a primary by removing standby.signal (same timeline):
            refuses; once the old primary is gone for good, confirmed: no ID shared
  pitr      a borrowing server (30 s ahead) restored to a point before its last IDs:
            refuses on timeline 2, then after flakeid_confirm_node() repeats none
  upgrade   pg_upgrade (within the major) of a borrowing server: the empty mark starts after
            every ID the old cluster could have issued, no operator step
  kill      kill -9 of the postmaster, three times, with flakeid.node and with a
            lease: every process of the old server exits, and pg_ctl start succeeds
  secrets   a lease URL with a password in the userinfo and in ?password= (and an
            unknown ?sslpassword=): neither the server log nor flakeid_status() nor
            any message shows one

usage: tests/postgres/copies.py [SCENARIO...]   (run.py's section "copies" runs all)
"""

import ctypes
import os
import signal
import subprocess
import sys
import time

# (cluster puts tests/env on sys.path: testenv after it)
from cluster import MAJOR, PRELOAD, Cluster, Fail, Run, check, chosen, run_pg, wait_until
import testenv  # noqa: E402
from testenv import PGBIN, as_postgres, children, chown_postgres  # noqa: E402


def duplicates(*sides):
    every = [i for side in sides for i in side]
    return len(every) - len(set(every)), len(every)


TAKE = """
CREATE TABLE ids (id bigint NOT NULL, side text NOT NULL);
-- IDs for `secs` seconds, 150 at a time with a 1 ms pause: two servers taking at
-- once share nearly every millisecond, as two busy primaries would.
CREATE FUNCTION take(secs float8, who text) RETURNS bigint LANGUAGE plpgsql AS $$
DECLARE t0 timestamptz := clock_timestamp(); n bigint := 0;
BEGIN
  WHILE clock_timestamp() < t0 + secs * interval '1 s' AND n < 150000 LOOP
    INSERT INTO ids SELECT flakeid_next(), who FROM generate_series(1, 150);
    n := n + 150;
    PERFORM pg_sleep(0.001);
  END LOOP;
  RETURN n;
END $$;
"""


def take_at_once(servers, secs=1.0):
    """Each server takes IDs for `secs` seconds, all at the same time: per server, the
    number taken or the ERROR it refused with."""
    procs = [(s, subprocess.Popen(as_postgres(s.psql_args(f"SELECT take({secs}, '{s.name}')", verbose=True)),
                                  stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)) for s in servers]
    out = {}
    for s, p in procs:
        o, e = p.communicate(timeout=120)
        out[s.name] = int(o) if p.returncode == 0 else e.strip().splitlines()[0][:70] + "…"
    return out


def two_primaries(work, a, b, how):
    """`b`, a copy of `a`, must refuse while `a` issues; the IDs of both are counted."""
    state = b.verdict()
    took = take_at_once([a, b])
    dups, n = duplicates(a.ids(), b.ids("side <> 'before'"))
    print(f"  both running: {took}; duplicates: {dups} of {n} IDs")
    check(dups == 0, f"{how}: {dups} duplicates")
    check(isinstance(took[b.name], str) and "55000" in took[b.name], f"{how}: the copy issued IDs: {took}")
    check(state == "copied: refusing until the node id is changed or confirmed", f"{how}: the copy's state is {state!r}")
    code, err = b.error("SELECT flakeid_next()")
    check(code == "55000" and "is a copy of another server's" in err and "flakeid_confirm_node(5)" in err
          and "flakeid.lease" in err, f"{how}: the copy's refusal: {err}")
    print(f"  refused: {err.splitlines()[0]}")


def scenario_clone(work):
    print("== clone: a base backup (without -R) started as a second primary")
    a = Cluster(work, "clone-a", [PRELOAD, "flakeid.node = 5"]).start()
    a.q("CREATE EXTENSION flakeid")
    a.q(TAKE)
    a.q("INSERT INTO ids SELECT flakeid_next_many(1000), 'before'")
    b = Cluster(work, "clone-b").copy_from(a)
    b.start()
    two_primaries(work, a, b, "clone")
    # Renumbered, the copy is a server of its own: both issue, none shared.
    b.set_conf(flakeid__node=6)
    b.restart()
    state = b.verdict()
    check(state == "ready", f"the renumbered copy: {state}")
    took = take_at_once([a, b])
    dups, n = duplicates(a.ids(), b.ids("side <> 'before'"))
    print(f"  renumbered to node 6, both running: {took}; duplicates: {dups} of {n} IDs")
    check(all(isinstance(v, int) and v > 0 for v in took.values()) and dups == 0, f"after renumbering: {dups} duplicates")
    a.stop()
    b.stop()


def scenario_unsignal(work):
    print("== unsignal: a standby made a primary by removing standby.signal")
    a = Cluster(work, "unsignal-a", [PRELOAD, "flakeid.node = 5"]).start()
    a.q("CREATE EXTENSION flakeid")
    a.q(TAKE)
    a.q("INSERT INTO ids SELECT flakeid_next_many(1000), 'before'")
    b = Cluster(work, "unsignal-b").copy_from(a, standby=True)
    b.start()
    lsn = a.q("SELECT pg_current_wal_lsn()")
    wait_until(lambda: b.q(f"SELECT pg_last_wal_replay_lsn() >= '{lsn}'") == "t", 30, "the standby did not replay")
    b.stop_fast()
    os.remove(os.path.join(b.data, "standby.signal"))
    b.start()
    check(b.q("SELECT pg_is_in_recovery()") == "f", "still a standby without standby.signal")
    check(b.q("SELECT timeline FROM flakeid_status()") == "1", "not on timeline 1")
    two_primaries(work, a, b, "standby.signal removed")
    # The old primary gone for good: the operator confirms the node id.
    before = a.ids()
    a.stop_fast()
    print(f"  old primary stopped; {b.q('SELECT flakeid_confirm_node(5)')}")
    b.q("INSERT INTO ids SELECT flakeid_next_many(100000), 'confirmed'")
    dups, n = duplicates(before, b.ids("side <> 'before'"))
    print(f"  confirmed: duplicates: {dups} of {n} IDs")
    check(dups == 0, f"after confirming: {dups} duplicates")
    b.stop()


def borrowing_server(work, name, extra=()):
    """A server borrowing up to 60 s ahead at one ID per ms (flakeid.max_sequence = 0).
    Its first start resumes at the far end of its borrow window (an empty mark), so
    it starts with a 100 ms window, records a mark, and restarts with 60 s: a plain
    restart resumes right after the mark, with the whole window to borrow."""
    s = Cluster(work, name, [PRELOAD, "flakeid.node = 1", "flakeid.max_sequence = 0", "flakeid.overflow = 'borrow'",
                             "flakeid.max_borrow_ms = 100", *extra]).start()
    s.q("CREATE EXTENSION flakeid")
    s.q("CREATE TABLE ids (id bigint PRIMARY KEY, side text NOT NULL)")
    s.q("INSERT INTO ids VALUES (flakeid_next(), 'first')")
    s.set_conf(flakeid__max_borrow_ms=60000)
    return s.restart()


def lead_s(s):
    return float(s.q("SELECT extract(epoch FROM flakeid_timestamp(max(id)) - clock_timestamp()) FROM ids"))


def scenario_pitr(work):
    print("== pitr: a borrowing server restored to a point before its last IDs, then confirmed")
    archive = os.path.join(work, "archive")
    os.makedirs(archive)
    chown_postgres(archive)
    a = borrowing_server(work, "pitr-a", ["archive_mode = on", f"archive_command = 'cp %p {archive}/%f'"])
    b = Cluster(work, "pitr-b").copy_from(a)
    a.q("INSERT INTO ids SELECT flakeid_next_many(10000), 'before'")
    a.q("SELECT pg_create_restore_point('before')")
    a.q("INSERT INTO ids SELECT flakeid_next_many(20000), 'after'")
    lead = lead_s(a)
    segment = a.q("SELECT pg_walfile_name(pg_switch_wal())")
    wait_until(lambda: os.path.exists(os.path.join(archive, segment)), 30, f"{segment} was not archived")
    issued = a.ids()
    a.stop_fast()
    print(f"  the old server: {len(issued)} IDs, its last {lead:.1f} s ahead of the clock; stopped")
    b.append_conf(f"restore_command = 'cp {archive}/%f %p'", "recovery_target_name = 'before'",
                  "recovery_target_action = 'promote'", "archive_mode = off")
    open(os.path.join(b.data, "recovery.signal"), "w").close()
    chown_postgres(os.path.join(b.data, "recovery.signal"))
    b.start()
    wait_until(lambda: b.q("SELECT pg_is_in_recovery()") == "f", 60, "the restore did not finish")
    check(int(b.q("SELECT count(*) FROM ids")) == 10001, "not restored to the restore point")
    code, err = b.error("SELECT flakeid_next()")
    check(code == "55000" and "was promoted (timeline 1 to 2)" in err, f"the restored server: {err}")
    print(f"  refused: {err.splitlines()[0]}")
    print(f"  {b.q('SELECT flakeid_confirm_node(1)')}")
    new = [int(x) for x in b.q("SELECT flakeid_next_many(2000)").split()]
    dups, n = duplicates(issued, new)
    print(f"  restored and confirmed: duplicates: {dups} of {n} IDs")
    check(dups == 0, f"after the restore: {dups} duplicates")
    b.stop()


def scenario_upgrade(work):
    print(f"== upgrade: pg_upgrade of a borrowing server ({MAJOR} to {MAJOR})")
    a = borrowing_server(work, "upgrade-old")
    a.q("INSERT INTO ids SELECT flakeid_next_many(30000), 'old'")
    lead = lead_s(a)
    issued = a.ids()
    a.stop_fast()
    c = Cluster(work, "upgrade-new", [PRELOAD, "flakeid.node = 1", "flakeid.max_sequence = 0",
                                      "flakeid.overflow = 'borrow'", "flakeid.max_borrow_ms = 60000"]).init()
    cwd = os.path.join(work, "pg_upgrade")
    os.makedirs(cwd)
    chown_postgres(cwd)
    t0 = time.monotonic()
    run_pg([f"{PGBIN}/pg_upgrade", "-b", PGBIN, "-B", PGBIN, "-d", a.data, "-D", c.data, "-U", "postgres",
            "-p", str(testenv.free_port()), "-P", str(testenv.free_port()), "-s", cwd], cwd=cwd, timeout=300)
    print(f"  the old server: {len(issued)} IDs, its last {lead:.1f} s ahead; pg_upgrade took {time.monotonic() - t0:.1f} s")
    c.start()
    c.verdict()
    state, mark = c.q("SELECT state, coalesce(high_water_mark::text, 'none') FROM flakeid_status()").split("|")
    new = [int(x) for x in c.q("SELECT flakeid_next_many(2000)").split()]
    dups, n = duplicates(issued, new)
    print(f"  upgraded: {state}, high-water mark {mark}; duplicates: {dups} of {n} IDs")
    check(dups == 0, f"after pg_upgrade: {dups} duplicates")
    c.stop()


def is_gone(pid):
    """Whether `pid` has exited (a zombie has: it holds no memory; it is reaped here
    when this process is its subreaper)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            state = f.read().rsplit(")", 1)[1].split()[0]
    except OSError:
        return True
    if state == "Z":
        try:
            os.waitpid(pid, os.WNOHANG)
        except ChildProcessError:
            pass
        return True
    return False


def names(pids):
    got = []
    for p in pids:
        try:
            with open(f"/proc/{p}/cmdline", "rb") as f:
                got.append(f.read().replace(b"\0", b" ").decode(errors="replace").strip())
        except OSError:
            pass
    return got


def scenario_kill(work):
    print("== kill: kill -9 of the postmaster, then pg_ctl start (three times each)")
    # Processes orphaned by the kill are reparented here (not to an init that may
    # not reap), so that this test waits for them and reaps them itself.
    libc = ctypes.CDLL(None, use_errno=True)
    check(libc.prctl(36, 1, 0, 0, 0) == 0, "prctl(PR_SET_CHILD_SUBREAPER)")
    leases = os.path.join(work, "leases")
    os.makedirs(leases)
    chown_postgres(leases)
    for how, conf in [("flakeid.node", ["flakeid.node = 8"]),
                      ("flakeid.lease", [f"flakeid.lease = 'file://{leases}?namespace=kill'",
                                         "flakeid.lease_ttl_ms = 1000"])]:
        k = Cluster(work, f"kill-{how.split('.')[1]}", [PRELOAD, *conf]).start()
        k.q("CREATE EXTENSION flakeid")
        k.q("CREATE TABLE ids (id bigint PRIMARY KEY)")
        for round in range(1, 4):
            wait_until(lambda: k.q("SELECT coalesce(lease_state, 'held') FROM flakeid_status()") == "held", 20,
                       "no lease held")
            k.q("INSERT INTO ids SELECT flakeid_next_many(1000)")
            pm = k.postmaster_pid()
            kids = children(pm)
            check(any("flakeid" in n for n in names(kids)), f"no flakeid process among {names(kids)}")
            os.kill(pm, signal.SIGKILL)
            if k.proc is not None:
                k.proc.wait(timeout=10)
                k.proc = None
            else:
                wait_until(lambda: is_gone(pm), 10, "the postmaster did not die")
            t0 = time.monotonic()
            try:
                wait_until(lambda: all(is_gone(p) for p in kids), 10, "processes of the killed postmaster still run")
            except Fail:
                left = [p for p in kids if not is_gone(p)]
                stuck = names(left)
                for p in left:
                    os.kill(p, signal.SIGKILL)
                wait_until(lambda: all(is_gone(p) for p in left), 10, "orphans did not die of SIGKILL")
                raise Fail(f"{how}, round {round}: still running 10 s after kill -9 of the postmaster: {stuck}")
            gone = time.monotonic() - t0
            r = k.start_with_pg_ctl()
            check(r.returncode == 0, f"{how}, round {round}: pg_ctl start failed: {r.stdout}{r.stderr}")
            print(f"  {how}, round {round}: {len(kids)} processes gone {gone:.2f} s after kill -9; pg_ctl start: ok")
        wait_until(lambda: k.q("SELECT coalesce(lease_state, 'held') FROM flakeid_status()") == "held", 20,
                   "no lease held")
        k.q("INSERT INTO ids SELECT flakeid_next_many(1000)")
        check(k.q("SELECT count(*) FROM ids") == "4000", "IDs after the restarts")
        k.stop_fast()


def scenario_secrets(work):
    print("== secrets: passwords in a lease URL, in the userinfo and in the query")
    dead_port = testenv.free_port()  # reserved, so nothing listens on it
    url = (f"postgres://flakeid:hunter-in-userinfo@127.0.0.1:{dead_port}/postgres"
           "?password=hunter-in-query&namespace=secrets")
    p = Cluster(work, "secrets", [PRELOAD, f"flakeid.lease = '{url}'", "flakeid.lease_ttl_ms = 1000"]).start()
    p.q("CREATE EXTENSION flakeid")

    def warnings():
        with open(p.log, errors="replace") as f:
            return f.read().count("cannot lease a node id")

    wait_until(lambda: warnings() >= 2, 20, "fewer than 2 lease warnings in the log")
    lease, lease_state = p.q("SELECT lease, lease_state FROM flakeid_status()").split("|")
    _, refused = p.error("SELECT flakeid_next()")
    print(f"  flakeid_status().lease: {lease}")
    # An unknown parameter named like a secret: refused at start, shown masked.
    p.stop_fast()
    p.append_conf(f"flakeid.lease = 'postgres://u:hunter-again@127.0.0.1:{dead_port}/db?sslpassword=hunter-ssl'")
    p.start()
    code, unknown = p.error("SELECT flakeid_next()")
    with open(p.log, errors="replace") as f:
        log = f.read()
    leaked = [line for line in log.splitlines() if "hunter" in line]
    shown = {"server log": log, "flakeid_status()": lease + lease_state, "flakeid_next()": refused + unknown}
    leaks = [where for where, text in shown.items() if "hunter" in text]
    print(f"  {warnings()} lease warnings logged, {len(leaked)} log lines with a password; "
          f"passwords shown in: {', '.join(leaks) or 'none'}")
    check(not leaks, f"a password in: {leaks}")
    check(lease == f"postgres://flakeid:***@127.0.0.1:{dead_port}/postgres?password=***&namespace=secrets",
          f"flakeid_status().lease: {lease}")
    check(code == "22023" and "sslpassword=***" in unknown, f"the refused URL: {unknown}")
    p.stop()


SCENARIOS = {"clone": scenario_clone, "unsignal": scenario_unsignal, "pitr": scenario_pitr,
             "upgrade": scenario_upgrade, "kill": scenario_kill, "secrets": scenario_secrets}


def main(argv):
    picked = chosen(argv, SCENARIOS, "scenario")
    if picked is None:
        return 2
    with Run("flakeid-copies.", log_lines=15) as run:
        for name in picked:
            t0 = time.monotonic()
            SCENARIOS[name](run.work)
            print(f"  ({time.monotonic() - t0:.1f} s)")
    return run.rc


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
