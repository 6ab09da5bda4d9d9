"""One generator per process, for the framework adapters (flakeid.django,
flakeid.sqlalchemy).

Two generators on one node id issue the same IDs, so the adapters share one, built
from the framework's settings (Django's ``settings.FLAKEID``) or from ``configure()``
or, failing both, from the environment (``FLAKEID_NODE``, ``FLAKEID_DATACENTER`` +
``FLAKEID_WORKER``, ``FLAKEID_LEASE``, ``FLAKEID_LAYOUT``, ``FLAKEID_OVERFLOW``).
Unlike a bare ``Generator()``, it refuses to start without a node source: a column
default runs in every replica, and replicas on node 0 repeat each other's IDs.
"""

from __future__ import annotations

import os
import threading
from typing import Any, Mapping

from flakeid._flakeid import ConfigError, Generator

# The Generator keywords a settings mapping may give (clock is for tests only).
OPTIONS = (
    "node",
    "datacenter",
    "worker",
    "lease",
    "lease_ttl_ms",
    "layout",
    "overflow",
    "clock_backwards",
    "max_borrow_ms",
    "max_wait_ms",
    "max_sequence",
    "state",
)
ENV = {
    "node": "FLAKEID_NODE",
    "datacenter": "FLAKEID_DATACENTER",
    "worker": "FLAKEID_WORKER",
    "lease": "FLAKEID_LEASE",
    "layout": "FLAKEID_LAYOUT",
    "overflow": "FLAKEID_OVERFLOW",
}
_TEXT = {"lease", "layout", "overflow", "clock_backwards", "state"}


def config_error(field: str, message: str) -> ConfigError:
    err = ConfigError(f"invalid configuration: {message}")
    err.field = field  # type: ignore[attr-defined]
    return err


def options_from(settings: Mapping[str, Any], where: str) -> dict[str, Any]:
    """Generator keywords from a settings mapping; keys in either case (NODE, node)."""
    if not isinstance(settings, Mapping):
        raise config_error(where, f"{where} must be a dict, got {type(settings).__name__}")
    options: dict[str, Any] = {}
    for key, value in settings.items():
        name = str(key).lower()
        if name not in OPTIONS:
            raise config_error(name, f"{where}: unknown setting {key!r} (known: {', '.join(o.upper() for o in OPTIONS)})")
        if value is not None:
            options[name] = value
    return options


def options_from_env(env: Mapping[str, str] | None = None) -> dict[str, Any]:
    """Generator keywords from the FLAKEID_* variables; a number must be whole."""
    env = os.environ if env is None else env
    options: dict[str, Any] = {}
    for name, var in ENV.items():
        text = env.get(var, "")
        if not text:
            continue
        if name in _TEXT or (name == "node" and not text.isdigit()):
            options[name] = text  # a node source: env:VAR, hostname, mac, ipv4
        elif text.isdigit():
            options[name] = int(text)
        else:
            raise config_error(name, f"{name} must be a whole number, got {text!r} (from {var})")
    return options


def require_node(options: Mapping[str, Any], where: str, prefix: str = "") -> None:
    """A ConfigError (field ``node``) when `options` give no node id and no lease;
    `prefix` is how `where` spells the keys (FLAKEID_ for the environment)."""
    if not any(options.get(k) is not None for k in ("node", "worker", "lease")):
        raise config_error(
            "node",
            f"no node id given in {where}: set {prefix}NODE (a number, env:VAR, hostname, mac or ipv4), "
            f"{prefix}DATACENTER and {prefix}WORKER, or {prefix}LEASE; without one every replica would "
            "run as node 0 and issue the same IDs",
        )


_lock = threading.Lock()
_shared: Generator | None = None
_pid = 0


def configure(options: Mapping[str, Any], where: str = "configure()") -> Generator:
    """Builds the process's generator (once; again only after reset())."""
    global _shared, _pid
    options = options_from(options, where)
    require_node(options, where)
    with _lock:
        if _shared is not None and _pid == os.getpid():
            raise config_error("node", "the shared generator is already configured (once per process)")
        _shared, _pid = Generator(**options), os.getpid()
        return _shared


def ensure(settings: Mapping[str, Any], where: str) -> Generator:
    """The shared generator, built from `settings` if there is none yet."""
    global _shared, _pid
    gen = _shared
    if gen is not None:
        return gen
    options = options_from(settings, where)
    require_node(options, where)
    with _lock:
        if _shared is None:
            _shared, _pid = Generator(**options), os.getpid()
        return _shared


def generator() -> Generator:
    """configure()'s generator, or one from the FLAKEID_* variables on first use."""
    global _shared, _pid
    gen = _shared
    if gen is not None:
        return gen
    with _lock:
        if _shared is None:
            options = options_from_env()
            require_node(options, "the environment", prefix="FLAKEID_")
            _shared, _pid = Generator(**options), os.getpid()
        return _shared


def configured() -> bool:
    return _shared is not None


def reset() -> None:
    """Forgets the shared generator (tests; a lease is released when it is dropped)."""
    global _shared
    with _lock:
        _shared = None


def next_id() -> int:
    """The next ID of the process's generator: the adapters' column default."""
    return generator().next_id()
