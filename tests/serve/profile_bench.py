#!/usr/bin/env python3
"""What a build profile costs at run time: the TLS side of `flakeid serve` and a lease
renewal, for flakeid binaries built with different profiles, in one run.

    python3 tests/env/testenv.py run --postgres -- \
        python3 tests/serve/profile_bench.py release=$T/release/flakeid dist=$T/dist/flakeid

(T: cargo's output directory.)

For each binary: TLS /v1/id with 4 kept-alive connections and with a handshake per
request (wrk, `Connection: close`), three alternating rounds, the medians; then a
server holding a lease on TLS PostgreSQL with a 1 s TTL (a renewal every ~333 ms) for
10 s, twice: the median renewal round trip (its /metrics gauge) and the process's CPU
per renewal (the metrics polling included, the same for every binary). The numbers are
for reading (docs/performance.md, "Build profiles"); nothing is asserted.
"""

import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from tls_test import make_pki  # noqa: E402  (the suite's openssl PKI)

bins = dict(a.split("=", 1) for a in sys.argv[1:])
work = tempfile.mkdtemp()
make_pki(work, "bench")  # bench.pem, bench.key: a certificate for 127.0.0.1


def free_port():
    return int(
        subprocess.check_output(["python3", "tests/env/testenv.py", "port"]).decode().split()[0]
    )


def cpu(pid):
    f = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
    return (int(f[11]) + int(f[12])) / os.sysconf("SC_CLK_TCK")


def wait_up(url, insecure=True):
    import ssl

    ctx = ssl._create_unverified_context()
    for _ in range(400):
        try:
            urllib.request.urlopen(url, context=ctx, timeout=1)
            return
        except Exception:
            time.sleep(0.05)
    raise SystemExit(f"no answer from {url}")


def wrk(url, extra):
    out = subprocess.check_output(["wrk", "-t2", "-c4", "-d4s", "--latency", *extra, url]).decode()
    return float(re.search(r"Requests/sec:\s+([\d.]+)", out).group(1))


res = {n: {"ka": [], "hs": [], "renew_us": [], "cpu_per_renewal_ms": []} for n in bins}
servers = {}
for name, b in bins.items():
    port = free_port()
    p = subprocess.Popen(
        [
            b,
            "serve",
            "--listen",
            f"127.0.0.1:{port}",
            "--node",
            "1",
            "--tls-cert",
            f"{work}/bench.pem",
            "--tls-key",
            f"{work}/bench.key",
        ],
        stderr=subprocess.DEVNULL,
        env={**os.environ, "FLAKEID_LOG": "warn"},
    )
    servers[name] = (p, port)
    wait_up(f"https://127.0.0.1:{port}/readyz")
for rnd in range(3):
    for name, (p, port) in servers.items():
        res[name]["ka"].append(wrk(f"https://127.0.0.1:{port}/v1/id", []))
        res[name]["hs"].append(wrk(f"https://127.0.0.1:{port}/v1/id", ["-H", "Connection: close"]))
for p, _ in servers.values():
    p.terminate()
    p.wait()
# Lease renewals over TLS PostgreSQL: ttl 1 s -> a renewal every ~333 ms.
url = os.environ["FLAKEID_TEST_POSTGRES_TLS_URL"]
for rnd in range(2):
    for name, b in bins.items():
        port = free_port()
        p = subprocess.Popen(
            [b, "serve", "--listen", f"127.0.0.1:{port}", "--lease", url, "--lease-ttl-ms", "1000"],
            stderr=subprocess.DEVNULL,
            env={**os.environ, "FLAKEID_LOG": "warn"},
        )
        wait_up(f"http://127.0.0.1:{port}/readyz")
        time.sleep(1)
        c0, t0 = cpu(p.pid), time.time()
        lat = []
        while time.time() - t0 < 10:
            m = urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics").read().decode()
            g = re.search(r"^flakeid_lease_renew_latency\S* ([\d.e+-]+)", m, re.M)
            if g:
                lat.append(float(g.group(1)) * 1e6)
            time.sleep(0.34)
        c1, t1 = cpu(p.pid), time.time()
        p.terminate()
        p.wait()
        res[name]["renew_us"].append(statistics.median(lat) if lat else float("nan"))
        # metric polling costs CPU too (same for every binary): per renewal = per 1/3 s
        res[name]["cpu_per_renewal_ms"].append((c1 - c0) * 1000 / ((t1 - t0) * 3))
print(
    f"{'binary':10} {'TLS keep-alive req/s':>22} {'TLS handshake req/s':>20} "
    f"{'renewal µs (median)':>20} {'CPU ms per renewal+poll':>24}"
)
for n, r in res.items():
    print(
        f"{n:10} {statistics.median(r['ka']):22.0f} {statistics.median(r['hs']):20.0f} "
        f"{statistics.median(r['renew_us']):20.0f} "
        f"{statistics.median(r['cpu_per_renewal_ms']):24.2f}"
    )
