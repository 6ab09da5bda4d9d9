"""What the fault suite's Python drivers (py_driver.py, serve_client.py) share: the
record format the Rust driver documents (tests/faults/driver/src/main.rs), an events
file of JSON lines and `.ids` files of runs; the pace of R IDs/s; a sleep that works
under libfaketime; and the stop that SIGTERM and SIGINT ask for.

Under libfaketime with FAKETIME_DONT_FAKE_MONOTONIC=1, `time.sleep` fails with EINVAL:
`sleep` waits with `select` instead.
"""

import json
import os
import select
import signal
import struct
import time

# One run of IDs in a `.ids` file: t0, t1 (CLOCK_MONOTONIC ns), count, op.
HEAD = struct.Struct("<QQII")

_stop = False


def _on_term(_sig, _frame):
    global _stop
    _stop = True


def stop_on_signals():
    """From now on SIGTERM and SIGINT set `stopped()` instead of ending the process."""
    signal.signal(signal.SIGTERM, _on_term)
    signal.signal(signal.SIGINT, _on_term)


def stopped():
    return _stop


def sleep(seconds):
    select.select([], [], [], seconds)


class Events:
    """The events file, one JSON line per event, stamped with CLOCK_MONOTONIC."""

    def __init__(self, path):
        self.fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)

    def log(self, ev, **fields):
        line = json.dumps({"t": time.monotonic_ns(), "ev": ev, **fields}) + "\n"
        os.write(self.fd, line.encode())  # one write per line: whole even if killed


class Ids:
    """One incarnation's `.ids` file: a HEAD and the IDs (an array('Q')) per run."""

    def __init__(self, path, mode="wb"):
        self.f = open(path, mode, buffering=1 << 16)
        self.flushed = time.monotonic_ns()

    def record(self, t0, t1, op, ids):
        self.f.write(HEAD.pack(t0, t1, len(ids), op))
        self.f.write(ids.tobytes())  # array('Q'): native = little-endian here
        if t1 - self.flushed > 50_000_000:
            self.f.flush()
            self.flushed = t1

    def close(self):
        self.f.close()


class Pace:
    """`rate` IDs/s, in bursts of at most 50 ms' worth."""

    def __init__(self, rate):
        self.rate = rate
        self.burst = rate * 0.05
        self.budget = 0.0
        self.last = time.monotonic_ns()

    def wait(self):
        """True after sleeping while the budget is spent (the caller asks again)."""
        now = time.monotonic_ns()
        self.budget = min(self.budget + (now - self.last) * self.rate / 1e9, self.burst)
        self.last = now
        if self.budget < 0:
            sleep(min(max(-self.budget / self.rate, 0.0002), 0.02))
            return True
        return False

    def spend(self, n):
        self.budget -= n
