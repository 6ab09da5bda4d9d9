"""flakeid.django's tests (djangoproject/orders/tests.py) under Django's own test
runner, once on SQLite and once on the fixture's PostgreSQL; and a project with
no node source in settings.FLAKEID refuses to start."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import flakeid

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


# An app instance: the project's settings, its node id printed while it holds it,
# until its stdin closes.
_INSTANCE = """
import json, sys
import django
django.setup()
from flakeid.django import generator, next_id
g = generator()
print(json.dumps([g.node, g.stats()["node_origin"], next_id()]), flush=True)
sys.stdin.readline()
"""


def test_lease_database_is_the_apps_postgresql() -> None:
    """``"LEASE": "database"``: the node id leased from DATABASES["default"] (the
    fixture's PostgreSQL), no URL written twice; two instances at once hold two node
    ids; the project's suite passes on it; SQLite is refused at start-up."""
    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "settings",
        "FLAKEID_DJANGO_DB": "postgres",
        "FLAKEID_DJANGO_LEASE": "database",
        # A namespace's first use waits out the lock delay (TTL + margin + borrow,
        # docs/leases.md): the shortest TTL keeps that wait short.
        "FLAKEID_DJANGO_LEASE_TTL_MS": "1000",
    }
    instances = [
        subprocess.Popen(
            [sys.executable, "-c", _INSTANCE],
            cwd=PROJECT,
            env=env,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        for _ in range(2)
    ]
    try:
        seen = [json.loads(p.stdout.readline()) for p in instances if p.stdout]
    finally:
        for p in instances:
            p.communicate("\n", timeout=60)
    assert [origin for _, origin, _ in seen] == ["leased", "leased"], seen
    assert seen[0][0] != seen[1][0], seen
    assert all(flakeid.decompose(first).node == node for node, _, first in seen), seen
    assert [p.returncode for p in instances] == [0, 0]

    r = django("test", "orders", "--noinput", "-v", "1", db="postgres", extra_env=env)
    assert r.returncode == 0, r.stdout + r.stderr
    r = django("check", db="sqlite", extra_env={"FLAKEID_DJANGO_LEASE": "database"})
    assert r.returncode != 0
    assert "ConfigError" in r.stderr and "only PostgreSQL" in r.stderr, r.stderr
    assert '"sqlite"' in r.stderr, r.stderr
