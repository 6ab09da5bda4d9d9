"""The one generator per process that the adapters share, and its settings."""

from __future__ import annotations

import json
import threading
import time
from pathlib import Path

import pytest

import flakeid
from flakeid import _shared


def test_no_node_source_takes_a_free_one_and_require_node_refuses(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    g = _shared.generator()
    assert flakeid.decompose(g.next_id()).node == g.node
    _shared.reset()
    with pytest.raises(flakeid.ConfigError, match="no node id given") as caught:
        _shared.configure({"require_node": True, "layout": "snowflake"})
    assert caught.value.field == "node"  # type: ignore[attr-defined]
    _shared.reset()
    monkeypatch.setenv("FLAKEID_NODE", "12")
    assert flakeid.decompose(_shared.generator().next_id()).node == 12


VECTORS = json.loads((Path(__file__).parents[2] / "tests/vectors/options.json").read_text())


def test_settings_names_are_the_tables() -> None:
    """The names a settings mapping takes and the FLAKEID_* variables: the core's table."""
    rows = [o for o in VECTORS["options"] if o["setting"]]
    assert (
        flakeid.settings_options({o["name"].upper(): None for o in rows}) == {}
    )  # all known; None left out
    assert flakeid.settings_options({"NODE": 3, "layout": "discord", "LEASE": None}) == {
        "node": 3,
        "layout": "discord",
    }
    assert flakeid.options_from_env({o["env"]: "" for o in rows}) == {}
    for case in VECTORS["settings_cases"]:
        if "error" in case:
            with pytest.raises(flakeid.ConfigError) as caught:
                flakeid.settings_options({k: 1 for k in case["keys"]})
            assert caught.value.field == case["field"]  # type: ignore[attr-defined]
            assert str(caught.value).startswith(case["message_starts"])
        else:
            assert list(flakeid.settings_options({k: 1 for k in case["keys"]})) == case["names"]
    with pytest.raises(flakeid.ConfigError, match="must be a mapping"):
        flakeid.settings_options(["NODE"])  # type: ignore[arg-type]


@pytest.mark.parametrize("case", VECTORS["env_cases"], ids=lambda c: ",".join(c["env"]) or "empty")
def test_environment_vectors(case: dict, monkeypatch: pytest.MonkeyPatch) -> None:
    for k, v in case["env"].items():
        monkeypatch.setenv(k, v)
    try:  # a malformed number is refused as it is read, the rest as the generator is built
        options = flakeid.options_from_env()
        assert sorted(options) == sorted(case["options"])
        flakeid.Generator(
            **options, require_node=True, clock=flakeid.ManualClock(1_700_000_000_000)
        )
    except flakeid.ConfigError as err:
        assert (case.get("error"), case.get("field")) == ("config", err.field), err  # type: ignore[attr-defined]
    else:
        assert "error" not in case, case


def test_ranges_are_the_engines() -> None:
    with pytest.raises(flakeid.ConfigError, match=r"worker must be in 0\.\.=31") as caught:
        _shared.configure({"WORKER": 32})
    assert caught.value.field == "worker"  # type: ignore[attr-defined]


def test_configured_once_per_process(monkeypatch: pytest.MonkeyPatch) -> None:
    _shared.configure({"node": 4})
    gen = _shared.generator()
    assert gen.node == 4 and _shared.generator() is gen
    _shared.configure({"NODE": 4})  # the same settings again: fine
    with pytest.raises(flakeid.ConfigError, match="configured already") as caught:
        _shared.configure({"node": 5})
    assert caught.value.field == "settings"  # type: ignore[attr-defined]
    # One door: the environment's settings and a framework's meet the same check.
    _shared.reset()
    monkeypatch.setenv("FLAKEID_NODE", "7")
    assert _shared.generator().node == 7
    with pytest.raises(flakeid.ConfigError, match="configured already"):
        _shared.generator({"NODE": 8})
    assert _shared.generator({"node": 7}).node == 7


def test_settings_are_compared_by_value() -> None:
    """Equal settings in other spellings are the same configuration; a settings mapping
    changed in place after first use is another one, refused (not the first one's
    generator handed out again)."""
    _shared.configure({"node": 15, "layout": "snowflake"})
    _shared.configure({"LAYOUT": "snowflake", "NODE": 15})
    settings = {"NODE": 15, "LAYOUT": "snowflake"}
    gen = _shared.generator(settings)
    assert _shared.generator(dict(settings)) is gen
    settings["NODE"] = 16
    with pytest.raises(flakeid.ConfigError, match="configured already"):
        _shared.generator(settings)


def test_checking_takes_nothing(tmp_path: Path) -> None:
    """configure() checks through the engine and takes no lease (the first use, in each
    worker, takes one); a bad value is refused there and then, before any use."""
    _shared.configure({"lease": f"file://{tmp_path}"})
    assert not any(tmp_path.iterdir()), list(tmp_path.iterdir())
    assert _shared.generator().next_id() > 0
    assert any(tmp_path.iterdir())
    _shared.reset()
    with pytest.raises(flakeid.ConfigError, match="max_borrow_ms"):
        _shared.configure({"node": 17, "max_borrow_ms": 1 << 62})


@pytest.mark.parametrize("settings", ["node", "lease"])
def test_first_use_from_many_threads_builds_one_generator(
    settings: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
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
    assert len({id(g) for g in got}) == 1, (
        f"{len({id(g) for g in got})} generators built in one process"
    )
