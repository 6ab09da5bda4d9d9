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
  restore   a borrowing server's rows (5 s ahead) dumped with pg_dump and restored with
            pg_restore onto a new server with the same node id and no borrow
            settings: after SELECT flakeid_resume_after(max(id)) FROM ids, none of
            its 2,000 new IDs repeats (without it, all 2,000 did)
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
from cluster import MAJOR, PRELOAD, Fail, Run, check, chosen, run_pg, wait_until
import testenv  # noqa: E402
from testenv import PGBIN, children, chown_postgres  # noqa: E402


def no_duplicates(how, shown, *sides):
    """Fail (`how`) if any ID is in two of `sides`, or twice in one; prints `shown`
    and the count."""
    every = [i for side in sides for i in side]
    dups = len(every) - len(set(every))
    print(f"  {shown}; duplicates: {dups} of {len(every)} IDs")
    check(dups == 0, f"{how}: {dups} duplicates")


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
    procs = [
        (s, s.session(f"SELECT take({secs}, '{s.name}')", "-At", "-v", "VERBOSITY=verbose"))
        for s in servers
    ]
    out = {}
    for s, p in procs:
        o, e = p.communicate(timeout=120)
        out[s.name] = int(o) if p.returncode == 0 else e.strip().splitlines()[0][:70] + "…"
    return out


def primary_taking(run, name):
    """A started primary with flakeid.node = 5 and take() (TAKE), 1,000 IDs taken
    'before'."""
    a = run.cluster(name, PRELOAD, "flakeid.node = 5").start()
    a.sql(
        "CREATE EXTENSION flakeid", TAKE, "INSERT INTO ids SELECT flakeid_next_many(1000), 'before'"
    )
    return a


def two_primaries(a, b, how):
    """`b`, a copy of `a`, must refuse while `a` issues; the IDs of both are counted."""
    state = b.verdict()
    took = take_at_once([a, b])
    no_duplicates(how, f"both running: {took}", a.ids(), b.ids("side <> 'before'"))
    check(
        isinstance(took[b.name], str) and "55000" in took[b.name],
        f"{how}: the copy issued IDs: {took}",
    )
    check(
        state == "copied: refusing until the node id is changed or confirmed",
        f"{how}: the copy's state is {state!r}",
    )
    err = b.expect_error("SELECT flakeid_next()", "55000", "is a copy of another server's")
    check(
        "flakeid_confirm_node(5)" in err and "flakeid.lease" in err,
        f"{how}: the copy's refusal: {err}",
    )


def scenario_clone(run):
    print("== clone: a base backup (without -R) started as a second primary")
    a = primary_taking(run, "clone-a")
    b = run.cluster("clone-b").copy_from(a)
    b.start()
    two_primaries(a, b, "clone")
    # Renumbered, the copy is a server of its own: both issue, none shared.
    b.sql("ALTER SYSTEM SET flakeid.node = 6")
    b.restart()
    state = b.verdict()
    check(state == "ready", f"the renumbered copy: {state}")
    took = take_at_once([a, b])
    no_duplicates(
        "after renumbering",
        f"renumbered to node 6, both running: {took}",
        a.ids(),
        b.ids("side <> 'before'"),
    )
    check(all(isinstance(v, int) and v > 0 for v in took.values()), f"after renumbering: {took}")
    a.stop()
    b.stop()


def scenario_unsignal(run):
    print("== unsignal: a standby made a primary by removing standby.signal")
    a = primary_taking(run, "unsignal-a")
    b = run.cluster("unsignal-b").copy_from(a, standby=True)
    b.start()
    b.wait_replayed(a)
    b.stop_ctl()
    os.remove(os.path.join(b.data, "standby.signal"))
    b.start()
    check(b.one("SELECT pg_is_in_recovery()") == "f", "still a standby without standby.signal")
    check(b.one("SELECT timeline FROM flakeid_status()") == "1", "not on timeline 1")
    two_primaries(a, b, "standby.signal removed")
    # The old primary gone for good: the operator confirms the node id.
    before = a.ids()
    a.stop_ctl()
    print(f"  old primary stopped; {b.one('SELECT flakeid_confirm_node(5)')}")
    b.sql("INSERT INTO ids SELECT flakeid_next_many(100000), 'confirmed'")
    no_duplicates("after confirming", "confirmed", before, b.ids("side <> 'before'"))
    b.stop()


# A server borrowing up to flakeid.max_borrow_ms ahead at one ID per ms.
BORROWING = [PRELOAD, "flakeid.node = 1", "flakeid.max_sequence = 0", "flakeid.overflow = 'borrow'"]


def borrowing_server(run, name, *extra):
    """A server borrowing up to 60 s ahead (BORROWING). Its first start resumes at
    the far end of its borrow window (an empty mark), so it starts with a 100 ms
    window, records a mark, and restarts with 60 s: a plain restart resumes right
    after the mark, with the whole window to borrow."""
    s = run.cluster(name, *BORROWING, "flakeid.max_borrow_ms = 100", *extra).start()
    s.sql(
        "CREATE EXTENSION flakeid",
        "CREATE TABLE ids (id bigint PRIMARY KEY, side text NOT NULL)",
        "INSERT INTO ids VALUES (flakeid_next(), 'first')",
        "ALTER SYSTEM SET flakeid.max_borrow_ms = 60000",
    )
    return s.restart()


def lead_s(s):
    return float(
        s.one("SELECT extract(epoch FROM flakeid_timestamp(max(id)) - clock_timestamp()) FROM ids")
    )


def new_ids(s):
    return [int(x) for x in s.one("SELECT flakeid_next_many(2000)").split()]


def scenario_pitr(run):
    print("== pitr: a borrowing server restored to a point before its last IDs, then confirmed")
    archive = os.path.join(run.work, "archive")
    os.makedirs(archive)
    chown_postgres(archive)
    a = borrowing_server(
        run, "pitr-a", "archive_mode = on", f"archive_command = 'cp %p {archive}/%f'"
    )
    b = run.cluster("pitr-b").copy_from(a)
    a.sql(
        "INSERT INTO ids SELECT flakeid_next_many(10000), 'before'",
        "SELECT pg_create_restore_point('before')",
        "INSERT INTO ids SELECT flakeid_next_many(20000), 'after'",
    )
    lead = lead_s(a)
    segment = a.one("SELECT pg_walfile_name(pg_switch_wal())")
    wait_until(
        lambda: os.path.exists(os.path.join(archive, segment)), 30, f"{segment} was not archived"
    )
    issued = a.ids()
    a.stop_ctl()
    print(f"  the old server: {len(issued)} IDs, its last {lead:.1f} s ahead of the clock; stopped")
    b.append_conf(
        f"restore_command = 'cp {archive}/%f %p'",
        "recovery_target_name = 'before'",
        "recovery_target_action = 'promote'",
        "archive_mode = off",
    )
    open(os.path.join(b.data, "recovery.signal"), "w").close()
    chown_postgres(os.path.join(b.data, "recovery.signal"))
    b.start()
    wait_until(lambda: b.one("SELECT pg_is_in_recovery()") == "f", 60, "the restore did not finish")
    check(int(b.one("SELECT count(*) FROM ids")) == 10001, "not restored to the restore point")
    b.expect_error("SELECT flakeid_next()", "55000", r"was promoted \(timeline 1 to 2\)")
    print(f"  {b.one('SELECT flakeid_confirm_node(1)')}")
    no_duplicates("after the restore", "restored and confirmed", issued, new_ids(b))
    b.stop()


def scenario_upgrade(run):
    print(f"== upgrade: pg_upgrade of a borrowing server ({MAJOR} to {MAJOR})")
    a = borrowing_server(run, "upgrade-old")
    a.sql("INSERT INTO ids SELECT flakeid_next_many(30000), 'old'")
    lead = lead_s(a)
    issued = a.ids()
    a.stop_ctl()
    c = run.cluster("upgrade-new", *BORROWING, "flakeid.max_borrow_ms = 60000").init()
    cwd = os.path.join(run.work, "pg_upgrade")
    os.makedirs(cwd)
    chown_postgres(cwd)
    t0 = time.monotonic()
    run_pg(
        [
            f"{PGBIN}/pg_upgrade",
            "-b",
            PGBIN,
            "-B",
            PGBIN,
            "-d",
            a.data,
            "-D",
            c.data,
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
        timeout=300,
    )
    print(
        f"  the old server: {len(issued)} IDs, its last {lead:.1f} s ahead; pg_upgrade took "
        f"{time.monotonic() - t0:.1f} s"
    )
    c.start()
    c.verdict()
    state, mark = c.row(
        "SELECT state, coalesce(high_water_mark::text, 'none') FROM flakeid_status()", sep="|"
    )
    no_duplicates(
        "after pg_upgrade", f"upgraded: {state}, high-water mark {mark}", issued, new_ids(c)
    )
    c.stop()


def scenario_restore(run):
    print(
        "== restore: a borrowing server's rows, pg_dump and pg_restore onto a new server with the "
        "same node id"
    )
    a = borrowing_server(run, "restore-a")
    a.sql("INSERT INTO ids SELECT flakeid_next_many(5000), 'old'")
    lead = lead_s(a)
    issued = a.ids()
    dump = os.path.join(run.work, "restore.dump")
    b = run.cluster("restore-b", PRELOAD, "flakeid.node = 1", "flakeid.max_sequence = 0").start()
    for cmd in (
        [f"{PGBIN}/pg_dump", *tcp(a), "-Fc", "-f", dump, "postgres"],
        [f"{PGBIN}/pg_restore", *tcp(b), "-d", "postgres", "--exit-on-error", dump],
    ):
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
        check(r.returncode == 0, f"{os.path.basename(cmd[0])} failed: {r.stdout}{r.stderr}")
    a.stop()
    check(sorted(b.ids()) == sorted(issued), "the rows were not restored")
    resumed = b.one("SELECT flakeid_resume_after(max(id)) FROM ids")
    no_duplicates(
        "after the restore",
        f"restored {len(issued)} IDs, the last {lead:.1f} s ahead; resumed after {resumed}",
        issued,
        new_ids(b),
    )
    b.stop()


def tcp(c):
    return ["-h", "127.0.0.1", "-p", str(c.port), "-U", "postgres"]


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


def scenario_kill(run):
    print("== kill: kill -9 of the postmaster, then pg_ctl start (three times each)")
    # Processes orphaned by the kill are reparented here (not to an init that may
    # not reap), so that this test waits for them and reaps them itself.
    libc = ctypes.CDLL(None, use_errno=True)
    check(libc.prctl(36, 1, 0, 0, 0) == 0, "prctl(PR_SET_CHILD_SUBREAPER)")
    leases = os.path.join(run.work, "leases")
    os.makedirs(leases)
    chown_postgres(leases)
    for how, conf in [
        ("flakeid.node", ["flakeid.node = 8"]),
        (
            "flakeid.lease",
            [f"flakeid.lease = 'file://{leases}?namespace=kill'", "flakeid.lease_ttl_ms = 1000"],
        ),
    ]:
        k = run.cluster(f"kill-{how.split('.')[1]}", PRELOAD, *conf).start()
        k.sql("CREATE EXTENSION flakeid", "CREATE TABLE ids (id bigint PRIMARY KEY)")

        def take_1000():
            wait_until(
                lambda: (
                    k.one("SELECT coalesce(lease_state, 'held') FROM flakeid_status()") == "held"
                ),
                20,
                "no lease held",
            )
            k.sql("INSERT INTO ids SELECT flakeid_next_many(1000)")

        for round in range(1, 4):
            take_1000()
            pm = k.postmaster_pid()
            kids = children(pm)
            check(
                any("flakeid" in n for n in names(kids)), f"no flakeid process among {names(kids)}"
            )
            os.kill(pm, signal.SIGKILL)
            if k.proc is not None:
                k.proc.wait(timeout=10)
                k.proc = None
            else:
                wait_until(lambda: is_gone(pm), 10, "the postmaster did not die")
            t0 = time.monotonic()
            try:
                wait_until(
                    lambda: all(is_gone(p) for p in kids),
                    10,
                    "processes of the killed postmaster still run",
                )
            except Fail:
                left = [p for p in kids if not is_gone(p)]
                stuck = names(left)
                for p in left:
                    os.kill(p, signal.SIGKILL)
                wait_until(
                    lambda: all(is_gone(p) for p in left), 10, "orphans did not die of SIGKILL"
                )
                raise Fail(
                    f"{how}, round {round}: still running 10 s after kill -9 of the postmaster: "
                    f"{stuck}"
                )
            gone = time.monotonic() - t0
            # (Its own log: DIR/log is this process's, written by the first start.)
            k.start_ctl(log=os.path.join(k.dir, "pg_ctl.log"))
            print(
                f"  {how}, round {round}: {len(kids)} processes gone {gone:.2f} s after kill -9; "
                "pg_ctl start: ok"
            )
        take_1000()
        check(k.one("SELECT count(*) FROM ids") == "4000", "IDs after the restarts")
        k.stop_ctl()


def scenario_secrets(run):
    print("== secrets: passwords in a lease URL, in the userinfo and in the query")
    dead_port = testenv.free_port()  # reserved, so nothing listens on it
    url = (
        f"postgres://flakeid:hunter-in-userinfo@127.0.0.1:{dead_port}/postgres"
        "?password=hunter-in-query&namespace=secrets"
    )
    p = run.cluster(
        "secrets", PRELOAD, f"flakeid.lease = '{url}'", "flakeid.lease_ttl_ms = 1000"
    ).start()
    p.sql("CREATE EXTENSION flakeid")

    def warnings():
        return p.log_text().count("cannot lease a node id")

    wait_until(lambda: warnings() >= 2, 20, "fewer than 2 lease warnings in the log")
    lease, lease_state = p.row("SELECT lease, lease_state FROM flakeid_status()", sep="|")
    _, refused = p.error("SELECT flakeid_next()")
    print(f"  flakeid_status().lease: {lease}")
    # An unknown parameter named like a secret: refused at start, shown masked.
    p.stop_ctl()
    p.append_conf(
        "flakeid.lease = "
        f"'postgres://u:hunter-again@127.0.0.1:{dead_port}/db?sslpassword=hunter-ssl'"
    )
    p.start()
    code, unknown = p.error("SELECT flakeid_next()")
    log = p.log_text()
    leaked = [line for line in log.splitlines() if "hunter" in line]
    shown = {
        "server log": log,
        "flakeid_status()": lease + lease_state,
        "flakeid_next()": refused + unknown,
    }
    leaks = [where for where, text in shown.items() if "hunter" in text]
    print(
        f"  {warnings()} lease warnings logged, {len(leaked)} log lines with a password; "
        f"passwords shown in: {', '.join(leaks) or 'none'}"
    )
    check(not leaks, f"a password in: {leaks}")
    check(
        lease
        == f"postgres://flakeid:***@127.0.0.1:{dead_port}/postgres?password=***&namespace=secrets",
        f"flakeid_status().lease: {lease}",
    )
    check(code == "22023" and "sslpassword=***" in unknown, f"the refused URL: {unknown}")
    p.stop()


SCENARIOS = {
    "clone": scenario_clone,
    "unsignal": scenario_unsignal,
    "pitr": scenario_pitr,
    "upgrade": scenario_upgrade,
    "restore": scenario_restore,
    "kill": scenario_kill,
    "secrets": scenario_secrets,
}


def main(argv):
    picked = chosen(argv, SCENARIOS, "scenario")
    if picked is None:
        return 2
    with Run("flakeid-copies.", log_lines=15) as run:
        for name in picked:
            t0 = time.monotonic()
            SCENARIOS[name](run)
            print(f"  ({time.monotonic() - t0:.1f} s)")
    return run.rc


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
