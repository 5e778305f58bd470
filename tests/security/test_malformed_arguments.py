"""Every malformed argument a clean error, on every entry point (issue 38): an argument of the wrong
type (a number for the edit list, a list for a path, bytes for a patch) is refused as
``invalid_arguments`` and nothing is written. A tool call (what a model sends) answers with that
error as its outcome; the library raises it, as ``ArgumentTypeError``, which is a ``TypeError``
too (docs/api.md: a Python caller's wrong type stays a TypeError). Never another exception, never
an ``internal_error``: they said "patchtx failed unexpectedly" to a model that sent a number.

A generated hunt draws wrong values (JSON's, and Python's bytes, paths and objects) into each
argument of each entry point: the library, ``Transaction``, edit lists, the text editor, the tool
calls of every edit protocol, the OpenAI Agents SDK's editor and ACP; the MCP server's tools get a
sample through the official client."""

from __future__ import annotations

import os
from collections.abc import Callable
from functools import partial
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import patchtx
from patchtx import history
from patchtx.agents import acp
from patchtx.agents.editor import run_editor
from patchtx.agents.tool_call import (
    ToolOutcome,
    apply_patch_call,
    editor_call,
    edits_call,
    log_call,
    replace_in_file_call,
    run_edit_tool_call,
    run_tool_call,
    undo_call,
)
from patchtx.errors import ArgumentTypeError, PatchtxError

from ..examples import examples

PATCH = "*** Begin Patch\n*** Update File: a.txt\n@@\n-one\n+two\n*** End Patch\n"
BLOCKS = "<<<<<<< SEARCH\none\n=======\ntwo\n>>>>>>> REPLACE\n"
EDIT = {"path": "a.txt", "old_string": "one", "new_string": "two"}
VIEW = {"command": "view", "path": "a.txt"}
TOOL_OPTIONS = ("dry_run", "allow_delete", "allow_move", "workspace_root", "intent", "extract",
                "skip_applied", "strip", "reverse")
CALL_KEYWORDS = ("intent", "extract", "strip", "reverse", "unidiff_zero", "progress", "cancel")

_json = st.recursive(
    st.none() | st.booleans() | st.integers(-3, 3) | st.floats(allow_nan=False, width=16) | st.text("ab./", max_size=4),
    lambda inner: st.lists(inner, max_size=2) | st.dictionaries(st.text("ab", max_size=2), inner, max_size=2),
    max_leaves=4)
WRONG = _json | st.binary(max_size=3) | st.just(Path("a.txt")) | st.builds(object) | st.just([EDIT]) | st.just({})


def tree(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*"))
            if p.is_file() and ".patchtx" not in p.parts}


def _transaction(root: Path, stage: Callable[[patchtx.Transaction], Any]) -> None:
    with patchtx.Transaction(root) as tx:
        try:
            stage(tx)
            tx.preview()
        finally:
            tx.rollback()  # (never committed: a drawn value that is valid stages a real change)


def _operation(field: str, value: Any) -> SimpleNamespace:
    operation = SimpleNamespace(type="update_file", path="a.txt", diff="@@\n-one\n+two\n", move_to=None)
    setattr(operation, field, value)
    return operation


OPERATION_FIELDS = ("type", "path", "diff", "move_to")


def _plan_with(name: str, root: Path, value: Any) -> Any:
    return patchtx.plan_patch(PATCH, root, **{name: value})


def _edit_with(key: str, root: Path, value: Any) -> Any:
    return patchtx.apply_edits([{**EDIT, key: value}], root, dry_run=True)


def _view_with(key: str, root: Path, value: Any) -> Any:
    return run_editor({**VIEW, key: value}, root)


def _sdk_update(field: str, root: Path, value: Any) -> Any:
    return _sdk_editor(root).update_file(_operation(field, value))


def _sdk_approval(field: str, root: Path, value: Any) -> Any:
    return _sdk_editor(root).needs_approval(None, _operation(field, value), "call")


def _function_call_with(name: str, root: Path, value: Any) -> ToolOutcome:
    return run_tool_call({"patch": PATCH, name: value}, str(root))


def _patch_call_with(name: str, root: Path, value: Any) -> ToolOutcome:
    return apply_patch_call(PATCH, str(root), **{name: value})


def _edit_files_with(key: str, root: Path, value: Any) -> ToolOutcome:
    return run_edit_tool_call("edit_files", {"edits": [EDIT], "dry_run": True, key: value}, str(root))


def _editor_with(key: str, root: Path, value: Any) -> ToolOutcome:
    arguments = {"command": "str_replace", "path": "a.txt", "old_str": "zzz", "new_str": "two", key: value}
    return run_edit_tool_call("str_replace_based_edit_tool", arguments, str(root))




LIBRARY: dict[str, Callable[[Path, Any], Any]] = {
    "apply_patch(patches)": lambda root, v: patchtx.apply_patch(v, root, dry_run=True),
    "apply_patch(root)": lambda root, v: patchtx.apply_patch(PATCH, v, dry_run=True),
    **{f"plan_patch({name}=)": partial(_plan_with, name) for name in CALL_KEYWORDS},
    "apply_plan(plan)": lambda root, v: patchtx.apply_plan(v),
    "apply_edits(edits)": lambda root, v: patchtx.apply_edits(v, root, dry_run=True),
    "apply_edits(file_path=)": lambda root, v: patchtx.apply_edits(
        [{"old_string": "one", "new_string": "two"}], root, file_path=v, dry_run=True),
    **{f"apply_edits([{{{key}}}])": partial(_edit_with, key)
       for key in ("path", "old_string", "new_string", "replace_all")},
    "Transaction(root)": lambda root, v: patchtx.Transaction(v).rollback(),
    "Transaction.apply_patch": lambda root, v: _transaction(root, lambda tx: tx.apply_patch(v)),
    "Transaction.apply_patch(strip=)": lambda root, v: _transaction(root, lambda tx: tx.apply_patch(PATCH, strip=v)),
    "Transaction.apply_edits": lambda root, v: _transaction(root, lambda tx: tx.apply_edits(v)),
    "Transaction.write_bytes(path)": lambda root, v: _transaction(root, lambda tx: tx.write_bytes(v, b"x")),
    "Transaction.write_bytes(data)": lambda root, v: _transaction(root, lambda tx: tx.write_bytes("b.txt", v)),
    "Transaction.write_bytes(mode=)": lambda root, v: _transaction(
        root, lambda tx: tx.write_bytes("b.txt", b"x", mode=v)),
    "Transaction.write_text(text)": lambda root, v: _transaction(root, lambda tx: tx.write_text("b.txt", v)),
    "Transaction.write_text(encoding=)": lambda root, v: _transaction(
        root, lambda tx: tx.write_text("b.txt", "x", encoding=v)),
    "Transaction.delete": lambda root, v: _transaction(root, lambda tx: tx.delete(v)),
    "Transaction.move": lambda root, v: _transaction(root, lambda tx: tx.move("a.txt", v)),
    "Transaction.read_bytes": lambda root, v: _transaction(root, lambda tx: tx.read_bytes(v)),
    "Transaction.exists": lambda root, v: _transaction(root, lambda tx: tx.exists(v)),
    "run_editor(arguments)": lambda root, v: run_editor(v, root),
    **{f"run_editor({{{key}}})": partial(_view_with, key)
       for key in ("command", "path", "view_range", "max_characters")},
    "history.show(id)": lambda root, v: history.show(root, v),
    "history.undo(id)": lambda root, v: history.undo(root, v, dry_run=True),
    "history.log(root)": lambda root, v: history.log(v),
    **{f"PatchtxEditor.update_file({field})": partial(_sdk_update, field) for field in OPERATION_FIELDS},
    **{f"PatchtxEditor.needs_approval({field})": partial(_sdk_approval, field) for field in OPERATION_FIELDS},
    "acp.permission_granted": lambda root, v: acp.permission_granted(v),
}

TOOL_CALLS: dict[str, Callable[[Path, Any], ToolOutcome]] = {
    "run_tool_call(arguments)": lambda root, v: run_tool_call(v, str(root)),
    "run_tool_call({patch})": lambda root, v: run_tool_call({"patch": v}, str(root)),
    **{f"run_tool_call({{{name}}})": partial(_function_call_with, name) for name in TOOL_OPTIONS},
    "apply_patch_call(patch)": lambda root, v: apply_patch_call(v, str(root), dry_run=True),
    "apply_patch_call(root)": lambda root, v: apply_patch_call(PATCH, v, dry_run=True),
    **{f"apply_patch_call({name}=)": partial(_patch_call_with, name) for name in TOOL_OPTIONS},
    "edit_files(arguments)": lambda root, v: run_edit_tool_call("edit_files", v, str(root)),
    **{f"edit_files({{{key}}})": partial(_edit_files_with, key) for key in ("edits", "file_path", "intent")},
    "edit_files({edits: [{old_string}]})": lambda root, v: run_edit_tool_call(
        "edit_files", {"edits": [{**EDIT, "old_string": v}]}, str(root)),
    "replace_in_file(arguments)": lambda root, v: run_edit_tool_call("replace_in_file", v, str(root)),
    "replace_in_file({path})": lambda root, v: run_edit_tool_call(
        "replace_in_file", {"path": v, "diff": BLOCKS.replace("two", "one")}, str(root)),
    "replace_in_file({diff})": lambda root, v: run_edit_tool_call(
        "replace_in_file", {"path": "a.txt", "diff": v}, str(root)),
    "str_replace_based_edit_tool(arguments)": lambda root, v: run_edit_tool_call(
        "str_replace_based_edit_tool", v, str(root)),
    **{f"str_replace_based_edit_tool({{{key}}})": partial(_editor_with, key)
       for key in ("command", "path", "old_str", "new_str", "insert_line", "view_range", "file_text")},
    "run_edit_tool_call(tool)": lambda root, v: run_edit_tool_call(v, {"edits": [EDIT]}, str(root)),
    "editor_call(arguments)": lambda root, v: editor_call(v, str(root)),
    "edits_call(edits)": lambda root, v: edits_call(v, str(root), dry_run=True),
    "edits_call(file_path=)": lambda root, v: edits_call([{"old_string": "one", "new_string": "two"}], str(root),
                                                          file_path=v, dry_run=True),
    "replace_in_file_call(path)": lambda root, v: replace_in_file_call(v, BLOCKS, str(root), dry_run=True),
    "replace_in_file_call(diff)": lambda root, v: replace_in_file_call("a.txt", v, str(root), dry_run=True),
    "undo_call(transaction)": lambda root, v: undo_call(str(root), v, dry_run=True),
    "undo_call(root)": lambda root, v: undo_call(v, "x", dry_run=True),
    "log_call(root)": lambda root, v: log_call(v),
}


def _sdk_editor(root: Path) -> Any:
    """The SDK's editor, whose approval hook rejects every plan: its operations are planned and
    checked all the way to the commit, never written."""
    from patchtx.agents.openai_agents import PatchtxEditor
    from patchtx.plan.approval import Decision, Verdict

    return PatchtxEditor(root, approval=lambda plan: Verdict(Decision.REJECT, "a test"))


@pytest.fixture(scope="module")
def workspace(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("ws")
    (root / "a.txt").write_text("one\n")
    return root


def _refused_cleanly(error: PatchtxError) -> None:
    assert error.kind != "internal_error", error.message
    if error.kind == "invalid_arguments" and isinstance(error, ArgumentTypeError):
        assert isinstance(error, TypeError) and error.message.startswith("Invalid arguments: ")


@settings(max_examples=examples(3000), suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.sampled_from(sorted(LIBRARY)), WRONG)
def test_the_library_raises_only_its_own_errors(workspace: Path, entry: str, value: Any) -> None:
    before = tree(workspace)
    try:
        LIBRARY[entry](workspace, value)
    except PatchtxError as error:
        _refused_cleanly(error)
    assert tree(workspace) == before  # (every entry is a dry run, a preview or a read)


@settings(max_examples=examples(3000), suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.sampled_from(sorted(TOOL_CALLS)), WRONG)
def test_a_tool_call_answers_every_argument_with_an_outcome(workspace: Path, entry: str, value: Any) -> None:
    before = tree(workspace)
    outcome = TOOL_CALLS[entry](workspace, value)  # never raises
    assert isinstance(outcome, ToolOutcome)
    if not outcome.ok:
        assert outcome.payload["error"]["kind"] != "internal_error", outcome.text
        assert tree(workspace) == before
    elif tree(workspace) != before:  # a drawn value that is valid: a real edit; put the file back
        (workspace / "a.txt").write_text("one\n")
        for path in set(tree(workspace)) - set(before):
            os.unlink(workspace / path)


def test_the_issues_two_calls(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("one\n")
    outcome = run_edit_tool_call("edit_files", {"edits": 5}, str(tmp_path))
    assert outcome.payload["error"]["kind"] == "invalid_arguments"
    assert outcome.text == ("Error [invalid_arguments]: Invalid arguments: `edits` must be a list of edits, not a"
                            " number (5). Nothing was changed. Each edit is {path, old_string, new_string,"
                            " replace_all}.")
    with pytest.raises(ArgumentTypeError) as raised:
        patchtx.apply_edits(True, tmp_path)  # type: ignore[arg-type]
    assert raised.value.kind == "invalid_arguments" and isinstance(raised.value, TypeError)
    assert "`edits` must be a list of edits, not a boolean (True)" in raised.value.message
    with pytest.raises(TypeError):  # what docs/api.md promises a Python caller
        patchtx.apply_patch(5, tmp_path)  # type: ignore[arg-type]
    assert (tmp_path / "a.txt").read_text() == "one\n"


def test_a_wrong_type_names_the_argument_and_what_it_must_be(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("one\n")
    cases: list[tuple[Callable[[], Any], str]] = [
        (lambda: patchtx.apply_patch(Path("fix.patch"), tmp_path),
         "the patch must be a patch text (str or UTF-8 bytes), a parsed Patch or a list of them, not a"
         " PosixPath. Nothing was changed. Pass the patch's text: read the file first (path.read_text())."),
        (lambda: patchtx.apply_patch(PATCH, 5), "the workspace root must be a path (str or os.PathLike), not a"
                                                " number (5)."),
        (lambda: patchtx.apply_plan("plan"), "the plan must be a Plan (made by plan_patch or"
                                             " Transaction.preview), not a string."),
        (lambda: patchtx.plan_patch(PATCH, tmp_path, strip=True), "`strip` must be a non-negative integer, not a"
                                                                  " boolean (True)."),
        (lambda: history.undo(tmp_path, 5), "the transaction id must be a string"),
        (lambda: _transaction(tmp_path, lambda tx: tx.write_bytes(["a"], b"x")), "a path must be a string, not an"
                                                                                 " array (a list)."),
    ]
    for call, message in cases:
        with pytest.raises(ArgumentTypeError) as raised:
            call()
        assert message in raised.value.message
    assert tree(tmp_path) == {"a.txt": b"one\n"}
