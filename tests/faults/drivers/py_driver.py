"""The fault suite's in-process Python generator (docs/faults.md).

    py_driver.py --url URL --dir DIR --tag TAG [--ttl-ms N] [--rate R] [--seed S]

Builds a leased `flakeid.Generator`, asks it for IDs — runs of `next_id()` and
`next_ids_array(n)` batches, paced to R IDs/s — and records every ID it is given in
the format the Rust driver documents (tests/faults/driver/src/main.rs):
`DIR/TAG-K.ids` per incarnation K, events in `DIR/TAG.events.jsonl`, times on
CLOCK_MONOTONIC. A generator whose lease was lost is dropped and a new one built.

Runs under libfaketime with FAKETIME_DONT_FAKE_MONOTONIC=1, where `time.sleep`
fails with EINVAL: it sleeps with recording.py's `sleep`.
"""

import argparse
import array
import os
import random
import time

import flakeid
from recording import Events, Ids, Pace, sleep, stop_on_signals, stopped


def code_of(err):
    # The stable codes the Rust and Node drivers log (ErrorKind::code).
    return {
        "LeaseError": "FLAKEID_LEASE",
        "ClockMovedBackwardsError": "FLAKEID_CLOCK_BACKWARDS",
        "TimeExhaustedError": "FLAKEID_TIME_EXHAUSTED",
        "ConfigError": "FLAKEID_CONFIG",
        "WaitInterruptedError": "FLAKEID_INTERRUPTED",
        "ForkError": "FLAKEID_FORK",
    }.get(type(err).__name__, type(err).__name__)


def batch_size(rng, max_batch):
    bits = max_batch.bit_length()
    return min(1 + rng.randrange(1 << (1 + rng.randrange(bits))), max_batch)


def issue(g, a, rng, ids, ev):
    """Issues until SIGTERM (False) or until the lease is lost (True)."""
    pace = Pace(a.rate)
    failing = None  # (kind, count)
    while not stopped():
        if pace.wait():
            continue
        singles = rng.randrange(10) < 3
        n = 1 + rng.randrange(32) if singles else batch_size(rng, a.max_batch)
        got = array.array("Q")
        error = None
        t0 = time.monotonic_ns()
        try:
            if singles:
                for _ in range(n):
                    got.append(g.next_id())
            else:
                got = g.next_ids_array(n)
        except flakeid.FlakeIdError as e:
            error = e
        t1 = time.monotonic_ns()
        if got:
            ids.record(t0, t1, 1 if singles else 2, got)
            pace.spend(len(got))
        if error is None:
            if failing:
                ev.log("resumed", kind=failing[0], errors=failing[1])
                failing = None
            continue
        kind = code_of(error)
        if failing and failing[0] == kind:
            failing = (kind, failing[1] + 1)
        else:
            ev.log("refused", kind=kind, msg=str(error))
            failing = (kind, 1)
        if g.lease_state == "lost":
            return True
        sleep(0.002)
    return False


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--url", required=True)
    p.add_argument("--dir", required=True)
    p.add_argument("--tag", required=True)
    p.add_argument("--ttl-ms", type=int, default=2000)
    p.add_argument("--rate", type=float, default=12000)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--max-batch", type=int, default=2000)
    a = p.parse_args()
    stop_on_signals()
    ev = Events(os.path.join(a.dir, f"{a.tag}.events.jsonl"))
    ev.log("start", pid=os.getpid(), kind="python")
    rng = random.Random(a.seed)
    inc = 0
    while not stopped():
        ev.log("build", inc=inc)
        try:
            g = flakeid.Generator(lease=a.url, lease_ttl_ms=a.ttl_ms)
        except flakeid.FlakeIdError as e:
            ev.log("build_failed", inc=inc, kind=code_of(e), msg=str(e))
            sleep(0.25)
            continue
        ev.log("acquired", inc=inc, node=g.node)
        ids = Ids(os.path.join(a.dir, f"{a.tag}-{inc}.ids"))
        lost = issue(g, a, rng, ids, ev)
        ids.close()
        if lost:
            ev.log("lost", inc=inc)
        ev.log("releasing", inc=inc)  # before: the store may forget the lease from now on
        g.release_lease()
        del g
        ev.log("dropped", inc=inc)
        inc += 1
    ev.log("exit")


if __name__ == "__main__":
    main()
