"""The test suite: a package, so that test modules in the folders that mirror lib/posteval (tests/metrics/, ...)
may share basenames (tests/metrics/test_claims.py, tests/rubric/test_claims.py); shared helpers import as
``tests.conftest``, ``tests.nbcompare``."""
