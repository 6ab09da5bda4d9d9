"""The lease-deadline-clock experiment, per resume (docs/faults.md): for each
`suspend` fault of a scenario run with `run.py --suspend`, how many IDs the resumed
generator gave out under its old node id while the store's records showed that id
held by another process, and until how long after the resume.

    suspend_report.py SCENARIO_DIR...
"""

import glob
import json
import os
import sys

import numpy as np

from check import jsonl, read_ids


def main(dirs):
    for d in dirs:
        sc = json.load(open(os.path.join(d, "scenario.json")))
        kinds = {s["name"]: s["kind"] for s in sc["slots"]}
        events = jsonl(os.path.join(d, "events.jsonl"))
        wakes = [
            (e["t"], e["target"])
            for e in events
            if e.get("fault") == "suspend" and e["phase"] == "heal"
        ]
        # Who the store says holds each node, poll by poll.
        polls = [p for p in jsonl(os.path.join(d, "polls.jsonl")) if "recs" in p]
        rounds = hit = 0
        worst_ms = 0.0
        total = 0
        for tw, slot in wakes:
            rounds += 1
            foreign = 0
            last = None
            for path in glob.glob(os.path.join(d, "slots", slot, "*.ids")):
                recs, ids = read_ids(path)
                if len(recs) == 0:
                    continue
                starts = np.concatenate([[0], np.cumsum(recs["n"])[:-1]])
                for j in np.nonzero((recs["t0"] >= tw) & (recs["t0"] < tw + 1_000_000_000))[0]:
                    node = int((ids[starts[j]] >> np.uint64(12)) & np.uint64(1023))
                    t0, t1 = int(recs["t0"][j]), int(recs["t1"][j])
                    me = f"{slot}-{os.path.basename(path).split('-')[0]}"
                    # The store's holder of `node` at the polls around the call.
                    around = [
                        p
                        for p in polls
                        if p["b"] <= t0 + 150_000_000 and p["a"] >= t0 - 150_000_000
                    ]
                    others = {r[1].split("/")[0] for p in around for r in p["recs"] if r[0] == node}
                    if others and me not in others:
                        foreign += int(recs["n"][j])
                        last = max(last or 0, t1)
            if foreign:
                hit += 1
                total += foreign
                worst_ms = max(worst_ms, (last - tw) / 1e6)
            print(
                f"{sc['name']:12} resume of {slot} ({kinds[slot]:5}): "
                f"{foreign:6} IDs under a node held by another"
                + (f", the last {(last - tw) / 1e6:.2f} ms after the resume" if foreign else "")
            )
        print(
            f"{sc['name']}: {hit} of {rounds} resumes gave {total} such IDs; "
            f"at most {worst_ms:.2f} ms after a resume"
        )


if __name__ == "__main__":
    main(sys.argv[1:])
