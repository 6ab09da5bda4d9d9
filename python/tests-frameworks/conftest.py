"""python/tests-frameworks: flakeid.django, flakeid.sqlalchemy and flakeid.pydantic
against the installed package, with the frameworks of the test-frameworks extra,
on SQLite and on the fixture's PostgreSQL (make test-python runs this folder under
tests/env/testenv.py run --postgres). A run without the fixture fails: no skips."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Iterator

import pytest

from flakeid import _shared

POSTGRES_URL = os.environ.get("FLAKEID_TEST_POSTGRES_URL", "")
if not POSTGRES_URL:
    raise RuntimeError(
        "FLAKEID_TEST_POSTGRES_URL is unset: run through make test-python "
        "(tests/env/testenv.py run --postgres -- pytest python/tests-frameworks)"
    )


# The FLAKEID_* variables of the generator's options (the core's list, in the vectors).
_VECTORS = Path(__file__).parents[2] / "tests/vectors/options.json"
ENV_VARS = [o["env"] for o in json.loads(_VECTORS.read_text())["options"] if o["env"]]


@pytest.fixture(autouse=True)
def fresh_generator(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Each test starts with no shared generator and no FLAKEID_* variables."""
    for var in ENV_VARS:
        monkeypatch.delenv(var, raising=False)
    _shared.reset()
    yield
    _shared.reset()
