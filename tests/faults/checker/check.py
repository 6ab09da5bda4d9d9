"""The fault suite's checker: reads one scenario's raw IDs and the harness's event
logs, and nothing else. It shares no code with flakeid (nor with the harness): IDs
are taken apart with its own bit arithmetic from the layout's numbers in
scenario.json.

    check.py SCENARIO_DIR        writes SCENARIO_DIR/result.json, prints a summary

What it reads (formats: docs/faults.md, "Files"):
    scenario.json               layout, slots, times (CLOCK_MONOTONIC ns)
    events.jsonl                the harness: faults and heals, store data losses,
                                generator processes started / killed / exited
    polls.jsonl                 the store's lease records, read every 100 ms
    slots/g*/<tag>-<k>.ids      every ID each generator incarnation gave out,
                                in records (t0, t1, count, op) + IDs; or
                                <tag>-<k>.t<j>.ids, one per thread sharing it
    slots/g*/*.events.jsonl     each driver's own log: acquired (node), lost, ...

Safety checks (each must find nothing; docs/faults.md says exactly what each
proves):
    duplicates      an ID given out twice, by anyone, in the scenario
    order           an incarnation's IDs (each thread's) not strictly increasing
    node            an ID whose node field is not the node its incarnation
                    reported when it acquired its lease
    foreign         an ID given out under node n by a call that lay wholly inside
                    a time when the store's own records showed n held by another
                    process
    fence           two incarnations whose IDs under one node overlap in time
                    (the next holder must start after the last one's fence)
    stuck           a generator that gave no ID in the quiet end of the scenario,
                    after every fault was healed
Reported, never asserted: availability, outages, recovery after each heal, how
much of the traffic the store's records attest.
"""

import bisect
import glob
import json
import os
import re
import sys

import numpy as np

HEAD = np.dtype([("t0", "<u8"), ("t1", "<u8"), ("n", "<u4"), ("op", "<u4")])


def jsonl(path):
    out = []
    if not os.path.exists(path):
        return out
    with open(path) as f:
        for line in f:
            line = line.strip()
            if not line:
                continue
            try:
                out.append(json.loads(line))
            except ValueError:
                pass  # a line cut short by kill -9
    return out


def read_ids(path):
    """(records, ids): the complete records of one .ids file (a record cut short
    by kill -9 at the end is dropped)."""
    data = np.fromfile(path, dtype=np.uint8)
    heads, chunks = [], []
    pos, size = 0, len(data)
    while pos + HEAD.itemsize <= size:
        h = data[pos : pos + HEAD.itemsize].view(HEAD)[0]
        end = pos + HEAD.itemsize + 8 * int(h["n"])
        if end > size:
            break
        heads.append((int(h["t0"]), int(h["t1"]), int(h["n"]), int(h["op"])))
        chunks.append(data[pos + HEAD.itemsize : end].view("<u8"))
        pos = end
    recs = np.array(heads, dtype=[("t0", "i8"), ("t1", "i8"), ("n", "i8"), ("op", "i8")])
    ids = np.concatenate(chunks) if chunks else np.zeros(0, dtype="<u8")
    return recs, ids.astype(np.uint64)


def pct(values, q):
    if not values:
        return None
    return float(np.percentile(np.array(values, dtype=float), q))


class Layout:
    """Bit arithmetic from the layout's numbers (order time|node|seq)."""

    def __init__(self, d):
        self.seq_bits = d["sequence_bits"]
        self.node_bits = d["node_bits"]
        self.epoch_ms = d["epoch_ms"]
        self.tick_ms = d["tick_ms"]

    def node(self, ids):
        return (ids >> np.uint64(self.seq_bits)) & np.uint64((1 << self.node_bits) - 1)

    def ticks(self, ids):
        return ids >> np.uint64(self.seq_bits + self.node_bits)


def main(sdir):
    sc = json.load(open(os.path.join(sdir, "scenario.json")))
    lay = Layout(sc["layout"])
    events = jsonl(os.path.join(sdir, "events.jsonl"))
    polls = jsonl(os.path.join(sdir, "polls.jsonl"))
    t_start, t_quiet, t_end = sc["t_start"], sc["t_quiet"], sc["t_end"]

    # --- incarnations: (slot, tag, k) with the node each reported at acquire
    incs = {}  # key -> dict
    # A holder can give its lease back at any moment after it decides to, and the
    # logs say so only afterwards: what the store shows of a holder is believed
    # only up to the *start* of anything that may release — the harness stopping
    # or killing the process, a driver about to release or drop its generator —
    # and never for a build attempt that failed (the core releases what that
    # attempt took, at a moment no log marks).
    may_release = {}  # (slot, tag) -> sorted times from which a release may happen
    attempts = {}  # (slot, tag) -> [(t_build, acquired?)] in order
    acquired_by = {}  # (slot, tag) -> [(t, node)] of the drivers' `acquired` events
    current = {}  # slot -> tag of its live process, while replaying the harness's log
    started = {}  # (slot, tag) -> when the harness started the process
    for e in events:
        if e.get("ev") == "proc":
            key = (e["slot"], e["tag"])
            if e["what"] == "start":
                current[e["slot"]] = e["tag"]
                started[key] = e["t"]
                attempts.setdefault(key, [])
            elif e["what"] in ("kill9", "exit", "term", "stopping"):
                may_release.setdefault(key, []).append(e["t"])
        elif (
            e.get("ev") == "fault" and e.get("phase") == "start" and e["fault"] in ("term", "kill")
        ):
            # Logged before the harness signals the process.
            if e["target"] in current:
                may_release.setdefault((e["target"], current[e["target"]]), []).append(e["t"])
        elif e.get("ev") == "scenario" and e.get("what") == "end":
            for slot_name, tag in current.items():
                may_release.setdefault((slot_name, tag), []).append(e["t"])
    kinds = {s["name"]: s["kind"] for s in sc["slots"]}
    for slot in sc["slots"]:
        sd = os.path.join(sdir, "slots", slot["name"])
        for path in glob.glob(os.path.join(sd, "*.events.jsonl")):
            base = os.path.basename(path)[: -len(".events.jsonl")]
            for e in sorted(jsonl(path), key=lambda e: e["t"]):
                tag = e.get("tag", base)
                key = (slot["name"], tag)
                if e["ev"] == "acquired":
                    # When the store may have granted it: from the attempt's start (a
                    # serve process's start) on; the log says so only at the end.
                    began = (
                        started.get(key, 0)
                        if slot["kind"] == "serve"
                        else (attempts[key][-1][0] if attempts.get(key) else 0)
                    )
                    incs[(slot["name"], tag, int(e.get("inc", 0)))] = {
                        "node": int(e["node"]),
                        "t_acq": e["t"],
                        "t_began": began,
                    }
                    acquired_by.setdefault(key, []).append((e["t"], int(e["node"])))
                    if slot["kind"] == "serve":
                        attempts[key] = [(0, True)]  # one build per process
                    elif attempts.get(key):
                        attempts[key][-1] = (attempts[key][-1][0], True)
                elif e["ev"] == "build":
                    attempts.setdefault(key, []).append((e["t"], False))
                elif e["ev"] in ("releasing", "dropped", "lost"):
                    may_release.setdefault(key, []).append(e["t"])
    for (slot_name, tag), lst in attempts.items():
        if kinds.get(slot_name) == "serve" and not lst:
            lst.append((0, False))  # a serve process whose client never saw it acquire
    for times in may_release.values():
        times.sort()

    # --- generator processes that died on their own: a panic, a crash, a driver's
    # exception. `flakeid serve` exits 1 by design when its first lease cannot be
    # acquired (a supervisor starts it again; a lease lost later is taken again in
    # place) or on a second SIGTERM; nothing else may exit non-zero.
    crashes = []
    for e in events:
        if e.get("ev") == "proc" and e["what"] == "exit":
            rc = e.get("rc")
            if rc == 0 or (rc == 1 and kinds.get(e["slot"]) == "serve"):
                continue
            crashes.append({"slot": e["slot"], "tag": e["tag"], "rc": rc})

    # --- the IDs, per incarnation
    all_ids, owners = [], []
    per_inc = {}
    order_bad = node_bad = 0
    node_examples, order_examples = [], []
    slot_success = {s["name"]: [] for s in sc["slots"]}  # (t1, n) of successful calls
    rec_tables = []
    inc_index = {}
    for slot in sc["slots"]:
        sd = os.path.join(sdir, "slots", slot["name"])
        for path in sorted(glob.glob(os.path.join(sd, "*.ids"))):
            # <tag>-<k>.ids, or <tag>-<k>.t<j>.ids: thread j of an incarnation that
            # threads share (each thread's IDs increase; the rest is per incarnation).
            m = re.match(r"(.+)-(\d+)(?:\.t\d+)?\.ids$", os.path.basename(path))
            tag, k = m.group(1), int(m.group(2))
            key = (slot["name"], tag, k)
            recs, ids = read_ids(path)
            if len(ids) == 0:
                continue
            idx = inc_index.setdefault(key, len(inc_index))
            info = incs.get(key)
            bad = np.nonzero(ids[1:] <= ids[:-1])[0]
            order_bad += len(bad)
            for b in bad[:3]:
                order_examples.append(
                    {"inc": list(map(str, key)), "prev": str(ids[b]), "next": str(ids[b + 1])}
                )
            nodes = lay.node(ids)
            if info is None:
                node_bad += len(ids)
                node_examples.append({"inc": list(map(str, key)), "why": "no acquired event"})
            else:
                wrong = np.nonzero(nodes != np.uint64(info["node"]))[0]
                node_bad += len(wrong)
                for w in wrong[:3]:
                    node_examples.append(
                        {
                            "inc": list(map(str, key)),
                            "id": str(ids[w]),
                            "node": int(nodes[w]),
                            "reported": info["node"],
                        }
                    )
            ticks = lay.ticks(ids)
            seen = per_inc.get(key)
            per_inc[key] = {
                "n": int(len(ids)),
                "nodes": np.unique(nodes).tolist(),
                "min_tick": int(ticks.min()),
                "max_tick": int(ticks.max()),
                "first_t": int(recs["t0"].min()),
                "last_t": int(recs["t1"].max()),
            }
            if seen is not None:  # another thread's file of the same incarnation
                per_inc[key] = {
                    "n": seen["n"] + per_inc[key]["n"],
                    "nodes": sorted(set(seen["nodes"]) | set(per_inc[key]["nodes"])),
                    "min_tick": min(seen["min_tick"], per_inc[key]["min_tick"]),
                    "max_tick": max(seen["max_tick"], per_inc[key]["max_tick"]),
                    "first_t": min(seen["first_t"], per_inc[key]["first_t"]),
                    "last_t": max(seen["last_t"], per_inc[key]["last_t"]),
                }
            all_ids.append(ids)
            owners.append(np.full(len(ids), idx, dtype=np.int32))
            slot_success[slot["name"]].extend(zip(recs["t1"].tolist(), recs["n"].tolist()))
            rec_node = lay.node(ids[np.cumsum(recs["n"]) - 1]).astype(
                np.int64
            )  # each record's last ID's node
            rec_tables.append((key, recs, rec_node))
    keys_by_idx = {v: k for k, v in inc_index.items()}

    # --- global uniqueness
    ids = np.concatenate(all_ids) if all_ids else np.zeros(0, dtype=np.uint64)
    own = np.concatenate(owners) if owners else np.zeros(0, dtype=np.int32)
    order = np.argsort(ids, kind="stable")
    sids = ids[order]
    dup_pos = np.nonzero(sids[1:] == sids[:-1])[0]
    duplicates = int(len(dup_pos))
    dup_examples = []
    for p in dup_pos[:5]:
        a, b = own[order[p]], own[order[p + 1]]
        dup_examples.append(
            {
                "id": str(sids[p]),
                "by": [list(map(str, keys_by_idx[a])), list(map(str, keys_by_idx[b]))],
            }
        )

    # --- per node: incarnations' IDs must not overlap in time (the fence)
    fence_bad, fence_examples = 0, []
    by_node = {}
    for key, inf in per_inc.items():
        for n in inf["nodes"]:
            by_node.setdefault(n, []).append((inf["min_tick"], inf["max_tick"], key))
    for n, lst in by_node.items():
        lst.sort()
        for (a0, a1, ka), (b0, b1, kb) in zip(lst, lst[1:]):
            if b0 <= a1:
                fence_bad += 1
                fence_examples.append(
                    {
                        "node": n,
                        "earlier": list(map(str, ka)),
                        "later": list(map(str, kb)),
                        "earlier_last_tick": a1,
                        "later_first_tick": b0,
                    }
                )

    # --- the store's records: who held which node when
    # Data losses as (begun, done): the harness logs before it wipes and after.
    losses, begun = [], None
    for e in events:
        if e.get("ev") == "store" and e.get("what") == "lose-data":
            if begun is not None:  # a log from before `lost-data` was written
                losses.append((begun, begun))
            begun = e["t"]
        elif e.get("ev") == "store" and e.get("what") == "lost-data" and begun is not None:
            losses.append((begun, e["t"]))
            begun = None
    if begun is not None:
        losses.append((begun, t_end))
    host_re = re.compile(r"^(g\d+)-(p\d+)/")
    raw = {}  # node -> list of (start, end, host)
    unparsed = failed_attempt_records = 0
    first_seen = {}
    for p in polls:
        for node, token, _rem in p.get("recs", []):
            first_seen.setdefault(token, p["a"])

    # A serve process leases again in place after a loss, and an attempt there can
    # fail after the store granted it (a node whose floor its clock is too far
    # behind), releasing what it took at a moment no log marks. Its client reports
    # the node of every lease that answered it (`acquired`, after any ID of another
    # node), so a serve token is believed only if the client saw its node while the
    # process held it. A lease that answered at t is still in the store after t, and
    # a failed attempt's record was given back before the next attempt began, so
    # before t: the `acquired` event belongs to the token of its node that the first
    # poll sent after t found (none found: the token is not believed, and only
    # coverage is lost). The token first seen by then was not always it: an earlier
    # attempt that failed on the same node was taken for it.
    confirmed = set()
    # Every poll, answered or not: the one after t that failed proves nothing, and a
    # later one could find a later attempt's token.
    answered = sorted(((p["a"], p.get("recs", [])) for p in polls), key=lambda x: x[0])
    sent = [a for a, _recs in answered]
    for host, events_of_host in acquired_by.items():
        if kinds.get(host[0]) != "serve":
            continue
        prefix = f"{host[0]}-{host[1]}/"
        for t, node in events_of_host:
            j = bisect.bisect_left(sent, t)
            if j < len(answered):
                confirmed.update(
                    token
                    for n, token, _rem in answered[j][1]
                    if int(n) == node and (token or "").startswith(prefix)
                )

    def from_failed_attempt(host, token):
        """Whether the store's token belongs to a build attempt that failed: the
        process's last attempt that began before the token was first seen (for a
        serve process, an in-place attempt its client never saw answer)."""
        if kinds.get(host[0]) == "serve":
            return token not in confirmed
        lst = attempts.get(host)
        if not lst:
            return False
        began = [ok for t, ok in lst if t <= first_seen[token]]
        return not (began[-1] if began else lst[0][1])

    for p in polls:
        if "recs" not in p:
            continue
        a, b = p["a"], p["b"]
        for node, token, rem in p["recs"]:
            m = host_re.match(token or "")
            if not m:
                unparsed += 1
                continue
            host = (m.group(1), m.group(2))
            if from_failed_attempt(host, token):
                failed_attempt_records += 1
                continue
            end = a + int(rem) * 1_000_000
            # Cut where the record may stop being true without the store's TTL
            # running out: a data loss (a record read while one was under way may be
            # from before it, so it is cut at the loss's start), or the moment its
            # holder may have begun to give it back.
            nxt = [l0 for l0, l1 in losses if l1 >= a]
            if nxt:
                end = min(end, nxt[0])
            for t in may_release.get(host, []):
                if t >= a:
                    end = min(end, t)
                    break
            if end > b:
                raw.setdefault(int(node), []).append((b, end, host))
    seen_in_store = {(node, h) for node, ivs in raw.items() for _s, _e, h in ivs}
    never_seen = sorted(
        "-".join(map(str, k))
        for k in per_inc
        if k in incs and (incs[k]["node"], (k[0], k[1])) not in seen_in_store
    )
    attested = {}  # node -> (starts, ends, hosts) disjoint and sorted
    store_conflicts = []
    for node, ivs in raw.items():
        ivs.sort()
        merged = []
        for s, e, h in ivs:
            if merged and merged[-1][2] == h and s <= merged[-1][1]:
                merged[-1][1] = max(merged[-1][1], e)
            elif merged and merged[-1][2] != h and s < merged[-1][1]:
                # Two holders attested at once: the store contradicts itself (or a
                # release/loss the harness did not see). Keep neither overlap.
                store_conflicts.append(
                    {"node": node, "a": "-".join(merged[-1][2]), "b": "-".join(h)}
                )
                merged[-1][1] = s
                merged.append([s, e, h])
            else:
                merged.append([s, e, h])
        attested[node] = (
            np.array([m[0] for m in merged], dtype=np.int64),
            np.array([m[1] for m in merged], dtype=np.int64),
            [m[2] for m in merged],
        )

    # After a data loss the store's records say nothing about holders from before
    # it: the store forgot them, and such a holder may go on issuing until its
    # renewal finds the record gone, at the latest `ttl - margin` after its last
    # renewal, which the store had answered before the loss (docs/leases.md point
    # 6; the lock delay keeps the new holder waiting meanwhile, and the fence check
    # below shows it did). Those calls are counted apart, and only within that bound.
    valid_ns = (sc["ttl_ms"] - max(sc["ttl_ms"] // 5, 20)) * 1_000_000
    acquired_at = {}
    for (slot_name, tag, k), info in incs.items():
        acquired_at[(slot_name, tag, k)] = info["t_began"]
    forgotten_ids = 0
    foreign_recs = foreign_ids = 0
    foreign_examples = []
    covered_ids = total_ids = 0
    for key, recs, rec_node in rec_tables:
        host = (key[0], key[1])
        total_ids += int(recs["n"].sum())
        for n in np.unique(rec_node):
            sel = rec_node == n
            r = recs[sel]
            if int(n) not in attested:
                continue
            starts, ends, hosts = attested[int(n)]
            i = np.searchsorted(starts, r["t0"], side="right") - 1
            ok = i >= 0
            inside = np.zeros(len(r), dtype=bool)
            inside[ok] = ends[i[ok]] >= r["t1"][ok]
            same = np.array([hosts[j] == host if j >= 0 else False for j in i])
            covered_ids += int(r["n"][inside & same].sum())
            bad = inside & ~same
            t_began = acquired_at.get(key, 0)
            for l0, l1 in losses:
                if t_began < l1:
                    forgiven = bad & (r["t0"] >= l0) & (r["t1"] <= l1 + valid_ns)
                    forgotten_ids += int(r["n"][forgiven].sum())
                    bad &= ~forgiven
            foreign_recs += int(bad.sum())
            foreign_ids += int(r["n"][bad].sum())
            for j in np.nonzero(bad)[0][:3]:
                foreign_examples.append(
                    {
                        "inc": list(map(str, key)),
                        "node": int(n),
                        "t0": int(r["t0"][j]),
                        "t1": int(r["t1"][j]),
                        "store_holder": "-".join(hosts[i[j]]),
                    }
                )

    # --- availability, outages, recovery
    # An outage of a slot runs from its last successful call before a failure mark
    # to its first successful call after it. Failure marks: a refused call or a
    # failed build (the drivers' logs), and the harness taking the generator away
    # (kill -9, SIGTERM, SIGSTOP). Gaps between calls that the pacing makes are
    # not outages: only failures and faults are.
    marks = {s["name"]: [] for s in sc["slots"]}
    for e in events:
        if e.get("ev") == "proc" and e["what"] in ("kill9", "term", "exit"):
            marks[e["slot"]].append(e["t"])
        elif (
            e.get("ev") == "fault"
            and e.get("phase") == "start"
            and e["fault"] in ("pause", "suspend")
        ):
            marks[e["target"]].append(e["t"])
    for slot in sc["slots"]:
        sd = os.path.join(sdir, "slots", slot["name"])
        for path in glob.glob(os.path.join(sd, "*.events.jsonl")):
            for e in jsonl(path):
                if e["ev"] in ("refused", "build_failed"):
                    marks[slot["name"]].append(e["t"])
    heals = [e for e in events if e.get("ev") == "fault" and e.get("phase") == "heal"]
    slots_out = {}
    outages_all, recover_all = [], []
    recover_by_fault = {}
    stuck = []
    for s in sc["slots"]:
        name = s["name"]
        # Calls that ended after the scenario's end (while the harness stopped
        # everything) are checked for safety above, but not counted here.
        succ = sorted(x for x in slot_success[name] if x[0] <= t_end)
        t1s = np.array([t for t, _ in succ], dtype=np.int64)
        n_ids = int(sum(n for _, n in succ))
        if len(t1s) == 0:
            stuck.append(name)
            slots_out[name] = {"kind": s["kind"], "ids": 0}
            continue
        first = int(t1s[0])
        outages = []  # [start, end]; end None: never recovered
        for m in sorted(marks[name]):
            if m < first:
                continue
            j = np.searchsorted(t1s, m, side="right")
            a = int(t1s[j - 1])
            b = int(t1s[j]) if j < len(t1s) else None
            if outages and outages[-1][0] == a:
                continue  # the same outage
            outages.append([a, b])
        durations = [((b if b is not None else t_end) - a) for a, b in outages]
        down = sum(durations)
        outages_all.extend(d / 1e6 for d in durations)
        window = t_end - first
        unrecovered = 0
        for h in heals:
            if h["target"] != name and h["target"] != "store":
                continue
            th = h["t"]
            hit = [o for o in outages if o[0] <= th and (o[1] is None or o[1] > th)]
            if not hit:
                continue  # issuing at the heal: not affected
            if hit[0][1] is None:
                unrecovered += 1
                continue
            ms = (hit[0][1] - th) / 1e6
            recover_all.append(ms)
            recover_by_fault.setdefault(h["fault"], []).append(ms)
        if not np.any((t1s >= t_quiet) & (t1s <= t_end)):
            stuck.append(name)
        slots_out[name] = {
            "kind": s["kind"],
            "ids": n_ids,
            "first_id_ms": round((first - t_start) / 1e6, 1),
            "availability": round(1 - down / window, 4) if window > 0 else None,
            "rate_while_up": round(n_ids / max((window - down) / 1e9, 1e-9)),
            "outages": len(outages),
            "outage_max_ms": round(max(durations, default=0) / 1e6, 1),
            "unrecovered_heals": unrecovered,
        }

    result = {
        "scenario": sc["name"],
        "store": sc["store"],
        "seed": sc["seed"],
        "duration_s": round((t_end - t_start) / 1e9, 1),
        "ids_checked": int(len(ids)),
        "incarnations": len(per_inc),
        "violations": {
            "duplicates": duplicates,
            "order": int(order_bad),
            "node": int(node_bad),
            "foreign": int(foreign_ids),
            "fence": fence_bad,
            "stuck": len(stuck),
            "crashes": len(crashes),
        },
        "examples": {
            "duplicates": dup_examples,
            "order": order_examples[:5],
            "node": node_examples[:5],
            "foreign": foreign_examples[:5],
            "fence": fence_examples[:5],
            "stuck": stuck,
            "crashes": crashes[:5],
        },
        "issued_after_store_forgot": forgotten_ids,
        "incarnations_never_seen_in_store": never_seen,
        "attested_fraction": round(covered_ids / total_ids, 4) if total_ids else None,
        "store_self_conflicts": store_conflicts[:5],
        "unparsed_store_tokens": unparsed,
        "store_records_of_failed_builds": failed_attempt_records,
        "polls": len(polls),
        "polls_failed": sum(1 for p in polls if "err" in p),
        "unavailability_ms": {
            "count": len(outages_all),
            "p50": pct(outages_all, 50),
            "max": max(outages_all, default=None),
        },
        "recovery_ms": {
            "count": len(recover_all),
            "p50": pct(recover_all, 50),
            "max": max(recover_all, default=None),
            "by_fault": {
                k: {"n": len(v), "p50": pct(v, 50), "max": max(v)}
                for k, v in sorted(recover_by_fault.items())
            },
        },
        "faults": sum(1 for e in events if e.get("ev") == "fault" and e.get("phase") == "start"),
        "slots": slots_out,
    }
    result["pass"] = all(v == 0 for v in result["violations"].values())
    with open(os.path.join(sdir, "result.json"), "w") as f:
        json.dump(result, f, indent=1)
    v = result["violations"]
    print(
        f"check {sc['name']}: {result['ids_checked']} IDs, {result['incarnations']} incarnations, "
        f"duplicates {v['duplicates']}, order {v['order']}, node {v['node']}, "
        f"foreign {v['foreign']}, fence {v['fence']}, stuck {v['stuck']}, "
        f"crashes {v['crashes']}; attested {result['attested_fraction']}: "
        f"{'PASS' if result['pass'] else 'FAIL'}"
    )
    return 0 if result["pass"] else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
