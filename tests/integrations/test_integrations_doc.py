"""docs/integrations.md: every example in it is checked against the code it describes."""

from __future__ import annotations

import json
import sys
import tomllib
from pathlib import Path
from typing import Any

import pytest
from agents_support import REPO, fenced_blocks, server_environment
from mcp import Client, StdioServerParameters

from patchtx.agents.tool_call import apply_patch_call
from patchtx.agents.toolspec import tool_spec

DOC = (REPO / "docs" / "integrations.md").read_text(encoding="utf-8")
JSON_BLOCKS = [json.loads(block) for block in fenced_blocks(DOC, "json")]
EDIT = ("*** Begin Patch\n*** Update File: app.py\n@@ def main():\n-    print('hello')\n"
        "+    print('bye')\n*** Add File: pkg/new.py\n+NEW = True\n*** End Patch\n")


def blocks_with(key: str, value: object) -> list[dict[str, Any]]:
    return [block for block in JSON_BLOCKS if block.get(key) == value]


def assert_elided(shown: str, actual: str) -> None:
    """A value the page shortens to 'beginning ... (what follows)' must begin like the real one."""
    beginning = shown.partition("...")[0].rstrip()
    assert actual.startswith(beginning), (shown, actual[:80])


def test_every_json_block_parses() -> None:
    assert len(JSON_BLOCKS) == len(fenced_blocks(DOC, "json")) == 7


def test_the_result_shapes_shown_are_what_a_call_returns(tree: Path) -> None:
    [success] = blocks_with("ok", True)
    [failure] = blocks_with("ok", False)
    applied = apply_patch_call(EDIT, str(tree))
    assert isinstance(applied.payload["transaction"], str)
    assert applied.payload == {**success, "transaction": applied.payload["transaction"]}
    refused = apply_patch_call("*** Begin Patch\n*** Delete File: notes.txt\n*** End Patch\n", str(tree))
    assert refused.payload == failure


def test_the_custom_tool_shown_is_tool_spec_custom() -> None:
    [shown] = blocks_with("type", "custom")
    actual = tool_spec("custom")
    assert isinstance(actual, dict)
    assert_elided(shown["description"], actual["description"])
    assert_elided(shown["format"]["definition"], actual["format"]["definition"])
    shown["description"] = actual["description"]
    shown["format"]["definition"] = actual["format"]["definition"]
    assert shown == actual


def test_the_grammar_shown_is_the_definition() -> None:
    assert fenced_blocks(DOC, "lark") == [tool_spec("lark")]


def test_the_function_tool_shown_is_tool_spec_function_patch() -> None:
    [shown] = blocks_with("type", "function")
    actual = tool_spec("function-patch")
    assert isinstance(actual, dict)
    assert_elided(shown["description"], actual["description"])
    shown["description"] = actual["description"]
    assert shown == actual


def test_the_documented_tool_spec_formats_exist() -> None:
    [commands] = fenced_blocks(DOC, "bash")
    formats = [line.split("--format ")[1].split()[0] for line in commands.splitlines()]
    assert formats == ["custom", "function", "function-patchText", "function-patch", "chat-completions",
                       "anthropic", "instructions", "lark"]
    for format in formats:
        assert tool_spec(format)


def python_examples() -> dict[str, Any]:
    namespace: dict[str, Any] = {"run_in_shell": lambda argv, cwd: f"ran {argv[0]} in the shell"}
    for block in fenced_blocks(DOC, "python"):
        exec(compile(block, "docs/integrations.md", "exec"), namespace)
    return namespace


def test_the_call_handlers_shown_apply_patches(tree: Path) -> None:
    examples = python_examples()
    custom = examples["answer_custom_tool_call"]({"type": "custom_tool_call", "call_id": "c1",
                                                  "name": "apply_patch", "input": EDIT}, str(tree))
    assert custom["type"] == "custom_tool_call_output" and custom["call_id"] == "c1"
    assert custom["output"].startswith("Applied: A 1, M 1, D 0, R 0\n")
    arguments = json.dumps({"patch": "*** Begin Patch\n*** Delete File: notes.txt\n*** End Patch\n"})
    function = examples["answer_function_call"]({"type": "function_call", "call_id": "c2",
                                                 "name": "apply_patch", "arguments": arguments}, str(tree))
    assert function == {"type": "function_call_output", "call_id": "c2",
                        "output": function["output"]}
    assert function["output"].startswith("Error [policy_violation]: Refusing to delete notes.txt")
    assert (tree / "notes.txt").exists() and (tree / "pkg" / "new.py").exists()


def test_the_shell_interception_shown_routes_each_kind(tree: Path) -> None:
    run_command = python_examples()["run_command"]
    patch = "*** Begin Patch\n*** Update File: util.py\n-VALUE = 1\n+VALUE = 2\n*** End Patch"
    script = f"cd pkg && apply_patch <<'EOF'\n{patch}\nEOF\n"
    assert run_command(["bash", "-lc", script], str(tree), str(tree)).startswith("Applied: A 0, M 1")
    assert (tree / "pkg" / "util.py").read_text() == "VALUE = 2\n"
    assert run_command([patch], str(tree), str(tree)).startswith("patch detected without explicit call")
    assert run_command(["ls", "-l"], str(tree), str(tree)) == "ran ls in the shell"


def test_the_mcp_config_names_the_console_script_and_its_subcommand() -> None:
    configs = [block["mcpServers"]["patchtx"] for block in JSON_BLOCKS if "mcpServers" in block]
    assert configs[0] == {"command": "patchtx", "args": ["mcp", "--root", "."]}
    scripts = tomllib.loads((REPO / "pyproject.toml").read_text("utf-8"))["project"]["scripts"]
    assert scripts["patchtx"] == "patchtx.cli:script"
    assert (Path(sys.executable).parent / "patchtx").exists()


@pytest.mark.anyio
@pytest.mark.parametrize("anyio_backend", ["asyncio"])
async def test_the_python_module_config_starts_a_server(tree: Path, anyio_backend: str) -> None:
    configs = [block["mcpServers"]["patchtx"] for block in JSON_BLOCKS if "mcpServers" in block]
    config = configs[1]
    assert config["command"] == "python"
    params = StdioServerParameters(command=sys.executable, args=config["args"], cwd=str(tree),
                                   env=server_environment())
    async with Client(params) as client:
        names = sorted(tool.name for tool in (await client.list_tools()).tools)
        result = await client.call_tool("preview_patch", {"patch": EDIT})
    assert names == ["apply_patch", "edit_file", "edit_files", "log", "preview_patch", "replace_in_file",
                     "str_replace_based_edit_tool", "undo", "view"]
    assert result.structured_content is not None
    assert result.structured_content["summary"] == "A 1, M 1, D 0, R 0"


def test_the_acp_tool_call_shown_is_what_acp_builds(tree: Path) -> None:
    import os

    import patchtx
    from patchtx.agents import acp

    [shown] = [b for b in JSON_BLOCKS if b.get("update", {}).get("sessionUpdate") == "tool_call"]
    patch = shown["update"]["rawInput"]["input"]
    built = acp.session_update("sess_1", acp.tool_call("call_1", patchtx.plan_patch(patch, tree),
                                                       raw_input={"input": patch}))
    assert json.loads(json.dumps(built).replace(os.path.realpath(tree), "/repo")) == shown


def test_the_tool_use_handler_shown_answers_an_editor_call(tree: Path) -> None:
    answer = python_examples()["answer_tool_use"]
    block = {"type": "tool_use", "id": "tu_1", "name": "str_replace_based_edit_tool",
             "input": {"command": "str_replace", "path": "app.py", "old_str": "hello", "new_str": "bye"}}
    reply = answer(block, str(tree))
    assert reply["tool_use_id"] == "tu_1" and reply["is_error"] is False
    assert reply["content"].startswith("The file app.py has been edited.")
    assert (tree / "app.py").read_text() == "def main():\n    print('bye')\n"


def test_the_edit_tool_specs_shown_exist() -> None:
    from patchtx.agents.edit_toolspec import edit_tool_spec

    [commands] = fenced_blocks(DOC, "console")
    for line in commands.splitlines():
        words = line.split()
        assert edit_tool_spec(words[words.index("--tool") + 1], words[words.index("--format") + 1])
    assert edit_tool_spec("str_replace_based_edit_tool", "anthropic") == {
        "type": "text_editor_20250728", "name": "str_replace_based_edit_tool"}
