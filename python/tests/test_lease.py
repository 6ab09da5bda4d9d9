"""Node-id leases through the binding, on the local file store (flock); the Redis and
PostgreSQL stores are exercised against real servers by the core's lease tests."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

import flakeid

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="file leases need flock")


def test_generators_on_one_store_get_distinct_nodes(tmp_path: Path) -> None:
    url = f"file://{tmp_path}?namespace=py"
    a = flakeid.Generator(lease=url, lease_ttl_ms=1000)
    b = flakeid.Generator(lease=url, lease_ttl_ms=1000)
    # A fixed node id no other test file takes: under `pytest -n 2` another worker may
    # hold (1, 1) at this moment, and the host guard refuses it here.
    fixed = flakeid.Generator(node=931)
    assert a.leased and b.leased and not fixed.leased
    assert a.lease_state == "held" and fixed.lease_state is None
    assert a.stats()["lease_state"] == "held" and a.stats()["lease_remaining_ms"] > 0
    assert a.node != b.node
    assert flakeid.decompose(a.next_id()).node == a.node
    a.release_lease()
    assert a.lease_state == "released"
    with pytest.raises(flakeid.LeaseError):
        a.next_id()
    c = flakeid.Generator(lease=url, lease_ttl_ms=1000)
    assert c.node == a.node  # the released id is free again
    assert c.next_id() > 0


def test_lease_configuration_errors(tmp_path: Path) -> None:
    with pytest.raises(flakeid.ConfigError) as excinfo:
        flakeid.Generator(node=3, lease=f"file://{tmp_path}")
    assert excinfo.value.field == "lease"
    with pytest.raises(flakeid.ConfigError) as excinfo:
        flakeid.Generator(lease="nonsense")
    assert excinfo.value.field == "lease"
    with pytest.raises(flakeid.ConfigError, match="ftp"):
        flakeid.Generator(lease="ftp://host/x")
    with pytest.raises(flakeid.ConfigError):
        flakeid.Generator(lease=f"file://{tmp_path}", lease_ttl_ms=1)


def test_password_never_appears_in_errors() -> None:
    with pytest.raises(flakeid.FlakeIdError) as excinfo:
        flakeid.Generator(lease="postgres://app:s3cret@127.0.0.1:1/db", lease_ttl_ms=1000)
    assert "s3cret" not in str(excinfo.value)


@pytest.mark.parametrize(
    "url",
    [
        # A URL that does not parse (port 70000) is quoted by its error: both forms.
        "postgres://app:hunter61@127.0.0.1:70000/db?namespace=x",
        "postgres://app@127.0.0.1:70000/db?password=hunter62&sslpassword=hunter63",
    ],
)
def test_no_secret_of_a_lease_url_appears_in_errors(url: str) -> None:
    with pytest.raises(flakeid.ConfigError) as excinfo:
        flakeid.Generator(lease=url)
    message = str(excinfo.value)
    assert "lease URL" in message
    assert not any(pw in message for pw in ("hunter61", "hunter62", "hunter63")), message
