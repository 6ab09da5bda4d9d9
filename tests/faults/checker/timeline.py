"""One scenario's story, for reading a failure: the harness's events, the drivers'
logs and (with --node) the store's records of one node id, merged in time order,
times in seconds from the scenario's start.

    timeline.py SCENARIO_DIR [--slot g1] [--node N] [--from S] [--to S]
"""

import argparse
import glob
import json
import os


def jsonl(path):
    with open(path) as f:
        for line in f:
            try:
                yield json.loads(line)
            except ValueError:
                pass


def main():
    p = argparse.ArgumentParser()
    p.add_argument("dir")
    p.add_argument(
        "--slot", action="append", help="only this generator (and the store); repeatable"
    )
    p.add_argument(
        "--node", type=int, help="also the store's records of this node id (changes only)"
    )
    p.add_argument("--from", dest="lo", type=float, default=-1e9)
    p.add_argument("--to", dest="hi", type=float, default=1e9)
    a = p.parse_args()
    sc = json.load(open(os.path.join(a.dir, "scenario.json")))
    t0 = sc["t_start"]
    rel = lambda t: (t - t0) / 1e9  # noqa: E731
    keep = lambda who: not a.slot or who in a.slot or who in ("store", "-")  # noqa: E731
    rows = []
    for e in jsonl(os.path.join(a.dir, "events.jsonl")):
        who = e.get("slot") or e.get("target") or "-"
        if keep(who):
            rows.append((e["t"], "harness", who, e))
    for sd in sorted(glob.glob(os.path.join(a.dir, "slots", "g*"))):
        who = os.path.basename(sd)
        if not keep(who):
            continue
        for path in glob.glob(os.path.join(sd, "*.events.jsonl")):
            tag = os.path.basename(path).split(".")[0]
            for e in jsonl(path):
                rows.append((e["t"], tag, who, e))
    if a.node is not None:
        last = None
        for poll in jsonl(os.path.join(a.dir, "polls.jsonl")):
            if "err" in poll:
                now = "poll failed: " + poll["err"][:60]
            else:
                holders = [r[1].split("/")[0] for r in poll["recs"] if r[0] == a.node]
                now = f"node {a.node}: {holders[0] if holders else 'free'}"
            if now != last:
                rows.append((poll["a"], "store", "store", {"ev": now}))
                last = now
    for t, src, who, e in sorted(rows, key=lambda r: r[0]):
        if a.lo <= rel(t) <= a.hi:
            rest = {
                k: (v[:140] if isinstance(v, str) else v)
                for k, v in e.items()
                if k not in ("t", "ev")
            }
            print(f"{rel(t):9.3f} {who:5} {src:8} {e['ev']} {json.dumps(rest) if rest else ''}")


if __name__ == "__main__":
    main()
