"""How every runner in tests/ reports: named cases, each passed or failed, and at the
end the one closing line `N passed, N failed` (exit status 1 when any failed).

    sys.path.insert(0, "tests/env"); from cases import Cases
    cases = Cases("test-serve")
    cases.record("redis scale-out", ok, "what was seen")   # or .passed() / .failed()
    with cases.case("a check that raises"):                 # an exception fails it
        ...
    sys.exit(cases.finish())

A case that failed prints `FAIL name: why` when it is recorded, and again (the last
line of why) with every other failure just before the closing line, so a long run's
failures are at its end.
`unittest_result(cases)` records each test of a unittest suite as a case of its own.
Standard library only.
"""

import traceback
import unittest
from contextlib import contextmanager


class Cases:
    def __init__(self, suite):
        self.suite = suite
        self.passes, self.failures = [], []

    def record(self, name, ok, detail=""):
        """Case `name` passed (ok) or failed; `detail` says what was seen or why."""
        if ok:
            self.passes.append(name)
            print(f"ok   {name}" + (f": {detail}" if detail else ""), flush=True)
        else:
            self.failures.append((name, detail))
            print(f"FAIL {name}: {detail}", flush=True)

    def passed(self, name, detail=""):
        self.record(name, True, detail)

    def failed(self, name, why):
        self.record(name, False, why)

    @contextmanager
    def case(self, name):
        """A case that passes unless its block raises (an AssertionError's message, or
        any other exception's traceback, is the reason)."""
        try:
            yield
        except AssertionError as err:
            self.failed(name, str(err) or traceback.format_exc())
        except Exception:  # a case that crashed is a failed case, and the run goes on
            self.failed(name, traceback.format_exc())
        else:
            self.passed(name)

    def finish(self):
        """Prints the failures again and the closing line; the exit status."""
        if self.failures:
            print(f"\n{self.suite}: {len(self.failures)} failed:")
            for name, why in self.failures:
                last = [line for line in why.splitlines() if line.strip()][-1:] or ["(no message)"]
                print(f"FAIL {name}: {last[0].strip()}")
        print(f"{len(self.passes)} passed, {len(self.failures)} failed", flush=True)
        return 1 if self.failures else 0


def unittest_result(cases):
    """A unittest result class recording each test in `cases` (`Class.test_name`).
    A skipped test is said (SKIP) and counted in neither number; a failed subTest is
    a case of its own; an error in a class's setUpClass or tearDownClass fails it as
    one case."""

    def name(test):
        return (
            f"{type(test).__name__}.{test._testMethodName}"
            if hasattr(test, "_testMethodName")
            else str(test)
        )

    class Result(unittest.TestResult):
        def startTest(self, test):
            super().startTest(test)
            print(f"---- {name(test)}", flush=True)

        def addSuccess(self, test):
            super().addSuccess(test)
            cases.passed(name(test))

        def addFailure(self, test, err):
            super().addFailure(test, err)
            cases.failed(name(test), self._exc_info_to_string(err, test))

        def addError(self, test, err):
            super().addError(test, err)
            cases.failed(name(test), self._exc_info_to_string(err, test))

        def addSubTest(self, test, subtest, err):
            super().addSubTest(test, subtest, err)
            if err is not None:  # the test then counts no success of its own
                cases.failed(
                    f"{name(test)} {subtest._subDescription()}", self._exc_info_to_string(err, test)
                )

        def addSkip(self, test, reason):
            super().addSkip(test, reason)
            print(f"SKIP {name(test)}: {reason}", flush=True)

        def addUnexpectedSuccess(self, test):
            super().addUnexpectedSuccess(test)
            cases.failed(name(test), "expected to fail, but passed")

        def addExpectedFailure(self, test, err):
            super().addExpectedFailure(test, err)
            cases.passed(name(test), "failed, as expected")

    return Result
