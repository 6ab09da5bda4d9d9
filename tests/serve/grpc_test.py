"""gRPC on the HTTP port: flakeid.v1.Flakeid's streams and refusals, grpc.health.v1,
server reflection (v1 and v1alpha)."""

import json
import re
import unittest
import uuid

from google.protobuf import descriptor_pb2

from fixture import OneServer
from grpc_client import SERVING, committed, declared, grpc_call, grpc_stream, health, pb, reflect


class Grpc(OneServer, unittest.TestCase):
    ARGS = ("--node", "7", "--max-batch", "1000")

    def test_grpc_batch_uuid(self):
        """gRPC `BatchUuid`: a stream of chunks of 16-byte UUIDv7s, strictly
        increasing, in order with `NextUuid` calls around it; `n` outside
        1..=--max-batch is INVALID_ARGUMENT naming `n`."""

        def next_uuid():
            status, reply, _ = grpc_call(self.s.port, "NextUuid")
            self.assertEqual(status, 0)
            return int.from_bytes(reply.uuid, "big")

        seen = [next_uuid()]
        for n in (1, 999, 1000):
            status, chunks, out = grpc_stream(self.s.port, "BatchUuid", pb.BatchUuidRequest(n=n))
            self.assertEqual(status, 0, (n, out))
            packed = b"".join(c.uuids for c in chunks)
            batch = [int.from_bytes(packed[i : i + 16], "big") for i in range(0, len(packed), 16)]
            self.assertEqual(len(batch), n)
            self.assertTrue(all(uuid.UUID(int=u).version == 7 for u in batch))
            self.assertEqual(batch, sorted(set(batch)), f"n={n}: not strictly increasing")
            seen += batch + [next_uuid()]
        self.assertEqual(
            seen, sorted(set(seen)), "a batch out of order with the NextUuid calls around it"
        )
        for n in (0, 1001, 1 << 40):
            status, _, out = grpc_stream(self.s.port, "BatchUuid", pb.BatchUuidRequest(n=n))
            self.assertEqual(status, 3, out)
            self.assertIn("grpc-message: n:%20must%20be%20in%201..=1000", out)

    def test_grpc_health_and_reflection(self):
        self.assertEqual(health(self.s.port), (0, SERVING))
        self.assertEqual(health(self.s.port, "flakeid.v1.Flakeid"), (0, SERVING))
        self.assertEqual(health(self.s.port, "no.such.Service")[0], 5)  # NOT_FOUND
        # ServerReflectionInfo, v1 and v1alpha: list_services names them all, and
        # file_containing_symbol serves flakeid.proto as committed, and health.proto and
        # reflection.proto as grpc_client declares the part of them the tests use.
        for v in ("v1", "v1alpha"):
            status, reply = reflect(self.s.port, v, list_services="")
            self.assertEqual(status, 0, v)
            names = {s.name for s in reply.list_services_response.service}
            self.assertLessEqual({"flakeid.v1.Flakeid", "grpc.health.v1.Health"}, names, v)
            want = {f.package: f for f in [committed(), *declared()]}
            for symbol in (
                "flakeid.v1.Flakeid",
                "grpc.health.v1.Health",
                f"grpc.reflection.{v}.ServerReflection",
            ):
                status, reply = reflect(self.s.port, v, file_containing_symbol=symbol)
                self.assertEqual(status, 0, (v, symbol))
                [served] = [
                    f
                    for f in map(
                        descriptor_pb2.FileDescriptorProto.FromString,
                        reply.file_descriptor_response.file_descriptor_proto,
                    )
                    if symbol.startswith(f.package + ".")
                ]
                if served.package == "flakeid.v1":
                    self.assertEqual(served, want[served.package], v)
                else:
                    self.assert_declares_a_part_of(want[served.package], served)

    def assert_declares_a_part_of(self, declared, served):
        """Each message, field and enum value `declared` names is in `served`, the same."""

        def by_name(items):
            return {i.name: i for i in items}

        messages = by_name(served.message_type)
        for m in declared.message_type:
            where = f"{declared.package}.{m.name}"
            self.assertIn(m.name, messages, where)
            fields = by_name(messages[m.name].field)
            oneofs = [o.name for o in messages[m.name].oneof_decl]
            for f in m.field:
                s = fields.get(f.name)
                self.assertIsNotNone(s, f"{where}.{f.name}")
                self.assertEqual(
                    (f.number, f.label, f.type, f.type_name),
                    (s.number, s.label, s.type, s.type_name),
                    f"{where}.{f.name}",
                )
                if f.HasField("oneof_index"):
                    self.assertEqual(
                        m.oneof_decl[f.oneof_index].name, oneofs[s.oneof_index], f.name
                    )
            enums = by_name(messages[m.name].enum_type)
            for e in m.enum_type:
                values = {(x.name, x.number) for x in enums[e.name].value}
                self.assertLessEqual({(x.name, x.number) for x in e.value}, values, e.name)

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
        status, _, out = grpc_call(self.s.port, "Batch", pb.BatchRequest(n=2**32 + 5))
        self.assertEqual(status, 3)
        self.assertIn("got%204294967301", out)
        # Two request messages to a method that takes one: INTERNAL, not an answer
        # to the first.
        for method, msg in (
            ("Batch", pb.BatchRequest(n=1)),
            ("Next", pb.NextRequest()),
            ("Stream", pb.StreamRequest(n=1)),
        ):
            status, reply, out = grpc_call(self.s.port, method, msg, messages=2)
            self.assertEqual(status, 13, (method, out))
            self.assertIsNone(reply, method)
        self.assertEqual(grpc_call(self.s.port, "Batch", pb.BatchRequest(n=1))[0], 0)
        # A message over the largest real request (Unseal of --max-batch 1000 IDs):
        # refused before it is read, and counted.
        before = calls("Unseal", 11)
        status, _, _ = grpc_call(self.s.port, "Unseal", pb.UnsealRequest(ids=range(2000)))
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
