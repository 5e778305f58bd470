"""Renderers: Codex success summary, the summary line, unified diffs, JSON and human reports."""

from __future__ import annotations

import json

import pytest

from patchtx.cli import codex_summary
from patchtx.errors import ContextNotFoundError, PatchtxError
from patchtx.model import ChangeKind, FileChange
from patchtx.render import error_json, file_entries, unified_diff
from patchtx.result import Result, human_report, result_json

SUCCESS = "Success. Updated the following files:\n"


def diff_of(tree, before: str | bytes, body: str, context: int = 3) -> str:
    tree.write("f.txt", before)
    planned = tree.plan(f"*** Update File: f.txt\n{body}")
    assert len(planned.changes) == 1
    return unified_diff(planned.changes[0], context=context)


# --------------------------------------------------------------------------------------------
# Codex summary (lib.rs 862-877, [R: 43])
# --------------------------------------------------------------------------------------------


class TestCodexSummary:
    def test_grouping_adds_then_updates_then_deletes(self, tree) -> None:
        tree.write("m.txt", "a\n")
        tree.write("d.txt", "d\n")
        tree.write("mv.txt", "m\n")
        planned = tree.plan(
            "*** Delete File: d.txt\n*** Update File: m.txt\n-a\n+b\n*** Add File: n.txt\n+n\n"
            "*** Update File: mv.txt\n*** Move to: sub/mv2.txt\n m\n*** Add File: z.txt\n+z"
        )
        assert codex_summary(planned) == (
            SUCCESS + "A n.txt\nA z.txt\nM m.txt\nM sub/mv2.txt\nD d.txt\n")

    def test_paths_are_spelled_as_in_the_patch(self, tree) -> None:
        tree.write("dir/a.txt", "a\n")
        planned = tree.plan(f"*** Update File: ./dir//a.txt\n-a\n+b\n"
                            f"*** Add File: {tree.root}/abs.txt\n+x\n*** Add File:   spaced.txt\n+y")
        assert codex_summary(planned) == (
            SUCCESS + f"A {tree.root}/abs.txt\nA   spaced.txt\nM ./dir//a.txt\n")

    def test_move_is_listed_by_its_destination_as_spelled(self, tree) -> None:  # scenario 004
        tree.write("old/name.txt", "old content\n")
        planned = tree.plan("*** Update File: old/name.txt\n*** Move to: ./renamed/dir/name.txt\n"
                            "@@\n-old content\n+new content")
        assert codex_summary(planned) == SUCCESS + "M ./renamed/dir/name.txt\n"

    def test_a_file_touched_twice_is_listed_twice(self, tree) -> None:  # [R: 24, 25]
        tree.write("b.txt", "b\n")
        planned = tree.plan("*** Add File: a.txt\n+1\n*** Update File: a.txt\n-1\n+2\n"
                            "*** Delete File: b.txt\n*** Add File: b.txt\n+new\n"
                            "*** Update File: a.txt\n-2\n+3")
        assert codex_summary(planned) == SUCCESS + "A a.txt\nA b.txt\nM a.txt\nM a.txt\nD b.txt\n"

    def test_move_onto_itself_is_an_update(self, tree) -> None:
        tree.write("a.txt", "1\n")
        planned = tree.plan("*** Update File: a.txt\n*** Move to: a.txt\n-1\n+2")
        assert codex_summary(planned) == SUCCESS + "M a.txt\n"


# --------------------------------------------------------------------------------------------
# Summary line "A x, M y, D z, R w"
# --------------------------------------------------------------------------------------------


class TestSummaryLine:
    def test_every_kind(self, tree) -> None:
        tree.write("m.txt", "a\n")
        tree.write("d.txt", "d\n")
        tree.write("mv.txt", "m\n")
        planned = tree.plan(
            "*** Update File: m.txt\n-a\n+b\n*** Delete File: d.txt\n*** Add File: n.txt\n+n\n"
            "*** Update File: mv.txt\n*** Move to: sub/mv2.txt\n m\n*** Add File: z.txt\n+z"
        )
        assert planned.summary == "A 2, M 1, D 1, R 1"
        assert planned.summary_counts() == {"A": 2, "M": 1, "D": 1, "R": 1}
        assert Result(planned, committed=False, dry_run=True).summary == "A 2, M 1, D 1, R 1"

    def test_nothing(self, tree) -> None:  # (an applied patch skipped: a patch that changes nothing is refused)
        tree.write("a.txt", "a\nb\n")
        assert tree.plan("*** Update File: a.txt\n a\n-x\n+b", skip_applied=True).summary == \
            "A 0, M 0, D 0, R 0"

    def test_add_then_update_is_one_add(self, tree) -> None:
        planned = tree.plan("*** Add File: a.txt\n+1\n*** Update File: a.txt\n-1\n+2")
        assert planned.summary == "A 1, M 0, D 0, R 0"

    def test_delete_then_add_is_one_update(self, tree) -> None:
        tree.write("a.txt", "old\n")
        assert tree.plan("*** Delete File: a.txt\n*** Add File: a.txt\n+new").summary == \
            "A 0, M 1, D 0, R 0"

    def test_chain_of_moves_is_one_rename(self, tree) -> None:
        tree.write("a.txt", "a\n")
        planned = tree.plan("*** Update File: a.txt\n*** Move to: b.txt\n a\n"
                            "*** Update File: b.txt\n*** Move to: c.txt\n a")
        assert planned.summary == "A 0, M 0, D 0, R 1"

    def test_overwriting_move_is_a_rename(self, tree) -> None:
        tree.write("a.txt", "a\n")
        tree.write("b.txt", "b\n")
        planned = tree.plan("*** Update File: a.txt\n*** Move to: b.txt\n a", allow_overwrite=True)
        assert planned.summary == "A 0, M 0, D 0, R 1"


# --------------------------------------------------------------------------------------------
# Unified diffs (file_update_tests.rs with context radius 1; defaults)
# --------------------------------------------------------------------------------------------

HEAD = "diff --git a/f.txt b/f.txt\n--- a/f.txt\n+++ b/f.txt\n"


class TestUnifiedDiff:
    def test_two_chunks_make_one_hunk(self, tree) -> None:  # test_unified_diff
        diff = diff_of(tree, "foo\nbar\nbaz\nqux\n", "@@\n foo\n-bar\n+BAR\n@@\n baz\n-qux\n+QUX", 1)
        assert diff == HEAD + "@@ -1,4 +1,4 @@\n foo\n-bar\n+BAR\n baz\n-qux\n+QUX\n"

    def test_first_line_replacement(self, tree) -> None:
        diff = diff_of(tree, "foo\nbar\nbaz\n", "@@\n-foo\n+FOO\n bar", 1)
        assert diff == HEAD + "@@ -1,2 +1,2 @@\n-foo\n+FOO\n bar\n"

    def test_last_line_replacement(self, tree) -> None:
        diff = diff_of(tree, "foo\nbar\nbaz\n", "@@\n bar\n-baz\n+BAZ", 1)
        assert diff == HEAD + "@@ -2,2 +2,2 @@\n bar\n-baz\n+BAZ\n"

    def test_insert_at_eof(self, tree) -> None:
        diff = diff_of(tree, "foo\nbar\nbaz\n", "@@\n+quux\n*** End of File", 1)
        assert diff == HEAD + "@@ -3 +3,2 @@\n baz\n+quux\n"

    def test_interleaved_changes(self, tree) -> None:
        body = "@@\n a\n-b\n+B\n@@\n c\n d\n-e\n+E\n@@\n f\n+g\n*** End of File"
        diff = diff_of(tree, "a\nb\nc\nd\ne\nf\n", body, 1)
        assert diff == HEAD + "@@ -1,6 +1,7 @@\n a\n-b\n+B\n c\n d\n-e\n+E\n f\n+g\n"

    def test_default_context_is_three(self, tree) -> None:
        source = "".join(f"{i}\n" for i in range(1, 11))
        diff = diff_of(tree, source, "-5\n+five")
        assert diff == HEAD + "@@ -2,7 +2,7 @@\n 2\n 3\n 4\n-5\n+five\n 6\n 7\n 8\n"

    def test_separate_hunks(self, tree) -> None:
        source = "".join(f"{i}\n" for i in range(1, 21))
        diff = diff_of(tree, source, "@@\n-2\n+two\n@@\n-19\n+nineteen", 1)
        assert diff == HEAD + ("@@ -1,3 +1,3 @@\n 1\n-2\n+two\n 3\n"
                               "@@ -18,3 +18,3 @@\n 18\n-19\n+nineteen\n 20\n")

    def test_missing_final_newline_is_marked(self, tree) -> None:
        diff = diff_of(tree, b"a\nb", "-b\n+B", 1)
        assert diff == HEAD + ("@@ -1,2 +1,2 @@\n a\n-b\n\\ No newline at end of file\n"
                               "+B\n\\ No newline at end of file\n")

    def test_crlf_lines_are_shown_with_their_cr(self, tree) -> None:
        diff = diff_of(tree, b"a\r\nb\r\n", "-b\n+B", 1)
        assert diff == HEAD + "@@ -1,2 +1,2 @@\n a\r\n-b\r\n+B\r\n"

    def test_add(self) -> None:
        change = FileChange(ChangeKind.ADD, "n/x.txt", "n/x.txt", None, b"a\nb\n")
        assert unified_diff(change) == ("diff --git a/n/x.txt b/n/x.txt\nnew file mode 100644\n"
                                        "--- /dev/null\n+++ b/n/x.txt\n@@ -0,0 +1,2 @@\n+a\n+b\n")

    def test_add_with_overwrite_diffs_against_the_old_file(self, tree) -> None:
        tree.write("x.txt", "old\n")
        planned = tree.plan("*** Add File: x.txt\n+new", allow_overwrite=True)
        assert unified_diff(planned.changes[0]) == (
            "diff --git a/x.txt b/x.txt\n--- a/x.txt\n+++ b/x.txt\n@@ -1 +1 @@\n-old\n+new\n")

    def test_delete(self, tree) -> None:
        tree.write("x.txt", "gone\n")
        planned = tree.plan("*** Delete File: x.txt")
        assert unified_diff(planned.changes[0]) == (
            "diff --git a/x.txt b/x.txt\ndeleted file mode 100644\n--- a/x.txt\n+++ /dev/null\n"
            "@@ -1 +0,0 @@\n-gone\n")

    def test_move_with_changes(self, tree) -> None:
        tree.write("old.txt", "a\nb\n")
        planned = tree.plan("*** Update File: old.txt\n*** Move to: new.txt\n a\n-b\n+B")
        assert unified_diff(planned.changes[0]) == (
            "diff --git a/old.txt b/new.txt\nrename from old.txt\nrename to new.txt\n--- a/old.txt\n+++ b/new.txt\n"
            "@@ -1,2 +1,2 @@\n a\n-b\n+B\n")

    def test_pure_move(self, tree) -> None:
        tree.write("old.txt", "a\n")
        planned = tree.plan("*** Update File: old.txt\n*** Move to: new.txt\n a")
        assert unified_diff(planned.changes[0]) == (
            "diff --git a/old.txt b/new.txt\nrename from old.txt\nrename to new.txt\n")

    def test_no_change_no_diff(self) -> None:  # (a Transaction's write of the bytes a file holds)
        assert unified_diff(FileChange(ChangeKind.UPDATE, "f.txt", "f.txt", b"a\n", b"a\n")) == ""

    @pytest.mark.parametrize("separator", ["\x0c", "\x0b", "\x1c", "\x85", "\u2028", "\u2029"])
    def test_only_line_feeds_and_carriage_returns_split_lines(self, tree, separator: str) -> None:
        diff = diff_of(tree, f"a{separator}z\nb\nc\n", "-b\n+B", 1)
        assert diff == HEAD + f"@@ -1,3 +1,3 @@\n a{separator}z\n-b\n+B\n c\n"

    def test_a_cr_only_file_is_one_line_to_git(self, tree) -> None:
        """git reads lines at LF only: a file of lone CRs is one line without a final newline
        (split at each CR, the diff was one git called corrupt)."""
        diff = diff_of(tree, b"a\rb\rc\r", "-b\n+B", 1)
        assert diff == HEAD + ("@@ -1 +1 @@\n-a\rb\rc\r\n\\ No newline at end of file\n"
                               "+a\rB\rc\r\n\\ No newline at end of file\n")


# --------------------------------------------------------------------------------------------
# JSON and human reports
# --------------------------------------------------------------------------------------------


class TestReports:
    def test_file_entries(self, tree) -> None:
        tree.write("m.txt", "a\n")
        tree.write("mv.txt", "m\n")
        planned = tree.plan("*** Update File: m.txt\n-a\n+b\n*** Add File: n.txt\n+n\n"
                            "*** Update File: mv.txt\n*** Move to: sub/mv2.txt\n m\n"
                            "*** Delete File: n.txt")
        entries = file_entries(planned)
        assert [(e["path"], e["status"], e.get("from")) for e in entries] == [
            ("m.txt", "modified", None), ("n.txt", "added", None), ("sub/mv2.txt", "moved", "mv.txt"),
            ("n.txt", "deleted", None)]
        assert entries[0]["diff"] == "diff --git a/m.txt b/m.txt\n--- a/m.txt\n+++ b/m.txt\n@@ -1 +1 @@\n-a\n+b\n"
        assert all("diff" not in e for e in file_entries(planned, with_diff=False))

    def test_result_json(self, tree) -> None:
        planned = tree.plan("*** Add File: n.txt\n+n")
        out = result_json(Result(planned, committed=False, dry_run=True))
        assert out["ok"] is True and out["dry_run"] is True
        assert out["summary"] == "A 1, M 0, D 0, R 0"
        assert out["counts"] == {"A": 1, "M": 0, "D": 0, "R": 0}
        assert out["files"][0]["path"] == "n.txt"
        assert out["transaction"] is None and out["error"] is None and out["recovered"] is None
        json.dumps(out)  # serialisable as is
        committed = result_json(Result(planned, committed=True, transaction_id="t-1"))
        assert committed["transaction"] == "t-1" and committed["dry_run"] is False

    def test_human_report(self, tree) -> None:
        tree.write("mv.txt", "m\n")
        planned = tree.plan("*** Add File: n.txt\n+n\n*** Update File: mv.txt\n*** Move to: to.txt\n m")
        text = human_report(Result(planned, committed=False, dry_run=True))
        assert text.startswith("Would apply: A 1, M 0, D 0, R 1\n  A n.txt\n  R mv.txt -> to.txt\n")
        assert "+++ b/n.txt" in text
        assert human_report(Result(planned, committed=True), diffs=False) == (
            "Applied: A 1, M 0, D 0, R 1\n  A n.txt\n  R mv.txt -> to.txt\n")

    def test_error_json(self, tree) -> None:
        tree.write("f.txt", "a\n")
        exc = tree.fail("*** Update File: f.txt\n-missing")
        assert isinstance(exc, ContextNotFoundError)
        out = error_json(exc)
        assert out["ok"] is False
        error = out["error"]
        assert error["kind"] == "context_not_found"
        assert error["changed"] is False
        assert error["patch_line"] == 3
        assert error["path"] == tree.path("f.txt")  # without a root, as the error names it
        assert error_json(exc, root=tree.path(""))["error"]["path"] == "f.txt"
        assert error["message"] == exc.message
        assert "Nothing was changed." in error["message"]
        json.dumps(out)

    def test_error_message_layout(self) -> None:
        one_line = PatchtxError("Something failed.", hint="Do this.")
        assert one_line.message == "Something failed. Nothing was changed. Do this."
        multi = PatchtxError("Failed to find expected lines in x:\na\nb", hint="Look.")
        assert multi.message == "Failed to find expected lines in x:\na\nb\nNothing was changed. Look."
        assert str(multi) == multi.message
