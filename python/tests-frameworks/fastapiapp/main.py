"""The FastAPI app test_workers.py serves from `uvicorn --workers 4`: IDs from
flakeid.sqlalchemy's shared generator (configure() at import, as the docs show; the
node id is taken on first use, in each worker), written by flakeid.pydantic.FlakeId
as JSON strings. FLAKEID_TEST_LEASE (a file:// URL) or FLAKEID_TEST_NODE (a number, or
"none": no node id) picks the settings. With the lease or no node id each worker takes
its node id at boot (the lifespan); with
a fixed node id a refused worker must not fail its boot (uvicorn would restart it
forever), so the generator is built on first use there.

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
    if os.environ.get("FLAKEID_TEST_LEASE") or os.environ.get("FLAKEID_TEST_NODE") == "none":
        generator()  # this worker's node id, taken at boot
    yield


app = FastAPI(lifespan=lifespan)


@app.get("/ids")
def ids(n: int = 1) -> Ids:
    return Ids(pid=os.getpid(), ids=[next_id() for _ in range(n)])
