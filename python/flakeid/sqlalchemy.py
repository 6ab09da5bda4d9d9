"""SQLAlchemy 2: ``FlakeId``, a BIGINT column type, and ``next_id``, its default
from the process's one generator (``configure(...)`` or the FLAKEID_* variables;
without a node source it refuses, never running as node 0)::

    from flakeid.sqlalchemy import FlakeId, configure, next_id

    configure({"lease": "file:///var/lib/flakeid"})   # or FLAKEID_LEASE / FLAKEID_NODE in the environment

    class Order(Base):
        __tablename__ = "orders"
        id: Mapped[int] = mapped_column(FlakeId, primary_key=True, default=next_id)

Sync and async engines alike: the default is a plain Python callable. With the
PostgreSQL extension installed, ``server_default=flakeid_next()`` lets the database
make the ID instead (``server_default()`` below).
"""

from __future__ import annotations

from typing import Any, Mapping

from sqlalchemy import BigInteger, text
from sqlalchemy.types import TypeDecorator

from flakeid import _shared
from flakeid._flakeid import Generator, parse_id

__all__ = ["FlakeId", "after_fork", "configure", "generator", "next_id", "server_default"]

after_fork = _shared.after_fork


def configure(settings: Mapping[str, Any]) -> None:
    """Sets the process's generator settings, Generator keywords (node or datacenter +
    worker or lease; layout, overflow, ...), checked now. Once per process; each
    process (a forked worker too) builds its own generator on first use."""
    _shared.configure(settings)


def generator() -> Generator:
    """configure()'s generator, or the FLAKEID_* variables' on first use."""
    return _shared.generator()


def next_id() -> int:
    """The next ID of the process's generator: a column default."""
    return _shared.generator().next_id()


def server_default() -> Any:
    """``flakeid_next()``: the PostgreSQL extension's ID, as a server default."""
    return text("flakeid_next()")


class FlakeId(TypeDecorator[int]):
    """A BIGINT holding an ID: binds ints and decimal strings, range-checked (a
    ParseError naming the range otherwise), and reads ints back."""

    impl = BigInteger
    cache_ok = True

    def process_bind_param(self, value: Any, dialect: Any) -> int | None:
        return None if value is None else parse_id(value)  # the engine's rule and ParseError

    def process_result_value(self, value: Any, dialect: Any) -> int | None:
        return None if value is None else int(value)
