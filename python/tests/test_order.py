"""Call order across threads: a call on a shared generator that starts after
another call returned gets the larger ID (docs/design.md, "Many threads on one
generator: call order"). Large batches release the GIL, so threads issue side by
side (a single ID holds it: those calls alone could not overlap); each thread reads
the largest ID any thread has returned before each call."""

from __future__ import annotations

import threading
from typing import Callable

import flakeid


def violations(call: Callable[[], list[int]], threads: int = 4, calls: int = 300) -> int:
    latest, lock, bad = [0], threading.Lock(), [0]

    def run() -> None:
        for _ in range(calls):
            before = latest[0]
            got = call()
            with lock:
                bad[0] += sum(1 for i in got if i <= before)
                latest[0] = max(latest[0], got[-1])

    ts = [threading.Thread(target=run) for _ in range(threads)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    return bad[0]


def test_a_shared_borrowing_generator_keeps_call_order() -> None:
    g = flakeid.Generator(overflow="borrow")
    n = iter(range(10**9))
    assert violations(lambda: g.next_ids(2000) if next(n) % 2 else [g.next_id()]) == 0

