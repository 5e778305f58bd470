"""Matcher: the four passes, anchors, EOF, chunk order, ambiguity, pure insertions, miss hints.

Most tests go through the planner on a real temporary tree (``tree`` fixture, tests/plan/conftest.py);
the seek tests call the line index directly.
"""

from __future__ import annotations

import pytest

from patchtx.errors import AmbiguousContextError, ContextNotFoundError
from patchtx.model import Chunk
from patchtx.place.hints import MAX_REGION_LINES, MAX_SHOWN_CHARS, describe_miss, visible
from patchtx.place.matching import MAX_CANDIDATES, LineIndex, Locator
from patchtx.place.normalise import normalise

from ..plan.conftest import result_of


def update(body: str, path: str = "f.txt") -> str:
    return f"*** Update File: {path}\n{body}"


def lines(*texts: str) -> str:
    return "".join(t + "\n" for t in texts)


def miss(tree, body: str, **options: bool) -> ContextNotFoundError:
    exc = tree.fail(update(body), **options)
    assert isinstance(exc, ContextNotFoundError), exc.message
    assert exc.kind == "context_not_found"
    assert "Nothing was changed." in exc.message
    return exc


def ambiguous(tree, body: str) -> AmbiguousContextError:
    exc = tree.fail(update(body))
    assert isinstance(exc, AmbiguousContextError), exc.message
    assert exc.kind == "ambiguous_context"
    assert "Nothing was changed." in exc.message
    return exc


# --------------------------------------------------------------------------------------------
# seek_sequence (seek_sequence.rs tests) on the line index
# --------------------------------------------------------------------------------------------


class TestSeek:
    def test_exact_match_finds_sequence(self) -> None:
        assert LineIndex(["foo", "bar", "baz"]).search(["bar", "baz"], 0, 3) == (0, [1])

    def test_rstrip_match_ignores_trailing_whitespace(self) -> None:
        assert LineIndex(["foo   ", "bar\t\t"]).search(["foo", "bar"], 0, 2) == (1, [0])

    def test_trim_match_ignores_leading_and_trailing_whitespace(self) -> None:
        assert LineIndex(["    foo   ", "   bar\t"]).search(["foo", "bar"], 0, 2) == (2, [0])

    def test_pattern_longer_than_input_returns_nothing(self) -> None:
        assert LineIndex(["just one line"]).search(["too", "many", "lines"], 0, 1) == (-1, [])

    def test_empty_pattern_matches_at_the_lower_bound(self) -> None:
        assert LineIndex(["a", "b"]).search([], 1, 2) == (0, [1])

    def test_search_respects_the_window(self) -> None:
        index = LineIndex(["x", "y", "x", "y", "x"])
        assert index.search(["x"], 1, 5) == (0, [2, 4])
        assert index.search(["x", "y"], 0, 3) == (0, [0])  # the one at 2 does not fit before 3
        assert index.search(["x"], 5, 5) == (-1, [])

    def test_eof_tries_only_the_last_position(self) -> None:
        index = LineIndex(["a", "b", "a", "b", "c"])
        assert index.search(["a", "b"], 0, 5, eof=True) == (-1, [])
        assert index.search(["b", "c"], 0, 5, eof=True) == (0, [3])
        assert index.search(["b", "c"], 4, 5, eof=True) == (-1, [])  # never before the cursor

    def test_normalise(self) -> None:
        assert normalise("  \u201cx\u201d \u2013 it\u2019s\u00a0ok\u2026  ") == '"x" - it\'s ok\u2026'


# --------------------------------------------------------------------------------------------
# The four passes, in order
# --------------------------------------------------------------------------------------------


class TestPasses:
    def test_exact_later_beats_trailing_whitespace_earlier(self, tree) -> None:
        tree.write("f.txt", "foo  \nfoo\n")
        assert tree.after(update("-foo\n+bar")) == b"foo  \nbar\n"

    def test_exact_later_beats_trimmed_earlier(self, tree) -> None:  # [R: 61]
        tree.write("f.txt", "    foo\na\nfoo\n")
        assert tree.after(update("-foo\n+bar")) == b"    foo\na\nbar\n"

    def test_exact_right_below_a_shifted_look_alike_is_ambiguous(self, tree) -> None:
        # One step of a staircase ('    foo' right above 'foo'): the hunk written 4 spaces too
        # shallow reads at line 1 too (issue 37: a reading only when exactly one is consistent).
        tree.write("f.txt", "    foo\nfoo\n")
        with pytest.raises(AmbiguousContextError, match="shifted as a whole"):
            tree.after(update("-foo\n+bar"))

    def test_trailing_whitespace_pass_beats_trim_pass(self, tree) -> None:
        tree.write("f.txt", "  foo\nx\nfoo \n")
        assert tree.after(update("-foo\n+bar")) == b"  foo\nx\nbar\n"

    def test_trim_pass_beats_unicode_pass(self, tree) -> None:
        # (The trim pass's line is 2 spaces deeper than the hunk's: so is the added line.)
        tree.write("f.txt", "a\u2013b\n  a-b  \n")
        assert tree.after(update("-a-b\n+X")) == "a\u2013b\n  X\n".encode()

    def test_whole_block_must_match_in_one_pass(self, tree) -> None:
        # Line 1 only matches exactly at 3-4 and fuzzily at 1-2, so the exact pass wins.
        tree.write("f.txt", "a \nb\na\nb\n")
        assert tree.after(update(" a\n-b\n+B")) == b"a \nb\na\nB\n"

    def test_trailing_whitespace_forgiven(self, tree) -> None:
        tree.write("f.txt", "keep\t \nold  \n")
        assert tree.after(update(" keep\n-old\n+new")) == b"keep\t \nnew\n"

    def test_surrounding_whitespace_forgiven(self, tree) -> None:
        tree.write("f.txt", "\tkeep\n\told\n")
        assert tree.after(update(" keep\n-old\n+new")) == b"\tkeep\n\tnew\n"

    def test_surrounding_whitespace_unlike_line_by_line_is_refused(self, tree) -> None:
        # A tab in front of one line, four spaces in front of the other: the added line's
        # indentation has no one reading (docs/format.md, "Indentation and trailing white space").
        tree.write("f.txt", "\tkeep\n    old\n")
        refused = tree.fail(update(" keep\n-old\n+new"))
        assert refused.kind == "ambiguous_context", refused.message
        assert "indentation" in refused.message and '"keep"' in refused.message

    def test_interior_whitespace_must_match(self, tree) -> None:
        tree.write("f.txt", "a  b\n")
        miss(tree, "-a b\n+c")

    def test_tabs_are_not_spaces(self, tree) -> None:
        tree.write("f.txt", "a\tb\n")
        miss(tree, "-a b\n+c")


class TestUnicode:
    @pytest.mark.parametrize(
        ("in_file", "in_patch"),
        [
            ("x \u2013 y", "x - y"),  # en dash
            ("x \u2014 y", "x - y"),  # em dash
            ("x \u2212 y", "x - y"),  # minus sign
            ("non\u2011breaking", "non-breaking"),  # non-breaking hyphen
            ("\u2010\u2012\u2015", "---"),
            ("it\u2019s", "it's"),  # right single quote
            ("\u2018q\u2019 \u201aq\u201b", "'q' 'q'"),
            ("\u201cquoted\u201d", '"quoted"'),  # curly double quotes
            ("\u201equoted\u201f", '"quoted"'),
            ("a\u00a0b", "a b"),  # no-break space
            ("a\u2002b\u2003c\u2009d\u202fe\u205ff\u3000g", "a b c d e f g"),
            ("x - y", "x \u2013 y"),  # the map applies to both sides
            # Canonical equivalence (NFC) before the map: a deliberate difference from Codex.
            ("caf\u00e9", "cafe\u0301"),  # NFC in the file, NFD in the patch
            ("cafe\u0301 nai\u0308ve", "caf\u00e9 na\u00efve"),  # NFD in the file
            ("a\u2000b", "a b"),  # U+2000 is canonically U+2002, which the map folds
            ("a\u2001b", "a b"),  # U+2001 is canonically U+2003
        ],
    )
    def test_mapped_characters_match(self, tree, in_file: str, in_patch: str) -> None:
        tree.write("f.txt", f"before\n{in_file}\nafter\n")
        assert tree.after(update(f" before\n-{in_patch}\n+NEW\n after")) == b"before\nNEW\nafter\n"

    @pytest.mark.parametrize(
        ("in_file", "in_patch"),
        [
            ("wait\u2026", "wait..."),  # ellipsis is not mapped [R: 63]
            ("\uff01", "!"),  # compatibility (NFKC) equivalence is not canonical: no match
            ("a\u200bb", "ab"),  # zero-width space stays
        ],
    )
    def test_unmapped_characters_do_not_match(self, tree, in_file: str, in_patch: str) -> None:
        tree.write("f.txt", f"{in_file}\n")
        miss(tree, f"-{in_patch}\n+NEW")

    def test_unicode_dash_update(self, tree) -> None:  # test_update_line_with_unicode_dash
        original = "import asyncio  # local import \u2013 avoids top\u2011level dep\n"
        tree.write("f.txt", original)
        patch = update("@@\n-import asyncio  # local import - avoids top-level dep\n"
                       "+import asyncio  # HELLO")
        assert tree.after(patch) == b"import asyncio  # HELLO\n"

    def test_fuzzily_matched_context_keeps_the_file_spelling(self, tree) -> None:  # [R: 20]
        tree.write("f.txt", "\u201chello\u201d \u2013 world\u00a0!\n    indented\nold\n")
        assert tree.after(update(' "hello" - world !\n     indented\n-old\n+new')) == \
            "\u201chello\u201d \u2013 world\u00a0!\n    indented\nnew\n".encode()


# --------------------------------------------------------------------------------------------
# @@ anchors
# --------------------------------------------------------------------------------------------

CLASSES = lines(
    "class A:",
    "    def m(self):",
    "        return 1",
    "",
    "class B:",
    "    def m(self):",
    "        return 1",
)


class TestAnchors:
    def test_anchor_must_equal_a_whole_line(self, tree) -> None:  # D2, [R: 14]
        tree.write("f.txt", "def foo():\n    return 1\n")
        exc = miss(tree, "@@ def foo\n-    return 1\n+    return 2")
        assert exc.headline == f"Failed to find context 'def foo' in {tree.path('f.txt')}"
        assert exc.line == 3
        assert exc.details["anchor"] == "def foo"
        assert "line 1" in exc.hint and "whole line" in exc.hint
        assert exc.details["closest_line"] == 1

    def test_anchor_indentation_is_forgiven(self, tree) -> None:  # [R: 14b]
        tree.write("f.txt", "class C:\n    def foo():\n        return 1\n")
        assert tree.after(update("@@ def foo():\n-        return 1\n+        return 2")) == \
            b"class C:\n    def foo():\n        return 2\n"

    def test_anchor_narrows_the_search(self, tree) -> None:
        tree.write("f.txt", CLASSES)
        assert tree.after(update("@@ class B:\n-        return 1\n+        return 2")) == lines(
            "class A:", "    def m(self):", "        return 1", "",
            "class B:", "    def m(self):", "        return 2").encode()

    def test_stacked_anchors_are_found_in_turn(self, tree) -> None:  # patchtx extension
        source = lines("class A:", "    def m(self):", "        return 1",
                       "class B:", "    def n(self):", "        return 1",
                       "    def m(self):", "        return 1")
        tree.write("f.txt", source)
        body = "@@ class B:\n@@     def m(self):\n-        return 1\n+        return 2"
        assert tree.after(update(body)) == source[: source.rindex("1")].encode() + b"2\n"
        # Neither anchor alone would do: 'def m' is ambiguous, 'class B:' picks n's line.
        assert isinstance(tree.fail(update("@@     def m(self):\n-        return 1\n+        return 2")),
                          AmbiguousContextError)
        # An anchor narrows where a hunk may be; it never chooses between the two matches of
        # 'return 1' after 'class B:' (the first would be n's line, which the patch may not mean).
        exc = tree.fail(update("@@ class B:\n-        return 1\n+        return 2"))
        assert isinstance(exc, AmbiguousContextError)
        assert exc.details["candidate_lines"] == [6, 8]

    def test_stacked_anchor_before_the_first_one_is_not_found(self, tree) -> None:
        tree.write("f.txt", lines("def m():", "    x", "class B:", "    y"))
        exc = miss(tree, "@@ class B:\n@@ def m():\n-    y")
        assert exc.headline == f"Failed to find context 'def m():' in {tree.path('f.txt')}"

    def test_anchor_missing(self, tree) -> None:  # [R: 76]
        tree.write("f.txt", "a\nb\n")
        exc = miss(tree, "@@ nothere\n-a")
        assert exc.headline == f"Failed to find context 'nothere' in {tree.path('f.txt')}"

    def test_anchor_line_itself_is_not_part_of_the_hunk(self, tree) -> None:
        tree.write("f.txt", "x\nanchor\nx\n")
        assert tree.after(update("@@ anchor\n-x\n+y")) == b"x\nanchor\ny\n"

    def test_anchor_on_the_line_before_the_hunk_only(self, tree) -> None:
        tree.write("f.txt", "x\nanchor\n")
        miss(tree, "@@ anchor\n-x\n+y")


# --------------------------------------------------------------------------------------------
# *** End of File, chunk order, blank-line retry
# --------------------------------------------------------------------------------------------


class TestEndOfFile:
    def test_anchors_the_match_at_the_end(self, tree) -> None:
        tree.write("f.txt", "x\ny\nx\n")
        assert tree.after(update("-x\n+X\n*** End of File")) == b"x\ny\nX\n"

    def test_no_fallback_when_not_at_the_end(self, tree) -> None:  # 4.4, [R: 15]
        tree.write("f.txt", "a\nb\nc\n")
        exc = miss(tree, "-b\n+B\n*** End of File")
        assert exc.headline == f"Failed to find expected lines in {tree.path('f.txt')}:\nb"

    def test_append_at_end(self, tree) -> None:  # scenario 022
        tree.write("f.txt", "first\nsecond\n")
        assert tree.after(update("@@\n first\n-second\n+second updated\n*** End of File")) == \
            b"first\nsecond updated\n"

    def test_overlapping_eof_chunk_is_rejected(self, tree) -> None:  # 4.4, [R: 73]
        tree.write("f.txt", "first\none\n")
        exc = miss(tree, "@@\n first\n-one\n+uno\n@@\n-one\n+ONE\n*** End of File")
        assert exc.headline == f"Failed to find expected lines in {tree.path('f.txt')}:\none"
        assert exc.line == 7

    def test_chunk_after_an_eof_chunk_searches_after_it(self, tree) -> None:  # [R: 30]
        tree.write("f.txt", "a\nb\n")
        miss(tree, "@@\n-b\n+B\n*** End of File\n@@\n-a\n+A", strict=True)
        # (Each hunk matches in one place only: the repair step places them in file order.)
        planned = tree.plan(update("@@\n-b\n+B\n*** End of File\n@@\n-a\n+A"))
        assert [r.kind for r in planned.repairs] == ["hunks_reordered"]
        assert result_of(planned, tree, "f.txt") == b"A\nB\n"

    def test_eof_chunk_is_not_checked_for_ambiguity(self, tree) -> None:
        tree.write("f.txt", "x\nx\n")
        assert tree.after(update("-x\n+y\n*** End of File")) == b"x\ny\n"


class TestChunkOrder:
    def test_chunks_apply_in_file_order(self, tree) -> None:
        tree.write("f.txt", lines("a", "b", "c", "d"))
        assert tree.after(update("@@\n-a\n+A\n@@\n-c\n+C")) == b"A\nb\nC\nd\n"

    def test_out_of_order_chunks_fail(self, tree) -> None:  # 4.2.4, [R: 27]
        tree.write("f.txt", lines("a", "b", "c", "d"))
        exc = miss(tree, "@@\n-c\n+C\n@@\n-a\n+A", strict=True)
        assert exc.headline == f"Failed to find expected lines in {tree.path('f.txt')}:\na"
        assert exc.line == 6
        assert "file order" in exc.hint
        assert exc.details["closest_line"] == 1
        # Not strict: each hunk matches in one place only, so the repair step reorders them.
        assert tree.after(update("@@\n-c\n+C\n@@\n-a\n+A")) == b"A\nb\nC\nd\n"

    def test_out_of_order_chunks_with_several_places_are_refused(self, tree) -> None:
        tree.write("f.txt", lines("a", "b", "a", "c", "d"))
        exc = miss(tree, "@@\n-c\n+C\n@@\n-a\n+A")
        assert "file order" in exc.hint

    def test_interleaved_changes(self, tree) -> None:  # test_update_file_hunk_interleaved_changes
        tree.write("f.txt", lines("a", "b", "c", "d", "e", "f"))
        body = "@@\n a\n-b\n+B\n@@\n c\n d\n-e\n+E\n@@\n f\n+g\n*** End of File"
        assert tree.after(update(body)) == b"a\nB\nc\nd\nE\nf\ng\n"

    def test_repeated_lines_keep_change_order(self, tree) -> None:
        # test_apply_patch_cli_preserves_change_order_with_repeated_lines
        tree.write("f.txt", "a\nb\n")
        assert tree.after(update("-a\n-b\n+b\n+b\n+a")) == b"b\nb\na\n"


class TestTrailingBlankRetry:
    def test_blank_separator_between_chunks_is_harmless(self, tree) -> None:  # 4.2.3, [R: 08]
        tree.write("f.txt", lines("a", "b", "c", "d"))
        assert tree.after(update("@@\n a\n-b\n+B\n\n@@\n c\n-d\n+D")) == b"a\nB\nc\nD\n"

    def test_trailing_blank_kept_when_the_file_has_it(self, tree) -> None:
        tree.write("f.txt", "a\nb\n\nc\n")
        assert tree.after(update(" a\n-b\n+B\n")) == b"a\nB\n\nc\n"

    def test_blank_context_then_added_lines(self, tree) -> None:
        tree.write("f.txt", "a\nb\n")
        assert tree.after(update(" a\n-b\n\n+x")) == b"a\n\nx\n"

    def test_removed_blank_at_end_of_pattern(self, tree) -> None:
        tree.write("f.txt", "a\nb\n")
        assert tree.after(update(" a\n-b\n-\n+B")) == b"a\nB\n"

    def test_blank_line_in_the_middle_must_exist(self, tree) -> None:  # [R: 08b]
        tree.write("f.txt", "a\nb\n")
        exc = miss(tree, " a\n\n-b\n+B")
        assert exc.headline == f"Failed to find expected lines in {tree.path('f.txt')}:\na\n\nb"

    # A section whose one old line is a blank line the file lacks: the retry leaves it nothing to
    # stand on, so its other lines could go at any line from the cursor on (Codex: the cursor).
    @pytest.mark.parametrize("body", ["-\n+c", "@@ x\n-\n+c", "-", "\n+c"])
    def test_a_retry_left_with_no_old_line_is_refused(self, tree, body: str) -> None:
        tree.write("f.txt", "x\ny\n")
        exc = miss(tree, body)
        assert tree.read("f.txt") == b"x\ny\n"
        # The hint says what is missing (a blank line casts no vote for a closest region).
        where = "from file line 2 on" if body.startswith("@@ x") else "in the file"
        assert exc.hint.startswith(f"The hunk's one old line is a blank line, and the file has none {where}")

    @pytest.mark.parametrize(("body", "codex"), [("-\n+c", b"c\nx\ny\n"), ("@@ x\n-\n+c", b"x\nc\ny\n")])
    def test_first_match_takes_the_cursor_as_codex_does(self, tree, body: str, codex: bytes) -> None:
        tree.write("f.txt", "x\ny\n")
        assert tree.after(update(body), first_match=True) == codex

    def test_first_match_at_the_cursor_that_removes_nothing_is_no_change(self, tree) -> None:
        # Codex removes nothing there and reports the file modified: refused as changing nothing.
        tree.write("f.txt", "x\ny\n")
        assert tree.fail(update("-"), first_match=True).kind == "no_change"

    def test_a_retry_left_with_no_old_line_at_the_end_of_the_file_has_one_place(self, tree) -> None:
        tree.write("f.txt", "")
        assert tree.after(update("@@\n\n+")) == b"\n"  # (differential table case X1b)


# --------------------------------------------------------------------------------------------
# Ambiguity (DESIGN §2: refused with every candidate unless made unique)
# --------------------------------------------------------------------------------------------


class TestAmbiguity:
    def test_two_places_are_refused_with_both_line_numbers(self, tree) -> None:
        tree.write("f.txt", lines("x", "y", "x", "y"))
        exc = ambiguous(tree, "-x\n+X")
        assert exc.details["candidate_lines"] == [1, 3]
        assert "1, 3" in exc.headline
        assert exc.line == 3
        assert "patch line 3" in exc.headline
        assert "@@" in exc.hint
        assert exc.path == tree.path("f.txt")

    def test_every_candidate_is_listed(self, tree) -> None:
        tree.write("f.txt", lines("pad", "x", "y", "pad", "x", "y", "x", "y", "x"))
        exc = ambiguous(tree, " x\n-y\n+Y")
        assert exc.details["candidate_lines"] == [2, 5, 7]
        assert "2, 5, 7" in exc.headline

    def test_first_match_option_restores_codex(self, tree) -> None:  # [R: 60]
        tree.write("f.txt", lines("x", "y", "x", "y"))
        assert tree.after(update("-x\n+X"), first_match=True) == b"X\ny\nx\ny\n"

    def test_more_context_makes_it_unique(self, tree) -> None:
        tree.write("f.txt", lines("x", "y", "x", "z"))
        assert tree.after(update("-x\n+X\n z")) == b"x\ny\nX\nz\n"

    def test_anchor_makes_it_unique(self, tree) -> None:
        tree.write("f.txt", lines("x", "y", "x", "z"))
        assert tree.after(update("@@ y\n-x\n+X")) == b"x\ny\nX\nz\n"

    def test_identical_chunks_for_two_identical_places_are_not_ambiguous(self, tree) -> None:
        tree.write("f.txt", lines("x", "y", "x", "y"))
        assert tree.after(update("@@\n-x\n+X\n@@\n-x\n+X")) == b"X\ny\nX\ny\n"

    def test_two_chunks_for_three_places_are_ambiguous(self, tree) -> None:
        tree.write("f.txt", lines("x", "y", "x", "y", "x"))
        exc = ambiguous(tree, "@@\n-x\n+X\n@@\n-x\n+X")
        # Both hunks can move: (1, 3), (1, 5) and (3, 5) are all placements.
        assert exc.details["candidate_lines"] == [1, 3]
        assert exc.line == 3
        assert [h["candidate_lines"] for h in exc.details["hunks"]] == [[1, 3], [3, 5]]
        assert [h["patch_line"] for h in exc.details["hunks"]] == [3, 6]

    def test_later_chunk_makes_an_earlier_one_unique(self, tree) -> None:
        # The chunk for 'x' must come before the one for 'w', so only line 1 is possible.
        tree.write("f.txt", lines("x", "w", "x"))
        assert tree.after(update("@@\n-x\n+X\n@@\n-w\n+W")) == b"X\nW\nx\n"

    def test_ambiguity_within_a_fuzzy_pass(self, tree) -> None:
        tree.write("f.txt", "a \nb\na  \n")
        exc = ambiguous(tree, "-a\n+A")
        assert exc.details["candidate_lines"] == [1, 3]

    def test_exact_match_is_unique_even_with_fuzzy_lookalikes(self, tree) -> None:
        # (Not beside each other: '  a' right below 'a' is a step of a staircase, where the hunk
        # shifted as a whole reads too: test_exact_right_below_a_shifted_look_alike_is_ambiguous.)
        tree.write("f.txt", "a \na\nx\n  a\n")
        assert tree.after(update("-a\n+A")) == b"a \nA\nx\n  a\n"

    def test_a_repeated_anchor_narrows_without_refusing_a_unique_hunk(self, tree) -> None:
        # 'def f():' occurs twice, but the hunk's own lines occur once after the first.
        tree.write("f.txt", lines("def f():", "    x = 1", "def f():", "    x = 2"))
        assert tree.after(update("@@ def f():\n-    x = 1\n+    x = 3")) == \
            lines("def f():", "    x = 3", "def f():", "    x = 2").encode()
        assert tree.after(update("@@ def f():\n-    x = 2\n+    x = 4")) == \
            lines("def f():", "    x = 1", "def f():", "    x = 4").encode()

    def test_a_unique_anchor_never_chooses_between_matches_of_the_hunk(self, tree) -> None:
        # The shape of the wrong edits found by replaying real history: a unique anchor, then a
        # hunk whose lines (a blank line and a doc comment) occur twice after it.
        source = lines("impl Ignore {", "", "    /// Docs.", "    fn a() {}", "",
                       "    /// Docs.", "    fn b() {}", "}")
        tree.write("f.txt", source)
        exc = ambiguous(tree, "@@ impl Ignore {\n \n-    /// Docs.\n+    /// Better docs.")
        assert exc.details["candidate_lines"] == [2, 5]

    def test_ambiguous_anchor_of_a_pure_insertion_is_refused(self, tree) -> None:
        tree.write("f.txt", lines("section", "a", "section", "b"))
        exc = ambiguous(tree, "@@ section\n+new")
        assert exc.details["candidate_lines"] == [1, 3]

    def test_candidates_are_bounded(self, tree) -> None:
        tree.write("f.txt", lines(*(["dup", "other"] * 50)))
        exc = ambiguous(tree, "-dup\n+x")
        assert exc.details["candidate_lines"] == [1 + 2 * k for k in range(MAX_CANDIDATES)]
        assert "(and more)" in exc.headline
        assert len(exc.message) < 2000

    def test_overlapping_candidates(self, tree) -> None:
        tree.write("f.txt", lines("a", "a", "a"))
        exc = ambiguous(tree, " a\n-a\n+b")
        assert exc.details["candidate_lines"] == [1, 2]


# --------------------------------------------------------------------------------------------
# Pure insertions (DESIGN §2: right after the anchor; without anchor at end of file)
# --------------------------------------------------------------------------------------------


class TestPureInsertion:
    def test_under_an_anchor_goes_right_after_it(self, tree) -> None:  # DESIGN §2 (Codex: EOF, [R: 02])
        tree.write("f.txt", lines("def foo():", "    pass", "", "def bar():", "    pass"))
        assert tree.after(update("@@ def foo():\n+    # added")) == \
            lines("def foo():", "    # added", "    pass", "", "def bar():", "    pass").encode()

    def test_under_stacked_anchors_goes_after_the_last(self, tree) -> None:
        tree.write("f.txt", CLASSES)
        result = tree.after(update("@@ class B:\n@@     def m(self):\n+        '''doc'''"))
        assert result == CLASSES.replace("class B:\n    def m(self):\n",
                                         "class B:\n    def m(self):\n        '''doc'''\n").encode()

    def test_without_an_anchor_goes_to_the_end(self, tree) -> None:  # scenario 016
        tree.write("f.txt", "line1\nline2\n")
        assert tree.after(update("@@\n+added line 1\n+added line 2")) == \
            b"line1\nline2\nadded line 1\nadded line 2\n"

    def test_anchor_on_the_last_line(self, tree) -> None:
        tree.write("f.txt", "a\nlast\n")
        assert tree.after(update("@@ last\n+x")) == b"a\nlast\nx\n"

    def test_anchor_on_the_last_line_after_an_insertion_without_anchor(self, tree) -> None:
        # Both go at the end of the file; the anchored one right after its anchor, the other after
        # every hunk there (it went first, in chunk order, leaving 'x' away from 'last').
        tree.write("f.txt", "a\nlast\n")
        assert tree.after(update("@@\n+end\n@@ last\n+x")) == b"a\nlast\nx\nend\n"

    def test_into_an_empty_file(self, tree) -> None:  # [R: 32]
        tree.write("f.txt", b"")
        assert tree.after(update("@@\n+x")) == b"x\n"

    def test_after_a_trailing_blank_line(self, tree) -> None:  # [R: 02b, 75]
        tree.write("f.txt", "a\nb\n\n")
        assert tree.after(update("@@\n+x")) == b"a\nb\n\nx\n"
        tree.write("f.txt", "\n")
        assert tree.after(update("@@\n+x")) == b"\nx\n"

    def test_pure_addition_chunk_followed_by_removal(self, tree) -> None:  # lib.rs test
        tree.write("f.txt", "line1\nline2\nline3\n")
        body = "@@\n+after-context\n+second-line\n@@\n line1\n-line2\n-line3\n+line2-replacement"
        assert tree.after(update(body)) == b"line1\nline2-replacement\nafter-context\nsecond-line\n"

    def test_anchored_insertion_before_a_chunk_at_the_same_place(self, tree) -> None:
        tree.write("f.txt", "head\nold\ntail\n")
        assert tree.after(update("@@ head\n+ins\n@@\n-old\n+new")) == b"head\nins\nnew\ntail\n"

    def test_insertion_with_the_eof_marker(self, tree) -> None:  # test_unified_diff_insert_at_eof
        tree.write("f.txt", "foo\nbar\nbaz\n")
        assert tree.after(update("@@\n+quux\n*** End of File")) == b"foo\nbar\nbaz\nquux\n"


# --------------------------------------------------------------------------------------------
# Miss hints (DESIGN §3)
# --------------------------------------------------------------------------------------------

NUMBERED = lines(*(f"line {i}" for i in range(1, 21)))


class TestMissHints:
    def test_closest_region_and_first_difference(self, tree) -> None:
        tree.write("f.txt", NUMBERED.replace("line 10\n", "line ten\n"))
        exc = miss(tree, " line 9\n-line 10\n+X\n line 11")
        assert exc.headline == (f"Failed to find expected lines in {tree.path('f.txt')}:\n"
                                "line 9\nline 10\nline 11")
        assert exc.line == 3
        assert exc.details["closest_line"] == 9
        assert "file lines 9-11" in exc.hint
        assert "2 of 3 lines alike" in exc.hint
        assert "First difference at file line 10" in exc.hint
        assert "line ten" in exc.hint
        for number in (9, 10, 11):
            assert f"{number:>7} | " in exc.hint
        assert "     12 | " not in exc.hint and "      8 | " not in exc.hint

    def test_difference_in_the_first_line(self, tree) -> None:
        tree.write("f.txt", NUMBERED)
        exc = miss(tree, "-line 4x\n line 5\n line 6")
        assert "file lines 4-6" in exc.hint
        assert "First difference at file line 4" in exc.hint

    def test_region_would_end_past_the_file(self, tree) -> None:
        tree.write("f.txt", NUMBERED)
        exc = miss(tree, " line 19\n-line 20\n+X\n line 21")
        assert exc.details["closest_line"] == 19
        assert "file lines 19-20" in exc.hint
        assert "past the end" in exc.hint

    def test_region_would_start_before_the_file(self, tree) -> None:
        tree.write("f.txt", NUMBERED)
        exc = miss(tree, " zeroth\n line 1\n-line 2")
        assert "No line of the file resembles" not in exc.hint
        assert exc.details["closest_line"] == 1
        assert "before the start" in exc.hint

    @pytest.mark.parametrize(
        ("in_file", "in_patch", "shown"),
        [
            ("line\t10", "line 10", "line\\t10"),
            ("line\u00a010", "line 10x", "line\\u00a0(no-break space)10"),
            ("it\u2019s 10", "it's 10x", "it\\u2019(’)s 10"),
            ("say \u201chi\u201d", 'say "hi" x', "say \\u201c(“)hi\\u201d(”)"),
            ("line 10  ", "line 10x", "line 10··(2 trailing spaces)"),
            ("line 10 ", "line 10x", "line 10·(1 trailing space)"),
            ("a\u2013b", "a-b-c", "a\\u2013(–)b"),
        ],
    )
    def test_invisible_differences_are_made_visible(self, tree, in_file: str, in_patch: str,
                                                    shown: str) -> None:
        tree.write("f.txt", NUMBERED.replace("line 10\n", in_file + "\n"))
        exc = miss(tree, f" line 9\n-{in_patch}\n+X\n line 11")
        assert "First difference at file line 10" in exc.hint
        difference = exc.hint.split("First difference at file line 10")[1].split("Current text")[0]
        assert shown in difference
        assert f"     10 | {shown}\n" in exc.hint

    def test_carriage_return_in_the_patch_is_made_visible(self, tree) -> None:
        tree.write("f.txt", NUMBERED)
        exc = miss(tree, " line 9\n-line\r10\n line 11")
        difference = exc.hint.split("First difference at file line 10")[1].split("Current text")[0]
        assert "line\\r10" in difference
        assert "\r" not in exc.hint

    def test_nothing_resembles(self, tree) -> None:
        tree.write("f.txt", NUMBERED)
        exc = miss(tree, "-completely\n-different")
        assert "No line of the file resembles" in exc.hint
        assert exc.details["closest_line"] is None

    def test_single_line_near_miss_names_the_most_similar_line(self, tree) -> None:
        tree.write("f.txt", lines("alpha", "def compute_total(items):", "omega"))
        exc = miss(tree, "-def compute_totals(items):\n+x")
        assert exc.details["closest_line"] == 2
        assert "line 2" in exc.hint

    def test_region_listing_is_capped(self, tree) -> None:
        tree.write("f.txt", NUMBERED)
        body = "\n".join(f" line {i}" for i in range(1, 19)) + "\n-line 19x"
        exc = miss(tree, body)
        listed = [ln for ln in exc.hint.splitlines() if " | " in ln]
        assert len(listed) == MAX_REGION_LINES
        assert "more lines" in exc.hint

    def test_long_lines_are_truncated(self, tree) -> None:
        long_line = "y" * 5000
        tree.write("f.txt", lines("a", long_line, "c"))
        exc = miss(tree, f" a\n-{long_line}z\n c")
        assert "…" in exc.hint
        assert len(exc.hint) < 1000  # the headline quotes the patch verbatim; the hint is capped

    def test_huge_file_miss_is_bounded(self, tree) -> None:
        tree.write("f.txt", "".join(f"row {i % 7}\n" for i in range(200_000)))
        exc = miss(tree, " row 1\n row 2\n-row 9\n+x")
        assert len(exc.message) < 1000
        assert len(exc.hint.splitlines()) <= MAX_REGION_LINES + 2

    def test_huge_file_anchor_miss_is_bounded(self, tree) -> None:
        tree.write("f.txt", "".join(f"row {i}\n" for i in range(200_000)))
        exc = miss(tree, "@@ row 5000000\n-row 9")
        assert len(exc.message) < 1000


class TestVisible:
    @pytest.mark.parametrize(
        ("text", "shown"),
        [
            ("plain", "plain"),
            ("a\tb", "a\\tb"),
            ("a\rb", "a\\rb"),
            ("\ufeffstart", "\\ufeff(BOM)start"),
            ("a\u00a0b", "a\\u00a0(no-break space)b"),
            ("\u2018\u2019\u201c\u201d", "\\u2018(‘)\\u2019(’)\\u201c(“)\\u201d(”)"),
            ("\u2013\u2014", "\\u2013(–)\\u2014(—)"),
            ("a\u200bb", "a\\u200b(zero-width space)b"),
            ("x   ", "x···(3 trailing spaces)"),
            ("   ", "···(3 trailing spaces)"),
        ],
    )
    def test_visible(self, text: str, shown: str) -> None:
        assert visible(text) == shown

    def test_visible_is_capped(self) -> None:
        assert visible("z" * 1000) == "z" * MAX_SHOWN_CHARS + "…"

    def test_describe_miss_directly(self) -> None:
        hint = describe_miss(["a", "b", "c"], ["c", "X"], 0)
        assert hint.closest_line == 3
        assert "past the end" in hint.text


class TestLocator:
    def test_placements_are_sorted_by_position(self) -> None:
        chunks = [Chunk((), (("+", "end"),)), Chunk((), ((" ", "a"), ("-", "b"), ("+", "B")))]
        placements = Locator(["a", "b", "c"], "f").place(chunks)
        assert [(p.chunk_index, p.start, p.length) for p in placements] == [(1, 0, 2), (0, 3, 0)]

    def test_anchored_insertion_position(self) -> None:
        placements = Locator(["a", "b", "c"], "f").place([Chunk(("b",), (("+", "x"),))])
        assert [(p.start, p.length) for p in placements] == [(2, 0)]
