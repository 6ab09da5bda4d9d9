#!/usr/bin/env python3
"""The one test environment: real Redis, PostgreSQL 15 and etcd servers for tests
and benches, on 127.0.0.1, each on a free port below the kernel's ephemeral range,
with a per-run CA and TLS, stopped on exit or on a signal.

Every suite and bench that needs a server uses this file, either as a command:

    testenv.py run [--redis] [--postgres] [--etcd] [--all] -- CMD ARG...
        start the servers, run CMD with their URLs in FLAKEID_TEST_* variables,
        stop them (on CMD's exit, or on SIGINT/SIGTERM/SIGHUP), exit with CMD's status
    testenv.py up [--redis] [--postgres] [--etcd] [--all]
        start them, print `export FLAKEID_TEST_...=...` lines, wait for a signal
    testenv.py port [--not PORT...]
        print one free port below the ephemeral range (none of the ports named:
        a script that starts several servers passes those it already has)

or as a module (`sys.path.insert(0, "tests/env"); import testenv`), for a test that
kills, freezes or restarts its own server: `Redis(work).start()`, `Postgres(work,
name, conf=...)`, `Etcd(work, name)`, `make_certs(dir)`, `free_port()`, `Stack`.

Servers that cannot be installed (scripts/setup-lease.sh installs them) are reported
and their variables left unset; FLAKEID_LEASE_REQUIRE=0 then tells the tests to skip
them. Nothing here needs anything but Python 3's standard library, the servers and
openssl.
"""

import atexit
import os
import random
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time

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


def free_port():
    """A TCP port on 127.0.0.1, free when checked, never handed out before by this
    process, and below the ephemeral range: no outgoing connection's source port
    and no bind(0) can take it before the server binds it (bind(0) picks inside
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
        _handed_out.add(port)
        return port
    raise EnvError(f"no free port in {first}..{first + span}")


def as_postgres(cmd):
    """PostgreSQL refuses to run as root: run its tools as the postgres user."""
    return ["runuser", "-u", "postgres", "--", *cmd] if IS_ROOT else cmd


def chown_postgres(path):
    if IS_ROOT:
        shutil.chown(path, "postgres", "postgres")


def _wait(pred, timeout, what, log=None):
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if pred():
            return
        time.sleep(0.05)
    tail = ""
    if log and os.path.exists(log):
        with open(log, errors="replace") as f:
            tail = "\n" + "".join(f.readlines()[-20:])
    raise EnvError(f"{what} did not come up within {timeout} s{tail}")


def _signal_tree(pid, sig):
    """Signals `pid` and every process whose parent it is (a PostgreSQL postmaster
    and its backends), ignoring ones that are gone."""
    children = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat") as f:
                    fields = f.read().rsplit(")", 1)[1].split()
                if int(fields[1]) == pid:
                    children.append(int(entry))
            except (OSError, IndexError, ValueError):
                pass
    for p in [pid, *children]:
        try:
            os.kill(p, sig)
        except ProcessLookupError:
            pass


def make_certs(d):
    """A CA, another CA (for "wrong CA" tests), a server certificate for IP
    127.0.0.1 only (so `localhost` is a name mismatch), and a client certificate
    with CN flakeid_cert (the PostgreSQL certificate login's user)."""
    os.makedirs(d, exist_ok=True)
    ec = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"]

    def ssl(*args):
        subprocess.run(["openssl", *args], cwd=d, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)

    for ca in ("ca", "other-ca"):
        ssl("req", "-x509", *ec, "-keyout", f"{ca}.key", "-out", f"{ca}.pem", "-days", "2",
            "-subj", f"/CN=flakeid test {ca}", "-addext", "basicConstraints=critical,CA:TRUE",
            "-addext", "keyUsage=critical,keyCertSign,cRLSign")

    def leaf(name, cn, ext):
        ssl("req", *ec, "-keyout", f"{name}.key", "-out", f"{name}.csr", "-subj", f"/CN={cn}")
        with open(os.path.join(d, f"{name}.ext"), "w") as f:
            f.write(f"{ext}\nbasicConstraints=CA:FALSE\n")
        ssl("x509", "-req", "-in", f"{name}.csr", "-CA", "ca.pem", "-CAkey", "ca.key", "-CAcreateserial",
            "-days", "2", "-out", f"{name}.pem", "-extfile", f"{name}.ext")

    leaf("server", "127.0.0.1", "subjectAltName=IP:127.0.0.1")
    leaf("client", "flakeid_cert", "extendedKeyUsage=clientAuth")
    for f in os.listdir(d):
        os.chmod(os.path.join(d, f), 0o644)
    return d


class Server:
    """A server process this environment started: stop() is safe to call twice."""

    pid = None

    def stop(self):
        raise NotImplementedError

    def kill9(self):
        if self.pid:
            _signal_tree(self.pid, signal.SIGCONT)
            _signal_tree(self.pid, signal.SIGKILL)

    def pause(self, on=True):
        """SIGSTOP (or SIGCONT) the server and its child processes."""
        if self.pid:
            _signal_tree(self.pid, signal.SIGSTOP if on else signal.SIGCONT)


class Redis(Server):
    """A private redis-server, no persistence unless `persistent` (AOF, fsync
    always); with `certs`, also a TLS port (client certificates optional) and an ACL
    user `flakeid` / `s3cret`."""

    def __init__(self, work, name="redis", certs=None, persistent=False, extra=()):
        self.dir = os.path.join(work, name)
        os.makedirs(self.dir, exist_ok=True)
        self.certs, self.persistent, self.extra = certs, persistent, list(extra)
        self.port = self.tls_port = None
        self.proc = None

    def cli(self, *args, check=True):
        r = subprocess.run(["redis-cli", "-h", "127.0.0.1", "-p", str(self.port), *args],
                           capture_output=True, text=True)
        if check and r.returncode != 0:
            raise EnvError(f"redis-cli {' '.join(args)}: {r.stderr.strip()}")
        return r.stdout

    def start(self):
        for _ in range(5):
            self.port = self.port or free_port()
            if self.certs and not self.tls_port:
                self.tls_port = free_port()
            cmd = ["redis-server", "--port", str(self.port), "--bind", "127.0.0.1", "--save", "",
                   "--dir", self.dir, "--logfile", os.path.join(self.dir, "log")]
            cmd += ["--appendonly", "yes", "--appendfsync", "always"] if self.persistent else ["--appendonly", "no"]
            if self.certs:
                c = self.certs
                cmd += ["--tls-port", str(self.tls_port), "--tls-cert-file", f"{c}/server.pem",
                        "--tls-key-file", f"{c}/server.key", "--tls-ca-cert-file", f"{c}/ca.pem",
                        "--tls-auth-clients", "optional"]
            self.proc = subprocess.Popen(cmd + self.extra, stdout=subprocess.DEVNULL, start_new_session=True)
            self.pid = self.proc.pid
            # Up when the server on the port says it is this process (INFO works
            # while it loads), not merely when something accepts there.
            try:
                _wait(lambda: self.proc.poll() is not None
                      or f"process_id:{self.pid}" in self.cli("INFO", "server", check=False).split(),
                      10, f"redis-server on {self.port}", os.path.join(self.dir, "log"))
            except EnvError:
                self.stop()
                raise
            if self.proc.poll() is None:
                break
            # Lost a race for the port (another process bound it since the check).
            self.port = self.tls_port = None
        else:
            raise EnvError("redis-server exited at start five times: see " + os.path.join(self.dir, "log"))
        if self.certs:
            self.cli("ACL", "SETUSER", "flakeid", "on", ">s3cret", "~*", "&*", "+@all")
        return self

    def restart(self, empty=False):
        """kill -9, then start again on the same ports (empty unless persistent)."""
        self.kill9()
        self.proc.wait()
        if empty:
            for f in os.listdir(self.dir):
                if f.startswith("appendonly") or f.endswith(".rdb"):
                    p = os.path.join(self.dir, f)
                    shutil.rmtree(p) if os.path.isdir(p) else os.remove(p)
        return self.start()

    def stop(self):
        if self.proc and self.proc.poll() is None:
            self.kill9()
            self.proc.wait()

    @property
    def url(self):
        return f"redis://127.0.0.1:{self.port}/0"

    @property
    def tls_url(self):
        c = self.certs
        return (f"rediss://flakeid:s3cret@127.0.0.1:{self.tls_port}/0"
                f"?ca={c}/ca.pem&cert={c}/client.pem&key={c}/client.key")

    def env(self):
        e = {"FLAKEID_TEST_REDIS_URL": self.url, "FLAKEID_TEST_REDIS_PID": str(self.pid)}
        if self.certs:
            e["FLAKEID_TEST_REDISS_URL"] = self.tls_url
        return e


class Postgres(Server):
    """A private PostgreSQL 15 cluster (initdb'd as the postgres user), TCP on
    127.0.0.1 only, fsync off. Logins: `postgres` / `secret` (SCRAM), a trust role
    `flakeid_trust`; with `certs`, TLS on (ssl=on) and roles for every login method
    the lease tests try (md5, password, certificate). `conf` lines are appended to
    postgresql.conf (e.g. shared_preload_libraries)."""

    def __init__(self, work, name="pg", certs=None, conf=(), max_connections=200):
        self.dir = os.path.join(work, name)
        self.data = os.path.join(self.dir, "data")
        self.certs, self.conf, self.max_connections = certs, list(conf), max_connections
        self.port = None
        self.started = False

    def psql(self, sql, db="postgres", check=True):
        r = subprocess.run(as_postgres([f"{PGBIN}/psql", "-h", self.dir, "-p", str(self.port), "-U", "postgres",
                                        "-d", db, "-X", "-q", "-At", "-v", "ON_ERROR_STOP=1", "-c", sql]),
                           capture_output=True, text=True)
        if check and r.returncode != 0:
            raise EnvError(f"psql: {r.stderr.strip()}")
        return r.stdout

    def init(self):
        os.makedirs(self.dir, exist_ok=True)
        os.chmod(self.dir, 0o755)
        chown_postgres(self.dir)
        pw = os.path.join(self.dir, "pw")
        with open(pw, "w") as f:
            f.write("secret\n")
        chown_postgres(pw)
        subprocess.run(as_postgres([f"{PGBIN}/initdb", "-D", self.data, "-U", "postgres", f"--pwfile={pw}",
                                    "-E", "UTF8", "--no-sync", "--auth-local=trust", "--auth-host=scram-sha-256"]),
                       check=True, stdout=subprocess.DEVNULL)
        hba = ["local all all trust", "host all flakeid_trust 127.0.0.1/32 trust"]
        conf = ["listen_addresses = '127.0.0.1'", f"unix_socket_directories = '{self.dir}'", "fsync = off",
                f"max_connections = {self.max_connections}"]
        if self.certs:
            hba += ["host all flakeid_md5 127.0.0.1/32 md5", "host all flakeid_password 127.0.0.1/32 password",
                    "hostssl all flakeid_cert 127.0.0.1/32 cert"]
            for f in ("server.pem", "server.key", "ca.pem"):
                shutil.copy(os.path.join(self.certs, f), os.path.join(self.dir, f))
                chown_postgres(os.path.join(self.dir, f))
            os.chmod(os.path.join(self.dir, "server.key"), 0o600)
            conf += ["ssl = on", f"ssl_cert_file = '{self.dir}/server.pem'",
                     f"ssl_key_file = '{self.dir}/server.key'", f"ssl_ca_file = '{self.dir}/ca.pem'"]
        hba.append("host all all 127.0.0.1/32 scram-sha-256")
        with open(os.path.join(self.data, "pg_hba.conf"), "w") as f:
            f.write("\n".join(hba) + "\n")
        with open(os.path.join(self.data, "postgresql.conf"), "a") as f:
            f.write("\n".join(conf + self.conf) + "\n")
        return self

    def start(self):
        if not os.path.exists(self.data):
            self.init()
        for _ in range(5):
            self.port = self.port or free_port()
            r = subprocess.run(as_postgres([f"{PGBIN}/pg_ctl", "-D", self.data, "-l", os.path.join(self.dir, "log"),
                                            "-w", "-t", "60", "-o", f"-p {self.port}", "start"]),
                               stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
            if r.returncode == 0:
                break
            with open(os.path.join(self.dir, "log"), errors="replace") as f:
                log = f.read()
            if "could not bind" not in log and "Address already in use" not in log:
                raise EnvError(f"PostgreSQL did not start: {r.stderr.strip()}\n{log[-2000:]}")
            self.port = None
        else:
            raise EnvError("PostgreSQL could not bind a port five times")
        self.started = True
        with open(os.path.join(self.data, "postmaster.pid")) as f:
            self.pid = int(f.readline())
        if not getattr(self, "_roles", False):
            roles = ["CREATE ROLE flakeid_trust LOGIN SUPERUSER"]
            if self.certs:
                roles += ["CREATE ROLE flakeid_cert LOGIN SUPERUSER",
                          "CREATE ROLE flakeid_password LOGIN SUPERUSER PASSWORD 'plain-pw'",
                          "SET password_encryption = 'md5'",
                          "CREATE ROLE flakeid_md5 LOGIN SUPERUSER PASSWORD 'md5-pw'"]
            for sql in roles:
                self.psql(sql)
            self._roles = True
        return self

    def stop(self):
        if self.started and os.path.exists(os.path.join(self.data, "postmaster.pid")):
            self.pause(False)  # a frozen server cannot stop
            subprocess.run(as_postgres([f"{PGBIN}/pg_ctl", "-D", self.data, "-m", "immediate", "-w", "stop"]),
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        self.started = False

    @property
    def url(self):
        return f"postgres://postgres:secret@127.0.0.1:{self.port}/postgres"

    def env(self):
        e = {"FLAKEID_TEST_POSTGRES_URL": self.url,
             "FLAKEID_TEST_POSTGRES_TRUST_URL": f"postgres://flakeid_trust@127.0.0.1:{self.port}/postgres",
             "FLAKEID_TEST_POSTGRES_PORT": str(self.port), "FLAKEID_TEST_PG_DATA": self.data,
             "FLAKEID_TEST_PG_PID": str(self.pid)}
        if self.certs:
            e["FLAKEID_TEST_POSTGRES_TLS_URL"] = (f"{self.url}?sslmode=verify-full&sslrootcert={self.certs}/ca.pem"
                                                   "&channel_binding=require")
        return e


class Etcd(Server):
    """A private single-member etcd (Debian's 3.4). Plain: authentication on (user
    root / etcd-pw). With `certs`: TLS, client certificates required. Its data
    directory is on tmpfs where there is one (etcd fsyncs every write: on a slow
    disk 32 holders miss their 2 s TTLs)."""

    def __init__(self, work, name, certs=None):
        self.name, self.certs = name, certs
        self.dir = os.path.join(work, f"etcd-{name}")
        os.makedirs(self.dir, exist_ok=True)
        base = "/dev/shm" if os.path.isdir("/dev/shm") else self.dir
        self.data = tempfile.mkdtemp(prefix=f"flakeid-etcd-{name}.", dir=base)
        self.port = self.peer_port = None
        self.proc = None

    def ctl(self, *args, check=True):
        if self.certs:
            c = self.certs
            ep = ["--endpoints", f"https://127.0.0.1:{self.port}", "--cacert", f"{c}/ca.pem",
                  "--cert", f"{c}/client.pem", "--key", f"{c}/client.key"]
        else:
            ep = ["--endpoints", f"http://127.0.0.1:{self.port}"]
        r = subprocess.run(["etcdctl", *ep, "--dial-timeout", "1s", *args], capture_output=True, text=True,
                           env={**os.environ, "ETCDCTL_API": "3"})
        if check and r.returncode != 0:
            raise EnvError(f"etcdctl {' '.join(args)}: {r.stderr.strip()}")
        return r

    def start(self):
        for _ in range(5):
            self.port = self.port or free_port()
            self.peer_port = self.peer_port or free_port()
            scheme = "https" if self.certs else "http"
            cmd = ["etcd", "--name", self.name, "--data-dir", self.data,
                   "--listen-client-urls", f"{scheme}://127.0.0.1:{self.port}",
                   "--advertise-client-urls", f"{scheme}://127.0.0.1:{self.port}",
                   "--listen-peer-urls", f"http://127.0.0.1:{self.peer_port}",
                   "--initial-advertise-peer-urls", f"http://127.0.0.1:{self.peer_port}",
                   "--initial-cluster", f"{self.name}=http://127.0.0.1:{self.peer_port}"]
            if self.certs:
                c = self.certs
                # --trusted-ca-file alone makes etcd 3.4 demand client certificates:
                # with --client-cert-auth it is the intended mTLS setup.
                cmd += ["--cert-file", f"{c}/server.pem", "--key-file", f"{c}/server.key",
                        "--client-cert-auth", "--trusted-ca-file", f"{c}/ca.pem"]
            log = open(os.path.join(self.dir, "log"), "a")
            self.proc = subprocess.Popen(cmd, stdout=log, stderr=log, start_new_session=True)
            log.close()
            self.pid = self.proc.pid
            try:
                _wait(lambda: self.proc.poll() is not None or self.ctl("endpoint", "health", check=False).returncode == 0,
                      20, f"etcd {self.name} on {self.port}", os.path.join(self.dir, "log"))
            except EnvError:
                self.stop()
                raise
            if self.proc.poll() is None:
                break
            self.port = self.peer_port = None
        else:
            raise EnvError(f"etcd {self.name} exited at start five times: see {self.dir}/log")
        if not self.certs and not getattr(self, "_auth", False):
            self.ctl("user", "add", "root:etcd-pw")
            self.ctl("auth", "enable")
            self._auth = True
        return self

    def stop(self):
        if self.proc and self.proc.poll() is None:
            self.kill9()
            self.proc.wait()

    def remove(self):
        self.stop()
        # A test may have restarted etcd on this data directory (another pid, which
        # this object never knew): stop every etcd that serves it.
        for entry in os.listdir("/proc"):
            if not entry.isdigit():
                continue
            try:
                with open(f"/proc/{entry}/cmdline", "rb") as f:
                    args = f.read().split(b"\0")
            except OSError:
                continue
            if args[:1] and os.path.basename(args[0]) == b"etcd" and self.data.encode() in args:
                _signal_tree(int(entry), signal.SIGCONT)
                _signal_tree(int(entry), signal.SIGKILL)
        shutil.rmtree(self.data, ignore_errors=True)

    def env(self):
        if self.certs:
            c = self.certs
            return {"FLAKEID_TEST_ETCDS_URL": f"etcds://127.0.0.1:{self.port}/?ca={c}/ca.pem&cert={c}/client.pem"
                                              f"&key={c}/client.key",
                    "FLAKEID_TEST_ETCDS_PID": str(self.pid), "FLAKEID_TEST_ETCDS_DIR": self.dir}
        return {"FLAKEID_TEST_ETCD_URL": f"etcd://root:etcd-pw@127.0.0.1:{self.port}/",
                "FLAKEID_TEST_ETCD_PID": str(self.pid)}


class Stack:
    """The servers of one run: a work directory, a CA, and each server asked for,
    plain and TLS. `env()` is every FLAKEID_TEST_* variable; `stop()` (also run at
    exit and on SIGINT/SIGTERM/SIGHUP) stops every server and removes the files."""

    def __init__(self, redis=False, postgres=False, etcd=False):
        self.work = tempfile.mkdtemp(prefix="flakeid-testenv.")
        os.chmod(self.work, 0o755)
        self.servers = []
        self.skipped = []
        self.want = {"redis": redis, "postgres": postgres, "etcd": etcd}
        self.certs = None
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
            self._add("redis-server", lambda: Redis(self.work, certs=self.certs).start(), "redis-server")
        if self.want["postgres"]:
            self._add("PostgreSQL 15", lambda: Postgres(self.work, certs=self.certs).start(), f"{PGBIN}/initdb")
        if self.want["etcd"]:
            self._add("etcd", lambda: Etcd(self.work, "plain").start(), "etcd")
            self._add("etcd (TLS)", lambda: Etcd(self.work, "tls", certs=self.certs).start(), "etcd")
        return self

    def _add(self, what, start, binary):
        if shutil.which(binary) is None and not os.access(binary, os.X_OK):
            print(f"SKIP: {what} is not installed (scripts/setup-lease.sh): its tests are skipped", file=sys.stderr)
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


def main(argv):
    import argparse

    p = argparse.ArgumentParser(prog="testenv.py", description=__doc__.split("\n\n")[0])
    sub = p.add_subparsers(dest="cmd", required=True)
    for name in ("run", "up"):
        s = sub.add_parser(name)
        for server in ("redis", "postgres", "etcd"):
            s.add_argument(f"--{server}", action="store_true")
        s.add_argument("--all", action="store_true")
        if name == "run":
            s.add_argument("command", nargs=argparse.REMAINDER)
    sub.add_parser("port").add_argument("--not", nargs="*", type=int, default=[], dest="taken")
    a = p.parse_args(argv)
    if a.cmd == "port":
        _handed_out.update(a.taken)
        print(free_port())
        return 0
    every = a.all
    stack = Stack(redis=a.redis or every, postgres=a.postgres or every, etcd=a.etcd or every)
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
