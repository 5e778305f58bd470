"""``tool-spec --strict``: every JSON declaration in the providers' strict form, checked against the
providers' own SDK types (OpenAI's Responses and Chat Completions tool params, Anthropic's
ToolParam), left unchanged by the OpenAI Agents SDK's strict converter (it is already strict), and
a call that sends every argument, null for the optional ones, still runs."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from agents.strict_schema import ensure_strict_json_schema
from agents_support import snapshot
from anthropic.types import ToolParam
from openai.types.chat import ChatCompletionFunctionToolParam
from openai.types.responses import FunctionToolParam
from pydantic import TypeAdapter

from patchtx.agents.edit_toolspec import EDITOR, TOOLS, edit_tool_spec
from patchtx.agents.tool_call import run_edit_tool_call, run_tool_call
from patchtx.agents.toolspec import STRICT_FORMATS, tool_spec, tool_spec_main

JSON_FORMATS = ("function", "chat-completions", "anthropic")
SPECS: dict[str, Any] = {
    **{f"apply_patch {format}": tool_spec(format, strict=True) for format in STRICT_FORMATS},
    **{f"{tool} {format}": edit_tool_spec(tool, format, strict=True) for tool in TOOLS
       for format in (*JSON_FORMATS, "json-schema")},
}


def schema_of(spec: dict[str, Any]) -> dict[str, Any]:
    if "input_schema" in spec:
        return spec["input_schema"]
    if "function" in spec:
        return spec["function"]["parameters"]
    return spec.get("parameters", spec)


def objects(schema: dict[str, Any]) -> list[dict[str, Any]]:
    found = [schema] if "properties" in schema else []
    for value in schema.get("properties", {}).values():
        found += objects(value)
    if isinstance(schema.get("items"), dict):
        found += objects(schema["items"])
    return found


@pytest.mark.parametrize("name", sorted(SPECS))
def test_every_object_requires_every_property_and_allows_no_other(name: str) -> None:
    schema = schema_of(SPECS[name])
    assert objects(schema)
    for node in objects(schema):
        assert node["required"] == list(node["properties"]) and node["additionalProperties"] is False
    text = json.dumps(schema)
    assert '"default"' not in text
    assert ensure_strict_json_schema(json.loads(text)) == schema  # the Agents SDK finds nothing to change


@pytest.mark.parametrize("name", sorted(SPECS))
def test_the_providers_sdk_types_take_it(name: str) -> None:
    spec = SPECS[name]
    if name.endswith("json-schema"):
        return  # (a schema alone: the other formats carry it)
    if "input_schema" in spec:
        TypeAdapter(ToolParam).validate_python(spec)
        assert spec["strict"] is True
    elif "function" in spec:
        TypeAdapter(ChatCompletionFunctionToolParam).validate_python(spec)
        assert spec["function"]["strict"] is True
    else:
        TypeAdapter(FunctionToolParam).validate_python(spec)
        assert spec["strict"] is True


def test_optional_arguments_are_nullable_and_required_ones_are_not() -> None:
    properties = schema_of(tool_spec("function", strict=True))["properties"]  # type: ignore[arg-type]
    assert properties["input"]["type"] == "string"
    assert properties["allow_delete"]["type"] == ["boolean", "null"]
    assert properties["strip"]["type"] == ["integer", "null"] and properties["strip"]["minimum"] == 0
    editor = schema_of(edit_tool_spec(EDITOR, "function", strict=True))["properties"]
    assert editor["command"]["type"] == "string" and None not in editor["command"]["enum"]
    assert editor["view_range"]["type"] == ["array", "null"]
    # Not strict: optional arguments stay optional, with their defaults (what hosts send today).
    loose = schema_of(tool_spec("function"))  # type: ignore[arg-type]
    assert loose["required"] == ["input"] and loose["properties"]["allow_delete"]["default"] is False


def test_a_strict_call_with_nulls_for_the_optional_arguments_runs(tree: Path) -> None:
    def nulls(spec: dict[str, Any], given: dict[str, Any]) -> dict[str, Any]:
        return {name: given.get(name) for name in schema_of(spec)["properties"]}

    before = snapshot(tree)
    patch = "*** Begin Patch\n*** Update File: pkg/util.py\n-VALUE = 1\n+VALUE = 2\n*** End Patch\n"
    outcome = run_tool_call(nulls(tool_spec("function", strict=True), {"input": patch}), str(tree))  # type: ignore[arg-type]
    assert outcome.ok, outcome.text
    assert (tree / "pkg" / "util.py").read_text() == "VALUE = 2\n"
    edits = {"edits": [{"path": "notes.txt", "old_string": "two", "new_string": "2", "replace_all": None}]}
    outcome = run_edit_tool_call("edit_files", nulls(edit_tool_spec("edit_files", strict=True), edits), str(tree))
    assert outcome.ok, outcome.text
    editor = {"command": "str_replace", "path": "app.py", "old_str": "hello", "new_str": "bye"}
    outcome = run_edit_tool_call(EDITOR, nulls(edit_tool_spec(EDITOR, strict=True), editor), str(tree))
    assert outcome.ok, outcome.text
    assert snapshot(tree) != before and (tree / "notes.txt").read_text() == "one\n2\nthree\n"


def test_the_command_line_prints_the_strict_form(capsys: pytest.CaptureFixture[str]) -> None:
    assert tool_spec_main(["--strict"]) == 0
    assert json.loads(capsys.readouterr().out) == tool_spec("function", strict=True)
    assert tool_spec_main(["--tool", "edit_files", "--format", "anthropic", "--strict"]) == 0
    assert json.loads(capsys.readouterr().out) == edit_tool_spec("edit_files", "anthropic", strict=True)
    with pytest.raises(SystemExit):
        tool_spec_main(["--format", "lark", "--strict"])
    assert "--strict applies to the JSON formats" in capsys.readouterr().err
