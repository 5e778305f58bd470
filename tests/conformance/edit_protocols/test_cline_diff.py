"""Conformance with Cline's SEARCH/REPLACE diffs (``------- SEARCH`` / ``=======`` /
``+++++++ REPLACE``): one case per test of ``cline/cline``'s
``src/core/assistant-message/diff.test.ts`` and ``diff_edge_cases.test.ts`` (the format in
``diff.ts``; last at ``apps/vscode/src/core/assistant-message/`` before commit 1f31738b32, whose
``diff_edge_cases2.test.ts`` is commented out there and has no case), with files and diffs of our
own.

Cline's ``replace_in_file`` tool carries the file's path apart from the diff: the cases pass it as
``parse_search_replace(diff, path=...)`` does, then plan and commit the patch as every patch is.
Cline's tests run on files without a final newline; so do most cases here (patchtx keeps that
state).
"""

from __future__ import annotations

from pathlib import Path

import pytest

import patchtx
from patchtx.errors import AmbiguousContextError, ContextNotFoundError, ParseError, PatchtxError
from patchtx.formats.search_replace import parse_search_replace

from .cases import differs, follows

SUITE = "cline"
TABLE = (
    "empty file", "malformed search - mixed symbols", "malformed search - insufficient dashes",
    "malformed search - missing space", "exact match replacement", "line-trimmed match replacement",
    "block anchor match replacement", "incremental processing", "final chunk with remaining content",
    "multiple ordered replacements", "replace then delete", "delete then replace",
    "malformed diff - missing separator", "malformed diff - trailing space on separator",
    "malformed diff - double replace markers", "malformed diff - malformed separator with dashes",
)
REFERENCE_TESTS = (
    *TABLE,
    "should throw error when no match found",
    "should handle missing final REPLACE marker when isFinal is true",
    "should handle missing final REPLACE marker with multiple lines of replacement",
    "should handle out-of-order replacements with different positions",
    "should handle multiple out-of-order replacements",
    "should handle out-of-order replacements with indentation",
    "should handle out-of-order replacements with empty lines",
    "should handle SEARCH prefix symbols - less than 7",
    "should handle SEARCH prefix symbols - more than 7",
    "should handle SEARCH - less than 7 and REPLACE = less than 7",
    "should handle SEARCH - less than 7 and REPLACE = more than 7",
    "should handle SEARCH - more than 7 and REPLACE = more than 7",
    "should handle SEARCH - more than 7 and REPLACE = less than 7",
    "should handle consecutive SEARCH-REPLACE with second block SEARCH - less than 7",
    "should handle consecutive SEARCH-REPLACE with second block SEARCH - less than 7 and REPLACE = less than 7",
)


def replace_in_file(root: Path, original: str | None, diff: str, name: str = "target.txt") -> str:
    """The file after Cline's ``replace_in_file(path, diff)``, applied as one transaction
    (``original`` None: the file does not exist)."""
    if original is not None:
        (root / name).write_text(original)
    patchtx.apply_patch(parse_search_replace(diff, path=name), root, durable=False)
    return (root / name).read_text()


def refused(root: Path, original: str, diff: str, error: type[PatchtxError] = PatchtxError) -> None:
    with pytest.raises(error):
        replace_in_file(root, original, diff)
    assert (root / "target.txt").read_text() == original


THREE = "alpha\nbeta\ngamma"


@follows(SUITE, "empty file")
def test_an_empty_search_makes_a_new_file(tmp_path: Path) -> None:
    assert replace_in_file(tmp_path, None, "------- SEARCH\n=======\nfresh\n+++++++ REPLACE") == "fresh\n"


@follows(SUITE, "malformed search - mixed symbols", "malformed search - insufficient dashes",
         "malformed search - missing space")
@pytest.mark.parametrize("opener", ["<<-- SEARCH", "-- SEARCH", "-------SEARCH"])
def test_a_malformed_search_marker_is_refused(tmp_path: Path, opener: str) -> None:
    refused(tmp_path, THREE, f"{opener}\nbeta\n=======\nBETA\n+++++++ REPLACE", ParseError)


@follows(SUITE, "exact match replacement", "final chunk with remaining content")
def test_exact_match(tmp_path: Path) -> None:
    assert replace_in_file(tmp_path, THREE, "------- SEARCH\nbeta\n=======\nBETA\n+++++++ REPLACE") == \
        "alpha\nBETA\ngamma"


@differs(SUITE, "line-trimmed match replacement", "shifted-replace")
def test_a_trimmed_match_shifts_the_replace_lines(tmp_path: Path) -> None:
    (tmp_path / "target.txt").write_text("alpha\n  beta \ngamma")
    result = patchtx.apply_patch(parse_search_replace("------- SEARCH\nbeta\n=======\nBETA\n+++++++ REPLACE",
                                                      path="target.txt"), tmp_path, durable=False)
    assert (tmp_path / "target.txt").read_text() == "alpha\n  BETA\ngamma"
    assert result.plan.notes and "indentation shifted as a whole" in result.plan.notes[0]


@differs(SUITE, "block anchor match replacement", "no-fuzzy-match")
def test_first_and_last_lines_alone_do_not_place_a_block(tmp_path: Path) -> None:
    refused(tmp_path, "top\nopen\nsomething else\nclose\nbottom",
            "------- SEARCH\nopen\nwhat the model remembered\nclose\n=======\nreplaced\n+++++++ REPLACE",
            ContextNotFoundError)


@follows(SUITE, "incremental processing")
def test_replace_lines_are_taken_whole_with_a_blank_one(tmp_path: Path) -> None:
    diff = "\n".join(["------- SEARCH\nbeta\n=======", "BETA\n", "+++++++ REPLACE"])
    assert replace_in_file(tmp_path, THREE, diff) == "alpha\nBETA\n\ngamma"


@follows(SUITE, "multiple ordered replacements")
def test_blocks_in_file_order(tmp_path: Path) -> None:
    diff = ("------- SEARCH\none\n=======\n1\n+++++++ REPLACE\n\n"
            "------- SEARCH\nthree\n=======\n3\n+++++++ REPLACE")
    assert replace_in_file(tmp_path, "one\ntwo\nthree\nfour", diff) == "1\ntwo\n3\nfour"


@differs(SUITE, "replace then delete", "final-newline")
def test_deleting_the_last_line_keeps_the_final_newline_state(tmp_path: Path) -> None:
    diff = ("------- SEARCH\ntwo\n=======\n2\n+++++++ REPLACE\n\n"
            "------- SEARCH\nfour\n=======\n+++++++ REPLACE")
    assert replace_in_file(tmp_path, "one\ntwo\nthree\nfour", diff) == "one\n2\nthree"


@follows(SUITE, "delete then replace")
def test_delete_then_replace(tmp_path: Path) -> None:
    diff = ("------- SEARCH\none\n=======\n+++++++ REPLACE\n\n"
            "------- SEARCH\nthree\n=======\n3\n+++++++ REPLACE")
    assert replace_in_file(tmp_path, "one\ntwo\nthree\nfour", diff) == "two\n3\nfour"


@follows(SUITE, "malformed diff - missing separator", "malformed diff - double replace markers",
         "malformed diff - malformed separator with dashes")
@pytest.mark.parametrize("diff", [
    "------- SEARCH\nbeta\n+++++++ REPLACE\nBETA",
    "------- SEARCH\nbeta\n+++++++ REPLACE\nBETA\n+++++++ REPLACE",
    "------- SEARCH\nbeta\n------- =======\nBETA\n+++++++ REPLACE",
])
def test_a_malformed_block_is_refused(tmp_path: Path, diff: str) -> None:
    refused(tmp_path, THREE, diff, ParseError)


@differs(SUITE, "malformed diff - trailing space on separator", "marker-space")
def test_white_space_after_a_marker_is_allowed(tmp_path: Path) -> None:
    assert replace_in_file(tmp_path, THREE, "------- SEARCH\nbeta\n======= \nBETA\n+++++++ REPLACE") == \
        "alpha\nBETA\ngamma"


@follows(SUITE, "should throw error when no match found")
def test_a_search_found_nowhere(tmp_path: Path) -> None:
    refused(tmp_path, THREE, "------- SEARCH\ndelta\n=======\nDELTA\n+++++++ REPLACE", ContextNotFoundError)


@differs(SUITE, "should handle missing final REPLACE marker when isFinal is true", "cut-short")
def test_a_diff_cut_short_is_refused(tmp_path: Path) -> None:
    refused(tmp_path, THREE, "------- SEARCH\nbeta\n=======\nBETA", ParseError)


@differs(SUITE, "should handle missing final REPLACE marker with multiple lines of replacement",
         "cut-short")
def test_a_longer_diff_cut_short_is_refused(tmp_path: Path) -> None:
    refused(tmp_path, "int f() {\n\tint x = 1;\n\treturn x;\n}",
            "------- SEARCH\n\tint x = 1;\n\treturn x;\n=======\n\tint x = 2;\n\tlog(x);\n\treturn x;",
            ParseError)


OUT_OF_ORDER = [
    ("should handle out-of-order replacements with different positions", "w\nx\ny\nz\n",
     [("z", "Z"), ("x", "X")]),
    ("should handle multiple out-of-order replacements", "1\n2\n3\n4\n5\n",
     [("4", "four"), ("2", "two"), ("5", "five")]),
    ("should handle out-of-order replacements with indentation", "fn main() {\n\tlet a = 1;\n\tlet b = 2;\n}",
     [("\tlet b = 2;", "\tlet b = 20;"), ("\tlet a = 1;", "\tlet a = 10;")]),
    ("should handle out-of-order replacements with empty lines", "top\n\nmiddle\n\nend\n",
     [("end", "END"), ("\nmiddle\n", "MIDDLE")]),
]


@pytest.mark.parametrize("test, original, edits", OUT_OF_ORDER, ids=[case[0] for case in OUT_OF_ORDER])
def test_blocks_out_of_file_order_are_refused(tmp_path: Path, test: str, original: str,
                                              edits: list[tuple[str, str]]) -> None:
    """Each case follows the reference test ``test`` (registered below)."""
    diff = "\n".join(f"------- SEARCH\n{search}\n=======\n{replace}\n+++++++ REPLACE" for search, replace in edits)
    with pytest.raises(ContextNotFoundError, match="the blocks of one file must come in the file's order"):
        replace_in_file(tmp_path, original, diff)
    assert (tmp_path / "target.txt").read_text() == original
    # The same blocks in file order apply.
    in_order = sorted(edits, key=lambda edit: original.index(edit[0].strip("\n")))
    diff = "\n".join(f"------- SEARCH\n{search}\n=======\n{replace}\n+++++++ REPLACE" for search, replace in in_order)
    replace_in_file(tmp_path, None, diff)


for _case in OUT_OF_ORDER:
    differs(SUITE, _case[0], "file-order")(test_blocks_out_of_file_order_are_refused)


MARKERS = [
    ("should handle SEARCH prefix symbols - less than 7", "----- SEARCH", "======="),
    ("should handle SEARCH prefix symbols - more than 7", "----------- SEARCH", "======="),
    ("should handle SEARCH - less than 7 and REPLACE = less than 7", "----- SEARCH", "====="),
    ("should handle SEARCH - less than 7 and REPLACE = more than 7", "----- SEARCH", "========"),
    ("should handle SEARCH - more than 7 and REPLACE = more than 7", "----------- SEARCH", "=========="),
    ("should handle SEARCH - more than 7 and REPLACE = less than 7", "----------- SEARCH", "====="),
]


@pytest.mark.parametrize("test, opener, divider", MARKERS, ids=[case[0] for case in MARKERS])
def test_markers_of_other_lengths(tmp_path: Path, test: str, opener: str, divider: str) -> None:
    """Each case follows the reference test ``test`` (registered below)."""
    diff = f"{opener}\nmid\n{divider}\nMID\n+++++++ REPLACE"
    assert replace_in_file(tmp_path, "start\nmid\nstop", diff) == "start\nMID\nstop"


for _case in MARKERS:
    follows(SUITE, _case[0])(test_markers_of_other_lengths)


@follows(SUITE, "should handle consecutive SEARCH-REPLACE with second block SEARCH - less than 7",
         "should handle consecutive SEARCH-REPLACE with second block SEARCH - less than 7 and "
         "REPLACE = less than 7")
@pytest.mark.parametrize("divider", ["=======", "====="])
def test_consecutive_blocks_with_other_marker_lengths(tmp_path: Path, divider: str) -> None:
    diff = (f"------- SEARCH\nfirst\n=======\nFIRST\n+++++++ REPLACE\n----- SEARCH\nsecond\n{divider}\n"
            "SECOND\n+++++++ REPLACE")
    assert replace_in_file(tmp_path, "a\nfirst\nb\nsecond\nc", diff) == "a\nFIRST\nb\nSECOND\nc"


def test_ambiguous_search_is_refused(tmp_path: Path) -> None:
    """Not in Cline's tests (it takes the first occurrence): a SEARCH that stands twice."""
    refused(tmp_path, "x\ny\nx", "------- SEARCH\nx\n=======\nX\n+++++++ REPLACE", AmbiguousContextError)
