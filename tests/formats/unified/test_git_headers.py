"""Headers read as git apply reads them (issue 25): GNU diff -N's epoch timestamps, timestamps
after spaces, partly quoted names, names that contradict the diff --git line, absolute names,
hunks that change nothing, renames and copies read from the tree as it was before the diff."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from patchtx.api import apply_patch
from patchtx.errors import FileExistsPatchError, NoChangeError, ParseError, UnsafePathError
from patchtx.formats.unified import parse_unified
from patchtx.model import AddFile, DeleteFile, UpdateFile

from .support import read_tree, write_tree

EPOCH = ("1970-01-01 00:00:00.000000000 +0000", "1969-12-31 16:00:00 -08:00", "1970-01-01 09:00:00 +0900",
         "1970-01-01 00:00:00")
LATER = "2024-05-06 07:08:09.123456789 +0200"


@pytest.mark.parametrize("stamp", EPOCH)
def test_an_epoch_side_does_not_exist(stamp: str) -> None:
    create = f"--- a/f\t{stamp}\n+++ b/f\t{LATER}\n@@ -0,0 +1 @@\n+x\n"
    delete = f"--- a/f\t{LATER}\n+++ b/f\t{stamp}\n@@ -1 +0,0 @@\n-x\n"
    assert isinstance(parse_unified(create).hunks[0], AddFile)
    assert isinstance(parse_unified(delete).hunks[0], DeleteFile)


@pytest.mark.parametrize("stamp", ["1970-01-01 00:00:01 +0000", "1970-01-01 00:00:00.5 +0000",
                                   "1969-12-31 23:00:00 +0000"])
def test_a_time_near_the_epoch_is_a_time(stamp: str) -> None:
    edit = f"--- a/f\t{LATER}\n+++ b/f\t{stamp}\n@@ -1,2 +1 @@\n-x\n y\n"
    assert isinstance(parse_unified(edit).hunks[0], UpdateFile)


def test_an_epoch_creation_refuses_an_existing_empty_file(tmp_path: Path) -> None:
    write_tree(tmp_path, {"f": ("", "100644")})
    with pytest.raises(FileExistsPatchError):
        apply_patch(f"--- a/f\t{EPOCH[0]}\n+++ b/f\t{LATER}\n@@ -0,0 +1 @@\n+x\n", tmp_path, durable=False)


def test_zero_zero_fills_an_empty_file_or_creates_it_but_refuses_one_with_lines(tmp_path: Path) -> None:
    diff = f"--- a/f\t{LATER}\n+++ b/f\t{LATER}\n@@ -0,0 +1 @@\n+x\n"
    apply_patch(diff, tmp_path, durable=False)
    assert read_tree(tmp_path) == {"f": ("x\n", "100644")}
    (tmp_path / "f").write_text("")
    apply_patch(diff, tmp_path, durable=False)
    assert read_tree(tmp_path) == {"f": ("x\n", "100644")}
    (tmp_path / "f").write_text("other\n")
    with pytest.raises(FileExistsPatchError):
        apply_patch(diff, tmp_path, durable=False)
    apply_patch(diff, tmp_path, durable=False, unidiff_zero=True)  # (a -U0 diff: at the top)
    assert read_tree(tmp_path) == {"f": ("x\nother\n", "100644")}


@pytest.mark.parametrize(("header", "name"), [
    ("--- a/new name.txt     2010-08-18 20:13:31.484002255 -0500", "new name.txt"),
    ("--- a/new\tname.txt\t2010-08-18 20:13:31 -0500", "new\tname.txt"),
    ("--- a/plain.txt\tSat Sep 14 08:47:53 2024", "plain.txt"),
    ('--- "a/"sub/file1', "sub/file1"),
])
def test_traditional_names(header: str, name: str) -> None:
    diff = header + "\n" + header.replace("--- a/", "+++ b/").replace('--- "a/"', '+++ "b/"') + \
        "\n@@ -1 +1 @@\n-x\n+y\n"
    assert parse_unified(diff).hunks[0].path == name


@pytest.mark.parametrize("diff", [
    "diff --git a/f b/f\nnew file mode 100644\n--- /dev/null\n+++ b/f-blah\n@@ -0,0 +1 @@\n+1\n",
    "diff --git a/f b/f\ndeleted file mode 100644\n--- b/f-blah\n+++ /dev/null\n@@ -1 +0,0 @@\n-1\n",
    "diff --git a/1 b/2\nnew file mode 100644\ncopy from 1\ncopy to 2\n",
    "diff --git a/1 b/2\nnew file mode 100644\nrename from 1\nrename to 2\n",
], ids=["new name", "old name", "new file copied", "new file renamed"])
def test_inconsistent_or_empty_diffs_are_refused(diff: str) -> None:
    with pytest.raises(ParseError):
        parse_unified(diff)


@pytest.mark.parametrize("diff", [
    "--- a/f\n+++ b/f\n@@ -1,1 +1,1 @@\n 1\n",
    "--- a/f\n+++ b/f\n@@ -1,3 +1,3 @@\n 1\n-2\n+2\n 3\n",
    "--- a/f\n+++ b/f\n@@ -1,2 +1,2 @@\n-1\n-2\n+1\n+2\n",
], ids=["context only", "a line removed and added back", "lines removed and added back"])
def test_a_hunk_that_changes_nothing_is_refused_as_no_change(diff: str) -> None:
    with pytest.raises(NoChangeError, match="changes nothing in f"):
        parse_unified(diff)


@pytest.mark.parametrize("diff", [
    "--- a/f\n+++ b/f\n@@ -1 +1 @@\n-1\n\\ No newline at end of file\n+1\n",
    "--- a/f\n+++ b/f\n@@ -1 +1 @@\n-1\r\n+1\n",
], ids=["a final newline given", "a line ending changed"])
def test_a_hunk_that_changes_only_an_ending_is_a_change(diff: str) -> None:
    assert parse_unified(diff).hunks  # (read; whether it applies is the placement's)


def test_an_absolute_name_is_refused_with_p0(tmp_path: Path) -> None:
    with pytest.raises(UnsafePathError, match="absolute path /abs/path"):
        apply_patch("--- /dev/null\n+++ /abs/path\n@@ -0,0 +1 @@\n+x\n", tmp_path, strip=0, durable=False)
    assert read_tree(tmp_path) == {}


def test_a_copy_of_a_file_the_diff_edits_copies_the_original(tmp_path: Path) -> None:
    write_tree(tmp_path, {"a": ("one\n", "100644")})
    diff = ("diff --git a/a b/a\n--- a/a\n+++ b/a\n@@ -1 +1,2 @@\n one\n+edited\n"
            "diff --git a/a b/b\ncopy from a\ncopy to b\n--- a/a\n+++ b/b\n@@ -1 +1,2 @@\n one\n+copied\n")
    apply_patch(diff, tmp_path, durable=False)
    assert read_tree(tmp_path) == {"a": ("one\nedited\n", "100644"), "b": ("one\ncopied\n", "100644")}


def test_renames_that_swap_names(tmp_path: Path) -> None:
    write_tree(tmp_path, {"f": ("1\n", "100644"), "g": ("2\n", "100755")})
    swap = ("diff --git a/g b/f\nrename from g\nrename to f\n"
            "diff --git a/f b/g\nrename from f\nrename to g\n")
    apply_patch(swap, tmp_path, durable=False)
    assert read_tree(tmp_path) == {"f": ("2\n", "100755"), "g": ("1\n", "100644")}


def test_a_rename_onto_a_file_that_stays_is_refused(tmp_path: Path) -> None:
    write_tree(tmp_path, {"f": ("1\n", "100644"), "g": ("2\n", "100644")})
    with pytest.raises(FileExistsPatchError):
        apply_patch("diff --git a/g b/f\nrename from g\nrename to f\n", tmp_path, durable=False)


def test_reversing_undoes_the_later_section_first(tmp_path: Path) -> None:
    base = "".join(f"{c}\n" for c in "abcdefgh")
    write_tree(tmp_path, {"s": (base.replace("d", "z").replace("e", "y"), "100644")})
    two = ("--- a/s\n+++ b/s\n@@ -2,5 +2,5 @@\n b\n c\n-d\n+z\n e\n f\n"
           "--- a/s\n+++ b/s\n@@ -3,5 +3,5 @@\n c\n z\n-e\n+y\n f\n g\n")
    apply_patch(two, tmp_path, durable=False, reverse=True)
    assert read_tree(tmp_path) == {"s": (base, "100644")}


def test_git_canonicalises_modes_by_the_owner_bit(tmp_path: Path) -> None:
    apply_patch("diff --git a/f b/f\nnew file mode 100710\n--- /dev/null\n+++ b/f\n@@ -0,0 +1 @@\n+x\n"
                "diff --git a/g b/g\nnew file mode 100654\n--- /dev/null\n+++ b/g\n@@ -0,0 +1 @@\n+x\n",
                tmp_path, durable=False)
    assert read_tree(tmp_path) == {"f": ("x\n", "100755"), "g": ("x\n", "100644")}



def test_a_codex_chain_of_moves_still_moves_each_file(tmp_path: Path) -> None:
    # (Only a unified diff's renames read their sources as before the diff.)
    write_tree(tmp_path, {"a": ("x\n", "100644")})
    apply_patch("*** Begin Patch\n*** Update File: a\n*** Move to: b\n@@\n x\n"
                "*** Update File: b\n*** Move to: c\n@@\n x\n*** End Patch\n", tmp_path, durable=False)
    assert read_tree(tmp_path) == {"c": ("x\n", "100644")}


DIFF = "diff --git a/f b/f\n--- a/f\n+++ b/f\n@@ -1 +1 @@\n-x\n+y\n"
CODEX = "*** Begin Patch\n*** Update File: f\n@@\n-x\n+y\n*** End Patch\n"
TWO_FS = {"f": ("x\n", "100644"), "sub/f": ("x\n", "100644")}


@pytest.mark.parametrize(("before", "patch", "extract"), [
    ("cd sub && git apply <<'EOF'", DIFF, False), ("patch -p0 <<EOF", DIFF, False),
    ("git apply -R <<-END", DIFF, False), ("cd sub && git apply <<'EOF'", DIFF, True),
    ("cd sub && apply_patch <<'PATCH'", CODEX, True), ("git -C sub apply <<'EOF'", DIFF, False),
    ("cd sub\ngit apply <<'EOF'", DIFF, False), ("cat <<'EOF' | (cd sub && git apply)", DIFF, False),
    ("cd sub\ngit apply <<'EOF'", DIFF, True)],
    ids=["cd", "p0", "reverse", "cd-extract", "codex-cd-extract", "git-C", "cd-line-before",
         "piped", "cd-line-before-extract"])
def test_a_shell_command_feeding_the_patch_is_refused(before: str, patch: str, extract: bool,
                                                      tmp_path: Path) -> None:
    # A model's reply that runs the patch in another directory (or with -p, -R): applied at the
    # root without the command, it would edit another file of the same name (sub/f -> f).
    write_tree(tmp_path, TWO_FS)
    end = re.search(r"<<-?\s*'?(\w+)", before).group(1)  # type: ignore[union-attr]
    with pytest.raises(ParseError) as refused:
        apply_patch(f"{before}\n{patch}{end}\n", tmp_path, extract=extract)
    assert "shell command" in refused.value.message and refused.value.line == before.count("\n") + 1
    assert read_tree(tmp_path) == TWO_FS


@pytest.mark.parametrize(("before", "after"), [
    ("git apply <<'EOF'", "EOF\n"), ("Apply it with git apply if you like.\n", ""),
    ("A commit message.\n\nSigned-off-by: A <a@b.c>\n", ""),
    # a message that shows a command in an example: its here-document does not hold the diff
    ("Usage:\n\n    patch -p1 <<EOF\n    DIFF\n    EOF\n\n---\n", "-- \n2.39.5\n")])
def test_a_bare_applier_or_prose_before_the_diff_is_read_as_git_does(before: str, after: str,
                                                                     tmp_path: Path) -> None:
    write_tree(tmp_path, {"f": ("x\n", "100644")})
    apply_patch(f"{before}\n{DIFF}{after}", tmp_path)
    assert read_tree(tmp_path) == {"f": ("y\n", "100644")}
