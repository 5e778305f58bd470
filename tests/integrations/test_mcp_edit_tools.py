"""The edit-protocol tools of the MCP server, driven by the official SDK's client over stdio
(``python -m patchtx.agents.mcp_server --root DIR``) on a real tree: the text editor, edit lists
and SEARCH/REPLACE blocks, each call one transaction that the ``undo`` tool reverts."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import jsonschema
import pytest
from agents_support import snapshot
from test_mcp import anyio_backend, call, connect  # noqa: F401 - the fixture is used by name

from patchtx.agents.edit_toolspec import edit_tool_spec
from patchtx.render import result_schema

pytestmark = pytest.mark.anyio


def files(root: Path) -> dict[str, bytes | None]:
    return {k: v for k, v in snapshot(root).items() if not k.startswith(".patchtx")}


async def test_an_editor_session_create_view_edit_fail_and_undo(tree: Path) -> None:
    """create, view, several str_replace and insert calls, a failing one (nothing changed), then
    undo of the last two: the file as it was before them."""
    async with connect(tree) as client:
        tools = {tool.name: tool for tool in (await client.list_tools()).tools}
        editor = tools["str_replace_based_edit_tool"]
        assert editor.input_schema["required"] == ["command", "path"]
        assert set(editor.input_schema["properties"]) == set(
            edit_tool_spec("str_replace_based_edit_tool", "json-schema")["properties"])
        assert editor.annotations is not None and editor.annotations.destructive_hint is True

        async def edit(**arguments: Any) -> tuple[bool, dict[str, Any], str]:
            return await call(client, "str_replace_based_edit_tool", arguments)

        is_error, content, text = await edit(command="create", path="calc.py",
                                             file_text="def add(a, b):\n    return a + b\n")
        assert not is_error and text.startswith("File created successfully at: calc.py")
        assert content["summary"] == "A 1, M 0, D 0, R 0" and content["transaction"]

        is_error, content, text = await edit(command="view", path=str(tree / "calc.py"))
        assert not is_error and text == (f"Here's the result of running `cat -n` on {tree / 'calc.py'}:\n"
                                         "     1\tdef add(a, b):\n     2\t    return a + b\n")
        assert content["output"] == text and content["dry_run"] and content["files"] == []
        jsonschema.validate(content, result_schema())

        transactions = []
        for old, new in (("a + b", "a+b"), ("a+b", "sum((a, b))")):
            is_error, content, text = await edit(command="str_replace", path="calc.py", old_str=old,
                                                 new_str=new)
            assert not is_error and "has been edited" in text
            transactions.append(content["transaction"])
        is_error, content, text = await edit(command="insert", path="calc.py", insert_line=0,
                                             insert_text='"""Arithmetic."""\n')
        assert not is_error and '     1\t"""Arithmetic."""' in text
        transactions.append(content["transaction"])
        is_error, content, text = await edit(command="insert", path="calc.py", insert_line=3,
                                             insert_text="\n\ndef neg(a):\n    return -a")
        assert not is_error
        transactions.append(content["transaction"])
        final = (tree / "calc.py").read_bytes()
        assert final == (b'"""Arithmetic."""\ndef add(a, b):\n    return sum((a, b))\n\n\n'
                         b'def neg(a):\n    return -a\n')

        before = files(tree)
        is_error, content, text = await edit(command="str_replace", path="calc.py",
                                             old_str="return", new_str="yield")
        assert is_error and content["error"]["kind"] == "ambiguous_context"
        assert "Multiple occurrences of old_str `return` in lines [3, 7]" in text
        assert "Nothing was changed." in text and files(tree) == before

        for transaction in reversed(transactions[-2:]):
            is_error, content, _ = await call(client, "undo", {"transaction": transaction})
            assert not is_error and content["undone"] == transaction
        assert (tree / "calc.py").read_text() == "def add(a, b):\n    return sum((a, b))\n"

        is_error, content, _ = await call(client, "log", {})
        logged = [entry["id"] for entry in content["transactions"]]
        assert set(transactions) <= set(logged) and len(logged) == len(transactions) + 3


async def test_edit_files_and_replace_in_file(tree: Path) -> None:
    async with connect(tree) as client:
        tools = {tool.name: tool for tool in (await client.list_tools()).tools}
        assert tools["edit_files"].output_schema == tools["replace_in_file"].output_schema == result_schema()
        before = files(tree)
        is_error, content, text = await call(client, "edit_files", {"edits": [
            {"path": "app.py", "old_string": "hello", "new_string": "hi"},
            {"path": "notes.txt", "old_string": "two", "new_string": "2"},
            {"path": "app.py", "old_string": "print('hi')", "new_string": "print('hi', end='')"},
        ]})
        assert not is_error and content["summary"] == "A 0, M 2, D 0, R 0"
        assert (tree / "app.py").read_text() == "def main():\n    print('hi', end='')\n"
        assert (tree / "notes.txt").read_text() == "one\n2\nthree\n"

        middle = files(tree)
        is_error, content, text = await call(client, "edit_files", {"file_path": "notes.txt", "edits": [
            {"old_string": "one", "new_string": "1"},
            {"old_string": "four", "new_string": "4"},
        ]})
        assert is_error and content["error"]["kind"] == "context_not_found"
        assert text.startswith("Error [context_not_found]: Edit 2 of 2 (notes.txt): No replacement was performed")
        assert files(tree) == middle

        is_error, content, text = await call(client, "edit_files", {"edits": [
            {"path": "app.py", "old_string": "x", "new_string": "y", "bogus": 1}]})
        assert is_error and content["error"]["kind"] == "invalid_arguments" and files(tree) == middle

        is_error, content, text = await call(client, "replace_in_file", {
            "path": "pkg/util.py",
            "diff": "------- SEARCH\nVALUE = 1\n=======\nVALUE = 2\n+++++++ REPLACE\n"})
        assert not is_error and (tree / "pkg" / "util.py").read_text() == "VALUE = 2\n"
        assert before != files(tree)


JSON_LOOKING = [text + end for text in ('["prod/**"]', "{}", "123", "null", "true", '"quoted"')
                for end in ("", "\n")]
"""Strings a model editing a JSON or YAML file sends, which the SDK would read as JSON for an
argument not declared ``str`` (a list, an object, None...): each must arrive as the text sent."""


async def test_json_looking_strings_arrive_as_the_text_sent(tree: Path, tmp_path: Path) -> None:
    """Every string argument of every edit tool (and apply_patch's), through the SDK's client:
    the editor's ``file_text``, ``old_str``, ``new_str`` and ``insert_text``; an edit list's strings,
    ``file_path`` and ``intent``; a SEARCH/REPLACE call's ``path`` and ``diff``; a patch and its
    intent. The library run with the same arguments on a copy is the oracle; an omitted
    ``new_str`` still deletes (it is not the text "null")."""
    from patchtx.agents.editor import TextEditor

    library = tmp_path / "library"
    library.mkdir()
    editor = TextEditor(library)
    async with connect(tree) as client:

        async def both(**arguments: Any) -> tuple[bool, dict[str, Any], str]:
            outcome = await call(client, "str_replace_based_edit_tool", arguments)
            assert not outcome[0], (arguments, outcome[2])
            editor.run(**arguments)
            path = arguments["path"]
            assert (tree / path).read_bytes() == (library / path).read_bytes(), arguments
            return outcome

        for number, value in enumerate(JSON_LOOKING):
            other = JSON_LOOKING[(number + 1) % len(JSON_LOOKING)]
            name = f"data{number}.txt"
            await both(command="create", path=name, file_text=value)
            assert (tree / name).read_text() == value
            await both(command="str_replace", path=name, old_str=value, new_str=other)
            assert (tree / name).read_text() == other
            await both(command="str_replace", path=name, old_str=other)  # new_str omitted: deleted
            assert (tree / name).read_text() == ""
            await both(command="create", path=f"head{number}.txt", file_text="head: 1\n")
            await both(command="insert", path=f"head{number}.txt", insert_line=1, insert_text=value)
            assert (tree / f"head{number}.txt").read_text().startswith("head: 1\n" + value)

            is_error, content, text = await call(client, "edit_files", {
                "file_path": "notes.txt", "intent": value,
                "edits": [{"old_string": "two", "new_string": value}]})
            assert not is_error and content["intent"] == value, text
            assert (tree / "notes.txt").read_text() == f"one\n{value}\nthree\n"
            is_error, content, text = await call(client, "edit_files", {"edits": [
                {"path": "notes.txt", "old_string": value, "new_string": "two"}]})
            assert not is_error, text

            patch = f"*** Begin Patch\n*** Add File: patched{number}.json\n+{value.rstrip()}\n*** End Patch\n"
            is_error, content, text = await call(client, "apply_patch", {"patch": patch, "intent": value})
            assert not is_error and content["intent"] == value, text
            assert (tree / f"patched{number}.json").read_text() == value.rstrip() + "\n"

        for value in JSON_LOOKING[::2]:  # (without a line break: as a file's name)
            is_error, content, text = await call(client, "edit_files", {
                "file_path": value, "edits": [{"old_string": "", "new_string": "named\n"}]})
            assert not is_error and (tree / value).read_text() == "named\n", text
            is_error, content, text = await call(client, "replace_in_file", {
                "path": value, "diff": f"------- SEARCH\nnamed\n=======\n{value}\n+++++++ REPLACE\n"})
            assert not is_error and (tree / value).read_text() == value + "\n", text

        is_error, content, text = await call(client, "apply_patch", {"patch": "{}\n"})
        assert is_error and content["error"]["kind"] == "parse_error", text


async def test_view_never_shows_the_per_user_state_and_does_show_protected_files(tree: Path) -> None:
    """Through the SDK's client, a server started with ``--protect notes.txt`` whose per-user
    state folder lies inside its root: the protected file is shown (the policy guards writes) and
    its edit refused; the state folder (the secret) is never shown, nor listed."""
    from agents_support import server_environment
    from mcp import Client
    from tests.warm_server import parameters

    state = tree / "home" / "state" / "patchtx"
    state.mkdir(parents=True)
    (state / "secret").write_text("a secret that is text\n")
    params = parameters(["--root", str(tree), "--protect", "notes.txt"], cwd=str(tree.parent),
                        env={**server_environment(), "PATCHTX_STATE_HOME": str(state)})
    before = files(tree)
    async with Client(params) as client:
        is_error, _content, text = await call(client, "str_replace_based_edit_tool",
                                              {"command": "view", "path": "notes.txt"})
        assert not is_error and "     2\ttwo" in text
        is_error, content, text = await call(client, "str_replace_based_edit_tool", {
            "command": "str_replace", "path": "notes.txt", "old_str": "two", "new_str": "2"})
        assert is_error and content["error"]["kind"] == "policy_violation", text
        for path in ("home/state/patchtx/secret", "home/state/patchtx"):
            is_error, content, text = await call(client, "str_replace_based_edit_tool",
                                                 {"command": "view", "path": path})
            assert is_error and content["error"]["kind"] == "unsafe_path", text
            assert text.startswith(f"Error [unsafe_path]: Refusing to show {path}: it is patchtx's")
            assert "secret that is text" not in text
        is_error, _content, text = await call(client, "str_replace_based_edit_tool",
                                              {"command": "view", "path": "home"})
        assert not is_error and text.endswith("home/\nhome/state/\n") and "patchtx" not in text, text
    assert files(tree) == before


WRONG_TYPED_CALLS = [
    ("apply_patch", {"patch": 5}), ("apply_patch", {"patch": ["x"]}),
    ("apply_patch", {"patch": "*** Begin Patch\n*** End Patch\n", "strip": "one"}),
    ("apply_patch", {"patch": "*** Begin Patch\n*** End Patch\n", "workspace_root": 7}),
    ("preview_patch", {"patch": {"a": 1}}), ("undo", {"transaction": 5}),
    ("str_replace_based_edit_tool", {"command": "view", "path": ["app.py"]}),
    ("str_replace_based_edit_tool", {"command": "insert", "path": "app.py", "insert_line": "1",
                                     "insert_text": "x"}),
    ("str_replace_based_edit_tool", {"command": 5, "path": "app.py"}),
    ("edit_files", {"edits": 5}), ("edit_files", {"edits": [{"path": "app.py", "old_string": 5, "new_string": "x"}]}),
    ("edit_files", {"edits": [5]}), ("edit_files", {"edits": [], "dry_run": "yes"}),
    ("replace_in_file", {"path": "app.py", "diff": 5}), ("replace_in_file", {"path": None, "diff": "x"}),
]


async def test_every_tool_answers_wrong_types_as_invalid_arguments(tree: Path) -> None:
    """Issue 38: a wrong-typed argument is refused as invalid_arguments on every tool (the SDK's
    validation against each tool's schema, worded by the server), nothing written, and the server
    answers the next call."""
    before = files(tree)
    async with connect(tree) as client:
        for tool, arguments in WRONG_TYPED_CALLS:
            is_error, content, text = await call(client, tool, arguments)
            assert is_error and content["error"]["kind"] == "invalid_arguments", (tool, arguments, text)
        assert files(tree) == before
        is_error, _, _ = await call(client, "str_replace_based_edit_tool", {"command": "view", "path": "app.py"})
        assert not is_error
