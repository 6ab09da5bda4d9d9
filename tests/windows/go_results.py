#!/usr/bin/env python3
"""The Go suite's results under Wine (scripts/test-windows.sh): reads `go test -json`
events (go tool test2json of a `go test -v` log) on stdin; prints `passed failed
skipped` of the tests (subtests too), each failed or skipped one named on stderr with its
lines.

    go_results.py TEMPDIR_TESTS EXIT_STATUS

Wine 8 lacks FILE_DISPOSITION_POSIX_SEMANTICS, which Go's os.RemoveAll uses on
Windows: every t.TempDir cleanup fails ("unlinkat ...: Invalid function"). A test of
TEMPDIR_TESTS (names joined by |) passes when that is its only error. A skip counts as
a failure too (testenv sets FLAKEID_LEASE_REQUIRE=1 when every server started: no test
skips itself). EXIT_STATUS, the run's: nonzero with no failed test (a build, vet, gofmt,
the fixture) is one failure more.
"""

import json
import re
import sys

ERROR = re.compile(r"^\s+\w+\.go:[0-9]+: ")
CLEANUP = re.compile(r"testing\.go:[0-9]+: TempDir RemoveAll cleanup: .*: Invalid function\.$")


def main(tempdir, rc):
    ended, lines = {}, {}
    for raw in sys.stdin:
        try:
            e = json.loads(raw)
        except ValueError:
            continue
        t = e.get("Test")
        if not t:
            continue
        if e["Action"] == "output":
            lines.setdefault(t, []).append(e["Output"].rstrip("\n"))
        elif e["Action"] in ("pass", "fail", "skip"):
            ended[t] = e["Action"]
    passed = failed = skipped = 0
    for t, how in sorted(ended.items()):
        top = t.split("/")[0]
        mine = [line for u, ls in lines.items() if u == t or u.startswith(t + "/") for line in ls]
        if (
            how == "fail"
            and top in tempdir
            and all(CLEANUP.search(x) for x in mine if ERROR.match(x))
        ):
            print(f"--- PASS: {t} (but Wine 8's t.TempDir cleanup)", file=sys.stderr)
            how = "pass"
        if how == "fail":
            print(f"--- FAIL: {t}\n" + "\n".join(mine), file=sys.stderr)
        elif how == "skip":
            print(f"--- SKIP: {t} (skipped itself: a store that did not start?)", file=sys.stderr)
        passed += how == "pass"
        failed += how == "fail"
        skipped += how == "skip"
    if not ended or (rc != 0 and "fail" not in ended.values()):
        print(f"--- the run failed (exit {rc}) with no failed test: see its log", file=sys.stderr)
        failed += 1
    print(passed, failed + skipped, skipped)


if __name__ == "__main__":
    main(set(sys.argv[1].split("|")), int(sys.argv[2]))
