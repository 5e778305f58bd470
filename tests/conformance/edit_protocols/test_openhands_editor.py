"""Conformance with OpenHands' editor (``All-Hands-AI/openhands-aci``, ``openhands_aci/editor``):
one case per test of its editor suites, with files and texts of our own:

- ``tests/integration/test_oh_editor.py`` (OHEditor's commands),
- ``tests/integration/editor/test_basic_operations.py``, ``test_error_handling.py``,
  ``test_file_validation.py``, ``test_non_utf8_operations.py`` (the ``file_editor`` tool entry),
- ``tests/unit/test_file_validation.py``, ``tests/unit/test_workspace_root.py``.

Left out: the suites of features a text editor tool does not have here (audio transcription,
Markdown conversion of PDF and Office files, the linter, the peak-memory measurements) and the
unit tests of OpenHands' internal history class (``tests/unit/test_history.py``: patchtx's undo
history is tested in ``tests/history``).
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from patchtx.agents.editor import FILE_CLIPPED, LISTING_CLIPPED, TextEditor
from patchtx.agents.tool_call import editor_call
from patchtx.errors import PatchtxError
from patchtx.history import undo

from .cases import differs, follows

SUITE = "openhands"
OH_EDITOR = (
    "test_view_file", "test_view_directory", "test_view_with_a_specific_range", "test_create_file",
    "test_create_with_empty_string", "test_create_with_none_file_text",
    "test_str_replace_no_linting", "test_str_replace_multi_line_no_linting",
    "test_str_replace_multi_line_with_tabs_no_linting", "test_str_replace_with_linting",
    "test_str_replace_error_multiple_occurrences",
    "test_str_replace_error_multiple_multiline_occurrences", "test_str_replace_nonexistent_string",
    "test_str_replace_with_empty_new_str", "test_str_replace_with_empty_old_str",
    "test_str_replace_with_none_old_str", "test_insert_no_linting", "test_insert_with_linting",
    "test_insert_invalid_line", "test_insert_with_empty_string",
    "test_insert_chinese_text_into_english_file", "test_insert_with_none_new_str", "test_undo_edit",
    "test_multiple_undo_edits", "test_validate_path_invalid", "test_create_existing_file_error",
    "test_str_replace_missing_old_str", "test_str_replace_new_str_and_old_str_same",
    "test_insert_missing_line_param", "test_undo_edit_no_history_error",
    "test_view_directory_with_hidden_files", "test_view_symlinked_directory",
    "test_view_large_directory_with_truncation", "test_view_directory_on_hidden_path",
    "test_view_large_file_with_truncation", "test_validate_path_suggests_absolute_path",
    "test_str_replace_and_insert_snippet_output_on_a_large_file",
)
TOOL_ENTRY = (
    "test_file_editor_happy_path", "test_file_editor_with_xml_tag_parsing",
    "test_successful_operations", "test_tab_expansion", "test_validation_error_formatting",
    "test_str_replace_error_handling", "test_view_range_validation", "test_insert_validation",
    "test_undo_validation", "test_file_validation",
)
NON_UTF8 = (
    "test_view_non_utf8_file", "test_view_range_non_utf8_file", "test_str_replace_non_utf8_file",
    "test_insert_non_utf8_file", "test_create_non_utf8_file", "test_undo_edit_non_utf8_file",
    "test_complex_workflow_non_utf8_file", "test_mixed_encoding_workflow",
)
UNIT = (
    "test_validate_large_file", "test_validate_binary_file", "test_validate_text_file",
    "test_validate_directory", "test_validate_nonexistent_file", "test_validate_pdf_file",
    "test_validate_image_file", "test_workspace_root_as_cwd",
    "test_relative_workspace_root_raises_error", "test_no_suggestion_when_no_workspace_root",
)
REFERENCE_TESTS = OH_EDITOR + TOOL_ENTRY + NON_UTF8 + UNIT

TWO_LINES = "A file to edit.\nIt is here for the tests."


@pytest.fixture
def editor(tmp_path: Path) -> TextEditor:
    return TextEditor(tmp_path, durable=False)


@pytest.fixture
def two_lines(tmp_path: Path) -> Path:
    path = tmp_path / "two.txt"
    path.write_text(TWO_LINES)
    return path


def refused(editor: TextEditor, match: str, command: str, path: object, **arguments: object) -> PatchtxError:
    with pytest.raises(PatchtxError, match=match) as caught:
        editor.run(command, str(path), **arguments)  # type: ignore[arg-type]
    assert "Nothing was changed." in caught.value.message
    return caught.value


def call(root: Path, **arguments: object) -> tuple[bool, str, dict]:
    outcome = editor_call(arguments, str(root), host={"durable": False})
    return outcome.ok, outcome.text, outcome.payload


# -- tests/integration/test_oh_editor.py ----------------------------------------------------------
@follows(SUITE, "test_view_file")
def test_view_file(editor: TextEditor, two_lines: Path) -> None:
    text = editor.run("view", str(two_lines)).text
    assert f"Here's the result of running `cat -n` on {two_lines}:" in text
    assert "1\tA file to edit." in text and "2\tIt is here for the tests." in text
    assert "3\t" not in text


@follows(SUITE, "test_view_directory")
def test_view_directory(editor: TextEditor, two_lines: Path) -> None:
    folder = two_lines.parent
    assert editor.run("view", str(folder)).text == (
        f"Here's the files and directories up to 2 levels deep in {folder}, excluding hidden "
        f"items:\n{folder}/\n{folder}/two.txt\n")


@follows(SUITE, "test_view_with_a_specific_range")
def test_view_with_a_specific_range(editor: TextEditor, two_lines: Path) -> None:
    editor.run("str_replace", str(two_lines), old_str=TWO_LINES, new_str="")
    for number in range(30):
        editor.run("insert", str(two_lines), insert_line=number, insert_text=f"row {number + 1}")
    text = editor.run("view", str(two_lines), view_range=[10, 20]).text
    assert "     9\trow 9" not in text
    assert "    10\trow 10" in text and "    20\trow 20" in text
    assert "row 21" not in text and "    21\t" not in text  # (the folder's name may hold "21")


@follows(SUITE, "test_create_file")
def test_create_file(editor: TextEditor, tmp_path: Path) -> None:
    made = tmp_path / "made.txt"
    assert "File created successfully" in editor.run("create", str(made), file_text="fresh text").text
    assert made.read_text() == "fresh text"


@follows(SUITE, "test_create_with_empty_string")
def test_create_with_empty_string(editor: TextEditor, tmp_path: Path) -> None:
    made = tmp_path / "empty.txt"
    assert "File created successfully" in editor.run("create", str(made), file_text="").text
    assert made.read_text() == ""
    assert "     1\t" in editor.run("view", str(made)).text


@follows(SUITE, "test_create_with_none_file_text")
def test_create_with_none_file_text(editor: TextEditor, tmp_path: Path) -> None:
    refused(editor, "file_text", "create", tmp_path / "none.txt", file_text=None)
    assert not (tmp_path / "none.txt").exists()


@follows(SUITE, "test_str_replace_no_linting")
def test_str_replace(editor: TextEditor, two_lines: Path) -> None:
    text = editor.run("str_replace", str(two_lines), old_str="to edit", new_str="to change").text
    assert text == (
        f"The file {two_lines} has been edited. Here's the result of running `cat -n` on a snippet "
        f"of {two_lines}:\n     1\tA file to change.\n     2\tIt is here for the tests.\n"
        "Review the changes and make sure they are as expected. Edit the file again if necessary.")
    assert two_lines.read_text() == "A file to change.\nIt is here for the tests."


@follows(SUITE, "test_str_replace_multi_line_no_linting")
def test_str_replace_multi_line(editor: TextEditor, two_lines: Path) -> None:
    text = editor.run("str_replace", str(two_lines), old_str=TWO_LINES,
                      new_str="A file to change.\nIt is here for the tests.").text
    assert "     1\tA file to change.\n     2\tIt is here for the tests.\n" in text


@follows(SUITE, "test_str_replace_multi_line_with_tabs_no_linting")
def test_str_replace_multi_line_with_tabs(editor: TextEditor, tmp_path: Path) -> None:
    source = tmp_path / "tabbed.py"
    source.write_text('def shout():\n\treturn "hey"')
    text = editor.run("str_replace", str(source), old_str='def shout():\n\treturn "hey"',
                      new_str='def shout():\n\treturn "HEY"').text
    assert '     1\tdef shout():\n     2\t\treturn "HEY"\n' in text
    assert source.read_text() == 'def shout():\n\treturn "HEY"'


@differs(SUITE, "test_str_replace_with_linting", "no-linting")
def test_str_replace_has_no_linting_argument(tmp_path: Path, two_lines: Path) -> None:
    ok, text, payload = call(tmp_path, command="str_replace", path=str(two_lines),
                             old_str="to edit", new_str="to change", enable_linting=True)
    assert not ok and payload["error"]["kind"] == "invalid_arguments" and "enable_linting" in text
    assert two_lines.read_text() == TWO_LINES


@follows(SUITE, "test_str_replace_error_multiple_occurrences")
def test_str_replace_error_multiple_occurrences(editor: TextEditor, two_lines: Path) -> None:
    error = refused(editor, "Multiple occurrences of old_str `e`", "str_replace", two_lines,
                    old_str="e", new_str="E")
    assert "[1, 2]" in error.message
    two_lines.write_text("a file and a file\nno other\n")
    error = refused(editor, "Multiple occurrences", "str_replace", two_lines, old_str="a file",
                    new_str="a page")
    assert "in lines [1]." in error.message


@follows(SUITE, "test_str_replace_error_multiple_multiline_occurrences")
def test_str_replace_error_multiple_multiline_occurrences(editor: TextEditor, two_lines: Path) -> None:
    block = "def twice():\n    value = 2\n    return value"
    two_lines.write_text(f"{block}\n\n# between\n\n{block}")
    error = refused(editor, "Multiple occurrences of old_str", "str_replace", two_lines,
                    old_str=block, new_str="def once():\n    return 1")
    assert "[1, 7]" in error.message


@follows(SUITE, "test_str_replace_nonexistent_string")
def test_str_replace_nonexistent_string(editor: TextEditor, two_lines: Path) -> None:
    error = refused(editor, "No replacement was performed", "str_replace", two_lines,
                    old_str="Not in the file", new_str="x")
    assert f"old_str `Not in the file` did not appear verbatim in {two_lines}" in error.message


@follows(SUITE, "test_str_replace_with_empty_new_str")
def test_str_replace_with_empty_new_str(editor: TextEditor, two_lines: Path) -> None:
    two_lines.write_text("keep me\ndrop me\nkeep me too")
    editor.run("str_replace", str(two_lines), old_str="drop me\n", new_str="")
    assert two_lines.read_text() == "keep me\nkeep me too"


@follows(SUITE, "test_str_replace_with_empty_old_str")
def test_str_replace_with_empty_old_str(editor: TextEditor, two_lines: Path) -> None:
    refused(editor, "No replacement was performed", "str_replace", two_lines, old_str="",
            new_str="something")
    assert two_lines.read_text() == TWO_LINES


@follows(SUITE, "test_str_replace_with_none_old_str", "test_str_replace_missing_old_str")
def test_str_replace_without_old_str(editor: TextEditor, two_lines: Path) -> None:
    refused(editor, "Parameter `old_str` is required", "str_replace", two_lines, old_str=None,
            new_str="new")


@follows(SUITE, "test_insert_no_linting")
def test_insert(editor: TextEditor, two_lines: Path) -> None:
    text = editor.run("insert", str(two_lines), insert_line=1, insert_text="A line between.").text
    assert text == (
        f"The file {two_lines} has been edited. Here's the result of running `cat -n` on a snippet "
        "of the edited file:\n     1\tA file to edit.\n     2\tA line between.\n     3\tIt is here "
        "for the tests.\nReview the changes and make sure they are as expected (correct "
        "indentation, no duplicate lines, etc). Edit the file again if necessary.")


@differs(SUITE, "test_insert_with_linting", "no-linting")
def test_insert_has_no_linting_argument(tmp_path: Path, two_lines: Path) -> None:
    ok, text, _payload = call(tmp_path, command="insert", path=str(two_lines), insert_line=1,
                              insert_text="x", enable_linting=True)
    assert not ok and "enable_linting" in text and two_lines.read_text() == TWO_LINES


@follows(SUITE, "test_insert_invalid_line")
def test_insert_invalid_line(editor: TextEditor, two_lines: Path) -> None:
    error = refused(editor, "Invalid `insert_line` parameter", "insert", two_lines, insert_line=9,
                    insert_text="nowhere")
    assert "It should be within the range of allowed values: [0, 2]" in error.message


@follows(SUITE, "test_insert_with_empty_string")
def test_insert_with_empty_string(editor: TextEditor, two_lines: Path) -> None:
    editor.run("insert", str(two_lines), insert_line=1, insert_text="")
    assert two_lines.read_text().splitlines() == ["A file to edit.", "", "It is here for the tests."]


@follows(SUITE, "test_insert_chinese_text_into_english_file")
def test_insert_chinese_text(editor: TextEditor, two_lines: Path) -> None:
    text = editor.run("insert", str(two_lines), insert_line=0, insert_text="你好,世界").text
    assert "     1\t你好,世界\n     2\tA file to edit.\n" in text
    assert two_lines.read_text(encoding="utf-8").startswith("你好,世界\n")


@follows(SUITE, "test_insert_with_none_new_str")
def test_insert_without_text(editor: TextEditor, two_lines: Path) -> None:
    refused(editor, "new_str", "insert", two_lines, insert_line=1)


@differs(SUITE, "test_undo_edit", "undo-edit")
def test_undo_of_one_edit(editor: TextEditor, two_lines: Path, tmp_path: Path) -> None:
    reply = editor.run("str_replace", str(two_lines), old_str="to edit", new_str="to change")
    undo(tmp_path, reply.result.transaction_id, durable=False)
    assert two_lines.read_text() == TWO_LINES


@differs(SUITE, "test_multiple_undo_edits", "undo-edit")
def test_undo_of_two_edits(editor: TextEditor, two_lines: Path, tmp_path: Path) -> None:
    first = editor.run("str_replace", str(two_lines), old_str="to edit", new_str="v1")
    second = editor.run("str_replace", str(two_lines), old_str="v1", new_str="v2")
    undo(tmp_path, second.result.transaction_id, durable=False)
    assert "A file v1." in two_lines.read_text()
    undo(tmp_path, first.result.transaction_id, durable=False)
    assert two_lines.read_text() == TWO_LINES


@follows(SUITE, "test_validate_path_invalid")
def test_view_of_a_missing_file(editor: TextEditor, tmp_path: Path) -> None:
    refused(editor, "does not exist", "view", tmp_path / "missing.txt")


@follows(SUITE, "test_create_existing_file_error")
def test_create_existing_file_error(editor: TextEditor, two_lines: Path) -> None:
    refused(editor, "File already exists", "create", two_lines, file_text="replacement")
    assert two_lines.read_text() == TWO_LINES


@follows(SUITE, "test_str_replace_new_str_and_old_str_same")
def test_str_replace_new_str_and_old_str_same(editor: TextEditor, two_lines: Path) -> None:
    refused(editor, "No replacement was performed. `new_str` and `old_str` must be different.",
            "str_replace", two_lines, old_str="to edit", new_str="to edit")


@follows(SUITE, "test_insert_missing_line_param")
def test_insert_missing_line_param(editor: TextEditor, two_lines: Path) -> None:
    refused(editor, "Parameter `insert_line` is required", "insert", two_lines, insert_text="x")


@differs(SUITE, "test_undo_edit_no_history_error", "undo-edit")
def test_undo_of_an_unknown_transaction(tmp_path: Path) -> None:
    with pytest.raises(PatchtxError, match="no committed transaction to undo"):
        undo(tmp_path, "20990101T000000-deadbeef")


@follows(SUITE, "test_view_directory_with_hidden_files")
def test_view_directory_with_hidden_files(editor: TextEditor, tmp_path: Path) -> None:
    folder = tmp_path / "project"
    for name in ("shown.txt", ".env", ".secret", ".cache/data.txt", "docs/readme.md"):
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_text("x\n")
    text = editor.run("view", str(folder)).text
    assert "shown.txt" in text and "docs" in text
    assert ".env" not in text and ".secret" not in text and ".cache" not in text
    assert "3 hidden files/directories in this directory are excluded" in text
    assert "ls -la" in text


@follows(SUITE, "test_view_symlinked_directory")
def test_view_symlinked_directory(editor: TextEditor, tmp_path: Path) -> None:
    real = tmp_path / "real"
    (real / "deeper").mkdir(parents=True)
    (real / "a.txt").write_text("a\n")
    (real / "deeper" / "b.txt").write_text("b\n")
    (tmp_path / "alias").symlink_to(real)
    text = editor.run("view", str(tmp_path / "alias")).text
    assert str(tmp_path / "alias") in text
    assert "a.txt" in text and "deeper" in text and "b.txt" in text


@follows(SUITE, "test_view_large_directory_with_truncation")
def test_view_large_directory_with_truncation(editor: TextEditor, tmp_path: Path) -> None:
    crowded = tmp_path / "crowded"
    crowded.mkdir()
    for number in range(1200):
        (crowded / f"entry_{number:04}.txt").write_text("")
    text = editor.run("view", str(crowded)).text
    assert LISTING_CLIPPED in text and len(text) < 17_000


@follows(SUITE, "test_view_directory_on_hidden_path")
def test_view_directory_on_hidden_path(editor: TextEditor, tmp_path: Path) -> None:
    hidden = tmp_path / ".hidden_root"
    for name in ("seen1.txt", ".unseen1", "open/seen2.txt", "open/.unseen2",
                 ".closed/unseen3.txt", ".closed/.unseen4"):
        (hidden / name).parent.mkdir(parents=True, exist_ok=True)
        (hidden / name).write_text("x\n")
    text = editor.run("view", str(hidden)).text
    assert "seen1.txt" in text and "open" in text and "seen2.txt" in text
    assert "unseen" not in text and ".closed" not in text
    assert "2 hidden files/directories in this directory are excluded" in text


@follows(SUITE, "test_view_large_file_with_truncation")
def test_view_large_file_with_truncation(editor: TextEditor, tmp_path: Path) -> None:
    big = tmp_path / "big.txt"
    big.write_text("a line of the big file\n" * 5000)
    text = editor.run("view", str(big)).text
    assert FILE_CLIPPED in text and len(text) < 40_000


@differs(SUITE, "test_validate_path_suggests_absolute_path", "relative-paths")
def test_relative_path_is_taken_from_the_root(editor: TextEditor, two_lines: Path) -> None:
    assert "A file to edit." in editor.run("view", two_lines.name).text


@follows(SUITE, "test_str_replace_and_insert_snippet_output_on_a_large_file")
def test_snippets_on_a_long_file(editor: TextEditor, two_lines: Path) -> None:
    two_lines.write_text("".join(f"row {number}\n" for number in range(1, 301)))
    assert "   150\trow 150" in editor.run("view", str(two_lines)).text
    assert "   150\t150 changed" in editor.run("str_replace", str(two_lines), old_str="row 150\n",
                                                 new_str="150 changed\n").text
    text = editor.run("str_replace", str(two_lines), old_str="150 changed\n", new_str="").text
    assert "   149\trow 149" in text and "   150\trow 151" in text
    text = editor.run("insert", str(two_lines), insert_line=149, insert_text="back at 150").text
    assert "   150\tback at 150" in text


# -- tests/integration/editor/*: the file_editor tool entry --------------------------------------
@follows(SUITE, "test_file_editor_happy_path")
def test_tool_call_happy_path(tmp_path: Path, two_lines: Path) -> None:
    ok, text, payload = call(tmp_path, command="str_replace", path=str(two_lines),
                             old_str="to edit", new_str="to change")
    assert ok and text.startswith(f"The file {two_lines} has been edited. Here's the result of "
                                  f"running `cat -n` on a snippet of {two_lines}:\n     1\tA file to change.")
    assert payload["files"] == [{"path": "two.txt", "status": "modified", "diff": payload["files"][0]["diff"]}]
    assert "-A file to edit.\n+A file to change.\n" in payload["files"][0]["diff"]
    assert payload["transaction"] and json.dumps(payload)


@differs(SUITE, "test_file_editor_with_xml_tag_parsing", "no-phantom-line")
def test_view_of_a_file_with_markup(editor: TextEditor, tmp_path: Path) -> None:
    page = tmp_path / "page.txt"
    page.write_text("<output_a1b2>{\"x\": 1}</output_a1b2>\nsecond {{line}}\n")
    assert editor.run("view", str(page)).text == (
        f"Here's the result of running `cat -n` on {page}:\n"
        "     1\t<output_a1b2>{\"x\": 1}</output_a1b2>\n     2\tsecond {{line}}\n")


@differs(SUITE, "test_successful_operations", "undo-edit")
def test_tool_calls_view_replace_insert_then_undo(tmp_path: Path) -> None:
    (tmp_path / "ops.txt").write_text("first\nsecond\nthird\n")
    ok, text, _ = call(tmp_path, command="view", path="ops.txt")
    assert ok and "Here's the result of running `cat -n`" in text and "first" in text
    ok, text, _ = call(tmp_path, command="str_replace", path="ops.txt", old_str="second",
                       new_str="2nd")
    assert ok and "has been edited" in text and "2nd" in text
    ok, text, payload = call(tmp_path, command="insert", path="ops.txt", insert_line=1,
                             insert_text="1.5")
    assert ok and "has been edited" in text and "1.5" in text
    undo(tmp_path, payload["transaction"], durable=False)
    assert (tmp_path / "ops.txt").read_text() == "first\n2nd\nthird\n"


@follows(SUITE, "test_tab_expansion")
def test_tabs_are_kept(tmp_path: Path) -> None:
    (tmp_path / "tabs.txt").write_text("plain\n\tindented\ncol\tumn\n")
    ok, text, _ = call(tmp_path, command="view", path="tabs.txt")
    assert "\tindented" in text and "col\tumn" in text
    ok, text, _ = call(tmp_path, command="str_replace", path="tabs.txt", old_str="col\tumn",
                       new_str="row")
    assert ok and "row" in text
    ok, text, _ = call(tmp_path, command="str_replace", path="tabs.txt", old_str="row",
                       new_str="a\tb\tc")
    assert ok and "a\tb\tc" in text
    ok, text, _ = call(tmp_path, command="insert", path="tabs.txt", insert_line=1,
                       insert_text="\tnew\tline")
    assert ok and "\tnew\tline" in text
    assert (tmp_path / "tabs.txt").read_text() == "plain\n\tnew\tline\n\tindented\na\tb\tc\n"


@follows(SUITE, "test_validation_error_formatting")
def test_validation_errors(tmp_path: Path) -> None:
    ok, text, payload = call(tmp_path, command="view", path=str(tmp_path / "nope" / "file.txt"))
    assert not ok and "does not exist" in text and payload["error"]["kind"] == "file_not_found"
    (tmp_path / "folder").mkdir()
    ok, text, payload = call(tmp_path, command="str_replace", path="folder", old_str="a", new_str="b")
    assert not ok and "directory and only the `view` command" in payload["error"]["message"]


@follows(SUITE, "test_str_replace_error_handling")
def test_str_replace_errors(tmp_path: Path) -> None:
    (tmp_path / "e.txt").write_text("alpha\nbeta\n")
    ok, text, payload = call(tmp_path, command="str_replace", path="e.txt", old_str="gamma", new_str="x")
    assert not ok and "did not appear verbatim" in text and payload["error"]["kind"] == "context_not_found"
    (tmp_path / "e.txt").write_text("same\nsame\nother")
    ok, text, payload = call(tmp_path, command="str_replace", path="e.txt", old_str="same", new_str="x")
    assert not ok and "Multiple occurrences" in text and "lines [1, 2]" in payload["error"]["message"]


@follows(SUITE, "test_view_range_validation")
def test_view_range_validation(tmp_path: Path) -> None:
    (tmp_path / "r.txt").write_text("r1\nr2\nr3\n")
    ok, text, _ = call(tmp_path, command="view", path="r.txt", view_range=[2])
    assert not ok and "should be a list of two integers" in text
    ok, text, _ = call(tmp_path, command="view", path="r.txt", view_range=[1, 50])
    assert ok and "NOTE: We only show up to 3 since there're only 3 lines in this file." in text
    ok, text, _ = call(tmp_path, command="view", path="r.txt", view_range=[3, 2])
    assert not ok and "should be greater than or equal to" in text


@follows(SUITE, "test_insert_validation")
def test_insert_validation(tmp_path: Path) -> None:
    (tmp_path / "i.txt").write_text("i1\ni2\ni3\n")
    for line in (-1, 4):
        ok, text, _ = call(tmp_path, command="insert", path="i.txt", insert_line=line, insert_text="x")
        assert not ok and "should be within the range" in text
    assert (tmp_path / "i.txt").read_text() == "i1\ni2\ni3\n"


@differs(SUITE, "test_undo_validation", "undo-edit")
def test_undo_edit_is_not_a_command(tmp_path: Path) -> None:
    (tmp_path / "u.txt").write_text("u\n")
    ok, text, payload = call(tmp_path, command="undo_edit", path="u.txt")
    assert not ok and "Unrecognized command undo_edit" in text and "undo" in payload["error"]["hint"]


@differs(SUITE, "test_file_validation", "no-size-limit")
def test_file_validation(tmp_path: Path) -> None:
    query = tmp_path / "query.sql"
    query.write_bytes(b"SELECT\x00binary\x00")
    ok, text, payload = call(tmp_path, command="view", path="query.sql")
    assert not ok and "binary" in text.lower() and payload["error"]["kind"] == "binary_file"
    query.write_text("x" * (11 * 1024 * 1024))
    ok, text, _ = call(tmp_path, command="view", path="query.sql")
    assert ok and FILE_CLIPPED in text and len(text) < 20_000  # shown bounded, not refused
    query.write_text("\n    SELECT name\n    FROM people;\n")
    ok, text, _ = call(tmp_path, command="view", path="query.sql")
    assert ok and "SELECT name" in text and "binary" not in text.lower()


# -- tests/integration/editor/test_non_utf8_operations.py ----------------------------------------
CP1251 = ("# coding: cp1251\n" "word = 'Слово'\n").encode("cp1251")


@pytest.mark.parametrize("test, arguments", [
    ("test_view_non_utf8_file", {"command": "view"}),
    ("test_view_range_non_utf8_file", {"command": "view", "view_range": [1, 2]}),
    ("test_str_replace_non_utf8_file", {"command": "str_replace", "old_str": "Слово", "new_str": "Дело"}),
    ("test_insert_non_utf8_file", {"command": "insert", "insert_line": 1, "insert_text": "x = 1"}),
    ("test_undo_edit_non_utf8_file", {"command": "str_replace", "old_str": "word", "new_str": "term"}),
    ("test_complex_workflow_non_utf8_file", {"command": "insert", "insert_line": 0, "insert_text": "# top"}),
    ("test_mixed_encoding_workflow", {"command": "str_replace", "old_str": "coding", "new_str": "encoding"}),
])
def test_a_file_that_is_not_utf8_is_refused(tmp_path: Path, test: str, arguments: dict) -> None:
    """Each case follows the reference test ``test`` (registered below)."""
    (tmp_path / "legacy.py").write_bytes(CP1251)
    ok, text, payload = call(tmp_path, path="legacy.py", **arguments)
    assert not ok and payload["error"]["kind"] == "not_utf8" and "Nothing was changed." in text
    assert (tmp_path / "legacy.py").read_bytes() == CP1251


for _test in NON_UTF8:
    if _test != "test_create_non_utf8_file":
        differs(SUITE, _test, "utf8-only")(test_a_file_that_is_not_utf8_is_refused)


@follows(SUITE, "test_create_non_utf8_file")
def test_create_with_cyrillic_text(editor: TextEditor, tmp_path: Path) -> None:
    editor.run("create", str(tmp_path / "ru.py"), file_text="greeting = 'Привет'\n")
    assert (tmp_path / "ru.py").read_text(encoding="utf-8") == "greeting = 'Привет'\n"


# -- tests/unit/test_file_validation.py, tests/unit/test_workspace_root.py ------------------------
@differs(SUITE, "test_validate_large_file", "no-size-limit")
def test_a_large_file_is_edited(editor: TextEditor, tmp_path: Path) -> None:
    large = tmp_path / "large.txt"
    large.write_text("filler line\n" * 1_000_000 + "the end\n")  # about 12 MB
    editor.run("str_replace", str(large), old_str="the end", new_str="the real end")
    assert large.read_bytes().endswith(b"filler line\nthe real end\n")


@follows(SUITE, "test_validate_binary_file", "test_validate_image_file")
def test_binary_files_are_refused(editor: TextEditor, tmp_path: Path) -> None:
    picture = tmp_path / "picture.png"
    picture.write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR")
    refused(editor, "binary", "view", picture)
    refused(editor, "binary", "str_replace", picture, old_str="PNG", new_str="GIF")
    assert picture.read_bytes().startswith(b"\x89PNG")


@follows(SUITE, "test_validate_text_file")
def test_text_files_are_read(editor: TextEditor, tmp_path: Path) -> None:
    (tmp_path / "plain.txt").write_text("plain text\nsecond line\n")
    assert "plain text" in editor.run("view", str(tmp_path / "plain.txt")).text


@follows(SUITE, "test_validate_directory")
def test_directories_are_listed(editor: TextEditor, tmp_path: Path) -> None:
    assert "Here's the files and directories" in editor.run("view", str(tmp_path)).text


@follows(SUITE, "test_validate_nonexistent_file")
def test_a_missing_file_is_reported(editor: TextEditor, tmp_path: Path) -> None:
    refused(editor, "does not exist", "str_replace", tmp_path / "ghost.txt", old_str="a", new_str="b")


@differs(SUITE, "test_validate_pdf_file", "no-document-conversion")
def test_documents_are_not_converted(editor: TextEditor, tmp_path: Path) -> None:
    document = tmp_path / "report.pdf"
    document.write_bytes(b"%PDF-1.4\n%\xe2\xe3\xcf\xd3\n1 0 obj\n<< >>\nstream\n\x00\x01\nendstream\n")
    refused(editor, "binary", "view", document)


@differs(SUITE, "test_workspace_root_as_cwd", "relative-paths")
def test_relative_paths_start_at_the_root(tmp_path: Path) -> None:
    (tmp_path / "root").mkdir()
    (tmp_path / "root" / "here.txt").write_text("here\n")
    assert "here" in TextEditor(tmp_path / "root").run("view", "here.txt").text
    with pytest.raises(PatchtxError, match="does not exist"):
        TextEditor(tmp_path / "root").run("view", "absent.txt")


@differs(SUITE, "test_relative_workspace_root_raises_error", "relative-paths")
def test_a_relative_root_is_taken_from_the_current_directory(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "ws").mkdir()
    (tmp_path / "ws" / "f.txt").write_text("f\n")
    monkeypatch.chdir(tmp_path)
    editor = TextEditor("ws")
    assert editor.root == os.path.realpath(tmp_path / "ws")
    assert "f" in editor.run("view", "f.txt").text


@differs(SUITE, "test_no_suggestion_when_no_workspace_root", "relative-paths")
def test_a_relative_path_never_leaves_the_root(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "ws").mkdir()
    (tmp_path / "outside.txt").write_text("outside\n")
    monkeypatch.chdir(tmp_path)
    with pytest.raises(PatchtxError, match="'..'"):
        TextEditor(tmp_path / "ws").run("view", "../outside.txt")
