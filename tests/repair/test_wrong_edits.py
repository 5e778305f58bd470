"""The review of main at 03:50 (findings 2, 3, 4, 7 and 12): repairs that made wrong edits, each
with the reviewer's reproduction. The rule they break (docs/format.md, "Repairs"): a repair is made
only when the repaired patch has exactly one meaning and is placed by the same placement rule as
any other patch; a repaired patch goes through every check an unrepaired one does."""

from __future__ import annotations

from pathlib import Path

import pytest

import patchtx
from patchtx.errors import PatchtxError

from .test_shapes import contents, tree


def apply(root: Path, patch: str, **options: object) -> patchtx.Result | PatchtxError:
    try:
        return patchtx.apply_patch(patch, root, durable=False, **options)
    except PatchtxError as error:
        return error


# -- finding 2: a repaired patch is asked the already-applied question ----------------------------
SENT_AGAIN = [
    pytest.param({"a.py": b"def f():\n    return 1\n"},
                 "*** Begin Patch\n*** Update File: a.py\n@@\n 2:     return 1\n+3: x = 2\n"
                 "*** End Patch\n",
                 {"a.py": b"def f():\n    return 1\nx = 2\n"}, "line_number_prefixes",
                 id="line_number_prefixes"),
    pytest.param({"a.txt": b"aaa\nbbb\nccc\n"},
                 "*** Begin Patch\n*** Update File: a.txt\n@@\n ccc\n+C1\n@@\n aaa\n+A1\n"
                 "*** End Patch\n",
                 {"a.txt": b"aaa\nA1\nbbb\nccc\nC1\n"}, "hunks_reordered", id="hunks_reordered"),
]


@pytest.mark.parametrize(("files", "patch", "once", "kind"), SENT_AGAIN)
def test_a_repaired_patch_sent_again_is_already_applied(
        files: dict[str, bytes], patch: str, once: dict[str, bytes], kind: str,
        tmp_path: Path) -> None:
    tree(tmp_path, files)
    first = apply(tmp_path, patch)
    assert not isinstance(first, PatchtxError), first.message
    assert [repair.kind for repair in first.plan.repairs] == [kind]
    assert contents(tmp_path) == once
    again = apply(tmp_path, patch)
    assert isinstance(again, PatchtxError) and again.kind == "already_applied", again
    assert contents(tmp_path) == once
    skipped = apply(tmp_path, patch, skip_applied=True)
    assert not isinstance(skipped, PatchtxError), skipped.message
    assert contents(tmp_path) == once


# -- finding 3: a hunk is applied only where its new side stands where the hunk goes -------------
STALE = {"a.py": b"def f():\n    x = 3\n\ndef g():\n    x = 2\n    y = 1\n"}
STALE_PATCH = ("*** Begin Patch\n*** Update File: a.py\n@@ def f():\n-    x = 1\n+    x = 2\n"
               "@@ def g():\n-    y = 1\n+    y = 5\n*** End Patch\n")


def test_a_new_line_standing_elsewhere_is_no_applied_hunk(tmp_path: Path) -> None:
    tree(tmp_path, STALE)
    outcome = apply(tmp_path, STALE_PATCH)
    assert isinstance(outcome, PatchtxError), [r.kind for r in outcome.plan.repairs]
    assert outcome.kind == "context_not_found"
    assert "already applied" not in outcome.message
    assert contents(tmp_path) == STALE


def test_strict_does_not_call_a_stale_hunk_already_applied(tmp_path: Path) -> None:
    tree(tmp_path, STALE)
    outcome = apply(tmp_path, STALE_PATCH, strict=True)
    assert isinstance(outcome, PatchtxError)
    assert "already applied" not in outcome.message, outcome.message
    assert contents(tmp_path) == STALE


def test_a_hunk_in_place_beside_a_new_one_is_still_skipped(tmp_path: Path) -> None:
    # (The repair the finding must not lose: f's hunk stands where it goes, g's applies.)
    files = {"a.py": b"def f():\n    x = 2\n\ndef g():\n    x = 2\n    y = 1\n"}
    tree(tmp_path, files)
    outcome = apply(tmp_path, STALE_PATCH)
    assert not isinstance(outcome, PatchtxError), outcome.message
    assert [r.kind for r in outcome.plan.repairs] == ["applied_hunk_skipped"]
    assert contents(tmp_path) == {"a.py": b"def f():\n    x = 2\n\ndef g():\n    x = 2\n    y = 5\n"}


