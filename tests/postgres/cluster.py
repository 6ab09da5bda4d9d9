"""What the suites of tests/postgres (run.py and the sections it imports, copies.py,
bench.py) share: private PostgreSQL clusters of the one test environment
(tests/env/testenv.py; 127.0.0.1, every TCP login and replication trusted, fsync
off), their clients, the failure type they report, and the shared vectors.

The PostgreSQL is the one in FLAKEID_PGBIN (testenv's PGBIN; by default Debian's 15,
/usr/lib/postgresql/15/bin): `make test-postgres PG=17` points it at the major's
installation (mk/postgres.mk), whose pg_config says where flakeid.so must be.

A `Cluster` is a `testenv.Postgres` that a test starts, stops, restarts, copies and
kills itself. `Run` holds a test run's work directory and makes every cluster in it
(`Run.cluster`): on exit each is stopped, and after a failure the tail of each
server's log is shown.
"""

import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "tests", "env"))
import testenv  # noqa: E402
from testenv import PGBIN, as_postgres, chown_postgres  # noqa: E402

PRELOAD = "shared_preload_libraries = 'flakeid'"
# A server started with these in its environment reads its wall clock as the real one
# plus the offset in `clockfile` ("+0", "-5": seconds), re-read on every call
# (libfaketime; make setup-postgres installs it). PostgreSQL's timeouts use the
# monotonic clock, which stays real.
FAKETIME_LIB = "/usr/lib/x86_64-linux-gnu/faketime/libfaketime.so.1"


def faketime_env(clockfile):
    return {
        "LD_PRELOAD": FAKETIME_LIB,
        "FAKETIME_TIMESTAMP_FILE": clockfile,
        "FAKETIME_NO_CACHE": "1",
        "FAKETIME_DONT_FAKE_MONOTONIC": "1",
    }


def set_clock(clockfile, offset):
    """Sets a faketime clock's offset; rewritten by rename (never half-written)."""
    with open(clockfile + ".tmp", "w") as f:
        f.write(offset + "\n")
    os.chmod(clockfile + ".tmp", 0o644)
    os.replace(clockfile + ".tmp", clockfile)


# The clusters of a run stand for servers on different hosts (a copy, a standby, a
# pg_upgrade's old and new cluster, each on the same node id): the host guard, which
# would refuse the second postmaster on a node id, is off for them. run.py's plain
# section turns it on for two clusters on one node id (start_ctl's env).
os.environ["FLAKEID_HOST_GUARD"] = "off"


def load_vectors(name):
    """tests/vectors/NAME, the shared vectors every binding reads."""
    with open(os.path.join(ROOT, "tests", "vectors", name)) as f:
        return json.load(f)


def pg_config(*args):
    """What PGBIN's pg_config says (e.g. `--pkglibdir`)."""
    return subprocess.run(
        [f"{PGBIN}/pg_config", *args], capture_output=True, text=True, check=True
    ).stdout.strip()


# The major under test: the few checks whose expected result differs by major read it.
MAJOR = int(re.match(r"PostgreSQL (\d+)", pg_config("--version")).group(1))


def require_installed():
    """Exits (1) unless the PostgreSQL under test has flakeid.so installed."""
    if not os.path.exists(os.path.join(pg_config("--pkglibdir"), "flakeid.so")):
        sys.exit(
            f"flakeid.so is not installed in PostgreSQL {MAJOR} ({PGBIN}): run make "
            "install-postgres"
        )


# What no client may see in an error: a Rust backtrace, or a location in error.rs.
BACKTRACE = re.compile(r"backtrace|rust_begin_unwind|std::panicking|error\.rs:", re.I)


class Fail(Exception):
    """A check failed; the message says which and what was seen."""


def check(ok, what):
    if not ok:
        raise Fail(what)


def expect(got, want, what):
    """Fail unless `got` is `want`, saying both."""
    if got != want:
        raise Fail(f"{what}: got {got!r}, expected {want!r}")


def chosen(argv, table, noun):
    """The names on the command line (every one of `table` when none), or None after
    saying which are not in it: the section or scenario choice of run.py and copies.py."""
    names = argv or list(table)
    unknown = [n for n in names if n not in table]
    if unknown:
        print(
            f"FAIL: unknown {noun} {' '.join(unknown)} ({noun}s: {' '.join(table)})",
            file=sys.stderr,
        )
        return None
    return names


def run_pg(args, check_rc=True, timeout=120, cwd=None):
    """Runs a PostgreSQL program as the postgres user; its CompletedProcess."""
    r = subprocess.run(as_postgres(args), capture_output=True, text=True, timeout=timeout, cwd=cwd)
    if check_rc and r.returncode != 0:
        raise Fail(f"{os.path.basename(args[0])} failed ({r.returncode}): {r.stdout}{r.stderr}")
    return r


def wait_until(pred, timeout, what):
    """Polls `pred` every 50 ms; Fail with `what` after `timeout` s."""
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if pred():
            return
        time.sleep(0.05)
    raise Fail(f"{what} (waited {timeout} s)")


class Cluster(testenv.Postgres):
    """A private cluster (made by `Run.cluster`): TCP on 127.0.0.1 trusted, its socket
    in its own directory, its log in DIR/log."""

    def __init__(self, work, name, conf, max_connections):
        super().__init__(work, name, conf=list(conf), max_connections=max_connections, trust=True)
        self.name = name

    def setup(self):
        # No extra roles: every TCP login is trusted, a copy has its original's
        # roles, and pg_upgrade wants none but the install user in the new cluster.
        pass

    # --- clients -------------------------------------------------------------

    def tcp_args(self, *args, db="postgres", user="postgres"):
        """psql over TCP as this process's user (every TCP login is trusted): it can
        read and write the run's files (\\copy)."""
        return [
            f"{PGBIN}/psql",
            "-h",
            "127.0.0.1",
            "-p",
            str(self.port),
            "-U",
            user,
            "-d",
            db,
            "-X",
            "-q",
            "-v",
            "ON_ERROR_STOP=1",
            *args,
        ]

    def session(self, sql, *args):
        """psql running `sql` in the background (`args`: psql options); its Popen, with
        stdout and stderr piped."""
        return subprocess.Popen(
            self.tcp_args(*args, "-c", sql),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )

    def attempt(self, sql, db="postgres", user="postgres"):
        """Runs `sql` (verbose errors: SQLSTATE, DETAIL, HINT, CONTEXT and LOCATION),
        succeed or fail: (psql's exit code, its whole output)."""
        r = subprocess.run(
            self.tcp_args("-At", "-v", "VERBOSITY=verbose", "-c", sql, db=db, user=user),
            capture_output=True,
            text=True,
            timeout=600,
        )
        return r.returncode, r.stdout + r.stderr

    def sql(self, *commands, db="postgres", stdin=None, fields=False):
        """Runs each command (one -c each, in one session; or `stdin`, a script);
        its output (with `fields`, unaligned with ' ' or the string given between
        fields), stripped."""
        args = [a for c in commands for a in ("-c", c)]
        if fields:
            args = ["-At", "-F", fields if isinstance(fields, str) else " ", *args]
        r = subprocess.run(
            self.tcp_args(*args, db=db), input=stdin, capture_output=True, text=True, timeout=600
        )
        if r.returncode != 0:
            raise Fail(
                f"psql on {self.name} failed: "
                f"{' / '.join(commands) or 'a script'}\n{r.stdout}{r.stderr}"
            )
        return r.stdout.strip()

    def row(self, sql, db="postgres", sep=" "):
        """The one row of `sql`, its fields as strings (`sep` between them: one that no
        field holds)."""
        return self.sql(sql, db=db, fields=sep).split(sep)

    def one(self, sql, db="postgres"):
        return self.sql(sql, db=db, fields=True)

    def error(self, sql, db="postgres"):
        """The ERROR `sql` fails with: (SQLSTATE, the whole output); Fail if it succeeds."""
        rc, out = self.attempt(sql, db=db)
        check(rc != 0, f"no error from: {sql}\n{out}")
        m = re.search(r"ERROR:  ([0-9A-Z]{5}): ", out)
        check(m is not None, f"no SQLSTATE in: {out}")
        return m.group(1), out

    def expect_error(self, sql, sqlstate, pattern, db="postgres"):
        """Fail unless `sql` fails with `sqlstate` and a message (verbose) matching
        `pattern`; never with a Rust backtrace or a location in error.rs. Prints the
        ERROR line; returns the whole output."""
        code, out = self.error(sql, db=db)
        check(code == sqlstate, f"not SQLSTATE {sqlstate}: {sql}\n{out}")
        check(re.search(pattern, out, re.M), f"message does not match /{pattern}/: {sql}\n{out}")
        check(
            not BACKTRACE.search(out),
            f"a Rust backtrace or error.rs location reached the client: {sql}\n{out}",
        )
        print("  refused: " + next(line for line in out.splitlines() if "ERROR:" in line))
        return out

    def ids(self, where="true"):
        return [
            int(x) for x in self.one(f"COPY (SELECT id FROM ids WHERE {where}) TO STDOUT").split()
        ]

    def pgbench(self, script, *args, background=False):
        """pgbench running `script` (written to DIR/NAME.sql) with `args`; with
        `background`, its Popen (finish with `bench_done`)."""
        path = os.path.join(self.dir, f"{len(os.listdir(self.dir))}.pgbench.sql")
        with open(path, "w") as f:
            f.write(script + "\n")
        cmd = [
            f"{PGBIN}/pgbench",
            "-h",
            "127.0.0.1",
            "-p",
            str(self.port),
            "-U",
            "postgres",
            "-n",
            *args,
            "-f",
            path,
            "postgres",
        ]
        p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        return p if background else bench_done(p, timeout=600)

    # --- the server ----------------------------------------------------------

    def pg_ctl(self, *args, check_rc=True, timeout=120):
        return run_pg(
            [f"{PGBIN}/pg_ctl", "-D", self.data, *args], check_rc=check_rc, timeout=timeout
        )

    def start_ctl(self, env=None, log=None):
        """pg_ctl start on this cluster's port (a free one the first time), initdb'd
        first if new, the postmaster's environment plus `env` (e.g. libfaketime); Fail
        if it does not start. Its log: `log`, by default DIR/log (pg_ctl writes it as
        postgres: a cluster first started by `start` needs another, its DIR/log being
        this process's)."""
        if not os.path.exists(self.data):
            self.init()
        if self.port is None:
            self.port = testenv.free_port()
        extra = ["env", *(f"{k}={v}" for k, v in env.items())] if env else []
        r = run_pg(
            [
                *extra,
                f"{PGBIN}/pg_ctl",
                "-D",
                self.data,
                "-w",
                "-t",
                "60",
                "-l",
                log or self.log,
                "-o",
                f"-p {self.port}",
                "start",
            ],
            check_rc=False,
        )
        check(r.returncode == 0, f"{self.name}: pg_ctl start failed: {r.stdout}{r.stderr}")
        self.started = True
        return self

    def stop_ctl(self):
        """pg_ctl stop -m fast, however the server was started."""
        self.pg_ctl("-m", "fast", "-w", "stop")
        if self.proc is not None:
            self.proc.wait(timeout=30)
            self.proc = None
        self.started = False

    def restart_ctl(self):
        """A fast restart (settings of ALTER SYSTEM take effect)."""
        self.pg_ctl("-m", "fast", "-w", "restart", "-o", f"-p {self.port}", "-l", self.log)

    def promote(self):
        self.pg_ctl("-w", "promote")

    def restart(self):
        self.stop_ctl()
        return self.start()

    def postmaster_pid(self):
        with open(os.path.join(self.data, "postmaster.pid")) as f:
            return int(f.readline())

    def log_text(self):
        with open(self.log, errors="replace") as f:
            return f.read()

    def status(self):
        return self.one("SELECT state FROM flakeid_status()")

    def verdict(self, timeout=30):
        """The state once the start-up check has reported: it runs in a background
        worker after the server accepts connections, so a state read straight after
        a start may still be 'checking'."""
        wait_until(
            lambda: not self.status().startswith("checking"),
            timeout,
            f"{self.name}: the start-up check's verdict",
        )
        return self.status()

    def copy_from(self, source, standby=False):
        """This cluster's data directory, a pg_basebackup of `source` (-R: a standby)."""
        os.chmod(self.dir, 0o755)
        chown_postgres(self.dir)
        run_pg(
            [
                f"{PGBIN}/pg_basebackup",
                "-h",
                "127.0.0.1",
                "-p",
                str(source.port),
                "-U",
                "postgres",
                "-D",
                self.data,
                "-X",
                "stream",
                "--no-sync",
                *(["-R"] if standby else []),
            ]
        )
        self.append_conf(f"unix_socket_directories = '{self.dir}'")
        return self

    def append_conf(self, *lines):
        with open(os.path.join(self.data, "postgresql.conf"), "a") as f:
            f.write("\n".join(lines) + "\n")

    def wait_replayed(self, primary, timeout=30):
        """Until this standby has replayed all `primary` wrote so far."""
        lsn = primary.one("SELECT pg_current_wal_lsn()")
        wait_until(
            lambda: self.one(f"SELECT pg_last_wal_replay_lsn() >= '{lsn}'") == "t",
            timeout,
            f"the standby {self.name} did not replay up to {lsn}",
        )

    def wait_lease(self):
        """Until the server holds its lease; its node id."""
        seen = []

        def held():
            try:
                seen[:] = self.row(
                    "SELECT coalesce(lease_state, '-'), coalesce(node, -1) FROM flakeid_status()"
                )
            except Fail as err:
                seen[:] = [str(err).splitlines()[-1], ""]
            return seen[0] == "held"

        wait_until(held, 20, f"the server on port {self.port} holds no lease: {seen}")
        return seen[1]

    def accepting(self):
        r = subprocess.run(
            self.tcp_args("-At", "-c", "SELECT 1"), capture_output=True, text=True, timeout=30
        )
        return r.returncode == 0 and r.stdout.strip() == "1"


def bench_done(p, timeout=600):
    """The output of a pgbench started by `Cluster.pgbench`; Fail (with its output) if
    it failed."""
    out, _ = p.communicate(timeout=timeout)
    check(p.returncode == 0, f"pgbench failed ({p.returncode}):\n{out}")
    return out


class Run:
    """A test run's work directory (world-readable, so the postgres user can use
    it) and the clusters made in it, and at the end every cluster stopped and the
    directory removed. After a failure (Fail, EnvError, a subprocess error) it
    prints the tail of each server's log and `FAIL: ...`; `rc` is then 1 and `error`
    the failure."""

    def __init__(self, prefix, log_lines=25, max_connections=40):
        self.prefix, self.log_lines, self.max_connections, self.rc = (
            prefix,
            log_lines,
            max_connections,
            0,
        )
        self.error = None
        self.clusters = []

    def cluster(self, name, *conf):
        """A new cluster in WORK/NAME with the postgresql.conf lines `conf` (initdb'd
        by its first start)."""
        c = Cluster(self.work, name, conf, self.max_connections)
        self.clusters.append(c)
        return c

    def __enter__(self):
        self.work = tempfile.mkdtemp(prefix=self.prefix)
        os.chmod(self.work, 0o755)
        return self

    def __exit__(self, kind, err, _tb):
        failed = kind is not None and issubclass(
            kind, (Fail, testenv.EnvError, subprocess.SubprocessError)
        )
        if failed:
            for c in self.clusters:
                for log in (c.log, os.path.join(c.dir, "pg_ctl.log")):
                    if os.path.exists(log):
                        print(
                            f"--- {log} (last {self.log_lines} lines)"
                            + testenv.log_tail(log, lines=self.log_lines),
                            file=sys.stderr,
                        )
        for c in self.clusters:
            try:
                c.stop()
            except Exception as stop_err:  # keep stopping the others
                print(f"stopping {c.name}: {stop_err}", file=sys.stderr)
        shutil.rmtree(self.work, ignore_errors=True)
        if failed:
            print(f"FAIL: {err}", file=sys.stderr)
            self.rc, self.error = 1, err
            return True
        return False
