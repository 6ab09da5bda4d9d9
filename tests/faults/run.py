#!/usr/bin/env python3
"""The fault suite (docs/faults.md): leased generators in their own
network namespaces, a real lease store in another, a nemesis from a printed seed,
and an independent checker.

    run.py short [--seed N] [--stores a,b] [--jobs N] [--keep] [--no-doc]   make test-faults
    run.py long  [--seed N] ...                                  make faults-long
    run.py cleanup        remove what aborted runs left (namespaces, processes, files)
    run.py recheck DIR    check a run's scenarios again (those whose raw IDs were kept)
                          and rewrite its results (and, unless --no-doc, the table)

Needs root (namespaces, nftables), the servers and tools make setup-faults
installs, and the generators built (mk/faults.mk does both). Results: the run's
directory target/faults/<date>-<run>/ (results.json, and per scenario its logs,
IDs and result.json) and, unless --no-doc, the table in docs/faults.md.
"""

import argparse
import datetime
import json
import os
import random
import secrets
import signal
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "harness"))

import gens  # noqa: E402
import netns  # noqa: E402
import nemesis  # noqa: E402
from gens import ROOT, Slot  # noqa: E402
from stores import STORES, make_certs  # noqa: E402

sys.path.insert(0, os.path.join(ROOT, "tests", "env"))
from cases import Cases  # noqa: E402

LAYOUT = {
    "name": "snowflake",
    "time_bits": 41,
    "node_bits": 10,
    "sequence_bits": 12,
    "tick_ms": 1,
    "epoch_ms": 1288834974657,
}
KINDS = ["serve", "python", "node", "rust"]
MODES = {
    # warm-up (first lease: the lock delay of a new namespace), faults, quiet end
    "short": {"warm": 4.0, "faults": 20.0, "quiet": 12.0},
    "long": {"warm": 4.0, "faults": 300.0, "quiet": 15.0},
}
TTL_MS = 2000
RATE = 12000
VENV_PY = os.path.join(ROOT, "target", "faults", "venv", "bin", "python")


class Interrupted(Exception):
    pass


def on_signal(sig, _frame):
    raise Interrupted(f"signal {sig}")


def mono():
    return time.monotonic_ns()


class Recorder:
    def __init__(self, path):
        self.fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)

    def __call__(self, ev, **fields):
        os.write(self.fd, (json.dumps({"t": mono(), "ev": ev, **fields}) + "\n").encode())


class Scenario:
    def __init__(self, run, topo, work, out, store_name, seed, mode, certs, kinds, timing, opts):
        self.run, self.topo, self.mode, self.kinds, self.timing, self.opts = (
            run,
            topo,
            mode,
            kinds,
            timing,
            opts,
        )
        self.name, self.seed = store_name, seed
        self.dir = os.path.join(out, store_name)
        os.makedirs(os.path.join(self.dir, "slots"), exist_ok=True)
        self.log = Recorder(os.path.join(self.dir, "events.jsonl"))
        cls, tls = STORES[store_name]
        ns_name = f"fz-{run}-{store_name}"
        self.store = cls(topo.store, work, certs, tls, ns_name, run)
        self.procs = []  # proxy, poller
        self.store_should_run = False
        self.store_paused = False
        self.store_restart_at = 0.0
        self.proxy_conf = os.path.join(self.dir, "proxy.json")
        self.delays = {}

    # --- helper processes in the store's namespace
    def helper(self, name, argv):
        out = open(os.path.join(self.dir, f"{name}.log"), "ab")
        p = subprocess.Popen(
            netns.exec_prefix(self.topo.store) + argv,
            stdout=out,
            stderr=out,
            start_new_session=True,
        )
        out.close()
        self.procs.append((name, p))
        return p

    def wait_for_line(self, name, text, timeout=10):
        """Waits until a helper has written `text` to its log (it is ready)."""
        path = os.path.join(self.dir, f"{name}.log")
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            with open(path, errors="replace") as f:
                if text in f.read():
                    return
            time.sleep(0.02)
        raise RuntimeError(f"the harness's {name} did not start: see {path}")

    def write_proxy_conf(self):
        tmp = self.proxy_conf + ".tmp"
        with open(tmp, "w") as f:
            json.dump(self.delays, f)
        os.replace(tmp, self.proxy_conf)

    def supervise_store(self):
        s = self.store
        if (
            self.store_should_run
            and not self.store_paused
            and not s.alive()
            and time.monotonic() >= self.store_restart_at
        ):
            if s.proc is not None:
                self.log("store", what="exited", rc=s.proc.returncode)
            s.spawn_again()
            self.log("store", what="start", pid=s.pid)
            self.store_restart_at = time.monotonic() + 0.25

    # --- faults
    def apply(self, f, phase):
        kind, target = f["fault"], f["target"]
        args = {k: v for k, v in f.items() if k not in ("at", "heal", "fault", "target")}
        self.log("fault", phase=phase, fault=kind, target=target, **args)
        if target == "store":
            s = self.store
            if kind == "store-pause":
                if phase == "start":
                    s.pause()
                    self.store_paused = True
                else:
                    s.resume()
                    self.store_paused = False
            elif kind == "store-kill":
                if phase == "start":
                    if s.loses_data_on_restart:
                        self.log("store", what="lose-data", how="kill -9, restarted empty")
                    self.store_should_run = False
                    s.kill9()
                    self.log("store", what="kill9")
                    if s.loses_data_on_restart:
                        self.log("store", what="lost-data")
                else:
                    self.store_should_run = True
                    self.store_restart_at = 0.0
            elif kind == "store-loss":
                if phase == "start":
                    self.log("store", what="lose-data", how=s.loss_how)
                    if s.kind == "etcd":
                        self.store_should_run = False
                    s.lose_data()
                    self.log("store", what="lost-data")
                else:
                    self.store_should_run = True
                    self.store_restart_at = 0.0
            return
        slot = self.slots[int(target[1:]) - 1]
        i = slot.i
        if kind == "partition":
            self.topo.partition(i, f["direction"]) if phase == "start" else self.topo.heal(i)
        elif kind == "loss":
            self.topo.loss(i, f["percent"]) if phase == "start" else self.topo.heal(i)
        elif kind == "delay":
            if phase == "start":
                self.delays[netns.gen_ip(i)] = {
                    "delay_ms": f["delay_ms"],
                    "jitter_ms": f["jitter_ms"],
                }
            else:
                self.delays.pop(netns.gen_ip(i), None)
            self.write_proxy_conf()
        elif kind == "pause":
            slot.pause() if phase == "start" else slot.resume()
        elif kind == "suspend":
            slot.suspend() if phase == "start" else slot.wake()
        elif kind == "kill":
            if phase == "start":
                slot.kill9(f["heal"] - f["at"])
        elif kind == "term":
            if phase == "start":
                slot.terminate(f["heal"] - f["at"])
        elif kind == "clock":
            slot.set_clock(f["offset_s"] if phase == "start" else 0.0)
        else:
            raise ValueError(kind)

    # --- the run
    def execute(self):
        m = self.timing
        t0 = time.monotonic()
        if self.opts.schedule:
            with open(self.opts.schedule) as f:
                faults = json.load(f)
        elif self.opts.suspend:
            shimmed = [i for i, k in enumerate(self.kinds, 1) if k in ("rust", "serve")]
            faults = nemesis.suspend_schedule(
                self.seed, shimmed, m["warm"], m["warm"] + m["faults"], TTL_MS / 1000
            )
        else:
            faults = nemesis.schedule(
                self.seed,
                len(self.kinds),
                m["warm"],
                m["warm"] + m["faults"],
                TTL_MS / 1000,
                self.store.loses_data_on_restart,
                self.opts.unsafe_clock,
            )
        with open(os.path.join(self.dir, "schedule.json"), "w") as f:
            json.dump(faults, f, indent=0)
        self.write_proxy_conf()
        self.store.start()
        self.store_should_run = True
        self.log("store", what="start", pid=self.store.pid)
        self.helper(
            "proxy",
            [
                "python3",
                os.path.join(HERE, "harness", "proxy.py"),
                "--listen",
                f"{netns.STORE_IP}:{self.store.gen_port}",
                "--upstream",
                f"{netns.STORE_IP}:{self.store.upstream_port}",
                "--control",
                self.proxy_conf,
            ],
        )
        self.wait_for_line("proxy", "listening")
        self.helper(
            "poller",
            [
                "python3",
                os.path.join(HERE, "harness", "poller.py"),
                *self.store.poller_args(),
                "--namespace",
                self.store.namespace,
                "--out",
                os.path.join(self.dir, "polls.jsonl"),
            ],
        )
        url = self.store.gen_url()
        if self.opts.no_proxy:
            url = url.replace(f":{self.store.gen_port}/", f":{self.store.upstream_port}/")
        self.slots = [
            Slot(
                i,
                kind,
                self.topo.gens[i - 1],
                os.path.join(self.dir, "slots", f"g{i}"),
                url,
                TTL_MS,
                self.opts.rate,
                self.seed * 10 + i,
                self.log,
                self.opts.shim,
            )
            for i, kind in enumerate(self.kinds, 1)
        ]
        t_start = mono()
        self.log("scenario", what="start", seed=self.seed, store=self.name)
        actions = sorted(
            [(f["at"], 0, "start", f) for f in faults]
            + [(f["heal"], 1, "heal", f) for f in faults],
            key=lambda a: (a[0], a[1]),
        )
        end = m["warm"] + m["faults"] + m["quiet"]
        quiet_logged = False
        while True:
            now = time.monotonic() - t0
            while actions and actions[0][0] <= now:
                _, _, phase, f = actions.pop(0)
                self.apply(f, phase)
            if not quiet_logged and now >= m["warm"] + m["faults"]:
                t_quiet = mono()
                self.log("scenario", what="quiet")
                quiet_logged = True
            if now >= end:
                break
            self.supervise_store()
            for s in self.slots:
                s.supervise(time.monotonic())
            for name, p in self.procs:
                if p.poll() is not None:
                    raise RuntimeError(
                        f"the harness's {name} exited ({p.returncode}): see {self.dir}/{name}.log"
                    )
            time.sleep(0.02)
        t_end = mono()
        self.log("scenario", what="end")
        sc = {
            "name": self.name,
            "store": self.name,
            "seed": self.seed,
            "mode": self.mode,
            "layout": LAYOUT,
            "ttl_ms": TTL_MS,
            "rate": self.opts.rate,
            "t_start": t_start,
            "t_quiet": t_quiet,
            "t_end": t_end,
            "slots": [{"name": s.name, "kind": s.kind} for s in self.slots],
            "faults": len(faults),
        }
        with open(os.path.join(self.dir, "scenario.json"), "w") as f:
            json.dump(sc, f, indent=1)

    def stop(self):
        for s in getattr(self, "slots", []):
            s.stop()
        for name, p in self.procs:
            if p.poll() is None:
                p.terminate()
                try:
                    p.wait(timeout=3)
                except subprocess.TimeoutExpired:
                    p.kill()
                    p.wait()
        self.procs = []
        self.store_should_run = False
        self.store.stop()
        for i in range(1, len(self.kinds) + 1):
            try:
                self.topo.heal(i)
            except RuntimeError:
                pass


def check(sdir):
    r = subprocess.run([VENV_PY, os.path.join(HERE, "checker", "check.py"), sdir], text=True)
    try:
        with open(os.path.join(sdir, "result.json")) as f:
            return json.load(f)
    except OSError:
        return {
            "scenario": os.path.basename(sdir),
            "pass": False,
            "error": f"checker exited {r.returncode}",
        }


def fmt_ms(v):
    return "—" if v is None else f"{v / 1000:.2f} s" if v >= 1000 else f"{v:.0f} ms"


def markdown(results, meta):
    lines = [
        f"Run `{meta['run']}`, {meta['mode']}, seed **{meta['seed']}** "
        f"(replay: `{meta['replay']}`), {meta['date']}, {meta['wall_s']:.0f} s wall, "
        f"commit {meta['commit']}.",
        "",
        "| scenario | IDs checked | duplicates | other violations | faults "
        "| unavailability p50 / max | recovery p50 / max "
        "| availability (serve/py/node/rust) | IDs/s while up (min) |",
        "|---|---:|---:|---|---:|---|---|---|---:|",
    ]
    for r in results:
        if "violations" not in r:
            lines.append(f"| {r['scenario']} | — | — | {r.get('error', 'failed')} | | | | | |")
            continue
        v = r["violations"]
        other = ", ".join(f"{k} {n}" for k, n in v.items() if k != "duplicates" and n) or "none"
        u, rc = r["unavailability_ms"], r["recovery_ms"]
        av = "/".join(
            f"{s['availability']:.2f}" if s.get("availability") is not None else "—"
            for s in r["slots"].values()
        )
        rate = min((s.get("rate_while_up", 0) for s in r["slots"].values()), default=0)
        lines.append(
            f"| {r['scenario']} | {r['ids_checked']:,} | {v['duplicates']} | {other} "
            f"| {r['faults']} | {fmt_ms(u['p50'])} / {fmt_ms(u['max'])} "
            f"| {fmt_ms(rc['p50'])} / {fmt_ms(rc['max'])} | {av} | {rate:,} |"
        )
    total = sum(r.get("ids_checked", 0) for r in results)
    dups = sum(r.get("violations", {}).get("duplicates", 0) for r in results)
    lines += [
        "",
        f"Total: **{total:,} IDs checked, {dups} duplicates**; "
        f"{'PASS' if all(r.get('pass') for r in results) else 'FAIL'}.",
    ]
    return "\n".join(lines)


def write_doc(md, mode):
    path = os.path.join(ROOT, "docs", "faults.md")
    begin, end = f"<!-- results:{mode} -->", f"<!-- /results:{mode} -->"
    with open(path) as f:
        text = f.read()
    if begin not in text:
        return
    head, rest = text.split(begin, 1)
    _, tail = rest.split(end, 1)
    with open(path, "w") as f:
        f.write(f"{head}{begin}\n{md}\n{end}{tail}")


def write_results(out, meta, results, doc):
    md = markdown(results, meta)
    with open(os.path.join(out, "results.json"), "w") as f:
        json.dump({**meta, "scenarios": results}, f, indent=1)
    with open(os.path.join(out, "results.md"), "w") as f:
        f.write(md + "\n")
    if doc:
        write_doc(md, meta["mode"])
    return md


def recheck(a):
    with open(os.path.join(a.dir, "results.json")) as f:
        saved = json.load(f)
    meta = {k: v for k, v in saved.items() if k != "scenarios"}
    results = []
    for old in saved["scenarios"]:
        sdir = os.path.join(a.dir, old["scenario"])
        has_ids = any(f.endswith(".ids") for _root, _dirs, files in os.walk(sdir) for f in files)
        r = check(sdir) if has_ids else old
        r["wall_s"] = old.get("wall_s")
        results.append(r)
    print(write_results(a.dir, meta, results, not a.no_doc))
    return tally(results, [r["scenario"] for r in saved["scenarios"]])


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("mode", choices=["short", "long", "cleanup", "recheck"])
    p.add_argument("dir", nargs="?", help="recheck: the run's directory")
    p.add_argument("--seed", type=int, default=None)
    p.add_argument("--stores", default=",".join(STORES))
    p.add_argument("--kinds", default=",".join(KINDS), help="generator per slot (development)")
    p.add_argument("--faults-s", type=float, help="seconds of faults per scenario (development)")
    p.add_argument("--keep", action="store_true", help="keep the raw IDs of passing scenarios")
    p.add_argument(
        "--no-doc", action="store_true", help="do not write the table into docs/faults.md"
    )
    p.add_argument(
        "--unsafe-clock",
        action="store_true",
        help="allow clock steps next to data loss (beyond the lease design's assumption)",
    )
    p.add_argument(
        "--suspend",
        action="store_true",
        help="the lease-deadline-clock experiment: host suspends (suspend_shim.c) and "
        "takeovers only",
    )
    p.add_argument("--rate", type=int, default=RATE, help="IDs/s each generator is asked for")
    p.add_argument(
        "--rust-threads",
        type=int,
        default=gens.RUST_THREADS,
        help="threads sharing each Rust driver's generator (each its own IDs file)",
    )
    p.add_argument(
        "--rust-singles-pct",
        type=int,
        default=30,
        help="percent (in tens) of a Rust driver's calls that are runs of next_id, "
        "the rest batches",
    )
    p.add_argument(
        "--rust-handles",
        choices=sorted(gens.HANDLES),
        default=gens.RUST_HANDLES,
        help="which Rust driver threads issue through a per-thread handle (Generator::local()): "
        "none, all, or mixed (the odd-numbered; the others call the shared generator)",
    )
    p.add_argument(
        "--bin-dir",
        help="the flakeid CLI and Rust driver to use "
        "(default: debug/ in cargo's target directory, $CARGO_TARGET_DIR when set)",
    )
    p.add_argument(
        "--schedule",
        help="faults from this JSON file (a scenario's schedule.json) instead of the seed's",
    )
    p.add_argument(
        "--no-proxy",
        action="store_true",
        help="generators connect to the store directly (no delay)",
    )
    p.add_argument(
        "--jobs",
        type=int,
        help="scenarios run at once, each in a topology of its own (default: 2 short, 1 long)",
    )
    p.add_argument(
        "--part-of", metavar="DIR", help=argparse.SUPPRESS
    )  # a --jobs child: its results go to DIR
    a = p.parse_args()
    if a.mode == "recheck":
        return recheck(a)
    if os.geteuid() != 0:
        print("faults: needs root (network namespaces, nftables)", file=sys.stderr)
        return 2
    if not a.part_of:
        netns.sweep_stale()
    if a.mode == "cleanup":
        return 0
    if a.bin_dir:
        gens.BIN_DIR = os.path.abspath(a.bin_dir)
    absent = gens.missing(a.kinds.split(",")) + ([] if os.access(VENV_PY, os.X_OK) else [VENV_PY])
    if absent:
        print(
            f"faults: not built: {', '.join(absent)} (make faults-build: setup-faults, "
            "the generators with the same CARGO_TARGET_DIR; or --bin-dir)",
            file=sys.stderr,
        )
        return 2
    for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        signal.signal(sig, on_signal)
    seed = a.seed if a.seed is not None else secrets.randbelow(10**9)
    run = secrets.token_hex(3)
    stamp = datetime.datetime.now(datetime.timezone.utc).strftime("%Y%m%dT%H%M%SZ")
    out = a.part_of or os.path.join(ROOT, "target", "faults", f"{stamp}-{run}")
    os.makedirs(out, exist_ok=True)
    stores = [s for s in a.stores.split(",") if s]
    replay = f"make {'test-faults' if a.mode == 'short' else 'faults-long'} FAULTS_SEED={seed}"
    jobs = max(1, min(a.jobs or (2 if a.mode == "short" else 1), len(stores)))
    if a.part_of:
        print(f"faults: part {run} of the run in {out}: stores {', '.join(stores)}", flush=True)
    else:
        print(
            f"faults: run {run}, {a.mode}, seed {seed} (replay: {replay}); "
            f"stores {', '.join(stores)}; {jobs} at once; results in {out}",
            flush=True,
        )
    started = time.monotonic()
    if jobs > 1:
        results = run_parts(a, seed, out, stores, jobs)
        if results is None:
            return 130
        return finish(a, run, seed, replay, out, stores, results, started)
    work = f"/tmp/fz{run}"
    os.makedirs(work, exist_ok=True)
    os.chmod(work, 0o755)
    kinds = a.kinds.split(",")
    gens.RUST_THREADS, gens.RUST_SINGLES_PCT = a.rust_threads, a.rust_singles_pct
    gens.RUST_HANDLES = a.rust_handles
    a.shim = None
    if a.suspend:
        a.shim = os.path.join(ROOT, "target", "faults", "suspend_shim.so")
        subprocess.run(
            [
                "cc",
                "-O2",
                "-shared",
                "-fPIC",
                "-o",
                a.shim,
                os.path.join(HERE, "suspend", "suspend_shim.c"),
                "-ldl",
            ],
            check=True,
        )
    timing = dict(MODES[a.mode])
    if a.faults_s is not None:
        timing["faults"] = a.faults_s
    topo = netns.Topology(run, len(kinds))
    results = []
    try:
        topo.create()
        certs = make_certs(os.path.join(work, "certs"), netns.STORE_IP)
        for n, store in enumerate(stores):
            sseed = random.Random(f"{seed}/{store}").randrange(1, 2**31)
            t = time.monotonic()
            sc = Scenario(run, topo, work, out, store, sseed, a.mode, certs, kinds, timing, a)
            try:
                sc.execute()
            finally:
                sc.stop()
            r = check(sc.dir)
            r["wall_s"] = round(time.monotonic() - t, 1)
            results.append(r)
            if r.get("pass") and not a.keep:
                for root, _dirs, files in os.walk(sc.dir):
                    for f in files:
                        if f.endswith(".ids"):
                            os.remove(os.path.join(root, f))
    except Interrupted as e:
        print(f"faults: interrupted ({e}); cleaning up", file=sys.stderr)
        return 130
    finally:
        # A second signal must not cut the clean-up short.
        for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
            signal.signal(sig, signal.SIG_IGN)
        topo.destroy()
        for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
            signal.signal(sig, signal.SIG_DFL)
    if a.part_of:
        with open(os.path.join(out, f"part-{run}.json"), "w") as f:
            json.dump(results, f)
        return 0 if all(r.get("pass") for r in results) and len(results) == len(stores) else 1
    return finish(a, run, seed, replay, out, stores, results, started)


def run_parts(a, seed, out, stores, jobs):
    """`--jobs N`: the scenarios in N parts at once, each part a child run.py with a
    topology (namespaces, store, generators) and run id of its own, so no fault of
    one reaches another; each scenario's faults still come from the run's seed and
    its store's name, as in a run of one part. Returns the scenarios' results in
    the order of `stores`, or None when interrupted."""
    parts = [stores[i::jobs] for i in range(jobs)]
    # The child gets this run's arguments with the part's stores (the last
    # occurrence of an option wins).
    children = [
        subprocess.Popen(
            [
                sys.executable,
                os.path.abspath(__file__),
                *sys.argv[1:],
                "--seed",
                str(seed),
                "--stores",
                ",".join(part),
                "--jobs",
                "1",
                "--part-of",
                out,
                "--no-doc",
            ]
        )
        for part in parts
    ]
    try:
        for c in children:
            c.wait()
    except Interrupted as e:
        print(f"faults: interrupted ({e}); the parts clean up", file=sys.stderr)
        for c in children:
            if c.poll() is None:
                c.send_signal(signal.SIGTERM)
        for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
            signal.signal(sig, signal.SIG_IGN)
        for c in children:
            c.wait()
        return None
    by_store = {}
    for name in os.listdir(out):
        if name.startswith("part-") and name.endswith(".json"):
            with open(os.path.join(out, name)) as f:
                for r in json.load(f):
                    by_store[r.get("scenario")] = r
    # A part that failed before checking a scenario leaves it out: finish() counts it.
    return [by_store[s] for s in stores if s in by_store]


def finish(a, run, seed, replay, out, stores, results, started):
    wall = time.monotonic() - started
    commit = subprocess.run(
        ["git", "-C", ROOT, "rev-parse", "--short", "HEAD"], capture_output=True, text=True
    ).stdout.strip()
    meta = {
        "run": run,
        "mode": a.mode,
        "seed": seed,
        "replay": replay,
        "wall_s": wall,
        "commit": commit,
        "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
    }
    print(write_results(out, meta, results, not a.no_doc))
    ok = all(r.get("pass") for r in results) and len(results) == len(stores)
    print(f"faults: {'PASS' if ok else 'FAIL'} in {wall:.0f} s (seed {seed}; {out})")
    return tally(results, stores)


def tally(results, scenarios):
    """Each scenario a case (tests/env/cases.py): passed, failed with its violations or
    error, or failed for having no result; the closing line and the exit status."""
    cases = Cases("faults")
    by_name = {r.get("scenario"): r for r in results}
    for name in scenarios:
        r = by_name.get(name)
        if r is None:
            cases.failed(name, "no result (its part failed before checking it: see above)")
        elif r.get("pass"):
            cases.passed(name)
        else:
            v = {k: n for k, n in r.get("violations", {}).items() if n}
            cases.failed(
                name, r.get("error") or ", ".join(f"{k} {n}" for k, n in v.items()) or "failed"
            )
    return cases.finish()


if __name__ == "__main__":
    sys.exit(main())
