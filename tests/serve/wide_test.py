"""The 128-bit routes (/v1/uuid, /v1/ulid, /v1/typeid, gRPC NextUuid and BatchUuid's
neighbours): forms, batches in every format, order, and a server with no node id."""

import json
import os
import subprocess
import unittest
import uuid

from fixture import BIN, SEAL_KEY, WORK, OneServer, Server, base32_crockford, serve_refused
from grpc_client import SERVING, grpc_call, health, pb


class Wide(OneServer, unittest.TestCase):
    ARGS = ("--node", "7", "--max-batch", "1000")

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
        self.assertEqual((status, len(reply.uuid)), (0, 16))
        self.assertEqual(self.s.get("/metrics")[0], 200)
        self.assertEqual(health(self.s.port), (0, SERVING))

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
        for method, message in [
            ("Next", pb.NextRequest()),
            ("Batch", pb.BatchRequest(n=3)),
            ("Stream", pb.StreamRequest(n=3)),
        ]:
            status, _, trailers = grpc_call(self.s.port, method, message)
            self.assertEqual(status, 9, (method, trailers))  # FAILED_PRECONDITION
            self.assertIn("--node", trailers)
        self.assertIn('flakeid_errors_total{kind="no_node_id"}', self.s.get("/metrics")[2].decode())

    def test_options_for_64_bit_ids_still_need_a_node_id(self):
        env = dict(os.environ, FLAKEID_NODE="", FLAKEID_LEASE="")
        for args in (["--layout", "sonyflake"], ["--datacenter", "1"]):
            code, err = serve_refused(*args, env=env)
            self.assertEqual(code, 1, (args, err))
            self.assertIn("no node id given", err)
        key = os.path.join(WORK, "no-node-seal.key")
        with open(key, "w") as f:
            f.write(SEAL_KEY + "\n")
        code, err = serve_refused("--seal-key-file", key, env=env)
        self.assertNotEqual(code, 0, err)
        self.assertIn("sealing is of 64-bit IDs: it needs a node id", err)
