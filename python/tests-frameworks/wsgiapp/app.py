"""The plain WSGI app test_workers.py serves from gunicorn: each request inserts `n`
rows into this worker's SQLite table through flakeid.sqlalchemy's column default and
answers their IDs as JSON strings (after `sleep` seconds, if given). FLAKEID_TEST_NODE
(a number, or "none": no node id) picks configure()'s settings, at import, as the docs
show."""

import json
import os
import time
from typing import Any, Callable, Iterable
from urllib.parse import parse_qs

from sqlalchemy import Column, Integer, MetaData, Table, create_engine, insert

from flakeid.sqlalchemy import FlakeId, configure, next_id

if os.environ.get("FLAKEID_TEST_NODE") == "none":
    configure({"layout": "snowflake"})
else:
    configure({"node": int(os.environ.get("FLAKEID_TEST_NODE", "5")), "layout": "snowflake"})

metadata = MetaData()
orders = Table(
    "orders",
    metadata,
    Column("id", FlakeId, primary_key=True, default=next_id),
    Column("total", Integer),
)
# One in-memory database per worker, made on its first request (not in the master
# under --preload).
_engines: dict[int, Any] = {}


def _engine() -> Any:
    engine = _engines.get(os.getpid())
    if engine is None:
        engine = _engines[os.getpid()] = create_engine("sqlite://")
        metadata.create_all(engine)
    return engine


def application(environ: dict[str, Any], start_response: Callable[..., Any]) -> Iterable[bytes]:
    query = parse_qs(environ.get("QUERY_STRING", ""))
    time.sleep(float(query.get("sleep", ["0"])[0]))  # a request in flight through a reload
    n = int(query.get("n", ["1"])[0])
    with _engine().begin() as conn:
        ids = [
            conn.execute(insert(orders).values(total=i)).inserted_primary_key[0] for i in range(n)
        ]
    body = json.dumps({"pid": os.getpid(), "ids": [str(i) for i in ids]}).encode()
    start_response("200 OK", [("Content-Type", "application/json")])
    return [body]


# The line test_workers.py waits for, one per process that loaded the app.
print(f"test app loaded in pid {os.getpid()}", flush=True)
