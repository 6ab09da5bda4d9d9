"""The lease stores, really started, in the store's namespace: Redis, PostgreSQL 15
and etcd, each plain or TLS, with the faults the nemesis applies to them.

Each store is tests/env/testenv.py's server (the one test environment), given what
a store in its own namespace needs: it binds the store's address (127.77.0.1) on
fixed ports, its certificates name that address (run.py: make_certs), and every
program of it (server, redis-cli, psql, etcdctl) runs through netns.exec_prefix
(in the namespace, killed with the harness). No lease-test logins (`setup()`): the
generators log in as Redis's default user, `postgres` / `secret` (only over TLS in
the TLS scenario: `hostssl`) and etcd without authentication. A store serves the
generators through the delay proxy (proxy.py) on `gen_port`; the poller and the
harness's own commands go straight to the server (PostgreSQL's socket directory,
or the port inside the namespace). `spawn_again()` starts it without waiting (a
heal: the generators retry).

Faults: `pause`/`resume` (SIGSTOP/SIGCONT of the server and its children),
`kill9` then `start` (Redis without persistence comes back empty; PostgreSQL and
etcd come back on their data), and `lose_data` (Redis FLUSHALL, PostgreSQL
TRUNCATE of the lease table, etcd: kill -9, data directory wiped, started fresh).

A PostgreSQL primary with a physical standby and a `failover` fault (promote the
standby while the old primary is paused or partitioned) is the next store here:
see `PostgresPair` below and docs/faults.md, "Follow-ups".
"""

import os
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "env"))

import testenv  # noqa: E402
from netns import STORE_IP, SUBNET, exec_prefix  # noqa: E402
from testenv import EnvError, make_certs  # noqa: E402, F401 (run.py's)


def retry(call, what, timeout=15):
    """A harness command on a store that may still be starting after a heal:
    `call()` is true once it is done."""
    end = time.monotonic() + timeout
    last = None
    while time.monotonic() < end:
        try:
            if call():
                return
        except (EnvError, subprocess.TimeoutExpired) as e:
            last = e
        time.sleep(0.1)
    raise RuntimeError(f"{what} failed for {timeout} s: {last}")


class Store:
    """What the suite adds to a testenv server (a mixin before it)."""

    kind = ""
    start_timeout = 30

    def __init__(self, ns, tls, namespace, run):
        self.ns, self.tls, self.namespace, self.run = ns, tls, namespace, run
        self.name = self.kind + ("-tls" if tls else "")

    def spawn_again(self):
        """Starts the server without waiting (a heal: the generators retry)."""
        self.spawn()

    def setup(self):
        pass

    def resume(self):
        self.pause(False)

    def stop(self):
        self.kill9()

    def with_ns(self, url):
        sep = "&" if "?" in url else "?"
        return f"{url}{sep}namespace={self.namespace}"

    def client_tls(self):
        """A TLS URL's query: the run's CA and the client certificate and key."""
        c = self.certs
        return f"ca={c}/ca.pem&cert={c}/client.pem&key={c}/client.key"


class Redis(Store, testenv.Redis):
    kind = "redis"
    # Redis keeps nothing on disk here: a restart is a data loss too.
    loses_data_on_restart = True
    loss_how = "FLUSHALL"

    def __init__(self, ns, work, certs, tls, namespace, run):
        Store.__init__(self, ns, tls, namespace, run)
        # No password: protected mode would refuse every address but 127.0.0.1.
        testenv.Redis.__init__(
            self,
            work,
            self.name,
            certs=certs if tls else None,
            host=STORE_IP,
            port=6379,
            tls_port=6380,
            prefix=exec_prefix(ns),
            extra=["--protected-mode", "no"],
        )

    @property
    def gen_port(self):
        return 16380 if self.tls else 16379

    @property
    def upstream_port(self):
        return self.tls_port if self.tls else self.port

    def gen_url(self):
        if self.tls:
            return self.with_ns(f"rediss://{STORE_IP}:{self.gen_port}/0?{self.client_tls()}")
        return self.with_ns(f"redis://{STORE_IP}:{self.gen_port}/0")

    def poller_args(self):
        return ["--kind", "redis", "--host", STORE_IP, "--port", str(self.port)]

    def lose_data(self):
        retry(lambda: "OK" in self.cli("FLUSHALL", timeout=2), "FLUSHALL")


class Postgres(Store, testenv.Postgres):
    kind = "postgres"
    gen_port = 15432
    upstream_port = 5432
    loses_data_on_restart = False
    loss_how = "TRUNCATE flakeid_worker_node"

    def __init__(self, ns, work, certs, tls, namespace, run):
        Store.__init__(self, ns, tls, namespace, run)
        # A bare `postgres -D`, so that the nemesis can kill -9 it and start it
        # again without waiting. (After a kill -9 the old backends may hold the
        # shared memory a moment: the server then exits at once, and the harness
        # starts it again.)
        testenv.Postgres.__init__(
            self,
            work,
            self.name,
            certs=certs if tls else None,
            max_connections=100,
            host=STORE_IP,
            port=5432,
            prefix=exec_prefix(ns, user="postgres" if testenv.IS_ROOT else None),
        )

    def hba(self):
        # Plain: password over TCP. TLS: the same, but only over TLS (hostssl).
        return [f"{'hostssl' if self.tls else 'host'} all all {SUBNET} scram-sha-256"]

    def gen_url(self):
        base = f"postgres://postgres:secret@{STORE_IP}:{self.gen_port}/postgres"
        if self.tls:
            return self.with_ns(f"{base}?sslmode=verify-full&sslrootcert={self.certs}/ca.pem")
        return self.with_ns(f"{base}?sslmode=disable")

    def poller_args(self):
        return ["--kind", "postgres", "--socket", self.dir, "--port", str(self.port)]

    def lose_data(self):
        def truncate():
            try:
                self.psql("TRUNCATE flakeid_worker_node", timeout=2)
            except EnvError as e:
                if "does not exist" not in str(e):
                    raise
            return True

        retry(truncate, "TRUNCATE")


class PostgresPair(Postgres):
    """Hook for the follow-up: a primary and a physical standby (pg_basebackup -R),
    the generators' URL naming both (`host=a,b` / `target_session_attrs=read-write`
    once the lease store supports it), and a `failover` fault: pause or partition
    the primary, `pg_ctl promote` the standby. Not built yet: the PostgreSQL
    safety work it depends on has not landed (see docs/faults.md)."""

    def start(self):
        raise NotImplementedError(
            "PostgreSQL primary/standby failover: follow-up, see docs/faults.md"
        )


class Etcd(Store, testenv.Etcd):
    kind = "etcd"
    gen_port = 12379
    upstream_port = 2379
    loses_data_on_restart = False
    loss_how = "kill -9, data directory wiped, started fresh"

    def __init__(self, ns, work, certs, tls, namespace, run):
        Store.__init__(self, ns, tls, namespace, run)
        # On tmpfs (etcd fsyncs every write), named for the run: netns.sweep_stale
        # removes it if this run is killed.
        shm = "/dev/shm" if os.path.isdir("/dev/shm") else work
        testenv.Etcd.__init__(
            self,
            work,
            self.name,
            certs=certs if tls else None,
            host=STORE_IP,
            port=2379,
            peer_port=2380,
            prefix=exec_prefix(ns),
            data=os.path.join(shm, f"fz{run}-{self.name}-etcd"),
        )

    def gen_url(self):
        if self.tls:
            return self.with_ns(f"etcds://{STORE_IP}:{self.gen_port}/?{self.client_tls()}")
        return self.with_ns(f"etcd://{STORE_IP}:{self.gen_port}/")

    def poller_args(self):
        a = ["--kind", "etcd", "--host", STORE_IP, "--port", str(self.port)]
        if self.tls:
            c = self.certs
            a += ["--ca", f"{c}/ca.pem", "--cert", f"{c}/client.pem", "--key", f"{c}/client.key"]
        return a

    def lose_data(self):
        """kill -9, wipe the data directory; the caller starts it again (fresh)."""
        self.remove()

    def stop(self):
        self.remove()


STORES = {
    "redis": (Redis, False),
    "redis-tls": (Redis, True),
    "postgres": (Postgres, False),
    "postgres-tls": (Postgres, True),
    "etcd": (Etcd, False),
    "etcd-tls": (Etcd, True),
}
