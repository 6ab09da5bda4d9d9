#!/usr/bin/env python3
"""The `flakeid serve` suites, as processes on free 127.0.0.1 ports. Each test is a
case (tests/env/cases.py); a run ends with `N passed, N failed` and exits 1 when any
failed.

    run.py [TEST...]                 make test-serve
    run.py abuse BINARY [TEST...]    make test-serve-abuse (in the serve venv: h2)

make test-serve: tests/serve/serve_test.py against a debug build (built here), with
the Redis and PostgreSQL of the one test environment (tests/env/testenv.py) for the
lease tests, started here and stopped on exit. Needs make test-serve's prerequisites
(setup-serve, setup-lease).
abuse: tests/serve/abuse_test.py, the memory budget and the probes under attack,
against BINARY (the static CLI of the release archives: make test-serve-abuse
builds it with make dist-cli); no store.
TEST: unittest names, e.g. `Routes` or `Tls.test_bearer_tokens`.
"""

import os
import shlex
import subprocess
import sys
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, "tests", "env"))
sys.path.insert(0, HERE)
import testenv  # noqa: E402
from cases import Cases, unittest_result  # noqa: E402


def run_tests(suite, module, names):
    """The tests of `module` (those named, or all), each a case of `suite`."""
    import serve_test

    loader = unittest.TestLoader()
    tests = (
        loader.loadTestsFromNames(names, module) if names else loader.loadTestsFromModule(module)
    )
    cases = Cases(suite)
    try:
        tests.run(unittest_result(cases)())
    finally:
        serve_test.cleanup()
    return cases.finish()


def serve(names):
    # make's package selection (Makefile, RUST_TEST_PKGS): one build of the dependencies.
    cargo = os.environ.get("CARGO", "cargo")
    subprocess.run(
        [
            cargo,
            "build",
            "-q",
            *shlex.split(os.environ.get("FLAKEID_CARGO_PKGS") or "-p flakeid-cli"),
        ],
        check=True,
        cwd=ROOT,
    )
    target = os.environ.get("CARGO_TARGET_DIR") or os.path.join(ROOT, "target")
    os.environ.setdefault(
        "FLAKEID_SERVE_VENV", os.path.join(ROOT, "target", "serve-venv")
    )  # make setup-serve
    stack = testenv.Stack(redis=True, postgres=True)
    try:
        stack.start()
    except (testenv.EnvError, subprocess.CalledProcessError) as err:
        print(f"testenv: {err}", file=sys.stderr)
        return 1
    try:
        # The tests read the servers' FLAKEID_TEST_* variables when their module loads.
        os.environ.update(stack.env())
        import serve_test

        serve_test.BIN = os.path.join(target, "debug", "flakeid")
        return run_tests("test-serve", serve_test, names)
    finally:
        stack.stop()


def abuse(argv):
    if not argv:
        print(__doc__, file=sys.stderr)
        return 2
    import abuse_test
    import serve_test

    serve_test.BIN = os.path.abspath(argv[0])
    return run_tests("test-serve-abuse", abuse_test, argv[1:])


if __name__ == "__main__":
    args = sys.argv[1:]
    sys.exit(abuse(args[1:]) if args[:1] == ["abuse"] else serve(args))
