"""A server's life: drains on SIGTERM and SIGINT, SIGHUP reloads, leases released
for a successor, and scale-out and frozen stores on Redis and PostgreSQL."""

import json
import os
import re
import signal
import socket
import tempfile
import threading
import time
import unittest

from fixture import WORK, Server, ids_of, parse_metrics
from grpc_client import NOT_SERVING, SERVING, wait_health


class Shutdown(unittest.TestCase):
    def test_sigterm_and_sigint_drain_and_exit_0(self):
        for sig in (signal.SIGTERM, signal.SIGINT):
            # sonyflake issues 256 IDs per 10 ms tick: 25 600 IDs take about a second,
            # so the batch is surely in flight when the signal arrives 0.3 s in.
            s = Server("--node", "3", "--layout", "sonyflake")
            result = {}

            def fetch():
                result["r"] = s.get("/v1/ids?n=25600&format=octet-stream")

            t = threading.Thread(target=fetch)
            t.start()
            time.sleep(0.3)
            self.assertEqual(s.stop(sig), 0, s.logs())
            t.join()
            st, _, body = result["r"]
            self.assertEqual((st, len(body)), (200, 25600 * 8))
            self.assertEqual(len(set(ids_of(body))), 25600)
            self.assertIn("lease released; stopped", s.logs())
            # A new connection after shutdown is refused.
            with self.assertRaises(OSError):
                s.get("/healthz")

    def test_a_drain_finishes_a_slow_readers_body_answers_503_on_open_connections_then_releases(
        self,
    ):
        d = tempfile.mkdtemp(dir=WORK)
        # sonyflake makes 25 600 IDs a second: 50 000 are in flight for about 2 s, and
        # the reader takes 16 KiB every 20 ms (about 0.8 MB/s: 1.1 MB of text, 1.4 s).
        s = Server("--lease", f"file://{d}", "--layout", "sonyflake")
        node = s.json("/v1/layout")[1]["node"]
        slow = socket.socket()
        slow.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 16384)
        slow.connect(("127.0.0.1", s.port))
        slow.sendall(b"GET /v1/ids?n=50000 HTTP/1.1\r\nHost: x\r\n\r\n")
        idle = socket.create_connection(("127.0.0.1", s.port), timeout=5)  # keep-alive, served once
        idle.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
        self.assertTrue(idle.recv(4096).startswith(b"HTTP/1.1 200 "))
        body = slow.recv(16384)
        s.proc.send_signal(signal.SIGTERM)
        time.sleep(0.2)
        # On a connection already open: /readyz 503, and the connection closed after it.
        idle.sendall(b"GET /readyz HTTP/1.1\r\nHost: x\r\n\r\n")
        answer = b""
        while chunk := idle.recv(4096):
            answer += chunk
        self.assertTrue(answer.startswith(b"HTTP/1.1 503 "), answer)
        self.assertIn(b"connection: close", answer.lower())
        with self.assertRaises(OSError):  # no new connection
            socket.create_connection(("127.0.0.1", s.port), timeout=1)
        slow.settimeout(10)
        while chunk := slow.recv(16384):
            body += chunk
            time.sleep(0.02)
        self.assertTrue(body.endswith(b"\r\n0\r\n\r\n"), body[-40:])  # the chunked body's end
        ids = json.loads(b"".join(body.split(b"\r\n\r\n", 1)[1].split(b"\r\n")[1::2]))
        self.assertEqual(len(set(ids)), 50000)
        self.assertEqual(s.stop(), 0, s.logs())
        self.assertIn("drained; lease released; stopped", s.logs())
        # Released: a successor gets the node id at once.
        b = Server("--lease", f"file://{d}", "--layout", "sonyflake")
        self.assertEqual(b.json("/v1/layout")[1]["node"], node)
        self.assertEqual(b.stop(), 0)

    def test_the_drain_limit_resets_what_is_still_in_flight(self):
        # A reader that stops: its body cannot finish within the drain limit (10 s),
        # so its connection is reset, never ended as if the body were whole.
        s = Server("--node", "1", "--max-batch", "1000000")
        stuck = socket.socket()
        stuck.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        stuck.connect(("127.0.0.1", s.port))
        stuck.sendall(b"GET /v1/ids?n=1000000 HTTP/1.1\r\nHost: x\r\n\r\n")
        stuck.recv(100)  # the response has begun
        t0 = time.monotonic()
        s.proc.send_signal(signal.SIGTERM)
        self.assertEqual(s.proc.wait(20), 1, s.logs())  # a response cut: not a clean exit
        self.assertGreaterEqual(time.monotonic() - t0, 10)
        self.assertIn("cutting 1 responses short", s.logs())
        stuck.settimeout(5)
        with self.assertRaises(ConnectionResetError):
            while stuck.recv(1 << 20):
                pass
        stuck.close()

    def test_sighup_reloads_and_keeps_serving(self):
        # SIGHUP is `systemctl reload`: the TLS and token files are read again and the
        # service goes on (a unit with Restart=on-failure would not restart a drain).
        tokens = os.path.join(WORK, "hup-tokens")
        with open(tokens, "w") as f:
            f.write("first-token\n")
        a = Server("--node", "5", "--auth-token-file", tokens)
        try:
            self.assertEqual(
                a.get("/v1/id", headers={"Authorization": "Bearer first-token"})[0], 200
            )
            with open(tokens, "w") as f:
                f.write("second-token\n")
            a.proc.send_signal(signal.SIGHUP)
            deadline = time.monotonic() + 5
            while (
                "SIGHUP: TLS and token files reloaded" not in a.logs()
                and time.monotonic() < deadline
            ):
                time.sleep(0.02)
            self.assertIn("SIGHUP: TLS and token files reloaded", a.logs())
            self.assertIsNone(a.proc.poll())
            self.assertEqual(
                a.get("/v1/id", headers={"Authorization": "Bearer second-token"})[0], 200
            )
            self.assertEqual(
                a.get("/v1/id", headers={"Authorization": "Bearer first-token"})[0], 401
            )
            self.assertEqual(a.get("/readyz")[0], 200)
        finally:
            self.assertEqual(a.stop(), 0, a.logs())

    def test_second_sigterm_exits_at_once_after_releasing(self):
        d = tempfile.mkdtemp(dir=WORK)
        a = Server("--lease", f"file://{d}", "--layout", "sonyflake", "--lease-ttl-ms", "30000")
        node = a.json("/v1/layout")[1]["node"]
        # sonyflake: 100 000 IDs take about 4 s, so the drain would wait that long.
        c = socket.create_connection(("127.0.0.1", a.port), timeout=5)
        c.sendall(b"GET /v1/ids?n=100000&format=octets HTTP/1.1\r\nHost: x\r\n\r\n")
        c.recv(100)  # the response has begun
        a.proc.send_signal(signal.SIGTERM)
        time.sleep(0.3)
        self.assertIsNone(a.proc.poll(), "the first SIGTERM should drain, not exit")
        t0 = time.monotonic()
        a.proc.send_signal(signal.SIGTERM)
        self.assertEqual(a.stop(timeout=5), 1, a.logs())
        self.assertLess(time.monotonic() - t0, 1.5)
        self.assertIn("releasing the lease and exiting now", a.logs())
        c.close()
        # Released: a successor gets the node id at once, not after the 30 s TTL.
        b = Server("--lease", f"file://{d}", "--layout", "sonyflake")
        self.assertEqual(b.json("/v1/layout")[1]["node"], node)
        self.assertEqual(b.stop(), 0)

    def test_file_lease_released_on_sigterm(self):
        d = tempfile.mkdtemp(dir=WORK)
        a = Server("--lease", f"file://{d}", "--layout", "sonyflake")
        b = Server("--lease", f"file://{d}", "--layout", "sonyflake")
        na, nb = a.json("/v1/layout")[1], b.json("/v1/layout")[1]
        self.assertEqual({na["lease"], nb["lease"]}, {"held"})
        self.assertNotEqual(na["node"], nb["node"])
        self.assertEqual(a.stop(), 0)
        c = Server("--lease", f"file://{d}", "--layout", "sonyflake")
        self.assertEqual(c.json("/v1/layout")[1]["node"], na["node"])
        self.assertEqual(b.stop(), 0)
        self.assertEqual(c.stop(), 0)


def scale_out(test, url):
    """Three servers on one store: distinct node ids, 100 000 unique IDs; SIGTERM on
    one hands its node id to a fourth at once. (The namespace is new, so the first
    server waits out the lease's lock delay, TTL + margin, before it is ready.)"""
    ttl = 5000
    servers = [Server("--lease", url, "--lease-ttl-ms", str(ttl)) for _ in range(3)]
    try:
        nodes = [s.json("/v1/layout")[1]["node"] for s in servers]
        test.assertEqual(len(set(nodes)), 3, nodes)
        ids = []
        conns = [s.conn() for s in servers]
        while len(ids) < 100_000:
            for s, c in zip(servers, conns):
                st, _, body = s.get("/v1/ids?n=5000&format=octet-stream", conn=c)
                test.assertEqual(st, 200)
                ids += ids_of(body)
        test.assertEqual(len(ids), len(set(ids)))
        for c in conns:
            c.close()
        # Well within the TTL: the fourth server only gets the id because SIGTERM
        # released it (an expiry would take the whole TTL).
        t0 = time.monotonic()
        test.assertEqual(servers[1].stop(), 0)
        fourth = Server("--lease", url, "--lease-ttl-ms", str(ttl))
        servers.append(fourth)
        test.assertEqual(fourth.json("/v1/layout")[1]["node"], nodes[1])
        test.assertLess(time.monotonic() - t0, ttl / 1000 / 2)
        st, _, body = fourth.get("/v1/ids?n=5000&format=octet-stream")
        test.assertEqual(st, 200)
        test.assertFalse(set(ids_of(body)) & set(ids))
    finally:
        for s in servers:
            test.assertEqual(s.stop(), 0, s.logs())


def family(pid):
    """`pid` and its children (the PostgreSQL postmaster and its backends)."""
    pids = [pid]
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat") as f:
                    ppid = int(f.read().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue
            if ppid == pid:
                pids.append(int(entry))
    return pids


def frozen_store(test, url, pid):
    """SIGSTOP the store (and its children): the server turns not-ready and refuses
    IDs (503) before its lease could expire in the store."""
    ttl = 3000
    s = Server("--lease", url, "--lease-ttl-ms", str(ttl))
    try:
        test.assertEqual(s.get("/readyz")[0], 200)
        test.assertEqual(s.get("/v1/id")[0], 200)
        # The store's round trip, from the last confirmed renewal: a real, positive time.
        text = s.get("/metrics")[2].decode()
        renew_s = float(
            re.search(r"^flakeid_lease_renew_latency_seconds (\S+)$", text, re.M).group(1)
        )
        test.assertGreater(renew_s, 0, text)
        test.assertLess(renew_s, ttl / 1000)
        m = parse_metrics(text)
        test.assertEqual(
            {labels["state"]: v for _, labels, v in m["flakeid_lease_state"][1]}["held"], 1
        )
        remaining = m["flakeid_lease_remaining_seconds"][1][0][2]
        test.assertGreater(remaining, 0)
        test.assertLessEqual(remaining, ttl / 1000)
        test.assertEqual(wait_health(s.port, SERVING), [(0, SERVING)] * 2)
        frozen = family(pid)
        for p in frozen:
            os.kill(p, signal.SIGSTOP)
        stopped = time.monotonic()
        try:
            not_ready = None
            while time.monotonic() - stopped < 3 * ttl / 1000:
                st, _, _ = s.get("/readyz")
                if st == 503:
                    not_ready = time.monotonic() - stopped
                    break
                time.sleep(0.01)
            test.assertIsNotNone(not_ready, "never turned not-ready")
            # The store would keep the lease for ttl after the last renewal it saw,
            # which was before SIGSTOP: the server must already have stopped.
            test.assertLess(not_ready * 1000, ttl)
            st, _, body = s.get("/v1/id")
            test.assertEqual(st, 503, body)
            test.assertEqual(json.loads(body)["error"], "not_ready")
            test.assertEqual(s.get("/v1/ids?n=10")[0], 503)
            test.assertEqual(s.get("/healthz")[0], 200)
            test.assertEqual(s.json("/v1/layout")[1]["lease"], "unreachable")
            # grpc.health.v1 follows readiness: NOT_SERVING within its 100 ms poll.
            test.assertEqual(wait_health(s.port, NOT_SERVING, 1), [(0, NOT_SERVING)] * 2)
        finally:
            for p in frozen:
                os.kill(p, signal.SIGCONT)
        # Once the store answers again the lease is renewed and IDs resume.
        deadline = time.monotonic() + 10
        while s.get("/readyz")[0] != 200 and time.monotonic() < deadline:
            time.sleep(0.05)
        test.assertEqual(s.get("/v1/id")[0], 200)
        test.assertEqual(wait_health(s.port, SERVING, 1), [(0, SERVING)] * 2)
    finally:
        test.assertEqual(s.stop(), 0, s.logs())


class Redis(unittest.TestCase):
    url = os.environ.get("FLAKEID_TEST_REDIS_URL")

    def setUp(self):
        if not self.url:
            self.skipTest("no redis-server (FLAKEID_TEST_REDIS_URL unset)")

    def test_scale_out(self):
        scale_out(self, self.url.replace("/0", "/1") + "?namespace=serve-scale")

    def test_frozen_store(self):
        frozen_store(
            self, self.url + "?namespace=serve-frozen", int(os.environ["FLAKEID_TEST_REDIS_PID"])
        )


class Postgres(unittest.TestCase):
    url = os.environ.get("FLAKEID_TEST_POSTGRES_URL")

    def setUp(self):
        if not self.url:
            self.skipTest("no PostgreSQL (FLAKEID_TEST_POSTGRES_URL unset)")

    def test_scale_out(self):
        scale_out(self, self.url + "?namespace=serve_scale")

    def test_frozen_store(self):
        frozen_store(
            self, self.url + "?namespace=serve_frozen", int(os.environ["FLAKEID_TEST_PG_PID"])
        )
