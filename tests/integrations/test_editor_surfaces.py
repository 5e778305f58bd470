"""The text editor and edit lists on every surface (issue 42 item 9): the editor's arguments
declared once, hints that name only the tool's own arguments, unknown arguments refused (the
library, run_edit_tool_call and MCP through the official SDK client), the `undo` pointer on MCP's
`undo_edit` answer, and each file named as the call spelled it."""

from __future__ import annotations

import inspect
from pathlib import Path
from typing import Any

import pytest
from agents_support import snapshot
from test_mcp import anyio_backend, call, connect  # noqa: F401 - the fixture is used by name

import patchtx
from patchtx.agents.edit_toolspec import EDITOR, EDITOR_ARGUMENTS, edit_tool_spec
from patchtx.agents.editor import ARGUMENTS, TextEditor, run_editor
from patchtx.agents.tool_call import run_edit_tool_call
from patchtx.errors import AmbiguousContextError, InvalidArgumentsError

DUPLICATE = {"command": "str_replace", "path": "dup.py", "old_str": "x = 1", "new_str": "y = 2"}


@pytest.fixture
def work(tree: Path) -> Path:
    (tree / "dup.py").write_text("x = 1\nx = 1\n")
    return tree


def test_the_nine_arguments_are_declared_once() -> None:
    schema = edit_tool_spec(EDITOR, "json-schema")
    assert schema["properties"] == EDITOR_ARGUMENTS and len(EDITOR_ARGUMENTS) == 9
    assert set(ARGUMENTS) == set(EDITOR_ARGUMENTS)
    assert {"string": str, "integer": int, "array": list}[EDITOR_ARGUMENTS["insert_line"]["type"]] \
        in ARGUMENTS["insert_line"]
    # The library method takes the same arguments, by the same names.
    assert set(inspect.signature(TextEditor.run).parameters) - {"self"} == set(EDITOR_ARGUMENTS)


def test_an_ambiguous_edit_hints_only_the_tool_s_own_arguments(work: Path) -> None:
    editor = run_edit_tool_call(EDITOR, DUPLICATE, str(work))
    assert editor.payload["error"]["kind"] == "ambiguous_context"
    assert "replace_all" not in editor.text and "old_str `x = 1`" in editor.text
    edits = run_edit_tool_call("edit_files", {"edits": [{"path": "dup.py", "old_string": "x = 1",
                                                        "new_string": "y = 2"}]}, str(work))
    assert "replace_all" in edits.text and "old_string `x = 1`" in edits.text and "old_str " not in edits.text
    with pytest.raises(AmbiguousContextError) as raised:
        patchtx.apply_edits([{"path": "dup.py", "old_string": "x = 1", "new_string": "y"}], work)
    assert "replace_all" in str(raised.value)
    with pytest.raises(AmbiguousContextError) as raised:
        run_editor(DUPLICATE, work)
    assert "replace_all" not in str(raised.value)


def test_messages_name_a_relative_path_as_given(work: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(work)
    miss = {"command": "str_replace", "path": "notes.txt", "old_str": "zzz", "new_str": "y"}
    for text in (run_edit_tool_call(EDITOR, miss, ".").text,
                 run_edit_tool_call("edit_files", {"edits": [{"path": "notes.txt", "old_string": "zzz",
                                                              "new_string": "y"}]}, ".").text,
                 run_edit_tool_call("replace_in_file", {"path": "notes.txt", "diff": "------- SEARCH\nzzz\n"
                                                        "=======\ny\n+++++++ REPLACE\n"}, ".").text):
        assert " notes.txt" in text and str(work) not in text, text
    absolute = run_edit_tool_call(EDITOR, {**miss, "path": str(work / "notes.txt")}, ".").text
    assert str(work / "notes.txt") in absolute  # an absolute spelling stays as given


def test_unknown_arguments_are_refused_by_the_library_and_tool_calls(work: Path) -> None:
    before = snapshot(work)
    with pytest.raises(InvalidArgumentsError):
        run_editor({**DUPLICATE, "old_str": "x = 1\nx = 1", "enable_linting": True}, work)
    outcome = run_edit_tool_call(EDITOR, {**DUPLICATE, "old_str": "x = 1\nx = 1", "enable_linting": True},
                                 str(work))
    assert outcome.payload["error"]["kind"] == "invalid_arguments" and "enable_linting" in outcome.text
    assert snapshot(work) == before


@pytest.mark.anyio
async def test_mcp_refuses_unknown_arguments_and_points_undo_edit_to_undo(work: Path) -> None:
    before = snapshot(work)
    async with connect(work) as client:
        tools = {tool.name: tool for tool in (await client.list_tools()).tools}
        assert set(tools[EDITOR].input_schema["properties"]) == set(EDITOR_ARGUMENTS)
        assert tools[EDITOR].input_schema["required"] == ["command", "path"]
        assert all(tool.input_schema.get("additionalProperties") is False for tool in tools.values())
        whole = {"command": "str_replace", "path": "dup.py", "old_str": "x = 1\nx = 1", "new_str": "y"}
        cases: list[tuple[str, dict[str, Any]]] = [
            (EDITOR, {**whole, "enable_linting": True}),
            ("view", {"path": "dup.py", "follow": True}),
            ("edit_files", {"edits": [{"path": "dup.py", "old_string": "x = 1\nx = 1", "new_string": "y"}],
                            "lint": True}),
            ("replace_in_file", {"path": "dup.py", "diff": "------- SEARCH\nx = 1\nx = 1\n=======\ny\n"
                                 "+++++++ REPLACE\n", "mode": "fast"}),
            ("apply_patch", {"patch": "*** Begin Patch\n*** Update File: dup.py\n@@\n-x = 1\n-x = 1\n+y\n"
                             "*** End Patch\n", "force": True}),
        ]
        for tool, arguments in cases:
            is_error, content, text = await call(client, tool, arguments)
            unknown = next(key for key in arguments if key not in ("command", "path", "old_str", "new_str",
                                                                    "edits", "diff", "patch"))
            assert is_error and content["error"]["kind"] == "invalid_arguments", (tool, text)
            assert f"`{unknown}` is not an argument of this tool" in text
        assert snapshot(work) == before
        is_error, content, text = await call(client, EDITOR, {"command": "undo_edit", "path": "dup.py"})
        assert is_error and content["error"]["kind"] == "invalid_arguments"
        assert "Unrecognized command undo_edit" in text and "the `undo` tool" in text
        is_error, content, _ = await call(client, EDITOR, whole)  # the tool still works
        assert not is_error and (work / "dup.py").read_text() == "y\n"


def test_view_of_a_file_that_is_not_utf8_says_so(work: Path) -> None:
    (work / "latin.txt").write_bytes("caf\u00e9\n".encode("latin-1"))
    outcome = run_edit_tool_call(EDITOR, {"command": "view", "path": "latin.txt"}, str(work))
    assert outcome.payload["error"]["kind"] == "not_utf8"
    assert outcome.text.startswith("Error [not_utf8]: Cannot show latin.txt: it is not UTF-8 text (byte 3, line 1).")
    assert "update" not in outcome.text


def test_an_empty_old_string_fills_an_empty_file_as_an_empty_search_does(work: Path) -> None:
    (work / "empty.txt").write_text("")
    (work / "blocks.txt").write_text("")
    filled = run_edit_tool_call("edit_files", {"edits": [{"path": "empty.txt", "old_string": "",
                                                          "new_string": "hello\n"}]}, str(work))
    blocks = run_edit_tool_call("replace_in_file", {"path": "blocks.txt", "diff": "------- SEARCH\n=======\n"
                                                    "hello\n+++++++ REPLACE\n"}, str(work))
    assert filled.ok and blocks.ok, (filled.text, blocks.text)
    assert (work / "empty.txt").read_text() == (work / "blocks.txt").read_text() == "hello\n"
    # A file with content: refused in the edit list's words, not a Codex patch's.
    refused = run_edit_tool_call("edit_files", {"edits": [{"path": "notes.txt", "old_string": "",
                                                           "new_string": "x\n"}]}, str(work))
    assert refused.payload["error"]["kind"] == "file_exists"
    assert "An empty old_string creates notes.txt, which already exists and is not empty." in refused.text
    assert "*** " not in refused.text and (work / "notes.txt").read_text() == "one\ntwo\nthree\n"


def test_out_of_order_blocks_are_explained_first(work: Path) -> None:
    (work / "abcd.txt").write_text("a\nb\nc\nd\n")
    outcome = run_edit_tool_call("replace_in_file", {"path": "abcd.txt", "diff": (
        "------- SEARCH\nc\n=======\nC\n+++++++ REPLACE\n------- SEARCH\na\n=======\nA\n+++++++ REPLACE\n")},
        str(work))
    assert outcome.text.startswith("Error [context_not_found]: The block on line 6 is out of order: its SEARCH "
                                   "lines stand at file line 1, above where the block before it matched")
    assert "do not match" not in outcome.text and (work / "abcd.txt").read_text() == "a\nb\nc\nd\n"


def test_insert_of_text_ending_in_a_newline_is_its_lines(work: Path) -> None:
    """docs/integrations.md [insert-newline]: the reference editors would add an empty line."""
    (work / "ab.txt").write_text("a\nb\n")
    run_editor({"command": "insert", "path": "ab.txt", "insert_line": 1, "insert_text": "foo\n"}, work)
    assert (work / "ab.txt").read_text() == "a\nfoo\nb\n"
    run_editor({"command": "insert", "path": "ab.txt", "insert_line": 1, "insert_text": "bar"}, work)
    assert (work / "ab.txt").read_text() == "a\nbar\nfoo\nb\n"
