"""Every core error kind maps to its own exception class, with its details."""

from __future__ import annotations

import multiprocessing
import pickle
from pathlib import Path

import pytest

import flakeid
from conftest import ERRORS

T0 = 1_700_000_000_000


def test_every_core_kind_has_its_class() -> None:
    # One class per kind of the core's error table, each exported by flakeid.
    assert len(set(ERRORS.values())) == len(ERRORS)
    for cls in ERRORS.values():
        assert getattr(flakeid, cls.__name__) is cls
        assert cls.__name__ in flakeid.__all__
        assert cls.__module__ == "flakeid"
        assert issubclass(cls, flakeid.FlakeIdError)


def _fail(name: str, tmp_path: Path) -> None:
    """A real call that fails with the core error of kind `name`."""
    if name == "config":
        flakeid.Generator(worker=32)
    elif name == "clock_backwards":
        clock = flakeid.ManualClock(T0)
        gen = flakeid.Generator(node=0, clock=clock)
        gen.next_id()
        clock.set(T0 - 7)
        gen.next_id()
    elif name == "time_exhausted":
        flakeid.Generator(node=0, clock=flakeid.ManualClock(1_000)).next_id()
    elif name == "parse":
        flakeid.decode("000g", "hex")
    elif name == "lease":
        gen = flakeid.Generator(lease=f"file://{tmp_path}")
        gen.release_lease()
        gen.next_id()
    elif name == "fork":
        # The child's ForkError, pickled back by multiprocessing.
        _FORKED[:] = [flakeid.Generator(3, 3)]
        try:
            with multiprocessing.get_context("fork").Pool(1) as pool:
                pool.apply(_next_in_child)
        finally:
            _FORKED.clear()
    else:
        # A wait ended by a signal handler re-raises the handler's own exception
        # (KeyboardInterrupt): no Python call ends in the bare kind.
        pytest.skip(f"no call fails with {name} alone")


# Made in the parent by the test that forks (not at import: under `pytest -n`, every
# worker imports this module, and a fixed node id is one process's on a host).
_FORKED: list[flakeid.Generator] = []


def _next_in_child() -> int:
    return _FORKED[0].next_id()


@pytest.mark.parametrize("name", sorted(ERRORS))
def test_conversion(name: str, tmp_path: Path) -> None:
    with pytest.raises(flakeid.FlakeIdError) as excinfo:
        _fail(name, tmp_path)
    exc = excinfo.value
    assert type(exc) is ERRORS[name]
    assert exc.code == "FLAKEID_" + name.upper()
    assert str(exc)
    again = pickle.loads(pickle.dumps(exc))
    assert type(again) is type(exc) and str(again) == str(exc) and again.__dict__ == exc.__dict__


def test_hierarchy() -> None:
    assert issubclass(flakeid.FlakeIdError, Exception)
    assert issubclass(flakeid.ConfigError, ValueError)
    assert issubclass(flakeid.ParseError, ValueError)
    for cls in (
        flakeid.ClockMovedBackwardsError,
        flakeid.TimeExhaustedError,
        flakeid.ForkError,
        flakeid.LeaseError,
    ):
        assert not issubclass(cls, ValueError)


def test_config_error_names_field_and_range() -> None:
    with pytest.raises(flakeid.ConfigError, match=r"worker must be in 0\.\.=31, got 32") as excinfo:
        flakeid.Generator(1, 32)
    assert excinfo.value.field == "worker"
    with pytest.raises(ValueError):  # catchable as a plain ValueError
        flakeid.Layout(time_bits=60)
    with pytest.raises(flakeid.ConfigError) as excinfo:
        flakeid.Generator(node=3, datacenter=1)
    assert excinfo.value.field in ("node", "datacenter")
    with pytest.raises(flakeid.ConfigError, match="one of snowflake"):
        flakeid.Generator(layout="nope")
    with pytest.raises(flakeid.ConfigError) as excinfo:
        flakeid.Layout(node_bits=10, worker_bits=5)
    assert excinfo.value.field == "node_bits"
    with pytest.raises(flakeid.ConfigError) as excinfo:
        flakeid.encode(1, "base64")
    assert excinfo.value.field == "encoding"


def test_clock_moved_backwards_has_by_ms() -> None:
    clock = flakeid.ManualClock(T0)
    gen = flakeid.Generator(node=0, clock=clock)
    gen.next_id()
    clock.set(T0 - 25)
    with pytest.raises(flakeid.ClockMovedBackwardsError, match="by 25 ms") as excinfo:
        gen.next_id()
    assert excinfo.value.by_ms == 25
    clock.set(T0)
    gen.next_id()


def test_time_exhausted() -> None:
    gen = flakeid.Generator(node=0, clock=flakeid.ManualClock(1_000))  # before the 2010 epoch
    with pytest.raises(flakeid.TimeExhaustedError, match="epoch"):
        gen.next_id()
    with pytest.raises(flakeid.TimeExhaustedError):
        flakeid.Layout.preset("snowflake").compose(2**62, 0, 0)


def test_parse_error_has_position() -> None:
    with pytest.raises(flakeid.ParseError) as excinfo:
        flakeid.decode("00000000000000g0", "hex")
    assert excinfo.value.position == 14
    with pytest.raises(flakeid.ParseError):
        flakeid.from_bytes(b"\x00" * 7)
    with pytest.raises(flakeid.ParseError):
        flakeid.decompose(2**63)


def test_wrong_python_types() -> None:
    with pytest.raises(TypeError, match="layout must be"):
        flakeid.Generator(layout=3)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="node must be"):
        flakeid.Generator(node=1.5)  # type: ignore[arg-type]
    # Ints no u64 can hold are ConfigErrors naming the field (not bare OverflowErrors).
    with pytest.raises(flakeid.ConfigError, match="node must be in 0..=1023, got -1"):
        flakeid.Generator(node=-1)
    with pytest.raises(flakeid.ConfigError, match="id must be in"):
        flakeid.decompose(2**64)
    with pytest.raises(flakeid.ConfigError, match="got -1"):
        flakeid.encode(-1)


@pytest.mark.parametrize(
    ("call", "field", "text"),
    [
        (lambda: flakeid.Generator(worker=-1), "worker", "worker must be in 0..=31, got -1"),
        (
            lambda: flakeid.Generator(datacenter=2**64),
            "datacenter",
            "0..=31, got 18446744073709551616",
        ),
        (
            lambda: flakeid.Generator(node=-5, layout="sonyflake"),
            "node",
            "node must be in 0..=65535, got -5",
        ),
        (
            lambda: flakeid.Generator(max_wait_ms=-1),
            "max_wait_ms",
            "max_wait_ms must be in 0..=86400000",
        ),
        (lambda: flakeid.decompose(-1), "id", "id must be in 0..=18446744073709551615, got -1"),
        (lambda: flakeid.encode(2**64, "hex"), "id", "got 18446744073709551616"),
        (lambda: flakeid.to_bytes(-2), "id", "got -2"),
        (
            lambda: flakeid.Layout.preset("snowflake").compose(T0, -1),
            "node",
            "node must be in 0..=1023",
        ),
        (lambda: flakeid.Layout.preset("snowflake").compose(T0, 0, 2**70), "sequence", "0..=4095"),
    ],
)
def test_ints_no_u64_holds_are_config_errors_naming_field_and_range(
    call, field: str, text: str
) -> None:
    # pyo3 alone would raise a bare OverflowError naming neither.
    with pytest.raises(flakeid.ConfigError) as excinfo:
        call()
    assert excinfo.value.field == field
    assert text in str(excinfo.value)
    assert isinstance(excinfo.value, ValueError)


def test_non_ints_are_type_errors() -> None:
    with pytest.raises(TypeError, match="worker must be an int"):
        flakeid.Generator(worker="3")  # type: ignore[arg-type]
    assert flakeid.Layout.preset("snowflake").compose(T0, 5) == flakeid.Layout.preset(
        "snowflake"
    ).compose(T0, 5, 0)
