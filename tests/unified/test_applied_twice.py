"""A unified diff sent again: its hunks are the same Chunk values as a Codex patch's, so the same
already-applied check answers (already_applied, partly_applied, skip_applied), for every kind of
operation a git diff holds: edits, adds, deletes, renames, mode changes and copies."""

from __future__ import annotations

from pathlib import Path

import pytest

from patchtx.api import apply_patch
from patchtx.errors import AlreadyAppliedError, FileNotFoundPatchError, PartlyAppliedError

from .support import AFTER, BEFORE, EVERY_OPERATION, read_tree, write_tree


def test_a_git_diff_sent_again_is_already_applied(tmp_path: Path) -> None:
    write_tree(tmp_path, BEFORE)
    apply_patch(EVERY_OPERATION, tmp_path, durable=False, allow_delete=True)
    assert read_tree(tmp_path) == AFTER
    with pytest.raises(AlreadyAppliedError) as again:
        apply_patch(EVERY_OPERATION, tmp_path, durable=False, allow_delete=True)
    applied = again.value.details["applied"]
    assert len(applied) == 6 and any("moved to s" in entry for entry in applied)
    assert any("already has that mode" in entry for entry in applied)
    assert read_tree(tmp_path) == AFTER
    skipped = apply_patch(EVERY_OPERATION, tmp_path, durable=False, allow_delete=True,
                          skip_applied=True)
    assert not skipped.plan.changes
    assert read_tree(tmp_path) == AFTER


def test_a_git_diff_reversed_twice_is_already_applied(tmp_path: Path) -> None:
    write_tree(tmp_path, AFTER)
    without_copy = EVERY_OPERATION[EVERY_OPERATION.index("diff --git a/g"):]  # (-R refuses copies)
    apply_patch(without_copy, tmp_path, durable=False, allow_delete=True, reverse=True)
    restored = {**BEFORE, "d": AFTER["d"]}
    assert read_tree(tmp_path) == restored
    with pytest.raises(AlreadyAppliedError):
        apply_patch(without_copy, tmp_path, durable=False, allow_delete=True, reverse=True)
    assert read_tree(tmp_path) == restored


def test_a_git_diff_half_applied_is_refused_as_partly_applied(tmp_path: Path) -> None:
    write_tree(tmp_path, {"x": ("".join(f"l{i}\n" for i in range(1, 21)), "100644")})
    two_hunks = ("--- a/x\n+++ b/x\n@@ -2,3 +2,3 @@\n l2\n-l3\n+L3\n l4\n"
                 "@@ -17,3 +17,3 @@\n l17\n-l18\n+L18\n l19\n")
    (tmp_path / "x").write_text((tmp_path / "x").read_text().replace("l3\n", "L3\n"))
    before = read_tree(tmp_path)
    with pytest.raises(PartlyAppliedError):
        apply_patch(two_hunks, tmp_path, durable=False, strict=True)
    assert read_tree(tmp_path) == before
    # Not strict: the hunk in place is left out and the other applied (a repair, reported).
    result = apply_patch(two_hunks, tmp_path, durable=False)
    assert [r.kind for r in result.plan.repairs] == ["applied_hunk_skipped"]
    assert "L18\n" in (tmp_path / "x").read_text()


def test_a_mode_change_the_file_lacks_is_not_applied(tmp_path: Path) -> None:
    # The new name holds the content but not the mode the diff gives it: not in place.
    write_tree(tmp_path, {"s": ("r1\nR2\nr3\n", "100644")})
    rename = ("diff --git a/r b/s\nold mode 100644\nnew mode 100755\nrename from r\nrename to s\n"
              "--- a/r\n+++ b/s\n@@ -1,3 +1,3 @@\n r1\n-r2\n+R2\n r3\n")
    with pytest.raises(FileNotFoundPatchError):
        apply_patch(rename, tmp_path, durable=False)


def test_a_context_free_insertion_is_placed_by_its_line_not_taken_as_applied(tmp_path: Path) -> None:
    # As `git apply --unidiff-zero`: the stated line says where it goes; lines equal to the
    # insertion already standing there do not make it applied.
    write_tree(tmp_path, {"f": ("a\n", "100644")})
    apply_patch("--- a/f\n+++ b/f\n@@ -1,0 +2 @@\n+a\n", tmp_path, durable=False)
    assert (tmp_path / "f").read_text() == "a\na\n"
