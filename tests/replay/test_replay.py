"""Replay of real commits as Codex patches (issue 14): patchtx edits exactly where each commit did,
or refuses; it never edits a wrong place and never leaves a torn tree; and every patch that the
independent oracle (benchmarks/replay_oracle.py) finds *determined* is applied.

The cases are made by benchmarks/replay.py (see README.md beside this file): this project's own
history under cases/, and any corpus the maintainers put in ../shared/replay/ (never committed)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "benchmarks"))

from replay_oracle import count_placements, parse_patch, split_lines  # noqa: E402

import replay  # noqa: E402

CORPORA = [ROOT / "tests" / "replay" / "cases", ROOT.parent / "shared" / "replay"]

def _cases() -> list[pytest.param]:
    params = []
    for folder in CORPORA:
        if not folder.is_dir():
            continue
        for case in replay.load_cases(folder):
            for variant in replay.CODEX_VARIANTS:
                if not case.patches.get(variant):
                    continue
                case_id = f"{case.repo}-{case.commit[:12]}-{variant}"
                params.append(pytest.param(case, variant, id=case_id))
    return params


CASES = _cases()


def test_the_committed_corpus_is_there() -> None:
    # A corpus that failed to load would make every parametrized test vanish into green.
    own = [p for p in CASES if p.id.startswith("patchtx-")]
    assert len(own) >= 300


@pytest.mark.parametrize(("case", "variant"), CASES)
def test_replayed_commit(case: replay.Case, variant: str, tmp_path: Path) -> None:
    determined = case.determined(variant)
    result = replay.replay(case, variant, replay.patchtx_applier(), tmp_path)
    assert result.outcome not in ("wrong", "torn"), f"{result.outcome}: {result.why}"
    if determined:
        assert result.outcome == "right", f"determined but {result.outcome}: {result.why}"


# The oracle itself, on hand-made files whose placements can be counted by eye.

LINES = ["fn a() {", "    x", "}", "fn b() {", "    x", "}"]


def _sections(body: str) -> list[replay.Section]:
    text = "*** Begin Patch\n*** Update File: f\n" + body + "*** End Patch\n"
    return parse_patch(text)[0].sections


@pytest.mark.parametrize(("body", "expected"), [
    ("@@\n-    x\n+    y\n", 2),                                  # the line is there twice
    ("@@\n fn b() {\n-    x\n+    y\n", 1),                      # context makes it unique
    ("@@ fn b() {\n-    x\n+    y\n", 1),                         # the anchor narrows to one
    ("@@ fn a() {\n-    x\n+    y\n", 2),                         # an anchor never chooses
    ("@@ fn c() {\n-    x\n+    y\n", 0),                         # anchor missing
    ("@@ fn a() {\n+    // a\n", 1),                              # pure insertion after the anchor
    ("@@ }\n+\n", 2),                                             # ... after each occurrence
    ("@@\n-    x\n+    y\n*** End of File\n", 0),                 # not at the end
    ("@@\n-}\n+};\n*** End of File\n", 1),                        # only the last one
    ("@@\n-    x\n+    y\n@@\n-    x\n+    y\n", 1),             # two in order: one placement
    ("@@\n fn b() {\n-    x\n@@\n-    x\n+    y\n", 0),           # the second must come after
    ("@@\n-}\n@@ fn b() {\n-    x\n", 1),                         # anchor after the previous end
    ("@@\n-}\n+}\n@@ fn a() {\n-    x\n", 0),                     # anchor before it does not count
])
def test_oracle_counts_placements(body: str, expected: int) -> None:
    assert count_placements(LINES, _sections(body)) == expected


def test_oracle_reads_what_the_generator_writes() -> None:
    ops = [replay.FileOp("update", "f", sections=[replay.Section("fn b() {", (" x", "-y", "+z"), True)]),
           replay.FileOp("add", "g", add_lines=["", "two"]), replay.FileOp("delete", "h"),
           replay.FileOp("update", "i", move_to="j", sections=[replay.Section(None, (" a",), False)])]
    assert parse_patch(replay.render_patch(ops)) == ops
    assert split_lines("a\n\nb") == ["a", "", "b"] and split_lines("") == [] and split_lines("\n") == [""]
