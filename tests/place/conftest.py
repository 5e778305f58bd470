"""The fixtures of tests/plan/conftest.py, for the tests of this folder that use them."""

from ..plan.conftest import tree  # noqa: F401 - fixtures
