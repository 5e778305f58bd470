"""A unified diff sent again: its hunks are the same Chunk values as a Codex patch's, so the same
already-applied check answers (already_applied, partly_applied, skip_applied), for every kind of
operation a git diff holds: edits, adds, deletes, renames, mode changes and copies."""

from __future__ import annotations

from pathlib import Path

import pytest

from patchtx.api import apply_patch
from patchtx.errors import (
    AlreadyAppliedError,
    ContextNotFoundError,
    FileExistsPatchError,
    FileNotFoundPatchError,
    PartlyAppliedError,
)

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


@pytest.mark.parametrize("skip_applied", [False, True])
def test_a_context_free_insertion_sent_again_with_a_hunk_in_place_is_refused(tmp_path: Path,
                                                                             skip_applied: bool) -> None:
    # Found by review: the change hunk is in place, the -U0 insertion "would apply" (its stated
    # line always places it), and the repair that leaves out hunks in place inserted the line a
    # second time. git apply --unidiff-zero and GNU patch refuse the second run; so does patchtx.
    diff = "--- a/f\n+++ b/f\n@@ -1,0 +2 @@\n+new\n@@ -3 +4 @@\n-c\n+C\n"
    write_tree(tmp_path, {"f": ("a\nb\nc\nd\n", "100644")})
    apply_patch(diff, tmp_path, durable=False)
    assert (tmp_path / "f").read_text() == "a\nnew\nb\nC\nd\n"
    with pytest.raises(PartlyAppliedError):
        apply_patch(diff, tmp_path, durable=False, skip_applied=skip_applied)
    assert (tmp_path / "f").read_text() == "a\nnew\nb\nC\nd\n"


_U = "--- a/f\n+++ b/f\n"
_PARTLY_SENT = {  # name: (the file, the part applied first, the whole diff sent after it)
    "a -U0 change whose old line stands again further down": (
        "def f():\n    return None\n\ndef g():\n    return None\n\nx = 1\ny = 2\n",
        _U + "@@ -2 +2 @@\n-    return None\n+    return 0\n@@ -7 +7 @@\n-x = 1\n+x = 10\n",
        _U + "@@ -2 +2 @@\n-    return None\n+    return 0\n@@ -7 +7 @@\n-x = 1\n+x = 10\n"
             "@@ -8 +8 @@\n-y = 2\n+y = 20\n"),
    "a -U0 change of a blank line": (
        "a\n\nb\n\nc\nd\n",
        _U + "@@ -2 +2 @@\n-\n+x\n@@ -5 +5 @@\n-c\n+C\n",
        _U + "@@ -2 +2 @@\n-\n+x\n@@ -5 +5 @@\n-c\n+C\n@@ -6 +6 @@\n-d\n+D\n"),
    "a hunk left out that removed a line, before duplicate lines": (
        "x\nb\nb\nb\na\nb\nx\nb\nb\n\n",
        _U + "@@ -4,2 +4 @@\n-b\n-a\n+c\n",
        _U + "@@ -4,2 +4 @@\n-b\n-a\n+c\n@@ -8 +7 @@\n-b\n+  a\n"),
    "a -U0 insertion not yet applied": (
        "w17\nw20\nw27\nw14\n",
        _U + "@@ -3,2 +3 @@\n-w27\n-w14\n+w13\n",
        _U + "@@ -1,0 +2 @@\n+w1\n@@ -3,2 +4 @@\n-w27\n-w14\n+w13\n"),
}


@pytest.mark.parametrize("name", list(_PARTLY_SENT))
def test_a_diff_sent_again_after_part_of_it_is_completed_or_refused_never_written_twice(
        tmp_path: Path, name: str) -> None:
    # From helper-22's review: the repair that leaves out the hunks in place wrote a -U0 change a
    # second time where its old line also stands (return 0 in g too; x twice), and placed the next
    # hunk a line off when a hunk left out had changed the line count. The hunks left are placed at
    # their stated lines moved past the ones left out, and refused when their new side already
    # stands there (then they may be in place too).
    before, part, whole = _PARTLY_SENT[name]
    (tmp_path / "want").mkdir()
    write_tree(tmp_path / "want", {"f": (before, "100644")})
    apply_patch(whole, tmp_path / "want", durable=False)
    (tmp_path / "got").mkdir()
    write_tree(tmp_path / "got", {"f": (before, "100644")})
    apply_patch(part, tmp_path / "got", durable=False)
    sent_to = (tmp_path / "got" / "f").read_text()
    try:
        apply_patch(whole, tmp_path / "got", durable=False)
    except PartlyAppliedError:
        assert (tmp_path / "got" / "f").read_text() == sent_to
        assert name != "a -U0 insertion not yet applied"  # (nothing of it stands: it completes)
    else:
        assert (tmp_path / "got" / "f").read_text() == (tmp_path / "want" / "f").read_text()


# -- sent twice: a hunk pinned to the file's end or start, as git apply places it ------------------

APPEND = "--- a/f\n+++ b/f\n@@ -1,3 +1,4 @@\n a\n b\n c\n+d\n"
PREPEND = "--- a/f\n+++ b/f\n@@ -1,2 +1,3 @@\n+z\n a\n b\n"


@pytest.mark.parametrize("diff", [APPEND, PREPEND], ids=["append", "prepend"])
def test_an_append_or_prepend_sent_twice_is_already_applied(tmp_path: Path, diff: str) -> None:
    write_tree(tmp_path, {"f": ("a\nb\nc\n", "100644")})
    apply_patch(diff, tmp_path, durable=False)
    once = read_tree(tmp_path)
    with pytest.raises(AlreadyAppliedError):
        apply_patch(diff, tmp_path, durable=False)
    assert read_tree(tmp_path) == once
    assert not apply_patch(diff, tmp_path, durable=False, skip_applied=True).plan.changes
    assert read_tree(tmp_path) == once


def test_a_hunk_without_trailing_context_must_end_the_file(tmp_path: Path) -> None:
    # (t4113: git refuses it where the file goes on past its context.)
    write_tree(tmp_path, {"f": ("a\nb\nx\ny\n", "100644")})
    with pytest.raises(ContextNotFoundError, match="at the file's end") as caught:
        apply_patch("--- a/f\n+++ b/f\n@@ -1,2 +1,3 @@\n a\n b\n+c\n", tmp_path, durable=False)
    assert "less context after its change" in caught.value.hint
    assert read_tree(tmp_path) == {"f": ("a\nb\nx\ny\n", "100644")}


def test_a_model_written_hunk_without_counts_is_not_pinned(tmp_path: Path) -> None:
    # Without counts ('@@ ... @@'): its context is as the model wrote it, so it is placed by
    # content; sent again, its new side standing where it goes makes it already applied.
    write_tree(tmp_path, {"f": ("a\nb\nc\nx\n", "100644")})
    model = "--- a/f\n+++ b/f\n@@ ... @@\n b\n c\n+d\n\nThat adds d.\n"  # (prose: not cut off)
    apply_patch(model, tmp_path, durable=False)
    assert read_tree(tmp_path)["f"][0] == "a\nb\nc\nd\nx\n"
    with pytest.raises(AlreadyAppliedError):
        apply_patch(model, tmp_path, durable=False)


def test_a_whole_git_diff_applied_is_already_applied_not_partly(tmp_path: Path) -> None:
    base = "".join(f"l{i}\n" for i in range(1, 21))
    write_tree(tmp_path, {"x": (base, "100644")})
    diff = ("diff --git a/x b/x\n--- a/x\n+++ b/x\n@@ -1,6 +1,6 @@\n l1\n l2\n-l3\n+L3\n l4\n l5\n l6\n"
            "@@ -18,3 +18,4 @@ l17\n l18\n l19\n l20\n+end\n")
    apply_patch(diff, tmp_path, durable=False)
    with pytest.raises(AlreadyAppliedError):
        apply_patch(diff, tmp_path, durable=False)


def test_reversing_a_diff_that_is_not_applied_says_so(tmp_path: Path) -> None:
    write_tree(tmp_path, {"f": ("a\nb\n", "100644")})
    with pytest.raises(AlreadyAppliedError, match="it is not applied") as caught:
        apply_patch("--- a/f\n+++ b/f\n@@ -1,2 +1,3 @@\n a\n b\n+c\n", tmp_path, durable=False,
                    reverse=True)
    assert "already applied" not in caught.value.message
    assert read_tree(tmp_path) == {"f": ("a\nb\n", "100644")}


def test_reversing_several_diffs_that_are_not_applied_says_so(tmp_path: Path) -> None:
    write_tree(tmp_path, {"f": ("a\nb\n", "100644"), "g": ("x\ny\n", "100644")})
    diffs = ["--- a/f\n+++ b/f\n@@ -1,2 +1,3 @@\n a\n b\n+c\n",
             "--- a/g\n+++ b/g\n@@ -1,2 +1,3 @@\n x\n y\n+z\n"]
    with pytest.raises(AlreadyAppliedError, match="it is not applied"):
        apply_patch(diffs, tmp_path, durable=False, reverse=True)


# -- the final newline: "\ No newline at end of file" ---------------------------------------------
ADDS_THE_NEWLINE = "--- a/g\n+++ b/g\n@@ -1,2 +1,2 @@\n a\n-b\n\\ No newline at end of file\n+b\n"
REMOVES_THE_NEWLINE = "--- a/g\n+++ b/g\n@@ -1,2 +1,2 @@\n a\n-b\n+b\n\\ No newline at end of file\n"


@pytest.mark.parametrize(("before", "diff", "after"), [
    (b"a\nb", ADDS_THE_NEWLINE, b"a\nb\n"),
    (b"a\nb\n", REMOVES_THE_NEWLINE, b"a\nb"),
    (b"a\r\nb", ADDS_THE_NEWLINE, b"a\r\nb\r\n"),  # (the line ending is not compared; its presence is)
], ids=["adds", "removes", "adds-crlf"])
def test_a_diff_that_changes_only_the_final_newline_sent_again_is_already_applied(
        tmp_path: Path, before: bytes, diff: str, after: bytes) -> None:
    # Before, the marker on one side was not compared with the file: sent again, the hunk placed
    # and "modified" the file with nothing written, where git refuses ("patch does not apply").
    (tmp_path / "g").write_bytes(before)
    assert apply_patch(diff, tmp_path, durable=False).plan.changes
    assert (tmp_path / "g").read_bytes() == after
    with pytest.raises(AlreadyAppliedError):
        apply_patch(diff, tmp_path, durable=False)
    skipped = apply_patch(diff, tmp_path, durable=False, skip_applied=True)
    assert not skipped.plan.changes
    assert (tmp_path / "g").read_bytes() == after
    # Read backwards it undoes the change, and is "not applied" once undone.
    apply_patch(diff, tmp_path, durable=False, reverse=True)
    assert (tmp_path / "g").read_bytes() == before
    with pytest.raises(AlreadyAppliedError, match="not applied"):
        apply_patch(diff, tmp_path, durable=False, reverse=True)


@pytest.mark.parametrize(("before", "diff"), [
    # The old side's last line is marked: the file must end there without a newline.
    (b"a\nb\n", "--- a/g\n+++ b/g\n@@ -1,2 +1,2 @@\n a\n-b\n\\ No newline at end of file\n+c\n"
                "\\ No newline at end of file\n"),
    (b"a\nb\n", "--- a/g\n+++ b/g\n@@ -1,2 +1,3 @@\n a\n+c\n b\n\\ No newline at end of file\n"),
    (b"b\nb\nb\n", "--- a/g\n+++ b/g\n@@ -3 +3 @@\n-b\n\\ No newline at end of file\n+B\n"),
    # Only the new side's is: the old file ends there with a newline, and this one does not.
    (b"a\nb", "--- a/g\n+++ b/g\n@@ -1,2 +1,2 @@\n a\n-b\n+c\n\\ No newline at end of file\n"),
], ids=["old-marked", "old-context-marked", "old-marked-U0", "new-marked-only"])
def test_a_hunk_whose_final_newline_differs_from_the_file_is_refused(tmp_path: Path, before: bytes,
                                                                     diff: str) -> None:
    (tmp_path / "g").write_bytes(before)
    with pytest.raises(ContextNotFoundError) as refused:
        apply_patch(diff, tmp_path, durable=False)
    assert "line break" in refused.value.hint and "Nothing was changed" in str(refused.value)
    assert (tmp_path / "g").read_bytes() == before


def test_a_diff_whose_new_side_lacks_the_files_final_newline_is_not_in_place(tmp_path: Path) -> None:
    # Its new lines stand in the file, but the file ends with a newline where the diff's result
    # does not: not its work (the already-applied question redoes the final newline too).
    diff = ("--- a/g\n+++ b/g\n@@ -1,2 +1,2 @@\n a\n-b\n\\ No newline at end of file\n+c\n"
            "\\ No newline at end of file\n")
    (tmp_path / "g").write_bytes(b"a\nc\n")
    with pytest.raises(ContextNotFoundError):
        apply_patch(diff, tmp_path, durable=False, skip_applied=True)
    assert (tmp_path / "g").read_bytes() == b"a\nc\n"
    (tmp_path / "g").write_bytes(b"a\nc")
    assert not apply_patch(diff, tmp_path, durable=False, skip_applied=True).plan.changes


MARKED_INSERTION = "--- a/g\n+++ b/g\n@@ -2,0 +3 @@\n+c\n\\ No newline at end of file\n"


def test_an_insertion_marked_without_final_newline_goes_at_the_end_once(tmp_path: Path) -> None:
    # It ends the new file: sent again it is in place (git apply writes "cc", GNU patch "c\nc").
    (tmp_path / "g").write_bytes(b"a\nb\n")
    apply_patch(MARKED_INSERTION, tmp_path, durable=False)
    assert (tmp_path / "g").read_bytes() == b"a\nb\nc"
    with pytest.raises(AlreadyAppliedError):
        apply_patch(MARKED_INSERTION, tmp_path, durable=False)
    assert (tmp_path / "g").read_bytes() == b"a\nb\nc"


@pytest.mark.parametrize(("before", "why"), [
    (b"a\nb", "ends without a line break"),  # (git apply joins the lines: "a\nbc")
    (b"a\nb\nx\n", "the file has 3 lines"),  # (git apply appends after x; GNU patch inserts before it)
], ids=["no-final-newline", "not-the-end"])
def test_an_insertion_marked_without_final_newline_elsewhere_is_refused(tmp_path: Path, before: bytes,
                                                                        why: str) -> None:
    (tmp_path / "g").write_bytes(before)
    with pytest.raises(ContextNotFoundError, match=why):
        apply_patch(MARKED_INSERTION, tmp_path, durable=False)
    assert (tmp_path / "g").read_bytes() == before


def test_a_model_written_hunk_marked_on_its_new_side_only_goes_at_the_files_end(tmp_path: Path) -> None:
    # No counts (placed by content alone, never pinned by its context), its lines twice in the
    # file: the marker says the new file ends there, so it goes at the end, not refused as ambiguous.
    (tmp_path / "f").write_bytes(b"x\nc\nd\ny\nc\nd\n")
    patch = "--- a/f\n+++ b/f\n@@\n c\n-d\n+e\n\\ No newline at end of file\n"
    apply_patch(patch, tmp_path, durable=False)
    assert (tmp_path / "f").read_bytes() == b"x\nc\nd\ny\nc\ne"


def test_a_model_written_hunk_inserting_a_look_alike_sent_again_is_not_applied_twice(tmp_path: Path) -> None:
    # No counts: placed by content, and checked for its new side standing where its kept lines
    # are found. Applied once, 'b c' is found at the inserted 'b': the new side stands aligned on
    # the last kept line, not the first (it was written a second time: 'a b b b c').
    (tmp_path / "f").write_text("a\nb\nc\n")
    patch = "--- a/f\n+++ b/f\n@@ ... @@\n b\n+b\n c\n"
    apply_patch(patch, tmp_path, durable=False)
    assert (tmp_path / "f").read_text() == "a\nb\nb\nc\n"
    with pytest.raises(AlreadyAppliedError):
        apply_patch(patch, tmp_path, durable=False)
    assert (tmp_path / "f").read_text() == "a\nb\nb\nc\n"


@pytest.mark.parametrize(("before", "diff"), [
    # Counts right (git's own diffs): placed by the stated line, the kept lines found nearest it
    # at the inserted look-alike; written a second time ('a b b b c'), as git apply writes it.
    ("a\nb\nc\n", "@@ -2,2 +2,3 @@\n b\n+b\n c\n"),
    # Stated at line 1 (git refuses the resend: it pins such a hunk to the file's start).
    ("a\nb\ndef f():\n\n", "@@ -1,4 +1,6 @@\n a\n b\n+a\n+b\n def f():\n \n"),
    # Pinned to the end (no context after the change): its kept '}' is found at the added one.
    ("f() {\n}\n", "@@ -2 +2,4 @@ f() {\n }\n+\n+g() {\n+}\n"),
])
def test_a_git_diff_inserting_look_alikes_sent_again_is_not_applied_twice(tmp_path: Path, before: str,
                                                                          diff: str) -> None:
    (tmp_path / "f").write_text(before)
    patch = "--- a/f\n+++ b/f\n" + diff
    apply_patch(patch, tmp_path, durable=False)
    once = (tmp_path / "f").read_text()
    assert once != before
    with pytest.raises(AlreadyAppliedError):
        apply_patch(patch, tmp_path, durable=False)
    assert (tmp_path / "f").read_text() == once


def test_a_hunks_new_side_is_looked_for_at_its_stated_line_moved_by_the_hunks_above() -> None:
    from patchtx.formats.codex import parse
    from patchtx.formats.unified_placement import _new_side_at_its_line, _shifts_above

    diff = "--- a/f\n+++ b/f\n@@ -1,2 +1,3 @@\n h\n+n\n k\n@@ -4,2 +5,3 @@\n b\n+b\n c\n"
    chunks = parse(diff).hunks[0].chunks  # type: ignore[union-attr]
    applied = ["h", "n", "k", "m", "b", "b", "c"]  # (the second hunk's new side from line 5, not 4)
    shift = _shifts_above(chunks)[1]
    assert shift == 1
    assert _new_side_at_its_line(applied, chunks[1], shift)
    assert not _new_side_at_its_line(["h", "k", "m", "b", "b", "c"], chunks[1], shift)


def test_a_git_diff_adding_a_line_like_the_kept_ones_applies_once(tmp_path: Path) -> None:
    # The new side ('    a' '    a' 'def f():') stands a line above where the diff says it goes:
    # the third '    a' is still to be added, not in place.
    (tmp_path / "f").write_text("    a\n    a\ndef f():\n")
    patch = "--- a/f\n+++ b/f\n@@ -2,2 +2,3 @@\n     a\n+    a\n def f():\n"
    apply_patch(patch, tmp_path, durable=False)
    assert (tmp_path / "f").read_text() == "    a\n    a\n    a\ndef f():\n"


# -- undone where the redo places them --------------------------------------------------------------
@pytest.mark.parametrize(("before", "diff"), [
    # -R of diffs stated a line off, among look-alike lines: the content rule undid a hunk at a
    # look-alike where the redo, by the stated lines, does not put it.
    (["a", "x", "  a"], "@@ -0,0 +1,1 @@\n+a\n@@ -1,1 +2,1 @@\n-a \n+  a\n"),
    (["a", "  a", "a "], "@@ -1,0 +2,1 @@\n+a\n@@ -3,1 +4,1 @@\n-\n+a \n"),
], ids=["first-line", "blank-line"])
def test_a_diff_reversed_at_an_offset_among_look_alikes_reversed_again_says_so(
        tmp_path: Path, before: list[str], diff: str) -> None:
    # Found by the random already-applied harness: such a resend was refused as context_not_found.
    # The question now also undoes a whole unified diff whose old lines stand nowhere where its
    # hunks' new sides stand nearest their stated lines (each undo checked by the redo).
    (tmp_path / "f").write_text("".join(f"{line}\n" for line in before))
    patch = "--- a/f\n+++ b/f\n" + diff
    apply_patch(patch, tmp_path, durable=False, reverse=True)
    after = (tmp_path / "f").read_bytes()
    with pytest.raises(AlreadyAppliedError, match="not applied"):
        apply_patch(patch, tmp_path, durable=False, reverse=True)
    assert not apply_patch(patch, tmp_path, durable=False, reverse=True, skip_applied=True).plan.changes
    assert (tmp_path / "f").read_bytes() == after


def test_a_diff_whose_insertion_was_left_out_is_not_taken_as_applied(tmp_path: Path) -> None:
    # The first and last hunks applied, not the middle one (an insertion of a line equal to the
    # one above it). The file is also what the whole diff makes of a file without that line, but
    # an insertion's lines standing say too little: the search for other undos leaves diffs with
    # an insertion alone, so this stays refused (partly applied), never a success that skips it.
    diff = ("--- a/f\n+++ b/f\n@@ -1 +1 @@\n-w27\n+w19\n@@ -2,0 +3 @@\n+w11\n"
            "@@ -8,0 +10 @@\n+w7\n")
    half = "w19\nw22\nw11\nw1\nw12\nw20\nw16\n}\nw7\n"
    (tmp_path / "f").write_text(half)
    with pytest.raises(PartlyAppliedError):
        apply_patch(diff, tmp_path, durable=False, skip_applied=True)
    assert (tmp_path / "f").read_text() == half


def test_a_diff_that_empties_a_file_reversed_fills_the_empty_file_once(tmp_path: Path) -> None:
    # "@@ -1 +0,0" with no context left no line: reversed, it fills an empty file (as forwards
    # "@@ -0,0" does), which git apply -R checks too. Read as an insertion at the top (what a -U0
    # hunk removing a file's first lines means, reversed: --unidiff-zero), it wrote 'a' again on
    # every resend and onto a file holding other lines.
    emptying = "--- a/f\n+++ b/f\n@@ -1 +0,0 @@\n-a\n"
    (tmp_path / "f").write_bytes(b"")
    apply_patch(emptying, tmp_path, durable=False, reverse=True)
    assert (tmp_path / "f").read_bytes() == b"a\n"
    with pytest.raises(AlreadyAppliedError):
        apply_patch(emptying, tmp_path, durable=False, reverse=True)
    (tmp_path / "f").write_bytes(b"x\n")
    with pytest.raises(FileExistsPatchError):
        apply_patch(emptying, tmp_path, durable=False, reverse=True)
    assert (tmp_path / "f").read_bytes() == b"x\n"
    apply_patch(emptying, tmp_path, durable=False, reverse=True, unidiff_zero=True)
    assert (tmp_path / "f").read_bytes() == b"a\nx\n"
