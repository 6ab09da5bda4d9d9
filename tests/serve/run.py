#!/usr/bin/env python3
"""make test-serve: the `flakeid serve` tests (tests/serve/serve_test.py) against real
servers: `flakeid serve` processes (debug build) on free 127.0.0.1 ports, and for the
lease tests the Redis and PostgreSQL of the one test environment
(tests/env/testenv.py), started here and stopped on exit. Each test is a case
(tests/env/cases.py); the run ends with `N passed, N failed`.
(The abuse suite, tests/serve/abuse_test.py, is make test-serve-abuse's.)
What it needs installed: make test-serve's prerequisites (setup-serve, setup-lease).

usage: tests/serve/run.py [TEST...]    (unittest names: `Routes`, `Tls.test_bearer_tokens`)
"""

import os
import shlex
import subprocess
import sys
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, "tests", "env"))
import testenv  # noqa: E402
from cases import Cases, unittest_result  # noqa: E402


def main(argv):
    # make's package selection (Makefile, RUST_TEST_PKGS): one build of the dependencies.
    cargo = os.environ.get("CARGO", "cargo")
    subprocess.run([cargo, "build", "-q", *shlex.split(os.environ.get("FLAKEID_CARGO_PKGS") or "-p flakeid-cli")],
                   check=True, cwd=ROOT)
    target = os.environ.get("CARGO_TARGET_DIR") or os.path.join(ROOT, "target")
    os.environ.setdefault("FLAKEID_SERVE_VENV", os.path.join(ROOT, "target", "serve-venv"))  # make setup-serve
    stack = testenv.Stack(redis=True, postgres=True)
    try:
        stack.start()
    except (testenv.EnvError, subprocess.CalledProcessError) as err:
        print(f"testenv: {err}", file=sys.stderr)
        return 1
    # The tests read the servers' FLAKEID_TEST_* variables when their module loads.
    os.environ.update(stack.env())
    sys.path.insert(0, HERE)
    import serve_test

    serve_test.BIN = os.path.join(target, "debug", "flakeid")
    loader = unittest.TestLoader()
    tests = loader.loadTestsFromNames(argv, serve_test) if argv else loader.loadTestsFromModule(serve_test)
    cases = Cases("test-serve")
    try:
        tests.run(unittest_result(cases)())
    finally:
        serve_test.cleanup()
        stack.stop()
    return cases.finish()


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
