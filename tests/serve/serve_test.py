"""`flakeid serve` as its clients see it: real server processes on 127.0.0.1 (free
ports), real HTTP/1.1 keep-alive clients (http.client) and an h2c client (curl),
real lease stores (started by tests/serve/run.py and passed in FLAKEID_TEST_*).

run.py runs these tests (make test-serve): it sets BIN, the `flakeid` under test.
"""

import http.client
import json
import multiprocessing
import os
import re
import resource
import shutil
import socket
import signal
import struct
import subprocess
import sys
import tempfile
import threading
import time
import unittest
import uuid
import urllib.parse

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "env"))
from testenv import free_port  # noqa: E402  (the one fixture's port picker)

BIN = None
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
    return [struct.unpack(">Q", body[i : i + 8])[0] for i in range(0, len(body), 8)]


class Routes(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.s = Server("--node", "7", "--max-batch", "1000")

    @classmethod
    def tearDownClass(cls):
        assert cls.s.stop() == 0, cls.s.logs()

    def node_of(self, id_):
        return (id_ >> 12) & 0x3FF

    def test_one_id_text_and_json(self):
        st, ct, body = self.s.get("/v1/id")
        self.assertEqual((st, ct), (200, "text/plain; charset=utf-8"))
        self.assertEqual(self.node_of(int(body)), 7)
        st, ct, body = self.s.get("/v1/id", {"Accept": "application/json"})
        self.assertEqual((st, ct), (200, "application/json"))
        self.assertIsInstance(json.loads(body)["id"], str)
        st, _, body = self.s.get("/v1/id?format=json")
        self.assertIn("id", json.loads(body))
        st, _, body = self.s.get("/v1/id?format=xml")
        self.assertEqual(st, 400)
        self.assertEqual(json.loads(body)["parameter"], "format")

    def test_uuid_and_ulid(self):
        """128-bit IDs: text or JSON, each above the one before, read back by a
        plain JSON parser (`node -e JSON.parse`, as a browser would)."""
        ids = []
        for i in range(200):
            path, headers = ("/v1/uuid", {}) if i % 2 else ("/v1/ulid?format=json", {})
            st, ct, body = self.s.get(path, headers)
            self.assertEqual(st, 200, body)
            if path == "/v1/uuid":
                self.assertEqual(ct, "text/plain; charset=utf-8")
                u = uuid.UUID(body.decode().strip())
            else:
                self.assertEqual(ct, "application/json")
                ulid = json.loads(body)["ulid"]
                self.assertEqual(len(ulid), 26)
                u = uuid.UUID(int=int.from_bytes(base32_crockford(ulid), "big"))
            self.assertEqual(u.version, 7)
            ids.append(u.int)
        self.assertEqual(ids, sorted(set(ids)), "not strictly increasing")
        st, _, body = self.s.get("/v1/uuid", {"Accept": "application/json"})
        out = subprocess.run(
            [
                "node",
                "-e",
                "const s=require('fs').readFileSync(0,'utf8');"
                "process.stdout.write(JSON.parse(s).uuid)",
            ],
            input=body,
            capture_output=True,
            check=True,
        )
        self.assertEqual(uuid.UUID(out.stdout.decode()).version, 7)
        st, _, body = self.s.get("/v1/ulid?format=xml")
        self.assertEqual((st, json.loads(body)["parameter"]), (400, "format"))
        st, _, body = self.s.get("/v1/uuid?count=2")
        self.assertEqual((st, json.loads(body)["parameter"]), (400, "query"))

    def test_typeid(self):
        """`/v1/typeid?prefix=P`: `P_` and 26 lowercase base32 characters (the bare
        suffix without a prefix), in the sequence of `/v1/uuid`; a bad prefix is a
        400 naming `prefix`; the JSON form holds a string, which the CLI decodes."""
        ids = []
        for i in range(60):
            path = [
                "/v1/typeid?prefix=user",
                "/v1/uuid",
                "/v1/typeid?format=json&prefix=user_group",
            ][i % 3]
            st, ct, body = self.s.get(path)
            self.assertEqual(st, 200, body)
            if path == "/v1/uuid":
                ids.append(uuid.UUID(body.decode().strip()).int)
                continue
            if "json" in path:
                self.assertEqual(ct, "application/json")
                text = json.loads(body)["typeid"]
                self.assertIsInstance(text, str)
                prefix, suffix = text.rsplit("_", 1)
                self.assertEqual(prefix, "user_group")
            else:
                self.assertEqual(ct, "text/plain; charset=utf-8")
                prefix, suffix = body.decode().strip().split("_")
                self.assertEqual(prefix, "user")
            self.assertEqual((len(suffix), suffix), (26, suffix.lower()))
            u = uuid.UUID(int=int.from_bytes(base32_crockford(suffix.upper()), "big"))
            self.assertEqual(u.version, 7)
            ids.append(u.int)
        self.assertEqual(ids, sorted(set(ids)), "not strictly increasing")
        st, _, body = self.s.get("/v1/typeid")
        self.assertEqual(st, 200)
        self.assertRegex(body.decode(), r"^[0-7][0-9a-hjkmnp-tv-z]{25}\n$")
        _, _, body = self.s.get("/v1/typeid?prefix=u&format=json")
        out = subprocess.run(
            [BIN, "decode", "--json", json.loads(body)["typeid"]],
            capture_output=True,
            text=True,
            check=True,
        )
        self.assertEqual(json.loads(out.stdout)["version"], 7)
        for bad in ["User", "_user", "a" * 64, "us%20er"]:
            st, _, body = self.s.get(f"/v1/typeid?prefix={bad}")
            self.assertEqual((st, json.loads(body)["parameter"]), (400, "prefix"), bad)
        st, _, body = self.s.get("/v1/typeid?count=2")
        self.assertEqual((st, json.loads(body)["parameter"]), (400, "query"))

    def test_128_bit_batches_in_every_format(self):
        """`/v1/uuid?n=`, `/v1/ulid?n=`, `/v1/typeid?prefix=&n=`: the formats of
        `/v1/ids` (a JSON array of strings, NDJSON, octets), each read back by plain
        JSON parsing; every batch strictly increasing and in order with single calls
        between them; `n` and `prefix` checked as for the 64-bit batches."""
        c = self.s.conn()

        def one():
            return uuid.UUID(self.s.get("/v1/uuid", conn=c)[2].decode().strip()).int

        def of_ulid(text):
            return int.from_bytes(base32_crockford(text), "big")

        seen = [one()]
        for path, headers, ct, read in [
            (
                "/v1/uuid?n=1000",
                {},
                "application/json",
                lambda b: [uuid.UUID(x).int for x in json.loads(b)],
            ),
            (
                "/v1/ulid?n=700&format=ndjson",
                {},
                "application/x-ndjson",
                lambda b: [of_ulid(json.loads(line)) for line in b.splitlines()],
            ),
            (
                "/v1/ulid?n=300",
                {"Accept": "application/x-ndjson"},
                "application/x-ndjson",
                lambda b: [of_ulid(json.loads(line)) for line in b.splitlines()],
            ),
            (
                "/v1/typeid?prefix=user&n=500",
                {},
                "application/json",
                lambda b: [of_ulid(x.split("_")[1].upper()) for x in json.loads(b)],
            ),
            (
                "/v1/typeid?n=3",
                {},
                "application/json",
                lambda b: [of_ulid(x.upper()) for x in json.loads(b)],
            ),
            (
                "/v1/uuid?n=1000&format=octet-stream",
                {},
                "application/octet-stream",
                lambda b: [int.from_bytes(b[i : i + 16], "big") for i in range(0, len(b), 16)],
            ),
            (
                "/v1/uuid?n=1",
                {},
                "application/json",
                lambda b: [uuid.UUID(x).int for x in json.loads(b)],
            ),
        ]:
            st, got_ct, body = self.s.get(path, headers, conn=c)
            self.assertEqual((st, got_ct), (200, ct), (path, body[:200]))
            batch = read(body)
            want = int(path.split("n=")[1].split("&")[0])
            self.assertEqual(len(batch), want, path)
            self.assertTrue(all(uuid.UUID(int=u).version == 7 for u in batch), path)
            self.assertEqual(batch, sorted(set(batch)), f"{path}: not strictly increasing")
            seen += batch
            seen.append(one())  # a single call after the batch comes after all of it
        self.assertEqual(
            seen, sorted(set(seen)), "a batch out of order with the single calls around it"
        )
        # A browser's JSON.parse reads the array of strings.
        _, _, body = self.s.get("/v1/ulid?n=5", conn=c)
        out = subprocess.run(
            [
                "node",
                "-e",
                "const s=require('fs').readFileSync(0,'utf8');"
                "process.stdout.write(JSON.parse(s).join(' '))",
            ],
            input=body,
            capture_output=True,
            check=True,
        )
        self.assertEqual(len(out.stdout.split()), 5)
        for path, param in [
            ("/v1/uuid?n=0", "n"),
            ("/v1/ulid?n=1001", "n"),
            ("/v1/typeid?prefix=u&n=-1", "n"),
            ("/v1/uuid?n=abc", "n"),
            ("/v1/uuid?n=3&format=xml", "format"),
            ("/v1/typeid?prefix=User&n=3", "prefix"),
            ("/v1/typeid?prefix=_u&n=3", "prefix"),
        ]:
            st, _, body = self.s.get(path, conn=c)
            self.assertEqual((st, json.loads(body)["parameter"]), (400, param), path)
        st, _, body = self.s.get("/v1/uuid?n=1001", conn=c)
        self.assertIn("1..=1000", json.loads(body)["message"])
        c.close()

    def test_grpc_batch_uuid(self):
        """gRPC `BatchUuid`: a stream of chunks of 16-byte UUIDv7s, strictly
        increasing, in order with `NextUuid` calls around it; `n` outside
        1..=--max-batch is INVALID_ARGUMENT naming `n`."""

        def next_uuid():
            status, reply, _ = grpc_call(self.s.port, "NextUuid")
            self.assertEqual(status, 0)
            return int.from_bytes(proto_bytes_field(reply), "big")

        seen = [next_uuid()]
        for n in (1, 999, 1000):
            status, raw, out = grpc_path(
                self.s.port, "/flakeid.v1.Flakeid/BatchUuid", b"\x08" + varint(n), raw=True
            )
            self.assertEqual(status, 0, (n, out))
            packed = b"".join(proto_bytes_field(m) for m in grpc_messages(raw))
            batch = [int.from_bytes(packed[i : i + 16], "big") for i in range(0, len(packed), 16)]
            self.assertEqual(len(batch), n)
            self.assertTrue(all(uuid.UUID(int=u).version == 7 for u in batch))
            self.assertEqual(batch, sorted(set(batch)), f"n={n}: not strictly increasing")
            seen += batch + [next_uuid()]
        self.assertEqual(
            seen, sorted(set(seen)), "a batch out of order with the NextUuid calls around it"
        )
        for n in (0, 1001, 1 << 40):
            status, _, out = grpc_path(
                self.s.port, "/flakeid.v1.Flakeid/BatchUuid", b"\x08" + varint(n)
            )
            self.assertEqual(status, 3, out)
            self.assertIn("grpc-message: n:%20must%20be%20in%201..=1000", out)

    def test_decode_uuid_ulid_and_typeid_as_the_cli_does(self):
        """`/v1/decode/{id}` reads a UUID, a ULID and a TypeID (any version of UUID)
        and answers exactly the JSON `flakeid decode --json` prints; a 64-bit ID
        still decodes to its parts, `sealed=1` is refused for a 128-bit one, and a
        malformed one is a 400 naming `id`."""
        _, _, u = self.s.get("/v1/uuid")
        _, _, ulid = self.s.get("/v1/ulid")
        _, _, t = self.s.get("/v1/typeid?prefix=order")
        forms = [
            u.decode().strip(),
            ulid.decode().strip(),
            t.decode().strip(),
            u.decode().strip().replace("-", "").upper(),
            str(uuid.uuid4()),
            "00000000-0000-0000-0000-000000000000",
        ]
        for text in forms:
            st, ct, body = self.s.get(f"/v1/decode/{text}")
            self.assertEqual((st, ct), (200, "application/json"), (text, body))
            cli = subprocess.run(
                [BIN, "decode", "--json", text], capture_output=True, check=True
            ).stdout
            self.assertEqual(body, cli, text)
        st, got = self.s.json(f"/v1/decode/{forms[2]}")
        self.assertEqual(got["typeid"], forms[2])
        self.assertIsInstance(got["timestamp_ms"], int)
        st, _, body = self.s.get(f"/v1/decode/{forms[0]}?sealed=1")
        self.assertEqual((st, json.loads(body)["parameter"]), (400, "sealed"))
        for bad in ["017f22e2-79b0-7cc3-98c4-dc0c0c07398g", "8" + "0" * 25, "order_" + "8" * 26]:
            st, _, body = self.s.get(f"/v1/decode/{bad}")
            self.assertEqual((st, json.loads(body)["parameter"]), (400, "id"), bad)
        _, _, body = self.s.get("/v1/id")
        st, parts = self.s.json(f"/v1/decode/{int(body)}")
        self.assertEqual((st, parts["node"]), (200, 7))

    def test_no_clock_cache_thread(self):
        # serve turns the core's clock cache off (SystemClock::disable_cache): its
        # thread's wake-ups cost the request path more than the cache saved.
        for _ in range(50):
            self.assertEqual(self.s.get("/v1/id")[0], 200)
        tasks = f"/proc/{self.s.proc.pid}/task"
        names = []
        for t in os.listdir(tasks):
            try:
                with open(f"{tasks}/{t}/comm") as f:
                    names.append(f.read().strip())
            except OSError:
                pass  # a thread that just ended
        self.assertTrue(any(n.startswith("tokio") for n in names), names)
        self.assertNotIn("flakeid-clock", names)

    def test_batches_in_every_format(self):
        c = self.s.conn()  # one keep-alive connection for every request
        st, ct, body = self.s.get("/v1/ids?n=1000", conn=c)
        self.assertEqual((st, ct), (200, "application/json"))
        ids = [int(x) for x in json.loads(body)]
        st, ct, body = self.s.get("/v1/ids?n=500&format=ndjson", conn=c)
        self.assertEqual((st, ct), (200, "application/x-ndjson"))
        ids += [int(json.loads(line)) for line in body.splitlines()]
        st, ct, body = self.s.get("/v1/ids?n=300", {"Accept": "application/x-ndjson"}, conn=c)
        self.assertEqual(ct, "application/x-ndjson")
        ids += [int(json.loads(line)) for line in body.splitlines()]
        st, ct, body = self.s.get("/v1/ids?n=1000&format=octet-stream", conn=c)
        self.assertEqual((st, ct, len(body)), (200, "application/octet-stream", 8000))
        ids += ids_of(body)
        st, ct, body = self.s.get("/v1/ids?n=2", {"Accept": "application/octet-stream"}, conn=c)
        self.assertEqual(len(body), 16)
        ids += ids_of(body)
        st, _, body = self.s.get("/v1/ids", conn=c)
        self.assertEqual(len(json.loads(body)), 1)
        self.assertEqual(len(ids), len(set(ids)))
        self.assertEqual(ids, sorted(ids))
        self.assertTrue(all(self.node_of(i) == 7 for i in ids))
        c.close()

    def test_bad_batches_name_the_parameter(self):
        for path, param in [
            ("/v1/ids?n=0", "n"),
            ("/v1/ids?n=1001", "n"),
            ("/v1/ids?n=-1", "n"),
            ("/v1/ids?n=+5", "n"),
            ("/v1/ids?n=99999999999999999999999", "n"),
            ("/v1/ids?n=abc", "n"),
            ("/v1/ids?n=3&format=xml", "format"),
            ("/v1/ids?n=3&n=4", "n"),  # a repeated parameter: which one is not guessed
            ("/v1/ids?format=json&n=2&format=ndjson", "format"),
            ("/v1/decode/1?from=int&from=hex", "from"),
            ("/v1/ids?count=3", "query"),
            ("/v1/ids?%ZZ=1", "query"),
            ("/v1/decode/hello", "id"),
            ("/v1/decode/0xzz", "id"),
            ("/v1/decode/99999999999999999999999", "id"),
        ]:
            st, ct, body = self.s.get(path)
            self.assertEqual((st, ct), (400, "application/json"), path)
            err = json.loads(body)
            self.assertEqual(err["parameter"], param, path)
            self.assertTrue(err["message"], path)
        st, _, body = self.s.get("/nope")
        self.assertEqual(st, 404)
        self.assertEqual(json.loads(body)["error"], "not_found")
        # The 404 names every route the router serves, and only those.
        named = re.findall(r"/[^,)\s]+", json.loads(body)["message"])
        self.assertEqual(sorted(named), sorted(ROUTES))
        c = self.s.conn()
        c.request("POST", "/v1/id")
        r = c.getresponse()
        self.assertEqual((r.status, r.getheader("Content-Type")), (405, "application/json"))
        self.assertEqual(json.loads(r.read())["parameter"], "method")
        c.close()

    def test_decode_every_text_form(self):
        _, _, body = self.s.get("/v1/id")
        id_ = int(body)
        st, parts = self.s.json(f"/v1/decode/{id_}")
        self.assertEqual(st, 200)
        self.assertEqual(parts["node"], 7)
        self.assertEqual(parts["id"], str(id_))
        for form in [f"0x{id_:x}", parts["hex"], parts["base32"], parts["base62"]]:
            st, again = self.s.json(f"/v1/decode/{form}")
            self.assertEqual((st, again["id"]), (200, str(id_)), form)

    def test_layout_health_ready_metrics(self):
        st, lay = self.s.json("/v1/layout")
        self.assertEqual(st, 200)
        self.assertEqual(
            (lay["name"], lay["node"], lay["lease"], lay["max_batch"]),
            ("snowflake", 7, "none", 1000),
        )
        self.assertEqual(self.s.get("/healthz")[0], 200)
        self.assertEqual(self.s.get("/readyz")[0], 200)
        self.s.get("/v1/ids?n=5")
        st, ct, body = self.s.get("/metrics")
        self.assertEqual(st, 200)
        self.assertTrue(ct.startswith("application/openmetrics-text"), ct)
        text = body.decode()
        issued = int(re.search(r"^flakeid_ids_issued_total (\d+)$", text, re.M).group(1))
        self.assertGreaterEqual(issued, 5)
        self.assertIn(
            'flakeid_http_requests_total{route="/v1/ids",method="GET",status="200"}', text
        )
        self.assertIn("flakeid_lease_held 1", text)
        self.assertIn("flakeid_lease_renew_latency_seconds 0.0", text)  # no lease

    def test_metrics_follow_prometheus_conventions(self):
        c = self.s.conn()
        for path in [
            "/v1/ids?n=3",
            "/v1/id",
            "/v1/ids?n=0",
            "/v1/decode/1",
            "/nope/at/all",
            "/v1/id?x=1",
        ]:
            self.s.get(path, conn=c)
        c.close()
        text = self.s.get("/metrics")[2].decode()
        m = parse_metrics(text)
        # Base units only, counters end in _total, one HELP and TYPE per family.
        for fam, (typ, samples) in m.items():
            self.assertNotRegex(fam, r"_(us|ms|micros|millis)$", fam)
            if typ == "counter":
                self.assertTrue(
                    all(n == fam + "_total" or n == fam + "_created" for n, _, _ in samples), fam
                )
        helps = re.findall(r"^# HELP (\S+)", text, re.M)
        types = re.findall(r"^# TYPE (\S+)", text, re.M)
        self.assertEqual(len(helps), len(set(helps)), helps)
        self.assertEqual(sorted(helps), sorted(types))
        self.assertEqual(m["flakeid_build"][0], "info")
        self.assertRegex(text, r'(?m)^flakeid_build_info\{version="\d+\.\d+\.\d+[^"]*"\} 1$')
        # The latency histogram, in seconds, per route, method and status class.
        typ, samples = m["flakeid_http_request_duration_seconds"]
        self.assertEqual(typ, "histogram")

        def sample(name, **labels):
            for n, labels, v in samples:
                if n == name and all(labels.get(k) == v2 for k, v2 in labels.items()):
                    yield labels, v

        ok = dict(route="/v1/ids", method="GET", **{"class": "2xx"})
        bad = dict(route="/v1/ids", method="GET", **{"class": "4xx"})
        self.assertGreaterEqual(
            next(sample("flakeid_http_request_duration_seconds_count", **ok))[1], 1
        )
        self.assertGreaterEqual(
            next(sample("flakeid_http_request_duration_seconds_count", **bad))[1], 1
        )
        buckets = sorted(
            float(labels["le"])
            for labels, _ in sample("flakeid_http_request_duration_seconds_bucket", **ok)
        )
        self.assertEqual(buckets[0], 0.00005)
        self.assertEqual(buckets[-1], float("inf"))
        total = next(sample("flakeid_http_request_duration_seconds_sum", **ok))[1]
        self.assertGreater(total, 0)
        self.assertLess(total, 10)  # seconds, not µs
        # Unknown paths share one label: a scanner does not grow the metrics.
        self.assertTrue(any(labels.get("route") == "other" for _, labels, _ in samples))
        self.assertFalse(any("nope" in labels.get("route", "") for _, labels, _ in samples))
        self.assertTrue(any(labels.get("route") == "/v1/decode/{id}" for _, labels, _ in samples))
        # The generator's stats.
        self.assertGreaterEqual(m["flakeid_generator_ids_issued"][1][0][2], 4)
        for fam, typ in [
            ("flakeid_tick_waits", "counter"),
            ("flakeid_tick_wait_seconds", "counter"),
            ("flakeid_lead_seconds", "gauge"),
            ("flakeid_clock_rollbacks", "counter"),
            ("flakeid_clock_rollback_max_seconds", "gauge"),
            ("flakeid_lease_remaining_seconds", "gauge"),
            ("flakeid_lease_state", "gauge"),
        ]:
            self.assertEqual(m[fam][0], typ, fam)
        states = {labels["state"]: v for _, labels, v in m["flakeid_lease_state"][1]}
        self.assertEqual(states, {"none": 1, "held": 0, "unreachable": 0, "lost": 0, "released": 0})

    def test_grpc_health_and_reflection(self):
        self.assertEqual(health(self.s.port), (0, 1))  # SERVING
        self.assertEqual(health(self.s.port, "flakeid.v1.Flakeid"), (0, 1))
        self.assertEqual(health(self.s.port, "no.such.Service")[0], 5)  # NOT_FOUND
        # ServerReflectionInfo, v1 and v1alpha: list_services (field 7) names them all.
        for v in ("v1", "v1alpha"):
            status, reply, _ = grpc_path(
                self.s.port,
                f"/grpc.reflection.{v}.ServerReflection/ServerReflectionInfo",
                b"\x3a\x00",
            )
            self.assertEqual(status, 0, v)
            for name in (b"flakeid.v1.Flakeid", b"grpc.health.v1.Health"):
                self.assertIn(name, reply, v)
            # file_containing_symbol (field 4): the descriptor of flakeid.proto.
            sym = b"flakeid.v1.Flakeid"
            status, reply, _ = grpc_path(
                self.s.port,
                f"/grpc.reflection.{v}.ServerReflection/ServerReflectionInfo",
                b"\x22" + bytes([len(sym)]) + sym,
            )
            self.assertEqual(status, 0, v)
            self.assertIn(b"flakeid.proto", reply, v)
            self.assertIn(b"StreamRequest", reply, v)

    def test_grpc_refusals_are_counted_with_their_codes(self):
        def calls(rpc, code):
            m = re.search(
                rf'^flakeid_grpc_calls_total{{rpc="{rpc}",code="{code}"}} (\d+)$',
                self.s.get("/metrics")[2].decode(),
                re.M,
            )
            return int(m.group(1)) if m else 0

        # Not protobuf: INVALID_ARGUMENT, as any bad argument.
        before = calls("Batch", 3)
        status, _, _ = grpc_call(self.s.port, "Batch", b"\x08\xff\xff")
        self.assertEqual(status, 3)
        self.assertEqual(calls("Batch", 3), before + 1)
        # n past 32 bits (2^32 + 5, once read as 5): refused naming the value sent.
        status, _, out = grpc_call(self.s.port, "Batch", b"\x08\x85\x80\x80\x80\x10")
        self.assertEqual(status, 3)
        self.assertIn("got%204294967301", out)
        # Two request messages to a method that takes one: INTERNAL, not an answer
        # to the first.
        for method, msg in (("Batch", b"\x08\x01"), ("Next", b""), ("Stream", b"\x08\x01")):
            status, reply, out = grpc_call(self.s.port, method, msg, messages=2)
            self.assertEqual(status, 13, (method, out))
            self.assertEqual(reply, b"", method)
        self.assertEqual(grpc_call(self.s.port, "Batch", b"\x08\x01")[0], 0)
        # A message over the largest real request (Unseal of --max-batch 1000 IDs):
        # refused before it is read, and counted.
        before = calls("Unseal", 11)
        status, _, _ = grpc_call(self.s.port, "Unseal", packed_ids(range(2000)))
        self.assertEqual(status, 11)  # OUT_OF_RANGE, tonic's code for it
        self.assertEqual(calls("Unseal", 11), before + 1)
        # gRPC over HTTP/1.1: 505 before the body is read, and the connection closed.
        c = self.s.conn()
        c.request(
            "POST",
            "/flakeid.v1.Flakeid/Next",
            body=b"\0" * 5,
            headers={"Content-Type": "application/grpc"},
        )
        r = c.getresponse()
        self.assertEqual((r.status, json.loads(r.read())["parameter"]), (505, "version"))
        self.assertEqual(r.getheader("Connection"), "close")
        c.close()

    @unittest.skipUnless(shutil.which("curl"), "curl not installed")
    def test_h2c(self):
        out = subprocess.run(
            [
                "curl",
                "-sS",
                "--http2-prior-knowledge",
                "-w",
                "\n%{http_version}",
                f"http://127.0.0.1:{self.s.port}/v1/id",
            ],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.split("\n")
        self.assertEqual(out[-1], "2")
        self.assertEqual(self.node_of(int(out[0])), 7)


def base32_crockford(text):
    """A ULID's 16 bytes, read here by plain arithmetic (not by flakeid)."""
    alphabet = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"
    n = 0
    for c in text:
        n = n * 32 + alphabet.index(c)
    return n.to_bytes(16, "big")


HERE = os.path.dirname(os.path.abspath(__file__))
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


class MetricCounts(unittest.TestCase):
    """`/metrics` counts every answered request once, in its own route, method and
    status (the server records them through handles made once)."""

    def test_each_request_is_counted_in_its_series(self):
        s = Server("--node", "9")
        try:
            c = s.conn()
            calls = [
                ("GET", "/v1/id", {}, 3, 200),
                ("HEAD", "/v1/id", {}, 2, 200),
                ("GET", "/v1/id", {"Accept": "image/png"}, 1, 406),
                ("POST", "/v1/id", {}, 1, 405),
                ("GET", "/v1/ids?n=2", {}, 2, 200),
                ("GET", "/v1/ids?n=0", {}, 1, 400),
                ("GET", "/v1/decode/12345", {}, 1, 200),
                ("GET", "/nope/at/all", {}, 2, 404),
                ("GET", "/healthz", {}, 1, 200),
            ]
            for method, path, headers, n, status in calls:
                for _ in range(n):
                    c.request(method, path, headers=headers)
                    r = c.getresponse()
                    r.read()
                    self.assertEqual(r.status, status, (method, path))
            c.close()
            fams = parse_metrics(s.get("/metrics")[2].decode())
            route = {"/v1/decode/12345": "/v1/decode/{id}", "/nope/at/all": "other"}
            want, classes = {}, {}
            for method, path, _, n, status in calls:
                r = route.get(path, path.split("?")[0])
                # A method the route does not serve, and any on route `other`: `other`.
                method = method if r != "other" and method in ("GET", "HEAD") else "other"
                want[(r, method, str(status))] = want.get((r, method, str(status)), 0) + n
                key = (r, method, f"{status // 100}xx")
                classes[key] = classes.get(key, 0) + n
            got = {
                (labels["route"], labels["method"], labels["status"]): v
                for _, labels, v in fams["flakeid_http_requests"][1]
            }
            self.assertEqual(got, want)
            counts = {
                (labels["route"], labels["method"], labels["class"]): v
                for n, labels, v in fams["flakeid_http_request_duration_seconds"][1]
                if n.endswith("_count")
            }
            self.assertEqual(counts, classes)
        finally:
            s.stop()


class AccessLog(unittest.TestCase):
    def test_one_json_line_per_request_when_asked(self):
        s = Server("--node", "3", "--access-log")
        try:
            c = s.conn()
            c.request("GET", "/v1/ids?n=3", headers={"X-Request-Id": "client-42"})
            r = c.getresponse()
            r.read()
            self.assertEqual((r.status, r.getheader("X-Request-Id")), (200, "client-42"))
            c.request("GET", "/nope", headers={"X-Request-Id": "not usable: spaces"})
            r = c.getresponse()
            r.read()
            self.assertEqual(r.status, 404)
            made = r.getheader("X-Request-Id")
            local = c.sock.getsockname()
            c.close()
            subprocess.run(
                [
                    "curl",
                    "-sS",
                    "--http2-prior-knowledge",
                    "-o",
                    "/dev/null",
                    f"http://127.0.0.1:{s.port}/v1/id",
                ],
                capture_output=True,
                check=True,
            )
            deadline = time.monotonic() + 5
            while s.stdout().count("\n") < 3 and time.monotonic() < deadline:
                time.sleep(0.02)
            lines = [json.loads(line) for line in s.stdout().splitlines()]
            self.assertEqual(len(lines), 3, lines)
            a, b, h2 = lines
            self.assertEqual(
                (a["method"], a["path"], a["query"], a["status"], a["route"], a["version"]),
                ("GET", "/v1/ids", "n=3", 200, "/v1/ids", "HTTP/1.1"),
            )
            self.assertEqual(a["peer"], f"{local[0]}:{local[1]}")
            self.assertGreater(a["duration_seconds"], 0)
            self.assertLess(a["duration_seconds"], 5)
            self.assertRegex(a["ts"], r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$")
            self.assertEqual((b["path"], b["status"], b["route"]), ("/nope", 404, "other"))
            self.assertEqual((a["request_id"], b["request_id"]), ("client-42", made))
            self.assertRegex(made, r"^[0-9a-f]+-\d+$")
            self.assertNotIn("query", b)
            self.assertEqual((h2["path"], h2["version"], h2["status"]), ("/v1/id", "HTTP/2", 200))
            self.assertIn("flakeid_access_log_dropped_total 0", s.get("/metrics")[2].decode())
        finally:
            self.assertEqual(s.stop(), 0, s.logs())

    def test_off_by_default(self):
        s = Server("--node", "3")
        try:
            self.assertEqual(s.get("/v1/id")[0], 200)
            self.assertNotIn("access_log", s.get("/metrics")[2].decode())
        finally:
            self.assertEqual(s.stop(), 0, s.logs())
        self.assertEqual(s.stdout(), "")


class OpenApi(unittest.TestCase):
    """/openapi.json describes every route, and schemathesis (PyPI, pinned; installed
    by make setup-serve) finds nothing against the running server: plain,
    and sealed (where /v1/unseal answers 200)."""

    def schemathesis(self, s):
        venv = os.environ.get(
            "FLAKEID_SERVE_VENV", os.path.join(HERE, "..", "..", "target", "serve-venv")
        )
        out = subprocess.run(
            [
                os.path.join(venv, "bin", "schemathesis"),
                "--config-file",
                os.path.join(HERE, "schemathesis.toml"),
                "--no-color",
                "run",
                f"http://127.0.0.1:{s.port}/openapi.json",
            ],
            capture_output=True,
            text=True,
            timeout=600,
            cwd=WORK,  # its .schemathesis/ cache too
        )
        self.assertEqual(out.returncode, 0, out.stdout[-6000:] + out.stderr[-2000:])
        # Every operation but /openapi.json itself, which schemathesis leaves out.
        ops = re.search(r"Operations:\s+(\d+) selected / (\d+) total", out.stdout)
        self.assertEqual((ops.group(1), ops.group(2)), (str(len(ROUTES) - 1),) * 2, out.stdout)

    def test_document_lists_every_route(self):
        s = Server("--node", "3", "--max-batch", "777")
        try:
            st, ct, body = s.get("/openapi.json")
            self.assertEqual((st, ct), (200, "application/json"))
            doc = json.loads(body)
            self.assertTrue(doc["openapi"].startswith("3."))
            self.assertEqual(sorted(doc["paths"]), sorted(ROUTES))
            for path in ["/v1/ids", "/v1/uuid", "/v1/ulid", "/v1/typeid"]:
                ref = [p["$ref"] for p in doc["paths"][path]["get"]["parameters"] if "$ref" in p]
                self.assertEqual(ref, ["#/components/parameters/BatchN"], path)
            n = doc["components"]["parameters"]["BatchN"]
            self.assertEqual(
                (n["name"], n["schema"]["maximum"]), ("n", 777)
            )  # this server's --max-batch
            for path in ROUTES:
                self.assertNotEqual(s.get(path.replace("{id}", "1"))[0], 404, path)
        finally:
            self.assertEqual(s.stop(), 0, s.logs())

    def test_schemathesis_plain(self):
        s = Server("--node", "3", "--max-batch", "1000")
        try:
            self.schemathesis(s)
        finally:
            self.assertEqual(s.stop(), 0, s.logs())

    def test_schemathesis_sealed(self):
        key = os.path.join(WORK, "openapi-seal.key")
        with open(key, "w") as f:
            f.write(SEAL_KEY + "\n")
        s = Server("--node", "3", "--max-batch", "1000", "--seal-key-file", key, "--layout", "js53")
        try:
            self.schemathesis(s)
        finally:
            self.assertEqual(s.stop(), 0, s.logs())


class Semantics(unittest.TestCase):
    """HTTP semantics, messages, and decode's one rule."""

    @classmethod
    def setUpClass(cls):
        cls.s = Server("--node", "7")

    @classmethod
    def tearDownClass(cls):
        assert cls.s.stop() == 0, cls.s.logs()

    def req(self, method, path, headers=None):
        c = self.s.conn()
        c.request(method, path, headers=headers or {})
        r = c.getresponse()
        body = r.read()
        c.close()
        return r, body

    def assert_json_error(self, r, body, status, kind):
        self.assertEqual(
            (r.status, r.getheader("Content-Type")), (status, "application/json"), body
        )
        self.assertEqual(json.loads(body)["error"], kind, body)

    def test_head_issues_nothing(self):
        before = self.s.metric("flakeid_ids_issued_total")
        for path in ("/v1/ids?n=100000", "/v1/id"):
            r, body = self.req("HEAD", path)
            self.assertEqual((r.status, body), (200, b""))
            self.assertEqual(r.getheader("Cache-Control"), "no-store")
        self.assertEqual(self.s.metric("flakeid_ids_issued_total"), before)

    def test_v1_id_answers_as_the_router_does(self):
        # GET and HEAD /v1/id are answered by the connection's service without the
        # router (conn/requests.rs); they must carry what the router adds to its routes.
        r, body = self.req("GET", "/v1/id")
        self.assertEqual(r.status, 200)
        self.assertEqual(r.getheader("Content-Length"), str(len(body)))
        r, body = self.req("GET", "/v1/id?format=json")
        self.assertEqual(r.getheader("Content-Length"), str(len(body)))
        self.assertEqual(r.getheader("Content-Type"), "application/json")
        # HEAD issues no ID, so it cannot know GET's length (a sealed ID has any
        # number of digits): no Content-Length rather than a false 0.
        r, body = self.req("HEAD", "/v1/id")
        self.assertEqual((r.status, body, r.getheader("Content-Length")), (200, b"", None))
        self.assertEqual(r.getheader("Content-Type"), "text/plain; charset=utf-8")
        r, body = self.req("HEAD", "/v1/ids?n=3")
        self.assertEqual((r.status, body, r.getheader("Content-Length")), (200, b"", None))
        r, body = self.req("HEAD", "/v1/id?format=xml")
        self.assertEqual((r.status, body), (400, b""))
        self.assertGreater(int(r.getheader("Content-Length")), 0)  # the length GET's JSON error has
        r, body = self.req("GET", "/v1/id?format=xml")
        self.assert_json_error(r, body, 400, "bad_request")
        self.assertEqual(r.getheader("Content-Length"), str(len(body)))
        r, body = self.req("POST", "/v1/id")
        self.assert_json_error(r, body, 405, "method_not_allowed")
        self.assertEqual(r.getheader("Allow"), "GET, HEAD")
        r, body = self.req("GET", "/v1/id/")
        self.assert_json_error(r, body, 404, "not_found")

    def test_id_responses_are_not_cached_and_vary_on_accept(self):
        for path in ("/v1/id", "/v1/ids?n=3", "/v1/ids?n=5000&format=octets"):
            r, _ = self.req("GET", path)
            self.assertEqual(
                (r.getheader("Cache-Control"), r.getheader("Vary")), ("no-store", "Accept"), path
            )

    def test_accept_by_q_value_case_insensitive_406(self):
        def ct(path, accept):
            r, body = self.req("GET", path, {"Accept": accept})
            return r.status, r.getheader("Content-Type"), body

        self.assertEqual(ct("/v1/id", "APPLICATION/JSON")[1], "application/json")
        self.assertEqual(
            ct("/v1/id", "application/json;q=0, text/plain")[1], "text/plain; charset=utf-8"
        )
        self.assertEqual(
            ct("/v1/id", "application/json;q=0.5, text/*;q=0.4")[1], "application/json"
        )
        self.assertEqual(ct("/v1/id", "text/html, */*;q=0.8")[1], "text/plain; charset=utf-8")
        self.assertEqual(
            ct("/v1/ids?n=2", "application/octet-stream;q=0.1, Application/X-NDJSON;Q=0.3")[1],
            "application/x-ndjson",
        )
        for path, accept in (
            ("/v1/id", "image/png"),
            ("/v1/ids", "*/*;q=0"),
            ("/v1/id", "application/json;q=0"),
        ):
            st, ctype, body = ct(path, accept)
            self.assertEqual((st, ctype), (406, "application/json"), accept)
            self.assertIn("application/json", json.loads(body)["message"])

    def test_json_errors_for_414_431_bad_paths_and_405(self):
        r, body = self.req("GET", "/v1/id?x=" + "a" * 10_000)
        self.assert_json_error(r, body, 414, "uri_too_long")
        r, body = self.req("GET", "/v1/id", {"X-Big": "b" * 20_000})
        self.assert_json_error(r, body, 431, "headers_too_large")
        r, body = self.req("GET", "/v1/decode/%FF%FE")
        self.assert_json_error(r, body, 400, "bad_request")
        self.assertEqual(json.loads(body)["parameter"], "id")
        r, body = self.req("DELETE", "/v1/ids")
        self.assert_json_error(r, body, 405, "method_not_allowed")
        self.assertEqual(r.getheader("Allow"), "GET, HEAD")
        self.assertIn("GET and HEAD", json.loads(body)["message"])

    def test_ids_as_json_numbers_only_for_js_safe_layouts(self):
        # js53 (53 bits) answers numbers when asked; strings stay the default.
        js = Server("--node", "3", "--layout", "js53")
        try:
            for accept in (
                "application/json; ids=number",
                'Application/JSON;IDS="number"',
                "application/json;ids=number, application/json;q=0.5",
            ):
                st, ct, body = js.get("/v1/ids?n=5", {"Accept": accept})
                self.assertEqual((st, ct), (200, "application/json; ids=number"), accept)
                ids = json.loads(body)
                self.assertTrue(all(type(i) is int and 0 <= i < 2**53 for i in ids), body)
                self.assertEqual(ids, sorted(set(ids)))
            # Streamed in chunks (n >= 4096): still one JSON array of numbers.
            st, ct, body = js.get("/v1/ids?n=5000", {"Accept": "application/json; ids=number"})
            ids = json.loads(body)
            self.assertEqual((st, len(ids), len(set(ids))), (200, 5000, 5000))
            self.assertTrue(all(type(i) is int for i in ids))
            for accept in (None, "application/json", "application/json; charset=utf-8"):
                st, ct, body = js.get("/v1/ids?n=3", {"Accept": accept} if accept else {})
                self.assertEqual((st, ct), (200, "application/json"), accept)
                self.assertTrue(all(type(i) is str for i in json.loads(body)), accept)
        finally:
            self.assertEqual(js.stop(), 0, js.logs())
        # A 63-bit layout: 406 naming the layout; a fallback range is honoured.
        st, ct, body = self.s.get("/v1/ids?n=3", {"Accept": "application/json; ids=number"})
        err = json.loads(body)
        self.assertEqual((st, err["error"], err["parameter"]), (406, "not_acceptable", "accept"))
        self.assertIn("snowflake", err["message"])
        self.assertIn("63 bits", err["message"])
        st, ct, body = self.s.get(
            "/v1/ids?n=3", {"Accept": "application/json;ids=number, application/json;q=0.1"}
        )
        self.assertEqual((st, ct), (200, "application/json"))
        self.assertTrue(all(type(i) is str for i in json.loads(body)))

    def test_decode_zero_padded_asks_for_from(self):
        # tests/vectors/decode_auto.json: one rule with the core and the CLI.
        with open(
            os.path.join(
                os.path.dirname(os.path.abspath(__file__)), "..", "vectors", "decode_auto.json"
            )
        ) as f:
            cases = json.load(f)["cases"]
        texts = {c["text"] for c in cases}
        for text in ("0000000000000042", "042", "00000000000000000042", "1000000000000000"):
            self.assertIn(text, texts)
        for c in cases:
            text = c["text"]
            st, body = self.s.json("/v1/decode/" + urllib.parse.quote(text, safe=""))
            if "id" in c:
                self.assertEqual((st, body["id"]), (200, c["id"]), c)
            elif text == "":
                # An empty path segment is no ID at all: the route is not matched.
                self.assertEqual((st, body["error"]), (404, "not_found"), c)
            else:
                self.assertEqual(
                    (st, body["error"], body["parameter"]), (400, "bad_request", "id"), c
                )
                self.assertIn(
                    f"position {c['position']}" if c["position"] else "", body["message"], c
                )
                if c["ambiguous"]:
                    self.assertIn("ambiguous", body["message"], c)
                    self.assertIn("from=", body["message"], c)
                else:
                    self.assertNotIn("ambiguous", body["message"], c)
        self.assertEqual(self.s.json("/v1/decode/0000000000000042?from=int")[1]["id"], "42")
        self.assertEqual(self.s.json("/v1/decode/0000000000000042?from=hex")[1]["id"], "66")
        self.assertEqual(self.s.json("/v1/decode/042?from=dec")[1]["id"], "42")
        st, body = self.s.json("/v1/decode/42?from=roman")
        self.assertEqual((st, body["parameter"]), (400, "from"))

    def test_messages(self):
        r = subprocess.run(
            [BIN, "serve", "--listen", f"127.0.0.1:{self.s.port}", "--node", "1"],
            capture_output=True,
            text=True,
            timeout=10,
        )
        self.assertEqual(r.returncode, 1, r.stderr)
        self.assertIn(f"127.0.0.1:{self.s.port}", r.stderr)
        self.assertIn("in use", r.stderr)
        r = subprocess.run(
            [BIN, "serve", "--node", "-1"], capture_output=True, text=True, timeout=10
        )
        self.assertEqual(r.returncode, 2, r.stderr)
        self.assertIn("non-negative", r.stderr)
        self.assertNotIn("unexpected argument", r.stderr)
        r = subprocess.run(
            [BIN, "serve", "--node", "99999999999999999999999"],
            capture_output=True,
            text=True,
            timeout=10,
        )
        self.assertIn("too large", r.stderr)
        self.assertNotIn("no sign", r.stderr)

    def test_503_says_when_to_retry(self):
        d = tempfile.mkdtemp(dir=WORK)
        s = Server("--lease", f"file://{d}", "--lease-ttl-ms", "1000")
        try:
            shutil.rmtree(d)
            with open(d, "w") as f:
                f.write("blocks the lease directory")
            deadline = time.monotonic() + 10
            while True:
                c = s.conn()
                c.request("GET", "/v1/id")
                r = c.getresponse()
                body = r.read()
                c.close()
                if r.status == 503 or time.monotonic() > deadline:
                    break
                time.sleep(0.05)
            self.assertEqual((r.status, r.getheader("Retry-After")), (503, "1"), body)
            self.assertEqual(json.loads(body)["error"], "not_ready")
        finally:
            self.assertEqual(s.stop(), 0, s.logs())
            os.remove(d)


# tests/vectors/seal.json's AES-256 key (NIST's FF1 sample key) and a tweak of its.
SEAL_KEY = "2b7e151628aed2a6abf7158809cf4f3cef4359d8d580aa4f7f036d6f04fc6a94"
SEAL_VECTORS = os.path.join(
    os.path.dirname(os.path.abspath(__file__)), "..", "vectors", "seal.json"
)


def grpc_call(port, method, message=b"", messages=1):
    """One unary gRPC call over h2c with curl: the response message, or the
    grpc-status and grpc-message trailers of a refusal."""
    return grpc_path(port, f"/flakeid.v1.Flakeid/{method}", message, messages)


def grpc_path(port, path, message=b"", messages=1, raw=False):
    """One gRPC call (unary, or a stream of one request) to `path` over h2c with
    curl, `message` sent `messages` times: (grpc-status, the first response
    message (`raw`: every response message, each with its 5-byte prefix), the
    headers and trailers)."""
    body = os.path.join(WORK, f"grpc-{time.monotonic_ns()}")
    with open(body, "wb") as f:
        f.write((b"\0" + struct.pack(">I", len(message)) + message) * messages)
    out = (
        subprocess.run(
            [
                "curl",
                "-sS",
                "--http2-prior-knowledge",
                "-D",
                "-",
                "-o",
                body + ".out",
                "-H",
                "content-type: application/grpc",
                "-H",
                "te: trailers",
                "--data-binary",
                "@" + body,
                f"http://127.0.0.1:{port}{path}",
            ],
            capture_output=True,
            check=True,
        )
        .stdout.decode()
        .lower()
    )
    status = int(re.search(r"grpc-status: (\d+)", out).group(1))
    with open(body + ".out", "rb") as f:
        reply = f.read()
    return status, reply if raw else reply[5:], out


def grpc_messages(raw):
    """The messages of a gRPC response body, each unprefixed."""
    out = []
    while raw:
        n = struct.unpack(">I", raw[1:5])[0]
        out.append(raw[5 : 5 + n])
        raw = raw[5 + n :]
    return out


def proto_bytes_field(msg):
    """Field 1 of a message holding one length-delimited field (tag 0x0a); empty
    when absent."""
    if not msg:
        return b""
    assert msg[0] == 0x0A, msg[:4]
    n, shift, i = 0, 0, 1
    while True:
        n |= (msg[i] & 0x7F) << shift
        shift += 7
        i += 1
        if not msg[i - 1] & 0x80:
            break
    return msg[i : i + n]


def varint(n):
    out = b""
    while True:
        out += bytes([(n & 0x7F) | (0x80 if n > 0x7F else 0)])
        n >>= 7
        if not n:
            return out


def health(port, service=""):
    """grpc.health.v1.Health/Check: (grpc-status, serving status: 1 SERVING, 2 NOT_SERVING)."""
    name = service.encode()
    msg = b"\x0a" + bytes([len(name)]) + name if name else b""
    status, reply, _ = grpc_path(port, "/grpc.health.v1.Health/Check", msg)
    return status, (reply[1] if reply[:1] == b"\x08" else 0)


def wait_health(port, want, seconds=2):
    """Polls Check (both names) until both report `want`; the last statuses."""
    deadline = time.monotonic() + seconds
    while True:
        got = [health(port, n) for n in ("", "flakeid.v1.Flakeid")]
        if got == [(0, want)] * 2 or time.monotonic() > deadline:
            return got
        time.sleep(0.02)


def fixed64s(field_bytes):
    """The packed `repeated fixed64` field 1 of a message (or one `fixed64 id = 1`)."""
    if field_bytes[:1] == b"\x09":
        return [struct.unpack("<Q", field_bytes[1:9])[0]]
    assert field_bytes[:1] == b"\x0a", field_bytes
    n, i = 0, 1
    shift = 0
    while True:
        b = field_bytes[i]
        n |= (b & 0x7F) << shift
        i += 1
        shift += 7
        if b < 0x80:
            break
    return [struct.unpack("<Q", field_bytes[i + k : i + k + 8])[0] for k in range(0, n, 8)]


def packed_ids(ids):
    payload = b"".join(struct.pack("<Q", i) for i in ids)
    n, varint = len(payload), b""
    while True:
        if n < 0x80:
            varint += bytes([n])
            break
        varint += bytes([n & 0x7F | 0x80])
        n >>= 7
    return b"\x0a" + varint + payload


class CallOrder(unittest.TestCase):
    """A request sent after another request's answer arrived gets larger IDs: 8
    client processes (threads under one GIL seldom overlap their requests), each
    sending its next request only once its last answer arrived and after reading
    the largest ID any client has received (shared memory under a lock), over the
    routes of one generator at a time, so that they contend: /v1/id, /v1/ids, gRPC
    Next and Batch share the 64-bit generator; /v1/uuid, /v1/ulid and gRPC
    NextUuid the 128-bit one. A stress test: a generator that breaks the order
    under contention fails it most runs, one that keeps it never."""

    CLIENTS = 8
    ROUNDS = 2500  # per client: about 19 000 HTTP requests and 8 x 119 gRPC calls a run

    def check(self, routes, grpc, *args):
        s = Server("--node", "3", *args)
        ctx = multiprocessing.get_context("fork")
        lock = ctx.Lock()
        latest = ctx.Array(
            "Q", 4, lock=False
        )  # the 64-bit family's largest; the 128-bit's, high and low
        bad = ctx.Queue()

        def parse(route, body):
            if route == "/v1/id":
                return 0, [int(body)]
            if route == "/v1/ids?n=3":
                return 0, [int(i) for i in json.loads(body)]
            if route == "/v1/uuid":
                return 1, [int(body.decode().strip().replace("-", ""), 16)]
            return 1, [int.from_bytes(base32_crockford(body.decode().strip()), "big")]

        def client(k):
            c = s.conn()
            for i in range(self.ROUNDS):
                with lock:  # every answer that had arrived before this request
                    floor = [latest[0], latest[2] << 64 | latest[3]]
                if i % 21 == 20:  # a gRPC call
                    method, msg = grpc[i // 21 % len(grpc)]
                    status, reply, out = grpc_call(s.port, method, msg)
                    assert status == 0, out
                    route = f"gRPC {method}"
                    family, got = (
                        (1, [int.from_bytes(reply[2:18], "big")])
                        if method == "NextUuid"
                        else (0, fixed64s(reply))
                    )
                else:
                    route = routes[(i + k) % len(routes)]
                    c.request("GET", route)
                    r = c.getresponse()
                    body = r.read()
                    assert r.status == 200, body
                    family, got = parse(route, body)
                if got != sorted(set(got)) or got[0] <= floor[family]:
                    bad.put((route, got[0], floor[family]))
                with lock:
                    if family == 0:
                        latest[0] = max(latest[0], got[-1])
                    else:
                        m = max(latest[2] << 64 | latest[3], got[-1])
                        latest[2], latest[3] = m >> 64, m & (2**64 - 1)
            c.close()
            bad.put(None)

        procs = [ctx.Process(target=client, args=(k,)) for k in range(self.CLIENTS)]
        found, done = [], 0
        try:
            for p in procs:
                p.start()
            while done < len(procs):
                item = bad.get(timeout=120)
                if item is None:
                    done += 1
                else:
                    found.append(item)
            for p in procs:
                p.join(10)
                self.assertEqual(p.exitcode, 0)
        finally:
            for p in procs:
                if p.is_alive():
                    p.kill()
            self.assertEqual(s.stop(), 0, s.logs())
        by_route = {}
        for route, _, _ in found:
            by_route[route] = by_route.get(route, 0) + 1
        self.assertEqual(
            by_route, {}, f"answers below one that had already arrived, e.g. {found[:3]}"
        )

    ID_ROUTES = (["/v1/id", "/v1/ids?n=3"], [("Next", b""), ("Batch", b"\x08\x03")])

    def test_64_bit_routes_waiting(self):
        self.check(*self.ID_ROUTES)

    def test_64_bit_routes_borrowing(self):
        # sonyflake: 256 IDs a 10 ms tick, which these clients use up: they borrow.
        self.check(*self.ID_ROUTES, "--layout", "sonyflake", "--overflow", "borrow")

    def test_128_bit_routes(self):
        self.check(["/v1/uuid", "/v1/ulid"], [("NextUuid", b"")])


class WaitOnTheTimer(unittest.TestCase):
    """A generator that must wait for the clock (a state file whose mark is 3 s
    ahead, `--clock-backwards wait`) waits on tokio's timer, not on its worker: with
    one worker thread, /healthz, /v1/uuid and the other waiting requests are answered
    while `/v1/id`, `/v1/ids?n=3` and gRPC `Next` wait, and each then gets an ID past
    the mark."""

    def test_a_clock_wait_stalls_no_other_request_on_the_worker(self):
        state = os.path.join(WORK, f"wait-{time.monotonic_ns()}.state")
        mark = int(time.time() * 1000) + 3000
        with open(state, "w") as f:
            f.write(f"flakeid-state 1\nhigh_water_ms {mark}\nnode 1\n")
        s = Server(
            "--node",
            "1",
            "--state",
            state,
            "--clock-backwards",
            "wait",
            "--max-wait-ms",
            "10000",
            env={"TOKIO_WORKER_THREADS": "1"},
        )
        try:
            done = []  # (what, status, body) in the order answered
            lock = threading.Lock()

            def ask(path):
                status, _, body = s.get(path)
                with lock:
                    done.append((path, status, body))

            def grpc_next():
                status, reply, out = grpc_call(s.port, "Next", b"")
                with lock:
                    done.append(("Next", 200 if status == 0 else status, reply))

            waiting = [threading.Thread(target=ask, args=(p,)) for p in ("/v1/id", "/v1/ids?n=3")]
            waiting.append(threading.Thread(target=grpc_next))
            for t in waiting:
                t.start()
            time.sleep(0.5)  # the three are waiting for the clock
            for path in ("/healthz", "/v1/uuid", "/healthz"):
                ask(path)
            for t in waiting:
                t.join()
            order = [d[0] for d in done]
            # Answered while the ID requests waited: before any of them.
            self.assertEqual(order[:3], ["/healthz", "/v1/uuid", "/healthz"], order)
            self.assertTrue(all(status == 200 for _, status, _ in done), done)
            layout = s.json("/v1/layout")[1]
            shift = layout["datacenter_bits"] + layout["worker_bits"] + layout["sequence_bits"]
            for what, _, body in done[3:]:
                ids = (
                    fixed64s(body)
                    if what == "Next"
                    else json.loads(body)
                    if what.startswith("/v1/ids")
                    else [int(body)]
                )
                self.assertTrue(ids, (what, body))
                for i in ids:
                    self.assertGreaterEqual(
                        (int(i) >> shift) + layout["epoch_ms"],
                        mark,
                        f"{what}: an ID before the state's mark",
                    )
        finally:
            s.stop()


class NoNode(unittest.TestCase):
    """Started with no generator option at all (no node id, also with empty
    FLAKEID_NODE and FLAKEID_LEASE): 128-bit IDs only. The 128-bit routes and gRPC
    NextUuid serve; every 64-bit route answers 409 `no_node_id` (gRPC
    FAILED_PRECONDITION) saying how to serve them; /healthz names the families;
    an option for 64-bit IDs without a node id is still refused."""

    @classmethod
    def setUpClass(cls):
        cls.s = Server(env={"FLAKEID_NODE": "", "FLAKEID_LEASE": ""})

    @classmethod
    def tearDownClass(cls):
        assert cls.s.stop() == 0, cls.s.logs()

    def test_128_bit_routes_serve(self):
        for path in ["/v1/uuid", "/v1/ulid", "/v1/typeid?prefix=user", "/readyz"]:
            st, _, body = self.s.get(path)
            self.assertEqual(st, 200, (path, body))
        st, _, body = self.s.get("/healthz")
        self.assertEqual((st, body), (200, b"ok: 128-bit IDs only (no node id)\n"))
        u = self.s.get("/v1/uuid")[2].decode().strip()
        st, parts = self.s.json(f"/v1/decode/{u}")
        self.assertEqual((st, parts["uuid"], parts["version"]), (200, u, 7))
        status, reply, _ = grpc_call(self.s.port, "NextUuid")
        self.assertEqual((status, len(reply)), (0, 18))
        self.assertEqual(self.s.get("/metrics")[0], 200)
        self.assertEqual(health(self.s.port), (0, 1))

    def test_64_bit_routes_refuse_saying_why(self):
        for path in [
            "/v1/id",
            "/v1/id?format=json",
            "/v1/ids?n=3",
            "/v1/ids?n=5000",
            "/v1/layout",
            "/v1/decode/123",
        ]:
            st, ct, body = self.s.get(path)
            self.assertEqual((st, ct), (409, "application/json"), path)
            err = json.loads(body)
            self.assertEqual(err["error"], "no_node_id", path)
            self.assertIn("--node", err["message"])
        for method, message in [("Next", b""), ("Batch", b"\x08\x03"), ("Stream", b"\x08\x03")]:
            status, _, trailers = grpc_call(self.s.port, method, message)
            self.assertEqual(status, 9, (method, trailers))  # FAILED_PRECONDITION
            self.assertIn("--node", trailers)
        self.assertIn('flakeid_errors_total{kind="no_node_id"}', self.s.get("/metrics")[2].decode())

    def test_options_for_64_bit_ids_still_need_a_node_id(self):
        for args in (["--layout", "sonyflake"], ["--datacenter", "1"]):
            r = subprocess.run(
                [BIN, "serve", "--listen", "127.0.0.1:0", *args],
                capture_output=True,
                text=True,
                timeout=20,
                env=dict(os.environ, FLAKEID_NODE="", FLAKEID_LEASE=""),
            )
            self.assertEqual(r.returncode, 1, (args, r.stderr))
            self.assertIn("no node id given", r.stderr)
        with open(os.path.join(WORK, "no-node-seal.key"), "w") as f:
            f.write(SEAL_KEY + "\n")
        r = subprocess.run(
            [
                BIN,
                "serve",
                "--listen",
                "127.0.0.1:0",
                "--seal-key-file",
                os.path.join(WORK, "no-node-seal.key"),
            ],
            capture_output=True,
            text=True,
            timeout=20,
            env=dict(os.environ, FLAKEID_NODE="", FLAKEID_LEASE=""),
        )
        self.assertNotEqual(r.returncode, 0, r.stderr)
        self.assertIn("sealing is of 64-bit IDs: it needs a node id", r.stderr)


class Sealing(unittest.TestCase):
    """`serve --seal-key-file`: sealed IDs that `flakeid unseal` reads with the
    same key; /v1/unseal, ?sealed=1, gRPC Unseal; the key in no output."""

    @classmethod
    def setUpClass(cls):
        cls.key_file = os.path.join(WORK, "seal.key")
        with open(cls.key_file, "w") as f:
            f.write(SEAL_KEY[:32] + "\n" + SEAL_KEY[32:] + "\n")  # whitespace ignored
        # trace: every event the service can log, so that none may carry the key.
        cls.s = Server(
            "--node",
            "7",
            "--max-batch",
            "10000",
            "--seal-key-file",
            cls.key_file,
            "--seal-tweak",
            "orders",
            env={"FLAKEID_LOG": "trace"},
        )

    @classmethod
    def tearDownClass(cls):
        assert cls.s.stop() == 0, cls.s.logs()

    def cli_unseal(self, ids):
        # --from int: a sealed ID of 16 decimal digits also reads as hex.
        out = subprocess.run(
            [BIN, "unseal", "--key-file", self.key_file, "--tweak", "orders", "--from", "int"],
            input="\n".join(map(str, ids)) + "\n",
            capture_output=True,
            text=True,
            check=True,
        )
        return [int(x) for x in out.stdout.split()]

    def assert_sealed(self, sealed):
        plain = self.cli_unseal(sealed)
        self.assertTrue(all((p >> 12) & 0x3FF == 7 for p in plain), "unsealed: node 7")
        self.assertEqual(plain, sorted(plain), "unsealed: the generator's order")
        self.assertTrue(all(0 <= s < 1 << 63 for s in sealed))
        if len(sealed) >= 20:
            self.assertNotEqual(sealed, sorted(sealed), "sealed IDs are unordered")
        return plain

    def test_every_form_is_sealed_and_unseals_with_the_cli(self):
        c = self.s.conn()
        ids = [int(self.s.get("/v1/id", conn=c)[2])]
        ids.append(int(json.loads(self.s.get("/v1/id?format=json", conn=c)[2])["id"]))
        ids += [int(x) for x in json.loads(self.s.get("/v1/ids?n=100", conn=c)[2])]
        ids += [
            int(json.loads(line))
            for line in self.s.get("/v1/ids?n=50&format=ndjson", conn=c)[2].splitlines()
        ]
        ids += ids_of(self.s.get("/v1/ids?n=5000&format=octet-stream", conn=c)[2])
        c.close()
        self.assertEqual(len(ids), 5152)
        self.assertEqual(len(set(ids)), len(ids))
        self.assert_sealed(ids)

    def test_unseal_and_sealed_decode(self):
        sealed = int(self.s.get("/v1/id")[2])
        [plain] = self.cli_unseal([sealed])
        # ?from=int: a sealed ID of 16 decimal digits also reads as hex.
        st, ct, body = self.s.get(f"/v1/unseal/{sealed}?from=int")
        self.assertEqual((st, ct, int(body)), (200, "text/plain; charset=utf-8", plain))
        st, parts = self.s.json(f"/v1/decode/{sealed}?sealed=1&from=int")
        self.assertEqual((st, parts["id"], parts["node"]), (200, str(plain), 7))
        # Any encoding of a sealed ID, as the CLI prints them.
        for fmt in ["hex", "base32", "base62"]:
            text = subprocess.run(
                [
                    BIN,
                    "seal",
                    "--key-file",
                    self.key_file,
                    "--tweak",
                    "orders",
                    "--format",
                    fmt,
                    str(plain),
                ],
                capture_output=True,
                text=True,
                check=True,
            ).stdout.strip()
            st, _, body = self.s.get(f"/v1/unseal/{text}?from={fmt}&format=json")
            self.assertEqual((st, json.loads(body)["id"]), (200, str(plain)), fmt)
        st, err = self.s.json("/v1/unseal/9223372036854775808")
        self.assertEqual((st, err["parameter"]), (400, "id"))

    @unittest.skipUnless(shutil.which("curl"), "curl not installed")
    def test_grpc(self):
        status, reply, _ = grpc_call(self.s.port, "Next")
        self.assertEqual(status, 0)
        [sealed] = fixed64s(reply)
        status, reply, _ = grpc_call(self.s.port, "Batch", b"\x08" + bytes([100]))  # n = 100
        batch = fixed64s(reply)
        self.assertEqual(len(batch), 100)
        plain = self.assert_sealed([sealed] + batch)
        status, reply, _ = grpc_call(self.s.port, "Unseal", packed_ids([sealed] + batch))
        self.assertEqual((status, fixed64s(reply)), (0, plain))

    def test_vectors_unseal_through_a_service(self):
        with open(SEAL_VECTORS) as f:
            groups = [
                g
                for g in json.load(f)["groups"]
                if g["layout"] == "snowflake" and g["tweak"] in ("", "6f7264657273")
            ]
        for g in groups:
            key_file = os.path.join(WORK, f"vector-{len(g['key'])}-{g['tweak']}.key")
            with open(key_file, "w") as f:
                f.write(g["key"])
            tweak = ["--seal-tweak", bytes.fromhex(g["tweak"]).decode()] if g["tweak"] else []
            s = Server("--node", "1", "--seal-key-file", key_file, *tweak)
            try:
                for case in g["cases"]:
                    st, _, body = s.get(f"/v1/unseal/{case['sealed']}?from=int")
                    self.assertEqual((st, body.decode().strip()), (200, case["id"]), g)
            finally:
                self.assertEqual(s.stop(), 0, s.logs())

    def test_the_key_is_in_no_metric_or_log(self):
        self.s.get("/v1/unseal/1")
        self.s.get("/v1/unseal/zz")
        metrics = self.s.get("/metrics")[2].decode()
        self.assertIn("\nflakeid_sealing 1\n", metrics)
        logs = self.s.logs()
        self.assertIn("sealed=true", logs)
        for probe in [SEAL_KEY[:16], SEAL_KEY[16:32], SEAL_KEY[32:48], SEAL_KEY[48:]]:
            for where, text in [("metrics", metrics), ("logs", logs)]:
                self.assertNotIn(probe, text.lower(), where)

    def test_bad_key_files_are_refused_without_showing_the_key(self):
        secret = "abcdefabcdefabcdefabcdefabcdefabcdef"  # 36 digits: a bad length
        bad = os.path.join(WORK, "bad.key")
        with open(bad, "w") as f:
            f.write(secret)
        for path, want in [
            (bad, "key must be 32, 48 or 64 hex digits"),
            (os.path.join(WORK, "missing.key"), "missing.key"),
        ]:
            out = subprocess.run(
                [BIN, "serve", "--listen", "127.0.0.1:0", "--node", "1", "--seal-key-file", path],
                capture_output=True,
                text=True,
                timeout=20,
            )
            self.assertEqual(out.returncode, 1, out.stderr)
            self.assertIn(want, out.stderr)
            self.assertNotIn("abcdef", out.stderr)


class Unsealed(unittest.TestCase):
    """Without --seal-key-file: plain IDs, and reading sealed ones is refused."""

    @classmethod
    def setUpClass(cls):
        cls.s = Server("--node", "7")

    @classmethod
    def tearDownClass(cls):
        assert cls.s.stop() == 0, cls.s.logs()

    def test_unseal_and_sealed_decode_are_409(self):
        for path in ["/v1/unseal/123", "/v1/decode/123?sealed=1"]:
            st, ct, body = self.s.get(path)
            self.assertEqual((st, ct), (409, "application/json"), path)
            err = json.loads(body)
            self.assertEqual(err["error"], "sealing_not_configured")
            self.assertIn("--seal-key-file", err["message"])
        self.assertIn("\nflakeid_sealing 0\n", self.s.get("/metrics")[2].decode())

    @unittest.skipUnless(shutil.which("curl"), "curl not installed")
    def test_grpc_unseal_is_failed_precondition(self):
        status, _, trailers = grpc_call(self.s.port, "Unseal", packed_ids([1]))
        self.assertEqual(status, 9, trailers)  # FAILED_PRECONDITION
        status, reply, _ = grpc_call(self.s.port, "Next")
        self.assertEqual((status, (fixed64s(reply)[0] >> 12) & 0x3FF), (0, 7))


def make_pki(d, name):
    """A CA (`name`-ca.pem) and a certificate it signed for 127.0.0.1 (`name`.pem,
    `name`.key), made by openssl."""

    def run(*args):
        subprocess.run(["openssl", *args], cwd=d, check=True, capture_output=True)

    with open(os.path.join(d, "ca.ext"), "w") as f:
        f.write("basicConstraints=critical,CA:TRUE\nkeyUsage=critical,keyCertSign,cRLSign\n")
    with open(os.path.join(d, "leaf.ext"), "w") as f:
        f.write(
            "subjectAltName=DNS:localhost,IP:127.0.0.1\nextendedKeyUsage=serverAuth,clientAuth\n"
        )
    run(
        "req",
        "-x509",
        "-newkey",
        "ec",
        "-pkeyopt",
        "ec_paramgen_curve:P-256",
        "-nodes",
        "-days",
        "2",
        "-subj",
        f"/CN={name}-ca",
        "-keyout",
        f"{name}-ca.key",
        "-out",
        f"{name}-ca.pem",
        "-addext",
        "basicConstraints=critical,CA:TRUE",
        "-addext",
        "keyUsage=critical,keyCertSign,cRLSign",
    )
    run(
        "req",
        "-newkey",
        "ec",
        "-pkeyopt",
        "ec_paramgen_curve:P-256",
        "-nodes",
        "-subj",
        f"/CN={name}",
        "-keyout",
        f"{name}.key",
        "-out",
        f"{name}.csr",
    )
    run(
        "x509",
        "-req",
        "-in",
        f"{name}.csr",
        "-CA",
        f"{name}-ca.pem",
        "-CAkey",
        f"{name}-ca.key",
        "-CAcreateserial",
        "-days",
        "2",
        "-extfile",
        "leaf.ext",
        "-out",
        f"{name}.pem",
    )
    return tuple(os.path.join(d, f) for f in (f"{name}-ca.pem", f"{name}.pem", f"{name}.key"))


@unittest.skipUnless(shutil.which("openssl"), "openssl not installed")
class Tls(unittest.TestCase):
    """TLS (hot reload), mTLS and bearer tokens, with openssl-made certificates."""

    def setUp(self):
        import ssl

        self.ssl = ssl
        self.d = tempfile.mkdtemp(dir=WORK)
        self.ca, self.cert, self.key = make_pki(self.d, "server")
        self.other_ca, self.other_cert, self.other_key = make_pki(self.d, "other")

    def https(self, s, path, ca=None, client=None, headers=None):
        ctx = self.ssl.create_default_context(cafile=ca or self.ca)
        if client:
            ctx.load_cert_chain(*client)
        c = http.client.HTTPSConnection("127.0.0.1", s.port, timeout=5, context=ctx)
        c.request("GET", path, headers=headers or {})
        r = c.getresponse()
        body = r.read()
        peer = c.sock.getpeercert(binary_form=True)
        c.close()
        return r.status, body, peer

    def test_bad_files_are_refused_before_a_lease_is_taken(self):
        bad = os.path.join(self.d, "garbage.pem")
        with open(bad, "w") as f:
            f.write("not a certificate\n")
        empty = os.path.join(self.d, "empty-tokens")
        open(empty, "w").close()
        missing = os.path.join(self.d, "missing.pem")
        for args, named in [
            (["--tls-cert", bad, "--tls-key", self.key], bad),
            (["--tls-cert", self.cert, "--tls-key", bad], bad),
            (["--tls-cert", self.other_cert, "--tls-key", self.key], None),  # key of another cert
            (["--tls-cert", self.cert, "--tls-key", self.key, "--tls-client-ca", missing], missing),
            (["--auth-token-file", empty], empty),
        ]:
            leases = tempfile.mkdtemp(dir=WORK)
            out = subprocess.run(
                [BIN, "serve", "--listen", "127.0.0.1:0", "--lease", f"file://{leases}", *args],
                capture_output=True,
                text=True,
                timeout=20,
            )
            self.assertNotEqual(out.returncode, 0, (args, out.stderr))
            if named:
                self.assertIn(named, out.stderr, args)
            self.assertNotIn("listening", out.stderr, args)
            self.assertEqual(os.listdir(leases), [], (args, "a lease was taken", out.stderr))

    def test_tls_wrong_ca_and_hot_reload(self):
        s = Server("--node", "1", "--tls-cert", self.cert, "--tls-key", self.key)
        try:
            st, body, peer = self.https(s, "/v1/id")
            self.assertEqual(st, 200)
            with self.assertRaises(self.ssl.SSLCertVerificationError):
                self.https(s, "/v1/id", ca=self.other_ca)
            out = subprocess.run(
                [
                    "curl",
                    "-sS",
                    "--http2",
                    "--cacert",
                    self.ca,
                    "-w",
                    "\n%{http_version}",
                    f"https://127.0.0.1:{s.port}/v1/id",
                ],
                capture_output=True,
                text=True,
            )
            self.assertEqual(out.stdout.split("\n")[-1], "2", out.stderr)
            # Replace the certificate (same CA, new key): new connections get it.
            _, cert2, key2 = make_pki(tempfile.mkdtemp(dir=WORK), "server")
            shutil.copy(key2, self.key)
            shutil.copy(cert2, self.cert)
            deadline = time.monotonic() + 8
            while time.monotonic() < deadline:
                try:
                    st2, _, peer2 = self.https(
                        s, "/v1/id", ca=os.path.join(os.path.dirname(cert2), "server-ca.pem")
                    )
                    if peer2 != peer:
                        break
                except self.ssl.SSLError:
                    pass
                time.sleep(0.3)
            else:
                self.fail(f"the new certificate was not served: {s.logs()}")
            self.assertIn("reloaded", s.logs())
        finally:
            self.assertEqual(s.stop(), 0, s.logs())

    def test_mtls_refuses_no_or_foreign_client_certificates(self):
        s = Server(
            "--node",
            "1",
            "--tls-cert",
            self.cert,
            "--tls-key",
            self.key,
            "--tls-client-ca",
            self.ca,
        )
        try:
            self.assertEqual(self.https(s, "/v1/id", client=(self.cert, self.key))[0], 200)
            for client in (None, (self.other_cert, self.other_key)):
                with self.assertRaises(
                    (self.ssl.SSLError, ConnectionError, http.client.HTTPException)
                ):
                    self.https(s, "/v1/id", client=client)
        finally:
            self.assertEqual(s.stop(), 0, s.logs())

    def test_probe_listener_answers_without_a_client_certificate(self):
        probe_port = free_port()
        s = Server(
            "--node",
            "1",
            "--tls-cert",
            self.cert,
            "--tls-key",
            self.key,
            "--tls-client-ca",
            self.ca,
            "--probe-listen",
            f"127.0.0.1:{probe_port}",
        )
        try:
            for path, want in (
                ("/healthz", 200),
                ("/readyz", 200),
                ("/v1/id", 404),
                ("/metrics", 404),
            ):
                c = http.client.HTTPConnection("127.0.0.1", probe_port, timeout=5)
                c.request("GET", path)
                r = c.getresponse()
                r.read()
                c.close()
                self.assertEqual(r.status, want, path)
            with self.assertRaises((self.ssl.SSLError, ConnectionError, http.client.HTTPException)):
                self.https(s, "/healthz")
        finally:
            self.assertEqual(s.stop(), 0, s.logs())

    def test_metrics_behind_the_token_when_asked(self):
        tokens = os.path.join(self.d, "metrics-tokens")
        with open(tokens, "w") as f:
            f.write("scrape-token\n")
        s = Server("--node", "1", "--auth-token-file", tokens, "--metrics-auth")
        try:
            self.assertEqual(s.get("/metrics")[0], 401)
            self.assertEqual(
                s.get("/metrics", headers={"Authorization": "Bearer scrape-token"})[0], 200
            )
            self.assertEqual(s.get("/healthz")[0], 200)
        finally:
            self.assertEqual(s.stop(), 0, s.logs())
        out = subprocess.run(
            [BIN, "serve", "--listen", "127.0.0.1:0", "--node", "1", "--metrics-auth"],
            capture_output=True,
            text=True,
            timeout=20,
        )
        self.assertEqual(out.returncode, 2, out.stderr)
        self.assertIn("--auth-token-file", out.stderr)

    def test_bearer_tokens(self):
        tokens = os.path.join(self.d, "tokens")
        with open(tokens, "w") as f:
            f.write("# service tokens\nalpha-token\n\nbeta-token\n")
        s = Server("--node", "1", "--auth-token-file", tokens)
        try:
            self.assertEqual(s.get("/healthz")[0], 200)
            self.assertEqual(s.get("/metrics")[0], 200)
            for h in (
                {},
                {"Authorization": "Bearer wrong"},
                {"Authorization": "Basic alpha-token"},
            ):
                st, ct, body = s.get("/v1/id", headers=h)
                self.assertEqual(
                    (st, ct, json.loads(body)["error"]),
                    (401, "application/json", "unauthorized"),
                    h,
                )
            for t in ("alpha-token", "beta-token"):
                self.assertEqual(s.get("/v1/id", headers={"Authorization": f"Bearer {t}"})[0], 200)
            # gRPC: UNAUTHENTICATED (16) without a token, decided on the headers alone. The
            # request has no body: with one, the server's early answer (and its reset of
            # the stream it no longer reads) could reach curl while it was still sending,
            # and curl then printed nothing (seen once in a `make ci`).
            out = subprocess.run(
                [
                    "curl",
                    "-sS",
                    "--http2-prior-knowledge",
                    "-X",
                    "POST",
                    "-D",
                    "-",
                    "-o",
                    "/dev/null",
                    "-H",
                    "content-type: application/grpc",
                    "-H",
                    "te: trailers",
                    f"http://127.0.0.1:{s.port}/flakeid.v1.Flakeid/Next",
                ],
                capture_output=True,
            )
            self.assertIn(
                b"grpc-status: 16", out.stdout.lower(), (out.returncode, out.stderr, s.logs())
            )
        finally:
            self.assertEqual(s.stop(), 0, s.logs())


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


def frame(kind, flags, stream, payload):
    return (
        len(payload).to_bytes(3, "big") + bytes([kind, flags]) + stream.to_bytes(4, "big") + payload
    )


def h2_grpc_stream_then_ping(port, seconds):
    """An h2c connection that starts an endless gRPC `Stream`, never reads it (no
    WINDOW_UPDATE), and keeps the connection busy with a PING every 0.1 s: the
    connection-idle timeout never fires. Returns (seconds until the server closed
    the connection or None, bytes received)."""
    c = socket.create_connection(("127.0.0.1", port), timeout=5)
    c.sendall(b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n" + frame(4, 0, 0, b""))
    path = b"/flakeid.v1.Flakeid/Stream"
    block = (
        b"\x83\x86\x04"
        + bytes([len(path)])
        + path
        + b"\x01\x09localhost"
        + b"\x0f\x10\x10application/grpc"
        + b"\x00\x02te\x08trailers"
    )
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
        test.assertEqual(wait_health(s.port, 1), [(0, 1)] * 2)
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
            test.assertEqual(wait_health(s.port, 2, 1), [(0, 2)] * 2)
        finally:
            for p in frozen:
                os.kill(p, signal.SIGCONT)
        # Once the store answers again the lease is renewed and IDs resume.
        deadline = time.monotonic() + 10
        while s.get("/readyz")[0] != 200 and time.monotonic() < deadline:
            time.sleep(0.05)
        test.assertEqual(s.get("/v1/id")[0], 200)
        test.assertEqual(wait_health(s.port, 1, 1), [(0, 1)] * 2)
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


def cleanup():
    """Removes the servers' logs and files (run.py, after the tests)."""
    shutil.rmtree(WORK, ignore_errors=True)


# ---- budgets, shares and tokens -----------------------------------------------------


class TokenFileLines(unittest.TestCase):
    def test_a_token_listed_twice_is_refused_at_start_naming_the_file_and_lines(self):
        # x, B, B, C: with the duplicate, B's requests took C's share (places ORed).
        d = tempfile.mkdtemp(dir=WORK)
        tokens = os.path.join(d, "tokens")
        with open(tokens, "w") as f:
            f.write("x\nB\nB\nC\n")
        leases = tempfile.mkdtemp(dir=WORK)
        out = subprocess.run(
            [
                BIN,
                "serve",
                "--listen",
                "127.0.0.1:0",
                "--lease",
                f"file://{leases}",
                "--auth-token-file",
                tokens,
            ],
            capture_output=True,
            text=True,
            timeout=20,
        )
        self.assertNotEqual(out.returncode, 0, out.stderr)
        self.assertIn(tokens, out.stderr)
        self.assertIn("lines 2 and 3", out.stderr)
        self.assertNotIn("listening", out.stderr)
        self.assertEqual(os.listdir(leases), [], ("a lease was taken", out.stderr))


class ClientIpv6Prefix(unittest.TestCase):
    def test_a_prefix_out_of_range_is_refused_naming_the_setting_and_range(self):
        for bits in ("0", "129", "99999999999"):
            leases = tempfile.mkdtemp(dir=WORK)
            out = subprocess.run(
                [
                    BIN,
                    "serve",
                    "--listen",
                    "127.0.0.1:0",
                    "--lease",
                    f"file://{leases}",
                    "--client-ipv6-prefix",
                    bits,
                ],
                capture_output=True,
                text=True,
                timeout=20,
            )
            self.assertNotEqual(out.returncode, 0, out.stderr)
            self.assertIn("client_ipv6_prefix must be in 1..=128", out.stderr)
            self.assertNotIn("listening", out.stderr)
            self.assertEqual(os.listdir(leases), [], ("a lease was taken", out.stderr))

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
