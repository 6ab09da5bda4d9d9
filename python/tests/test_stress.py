"""Seconds of real contention on one generator from Python threads.

A race in the engine once answered a healthy generator with false "clock moved
backwards" errors under contention, a few times per 10 s. Here 3 threads share one
generator on the real clock for FLAKEID_STRESS_SECS seconds (default 3), mostly
through next_ids (which releases the GIL, so the threads really run at once),
in strict and borrow mode: no error at all, no duplicate, each thread increasing.
"""

from __future__ import annotations

import operator
import os
import threading
import time
from itertools import chain, islice

import pytest

import flakeid

SECS = float(os.environ.get("FLAKEID_STRESS_SECS", "3"))


@pytest.mark.parametrize("overflow", ["wait", "borrow"])
def test_three_threads_on_the_real_clock(overflow: str) -> None:
    gen = flakeid.Generator(node=12, overflow=overflow)
    deadline = time.monotonic() + SECS
    results: list[list[int]] = [[] for _ in range(3)]
    errors: list[BaseException] = []

    def run(i: int) -> None:
        ids = results[i]
        try:
            while time.monotonic() < deadline:
                ids.extend(gen.next_ids(20_000))
                ids.append(gen.next_id())
        except BaseException as e:  # noqa: BLE001 - every error is a failure here
            errors.append(e)

    threads = [threading.Thread(target=run, args=(i,)) for i in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, f"{len(errors)} errors under contention, first: {errors[0]!r}"
    # Borrow mode makes millions of IDs a second: the checks iterate in C (map over
    # operator.lt; sorted() merges the threads' increasing runs), not in Python code.
    for ids in results:
        assert all(map(operator.lt, ids, islice(ids, 1, None))), "a thread saw its IDs go backwards"
    merged = sorted(chain.from_iterable(results))
    assert all(map(operator.lt, merged, islice(merged, 1, None))), "duplicate IDs"
    assert merged
