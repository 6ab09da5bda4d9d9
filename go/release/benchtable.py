#!/usr/bin/env python3
"""Summarises `go test -bench -count N` output (make bench-go): the median ns per ID
of each case, as a table. Fill cases report their per-ID figure (ns/ID)."""
import re
import statistics
import sys

runs = {}
for line in open(sys.argv[1]):
    m = re.match(r"^Benchmark(\S+?)(-\d+)?\s+\d+\s+([\d.]+) ns/op(?:\s+([\d.]+) ns/ID)?", line)
    if m:
        ns = float(m.group(4) or m.group(3))
        runs.setdefault(m.group(1), []).append(ns)
print(f"| case | ns per ID (median of {max(map(len, runs.values()), default=0)}) | IDs/s |")
print("|---|---:|---:|")
for name, v in runs.items():
    med = statistics.median(v)
    print(f"| {name} | {med:.2f} | {1e9 / med:,.0f} |" if med < 10 else f"| {name} | {med:.1f} | {1e9 / med:,.0f} |")
