"""gunicorn: each worker builds the process's 64-bit generator as it boots, so that a
node id the engine refuses (a fixed node id under ``-w 4``: one process per host)
stops the server at start instead of failing the requests of every worker but one::

    gunicorn -c python:flakeid.gunicorn -w 4 myproject.wsgi
    # or, in a gunicorn.conf.py of your own:
    from flakeid.gunicorn import post_worker_init

The hook runs in each worker after the app is loaded (with or without ``--preload``)
and before it serves; a worker that raises there exits with gunicorn's "Worker failed
to boot." code, on which gunicorn stops, with the engine's refusal in its log. The
generator is the adapter's (Django: ``settings.FLAKEID``; SQLAlchemy: ``configure()``;
else the FLAKEID_* variables). gunicorn calls it in its workers only: other processes
(a ``manage.py`` command, a ``multiprocessing`` child) still build on first use. A
``post_worker_init`` of your own calls this one.
"""

from __future__ import annotations

import time
from typing import Any

from flakeid import _shared
from flakeid._flakeid import ConfigError


def post_worker_init(worker: Any) -> None:
    """gunicorn's hook: this worker's generator, built now (the engine's ConfigError
    when its node id is refused). A worker that replaces another (a HUP reload boots
    the new workers before the old ones finish their requests) waits for the node id
    up to gunicorn's graceful timeout; the first workers never wait."""
    replacing = worker.age > worker.cfg.workers
    deadline = time.monotonic() + worker.cfg.graceful_timeout
    waiting = False
    while True:
        try:
            _shared.boot()
            return
        except ConfigError as err:
            if not replacing or err.field != "node" or time.monotonic() >= deadline:
                raise
            if not waiting:
                worker.log.info("flakeid: waiting for the worker this one replaces: %s", err)
                waiting = True
            time.sleep(0.1)
