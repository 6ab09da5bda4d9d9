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
import time
from typing import Any, Mapping

from flakeid._flakeid import ConfigError, Generator, ManualClock

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


def check(settings: Mapping[str, Any], where: str) -> None:
    """Every rule the generator would apply to `settings`, without taking a node id
    (no host guard, no lease): a web server's master checks its settings this way,
    and each worker builds its own generator on first use."""
    options = options_from(settings, where)
    require_node(options, where)
    if options.get("lease") is None and options.get("state") is None:
        Generator(**options, clock=ManualClock(int(time.time() * 1000)))


# One generator per process. A forked child never uses its parent's (ForkError):
# it builds its own from the same options, on first use. With a lease it takes a
# free node id; with a fixed one the host guard refuses it while the parent's lives.
_lock = threading.Lock()
_shared: Generator | None = None
_built_from: dict[str, Any] | None = None
_pid = 0
# A parent's generators, kept alive in its forked children: dropping one there would
# run its destructor (a lease's release) in a process that does not own it.
_inherited: list[Generator] = []


def _forget_parents() -> None:
    """In a forked child, sets the parent's generator aside (called under _lock)."""
    global _shared
    if _shared is not None and _pid != os.getpid():
        _inherited.append(_shared)
        _shared = None


def after_fork() -> None:
    """In a forked child: forget the parent's generator; the next use builds this
    process's own from the same settings. Runs by itself after ``os.fork()``
    (gunicorn, multiprocessing, Celery's prefork pool); call it from a post-fork hook
    of a server that forks outside Python (uWSGI's ``@postfork``)."""
    global _lock
    _lock = threading.Lock()  # another thread may have held it at the fork
    _forget_parents()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=after_fork)


def _build(options: dict[str, Any]) -> Generator:
    global _shared, _built_from, _pid
    _shared, _built_from, _pid = Generator(**options), options, os.getpid()
    return _shared


def configure(settings: Mapping[str, Any], where: str = "configure()") -> None:
    """Sets the process's generator settings (once; again only after reset()). They
    are checked now; the generator is built on first use, in the process that uses
    it, so a server's master that configures before forking takes no node id."""
    global _built_from, _pid
    check(settings, where)
    with _lock:
        if _built_from is not None and _pid == os.getpid():
            raise config_error("node", "the shared generator is already configured (once per process)")
        if _shared is not None and _pid == os.getpid():
            raise config_error("node", "the shared generator was built before configure(): call it first")
        _built_from, _pid = options_from(settings, where), os.getpid()


def ensure(settings: Mapping[str, Any], where: str) -> Generator:
    """The shared generator, built from `settings` if there is none yet."""
    gen = _shared
    if gen is not None and _pid == os.getpid():
        return gen
    options = options_from(settings, where)
    require_node(options, where)
    with _lock:
        _forget_parents()
        return _shared if _shared is not None else _build(options)


def generator() -> Generator:
    """configure()'s generator, or one from the FLAKEID_* variables on first use."""
    gen = _shared
    if gen is not None and _pid == os.getpid():
        return gen
    with _lock:
        _forget_parents()
        if _shared is not None:
            return _shared
        if _built_from is not None:
            return _build(_built_from)  # a forked child: the parent's settings
        options = options_from_env()
        require_node(options, "the environment", prefix="FLAKEID_")
        return _build(options)


def configured() -> bool:
    return _shared is not None or _built_from is not None


def reset() -> None:
    """Forgets the shared generator (tests; a lease is released when it is dropped)."""
    global _shared, _built_from
    with _lock:
        _shared = _built_from = None


def next_id() -> int:
    """The next ID of the process's generator: the adapters' column default."""
    return generator().next_id()
