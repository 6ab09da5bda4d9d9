"""Reading IDs back: /v1/decode/{id} (64-bit IDs in every text form, UUIDs, ULIDs,
TypeIDs, as the CLI does), and sealed IDs: /v1/unseal, ?sealed=1, gRPC Unseal."""

import json
import os
import shutil
import subprocess
import unittest
import urllib.parse
import uuid

from fixture import BIN, SEAL_KEY, SEAL_VECTORS, WORK, OneServer, Server, ids_of, serve_refused
from grpc_client import grpc_call, pb


class Decode(OneServer, unittest.TestCase):
    ARGS = ("--node", "7")

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
        sealed = reply.id
        status, reply, _ = grpc_call(self.s.port, "Batch", pb.BatchRequest(n=100))
        batch = list(reply.ids)
        self.assertEqual(len(batch), 100)
        plain = self.assert_sealed([sealed] + batch)
        status, reply, _ = grpc_call(self.s.port, "Unseal", pb.UnsealRequest(ids=[sealed] + batch))
        self.assertEqual((status, list(reply.ids)), (0, plain))

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
            code, err = serve_refused("--node", "1", "--seal-key-file", path)
            self.assertEqual(code, 1, err)
            self.assertIn(want, err)
            self.assertNotIn("abcdef", err)


class Unsealed(OneServer, unittest.TestCase):
    """Without --seal-key-file: plain IDs, and reading sealed ones is refused."""

    ARGS = ("--node", "7")

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
        status, _, trailers = grpc_call(self.s.port, "Unseal", pb.UnsealRequest(ids=[1]))
        self.assertEqual(status, 9, trailers)  # FAILED_PRECONDITION
        status, reply, _ = grpc_call(self.s.port, "Next")
        self.assertEqual((status, (reply.id >> 12) & 0x3FF), (0, 7))
