"""Parser: patch text → Patch, following Codex 0.169.0 (codex-behavior.md §1, §2, §10, §11, §14).

Error assertions check the exact Codex CLI headline (``exc.headline``), the patch line
(``exc.line``), the machine-readable kind, and that the message says nothing was changed.
"""

from __future__ import annotations

from pathlib import Path

import pytest

import patchtx
from patchtx.errors import HunkParseError, ParseError
from patchtx.formats.codex import parse
from patchtx.model import AddFile, Chunk, DeleteFile, Patch, UpdateFile

BEGIN = "*** Begin Patch"
END = "*** End Patch"
FIRST = "Invalid patch: The first line of the patch must be '*** Begin Patch'"
LAST = "Invalid patch: The last line of the patch must be '*** End Patch'"
EVERY_LINE = ("Every line should start with ' ' (context line), '+' (added line), "
              "or '-' (removed line)")


def wrap(body: str) -> str:
    return f"{BEGIN}\n{body}\n{END}"


def invalid_header(trimmed: str) -> str:
    return (f"'{trimmed}' is not a valid hunk header. Valid hunk headers: "
            "'*** Add File: {path}', '*** Delete File: {path}', '*** Update File: {path}'")


def unexpected(line: str) -> str:
    return f"Unexpected line found in update hunk: '{line}'. {EVERY_LINE}"


def expected_marker(line: str) -> str:
    return f"Expected update hunk to start with a @@ context marker, got: '{line}'"


def hunk_error(line: int, message: str) -> str:
    return f"Invalid patch hunk on line {line}: {message}"


def fails(text: str) -> ParseError:
    with pytest.raises(ParseError) as info:
        parse(text)
    exc = info.value
    assert exc.kind == "parse_error"
    assert "Nothing was changed." in exc.message
    assert exc.message.startswith(exc.headline)
    assert exc.changed is False
    return exc


def assert_patch_error(text: str, headline: str) -> ParseError:
    exc = fails(text)
    assert exc.headline == headline
    assert not isinstance(exc, HunkParseError)
    return exc


def assert_hunk_error(text: str, line: int, message: str) -> HunkParseError:
    exc = fails(text)
    assert isinstance(exc, HunkParseError)
    assert exc.headline == hunk_error(line, message)
    assert exc.line == line
    assert exc.details["codex_message"] == message
    assert exc.to_json()["patch_line"] == line
    return exc


def update(body: str, path: str = "a.txt") -> UpdateFile:
    patch = parse(wrap(f"*** Update File: {path}\n{body}"))
    assert len(patch.hunks) == 1
    hunk = patch.hunks[0]
    assert isinstance(hunk, UpdateFile)
    return hunk


# --------------------------------------------------------------------------------------------
# P1–P4: normalisation, envelope, lenient heredoc, line numbering
# --------------------------------------------------------------------------------------------


class TestEnvelope:
    @pytest.mark.parametrize("text", ["", "   ", "\n\n", " \t\n  \n"])
    def test_empty_or_blank_patch_is_a_last_line_error(self, text: str) -> None:  # [R: 06, 06b]
        exc = assert_patch_error(text, LAST)
        assert exc.line is None
        assert "empty" in exc.message

    @pytest.mark.parametrize(
        "text",
        ["bad", "bad\n*** End Patch", "*** Add File: a\n+x\n*** End Patch", "bad\nworse",
         "*** Begin Patc\n*** End Patch"],
    )
    def test_first_line_error_wins(self, text: str) -> None:
        exc = assert_patch_error(text, FIRST)
        assert repr(text.split("\n")[0]) in exc.message  # the hint quotes what it starts with

    @pytest.mark.parametrize(
        "text",
        [BEGIN, f"{BEGIN}\nbad", f"{BEGIN}\n*** Add File: a\n+x", f"{BEGIN}\n*** Add File: a\n+x\n"],
    )
    def test_missing_end_is_a_last_line_error(self, text: str) -> None:
        exc = assert_patch_error(text, LAST)
        assert "End Patch" in exc.message.split("Nothing was changed.")[1]

    def test_whitespace_padded_markers_are_accepted(self) -> None:  # scenarios 018, 020; #8746
        patch = parse(f"   {BEGIN}   \n*** Add File: a.txt\n+x\n\t{END}  ")
        assert patch.hunks == (AddFile("a.txt", "x\n", 2),)

    def test_begin_and_end_only_parses_to_zero_hunks(self) -> None:
        patch = parse(f"{BEGIN}\n{END}")
        assert patch.hunks == ()
        assert patch.environment_id is None
        assert patch.text == f"{BEGIN}\n{END}"

    def test_surrounding_blank_lines_are_trimmed_and_not_counted(self) -> None:  # [R: 70]
        text = f"\n\n  \n{BEGIN}\n*** Add File: a\n+x\nbad\n{END}\n\n\n"
        assert_hunk_error(text, 4, invalid_header("bad"))
        ok = parse(f"\n\n {BEGIN}\n*** Delete File: a\n{END}\n  \n")
        assert ok.hunks == (DeleteFile("a", 2),)
        assert ok.text == f"{BEGIN}\n*** Delete File: a\n{END}"

    def test_crlf_patch_parses_exactly_like_lf(self) -> None:  # P1, [R: 05, 05b]
        body = ("*** Add File: n.txt\n+one\n+\n*** Update File: u.txt\n*** Move to: v.txt\n@@ ctx\n"
                " keep\n-old\n+new\n\n*** End of File\n*** Delete File: d.txt")
        lf = parse(wrap(body))
        crlf = parse(wrap(body).replace("\n", "\r\n"))
        assert crlf.hunks == lf.hunks
        assert crlf.text == lf.text

    def test_lone_cr_stays_inside_a_line(self) -> None:  # P1, [R: 49]
        patch = parse(wrap("*** Add File: a.txt\n+one\rtwo\n+three"))
        assert patch.hunks == (AddFile("a.txt", "one\rtwo\nthree\n", 2),)

    def test_patch_text_is_the_trimmed_text(self) -> None:  # P4
        text = f"  \n{BEGIN}\n*** Delete File: a\n{END}\n"
        assert parse(text).text == f"{BEGIN}\n*** Delete File: a\n{END}"


class TestLenientHeredoc:
    INNER = f"{BEGIN}\n*** Add File: a.txt\n+hello\n{END}"

    @pytest.mark.parametrize("opener", ["<<EOF", "<<'EOF'", '<<"EOF"'])
    def test_heredoc_wrappers_are_unwrapped(self, opener: str) -> None:  # P3, [R: 07]
        patch = parse(f"{opener}\n{self.INNER}\nEOF")
        assert patch.hunks == (AddFile("a.txt", "hello\n", 2),)
        assert patch.text == self.INNER

    def test_last_line_only_has_to_end_with_eof(self) -> None:  # [R: 07d]
        assert parse(f"<<EOF\n{self.INNER}\nxEOF").hunks == (AddFile("a.txt", "hello\n", 2),)

    def test_heredoc_with_surrounding_whitespace_is_trimmed_first(self) -> None:
        assert parse(f"\n  <<'EOF'\n{self.INNER}\nEOF  \n").text == self.INNER

    @pytest.mark.parametrize(
        "opener",
        ["<<EOF ", "<<'PATCH'", "<<'EOF\"", "<<\"EOF'", "<< EOF", "<<eof", "cat <<EOF", "<<-EOF"],
    )
    def test_other_openers_give_the_original_first_line_error(self, opener: str) -> None:
        # [R: 07b, 07c]; mismatched quotes rejected (test_parse_patch_lenient)
        assert_patch_error(f"{opener}\n{self.INNER}\nEOF", FIRST)

    def test_heredoc_without_end_patch_reports_the_inner_last_line_error(self) -> None:
        assert_patch_error(f"<<EOF\n{BEGIN}\n*** Add File: a\n+x\nEOF", LAST)

    def test_heredoc_needs_four_lines(self) -> None:
        assert_patch_error(f"<<EOF\n{BEGIN}\nEOF", FIRST)

    def test_last_line_not_ending_with_eof_is_not_a_heredoc(self) -> None:
        assert_patch_error(f"<<EOF\n{self.INNER}\nEOT", FIRST)

    def test_line_numbers_count_from_begin_patch_inside_a_heredoc(self) -> None:  # P4, [R: 69]
        assert_hunk_error(f"<<'EOF'\n{BEGIN}\nbad\n{END}\nEOF", 2, invalid_header("bad"))
        assert_hunk_error(f"<<EOF\n{BEGIN}\n*** Update File: a\n@@\n@@\n{END}\nEOF", 4, unexpected("@@"))


# --------------------------------------------------------------------------------------------
# G2–G6: hunk headers, environment id, Add and Delete bodies
# --------------------------------------------------------------------------------------------


class TestHeaders:
    def test_the_three_operations(self) -> None:  # test_parse_patch
        patch = parse(wrap(
            "*** Add File: path/add.py\n+abc\n+def\n"
            "*** Delete File: path/delete.py\n"
            "*** Update File: path/update.py\n*** Move to: path/update2.py\n@@ def f():\n"
            "-    pass\n+    return 123"
        ))
        assert patch.hunks == (
            AddFile("path/add.py", "abc\ndef\n", 2),
            DeleteFile("path/delete.py", 5),
            UpdateFile(
                "path/update.py",
                (Chunk(("def f():",), (("-", "    pass"), ("+", "    return 123")), False, 8),),
                "path/update2.py",
                6,
            ),
        )

    def test_update_followed_by_add(self) -> None:  # test_parse_patch
        patch = parse(wrap("*** Update File: file2.py\n import foo\n+bar\n*** Add File: other.py\n+x"))
        assert patch.hunks == (
            UpdateFile("file2.py", (Chunk((), ((" ", "import foo"), ("+", "bar")), False, 3),),
                       None, 2),
            AddFile("other.py", "x\n", 5),
        )

    @pytest.mark.parametrize(
        "header", ["*** update file: a.txt", "*** ADD FILE: a.txt", "*** Delete file: a.txt"]
    )
    def test_markers_are_case_sensitive(self, header: str) -> None:  # [R: 67]
        assert_hunk_error(wrap(f"{header}\n-x"), 2, invalid_header(header))

    @pytest.mark.parametrize("header", ["*** Add File:a.txt", "*** Update File:a.txt", "***Add File: a"])
    def test_marker_needs_its_exact_spelling(self, header: str) -> None:
        assert_hunk_error(wrap(f"{header}\n+x"), 2, invalid_header(header))

    @pytest.mark.parametrize("marker", ["*** Update File: ", "*** Add File:   ", "*** Delete File: \t"])
    def test_empty_path_is_not_a_header(self, marker: str) -> None:  # G2, [R: 68]
        assert_hunk_error(wrap(f"{marker}\n-x"), 2, invalid_header(marker.strip()))

    def test_path_keeps_extra_inner_spaces_but_not_trailing_ones(self) -> None:  # [R: 22]
        patch = parse(wrap("*** Add File:   spaced.txt  \n+x"))
        assert patch.hunks == (AddFile("  spaced.txt", "x\n", 2),)

    def test_whitespace_padded_headers_are_recognised(self) -> None:  # scenario 017
        patch = parse(wrap("   *** Add File: a.txt   \n+x\n\t*** Delete File: b.txt \n"
                           "  *** Update File: c.txt  \n c"))
        assert [h.path for h in patch.hunks] == ["a.txt", "b.txt", "c.txt"]

    @pytest.mark.parametrize(
        "path", ["rel/a.txt", "/abs/path/a.txt", "../up.txt", "~/tilde.txt", "a b/c d.txt", "ü/ß.txt"]
    )
    def test_paths_are_kept_verbatim(self, path: str) -> None:  # G11, parser.rs path tests
        patch = parse(wrap(f"*** Add File: {path}\n+x\n*** Delete File: {path}\n"
                           f"*** Update File: {path}\n*** Move to: {path}\n x"))
        assert [h.path for h in patch.hunks] == [path, path, path]
        third = patch.hunks[2]
        assert isinstance(third, UpdateFile) and third.move_to == path

    def test_hunk_line_numbers(self) -> None:
        patch = parse(wrap("*** Add File: a\n+1\n+2\n*** Delete File: b\n*** Update File: c\n"
                           "@@\n x\n@@ y\n-z"))
        assert [h.line for h in patch.hunks] == [2, 5, 6]
        third = patch.hunks[2]
        assert isinstance(third, UpdateFile)
        assert [c.line for c in third.chunks] == [7, 9]


class TestStartedPatch:
    def test_blank_line_right_after_begin_is_an_error(self) -> None:  # G4, [R: 16]
        assert_hunk_error(wrap("\n*** Add File: a\n+x"), 2, invalid_header(""))

    def test_whitespace_line_after_begin_quotes_the_trimmed_line(self) -> None:
        assert_hunk_error(wrap("   \n*** Add File: a\n+x"), 2, invalid_header(""))

    def test_garbage_after_begin(self) -> None:  # test_streaming_patch_parser_returns_errors
        assert_hunk_error(wrap("bad"), 2, invalid_header("bad"))
        assert_hunk_error(wrap("  bad line  "), 2, invalid_header("bad line"))

    def test_inner_end_patch_then_more_hunks_is_a_last_line_error(self) -> None:  # G8, [R: 38]
        assert_patch_error(wrap(f"*** Add File: a\n+x\n{END}\n*** Add File: b\n+y"), LAST)

    def test_text_after_end_patch_is_an_error(self) -> None:  # [R: 38, 39]
        assert_patch_error(f"{BEGIN}\n*** Delete File: a\n{END}\nextra", LAST)
        assert_patch_error(f"{BEGIN}\n*** Delete File: a\n{END}\n{END}\n{END}", LAST)

    def test_a_second_end_patch_as_the_last_line_is_fine(self) -> None:
        """As in Codex (tests/differential R39b-e): the envelope's End Patch may close a patch that
        an End Patch line before it already ended (a model that repeats the marker)."""
        for text in (f"{BEGIN}\n*** Delete File: a\n{END}\n  \n{END}", f"{BEGIN}\n*** Delete File: a\n{END}\n{END}\n",
                     f"{BEGIN}\n*** Update File: a\n@@\n+x\n{END} \n{END}"):
            assert len(parse(text).hunks) == 1

    def test_whitespace_after_end_patch_is_fine(self) -> None:
        assert parse(f"{BEGIN}\n*** Delete File: a\n{END}\n  \n\t\n").hunks == (DeleteFile("a", 2),)


class TestEnvironmentId:
    def test_preamble_is_captured(self) -> None:  # G3, [R: 40]
        patch = parse(wrap("*** Environment ID: remote\n*** Add File: a\n+x"))
        assert patch.environment_id == "remote"
        assert patch.hunks == (AddFile("a", "x\n", 3),)

    def test_no_space_needed_after_the_colon_and_value_is_trimmed(self) -> None:
        assert parse(wrap("*** Environment ID:remote-2  \n*** Delete File: a")).environment_id == \
            "remote-2"
        assert parse(wrap("  *** Environment ID:   x y  \n*** Delete File: a")).environment_id == "x y"

    @pytest.mark.parametrize("value", ["", "   ", "\t"])
    def test_empty_id_is_an_error(self, value: str) -> None:  # [R: 42]
        assert_patch_error(wrap(f"*** Environment ID:{value}\n*** Delete File: a"),
                           "Invalid patch: apply_patch environment_id cannot be empty")

    def test_second_id_is_an_error(self) -> None:  # [R: 41]
        assert_patch_error(
            wrap("*** Environment ID: a\n*** Environment ID: b\n*** Delete File: x"),
            "Invalid patch: apply_patch environment_id cannot be specified more than once",
        )

    def test_id_after_the_first_hunk_is_not_a_header(self) -> None:
        assert_hunk_error(wrap("*** Delete File: x\n*** Environment ID: a"), 3,
                          invalid_header("*** Environment ID: a"))
        assert_hunk_error(wrap("*** Add File: x\n+1\n*** Environment ID: a"), 4,
                          invalid_header("*** Environment ID: a"))

    def test_env_id_alone_parses_with_zero_hunks(self) -> None:
        patch = parse(wrap("*** Environment ID: e"))
        assert patch.hunks == () and patch.environment_id == "e"


class TestAddFile:
    def test_contents_are_lf_terminated(self) -> None:  # G5
        patch = parse(wrap("*** Add File: a.txt\n+one\n+\n+  three  \n++plus\n+-minus"))
        assert patch.hunks == (AddFile("a.txt", "one\n\n  three  \n+plus\n-minus\n", 2),)

    def test_zero_plus_lines_create_an_empty_file(self) -> None:  # [R: 12]
        patch = parse(wrap("*** Add File: empty.txt\n*** Add File: b.txt\n+b"))
        assert patch.hunks == (AddFile("empty.txt", "", 2), AddFile("b.txt", "b\n", 3))

    def test_blank_line_in_body_is_an_error(self) -> None:  # [R: 13]
        exc = assert_hunk_error(wrap("*** Add File: a\n+x\n\n+y"), 4, invalid_header(""))
        assert "'+'" in exc.hint

    def test_line_without_plus_is_an_error(self) -> None:  # [R: 13b]
        assert_hunk_error(wrap("*** Add File: a\n+x\nno plus"), 4, invalid_header("no plus"))

    def test_plus_must_be_in_column_zero(self) -> None:  # [R: 71]
        assert_hunk_error(wrap("*** Add File: a\n +x"), 3, invalid_header("+x"))

    def test_context_or_minus_line_is_an_error(self) -> None:  # test_streaming_..._returns_errors
        assert_hunk_error(wrap("*** Add File: file.txt\nbad"), 3, invalid_header("bad"))
        assert_hunk_error(wrap("*** Add File: a\n-x"), 3, invalid_header("-x"))

    def test_indented_header_ends_the_add_body(self) -> None:  # headers are trimmed outside Update
        patch = parse(wrap("*** Add File: a\n+x\n   *** Delete File: b  \n  *** Add File: c\n+y"))
        assert patch.hunks == (AddFile("a", "x\n", 2), DeleteFile("b", 4), AddFile("c", "y\n", 5))

    def test_add_body_keeps_a_plus_line_that_looks_like_a_marker(self) -> None:
        patch = parse(wrap("*** Add File: a\n+*** End Patch\n+*** Update File: z\n+@@"))
        assert patch.hunks == (AddFile("a", "*** End Patch\n*** Update File: z\n@@\n", 2),)


class TestDeleteFile:
    def test_line_after_delete_is_an_invalid_header(self) -> None:  # G6, [R: 66]
        assert_hunk_error(wrap("*** Delete File: file.txt\nbad"), 3, invalid_header("bad"))
        assert_hunk_error(wrap("*** Delete File: a\n-x"), 3, invalid_header("-x"))
        assert_hunk_error(wrap("*** Delete File: a\n\n*** Delete File: b"), 3, invalid_header(""))

    def test_consecutive_deletes(self) -> None:
        patch = parse(wrap("*** Delete File: a\n*** Delete File: b"))
        assert patch.hunks == (DeleteFile("a", 2), DeleteFile("b", 3))


# --------------------------------------------------------------------------------------------
# G7: Update hunks
# --------------------------------------------------------------------------------------------


class TestUpdateBody:
    def test_first_chunk_may_omit_the_marker(self) -> None:  # G7.10, [R: 10b, 64]
        hunk = update(" import foo\n+bar")
        assert hunk.chunks == (Chunk((), ((" ", "import foo"), ("+", "bar")), False, 3),)
        assert hunk.chunks[0].old_lines == ["import foo"]
        assert hunk.chunks[0].new_lines == ["import foo", "bar"]

    def test_lines_after_a_chunk_keep_appending_to_it(self) -> None:  # [R: 65]
        hunk = update("@@\n-a\n+b\n c\n-d\n+e\n f")
        assert len(hunk.chunks) == 1
        assert hunk.chunks[0].lines == (("-", "a"), ("+", "b"), (" ", "c"), ("-", "d"), ("+", "e"),
                                        (" ", "f"))
        assert hunk.chunks[0].old_lines == ["a", "c", "d", "f"]
        assert hunk.chunks[0].new_lines == ["b", "c", "e", "f"]

    def test_only_a_marker_starts_a_new_chunk(self) -> None:
        hunk = update("-a\n@@\n-b\n@@ ctx\n-c")
        assert [(c.anchors, c.lines) for c in hunk.chunks] == [
            ((), (("-", "a"),)), ((), (("-", "b"),)), (("ctx",), (("-", "c"),)),
        ]

    def test_bare_plus_and_minus_are_empty_lines(self) -> None:  # G7.9
        assert update("-\n+\n-x").chunks[0].lines == (("-", ""), ("+", ""), ("-", "x"))

    def test_empty_line_is_an_empty_context_line(self) -> None:  # G7.7, [R: 08, 18]
        hunk = update("\n-x\n+y\n\n z")
        assert hunk.chunks == (
            Chunk((), ((" ", ""), ("-", "x"), ("+", "y"), (" ", ""), (" ", "z")), False, 3),
        )

    def test_bare_empty_lines_between_context_lines(self) -> None:
        # test_streaming_patch_parser_preserves_bare_empty_update_lines
        hunk = update("@@\n first\n\n second")
        assert hunk.chunks[0].old_lines == ["first", "", "second"]
        assert hunk.chunks[0].new_lines == ["first", "", "second"]

    def test_spaces_only_line_is_context_minus_its_first_space(self) -> None:
        assert update("   \n-x").chunks[0].lines == ((" ", "  "), ("-", "x"))

    def test_body_lines_keep_trailing_whitespace_and_markers_in_text(self) -> None:
        hunk = update("-a  \n+b\t\n  indented\n-@@\n+*** End of File")
        assert hunk.chunks[0].lines == (("-", "a  "), ("+", "b\t"), (" ", " indented"), ("-", "@@"),
                                        ("+", "*** End of File"))

    def test_double_cr_keeps_nothing_of_the_line_ending(self) -> None:
        # One CR goes with P1 (CRLF), one with the streaming parser (its own trailing CR).
        assert update("-old\r\r\n+new").chunks[0].lines == (("-", "old"), ("+", "new"))

    def test_indented_update_header_inside_update_is_context(self) -> None:
        # G7, test_streaming_patch_parser_keeps_indented_update_markers_as_context_lines, [R: 50]
        patch = parse(wrap("*** Update File: a.txt\n@@\n-a\n+A\n  *** Update File: b.txt\n@@\n-b\n+B"))
        assert len(patch.hunks) == 1
        hunk = patch.hunks[0]
        assert isinstance(hunk, UpdateFile)
        assert hunk.chunks[0].lines == (("-", "a"), ("+", "A"), (" ", " *** Update File: b.txt"))
        assert hunk.chunks[1].lines == (("-", "b"), ("+", "B"))

    def test_indented_add_and_delete_headers_inside_update_are_context(self) -> None:
        hunk = update("-a\n *** Add File: x\n *** Delete File: y")
        assert hunk.chunks[0].lines == (("-", "a"), (" ", "*** Add File: x"), (" ", "*** Delete File: y"))

    def test_header_with_trailing_spaces_inside_update_is_a_header(self) -> None:
        patch = parse(wrap("*** Update File: a\n-x\n*** Delete File: b   \n*** Update File: c \n-y"))
        assert [type(h).__name__ for h in patch.hunks] == ["UpdateFile", "DeleteFile", "UpdateFile"]
        assert [h.path for h in patch.hunks] == ["a", "b", "c"]

    def test_indented_end_patch_on_the_last_line_ends_the_patch(self) -> None:
        # test_streaming_patch_parser_finish_processes_final_line_without_newline
        patch = parse(f"{BEGIN}\n*** Update File: a\n-x\n+y\n    {END}")
        assert patch.hunks == (UpdateFile("a", (Chunk((), (("-", "x"), ("+", "y")), False, 3),), None, 2),)

    def test_indented_end_patch_before_the_last_line_is_context(self) -> None:
        hunk = update(f"-x\n  {END}")
        assert hunk.chunks[0].lines == (("-", "x"), (" ", f" {END}"))

    def test_many_hunks_in_order(self) -> None:  # cf. test_streaming_..._large_patch_split_by_character
        patch = parse(wrap(
            "*** Add File: docs/notes.md\n+# Notes\n+\n+- first\n"
            "*** Update File: src/config.py\n@@ class Config:\n-    verbose = False\n+    verbose = True\n"
            "     colour = True\n@@ def interval():\n-    return 500\n+    return 250\n"
            "*** Delete File: src/legacy.py\n"
            "*** Update File: cli/main.py\n*** Move to: cli/bin/tool.py\n@@ def run():\n"
            "-    args = parse()\n+    cli = parse()\n"
            "*** Add File: tests/data.json\n+{\n+  \"k\": 1\n+}\n"
            "*** Update File: README.md\n@@ Development\n Build first.\n+Then test.\n"
            "*** Delete File: docs/old.md"
        ))
        kinds = [
            "add" if isinstance(h, AddFile) else "delete" if isinstance(h, DeleteFile)
            else "move-update" if h.move_to else "update"
            for h in patch.hunks
        ]
        assert kinds == ["add", "update", "delete", "move-update", "add", "update", "delete"]
        config = patch.hunks[1]
        assert isinstance(config, UpdateFile)
        assert [c.anchors for c in config.chunks] == [("class Config:",), ("def interval():",)]
        assert patch.hunks[0] == AddFile("docs/notes.md", "# Notes\n\n- first\n", 2)


class TestUpdateMarkers:
    def test_two_bare_markers_in_a_row_are_rejected(self) -> None:  # G7.3, [R: 09]
        assert_hunk_error(wrap("*** Update File: a\n@@\n@@\n-x"), 4, unexpected("@@"))

    def test_bare_marker_after_an_anchor_closes_the_stack(self) -> None:  # patchtx extension
        assert update("@@ ctx\n@@\n-x").chunks == (Chunk(("ctx",), (("-", "x"),), False, 3),)
        assert update("@@ a\n@@ b\n@@  \n-x").chunks[0].anchors == ("a", "b")

    def test_bare_marker_after_a_bare_marker_is_rejected(self) -> None:  # as in Codex
        assert_hunk_error(wrap("*** Update File: a\n@@\n@@\n-x"), 4, unexpected("@@"))

    def test_stacked_anchors_are_accepted(self) -> None:  # patchtx extension (D1, [R: 58])
        hunk = update("@@ class B:\n@@   def m():\n-        return 1\n+        return 2")
        assert hunk.chunks == (
            Chunk(("class B:", "  def m():"), (("-", "        return 1"), ("+", "        return 2")),
                  False, 3),
        )

    def test_three_stacked_anchors_then_a_second_chunk(self) -> None:
        hunk = update("@@ a\n@@ b\n@@ c\n x\n@@ d\n-y")
        assert [(c.anchors, c.line) for c in hunk.chunks] == [(("a", "b", "c"), 3), (("d",), 7)]

    def test_marker_with_trailing_space_is_a_bare_marker(self) -> None:  # G7.4, [R: 19]
        assert update("@@ \n-x").chunks == (Chunk((), (("-", "x"),), False, 3),)
        assert update("@@\t\n-x").chunks[0].anchors == ()

    def test_anchor_keeps_leading_but_not_trailing_whitespace(self) -> None:  # G7.5
        assert update("@@    def f():   \n-x").chunks[0].anchors == ("   def f():",)

    def test_anchor_needs_a_space_after_the_marker(self) -> None:
        assert_hunk_error(wrap("*** Update File: a\n@@ctx\n-x"), 3, unexpected("@@ctx"))
        assert_hunk_error(wrap("*** Update File: a\n-x\n@@ctx"), 4, expected_marker("@@ctx"))

    @pytest.mark.parametrize("header", ["@@ -1,2 +1,2 @@", "@@ -1 +1 @@", "@@ -12,7 +12,8 @@ def f():",
                                        "@@ -0,0 +1,3 @@"])
    def test_unified_diff_range_header_reads_as_a_bare_marker(self, header: str) -> None:
        assert update(f"{header}\n-x\n{header}\n-y").chunks == (
            Chunk((), (("-", "x"),), False, 3), Chunk((), (("-", "y"),), False, 5))
        # after an anchor, or a bare '@@', it adds nothing
        assert update(f"@@ f\n{header}\n-x").chunks[0].anchors == ("f",)
        assert update(f"@@\n{header}\n-x").chunks[0].anchors == ()

    def test_a_range_lookalike_is_an_anchor(self) -> None:
        assert update("@@ -1,2 +1,2\n-x").chunks[0].anchors == ("-1,2 +1,2",)


class TestEndOfFile:
    def test_marks_the_last_chunk(self) -> None:  # G7.6
        hunk = update("@@\n-a\n+b\n*** End of File")
        assert hunk.chunks == (Chunk((), (("-", "a"), ("+", "b")), True, 3),)

    def test_marker_with_trailing_spaces(self) -> None:  # [R: 51]
        assert update("-a\n*** End of File   ").chunks[0].is_end_of_file is True

    def test_indented_marker_is_not_a_marker(self) -> None:
        assert_hunk_error(wrap("*** Update File: a\n-a\n*** End of Filex"), 4,
                          expected_marker("*** End of Filex"))
        assert update("-a\n *** End of File").chunks[0].lines == (("-", "a"), (" ", "*** End of File"))

    def test_blank_lines_after_the_marker_are_ignored(self) -> None:
        # test_parse_patch_preserves_end_of_file_marker; ..._ignores_empty_lines_after_end_of_file
        text = wrap("*** Update File: a\n@@\n+quux\n*** End of File\n\n   \n")
        patch = parse(text)
        assert patch.hunks == (UpdateFile("a", (Chunk((), (("+", "quux"),), True, 3),), None, 2),)
        assert patch.text == text

    def test_lines_after_the_marker_need_a_new_chunk(self) -> None:  # G7.1, [R: 29]
        assert_hunk_error(wrap("*** Update File: a\n-x\n*** End of File\n y"), 5, expected_marker(" y"))
        assert_hunk_error(wrap("*** Update File: a\n-x\n*** End of File\n+z"), 5, expected_marker("+z"))

    def test_second_marker_is_rejected(self) -> None:
        assert_hunk_error(wrap("*** Update File: a\n-x\n*** End of File\n*** End of File"), 5,
                          expected_marker("*** End of File"))

    def test_new_chunk_after_the_marker(self) -> None:
        hunk = update("-x\n*** End of File\n\n@@ c\n-z")
        assert [(c.anchors, c.lines, c.is_end_of_file) for c in hunk.chunks] == [
            ((), (("-", "x"),), True), (("c",), (("-", "z"),), False),
        ]

    def test_marker_on_an_empty_chunk(self) -> None:  # test_streaming_..._returns_errors
        assert_hunk_error(wrap("*** Update File: a\n@@\n*** End of File"), 4,
                          "Update hunk does not contain any lines")
        assert_hunk_error(wrap("*** Update File: a\n@@ ctx\n*** End of File"), 4,
                          "Update hunk does not contain any lines")

    def test_marker_with_no_chunk_is_ignored_then_the_hunk_is_empty(self) -> None:
        assert_hunk_error(wrap("*** Update File: a\n*** End of File"), 2,
                          "Update file hunk for path 'a' is empty")


class TestMoveTo:
    def test_move_before_the_first_chunk(self) -> None:
        hunk = update("*** Move to: b.txt\n@@\n-x\n+y")
        assert hunk.move_to == "b.txt"
        assert hunk.chunks == (Chunk((), (("-", "x"), ("+", "y")), False, 4),)

    def test_trailing_spaces_are_dropped(self) -> None:  # [R: 21]
        assert update("*** Move to: b.txt   \n x").move_to == "b.txt"

    def test_inner_leading_spaces_are_kept(self) -> None:
        assert update("*** Move to:   b.txt\n x").move_to == "  b.txt"

    def test_indented_move_is_a_context_line(self) -> None:  # [R: 23]
        hunk = update("  *** Move to: b\n-x")
        assert hunk.move_to is None
        assert hunk.chunks[0].lines == ((" ", " *** Move to: b"), ("-", "x"))

    def test_move_after_a_blank_line_is_rejected(self) -> None:  # [R: 72]
        assert_hunk_error(wrap("*** Update File: a\n\n*** Move to: b\n-x"), 4,
                          expected_marker("*** Move to: b"))

    def test_move_after_a_body_line_is_rejected(self) -> None:
        assert_hunk_error(wrap("*** Update File: a\n-x\n*** Move to: c"), 4,
                          expected_marker("*** Move to: c"))

    def test_move_after_a_marker_is_rejected(self) -> None:
        assert_hunk_error(wrap("*** Update File: a\n@@\n*** Move to: c\n-x"), 4,
                          unexpected("*** Move to: c"))

    def test_second_move_is_rejected(self) -> None:
        assert_hunk_error(wrap("*** Update File: a\n*** Move to: b\n*** Move to: c\n-x"), 4,
                          unexpected("*** Move to: c"))

    def test_move_with_an_empty_path_is_rejected(self) -> None:
        assert_hunk_error(wrap("*** Update File: a\n*** Move to:   \n-x"), 3,
                          unexpected("*** Move to:   "))

    def test_move_without_a_chunk_is_an_empty_hunk(self) -> None:  # [R: 78], D12
        exc = assert_hunk_error(wrap("*** Update File: a.txt\n*** Move to: b.txt"), 2,
                                "Update file hunk for path 'a.txt' is empty")
        assert "context" in exc.hint  # tells how to express a pure rename

    def test_move_without_a_chunk_before_another_header(self) -> None:  # test_..._returns_errors
        assert_hunk_error(wrap("*** Update File: a\n*** Move to: b\n*** Delete File: c"), 2,
                          "Update file hunk for path 'a' is empty")


class TestUpdateErrors:
    def test_empty_update_at_end(self) -> None:  # scenario 008, G9
        assert_hunk_error(wrap("*** Update File: foo.txt"), 2,
                          "Update file hunk for path 'foo.txt' is empty")

    def test_empty_update_before_another_header(self) -> None:
        assert_hunk_error(wrap("*** Update File: foo.txt\n*** Add File: b\n+x"), 2,
                          "Update file hunk for path 'foo.txt' is empty")

    def test_empty_chunk_at_end_patch(self) -> None:  # G9, [R: 11]
        assert_hunk_error(wrap("*** Update File: a\n@@"), 4, "Update hunk does not contain any lines")
        assert_hunk_error(wrap("*** Update File: a\n-x\n@@ ctx"), 5,
                          "Update hunk does not contain any lines")

    @pytest.mark.parametrize(
        "header", ["*** Add File: b", "*** Delete File: b", "*** Update File: b"]
    )
    def test_empty_chunk_before_a_header_quotes_the_trimmed_header(self, header: str) -> None:
        # G9, [R: 11b, 11c]
        assert_hunk_error(wrap(f"*** Update File: a\n@@\n{header}   \n+x"), 4, unexpected(header))

    def test_first_body_line_without_prefix(self) -> None:  # G10, [R: 10]
        assert_hunk_error(wrap("*** Update File: a\nbad\n-x"), 3, unexpected("bad"))

    def test_bad_line_after_body_lines(self) -> None:  # test_streaming_..._returns_errors
        assert_hunk_error(wrap("*** Update File: a\n@@\n-old\nbad"), 5, expected_marker("bad"))

    def test_errors_quote_the_original_untrimmed_line(self) -> None:  # G7.11
        assert_hunk_error(wrap("*** Update File: a\nbad  \n-x"), 3, unexpected("bad  "))
        assert_hunk_error(wrap("*** Update File: a\n-x\nbad\t "), 4, expected_marker("bad\t "))

    def test_no_newline_marker_is_rejected(self) -> None:  # [R: 28]
        exc = assert_hunk_error(wrap("*** Update File: a\n-x\n+y\n\\ No newline at end of file"), 5,
                                expected_marker("\\ No newline at end of file"))
        assert "final-newline" in exc.hint

    def test_tab_line_is_rejected(self) -> None:  # [R: 17]
        exc = assert_hunk_error(wrap("*** Update File: a\n-x\n\tindented"), 4, expected_marker("\tindented"))
        assert "tab" in exc.hint
        assert_hunk_error(wrap("*** Update File: a\n\tindented"), 3, unexpected("\tindented"))
        assert_hunk_error(wrap("*** Update File: a\n\t"), 3, unexpected("\t"))

    def test_star_lines_that_are_not_markers(self) -> None:
        assert_hunk_error(wrap("*** Update File: a\n-x\n*** Environment ID: e"), 4,
                          expected_marker("*** Environment ID: e"))
        assert_hunk_error(wrap("*** Update File: a\n*** Frobnicate"), 3, unexpected("*** Frobnicate"))


# --------------------------------------------------------------------------------------------
# Departures from DESIGN §1/§3 found by these tests
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "line"),
    [
        (f"{BEGIN}\n*** Add File: a\n+x\n{END}\n*** Add File: b\n+y\n{END}", 5),
        (wrap("*** Environment ID: a\n*** Environment ID: b\n*** Delete File: x"), 3),
    ],
    ids=["content-after-end-patch", "second-environment-id"],
)
def test_patch_level_errors_name_the_offending_line(text: str, line: int) -> None:
    exc = fails(text)
    assert exc.line == line


def test_parse_result_is_a_frozen_value() -> None:
    patch = parse(wrap("*** Delete File: a"))
    assert isinstance(patch, Patch)
    with pytest.raises(AttributeError):
        patch.text = "x"  # type: ignore[misc]


def test_lone_surrogate_in_a_patch_is_a_parse_error(tmp_path: Path) -> None:
    with pytest.raises(ParseError, match="not valid Unicode"):
        patchtx.plan_patch("*** Begin Patch\n*** Add File: a\n+\ud800\n*** End Patch", tmp_path)
