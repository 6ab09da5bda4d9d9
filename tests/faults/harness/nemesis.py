"""The nemesis: a schedule of faults drawn from a seed, so a run replays.

The schedule has one lane for the store and one per generator slot; each lane
draws faults back to back with quiet gaps between them, so faults on different
lanes overlap (a partitioned generator while another one is killed and restarts
and takes over the first one's expired id; a clock step during a store pause...).
Every fault has a start and a heal; all are healed before the scenario's quiet
end, during which every generator must come back.

One rule limits the combinations, and it is the lease design's own assumption
(docs/leases.md, point 6: clocks in step within the margin): a store that loses
its data forgets the fences, and then only the lock delay keeps a new holder's
IDs after an old holder's, which holds only if their clocks agree. So no data loss
(Redis restarted empty or FLUSHALL, TRUNCATE, etcd wiped) is scheduled while a
generator's clock is stepped, nor within |step| + 2 TTL before or after.
docs/faults.md says what happens beyond that (the `--unsafe-clock` flag drops the rule).
"""

import random

# Durations in seconds; weights are relative.
GEN_FAULTS = {
    "partition": 4,
    "pause": 3,
    "kill": 3,
    "term": 1,
    "clock": 3,
    "delay": 2,
    "loss": 2,
}
STORE_FAULTS = {"store-pause": 3, "store-kill": 3, "store-loss": 3}


# The faults with no arguments: their durations, drawn from these spans (in TTLs).
SPANS = {
    "pause": (1.2, 2.5),
    "kill": (0.1, 1.0),
    "term": (0.1, 0.5),
    "store-pause": (1.2, 2.2),
    "store-kill": (0.25, 1.0),
    "store-loss": (0.25, 1.0),
}


def draw_gen_fault(rng, kind, ttl_s):
    if kind in SPANS and kind in GEN_FAULTS:
        return {}, rng.uniform(*SPANS[kind]) * ttl_s
    if kind == "partition":
        return {"direction": rng.choice(["both", "both", "out", "in"])}, rng.uniform(
            1.2, 2.5
        ) * ttl_s
    if kind == "clock":
        mag = rng.choice([rng.uniform(0.05, 0.3), rng.uniform(0.5, 2.0) * ttl_s])
        return {"offset_s": round(rng.choice([-1, 1]) * mag, 3)}, rng.uniform(1.0, 3.0) * ttl_s
    if kind == "delay":
        d = rng.choice([rng.uniform(50, 200), rng.uniform(300, 900)])
        return {"delay_ms": round(d), "jitter_ms": round(d * 0.3)}, rng.uniform(1.5, 3.0) * ttl_s
    if kind == "loss":
        return {"percent": rng.choice([20, 40, 60, 80])}, rng.uniform(1.5, 3.0) * ttl_s
    raise ValueError(kind)


def draw_store_fault(rng, kind, ttl_s):
    if kind not in STORE_FAULTS:
        raise ValueError(kind)
    return {}, rng.uniform(*SPANS[kind]) * ttl_s


def schedule(seed, n_slots, start_s, end_s, ttl_s, store_loses_on_restart, unsafe_clock=False):
    """A list of faults: dicts with `at`, `heal` (seconds from the scenario's start),
    `fault`, `target` (`store` or `g<i>`) and the fault's arguments."""
    rng = random.Random(seed)
    faults = []
    loss_windows = []

    t = start_s + rng.uniform(0, 2)
    while True:
        kind = pick(rng, STORE_FAULTS)
        args, d = draw_store_fault(rng, kind, ttl_s)
        if t + d > end_s:
            break
        faults.append(
            {"at": round(t, 3), "heal": round(t + d, 3), "fault": kind, "target": "store", **args}
        )
        loses = kind == "store-loss" or (kind == "store-kill" and store_loses_on_restart)
        if loses:
            loss_windows.append((t, t + d))
        # After a data loss every generator waits out the lock delay (TTL + margin
        # + borrow allowance: up to 2.2 TTL here) before its first ID: leave room
        # to see it recover before the store fails again.
        t += d + (rng.uniform(2.5, 4.0) if loses else rng.uniform(1.0, 2.0)) * ttl_s

    for i in range(1, n_slots + 1):
        t = start_s + rng.uniform(0, 2)
        while True:
            for _ in range(20):
                kind = pick(rng, GEN_FAULTS)
                args, d = draw_gen_fault(rng, kind, ttl_s)
                if kind != "clock" or unsafe_clock:
                    break
                # Padded on both sides: a holder stepped back after a loss could
                # otherwise take a forgotten id and stamp times its old holder used.
                pad = abs(args["offset_s"]) + 2 * ttl_s
                if not any(a < t + d + pad and t - pad < b for a, b in loss_windows):
                    break
            else:
                kind, args, d = "pause", {}, 1.5 * ttl_s
            if t + d > end_s:
                break
            faults.append(
                {
                    "at": round(t, 3),
                    "heal": round(t + d, 3),
                    "fault": kind,
                    "target": f"g{i}",
                    **args,
                }
            )
            t += d + rng.uniform(0.5, 1.5) * ttl_s
    faults.sort(key=lambda f: (f["at"], f["target"]))
    return faults


def pick(rng, weights):
    names = sorted(weights)
    return rng.choices(names, [weights[n] for n in names])[0]


def suspend_schedule(seed, slots, start_s, end_s, ttl_s):
    """The lease-deadline-clock experiment (docs/faults.md): rounds of one
    generator suspended past the TTL while another is killed and restarted so that
    it takes the suspended one's id (the lowest free), nothing else. `slots` are
    the indices of the generators the suspend shim applies to."""
    rng = random.Random(seed)
    faults = []
    t = start_s + 1.0
    while True:
        x = rng.choice(slots)
        y = rng.choice([i for i in slots if i != x])
        d = rng.uniform(1.5, 2.5) * ttl_s
        if t + d > end_s:
            break
        faults.append(
            {"at": round(t, 3), "heal": round(t + d, 3), "fault": "suspend", "target": f"g{x}"}
        )
        k = t + ttl_s + 0.3
        faults.append(
            {"at": round(k, 3), "heal": round(k + 0.2, 3), "fault": "kill", "target": f"g{y}"}
        )
        t += d + 2.0 * ttl_s
    faults.sort(key=lambda f: (f["at"], f["target"]))
    return faults
