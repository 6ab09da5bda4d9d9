"""The harness's own view of who holds which node id: the store's lease records,
read every 100 ms from inside the store's namespace (no partition, delay or loss
reaches it), appended to a JSON-lines file for the checker.

    poller.py --kind redis|postgres|etcd --namespace NS --out FILE [--interval-ms 100]
              [--host H --port P] [--socket DIR] [--ca F --cert F --key F]

Each line: `{"a": t_sent, "b": t_answered, "recs": [[node, token, remaining_ms], ...]}`
(CLOCK_MONOTONIC ns) or `{"a", "b", "err": "..."}`. A record says: at some instant
between a and b the store held `node` for `token` and would keep it for
`remaining_ms` more unless the holder gave it up or the store lost its data.

Clients written here from the stores' wire protocols, with a timeout on every
read (a frozen store must not freeze the poller): RESP for Redis (one Lua script,
so the snapshot is atomic), PostgreSQL's simple-query protocol over the Unix socket
(trust login), etcd's JSON gateway (`/v3/kv/range`, `/v3/lease/timetolive`).
Nothing here comes from flakeid.
"""

import argparse
import base64
import http.client
import json
import os
import select
import signal
import socket
import ssl
import struct
import time

MAX_NODE = 63  # the suite's generators take the lowest free ids: far below this
stop = False


def on_term(_s, _f):
    global stop
    stop = True


class SocketClient:
    """A store client over one socket (`s`), connected by its first poll."""

    def __init__(self, a):
        self.a, self.s = a, None

    def close(self):
        if self.s:
            self.s.close()
        self.s = None


class Redis(SocketClient):
    SCRIPT = (
        "local r = {} for i = 0, tonumber(ARGV[2]) do local k = ARGV[1] .. i "
        "local v = redis.call('GET', k) if v then r[#r+1] = i r[#r+1] = v "
        "r[#r+1] = redis.call('PTTL', k) end end return r"
    )

    def __init__(self, a):
        super().__init__(a)
        self.buf = b""

    def _line(self):
        while b"\r\n" not in self.buf:
            chunk = self.s.recv(65536)
            if not chunk:
                raise OSError("closed")
            self.buf += chunk
        line, self.buf = self.buf.split(b"\r\n", 1)
        return line

    def _reply(self):
        line = self._line()
        t, rest = line[:1], line[1:]
        if t in (b"+", b":"):
            return int(rest) if t == b":" else rest.decode()
        if t == b"-":
            raise RuntimeError(rest.decode())
        if t == b"$":
            n = int(rest)
            if n < 0:
                return None
            while len(self.buf) < n + 2:
                chunk = self.s.recv(65536)
                if not chunk:
                    raise OSError("closed")
                self.buf += chunk
            data, self.buf = self.buf[:n], self.buf[n + 2 :]
            return data.decode()
        if t == b"*":
            return [self._reply() for _ in range(int(rest))]
        raise RuntimeError(f"bad reply {line!r}")

    def poll(self):
        if self.s is None:
            self.s = socket.create_connection((self.a.host, self.a.port), timeout=1)
            self.buf = b""
        args = ["EVAL", self.SCRIPT, "0", f"flakeid:{self.a.namespace}:node:", str(MAX_NODE)]
        msg = f"*{len(args)}\r\n" + "".join(f"${len(x.encode())}\r\n{x}\r\n" for x in args)
        self.s.sendall(msg.encode())
        r = self._reply()
        return [[int(r[i]), r[i + 1], int(r[i + 2])] for i in range(0, len(r), 3)]


class Postgres(SocketClient):
    def _recv(self, n):
        out = b""
        while len(out) < n:
            chunk = self.s.recv(n - len(out))
            if not chunk:
                raise OSError("closed")
            out += chunk
        return out

    def _msg(self):
        t = self._recv(1)
        (n,) = struct.unpack("!I", self._recv(4))
        return t, self._recv(n - 4)

    def _connect(self):
        self.s = socket.socket(socket.AF_UNIX)
        self.s.settimeout(1)
        self.s.connect(os.path.join(self.a.socket, f".s.PGSQL.{self.a.port}"))
        params = b"user\0postgres\0database\0postgres\0\0"
        self.s.sendall(struct.pack("!II", 8 + len(params), 196608) + params)
        while True:
            t, body = self._msg()
            if t == b"E":
                raise RuntimeError(body.decode(errors="replace"))
            if t == b"R" and struct.unpack("!I", body[:4])[0] != 0:
                raise RuntimeError("the poller needs a trust login on the socket")
            if t == b"Z":
                return

    def poll(self):
        if self.s is None:
            self._connect()
        ns = self.a.namespace.replace("'", "''")
        q = (
            "SELECT node_id, holder, "
            "floor(extract(epoch FROM expires_at - clock_timestamp()) * 1000)::bigint "
            f"FROM flakeid_worker_node WHERE namespace = '{ns}' AND node_id >= 0 "
            "AND holder IS NOT NULL AND expires_at > clock_timestamp()"
        ).encode() + b"\0"
        self.s.sendall(b"Q" + struct.pack("!I", 4 + len(q)) + q)
        rows, err = [], None
        while True:
            t, body = self._msg()
            if t == b"D":
                (ncol,) = struct.unpack("!H", body[:2])
                pos, cols = 2, []
                for _ in range(ncol):
                    (ln,) = struct.unpack("!i", body[pos : pos + 4])
                    pos += 4
                    cols.append(None if ln < 0 else body[pos : pos + ln].decode())
                    pos += max(ln, 0)
                rows.append([int(cols[0]), cols[1], int(cols[2])])
            elif t == b"E":
                err = body.decode(errors="replace")
            elif t == b"Z":
                break
        if err:
            if "42P01" in err:  # the table does not exist (yet, or after DROP): nothing held
                return []
            raise RuntimeError(err)
        return rows


class Etcd:
    def __init__(self, a):
        self.a, self.c = a, None
        self.prefix = f"flakeid/{a.namespace}/node/".encode()

    def _post(self, path, body):
        self.c.request("POST", path, json.dumps(body), {"Content-Type": "application/json"})
        r = self.c.getresponse()
        data = r.read()
        if r.status != 200:
            raise RuntimeError(f"{path}: {r.status} {data[:200]!r}")
        return json.loads(data)

    def poll(self):
        if self.c is None:
            if self.a.ca:
                ctx = ssl.create_default_context(cafile=self.a.ca)
                ctx.load_cert_chain(self.a.cert, self.a.key)
                self.c = http.client.HTTPSConnection(
                    self.a.host, self.a.port, timeout=1, context=ctx
                )
            else:
                self.c = http.client.HTTPConnection(self.a.host, self.a.port, timeout=1)

        def b64(b):
            return base64.b64encode(b).decode()

        end = self.prefix[:-1] + bytes([self.prefix[-1] + 1])
        kvs = self._post("/v3/kv/range", {"key": b64(self.prefix), "range_end": b64(end)}).get(
            "kvs", []
        )
        recs = []
        for kv in kvs:
            node = int(base64.b64decode(kv["key"])[len(self.prefix) :])
            token = base64.b64decode(kv.get("value", "")).decode()
            lease = kv.get("lease")
            if not lease:
                continue
            ttl = int(self._post("/v3/lease/timetolive", {"ID": lease}).get("TTL", -1))
            # Whole seconds, rounded down by etcd: a lower bound on what is left.
            if ttl > 0:
                recs.append([node, token, ttl * 1000])
        return recs

    def close(self):
        if self.c:
            self.c.close()
        self.c = None


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--kind", required=True, choices=["redis", "postgres", "etcd"])
    p.add_argument("--namespace", required=True)
    p.add_argument("--out", required=True)
    p.add_argument("--interval-ms", type=int, default=100)
    p.add_argument("--host", default="127.0.0.1")
    p.add_argument("--port", type=int)
    p.add_argument("--socket")
    p.add_argument("--ca")
    p.add_argument("--cert")
    p.add_argument("--key")
    a = p.parse_args()
    signal.signal(signal.SIGTERM, on_term)
    signal.signal(signal.SIGINT, on_term)
    client = {"redis": Redis, "postgres": Postgres, "etcd": Etcd}[a.kind](a)
    fd = os.open(a.out, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
    while not stop:
        t0 = time.monotonic_ns()
        try:
            recs = client.poll()
            line = {"a": t0, "b": time.monotonic_ns(), "recs": recs}
        except Exception as e:  # noqa: BLE001 - any failure is one failed poll
            client.close()
            line = {"a": t0, "b": time.monotonic_ns(), "err": f"{type(e).__name__}: {e}"[:200]}
        os.write(fd, (json.dumps(line) + "\n").encode())
        left = a.interval_ms / 1000 - (time.monotonic_ns() - t0) / 1e9
        if left > 0:
            select.select([], [], [], left)


if __name__ == "__main__":
    main()
