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

Which lease: a serve process whose lease is lost leases again in place (any free
node id), so one process can have several incarnations, K = 0, 1, ...
in `DIR/TAG-K.ids`. After any refusal, and whenever an ID's node field is not the
incarnation's node, the client asks `GET /v1/layout` again: a new `lease_epoch` or
node starts the next incarnation (an `acquired` event with `inc`). A multi-chunk
answer never mixes two leases (the server pins its generator per response).
"""

import argparse
import array
import http.client
import json
import os
import random
import time

from recording import Events, Ids, Pace, sleep, stop_on_signals, stopped


class Client:
    def __init__(self, a):
        self.a = a
        self.rng = random.Random(a.seed)
        self.events = Events(os.path.join(a.dir, "client.events.jsonl"))
        self.conn = None
        self.tag = None
        self.ids = None
        self.failing = None
        self.inc = 0
        self.node = None
        self.epoch = None
        self.node_of = None
        self.suspect = False

    def log(self, ev, **fields):
        self.events.log(ev, **fields)

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
        seq, nbits = info["sequence_bits"], info["datacenter_bits"] + info["worker_bits"]
        self.node_of = lambda id_: (id_ >> seq) & ((1 << nbits) - 1)
        if before != self.tag:
            self.tag = before
            self.inc = 0
            self.set_lease(info)
        elif info.get("lease_epoch", 0) != self.epoch or info["node"] != self.node:
            self.inc += 1
            self.set_lease(info)
        self.open_ids()
        self.suspect = False
        return True

    def set_lease(self, info):
        self.node, self.epoch = info["node"], info.get("lease_epoch", 0)
        self.log("acquired", tag=self.tag, inc=self.inc, node=self.node, lease=info["lease"])

    def recheck(self):
        """After a refusal or an ID of another node: which lease answers now? A new
        one starts the next incarnation (and file). False: not held yet."""
        status, body = self.get("/v1/layout")
        if status != 200:
            return False
        info = json.loads(body)
        if info["lease"] not in ("held", "none"):
            return False
        if info.get("lease_epoch", 0) != self.epoch or info["node"] != self.node:
            self.ids.close()
            self.inc += 1
            self.set_lease(info)
            self.open_ids()
        self.suspect = False
        return True

    def open_ids(self):
        # Appended to: the same process's incarnation again after a new connection.
        self.ids = Ids(os.path.join(self.a.dir, f"{self.tag}-{self.inc}.ids"), "ab")

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
                n = min(
                    1 + self.rng.randrange(1 << (1 + self.rng.randrange(bits))), self.a.max_batch
                )
                status, body = self.get(f"/v1/ids?n={n}&format=octet-stream")
                if status != 200:
                    error = (status, body)
                else:
                    got.frombytes(body)
                    got.byteswap()  # the service sends 8 bytes big-endian per ID
        except (OSError, http.client.HTTPException) as e:
            t1 = time.monotonic_ns()
            if got:
                self.ids.record(t0, t1, 1, got)
            self.close()
            self.fail("conn", f"{type(e).__name__}: {e}")
            return len(got)
        t1 = time.monotonic_ns()
        if got and self.node_of(got[-1]) != self.node:
            # Issued under another lease than the one recorded: the IDs before the
            # first of another node are the old incarnation's; find out which lease
            # gave the rest.
            cut = next(i for i, id_ in enumerate(got) if self.node_of(id_) != self.node)
            if cut:
                self.ids.record(t0, t1, 1, got[:cut])
                got = got[cut:]
            try:
                self.recheck()
            except (OSError, http.client.HTTPException) as e:
                self.close()
                self.fail("conn", f"{type(e).__name__}: {e}")
                return len(got)
        if got:
            self.ids.record(t0, t1, 1 if singles else 2, got)
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
            self.suspect = True
            sleep(0.002)
        return len(got)

    def run(self):
        pace = Pace(self.a.rate)
        while not stopped():
            if self.conn is None and not self.connect():
                sleep(0.02)
                continue
            if self.suspect:
                try:
                    held = self.recheck()
                except (OSError, http.client.HTTPException) as e:
                    self.close()
                    self.fail("conn", f"{type(e).__name__}: {e}")
                    continue
                if not held:
                    sleep(0.01)
                    continue
            if pace.wait():
                continue
            pace.spend(self.one_op())
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
    stop_on_signals()
    Client(a).run()


if __name__ == "__main__":
    main()
