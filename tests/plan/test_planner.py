"""Planner on real temporary trees: DESIGN §2 differences, combining operations, Codex library tests.

Every plan is checked (by the ``tree`` fixture) to leave the tree exactly as it was.
"""

from __future__ import annotations

import copy
import os
import pickle
import stat
from pathlib import Path

import pytest

import patchtx
from patchtx.api import plan_patch
from patchtx.cli import codex_summary
from patchtx.errors import (
    AmbiguousContextError,
    BinaryFileError,
    ContextNotFoundError,
    EmptyPatchError,
    EncodingPatchError,
    FileExistsPatchError,
    FileNotFoundPatchError,
    HunkParseError,
    NotARegularFileError,
    PolicyError,
    UnsafePathError,
)
from patchtx.formats.codex import parse
from patchtx.model import ChangeKind, Plan

CRLF_FIRST = "\r\n"


def targets(planned: Plan) -> dict[str, bytes | None]:
    return {t.path: t.after for t in planned.targets}


def target(planned: Plan, path: str):
    matches = [t for t in planned.targets if t.path == path]
    assert len(matches) == 1, planned.targets
    return matches[0]


def assert_nothing_changed(exc) -> None:
    assert "Nothing was changed." in exc.message
    assert exc.changed is False


# --------------------------------------------------------------------------------------------
# Overwriting (DESIGN §2: refused by default, allowed by an explicit option)
# --------------------------------------------------------------------------------------------


class TestOverwrite:
    def test_add_onto_existing_file_is_refused(self, tree) -> None:  # scenario 011 differs
        tree.write("duplicate.txt", "old content\n")
        exc = tree.fail("*** Add File: duplicate.txt\n+new content")
        assert isinstance(exc, FileExistsPatchError)
        assert exc.kind == "file_exists"
        assert exc.line == 2
        assert "duplicate.txt" in exc.headline and "already exists" in exc.headline
        assert "overwrit" in exc.hint
        assert_nothing_changed(exc)

    def test_add_onto_existing_file_with_overwrite(self, tree) -> None:  # scenario 011
        tree.write("duplicate.txt", "old content\n")
        planned = tree.plan("*** Add File: duplicate.txt\n+new content", allow_overwrite=True)
        assert targets(planned) == {"duplicate.txt": b"new content\n"}
        assert target(planned, "duplicate.txt").before == b"old content\n"
        change = planned.changes[0]
        assert (change.kind, change.overwrote) == (ChangeKind.ADD, b"old content\n")
        assert codex_summary(planned) == "Success. Updated the following files:\nA duplicate.txt\n"

    def test_move_onto_existing_file_is_refused(self, tree) -> None:  # scenario 010 differs
        tree.write("old/name.txt", "from\n")
        tree.write("renamed/dir/name.txt", "existing\n")
        exc = tree.fail("*** Update File: old/name.txt\n*** Move to: renamed/dir/name.txt\n"
                        "@@\n-from\n+new")
        assert isinstance(exc, FileExistsPatchError)
        assert exc.line == 2
        assert "renamed/dir/name.txt" in exc.headline
        assert_nothing_changed(exc)

    def test_move_onto_existing_file_with_overwrite(self, tree) -> None:  # scenario 010
        tree.write("old/name.txt", "from\n")
        tree.write("old/other.txt", "unrelated file\n")
        tree.write("renamed/dir/name.txt", "existing\n")
        planned = tree.plan("*** Update File: old/name.txt\n*** Move to: renamed/dir/name.txt\n"
                            "@@\n-from\n+new", allow_overwrite=True)
        assert targets(planned) == {"old/name.txt": None, "renamed/dir/name.txt": b"new\n"}
        assert planned.changes[0].overwrote == b"existing\n"
        assert planned.remove_dirs == ()

    def test_add_onto_a_file_deleted_earlier_is_fine(self, tree) -> None:  # [R: 25]
        tree.write("a.txt", "old\n")
        planned = tree.plan("*** Delete File: a.txt\n*** Add File: a.txt\n+new")
        assert targets(planned) == {"a.txt": b"new\n"}
        assert [c.kind for c in planned.changes] == [ChangeKind.DELETE, ChangeKind.ADD]

    def test_move_onto_a_file_deleted_earlier_is_fine(self, tree) -> None:
        tree.write("a.txt", "a\n")
        tree.write("b.txt", "b\n")
        planned = tree.plan("*** Delete File: b.txt\n*** Update File: a.txt\n*** Move to: b.txt\n a")
        assert targets(planned) == {"a.txt": None, "b.txt": b"a\n"}

    def test_add_onto_a_file_added_earlier_is_refused(self, tree) -> None:
        exc = tree.fail("*** Add File: n.txt\n+1\n*** Add File: n.txt\n+2")
        assert isinstance(exc, FileExistsPatchError)
        assert exc.line == 4

    def test_add_onto_a_non_utf8_file_with_overwrite(self, tree) -> None:
        # test_unreadable_destinations_return_inexact_delta: Add does not read what it replaces.
        tree.write("latin1.txt", b"caf\xe9\n")
        planned = tree.plan("*** Add File: latin1.txt\n+cafe", allow_overwrite=True)
        assert targets(planned) == {"latin1.txt": b"cafe\n"}

    def test_move_onto_a_non_utf8_file_with_overwrite(self, tree) -> None:
        tree.write("src.txt", "s\n")
        tree.write("latin1.txt", b"caf\xe9\n")
        planned = tree.plan("*** Update File: src.txt\n*** Move to: latin1.txt\n s",
                            allow_overwrite=True)
        assert targets(planned) == {"src.txt": None, "latin1.txt": b"s\n"}


class TestMoveOntoItself:
    @pytest.mark.parametrize("spelling", ["a.txt", "./a.txt", "sub/../a.txt"])
    def test_never_loses_the_file(self, tree, spelling: str) -> None:  # [R: 03] differs
        tree.write("a.txt", "one\n")
        patch = f"*** Update File: a.txt\n*** Move to: {spelling}\n-one\n+two"
        if ".." in spelling:
            assert isinstance(tree.fail(patch), UnsafePathError)
            return
        planned = tree.plan(patch)
        assert targets(planned) == {"a.txt": b"two\n"}
        assert [c.kind for c in planned.changes] == [ChangeKind.UPDATE]

    def test_onto_a_link_alias_is_refused_like_any_move_of_a_link(self, tree) -> None:
        tree.write("real.txt", "one\n")
        tree.symlink("alias.txt", "real.txt")
        error = tree.fail("*** Update File: real.txt\n*** Move to: alias.txt\n-one\n+two")
        assert isinstance(error, UnsafePathError) and "symbolic link" in error.message

    def test_through_a_linked_folder_is_an_update_keeping_the_link(self, tree) -> None:
        # Codex writes s/a.txt (the file itself) and then removes a.txt: the file is lost.
        tree.write("a.txt", "one\n")
        tree.symlink("s", ".")
        planned = tree.plan("*** Update File: a.txt\n*** Move to: s/a.txt\n-one\n+two")
        assert targets(planned) == {"a.txt": b"two\n"}
        assert [c.kind for c in planned.changes] == [ChangeKind.UPDATE]

    def test_context_only_move_onto_itself_changes_nothing_and_is_refused(self, tree) -> None:
        tree.write("a.txt", "one\n")
        error = tree.fail("*** Update File: a.txt\n*** Move to: a.txt\n one")
        assert error.kind == "no_change" and "leaves the file exactly as it is" in error.message


# --------------------------------------------------------------------------------------------
# Paths (DESIGN §2: absolute, '..' and symlinks leaving the root are refused)
# --------------------------------------------------------------------------------------------


class TestPaths:
    @pytest.mark.parametrize(
        "path", ["../escaped.txt", "a/../../escaped.txt", "a/../b.txt", "a/..", ".."]
    )
    @pytest.mark.parametrize("operation", ["add", "delete", "update", "move"])
    def test_dotdot_is_refused(self, tree, path: str, operation: str) -> None:  # [R: 44] differs
        tree.write("f.txt", "x\n")
        body = {
            "add": f"*** Add File: {path}\n+x",
            "delete": f"*** Delete File: {path}",
            "update": f"*** Update File: {path}\n-x",
            "move": f"*** Update File: f.txt\n*** Move to: {path}\n x",
        }[operation]
        exc = tree.fail(body)
        assert isinstance(exc, UnsafePathError)
        assert exc.kind == "unsafe_path"
        assert exc.line == 2
        assert path in exc.headline
        assert_nothing_changed(exc)

    def test_absolute_path_outside_the_root_is_refused(self, tree, outside) -> None:
        secret = outside / "secret.txt"
        for body in (f"*** Add File: {outside}/new.txt\n+x", f"*** Delete File: {secret}",
                     f"*** Update File: {secret}\n-secret\n+x"):
            exc = tree.fail(body)
            assert isinstance(exc, UnsafePathError), body
            assert "outside" in exc.headline
        assert secret.read_bytes() == b"secret\n"

    def test_absolute_path_inside_the_root_is_accepted(self, tree) -> None:
        # test_add_file_hunk_creates_file_with_contents / ..._accept_relative_and_absolute_paths
        planned = tree.plan(f"*** Add File: {tree.root}/sub/new.txt\n+ab\n+cd")
        assert targets(planned) == {"sub/new.txt": b"ab\ncd\n"}
        assert codex_summary(planned) == (
            f"Success. Updated the following files:\nA {tree.root}/sub/new.txt\n")

    def test_root_given_through_a_symlink(self, tree, tmp_path) -> None:
        from patchtx.formats.codex import parse as parse_patch
        from patchtx.plan.planner import plan as plan_patch_at

        tree.write("a.txt", "a\n")
        alias = tmp_path / "alias"
        os.symlink(tree.root, alias)
        text = f"*** Begin Patch\n*** Update File: {alias}/a.txt\n-a\n+b\n*** End Patch"
        planned = plan_patch_at(parse_patch(text), str(alias))
        assert planned.root == str(tree.root)
        assert targets(planned) == {"a.txt": b"b\n"}

    def test_the_root_itself_is_refused_with_codex_texts(self, tree) -> None:
        root = os.path.realpath(tree.root)
        added = tree.fail(f"*** Add File: {tree.root}\n+x")
        assert isinstance(added, NotARegularFileError) and added.headline == f"Failed to write file {root}"
        assert tree.fail("*** Delete File: .").headline == f"Failed to delete file {root}"
        updated = tree.fail("*** Update File: .\n-a\n+b")
        assert updated.headline == f"Failed to read file to update {root}: path `{root}` is not a file"

    @pytest.mark.parametrize("operation", ["add", "delete", "update", "move-from", "move-to"])
    def test_symlinked_folder_leading_outside_is_refused(self, tree, outside, operation: str) -> None:
        tree.symlink("out", str(outside))
        tree.write("f.txt", "x\n")
        body = {
            "add": "*** Add File: out/new.txt\n+x",
            "delete": "*** Delete File: out/secret.txt",
            "update": "*** Update File: out/secret.txt\n-secret\n+x",
            "move-from": "*** Update File: out/secret.txt\n*** Move to: in.txt\n secret",
            "move-to": "*** Update File: f.txt\n*** Move to: out/moved.txt\n x",
        }[operation]
        exc = tree.fail(body)
        assert isinstance(exc, UnsafePathError)
        assert "symbolic link" in exc.headline and "outside" in exc.headline
        assert sorted(os.listdir(outside)) == ["secret.txt"]

    def test_symlinked_file_leading_outside_is_refused(self, tree, outside) -> None:
        tree.symlink("link.txt", str(outside / "secret.txt"))
        for body in ("*** Update File: link.txt\n-secret\n+x", "*** Delete File: link.txt",
                     "*** Add File: link.txt\n+x"):
            exc = tree.fail(body, allow_overwrite=True)
            assert isinstance(exc, UnsafePathError), body

    def test_update_through_a_link_inside_edits_the_target(self, tree) -> None:
        tree.write("real.txt", "r\n")
        tree.symlink("link.txt", "real.txt")
        tree.symlink("dirlink", ".")
        assert targets(tree.plan("*** Update File: link.txt\n-r\n+R")) == {"real.txt": b"R\n"}
        assert targets(tree.plan("*** Update File: dirlink/real.txt\n-r\n+R")) == {"real.txt": b"R\n"}

    def test_links_themselves_are_not_deleted_or_moved(self, tree) -> None:
        tree.write("real.txt", "r\n")
        tree.symlink("link.txt", "real.txt")
        for body in ("*** Delete File: link.txt", "*** Update File: link.txt\n*** Move to: x.txt\n r"):
            exc = tree.fail(body)
            assert isinstance(exc, UnsafePathError)
            assert "symbolic link" in exc.headline

    @pytest.mark.parametrize(
        ("path", "why"),
        [(".git/config", ".git"), ("sub/.git/HEAD", ".git"), (".patchtx/journal", ".patchtx"),
         ("a\\b.txt", "backslash"), ("C:/x.txt", "drive")],
    )
    def test_reserved_and_foreign_paths_are_refused(self, tree, path: str, why: str) -> None:
        exc = tree.fail(f"*** Add File: {path}\n+x")
        assert isinstance(exc, UnsafePathError)
        assert why in exc.headline

    def test_nul_in_path_is_refused(self, tree) -> None:
        exc = tree.fail("*** Add File: a\x00b\n+x")
        assert isinstance(exc, UnsafePathError)

    def test_tilde_and_spaces_are_literal(self, tree) -> None:  # [R: 45, 22]
        planned = tree.plan("*** Add File: ~/tilde.txt\n+x\n*** Add File:   spaced.txt\n+y")
        assert targets(planned) == {"~/tilde.txt": b"x\n", "  spaced.txt": b"y\n"}

    def test_redundant_separators_are_normalised(self, tree) -> None:
        planned = tree.plan("*** Add File: ./a//b/./c.txt\n+x")
        assert targets(planned) == {"a/b/c.txt": b"x\n"}
        assert planned.changes[0].spelled == "./a//b/./c.txt"


# --------------------------------------------------------------------------------------------
# Content: final newline, BOM, context from the file, endings, modes
# --------------------------------------------------------------------------------------------


class TestContent:
    @pytest.mark.parametrize(
        ("before", "body", "after"),
        [
            (b"a\nb", " a\n-b\n+B", b"a\nB"),  # last line replaced
            (b"a\nb\nc", "-b\n+B", b"a\nB\nc"),  # middle line
            (b"a\nb", "@@\n+c", b"a\nb\nc"),  # EOF append [R: 33] differs
            (b"a\nb", " b\n+c\n*** End of File", b"a\nb\nc"),
            (b"a\nb", " a\n-b", b"a"),  # last line removed
            (b"one\r\ntwo", "-one\n+ONE", b"ONE\r\ntwo"),  # ..._uses_crlf_for_new_trailing_newline
            (b"A\r\nb", "@@\n-A\n+a", b"a\r\nb"),  # [R: 54] differs
            (b"only", "-only\n+new", b"new"),
            (b"only", "-only", b""),
            (b"a\nb\n", "@@\n+c", b"a\nb\nc\n"),
            (b"a\n\n", "-a\n+b", b"b\n\n"),  # trailing blank kept [R: 01, 74]
            (b"", "@@\n+x", b"x\n"),  # [R: 32]
            (b"a\nb\n", "-a\n-b", b""),  # [R: 31]
            # A blank line left last: it ends with its line break, or it would be no line at all.
            (b"a\nb", " b\n+", b"a\nb\n\n"),
            (b"a\n\nb", " a\n \n-b", b"a\n\n"),
            (b"a\r\nb", "@@\n+z\n+\n*** End of File", b"a\r\nb\r\nz\r\n\r\n"),
        ],
    )
    def test_final_newline_state_is_kept(self, tree, before: bytes, body: str, after: bytes) -> None:
        tree.write("f.txt", before)
        assert tree.after(f"*** Update File: f.txt\n{body}") == after

    @pytest.mark.parametrize("before", [b"a\nb\n", b"a\r\nb\r\n", b"a\nb"])
    def test_lines_replaced_by_themselves_are_refused_as_no_change(self, tree, before: bytes) -> None:
        # Codex lists the file as modified; nothing is: refused, naming the section.
        tree.write("f.txt", before)
        error = tree.fail("*** Update File: f.txt\n-a\n+a")
        assert error.kind == "no_change" and error.line == 3
        assert "removes lines and adds the same lines back" in error.message
        assert "Nothing was changed." in error.message

    def test_context_only_chunk_is_refused_as_no_change(self, tree) -> None:  # [R: 26, 77] differ
        tree.write("f.txt", b"a\nb")
        error = tree.fail("*** Update File: f.txt\n a")
        assert error.kind == "no_change" and "context lines only" in error.message
        # A pure rename's one context-only section is Codex's way to write a rename: a change.
        moved = tree.plan("*** Update File: f.txt\n*** Move to: g.txt\n a")
        assert targets(moved) == {"f.txt": None, "g.txt": b"a\nb"}

    def test_a_no_op_section_beside_a_change_is_refused(self, tree) -> None:
        tree.write("f.txt", b"a\nb\nc\n")
        error = tree.fail("*** Update File: f.txt\n@@\n-a\n+A\n@@\n c")
        assert error.kind == "no_change" and error.line == 6

    def test_operations_that_undo_one_another_are_refused_as_no_change(self, tree) -> None:
        tree.write("f.txt", b"a\nb\n")
        error = tree.fail("*** Update File: f.txt\n-a\n+A\n*** Update File: f.txt\n-A\n+a")
        assert error.kind == "no_change" and "2 operations on f.txt" in error.message

    def test_a_no_op_refusal_comes_after_the_refusals_codex_gives(self, tree) -> None:
        tree.write("f.txt", b"a\nb\n")
        error = tree.fail("*** Update File: f.txt\n a\n*** Update File: f.txt\n-x\n+y")
        assert error.kind == "context_not_found"

    @pytest.mark.parametrize("ending", ["\n", "\r\n"])
    def test_bom_is_kept_and_ignored_for_matching(self, tree, ending: str) -> None:
        tree.write("f.txt", ("\ufefffirst" + ending + "second" + ending).encode())
        assert tree.after("*** Update File: f.txt\n-first\n+FIRST") == \
            ("\ufeffFIRST" + ending + "second" + ending).encode()
        assert tree.after("*** Update File: f.txt\n@@ first\n+inserted") == \
            ("\ufefffirst" + ending + "inserted" + ending + "second" + ending).encode()

    def test_bom_kept_when_the_first_line_goes(self, tree) -> None:
        tree.write("f.txt", "\ufeffa\nb\n")
        assert tree.after("*** Update File: f.txt\n-a") == "\ufeffb\n".encode()

    def test_context_lines_are_kept_as_in_the_file(self, tree) -> None:  # DESIGN §2, [R: 20]
        tree.write("f.txt", "    indented  \r\n\u201cquoted\u201d\n\tlast\r\n")
        result = tree.after("*** Update File: f.txt\n     indented\n \"quoted\"\n+added\n \tlast")
        assert result == "    indented  \r\n\u201cquoted\u201d\nadded\r\n\tlast\r\n".encode()

    def test_removed_lines_may_match_loosely(self, tree) -> None:
        tree.write("f.txt", "keep\n  it\u2019s gone \r\nend\n")
        assert tree.after("*** Update File: f.txt\n keep\n-  it's gone\n+new") == b"keep\nnew\nend\n"

    def test_crlf_file_stays_crlf(self, tree) -> None:  # scenario 023, [R: 04]
        tree.write("f.txt", b"one\r\ntwo\r\nthree\r\n")
        body = "@@\n-one\n+ONE\n two\n+between\n three"
        assert tree.after(f"*** Update File: f.txt\n{body}") == b"ONE\r\ntwo\r\nbetween\r\nthree\r\n"

    def test_crlf_inserted_blank_line_gets_crlf(self, tree) -> None:
        # test_apply_patch_cli_preserves_crlf_from_target_file
        tree.write("f.txt", b"one\r\ntwo\r\n")
        assert tree.after("*** Update File: f.txt\n one\n+\n+between\n two") == \
            b"one\r\n\r\nbetween\r\ntwo\r\n"

    def test_mixed_endings_untouched_lines_keep_theirs(self, tree) -> None:  # scenario 024
        tree.write("f.txt", b"one\r\ntwo\rthree\nfour\r\n")
        body = "@@\n one\n two\n-three\n+THREE\n four"
        assert tree.after(f"*** Update File: f.txt\n{body}") == b"one\r\ntwo\rTHREE\r\nfour\r\n"

    def test_added_lines_take_the_dominant_ending_not_the_first(self, tree) -> None:
        tree.write("f.txt", b"a\nb\r\nc\r\nd\r\n")
        assert tree.after("*** Update File: f.txt\n a\n+x") == b"a\nx\r\nb\r\nc\r\nd\r\n"
        tree.write("f.txt", b"a\r\nb\nc\nd\n")
        assert tree.after("*** Update File: f.txt\n a\n+x") == b"a\r\nx\nb\nc\nd\n"

    def test_cr_only_file_keeps_cr(self, tree) -> None:  # ..._preserves_cr_from_target_file, [R: 53]
        tree.write("f.txt", b"one\rtwo\r")
        assert tree.after("*** Update File: f.txt\n-one\n+uno\n two\n+three") == b"uno\rtwo\rthree\r"

    def test_pure_add_to_crlf_file(self, tree) -> None:  # [R: 52]
        tree.write("f.txt", b"a\r\nb\r\n")
        assert tree.after("*** Update File: f.txt\n@@\n+c") == b"a\r\nb\r\nc\r\n"

    def test_append_after_trailing_blank_crlf_line(self, tree) -> None:
        # test_apply_patch_cli_appends_after_trailing_blank_crlf_line
        tree.write("f.txt", b"a\r\n\r\n")
        assert tree.after("*** Update File: f.txt\n@@\n+new") == b"a\r\n\r\nnew\r\n"

    def test_repeated_context_line_keeps_its_own_ending(self, tree) -> None:
        # test_apply_patch_cli_preserves_repeated_context_line_ending
        tree.write("f.txt", b"same\r\nsame\n")
        assert tree.after("*** Update File: f.txt\n-same\n same") == b"same\n"

    def test_no_final_newline_crlf_append(self, tree) -> None:
        tree.write("f.txt", b"a\r\nb")
        assert tree.after("*** Update File: f.txt\n@@\n+c") == b"a\r\nb\r\nc"

    @pytest.mark.parametrize("mode", [0o755, 0o640, 0o600, 0o444])
    def test_mode_bits_are_kept_on_update(self, tree, mode: int) -> None:  # DESIGN §2
        tree.write("f.txt", "a\n", mode=mode)
        planned = tree.plan("*** Update File: f.txt\n-a\n+b")
        t = target(planned, "f.txt")
        assert (t.before_mode, t.after_mode, t.after) == (mode, mode, b"b\n")

    @pytest.mark.parametrize("mode", [0o755, 0o750])
    def test_mode_bits_are_kept_on_move(self, tree, mode: int) -> None:  # DESIGN §2 ([R]: lost)
        tree.write("bin/tool.sh", "#!/bin/sh\necho hi\n", mode=mode)
        planned = tree.plan("*** Update File: bin/tool.sh\n*** Move to: scripts/tool.sh\n"
                            "-echo hi\n+echo hello")
        moved = target(planned, "scripts/tool.sh")
        assert (moved.before, moved.after_mode) == (None, mode)
        assert moved.after == b"#!/bin/sh\necho hello\n"
        source = target(planned, "bin/tool.sh")
        assert (source.before_mode, source.after) == (mode, None)

    def test_setuid_style_bits_are_reported_as_they_are(self, tree) -> None:
        tree.write("f.txt", "a\n", mode=0o755)
        os.chmod(tree.root / "f.txt", 0o755 | stat.S_ISGID)
        planned = tree.plan("*** Update File: f.txt\n-a\n+b")
        expected = stat.S_IMODE(os.stat(tree.root / "f.txt").st_mode)
        assert target(planned, "f.txt").after_mode == expected

    def test_sha256_of_before_and_after(self, tree) -> None:
        import hashlib

        tree.write("f.txt", "a\n")
        t = target(tree.plan("*** Update File: f.txt\n-a\n+b"), "f.txt")
        assert t.before_sha256 == hashlib.sha256(b"a\n").hexdigest()
        assert t.after_sha256 == hashlib.sha256(b"b\n").hexdigest()
        deleted = target(tree.plan("*** Delete File: f.txt"), "f.txt")
        assert deleted.after_sha256 is None


class TestRefusedContent:
    def test_binary_file_is_refused(self, tree) -> None:
        tree.write("f.bin", b"\x00\x01\x02abc\n")
        exc = tree.fail("*** Update File: f.bin\n-abc\n+x")
        assert isinstance(exc, BinaryFileError)
        assert exc.path == tree.path("f.bin")
        assert_nothing_changed(exc)

    def test_added_contents_with_a_nul_are_refused_as_binary(self, tree) -> None:
        # Codex writes the file; patchtx would then refuse to update it (test above), so it
        # refuses to add it in the first place, with the same kind.
        exc = tree.fail("*** Add File: ok.txt\n+fine\n*** Add File: f.bin\n+a\x00b")
        assert isinstance(exc, BinaryFileError) and exc.kind == "binary_file"
        assert exc.path == "f.bin" and exc.line == 4
        assert "NUL" in exc.headline
        assert not (tree.root / "ok.txt").exists()
        assert_nothing_changed(exc)

    def test_latin1_file_is_refused_with_codex_text(self, tree) -> None:  # [R: 34]
        tree.write("f.txt", b"a\xe9b\n")
        exc = tree.fail("*** Update File: f.txt\n-a\n+b")
        assert isinstance(exc, EncodingPatchError)
        assert exc.headline == (f"Failed to read file to update {tree.path('f.txt')}: "
                                "invalid utf-8 sequence of 1 bytes from index 1")
        assert_nothing_changed(exc)

    def test_later_refusal_plans_nothing(self, tree) -> None:  # scenario 015 differs
        tree.write("ok.txt", "ok\n")
        tree.write("bad.txt", b"\xff\n")
        with pytest.raises(EncodingPatchError):
            tree.plan("*** Update File: ok.txt\n-ok\n+OK\n*** Update File: bad.txt\n-x\n+y")

    def test_failure_after_an_earlier_operation_plans_nothing(self, tree) -> None:  # scenario 015
        exc = tree.fail("*** Add File: created.txt\n+hello\n*** Update File: missing.txt\n-x\n+y")
        assert isinstance(exc, FileNotFoundPatchError)
        assert exc.line == 4
        assert not (tree.root / "created.txt").exists()

    def test_binary_file_may_be_deleted(self, tree) -> None:
        tree.write("f.bin", b"\x00\x01")
        assert targets(tree.plan("*** Delete File: f.bin")) == {"f.bin": None}


# --------------------------------------------------------------------------------------------
# Directories left empty (DESIGN §2)
# --------------------------------------------------------------------------------------------


class TestRemoveDirs:
    def test_delete_empties_nested_directories_deepest_first(self, tree) -> None:
        tree.write("a/b/c.txt", "x\n")
        planned = tree.plan("*** Delete File: a/b/c.txt")
        assert planned.remove_dirs == ("a/b", "a")

    def test_never_the_root(self, tree) -> None:
        tree.write("only.txt", "x\n")
        planned = tree.plan("*** Delete File: only.txt")
        assert planned.remove_dirs == ()

    def test_not_when_another_file_remains(self, tree) -> None:
        tree.write("a/b/c.txt", "x\n")
        tree.write("a/keep.txt", "k\n")
        assert tree.plan("*** Delete File: a/b/c.txt").remove_dirs == ("a/b",)

    @pytest.mark.parametrize("other", ["hidden", "empty-dir", "symlink"])
    def test_not_when_anything_else_remains(self, tree, other: str) -> None:
        tree.write("a/c.txt", "x\n")
        if other == "hidden":
            tree.write("a/.keep", "")
        elif other == "empty-dir":
            tree.mkdir("a/empty")
        else:
            tree.symlink("a/link", "c.txt")
        assert tree.plan("*** Delete File: a/c.txt").remove_dirs == ()

    def test_two_deletes_empty_a_folder(self, tree) -> None:
        tree.write("d/one.txt", "1\n")
        tree.write("d/two.txt", "2\n")
        assert tree.plan("*** Delete File: d/one.txt").remove_dirs == ()
        assert tree.plan("*** Delete File: d/one.txt\n*** Delete File: d/two.txt").remove_dirs == ("d",)

    def test_move_out_of_a_folder(self, tree) -> None:  # scenario 004
        tree.write("old/name.txt", "old content\n")
        planned = tree.plan("*** Update File: old/name.txt\n*** Move to: renamed/dir/name.txt\n"
                            "@@\n-old content\n+new content")
        assert targets(planned) == {"old/name.txt": None, "renamed/dir/name.txt": b"new content\n"}
        assert planned.remove_dirs == ("old",)
        tree.write("old/other.txt", "unrelated file\n")
        assert tree.plan("*** Update File: old/name.txt\n*** Move to: renamed/dir/name.txt\n"
                         "@@\n-old content\n+new content").remove_dirs == ()

    def test_move_within_the_tree(self, tree) -> None:
        tree.write("a/b/c.txt", "x\n")
        assert tree.plan("*** Update File: a/b/c.txt\n*** Move to: a/c.txt\n x").remove_dirs == ("a/b",)
        assert tree.plan("*** Update File: a/b/c.txt\n*** Move to: a/b/d/c.txt\n x").remove_dirs == ()

    def test_not_when_the_patch_adds_into_it(self, tree) -> None:
        tree.write("a/b/c.txt", "x\n")
        planned = tree.plan("*** Delete File: a/b/c.txt\n*** Add File: a/b/new.txt\n+n")
        assert planned.remove_dirs == ()
        planned = tree.plan("*** Delete File: a/b/c.txt\n*** Add File: a/new.txt\n+n")
        assert planned.remove_dirs == ("a/b",)

    def test_delete_of_a_file_added_earlier_leaves_nothing(self, tree) -> None:
        planned = tree.plan("*** Add File: new/x.txt\n+x\n*** Delete File: new/x.txt")
        assert planned.targets == ()
        assert planned.remove_dirs == ()


# --------------------------------------------------------------------------------------------
# Several operations on one path, in order
# --------------------------------------------------------------------------------------------


class TestCombining:
    def test_add_then_update(self, tree) -> None:  # [R: 24]
        planned = tree.plan("*** Add File: a.txt\n+one\n*** Update File: a.txt\n-one\n+two")
        assert targets(planned) == {"a.txt": b"two\n"}
        assert [(c.kind, c.before, c.after) for c in planned.changes] == [
            (ChangeKind.ADD, None, b"one\n"), (ChangeKind.UPDATE, b"one\n", b"two\n")]
        assert codex_summary(planned) == "Success. Updated the following files:\nA a.txt\nM a.txt\n"

    def test_delete_then_add(self, tree) -> None:  # [R: 25]
        tree.write("a.txt", "old\n", mode=0o644)
        planned = tree.plan("*** Delete File: a.txt\n*** Add File: a.txt\n+new")
        t = target(planned, "a.txt")
        assert (t.before, t.after) == (b"old\n", b"new\n")
        assert codex_summary(planned) == "Success. Updated the following files:\nA a.txt\nD a.txt\n"

    def test_update_twice(self, tree) -> None:
        tree.write("a.txt", "1\n")
        planned = tree.plan("*** Update File: a.txt\n-1\n+2\n*** Update File: a.txt\n-2\n+3")
        assert targets(planned) == {"a.txt": b"3\n"}

    def test_update_of_a_file_deleted_earlier_is_a_clear_error(self, tree) -> None:
        tree.write("a.txt", "x\n")
        exc = tree.fail("*** Delete File: a.txt\n*** Update File: a.txt\n-x\n+y")
        assert exc.line == 3
        assert exc.headline == (f"Failed to read file to update {tree.path('a.txt')}: "
                                "No such file or directory (os error 2)")
        assert "earlier operation of this patch" in exc.hint
        assert_nothing_changed(exc)

    def test_update_of_a_file_moved_away_earlier(self, tree) -> None:
        tree.write("a.txt", "x\n")
        exc = tree.fail("*** Update File: a.txt\n*** Move to: b.txt\n x\n*** Update File: a.txt\n-x")
        assert isinstance(exc, FileNotFoundPatchError)
        assert "earlier operation" in exc.hint

    def test_update_of_the_move_destination(self, tree) -> None:
        tree.write("a.txt", "x\n")
        planned = tree.plan("*** Update File: a.txt\n*** Move to: b.txt\n-x\n+y\n"
                            "*** Update File: b.txt\n-y\n+z")
        assert targets(planned) == {"a.txt": None, "b.txt": b"z\n"}

    def test_delete_twice(self, tree) -> None:
        tree.write("a.txt", "x\n")
        exc = tree.fail("*** Delete File: a.txt\n*** Delete File: a.txt")
        assert isinstance(exc, FileNotFoundPatchError)
        assert exc.line == 3
        assert "already removed" in exc.hint

    def test_add_then_delete_is_a_no_op(self, tree) -> None:
        planned = tree.plan("*** Add File: t.txt\n+x\n*** Delete File: t.txt")
        assert planned.targets == ()
        assert [c.kind for c in planned.changes] == [ChangeKind.ADD, ChangeKind.DELETE]

    def test_several_patches_plan_as_one(self, tree) -> None:
        first = "*** Begin Patch\n*** Add File: a.txt\n+one\n*** End Patch"
        second = "*** Begin Patch\n*** Update File: a.txt\n-one\n+two\n*** End Patch"
        planned = plan_patch([first, parse(second)], tree.root)
        assert targets(planned) == {"a.txt": b"two\n"}

    def test_file_inside_a_file_is_refused(self, tree) -> None:  # [R: 48]
        tree.write("parent", "a file\n")
        exc = tree.fail("*** Add File: parent/child.txt\n+x")
        assert isinstance(exc, NotARegularFileError)
        assert exc.headline == f"Failed to write file {tree.path('parent/child.txt')}"
        exc = tree.fail("*** Add File: dir/f.txt\n+x\n*** Add File: dir\n+y")
        assert isinstance(exc, NotARegularFileError)
        assert exc.line == 4

    def test_file_inside_a_file_deleted_earlier_is_fine(self, tree) -> None:
        tree.write("a", "file\n")
        planned = tree.plan("*** Delete File: a\n*** Add File: a/b.txt\n+y")
        assert targets(planned) == {"a": None, "a/b.txt": b"y\n"}


# --------------------------------------------------------------------------------------------
# Errors for missing files and directories (Codex texts)
# --------------------------------------------------------------------------------------------


class TestFileErrors:
    def test_empty_patch(self, tree) -> None:  # scenario 005, test_apply_patch_cli_rejects_empty_patch
        exc = tree.fail("*** Begin Patch\n*** End Patch")
        assert isinstance(exc, EmptyPatchError)
        assert exc.kind == "empty_patch"
        assert exc.headline == "No files were modified."
        assert_nothing_changed(exc)

    def test_update_requires_an_existing_file(self, tree) -> None:  # scenario 009
        exc = tree.fail("*** Update File: missing.txt\n-x\n+y")
        assert isinstance(exc, FileNotFoundPatchError)
        assert exc.kind == "file_not_found"
        assert exc.headline == (f"Failed to read file to update {tree.path('missing.txt')}: "
                                "No such file or directory (os error 2)")
        assert "Add File" in exc.hint

    def test_delete_of_a_missing_file(self, tree) -> None:  # scenario 007
        exc = tree.fail("*** Delete File: missing.txt")
        assert isinstance(exc, FileNotFoundPatchError)
        assert exc.headline == f"Failed to delete file {tree.path('missing.txt')}"

    def test_delete_of_a_directory(self, tree) -> None:  # scenario 012
        tree.write("dir/foo.txt", "x\n")
        exc = tree.fail("*** Delete File: dir")
        assert isinstance(exc, NotARegularFileError)
        assert exc.headline == f"Failed to delete file {tree.path('dir')}"

    def test_update_of_a_directory(self, tree) -> None:  # [R: 55]
        tree.mkdir("dir")
        exc = tree.fail("*** Update File: dir\n-x")
        p = tree.path("dir")
        assert exc.headline == f"Failed to read file to update {p}: path `{p}` is not a file"

    def test_messages_name_an_absolute_path_as_spelled(self, tree) -> None:  # as Codex does
        tree.mkdir("dir")
        spelled, p = tree.path("dir") + "/", tree.path("dir")
        exc = tree.fail(f"*** Update File: {spelled}\n-x")
        assert exc.headline == f"Failed to read file to update {spelled}: path `{p}` is not a file"
        assert tree.fail(f"*** Delete File: {spelled}").headline == f"Failed to delete file {spelled}"
        exc = tree.fail(f"*** Add File: {spelled}\n+x", allow_overwrite=True)
        assert exc.headline == f"Failed to write file {spelled}"

    def test_messages_name_a_path_through_a_link_as_spelled(self, tree) -> None:  # as Codex does
        tree.symlink("gone.txt", "nowhere")
        exc = tree.fail("*** Update File: gone.txt\n-x\n+y")
        assert exc.headline == (f"Failed to read file to update {tree.path('gone.txt')}: "
                                "No such file or directory (os error 2)")
        assert f"It leads to {tree.path('nowhere')} through a symbolic link." in exc.hint
        tree.write("f.txt", "x\n")
        tree.symlink("l", "f.txt")
        exc = tree.fail("*** Add File: l/x\n+y")
        assert exc.headline == f"Failed to write file {tree.path('l/x')}"
        assert "'f.txt' is a file" in exc.hint  # the hint says where the link leads

    def test_add_onto_a_directory(self, tree) -> None:  # [R: 57]
        tree.mkdir("dir")
        exc = tree.fail("*** Add File: dir\n+x", allow_overwrite=True)
        assert isinstance(exc, NotARegularFileError)
        assert exc.headline == f"Failed to write file {tree.path('dir')}"

    def test_move_onto_a_directory(self, tree) -> None:  # [R: 56]
        tree.write("a.txt", "a\n")
        tree.mkdir("dir")
        exc = tree.fail("*** Update File: a.txt\n*** Move to: dir\n a", allow_overwrite=True)
        assert isinstance(exc, NotARegularFileError)
        assert exc.headline == f"Failed to write file {tree.path('dir')}"

    def test_missing_context(self, tree) -> None:  # scenario 006
        tree.write("modify.txt", "line1\nline2\n")
        exc = tree.fail("*** Update File: modify.txt\n@@\n-missing\n+changed")
        assert isinstance(exc, ContextNotFoundError)
        assert exc.headline == f"Failed to find expected lines in {tree.path('modify.txt')}:\nmissing"

    def test_invalid_hunk_header(self, tree) -> None:  # scenario 013
        with pytest.raises(HunkParseError) as info:
            tree.plan("*** Begin Patch\n*** Frobnicate File: foo\n*** End Patch")
        assert info.value.line == 2

    def test_policy_refusals(self, tree) -> None:
        tree.write("a.txt", "a\n")
        exc = tree.fail("*** Delete File: a.txt", allow_delete=False)
        assert isinstance(exc, PolicyError) and exc.kind == "policy_violation"
        exc = tree.fail("*** Update File: a.txt\n*** Move to: b.txt\n a", allow_move=False)
        assert isinstance(exc, PolicyError)

    def test_ambiguity_is_reported_with_the_file(self, tree) -> None:
        tree.write("f.txt", "x\nx\n")
        exc = tree.fail("*** Update File: f.txt\n-x\n+y")
        assert isinstance(exc, AmbiguousContextError)
        assert tree.path("f.txt") in exc.headline


# --------------------------------------------------------------------------------------------
# Codex library and tool tests (codex-behavior.md §11), adapted where DESIGN differs
# --------------------------------------------------------------------------------------------


class TestCodexLibrary:
    def test_add_file_hunk_creates_file_with_contents(self, tree) -> None:
        planned = tree.plan("*** Add File: add.txt\n+ab\n+cd")
        assert targets(planned) == {"add.txt": b"ab\ncd\n"}
        assert codex_summary(planned) == "Success. Updated the following files:\nA add.txt\n"

    def test_relative_and_absolute_paths(self, tree) -> None:
        tree.write("del-rel.txt", "d\n")
        tree.write("del-abs.txt", "d\n")
        tree.write("upd-rel.txt", "u\n")
        tree.write("upd-abs.txt", "u\n")
        r = tree.root
        planned = tree.plan(
            f"*** Add File: add-rel.txt\n+a\n*** Add File: {r}/add-abs.txt\n+a\n"
            f"*** Delete File: del-rel.txt\n*** Delete File: {r}/del-abs.txt\n"
            f"*** Update File: upd-rel.txt\n-u\n+U\n*** Update File: {r}/upd-abs.txt\n-u\n+U"
        )
        assert targets(planned) == {
            "add-rel.txt": b"a\n", "add-abs.txt": b"a\n", "del-rel.txt": None, "del-abs.txt": None,
            "upd-rel.txt": b"U\n", "upd-abs.txt": b"U\n",
        }
        assert codex_summary(planned) == (
            "Success. Updated the following files:\n"
            f"A add-rel.txt\nA {r}/add-abs.txt\nM upd-rel.txt\nM {r}/upd-abs.txt\n"
            f"D del-rel.txt\nD {r}/del-abs.txt\n")

    def test_delete_file_hunk_removes_file(self, tree) -> None:
        tree.write("del.txt", "content\n")
        planned = tree.plan("*** Delete File: del.txt")
        assert targets(planned) == {"del.txt": None}
        assert target(planned, "del.txt").before == b"content\n"
        assert codex_summary(planned).endswith("\nD del.txt\n")

    def test_update_file_hunk_modifies_content(self, tree) -> None:
        tree.write("update.txt", "foo\nbar\n")
        planned = tree.plan("*** Update File: update.txt\n@@\n foo\n-bar\n+baz")
        assert targets(planned) == {"update.txt": b"foo\nbaz\n"}

    def test_update_file_hunk_can_move_file(self, tree) -> None:
        tree.write("src.txt", "line\n")
        planned = tree.plan("*** Update File: src.txt\n*** Move to: dst.txt\n@@\n-line\n+line2")
        assert targets(planned) == {"src.txt": None, "dst.txt": b"line2\n"}
        assert codex_summary(planned) == "Success. Updated the following files:\nM dst.txt\n"
        change = planned.changes[0]
        assert (change.kind, change.source, change.path, change.spelled) == (
            ChangeKind.MOVE, "src.txt", "dst.txt", "dst.txt")

    def test_multiple_update_chunks_apply_to_single_file(self, tree) -> None:  # scenario 003
        tree.write("multi.txt", "foo\nbar\nbaz\nqux\n")
        planned = tree.plan("*** Update File: multi.txt\n@@\n foo\n-bar\n+BAR\n@@\n baz\n-qux\n+QUX")
        assert targets(planned) == {"multi.txt": b"foo\nBAR\nbaz\nQUX\n"}
        assert codex_summary(planned) == "Success. Updated the following files:\nM multi.txt\n"

    def test_multiple_operations(self, tree) -> None:  # scenario 002, ..._applies_multiple_operations
        tree.write("modify.txt", "line1\nline2\n")
        tree.write("delete.txt", "obsolete\n")
        planned = tree.plan("*** Add File: nested/new.txt\n+created\n*** Delete File: delete.txt\n"
                            "*** Update File: modify.txt\n@@\n-line2\n+changed")
        assert targets(planned) == {"nested/new.txt": b"created\n", "delete.txt": None,
                                    "modify.txt": b"line1\nchanged\n"}
        assert codex_summary(planned) == ("Success. Updated the following files:\n"
                                          "A nested/new.txt\nM modify.txt\nD delete.txt\n")

    def test_deletion_only_chunk(self, tree) -> None:  # scenario 021
        tree.write("lines.txt", "line1\nline2\nline3\n")
        assert tree.after("*** Update File: lines.txt\n@@\n line1\n-line2\n line3", "lines.txt") == \
            b"line1\nline3\n"

    def test_unicode_simple(self, tree) -> None:  # scenario 019
        tree.write("foo.txt", "line1\nna\u00efve caf\u00e9\nline3\n")
        assert tree.after("*** Update File: foo.txt\n@@\n line1\n-na\u00efve caf\u00e9\n"
                          "+na\u00efve caf\u00e9 \u2705", "foo.txt") == \
            "line1\nna\u00efve caf\u00e9 \u2705\nline3\n".encode()

    def test_targets_are_sorted_and_net(self, tree) -> None:
        tree.write("b.txt", "b\n")
        tree.write("a.txt", "a\n")
        planned = tree.plan("*** Update File: b.txt\n-b\n+B\n*** Update File: a.txt\n-a\n+A")
        assert [t.path for t in planned.targets] == ["a.txt", "b.txt"]
        assert planned.root == str(tree.root)
        assert planned.patch is not None and len(planned.patch.hunks) == 2


def test_a_file_and_a_folder_at_one_path_are_refused_at_planning(tmp_path: Path) -> None:
    with pytest.raises(NotARegularFileError):
        patchtx.plan_patch("*** Begin Patch\n*** Add File: x/y/z\n+1\n*** Add File: x/y\n+2\n*** End Patch",
                           tmp_path)


def test_plans_copy_and_pickle(tmp_path: Path) -> None:
    plan = patchtx.plan_patch("*** Begin Patch\n*** Add File: a\n+1\n*** End Patch", tmp_path)
    assert copy.deepcopy(plan) == plan
    assert pickle.loads(pickle.dumps(plan)) == plan


@pytest.mark.skipif(not os.path.exists("/proc/self/status"), reason="the umask is read from /proc (Linux)")
def test_planning_reads_the_umask_without_setting_it(monkeypatch: pytest.MonkeyPatch) -> None:
    from patchtx.plan import modes

    def refuse(_mask: int) -> int:
        raise AssertionError("planning set the process umask")

    previous = os.umask(0o027)
    try:
        monkeypatch.setattr(modes, "_DEFAULT_MODE", [])
        monkeypatch.setattr(os, "umask", refuse)
        assert modes.default_file_mode() == 0o640
    finally:
        monkeypatch.undo()
        os.umask(previous)
