"""The replay corpus through the other edit protocols: each real commit's Codex patch (the variants
without ``@@`` anchors) rewritten as SEARCH/REPLACE blocks (a hunk's old lines as SEARCH, its new
lines as REPLACE) and as an edit list (a hunk's old and new text as ``old_string`` and
``new_string``), then applied: patchtx edits exactly where the commit did, or refuses; never a
wrong place, never a torn tree. What the rewriting cannot say (a delete, a move, an anchor) is
refused by the converter, not tried."""

from __future__ import annotations

import sys
from collections import Counter
from pathlib import Path

import pytest

import patchtx
from patchtx.model import AddFile, UpdateFile

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "benchmarks"))

import replay  # noqa: E402

VARIANTS = ("ctx3", "ctx1")
CORPUS = ROOT / "tests" / "replay" / "cases"


class CannotSay(Exception):
    """The patch does something the protocol has no words for."""


def _updates(patch_text: str, before: dict[str, str]) -> list[AddFile | UpdateFile]:
    hunks = []
    for hunk in patchtx.parse(patch_text).hunks:
        if isinstance(hunk, AddFile):
            hunks.append(hunk)
            continue
        if not isinstance(hunk, UpdateFile) or hunk.move_to is not None:
            raise CannotSay("a delete or a move")
        if any(chunk.anchors or not chunk.old_lines for chunk in hunk.chunks):
            raise CannotSay("an anchor, or a hunk with no old lines")
        if not before.get(hunk.path, "").endswith("\n"):
            raise CannotSay("a file without a final newline (blocks are whole lines)")
        hunks.append(hunk)
    return hunks


def as_blocks(patch_text: str, before: dict[str, str]) -> str:
    out = []
    for hunk in _updates(patch_text, before):
        if isinstance(hunk, AddFile):
            out.append(f"{hunk.path}\n<<<<<<< SEARCH\n=======\n{hunk.contents}>>>>>>> REPLACE\n")
            continue
        for chunk in hunk.chunks:
            search = "".join(line + "\n" for line in chunk.old_lines)
            replace = "".join(line + "\n" for line in chunk.new_lines)
            out.append(f"{hunk.path}\n<<<<<<< SEARCH\n{search}=======\n{replace}>>>>>>> REPLACE\n")
    return "\n".join(out)


def as_edits(patch_text: str, before: dict[str, str]) -> list[dict[str, str]]:
    edits = []
    for hunk in _updates(patch_text, before):
        if isinstance(hunk, AddFile):
            edits.append({"path": hunk.path, "old_string": "", "new_string": hunk.contents})
            continue
        for chunk in hunk.chunks:
            edits.append({"path": hunk.path, "old_string": "".join(line + "\n" for line in chunk.old_lines),
                          "new_string": "".join(line + "\n" for line in chunk.new_lines)})
    return edits


def _applier(protocol: str, before: dict[str, str]) -> replay.Applier:
    def apply(patch: str, root: Path) -> tuple[bool, str]:
        try:
            if protocol == "blocks":
                patchtx.apply_patch(as_blocks(patch, before), root, durable=False)
            else:
                patchtx.apply_edits(as_edits(patch, before), root, durable=False)
        except CannotSay as reason:
            return False, f"cannot say: {reason}"
        except patchtx.PatchtxError as error:
            return False, f"{error.kind}: {error.headline}"
        return True, ""

    return apply


CASES = [pytest.param(case, variant, id=f"{case.repo}-{case.commit[:12]}-{variant}")
         for case in replay.load_cases(CORPUS) for variant in VARIANTS if case.patches.get(variant)]


@pytest.mark.parametrize("protocol", ["blocks", "edits"])
def test_replayed_commits_through_an_edit_protocol(protocol: str, tmp_path: Path) -> None:
    assert len(CASES) >= 150
    outcomes: Counter[str] = Counter()
    for param in CASES:
        case, variant = param.values
        result = replay.replay(case, variant, _applier(protocol, case.before), tmp_path)
        assert result.outcome not in ("wrong", "torn"), f"{param.id}: {result.outcome}: {result.why}"
        outcomes[result.outcome if not result.why.startswith("cannot say") else "cannot say"] += 1
    # Most commits can be said in these protocols, and most of those apply: a hunk's lines with
    # their context usually stand once.
    said = outcomes["right"] + outcomes["refused"]
    assert said >= len(CASES) // 2 and outcomes["right"] >= said * 3 // 4, outcomes
