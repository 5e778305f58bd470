"""A patch sent again: refused as ``already_applied`` (a no-op success with ``skip_applied``),
partly applied patches refused naming what is in place (within one file, with repairs on, the
hunks in place are left out and the others applied: docs/format.md, "Repairs"), never a
duplicated insertion."""

from __future__ import annotations

from pathlib import Path

import pytest

import patchtx
from patchtx.errors import (
    AlreadyAppliedError,
    ContextNotFoundError,
    FileNotFoundPatchError,
    PartlyAppliedError,
)

SOURCE = "import os\n\ndef f():\n    return 1\n\nclass T:\n    pass\n"
PATCH = """*** Begin Patch
*** Update File: m.py
@@ import os
+import sys
@@ def f():
-    return 1
+    return 2
*** Add File: notes.txt
+hello
*** Delete File: old.txt
*** Update File: a.txt
*** Move to: b.txt
@@
-x
+y
*** End Patch"""


@pytest.fixture
def root(tmp_path: Path) -> Path:
    (tmp_path / "m.py").write_text(SOURCE)
    (tmp_path / "old.txt").write_text("bye\n")
    (tmp_path / "a.txt").write_text("x\n")
    return tmp_path


def snapshot(root: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in root.iterdir() if p.is_file()}


def test_a_patch_sent_twice_is_refused_the_second_time_and_nothing_changes(root: Path) -> None:
    patchtx.apply_patch(PATCH, root)
    after = snapshot(root)
    with pytest.raises(AlreadyAppliedError) as info:
        patchtx.apply_patch(PATCH, root)
    assert info.value.kind == "already_applied"
    assert "Nothing was changed." in info.value.message
    assert len(info.value.details["applied"]) == 4
    assert snapshot(root) == after
    assert (root / "m.py").read_text().count("import sys") == 1


def test_skip_applied_makes_it_a_success_that_changes_nothing(root: Path) -> None:
    patchtx.apply_patch(PATCH, root)
    after = snapshot(root)
    result = patchtx.apply_patch(PATCH, root, skip_applied=True)
    assert result.summary == "A 0, M 0, D 0, R 0"
    assert snapshot(root) == after


@pytest.mark.parametrize("body", [
    "@@ def f():\n+    pass",       # a pure insertion under an anchor
    "+# end",                       # a pure insertion at the end of the file
    "@@\n class T:\n+    x = 1\n     pass",  # an insertion with context
])
def test_a_pure_insertion_applied_twice_never_duplicates(tmp_path: Path, body: str) -> None:
    (tmp_path / "m.py").write_text(SOURCE)
    patch = f"*** Begin Patch\n*** Update File: m.py\n{body}\n*** End Patch"
    patchtx.apply_patch(patch, tmp_path)
    once = (tmp_path / "m.py").read_bytes()
    with pytest.raises(AlreadyAppliedError):
        patchtx.apply_patch(patch, tmp_path)
    assert (tmp_path / "m.py").read_bytes() == once


def test_partly_applied_hunks_of_one_file_are_named(tmp_path: Path) -> None:
    (tmp_path / "m.py").write_text(SOURCE.replace("import os\n", "import os\nimport sys\n"))
    patch = PATCH.split("*** Add File")[0] + "*** End Patch"
    with pytest.raises(PartlyAppliedError) as info:
        patchtx.apply_patch(patch, tmp_path, strict=True)
    assert info.value.kind == "partly_applied"
    assert info.value.details["applied_lines"] == [3]  # the '@@ import os' hunk
    assert "patch lines 3" in info.value.message
    # Not strict either: a pure insertion whose lines merely stand after its anchor is too weak a
    # sign to leave it out and write the rest (repair_update's applied_hunk_skipped).
    with pytest.raises(PartlyAppliedError):
        patchtx.apply_patch(patch, tmp_path)


def test_partly_applied_operations_are_named(root: Path) -> None:
    (root / "notes.txt").write_text("hello\n")
    before = snapshot(root)
    with pytest.raises(PartlyAppliedError) as info:
        patchtx.apply_patch(PATCH, root, skip_applied=True)  # skip_applied covers whole patches only
    assert info.value.details["applied"] == [
        "Add File: notes.txt (patch line 8): the file already has exactly that content"]
    assert snapshot(root) == before


def test_a_missing_file_to_delete_alone_is_not_taken_for_applied(tmp_path: Path) -> None:
    # (the path may just be wrong): the ordinary error, as Codex gives it
    (tmp_path / "m.py").write_text(SOURCE)
    with pytest.raises(FileNotFoundPatchError):
        patchtx.apply_patch("*** Begin Patch\n*** Delete File: gone.txt\n*** End Patch", tmp_path)
    with pytest.raises(FileNotFoundPatchError):
        patchtx.apply_patch("*** Begin Patch\n*** Delete File: gone.txt\n*** Update File: m.py\n"
                            "@@ def f():\n-    return 1\n+    return 2\n*** End Patch", tmp_path)


def test_a_look_alike_is_not_taken_for_the_applied_text(tmp_path: Path) -> None:
    # Only the patch's own text, exactly, shows that it was applied: '  a' is not 'a'.
    (tmp_path / "f.txt").write_text("  a\n")
    patchtx.apply_patch("*** Begin Patch\n*** Update File: f.txt\n+a\n*** End Patch", tmp_path)
    assert (tmp_path / "f.txt").read_text() == "  a\na\n"


def test_a_deletion_alone_is_never_taken_for_applied(tmp_path: Path) -> None:
    (tmp_path / "f.txt").write_text("a\nc\n")
    with pytest.raises(ContextNotFoundError):  # 'b' is absent: a typo as much as a replay
        patchtx.apply_patch("*** Begin Patch\n*** Update File: f.txt\n a\n-b\n c\n*** End Patch", tmp_path)


def test_a_miss_after_an_earlier_operation_on_the_same_file_says_so(tmp_path: Path) -> None:
    (tmp_path / "m.py").write_text(SOURCE)
    patch = ("*** Begin Patch\n*** Update File: m.py\n@@ def f():\n-    return 1\n+    return 2\n"
             "*** Update File: m.py\n@@ def f():\n-    return 1\n+    return 3\n*** End Patch")
    with pytest.raises(ContextNotFoundError) as info:
        patchtx.apply_patch(patch, tmp_path)
    assert "An earlier operation of this patch (Update File: m.py (patch line 2)) changed this file" \
        in info.value.message
    assert (tmp_path / "m.py").read_text() == SOURCE


def test_new_lines_standing_elsewhere_do_not_make_a_pending_hunk_applied(tmp_path: Path) -> None:
    # The first hunk's new line "x = 2" stands in two(), but its old line still waits in one():
    # undone there, the patch would be ambiguous, so it cannot be what left the file so. Only
    # the second hunk is in place: partly applied, never "already applied" (which
    # skip_applied would turn into a success that leaves "x = 1" unchanged).
    source = "def one():\n    x = 1\ndef two():\n    x = 2\ndef three():\n    y = 2\n"
    (tmp_path / "f.py").write_text(source)
    patch = ("*** Begin Patch\n*** Update File: f.py\n@@\n-    x = 1\n+    x = 2\n"
             "@@ def three():\n-    y = 1\n+    y = 2\n*** End Patch")
    for skip_applied in (False, True):
        with pytest.raises(PartlyAppliedError) as info:
            patchtx.apply_patch(patch, tmp_path, skip_applied=skip_applied, strict=True)
        assert info.value.details["applied_lines"] == [6]
    assert (tmp_path / "f.py").read_text() == source
    # Not strict: the hunk in place is left out and the pending one applied, in one().
    result = patchtx.apply_patch(patch, tmp_path)
    assert [r.kind for r in result.plan.repairs] == ["applied_hunk_skipped"]
    assert (tmp_path / "f.py").read_text() == source.replace("x = 1", "x = 2")


def test_an_anchored_insertion_marked_end_of_file_is_not_inserted_twice(tmp_path: Path) -> None:
    # The marker does not move an insertion under an anchor, so it must not hide it either.
    (tmp_path / "f.py").write_text("a\nb\n")
    patch = "*** Begin Patch\n*** Update File: f.py\n@@ a\n+new\n*** End of File\n*** End Patch"
    patchtx.apply_patch(patch, tmp_path)
    assert (tmp_path / "f.py").read_text() == "a\nnew\nb\n"
    with pytest.raises(AlreadyAppliedError):
        patchtx.apply_patch(patch, tmp_path)
    assert (tmp_path / "f.py").read_text() == "a\nnew\nb\n"


# -- a section whose new side already stands where it would be placed --------------------------

@pytest.mark.parametrize("section", ["@@\n b\n c\n+d", "@@\n+z\n a\n b", "@@ a\n b\n+b2\n c",
                                     "@@\n+z\n b\n c\n+d", "@@\n+z\n a\n-", "@@\n b\n+b\n c",
                                     "@@\n c\n+x\n+c\n*** End of File"],
                         ids=["appends", "prepends", "inserts-after-anchor", "wraps",
                              "prepends-by-codex-retry", "inserts-a-look-alike",
                              "appends-a-look-alike-at-the-end"])
def test_a_section_sent_twice_is_never_applied_on_top_of_itself(tmp_path: Path, section: str) -> None:
    from patchtx import apply_patch
    from patchtx.errors import AlreadyAppliedError

    patch = f"*** Begin Patch\n*** Update File: f\n{section}\n*** End Patch\n"
    for name, text in (("LF", "a\nb\nc\n"), ("CRLF", "a\r\nb\r\nc\r\n")):  # (bytes path, lines path)
        (tmp_path / name).mkdir()
        (tmp_path / name / "f").write_bytes(text.encode())
        apply_patch(patch, tmp_path / name, durable=False)
        once = (tmp_path / name / "f").read_bytes()
        with pytest.raises(AlreadyAppliedError):
            apply_patch(patch, tmp_path / name, durable=False)
        assert not apply_patch(patch, tmp_path / name, durable=False, skip_applied=True).plan.changes
        assert (tmp_path / name / "f").read_bytes() == once


def test_a_section_whose_kept_lines_are_found_at_an_added_one_between_them_is_not_applied_twice(
        tmp_path: Path) -> None:
    # ' b' '+x' ' b' '+b' on 'a b b' gives 'a b x b b': sent again, its kept 'b' 'b' are found at
    # the second kept 'b' and the added one, so its new side stands neither from the first kept
    # line nor to the last, but over them (it was written again: 'a b x b x b b').
    patch = "*** Begin Patch\n*** Update File: f\n@@\n b\n+x\n b\n+b\n*** End Patch\n"
    for name, eol in (("LF", "\n"), ("CRLF", "\r\n")):  # (bytes path, lines path)
        (tmp_path / name).mkdir()
        (tmp_path / name / "f").write_bytes(eol.join(["a", "b", "b", ""]).encode())
        patchtx.apply_patch(patch, tmp_path / name, durable=False)
        once = (tmp_path / name / "f").read_bytes()
        assert once == eol.join(["a", "b", "x", "b", "b", ""]).encode()
        with pytest.raises(AlreadyAppliedError):
            patchtx.apply_patch(patch, tmp_path / name, durable=False)
        assert (tmp_path / name / "f").read_bytes() == once


def test_a_section_placed_by_codex_retry_in_a_file_without_final_newline_is_not_applied_twice(
        tmp_path: Path) -> None:
    # Undone, the section's removed blank line ends the file: in the lines compared (never
    # written) it keeps the file's missing final newline, as the redo does.
    (tmp_path / "f.txt").write_bytes(b"a\nb")
    patch = "*** Begin Patch\n*** Update File: f.txt\n@@\n+z\n a\n b\n-\n*** End Patch\n"
    patchtx.apply_patch(patch, tmp_path, durable=False)
    assert (tmp_path / "f.txt").read_bytes() == b"z\na\nb"
    with pytest.raises(AlreadyAppliedError):
        patchtx.apply_patch(patch, tmp_path, durable=False)
    assert (tmp_path / "f.txt").read_bytes() == b"z\na\nb"


def test_a_deletion_sent_again_is_refused_saying_it_may_be_in_place(tmp_path: Path) -> None:
    # The removed lines' absence is not taken for a replay (see above), but the miss says what it
    # sees: the kept lines stand together, as after the deletion.
    (tmp_path / "f.txt").write_text("a\nb\nc\n")
    patch = "*** Begin Patch\n*** Update File: f.txt\n a\n-b\n c\n*** End Patch"
    patchtx.apply_patch(patch, tmp_path)
    for skip_applied in (False, True):
        with pytest.raises(ContextNotFoundError) as info:
            patchtx.apply_patch(patch, tmp_path, skip_applied=skip_applied)
        assert info.value.hint.startswith("The hunks only remove lines, and the lines they keep")
    (tmp_path / "g.txt").write_text("a\nc\nz\n")  # the kept lines apart: no such sentence
    with pytest.raises(ContextNotFoundError) as apart:
        patchtx.apply_patch("*** Begin Patch\n*** Update File: g.txt\n a\n-b\n z\n*** End Patch", tmp_path)
    assert "only remove lines" not in apart.value.hint
    assert (tmp_path / "f.txt").read_text() == "a\nc\n"


LOOK_ALIKE = 'if verbose:\n    print("-" * 40)\nprint("-" * 40)\nprint(total)\n'
"""A line that the insertion's kept line looks like, indented, right above where it inserts."""


@pytest.mark.parametrize(("patch", "ending"), [
    ('*** Begin Patch\n*** Update File: r.py\n@@\n print("-" * 40)\n+print("-" * 40)\n print(total)\n'
     '*** End Patch\n', "\n"),
    ('*** Begin Patch\n*** Update File: r.py\n@@\n print("-" * 40)\n+print("-" * 40)\n print(total)\n'
     '*** End Patch\n', "\r\n"),
    ('--- a/r.py\n+++ b/r.py\n@@ ... @@\n print("-" * 40)\n+print("-" * 40)\n print(total)\n', "\n"),
], ids=["bytes", "crlf-lines", "unified-without-counts"])
def test_an_insertion_beside_an_indented_look_alike_is_applied_not_skipped(
        tmp_path: Path, patch: str, ending: str) -> None:
    # Placed exactly, its kept lines are compared exactly: the indented line above is another line,
    # so the new side does not stand there yet (skip_applied must not make this a no-op).
    (tmp_path / "r.py").write_bytes(LOOK_ALIKE.replace("\n", ending).encode())
    patchtx.apply_patch(patch, tmp_path, skip_applied=True)
    expected = 'if verbose:\n    print("-" * 40)\nprint("-" * 40)\nprint("-" * 40)\nprint(total)\n'
    assert (tmp_path / "r.py").read_bytes() == expected.replace("\n", ending).encode()


@pytest.mark.parametrize(("text", "patch"), [
    ('def f():\n    print("debug")\n    return 1\n\n\ndef g():\n    print("debug")\n    return 1\n\n\n'
     'def h():\n    return 3\n',
     '*** Begin Patch\n*** Update File: m.py\n@@ def f():\n-    print("debug")\n     return 1\n'
     '@@ def h():\n-    return 3\n+    return 4\n*** End Patch\n'),
    ('import os\n\ndef helper():\n    return 0\n\ndef main():\n    return 0\n',
     '*** Begin Patch\n*** Update File: m.py\n@@ import os\n+\n def helper():\n@@ def main():\n'
     '-    return 0\n+    return 1\n*** End Patch\n'),
], ids=["deletion-found-in-the-next-function", "blank-line-added"])
def test_a_resent_patch_whose_other_hunk_never_counts_as_in_place_is_partly_applied(
        tmp_path: Path, text: str, patch: str) -> None:
    # The hunk in place is left out only when every other hunk could show its own change; a
    # deletion (or a blank line added) sent again would apply a second time elsewhere.
    (tmp_path / "m.py").write_text(text)
    patchtx.apply_patch(patch, tmp_path)
    once = (tmp_path / "m.py").read_text()
    for skip_applied in (False, True):
        with pytest.raises(PartlyAppliedError):
            patchtx.apply_patch(patch, tmp_path, skip_applied=skip_applied)
    assert (tmp_path / "m.py").read_text() == once


def test_an_anchored_insertion_not_yet_applied_completes_a_patch_sent_again(tmp_path: Path) -> None:
    # The first hunk is in place, the insertion under `@@ def g():` is not (its lines stand nowhere):
    # the repair leaves the first out and applies the insertion once.
    (tmp_path / "f").write_text("import os\n\ndef f():\n    return 10\n\ndef g():\n    return 2\n")
    patch = ("*** Begin Patch\n*** Update File: f\n@@ def f():\n-    return 1\n+    return 10\n"
             "@@ def g():\n+    '''g.'''\n*** End Patch\n")
    result = patchtx.apply_patch(patch, tmp_path, durable=False)
    assert [repair.kind for repair in result.plan.repairs] == ["applied_hunk_skipped"]
    assert (tmp_path / "f").read_text() == ("import os\n\ndef f():\n    return 10\n\ndef g():\n"
                                           "    '''g.'''\n    return 2\n")
