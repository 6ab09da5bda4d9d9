#!/usr/bin/env python3
"""Runs cargo test targets side by side, as many at once as there are CPUs, and
reports as every runner in tests/ does (tests/env/cases.py): a line per test (or per
test binary), then `N passed, N failed`.

    cargo-apart.py CARGO_TEST_ARGS...              each test in a process of its own
    cargo-apart.py --binaries ARGS [, ARGS ...]    each test binary in a process of its own

Each test (default): for the loom models (make test-loom). loom gives every model
thread a coroutine stack of its own, mapped and unmapped for each of the model's
executions, so a model spends most of its time in mmap, munmap and page faults. Two
models in one process queue on that process's memory-map lock; in two processes they
run side by side, and the suite takes about half the time for the same CPU time
(docs/development.md, "Where the time goes").

`--binaries`: for make test-rust. Each test binary runs whole, its tests in one
process as `cargo test` runs them, but the binaries run side by side, not one after
another, three per CPU (most of them wait on child processes, leases and clocks, or
use one core).
The groups of cargo arguments, separated by a `,` word, are built in turn (each is one
`cargo test`'s feature resolution). A binary that runs a generator takes the host
guard, which would refuse a node id another binary holds at the same moment: each
binary gets a guard directory of its own under FLAKEID_HOST_GUARD (docs/design.md,
"Who owns a node id"), as two hosts would.

Each line says its process's wall and CPU seconds (user and system: what it costs
whatever else the machine runs), and a line before the closing one their total; a
loom model's line, the executions it explored (docs/development.md, "The loom
models' budget"). A failing test's (or binary's) output is printed whole; everything
runs, also after one failed, and the exit status is 1 when any did.
"""

import collections
import functools
import json
import os
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
sys.path.insert(0, os.path.join(ROOT, "tests", "env"))
from cases import Cases  # noqa: E402  (tests/env/cases.py: every runner's report)


# Test binaries at once per CPU (`--binaries`). Most of make test-rust's binaries wait
# on child processes, file locks and the clock, and their spin-and-yield waits yield
# to a neighbour's work instead of spinning on an idle core: three per CPU take about
# half the wall time and less CPU time than one (docs/development.md, "make test on a
# fresh machine").
BINARIES_PER_CPU = 3


def executables(cargo_args):
    """(source, executable, package directory) of each test executable `cargo test ARGS`
    builds; source is its source file's path in the repository."""
    cargo = os.environ.get("CARGO", "cargo")
    build = subprocess.run(
        [cargo, "test", "--no-run", "--message-format=json-render-diagnostics", *cargo_args],
        stdout=subprocess.PIPE,
        text=True,
    )
    if build.returncode != 0:
        sys.exit(build.returncode)
    for line in build.stdout.splitlines():
        msg = json.loads(line)
        if (
            msg.get("reason") == "compiler-artifact"
            and msg.get("executable")
            and msg["profile"]["test"]
        ):
            src = os.path.relpath(msg["target"]["src_path"], ROOT)
            yield src, msg["executable"], os.path.dirname(msg["manifest_path"])


def tests_of(exe):
    listed = subprocess.run(
        [exe, "--list", "--format", "terse"], stdout=subprocess.PIPE, text=True, check=True
    )
    return [
        line[: -len(": test")] for line in listed.stdout.splitlines() if line.endswith(": test")
    ]


def run(cmd, env=None, cwd=None):
    """(exit status, wall s, CPU s, output) of `cmd`: its CPU time (user and system,
    its children's included) is what it costs whatever else the machine runs."""
    started = time.monotonic()
    with tempfile.TemporaryFile("w+") as out:
        p = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT, text=True, env=env, cwd=cwd)
        _, status, usage = os.wait4(p.pid, 0)  # reaped here, with its rusage
        p.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        return p.returncode, time.monotonic() - started, usage.ru_utime + usage.ru_stime, out.read()


def run_binary(guard, src, exe, package_dir, build=None):
    # As `cargo test` runs it: in its package's directory, which it names.
    env = dict(os.environ, CARGO_MANIFEST_DIR=package_dir)
    if guard != "off":
        env["FLAKEID_HOST_GUARD"] = os.path.join(guard, os.path.basename(exe))
    rc, secs, cpu, out = run([exe], env, package_dir)
    summary = [line for line in out.splitlines() if line.startswith("test result:")]
    # `test result: ok. 12 passed; 0 failed; ...; finished in 1.2s` -> `12 passed, 1.2 s`
    said = summary[-1].split(". ", 1)[-1].split(";")[0] if summary else "ran"
    label = src if "/tests/" in src or "/benches/" in src else f"{src} (unit tests)"
    if build:
        label += f" (build {build})"
    took = f"{secs:.1f} s, {cpu:.1f} CPU-s"
    return label, rc, cpu, f"{said}, {took}" if rc == 0 else f"exit {rc}, {took}\n{out}"


def run_test(exe, name):
    """One test alone; a passing test's detail is its times and what it printed
    (`--nocapture`: the loom models print their executions)."""
    rc, secs, cpu, out = run([exe, "--exact", name, "--test-threads", "1", "--nocapture"])
    took = f"{secs:.1f} s, {cpu:.1f} CPU-s"
    if rc != 0:
        return name, rc, cpu, f"exit {rc}, {took}\n{out}"
    # `test NAME ... <what it printed>\nok`: what it printed.
    printed = out.partition(f"test {name} ... ")[2].rpartition("\nok")[0].strip()
    return name, rc, cpu, "; ".join([took, *printed.splitlines()])


def main():
    args = sys.argv[1:]
    if args[:1] == ["--binaries"]:
        groups, group = [], []
        for word in args[1:] + [","]:
            if word == ",":
                groups.append(group)
                group = []
            else:
                group.append(word)
        jobs = [(*job, i + 1) for i, g in enumerate(groups) for job in executables(g)]
        # A binary that more than one build makes is named with its build's number.
        made = collections.Counter(src for src, *_ in jobs)
        jobs = [
            (src, exe, package_dir, build if made[src] > 1 else None)
            for src, exe, package_dir, build in jobs
        ]
        # The guards' parent: FLAKEID_HOST_GUARD (make's target/host-guard), else a new
        # directory (the default guard, one per host, is the one that would be shared).
        guard = os.environ.get("FLAKEID_HOST_GUARD") or tempfile.mkdtemp(
            prefix="flakeid-apart-guard-"
        )
        runner, title = functools.partial(run_binary, guard), "cargo-apart --binaries"
        workers = BINARIES_PER_CPU * (os.cpu_count() or 1)
    else:
        jobs = [(exe, name) for _, exe, _ in executables(args) for name in tests_of(exe)]
        runner, title = run_test, "cargo-apart " + " ".join(args)
        workers = os.cpu_count() or 1
    if not jobs:
        sys.exit("cargo-apart: no tests found for: " + " ".join(args))
    cases = Cases(title)
    total = 0.0
    with ThreadPoolExecutor(max_workers=workers) as pool:
        for name, rc, cpu, detail in pool.map(lambda job: runner(*job), jobs):
            cases.record(name, rc == 0, detail)
            total += cpu
    print(f"cargo-apart: {total:.0f} CPU-s in the {len(jobs)} processes")
    sys.exit(cases.finish())


if __name__ == "__main__":
    main()
