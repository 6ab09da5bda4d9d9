#!/usr/bin/env python3
"""Runs a cargo test target's tests each in a process of its own, as many at once as
there are CPUs, and reports as every runner in tests/ does (tests/env/cases.py): a
line per test, then `N passed, N failed`.

    cargo-apart.py CARGO_TEST_ARGS...   (e.g. -p flakeid-core --release --test loom)

For the loom models (make test-loom): loom gives every model thread a coroutine stack
of its own, mapped and unmapped for each of the model's executions, so a model spends
most of its time in mmap, munmap and page faults. Two models in one process queue on
that process's memory-map lock; in two processes they run side by side, and the suite
takes about half the time for the same CPU time (docs/performance.md, "Where the time
goes"). A failing test's output is printed whole; every test runs, also after one
failed, and the exit status is 1 when any did.
"""
import json
import os
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "env"))
from cases import Cases  # noqa: E402  (tests/env/cases.py: every runner's report)


def executables(cargo_args):
    cargo = os.environ.get("CARGO", "cargo")
    build = subprocess.run([cargo, "test", "--no-run", "--message-format=json-render-diagnostics", *cargo_args],
                           stdout=subprocess.PIPE, text=True)
    if build.returncode != 0:
        sys.exit(build.returncode)
    for line in build.stdout.splitlines():
        msg = json.loads(line)
        if msg.get("reason") == "compiler-artifact" and msg.get("executable") and msg["profile"]["test"]:
            yield msg["executable"]


def tests_of(exe):
    listed = subprocess.run([exe, "--list", "--format", "terse"], stdout=subprocess.PIPE, text=True, check=True)
    return [line[: -len(": test")] for line in listed.stdout.splitlines() if line.endswith(": test")]


def run_one(exe, name):
    started = time.monotonic()
    p = subprocess.run([exe, "--exact", name, "--test-threads", "1"], stdout=subprocess.PIPE,
                       stderr=subprocess.STDOUT, text=True)
    return name, p.returncode, time.monotonic() - started, p.stdout


def main():
    jobs = [(exe, name) for exe in executables(sys.argv[1:]) for name in tests_of(exe)]
    if not jobs:
        sys.exit("cargo-apart: no tests found for: " + " ".join(sys.argv[1:]))
    cases = Cases("cargo-apart " + " ".join(sys.argv[1:]))
    with ThreadPoolExecutor(max_workers=os.cpu_count() or 1) as pool:
        for name, rc, secs, out in pool.map(lambda job: run_one(*job), jobs):
            cases.record(name, rc == 0, f"{secs:.1f} s" if rc == 0 else f"exit {rc}, {secs:.1f} s\n{out}")
    sys.exit(cases.finish())


if __name__ == "__main__":
    main()
