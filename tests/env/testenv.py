#!/usr/bin/env python3
"""The one test environment: real Redis, PostgreSQL 15 and etcd servers and a
kube-apiserver for tests and benches, on 127.0.0.1, each on a free port below the
kernel's ephemeral range, with a per-run CA and TLS, stopped on exit or on a signal.

Every suite and bench that needs a server uses this file, either as a command:

    testenv.py run [--redis] [--postgres] [--etcd] [--kube] [--all] [--pg-conf LINE...] -- CMD...
        start the servers, run CMD with their URLs in FLAKEID_TEST_* variables,
        stop them (on CMD's exit, or on SIGINT/SIGTERM/SIGHUP), exit with CMD's status;
        each --pg-conf LINE is appended to PostgreSQL's postgresql.conf
    testenv.py up [--redis] [--postgres] [--etcd] [--kube] [--all] [--pg-conf LINE...]
        start them, print `export FLAKEID_TEST_...=...` lines, wait for a signal;
        --all is every server but --kube (a kube-apiserver on an etcd of its own,
        built by `make kube-apiserver`: KubeApiserver)
    testenv.py port [--not PORT...]
        print one free port below the ephemeral range (none of the ports named:
        a script that starts several servers passes those it already has)
    testenv.py kube-api METHOD PATH [JSON]
        one request as the admin of the kube-apiserver that `run --kube` started
        (its FLAKEID_TEST_KUBE_* variables), printing `STATUS JSON`
    testenv.py initdb DIR [--conf LINE...] [--trust]
        make a PostgreSQL cluster in DIR/data as `run` would (DIR its socket
        directory, no TLS), with --trust every login over TCP trusted, and print
        DIR/data, for a script that starts and stops it itself (pg_ctl -o "-p PORT")

or as a module (`sys.path.insert(0, "tests/env"); import testenv`), for a test that
kills, freezes or restarts its own server: `Redis(work).start()`, `Postgres(work,
name, conf=...)`, `Etcd(work, name)`, `KubeApiserver(work, etcd, certs)`, `make_certs(dir)`,
`free_port()`, `Stack`.
Each server also takes a bind `host`, fixed ports and an exec `prefix` for its
programs (its server and client tools), and `spawn()`s without waiting: the fault
suite (tests/faults/harness/stores.py) runs them in a network namespace that way.

Servers that cannot be installed (`make setup-lease` installs them) are reported
and their variables left unset; FLAKEID_LEASE_REQUIRE=0 then tells the tests to skip
them. Nothing here needs anything but Python 3's standard library, the servers and
openssl.
"""

import atexit
import fcntl
import os
import random
import shlex
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
PGBIN = os.environ.get("FLAKEID_PGBIN", "/usr/lib/postgresql/15/bin")
IS_ROOT = os.geteuid() == 0
_handed_out = set()


class EnvError(RuntimeError):
    """A server could not be started; the message says which and why."""


def ephemeral_low():
    try:
        with open("/proc/sys/net/ipv4/ip_local_port_range") as f:
            return int(f.read().split()[0])
    except (OSError, ValueError, IndexError):
        return 32768


# Ports this process reserved: flock(2)ed files in PORT_LOCKS, held until it exits.
PORT_LOCKS = os.path.join(tempfile.gettempdir(), "flakeid-ports")
_port_locks = []


def reserve_port(port):
    """Reserves `port` against every other process picking at the same time (test
    environments and test binaries run side by side in make test-lease): an
    exclusive flock on PORT_LOCKS/<port>, held until this process exits, so the
    kernel drops it even after a kill -9. Tests in other languages pick through
    `testenv.py control ports` (control()), so there is one picker."""
    os.makedirs(PORT_LOCKS, mode=0o1777, exist_ok=True)
    fd = os.open(os.path.join(PORT_LOCKS, str(port)), os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o666)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        os.close(fd)
        return False
    _port_locks.append(fd)
    return True


def free_port():
    """A TCP port on 127.0.0.1, free when checked, never handed out before by this
    process, reserved against other processes picking at the same time
    (`reserve_port`), and below the ephemeral range: no outgoing connection's source
    port and no bind(0) can take it before the server binds it (bind(0) picks inside
    that range, which is how the old pickers collided)."""
    low = ephemeral_low()
    first = 10000
    span = max(low - first, 1000)
    rng = random.Random(os.getpid() * 7919 + time.monotonic_ns())
    for _ in range(span):
        port = first + rng.randrange(span)
        if port in _handed_out:
            continue
        with socket.socket() as s:
            try:
                s.bind(("127.0.0.1", port))
            except OSError:
                continue
        if not reserve_port(port):
            continue
        _handed_out.add(port)
        return port
    raise EnvError(f"no free port in {first}..{first + span}")


def as_postgres(cmd):
    """PostgreSQL refuses to run as root: run its programs as the postgres user.
    setpriv execs (runuser forks), so a server started this way has the pid Popen
    returns."""
    return (
        ["setpriv", "--reuid", "postgres", "--regid", "postgres", "--init-groups", "--", *cmd]
        if IS_ROOT
        else cmd
    )


def chown_postgres(path):
    if IS_ROOT:
        shutil.chown(path, "postgres", "postgres")


def wait_for(pred, timeout, what, log=None):
    """Polls `pred` until it is true; EnvError after `timeout` s, with `log`'s tail."""
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if pred():
            return
        time.sleep(0.05)
    raise EnvError(f"{what} did not come up within {timeout} s{log_tail(log)}")


def log_tail(log, since=0, lines=20):
    if not log or not os.path.exists(log):
        return ""
    with open(log, errors="replace") as f:
        f.seek(since)
        return "\n" + "".join(f.readlines()[-lines:])


def children(pid):
    """The pids of the processes whose parent is `pid` (from /proc)."""
    out = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat") as f:
                    fields = f.read().rsplit(")", 1)[1].split()
                if int(fields[1]) == pid:
                    out.append(int(entry))
            except (OSError, IndexError, ValueError):
                pass
    return out


def signal_tree(pid, sig):
    """Signals `pid` and every process whose parent it is (a PostgreSQL postmaster
    and its backends), ignoring ones that are gone."""
    for p in [pid, *children(pid)]:
        try:
            os.kill(p, sig)
        except ProcessLookupError:
            pass


def kill_every(matches):
    """SIGKILLs (after a SIGCONT, for a stopped one) every process, with its
    children, whose argv (a list of bytes) `matches`: a server a test started again
    on the same files, whose pid the object that started the first never knew."""
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/cmdline", "rb") as f:
                args = f.read().split(b"\0")
        except OSError:
            continue
        if matches(args):
            signal_tree(int(entry), signal.SIGCONT)
            signal_tree(int(entry), signal.SIGKILL)


def make_certs(d, ip="127.0.0.1"):
    """A CA, another CA (for "wrong CA" tests), a server certificate for IP `ip`
    only (so `localhost` is a name mismatch), and a client certificate with CN
    flakeid_cert (the PostgreSQL certificate login's user)."""
    os.makedirs(d, exist_ok=True)
    ec = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"]

    def ssl(*args):
        subprocess.run(
            ["openssl", *args],
            cwd=d,
            check=True,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )

    for ca in ("ca", "other-ca"):
        ssl(
            "req",
            "-x509",
            *ec,
            "-keyout",
            f"{ca}.key",
            "-out",
            f"{ca}.pem",
            "-days",
            "2",
            "-subj",
            f"/CN=flakeid test {ca}",
            "-addext",
            "basicConstraints=critical,CA:TRUE",
            "-addext",
            "keyUsage=critical,keyCertSign,cRLSign",
        )

    def leaf(name, cn, ext):
        ssl("req", *ec, "-keyout", f"{name}.key", "-out", f"{name}.csr", "-subj", f"/CN={cn}")
        with open(os.path.join(d, f"{name}.ext"), "w") as f:
            f.write(f"{ext}\nbasicConstraints=CA:FALSE\n")
        ssl(
            "x509",
            "-req",
            "-in",
            f"{name}.csr",
            "-CA",
            "ca.pem",
            "-CAkey",
            "ca.key",
            "-CAcreateserial",
            "-days",
            "2",
            "-out",
            f"{name}.pem",
            "-extfile",
            f"{name}.ext",
        )

    leaf("server", ip, f"subjectAltName=IP:{ip}")
    leaf("client", "flakeid_cert", "extendedKeyUsage=clientAuth")
    for f in os.listdir(d):
        os.chmod(os.path.join(d, f), 0o644)
    return d


class Server:
    """A server process this environment starts: `command()` run through `prefix`
    (an argv that must exec it, so that `pid` is the server's: e.g. `nsenter ...
    setpriv ... --`), bound to `host`, on the ports given or free ones, its output
    appended to `log`. `start()` waits until it answers (and, on free ports, tries
    others when it lost a race for one), then runs `setup()` (the logins the lease
    tests use); `spawn()` starts it without waiting. stop() is safe to call twice."""

    pid = None
    proc = None
    start_timeout = 20
    port_names = ("port",)

    def __init__(self, dir, host, prefix):
        self.dir, self.host, self.prefix = dir, host, list(prefix)
        os.makedirs(dir, exist_ok=True)
        self.log = os.path.join(dir, "log")
        self.given_ports = {n for n in self.port_names if getattr(self, n, None) is not None}

    def command(self):
        raise NotImplementedError

    def run_client(self, argv, what, check, timeout, env=None):
        """Runs the client tool `argv` through `prefix`, its output captured; with
        `check`, a failure is an EnvError naming `what` with the tool's stderr."""
        r = subprocess.run(
            [*self.prefix, *argv], capture_output=True, text=True, timeout=timeout, env=env
        )
        if check and r.returncode != 0:
            raise EnvError(f"{what}: {r.stderr.strip()}")
        return r

    def server_env(self):
        """The server process's environment: this process's (a subclass may add to
        it; `env()` is what a server exports to the tests)."""
        return dict(os.environ)

    def ready(self):
        raise NotImplementedError

    def setup(self):
        pass

    def spawn(self):
        with open(self.log, "a") as out:
            self.proc = subprocess.Popen(
                [*self.prefix, *self.command()],
                stdout=out,
                stderr=out,
                start_new_session=True,
                env=self.server_env(),
            )
        self.pid = self.proc.pid

    def alive(self):
        return self.proc is not None and self.proc.poll() is None

    def start(self):
        what = type(self).__name__
        for _ in range(5):
            for n in self.port_names:
                if getattr(self, n) is None:
                    setattr(self, n, free_port())
            since = os.path.getsize(self.log) if os.path.exists(self.log) else 0
            self.spawn()
            try:
                wait_for(
                    lambda: not self.alive() or self.ready(),
                    self.start_timeout,
                    f"{what} on {self.host}:{self.port}",
                    self.log,
                )
            except EnvError:
                self.stop()
                raise
            if self.alive():
                break
            said = log_tail(self.log, since)
            if (
                len(self.given_ports) == len(self.port_names)
                or "address already in use" not in said.lower()
            ):
                raise EnvError(f"{what} exited at start (see {self.log}):{said}")
            # Lost a race for a port (another process bound it since the check).
            for n in self.port_names:
                if n not in self.given_ports:
                    setattr(self, n, None)
        else:
            raise EnvError(f"{what} exited at start five times: see {self.log}")
        self.setup()
        return self

    def kill9(self):
        if self.alive():
            signal_tree(self.pid, signal.SIGCONT)
            signal_tree(self.pid, signal.SIGKILL)
            self.proc.wait()

    def stop(self):
        self.kill9()

    def pause(self, on=True):
        """SIGSTOP (or SIGCONT) the server and its child processes."""
        if self.pid:
            signal_tree(self.pid, signal.SIGSTOP if on else signal.SIGCONT)


class Redis(Server):
    """A private redis-server, no persistence unless `persistent` (AOF, fsync
    always); with `certs`, also a TLS port (client certificates optional) and an ACL
    user `flakeid` / `s3cret`. `extra` arguments go last on its command line."""

    start_timeout = 10

    def __init__(
        self,
        work,
        name="redis",
        certs=None,
        persistent=False,
        extra=(),
        host="127.0.0.1",
        port=None,
        tls_port=None,
        prefix=(),
    ):
        self.certs, self.persistent, self.extra = certs, persistent, list(extra)
        self.port, self.tls_port = port, tls_port
        self.port_names = ("port", "tls_port") if certs else ("port",)
        super().__init__(os.path.join(work, name), host, prefix)

    def cli(self, *args, check=True, timeout=None):
        argv = ["redis-cli", "-h", self.host, "-p", str(self.port), *args]
        return self.run_client(argv, f"redis-cli {' '.join(args)}", check, timeout).stdout

    def command(self):
        cmd = [
            "redis-server",
            "--port",
            str(self.port),
            "--bind",
            self.host,
            "--save",
            "",
            "--dir",
            self.dir,
            "--logfile",
            self.log,
        ]
        cmd += (
            ["--appendonly", "yes", "--appendfsync", "always"]
            if self.persistent
            else ["--appendonly", "no"]
        )
        if self.certs:
            c = self.certs
            cmd += [
                "--tls-port",
                str(self.tls_port),
                "--tls-cert-file",
                f"{c}/server.pem",
                "--tls-key-file",
                f"{c}/server.key",
                "--tls-ca-cert-file",
                f"{c}/ca.pem",
                "--tls-auth-clients",
                "optional",
            ]
        return cmd + self.extra

    def ready(self):
        # The server on the port says it is this process (INFO works while it
        # loads), not merely something that accepts there.
        try:
            return (
                f"process_id:{self.pid}"
                in self.cli("INFO", "server", check=False, timeout=2).split()
            )
        except subprocess.TimeoutExpired:
            return False

    def setup(self):
        if self.certs:
            self.cli("ACL", "SETUSER", "flakeid", "on", ">s3cret", "~*", "&*", "+@all")

    def restart(self, empty=False):
        """kill -9, then start again on the same ports (empty unless persistent)."""
        self.kill9()
        if empty:
            for f in os.listdir(self.dir):
                if f.startswith("appendonly") or f.endswith(".rdb"):
                    p = os.path.join(self.dir, f)
                    shutil.rmtree(p) if os.path.isdir(p) else os.remove(p)
        return self.start()

    @property
    def url(self):
        return f"redis://{self.host}:{self.port}/0"

    @property
    def tls_url(self):
        c = self.certs
        return (
            f"rediss://flakeid:s3cret@{self.host}:{self.tls_port}/0"
            f"?ca={c}/ca.pem&cert={c}/client.pem&key={c}/client.key"
        )

    def env(self):
        e = {"FLAKEID_TEST_REDIS_URL": self.url, "FLAKEID_TEST_REDIS_PID": str(self.pid)}
        if self.certs:
            e["FLAKEID_TEST_REDISS_URL"] = self.tls_url
        return e


class Postgres(Server):
    """A private PostgreSQL 15 cluster (initdb'd as the postgres user), TCP on
    `host` only, fsync off, the server a bare `postgres -D` (`pid` is the
    postmaster). Logins: `postgres` / `secret` (SCRAM), a trust role
    `flakeid_trust`; with `certs`, TLS on (ssl=on) and roles for every login method
    the lease tests try (md5, password, certificate): `hba()` and `setup()`; with
    `trust`, every login over TCP is trusted, replication too. `conf` lines are
    appended to postgresql.conf (e.g. shared_preload_libraries). `prefix`
    runs every program of the cluster (server, initdb, psql, pg_ctl) and must run it
    as the postgres user when root (default: setpriv, see as_postgres). The server's
    host guard (a flakeid extension it loads) is DIR/host-guard, unless this process
    has FLAKEID_HOST_GUARD=off: never the machine's /tmp/flakeid-host-guard, which a
    server running as postgres would own and every other user's build refuse."""

    start_timeout = 60

    def __init__(
        self,
        work,
        name="pg",
        certs=None,
        conf=(),
        max_connections=200,
        host="127.0.0.1",
        port=None,
        prefix=None,
        trust=False,
    ):
        self.certs, self.conf, self.max_connections, self.trust = (
            certs,
            list(conf),
            max_connections,
            trust,
        )
        self.port = port
        super().__init__(
            os.path.join(work, name), host, as_postgres([]) if prefix is None else prefix
        )
        self.data = os.path.join(self.dir, "data")
        self.started = False

    def psql(self, sql, db="postgres", check=True, timeout=None):
        argv = [f"{PGBIN}/psql", "-h", self.dir, "-p", str(self.port), "-U", "postgres", "-d", db]
        argv += ["-X", "-q", "-At", "-v", "ON_ERROR_STOP=1", "-c", sql]
        return self.run_client(argv, "psql", check, timeout).stdout

    def hba(self):
        """pg_hba.conf's lines after `local all all trust`."""
        net = f"{self.host}/32"
        if self.trust:
            return [f"host all all {net} trust", f"host replication all {net} trust"]
        hba = [f"host all flakeid_trust {net} trust"]
        if self.certs:
            hba += [
                f"host all flakeid_md5 {net} md5",
                f"host all flakeid_password {net} password",
                f"hostssl all flakeid_cert {net} cert",
            ]
        return hba + [f"host all all {net} scram-sha-256"]

    def init(self):
        os.chmod(self.dir, 0o755)
        chown_postgres(self.dir)
        pw = os.path.join(self.dir, "pw")
        with open(pw, "w") as f:
            f.write("secret\n")
        chown_postgres(pw)
        subprocess.run(
            [
                *self.prefix,
                f"{PGBIN}/initdb",
                "-D",
                self.data,
                "-U",
                "postgres",
                f"--pwfile={pw}",
                "-E",
                "UTF8",
                "--no-sync",
                "--auth-local=trust",
                "--auth-host=scram-sha-256",
            ],
            check=True,
            stdout=subprocess.DEVNULL,
        )
        conf = [
            f"listen_addresses = '{self.host}'",
            f"unix_socket_directories = '{self.dir}'",
            "fsync = off",
            f"max_connections = {self.max_connections}",
        ]
        if self.certs:
            for f in ("server.pem", "server.key", "ca.pem"):
                shutil.copy(os.path.join(self.certs, f), os.path.join(self.dir, f))
                chown_postgres(os.path.join(self.dir, f))
            os.chmod(os.path.join(self.dir, "server.key"), 0o600)
            conf += [
                "ssl = on",
                f"ssl_cert_file = '{self.dir}/server.pem'",
                f"ssl_key_file = '{self.dir}/server.key'",
                f"ssl_ca_file = '{self.dir}/ca.pem'",
            ]
        with open(os.path.join(self.data, "pg_hba.conf"), "w") as f:
            f.write("\n".join(["local all all trust", *self.hba()]) + "\n")
        with open(os.path.join(self.data, "postgresql.conf"), "a") as f:
            f.write("\n".join(conf + self.conf) + "\n")
        return self

    def command(self):
        return [f"{PGBIN}/postgres", "-D", self.data, "-p", str(self.port)]

    def server_env(self):
        env = super().server_env()
        if env.get("FLAKEID_HOST_GUARD") != "off":
            guard = os.path.join(self.dir, "host-guard")
            os.makedirs(guard, exist_ok=True)
            chown_postgres(guard)
            env["FLAKEID_HOST_GUARD"] = guard
        return env

    def ready(self):
        try:
            return self.psql("SELECT 1", check=False, timeout=5).strip() == "1"
        except subprocess.TimeoutExpired:
            return False

    def start(self):
        if not os.path.exists(self.data):
            self.init()
        super().start()
        self.started = True
        return self

    def setup(self):
        if not getattr(self, "_roles", False):
            roles = ["CREATE ROLE flakeid_trust LOGIN SUPERUSER"]
            if self.certs:
                roles += [
                    "CREATE ROLE flakeid_cert LOGIN SUPERUSER",
                    "CREATE ROLE flakeid_password LOGIN SUPERUSER PASSWORD 'plain-pw'",
                    "SET password_encryption = 'md5'",
                    "CREATE ROLE flakeid_md5 LOGIN SUPERUSER PASSWORD 'md5-pw'",
                ]
            for sql in roles:
                self.psql(sql)
            self._roles = True

    def stop(self):
        # pg_ctl, not our pid: a test may have restarted the cluster (another postmaster).
        if self.started and os.path.exists(os.path.join(self.data, "postmaster.pid")):
            self.pause(False)  # a frozen server cannot stop
            subprocess.run(
                [*self.prefix, f"{PGBIN}/pg_ctl", "-D", self.data, "-m", "immediate", "-w", "stop"],
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
            )
        self.kill9()
        self.started = False

    @property
    def url(self):
        return f"postgres://postgres:secret@{self.host}:{self.port}/postgres"

    def env(self):
        e = {
            "FLAKEID_TEST_POSTGRES_URL": self.url,
            "FLAKEID_TEST_POSTGRES_TRUST_URL": f"postgres://flakeid_trust@{self.host}:{self.port}/postgres",
            "FLAKEID_TEST_POSTGRES_PORT": str(self.port),
            "FLAKEID_TEST_PG_DATA": self.data,
            "FLAKEID_TEST_PG_PID": str(self.pid),
        }
        if self.certs:
            e["FLAKEID_TEST_POSTGRES_TLS_URL"] = (
                f"{self.url}?sslmode=verify-full&sslrootcert={self.certs}/ca.pem"
                "&channel_binding=require"
            )
        return e


class Etcd(Server):
    """A private single-member etcd (Debian's 3.4), its peer port on 127.0.0.1.
    Plain: authentication on (user root / etcd-pw, `setup()`). With `certs`: TLS,
    client certificates required. Its data directory (`data`, or a new one) is on
    tmpfs where there is one (etcd fsyncs every write: on a slow disk 32 holders
    miss their 2 s TTLs)."""

    port_names = ("port", "peer_port")

    def __init__(
        self,
        work,
        name,
        certs=None,
        host="127.0.0.1",
        port=None,
        peer_port=None,
        prefix=(),
        data=None,
        cluster=None,
        auth=True,
    ):
        self.name, self.certs, self.cluster, self.auth = name, certs, cluster, auth
        self.port, self.peer_port = port, peer_port
        super().__init__(os.path.join(work, f"etcd-{name}"), host, prefix)
        if data is None:
            base = "/dev/shm" if os.path.isdir("/dev/shm") else self.dir
            data = tempfile.mkdtemp(prefix=f"flakeid-etcd-{name}.", dir=base)
        self.data = data

    @property
    def client_url(self):
        return f"{'https' if self.certs else 'http'}://{self.host}:{self.port}"

    def ctl(self, *args, check=True, timeout=10):
        ep = ["--endpoints", self.client_url]
        if self.certs:
            c = self.certs
            ep += [
                "--cacert",
                f"{c}/ca.pem",
                "--cert",
                f"{c}/client.pem",
                "--key",
                f"{c}/client.key",
            ]
        argv = ["etcdctl", *ep, "--dial-timeout", "1s", "--command-timeout", "2s", *args]
        env = {**os.environ, "ETCDCTL_API": "3"}
        return self.run_client(argv, f"etcdctl {' '.join(args)}", check, timeout, env)

    def command(self):
        peer = f"http://127.0.0.1:{self.peer_port}"
        cmd = [
            "etcd",
            "--name",
            self.name,
            "--data-dir",
            self.data,
            "--listen-client-urls",
            self.client_url,
            "--advertise-client-urls",
            self.client_url,
            "--listen-peer-urls",
            peer,
            "--initial-advertise-peer-urls",
            peer,
            "--initial-cluster",
            self.cluster or f"{self.name}={peer}",
        ]
        if self.certs:
            c = self.certs
            # --trusted-ca-file alone makes etcd 3.4 demand client certificates:
            # with --client-cert-auth it is the intended mTLS setup.
            cmd += [
                "--cert-file",
                f"{c}/server.pem",
                "--key-file",
                f"{c}/server.key",
                "--client-cert-auth",
                "--trusted-ca-file",
                f"{c}/ca.pem",
            ]
        return cmd

    def ready(self):
        try:
            return self.ctl("endpoint", "health", check=False).returncode == 0
        except subprocess.TimeoutExpired:
            return False

    def setup(self):
        if self.auth and not self.certs and not getattr(self, "_auth", False):
            self.ctl("user", "add", "root:etcd-pw")
            self.ctl("auth", "enable")
            self._auth = True

    def remove(self):
        """Kills it and removes its data directory."""
        self.kill9()
        # A test may have restarted etcd on this data directory: every etcd serving it.
        data = self.data.encode()
        kill_every(lambda args: args[:1] and os.path.basename(args[0]) == b"etcd" and data in args)
        shutil.rmtree(self.data, ignore_errors=True)

    def env(self):
        if self.certs:
            c = self.certs
            return {
                "FLAKEID_TEST_ETCDS_URL": f"etcds://{self.host}:{self.port}/?ca={c}/ca.pem&cert={c}/client.pem"
                f"&key={c}/client.key",
                "FLAKEID_TEST_ETCDS_PID": str(self.pid),
                "FLAKEID_TEST_ETCDS_DIR": self.dir,
            }
        return {
            "FLAKEID_TEST_ETCD_URL": f"etcd://root:etcd-pw@{self.host}:{self.port}/",
            "FLAKEID_TEST_ETCD_PID": str(self.pid),
        }


# kube-apiserver: built from the Go module proxy's k8s.io/kubernetes by `make
# kube-apiserver` (mk/lease.mk) into a cache directory keyed by the version that
# tests/env/kube/go.mod requires.
KUBE_GO_MOD = os.path.join(os.path.dirname(os.path.abspath(__file__)), "kube", "go.mod")
KUBE_NAMESPACE = "flakeid-test"
RBAC_EXAMPLE = os.path.join(
    os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))),
    "examples",
    "kubernetes",
    "rbac.yaml",
)


def kube_version():
    with open(KUBE_GO_MOD) as f:
        for line in f:
            if line.startswith("require k8s.io/kubernetes "):
                return line.split()[2]
    raise EnvError(f"{KUBE_GO_MOD} requires no k8s.io/kubernetes")


def kube_request(server, ca, token, method, path, body=None, yaml=False, timeout=10):
    """(status, parsed JSON body) of one request to a kube-apiserver; `body` is
    sent as JSON, or as the YAML text it is with `yaml`."""
    import json
    import ssl
    import urllib.error
    import urllib.request

    ctx = ssl.create_default_context(cafile=ca)
    data = None
    headers = {"Authorization": f"Bearer {token}", "Accept": "application/json"}
    if body is not None:
        data = body.encode() if yaml else json.dumps(body).encode()
        headers["Content-Type"] = "application/yaml" if yaml else "application/json"
    req = urllib.request.Request(server + path, data=data, method=method, headers=headers)
    try:
        with urllib.request.urlopen(req, context=ctx, timeout=timeout) as r:
            status, raw = r.status, r.read()
    except urllib.error.HTTPError as e:
        status, raw = e.code, e.read()
    try:
        return status, json.loads(raw or b"null")
    except ValueError:
        return status, raw.decode(errors="replace")


def kube_api_command(method, path, body):
    """`testenv.py kube-api METHOD PATH [JSON]`: one request as the admin of the
    kube-apiserver named by FLAKEID_TEST_KUBE_* (a test's own changes under a
    holder: delete its Lease, update it); prints `STATUS JSON` on one line, status 0
    when the server does not answer."""
    import json

    with open(os.environ["FLAKEID_TEST_KUBE_ADMIN_TOKEN_FILE"]) as f:
        token = f.read().strip()
    try:
        status, got = kube_request(
            os.environ["FLAKEID_TEST_KUBE_SERVER"],
            os.environ["FLAKEID_TEST_KUBE_CA"],
            token,
            method,
            path,
            None if body is None else json.loads(body),
        )
    except OSError as err:  # not answering (yet): status 0
        status, got = 0, str(err)
    print(status, json.dumps(got))
    return 0


def kube_apiserver_binary():
    """FLAKEID_KUBE_APISERVER, or where `make kube-apiserver` caches it."""
    given = os.environ.get("FLAKEID_KUBE_APISERVER")
    if given:
        return given
    cache = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(cache, "flakeid", f"kube-apiserver-{kube_version()}", "kube-apiserver")


class KubeApiserver(Server):
    """A kube-apiserver on its own etcd (no authentication: the API server's etcd
    client takes none), TLS with the run's CA (`certs`), RBAC, and three identities:
    an admin (a static token, group system:masters) that sets up, and two service
    accounts of namespace flakeid-test with tokens from the TokenRequest API:
    `flakeid-pod`, bound by examples/kubernetes/rbac.yaml's Role and RoleBinding
    (applied as the YAML it is), and `flakeid-denied`, bound to nothing. No
    controller manager: Leases need none. `env()` names the URL, CA, token files and
    namespace (FLAKEID_TEST_KUBE_*)."""

    start_timeout = 90

    def __init__(self, work, etcd, certs, host="127.0.0.1", port=None, prefix=()):
        self.etcd, self.certs, self.port = etcd, certs, port
        super().__init__(os.path.join(work, "kube"), host, prefix)
        self.admin_token = os.urandom(16).hex()
        self.tokens = {}
        with open(self.file("admin.token"), "w") as f:
            f.write(self.admin_token)
        with open(self.file("tokens.csv"), "w") as f:
            f.write(f'{self.admin_token},flakeid-admin,flakeid-admin,"system:masters"\n')
        subprocess.run(
            [
                "openssl",
                "ecparam",
                "-name",
                "prime256v1",
                "-genkey",
                "-noout",
                "-out",
                self.file("sa.key"),
            ],
            check=True,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        subprocess.run(
            ["openssl", "ec", "-in", self.file("sa.key"), "-pubout", "-out", self.file("sa.pub")],
            check=True,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )

    def file(self, name):
        return os.path.join(self.dir, name)

    def stop(self):
        """Kills it, and any API server a test started again with its command line
        (another pid, which this object never knew: the restart tests)."""
        self.kill9()
        mine = f"--cert-dir={self.dir}".encode()
        kill_every(lambda args: mine in args)

    @property
    def server(self):
        return f"https://{self.host}:{self.port}"

    def command(self):
        c = self.certs
        return [
            kube_apiserver_binary(),
            f"--etcd-servers={self.etcd.client_url}",
            f"--bind-address={self.host}",
            f"--advertise-address={self.host}",
            f"--secure-port={self.port}",
            f"--tls-cert-file={c}/server.pem",
            f"--tls-private-key-file={c}/server.key",
            f"--cert-dir={self.dir}",
            f"--token-auth-file={self.file('tokens.csv')}",
            "--authorization-mode=RBAC",
            "--service-account-issuer=https://kubernetes.default.svc.cluster.local",
            f"--service-account-key-file={self.file('sa.pub')}",
            f"--service-account-signing-key-file={self.file('sa.key')}",
            "--service-cluster-ip-range=10.96.0.0/16",
            # One API server, no controllers: less work at start, nothing to balance.
            "--endpoint-reconciler-type=none",
            "--enable-priority-and-fairness=false",
            "--profiling=false",
            "--v=1",
        ]

    def api(self, method, path, body=None, token=None, yaml=False, timeout=10):
        """(status, parsed JSON body) of one request, as the admin by default."""
        return kube_request(
            self.server,
            f"{self.certs}/ca.pem",
            token or self.admin_token,
            method,
            path,
            body,
            yaml,
            timeout,
        )

    def ready(self):
        try:
            return self.api("GET", "/readyz", timeout=2)[0] == 200
        except OSError:
            return False

    def must(self, want, method, path, body=None, **kw):
        status, got = self.api(method, path, body, **kw)
        if status not in want:
            raise EnvError(f"kube-apiserver: {method} {path}: {status} {got}")
        return got

    def setup(self):
        if self.tokens:
            return  # a restart on the same etcd: everything is there
        ns = KUBE_NAMESPACE
        self.must((201, 409), "POST", "/api/v1/namespaces", {"metadata": {"name": ns}})
        for sa in ("flakeid-pod", "flakeid-denied"):
            self.must(
                (201, 409),
                "POST",
                f"/api/v1/namespaces/{ns}/serviceaccounts",
                {"metadata": {"name": sa}},
            )
        with open(RBAC_EXAMPLE) as f:
            manifest = (
                f.read().replace("my-namespace", ns).replace("my-service-account", "flakeid-pod")
            )
        for doc, kind in zip(manifest.split("\n---\n"), ("roles", "rolebindings")):
            self.must(
                (201,),
                "POST",
                f"/apis/rbac.authorization.k8s.io/v1/namespaces/{ns}/{kind}",
                doc,
                yaml=True,
            )
        for sa in ("flakeid-pod", "flakeid-denied"):
            got = self.must(
                (201,),
                "POST",
                f"/api/v1/namespaces/{ns}/serviceaccounts/{sa}/token",
                {
                    "apiVersion": "authentication.k8s.io/v1",
                    "kind": "TokenRequest",
                    "spec": {"expirationSeconds": 86400},
                },
            )
            path = self.file(f"{sa}.token")
            with open(path, "w") as f:
                f.write(got["status"]["token"])
            self.tokens[sa] = path

    def env(self):
        ca, pod = f"{self.certs}/ca.pem", self.tokens["flakeid-pod"]
        return {
            "FLAKEID_TEST_KUBE_URL": f"k8s://{self.host}:{self.port}/{KUBE_NAMESPACE}?token_file={pod}&ca={ca}",
            "FLAKEID_TEST_KUBE_SERVER": self.server,
            "FLAKEID_TEST_KUBE_CA": ca,
            "FLAKEID_TEST_KUBE_NAMESPACE": KUBE_NAMESPACE,
            "FLAKEID_TEST_KUBE_TOKEN_FILE": pod,
            "FLAKEID_TEST_KUBE_DENIED_TOKEN_FILE": self.tokens["flakeid-denied"],
            "FLAKEID_TEST_KUBE_ADMIN_TOKEN_FILE": self.file("admin.token"),
            "FLAKEID_TEST_KUBE_PID": str(self.pid),
            "FLAKEID_TEST_KUBE_DIR": self.dir,
        }


class Stack:
    """The servers of one run: a work directory, a CA, and each server asked for,
    plain and TLS. `env()` is every FLAKEID_TEST_* variable; `stop()` (also run at
    exit and on SIGINT/SIGTERM/SIGHUP) stops every server and removes the files."""

    def __init__(self, redis=False, postgres=False, etcd=False, pg_conf=(), kube=False):
        self.work = tempfile.mkdtemp(prefix="flakeid-testenv.")
        os.chmod(self.work, 0o755)
        self.servers = []
        self.skipped = []
        self.want = {"redis": redis, "postgres": postgres, "etcd": etcd, "kube": kube}
        self.certs = None
        self.pg_conf = list(pg_conf)
        atexit.register(self.stop)
        for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
            signal.signal(sig, self._on_signal)

    def _on_signal(self, sig, _frame):
        self.stop()
        sys.exit(128 + sig)

    def start(self):
        if any(self.want.values()):
            self.certs = make_certs(os.path.join(self.work, "certs"))
        if self.want["redis"]:
            self._add(
                "redis-server", lambda: Redis(self.work, certs=self.certs).start(), "redis-server"
            )
        if self.want["postgres"]:
            self._add(
                "PostgreSQL 15",
                lambda: Postgres(self.work, certs=self.certs, conf=self.pg_conf).start(),
                f"{PGBIN}/initdb",
            )
        if self.want["etcd"]:
            self._add("etcd", lambda: Etcd(self.work, "plain").start(), "etcd")
            self._add(
                "etcd (TLS)", lambda: Etcd(self.work, "tls", certs=self.certs).start(), "etcd"
            )
        if self.want["kube"]:

            def kube():
                etcd = Etcd(self.work, "kube", auth=False).start()
                # Stopped with the others, but the apiserver's own: its variables
                # would name it in place of the plain etcd the lease tests use.
                etcd.private = True
                self.servers.append(etcd)
                return KubeApiserver(self.work, etcd, self.certs).start()

            self._add("kube-apiserver", kube, kube_apiserver_binary(), "make kube-apiserver")
        return self

    def _add(self, what, start, binary, install="make setup-lease"):
        if shutil.which(binary) is None and not os.access(binary, os.X_OK):
            print(
                f"SKIP: {what} is not installed ({install}): its tests are skipped",
                file=sys.stderr,
            )
            self.skipped.append(what)
            return
        server = start()
        self.servers.append(server)
        print(f"testenv: {what} on 127.0.0.1:{server.port}", file=sys.stderr)

    def env(self):
        e = {"FLAKEID_LEASE_REQUIRE": "0" if self.skipped else "1"}
        if self.certs:
            e["FLAKEID_TEST_CERTS"] = self.certs
        for s in self.servers:
            if not getattr(s, "private", False):
                e.update(s.env())
        return e

    def stop(self):
        for s in reversed(self.servers):
            try:
                s.stop()
                if isinstance(s, Etcd):
                    s.remove()
            except Exception as err:  # keep stopping the others
                print(f"testenv: stopping {type(s).__name__}: {err}", file=sys.stderr)
        self.servers = []
        shutil.rmtree(self.work, ignore_errors=True)


def build_cli():
    """Builds the debug CLI with make's package selection (Makefile, RUST_TEST_PKGS: one
    build of the dependencies) and returns its path."""
    cargo = os.environ.get("CARGO", "cargo")
    pkgs = shlex.split(os.environ.get("FLAKEID_CARGO_PKGS") or "-p flakeid-cli")
    subprocess.run([cargo, "build", "-q", *pkgs], check=True, cwd=ROOT)
    target = os.environ.get("CARGO_TARGET_DIR") or os.path.join(ROOT, "target")
    return os.path.join(target, "debug", "flakeid")


def port_open(port, host="127.0.0.1"):
    with socket.socket() as s:
        s.settimeout(1)
        return s.connect_ex((host, port)) == 0


class EtcdPair:
    """Two etcd members of one cluster (no TLS, no authentication), for a test that
    takes one away (the other then has no quorum) and brings it back."""

    def __init__(self, work):
        self.members = [
            Etcd(work, n, port=free_port(), peer_port=free_port(), auth=False) for n in ("a", "b")
        ]
        cluster = ",".join(f"{m.name}=http://127.0.0.1:{m.peer_port}" for m in self.members)
        for m in self.members:
            m.cluster = cluster

    def start(self):
        # Neither member is healthy alone: start both, then wait for each.
        for m in self.members:
            m.spawn()
        for m in self.members:
            wait_for(
                lambda m=m: not m.alive() or m.ready(),
                m.start_timeout,
                f"etcd member {m.name}",
                m.log,
            )
            if not m.alive():
                raise EnvError(f"etcd member {m.name} exited at start:{log_tail(m.log)}")
        return self

    def start_member(self, i):
        """Starts member `i` again on its data directory; returns once its client port
        accepts (it may not have a leader yet)."""
        m = self.members[i]
        m.spawn()
        wait_for(
            lambda: not m.alive() or port_open(m.port),
            m.start_timeout,
            f"etcd member {m.name}",
            m.log,
        )
        if not m.alive():
            raise EnvError(f"etcd member {m.name} exited at start:{log_tail(m.log)}")

    def stop(self):
        for m in self.members:
            m.remove()


def control(kind, persistent=False):
    """`testenv.py control redis [--persistent] | etcd-pair | ports`: one server of
    this fixture (or its port picker) for a test in another language, driven over
    stdin and stdout, a line each way: the first reply says where it is, each
    command gets one reply, `ok key=value ...` or `error <why>`. The server stops
    (and its files go) when stdin closes: when the test process exits, however it
    exits. The Rust lease tests use it (tests/lease/tests/common/mod.rs), so they
    share this file's servers, port picker and port locks instead of keeping their own.
      redis:     kill9 | start | restart-empty | restart-loading-slowly KEYS DELAY_US
      etcd-pair: kill I | start I (I: 0 or 1)
      ports:     port (a free port, reserved until this process exits)"""
    work = tempfile.mkdtemp(prefix="flakeid-testenv.")
    server = None

    def say(line):
        sys.stdout.write(line + "\n")
        sys.stdout.flush()

    try:
        if kind == "redis":
            server = Redis(work, persistent=persistent).start()
            hello = f"ok port={server.port} pid={server.pid}"
        elif kind == "etcd-pair":
            server = EtcdPair(work).start()
            hello = "ok " + " ".join(f"port{i}={m.port}" for i, m in enumerate(server.members))
        elif kind == "ports":
            hello = "ok"
        else:
            raise EnvError(f"control: no server kind {kind!r} (redis, etcd-pair, ports)")
    except (EnvError, subprocess.CalledProcessError) as err:
        say(f"error {err}".replace("\n", " "))
        shutil.rmtree(work, ignore_errors=True)
        return 1
    say(hello)
    try:
        for line in sys.stdin:
            cmd, *args = line.split() or [""]
            try:
                if kind == "ports" and cmd == "port":
                    say(f"ok port={free_port()}")
                elif kind == "redis" and cmd == "kill9":
                    server.kill9()
                    say("ok")
                elif kind == "redis" and cmd in ("start", "restart-empty"):
                    server.restart(empty=True) if cmd == "restart-empty" else server.start()
                    say(f"ok pid={server.pid}")
                elif kind == "redis" and cmd == "restart-loading-slowly":
                    # A server with a large dataset after a restart: it answers every
                    # command with LOADING for about KEYS * DELAY_US (Redis 7 delays
                    # RDB loads only, not AOF ones; between keys it answers clients).
                    keys, delay_us = int(args[0]), int(args[1])
                    server.cli(
                        "EVAL",
                        "for i = 1, tonumber(ARGV[1]) do redis.call('SET', 'filler:' .. i, "
                        "string.rep('x', 200)) end",
                        "0",
                        str(keys),
                    )
                    server.cli("SAVE")
                    server.kill9()
                    server.extra = [
                        "--appendonly",
                        "no",
                        "--key-load-delay",
                        str(delay_us),
                        "--loading-process-events-interval-bytes",
                        "1024",
                    ]
                    server.start()
                    say(f"ok pid={server.pid}")
                elif kind == "etcd-pair" and cmd in ("kill", "start"):
                    i = int(args[0])
                    server.members[i].kill9() if cmd == "kill" else server.start_member(i)
                    say("ok")
                else:
                    say(f"error no command {line.strip()!r} for {kind} (testenv.py control's help)")
            except (EnvError, subprocess.CalledProcessError, ValueError, IndexError) as err:
                say(f"error {err}".replace("\n", " "))
    finally:
        if server is not None:
            server.stop()
        shutil.rmtree(work, ignore_errors=True)
    return 0


def main(argv):
    import argparse

    p = argparse.ArgumentParser(prog="testenv.py", description=__doc__.split("\n\n")[0])
    sub = p.add_subparsers(dest="cmd", required=True)
    for name in ("run", "up"):
        s = sub.add_parser(name)
        for server in ("redis", "postgres", "etcd", "kube"):
            s.add_argument(f"--{server}", action="store_true")
        s.add_argument("--all", action="store_true")
        s.add_argument(
            "--pg-conf",
            action="append",
            default=[],
            metavar="LINE",
            help="a line for PostgreSQL's postgresql.conf (repeatable)",
        )
        if name == "run":
            s.add_argument("command", nargs=argparse.REMAINDER)
    sub.add_parser("port").add_argument("--not", nargs="*", type=int, default=[], dest="taken")
    s = sub.add_parser(
        "control", help="one server for a test in another language, driven over stdin (control())"
    )
    s.add_argument("kind", choices=["redis", "etcd-pair", "ports"])
    s.add_argument("--persistent", action="store_true", help="redis: AOF, fsync always")
    s = sub.add_parser("kube-api", help="one request as the admin of --kube's API server")
    s.add_argument("method")
    s.add_argument("path")
    s.add_argument("body", nargs="?")
    s = sub.add_parser("initdb")
    s.add_argument("dir")
    s.add_argument("--conf", action="append", default=[], metavar="LINE")
    s.add_argument("--trust", action="store_true")
    a = p.parse_args(argv)
    if a.cmd == "control":
        return control(a.kind, a.persistent)
    if a.cmd == "kube-api":
        return kube_api_command(a.method, a.path, a.body)
    if a.cmd == "port":
        _handed_out.update(a.taken)
        print(free_port())
        return 0
    if a.cmd == "initdb":
        d = os.path.abspath(a.dir)
        try:
            print(
                Postgres(os.path.dirname(d), os.path.basename(d), conf=a.conf, trust=a.trust)
                .init()
                .data
            )
        except subprocess.CalledProcessError as err:
            print(f"testenv: {err}", file=sys.stderr)
            return 1
        return 0
    every = a.all
    stack = Stack(
        redis=a.redis or every,
        postgres=a.postgres or every,
        etcd=a.etcd or every,
        pg_conf=a.pg_conf,
        kube=a.kube,
    )
    try:
        stack.start()
    except (EnvError, subprocess.CalledProcessError) as err:
        print(f"testenv: {err}", file=sys.stderr)
        return 1
    env = stack.env()
    if a.cmd == "up":
        for k, v in sorted(env.items()):
            print(f"export {k}='{v}'")
        sys.stdout.flush()
        signal.pause()
        return 0
    command = a.command[1:] if a.command[:1] == ["--"] else a.command
    if not command:
        p.error("run needs a command after --")
    child = subprocess.Popen(command, env={**os.environ, **env})

    # A signal goes on to the command; the servers stop once it has exited (atexit).
    def forward(sig, _frame):
        try:
            child.send_signal(sig)
        except ProcessLookupError:
            pass

    for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        signal.signal(sig, forward)
    rc = child.wait()
    return rc if rc >= 0 else 128 - rc


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
