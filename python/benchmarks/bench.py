"""flakeid against other Python ID generators, in one run, as one table.

    make bench-python        # or: python benchmarks/bench.py [--quick]

Every row calls its generator in the same tight loop (`for _ in repeat(None, n): f()`),
so the numbers include Python's call overhead, as user code pays it. Each row is the
median of several timed runs.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import threading
import time
import uuid
from itertools import repeat
from typing import Callable, Optional

import flakeid

CAP = 4_096_000  # IDs/s: 12 sequence bits per 1 ms tick


def per_call(f: Callable[[], object], n: int, runs: int) -> float:
    """Median seconds per call of `f` over `runs` runs of `n` calls."""
    times = []
    for _ in range(runs):
        t0 = time.perf_counter_ns()
        for _ in repeat(None, n):
            f()
        times.append((time.perf_counter_ns() - t0) / n / 1e9)
    return statistics.median(times)


def threaded(f: Callable[[], object], threads: int, n: int, runs: int) -> float:
    """Median wall seconds per call of `f` when `threads` threads share it, each making
    n // threads calls, started together (the GIL lets one run Python at a time)."""
    times = []
    for _ in range(runs):
        start = threading.Barrier(threads + 1)

        def work() -> None:
            start.wait()
            for _ in repeat(None, n // threads):
                f()

        pool = [threading.Thread(target=work) for _ in range(threads)]
        for t in pool:
            t.start()
        t0 = time.perf_counter_ns()
        start.wait()
        for t in pool:
            t.join()
        times.append((time.perf_counter_ns() - t0) / (n // threads * threads) / 1e9)
    return statistics.median(times)


def row(name: str, seconds_per_id: float, note: str = "") -> tuple[str, str, str, str]:
    return (name, f"{1 / seconds_per_id / 1e6:8.2f}", f"{seconds_per_id * 1e9:7.1f}", note)


def main(argv: Optional[list[str]] = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--quick", action="store_true", help="fewer, shorter runs")
    args = ap.parse_args(argv)
    runs = 3 if args.quick else 5
    n = 500_000 if args.quick else 2_000_000
    rows = []

    strict = flakeid.Generator(1, 1)
    s = per_call(strict.next_id, CAP, runs)  # ~1 s of IDs per run
    rows.append(
        row("flakeid next_id() strict (overflow=wait)", s, f"{1 / s / CAP:.1%} of the 4.096M/s cap")
    )

    # The same strict path where the sequence never runs out: the per-call cost.
    wide = flakeid.Layout(time_bits=41, node_bits=0, sequence_bits=22)
    unthrottled = flakeid.Generator(layout=wide)
    rows.append(
        row(
            "flakeid next_id() strict, below the cap",
            per_call(unthrottled.next_id, n, runs),
            "per-call cost (22-bit sequence: never waits)",
        )
    )

    borrow = flakeid.Generator(1, 2, overflow="borrow")
    rows.append(row("flakeid next_id() borrow", per_call(borrow.next_id, n, runs)))

    # One borrowing generator shared by threads, beside uuid-utils' uuid7() (also
    # thread-safe): total IDs per second.
    try:
        import uuid_utils

        peer: Optional[Callable[[], object]] = uuid_utils.uuid7
    except ImportError:
        peer = None
    for threads in (1, 2, 4, 8):
        # A window no run reaches (the default 2 s would cap these rows at 4.096M/s).
        gen = flakeid.Generator(1, 4 + threads, overflow="borrow", max_borrow_ms=86_400_000)
        shared = threaded(gen.next_id, threads, n, runs)
        note = f"{threads} thread(s) sharing one generator"
        if peer is not None:
            note += f"; uuid-utils uuid7() {1 / threaded(peer, threads, n, runs) / 1e6:.2f}M/s"
        rows.append(row(f"flakeid next_id() borrow, {threads} thread(s)", shared, note))

    batch_gen = flakeid.Generator(1, 3, overflow="borrow", max_borrow_ms=60_000)
    batch, arrays = [], []
    for _ in range(runs):
        t0 = time.perf_counter_ns()
        ids = batch_gen.next_ids(1_000_000)
        batch.append((time.perf_counter_ns() - t0) / len(ids) / 1e9)
        del ids  # freeing the last batch's ints is not part of making this one
        t0 = time.perf_counter_ns()
        arr = batch_gen.next_ids_array(1_000_000)
        arrays.append((time.perf_counter_ns() - t0) / len(arr) / 1e9)
        del arr
    rows.append(
        row(
            "flakeid next_ids(1_000_000) borrow",
            statistics.median(batch),
            "per ID, list[int] included",
        )
    )
    rows.append(
        row(
            "flakeid next_ids_array(1_000_000) borrow",
            statistics.median(arrays),
            "per ID, array('Q'): no int per ID",
        )
    )

    # Sealed IDs (docs/sealing.md): against `cargo bench -p flakeid-seal` (seal/aes128).
    sealer = flakeid.Sealer(bytes(range(16)))
    seal_n = n // 10
    rows.append(
        row(
            "flakeid Sealer.seal(id) aes128",
            per_call(lambda: sealer.seal(910499571847892992), seal_n, runs),
            "per sealed ID, not an ID made",
        )
    )
    rows.append(
        row(
            "flakeid Sealer.unseal(id) aes128",
            per_call(lambda: sealer.unseal(575246358720680725), seal_n, runs),
        )
    )

    try:
        from snowflake import SnowflakeGenerator  # snowflake-id

        sf = SnowflakeGenerator(42)
        s = per_call(sf.__next__, n, runs)
        rows.append(row("snowflake-id next(gen)", s, "returns None past 4096/ms"))
    except ImportError:
        rows.append(("snowflake-id", "-", "-", "not installed (pip install snowflake-id)"))
    # The 128-bit family beside uuid-utils: its uuid7() returns its own UUID type,
    # compat.uuid7() the standard library's (as flakeid's uuid7() does).
    uuids = flakeid.UuidGenerator()
    rows.append(row("flakeid UuidGenerator.uuid7()", per_call(uuids.uuid7, n, runs), "uuid.UUID"))
    rows.append(row("flakeid UuidGenerator.uuid7_int()", per_call(uuids.uuid7_int, n, runs), "int"))
    rows.append(
        row("flakeid UuidGenerator.uuid7_bytes()", per_call(uuids.uuid7_bytes, n, runs), "16 bytes")
    )
    rows.append(
        row("flakeid uuid7() (process-wide)", per_call(flakeid.uuid7, n, runs), "uuid.UUID")
    )
    rows.append(
        row("flakeid uuid7_int() (process-wide)", per_call(flakeid.uuid7_int, n, runs), "int")
    )
    try:
        import uuid_utils
        import uuid_utils.compat

        rows.append(
            row(
                "uuid-utils uuid7()",
                per_call(uuid_utils.uuid7, n, runs),
                "128-bit, uuid_utils.UUID",
            )
        )
        rows.append(
            row(
                "uuid-utils compat.uuid7()", per_call(uuid_utils.compat.uuid7, n, runs), "uuid.UUID"
            )
        )
    except ImportError:
        rows.append(("uuid-utils uuid7()", "-", "-", "not installed (pip install uuid-utils)"))
    rows.append(row("uuid.uuid4() (stdlib)", per_call(uuid.uuid4, n // 4, runs), "128-bit, random"))

    head = ("generator", "M IDs/s", "ns/ID", "note")
    widths = [max(len(r[i]) for r in [head, *rows]) for i in range(4)]
    print(f"flakeid {flakeid.__version__}, Python {sys.version.split()[0]}, median of {runs} runs")
    for i, r in enumerate([head, *rows]):
        print("| " + " | ".join(c.ljust(w) for c, w in zip(r, widths)) + " |")
        if i == 0:
            print("|" + "|".join("-" * (w + 2) for w in widths) + "|")
    return 0


if __name__ == "__main__":
    sys.exit(main())
