"""state=: a fixed node id's high-water timestamp in a file (docs/state.md). The
same across real processes under libfaketime: crates/flakeid-cli/tests/state.rs."""

from __future__ import annotations

import pathlib

import pytest

import flakeid

T0 = 1_800_000_000_000


def saved_at(path: pathlib.Path, ms: int) -> None:
    path.write_text(f"flakeid-state 1\nhigh_water_ms {ms}\nnode 5\n")


def ts(i: int) -> int:
    return flakeid.decompose(i).timestamp_ms


def test_fresh_then_restart_behind_the_mark_under_each_policy(tmp_path: pathlib.Path) -> None:
    path = tmp_path / "node5.state"
    g = flakeid.Generator(node=5, state=path, clock=flakeid.ManualClock(T0))
    assert ts(g.next_id()) == T0
    assert not g.leased and g.lease_state is None
    del g
    assert path.read_text().startswith("flakeid-state 1\nhigh_water_ms 1800000000000\n")
    saved_at(path, T0 + 30_000)
    behind = flakeid.ManualClock(T0, 1)
    g = flakeid.Generator(node=5, state=str(path), clock=behind)
    with pytest.raises(flakeid.ClockMovedBackwardsError):
        g.next_id()
    del g
    g = flakeid.Generator(node=5, state=path, clock=behind, clock_backwards="wait")
    with pytest.raises(flakeid.ClockMovedBackwardsError):
        g.next_id()
    del g
    g = flakeid.Generator(node=5, state=path, clock=behind, clock_backwards="monotonic")
    assert all(ts(i) > T0 + 30_000 for i in g.next_ids(100))


def test_refusals_name_state(tmp_path: pathlib.Path) -> None:
    path = tmp_path / "s"
    path.write_text("garbage\n")
    with pytest.raises(flakeid.ConfigError) as e:
        flakeid.Generator(node=5, state=path)
    assert e.value.field == "state"
    path.unlink()
    first = flakeid.Generator(node=5, state=path)
    # Generators on node 5 share its counter, and so its state: one without the
    # state file, or with another one, is refused naming both.
    with pytest.raises(flakeid.ConfigError, match="keeps state file") as e:
        flakeid.Generator(node=5, state=tmp_path / "other")
    assert e.value.field == "state"
    with pytest.raises(flakeid.ConfigError, match="no state file") as e:
        flakeid.Generator(node=5)
    assert e.value.field == "state"
    with pytest.raises(flakeid.ConfigError) as e:
        flakeid.Generator(lease=f"file://{tmp_path}", state=tmp_path / "other")
    assert e.value.field == "state"
    with pytest.raises(TypeError, match="state"):
        flakeid.Generator(state=5)  # type: ignore[arg-type]
    del first
