"""A patch written as the grammar reads it is never repaired: the replay corpus's real commits
(tests/replay/cases, as Codex patches with 3 and 1 lines of context, with and without anchors)
all plan with no repair reported (benchmarks/replay.py's 1,000 commits: 4,000 patches, none)."""

from __future__ import annotations

import sys
from pathlib import Path

import patchtx

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "benchmarks"))

import replay  # noqa: E402


def test_real_patches_are_taken_as_written(tmp_path: Path) -> None:
    cases = replay.load_cases(ROOT / "tests" / "replay" / "cases")
    assert len(cases) >= 50
    planned = 0
    for number, case in enumerate(cases):
        root = tmp_path / str(number)
        replay.write_tree(root, case.before)
        for variant, patch in case.patches.items():
            try:
                plan = patchtx.plan_patch(patch, root)
            except patchtx.PatchtxError:
                continue  # (an undetermined patch, refused as it must be: tests/replay)
            planned += 1
            assert plan.repairs == (), f"{case.repo} {case.commit[:12]} {variant}: {plan.repairs}"
    assert planned >= 3 * len(cases)
