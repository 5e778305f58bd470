"""The edit-protocol tools as a host uses them: their declarations (``patchtx tool-spec --tool``)
and the executors behind every surface (``run_edit_tool_call``, ``editor_call``, ``edits_call``,
``replace_in_file_call``): arguments as a model sends them, answers in the one result shape."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest
from agents_support import snapshot

from patchtx.agents.edit_toolspec import FORMATS, TOOLS, edit_tool_spec
from patchtx.agents.tool_call import (
    editor_call,
    edits_call,
    replace_in_file_call,
    run_edit_tool_call,
    run_tool_call,
)
from patchtx.agents.toolspec import tool_spec_main
from patchtx.render import result_schema

CALLS = {
    "str_replace_based_edit_tool": {"command": "str_replace", "path": "app.py", "old_str": "hello",
                                    "new_str": "bye"},
    "edit_files": {"edits": [{"path": "app.py", "old_string": "hello", "new_string": "bye"}]},
    "replace_in_file": {"path": "app.py", "diff": "------- SEARCH\n    print('hello')\n=======\n"
                                                  "    print('bye')\n+++++++ REPLACE\n"},
    "edit_file": {"target_file": "app.py", "code_edit": "def main():\n    print('bye')\n"},
}
"""A call of each tool, as its declaration allows. (edit_file's snippet, without a placeholder, is
the whole file here: tests/integrations/test_edit_file.py applies it to a file it decides.)"""
APPLIED = [tool for tool in TOOLS if tool != "edit_file"]


def test_the_editor_checks_the_arguments_its_declaration_names() -> None:
    """editor.ARGUMENTS (what a library or tool call is checked against) and the declared schema
    (what a model is shown) name the same arguments with the same JSON types."""
    from patchtx.agents.editor import ARGUMENTS

    json_type = {(str,): "string", (int,): "integer", (list,): "array"}
    declared = edit_tool_spec("str_replace_based_edit_tool", "json-schema")["properties"]
    assert {name: json_type[kinds] for name, kinds in ARGUMENTS.items()} == {
        name: schema["type"] for name, schema in declared.items()}


@pytest.mark.parametrize("tool", TOOLS)
@pytest.mark.parametrize("format", FORMATS)
def test_each_declaration_has_its_shape(tool: str, format: str) -> None:
    spec = edit_tool_spec(tool, format)
    if format == "json-schema":
        jsonschema.Draft202012Validator.check_schema(spec)
        jsonschema.validate(CALLS[tool], spec)
        return
    if format == "anthropic" and tool == "str_replace_based_edit_tool":
        assert spec == {"type": "text_editor_20250728", "name": tool}
        return
    if format == "anthropic":
        assert set(spec) == {"name", "description", "input_schema"} and spec["name"] == tool
        schema = spec["input_schema"]
    elif format == "chat-completions":
        assert set(spec) == {"type", "function"} and spec["function"]["name"] == tool
        schema = spec["function"]["parameters"]
    else:
        assert (spec["type"], spec["name"], spec["strict"]) == ("function", tool, False)
        schema = spec["parameters"]
    assert schema == edit_tool_spec(tool, "json-schema") and schema["additionalProperties"] is False


@pytest.mark.parametrize("tool", APPLIED)
def test_a_call_as_declared_applies_as_one_transaction(tool: str, tree: Path) -> None:
    outcome = run_edit_tool_call(tool, CALLS[tool], str(tree))
    assert outcome.ok, outcome.text
    assert (tree / "app.py").read_text() == "def main():\n    print('bye')\n"
    jsonschema.validate(outcome.payload, result_schema())
    assert outcome.payload["summary"] == "A 0, M 1, D 0, R 0" and outcome.payload["transaction"]


@pytest.mark.parametrize("tool, arguments", [
    ("str_replace_based_edit_tool", {"command": "str_replace", "path": "app.py", "old_str": 5}),
    ("str_replace_based_edit_tool", {"command": "view", "path": "app.py", "insert_line": True}),
    ("str_replace_based_edit_tool", {"path": "app.py"}),
    ("edit_files", {"edits": "not a list"}),
    ("edit_files", {"edits": [], "dry_run": True}),
    ("edit_files", {"edits": [{"path": "app.py", "old_string": "a", "new_string": "b"}], "force": True}),
    ("replace_in_file", {"path": "app.py"}),
    ("no_such_tool", {}),
])
def test_arguments_that_do_not_fit_are_refused_as_such(tool: str, arguments: dict, tree: Path) -> None:
    before = snapshot(tree)
    outcome = run_edit_tool_call(tool, arguments, str(tree))
    assert not outcome.ok and outcome.payload["error"]["kind"] == "invalid_arguments", outcome.text
    assert outcome.text.startswith("Error [invalid_arguments]: ") and snapshot(tree) == before


def test_the_host_policy_applies_to_the_editor(tree: Path) -> None:
    refused = editor_call({"command": "create", "path": "app.py", "file_text": "x\n"}, str(tree))
    assert not refused.ok and refused.payload["error"]["kind"] == "file_exists"
    allowed = editor_call({"command": "create", "path": "app.py", "file_text": "x\n"}, str(tree),
                          host={"allow_overwrite": True})
    assert allowed.ok and (tree / "app.py").read_text() == "x\n"
    protected = editor_call({"command": "str_replace", "path": "notes.txt", "old_str": "two",
                             "new_str": "2"}, str(tree), host={"protected": ("notes.txt",)})
    assert not protected.ok and protected.payload["error"]["kind"] == "policy_violation"
    assert (tree / "notes.txt").read_text() == "one\ntwo\nthree\n"


def test_an_edit_list_dry_run_writes_nothing(tree: Path) -> None:
    before = snapshot(tree)
    outcome = edits_call([{"path": "notes.txt", "old_string": "one\ntwo", "new_string": "1\n2"}],
                         str(tree), dry_run=True)
    assert outcome.ok and outcome.payload["dry_run"] and "-one\n-two\n+1\n+2\n" in outcome.text
    assert snapshot(tree) == before


def test_a_malformed_diff_is_a_parse_error(tree: Path) -> None:
    outcome = replace_in_file_call("app.py", "------- SEARCH\nx\n=======\ny\n", str(tree))
    assert not outcome.ok and outcome.payload["error"]["kind"] == "parse_error"
    assert "the text ends inside the block" in outcome.text


def test_view_answers_in_the_one_result_shape_with_its_output(tree: Path) -> None:
    before = snapshot(tree)
    outcome = editor_call({"command": "view", "path": "pkg"}, str(tree))
    jsonschema.validate(outcome.payload, result_schema())
    assert outcome.ok and outcome.payload["output"] == outcome.text
    assert outcome.payload["dry_run"] and outcome.payload["transaction"] is None
    assert (outcome.payload["summary"], outcome.payload["files"]) == ("A 0, M 0, D 0, R 0", [])
    assert "pkg/util.py" in outcome.text and "pkg/empty/" in outcome.text
    assert snapshot(tree) == before


@pytest.mark.parametrize(("path", "cause"), [(".git/config", ".git"), (".patchtx/journal", ".patchtx")])
def test_view_inside_git_or_patchtx_names_that_cause(tree: Path, path: str, cause: str) -> None:
    (tree / ".git").mkdir()
    (tree / ".git" / "config").write_text("[core]\n")
    outcome = editor_call({"command": "view", "path": path}, str(tree))
    error = outcome.payload["error"]
    assert not outcome.ok and error["kind"] == "unsafe_path"
    assert f"inside {'a' if cause == '.git' else 'patchtx'}" in error["message"]
    assert cause in error["hint"] and "'..'" not in error["hint"] and "'..'" not in outcome.text


def test_view_never_shows_the_per_user_state_and_does_show_protected_files(
        tree: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`protected` guards writes, not reads (docs/guarantees.md, section 13): a protected file is
    shown, and refused to an edit. patchtx's per-user state folder (the secret), should the
    workspace hold it, is never shown: refused as ``unsafe_path`` under its name or a link's, and
    left out of listings."""
    (tree / ".patchtx.toml").write_text('protected = ["pkg/**"]\n')
    host = {"protected": ("notes.txt",)}
    for path, line in (("notes.txt", "     2\ttwo"), ("pkg/util.py", "     1\tVALUE = 1"),
                       (".patchtx.toml", '     1\tprotected = ["pkg/**"]')):
        shown = editor_call({"command": "view", "path": path}, str(tree), host=host)
        assert shown.ok and line in shown.text, shown.text
        edit = editor_call({"command": "insert", "path": path, "insert_line": 0, "insert_text": "x"},
                           str(tree), host=host)
        assert not edit.ok and edit.payload["error"]["kind"] == "policy_violation", edit.text

    state = tree / "home" / "state" / "patchtx"
    state.mkdir(parents=True)
    (state / "secret").write_text("a secret that is text\n")
    (tree / "home" / "notes.md").write_text("kept\n")
    (tree / "pkg" / "alias").symlink_to(state)
    monkeypatch.setenv("PATCHTX_STATE_HOME", str(state))
    before = snapshot(tree)
    for path in ("home/state/patchtx/secret", "home/state/patchtx", "pkg/alias/secret",
                 str(state / "secret")):
        refused = editor_call({"command": "view", "path": path}, str(tree))
        assert not refused.ok and refused.payload["error"]["kind"] == "unsafe_path", refused.text
        assert refused.text.startswith(f"Error [unsafe_path]: Refusing to show {path}: it is patchtx's "
                                       f"per-user state folder {state}")
        assert "secret that is text" not in refused.text
    listing = editor_call({"command": "view", "path": "."}, str(tree)).text
    assert "./home/notes.md" in listing and "./home/state/" in listing and "./pkg/util.py" in listing
    assert "patchtx" not in listing.replace("./home/state/\n", "") and "alias" not in listing
    assert snapshot(tree) == before


def test_tool_spec_prints_the_edit_tools(capsys: pytest.CaptureFixture[str]) -> None:
    assert tool_spec_main(["--tool", "edit_files", "--format", "chat-completions"]) == 0
    assert json.loads(capsys.readouterr().out) == edit_tool_spec("edit_files", "chat-completions")
    assert tool_spec_main(["--tool", "replace_in_file"]) == 0
    assert json.loads(capsys.readouterr().out)["name"] == "replace_in_file"
    with pytest.raises(SystemExit):
        tool_spec_main(["--tool", "edit_files", "--format", "lark"])


def test_the_hosts_patch_size_cap_counts_edits_and_editor_calls(tree: Path) -> None:
    host = {"max_patch_bytes": 200}
    big = "x" * 300
    for outcome in (editor_call({"command": "create", "path": "big.txt", "file_text": big}, str(tree), host=host),
                    edits_call([{"path": "big.txt", "old_string": "", "new_string": big}], str(tree), host=host),
                    replace_in_file_call("big.txt", f"------- SEARCH\n=======\n{big}\n+++++++ REPLACE\n",
                                         str(tree), host=host)):
        assert not outcome.ok and outcome.payload["error"]["kind"] == "policy_violation", outcome.text
    assert not (tree / "big.txt").exists()
    assert editor_call({"command": "create", "path": "small.txt", "file_text": "ok\n"}, str(tree), host=host).ok


def test_the_editor_tool_refuses_an_edit_that_breaks_the_syntax(tree: Path) -> None:
    """The agent surfaces' default: the syntax guard refuses; the library's editor does not."""
    from patchtx.agents.editor import TextEditor

    broken = {"command": "str_replace", "path": "app.py", "old_str": "print('hello')",
              "new_str": "print('hello'"}
    outcome = editor_call(broken, str(tree))
    assert not outcome.ok and outcome.payload["error"]["kind"] == "syntax_error", outcome.text
    assert (tree / "app.py").read_text() == "def main():\n    print('hello')\n"
    reply = TextEditor(tree).run("str_replace", "app.py", old_str="print('hello')", new_str="print('hello'")
    assert reply.result is not None and (tree / "app.py").read_text() == "def main():\n    print('hello'\n"


LONE = "\ud800"  # a lone surrogate: what a JSON string's "\ud800" decodes to


@pytest.mark.parametrize("call", [
    lambda root: run_edit_tool_call("edit_files", {"edits": [
        {"path": "notes.txt", "old_string": "two", "new_string": LONE}]}, root),
    lambda root: run_edit_tool_call("edit_files", {"edits": [
        {"path": "notes.txt", "old_string": "two", "new_string": "2"},
        {"path": f"n{LONE}.txt", "old_string": "", "new_string": "x"}]}, root),
    lambda root: editor_call({"command": "create", "path": "new.txt", "file_text": LONE}, root),
    lambda root: editor_call({"command": "insert", "path": "notes.txt", "insert_line": 1,
                              "insert_text": LONE}, root),
    lambda root: editor_call({"command": "str_replace", "path": "notes.txt", "old_str": "two",
                              "new_str": f"2{LONE}"}, root),
    lambda root: editor_call({"command": "view", "path": f"notes{LONE}.txt"}, root),
    lambda root: run_edit_tool_call("replace_in_file", {
        "path": "notes.txt", "diff": f"------- SEARCH\ntwo\n=======\n{LONE}\n+++++++ REPLACE\n"}, root),
    lambda root: run_tool_call({"patch": f"--- a/notes.txt\n+++ b/notes.txt\n@@ -2 +2 @@\n-two\n+{LONE}\n"}, root),
    lambda root: run_tool_call({"patch": f"notes.txt\n<<<<<<< SEARCH\ntwo\n=======\n{LONE}\n"
                                         ">>>>>>> REPLACE\n"}, root),
], ids=["edit_files", "edit_files-path", "create", "insert", "str_replace", "view", "replace_in_file",
        "unified", "blocks"])
def test_text_that_is_not_valid_unicode_is_refused_as_the_codex_parser_refuses_it(call, tree: Path) -> None:
    """A lone surrogate in any front door's arguments: the Codex parser's error kind and message,
    never internal_error, nothing written."""
    before = snapshot(tree)
    outcome = call(str(tree))
    assert not outcome.ok
    assert outcome.payload["error"]["kind"] == "parse_error", outcome.text
    assert "the patch is not valid Unicode text" in outcome.text
    assert "lone surrogate" in outcome.payload["error"]["hint"]
    assert snapshot(tree) == before


def test_the_library_refuses_text_that_is_not_valid_unicode(tree: Path) -> None:
    import patchtx
    from patchtx.errors import ParseError

    for attempt in (lambda: patchtx.apply_edits([{"path": "notes.txt", "old_string": "two",
                                                  "new_string": LONE}], tree, durable=False),
                    lambda: patchtx.apply_patch(f"notes.txt\n<<<<<<< SEARCH\ntwo\n=======\n{LONE}\n"
                                                ">>>>>>> REPLACE\n", tree, durable=False),
                    lambda: patchtx.apply_patch(f"--- a/notes.txt\n+++ b/notes.txt\n@@ -2 +2 @@\n"
                                                f"-two\n+{LONE}\n", tree, durable=False)):
        with pytest.raises(ParseError, match="not valid Unicode text"):
            attempt()
    assert (tree / "notes.txt").read_text() == "one\ntwo\nthree\n"
