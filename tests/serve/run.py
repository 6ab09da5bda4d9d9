#!/usr/bin/env python3
"""The `flakeid serve` suites, as processes on free 127.0.0.1 ports. Each test is a
case (tests/env/cases.py); a run ends with `N passed, N failed` and exits 1 when any
failed.

    run.py [TEST...]                 make test-serve
    run.py abuse BINARY [TEST...]    make test-serve-abuse (in the serve venv: h2)

make test-serve: tests/serve/*_test.py but abuse_test.py (SERVE) against a debug build
(built here), with
the Redis and PostgreSQL of the one test environment (tests/env/testenv.py) for the
lease tests, started here and stopped on exit. Needs make test-serve's prerequisites
(setup-serve, setup-lease).
abuse: tests/serve/abuse_test.py, the memory budget and the probes under attack,
against BINARY (the static CLI of the release archives: make test-serve-abuse
builds it with make dist-cli); no store.
TEST: unittest names, with or without the module, e.g. `Ids` or
`Tls.test_bearer_tokens` or `tls_test.Tls`.
"""

import importlib
import os
import subprocess
import sys
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, "tests", "env"))
sys.path.insert(0, HERE)
import testenv  # noqa: E402
from cases import Cases, unittest_result  # noqa: E402


# make test-serve's modules, each a family of routes or a concern of the whole server.
SERVE = [
    "ids_test",
    "wide_test",
    "decode_test",
    "metrics_test",
    "grpc_test",
    "order_test",
    "tls_test",
    "lifecycle_test",
    "limits_test",
]


def run_tests(suite, modules, names):
    """The tests of `modules` (those named, or all), each a case of `suite`."""
    import fixture

    loader = unittest.TestLoader()
    modules = [importlib.import_module(m) for m in modules]
    tests = unittest.TestSuite()
    for name in names:
        # A name of one of the modules' classes, or one with its module.
        module = next((m for m in modules if hasattr(m, name.split(".")[0])), None)
        tests.addTest(loader.loadTestsFromName(name, module))
    for module in modules if not names else []:
        tests.addTest(loader.loadTestsFromModule(module))
    cases = Cases(suite)
    try:
        tests.run(unittest_result(cases)())
    finally:
        fixture.cleanup()
    return cases.finish()


def serve(names):
    cli = testenv.build_cli()
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
        os.environ["FLAKEID_SERVE_BIN"] = cli
        return run_tests("test-serve", SERVE, names)
    finally:
        stack.stop()


def abuse(argv):
    if not argv:
        print(__doc__, file=sys.stderr)
        return 2
    os.environ["FLAKEID_SERVE_BIN"] = os.path.abspath(argv[0])
    return run_tests("test-serve-abuse", ["abuse_test"], argv[1:])


if __name__ == "__main__":
    args = sys.argv[1:]
    sys.exit(abuse(args[1:]) if args[:1] == ["abuse"] else serve(args))
