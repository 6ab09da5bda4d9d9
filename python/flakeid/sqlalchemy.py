"""SQLAlchemy 2: ``FlakeId``, a BIGINT column type, and ``next_id``, its default
from the process's one generator (``configure(...)`` or the FLAKEID_* variables;
without a node source it refuses, never running as node 0)::

    from flakeid.sqlalchemy import FlakeId, configure, next_id

    # or FLAKEID_LEASE / FLAKEID_NODE in the environment
    configure({"lease": "file:///var/lib/flakeid"})

    class Order(Base):
        __tablename__ = "orders"
        id: Mapped[int] = mapped_column(FlakeId, primary_key=True, default=next_id)

``configure({"lease": "database"}, engine=engine)`` leases the node id from the app's
own PostgreSQL, the engine's (its URL: host, port, user, password, database and TLS
query), the setting for replicas outside Kubernetes; another database is a
``ConfigError``.

Sync and async engines alike: the default is a plain Python callable. With the
PostgreSQL extension installed, ``server_default=flakeid_next()`` lets the database
make the ID instead (``server_default()`` below).

UUIDv7 keys need no node id and no ``configure``: SQLAlchemy's own ``Uuid`` type with
``flakeid.uuid7`` as the default (``uuid_server_default()``: the extension's
``flakeid_uuidv7()``)::

    id: Mapped[uuid.UUID] = mapped_column(Uuid, primary_key=True, default=flakeid.uuid7)
"""

from __future__ import annotations

from typing import Any, Mapping

from sqlalchemy import BigInteger, text
from sqlalchemy.types import TypeDecorator

from flakeid import _shared
from flakeid._flakeid import Generator, from_bigint, parse_id, to_bigint

__all__ = [
    "FlakeId",
    "after_fork",
    "configure",
    "generator",
    "next_id",
    "server_default",
    "uuid_server_default",
]

after_fork = _shared.after_fork


def configure(settings: Mapping[str, Any], engine: Any = None) -> None:
    """Sets the process's generator settings, Generator keywords (node or datacenter +
    worker or lease; layout, overflow, ...), checked now. Once per process; each
    process (a forked worker too) builds its own generator on first use. `engine` (an
    Engine or AsyncEngine) is the database of ``"lease": "database"``."""
    global _engine
    _engine = engine
    _shared.configure(settings, _database)


# configure()'s engine: the database of `lease = "database"`.
_engine: Any = None


def _database() -> dict[str, Any]:
    """configure()'s engine's connection settings (none without an engine)."""
    if _engine is None:
        return {}
    return {
        "vendor": _engine.dialect.name,
        "url": _engine.url.render_as_string(hide_password=False),
    }


def generator() -> Generator:
    """configure()'s generator, or the FLAKEID_* variables' on first use."""
    return _shared.generator(None, _database)


def next_id() -> int:
    """The next ID of the process's generator: a column default."""
    return _shared.generator(None, _database).next_id()


def server_default() -> Any:
    """``flakeid_next()``: the PostgreSQL extension's ID, as a server default."""
    return text("flakeid_next()")


def uuid_server_default() -> Any:
    """``flakeid_uuidv7()``: the PostgreSQL extension's UUIDv7, as a server default."""
    return text("flakeid_uuidv7()")


class FlakeId(TypeDecorator[int]):
    """A BIGINT holding an ID of the process's layout (configure()'s or FLAKEID_LAYOUT)
    or of `layout`: binds ints and decimal strings, range-checked (a ParseError naming
    the range otherwise), and reads ints back. A 64-bit layout's IDs from 2^63 on are
    stored as the negative BIGINT of the same bits (docs/design.md, "IDs in a signed
    BIGINT")."""

    impl = BigInteger
    cache_ok = True

    def __init__(self, layout: Any = None) -> None:
        super().__init__()
        self.layout = layout

    def _layout(self) -> Any:
        return self.layout if self.layout is not None else _shared.layout()

    def process_bind_param(self, value: Any, dialect: Any) -> int | None:
        if value is None:
            return None
        layout = self._layout()
        return to_bigint(parse_id(value, layout), layout)  # the engine's rules and ParseError

    def process_result_value(self, value: Any, dialect: Any) -> int | None:
        return None if value is None else from_bigint(value, self._layout())
