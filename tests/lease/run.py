#!/usr/bin/env python3
"""The lease suites on real servers of the one test environment (tests/env/testenv.py).
Each check is a named case (tests/env/cases.py); a run ends with `N passed, N failed`
and exits 1 when any failed.

    run.py stores CARGO_TEST_ARGS...     (make test-lease)
    run.py bindings                      (make test-lease-bindings)

stores: the lease store tests, in groups side by side, each group beside servers of
its own. Builds the tests once (`cargo test CARGO_TEST_ARGS --no-run`), then runs
every group below at once (those in AFTER alone, after the others), each in its own
test environment: a group may freeze, kill or restart its servers (`serial()` in
tests/lease/tests/common/mod.rs orders that within a test binary), and no other
group's test sees it. The tests spend their time
waiting out TTLs, not computing (docs/development.md, "Where the time goes"). Each
group's output is printed whole when it ends, then a line per group: its wall seconds
and how it ended. Each test libtest ran is a case (`group: test`); a group that
failed with no failing test named (a build, a server, a crash) is a failed case.

bindings: the lease URLs through every binding and the CLI, after the Python package
(python/.venv, or $PY), the Node addon and libflakeid ($C_LIB_DIR) were built: each
builds a generator on the etcd://, etcds://, rediss://, postgres:// (sslmode
verify-full) and k8s:// URLs of the servers started here, and its ID must carry the
leased node id; over TLS, a wrong CA must come back as that binding's lease error
naming the cause.
"""

import json
import os
import re
import signal
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "tests", "env"))
import testenv  # noqa: E402
from cases import Cases  # noqa: E402

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
    # Kubernetes Leases on a kube-apiserver (and its etcd), which its restart tests
    # kill and start again. Run after the others, alone (AFTER): a restart waits for
    # the API server's caches, which beside six groups' crowds of holders on 2 cores
    # is the slowest step of the suite.
    "k8s": (["--kube"], [("lease_k8s", [])]),
}
AFTER = {"k8s"}


def executables(cargo_args):
    """Builds the tests; {target: (executable, package directory)} of the test binaries
    and libraries' unit tests built, or None when the build failed."""
    cargo = os.environ.get("CARGO", "cargo")
    out = subprocess.run(
        [cargo, "test", *cargo_args, "--no-run", "--message-format=json-render-diagnostics"],
        stdout=subprocess.PIPE,
        text=True,
        cwd=ROOT,
    )
    if out.returncode != 0:
        return None
    found = {}
    for line in out.stdout.splitlines():
        msg = json.loads(line)
        if (
            msg.get("reason") != "compiler-artifact"
            or not msg.get("executable")
            or not msg["profile"]["test"]
        ):
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


# A test's line in libtest's output, and how it ended.
LIBTEST_LINE = re.compile(r"^test (\S+) \.\.\. (ok|FAILED|ignored)", re.M)


def panic_of(test, output):
    """Where and why a failed test panicked, from libtest's `---- TEST stdout ----`
    section, or a pointer to the output."""
    m = re.search(
        rf"^---- {re.escape(test)} stdout ----\n(?:.*\n)*?.*panicked at (\S+):\n(.*)", output, re.M
    )
    return f"{m.group(1)} {m.group(2)}" if m else "see its output above"


def group_cases(cases, name, rc, output):
    """Each test of group `name` that libtest reports, a case; the group's own failure
    (its exit status) one more when no failing test explains it."""
    seen = LIBTEST_LINE.findall(output)
    for test, how in seen:
        if how == "ignored":
            print(f"SKIP {name}: {test}: ignored")
        else:
            cases.record(
                f"{name}: {test}", how == "ok", "" if how == "ok" else panic_of(test, output)
            )
    if rc != 0 and not any(how == "FAILED" for _test, how in seen):
        cases.failed(name, f"exit {rc}, and no failing test named (see its output above)")
    elif rc == 0 and not seen:
        cases.failed(name, "ran no test")


def stores(argv):
    # make's SIGTERM: stop the groups (below), whose environments stop their servers.
    signal.signal(signal.SIGTERM, lambda sig, _frame: sys.exit(128 + sig))
    cases = Cases("test-lease")
    built = executables(argv)
    if built is None:
        cases.failed("build", "cargo test --no-run failed (its output is above)")
        return cases.finish()
    wanted = {t for _servers, targets in GROUPS.values() for t, _args in targets}
    stray = sorted(t for t in built if not t.startswith("lib:") and t not in wanted)
    missing = sorted(wanted - set(built))
    if stray or missing:
        cases.failed(
            "groups",
            f"test targets built but in no group: {stray}; in a group but not built: {missing} "
            "(tests/lease/run.py GROUPS)",
        )
        return cases.finish()
    running = {}

    def start(name):
        servers, targets = GROUPS[name]
        # One shell line per group: each executable from its package's directory, as
        # cargo runs it, stopping at the first that fails.
        steps = " && ".join(
            f"(cd {q(built[t][1])} && {q(built[t][0])} {' '.join(q(a) for a in args)})"
            for t, args in targets
        )
        log = tempfile.TemporaryFile(mode="w+")
        # A process group per group: stopping it reaches the test binaries and what
        # they started, not only the test environment.
        proc = subprocess.Popen(
            [sys.executable, TESTENV, "run", *servers, "--", "bash", "-c", steps],
            stdout=log,
            stderr=subprocess.STDOUT,
            cwd=ROOT,
            start_new_session=True,
        )
        running[name] = (proc, log, time.monotonic())

    for name in GROUPS:
        if name not in AFTER:
            start(name)
    later = [name for name in GROUPS if name in AFTER]
    results = []
    try:
        while running or later:
            if not running:
                start(later.pop(0))
            for name, (proc, log, started) in list(running.items()):
                if proc.poll() is None:
                    continue
                del running[name]
                took = time.monotonic() - started
                log.seek(0)
                output = log.read()
                print(
                    f"== test-lease group {name} ({took:.0f} s, exit {proc.returncode})", flush=True
                )
                sys.stdout.write(output)
                sys.stdout.flush()
                results.append((name, took, proc.returncode, output))
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
    for name, took, rc, _output in results:
        print(f"test-lease: {name:<13} {took:5.0f} s  {'ok' if rc == 0 else f'FAILED (exit {rc})'}")
    for name, _took, rc, output in sorted(results, key=lambda r: list(GROUPS).index(r[0])):
        group_cases(cases, name, rc, output)
    return cases.finish()


def q(s):
    return "'" + s.replace("'", "'\\''") + "'"


# bindings: each program builds a generator on the URL in its argument and prints
# "OK <node> <id>", or "ERROR <kind> <message>" (the C one: tests/lease/lease_url.c).
PY_PROG = """
import sys, flakeid
try:
    g = flakeid.Generator(lease=sys.argv[1], lease_ttl_ms=2000)
    print("OK", g.node, g.next_id())
    g.release_lease()
except flakeid.FlakeIdError as e:
    print("ERROR", type(e).__name__, e)
"""
NODE_PROG = """
const { Generator } = require(process.cwd() + "/node");
try {
  const g = new Generator({ lease: process.argv[1], leaseTtlMs: 2000 });
  console.log("OK", g.node, String(g.nextId()));
  g.releaseLease();
} catch (e) { console.log("ERROR", e.code, e.message); }
"""
BINDINGS = ("cli", "python", "node", "c")
URL_VARS = (
    "FLAKEID_TEST_ETCD_URL",
    "FLAKEID_TEST_ETCDS_URL",
    "FLAKEID_TEST_REDISS_URL",
    "FLAKEID_TEST_POSTGRES_TLS_URL",
    "FLAKEID_TEST_KUBE_URL",
)
# Far past a lease's wait (its lock delay on a new namespace): a binding that hangs
# fails its case instead of the run.
BINDING_TIMEOUT_S = 120


def lease_once(cmd, env):
    """What one binding printed for one URL (stdout and stderr), the CLI's bare ID
    said as the others say it."""
    try:
        r = subprocess.run(
            cmd,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            cwd=ROOT,
            env=env,
            timeout=BINDING_TIMEOUT_S,
        )
    except subprocess.TimeoutExpired:
        return f"no answer in {BINDING_TIMEOUT_S} s"
    out = r.stdout.rstrip("\n")
    if cmd[1:2] == ["generate"] and re.fullmatch(r"[0-9]+", out):
        out = f"OK {(int(out) >> 12) & 1023} {out}"
    return out


def judge(out, want):
    """(passed, detail) of one binding's answer: OK with an ID carrying its node id, or
    an error naming `want`."""
    if want == "OK":
        m = re.match(r"OK ([0-9]+) ([0-9]+)", out)
        if not m:
            return False, out
        node, id_ = int(m.group(1)), int(m.group(2))
        # Snowflake: the node id sits in bits 12..21.
        if (id_ >> 12) & 1023 != node:
            return False, f"ID {id_} does not carry node {node}"
        return True, f"node {node}"
    if want in out:
        return True, f"refused ({want})"
    return False, f"expected an error naming '{want}', got: {out}"


def bindings(argv):
    if argv:
        print("usage: run.py bindings", file=sys.stderr)
        return 2
    lib_dir = os.environ.get("C_LIB_DIR")
    if not lib_dir:
        print(
            "run.py bindings: C_LIB_DIR, where libflakeid.a is: "
            "make test-lease-bindings sets it (mk/c.mk)",
            file=sys.stderr,
        )
        return 2
    cli = testenv.build_cli()
    c_prog = os.path.join(ROOT, "target", "lease_url_c")
    subprocess.run(
        [
            "cc",
            "-std=c11",
            "-Iinclude",
            "tests/lease/lease_url.c",
            os.path.join(lib_dir, "libflakeid.a"),
            "-lpthread",
            "-ldl",
            "-lm",
            "-lrt",
            "-o",
            c_prog,
        ],
        check=True,
        cwd=ROOT,
    )
    py = os.environ.get("PY") or os.path.join(ROOT, "python", ".venv", "bin", "python")
    stack = testenv.Stack(redis=True, postgres=True, etcd=True, kube=True)
    cases = Cases("test-lease-bindings")
    try:
        stack.start()
        env = {**os.environ, **stack.env()}
        urls = [env[v] for v in URL_VARS if env.get(v)]
        if not urls:
            cases.failed("lease servers", "none started (make setup-lease installs them)")
            return cases.finish()

        def command(who, url):
            return {
                "cli": [cli, "generate", "-n", "1", "--lease", url, "--lease-ttl-ms", "2000"],
                "python": [py, "-c", PY_PROG, url],
                "node": ["node", "-e", NODE_PROG, url],
                "c": [c_prog, url],
            }[who]

        # Each check mostly waits (a lease on a new namespace, its lock delay): every
        # binding's checks of every URL run at once, each in a namespace of its own,
        # and their cases are recorded in order once all have ended.
        def checks(n, base, who):
            sep = "&" if "?" in base else "?"
            good = f"{base}{sep}namespace=bindings-{os.getpid()}-{n}-{who}"
            redacted = good.split("?", 1)[0]
            done = [(f"{who} {redacted}", *judge(lease_once(command(who, good), env), "OK"))]
            # Over TLS: the same URL with a CA that did not sign the server's certificate.
            if "ca.pem" in base or "sslrootcert" in base:
                bad = good.replace("/ca.pem", "/other-ca.pem")
                done.append(
                    (
                        f"{who} {redacted}, a wrong CA",
                        *judge(lease_once(command(who, bad), env), "unknown CA"),
                    )
                )
            return done

        jobs = [(n, base, who) for n, base in enumerate(urls, 1) for who in BINDINGS]
        with ThreadPoolExecutor(max_workers=len(jobs)) as pool:
            for done in list(pool.map(lambda job: checks(*job), jobs)):
                for name, ok, detail in done:
                    cases.record(name, ok, detail)
    except (testenv.EnvError, subprocess.CalledProcessError) as err:
        cases.failed("lease servers", f"testenv: {err}")
    finally:
        stack.stop()
    return cases.finish()


def main(argv):
    suites = {"stores": stores, "bindings": bindings}
    if not argv or argv[0] not in suites:
        print(__doc__, file=sys.stderr)
        return 2
    return suites[argv[0]](argv[1:])


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
