"""Decorations a model copies into the lines it means to find (issue 37, item 10): a numbered
view's line numbers (`L12: ` from Codex's read tool, `     4→` from Claude Code's Read, `12: `...)
in a patch's hunks, in a SEARCH block's lines and in the text editor's `old_str`; Roo Code's
`:start_line:` / `-------` header at the top of a SEARCH block. Read away when that is the only
reading (the decorated lines match nowhere, without the decoration they are placed in one place,
where the numbers say), reported as a repair; otherwise refused naming the decoration, never
blaming the file ("No line of the file resembles the hunk's lines: check the file path", "has the
file changed?": what 6 of 24 refusals said before)."""

from __future__ import annotations

from pathlib import Path

import pytest

import patchtx
from patchtx.agents.editor import TextEditor
from patchtx.errors import PatchtxError

FILE = "def total(items):\n    count = 0\n    for item in items:\n        count += item\n    return count\n"
BLAMES_THE_FILE = ("No line of the file resembles", "has the file changed", "check the file path")


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    (tmp_path / "calc.py").write_text(FILE)
    return tmp_path


def applied(root: Path, patch: str, **options: object) -> tuple[str, list[str]]:
    result = patchtx.apply_patch(patch, root, durable=False, **options)
    return (root / "calc.py").read_text(), [repair.kind for repair in result.plan.repairs]


def refused(root: Path, patch: str, **options: object) -> str:
    with pytest.raises(PatchtxError) as info:
        patchtx.apply_patch(patch, root, durable=False, **options)
    assert (root / "calc.py").read_text() == FILE
    message = info.value.message
    assert "Nothing was changed." in message
    assert not any(words in message for words in BLAMES_THE_FILE), message
    return message


WANTED = FILE.replace("count += item", "count += item * 2")


def codex(*body: str) -> str:
    return "\n".join(["*** Begin Patch", "*** Update File: calc.py", "@@", *body, "*** End Patch"]) + "\n"


def block(search: list[str], replace: list[str]) -> str:
    return "\n".join(["calc.py", "<<<<<<< SEARCH", *search, "=======", *replace,
                      ">>>>>>> REPLACE"]) + "\n"


# -- Codex's L12: prefixes in a patch ------------------------------------------------------------
@pytest.mark.parametrize("added", ["+L4:         count += item * 2", "+        count += item * 2"],
                         ids=["numbered", "plain"])
def test_codex_read_tool_numbers_in_a_patch_are_read_away(tree: Path, added: str) -> None:
    patch = codex(" L3:     for item in items:", "-L4:         count += item", added)
    assert applied(tree, patch) == (WANTED, ["line_number_prefixes"])


def test_numbers_on_some_added_lines_only_are_named_not_read(tree: Path) -> None:
    message = refused(tree, codex(" L3:     for item in items:", "-L4:         count += item",
                                  "+L4:         count += item * 2", "+        log(item)"))
    assert "start with a line number ('L12: text')" in message
    assert "some added lines start with a number in that form and others do not" in message


def test_numbers_that_disagree_name_the_numbers_and_where_the_lines_are(tree: Path) -> None:
    message = refused(tree, codex(" L13:     for item in items:", "-L14:         count += item",
                                  "+L14:         count += item * 2"))
    assert "start with a line number ('L12: text')" in message
    assert "Without the numbers: Closest region: file lines 3-4" in message


# -- line numbers inside a SEARCH block ----------------------------------------------------------
@pytest.mark.parametrize("replace", [
    ["     3→    for item in items:", "     4→        count += item * 2"],
    ["    for item in items:", "        count += item * 2"],
], ids=["numbered", "plain"])
def test_numbers_inside_a_search_block_are_read_away(tree: Path, replace: list[str]) -> None:
    patch = block(["     3→    for item in items:", "     4→        count += item"], replace)
    assert applied(tree, patch) == (WANTED, ["line_number_prefixes"])
    with pytest.raises(PatchtxError) as again:  # (sent again: the block, so read, is in place)
        patchtx.apply_patch(patch, tree, durable=False)
    assert again.value.kind == "already_applied"


@pytest.mark.parametrize(("search", "replace", "why"), [
    (["     7→    for item in items:", "     8→        count += item"],
     ["    for item in items:", "        count += item * 2"],
     "the numbers say file line 7, and the lines stand at file line 3"),
    (["     3→    for item in items:", "     4→        count += item"],
     ["     3→    for item in items:", "        count += item * 2"],
     "some REPLACE lines start with a number in that form and others do not"),
    (["     3→    for item in items:", "     5→        count += item"],
     ["    for item in items:", "        count += item * 2"], "the numbers do not follow one another"),
    (["     3→    for item in items:", "     4→        count += items"],
     ["    for item in items:", "        count += item * 2"],
     "the lines, so read, do not match the file either"),
], ids=["disagree", "replace-mixed", "not-consecutive", "stale"])
def test_numbers_in_a_search_block_not_read_away_are_named(tree: Path, search: list[str],
                                                            replace: list[str], why: str) -> None:
    message = refused(tree, block(search, replace))
    assert "The SEARCH lines of the block on line 2 start with a line number ('12→text')" in message
    assert why in message


def test_numbers_in_a_search_block_under_strict_are_named_not_read(tree: Path) -> None:
    patch = block(["     4→        count += item"], ["        count += item * 2"])
    message = refused(tree, patch, strict=True)
    assert "start with a line number ('12→text')" in message and "repairs are off" in message


def test_a_file_that_holds_numbered_lines_is_edited_as_written(tmp_path: Path) -> None:
    (tmp_path / "codes.yaml").write_text("1: one\n2: two\n3: three\n")
    patch = "codes.yaml\n<<<<<<< SEARCH\n2: two\n=======\n2: TWO\n>>>>>>> REPLACE\n"
    result = patchtx.apply_patch(patch, tmp_path, durable=False)
    assert (tmp_path / "codes.yaml").read_text() == "1: one\n2: TWO\n3: three\n"
    assert result.plan.repairs == ()


# -- Roo Code's header -----------------------------------------------------------------------------
@pytest.mark.parametrize("header", [[":start_line:4", "-------"], [":start_line:4", ":end_line:4", "-------"],
                                    [":start_line: 9", "-------"], [":start_line:4"]],
                         ids=["roo", "older-roo", "number-off", "no-rule"])
def test_roo_codes_header_is_read_away(tree: Path, header: list[str]) -> None:
    patch = block([*header, "        count += item"], ["        count += item * 2"])
    assert applied(tree, patch) == (WANTED, ["start_line_header"])


def test_roo_codes_header_and_numbers_together(tree: Path) -> None:
    patch = block([":start_line:4", "-------", "     4→        count += item"], ["        count += item * 2"])
    assert applied(tree, patch) == (WANTED, ["start_line_header", "line_number_prefixes"])


@pytest.mark.parametrize(("search", "why"), [
    (["        count -= item"], "the lines, so read, do not match the file either"),
    (["    return count", "", "", "    return count"], "do not match"),
], ids=["stale", "not-there"])
def test_roo_codes_header_not_read_away_is_named(tree: Path, search: list[str], why: str) -> None:
    message = refused(tree, block([":start_line:4", "-------", *search], ["        pass"]))
    assert "start with Roo Code's header (':start_line:4' / '-------')" in message
    assert why in message


def test_roo_codes_header_before_lines_found_twice_is_named(tmp_path: Path) -> None:
    (tmp_path / "calc.py").write_text(FILE + FILE)
    with pytest.raises(PatchtxError) as info:
        patchtx.apply_patch(block([":start_line:4", "-------", "        count += item"],
                                  ["        count += item * 2"]), tmp_path, durable=False)
    assert "Roo Code's header" in info.value.message
    assert "stand in several places (file lines 4, 9)" in info.value.message


# -- the text editor's old_str, an edit list's old_string ----------------------------------------
def test_numbers_in_old_str_are_read_away_and_the_reply_says_so(tree: Path) -> None:
    reply = TextEditor(tree, durable=False).run(
        "str_replace", "calc.py", old_str="     3→    for item in items:\n     4→        count += item",
        new_str="    for item in items:\n        count += item * 2")
    assert (tree / "calc.py").read_text() == WANTED
    assert "Repaired (line_number_prefixes, calc.py, the old text)" in reply.text
    assert "     4\t        count += item * 2" in reply.text  # (the snippet where the edit is)


def test_codex_numbers_in_an_edit_lists_old_string_are_read_away(tree: Path) -> None:
    result = patchtx.apply_edits([{"path": "calc.py", "old_string": "L4:         count += item",
                                   "new_string": "L4:         count += item * 2"}], tree, durable=False)
    assert (tree / "calc.py").read_text() == WANTED
    assert [repair.kind for repair in result.plan.repairs] == ["line_number_prefixes"]


@pytest.mark.parametrize(("old", "why"), [
    ("     5→        count += item", "the numbers say file line 5, and the lines stand at file line 4"),
    ("     4→count += item", "the text stands inside file lines 4-4, not as those whole lines"),
], ids=["disagree", "inside-a-line"])
def test_numbers_in_old_str_not_read_away_are_named(tree: Path, old: str, why: str) -> None:
    with pytest.raises(PatchtxError) as info:
        TextEditor(tree, durable=False).run("str_replace", "calc.py", old_str=old, new_str="x")
    message = info.value.message
    assert info.value.kind == "context_not_found" and (tree / "calc.py").read_text() == FILE
    assert message.startswith("No replacement was performed, old_str")  # (the reference's words first)
    assert "The lines of the old text start with a line number ('12→text')" in message and why in message
    assert not any(words in message for words in BLAMES_THE_FILE), message


def test_an_old_str_sent_again_says_the_new_text_stands(tree: Path) -> None:
    editor = TextEditor(tree, durable=False, history_count=0)  # (with a history, it names the edit)
    arguments = {"old_str": "     4→        count += item", "new_str": "        count += item * 2"}
    editor.run("str_replace", "calc.py", **arguments)
    with pytest.raises(PatchtxError) as info:
        editor.run("str_replace", "calc.py", **arguments)
    assert "the new text, so read, already stands at file line 4" in info.value.message
