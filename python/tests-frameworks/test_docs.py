"""docs/frameworks.md's Python blocks (fenced `python frameworks`), each run as
written in a fresh interpreter (Django's settings and the shared generator are
per process), with DATABASE_URL naming the fixture's PostgreSQL and FLAKEID_NODE set."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests" / "docs"))
import blocks as B  # noqa: E402

BLOCKS = [b for b in B.all_blocks() if b.lang == "python" and b.flags == {"frameworks"}]


def test_there_are_blocks() -> None:
    assert len(BLOCKS) >= 3  # Django, SQLAlchemy, Pydantic


@pytest.mark.parametrize("block", BLOCKS, ids=[b.id for b in BLOCKS])
def test_block_runs(block: B.Block, tmp_path: Path) -> None:
    script = tmp_path / "block.py"
    script.write_text("\n" * block.line + block.code)  # tracebacks point into the doc
    env = {
        **os.environ,
        "DATABASE_URL": os.environ["FLAKEID_TEST_POSTGRES_URL"],
        "FLAKEID_NODE": "7",
    }
    r = subprocess.run(
        [sys.executable, str(script)],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert r.returncode == 0, f"{block.id}:\n{r.stdout}{r.stderr}"
