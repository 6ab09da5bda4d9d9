"""Test runners with workers: `pytest -n 4` over modules whose tests build generators
with no node id (per test, at module level, after a raised error) all pass, and no
ID is issued twice: each worker process takes a free node id on the host."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).parent


@pytest.mark.skipif(sys.platform == "win32", reason="the workers' guard directory is a POSIX path")
def test_pytest_xdist_workers_with_default_generators(tmp_path: Path) -> None:
    out = tmp_path / "ids"
    out.mkdir()
    env = {**os.environ, "FLAKEID_TEST_OUT": str(out), "FLAKEID_HOST_GUARD": str(tmp_path / "guard")}
    r = subprocess.run(
        [sys.executable, "-m", "pytest", "-n", "4", "-q", "-p", "no:cacheprovider", "-o", "python_files=case_*.py",
         str(HERE / "parallel")],
        env=env, capture_output=True, text=True, timeout=300,
    )
    assert r.returncode == 0, r.stdout[-4000:] + r.stderr[-4000:]
    assert "72 passed" in r.stdout, r.stdout[-2000:]
    ids = [line for f in out.iterdir() for line in f.read_text().split()]
    assert len(ids) == 2 * (12 * 2000 + 12 * 2000 + 12 * 2)
    assert len(set(ids)) == len(ids), f"{len(ids) - len(set(ids))} IDs issued twice"
