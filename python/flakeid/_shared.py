"""The process's shared generators: one module for every one of them.

* The 64-bit generator of the framework adapters (Django, SQLAlchemy, Pydantic): built on
  first use in each process from the framework's settings, configure()'s, or else the
  FLAKEID_* variables (no node id: a free one on this host, across hosts give one). A second
  configuration is refused unless it equals the first by value. A forked child builds its
  own on first use; the parent's is kept alive in the child, unused. A server's boot hook
  (flakeid.gunicorn) builds it as the worker starts instead: boot().
* `lease = "database"`: an adapter passes `database`, a callable giving the app's database
  connection settings; the engine turns the word into that database's lease URL.
* (The UuidGenerator of flakeid.uuid7(), ulid() and typeid() is the native module's: one per
  process, which a forked child goes on with.)

Names, values, checks and errors are the engine's.
"""

from __future__ import annotations

import os
import threading
from typing import Any, Callable, Mapping, Optional

from flakeid._flakeid import (
    Generator,
    check_options,
    configured_twice,
    database_lease,
    options_from_env,
    settings_options,
)

_lock = threading.Lock()
# The process's settings as Generator keywords (checked), once configured or first used.
_options: Optional[dict[str, Any]] = None
# The settings mapping they came from: a framework asking again with equal settings
# gets the generator without converting them again.
_settings: Optional[dict[str, Any]] = None
# The 64-bit generator, and the process that built it.
_generator: Optional[Generator] = None
_pid = 0
# What an adapter gives for `lease = "database"`: the app's database connection settings.
Database = Optional[Callable[[], Mapping[str, Any]]]
# How the adapter in use builds the process's generator (Django: from settings.FLAKEID), for
# boot(); None: configure()'s settings or the environment's.
_builder: Optional[Callable[[], Generator]] = None
# Generators a forked child inherited from its parent: dropping one there would release
# the parent's lease, so the child keeps them, unused.
_inherited: list[Generator] = []


def check(settings: Optional[Mapping[str, Any]], database: Database = None) -> dict[str, Any]:
    """`settings` (else the FLAKEID_* variables) as Generator keywords, checked by the engine
    without taking a node id, a lease or a state file; with `database`, the lease "database"
    becomes the URL of the app's own PostgreSQL."""
    if settings:
        options = settings_options(settings)
    else:
        options = options_from_env()
    lease = options.get("lease")
    if database is not None and isinstance(lease, str):
        options["lease"] = database_lease(lease, database())
    check_options(**options)
    return options


def _adopt(options: dict[str, Any], settings: Optional[Mapping[str, Any]]) -> None:
    """Makes `options` the process's, or refuses them when it has other ones (_lock held)."""
    global _options, _settings
    if _options is not None and _options != options:
        raise configured_twice(repr(_options), repr(options))
    _options = options
    _settings = dict(settings) if settings else None


def configure(settings: Mapping[str, Any], database: Database = None) -> None:
    """Sets the process's settings, checked now; the generator is built on first use."""
    options = check(settings, database)
    with _lock:
        _adopt(options, settings)


def generator(settings: Optional[Mapping[str, Any]] = None, database: Database = None) -> Generator:
    """The process's generator: from `settings`, else configure()'s, else the environment."""
    global _generator, _pid
    built = _generator
    if built is not None and _pid == os.getpid() and (not settings or settings == _settings):
        return built
    with _lock:
        if settings:
            _adopt(check(settings, database), settings)
        elif _options is None:
            _adopt(check(None, database), None)
        if _generator is None or _pid != os.getpid():
            _generator = Generator(**(_options or {}))
            _pid = os.getpid()
        return _generator


def built_by(build: Callable[[], Generator]) -> None:
    """Names how the adapter in use builds the process's generator (its app's start calls
    this; nothing is built)."""
    global _builder
    _builder = build


def boot() -> Generator:
    """Builds this process's generator now, from the adapter's settings: a server's hook
    after the fork, so that a node id the engine refuses (one already held on this host)
    stops the worker as it boots, not each request. Raises the engine's ConfigError."""
    return _builder() if _builder is not None else generator()


def layout(settings: Optional[Mapping[str, Any]] = None) -> Any:
    """The layout of the process's IDs: `settings`', configure()'s or the FLAKEID_*
    variables' (None: the engine's default)."""
    if settings:
        options = settings_options(settings)
    elif _options is not None:
        options = _options
    else:
        options = options_from_env()
    return options.get("layout")


def after_fork() -> None:
    """In a forked child (uWSGI: call it from @postfork): the next use builds the child's
    own generator. Registered with os.register_at_fork where there is one."""
    global _lock, _generator
    if _generator is not None:
        _inherited.append(_generator)
    _generator = None
    _lock = threading.Lock()  # another thread of the parent may have held it


def reset() -> None:
    """Forgets the settings and the 64-bit generator (tests; a lease is released when the
    generator is dropped)."""
    global _options, _settings, _generator
    with _lock:
        _options = None
        _settings = None
        _generator = None


if hasattr(os, "register_at_fork"):  # POSIX; Windows does not fork
    os.register_at_fork(after_in_child=after_fork)
