"""Conformance with Anthropic's reference text editor tool: one case per test of
``anthropics/anthropic-quickstarts`` ``computer-use-demo/tests/tools/edit_test.py`` (the tool in
``computer_use_demo/tools/edit.py``), with files and texts of our own.

The reference mocks the filesystem; these cases run ``patchtx.agents.editor.TextEditor`` on a real
folder, each writing command a transaction.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from patchtx.agents.editor import TextEditor
from patchtx.errors import PatchtxError
from patchtx.history import log, undo

from .cases import differs, follows

SUITE = "anthropic"
REFERENCE = "anthropics/anthropic-quickstarts computer-use-demo/tests/tools/edit_test.py"
REFERENCE_TESTS = (
    "test_view_command", "test_create_command", "test_str_replace_command", "test_insert_command",
    "test_undo_edit_command", "test_validate_path",
)


@pytest.fixture
def editor(tmp_path: Path) -> TextEditor:
    return TextEditor(tmp_path, durable=False)


def refused(editor: TextEditor, match: str, **arguments: object) -> PatchtxError:
    command, path = arguments.pop("command"), arguments.pop("path")
    with pytest.raises(PatchtxError, match=match) as caught:
        editor.run(command, path, **arguments)  # type: ignore[arg-type]
    assert "Nothing was changed." in caught.value.message
    return caught.value


@follows(SUITE, "test_view_command")
def test_view_shows_numbered_lines_a_range_and_a_folder(editor: TextEditor, tmp_path: Path) -> None:
    notes = tmp_path / "notes.md"
    notes.write_text("alpha\nbeta\ngamma\ndelta\n")
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "inner.txt").write_text("x\n")
    whole = editor.run("view", str(notes)).text
    assert whole == (f"Here's the result of running `cat -n` on {notes}:\n"
                     "     1\talpha\n     2\tbeta\n     3\tgamma\n     4\tdelta\n")
    listing = editor.run("view", str(tmp_path)).text
    assert f"{tmp_path}/notes.md\n" in listing and f"{tmp_path}/sub/inner.txt" in listing
    ranged = editor.run("view", str(notes), view_range=[2, 3]).text
    assert "\n     2\tbeta\n     3\tgamma\n" in ranged and "alpha" not in ranged and "delta" not in ranged
    refused(editor, "Invalid `view_range`", command="view", path=str(notes), view_range=[3, 2])
    refused(editor, "does not exist", command="view", path=str(tmp_path / "absent.md"))
    refused(editor, "view_range` parameter is not allowed", command="view", path=str(tmp_path),
            view_range=[1, 2])


@follows(SUITE, "test_create_command")
def test_create_writes_a_new_file_and_refuses_an_existing_one(editor: TextEditor, tmp_path: Path) -> None:
    target = tmp_path / "made.txt"
    reply = editor.run("create", str(target), file_text="made by create")
    assert "File created successfully" in reply.text
    assert target.read_text() == "made by create"
    refused(editor, "Parameter `file_text` is required", command="create", path=str(tmp_path / "other.txt"))
    refused(editor, "File already exists", command="create", path=str(target), file_text="again")
    assert target.read_text() == "made by create"


@follows(SUITE, "test_str_replace_command")
def test_str_replace_needs_exactly_one_occurrence(editor: TextEditor, tmp_path: Path) -> None:
    target = tmp_path / "greeting.txt"
    target.write_text("Hello world")
    reply = editor.run("str_replace", str(target), old_str="Hello", new_str="Goodbye")
    assert "has been edited" in reply.text
    assert target.read_text() == "Goodbye world"
    refused(editor, "did not appear verbatim", command="str_replace", path=str(target),
            old_str="Missing", new_str="x")
    target.write_text("ab ab ab")
    refused(editor, "Multiple occurrences", command="str_replace", path=str(target), old_str="ab",
            new_str="cd")
    assert target.read_text() == "ab ab ab"
    # The reference keeps the text before the edit in its history; patchtx keeps it in the undo
    # history of the transaction.
    assert [entry.transaction_id for entry in log(tmp_path)] == [reply.result.transaction_id]


@follows(SUITE, "test_insert_command")
def test_insert_goes_after_a_line_number(editor: TextEditor, tmp_path: Path) -> None:
    target = tmp_path / "list.txt"
    target.write_text("one\ntwo\nthree")
    assert "has been edited" in editor.run("insert", str(target), insert_line=2, insert_text="two and a half").text
    assert target.read_text() == "one\ntwo\ntwo and a half\nthree"
    target.write_text("one\ntwo")
    editor.run("insert", str(target), insert_line=0, insert_text="zero")
    assert target.read_text() == "zero\none\ntwo"
    target.write_text("one\ntwo")
    editor.run("insert", str(target), insert_line=2, new_str="three")  # the older argument name
    assert target.read_text() == "one\ntwo\nthree"
    refused(editor, "Invalid `insert_line` parameter", command="insert", path=str(target),
            insert_line=7, insert_text="far away")
    assert target.read_text() == "one\ntwo\nthree"
    assert len(log(tmp_path)) == 3


@differs(SUITE, "test_undo_edit_command", "undo-edit")
def test_an_edit_is_undone_by_its_transaction(editor: TextEditor, tmp_path: Path) -> None:
    target = tmp_path / "undo.txt"
    target.write_text("first version")
    replaced = editor.run("str_replace", str(target), old_str="first", new_str="second")
    inserted = editor.run("insert", str(target), insert_line=1, insert_text="added line")
    assert target.read_text() == "second version\nadded line"
    undo(tmp_path, inserted.result.transaction_id, durable=False)
    assert target.read_text() == "second version"
    undo(tmp_path, replaced.result.transaction_id, durable=False)
    assert target.read_text() == "first version"
    with pytest.raises(PatchtxError, match="undo_edit"):
        editor.run("undo_edit", str(target))


@differs(SUITE, "test_validate_path", "relative-paths")
def test_paths_are_checked_against_the_root(editor: TextEditor, tmp_path: Path) -> None:
    (tmp_path / "kept.txt").write_text("kept\n")
    (tmp_path / "folder").mkdir()
    assert "kept" in editor.run("view", str(tmp_path / "kept.txt")).text
    assert "kept" in editor.run("view", "kept.txt").text  # relative: from the root
    refused(editor, "does not exist", command="view", path=str(tmp_path / "nowhere.txt"))
    refused(editor, "File already exists", command="create", path="kept.txt", file_text="x")
    refused(editor, "is a directory and only the `view` command", command="str_replace",
            path=str(tmp_path / "folder"), old_str="a", new_str="b")
    assert "Here's the files and directories" in editor.run("view", str(tmp_path / "folder")).text
    refused(editor, "outside the workspace root", command="view", path="/etc/hostname")
