"""Shared helpers: the vector files (tests/vectors at the repository root) and the
mapping from a vector's error kind to the exception it must raise."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any, Union

import flakeid

VECTORS = Path(
    os.environ.get("FLAKEID_VECTORS", Path(__file__).resolve().parents[2] / "tests" / "vectors")
)

ERRORS: dict[str, type[flakeid.FlakeIdError]] = {
    "config": flakeid.ConfigError,
    "clock_backwards": flakeid.ClockMovedBackwardsError,
    "time_exhausted": flakeid.TimeExhaustedError,
    "parse": flakeid.ParseError,
    "fork": flakeid.ForkError,
    "lease": flakeid.LeaseError,
    "interrupted": flakeid.WaitInterruptedError,
}


def load(name: str) -> dict[str, Any]:
    with open(VECTORS / f"{name}.json", encoding="utf-8") as f:
        data: dict[str, Any] = json.load(f)
    return data


def layout_of(spec: Union[str, dict[str, Any]]) -> Union[str, flakeid.Layout]:
    """A vector's layout spec: a preset name, or an object with every field."""
    if isinstance(spec, str):
        return spec
    assert set(spec) == {
        "time_bits",
        "datacenter_bits",
        "worker_bits",
        "sequence_bits",
        "tick_ms",
        "epoch_ms",
        "order",
    }, spec
    return flakeid.Layout(**spec)


def layout_obj(spec: Union[str, dict[str, Any]]) -> flakeid.Layout:
    """A vector's layout spec as a `Layout` (a preset's through `Layout.preset`)."""
    layout = layout_of(spec)
    return layout if isinstance(layout, flakeid.Layout) else flakeid.Layout.preset(layout)


def cases(name: str, key: str) -> list[Any]:
    items: list[Any] = load(name)[key]
    assert items, f"{name}.json has no {key}"
    return items
