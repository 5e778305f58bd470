"""The ``edit_file`` tool (issue 44) on every surface: the library (``patchtx.edit_file``), the tool
call executor (``run_edit_tool_call``, with Cursor's, Morph's and Relace's argument names) and
``patchtx mcp``; each call one transaction through the same plan, gate, syntax guard and undo
history as every edit, or a refusal that names the context to add, nothing written."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from tests.security.surfaces import mcp

import patchtx
from patchtx.agents.tool_call import run_edit_tool_call
from patchtx.errors import PatchtxError

CALC = ("import os\n\n\ndef total(items):\n    count = 0\n    for item in items:\n        count += item\n"
        "    return count\n\n\ndef mean(items):\n    return total(items) / len(items)\n")
SNIPPET = ("# ... existing code ...\ndef total(items):\n    count = 0\n    for item in items:\n"
           "        count += item * 2\n    return count\n# ... existing code ...\n")
DOUBLED = CALC.replace("count += item\n", "count += item * 2\n")
LAZY_END = "# ... existing code ...\ndef total(items):\n    count = 1\n# ... existing code ...\n"


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    (tmp_path / "calc.py").write_text(CALC)
    return tmp_path


def test_the_library_applies_a_snippet_as_one_transaction_in_the_history(tree: Path) -> None:
    result = patchtx.edit_file("calc.py", SNIPPET, tree, instructions="double each item", durable=False)
    assert (tree / "calc.py").read_text() == DOUBLED and result.transaction_id
    entry = patchtx.history.log(tree)[0]
    assert entry.intent == "double each item"
    patchtx.history.undo(tree, durable=False)
    assert (tree / "calc.py").read_text() == CALC


def test_the_library_refuses_saying_which_lines_to_add(tree: Path) -> None:
    with pytest.raises(PatchtxError) as info:
        patchtx.edit_file("calc.py", LAZY_END, tree, durable=False)
    assert info.value.kind == "context_not_found"
    assert "after line 4 `def total(items):` the file has line 5 `count = 0`" in info.value.message
    assert (tree / "calc.py").read_text() == CALC


def test_a_dry_run_writes_nothing(tree: Path) -> None:
    result = patchtx.edit_file("calc.py", SNIPPET, tree, dry_run=True, durable=False)
    assert result.plan.changes[0].after.decode() == DOUBLED and (tree / "calc.py").read_text() == CALC


@pytest.mark.parametrize("arguments", [
    {"target_file": "calc.py", "instructions": "double", "code_edit": SNIPPET},  # Cursor
    {"path": "calc.py", "code_edit": SNIPPET, "instruction": "double"},  # Morph's MCP tool
    {"target_file": "calc.py", "edit_snippet": SNIPPET, "initial_code": CALC},  # Relace
])
def test_each_hosts_argument_names(tree: Path, arguments: dict[str, Any]) -> None:
    outcome = run_edit_tool_call("edit_file", arguments, str(tree))
    assert outcome.ok, outcome.text
    assert (tree / "calc.py").read_text() == DOUBLED and outcome.payload["summary"] == "A 0, M 1, D 0, R 0"


@pytest.mark.parametrize("arguments, said", [
    ({"target_file": "calc.py"}, "`code_edit` is required"),
    ({"code_edit": SNIPPET}, "`target_file` is required"),
    ({"target_file": "calc.py", "path": "calc.py", "code_edit": SNIPPET}, "are the same argument"),
    ({"target_file": "calc.py", "code_edit": SNIPPET, "force": True}, "unknown argument(s): force"),
    ({"target_file": "calc.py", "code_edit": 5}, "`code_edit` must be a string"),
    ({"target_file": "calc.py", "code_edit": SNIPPET, "initial_code": "other\n"}, "not the file's content"),
])
def test_arguments_that_do_not_fit_are_refused(tree: Path, arguments: dict[str, Any], said: str) -> None:
    outcome = run_edit_tool_call("edit_file", arguments, str(tree))
    assert not outcome.ok and outcome.payload["error"]["kind"] == "invalid_arguments" and said in outcome.text
    assert (tree / "calc.py").read_text() == CALC


def test_the_syntax_guard_and_the_host_policy_apply(tree: Path) -> None:
    broken = SNIPPET.replace("count += item * 2", "count += (item")
    outcome = run_edit_tool_call("edit_file", {"target_file": "calc.py", "code_edit": broken}, str(tree))
    assert outcome.payload["error"]["kind"] == "syntax_error", outcome.text
    hidden = run_edit_tool_call("edit_file", {"target_file": "calc.py", "code_edit": SNIPPET}, str(tree),
                                host={"hidden": ["calc.py"]})
    assert hidden.payload["error"]["kind"] == "hidden_path" and "count" not in hidden.text
    protected = run_edit_tool_call("edit_file", {"target_file": "calc.py", "code_edit": SNIPPET}, str(tree),
                                   host={"protected": ["*.py"]})
    assert protected.payload["error"]["kind"] == "policy_violation"
    assert (tree / "calc.py").read_text() == CALC


def test_a_new_file_is_created_and_a_placeholder_in_it_refused(tree: Path) -> None:
    outcome = run_edit_tool_call("edit_file", {"target_file": "new.py", "code_edit": "x = 1\n"}, str(tree))
    assert outcome.ok and (tree / "new.py").read_text() == "x = 1\n"
    lazy = run_edit_tool_call("edit_file", {"target_file": "other.py",
                                            "code_edit": "def f():\n    # ... existing code ...\n"}, str(tree))
    assert lazy.payload["error"]["kind"] == "placeholder" and not (tree / "other.py").exists()


def test_patchtx_mcp_serves_edit_file(tree: Path) -> None:
    outcomes = mcp(tree, [("edit_file", {"target_file": "calc.py", "instructions": "double",
                                         "code_edit": SNIPPET}),
                          ("edit_file", {"target_file": "calc.py", "code_edit": LAZY_END})])
    (applied, content), (refused, error) = outcomes
    assert applied == "applied" and content["intent"] == "double" and content["transaction"]
    assert refused == "context_not_found" and "Nothing was changed." in error["error"]["message"]
    assert (tree / "calc.py").read_text() == DOUBLED
