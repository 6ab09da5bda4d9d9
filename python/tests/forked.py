"""`in_child`: a callable run in a forked child, its text read back through a pipe.
python/tests imports it beside conftest; python/tests-frameworks puts this folder on
sys.path (test_workers.py)."""

from __future__ import annotations

import os
from typing import Callable


def in_child(report: Callable[[], str]) -> str:
    """`report()`'s text as a forked child of this process returns it ("" if it
    raised). The child ends with os._exit, so no pytest machinery runs in it."""
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:
        try:
            os.write(w, report().encode())
        finally:
            os._exit(0)
    os.close(w)
    with os.fdopen(r, "rb") as f:
        text = f.read().decode()
    os.waitpid(pid, 0)
    return text
