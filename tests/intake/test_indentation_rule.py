"""Issue 37, item 2: indentation and trailing white space, one rule for every hunk matched loosely
(Codex sections, model-written unified hunks, SEARCH/REPLACE blocks): docs/format.md,
"Indentation and trailing white space"."""

from __future__ import annotations

from pathlib import Path

import pytest

import patchtx
from patchtx.errors import PatchtxError

CLASS = b"class A:\n    def f(self):\n        x = 1\n        return x\n"


def apply(root: Path, patch: str, **options: object) -> patchtx.Result | PatchtxError:
    try:
        return patchtx.apply_patch(patch, root, durable=False, **options)
    except PatchtxError as error:
        return error


def codex(*body: str, path: str = "a.py") -> str:
    return "\n".join(["*** Begin Patch", f"*** Update File: {path}", "@@", *body, "*** End Patch", ""])


def kinds(result: patchtx.Result) -> list[str]:
    return [repair.kind for repair in result.plan.repairs]


def test_the_issues_smallest_case_is_refused_naming_both_readings(tmp_path: Path) -> None:
    # Shifted as a whole, 'y = 2' goes 8 spaces deep; each context line having lost its prefix
    # space, 7: the text does not say which.
    (tmp_path / "a.py").write_bytes(CLASS)
    outcome = apply(tmp_path, codex(" def f(self):", "     x = 1", "+    y = 2", "     return x"))
    assert isinstance(outcome, PatchtxError), (tmp_path / "a.py").read_bytes()
    assert outcome.kind == "ambiguous_context"
    assert "4 spaces deeper" in outcome.message and "3 spaces deeper" in outcome.message, outcome.message
    assert "lost its prefix space" in outcome.message and "Nothing was changed" in outcome.message
    assert (tmp_path / "a.py").read_bytes() == CLASS


def test_a_hunk_shifted_as_a_whole_writes_its_added_lines_at_the_files_indentation(tmp_path: Path) -> None:
    (tmp_path / "a.py").write_bytes(CLASS)
    patch = codex(" def f(self):", "-    x = 1", "+    x = 2", "+    y = 3", "     return x")
    result = apply(tmp_path, patch)
    assert not isinstance(result, PatchtxError), result.message
    assert kinds(result) == ["indentation"]
    assert "4 spaces more" in result.plan.repairs[0].detail
    assert (tmp_path / "a.py").read_bytes() == CLASS.replace(b"        x = 1\n",
                                                             b"        x = 2\n        y = 3\n")
    again = apply(tmp_path, patch)  # (sent again: in place, as the repair wrote it)
    assert isinstance(again, PatchtxError) and again.kind == "already_applied", again


def test_context_lines_that_lost_their_space_beside_a_removed_line_are_read_as_such(tmp_path: Path) -> None:
    # The removed line keeps its prefix and stands as deep as the file's line; the context lines
    # are one space shallower: they lost their space (the added lines are as meant).
    (tmp_path / "a.py").write_bytes(CLASS)
    result = apply(tmp_path, codex("    def f(self):", "-        x = 1", "+        x = 2", "        return x"))
    assert not isinstance(result, PatchtxError), result.message
    assert kinds(result) == []
    assert (tmp_path / "a.py").read_bytes() == CLASS.replace(b"x = 1", b"x = 2")


def test_a_shifted_hunk_whose_context_also_lost_its_space_is_read_by_its_removed_lines(tmp_path: Path) -> None:
    # Written 4 spaces shallow, its context lines one more: the removed line tells the shift.
    (tmp_path / "a.py").write_bytes(CLASS.replace(b"        return", b"        y = 1\n        return"))
    result = apply(tmp_path, codex("    x = 1", "-    y = 1", "+    y = 2", "    return x"))
    assert not isinstance(result, PatchtxError), result.message
    assert kinds(result) == ["indentation"]
    assert (tmp_path / "a.py").read_bytes() == CLASS.replace(b"        return", b"        y = 2\n        return")


def test_lines_indented_unlike_against_the_file_are_refused_naming_them(tmp_path: Path) -> None:
    (tmp_path / "a.py").write_bytes(CLASS)
    outcome = apply(tmp_path, codex("     def f(self):", "-    x = 1", "+    x = 2", "         return x"))
    assert isinstance(outcome, PatchtxError), (tmp_path / "a.py").read_bytes()
    assert outcome.kind == "ambiguous_context"
    assert '"x = 1" 4 spaces shallower' in outcome.message and '"return x" as in the file' in outcome.message
    assert (tmp_path / "a.py").read_bytes() == CLASS


def test_an_added_line_shallower_than_the_shift_takes_away_is_refused(tmp_path: Path) -> None:
    (tmp_path / "a.py").write_bytes(b"def f():\n    x = 1\n    return x\n")
    patch = codex("         x = 1", "+  y = 2", "-        return x", "+        return y")
    outcome = apply(tmp_path, patch)
    assert isinstance(outcome, PatchtxError), (tmp_path / "a.py").read_bytes()
    assert outcome.kind == "ambiguous_context" and "Nothing was changed" in outcome.message


def test_white_space_on_every_line_of_a_hunk_is_not_written(tmp_path: Path) -> None:
    (tmp_path / "a.py").write_bytes(b"def f():\n    x = 1\n\n    return x\n")
    patch = codex(" def f():\t", "-    x = 1\t", "+    x = 2\t", "+\t", "+    y = 3\t", " \t", "     return x\t")
    result = apply(tmp_path, patch)
    assert not isinstance(result, PatchtxError), result.message
    assert kinds(result) == ["trailing_whitespace"]
    assert (tmp_path / "a.py").read_bytes() == b"def f():\n    x = 2\n\n    y = 3\n\n    return x\n"


def test_shift_and_trailing_white_space_together(tmp_path: Path) -> None:
    (tmp_path / "a.py").write_bytes(CLASS)
    result = apply(tmp_path, codex(" def f(self):  ", "-    x = 1  ", "+    x = 2  ", "     return x  "))
    assert not isinstance(result, PatchtxError), result.message
    assert sorted(kinds(result)) == ["indentation", "trailing_whitespace"]
    assert (tmp_path / "a.py").read_bytes() == CLASS.replace(b"x = 1", b"x = 2")


def test_unified_headers_inside_an_update_follow_the_same_rule(tmp_path: Path) -> None:
    (tmp_path / "a.py").write_bytes(CLASS)
    patch = codex(" def f(self):", "-    x = 1", "+    x = 2", "+    y = 3", "     return x").replace(
        "@@\n", "--- a/a.py\n+++ b/a.py\n@@ -2,3 +2,4 @@\n")
    result = apply(tmp_path, patch)
    assert not isinstance(result, PatchtxError), result.message
    assert "indentation" in kinds(result)
    assert (tmp_path / "a.py").read_bytes() == CLASS.replace(b"        x = 1\n",
                                                             b"        x = 2\n        y = 3\n")


def test_a_unified_diff_is_matched_exactly_so_no_shift_is_read_into_it(tmp_path: Path) -> None:
    (tmp_path / "a.py").write_bytes(CLASS)
    diff = "--- a/a.py\n+++ b/a.py\n@@ -2,3 +2,3 @@\n def f(self):\n-    x = 1\n+    x = 2\n     return x\n"
    outcome = apply(tmp_path, diff)
    assert isinstance(outcome, PatchtxError) and outcome.kind == "context_not_found", outcome


@pytest.mark.parametrize(("replace", "written"), [
    pytest.param("    x = 2\n    return x", b"        x = 2\n        return x\n", id="shifted"),
    pytest.param("  x = 2\n            return x", None, id="shallower-than-the-shift"),
])
def test_search_replace_blocks_follow_the_same_rule(replace: str, written: bytes | None, tmp_path: Path) -> None:
    (tmp_path / "a.py").write_bytes(CLASS)
    search = "            x = 1\n            return x" if written is None else "    x = 1\n    return x"
    block = f"a.py\n<<<<<<< SEARCH\n{search}\n=======\n{replace}\n>>>>>>> REPLACE\n"
    outcome = apply(tmp_path, block)
    if written is None:
        assert isinstance(outcome, PatchtxError), (tmp_path / "a.py").read_bytes()
        assert outcome.kind == "ambiguous_context" and "less indentation" in outcome.message, outcome.message
        assert (tmp_path / "a.py").read_bytes() == CLASS
    else:
        assert not isinstance(outcome, PatchtxError), outcome.message
        assert (tmp_path / "a.py").read_bytes() == b"class A:\n    def f(self):\n" + written


def test_a_block_with_white_space_on_every_line_does_not_write_it(tmp_path: Path) -> None:
    (tmp_path / "a.py").write_bytes(CLASS)
    block = ("a.py\n<<<<<<< SEARCH\n        x = 1 \n        return x \n=======\n        x = 2 \n"
             "        return x \n>>>>>>> REPLACE\n")
    outcome = apply(tmp_path, block)
    assert not isinstance(outcome, PatchtxError), outcome.message
    assert (tmp_path / "a.py").read_bytes() == CLASS.replace(b"x = 1", b"x = 2")
    assert any("ends with ' '" in note for note in outcome.plan.notes), outcome.plan.notes


# -- the added lines shifted alike, or already at the file's indentation -------------------------
# (Issue 37 item 2's gap: a model may shift only the lines it copied. Measured before on 112
# generated hunks so written, 66 were written with their added lines shifted a second time.)
def test_added_lines_already_at_the_files_indentation_are_written_as_sent(tmp_path: Path) -> None:
    # Context 4 spaces shallow, the added line 8 deep as the file's: shifted alike it would stand
    # 12 deep where it replaces an 8-deep line; as written it is as deep as that line.
    (tmp_path / "a.py").write_bytes(CLASS)
    result = apply(tmp_path, codex(" def f(self):", "-    x = 1", "+        x = 2", "     return x"))
    assert not isinstance(result, PatchtxError), result.message
    assert kinds(result) == []
    assert (tmp_path / "a.py").read_bytes() == CLASS.replace(b"x = 1", b"x = 2")


def test_added_lines_that_fit_only_shifted_are_shifted_and_reported(tmp_path: Path) -> None:
    (tmp_path / "a.py").write_bytes(CLASS)
    result = apply(tmp_path, codex(" def f(self):", "-    x = 1", "+    x = 2", "     return x"))
    assert not isinstance(result, PatchtxError), result.message
    assert kinds(result) == ["indentation"]
    assert "would not be indented as the lines around them" in result.plan.repairs[0].detail
    assert (tmp_path / "a.py").read_bytes() == CLASS.replace(b"x = 1", b"x = 2")


def test_added_lines_that_fit_both_ways_are_refused_naming_both(tmp_path: Path) -> None:
    # 'y = 2' between the last line of f's body and 'def g': 8 deep shifted alike (ending f's
    # body), 4 as written (before g, as a method): both are indented as a line beside them.
    before = b"class A:\n    def f(self):\n        x = 1\n    def g(self):\n        pass\n"
    (tmp_path / "a.py").write_bytes(before)
    outcome = apply(tmp_path, codex("     x = 1", "+    y = 2", " def g(self):", "-    pass"))
    assert isinstance(outcome, PatchtxError), (tmp_path / "a.py").read_bytes()
    assert outcome.kind == "ambiguous_context" and outcome.to_json()["ambiguous"] == "indentation"
    assert "shifted alike" in outcome.message and "as written" in outcome.message, outcome.message
    assert "both are indented as the lines around them" in outcome.message
    assert (tmp_path / "a.py").read_bytes() == before


def test_lines_added_under_a_block_opener_go_into_its_block(tmp_path: Path) -> None:
    # Right under 'def f(self):' and above its body, an added line is the body's first (8 deep):
    # shifted alike it is; as written (4 deep) it would close the method before its body.
    (tmp_path / "a.py").write_bytes(CLASS)
    result = apply(tmp_path, codex(" def f(self):", "+    y = 0", "     x = 1", "-    return x"))
    assert not isinstance(result, PatchtxError), result.message
    assert kinds(result) == ["indentation"]
    assert (tmp_path / "a.py").read_bytes() == b"class A:\n    def f(self):\n        y = 0\n        x = 1\n"


def test_added_lines_that_fit_neither_way_are_refused(tmp_path: Path) -> None:
    (tmp_path / "a.py").write_bytes(CLASS)
    outcome = apply(tmp_path, codex(" def f(self):", "-    x = 1", "+  x = 2", "     return x"))
    assert isinstance(outcome, PatchtxError), (tmp_path / "a.py").read_bytes()
    assert outcome.kind == "ambiguous_context" and "neither is indented" in outcome.message
    assert (tmp_path / "a.py").read_bytes() == CLASS
