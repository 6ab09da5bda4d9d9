#!/usr/bin/env python3
"""make test-lease: the lease store tests, in groups side by side, each group beside
servers of its own (tests/env/testenv.py).

    run_stores.py CARGO_TEST_ARGS...

Builds the tests once (`cargo test CARGO_TEST_ARGS --no-run`), then runs every
group below at once, each in its own test environment: a group may freeze, kill or
restart its servers (`serial()` in tests/lease/tests/common/mod.rs orders that
within a test binary), and no other group's test sees it. The tests spend their
time waiting out TTLs, not computing (docs/performance.md, "Where the time goes").
Each group's output is printed whole when it ends, then a line
per group: its wall seconds and how it ended. Exits 1 if any group failed.
"""

import json
import os
import signal
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
TESTENV = os.path.join(ROOT, "tests", "env", "testenv.py")

# name: (servers, [(test target, libtest arguments)]). A target is a test binary
# (`--test NAME`) or a library's unit tests (`lib:CRATE`). Every store test target
# belongs to exactly one group; a target cargo builds that no group names is an
# error, so a new test file cannot be skipped unnoticed.
GROUPS = {
    "redis": (["--redis"], [("lease_redis", [])]),
    "postgres": (["--postgres"], [("lease_postgres", [])]),
    # The Redis TLS tests also log in to PostgreSQL with a wrong setting.
    "tls-redis": (["--redis", "--postgres"], [("lease_tls", ["--skip", "postgres_"])]),
    "tls-postgres": (["--postgres"], [("lease_tls", ["postgres_"])]),
    # etcd plain and TLS are two servers: their scenarios run apart. The unit tests
    # that need a store: flakeid-lease-net's etcd forced interleaving.
    "etcd": (["--etcd"], [("lease_etcd", ["--skip", "etcds_"]), ("lib:flakeid_lease_net", [])]),
    "etcds": (["--etcd"], [("lease_etcd", ["etcds_"])]),
}


def executables(cargo_args):
    """Builds the tests; {target: (executable, package directory)} of the test binaries
    and libraries' unit tests built."""
    cargo = os.environ.get("CARGO", "cargo")
    out = subprocess.run([cargo, "test", *cargo_args, "--no-run", "--message-format=json-render-diagnostics"],
                         stdout=subprocess.PIPE, text=True, cwd=ROOT)
    if out.returncode != 0:
        sys.exit(out.returncode)
    found = {}
    for line in out.stdout.splitlines():
        msg = json.loads(line)
        if msg.get("reason") != "compiler-artifact" or not msg.get("executable") or not msg["profile"]["test"]:
            continue
        t = msg["target"]
        if "test" in t["kind"]:
            name = t["name"]
        elif "lib" in t["kind"]:
            name = f"lib:{t['name']}"
        else:
            continue
        found[name] = (msg["executable"], os.path.dirname(msg["manifest_path"]))
    return found


def main(argv):
    # make's SIGTERM: stop the groups (below), whose environments stop their servers.
    signal.signal(signal.SIGTERM, lambda sig, _frame: sys.exit(128 + sig))
    built = executables(argv)
    wanted = {t for _servers, targets in GROUPS.values() for t, _args in targets}
    stray = sorted(t for t in built if not t.startswith("lib:") and t not in wanted)
    missing = sorted(wanted - set(built))
    if stray or missing:
        print(f"run_stores: test targets built but in no group: {stray}; in a group but not built: {missing} "
              "(tests/lease/run_stores.py GROUPS)", file=sys.stderr)
        return 2
    running = {}
    for name, (servers, targets) in GROUPS.items():
        # One shell line per group: each executable from its package's directory, as
        # cargo runs it, stopping at the first that fails.
        steps = " && ".join(
            f"(cd {q(built[t][1])} && {q(built[t][0])} {' '.join(q(a) for a in args)})" for t, args in targets)
        log = tempfile.TemporaryFile(mode="w+")
        # A process group per group: stopping it reaches the test binaries and what
        # they started, not only the test environment.
        proc = subprocess.Popen([sys.executable, TESTENV, "run", *servers, "--", "bash", "-c", steps],
                                stdout=log, stderr=subprocess.STDOUT, cwd=ROOT, start_new_session=True)
        running[name] = (proc, log, time.monotonic())
    results = []
    try:
        while running:
            for name, (proc, log, started) in list(running.items()):
                if proc.poll() is None:
                    continue
                del running[name]
                took = time.monotonic() - started
                log.seek(0)
                print(f"== test-lease group {name} ({took:.0f} s, exit {proc.returncode})", flush=True)
                sys.stdout.write(log.read())
                sys.stdout.flush()
                results.append((name, took, proc.returncode))
            time.sleep(0.1)
    finally:
        # Interrupted: each test environment stops its servers once its command ends.
        for proc, _log, _started in running.values():
            try:
                os.killpg(proc.pid, signal.SIGTERM)
            except ProcessLookupError:
                pass
        for proc, _log, _started in running.values():
            proc.wait()
    for name, took, rc in results:
        print(f"test-lease: {name:<13} {took:5.0f} s  {'ok' if rc == 0 else f'FAILED (exit {rc})'}")
    failed = [name for name, _took, rc in results if rc != 0]
    if failed:
        print(f"test-lease: failed: {', '.join(failed)}", file=sys.stderr)
        return 1
    return 0


def q(s):
    return "'" + s.replace("'", "'\\''") + "'"


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
