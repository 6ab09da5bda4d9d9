"""IDs in call order under contention on every route of a generator, and a wait for
the clock that stalls no other request."""

import json
import multiprocessing
import os
import threading
import time
import unittest

from fixture import WORK, Server, base32_crockford
from grpc_client import grpc_call, pb


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
                    if method == "NextUuid":
                        family, got = 1, [int.from_bytes(reply.uuid, "big")]
                    else:
                        family, got = 0, [reply.id] if method == "Next" else list(reply.ids)
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

    ID_ROUTES = (
        ["/v1/id", "/v1/ids?n=3"],
        [("Next", pb.NextRequest()), ("Batch", pb.BatchRequest(n=3))],
    )

    def test_64_bit_routes_waiting(self):
        self.check(*self.ID_ROUTES)

    def test_64_bit_routes_borrowing(self):
        # sonyflake: 256 IDs a 10 ms tick, which these clients use up: they borrow.
        self.check(*self.ID_ROUTES, "--layout", "sonyflake", "--overflow", "borrow")

    def test_128_bit_routes(self):
        self.check(["/v1/uuid", "/v1/ulid"], [("NextUuid", pb.NextUuidRequest())])


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
                status, reply, out = grpc_call(s.port, "Next")
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
                    [body.id]
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
