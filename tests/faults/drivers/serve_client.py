"""The fault suite's client of one `flakeid serve` (docs/faults.md).

    serve_client.py --port P --dir DIR [--rate R] [--seed S]

Runs in the generator's network namespace and talks to its `flakeid serve` on
127.0.0.1:P over one keep-alive HTTP/1.1 connection: runs of `GET /v1/id` and
`GET /v1/ids?n=N&format=octet-stream` batches, paced to R IDs/s. It records every ID
it is given in the format the Rust driver documents (tests/faults/driver/src/main.rs):
`DIR/TAG-0.ids` per serve process, where TAG is the process's tag that the harness
writes to `DIR/serve.tag` before it starts that process (and only once the previous
one has exited). Events go to `DIR/client.events.jsonl`.

Which process answered: the tag is read before connecting and again after the first
answer on the connection (`GET /v1/layout`, which also gives the node id the
process leased); the two must agree, or the client connects again.
"""

import argparse
import array
import http.client
import json
import os
import random
import select
import signal
import struct
import time

stop = False


def on_term(_sig, _frame):
    global stop
    stop = True


def sleep(seconds):
    select.select([], [], [], seconds)


HEAD = struct.Struct("<QQII")


class Client:
    def __init__(self, a):
        self.a = a
        self.rng = random.Random(a.seed)
        self.fd = os.open(os.path.join(a.dir, "client.events.jsonl"), os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
        self.conn = None
        self.tag = None
        self.ids = None
        self.flushed = 0
        self.failing = None

    def log(self, ev, **fields):
        os.write(self.fd, (json.dumps({"t": time.monotonic_ns(), "ev": ev, **fields}) + "\n").encode())

    def read_tag(self):
        try:
            with open(os.path.join(self.a.dir, "serve.tag")) as f:
                return f.read().strip()
        except OSError:
            return None

    def close(self):
        if self.conn:
            self.conn.close()
        self.conn = None
        if self.ids:
            self.ids.close()
            self.ids = None

    def fail(self, kind, msg):
        if self.failing and self.failing[0] == kind:
            self.failing[1] += 1
        else:
            self.log("refused", kind=kind, msg=msg[:300], tag=self.tag)
            self.failing = [kind, 1]

    def get(self, path):
        self.conn.request("GET", path)
        r = self.conn.getresponse()
        return r.status, r.read()

    def connect(self):
        before = self.read_tag()
        if before is None:
            return False
        self.conn = http.client.HTTPConnection("127.0.0.1", self.a.port, timeout=15)
        try:
            status, body = self.get("/v1/layout")
        except (OSError, http.client.HTTPException) as e:
            self.close()
            self.fail("conn", f"{type(e).__name__}: {e}")
            return False
        after = self.read_tag()
        if status != 200 or before != after:
            self.close()
            return False
        info = json.loads(body)
        if before != self.tag:
            self.tag = before
            self.log("acquired", tag=before, inc=0, node=info["node"], lease=info["lease"])
        self.ids = open(os.path.join(self.a.dir, f"{before}-0.ids"), "ab", buffering=1 << 16)
        return True

    def record(self, t0, t1, op, ids):
        self.ids.write(HEAD.pack(t0, t1, len(ids), op))
        self.ids.write(ids.tobytes())
        if t1 - self.flushed > 50_000_000:
            self.ids.flush()
            self.flushed = t1

    def one_op(self):
        """One run of singles or one batch; returns how many IDs it got."""
        singles = self.rng.randrange(10) < 3
        got = array.array("Q")
        t0 = time.monotonic_ns()
        error = None
        try:
            if singles:
                for _ in range(1 + self.rng.randrange(8)):
                    status, body = self.get("/v1/id")
                    if status != 200:
                        error = (status, body)
                        break
                    got.append(int(body))
            else:
                bits = self.a.max_batch.bit_length()
                n = min(1 + self.rng.randrange(1 << (1 + self.rng.randrange(bits))), self.a.max_batch)
                status, body = self.get(f"/v1/ids?n={n}&format=octet-stream")
                if status != 200:
                    error = (status, body)
                else:
                    got.frombytes(body)
                    got.byteswap()  # the service sends 8 bytes big-endian per ID
        except (OSError, http.client.HTTPException) as e:
            t1 = time.monotonic_ns()
            if got:
                self.record(t0, t1, 1, got)
            self.close()
            self.fail("conn", f"{type(e).__name__}: {e}")
            return len(got)
        t1 = time.monotonic_ns()
        if got:
            self.record(t0, t1, 1 if singles else 2, got)
        if error is None:
            if self.failing:
                self.log("resumed", kind=self.failing[0], errors=self.failing[1], tag=self.tag)
                self.failing = None
        else:
            status, body = error
            try:
                info = json.loads(body)
                kind, msg = info.get("error", str(status)), info.get("message", "")
            except ValueError:
                kind, msg = str(status), body[:200].decode(errors="replace")
            self.fail(kind, msg)
            sleep(0.002)
        return len(got)

    def run(self):
        burst = self.a.rate * 0.05
        budget = 0.0
        last = time.monotonic_ns()
        while not stop:
            if self.conn is None and not self.connect():
                sleep(0.02)
                continue
            now = time.monotonic_ns()
            budget = min(budget + (now - last) * self.a.rate / 1e9, burst)
            last = now
            if budget < 0:
                sleep(min(max(-budget / self.a.rate, 0.0002), 0.02))
                continue
            budget -= self.one_op()
        self.close()
        self.log("exit")


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--port", type=int, required=True)
    p.add_argument("--dir", required=True)
    p.add_argument("--rate", type=float, default=12000)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--max-batch", type=int, default=4000)
    a = p.parse_args()
    signal.signal(signal.SIGTERM, on_term)
    signal.signal(signal.SIGINT, on_term)
    Client(a).run()


if __name__ == "__main__":
    main()
