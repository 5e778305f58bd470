"""ACP payloads for patchtx edits, each validated by the ACP Python SDK's own pydantic models.

A payload is accepted only if it survives ``model_validate`` followed by ``model_dump`` unchanged:
the SDK's models silently turn invalid enum values into None and drop invalid list items, so a
bare ``model_validate`` would pass payloads a client would not read as sent.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from acp.helpers import start_tool_call, tool_diff_content, update_tool_call
from acp.schema import (
    AllowedOutcome,
    DeniedOutcome,
    RequestPermissionRequest,
    RequestPermissionResponse,
    SessionNotification,
    ToolCallLocation,
    ToolCallProgress,
    ToolCallStart,
)
from pydantic import BaseModel

import patchtx
from patchtx.agents import acp as acp_payloads
from patchtx.errors import ApprovalError, ContextNotFoundError, PatchtxError
from patchtx.plan.approval import ApprovalPolicy, Decision, Verdict, enforce
from patchtx.render import error_json

SESSION = "sess_1"
CALL = "call_1"


def validated(model: type[BaseModel], payload: dict[str, Any]) -> Any:
    """Parse ``payload`` with an ACP model and require that it reads back exactly as sent."""
    parsed = model.model_validate(payload)
    assert parsed.model_dump(mode="json", by_alias=True, exclude_unset=True) == payload
    return parsed


def envelope(body: str) -> str:
    return f"*** Begin Patch\n{body}\n*** End Patch\n"


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    (root / "src").mkdir(parents=True)
    (root / "src/app.py").write_text("import os\n\nx = 1\ny = 2\n")
    (root / "old.txt").write_text("bye\n")
    (root / "name.txt").write_text("same\n")
    return root


MIXED = envelope(
    "*** Add File: docs/new.md\n+# New\n+text\n"
    "*** Update File: src/app.py\n@@\n x = 1\n-y = 2\n+y = 3\n"
    "*** Delete File: old.txt\n"
    "*** Update File: name.txt\n*** Move to: renamed.txt\n-same\n+changed"
)


def test_tool_call_reports_every_file_with_absolute_paths_and_whole_texts(workspace: Path) -> None:
    plan = patchtx.plan_patch(MIXED, workspace)
    update = acp_payloads.tool_call(CALL, plan, raw_input={"input": MIXED})
    start = validated(ToolCallStart, update)
    root = os.path.realpath(workspace)

    assert (start.session_update, start.kind, start.status) == ("tool_call", "edit", "pending")
    assert start.raw_input == {"input": MIXED}
    diffs = {item["path"]: item for item in update["content"]}
    assert diffs == {
        f"{root}/docs/new.md": {"type": "diff", "path": f"{root}/docs/new.md", "oldText": None,
                                "newText": "# New\ntext\n"},
        f"{root}/src/app.py": {"type": "diff", "path": f"{root}/src/app.py",
                               "oldText": "import os\n\nx = 1\ny = 2\n", "newText": "import os\n\nx = 1\ny = 3\n"},
        f"{root}/old.txt": {"type": "diff", "path": f"{root}/old.txt", "oldText": "bye\n", "newText": ""},
        f"{root}/renamed.txt": {"type": "diff", "path": f"{root}/renamed.txt", "oldText": "same\n",
                                "newText": "changed\n",
                                "_meta": {"patchtx": {"movedFrom": f"{root}/name.txt"}}},
    }
    locations = {item["path"]: item.get("line") for item in update["locations"]}
    # 0-based rows of the first changed line; a deleted file has no line to follow.
    assert locations == {f"{root}/docs/new.md": 0, f"{root}/src/app.py": 3, f"{root}/old.txt": None,
                         f"{root}/renamed.txt": 0}
    assert all(os.path.isabs(item["path"]) for item in update["content"] + update["locations"])
    assert start.title == "Edit docs/new.md, old.txt, name.txt -> renamed.txt and 1 more"


def test_payload_matches_what_the_sdk_helpers_build(workspace: Path) -> None:
    plan = patchtx.plan_patch(envelope("*** Update File: src/app.py\n-x = 1\n+x = 10"), workspace)
    ours = acp_payloads.tool_call(CALL, plan)
    path = os.path.join(os.path.realpath(workspace), "src", "app.py")
    theirs = start_tool_call(
        CALL, "Edit src/app.py", kind="edit", status="pending",
        content=[tool_diff_content(path, "import os\n\nx = 10\ny = 2\n", "import os\n\nx = 1\ny = 2\n")],
        locations=[ToolCallLocation(path=path, line=2)],
    )
    assert ours == theirs.model_dump(mode="json", by_alias=True, exclude_none=True)


def test_session_update_notification_wraps_each_update(workspace: Path) -> None:
    plan = patchtx.plan_patch(MIXED, workspace)
    for update in (acp_payloads.tool_call(CALL, plan),
                   acp_payloads.tool_call_update(CALL, status="in_progress")):
        notification = validated(SessionNotification, acp_payloads.session_update(SESSION, update))
        assert notification.session_id == SESSION
        assert notification.update.tool_call_id == CALL


def test_in_progress_update_carries_only_the_status() -> None:
    update = acp_payloads.tool_call_update(CALL, status="in_progress")
    assert update == {"sessionUpdate": "tool_call_update", "toolCallId": CALL, "status": "in_progress"}
    validated(ToolCallProgress, update)


def test_completed_update_after_commit(workspace: Path) -> None:
    plan = patchtx.plan_patch(MIXED, workspace, intent="rename and tidy")
    result = patchtx.apply_plan(plan, durable=False)
    update = acp_payloads.completed_update(CALL, result)
    progress = validated(ToolCallProgress, update)

    assert progress.status == "completed"
    assert len(progress.content) == 4 and {c.type for c in progress.content} == {"diff"}
    output = update["rawOutput"]
    assert output["ok"] is True and output["summary"] == "A 1, M 1, D 1, R 1"
    assert output["transaction"] == result.transaction_id and output["intent"] == "rename and tidy"
    assert {f["path"]: f["status"] for f in output["files"]} == {
        "docs/new.md": "added", "src/app.py": "modified", "old.txt": "deleted", "renamed.txt": "moved"}
    assert (workspace / "renamed.txt").read_text() == "changed\n"


def test_failed_update_reports_the_error_and_replaces_the_diffs(workspace: Path) -> None:
    bad = envelope("*** Update File: src/app.py\n-x = 100\n+x = 2")
    with pytest.raises(ContextNotFoundError) as caught:
        patchtx.plan_patch(bad, workspace)
    start = acp_payloads.tool_call(CALL, None, status="failed", raw_input={"input": bad})
    assert validated(ToolCallStart, start).title == "Apply patch"

    update = acp_payloads.failed_update(CALL, caught.value)
    progress = validated(ToolCallProgress, update)
    assert progress.status == "failed"
    [text] = progress.content
    assert text.type == "content" and text.content.text == caught.value.message
    assert "Nothing was changed." in text.content.text
    assert update["rawOutput"] == error_json(caught.value)
    assert update["rawOutput"]["ok"] is False and update["rawOutput"]["error"] == caught.value.to_json()
    assert update["rawOutput"]["error"]["kind"] == "context_not_found"


def test_permission_request_when_the_hook_asks(workspace: Path) -> None:
    plan = patchtx.plan_patch(envelope("*** Delete File: old.txt"), workspace)
    params = acp_payloads.approval_request(SESSION, CALL, plan, ApprovalPolicy(), raw_input={"input": "..."})
    assert params is not None
    request = validated(RequestPermissionRequest, params)

    assert [(o.option_id, o.kind) for o in request.options] == [("allow_once", "allow_once"),
                                                               ("reject_once", "reject_once")]
    call = request.tool_call
    assert (call.tool_call_id, call.kind, call.status) == (CALL, "edit", "pending")
    assert call.title == "Edit old.txt (needs approval: it deletes files)"
    [diff] = call.content
    assert (diff.old_text, diff.new_text) == ("bye\n", "")
    assert params["_meta"] == {"patchtx": {"reason": "it deletes files"}}


def test_approval_request_is_none_on_approve_and_raises_on_reject(workspace: Path) -> None:
    plan = patchtx.plan_patch(envelope("*** Update File: src/app.py\n-x = 1\n+x = 2"), workspace)
    assert acp_payloads.approval_request(SESSION, CALL, plan, ApprovalPolicy()) is None
    with pytest.raises(ApprovalError, match="patch rejected: src/app.py matches the forbidden pattern 'src/"):
        acp_payloads.approval_request(SESSION, CALL, plan, ApprovalPolicy(reject_paths=("src/",)))


def response(outcome: BaseModel) -> dict[str, Any]:
    return RequestPermissionResponse(outcome=outcome).model_dump(mode="json", by_alias=True, exclude_none=True)


def test_permission_granted_reads_the_sdk_responses() -> None:
    assert acp_payloads.permission_granted(response(AllowedOutcome(outcome="selected", option_id="allow_once")))
    assert not acp_payloads.permission_granted(
        response(AllowedOutcome(outcome="selected", option_id="reject_once")))
    assert not acp_payloads.permission_granted(response(DeniedOutcome(outcome="cancelled")))
    assert not acp_payloads.permission_granted({})


@pytest.mark.parametrize(("choice", "written"), [("allow_once", True), ("reject_once", False)])
def test_permission_asker_drives_enforce(workspace: Path, choice: str, written: bool) -> None:
    sent: list[dict[str, Any]] = []

    def request_permission(params: dict[str, Any]) -> dict[str, Any]:
        validated(RequestPermissionRequest, params)
        sent.append(params)
        return response(AllowedOutcome(outcome="selected", option_id=choice))

    plan = patchtx.plan_patch(envelope("*** Delete File: old.txt"), workspace)
    ask = acp_payloads.permission_asker(SESSION, CALL, request_permission)
    if written:
        assert enforce(plan, ApprovalPolicy(), ask).decision is Decision.ASK
        patchtx.apply_plan(plan, durable=False)
    else:
        with pytest.raises(ApprovalError, match="rejected by user"):
            enforce(plan, ApprovalPolicy(), ask)
    assert len(sent) == 1 and sent[0]["toolCall"]["toolCallId"] == CALL
    assert (workspace / "old.txt").exists() is not written


def test_approving_hook_sends_no_permission_request(workspace: Path) -> None:
    def never(params: dict[str, Any]) -> dict[str, Any]:
        raise AssertionError("no request expected")

    plan = patchtx.plan_patch(envelope("*** Delete File: old.txt"), workspace)
    approve_all = lambda plan: Verdict(Decision.APPROVE)  # noqa: E731
    assert enforce(plan, approve_all, acp_payloads.permission_asker(SESSION, CALL, never)).decision is Decision.APPROVE


def test_binary_file_gets_a_location_but_no_text_diff(workspace: Path) -> None:
    (workspace / "blob.bin").write_bytes(b"\xff\xfe\x00binary")
    plan = patchtx.plan_patch(envelope("*** Delete File: blob.bin\n*** Add File: a.txt\n+a"), workspace)
    update = acp_payloads.tool_call(CALL, plan)
    validated(ToolCallStart, update)
    root = os.path.realpath(workspace)
    assert [item["path"] for item in update["content"]] == [f"{root}/a.txt"]
    assert {item["path"] for item in update["locations"]} == {f"{root}/a.txt", f"{root}/blob.bin"}


@pytest.mark.parametrize(("old", "new", "row"), [
    ("a\nb\nc\n", "a\nB\nc\n", 1),       # changed middle line
    ("a\nb\n", "a\nb\nc\n", 2),          # appended line
    ("a\nb\nc\n", "a\nb\n", 1),          # removed last line: the new last line
    ("a\r\nb\r\n", "a\r\nB\r\n", 1),     # CRLF counts as one line ending
    ("a", "a\n", 0),                     # final newline added to row 0
    ("x\n", "", 0),                      # emptied
])
def test_first_changed_row(workspace: Path, old: str, new: str, row: int) -> None:
    (workspace / "f.txt").write_bytes(old.encode())
    with patchtx.Transaction(workspace, durable=False) as tx:
        tx.write_bytes("f.txt", new.encode())
        plan = tx.preview()
        tx.rollback()
    [location] = acp_payloads.edit_locations(plan)
    assert location["line"] == row
    validated(ToolCallProgress, acp_payloads.tool_call_update(CALL, plan=plan))


def test_update_without_plan_matches_the_sdk_helper() -> None:
    ours = acp_payloads.tool_call_update(CALL, status="completed", raw_output={"ok": True})
    theirs = update_tool_call(CALL, status="completed", raw_output={"ok": True})
    assert ours == theirs.model_dump(mode="json", by_alias=True, exclude_none=True)


def test_module_does_not_need_the_acp_sdk() -> None:
    code = ("import sys; sys.modules['acp'] = None\n"
            "import patchtx.agents.acp as m\n"
            "assert m.permission_granted({'outcome': {'outcome': 'selected', 'optionId': 'allow_once'}})\n")
    subprocess.run([sys.executable, "-c", code], check=True, timeout=60)


def test_errors_are_patchtx_errors() -> None:
    # failed_update accepts any PatchtxError, including ones raised before a plan exists.
    update = acp_payloads.failed_update(CALL, PatchtxError("boom"))
    assert validated(ToolCallProgress, update).status == "failed"
