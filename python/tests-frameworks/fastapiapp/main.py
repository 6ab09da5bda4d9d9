"""The FastAPI app test_workers.py serves from `uvicorn --workers 4`: IDs from
flakeid.sqlalchemy's shared generator (configure() at import, as the docs show),
written by flakeid.pydantic.FlakeId as JSON strings. FLAKEID_TEST_LEASE (a file://
URL) or FLAKEID_TEST_NODE (a number, or "none": no node id) picks the settings. Each
worker takes its node id at boot, in the lifespan (docs/frameworks.md): a refused one
fails the worker's startup, on which uvicorn stops.

(First use from several threads at once is covered by test_shared.py's
test_first_use_from_many_threads_builds_one_generator.)"""

import os
from contextlib import asynccontextmanager
from typing import AsyncIterator

from fastapi import FastAPI
from pydantic import BaseModel

from flakeid.pydantic import FlakeId
from flakeid.sqlalchemy import configure, generator, next_id

if os.environ.get("FLAKEID_TEST_LEASE"):
    configure({"lease": os.environ["FLAKEID_TEST_LEASE"]})
elif os.environ.get("FLAKEID_TEST_NODE") == "none":
    configure({"layout": "snowflake"})
else:
    configure({"node": int(os.environ.get("FLAKEID_TEST_NODE", "5"))})


class Ids(BaseModel):
    pid: int
    ids: list[FlakeId]


@asynccontextmanager
async def lifespan(_app: FastAPI) -> AsyncIterator[None]:
    generator()  # this worker's node id, taken at boot
    yield


app = FastAPI(lifespan=lifespan)


@app.get("/ids")
def ids(n: int = 1) -> Ids:
    return Ids(pid=os.getpid(), ids=[next_id() for _ in range(n)])
