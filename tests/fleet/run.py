#!/usr/bin/env python3
"""A fleet with no node id configured (API.md §10; docs/design.md, "A node id across a
fleet"): processes that cannot see each other's host guard, each issuing IDs at once
through the CLI and the Python package, and what the node-origin chain gives them
(make test-fleet; run under `tests/env/testenv.py run --kube`, which starts the
kube-apiserver and names it in FLAKEID_TEST_KUBE_*).

    run.py                 every group below; `N passed, N failed` (tests/env/cases.py)
    run.py pod SPEC.json   (internal) one pod: its namespaces' set-up, then its apps

Each "pod" is `unshare --mount --uts --pid --fork` (so this runs as root on Linux, with
util-linux's unshare and mount) around `run.py pod`, which gives it a root of its own:
every top-level directory of the machine bound in, but none of its top-level files
(/.dockerenv: the machine's own container markers are not the pod's), a fresh /proc
(its own pids), a private /run and /tmp (tmpfs), its own hostname. All pods of a group
are set up, then started together; in each, the Python package (`Generator()`, no
argument) and the CLI (`flakeid generate`, no option) each issue FLAKEID_FLEET_IDS IDs
(300,000 by default) into a file, with an environment of PATH, HOME and LANG only, plus
the group's variables: no node id, no lease, no FLAKEID_HOST_GUARD unless said.

* pods: KUBERNETES_SERVICE_HOST/_PORT name the fixture's API server and the service
  account `flakeid-pod` (examples/kubernetes/rbac.yaml's Role and RoleBinding) is
  mounted at /var/run/secrets/kubernetes.io/serviceaccount (token, ca.crt, namespace):
  every app's node id is its own (six, from origin `coordinator`: a Lease of that
  node id exists), 0 IDs repeated across them, each app's IDs increasing.
* pods denied: the same with `flakeid-denied`, bound to nothing: every app refused
  with the Role and RoleBinding to apply, 0 IDs.
* containers: no Kubernetes. Three pods whose /tmp is a tmpfs of their own and that
  carry no container marker (as `unshare`, bwrap or firejail make them) are each refused,
  naming that /tmp, 0 IDs; so is a pod with a marker, naming it: the variable
  `container`, podman's /run/.containerenv, systemd's PrivateTmp (a /tmp bound from
  `systemd-private-*`). Two pods whose /tmp is one directory of the machine, propagated
  into their namespaces (`--propagation slave`, as systemd's hardened services get it)
  take node ids on the host, from that directory, 0 repeats; with FLAKEID_HOST_GUARD set
  a marked pod takes one on the host (the documented line for a test runner in a CI container:
  docs/design.md, "Who owns a node id").
* guard: an unusable host guard directory and no node id, each refused, 0 IDs: a
  read-only /tmp, a directory another account made (the app runs as nobody), a full
  tmpfs, the default directory on a read-only /tmp with FLAKEID_SINGLE_INSTANCE=true,
  and FLAKEID_HOST_GUARD=off.

Without the kube-apiserver (make kube-apiserver), the pod groups fail, or are skipped
when FLAKEID_LEASE_REQUIRE=0. The CLI is $FLAKEID_CLI (the debug build's `flakeid` by default),
the Python $PY (python/.venv/bin/python). Standard library only.
"""

import heapq
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from array import array

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "tests", "env"))
import testenv  # noqa: E402
from cases import Cases  # noqa: E402

CLI = os.environ.get("FLAKEID_CLI") or os.path.join(
    os.environ.get("CARGO_TARGET_DIR") or os.path.join(ROOT, "target"), "debug", "flakeid"
)
PY = os.environ.get("PY") or os.path.join(ROOT, "python", ".venv", "bin", "python")
COUNT = int(os.environ.get("FLAKEID_FLEET_IDS") or 300_000)
SA_DIR = "/var/run/secrets/kubernetes.io/serviceaccount"
NOBODY = 65534
# Far past a lease's wait and the IDs' issue: a pod that hangs fails its group.
POD_TIMEOUT_S = 180

# The Python app: a generator with no argument, its IDs (big-endian, as the CLI's
# `-f bytes`) on standard output, then one JSON line on standard error: its node id
# and origin, or the refusal.
PY_APP = """
import json, sys, flakeid
try:
    g = flakeid.Generator()
except flakeid.FlakeIdError as e:
    print(json.dumps({"refused": str(e), "error": type(e).__name__}), file=sys.stderr)
    sys.exit(1)
ids = g.next_ids_array(int(sys.argv[1]))
if sys.byteorder == "little":
    ids.byteswap()
sys.stdout.buffer.write(ids.tobytes())
sys.stdout.flush()
print(json.dumps({"node": g.node, "origin": g.node_origin}), file=sys.stderr)
g.close()
"""


def sh(*args):
    subprocess.run(args, check=True)


def pod_main(spec_file):
    """One pod, as pid 1 of its namespaces: its root, then (at the group's start
    signal) its apps; exits 0 when every app ran (what they did is in their files)."""
    with open(spec_file) as f:
        spec = json.load(f)
    root = spec["root"]
    # A root of its own, so that the machine's container markers (files at the top of
    # its /, such as /.dockerenv) are not the pod's: each pod shows only the signs it
    # is given, and a refusal can name them.
    sh("mount", "-t", "tmpfs", "-o", "mode=755", "fleet-root", root)
    for entry in os.listdir("/"):
        src, dst = "/" + entry, os.path.join(root, entry)
        if entry in ("proc", "run", "tmp"):
            os.mkdir(dst)
        elif os.path.islink(src):
            os.symlink(os.readlink(src), dst)
        elif os.path.isdir(src):
            os.mkdir(dst)
            sh("mount", "--rbind", src, dst)
    sh("mount", "-t", "proc", "proc", f"{root}/proc")
    sh("mount", "-t", "tmpfs", "-o", "mode=755", "run", f"{root}/run")
    if spec.get("containerenv"):
        open(f"{root}/run/.containerenv", "w").close()
    if spec.get("token"):
        sa = root + "/run/" + SA_DIR.removeprefix("/var/run/")
        os.makedirs(sa)
        shutil.copy(spec["token"], f"{sa}/token")
        shutil.copy(spec["ca"], f"{sa}/ca.crt")
        with open(f"{sa}/namespace", "w") as f:
            f.write(spec["namespace"])
    tmp, kind = f"{root}/tmp", spec.get("tmp", "private")
    opts = {"read-only": "ro,mode=1777", "full": "size=64k,mode=1777"}.get(kind, "mode=1777")
    if kind == "machine's":
        sh("mount", "--bind", spec["shared"], tmp)
    else:
        sh("mount", "-t", "tmpfs", "-o", opts, "tmp", tmp)
    if kind == "full":
        try:
            with open(f"{tmp}/filler", "wb") as f:
                while True:
                    f.write(b"\0" * 4096)
                    f.flush()
        except OSError:  # full: what it is for
            pass
    elif kind == "systemd-private":
        private = f"{tmp}/systemd-private-0f1e2d3c-fleet.service-Ab12Cd/tmp"
        os.makedirs(private, mode=0o1777)
        sh("mount", "--bind", private, tmp)
    elif kind == "other-account":
        os.mkdir(f"{tmp}/guard", 0o700)
    sh("hostname", spec["name"])  # as a pod's: a lease's holder names its host
    outs = {
        app: (open(f"{spec['out']}.{app}.ids", "wb"), open(f"{spec['out']}.{app}.err", "wb"))
        for app in spec["apps"]
    }
    status = open(f"{spec['out']}.status", "w")
    open(f"{spec['out']}.ready", "w").close()
    deadline = time.monotonic() + POD_TIMEOUT_S
    while not os.path.exists(spec["go"]):
        if time.monotonic() > deadline:
            return 3
        time.sleep(0.01)
    os.chroot(root)
    os.chdir("/")

    def as_user():
        if spec.get("user"):
            os.setgroups([])
            os.setgid(spec["user"])
            os.setuid(spec["user"])

    env = {"PATH": "/usr/local/bin:/usr/bin:/bin", "HOME": "/", "LANG": "C.UTF-8", **spec["env"]}
    argv = {
        "python": [spec["py"], "-c", PY_APP, str(spec["count"])],
        "cli": [spec["cli"], "generate", "-n", str(spec["count"]), "-f", "bytes"],
    }
    procs = {
        app: subprocess.Popen(
            argv[app], stdout=ids, stderr=err, env=env, preexec_fn=as_user, cwd="/"
        )
        for app, (ids, err) in outs.items()
    }
    with status:
        json.dump({app: p.wait() for app, p in procs.items()}, status)
    return 0


class App:
    """What one app of one pod did."""

    def __init__(self, pod, app, out, rc):
        self.pod, self.app, self.rc = pod, app, rc
        self.name = f"{pod}/{app}"
        self.ids = array("Q")
        with open(f"{out}.{app}.ids", "rb") as f:
            self.ids.frombytes(f.read())
        if sys.byteorder == "little":
            self.ids.byteswap()
        with open(f"{out}.{app}.err", "rb") as f:
            self.err = f.read().decode(errors="replace").strip()
        self.info = {}
        if app == "python" and self.err:
            try:
                self.info = json.loads(self.err.splitlines()[-1])
            except ValueError:
                pass

    @property
    def refusal(self):
        return self.info.get("refused") if self.app == "python" else self.err

    def nodes(self):
        """The node ids of its IDs (snowflake: 10 bits above the 12-bit sequence)."""
        return {(i >> 12) & 0x3FF for i in self.ids}

    def increasing(self):
        return all(a < b for a, b in zip(self.ids, self.ids[1:]))

    def took_a_host_node(self):
        """It issued its COUNT IDs, increasing, on a node id the host picked."""
        ok = self.rc == 0 and len(self.ids) == COUNT and self.increasing()
        return ok and self.info.get("origin", "host") == "host"

    def __repr__(self):
        said = self.info or (self.err.splitlines() or [""])[0]
        return f"{self.name}: exit {self.rc}, {len(self.ids)} IDs, {str(said)[:200]}"


def run_group(work, group, pods):
    """Sets up every pod of `pods` ({name: spec}), starts them together, and returns
    their apps (a list of App), or raises when a pod did not run."""
    procs, go = {}, os.path.join(work, f"{group}.go")
    try:
        for name, extra in pods.items():
            out = os.path.join(work, f"{group}.{name}")
            os.mkdir(out + ".root")
            spec = {"name": name, "root": out + ".root", "out": out, "go": go, "count": COUNT}
            spec.update({"cli": CLI, "py": PY, "env": {}, "apps": ["python", "cli"], **extra})
            with open(out + ".json", "w") as f:
                json.dump(spec, f)
            procs[name] = (
                out,
                subprocess.Popen(
                    ["unshare", "--mount", "--uts", "--pid", "--fork"]
                    + ["--propagation", spec.get("propagation", "private")]
                    + [sys.executable, os.path.abspath(__file__), "pod", out + ".json"]
                ),
            )
        deadline = time.monotonic() + POD_TIMEOUT_S
        while not all(os.path.exists(out + ".ready") for out, _ in procs.values()):
            if time.monotonic() > deadline or any(p.poll() is not None for _, p in procs.values()):
                break
            time.sleep(0.01)
        open(go, "w").close()
        apps = []
        for name, (out, proc) in procs.items():
            try:
                rc = proc.wait(timeout=max(1, deadline + POD_TIMEOUT_S - time.monotonic()))
            except subprocess.TimeoutExpired:
                rc = "timed out"
            if rc != 0 or not os.path.exists(out + ".status"):
                raise AssertionError(f"pod {name} did not run its apps (exit {rc})")
            with open(out + ".status") as f:
                status = json.load(f)
            apps += [App(name, app, out, rc) for app, rc in status.items()]
    finally:
        for _, proc in procs.values():
            if proc.poll() is None:
                proc.kill()  # the pod's pid 1: its namespace's processes go with it
                proc.wait()
    for app in apps:
        print(f"     {group}: {app!r}", flush=True)
    return apps


def repeats(apps):
    """IDs issued twice across `apps`, each app's IDs in increasing order."""
    n, last = 0, None
    for i in heapq.merge(*(a.ids for a in apps)):
        n += i == last
        last = i
    return n


def refused(cases, group, apps, *needles):
    """Every app refused (exit status not 0), with each of `needles` in its message,
    and 0 IDs."""
    for a in apps:
        why = a.refusal or ""
        missing = [n for n in needles if n not in why]
        cases.record(
            f"{group}: {a.name} refused, 0 IDs",
            a.rc != 0 and not a.ids and not missing,
            f"{a!r}" + (f"; the message lacks {missing}" if missing else ""),
        )


def kube_pods(cases, work, env):
    server, ca = env["FLAKEID_TEST_KUBE_SERVER"], env["FLAKEID_TEST_KUBE_CA"]
    host, port = server.removeprefix("https://").rsplit(":", 1)
    namespace = env["FLAKEID_TEST_KUBE_NAMESPACE"]

    def pods(token):
        return {
            f"pod-{i}": {
                "token": token,
                "ca": ca,
                "namespace": namespace,
                "env": {"KUBERNETES_SERVICE_HOST": host, "KUBERNETES_SERVICE_PORT": port},
            }
            for i in range(3)
        }

    try:
        apps = run_group(work, "pods", pods(env["FLAKEID_TEST_KUBE_TOKEN_FILE"]))
    except AssertionError as e:
        cases.failed("pods: three pods ran", str(e))
        return
    for a in apps:
        ok = a.rc == 0 and len(a.ids) == COUNT and a.increasing() and len(a.nodes()) == 1
        if a.app == "python":
            ok = ok and a.info.get("origin") == "coordinator" and a.nodes() == {a.info["node"]}
        cases.record(
            f"pods: {a.name} issued {COUNT} increasing IDs of one node id"
            + (", origin coordinator" if a.app == "python" else ""),
            ok,
            repr(a),
        )
    nodes = [n for a in apps for n in sorted(a.nodes())]
    cases.record(
        "pods: every app's node id its own", len(nodes) == len(set(nodes)) == 6, f"{nodes}"
    )
    n = repeats(apps)
    cases.record("pods: 0 IDs repeated", n == 0, f"{n} of {sum(len(a.ids) for a in apps)}")
    with open(env["FLAKEID_TEST_KUBE_ADMIN_TOKEN_FILE"]) as f:
        admin = f.read().strip()
    status, got = testenv.kube_request(
        server, ca, admin, "GET", f"/apis/coordination.k8s.io/v1/namespaces/{namespace}/leases"
    )
    names = {i["metadata"]["name"] for i in got.get("items", [])} if status == 200 else set()
    held = {n for n in nodes if any(name.endswith(f"-{n}") for name in names)}
    cases.record(
        "pods: each node id is a Lease in the pods' namespace",
        held == set(nodes) and bool(nodes),
        f"Leases {sorted(names)}, node ids {nodes}",
    )

    with cases.case("pods denied: three pods ran"):
        apps = run_group(work, "denied", pods(env["FLAKEID_TEST_KUBE_DENIED_TOKEN_FILE"]))
        refused(
            cases,
            "pods denied",
            apps,
            "403 Forbidden",
            "kind: Role",
            "kind: RoleBinding",
            "name: flakeid-denied",
            'resources: ["leases"]',
        )


def containers(cases, work):
    # One directory of the machine, a shared mount: pods started with `--propagation
    # slave` see it as `master:N`, as a hardened systemd service sees the host's /tmp.
    shared = os.path.join(work, "machine-tmp")
    os.mkdir(shared)
    os.chmod(shared, 0o1777)
    sh("mount", "--bind", shared, shared)
    try:
        sh("mount", "--make-shared", shared)
        containers_with(cases, work, shared)
    finally:
        subprocess.run(["umount", shared], check=False)


def containers_with(cases, work, shared):
    machines = {"tmp": "machine's", "shared": shared, "propagation": "slave"}
    pods = {
        **{f"own-tmp-{i}": {} for i in range(3)},
        **{f"machine-tmp-{i}": machines for i in range(2)},
        "podman": {"env": {"container": "podman"}},
        "containerenv": {"containerenv": True},
        "private-tmp": {"tmp": "systemd-private"},
        "guarded": {"env": {"container": "podman", "FLAKEID_HOST_GUARD": "/tmp/guard"}},
    }
    apps = run_group(work, "containers", pods)
    by = {a.name: a for a in apps}
    # The machine's own container signs that no pod hides (a cgroup): then every
    # pod is refused for it, and no refusal can name the pod's own sign.
    control = by["machine-tmp-0/python"]
    machine = control.rc != 0 and "container (/proc/self/cgroup" in (control.refusal or "")
    if machine:
        print(f"     containers: the machine itself is seen as a container: {control!r}")
    else:
        hosts = [by[f"machine-tmp-{i}/{app}"] for i in range(2) for app in ("python", "cli")]
        for a in hosts:
            cases.record(
                f"containers: {a.name} (the machine's /tmp, propagated) took a node id on the host",
                a.took_a_host_node(),
                repr(a),
            )
        # Their guard is the machine's directory: each node id's file is there (an
        # app that ends before another starts may pass its node id on, floor and all,
        # so the node ids need not differ), and no ID is issued twice.
        nodes = {n for a in hosts for n in a.nodes()}
        guard = os.path.join(shared, "flakeid-host-guard")
        names = os.listdir(guard) if os.path.isdir(guard) else []
        files = {int(f.split(".")[0].removeprefix("node-")) for f in names}
        cases.record(
            "containers: the machine's /tmp apps: their node ids' files there, 0 repeats",
            nodes <= files and repeats(hosts) == 0,
            f"nodes {sorted(nodes)}, files {sorted(files)}, {repeats(hosts)} repeated",
        )
    own = (
        "its /tmp is a mount no other mount namespace shares,"
        " as unshare, bwrap and firejail make it"
    )
    for pod, sign in (
        *((f"own-tmp-{i}", own) for i in range(3)),
        ("podman", "the variable container is set"),
        ("containerenv", "/run/.containerenv exists"),
        ("private-tmp", "/tmp is systemd's PrivateTmp"),
    ):
        said = "runs in a container (" if machine else f"runs in a container ({sign})"
        refused(
            cases,
            "containers",
            [by[f"{pod}/python"], by[f"{pod}/cli"]],
            said,
            "FLAKEID_HOST_GUARD=",
            "FLAKEID_SINGLE_INSTANCE=true",
        )
    nodes = []
    for app in ("python", "cli"):
        a = by[f"guarded/{app}"]
        nodes += sorted(a.nodes())
        cases.record(
            f"containers: {a.name} (FLAKEID_HOST_GUARD set) took a node id on the host",
            a.took_a_host_node(),
            repr(a),
        )
    cases.record("containers: the guarded apps' node ids differ", len(set(nodes)) == 2, f"{nodes}")


def guards(cases, work):
    guard = {"FLAKEID_HOST_GUARD": "/tmp/guard"}
    pods = {
        "read-only": ({"tmp": "read-only", "env": guard}, "/tmp/guard cannot be used"),
        "other-account": (
            # The CLI only: this machine's Python may live where nobody cannot read.
            {"tmp": "other-account", "env": guard, "user": NOBODY, "apps": ["cli"]},
            "/tmp/guard cannot be used",
        ),
        "full": ({"tmp": "full", "env": guard}, "/tmp/guard cannot be used"),
        "single-instance": (
            {"tmp": "read-only", "env": {"FLAKEID_SINGLE_INSTANCE": "true"}},
            "/tmp/flakeid-host-guard cannot be used",
        ),
        "off": ({"env": {"FLAKEID_HOST_GUARD": "off"}}, "the host guard is off"),
    }
    apps = run_group(work, "guard", {name: spec for name, (spec, _) in pods.items()})
    for name, (_, said) in pods.items():
        refused(cases, "guard", [a for a in apps if a.pod == name], said, "Fixes:")


def main(argv):
    if argv[1:2] == ["pod"]:
        return pod_main(argv[2])
    cases = Cases("test-fleet")
    for tool in (CLI, PY):
        if not os.access(tool, os.X_OK):
            cases.failed("tools", f"{tool} is missing: make test-fleet builds it")
            return cases.finish()
    probe = subprocess.run(
        ["unshare", "--mount", "--uts", "--pid", "--fork", "true"], capture_output=True, text=True
    )
    if probe.returncode != 0:
        cases.failed("namespaces", f"unshare (root on Linux) failed: {probe.stderr.strip()}")
        return cases.finish()
    work = tempfile.mkdtemp(prefix="flakeid-fleet.")
    os.chmod(work, 0o755)
    try:
        env = os.environ
        if env.get("FLAKEID_TEST_KUBE_SERVER"):
            kube_pods(cases, work, env)
        elif env.get("FLAKEID_LEASE_REQUIRE") == "0":
            print("skip pods: no kube-apiserver (FLAKEID_LEASE_REQUIRE=0)", flush=True)
        else:
            cases.failed("pods", "no kube-apiserver: run under testenv.py run --kube")
        with cases.case("containers: nine pods ran"):
            containers(cases, work)
        with cases.case("guard: five processes ran"):
            guards(cases, work)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return cases.finish()


if __name__ == "__main__":
    sys.exit(main(sys.argv))
