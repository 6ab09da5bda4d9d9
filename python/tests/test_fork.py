"""A generator made before fork() refuses to issue IDs in the child (gunicorn
--preload, multiprocessing "fork"), and keeps working in the parent."""

from __future__ import annotations

import multiprocessing
import os
import sys
from collections.abc import Iterator

import pytest

import flakeid
from forked import in_child

pytestmark = pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork()")

# Each test's generator, made in the parent before it forks (not at import: under
# `pytest -n`, every worker imports this module, and a fixed node id is one process's
# on a host). A node id per test: two workers may run two of them at once.
_GEN: list[flakeid.Generator] = []
WORKERS = {
    "test_os_fork_child_gets_fork_error": 4,
    "test_multiprocessing_fork_pool": 5,
    "test_fork_error_crosses_multiprocessing": 6,
}


@pytest.fixture
def gen(request: pytest.FixtureRequest) -> Iterator[flakeid.Generator]:
    _GEN[:] = [flakeid.Generator(4, WORKERS[request.node.name])]
    yield _GEN[0]
    _GEN.clear()


def _use_inherited() -> str:
    try:
        _GEN[0].next_id()
    except flakeid.ForkError as e:
        return f"ForkError: {e}"
    return "issued an ID"


def test_os_fork_child_gets_fork_error(gen: flakeid.Generator) -> None:
    parent_id = gen.next_id()

    def child() -> str:
        msg = _use_inherited()
        try:
            gen.next_ids(10)
            return msg + " | batch issued"
        except flakeid.ForkError:
            return msg + " | batch refused"

    msg = in_child(child)
    assert msg.startswith("ForkError: "), msg
    assert "own node id" in msg and "lease" in msg, msg
    assert msg.endswith("| batch refused"), msg
    assert gen.next_id() > parent_id  # the parent is unaffected


def test_multiprocessing_fork_pool(gen: flakeid.Generator) -> None:
    gen.next_id()
    ctx = multiprocessing.get_context("fork")
    with ctx.Pool(2) as pool:
        results = pool.starmap(_use_inherited, [()] * 4)
    assert all(r.startswith("ForkError: ") for r in results), results
    gen.next_id()


def _raise_in_child() -> int:
    return _GEN[0].next_id()


@pytest.mark.usefixtures("gen")
def test_fork_error_crosses_multiprocessing() -> None:
    ctx = multiprocessing.get_context("fork")
    with ctx.Pool(1) as pool:
        with pytest.raises(flakeid.ForkError):
            pool.apply(_raise_in_child)


if sys.platform == "linux":

    def test_fork_detected_for_borrowing_generator() -> None:
        gen = flakeid.Generator(1, 1, overflow="borrow")
        gen.next_id()
        pid = os.fork()
        if pid == 0:
            try:
                gen.next_id()
                code = 1
            except flakeid.ForkError:
                code = 0
            except BaseException:
                code = 2
            os._exit(code)
        _, status = os.waitpid(pid, 0)
        assert os.waitstatus_to_exitcode(status) == 0
