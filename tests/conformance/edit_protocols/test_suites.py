"""The edit-protocol conformance suites cover their references: every reference test has a case,
no case names a test the reference does not have, and every deliberate difference is documented
(its ``[label]`` in docs/format.md or docs/integrations.md, with the reason)."""

from __future__ import annotations

import importlib
import re
from pathlib import Path

import pytest

from .cases import REGISTER, SUITES, counts

DOCS = Path(__file__).resolve().parents[3] / "docs"


@pytest.mark.parametrize("suite", sorted(SUITES))
def test_every_reference_test_has_a_case(suite: str) -> None:
    module = importlib.import_module(SUITES[suite])
    assert sorted(REGISTER[suite]) == sorted(module.REFERENCE_TESTS)
    assert len(set(module.REFERENCE_TESTS)) == len(module.REFERENCE_TESTS)


def test_every_difference_is_documented() -> None:
    counts()  # (imports every suite)
    documented = set()
    for page in ("format.md", "integrations.md"):
        documented |= set(re.findall(r"\*\*\[([a-z0-9-]+)\]\*\*", (DOCS / page).read_text()))
    used = {key for cases in REGISTER.values() for key in cases.values() if key is not None}
    assert used <= documented, sorted(used - documented)


def test_the_counts_add_up() -> None:
    for suite, (total, same, different) in counts().items():
        assert total == same + different > 0, suite
