"""The servers and helpers every `flakeid serve` test module shares: real server
processes on 127.0.0.1 (free ports), read by real clients.

run.py sets FLAKEID_SERVE_BIN, the `flakeid` under test, before it imports a test
module (make test-serve: a debug build; make test-serve-abuse: the static CLI).
"""

import http.client
import json
import os
import re
import resource
import shutil
import signal
import struct
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "env"))
from testenv import free_port  # noqa: E402, F401  (the one fixture's port picker)

BIN = os.environ.get("FLAKEID_SERVE_BIN")
WORK = tempfile.mkdtemp(prefix="flakeid-serve-test.")


class Server:
    """One `flakeid serve` process; its port is read from its startup log line."""

    def __init__(self, *args, env=None, nofile=None, listen="127.0.0.1:0"):
        self.log_path = os.path.join(WORK, f"serve-{time.monotonic_ns()}.log")
        self.log = open(self.log_path, "w")
        self.out_path = self.log_path + ".out"
        self.out = open(self.out_path, "w")
        full_env = dict(os.environ, **(env or {}))
        self.proc = subprocess.Popen(
            [BIN, "serve", "--listen", listen, *args],
            stdout=self.out,
            stderr=self.log,
            env=full_env,
            preexec_fn=(lambda: resource.setrlimit(resource.RLIMIT_NOFILE, (nofile, nofile)))
            if nofile
            else None,
        )
        self.port = None
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            with open(self.log_path) as f:
                m = re.search(rf"listen={re.escape(listen.rsplit(':', 1)[0])}:(\d+)", f.read())
            if m:
                self.port = int(m.group(1))
                break
            if self.proc.poll() is not None:
                break
            time.sleep(0.02)
        if self.port is None:
            self.stop(signal.SIGKILL)
            raise AssertionError(f"server did not start: {self.logs()}")

    def logs(self):
        with open(self.log_path) as f:
            return f.read()

    def conn(self):
        return http.client.HTTPConnection("127.0.0.1", self.port, timeout=10)

    def get(self, path, headers=None, conn=None):
        c = conn or self.conn()
        c.request("GET", path, headers=headers or {})
        r = c.getresponse()
        body = r.read()
        if conn is None:
            c.close()
        return r.status, r.getheader("Content-Type"), body

    def json(self, path):
        status, _, body = self.get(path)
        return status, json.loads(body)

    def rss_kb(self):
        with open(f"/proc/{self.proc.pid}/status") as f:
            return int(re.search(r"^VmRSS:\s+(\d+) kB", f.read(), re.M).group(1))

    def rss_parts(self):
        """The resident set in bytes as (anonymous, file-backed): the heap, the
        allocator's metadata and the stacks; the binary's pages its code paths faulted
        in (/proc/PID/status: RssAnon, RssFile + RssShmem)."""
        with open(f"/proc/{self.proc.pid}/status") as f:
            text = f.read()
        kb = {k: int(v) for k, v in re.findall(r"^(Rss\w+):\s+(\d+) kB", text, re.M)}
        return kb["RssAnon"] * 1024, (kb["RssFile"] + kb["RssShmem"]) * 1024

    def metric(self, name):
        text = self.get("/metrics")[2].decode()
        return int(re.search(rf"^{name} (\d+)$", text, re.M).group(1))

    def stop(self, sig=signal.SIGTERM, timeout=10):
        if self.proc.poll() is None:
            self.proc.send_signal(sig)
        try:
            return self.proc.wait(timeout)
        finally:
            self.log.close()
            self.out.close()

    def stdout(self):
        with open(self.out_path) as f:
            return f.read()


def parse_metrics(text):
    """OpenMetrics text as {family: (type, [(sample name, labels, value)])}."""
    fams, cur = {}, None
    for line in text.splitlines():
        if line.startswith("# TYPE "):
            _, _, name, typ = line.split(" ", 3)
            cur = fams.setdefault(name, (typ, []))
        elif line and not line.startswith("#"):
            m = re.match(r"^([a-zA-Z_:][\w:]*)(?:\{(.*)\})? (\S+)", line)
            labels = dict(re.findall(r'(\w+)="((?:[^"\\]|\\.)*)"', m.group(2) or ""))
            v = m.group(3)
            cur[1].append((m.group(1), labels, float(v) if v not in ("+Inf",) else float("inf")))
    return fams


def ids_of(body):
    """The 64-bit IDs of an octet-stream batch (8 bytes each, big-endian)."""
    return [struct.unpack(">Q", body[i : i + 8])[0] for i in range(0, len(body), 8)]


def base32_crockford(text):
    """A ULID's 16 bytes, read here by plain arithmetic (not by flakeid)."""
    alphabet = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"
    n = 0
    for c in text:
        n = n * 32 + alphabet.index(c)
    return n.to_bytes(16, "big")


# Every route the router serves (the 404 names them, /openapi.json describes them).
ROUTES = [
    "/v1/id",
    "/v1/ids",
    "/v1/decode/{id}",
    "/v1/unseal/{id}",
    "/v1/layout",
    "/v1/uuid",
    "/v1/ulid",
    "/v1/typeid",
    "/healthz",
    "/readyz",
    "/metrics",
    "/openapi.json",
]


# tests/vectors/seal.json's AES-256 key (NIST's FF1 sample key) and a tweak of its.
SEAL_KEY = "2b7e151628aed2a6abf7158809cf4f3cef4359d8d580aa4f7f036d6f04fc6a94"
SEAL_VECTORS = os.path.join(HERE, "..", "vectors", "seal.json")


def cleanup():
    """Removes the servers' logs and files (run.py, after the tests)."""
    shutil.rmtree(WORK, ignore_errors=True)


def grpc_block(path):
    """A request HEADERS block (HPACK, no Huffman): POST `path`, gRPC."""
    return (
        b"\x83\x86\x04"
        + bytes([len(path)])
        + path
        + b"\x01\x09localhost"
        + b"\x0f\x10\x10application/grpc"
        + b"\x00\x02te\x08trailers"
    )


def serve_refused(*args, env=None):
    """`flakeid serve ARGS` on 127.0.0.1:0, which must exit at start: (its exit code,
    its stderr)."""
    out = subprocess.run(
        [BIN, "serve", "--listen", "127.0.0.1:0", *args],
        capture_output=True,
        text=True,
        timeout=20,
        env=env,
    )
    return out.returncode, out.stderr


def refused_before_a_lease(test, *args):
    """`flakeid serve ARGS` with a file lease in a new directory is refused before it
    listens or takes the lease: its stderr."""
    leases = tempfile.mkdtemp(dir=WORK)
    code, err = serve_refused("--lease", f"file://{leases}", *args)
    test.assertNotEqual(code, 0, (args, err))
    test.assertNotIn("listening", err, args)
    test.assertEqual(os.listdir(leases), [], (args, "a lease was taken", err))
    return err


def frame(kind, flags, stream, payload):
    """One HTTP/2 frame, for the clients that misbehave on purpose."""
    return (
        len(payload).to_bytes(3, "big") + bytes([kind, flags]) + stream.to_bytes(4, "big") + payload
    )


class OneServer:
    """A mixin for a TestCase whose tests share one server, started with `ARGS`
    before the first and stopped (exit 0) after the last."""

    ARGS = ()

    @classmethod
    def setUpClass(cls):
        cls.s = Server(*cls.ARGS)

    @classmethod
    def tearDownClass(cls):
        assert cls.s.stop() == 0, cls.s.logs()
