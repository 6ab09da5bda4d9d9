"""A gRPC client for the tests: curl over h2c carries the calls, and the protobuf
runtime (the `protobuf` package, pinned by make setup-serve) writes and reads the
messages.

`pb` holds a class for each message of flakeid.v1 (from the descriptors the server
commits and serves, crates/flakeid-server/src/generated/flakeid.fds.bin: no protoc),
of grpc.health.v1 and of grpc.reflection.v1 and v1alpha (`pb.v1alpha` for those).
"""

import os
import re
import struct
import subprocess
import time
import types

from google.protobuf import descriptor_pb2, descriptor_pool, message_factory, text_format

from fixture import HERE, WORK

FDS = os.path.join(HERE, "..", "..", "crates", "flakeid-server", "src", "generated")
FDS = os.path.join(FDS, "flakeid.fds.bin")

# The messages of gRPC's health.proto and reflection.proto that the tests send and
# read (proto3 parsers skip the fields left out); the server serves these files through
# reflection, and Grpc.test_grpc_health_and_reflection holds these declarations to them.
HEALTH = """
name: "health.proto" package: "grpc.health.v1" syntax: "proto3"
message_type {
  name: "HealthCheckRequest"
  field { name: "service" number: 1 label: LABEL_OPTIONAL type: TYPE_STRING }
}
message_type {
  name: "HealthCheckResponse"
  field {
    name: "status" number: 1 label: LABEL_OPTIONAL type: TYPE_ENUM
    type_name: ".grpc.health.v1.HealthCheckResponse.ServingStatus"
  }
  enum_type {
    name: "ServingStatus"
    value { name: "UNKNOWN" number: 0 }
    value { name: "SERVING" number: 1 }
    value { name: "NOT_SERVING" number: 2 }
    value { name: "SERVICE_UNKNOWN" number: 3 }
  }
}
"""
REFLECTION = """
name: "reflection_%(v)s.proto" package: "grpc.reflection.%(v)s" syntax: "proto3"
message_type {
  name: "ServerReflectionRequest"
  field { name: "host" number: 1 label: LABEL_OPTIONAL type: TYPE_STRING }
  field {
    name: "file_containing_symbol" number: 4 label: LABEL_OPTIONAL type: TYPE_STRING
    oneof_index: 0
  }
  field {
    name: "list_services" number: 7 label: LABEL_OPTIONAL type: TYPE_STRING oneof_index: 0
  }
  oneof_decl { name: "message_request" }
}
message_type {
  name: "ServerReflectionResponse"
  field { name: "valid_host" number: 1 label: LABEL_OPTIONAL type: TYPE_STRING }
  field {
    name: "file_descriptor_response" number: 4 label: LABEL_OPTIONAL type: TYPE_MESSAGE
    type_name: ".grpc.reflection.%(v)s.FileDescriptorResponse" oneof_index: 0
  }
  field {
    name: "list_services_response" number: 6 label: LABEL_OPTIONAL type: TYPE_MESSAGE
    type_name: ".grpc.reflection.%(v)s.ListServiceResponse" oneof_index: 0
  }
  oneof_decl { name: "message_response" }
}
message_type {
  name: "FileDescriptorResponse"
  field { name: "file_descriptor_proto" number: 1 label: LABEL_REPEATED type: TYPE_BYTES }
}
message_type {
  name: "ListServiceResponse"
  field {
    name: "service" number: 1 label: LABEL_REPEATED type: TYPE_MESSAGE
    type_name: ".grpc.reflection.%(v)s.ServiceResponse"
  }
}
message_type {
  name: "ServiceResponse"
  field { name: "name" number: 1 label: LABEL_OPTIONAL type: TYPE_STRING }
}
"""


def declared():
    """The FileDescriptorProtos of HEALTH and REFLECTION (v1, v1alpha)."""
    texts = [HEALTH] + [REFLECTION % {"v": v} for v in ("v1", "v1alpha")]
    return [text_format.Parse(t, descriptor_pb2.FileDescriptorProto()) for t in texts]


def committed():
    """The FileDescriptorProto of flakeid.proto the server commits and serves."""
    with open(FDS, "rb") as f:
        [file] = descriptor_pb2.FileDescriptorSet.FromString(f.read()).file
    return file


def message_classes():
    pool = descriptor_pool.DescriptorPool()
    files = [committed()] + declared()
    for f in files:
        pool.Add(f)
    classes = message_factory.GetMessageClassesForFiles([f.name for f in files], pool)
    pb = types.SimpleNamespace(v1alpha=types.SimpleNamespace())
    for full, cls in classes.items():
        ns = pb.v1alpha if full.startswith("grpc.reflection.v1alpha.") else pb
        setattr(ns, full.rsplit(".", 1)[1], cls)
    return pb


pb = message_classes()
SERVING, NOT_SERVING = 1, 2


def grpc_path(port, path, message=b"", messages=1):
    """One gRPC call (unary, or a stream of one request) to `path` over h2c with curl,
    `message` (a protobuf message, or bytes sent as they are) sent `messages` times:
    (grpc-status, every response message's bytes, the headers and trailers)."""
    body = os.path.join(WORK, f"grpc-{time.monotonic_ns()}")
    with open(body, "wb") as f:
        f.write(grpc_frame(message) * messages)
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
        raw = f.read()
    replies = []
    while raw:  # the length-prefixed messages of the response body
        n = struct.unpack(">I", raw[1:5])[0]
        replies.append(raw[5 : 5 + n])
        raw = raw[5 + n :]
    return status, replies, out


def grpc_frame(message):
    """`message` (a protobuf message, or bytes as they are) as a gRPC body carries it:
    uncompressed, after its 4-byte length."""
    if not isinstance(message, bytes):
        message = message.SerializeToString()
    return b"\0" + struct.pack(">I", len(message)) + message


def grpc_stream(port, method, request=b"", messages=1):
    """A call of flakeid.v1.Flakeid's `method`: (grpc-status, its responses, each read
    as the method's output message, the headers and trailers)."""
    status, replies, out = grpc_path(port, f"/flakeid.v1.Flakeid/{method}", request, messages)
    output = getattr(pb, pb_method(method).output_type.name)
    return status, [output.FromString(r) for r in replies], out


def grpc_call(port, method, request=b"", messages=1):
    """One unary call of flakeid.v1.Flakeid's `method`: (grpc-status, its response
    message or None, the headers and trailers)."""
    status, replies, out = grpc_stream(port, method, request, messages)
    return status, (replies[0] if replies else None), out


def pb_method(method):
    return pb.NextRequest.DESCRIPTOR.file.services_by_name["Flakeid"].methods_by_name[method]


def reflect(port, version, **request):
    """One ServerReflectionInfo call (`version`: "v1" or "v1alpha"): (grpc-status, the
    ServerReflectionResponse)."""
    ns = pb if version == "v1" else pb.v1alpha
    path = f"/grpc.reflection.{version}.ServerReflection/ServerReflectionInfo"
    status, replies, _ = grpc_path(port, path, ns.ServerReflectionRequest(**request))
    return status, ns.ServerReflectionResponse.FromString(replies[0]) if replies else None


def health(port, service=""):
    """grpc.health.v1.Health/Check: (grpc-status, serving status: SERVING, NOT_SERVING;
    0 without an answer)."""
    request = pb.HealthCheckRequest(service=service)
    status, replies, _ = grpc_path(port, "/grpc.health.v1.Health/Check", request)
    return status, (pb.HealthCheckResponse.FromString(replies[0]).status if replies else 0)


def wait_health(port, want, seconds=2):
    """Polls Check (both names) until both report `want`; the last statuses."""
    deadline = time.monotonic() + seconds
    while True:
        got = [health(port, n) for n in ("", "flakeid.v1.Flakeid")]
        if got == [(0, want)] * 2 or time.monotonic() > deadline:
            return got
        time.sleep(0.02)
