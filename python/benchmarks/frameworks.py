"""Per-insert cost on PostgreSQL (FLAKEID_TEST_POSTGRES_URL; scripts/bench-frameworks.py
starts one): flakeid's default beside the framework's own identity/sequence key,
one row per statement, through Django and SQLAlchemy. One JSON line per case."""

import json
import os
import time
from typing import Callable
from urllib.parse import urlsplit

N = int(os.environ.get("BENCH_N", "2000"))
URL = os.environ["FLAKEID_TEST_POSTGRES_URL"]


ROUNDS = 10


def alternate(cases: list) -> None:
    """The cases run in alternating rounds (load on a shared machine drifts); each
    reports its median round, in µs per insert."""
    per = N // ROUNDS

    def one_round(fn: Callable[[int], object]) -> float:
        t0 = time.perf_counter()
        for i in range(per):
            fn(i)
        return (time.perf_counter() - t0) / per * 1e6

    for _, fn in cases:  # warm-up
        one_round(fn)
    times: list = [[] for _ in cases]
    for _ in range(ROUNDS):
        for k, (_, fn) in enumerate(cases):
            times[k].append(one_round(fn))
    for (case, _), ts in zip(cases, times):
        us = sorted(ts)[ROUNDS // 2]
        print(
            json.dumps({"lang": "python", "case": case, "us_per_insert": round(us, 1), "n": N}),
            flush=True,
        )


def django_bench() -> None:
    import django
    from django.conf import settings

    db = urlsplit(URL)
    settings.configure(
        INSTALLED_APPS=["flakeid.django"],
        DATABASES={
            "default": {
                "ENGINE": "django.db.backends.postgresql",
                "NAME": db.path[1:],
                "USER": db.username,
                "PASSWORD": db.password,
                "HOST": db.hostname,
                "PORT": db.port,
            }
        },
        FLAKEID={"NODE": 1},
    )
    django.setup()
    from django.db import connection, models

    from flakeid.django import FlakeIdField

    class Flake(models.Model):
        id = FlakeIdField(primary_key=True)
        n = models.IntegerField()

        class Meta:
            app_label = "flakeid"
            db_table = "bench_py_dj_flake"

    class Auto(models.Model):
        id = models.BigAutoField(primary_key=True)
        n = models.IntegerField()

        class Meta:
            app_label = "flakeid"
            db_table = "bench_py_dj_auto"

    with connection.schema_editor() as ed:
        for m in (Flake, Auto):
            ed.execute(f"DROP TABLE IF EXISTS {m._meta.db_table}")
            ed.create_model(m)
    alternate(
        [
            ("django FlakeIdField", lambda n: Flake.objects.create(n=n)),
            ("django BigAutoField (identity)", lambda n: Auto.objects.create(n=n)),
        ]
    )
    with connection.schema_editor() as ed:
        ed.delete_model(Flake)
        ed.delete_model(Auto)


def sqlalchemy_bench() -> None:
    from sqlalchemy import BigInteger, Identity, create_engine
    from sqlalchemy.orm import DeclarativeBase, Mapped, Session, mapped_column

    from flakeid import _shared
    from flakeid.sqlalchemy import FlakeId, next_id

    _shared.reset()
    _shared.configure({"node": 2})

    class Base(DeclarativeBase):
        pass

    class Flake(Base):
        __tablename__ = "bench_py_sa_flake"
        id: Mapped[int] = mapped_column(FlakeId, primary_key=True, default=next_id)
        n: Mapped[int]

    class Ident(Base):
        __tablename__ = "bench_py_sa_ident"
        id: Mapped[int] = mapped_column(BigInteger, Identity(), primary_key=True)
        n: Mapped[int]

    engine = create_engine(URL.replace("postgres://", "postgresql+psycopg://", 1))
    Base.metadata.drop_all(engine)
    Base.metadata.create_all(engine)
    with Session(engine) as s:

        def add(model: type) -> Callable[[int], None]:
            def one(n: int) -> None:
                s.add(model(n=n))
                s.commit()

            return one

        alternate(
            [("sqlalchemy FlakeId + next_id", add(Flake)), ("sqlalchemy Identity()", add(Ident))]
        )
    Base.metadata.drop_all(engine)
    engine.dispose()


if __name__ == "__main__":
    django_bench()
    sqlalchemy_bench()
