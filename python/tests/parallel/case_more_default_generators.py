"""The same ordinary tests in a second module, for test_parallel.py's `pytest -n 4`
(case_*.py: the suite itself leaves them out)."""

from case_default_generators import test_a_generator_per_test, test_after_a_raised_error

__all__ = ["test_a_generator_per_test", "test_after_a_raised_error"]
