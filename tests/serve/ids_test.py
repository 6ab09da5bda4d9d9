"""The 64-bit routes (/v1/id, /v1/ids) as their clients see them: formats, batches,
refusals naming the parameter, HTTP semantics, h2c."""

import json
import os
import re
import shutil
import subprocess
import tempfile
import time
import unittest

from fixture import BIN, ROUTES, WORK, OneServer, Server, ids_of


def node_of(id_):
    return (id_ >> 12) & 0x3FF


class Ids(OneServer, unittest.TestCase):
    ARGS = ("--node", "7", "--max-batch", "1000")

    def test_one_id_text_and_json(self):
        st, ct, body = self.s.get("/v1/id")
        self.assertEqual((st, ct), (200, "text/plain; charset=utf-8"))
        self.assertEqual(node_of(int(body)), 7)
        st, ct, body = self.s.get("/v1/id", {"Accept": "application/json"})
        self.assertEqual((st, ct), (200, "application/json"))
        self.assertIsInstance(json.loads(body)["id"], str)
        st, _, body = self.s.get("/v1/id?format=json")
        self.assertIn("id", json.loads(body))
        st, _, body = self.s.get("/v1/id?format=xml")
        self.assertEqual(st, 400)
        self.assertEqual(json.loads(body)["parameter"], "format")

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
        self.assertTrue(all(node_of(i) == 7 for i in ids))
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
        self.assertEqual(node_of(int(out[0])), 7)


class Semantics(OneServer, unittest.TestCase):
    """HTTP semantics and messages."""

    ARGS = ("--node", "7")

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
