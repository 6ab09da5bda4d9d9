"""flakeid.django's tests (djangoproject/orders/tests.py) under Django's own test
runner, once on SQLite and once on the fixture's PostgreSQL; and a project with
no node source in settings.FLAKEID refuses to start."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

PROJECT = Path(__file__).parent / "djangoproject"


def django(
    *args: str, db: str, extra_env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "settings",
        "FLAKEID_DJANGO_DB": db,
        **(extra_env or {}),
    }
    return subprocess.run(
        [sys.executable, "-m", "django", *args],
        cwd=PROJECT,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )


@pytest.mark.parametrize("db", ["sqlite", "postgres"])
def test_django_suite(db: str) -> None:
    r = django("test", "orders", "--noinput", "-v", "1", db=db)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "OK" in r.stderr


def test_a_project_without_a_node_starts_and_refuses_only_when_required(tmp_path: Path) -> None:
    (tmp_path / "nonode.py").write_text(
        "from settings import *\nFLAKEID = {'LAYOUT': 'snowflake'}\n"
    )
    (tmp_path / "required.py").write_text(
        "from settings import *\nFLAKEID = {'LAYOUT': 'snowflake', 'REQUIRE_NODE': True}\n"
    )
    env = {"PYTHONPATH": f"{tmp_path}:{PROJECT}"}
    r = django("check", db="sqlite", extra_env={"DJANGO_SETTINGS_MODULE": "nonode", **env})
    assert r.returncode == 0, r.stderr
    r = django("check", db="sqlite", extra_env={"DJANGO_SETTINGS_MODULE": "required", **env})
    assert r.returncode != 0
    assert "ConfigError" in r.stderr and "no node id given" in r.stderr, r.stderr
