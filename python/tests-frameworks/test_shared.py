"""The one generator per process that the adapters share, and its settings."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import pytest

import flakeid
from flakeid import _shared


def test_no_node_source_is_refused_never_node_0(monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(flakeid.ConfigError, match="node 0") as caught:
        _shared.next_id()
    assert caught.value.field == "node"  # type: ignore[attr-defined]
    with pytest.raises(flakeid.ConfigError, match="node 0"):
        _shared.configure({"datacenter": 1, "layout": "snowflake"})
    monkeypatch.setenv("FLAKEID_NODE", "12")
    assert flakeid.decompose(_shared.next_id()).node == 12


def test_settings_keys_in_either_case_and_unknown_keys_named() -> None:
    assert _shared.options_from({"NODE": 3, "layout": "discord", "LEASE": None}, "x") == {"node": 3, "layout": "discord"}
    with pytest.raises(flakeid.ConfigError, match="unknown setting 'WORKER_ID'") as caught:
        _shared.options_from({"WORKER_ID": 1}, "settings.FLAKEID")
    assert caught.value.field == "worker_id"  # type: ignore[attr-defined]
    with pytest.raises(flakeid.ConfigError, match="must be a dict"):
        _shared.options_from(["NODE"], "settings.FLAKEID")  # type: ignore[arg-type]


def test_environment() -> None:
    env = {"FLAKEID_NODE": "env:POD", "FLAKEID_LAYOUT": "sonyflake", "FLAKEID_OVERFLOW": "borrow", "FLAKEID_WORKER": "2"}
    assert _shared.options_from_env(env) == {"node": "env:POD", "layout": "sonyflake", "overflow": "borrow", "worker": 2}
    with pytest.raises(flakeid.ConfigError, match="FLAKEID_WORKER") as caught:
        _shared.options_from_env({"FLAKEID_WORKER": "two"})
    assert caught.value.field == "worker"  # type: ignore[attr-defined]


def test_ranges_are_the_engines() -> None:
    with pytest.raises(flakeid.ConfigError, match=r"worker must be in 0\.\.=31") as caught:
        _shared.configure({"WORKER": 32})
    assert caught.value.field == "worker"  # type: ignore[attr-defined]


def test_configured_once_per_process() -> None:
    _shared.configure({"node": 4})
    gen = _shared.generator()
    assert gen.node == 4 and _shared.generator() is gen
    with pytest.raises(flakeid.ConfigError, match="already configured"):
        _shared.configure({"node": 5})


@pytest.mark.parametrize("settings", ["node", "lease"])
def test_first_use_from_many_threads_builds_one_generator(settings: str, tmp_path: Path,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    """A threaded server's first requests (FastAPI's sync endpoints, gunicorn gthread)
    arrive together: the process still builds one generator, on one node id. Each
    build takes 50 ms here (a lease's first acquire can take longer), so that the
    other threads arrive while the first one builds, every run."""
    _shared.configure({"node": 14} if settings == "node" else {"lease": f"file://{tmp_path}"})
    real = _shared.Generator

    def slow_build(**options: object) -> object:
        time.sleep(0.05)
        return real(**options)

    monkeypatch.setattr(_shared, "Generator", slow_build)
    start = threading.Barrier(16)
    got: list[object] = []

    def first_use() -> None:
        start.wait()
        try:
            got.append(_shared.generator())
        except flakeid.FlakeIdError as e:
            got.append(e)

    threads = [threading.Thread(target=first_use) for _ in range(16)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not [g for g in got if isinstance(g, Exception)], got
    assert len({id(g) for g in got}) == 1, f"{len({id(g) for g in got})} generators built in one process"
