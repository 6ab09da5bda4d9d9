"""The lease stores, really started, in the store's namespace: Redis, PostgreSQL 15
and etcd, each plain or TLS, with the faults the nemesis applies to them.

The recipes are tests/env/testenv.py's (the one test environment), changed where a
store in its own namespace needs it: servers bind the store's address
(127.77.0.1), certificates name that address, and each process is started through
netns.exec_prefix (killed with the harness). A store serves the generators
through the delay proxy (proxy.py) on `gen_port`; the poller and the harness's own
commands go straight to the server (its Unix socket, or its port inside the
namespace).

Faults: `pause`/`resume` (SIGSTOP/SIGCONT of the server and its children),
`kill9` then `start` (Redis without persistence comes back empty; PostgreSQL and
etcd come back on their data), and `lose_data` (Redis FLUSHALL, PostgreSQL
TRUNCATE of the lease table, etcd: kill -9, data directory wiped, started fresh).

A PostgreSQL primary with a physical standby and a `failover` fault (promote the
standby while the old primary is paused or partitioned) is the next store here:
see `PostgresPair` below and docs/faults.md, "Follow-ups".
"""

import os
import shutil
import signal
import subprocess
import time

from netns import STORE_IP, exec_prefix

PGBIN = os.environ.get("FLAKEID_PGBIN", "/usr/lib/postgresql/15/bin")
IS_ROOT = os.geteuid() == 0


def make_certs(d, ip):
    """A per-run CA, a server certificate for `ip`, a client certificate."""
    os.makedirs(d, exist_ok=True)
    ec = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"]

    def ssl(*args):
        subprocess.run(["openssl", *args], cwd=d, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)

    ssl("req", "-x509", *ec, "-keyout", "ca.key", "-out", "ca.pem", "-days", "2", "-subj", "/CN=flakeid faults CA",
        "-addext", "basicConstraints=critical,CA:TRUE", "-addext", "keyUsage=critical,keyCertSign,cRLSign")
    for name, cn, ext in (("server", ip, f"subjectAltName=IP:{ip}"),
                          ("client", "flakeid_cert", "extendedKeyUsage=clientAuth")):
        ssl("req", *ec, "-keyout", f"{name}.key", "-out", f"{name}.csr", "-subj", f"/CN={cn}")
        with open(os.path.join(d, f"{name}.ext"), "w") as f:
            f.write(f"{ext}\nbasicConstraints=CA:FALSE\n")
        ssl("x509", "-req", "-in", f"{name}.csr", "-CA", "ca.pem", "-CAkey", "ca.key", "-CAcreateserial",
            "-days", "2", "-out", f"{name}.pem", "-extfile", f"{name}.ext")
    for f in os.listdir(d):
        os.chmod(os.path.join(d, f), 0o644)
    return d


def children(pid):
    out = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat") as f:
                    if int(f.read().rsplit(")", 1)[1].split()[1]) == pid:
                        out.append(int(entry))
            except (OSError, IndexError, ValueError):
                pass
    return out


def signal_tree(pid, sig):
    for p in [pid, *children(pid)]:
        try:
            os.kill(p, sig)
        except ProcessLookupError:
            pass


def wait_for(pred, timeout, what, log=None):
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if pred():
            return
        time.sleep(0.05)
    tail = ""
    if log and os.path.exists(log):
        with open(log, errors="replace") as f:
            tail = "\n" + "".join(f.readlines()[-15:])
    raise RuntimeError(f"{what} did not come up within {timeout} s{tail}")


def retry(call, ok, what, timeout=15):
    """A harness command on a store that may still be starting after a heal."""
    end = time.monotonic() + timeout
    last = None
    while time.monotonic() < end:
        try:
            last = call()
            if ok(last):
                return last
        except subprocess.TimeoutExpired as e:
            last = e
        time.sleep(0.1)
    raise RuntimeError(f"{what} failed for {timeout} s: {last}")


class Store:
    kind = ""
    proc = None

    def __init__(self, ns, work, certs, tls, namespace, run):
        self.ns, self.work, self.certs, self.tls, self.namespace, self.run = ns, work, certs, tls, namespace, run
        self.dir = os.path.join(work, self.name)
        os.makedirs(self.dir, exist_ok=True)
        os.chmod(self.dir, 0o755)

    @property
    def name(self):
        return self.kind + ("-tls" if self.tls else "")

    @property
    def pid(self):
        return self.proc.pid if self.proc else None

    def spawn(self, argv, user=None, log="log"):
        out = open(os.path.join(self.dir, log), "a")
        self.proc = subprocess.Popen(exec_prefix(self.ns, user=user) + argv, stdout=out, stderr=out,
                                     start_new_session=True)
        out.close()

    def alive(self):
        return self.proc is not None and self.proc.poll() is None

    def start(self):
        """Starts the server and waits until it answers."""
        self.spawn_again()
        wait_for(lambda: not self.alive() or self.ready(), 30, self.name, os.path.join(self.dir, "log"))
        if not self.alive():
            raise RuntimeError(f"{self.name} exited at start: see {self.dir}/log")

    def spawn_again(self):
        """Starts the server without waiting (a heal: the generators retry)."""
        self.spawn(self.command(), user=self.user)

    user = None

    def pause(self):
        signal_tree(self.pid, signal.SIGSTOP)

    def resume(self):
        signal_tree(self.pid, signal.SIGCONT)

    def kill9(self):
        if self.alive():
            signal_tree(self.pid, signal.SIGCONT)
            signal_tree(self.pid, signal.SIGKILL)
            self.proc.wait()

    def stop(self):
        self.kill9()

    def with_ns(self, url):
        sep = "&" if "?" in url else "?"
        return f"{url}{sep}namespace={self.namespace}"


class Redis(Store):
    kind = "redis"
    port, tls_port = 6379, 6380

    @property
    def gen_port(self):
        return 16380 if self.tls else 16379

    @property
    def upstream_port(self):
        return self.tls_port if self.tls else self.port

    def sock(self):
        return os.path.join(self.dir, "redis.sock")

    def cli(self, *args, timeout=10):
        return subprocess.run(["redis-cli", "-s", self.sock(), *args], capture_output=True, text=True,
                              timeout=timeout)

    def command(self):
        # No password: protected mode would refuse every address but loopback's.
        cmd = ["redis-server", "--bind", STORE_IP, "--port", str(self.port), "--protected-mode", "no",
               "--save", "", "--appendonly", "no",
               "--dir", self.dir, "--unixsocket", self.sock(), "--unixsocketperm", "700",
               "--logfile", os.path.join(self.dir, "log")]
        if self.tls:
            c = self.certs
            cmd += ["--tls-port", str(self.tls_port), "--tls-cert-file", f"{c}/server.pem",
                    "--tls-key-file", f"{c}/server.key", "--tls-ca-cert-file", f"{c}/ca.pem",
                    "--tls-auth-clients", "optional"]
        return cmd

    def ready(self):
        # This process answers on the socket (not merely something that accepts).
        try:
            return f"process_id:{self.pid}" in self.cli("INFO", "server", timeout=2).stdout.split()
        except subprocess.TimeoutExpired:
            return False

    def gen_url(self):
        if self.tls:
            c = self.certs
            return self.with_ns(f"rediss://{STORE_IP}:{self.gen_port}/0?ca={c}/ca.pem&cert={c}/client.pem"
                                f"&key={c}/client.key")
        return self.with_ns(f"redis://{STORE_IP}:{self.gen_port}/0")

    def poller_args(self):
        return ["--kind", "redis", "--host", STORE_IP, "--port", str(self.port)]

    # Redis keeps nothing on disk here: a restart is a data loss too.
    loses_data_on_restart = True
    loss_how = "FLUSHALL"

    def lose_data(self):
        retry(lambda: self.cli("FLUSHALL", timeout=2), lambda r: r.returncode == 0 and "OK" in r.stdout, "FLUSHALL")


class Postgres(Store):
    kind = "postgres"
    port = 5432
    gen_port = 15432
    upstream_port = 5432
    loses_data_on_restart = False

    def __init__(self, *a):
        super().__init__(*a)
        self.data = os.path.join(self.dir, "data")
        if IS_ROOT:
            shutil.chown(self.dir, "postgres", "postgres")

    def init(self):
        pw = os.path.join(self.dir, "pw")
        with open(pw, "w") as f:
            f.write("secret\n")
        if IS_ROOT:
            shutil.chown(pw, "postgres", "postgres")
        as_pg = ["runuser", "-u", "postgres", "--"] if IS_ROOT else []
        subprocess.run(as_pg + [f"{PGBIN}/initdb", "-D", self.data, "-U", "postgres", f"--pwfile={pw}", "-E", "UTF8",
                                "--no-sync", "--auth-local=trust", "--auth-host=scram-sha-256"],
                       check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        # Plain: password over TCP. TLS: the same, but only over TLS (hostssl).
        host = "hostssl" if self.tls else "host"
        with open(os.path.join(self.data, "pg_hba.conf"), "w") as f:
            f.write(f"local all all trust\n{host} all all 127.77.0.0/24 scram-sha-256\n")
        conf = [f"listen_addresses = '{STORE_IP}'", f"port = {self.port}", f"unix_socket_directories = '{self.dir}'",
                "fsync = off", "max_connections = 100"]
        if self.tls:
            for f in ("server.pem", "server.key", "ca.pem"):
                shutil.copy(os.path.join(self.certs, f), os.path.join(self.dir, f))
                if IS_ROOT:
                    shutil.chown(os.path.join(self.dir, f), "postgres", "postgres")
            os.chmod(os.path.join(self.dir, "server.key"), 0o600)
            conf += ["ssl = on", f"ssl_cert_file = '{self.dir}/server.pem'",
                     f"ssl_key_file = '{self.dir}/server.key'", f"ssl_ca_file = '{self.dir}/ca.pem'"]
        with open(os.path.join(self.data, "postgresql.conf"), "a") as f:
            f.write("\n".join(conf) + "\n")

    def psql(self, sql, timeout=10):
        as_pg = ["runuser", "-u", "postgres", "--"] if IS_ROOT else []
        return subprocess.run(as_pg + [f"{PGBIN}/psql", "-h", self.dir, "-p", str(self.port), "-U", "postgres", "-X",
                                       "-q", "-At", "-c", sql], capture_output=True, text=True, timeout=timeout)

    user = "postgres" if IS_ROOT else None
    loss_how = "TRUNCATE flakeid_worker_node"

    def command(self):
        # (After a kill -9 the old backends may hold the shared memory a moment: the
        # server then exits at once, and the harness starts it again.)
        return [f"{PGBIN}/postgres", "-D", self.data]

    def start(self):
        if not os.path.exists(self.data):
            self.init()
        super().start()

    def ready(self):
        try:
            return self.psql("SELECT 1", timeout=5).stdout.strip() == "1"
        except subprocess.TimeoutExpired:
            return False

    def gen_url(self):
        base = f"postgres://postgres:secret@{STORE_IP}:{self.gen_port}/postgres"
        if self.tls:
            return self.with_ns(f"{base}?sslmode=verify-full&sslrootcert={self.certs}/ca.pem")
        return self.with_ns(f"{base}?sslmode=disable")

    def poller_args(self):
        return ["--kind", "postgres", "--socket", self.dir, "--port", str(self.port)]

    def lose_data(self):
        retry(lambda: self.psql("TRUNCATE flakeid_worker_node", timeout=2),
              lambda r: r.returncode == 0 or "does not exist" in r.stderr, "TRUNCATE")

    def stop(self):
        self.kill9()


class PostgresPair(Postgres):
    """Hook for the follow-up: a primary and a physical standby (pg_basebackup -R),
    the generators' URL naming both (`host=a,b` / `target_session_attrs=read-write`
    once the lease store supports it), and a `failover` fault: pause or partition
    the primary, `pg_ctl promote` the standby. Not built yet: the PostgreSQL
    safety work it depends on has not landed (see docs/faults.md)."""

    def start(self):
        raise NotImplementedError("PostgreSQL primary/standby failover: follow-up, see docs/faults.md")


class Etcd(Store):
    kind = "etcd"
    port = 2379
    gen_port = 12379
    upstream_port = 2379
    loses_data_on_restart = False

    def __init__(self, *a):
        super().__init__(*a)
        # On tmpfs (etcd fsyncs every write), named for the run: netns.sweep_stale
        # removes it if this run is killed.
        shm = "/dev/shm" if os.path.isdir("/dev/shm") else self.dir
        self.data = os.path.join(shm, f"fz{self.run}-{self.name}-etcd")

    def scheme(self):
        return "https" if self.tls else "http"

    def ctl(self, *args):
        ep = ["--endpoints", f"{self.scheme()}://{STORE_IP}:{self.port}"]
        if self.tls:
            c = self.certs
            ep += ["--cacert", f"{c}/ca.pem", "--cert", f"{c}/client.pem", "--key", f"{c}/client.key"]
        return subprocess.run(exec_prefix(self.ns) + ["etcdctl", *ep, "--dial-timeout", "1s",
                                                      "--command-timeout", "2s", *args],
                              capture_output=True, text=True, env={**os.environ, "ETCDCTL_API": "3"}, timeout=10)

    loss_how = "kill -9, data directory wiped, started fresh"

    def command(self):
        url = f"{self.scheme()}://{STORE_IP}:{self.port}"
        cmd = ["etcd", "--name", "store", "--data-dir", self.data, "--listen-client-urls", url,
               "--advertise-client-urls", url, "--listen-peer-urls", "http://127.0.0.1:2380",
               "--initial-advertise-peer-urls", "http://127.0.0.1:2380",
               "--initial-cluster", "store=http://127.0.0.1:2380"]
        if self.tls:
            c = self.certs
            cmd += ["--cert-file", f"{c}/server.pem", "--key-file", f"{c}/server.key", "--client-cert-auth",
                    "--trusted-ca-file", f"{c}/ca.pem"]
        return cmd

    def ready(self):
        try:
            return self.ctl("endpoint", "health").returncode == 0
        except subprocess.TimeoutExpired:
            return False

    def gen_url(self):
        if self.tls:
            c = self.certs
            return self.with_ns(f"etcds://{STORE_IP}:{self.gen_port}/?ca={c}/ca.pem&cert={c}/client.pem"
                                f"&key={c}/client.key")
        return self.with_ns(f"etcd://{STORE_IP}:{self.gen_port}/")

    def poller_args(self):
        a = ["--kind", "etcd", "--host", STORE_IP, "--port", str(self.port)]
        if self.tls:
            c = self.certs
            a += ["--ca", f"{c}/ca.pem", "--cert", f"{c}/client.pem", "--key", f"{c}/client.key"]
        return a

    def lose_data(self):
        """kill -9, wipe the data directory; the caller starts it again (fresh)."""
        self.kill9()
        shutil.rmtree(self.data, ignore_errors=True)

    def stop(self):
        self.kill9()
        shutil.rmtree(self.data, ignore_errors=True)


STORES = {
    "redis": (Redis, False), "redis-tls": (Redis, True),
    "postgres": (Postgres, False), "postgres-tls": (Postgres, True),
    "etcd": (Etcd, False), "etcd-tls": (Etcd, True),
}
