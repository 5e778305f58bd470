"""The peers' conformance suite (tests/peers/suite.py, cases/): every case run with patchtx, and
the whole suite with ``git apply`` and GNU ``patch`` beside it where they are installed.

patchtx must never report success with a wrong tree, succeed where the source test expects a
refusal, or change anything when it refuses; a case it refuses on purpose says so in its file
(``patchtx differs:``), and must then be refused cleanly. It must pass at least as many cases as
``git apply`` does.
"""

from __future__ import annotations

import shutil
from collections import Counter
from pathlib import Path

import pytest

from .suite import OUTCOMES, Case, all_cases, available, outcome

CASES, SKIPPED = all_cases()

KNOWN_FAILURES: dict[str, str] = {}
"""Cases patchtx does not pass yet, by ``file: title`` (strict: remove one when it passes)."""


def _key(case: Case) -> str:
    return f"{case.source}: {case.title}"


def _marks(case: Case) -> list[pytest.MarkDecorator]:
    reason = KNOWN_FAILURES.get(_key(case))
    return [pytest.mark.xfail(reason=reason, strict=True)] if reason else []


def test_titles_are_unique_and_known_failures_exist() -> None:
    keys = Counter(_key(case) for case in CASES)
    assert [key for key, count in keys.items() if count > 1] == []
    assert set(KNOWN_FAILURES) <= set(keys)


def test_every_skipped_source_test_has_a_reason() -> None:
    assert len(CASES) >= 200 and sum(SKIPPED.values()) > 0
    assert all(reason.strip() for reason in SKIPPED)


@pytest.mark.parametrize("case", [pytest.param(c, id=_key(c), marks=_marks(c)) for c in CASES])
def test_patchtx(case: Case, tmp_path: Path) -> None:
    result = outcome(case, "patchtx", tmp_path)
    assert result == ("differs" if case.differs else "pass"), case.differs or case.title


@pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")
def test_patchtx_passes_as_many_cases_as_git_apply(tmp_path: Path) -> None:
    # (Over the cases patchtx is known to fail as yet, neither applier is counted.)
    judged = [case for case in CASES if _key(case) not in KNOWN_FAILURES]
    appliers = available()
    counts = {name: Counter(outcome(case, name, tmp_path) for case in judged) for name in appliers}
    table = {name: {kind: counts[name][kind] for kind in OUTCOMES} for name in appliers}
    ours = counts["patchtx"]
    assert ours["wrong"] == ours["accepted"] == ours["partial"] == 0, table
    assert ours["pass"] >= counts["git apply"]["pass"], table
