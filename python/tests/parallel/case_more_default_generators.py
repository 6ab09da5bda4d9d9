"""A second module of ordinary tests as users write them, for test_parallel.py to run under `pytest -n 4`
(case_*.py: the suite itself leaves them out):
each builds generators with no node id (or a module-level one), none closed, and
leaves its IDs in FLAKEID_TEST_OUT for the parent to compare."""

import os
from pathlib import Path

import pytest

import flakeid

MODULE_LEVEL = flakeid.Generator()


def record(ids: list[int]) -> None:
    with (Path(os.environ["FLAKEID_TEST_OUT"]) / f"{os.getpid()}.txt").open("a") as f:
        f.write("".join(f"{i}\n" for i in ids))


@pytest.mark.parametrize("case", range(24))
def test_a_generator_per_test(case: int) -> None:
    g = flakeid.Generator()
    ids = g.next_ids(2000) if case % 2 else [g.next_id() for _ in range(2000)]
    assert ids == sorted(ids)
    record(ids)


@pytest.mark.parametrize("case", range(12))
def test_after_a_raised_error(case: int) -> None:
    with pytest.raises(flakeid.ConfigError) as excinfo:
        flakeid.Generator(layout="no-such-layout")
    assert excinfo.value
    record([flakeid.Generator().next_id(), MODULE_LEVEL.next_id()])
