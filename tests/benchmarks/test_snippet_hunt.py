"""The snippet hunt (benchmarks/snippet_hunt.py, issue 44) on a small sample: real files of this
project and of the syntax corpus (tests/plan/syntax/corpus, licences in its SOURCES.md), real
edits, snippets in every vendor shape and placeholder wording, sent to the MCP server's
``edit_file`` tool function: not one run may write a file other than the intended one."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "benchmarks"))

import snippet_hunt  # noqa: E402


@pytest.mark.parametrize("paths, files", [
    ([ROOT / "src/patchtx/formats", ROOT / "docs"], 4),
    ([ROOT / "tests/plan/syntax/corpus"], 5),
])
def test_no_snippet_is_merged_into_a_file_other_than_the_intended_one(paths: list[Path], files: int) -> None:
    corpus = snippet_hunt.files_on_disk([str(path) for path in paths])
    report = snippet_hunt.hunt(corpus, files=files, seed=44)
    assert report["cases"] > 100
    assert report["wrong"] == 0, report["wrong_cases"]
    # The text decides a good share (3 lines of context and whole functions mostly).
    assert report["right"] > 0.2 * report["cases"], snippet_hunt.render(report)
