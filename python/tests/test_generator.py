"""Generator behaviour through the binding: options, accessors, threads, GIL, pickling."""

from __future__ import annotations

import copy
import os
import pickle
import threading
import time

import pytest

import flakeid

T0 = 1_700_000_000_000


def test_defaults_and_accessors() -> None:
    gen = flakeid.Generator(3, 7)
    assert (gen.datacenter, gen.worker, gen.node) == (3, 7, 3 << 5 | 7)
    assert gen.layout == flakeid.Layout.preset("snowflake")
    assert (gen.overflow, gen.clock_backwards) == ("wait", "error")
    assert (gen.max_borrow_ms, gen.max_wait_ms) == (2000, 1000)
    # The ID's time is the clock cache's, which lags the OS clock by the cache
    # thread's wake-up latency (docs/design.md, "The clock"), milliseconds on a loaded
    # machine: "now-ish" is checked with a second's slack, as in Java's ApiTest.
    before = int(time.time() * 1000) - 1000
    parts = flakeid.decompose(gen.next_id())
    assert before <= parts.timestamp_ms <= int(time.time() * 1000) + 5
    assert (parts.datacenter, parts.worker) == (3, 7)
    assert gen.last_issued_ms == parts.timestamp_ms
    assert repr(gen).startswith('Generator(datacenter=3, worker=7, node=103, layout="snowflake"')


def test_ids_increase_and_decode() -> None:
    gen = flakeid.Generator(node=9, layout="flake", overflow="borrow")
    ids = [gen.next_id() for _ in range(10_000)] + gen.next_ids(10_000)
    assert ids == sorted(ids) and len(set(ids)) == len(ids)
    assert all(flakeid.decompose(i, "flake").node == 9 for i in ids[::97])
    b = gen.next_bytes()
    assert len(b) == 8 and flakeid.from_bytes(b) > ids[-1]
    assert gen.next_ids(0) == []


def test_layout_object_and_node_sources(monkeypatch: pytest.MonkeyPatch) -> None:
    sony = flakeid.Layout(
        time_bits=39,
        node_bits=16,
        sequence_bits=8,
        tick_ms=10,
        epoch_ms=1409529600000,
        order="time|seq|node",
    )
    gen = flakeid.Generator(worker=513, layout=sony)
    assert (gen.datacenter, gen.worker, gen.node) == (0, 513, 513)
    assert gen.layout == sony and gen.layout.name == "sonyflake"  # the core recognises the preset
    monkeypatch.setenv("FLAKEID_TEST_NODE", "77")
    assert flakeid.Generator(node="env:FLAKEID_TEST_NODE").node == 77
    assert flakeid.resolve_node("env:FLAKEID_TEST_NODE", "instagram") == 77
    assert flakeid.Generator(node="12").node == 12
    monkeypatch.setenv("FLAKEID_TEST_NODE", "5000")
    with pytest.raises(flakeid.ConfigError, match="FLAKEID_TEST_NODE=5000"):
        flakeid.Generator(node="env:FLAKEID_TEST_NODE")
    monkeypatch.delenv("FLAKEID_TEST_NODE")
    with pytest.raises(flakeid.ConfigError, match="not set"):
        flakeid.Generator(node="env:FLAKEID_TEST_NODE")
    assert flakeid.host_ordinal("web-3") == 3
    assert flakeid.host_ordinal("db-12.example.com") == 12
    with pytest.raises(flakeid.ConfigError):
        flakeid.host_ordinal("web")
    assert isinstance(flakeid.hostname(), str)


def test_mac_and_ipv4_sources_fit_the_layout() -> None:
    # These depend on the machine: either a value that fits, or a ConfigError saying why not.
    for source in ("mac", "ipv4"):
        try:
            node = flakeid.resolve_node(source, "sonyflake")
        except flakeid.ConfigError as e:
            assert str(e)
        else:
            assert 0 <= node <= 0xFFFF
            assert flakeid.Generator(node=source, layout="sonyflake").node == node


def test_manual_clock() -> None:
    clock = flakeid.ManualClock(T0, auto_advance_ms=1)
    clock.advance(5)
    assert clock.now_ms() == T0 + 5 and clock.auto_advance_ms == 1
    clock.set(T0)
    gen = flakeid.Generator(node=1, clock=clock, layout=flakeid.Layout(sequence_bits=2))
    ids = gen.next_ids(9)  # 4 per tick: waits twice, the clock advancing itself
    assert [flakeid.decompose(i, gen.layout).timestamp_ms for i in ids] == [T0] * 4 + [
        T0 + 1
    ] * 4 + [T0 + 2]
    assert clock.now_ms() == T0 + 2
    assert repr(clock) == f"ManualClock({T0 + 2}, auto_advance_ms=1)"


def test_pickling_and_copying_are_refused() -> None:
    gen = flakeid.Generator(1, 1)
    for attempt in (lambda: pickle.dumps(gen), lambda: copy.copy(gen), lambda: copy.deepcopy(gen)):
        with pytest.raises(TypeError, match="would issue the same IDs"):
            attempt()


def test_eight_threads_share_one_generator() -> None:
    for node, overflow in ((67, "wait"), (68, "borrow")):  # each built while the other lives
        gen = flakeid.Generator(node=node, overflow=overflow)
        results: list[list[int]] = [[] for _ in range(8)]
        barrier = threading.Barrier(8)

        def work(out: list[int]) -> None:
            barrier.wait()
            for _ in range(200):
                out.append(gen.next_id())
                out.extend(gen.next_ids(100))

        threads = [threading.Thread(target=work, args=(r,)) for r in results]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        every = [i for r in results for i in r]
        assert len(every) == 8 * 200 * 101
        assert len(set(every)) == len(every), f"{overflow}: duplicate IDs"
        for r in results:
            assert all(a < b for a, b in zip(r, r[1:])), f"{overflow}: a thread saw its IDs go down"


def test_large_batches_release_the_gil() -> None:
    # A strict generator is capped at 4,096 IDs/ms, so 400k IDs take ~100 ms of
    # waiting for the clock; another Python thread must run meanwhile.
    gen = flakeid.Generator(1, 1)
    done = threading.Event()
    ticks = 0

    def batch() -> None:
        gen.next_ids(400_000)
        done.set()

    t = threading.Thread(target=batch)
    t.start()
    while not done.is_set():
        ticks += 1
        time.sleep(0)
    t.join()
    assert ticks > 100, f"the main thread ran only {ticks} times during the batch"


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork()")
def test_new_generator_in_child_works() -> None:
    flakeid.Generator(1, 1).next_id()
    pid = os.fork()
    if pid == 0:
        ok = flakeid.Generator(1, 2).next_id() > 0
        os._exit(0 if ok else 1)
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0


def test_waiting_for_the_clock_releases_the_gil() -> None:
    # The tick's 2 sequence numbers are used up and the manual clock stands still:
    # next_id() waits until this (Python) thread advances it, which it can only do
    # if the waiting call released the GIL. A watchdog turns a regression (a hang)
    # into a failure.
    import faulthandler

    clock = flakeid.ManualClock(T0)
    gen = flakeid.Generator(node=1, layout=flakeid.Layout(sequence_bits=1), clock=clock)
    gen.next_ids(2)
    got: list[int] = []
    t = threading.Thread(target=lambda: got.append(gen.next_id()))
    faulthandler.dump_traceback_later(20, exit=True)
    try:
        t.start()
        time.sleep(0.05)
        assert not got, "next_id() did not wait for the clock"
        clock.advance(1)
        t.join(10)
    finally:
        faulthandler.cancel_dump_traceback_later()
    assert got and flakeid.decompose(got[0], gen.layout).timestamp_ms == T0 + 1


def test_next_ids_array_is_the_same_run_without_ints() -> None:
    import array

    clock = flakeid.ManualClock(1_700_000_000_000)
    gen = flakeid.Generator(1, 2, overflow="borrow", max_borrow_ms=60_000, clock=clock)
    first = gen.next_ids(3)
    arr = gen.next_ids_array(5000)
    assert isinstance(arr, array.array) and arr.typecode == "Q" and len(arr) == 5000
    ids = arr.tolist()
    assert ids == sorted(set(ids)) and ids[0] > first[-1]
    assert all(flakeid.decompose(i).node == gen.node for i in ids[::997])
    assert gen.next_id() > ids[-1]
    assert len(gen.next_ids_array(0)) == 0


def test_stats_count_ids_waits_rollbacks_and_lead() -> None:
    clock = flakeid.ManualClock(T0, auto_advance_ms=1)
    gen = flakeid.Generator(node=1, max_sequence=3, clock=clock)
    assert gen.stats() == {
        "ids_issued": 0,
        "tick_waits": 0,
        "tick_wait_us": 0,
        "lead_ms": 0,
        "clock_rollbacks": 0,
        "max_rollback_ms": 0,
        "lease_state": None,
        "lease_remaining_ms": None,
        "node_origin": "explicit",
    }
    gen.next_ids(5)  # 4 per tick: the fifth waits out a tick
    clock.set(T0 - 100)
    with pytest.raises(flakeid.ClockMovedBackwardsError):
        gen.next_id()
    s = gen.stats()
    assert (s["ids_issued"], s["tick_waits"], s["clock_rollbacks"]) == (5, 1, 1)
    assert s["max_rollback_ms"] >= 100

    borrow = flakeid.Generator(
        node=1, max_sequence=3, overflow="borrow", clock=flakeid.ManualClock(T0)
    )
    borrow.next_ids(4 * 11)
    assert borrow.stats()["lead_ms"] == 10 and borrow.stats()["ids_issued"] == 44


def test_generators_on_one_node_id_share_its_counter() -> None:
    """Generators of one process on one node id issue from one counter: a second one
    is no error, close() (or leaving a with block) ends only its own, and a rebuild
    (a notebook cell run again, a generator per request, one left to the collector)
    goes on above every ID issued, without waiting."""
    with flakeid.Generator(node=901) as a:
        b = flakeid.Generator(node=901, overflow="borrow")
        ids = [g.next_id() for _ in range(1000) for g in (a, b)]
        assert ids == sorted(set(ids))
    with pytest.raises(flakeid.ConfigError) as e:
        a.next_id()
    assert e.value.field == "generator"  # type: ignore[attr-defined]
    last = b.next_id()
    assert last > ids[-1]
    b.close()
    for i in range(2000):
        g = flakeid.Generator(node=901)
        got = g.next_id()
        assert got > last
        last = got
        if i % 2:
            g.close()
    # Another max_sequence shares the counter too (a per-call cap on the tick).
    capped = flakeid.Generator(node=901, max_sequence=255)
    got = capped.next_id()
    assert got > last and flakeid.decompose(got).sequence <= 255


def test_no_node_id_takes_one_for_the_process() -> None:
    """With no node id, every generator of this process takes the same one, picked
    on the host: one counter, no repeats."""
    a, b = flakeid.Generator(), flakeid.Generator()
    assert a.node == b.node
    ids = [g.next_id() for _ in range(500) for g in (a, b)]
    assert ids == sorted(set(ids))
