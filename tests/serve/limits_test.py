"""No client can hold the server's connections, file descriptors, streams or memory;
a client is an IPv4 address or an IPv6 prefix."""

import http.client
import json
import os
import re
import signal
import socket
import subprocess
import sys
import time
import unittest

from fixture import Server, frame, grpc_block, refused_before_a_lease


def h2_silent(port, paths):
    """An HTTP/2 (h2c) connection that asks for `paths`, one stream each, and then
    never reads: the attack of a client that lets the server buffer for it."""
    c = socket.create_connection(("127.0.0.1", port), timeout=5)
    c.sendall(b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n" + frame(4, 0, 0, b""))
    c.recv(4096)  # the server's SETTINGS
    c.sendall(frame(4, 1, 0, b""))  # SETTINGS ACK
    out = b""
    for i, path in enumerate(paths):
        block = b"\x82\x86" + b"\x04" + bytes([len(path)]) + path.encode() + b"\x01\x09localhost"
        out += frame(1, 0x5, 2 * i + 1, block)  # HEADERS, END_STREAM | END_HEADERS
    c.sendall(out)
    return c


def h2_grpc_stream_then_ping(port, seconds):
    """An h2c connection that starts an endless gRPC `Stream`, never reads it (no
    WINDOW_UPDATE), and keeps the connection busy with a PING every 0.1 s: the
    connection-idle timeout never fires. Returns (seconds until the server closed
    the connection or None, bytes received)."""
    c = socket.create_connection(("127.0.0.1", port), timeout=5)
    c.sendall(b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n" + frame(4, 0, 0, b""))
    block = grpc_block(b"/flakeid.v1.Flakeid/Stream")
    c.sendall(frame(4, 1, 0, b"") + frame(1, 0x4, 1, block) + frame(0, 0x1, 1, b"\0\0\0\0\0"))
    c.settimeout(0.1)
    t0 = time.monotonic()
    data = b""
    try:
        while time.monotonic() - t0 < seconds:
            try:
                chunk = c.recv(1 << 20)
                if not chunk:
                    return time.monotonic() - t0, data
                data += chunk
            except socket.timeout:
                pass
            except ConnectionResetError:  # closed with our PINGs unread: a reset
                return time.monotonic() - t0, data
            try:
                c.sendall(frame(6, 0, 0, b"\0" * 8))
            except OSError:
                return time.monotonic() - t0, data
        return None, data
    finally:
        c.close()


class Limits(unittest.TestCase):
    """No client can hold the server's connections, file descriptors,
    streams or memory; /healthz and a fresh client keep being served."""

    def assert_served(self, s):
        for path in ("/healthz", "/v1/id"):
            c = http.client.HTTPConnection("127.0.0.1", s.port, timeout=2)
            c.request("GET", path)
            self.assertEqual(c.getresponse().status, 200, path)
            c.close()

    def test_slowloris_is_cut_off_at_the_header_timeout(self):
        s = Server("--node", "1", "--header-timeout-ms", "1000")
        try:
            socks = []
            for _ in range(50):
                c = socket.create_connection(("127.0.0.1", s.port), timeout=5)
                c.sendall(b"GET /v1/id HTTP/1.1\r\n")
                socks.append(c)
            t0 = time.monotonic()
            closed = 0
            # One more header byte every 0.2 s: never a complete head.
            while time.monotonic() - t0 < 4 and closed < len(socks):
                closed = 0
                for c in socks:
                    try:
                        c.sendall(b"X")
                    except OSError:
                        closed += 1
                self.assert_served(s)
                time.sleep(0.2)
            self.assertEqual(
                closed, len(socks), "slow clients still open 4 s after a 1 s header timeout"
            )
            self.assertLess(time.monotonic() - t0, 3.5)
            for c in socks:
                c.close()
        finally:
            self.assertEqual(s.stop(), 0, s.logs())

    def test_slow_second_request_on_a_kept_alive_connection_is_cut_off(self):
        # The first request is complete, so only the per-request header deadline
        # (hyper's, polled on the connection watchdog's tick) can end the second.
        s = Server("--node", "1", "--header-timeout-ms", "1000", "--idle-timeout-ms", "60000")
        try:
            c = socket.create_connection(("127.0.0.1", s.port), timeout=5)
            c.sendall(b"GET /v1/id HTTP/1.1\r\nHost: x\r\n\r\n")
            self.assertTrue(c.recv(65536).startswith(b"HTTP/1.1 200"))
            c.sendall(b"GET /v1/id HTTP/1.1\r\n")
            t0 = time.monotonic()
            closed = None
            while time.monotonic() - t0 < 4:
                try:
                    c.sendall(b"X")
                    c.settimeout(0.2)
                    if c.recv(65536) == b"":
                        closed = time.monotonic() - t0
                        break
                except socket.timeout:
                    pass
                except OSError:
                    closed = time.monotonic() - t0
                    break
            c.close()
            self.assertIsNotNone(
                closed, "a trickled second request head kept its connection 4 s past a 1 s timeout"
            )
            self.assertGreater(closed, 0.9)
            self.assertLess(closed, 2.5)
        finally:
            self.assertEqual(s.stop(), 0, s.logs())

    def test_silent_connections_cannot_exhaust_the_fds(self):
        # 600 silent connections against a server allowed 256 descriptors: the cap
        # (256 - 64) holds, the oldest silent ones are evicted, probes get in.
        s = Server("--node", "1", nofile=256)
        try:
            socks = [socket.create_connection(("127.0.0.1", s.port), timeout=5) for _ in range(600)]
            time.sleep(0.3)
            self.assert_served(s)
            self.assertLess(len(os.listdir(f"/proc/{s.proc.pid}/fd")), 256)
            for c in socks:
                c.close()
        finally:
            self.assertEqual(s.stop(), 0, s.logs())

    def test_a_burst_of_connections_waits_in_the_accept_queue(self):
        # The listen backlog. With the server stopped (SIGSTOP) the kernel completes
        # handshakes only up to the accept queue's length and drops the SYNs past it,
        # which a client sends again only a second later (a probe behind a burst of
        # connections took 1.1 s). 600 at once all wait in the queue; std's backlog
        # of 128 let 129 in.
        s = Server("--node", "1")
        socks = []
        try:
            os.kill(s.proc.pid, signal.SIGSTOP)
            try:
                for _ in range(600):
                    c = socket.socket()
                    c.setblocking(False)
                    c.connect_ex(("127.0.0.1", s.port))
                    socks.append(c)
                time.sleep(0.5)  # loopback handshakes take microseconds; a dropped SYN, 1 s
                connected = 0
                for c in socks:
                    try:
                        c.getpeername()
                        connected += 1
                    except OSError:
                        pass
                self.assertEqual(connected, 600, "handshakes done while the server was stopped")
            finally:
                os.kill(s.proc.pid, signal.SIGCONT)
            for c in socks:
                c.close()
            self.assert_served(s)
        finally:
            self.assertEqual(s.stop(), 0, s.logs())

    def test_non_reading_h2_clients_hold_bounded_memory_and_ids(self):
        s = Server("--node", "1")
        try:
            self.assert_served(s)
            before = s.rss_kb()
            issued0 = s.metric("flakeid_ids_issued_total")
            # 4 connections x 64 streams of 100 000 IDs each, nothing read.
            conns = [h2_silent(s.port, ["/v1/ids?n=100000&format=octets"] * 64) for _ in range(4)]
            time.sleep(1.5)
            self.assert_served(s)
            grown = s.rss_kb() - before
            issued = s.metric("flakeid_ids_issued_total") - issued0
            # At most 32 streams per connection, each at most a chunk or two ahead.
            self.assertLess(issued, 4 * 32 * 2 * 4096, issued)
            print(f"RSS grew {grown} kB, {issued} IDs issued", file=sys.stderr)
            self.assertLess(grown, 25_000, f"RSS grew {grown} kB")
            for c in conns:
                c.close()
        finally:
            self.assertEqual(s.stop(), 0, s.logs())

    def test_stalled_stream_on_a_busy_connection_is_closed(self):
        # The connection stays busy (PINGs), so only the stream-idle timeout can end it.
        s = Server("--node", "1", "--idle-timeout-ms", "60000", "--stream-idle-timeout-ms", "1000")
        try:
            took, data = h2_grpc_stream_then_ping(s.port, 6)
            self.assertIsNotNone(
                took, "a stalled gRPC stream kept its busy connection open for 6 s"
            )
            self.assertGreater(took, 0.9)
            self.assertLess(took, 4)
            self.assertGreater(len(data), 60_000)  # the stream did flow until the window ran out
            self.assertIn("made no room", s.logs())
            self.assert_served(s)
        finally:
            self.assertEqual(s.stop(), 0, s.logs())

    def test_idle_connections_are_closed(self):
        s = Server("--node", "1", "--idle-timeout-ms", "1000")
        try:
            c = socket.create_connection(("127.0.0.1", s.port), timeout=5)
            c.sendall(b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n" + frame(4, 0, 0, b""))
            c.sendall(frame(1, 0x5, 1, b"\x82\x86\x04\x07/v1/id\x01\x09localhost"))
            t0 = time.monotonic()
            data = b""
            while True:
                chunk = c.recv(65536)
                if not chunk:
                    break
                data += chunk
            self.assertLess(time.monotonic() - t0, 4)
            self.assertIn(bytes([7]), data[:2000])  # a GOAWAY (type 7) before the close
        finally:
            self.assertEqual(s.stop(), 0, s.logs())


class ClientIpv6Prefix(unittest.TestCase):
    def test_a_prefix_out_of_range_is_refused_naming_the_setting_and_range(self):
        for bits in ("0", "129", "99999999999"):
            err = refused_before_a_lease(self, "--client-ipv6-prefix", bits)
            self.assertIn("client_ipv6_prefix must be in 1..=128", err)

    def test_a_prefix_in_range_serves(self):
        s = Server("--node", "1", "--client-ipv6-prefix", "56")
        try:
            self.assertEqual(s.get("/v1/uuid?n=5000&format=octets")[0], 200)
        finally:
            s.stop()


def in_new_netns(addresses, fn):
    """`fn()`'s result (JSON), run in a child process in a network namespace of its
    own (unshare(CLONE_NEWNET): root, as CI runs) whose loopback carries `addresses`
    (IPv6, each a /128): the one way to connect from several addresses of one IPv6
    prefix on one machine, without touching the machine's own interfaces."""
    import ctypes

    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: never returns
        out = {}
        try:
            if ctypes.CDLL(None, use_errno=True).unshare(0x40000000) != 0:  # CLONE_NEWNET
                raise OSError(ctypes.get_errno(), "unshare(CLONE_NEWNET)")
            subprocess.run(["ip", "link", "set", "lo", "up"], check=True)
            for a in addresses:
                subprocess.run(
                    ["ip", "-6", "addr", "add", f"{a}/128", "dev", "lo", "nodad"], check=True
                )
            out = {"result": fn()}
        except BaseException as e:  # noqa: BLE001  (reported to the parent, which fails)
            out = {"error": repr(e)}
        os.write(w, json.dumps(out).encode())
        os._exit(0)
    os.close(w)
    data = b""
    while chunk := os.read(r, 65536):
        data += chunk
    os.close(r)
    os.waitpid(pid, 0)
    out = json.loads(data or b'{"error": "the child said nothing"}')
    if "error" in out:
        raise AssertionError(f"in the network namespace: {out['error']}")
    return out["result"]


class Ipv6ClientsGrouped(unittest.TestCase):
    """Real sockets from several IPv6 addresses (a network namespace's loopback): the
    addresses of one /64 are one client for `--max-connections-per-client`, as one
    IPv4 address is; with `--client-ipv6-prefix 128` each address is its own. 12
    keep-alive connections, round robin from 3 addresses of fd00:1::/64, each
    answered once and left idle; then `/metrics` from another /64 counts the open ones."""

    ONE_PREFIX = ["fd00:1::1", "fd00:1::2", "fd00:1:0:0:ffff::3"]
    OTHER = "fd00:2::1"

    def open_after(self, *args):
        def run():
            s = Server(
                "--node",
                "1",
                "--max-connections",
                "64",
                "--max-connections-per-client",
                "4",
                *args,
                listen="[::]:0",
            )
            socks = []
            try:
                for i in range(12):
                    c = socket.create_connection(
                        ("::1", s.port), timeout=5, source_address=(self.ONE_PREFIX[i % 3], 0)
                    )
                    socks.append(c)
                    c.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
                    c.recv(65536)
                time.sleep(0.5)
                c = socket.create_connection(
                    ("::1", s.port), timeout=5, source_address=(self.OTHER, 0)
                )
                c.sendall(b"GET /metrics HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
                text = b""
                while chunk := c.recv(65536):
                    text += chunk
                c.close()
                return int(re.search(rb"^flakeid_connections_open (\d+)", text, re.M).group(1))
            finally:
                for c in socks:
                    c.close()
                s.stop()

        return in_new_netns(self.ONE_PREFIX + [self.OTHER], run)

    def test_one_slash_64_is_one_client(self):
        # The prefix's 4 and the /metrics connection.
        self.assertLessEqual(self.open_after(), 4 + 1)

    def test_a_slash_128_prefix_makes_each_address_a_client(self):
        self.assertEqual(self.open_after("--client-ipv6-prefix", "128"), 12 + 1)
