"""The suite's network: one namespace for the lease store, one per generator.

    store ns  fz<RUN>-s   br0 127.77.0.1/24, one veth port v<i> per generator
    gen ns    fz<RUN>-g<i> eth0 127.77.0.<10+i>/24 (the other end of v<i>)

Addresses are in the loopback range (127.0.0.0/8), as the issue asks: no traffic
can leave the machine. A namespace's own loopback route table claims all of
127.0.0.0/8, so each namespace keeps only 127.0.0.1 on `lo` and lets the rest of
the range go out on its interface (`route_localnet=1`, without which the kernel
drops 127.x packets on a non-loopback interface as martians).

Faults live inside a generator's namespace, in one nftables table `inet fz`
(chains `in` and `out`): a partition drops packets to or from the store's address
(one-way or both), loss drops a random share of them (`numgen random`). Delay is
the proxy's (proxy.py): this machine's kernel has no `sch_netem`.

Every name carries the run id, and `/run/flakeid-faults/<RUN>/owner` records the
harness's pid and start time: a later run removes the namespaces of runs whose
owner is gone (`sweep_stale`), so an aborted run never leaves anything behind for
long and parallel runs never touch each other's.
"""

import os
import re
import signal
import subprocess
import time

STORE_IP = "127.77.0.1"
SUBNET = "127.77.0.0/24"
REGISTRY = "/run/flakeid-faults"
NAME = re.compile(r"^fz([a-z0-9]{6})-(s|g\d+)$")


def gen_ip(i):
    return f"127.77.0.{10 + i}"


def sh(*args, check=True, input=None):
    r = subprocess.run(list(args), capture_output=True, text=True, input=input)
    if check and r.returncode != 0:
        raise RuntimeError(f"{' '.join(args)}: {r.stderr.strip() or r.stdout.strip()}")
    return r.stdout


def proc_start_time(pid):
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[19]
    except (OSError, IndexError):
        return None


def ns_pids(ns):
    out = sh("ip", "netns", "pids", ns, check=False)
    return [int(p) for p in out.split() if p.isdigit()]


def kill_ns_processes(ns):
    """SIGKILL everything still running in `ns` (a stopped process dies too)."""
    for _ in range(50):
        pids = ns_pids(ns)
        if not pids:
            return
        for p in pids:
            try:
                os.kill(p, signal.SIGKILL)
            except ProcessLookupError:
                pass
        time.sleep(0.05)


def delete_ns(ns):
    kill_ns_processes(ns)
    sh("ip", "netns", "del", ns, check=False)


def list_ns():
    out = sh("ip", "netns", "list", check=False)
    return [line.split()[0] for line in out.splitlines() if line.strip()]


def sweep_stale(log=print):
    """Removes the namespaces (and their processes) of runs whose harness is gone."""
    runs = {}
    for ns in list_ns():
        m = NAME.match(ns)
        if m:
            runs.setdefault(m.group(1), []).append(ns)
    if os.path.isdir(REGISTRY):
        for run in os.listdir(REGISTRY):
            runs.setdefault(run, [])
    for run, names in runs.items():
        if owner_alive(run):
            continue
        for ns in names:
            delete_ns(ns)
        cleanup_files(run)
        if names:
            log(f"faults: removed {len(names)} namespaces of aborted run {run}")


def owner_alive(run):
    try:
        with open(os.path.join(REGISTRY, run, "owner")) as f:
            pid, start = f.read().split()
    except (OSError, ValueError):
        return False
    return proc_start_time(int(pid)) == start


def cleanup_files(run):
    import shutil

    shutil.rmtree(os.path.join(REGISTRY, run), ignore_errors=True)
    shutil.rmtree(f"/tmp/fz{run}", ignore_errors=True)
    for d in os.listdir("/dev/shm") if os.path.isdir("/dev/shm") else []:
        if d.startswith(f"fz{run}-"):
            shutil.rmtree(os.path.join("/dev/shm", d), ignore_errors=True)


def register(run):
    d = os.path.join(REGISTRY, run)
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, "owner"), "w") as f:
        f.write(f"{os.getpid()} {proc_start_time(os.getpid())}\n")


class Topology:
    def __init__(self, run, n_gens):
        self.run = run
        self.store = f"fz{run}-s"
        self.gens = [f"fz{run}-g{i}" for i in range(1, n_gens + 1)]

    def all(self):
        return [self.store, *self.gens]

    def _ns_base(self, ns):
        sh("ip", "netns", "add", ns)
        sh("ip", "-n", ns, "link", "set", "lo", "up")
        sh(
            "ip",
            "netns",
            "exec",
            ns,
            "sysctl",
            "-qw",
            "net.ipv4.conf.all.route_localnet=1",
            "net.ipv4.conf.default.route_localnet=1",
        )
        # Keep 127.0.0.1 on lo; the rest of 127/8 is routed like any other subnet.
        sh("ip", "-n", ns, "route", "del", "local", "127.0.0.0/8", "dev", "lo", "table", "local")
        sh("ip", "-n", ns, "route", "replace", "local", "127.0.0.1", "dev", "lo", "table", "local")

    def create(self):
        register(self.run)
        self._ns_base(self.store)
        sh("ip", "-n", self.store, "link", "add", "br0", "type", "bridge")
        sh("ip", "-n", self.store, "addr", "add", f"{STORE_IP}/24", "dev", "br0")
        sh("ip", "-n", self.store, "link", "set", "br0", "up")
        for i, ns in enumerate(self.gens, 1):
            self._ns_base(ns)
            sh(
                "ip",
                "-n",
                self.store,
                "link",
                "add",
                f"v{i}",
                "type",
                "veth",
                "peer",
                "name",
                "eth0",
                "netns",
                ns,
            )
            sh("ip", "-n", self.store, "link", "set", f"v{i}", "master", "br0")
            sh("ip", "-n", self.store, "link", "set", f"v{i}", "up")
            sh("ip", "-n", ns, "addr", "add", f"{gen_ip(i)}/24", "dev", "eth0")
            sh("ip", "-n", ns, "link", "set", "eth0", "up")
            nft(
                ns,
                "add table inet fz\n"
                "add chain inet fz in { type filter hook input priority 0; policy accept; }\n"
                "add chain inet fz out { type filter hook output priority 0; policy accept; }\n",
            )

    def destroy(self):
        for ns in self.all():
            delete_ns(ns)
        cleanup_files(self.run)

    # Faults, inside generator i's namespace.
    def partition(self, i, direction):
        """direction: `both`, `out` (the generator's packets to the store are
        dropped; the store's answers would pass) or `in` (its requests reach the
        store, which renews the lease, but no answer comes back)."""
        ns = self.gens[i - 1]
        rules = []
        if direction in ("both", "out"):
            rules.append(f"add rule inet fz out ip daddr {STORE_IP} drop")
        if direction in ("both", "in"):
            rules.append(f"add rule inet fz in ip saddr {STORE_IP} drop")
        nft(ns, "\n".join(rules) + "\n")

    def loss(self, i, percent):
        ns = self.gens[i - 1]
        nft(
            ns,
            f"add rule inet fz out ip daddr {STORE_IP} numgen random mod 100 < {percent} drop\n"
            f"add rule inet fz in ip saddr {STORE_IP} numgen random mod 100 < {percent} drop\n",
        )

    def heal(self, i):
        ns = self.gens[i - 1]
        nft(ns, "flush chain inet fz in\nflush chain inet fz out\n")


def nft(ns, script):
    sh("ip", "netns", "exec", ns, "nft", "-f", "-", input=script)


def exec_prefix(ns, hostname=None, user=None):
    """argv prefix that runs a command in `ns` (and a UTS namespace named
    `hostname`), killed by the kernel if the harness dies (PR_SET_PDEATHSIG), as
    `user` when given. Every step execs: the pid Popen returns is the command's."""
    cmd = ["nsenter", f"--net=/run/netns/{ns}"]
    if hostname:
        cmd += ["unshare", "--uts", "--", "sh", "-c", 'hostname "$0" && exec "$@"', hostname]
    cmd += ["setpriv", "--pdeathsig", "KILL"]
    if user:
        cmd += ["--reuid", user, "--regid", user, "--init-groups"]
    return cmd + ["--"]
