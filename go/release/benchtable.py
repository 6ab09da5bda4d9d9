#!/usr/bin/env python3
"""Summarises `go test -bench -count N` output (make bench-go): per case, the median
and the fastest of the N runs, in ns per ID (Fill cases report their per-ID figure,
ns/ID). On a shared machine the fastest run is the steadier figure."""

import re
import statistics
import sys

runs = {}
for line in open(sys.argv[1]):
    m = re.match(r"^Benchmark(\S+?)(-\d+)?\s+\d+\s+([\d.]+) ns/op(?:\s+([\d.]+) ns/ID)?", line)
    if m:
        runs.setdefault(m.group(1), []).append(float(m.group(4) or m.group(3)))


def ns(v):
    return f"{v:.2f}" if v < 10 else f"{v:.1f}"


n = max(map(len, runs.values()), default=0)
print(f"| case | ns per ID, median of {n} | fastest | IDs/s (fastest) |")
print("|---|---:|---:|---:|")
for name, v in runs.items():
    print(f"| {name} | {ns(statistics.median(v))} | {ns(min(v))} | {1e9 / min(v):,.0f} |")
