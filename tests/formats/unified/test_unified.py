"""Unified diffs in: the parser, format detection, placement by stated line, model-style diffs,
refusals, and the same transaction on every surface."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from patchtx.api import apply_patch, plan_patch
from patchtx.errors import (
    AmbiguousContextError,
    BinaryFileError,
    ContextNotFoundError,
    FileExistsPatchError,
    ParseError,
    PatchtxError,
    PolicyError,
    UnsupportedChangeError,
)
from patchtx.formats.codex import detect_format, parse
from patchtx.model import AddFile, DeleteFile, UpdateFile

from .support import git_apply, needs_git, read_tree, write_tree

LINES = "".join(f"line {i}\n" for i in range(1, 21))


def diff(path: str, *hunks: str, old: str | None = None) -> str:
    return f"--- a/{old or path}\n+++ b/{path}\n" + "".join(hunks)


def apply(root: Path, text: str | list[str], **options: object) -> None:
    apply_patch(text, root, durable=False, **options)  # type: ignore[arg-type]


def content(root: Path, path: str) -> str:
    return (root / path).read_text(encoding="utf-8")


# -- detection ------------------------------------------------------------------------------------
@pytest.mark.parametrize(("text", "expected"), [
    ("*** Begin Patch\n*** Add File: a\n+x\n*** End Patch\n", "codex"),
    ("<<'EOF'\n*** Begin Patch\n*** End Patch\nEOF\n", "codex"),
    ("diff --git a/x b/x\nold mode 100644\nnew mode 100755\n", "unified"),
    ("Subject: fix\n\nprose\n--- a/x\n+++ b/x\n@@ -1 +1 @@\n-a\n+b\n", "unified"),
    ("hello\n", "codex"),  # neither: Codex's error says what a patch starts with
])
def test_format_detection(text: str, expected: str) -> None:
    assert detect_format(text) == expected


def test_both_formats_in_one_text_are_refused() -> None:
    codex = "*** Begin Patch\n*** Add File: a\n+x\n*** End Patch\n"
    unified = diff("x", "@@ -1 +1 @@\n-a\n+b\n")
    for text, line in ((unified + codex, 6), (codex.replace("*** End Patch", "diff --git a/x b/x\n*** End Patch"), 4)):
        with pytest.raises(ParseError, match=f"line {line} mixes the two patch formats"):
            parse(text)


def test_patch_files_of_both_formats_are_one_transaction(tmp_path: Path) -> None:
    write_tree(tmp_path, {"x.txt": ("a\n", "100644")})
    codex = "*** Begin Patch\n*** Add File: new.txt\n+new\n*** End Patch\n"
    apply(tmp_path, [diff("x.txt", "@@ -1 +1 @@\n-a\n+b\n"), codex])
    assert read_tree(tmp_path) == {"x.txt": ("b\n", "100644"), "new.txt": ("new\n", "100644")}
    # A failing second patch leaves the first unapplied too.
    with pytest.raises(ContextNotFoundError):
        apply(tmp_path, [diff("x.txt", "@@ -1 +1 @@\n-b\n+c\n"), diff("new.txt", "@@ -1 +1 @@\n-zz\n+c\n")])
    assert content(tmp_path, "x.txt") == "b\n"


# -- the parser -------------------------------------------------------------------------------------
def test_format_patch_mail_with_prose_and_signature() -> None:
    text = ("From 1234 Mon Sep 17 00:00:00 2001\nFrom: A <a@example.com>\nSubject: [PATCH] fix\n\n"
            "Body text mentions --- and +++ and @@ but not at a line start.\n---\n x | 2 +-\n"
            " 1 file changed\n\ndiff --git a/x b/x\nindex 1..2 100644\n--- a/x\n+++ b/x\n"
            "@@ -1,2 +1,2 @@\n keep\n-old\n+new\n-- \n2.43.0\n\n")
    patch = parse(text)
    assert patch.format == "unified"
    (hunk,) = patch.hunks
    assert isinstance(hunk, UpdateFile) and hunk.path == "x"
    (chunk,) = hunk.chunks
    assert chunk.lines == ((" ", "keep"), ("-", "old"), ("+", "new"))
    assert (chunk.stated_line, chunk.recounted) == (1, False)


def test_plain_diff_with_timestamps_and_dev_null() -> None:
    text = ("--- /dev/null\t2024-01-01 00:00:00.000000000 +0000\n+++ b/new file.txt\t2024-01-01\n"
            "@@ -0,0 +1,2 @@\n+one\n+two\n\\ No newline at end of file\n"
            "--- a/gone.txt\n+++ /dev/null\n@@ -1 +0,0 @@\n-bye\n")
    added, deleted = parse(text).hunks
    assert added == AddFile("new file.txt", "one\ntwo", 1)
    assert deleted == DeleteFile("gone.txt", 7, ("bye",))


@pytest.mark.parametrize(("strip", "old", "expected"), [
    (None, "a/src/x.py", "src/x.py"), (None, "src/x.py", "x.py"), (None, "x.py", "x.py"),
    (0, "src/x.py", "src/x.py"), (2, "a/src/x.py", "x.py")])
def test_path_strip(strip: int | None, old: str, expected: str) -> None:
    new = "b/" + old[2:] if old.startswith("a/") else old
    (hunk,) = parse(f"--- {old}\n+++ {new}\n@@ -1 +1 @@\n-a\n+b\n", strip=strip).hunks
    assert hunk.path == expected


def test_quoted_names() -> None:
    text = ('diff --git "a/caf\\303\\251 \\"q\\".txt" "b/caf\\303\\251 \\"q\\".txt"\n'
            'new file mode 100755\n--- /dev/null\n+++ "b/caf\\303\\251 \\"q\\".txt"\n@@ -0,0 +1 @@\n+x\n')
    (hunk,) = parse(text).hunks
    assert hunk == AddFile('café "q".txt', "x\n", 1, 0o100755)


def test_git_headers_without_hunks() -> None:
    text = ("diff --git a/run.sh b/run.sh\nold mode 100644\nnew mode 100755\n"
            "diff --git a/a b/c d\nsimilarity index 100%\nrename from a\nrename to c d\n"
            "diff --git a/src/x b/src/y\nsimilarity index 90%\ncopy from src/x\ncopy to src/y\n"
            "--- a/src/x\n+++ b/src/y\n@@ -1 +1 @@\n-a\n+b\n"
            "diff --git a/empty b/empty\nnew file mode 100644\nindex 0000000..e69de29\n")
    mode, rename, copy, empty = parse(text).hunks
    assert mode == UpdateFile("run.sh", (), None, 1, 0o100755)
    assert rename == UpdateFile("a", (), "c d", 4, None)
    assert isinstance(copy, UpdateFile) and (copy.path, copy.move_to, copy.copy) == ("src/x", "src/y", True)
    assert empty == AddFile("empty", "", 17, 0o100644)


@pytest.mark.parametrize("hunk", ["@@ -1,3 +1,3 @@\n a\n-b\n+B\n c\n d\n-e\n+E\n f\n",
                                  "@@ -1,9 +1,9 @@\n a\n-b\n+B\n"], ids=["too-long", "too-short"])
def test_a_body_that_disagrees_with_its_counts_is_refused_naming_the_hunk(hunk: str, tmp_path: Path) -> None:
    # Issue 37, item 3: git says "corrupt patch"; read by its body (git apply --recount), a hunk
    # cut short or one whose lines lost their prefix was applied as something else.
    write_tree(tmp_path, {"x": ("a\nb\nc\nd\ne\nf\n", "100644")})
    for strict in (False, True):
        with pytest.raises(ParseError, match="disagrees with its header's counts") as caught:
            apply(tmp_path, diff("x", hunk, "@@ -9,2 +9,2 @@\n q\n-r\n+R\n"), strict=strict)
        assert caught.value.line == 3 and "Nothing was changed" in caught.value.message
    assert content(tmp_path, "x") == "a\nb\nc\nd\ne\nf\n"


def test_lines_that_lost_their_prefix_where_the_counts_disagree_are_refused_not_dropped(
        tmp_path: Path) -> None:
    # Issue 37, item 3: the body was read up to 'one' (no prefix), so '-four' alone was applied
    # and '+new' dropped, exit 0, also with --strict; git says "corrupt patch".
    write_tree(tmp_path, {"f.txt": ("four\none\ntwo\n", "100644")})
    text = diff("f.txt", "@@ -1,3 +1,4 @@\n-four\none\n+new\ntwo\n")
    for strict in (False, True):
        with pytest.raises(ParseError, match="disagrees with its header's counts") as caught:
            apply(tmp_path, text, strict=strict)
        assert "'@@ -1" in caught.value.message and "patch line 3" in caught.value.message
        assert "Nothing was changed" in caught.value.message
    assert content(tmp_path, "f.txt") == "four\none\ntwo\n"


def test_context_lines_that_lost_their_space_are_read_by_the_counts_when_the_file_has_them(
        tmp_path: Path) -> None:
    write_tree(tmp_path, {"f.txt": ("four\none\ntwo\n", "100644")})
    text = diff("f.txt", "@@ -1,3 +1,3 @@\n-four\none\n+new\ntwo\n")
    with pytest.raises(ParseError, match="lost a context line's leading space .read so only where"):
        apply(tmp_path, text, strict=True)
    result = apply_patch(text, tmp_path, durable=False)
    assert content(tmp_path, "f.txt") == "one\nnew\ntwo\n"
    assert [(r.kind, r.where) for r in result.plan.repairs] == [
        ("context_without_space", "f.txt, patch lines 5, 7")]


def test_a_dashed_underline_that_lost_its_space_is_read_by_the_counts(tmp_path: Path) -> None:
    # Issue 37, item 3: ' ----' (B's underline, context) lost its space and read as the removal of
    # '---', which is A's underline: A lost it and A's 'y' was changed, exit 0. The counts (2 new
    # lines) say one '-' line is a context line; read so, only '----' stands in the file.
    write_tree(tmp_path, {"f.md": ("A\n---\ny\nB\n----\ny\n", "100644")})
    result = apply_patch(diff("f.md", "@@ -5,2 +5,2 @@\n----\n-y\n+Y\n"), tmp_path, durable=False)
    assert content(tmp_path, "f.md") == "A\n---\ny\nB\n----\nY\n"
    assert [r.kind for r in result.plan.repairs] == ["context_without_space"]


def test_readings_by_the_counts_that_all_stand_in_the_file_are_refused_naming_them(
        tmp_path: Path) -> None:
    # Both '-' lines may be the context line that lost its space: '-x' and '--y' both stand.
    write_tree(tmp_path, {"f": ("-x\n-y\nx\n--y\n", "100644")})
    with pytest.raises(ParseError, match="read in several ways") as caught:
        apply(tmp_path, diff("f", "@@ -1,2 +1,2 @@\n-x\n--y\n+z\n"))
    assert "'-x' (patch line 4)" in caught.value.message and "'--y' (patch line 5)" in caught.value.message
    assert content(tmp_path, "f") == "-x\n-y\nx\n--y\n"


def test_a_hunk_without_counts_is_read_to_its_end_and_placed_by_content() -> None:
    text = diff("x", "@@ ... @@\n a\n-b\n+B\n c\n d\n-e\n+E\n f\n", "@@\n q\n-r\n+R\n",
                "@@ -9,2 +9,2 @@\n q\n-r\n+R\n")
    (hunk,) = parse(text).hunks
    assert isinstance(hunk, UpdateFile)
    first, second, third = hunk.chunks
    assert len(first.lines) == 8 and first.recounted and len(second.lines) == 3 and second.recounted
    assert len(third.lines) == 3 and not third.recounted


def test_blank_context_lines_without_their_space() -> None:
    (hunk,) = parse(diff("x", "@@ -1,3 +1,3 @@\n a\n\n-b\n+B\n")).hunks
    assert isinstance(hunk, UpdateFile)
    assert hunk.chunks[0].lines == ((" ", "a"), (" ", ""), ("-", "b"), ("+", "B"))


@pytest.mark.parametrize(("text", "error", "match"), [
    ("diff --git a/i.png b/i.png\nindex 1..2 100644\nGIT binary patch\nliteral 3\n", ParseError,
     "corrupt binary patch"),  # (cut short: its data does not inflate; tests/formats/test_git_binary.py)
    ("diff --git a/i.png b/i.png\nBinary files a/i.png and b/i.png differ\n", BinaryFileError, "i.png"),
    ("--- a/x\n+++ b/x\n@@ -1 +1 @@\n-a\n+b\nBinary files old/i.png and new/i.png differ\n",
     BinaryFileError, "new/i.png"),
    ("diff --git a/l b/l\nnew file mode 120000\n--- /dev/null\n+++ b/l\n@@ -0,0 +1 @@\n+t\n",
     UnsupportedChangeError, "symbolic link l"),
    ("diff --git a/sub b/sub\nindex 1..2 160000\n--- a/sub\n+++ b/sub\n@@ -1 +1 @@\n-Subproject commit 1\n"
     "+Subproject commit 2\n", UnsupportedChangeError, "submodule sub"),
    ("diff --cc x\n@@@ -1,1 -1,1 +1,1 @@@\n", UnsupportedChangeError, "combined"),
    ("--- a/x\n+++ b/x\n@@ -1 +1 @@\n", ParseError, "has no lines"),
    ("@@ -1 +1 @@\n-a\n+b\n--- a/x\n+++ b/x\n", ParseError, "before any file header"),
    ("--- a/x\n+++ b/x\n@@ -1 +1 @@\n\\ No newline at end of file\n", ParseError, "before any line"),
    ('--- "a/x\n+++ b/x\n@@ -1 +1 @@\n-a\n+b\n', ParseError, "no closing quote"),
])
def test_refused_with_a_clear_error(text: str, error: type[PatchtxError], match: str) -> None:
    with pytest.raises(error, match=match) as caught:
        parse(text)
    assert "Nothing was changed." in caught.value.message and "\n" not in caught.value.hint


def test_strip_beyond_the_path_is_refused() -> None:
    with pytest.raises(ParseError, match="cannot strip 3 leading components from 'a/x'"):
        parse(diff("x", "@@ -1 +1 @@\n-a\n+b\n"), strip=3)


def test_reverse_of_a_codex_patch_is_refused() -> None:
    with pytest.raises(ParseError, match="--reverse applies to unified diffs only"):
        parse("*** Begin Patch\n*** Add File: a\n+x\n*** End Patch\n", reverse=True)


# -- placement ------------------------------------------------------------------------------------
def test_the_stated_line_decides_between_repeated_context(tmp_path: Path) -> None:
    write_tree(tmp_path, {"x": ("a\nb\nc\n" * 3, "100644")})
    apply(tmp_path, diff("x", "@@ -4,3 +4,3 @@\n a\n-b\n+B\n c\n"))
    assert content(tmp_path, "x") == "a\nb\nc\na\nB\nc\na\nb\nc\n"


def test_the_nearest_match_wins_when_the_stated_line_is_off(tmp_path: Path) -> None:
    write_tree(tmp_path, {"x": ("t\nu\n" + "a\nb\nc\n" + "x\n" * 10 + "a\nb\nc\n", "100644")})
    # Stated at line 6: the copy at line 3 is 3 lines away, the one at line 16 is 10 away.
    apply(tmp_path, diff("x", "@@ -6,3 +6,3 @@\n a\n-b\n+B\n c\n"))
    assert content(tmp_path, "x").startswith("t\nu\na\nB\nc\nx\n")


def test_a_hunk_pinned_to_the_end_never_overlaps_the_hunk_before_it(tmp_path: Path) -> None:
    # The second hunk has less context after its change than before: it goes at the file's end,
    # where its old lines ('d', 'e') are the first hunk's own lines. git apply refuses this too.
    write_tree(tmp_path, {"f.txt": ("p\nq\nr\nc\nd\ne\n", "100644")})
    text = diff("f.txt", "@@ -2,3 +2,3 @@\n c\n-d\n+D\n e\n", "@@ -5,2 +5,2 @@\n d\n-e\n+E\n")
    for strict in (False, True):
        with pytest.raises(ContextNotFoundError):
            apply(tmp_path, text, strict=strict)
        assert content(tmp_path, "f.txt") == "p\nq\nr\nc\nd\ne\n"


@needs_git
def test_a_hunk_with_context_after_its_change_only_goes_at_its_stated_line_as_git_places_it(
        tmp_path: Path) -> None:
    # Issue 37, item 11: git pins a hunk to the file's start by its stated line alone (line 1 or
    # 0); one stated at line 3 with no context before its change goes at line 3 (it was refused
    # here: "must start at the file's first line").
    before = "a\nb\nc\nd\ne\n"
    text = diff("f", "@@ -3,2 +3,3 @@\n+X\n c\n d\n")
    (tmp_path / "ours").mkdir()
    (tmp_path / "git").mkdir()
    for side in ("ours", "git"):
        write_tree(tmp_path / side, {"f": (before, "100644")})
    apply(tmp_path / "ours", text)
    git_apply(tmp_path / "git", text)
    assert content(tmp_path / "ours", "f") == content(tmp_path / "git", "f") == "a\nb\nX\nc\nd\ne\n"


@needs_git
def test_a_hunk_with_context_after_its_change_only_stated_at_line_1_must_start_the_file(
        tmp_path: Path) -> None:
    # Stated at line 1, git pins it to the start: its lines further down do not take it.
    text = diff("f", "@@ -1,2 +1,3 @@\n+X\n c\n d\n")
    write_tree(tmp_path, {"f": ("a\nb\nc\nd\ne\n", "100644")})
    with pytest.raises(ContextNotFoundError, match="at the file's start"):
        apply(tmp_path, text)
    with pytest.raises(AssertionError, match="patch does not apply"):
        git_apply(tmp_path, text)
    assert content(tmp_path, "f") == "a\nb\nc\nd\ne\n"


def test_two_matches_equally_near_are_ambiguous(tmp_path: Path) -> None:
    write_tree(tmp_path, {"x": ("a\nb\nc\nz\na\nb\nc\n", "100644")})
    with pytest.raises(AmbiguousContextError, match="file lines 1, 5, and they are equally near") as caught:
        apply(tmp_path, diff("x", "@@ -3,3 +3,3 @@\n a\n-b\n+B\n c\n"))
    assert caught.value.details["candidate_lines"] == [1, 5]
    assert content(tmp_path, "x") == "a\nb\nc\nz\na\nb\nc\n"


def test_earlier_hunks_shift_later_ones(tmp_path: Path) -> None:
    # The file has 4 lines more at the top than the diff's: the second hunk's stated line is
    # shifted by the first hunk's offset, which picks the right copy of "k".
    text = "".join(f"top {i}\n" for i in range(5)) + "a\nb\nc\nk\nk\nk\nk\nk\n"
    write_tree(tmp_path, {"x": (text, "100644")})
    apply(tmp_path, diff("x", "@@ -1,3 +1,3 @@\n top 4\n-a\n+A\n b\n", "@@ -6 +6 @@\n-k\n+K\n"))
    assert content(tmp_path, "x").endswith("A\nb\nc\nk\nK\nk\nk\nk\n")


def test_no_fuzz(tmp_path: Path) -> None:
    write_tree(tmp_path, {"x": ("a  \nb\n", "100644")})
    with pytest.raises(ContextNotFoundError, match="must match the file exactly"):
        apply(tmp_path, diff("x", "@@ -1,2 +1,2 @@\n a\n-b\n+B\n"))


def test_old_side_without_final_newline_must_be_the_end(tmp_path: Path) -> None:
    write_tree(tmp_path, {"x": ("end\nmiddle\nend", "100644")})
    apply(tmp_path, diff("x", "@@ -3 +3 @@\n-end\n\\ No newline at end of file\n+END\n"))
    assert content(tmp_path, "x") == "end\nmiddle\nEND\n"


def test_crlf_file_keeps_its_endings(tmp_path: Path) -> None:
    (tmp_path / "x").write_bytes(b"a\r\nb\r\nc\r\n")
    apply(tmp_path, diff("x", "@@ -1,3 +1,4 @@\n a\n-b\n+B\n+B2\n c\n"))
    assert (tmp_path / "x").read_bytes() == b"a\r\nB\r\nB2\r\nc\r\n"


# -- model-style diffs ------------------------------------------------------------------------------
MODEL_DIFF = diff("x", "@@ ... @@\n line 4\n-line 5\n+LINE 5\n line 6\n line 7\n",
                  "@@ ... @@\n line 15\n-line 16\n+LINE 16\n line 17\n")
"""A model-written diff without counts (aider's '@@ ... @@'): placed by its content alone."""


def test_model_style_diff_applied_by_content(tmp_path: Path) -> None:
    write_tree(tmp_path, {"x": (LINES, "100644")})
    apply(tmp_path, MODEL_DIFF)
    assert content(tmp_path, "x") == LINES.replace("line 5\n", "LINE 5\n").replace("line 16\n", "LINE 16\n")


def test_model_style_diff_refused_with_candidates_when_not_determined(tmp_path: Path) -> None:
    text = LINES + LINES
    write_tree(tmp_path, {"x": (text, "100644")})
    with pytest.raises(AmbiguousContextError, match="it states no line") as caught:
        apply(tmp_path, MODEL_DIFF)
    assert caught.value.details["candidate_lines"] == [4, 24]
    assert content(tmp_path, "x") == text


def test_model_style_diff_that_matches_nowhere(tmp_path: Path) -> None:
    write_tree(tmp_path, {"x": (LINES, "100644")})
    with pytest.raises(ContextNotFoundError, match="line 99") as caught:
        apply(tmp_path, diff("x", "@@ ... @@\n line 4\n-line 99\n+x\n line 6\n line 7\n"))
    assert caught.value.line == 3


# -- files ------------------------------------------------------------------------------------------
def test_a_stale_delete_is_refused(tmp_path: Path) -> None:
    write_tree(tmp_path, {"x": ("changed since\n", "100644")})
    with pytest.raises(ContextNotFoundError, match="does not hold the lines the diff deletes"):
        apply(tmp_path, diff("x", "@@ -1 +0,0 @@\n-original\n").replace("+++ b/x", "+++ /dev/null"))
    assert content(tmp_path, "x") == "changed since\n"


def test_new_file_onto_an_existing_one_is_refused(tmp_path: Path) -> None:
    write_tree(tmp_path, {"x": ("here\n", "100644")})
    with pytest.raises(FileExistsPatchError):
        apply(tmp_path, "--- /dev/null\n+++ b/x\n@@ -0,0 +1 @@\n+new\n")


def test_policy_applies_to_unified_diffs(tmp_path: Path) -> None:
    write_tree(tmp_path, {"x": ("a\n", "100644")})
    with pytest.raises(PolicyError):
        apply(tmp_path, "--- a/x\n+++ /dev/null\n@@ -1 +0,0 @@\n-a\n", allow_delete=False)
    with pytest.raises(PolicyError):
        apply(tmp_path, "diff --git a/x b/y\nrename from x\nrename to y\n", allow_move=False)
    assert read_tree(tmp_path) == {"x": ("a\n", "100644")}


def test_the_boundary_applies_to_unified_diffs(tmp_path: Path) -> None:
    root = tmp_path / "root"
    root.mkdir()
    with pytest.raises(PatchtxError) as caught:
        apply(root, "--- /dev/null\n+++ b/../outside\n@@ -0,0 +1 @@\n+x\n")
    assert caught.value.kind == "unsafe_path"
    assert not (tmp_path / "outside").exists()


def test_reverse_of_a_plan_diff(tmp_path: Path) -> None:
    write_tree(tmp_path, {"x": (LINES, "100644")})
    forward = diff("x", "@@ -2,3 +2,3 @@\n line 2\n-line 3\n+LINE 3\n line 4\n")
    apply(tmp_path, forward)
    apply(tmp_path, forward, reverse=True)
    assert content(tmp_path, "x") == LINES


# -- the same transaction on every surface --------------------------------------------------------
def _cli(root: Path, *args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "patchtx.cli", *args, "--root", str(root)],
                          input=stdin, capture_output=True, text=True, timeout=60)


def test_cli_check_json_undo(tmp_path: Path) -> None:
    write_tree(tmp_path, {"x": (LINES, "100644")})
    (tmp_path / "p.diff").write_text(diff("x", "@@ -2,3 +2,3 @@\n line 2\n-line 3\n+LINE 3\n line 4\n"))
    checked = _cli(tmp_path, "check", "--json", str(tmp_path / "p.diff"))
    payload = json.loads(checked.stdout)
    assert payload["ok"] and payload["dry_run"] and payload["files"][0]["diff"].startswith(
        "diff --git a/x b/x\n--- a/x\n+++ b/x\n@@ -1,6 +1,6 @@\n")
    assert content(tmp_path, "x") == LINES
    applied = _cli(tmp_path, "apply", "--no-fsync", "-p", "1", str(tmp_path / "p.diff"))
    assert applied.returncode == 0, applied.stderr
    assert "LINE 3" in content(tmp_path, "x")
    undone = _cli(tmp_path, "undo", "--no-fsync")
    assert undone.returncode == 0, undone.stderr
    assert content(tmp_path, "x") == LINES
    # Undone, the file already is what the reversed diff makes: the same already-applied check as
    # for a Codex patch sent again.
    reversed_run = _cli(tmp_path, "apply", "--no-fsync", "-R", str(tmp_path / "p.diff"))
    assert reversed_run.returncode == 1 and "[already_applied]" in reversed_run.stderr
    assert content(tmp_path, "x") == LINES


def test_tool_call_takes_a_unified_diff(tmp_path: Path) -> None:
    from patchtx.agents.tool_call import apply_patch_call

    write_tree(tmp_path, {"x": (LINES, "100644")})
    outcome = apply_patch_call(diff("x", "@@ -20 +20 @@\n-line 20\n+last\n"), str(tmp_path))
    assert outcome.ok and outcome.payload["files"][0]["path"] == "x"
    assert content(tmp_path, "x").endswith("line 19\nlast\n")


def test_plan_keeps_the_format() -> None:
    assert parse(diff("x", "@@ -1 +1 @@\n-a\n+b\n")).format == "unified"
    assert parse("*** Begin Patch\n*** Add File: a\n+x\n*** End Patch\n").format == "codex"


def test_plan_of_a_unified_diff_changes_nothing(tmp_path: Path) -> None:
    write_tree(tmp_path, {"x": ("a\n", "100644")})
    planned = plan_patch(diff("x", "@@ -1 +1 @@\n-a\n+b\n"), tmp_path)
    assert planned.summary == "A 0, M 1, D 0, R 0" and content(tmp_path, "x") == "a\n"


def test_a_line_after_no_newline_on_its_side_is_refused() -> None:
    with pytest.raises(ParseError, match="a line follows"):
        parse(diff("x", "@@ -1,2 +1,2 @@\n-a\n\\ No newline at end of file\n-b\n+c\n+d\n"))
    (hunk,) = parse(diff("x", "@@ -1 +1 @@\n-a\n\\ No newline at end of file\n+b\n"
                             "\\ No newline at end of file\n")).hunks
    assert isinstance(hunk, UpdateFile)
    assert (hunk.chunks[0].old_unterminated, hunk.chunks[0].new_unterminated) == (True, True)


def test_a_plain_diff_names_one_file(tmp_path: Path) -> None:
    (hunk,) = parse("--- x.py.orig\t2024-01-01\n+++ x.py\t2024-01-02\n@@ -1 +1 @@\n-a\n+b\n").hunks
    assert isinstance(hunk, UpdateFile) and (hunk.path, hunk.move_to) == ("x.py", None)


def test_a_path_stripped_wrongly_names_the_fix(tmp_path: Path) -> None:
    write_tree(tmp_path, {"src/x.py": ("a\n", "100644")})
    with pytest.raises(PatchtxError, match="-p 0") as caught:
        apply(tmp_path, "--- src/x.py\n+++ src/x.py\n@@ -1 +1 @@\n-a\n+b\n")
    assert caught.value.kind == "file_not_found"
    apply(tmp_path, "--- src/x.py\n+++ src/x.py\n@@ -1 +1 @@\n-a\n+b\n", strip=0)
    assert content(tmp_path, "src/x.py") == "b\n"
    # A rename alone (no hunk) says so too, not "use '*** Add File:'".
    with pytest.raises(PatchtxError, match="-p 0") as renamed:
        apply(tmp_path, "diff --git a/gone.py b/new.py\nrename from gone.py\nrename to new.py\n")
    assert renamed.value.kind == "file_not_found" and "Add File" not in renamed.value.message


def test_a_hunk_stated_inside_the_previous_one_is_placed_by_content(tmp_path: Path) -> None:
    # Right counts, but both hunks say line 1: the second must match once after the first.
    text = "a\nb\nc\n" + "x\n" * 5 + "a\nb\nc\n" + "y\n" * 5 + "a\nb\nc\n"
    write_tree(tmp_path, {"x": (text, "100644")})
    two = diff("x", "@@ -1,3 +1,3 @@\n a\n-b\n+B\n c\n", "@@ -1,3 +1,3 @@\n a\n-b\n+B\n c\n")
    with pytest.raises(AmbiguousContextError, match="file lines 9, 17") as caught:
        apply(tmp_path, two)
    assert caught.value.details["candidate_lines"] == [9, 17]
    (hunk,) = parse(two).hunks
    assert isinstance(hunk, UpdateFile) and [c.recounted for c in hunk.chunks] == [False, True]


def test_an_added_file_keeps_the_diffs_crlf_lines(tmp_path: Path) -> None:
    apply(tmp_path, "--- /dev/null\n+++ b/req.http\n@@ -0,0 +1,2 @@\n+GET / HTTP/1.1\r\n+Host: x\r\n")
    assert (tmp_path / "req.http").read_bytes() == b"GET / HTTP/1.1\r\nHost: x\r\n"


def test_a_diff_saved_with_crlf_endings_applies(tmp_path: Path) -> None:
    write_tree(tmp_path, {"x": ("a\nb\n", "100644")})
    apply(tmp_path, diff("x", "@@ -1,2 +1,2 @@\n a\n-b\n+B\n").replace("\n", "\r\n"))
    assert content(tmp_path, "x") == "a\nB\n"


def test_extract_takes_a_unified_diff_out_of_a_reply(tmp_path: Path) -> None:
    from patchtx.errors import NoPatchFoundError

    write_tree(tmp_path, {"x": (LINES, "100644")})
    reply = ("Here is the fix:\n\n```diff\n" + diff("x", "@@ -2,3 +2,3 @@\n line 2\n-line 3\n+LINE 3\n line 4\n")
             + "```\n\nIt renames nothing.\n")
    apply(tmp_path, reply, extract=True)
    assert content(tmp_path, "x") == LINES.replace("line 3\n", "LINE 3\n")
    with pytest.raises(NoPatchFoundError, match="nor a unified diff"):
        apply(tmp_path, "No patch here, sorry.\n", extract=True)


SQL_DIFF = ("diff --git a/q.sql b/q.sql\n--- a/q.sql\n+++ b/q.sql\n@@ -1,2 +1,2 @@\n select 1;\n"
            "--- a/x\n+++ b/x\n")
Y_DIFF = "diff --git a/y b/y\n--- a/y\n+++ b/y\n@@ -1 +1 @@\n-y\n+Y\n"


@pytest.mark.parametrize("after", ["", Y_DIFF, " select 2;\n"])
def test_a_removed_comment_line_and_an_added_plus_line_are_not_a_file_header(tmp_path: Path,
                                                                              after: str) -> None:
    """A removed ``-- a/x`` (an SQL or Lua comment) right before an added ``++ b/x`` reads
    ``--- a/x`` / ``+++ b/x``: git takes them by the hunk's counts as body lines. They were read as
    the next file's header: the hunk lost its change and the patch applied without it, reporting
    success (or was refused, if no hunk followed)."""
    tail = "select 2;\n" if after.startswith(" select") else ""
    for name, text in {"q.sql": f"select 1;\n-- a/x\n{tail}", "y": "y\n", "x": "x\n"}.items():
        (tmp_path / name).write_text(text)
    diff = SQL_DIFF.replace("@@ -1,2 +1,2 @@", "@@ -1,3 +1,3 @@") + after if tail else SQL_DIFF + after
    apply_patch(diff, tmp_path)
    assert (tmp_path / "q.sql").read_text() == f"select 1;\n++ b/x\n{tail}"
    assert (tmp_path / "x").read_text() == "x\n"
    assert (tmp_path / "y").read_text() == ("Y\n" if after == Y_DIFF else "y\n")


@pytest.mark.parametrize("next_file", [Y_DIFF, Y_DIFF.split("\n", 1)[1]])
def test_a_hunk_with_too_large_counts_ends_at_the_next_file_and_is_refused(tmp_path: Path,
                                                                           next_file: str) -> None:
    """The next file starts at its ``diff --git`` line, or at ``---``, ``+++`` and a hunk header;
    ``--- a`` and ``+++ b`` before it are the hunk's lines, which then has fewer than its header
    counts: refused (lines lost?). With its counts right, it applies."""
    (tmp_path / "q.sql").write_text("select 1;\n-- a\n")
    (tmp_path / "y").write_text("y\n")
    diff = ("--- a/q.sql\n+++ b/q.sql\n@@ -1,5 +1,5 @@\n select 1;\n--- a\n+++ b\n" + next_file)
    with pytest.raises(ParseError, match="disagrees with its header's counts .5 old lines, 5 new; "
                                         "its body has 2 and 2."):
        apply_patch(diff, tmp_path)
    assert (tmp_path / "q.sql").read_text() == "select 1;\n-- a\n" and (tmp_path / "y").read_text() == "y\n"
    apply_patch(diff.replace("@@ -1,5 +1,5 @@", "@@ -1,2 +1,2 @@"), tmp_path)
    assert (tmp_path / "q.sql").read_text() == "select 1;\n++ b\n" and (tmp_path / "y").read_text() == "Y\n"


@pytest.mark.parametrize("text", [
    "--- /dev/null\n+++ /dev/null\n@@ -0,0 +1 @@\n+b\n",
    "diff --git \n",
    "diff --git a/x b/x\n--- /dev/null\n+++ /dev/null\n@@ -0,0 +1 @@\n+b\n",
    "diff --git a/x b/x\nnew file mode 100644\n--- /dev/null\n+++ /dev/null\n@@ -0,0 +1 @@\n+b\n",
], ids=["both-sides-dev-null", "empty-diff-git-line", "git-both-dev-null", "new-file-to-dev-null"])
def test_a_file_section_that_names_no_file_is_a_clean_parse_error(tmp_path: Path, text: str) -> None:
    """Neither side names a file (both /dev/null, or an empty diff --git line): one clear error,
    never a traceback (issue 38: without the check, these reached an assertion deeper down, and
    no test held it)."""
    with pytest.raises(ParseError) as caught:
        apply_patch(text, tmp_path)
    assert "names no file" in caught.value.message and "Nothing was changed" in caught.value.message
    assert list(tmp_path.iterdir()) == []
