"""Where the node id comes from (docs/design.md, "A node id across a fleet"): the
core decides it and reads FLAKEID_REQUIRE_NODE itself, so `Generator()` honours it
as the CLI and the adapters do."""

from __future__ import annotations

import pytest

import flakeid
from flakeid import _flakeid


def test_the_origin_is_shown_and_in_stats() -> None:
    gen = flakeid.Generator(node=3)
    assert gen.node_origin == "explicit"
    assert gen.stats()["node_origin"] == "explicit"
    gen.close()
    picked = flakeid.Generator()
    assert (picked.node_origin, picked.stats()["node_origin"]) == ("host", "host")
    picked.close()


def test_require_node_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FLAKEID_REQUIRE_NODE", "true")
    with pytest.raises(flakeid.ConfigError, match="require_node") as e:
        flakeid.Generator()
    assert e.value.field == "node"  # type: ignore[attr-defined]
    with pytest.raises(flakeid.ConfigError, match="require_node"):
        _flakeid.check_options()
    flakeid.Generator(node=4).close()


@pytest.mark.parametrize(
    ("env", "why"),
    [
        ({"FLAKEID_HOST_GUARD": "off"}, "host guard is off"),
        ({"FLAKEID_HOST_GUARD": "", "container": "podman"}, "runs in a container"),
    ],
)
def test_where_the_guard_cannot_see_no_node_id_is_refused(
    monkeypatch: pytest.MonkeyPatch, env: dict[str, str], why: str
) -> None:
    for k, v in env.items():
        monkeypatch.setenv(k, v)
    for make in (flakeid.Generator, _flakeid.check_options):
        with pytest.raises(flakeid.ConfigError, match=why) as e:
            make()
        for fix in ("FLAKEID_NODE", "FLAKEID_LEASE", 'lease = "database"', "UuidGenerator"):
            assert fix in str(e.value)
    monkeypatch.setenv("FLAKEID_SINGLE_INSTANCE", "true")
    if "container" in env:
        _flakeid.check_options()


def test_an_injected_clock_says_its_node_id() -> None:
    with pytest.raises(flakeid.ConfigError, match="node=0"):
        flakeid.Generator(clock=flakeid.ManualClock(1_700_000_000_000))
    flakeid.Generator(node=0, clock=flakeid.ManualClock(1_700_000_000_000)).next_id()
