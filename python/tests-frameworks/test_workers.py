"""Several workers on one host, the way users deploy them: gunicorn `-w 4` with and
without `--preload` (with flakeid.gunicorn's hook, as the docs say) serving
djangoproject and a plain WSGI app over flakeid.sqlalchemy (wsgiapp/), `uvicorn
--workers 4` serving a FastAPI app (fastapiapp/: flakeid.sqlalchemy.configure,
flakeid.pydantic; the node id taken in its lifespan), and a `multiprocessing` pool
(Celery's prefork pool forks the same way). With no node id configured, every worker
takes a free one on the host and issues: 0 errors, 0 IDs twice. With one fixed node
id, the server does not start: a worker refused by the host guard fails its boot with
the engine's refusal, the server stops within 30 s and answers no request with a 500;
in a pool (no boot hook) one process issues and every other is refused at its first
ID: 0 IDs twice. With a `file://` lease, every worker issues, each on its own node id:
0 IDs twice. The IDs travel as JSON strings and are read back exactly."""

from __future__ import annotations

import collections
import json
import multiprocessing
import os
import re
import signal
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
import uuid
from pathlib import Path
from typing import Any

import pytest

import flakeid
from flakeid import _shared

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "tests" / "env"))
sys.path.append(str(Path(__file__).resolve().parents[1] / "tests"))
import testenv  # noqa: E402  (the one fixture: ports below the ephemeral range)
from forked import in_child  # noqa: E402  (python/tests's)

PROJECT = Path(__file__).parent / "djangoproject"
WSGI_APP = Path(__file__).parent / "wsgiapp"
GUNICORN = Path(sys.executable).parent / "gunicorn"
FASTAPI_APP = Path(__file__).parent / "fastapiapp"
pytestmark = pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork()")
# gunicorn's workers in serve() unless a test asks for another count.
WORKERS = 4


def serve(
    port: int,
    env: dict[str, str],
    preload: bool,
    log: Path,
    app: str = "django",
    hook: bool = True,
    workers: int = WORKERS,
) -> subprocess.Popen[bytes]:
    """gunicorn -w `workers` serving djangoproject (`app` "django") or wsgiapp ("wsgi"),
    with flakeid.gunicorn's hook unless `hook` is False."""
    args = [
        str(GUNICORN),
        "-w",
        str(workers),
        "-b",
        f"127.0.0.1:{port}",
        "--chdir",
        str(PROJECT if app == "django" else WSGI_APP),
        "--timeout",
        "60",
    ]
    if hook:
        args += ["-c", "python:flakeid.gunicorn"]
    if preload:
        args.append("--preload")
    return subprocess.Popen(
        [*args, "wsgi:application" if app == "django" else "app:application"],
        env={**os.environ, "FLAKEID_DJANGO_DB": "sqlite", **env},
        stdout=log.open("wb"),
        stderr=subprocess.STDOUT,
    )


def serve_uvicorn(port: int, env: dict[str, str], log: Path) -> subprocess.Popen[bytes]:
    args = [
        sys.executable,
        "-m",
        "uvicorn",
        "main:app",
        "--workers",
        "4",
        "--host",
        "127.0.0.1",
        "--port",
        str(port),
        "--app-dir",
        str(FASTAPI_APP),
    ]
    return subprocess.Popen(
        args, env={**os.environ, **env}, stdout=log.open("wb"), stderr=subprocess.STDOUT
    )


def get(port: int, n: int, sleep: float = 0) -> tuple[int, Any]:
    url = f"http://127.0.0.1:{port}/ids?n={n}" + (f"&sleep={sleep}" if sleep else "")
    try:
        with urllib.request.urlopen(url, timeout=30) as r:
            return r.status, json.loads(r.read())  # a plain JSON parse: the IDs are strings
    except urllib.error.HTTPError as e:
        return e.code, None


def hammer(
    port: int, clients: int = 8, requests: int = 60, n: int = 50
) -> tuple[list[int], dict[int, set[int]], int]:
    """`clients` threads, `requests` each: the IDs, pid → node ids seen, errors."""
    ids: list[int] = []
    nodes: dict[int, set[int]] = collections.defaultdict(set)
    errors = 0
    lock = threading.Lock()

    def client() -> None:
        nonlocal errors
        for _ in range(requests):
            status, body = get(port, n)
            with lock:
                if status != 200:
                    errors += 1
                    continue
                got = [int(i) for i in body["ids"]]
                ids.extend(got)
                nodes[body["pid"]].update(flakeid.decompose(i).node for i in got)

    threads = [threading.Thread(target=client) for _ in range(clients)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(120)
    return ids, nodes, errors


def up(port: int, proc: subprocess.Popen[bytes], log: Path) -> None:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        assert proc.poll() is None, log.read_text()
        if testenv.port_open(port):
            return
        time.sleep(0.1)
    raise AssertionError("the server never listened: " + log.read_text())


def loaded(port: int, proc: subprocess.Popen[bytes], log: Path, preload: bool) -> None:
    """up(), then the test app loaded by each of the WORKERS workers, or with
    --preload by the master before it forks them (djangoproject's wsgi.py and
    wsgiapp's app.py print a line in each process that loads them). The master
    listens before its workers load the app, and a worker still loading it takes no
    connection: the first one loaded would serve every request of a short burst."""
    up(port, proc, log)
    deadline, want = time.monotonic() + 60, 1 if preload else WORKERS
    while time.monotonic() < deadline:
        text = log.read_text(errors="replace")
        if len(set(re.findall(r"test app loaded in pid (\d+)", text))) >= want:
            return
        assert proc.poll() is None, text
        time.sleep(0.1)
    raise AssertionError("the workers never all loaded the app: " + log.read_text())


def stop(proc: subprocess.Popen[bytes]) -> None:
    proc.terminate()
    try:
        proc.wait(30)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


def assert_each_worker_on_its_own_node(ids: list[int], nodes: dict[int, set[int]]) -> None:
    """hammer()'s IDs, every one issued once, each worker on one node id of its own."""
    assert len(ids) == 8 * 60 * 50 and len(ids) == len(set(ids)), (
        f"{len(ids) - len(set(ids))} IDs issued twice"
    )
    assert all(len(n) == 1 for n in nodes.values()), dict(nodes)
    owners = [next(iter(n)) for n in nodes.values()]
    assert len(owners) == len(set(owners)), dict(nodes)


def each_worker_on_its_own_node(
    port: int, proc: subprocess.Popen[bytes], log: Path, preload: bool | None = None
) -> dict[int, set[int]]:
    """Waits for the server (with `preload` given, for gunicorn's workers to load the
    test app: loaded()), hammers it and stops it: no request failed, and
    assert_each_worker_on_its_own_node holds. Returns pid → node ids seen."""
    try:
        if preload is None:
            up(port, proc, log)
        else:
            loaded(port, proc, log, preload)
        ids, nodes, errors = hammer(port)
    finally:
        stop(proc)
    assert errors == 0, log.read_text()[-3000:]
    assert_each_worker_on_its_own_node(ids, nodes)
    return nodes


def status(port: int) -> int | None:
    """The HTTP status of one GET /ids, or None when nothing answered."""
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/ids?n=1", timeout=5) as r:
            return int(r.status)
    except urllib.error.HTTPError as e:
        return e.code
    except OSError:  # refused, reset, timed out: no answer
        return None


def assert_stops_at_boot(proc: subprocess.Popen[bytes], port: int, log: Path) -> int:
    """The server stops by itself within 30 s, its log carrying the engine's refusal of
    node 5, having answered no request with a 500 meanwhile; its exit status."""
    statuses: list[int | None] = []
    deadline = time.monotonic() + 30
    while proc.poll() is None and time.monotonic() < deadline:
        statuses.append(status(port))
        time.sleep(0.05)
    if proc.poll() is None:
        stop(proc)
        raise AssertionError("still running after 30 s: " + log.read_text()[-3000:])
    text = log.read_text()
    assert "node id 5 of this layout is already in use on this host by process" in text, text[
        -3000:
    ]
    assert 500 not in statuses, f"{statuses.count(500)} requests answered 500"
    return proc.returncode


def node_env(app: str, node: str) -> dict[str, str]:
    """The variable by which `app`'s settings get the node id `node` (or "none")."""
    return {"FLAKEID_DJANGO_NODE" if app == "django" else "FLAKEID_TEST_NODE": node}


def each_app_and_mode(test: Any) -> Any:
    """The test on both apps (djangoproject, wsgiapp), each with workers that load it
    and with the app preloaded in the arbiter."""
    test = pytest.mark.parametrize("app", ["django", "wsgi"])(test)
    return pytest.mark.parametrize("preload", [False, True], ids=["workers", "preload"])(test)


def serve_on_node(
    tmp_path: Path, app: str, node: str, preload: bool, **kw: Any
) -> tuple[int, Path, subprocess.Popen[bytes]]:
    """`serve` of `app` on node id `node` (or "none") and a free port, with a host
    guard directory of the test's own: the port, the log and the process."""
    port, log = testenv.free_port(), tmp_path / "gunicorn.log"
    guard = {"FLAKEID_HOST_GUARD": str(tmp_path / "guard")}
    return port, log, serve(port, {**node_env(app, node), **guard}, preload, log, app, **kw)


@each_app_and_mode
def test_gunicorn_with_one_fixed_node_id_does_not_start(
    app: str, preload: bool, tmp_path: Path
) -> None:
    port, log, proc = serve_on_node(tmp_path, app, "5", preload)
    # gunicorn's WORKER_BOOT_ERROR, 3; or 1, when its halt reaps a second worker that
    # failed to boot and raises again ("Worker failed to boot." is in gunicorn's log
    # unless the app's LOGGING turned gunicorn's loggers off, as djangoproject's does)
    assert assert_stops_at_boot(proc, port, log) in (1, 3)


def test_gunicorn_reload_with_one_fixed_node_id_goes_on_serving(tmp_path: Path) -> None:
    """A HUP boots the new worker while the old one finishes a request on node 5: the
    new one waits for it (no boot failure, no stop), then issues on node 5 above it."""
    port, log, proc = serve_on_node(tmp_path, "wsgi", "5", True, workers=1)
    slow: list[tuple[int, Any]] = []
    try:
        up(port, proc, log)
        before = get(port, 10)
        in_flight = threading.Thread(target=lambda: slow.append(get(port, 10, sleep=3)))
        in_flight.start()
        time.sleep(0.5)  # the old worker is in the request
        proc.send_signal(signal.SIGHUP)
        in_flight.join(60)
        deadline, after = time.monotonic() + 30, before
        while after[1]["pid"] == before[1]["pid"] and time.monotonic() < deadline:
            time.sleep(0.2)
            assert proc.poll() is None, log.read_text()[-3000:]  # not stopped by the reload
            after = get(port, 10)
    finally:
        stop(proc)
    assert "flakeid: waiting for the worker this one replaces" in log.read_text()
    assert [before[0], slow[0][0], after[0]] == [200, 200, 200], log.read_text()[-3000:]
    assert after[1]["pid"] != before[1]["pid"], "the old worker never left"
    ids = [int(i) for body in (before[1], slow[0][1], after[1]) for i in body["ids"]]
    assert len(set(ids)) == 30 and {flakeid.decompose(i).node for i in ids} == {5}
    assert max(int(i) for i in after[1]["ids"]) > max(ids[:20])


@each_app_and_mode
def test_gunicorn_with_no_node_id_every_worker_issues_on_its_own_node(
    app: str, preload: bool, tmp_path: Path
) -> None:
    port, log, proc = serve_on_node(tmp_path, app, "none", preload)
    nodes = each_worker_on_its_own_node(port, proc, log, preload)
    assert len(nodes) >= 2, f"one worker served every request: {dict(nodes)}"


def test_uvicorn_with_no_node_id_every_worker_issues_on_its_own_node(tmp_path: Path) -> None:
    port, log = testenv.free_port(), tmp_path / "uvicorn.log"
    proc = serve_uvicorn(
        port, {"FLAKEID_TEST_NODE": "none", "FLAKEID_HOST_GUARD": str(tmp_path / "guard")}, log
    )
    each_worker_on_its_own_node(port, proc, log)


@pytest.mark.parametrize("preload", [False, True], ids=["workers", "preload"])
def test_gunicorn_with_a_file_lease_every_worker_issues_on_its_own_node(
    preload: bool, tmp_path: Path
) -> None:
    port, log = testenv.free_port(), tmp_path / "gunicorn.log"
    lease = f"file://{tmp_path}/leases"
    proc = serve(port, {"FLAKEID_DJANGO_LEASE": lease}, preload, log)
    each_worker_on_its_own_node(port, proc, log, preload)


@pytest.mark.parametrize("preload", [False, True], ids=["workers", "preload"])
def test_gunicorn_every_worker_issues_uuid7s_with_no_node_id(preload: bool, tmp_path: Path) -> None:
    """UUIDv7s need no node id: all four workers issue them (forked from a parent
    that built its generator first, with --preload), 0 repeats across workers,
    each response's increasing, and JSON.parse reads each one exactly. No
    flakeid.gunicorn hook: it builds the 64-bit generator, which NODE 5 gives one
    worker only."""
    port, log = testenv.free_port(), tmp_path / "gunicorn.log"
    proc = serve(
        port,
        {"FLAKEID_DJANGO_NODE": "5", "FLAKEID_TEST_UUID_AT_IMPORT": "1"},
        preload,
        log,
        hook=False,
    )
    by_pid: dict[int, list[list[str]]] = collections.defaultdict(list)
    errors, lock = 0, threading.Lock()

    def client() -> None:
        nonlocal errors
        for _ in range(40):
            try:
                with urllib.request.urlopen(
                    f"http://127.0.0.1:{port}/uuids?n=100", timeout=30
                ) as r:
                    body = json.loads(r.read())
            except urllib.error.HTTPError:
                with lock:
                    errors += 1
                continue
            with lock:
                by_pid[body["pid"]].append(body["ids"])

    try:
        loaded(port, proc, log, preload)
        threads = [threading.Thread(target=client) for _ in range(8)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(120)
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/uuids?n=200", timeout=30) as r:
            body = r.read()
        js = "process.stdout.write(JSON.parse(require('fs').readFileSync(0, 'utf8')).ids.join(' '))"
        seen_by_js = (
            subprocess.run(
                ["node", "-e", js], input=body, capture_output=True, timeout=60, check=True
            )
            .stdout.decode()
            .split()
        )
    finally:
        stop(proc)
    assert errors == 0, log.read_text()[-3000:]
    ids = [i for bodies in by_pid.values() for got in bodies for i in got]
    assert len(ids) == 8 * 40 * 100 and len(set(ids)) == len(ids), (
        f"{len(ids) - len(set(ids))} UUIDs issued twice"
    )
    assert len(by_pid) >= 2, f"one worker served every request: {list(by_pid)}"
    for got in (got for bodies in by_pid.values() for got in bodies):  # each response's, in order
        assert [uuid.UUID(i) for i in got] == sorted(uuid.UUID(i) for i in got)
    assert seen_by_js == json.loads(body)["ids"]
    assert "ForkError" not in log.read_text()


def test_uvicorn_with_one_fixed_node_id_does_not_start(tmp_path: Path) -> None:
    port, log = testenv.free_port(), tmp_path / "uvicorn.log"
    guard = {"FLAKEID_HOST_GUARD": str(tmp_path / "guard")}
    proc = serve_uvicorn(port, {"FLAKEID_TEST_NODE": "5", **guard}, log)
    assert_stops_at_boot(proc, port, log)  # its status is uvicorn's: 0 with --workers
    assert "failed to start, stopping the parent process" in log.read_text()


def js_read_ids(port: int, n: int) -> tuple[list[int], list[str]]:
    """/ids?n=`n` as Python reads it and as a plain JSON.parse (node) prints each ID."""
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/ids?n={n}", timeout=30) as r:
        body = r.read()
    js = (
        "process.stdout.write(JSON.parse(require('fs').readFileSync(0, 'utf8'))"
        ".ids.map(String).join(' '))"
    )
    out = subprocess.run(
        ["node", "-e", js], input=body, capture_output=True, timeout=60, check=True
    ).stdout
    return [int(i) for i in json.loads(body)["ids"]], out.decode().split()


def test_uvicorn_with_a_file_lease_every_worker_issues_on_its_own_node(tmp_path: Path) -> None:
    port, log = testenv.free_port(), tmp_path / "uvicorn.log"
    proc = serve_uvicorn(port, {"FLAKEID_TEST_LEASE": f"file://{tmp_path}/leases"}, log)
    try:
        up(port, proc, log)
        ids, nodes, errors = hammer(port)
        exact, seen_by_js = js_read_ids(port, 200)
    finally:
        stop(proc)
    assert [str(i) for i in exact] == seen_by_js  # flakeid.pydantic.FlakeId: strings
    assert errors == 0, log.read_text()[-3000:]
    assert_each_worker_on_its_own_node(ids, nodes)


def _pool_ids(_: int) -> tuple[int, list[int] | str]:
    try:
        return os.getpid(), [_shared.generator().next_id() for _ in range(2000)]
    except flakeid.FlakeIdError as e:
        return os.getpid(), f"{type(e).__name__}: {e}"


def _pool(settings: dict[str, Any]) -> list[tuple[int, list[int] | str]]:
    _shared.configure(settings)  # in the parent, as an app does at import; no node id taken
    with multiprocessing.get_context("fork").Pool(4) as pool:
        return pool.map(_pool_ids, range(16), chunksize=1)


def test_pool_with_one_fixed_node_id_issues_from_one_process() -> None:
    results = _pool({"node": 6})
    ids = [i for _, got in results if isinstance(got, list) for i in got]
    refused = {pid: got for pid, got in results if isinstance(got, str)}
    issuing = {pid for pid, got in results if isinstance(got, list)}
    assert ids and len(ids) == len(set(ids))
    assert len(issuing) == 1, issuing
    assert all("ConfigError" in r and "already in use" in r for r in refused.values()), refused
    # The parent only configured (one child could take node 6); its children are
    # gone now, and the guard with them.
    assert flakeid.decompose(_shared.generator().next_id()).node == 6


def _nodes_by_pid(results: list[tuple[int, list[int] | str]]) -> dict[int, set[int]]:
    """The node ids each pool process issued on, once every task is seen to have
    issued its 2,000 IDs and no ID to be issued twice."""
    assert all(isinstance(got, list) for _, got in results), results
    ids = [i for _, got in results for i in got]  # type: ignore[union-attr]
    assert len(ids) == 16 * 2000 and len(ids) == len(set(ids))
    by_pid: dict[int, set[int]] = collections.defaultdict(set)
    for pid, got in results:
        by_pid[pid].update(flakeid.decompose(i).node for i in got)  # type: ignore[union-attr]
    return by_pid


def test_pool_with_no_node_id_gives_each_process_its_own_node() -> None:
    by_pid = _nodes_by_pid(_pool({"layout": "snowflake"}))
    assert len({next(iter(n)) for n in by_pid.values()}) == len(by_pid), by_pid


def test_pool_with_a_file_lease_gives_each_process_its_own_node(tmp_path: Path) -> None:
    by_pid = _nodes_by_pid(_pool({"lease": f"file://{tmp_path}"}))
    assert all(len(n) == 1 for n in by_pid.values()), by_pid
    assert len({next(iter(n)) for n in by_pid.values()}) == len(by_pid)


def test_a_forked_child_builds_its_own_generator(tmp_path: Path) -> None:
    """The parent's generator, built before the fork, is not used in the child (no
    ForkError); the child's own, on the parent's fixed node id, is refused while
    the parent lives; on a lease it takes another node id."""
    for settings, expect in [
        ({"node": 7}, "refused"),
        ({"lease": f"file://{tmp_path}"}, "own node"),
    ]:
        _shared.reset()
        _shared.configure(settings)
        parent_node = flakeid.decompose(_shared.generator().next_id()).node

        def child() -> str:
            try:
                node = flakeid.decompose(_shared.generator().next_id()).node
                return "own node" if node != parent_node else "same node"
            except flakeid.ConfigError as e:
                return "refused" if f"by process {os.getppid()}" in str(e) else f"other: {e}"
            except flakeid.FlakeIdError as e:
                return f"{type(e).__name__}: {e}"

        msg = in_child(child)
        assert msg == expect, msg
        _shared.generator().next_id()  # the parent goes on
