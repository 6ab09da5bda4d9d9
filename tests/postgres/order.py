"""run.py's order section: the server's generators follow the order of the calls
across backends (docs/postgres.md, "How the server keeps its promise").

8 sessions (one psql each, one thread each) call `flakeid_next()`, then
`flakeid_uuidv7()`, one call at a time. Before each call a thread reads, under one
lock, the largest value any session has returned so far; after it, it records its
result. A result not above the value read before its call began is a call that
started after another returned and still got the smaller ID: counted, and the
section fails on any.
"""

import subprocess
import threading

from cluster import PGBIN, PRELOAD, Fail, check

SESSIONS = 8
CALLS = 3000


class Session:
    """One psql session fed statements on stdin, reading one value back per call."""

    def __init__(self, c):
        self.p = subprocess.Popen(
            [
                f"{PGBIN}/psql",
                "-h",
                "127.0.0.1",
                "-p",
                str(c.port),
                "-U",
                "postgres",
                "-d",
                "postgres",
                "-X",
                "-q",
                "-At",
                "-v",
                "ON_ERROR_STOP=1",
            ],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            bufsize=1,
        )

    def call(self, sql):
        self.p.stdin.write(f"{sql};\n")
        self.p.stdin.flush()
        line = self.p.stdout.readline()
        if not line:
            raise Fail(f"psql ended: {self.p.stderr.read()}")
        return line.strip()

    def close(self):
        self.p.stdin.close()
        self.p.wait(timeout=30)


def happens_before(c, sql, as_int):
    """SESSIONS threads, CALLS calls each: (calls, results not above everything
    returned before their call began, the first such (before, got))."""
    lock = threading.Lock()
    latest = [-1]
    bad = []
    errors = []
    sessions = [Session(c) for _ in range(SESSIONS)]

    def worker(s):
        try:
            for _ in range(CALLS):
                with lock:
                    before = latest[0]
                got = as_int(s.call(sql))
                with lock:
                    if got <= before:
                        bad.append((before, got))
                    latest[0] = max(latest[0], got)
        except Exception as err:  # reported after the join
            errors.append(err)

    threads = [threading.Thread(target=worker, args=(s,)) for s in sessions]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=600)
    for s in sessions:
        s.close()
    if errors:
        raise Fail(f"a session failed: {errors[0]}")
    return SESSIONS * CALLS, len(bad), bad[:1]


def uuid_int(text):
    """A UUID's 128 bits as a number (UUIDs compare as their bytes do)."""
    return int(text.replace("-", ""), 16)


def section_order(run):
    print(
        f"== order: {SESSIONS} sessions, each call after the latest value returned: larger than "
        "all before it"
    )
    c = run.cluster("order", PRELOAD, "flakeid.node = 9").start_ctl()
    c.sql("CREATE EXTENSION flakeid")
    failed = []
    for sql, as_int in (("SELECT flakeid_next()", int), ("SELECT flakeid_uuidv7()", uuid_int)):
        calls, bad, first = happens_before(c, sql, as_int)
        print(
            f"  {sql}: {bad} of {calls} calls below a value returned before they began"
            + (f" (first: {first[0][1]:#x} after {first[0][0]:#x})" if first else "")
        )
        if bad:
            failed.append(f"{sql}: {bad} of {calls}")
    check(not failed, f"calls out of order across sessions: {'; '.join(failed)}")
    c.stop_ctl()
