"""The public surface: names, reprs, Layout helpers, decompose, encodings."""

from __future__ import annotations

import datetime as dt

import pytest

import flakeid


def test_public_names() -> None:
    for name in flakeid.__all__:
        assert hasattr(flakeid, name), name
    assert flakeid.__version__.count(".") == 2
    # the seed vector from the product contract
    assert (
        flakeid.Layout.preset("snowflake").compose_parts(1505914988849, 17, 25, 0)
        == 910499571847892992
    )


def test_decompose_seed_vector_and_datetime() -> None:
    p = flakeid.decompose(910499571847892992)
    assert (p.timestamp_ms, p.datacenter, p.worker, p.node, p.sequence) == (
        1505914988849,
        17,
        25,
        17 << 5 | 25,
        0,
    )
    assert p.datetime == dt.datetime(2017, 9, 20, 13, 43, 8, 849000, tzinfo=dt.timezone.utc)
    assert p.datetime.tzinfo is dt.timezone.utc
    assert (
        repr(p)
        == "Parts(timestamp_ms=1505914988849, datacenter=17, worker=25, node=569, sequence=0)"
    )
    assert p == flakeid.decompose(910499571847892992, flakeid.Layout.preset("snowflake"))
    assert hash(p) == hash(flakeid.decompose(910499571847892992))


def test_single_node_field_layouts() -> None:
    layout = flakeid.Layout.preset("instagram")
    id_ = layout.compose(1_700_000_000_000, 4000, 7)
    p = flakeid.decompose(id_, "instagram")
    assert (p.datacenter, p.worker, p.node, p.sequence) == (0, 4000, 4000, 7)


def test_layout_reprs_and_defaults() -> None:
    assert repr(flakeid.Layout.preset("flake")) == 'Layout.preset("flake")'
    custom = flakeid.Layout(sequence_bits=10)
    assert custom.time_bits == 41 and custom.datacenter_bits == 5 and custom.sequence_bits == 10
    assert repr(custom) == (
        "Layout(time_bits=41, datacenter_bits=5, worker_bits=5, sequence_bits=10, tick_ms=1, "
        'epoch_ms=1288834974657, order="time|node|seq")'
    )
    assert "custom (41 time" in str(custom)
    assert custom != flakeid.Layout.preset("snowflake")
    assert len({flakeid.Layout.preset("snowflake"), flakeid.Layout.preset("SNOWFLAKE")}) == 1
    presets = "snowflake flake discord sonyflake baidu instagram js53".split()
    assert [layout.name for layout in flakeid.Layout.presets()] == presets
    flake = flakeid.Layout.preset("flake")
    assert flake.total_bits == 64 and flake.signed_until_ms < flake.last_timestamp_ms


def test_id_range_brackets_generated_ids() -> None:
    gen = flakeid.Generator(1, 1, clock=flakeid.ManualClock(1_700_000_000_500))
    first, last = gen.layout.id_range(1_700_000_000_000, 1_700_000_000_999)
    assert first <= gen.next_id() <= last
    with pytest.raises(flakeid.ConfigError):
        gen.layout.id_range(10, 5)


@pytest.mark.parametrize("encoding,width", [("hex", 16), ("base32", 13), ("base62", 11)])
def test_encodings_are_fixed_width_and_sort(encoding: str, width: int) -> None:
    ids = sorted([0, 1, 61, 62, 2**32, 910499571847892992, 2**63, 2**64 - 1])
    texts = [flakeid.encode(i, encoding) for i in ids]
    assert all(len(t) == width for t in texts)
    assert texts == sorted(texts)
    assert [flakeid.decode(t, encoding) for t in texts] == ids
    assert flakeid.decode(flakeid.encode(123)) == 123  # base62 by default
