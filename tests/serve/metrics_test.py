"""What the service says about itself: /v1/layout and the probes, /metrics (its
conventions and counts), the access log, /openapi.json (with schemathesis)."""

import json
import os
import re
import subprocess
import time
import unittest

from fixture import HERE, ROUTES, SEAL_KEY, WORK, OneServer, Server, parse_metrics


class Metrics(OneServer, unittest.TestCase):
    ARGS = ("--node", "7", "--max-batch", "1000")

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
