"""One generator per process for the framework adapters, built on first use in each process from
the framework's settings, configure() or else FLAKEID_* (no node id: a free one on this host);
a second, different configuration is refused. Names, values, errors: the engine's."""

import os, threading, time  # noqa: E401
from typing import Any, Mapping, Optional, cast

from flakeid._flakeid import ConfigError, Generator, ManualClock, configured_twice, options_from_env, settings_options

_lock, _pid, _seen = threading.Lock(), 0, cast(object, None)
_shared, _options = cast(Optional[Generator], None), cast(Optional[dict[str, Any]], None)
_inherited: list[Optional[Generator]] = []  # a forked child keeps its parent's alive
getattr(os, "register_at_fork", lambda **_: None)(after_in_child=lambda: after_fork())


def after_fork() -> None:
    """In a forked child (uWSGI: call it @postfork): the next use builds anew; the parent's is kept."""
    global _lock, _shared
    _inherited.append(_shared)
    _lock, _shared = threading.Lock(), None  # another thread may have held the lock


def check(settings: Mapping[str, Any]) -> dict[str, Any]:
    """`settings` (else FLAKEID_*) as Generator keywords, checked by the engine without taking a node id."""
    options = settings_options(settings) if settings else options_from_env()
    if "lease" not in options and "state" not in options:
        Generator(**options, clock=ManualClock(int(time.time() * 1000)))
    return options


def generator(settings: Optional[Mapping[str, Any]] = None, build: bool = True) -> Generator:
    """The process's generator: from `settings`, else configure()'s, else the environment (each checked)."""
    global _shared, _options, _seen, _pid
    if _shared is not None and _pid == os.getpid() and build and (not settings or settings is _seen):
        return _shared
    with _lock:
        options = check(settings) if settings else _options or check({})
        if _options not in (None, options):
            raise configured_twice(repr(_options), repr(options))
        if build and (_shared is None or _pid != os.getpid()):
            _shared, _pid = Generator(**options), os.getpid()
        _options, _seen = options, settings  # once built (or checked, by configure)
        return _shared  # type: ignore[return-value]


def configure(settings: Mapping[str, Any]) -> None:
    """Sets the process's settings, checked now; the generator is built on first use."""
    generator(check(settings), build=False)


def layout(settings: Optional[Mapping[str, Any]] = None) -> Any:
    """The layout of the process's IDs: `settings`', configure()'s or FLAKEID_*'s (None: the engine's default)."""
    return (settings_options(settings) if settings else _options or options_from_env()).get("layout")


def reset() -> None:
    """Forgets the settings and the generator (tests; a lease is released when dropped)."""
    global _shared, _options, _seen
    _shared = _options = _seen = None
