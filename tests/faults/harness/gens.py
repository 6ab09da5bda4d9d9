"""Generator slots: one leased generator per namespace, kept running by the harness
the way a process supervisor would (an exited generator is started again), with
the faults the nemesis applies to it.

Kinds (the issue asks for `flakeid serve` and in-process generators in Python,
Node and Rust):

    serve   the debug CLI's `flakeid serve --lease URL`, driven by serve_client.py over
            HTTP inside the same namespace (the client is not a generator: it is
            never paused, killed or clock-stepped)
    python  drivers/py_driver.py on the `flakeid` package (target/faults/venv)
    node    drivers/node_driver.mjs on @flakeid/node (node/)
    rust    the debug build of flakeid-faults-driver (tests/faults/driver)

Every generator process runs under libfaketime with its slot's timestamp file
(`FAKETIME_TIMESTAMP_FILE`, re-read on every call: `FAKETIME_NO_CACHE=1`) and only
the wall clock faked (`FAKETIME_DONT_FAKE_MONOTONIC=1`): the clock nemesis steps a
running process's wall clock by rewriting that file. Each process gets a UTS
namespace whose host name is `g<slot>-p<spawn>`: the lease token the store keeps
starts with it, which is how the checker tells holders apart in the store's
records without trusting process ids (pid_max here is 32768).
"""

import glob
import os
import signal
import subprocess
import time

from netns import exec_prefix

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", ".."))
FAKETIME_LIB = (
    glob.glob("/usr/lib/*/faketime/libfaketime.so.1")
    + glob.glob("/usr/lib/faketime/libfaketime.so.1")
    + [""]
)[0]
SERVE_PORT = 7676
# Where the CLI and the Rust driver are: cargo's debug output, under $CARGO_TARGET_DIR
# when set (a build with a patched core for an experiment: run.py --bin-dir).
BIN_DIR = os.path.join(
    os.path.abspath(os.environ.get("CARGO_TARGET_DIR") or os.path.join(ROOT, "target")), "debug"
)
# Threads sharing each Rust driver's generator, and the percentage of its calls that
# are runs of singles rather than batches, and which threads issue through a
# per-thread handle (run.py --rust-threads, --rust-singles-pct, --rust-handles).
RUST_THREADS = 2
RUST_SINGLES_PCT = 30
RUST_HANDLES = "mixed"
HANDLES = {"none": "0", "all": "1", "mixed": "2"}


def commands(kind, url, ttl_ms, rate, slot_dir, tag, seed):
    d = os.path.join(ROOT, "tests", "faults", "drivers")
    common = [
        "--dir",
        slot_dir,
        "--tag",
        tag,
        "--ttl-ms",
        str(ttl_ms),
        "--rate",
        str(rate),
        "--seed",
        str(seed),
    ]
    if kind == "serve":
        return [
            os.path.join(BIN_DIR, "flakeid"),
            "serve",
            "--listen",
            f"127.0.0.1:{SERVE_PORT}",
            "--lease",
            url,
            "--lease-ttl-ms",
            str(ttl_ms),
        ]
    if kind == "python":
        return [
            os.path.join(ROOT, "target", "faults", "venv", "bin", "python"),
            os.path.join(d, "py_driver.py"),
            "--url",
            url,
            *common,
        ]
    if kind == "node":
        return ["node", os.path.join(d, "node_driver.mjs"), "--url", url, *common]
    if kind == "rust":
        # Borrowing: the fence then carries the borrow allowance (ahead_ms).
        return [
            os.path.join(BIN_DIR, "flakeid-faults-driver"),
            "--url",
            url,
            *common,
            "--overflow",
            "borrow",
            "--max-batch",
            "8192",
            "--threads",
            str(RUST_THREADS),
            "--singles-pct",
            str(RUST_SINGLES_PCT),
            "--handles",
            HANDLES[RUST_HANDLES],
        ]
    raise ValueError(kind)


def missing(kinds):
    """The programs `kinds` run that are not there (not built, or built under another
    cargo target directory than BIN_DIR's), each path once."""
    paths = [commands(k, "", 0, 0, "", "", 0)[0] for k in dict.fromkeys(kinds) if k != "node"]
    return [p for p in dict.fromkeys(paths) if not os.access(p, os.X_OK)]


class Slot:
    def __init__(self, i, kind, ns, slot_dir, url, ttl_ms, rate, seed, log, suspend_shim=None):
        self.i, self.kind, self.ns, self.dir = i, kind, ns, slot_dir
        self.url, self.ttl_ms, self.rate, self.seed, self.log = url, ttl_ms, rate, seed, log
        self.name = f"g{i}"
        os.makedirs(slot_dir, exist_ok=True)
        self.ft = os.path.join(slot_dir, "faketime")
        self.set_clock(0.0, event=False)
        # The suspend fault (suspend_shim.c): the total time this slot's processes
        # were "suspended", subtracted from their CLOCK_MONOTONIC readings.
        self.shim = suspend_shim if kind in ("rust", "serve") else None
        self.suspend_file = os.path.join(slot_dir, "suspended_ns")
        with open(self.suspend_file, "wb") as f:
            f.write(bytes(8))
        self.suspended_ns = 0
        self.suspend_started = None
        self.proc = None
        self.client = None
        self.spawns = 0
        self.down_until = None  # held down by a kill nemesis until then (monotonic s)
        self.restart_at = None
        self.stopping = False

    # --- processes
    def env(self):
        e = dict(os.environ)
        if FAKETIME_LIB:
            e.update(
                LD_PRELOAD=FAKETIME_LIB,
                FAKETIME_TIMESTAMP_FILE=self.ft,
                FAKETIME_NO_CACHE="1",
                FAKETIME_DONT_FAKE_MONOTONIC="1",
                FAKETIME_DONT_RESET="1",
            )
        if self.shim:
            e["LD_PRELOAD"] = f"{self.shim} {e.get('LD_PRELOAD', '')}".strip()
            e["FLAKEID_FAULTS_SUSPEND_FILE"] = self.suspend_file
        e["FLAKEID_LOG"] = "warn"
        return e

    def start(self):
        tag = f"p{self.spawns}"
        self.spawns += 1
        argv = commands(
            self.kind,
            self.url,
            self.ttl_ms,
            self.rate,
            self.dir,
            tag,
            self.seed * 1000 + self.spawns,
        )
        if self.kind == "serve":
            # The client attributes what it is given to this tag: written before the
            # process exists, and only after the previous one has exited.
            with open(os.path.join(self.dir, "serve.tag.tmp"), "w") as f:
                f.write(tag)
            os.replace(os.path.join(self.dir, "serve.tag.tmp"), os.path.join(self.dir, "serve.tag"))
        out = open(os.path.join(self.dir, f"{tag}.log"), "ab")
        self.proc = subprocess.Popen(
            exec_prefix(self.ns, hostname=f"{self.name}-{tag}") + argv,
            env=self.env(),
            stdout=out,
            stderr=out,
            start_new_session=True,
        )
        out.close()
        self.tag = tag
        self.log("proc", slot=self.name, what="start", tag=tag, pid=self.proc.pid, kind=self.kind)
        if self.kind == "serve" and (self.client is None or self.client.poll() is not None):
            out = open(os.path.join(self.dir, "client.log"), "ab")
            cmd = [
                "python3",
                os.path.join(ROOT, "tests", "faults", "drivers", "serve_client.py"),
                "--port",
                str(SERVE_PORT),
                "--dir",
                self.dir,
                "--rate",
                str(self.rate),
                "--seed",
                str(self.seed),
            ]
            self.client = subprocess.Popen(
                exec_prefix(self.ns) + cmd, stdout=out, stderr=out, start_new_session=True
            )
            out.close()

    def alive(self):
        return self.proc is not None and self.proc.poll() is None

    def supervise(self, now):
        """Starts the generator again once it has exited, as a supervisor would
        (unless a kill nemesis holds it down, or the scenario is stopping)."""
        if self.proc is not None and self.proc.poll() is not None and self.restart_at is None:
            rc = self.proc.returncode
            self.log("proc", slot=self.name, what="exit", tag=self.tag, pid=self.proc.pid, rc=rc)
            self.restart_at = now + 0.2
            self.proc = None
        if self.proc is None and not self.stopping:
            if self.down_until is not None and now < self.down_until:
                return
            self.down_until = None
            if self.restart_at is None or now >= self.restart_at:
                self.restart_at = None
                self.start()

    def signal(self, sig):
        if self.alive():
            try:
                os.kill(self.proc.pid, sig)
            except ProcessLookupError:
                pass

    def kill9(self, down_s):
        if self.alive():
            self.signal(signal.SIGKILL)
            self.proc.wait()
            self.log("proc", slot=self.name, what="kill9", tag=self.tag, pid=self.proc.pid)
            self.proc = None
        self.down_until = time.monotonic() + down_s

    def log_term(self):
        """The event of the slot's process having ended, with its exit status."""
        self.log(
            "proc",
            slot=self.name,
            what="term",
            tag=self.tag,
            pid=self.proc.pid,
            rc=self.proc.returncode,
        )

    def terminate(self, down_s):
        """A clean stop (the lease released), then a start after `down_s`."""
        if self.alive():
            # Logged first: the process may release its lease from now on.
            self.log("proc", slot=self.name, what="stopping", tag=self.tag, pid=self.proc.pid)
            self.signal(signal.SIGCONT)
            self.signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                self.signal(signal.SIGKILL)
                self.proc.wait()
            self.log_term()
            self.proc = None
        self.down_until = time.monotonic() + down_s

    def pause(self):
        self.signal(signal.SIGSTOP)

    def resume(self):
        self.signal(signal.SIGCONT)

    def suspend(self):
        """A host suspend as this process sees it: stopped, and on resume its
        monotonic clock has not moved while the wall and boot clocks have."""
        self.suspend_started = time.monotonic_ns()
        self.signal(signal.SIGSTOP)

    def wake(self):
        if self.suspend_started is None:
            return
        self.suspended_ns += time.monotonic_ns() - self.suspend_started
        self.suspend_started = None
        with open(self.suspend_file, "r+b") as f:
            f.write(self.suspended_ns.to_bytes(8, "little", signed=True))
        self.log("suspend", slot=self.name, total_ns=self.suspended_ns)
        self.signal(signal.SIGCONT)

    def set_clock(self, offset_s, event=True):
        """Steps this slot's wall clock to real time + offset (libfaketime reads the
        file on every clock call of every process of the slot)."""
        tmp = self.ft + ".tmp"
        with open(tmp, "w") as f:
            f.write(f"{offset_s:+.3f}\n")
        os.replace(tmp, self.ft)
        if event:
            self.log("clock", slot=self.name, offset_s=offset_s)

    def stop(self):
        self.stopping = True
        if self.alive():
            self.log("proc", slot=self.name, what="stopping", tag=self.tag, pid=self.proc.pid)
        for p in (self.proc, self.client):
            if p is not None and p.poll() is None:
                try:
                    os.kill(p.pid, signal.SIGCONT)
                    os.kill(p.pid, signal.SIGTERM)
                except ProcessLookupError:
                    pass
        for p in (self.proc, self.client):
            if p is None:
                continue
            try:
                p.wait(timeout=5)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()
        if self.proc is not None:
            self.log_term()
        self.proc = None
