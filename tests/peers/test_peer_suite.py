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

KNOWN_FAILURES: dict[str, str] = {
    "git-t4104-apply-boundary: an addition to an empty file, applied to one that is not": "issue 25 (accepted)",
    "git-t4112-apply-renames: copy, rename, edit and copy": "issue 25 (wrong)",
    "git-t4113-apply-ending: an addition at the end, the file longer": "issue 25 (accepted)",
    "git-t4113-apply-ending: an addition at the start, the file longer": "issue 25 (accepted)",
    "git-t4114-apply-typechange: a file renamed into a folder of its own name": "issue 25 (refused)",
    "git-t4114-apply-typechange: a file renamed out of a folder to the folder's name": "issue 25 (refused)",
    "git-t4114-apply-typechange: a folder becomes a file": "issue 25 (refused)",
    "git-t4120-apply-popt: -p2 on a traditional diff with partly quoted names": "issue 25 (refused)",
    "git-t4126-apply-empty: create a missing file": "issue 25 (refused)",
    "git-t4127-apply-same-fn: overlapping changes, in reverse": "issue 25 (refused)",
    "git-t4130-apply-criss-cross-rename: two files swap names": "issue 25 (refused)",
    "git-t4130-apply-criss-cross-rename: three files rotate names": "issue 25 (refused)",
    "git-t4132-apply-removal: createWest": "issue 25 (refused)",
    "git-t4132-apply-removal: createWest over an empty file": "issue 25 (accepted)",
    "git-t4132-apply-removal: createEast": "issue 25 (refused)",
    "git-t4132-apply-removal: createEast over an empty file": "issue 25 (accepted)",
    "git-t4132-apply-removal: createGMT": "issue 25 (refused)",
    "git-t4132-apply-removal: createGMT over an empty file": "issue 25 (accepted)",
    "git-t4132-apply-removal: addWest to a missing file": "issue 25 (refused)",
    "git-t4132-apply-removal: addEast to a missing file": "issue 25 (refused)",
    "git-t4132-apply-removal: addGMT to a missing file": "issue 25 (refused)",
    "git-t4132-apply-removal: removeWest": "issue 25 (wrong)",
    "git-t4132-apply-removal: removeEast": "issue 25 (wrong)",
    "git-t4132-apply-removal: removeGMT": "issue 25 (wrong)",
    "git-t4132-apply-removal: removeWest2": "issue 25 (wrong)",
    "git-t4133-apply-filenames: inconsistent new name": "issue 25 (accepted)",
    "git-t4133-apply-filenames: inconsistent old name": "issue 25 (accepted)",
    "git-t4135-apply-weird-filenames: plain: traditional creation": "issue 25 (refused)",
    "git-t4135-apply-weird-filenames: with spaces: traditional creation": "issue 25 (refused)",
    "git-t4135-apply-weird-filenames: with tab: traditional edit": "issue 25 (refused)",
    "git-t4135-apply-weird-filenames: with tab: traditional creation": "issue 25 (refused)",
    "git-t4135-apply-weird-filenames: with quote: traditional edit": "issue 25 (refused)",
    "git-t4135-apply-weird-filenames: with quote: traditional creation": "issue 25 (refused)",
    "git-t4135-apply-weird-filenames: whitespace-damaged traditional creation": "issue 25 (refused)",
    "git-t4135-apply-weird-filenames: a colon in the time zone": "issue 25 (refused)",
    "git-t4135-apply-weird-filenames: whitespace-damaged, a colon in the time zone": "issue 25 (refused)",
    "git-t4135-apply-weird-filenames: Subversion's deleted file": "issue 25 (refused)",
    "git-t4136-apply-check: a hunk that changes nothing": "issue 25 (accepted)",
    "git-t4136-apply-check: create and copy": "issue 25 (accepted)",
    "git-t4136-apply-check: create and rename": "issue 25 (accepted)",
    "gnu-tests: asymmetric-hunks: a hunk stated one line early, one line of context short": "issue 25 (accepted)",
    "gnu-tests: create-delete: a deletion by an epoch timestamp, content differs": "issue 25 (accepted)",
    "gnu-tests: criss-cross: two files swap names": "issue 25 (refused)",
    "gnu-tests: criss-cross: an edit, then a copy of the original": "issue 25 (wrong)",
    "gnu-tests: file-create-modes: created with odd modes": "issue 25 (wrong)",
    "gnu-tests: file-modes: mode changes only, one already made": "issue 25 (refused)",
    "gnu-tests: filename-choice: a traditional diff naming f and f.new": "issue 25 (refused)",
    "gnu-tests: line-numbers: hunks without context at wrong lines": "issue 25 (refused)",
    "gnu-tests: mixed-patch-types: traditional then git": "issue 25 (refused)",
    "gnu-tests: mixed-patch-types: git then traditional": "issue 25 (refused)",
    "gnu-tests: bad-filenames: an absolute name with -p0": "issue 25 (accepted)",
}
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
