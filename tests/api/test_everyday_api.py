"""The Python surface (issue 18): failures are PatchtxError, public names are visible, the tool
declarations exist for Chat Completions and Anthropic hosts."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import jsonschema
import pytest
from pydantic import TypeAdapter

import patchtx
from patchtx.agents.tool_call import run_tool_call
from patchtx.agents.toolspec import function_tool, tool_spec

EDIT = "*** Begin Patch\n*** Update File: a.txt\n@@\n-one\n+ONE\n*** End Patch\n"


def test_transaction_text_failures_are_patchtx_errors(tmp_path: Path) -> None:
    (tmp_path / "latin1.txt").write_bytes("caf\u00e9\n".encode("latin-1"))
    with patchtx.Transaction(tmp_path) as tx:
        with pytest.raises(patchtx.PatchtxError) as not_utf8:
            tx.read_text("latin1.txt")
        assert not_utf8.value.kind == "not_utf8" and not_utf8.value.path == "latin1.txt"
        assert "Nothing was changed." in not_utf8.value.message
        assert tx.read_text("latin1.txt", encoding="latin-1") == "caf\u00e9\n"
        with pytest.raises(patchtx.PatchtxError) as unknown:
            tx.read_text("latin1.txt", encoding="no-such-codec")
        assert unknown.value.kind == "not_utf8"
        with pytest.raises(patchtx.PatchtxError) as unencodable:
            tx.write_text("s.txt", "\udcff")
        assert unencodable.value.kind == "not_utf8"
        tx.rollback()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["latin1.txt"]


def test_public_names_are_visible_to_dir_and_all_resolve() -> None:
    names = dir(patchtx)
    for name in patchtx.__all__:
        assert name in names
        assert getattr(patchtx, name) is not None
    assert {"apply_patch", "plan_patch", "Transaction", "PatchtxError", "history", "extract_patch",
            "__version__"} <= set(names)
    assert "TYPE_CHECKING" not in names and "annotations" not in names
    # dir() lists them without importing them (the CLI's start-up stays lean).
    code = "import sys, patchtx; dir(patchtx); print('patchtx.api' in sys.modules)"
    assert subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=60).stdout == "False\n"


def test_the_chat_completions_tool_is_what_the_openai_sdk_types_describe() -> None:
    from openai.types.chat import ChatCompletionFunctionToolParam

    spec = tool_spec("chat-completions")
    assert isinstance(spec, dict)
    TypeAdapter(ChatCompletionFunctionToolParam).validate_python(spec)
    responses = function_tool()
    assert spec == {"type": "function", "function": {
        "name": "apply_patch", "description": responses["description"],
        "parameters": responses["parameters"], "strict": False}}


def test_the_anthropic_tool_is_a_tool_definition_whose_calls_run(tmp_path: Path) -> None:
    spec = tool_spec("anthropic")
    assert isinstance(spec, dict)
    assert set(spec) == {"name", "description", "input_schema"}
    assert re.fullmatch(r"[a-zA-Z0-9_-]{1,64}", spec["name"])
    schema = spec["input_schema"]
    assert schema["type"] == "object" and schema["required"] == ["input"]
    jsonschema.Draft202012Validator.check_schema(schema)
    call_input = {"input": EDIT, "intent": "shout"}  # a tool_use block's input
    jsonschema.validate(call_input, schema)
    (tmp_path / "a.txt").write_text("one\n")
    outcome = run_tool_call(call_input, str(tmp_path))
    assert outcome.ok and (tmp_path / "a.txt").read_text() == "ONE\n"


def test_tool_spec_prints_the_new_formats() -> None:
    patchtx_cli = str(Path(sys.executable).parent / "patchtx")
    for format in ("chat-completions", "anthropic"):
        done = subprocess.run([patchtx_cli, "tool-spec", "--format", format], capture_output=True,
                              text=True, timeout=60)
        assert done.returncode == 0 and json.loads(done.stdout) == tool_spec(format)
