"""The checker's own cases, on a scenario recorded by `make test-faults`
(fixtures/serve-failed-attempt: Redis over TLS, seed 660631230; its store polls cut
to node 0 between 9.5 s and 17 s, and the first five calls of the Rust generator's
second process, g4-p1, after it acquired node 0).

What happened there, in scenario time: `flakeid serve` (g1) leased again in place
after a pause and was granted node 0 at 10.6 s (token .../1); its clock was behind
the node's floor, so the attempt failed and gave node 0 back at about 11.6 s, with no
log saying when. g4-p1 then took node 0 (11.8 s) and gave out IDs. The serve leased
node 0 again at 16.3 s (token .../3), which its client reported, 4 ms before the
store's poller first saw that token.

    target/faults/venv/bin/python tests/faults/checker/check_test.py    (make test-faults)
"""

import contextlib
import io
import json
import os
import shutil
import sys
import tempfile

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "..", "env"))
import check  # noqa: E402
from cases import Cases  # noqa: E402

FIXTURE = os.path.join(HERE, "fixtures", "serve-failed-attempt")


def scenario(tmp, extra_client_events=()):
    """A copy of the fixture in tmp, its .ids files written from ids.json; returns
    the checker's result."""
    sdir = os.path.join(tmp, "scenario")
    shutil.copytree(FIXTURE, sdir)
    for rel, rows in json.load(open(os.path.join(sdir, "ids.json"))).items():
        with open(os.path.join(sdir, rel), "wb") as f:
            for t0, t1, op, ids in rows:
                f.write(np.array([(t0, t1, len(ids), op)], dtype=check.HEAD).tobytes())
                f.write(np.array(ids, dtype="<u8").tobytes())
    with open(os.path.join(sdir, "slots", "g1", "client.events.jsonl"), "a") as f:
        for e in extra_client_events:
            f.write(json.dumps(e) + "\n")
    with contextlib.redirect_stdout(
        io.StringIO()
    ):  # its summary line: every slot but g4 is "stuck"
        check.main(sdir)
    return json.load(open(os.path.join(sdir, "result.json")))


def main():
    cases = Cases("faults-checker")
    t_start = json.load(open(os.path.join(FIXTURE, "scenario.json")))["t_start"]

    with cases.case("a serve's failed attempt is not taken for its later lease of the same node"):
        with tempfile.TemporaryDirectory() as tmp:
            r = scenario(tmp)
        assert r["ids_checked"] == 321, r["ids_checked"]
        # Taking the token first seen before the client's `acquired` (the failed
        # attempt's) believed it up to its TTL, and called g4-p1's IDs foreign.
        assert r["violations"]["foreign"] == 0, r["examples"]["foreign"]
        assert r["store_self_conflicts"] == [], r["store_self_conflicts"]

    with cases.case(
        "IDs under a node the store shows held by a confirmed other holder are foreign"
    ):
        # The same store records, had the serve's client reported node 0 while the
        # first token held it: that token is then believed up to its TTL, so g4-p1's
        # first four calls (123 IDs) fall inside it; its fifth came after the store
        # showed g4-p1's own token.
        held = {
            "t": t_start + 10_700_000_000,
            "ev": "acquired",
            "tag": "p0",
            "inc": 1,
            "node": 0,
            "lease": "held",
        }
        with tempfile.TemporaryDirectory() as tmp:
            r = scenario(tmp, [held])
        assert r["violations"]["foreign"] == 123, (r["violations"], r["examples"]["foreign"])
        assert [c["a"] for c in r["store_self_conflicts"]] == ["g1-p0"], r["store_self_conflicts"]

    return cases.finish()


if __name__ == "__main__":
    sys.exit(main())
