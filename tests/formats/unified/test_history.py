"""Commits of this project's own history, given as git's own diffs (made by
benchmarks/git_history_cases.py): patchtx applies each one exactly as the commit made it, and the
diff patchtx prints for it, fed to ``git apply`` on the parent, gives the commit (round trip)."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest

from patchtx.api import apply_patch, plan_patch
from patchtx.render import diff_texts

from .support import Files, git_apply, needs_git, read_tree, write_tree

CASES = json.loads(gzip.decompress((Path(__file__).parent / "history_cases.json.gz").read_bytes()))


def _before(case: dict[str, object]) -> Files:
    return {path: (text, mode) for path, (text, mode) in case["before"].items()}  # type: ignore[attr-defined]


def _after(case: dict[str, object]) -> Files:
    return {path: (value[0], value[1]) for path, value in case["after"].items()  # type: ignore[attr-defined]
            if value is not None}


def test_the_cases_cover_what_a_history_holds() -> None:
    assert len(CASES) >= 30
    patches = [case["patch"] for case in CASES]
    assert sum("new file mode" in p for p in patches) >= 5
    assert sum(p.count("diff --git") >= 3 for p in patches) >= 5  # commits touching several files
    assert sum(p.count("\n@@ ") for p in patches) >= 120


@pytest.mark.parametrize("case", CASES, ids=[case["commit"][:10] for case in CASES])
def test_patchtx_applies_the_commit(tmp_path: Path, case: dict[str, object]) -> None:
    write_tree(tmp_path, _before(case))
    result = apply_patch(case["patch"], tmp_path, durable=False)  # type: ignore[arg-type]
    assert result.committed
    assert read_tree(tmp_path) == _after(case)


@needs_git
@pytest.mark.parametrize("case", CASES, ids=[case["commit"][:10] for case in CASES])
def test_the_printed_diff_makes_the_commit_under_git_apply(tmp_path: Path,
                                                          case: dict[str, object]) -> None:
    write_tree(tmp_path, _before(case))
    printed = "".join(diff_texts(plan_patch(case["patch"], tmp_path)))  # type: ignore[arg-type]
    git_apply(tmp_path, printed)
    assert read_tree(tmp_path) == _after(case)


@needs_git
@pytest.mark.parametrize("case", CASES, ids=[case["commit"][:10] for case in CASES])
def test_git_apply_agrees_with_the_case(tmp_path: Path, case: dict[str, object]) -> None:
    """The case is right: git apply of the same diff on the parent gives the same files."""
    write_tree(tmp_path, _before(case))
    git_apply(tmp_path, case["patch"])  # type: ignore[arg-type]
    assert read_tree(tmp_path) == _after(case)
