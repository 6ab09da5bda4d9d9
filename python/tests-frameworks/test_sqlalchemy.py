"""flakeid.sqlalchemy: the FlakeId type and next_id default, sync and async, on
SQLite (the embedded default) and the fixture's PostgreSQL (psycopg 3)."""

from __future__ import annotations

import asyncio
import json
import os
import uuid

import pytest
from sqlalchemy import ForeignKey, String, Uuid, create_engine, select
from sqlalchemy.exc import StatementError
from sqlalchemy.ext.asyncio import create_async_engine
from sqlalchemy.orm import DeclarativeBase, Mapped, Session, mapped_column

import flakeid
import flakeid.sqlalchemy
from flakeid import _shared
from flakeid.sqlalchemy import FlakeId, configure, next_id

PG = os.environ["FLAKEID_TEST_POSTGRES_URL"].replace("postgres://", "postgresql+psycopg://", 1)
SYNC_URLS = {"sqlite": "sqlite://", "postgres": PG}
ASYNC_URLS = {"sqlite": "sqlite+aiosqlite://", "postgres": PG}


class Base(DeclarativeBase):
    pass


class Customer(Base):
    __tablename__ = "sa_customers"
    id: Mapped[int] = mapped_column(FlakeId, primary_key=True, default=next_id)
    name: Mapped[str] = mapped_column(String(50))


class Order(Base):
    __tablename__ = "sa_orders"
    id: Mapped[int] = mapped_column(FlakeId, primary_key=True, default=next_id)
    customer_id: Mapped[int] = mapped_column(FlakeId, ForeignKey("sa_customers.id"))


class Document(Base):
    __tablename__ = "sa_documents"
    id: Mapped[uuid.UUID] = mapped_column(Uuid, primary_key=True, default=flakeid.uuid7)
    title: Mapped[str] = mapped_column(String(50))


@pytest.mark.parametrize("db", sorted(SYNC_URLS))
def test_uuid7_keys_need_no_node(db: str) -> None:
    """SQLAlchemy's Uuid with default=flakeid.uuid7: no configure(), keys in
    insertion order, PostgreSQL's uuid column (SQLite's CHAR(32)) read back equal."""
    engine = create_engine(SYNC_URLS[db])
    Base.metadata.drop_all(engine)
    Base.metadata.create_all(engine)
    try:
        with Session(engine) as s:
            made = []
            for i in range(100):
                d = Document(title=f"d{i}")
                s.add(d)
                s.flush()
                made.append(d.id)
            s.commit()
            back = s.scalars(select(Document.id).order_by(Document.id)).all()
        assert back == made and all(i.version == 7 for i in back)
    finally:
        Base.metadata.drop_all(engine)
        engine.dispose()


class Wide(Base):
    __tablename__ = "sa_wide"
    id: Mapped[int] = mapped_column(FlakeId("flake"), primary_key=True)


@pytest.mark.parametrize("db", sorted(SYNC_URLS))
def test_a_64_bit_layouts_ids_fill_the_bigint(db: str) -> None:
    """FlakeId("flake"): IDs from 2^63 on are stored as the negative BIGINT of the
    same bits (docs/design.md) and read back as they were."""
    from sqlalchemy import text

    engine = create_engine(SYNC_URLS[db])
    Base.metadata.drop_all(engine)
    Base.metadata.create_all(engine)
    try:
        with Session(engine) as s:
            s.add_all([Wide(id=(1 << 64) - 1), Wide(id=1 << 63), Wide(id=str(7))])
            s.commit()
            assert sorted(s.scalars(select(Wide.id)).all()) == [7, 1 << 63, (1 << 64) - 1]
            assert sorted(s.execute(text("SELECT id FROM sa_wide")).scalars().all()) == [
                -(1 << 63),
                -1,
                7,
            ]
        with Session(engine) as s:
            s.add(Wide(id=1 << 64))
            with pytest.raises(
                StatementError, match=r"an ID of this layout is in 0\.\.=18446744073709551615"
            ):
                s.flush()
    finally:
        Base.metadata.drop_all(engine)
        engine.dispose()


@pytest.mark.parametrize("db", sorted(SYNC_URLS))
def test_sync(db: str) -> None:
    configure({"node": 11})
    engine = create_engine(SYNC_URLS[db])
    Base.metadata.drop_all(engine)
    Base.metadata.create_all(engine)
    try:
        with Session(engine) as s:
            c = Customer(name="ada")
            s.add(c)
            s.flush()
            s.add_all([Order(customer_id=c.id) for _ in range(3)])
            s.add(Customer(id=str((1 << 63) - 1), name="given"))  # a decimal string binds
            s.commit()
            ids = s.scalars(select(Order.id).order_by(Order.id)).all()
            assert len(ids) == 3 and all(flakeid.decompose(i).node == 11 for i in ids)
            assert s.get(Customer, (1 << 63) - 1).name == "given"  # type: ignore[union-attr]
            assert ids[0] > c.id
        with Session(engine) as s:
            s.add(Customer(id=-1, name="bad"))
            with pytest.raises(
                StatementError,
                match=r"an ID of this layout is in 0\.\.=9223372036854775807, got -1",
            ):
                s.flush()
    finally:
        Base.metadata.drop_all(engine)
        engine.dispose()


@pytest.mark.parametrize("db", sorted(ASYNC_URLS))
def test_async(db: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FLAKEID_NODE", "13")  # no configure(): the environment

    async def run() -> list[int]:
        engine = create_async_engine(ASYNC_URLS[db])
        try:
            async with engine.begin() as conn:
                await conn.run_sync(Base.metadata.drop_all)
                await conn.run_sync(Base.metadata.create_all)
            from sqlalchemy.ext.asyncio import AsyncSession

            async with AsyncSession(engine) as s:
                s.add_all([Customer(name=f"c{i}") for i in range(4)])
                await s.commit()
                ids = (await s.scalars(select(Customer.id).order_by(Customer.id))).all()
            async with engine.begin() as conn:
                await conn.run_sync(Base.metadata.drop_all)
            return list(ids)
        finally:
            await engine.dispose()

    ids = asyncio.run(run())
    assert len(set(ids)) == 4 and all(flakeid.decompose(i).node == 13 for i in ids)


def test_without_a_node_takes_a_free_one_and_require_node_refuses(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    engine = create_engine("sqlite://")
    Base.metadata.create_all(engine)
    with Session(engine) as s:
        c = Customer(name="x")
        s.add(c)
        s.flush()
        assert flakeid.decompose(c.id).node == _shared.generator().node
    _shared.reset()
    monkeypatch.setenv("FLAKEID_REQUIRE_NODE", "true")
    with Session(engine) as s:
        s.add(Customer(name="y"))
        with pytest.raises(StatementError, match="FLAKEID_NODE") as caught:
            s.flush()
    assert isinstance(caught.value.orig, flakeid.ConfigError)
    assert caught.value.orig.field == "node"  # type: ignore[attr-defined]


def test_server_default_is_the_extensions_function() -> None:
    """server_default() writes `DEFAULT flakeid_next()` into PostgreSQL's DDL, and
    uuid_server_default() `DEFAULT flakeid_uuidv7()`: the extension's function makes
    the ID (tests/postgres/run.py runs such columns on a server with the extension;
    this checks what SQLAlchemy emits for them)."""
    from sqlalchemy import BigInteger, Column, MetaData, Table
    from sqlalchemy.dialects import postgresql
    from sqlalchemy.schema import CreateTable

    from flakeid.sqlalchemy import server_default, uuid_server_default

    for column_type, default, want in [
        (BigInteger, server_default, "id BIGINT DEFAULT flakeid_next() NOT NULL"),
        (Uuid, uuid_server_default, "id UUID DEFAULT flakeid_uuidv7() NOT NULL"),
    ]:
        column = Column("id", column_type, primary_key=True, server_default=default())
        ddl = str(CreateTable(Table("t", MetaData(), column)).compile(dialect=postgresql.dialect()))
        assert want in ddl, ddl


# A second app instance: the same settings and engine, its node id printed while it
# holds it, until its stdin closes.
_INSTANCE = """
import json, sys
from sqlalchemy import create_engine
from flakeid.sqlalchemy import configure, generator
configure({"lease": "database"}, engine=create_engine(sys.argv[1]))
g = generator()
print(json.dumps([g.node, g.node_origin, g.next_id()]), flush=True)
sys.stdin.readline()
"""


def test_lease_database_is_the_engines_postgresql() -> None:
    """`lease = "database"`: the node id leased from the engine's PostgreSQL, no URL
    written twice; a second instance holds another node id; IDs are inserted."""
    import subprocess
    import sys

    engine = create_engine(PG)
    configure({"lease": "database"}, engine=engine)
    Base.metadata.drop_all(engine)
    Base.metadata.create_all(engine)
    other = subprocess.Popen(
        [sys.executable, "-c", _INSTANCE, PG],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        g = flakeid.sqlalchemy.generator()
        assert g.node_origin == "leased" and g.stats()["node_origin"] == "leased"
        with Session(engine) as s:
            s.add_all([Customer(name=f"c{i}") for i in range(5)])
            s.commit()
            ids = s.scalars(select(Customer.id)).all()
        assert len(set(ids)) == 5 and {flakeid.decompose(i).node for i in ids} == {g.node}
        assert other.stdout is not None
        node, origin, first = json.loads(other.stdout.readline())
        assert origin == "leased" and node != g.node and flakeid.decompose(first).node == node
    finally:
        other.communicate("\n", timeout=60)
        Base.metadata.drop_all(engine)
        engine.dispose()
    assert other.returncode == 0


def test_lease_database_needs_postgresql_and_an_engine() -> None:
    for engine in [create_engine("sqlite://"), create_async_engine("sqlite+aiosqlite://")]:
        with pytest.raises(flakeid.ConfigError, match="only PostgreSQL") as caught:
            configure({"lease": "database"}, engine=engine)
        assert caught.value.field == "lease" and '"sqlite"' in str(caught.value)  # type: ignore[attr-defined]
    with pytest.raises(flakeid.ConfigError, match="no database connection"):
        configure({"lease": "database"})
    # The engine's password is in no message.
    secret = create_engine("postgresql+psycopg://app:hunter2@/shop?host=/run/postgresql")
    with pytest.raises(flakeid.ConfigError, match="TCP") as caught:
        configure({"lease": "database"}, engine=secret)
    assert "hunter2" not in str(caught.value)
