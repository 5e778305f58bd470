"""Agent Client Protocol (ACP) payloads for a patchtx edit: the ``tool_call`` an agent reports
before applying a Plan, the ``tool_call_update`` after it, and the ``session/request_permission``
request when an approval hook says *ask*.

Every function returns the JSON-ready wire dict (camelCase keys, absent fields left out), so this
module needs no ACP package; a host using the ACP Python SDK can turn any of them into its
models with ``acp.schema.ToolCallStart.model_validate(payload)`` and the like. The lifecycle of one
edit (``send`` sends a notification; ``request`` sends ``session/request_permission`` and returns
the client's result)::

    plan = patchtx.plan_patch(patch_text, root)
    send("session/update", session_update(sid, tool_call(call_id, plan, raw_input={"input": patch_text})))
    try:
        enforce(plan, ApprovalPolicy(), permission_asker(sid, call_id, request))  # ask -> request_permission
        send("session/update", session_update(sid, tool_call_update(call_id, status="in_progress")))
        result = patchtx.apply_plan(plan)
    except PatchtxError as error:  # rejected, or the commit failed: nothing written
        send("session/update", session_update(sid, failed_update(call_id, error)))
    else:
        send("session/update", session_update(sid, completed_update(call_id, result)))

Each file the Plan touches becomes one ``diff`` content item with its absolute path and its whole
text before (``oldText``, null for a new file) and after (``newText``, empty for a deleted file,
as codex-acp reports deletes); a move is reported at its destination with the source's text as
``oldText`` and ``_meta.patchtx.movedFrom`` naming the source. A file that is not UTF-8 text gets
a location but no diff (ACP diffs are text). ``locations`` give each file's absolute path and the
first changed line, 0-based (the row Zed's own agent reports and follows); a deleted file has no
line.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from typing import Any, Literal

from ..errors import PatchtxError
from ..model import ChangeKind, Plan
from ..plan.approval import ApprovalHook, Decision, rejection
from ..render import error_json
from ..result import Result, result_json

ToolCallStatus = Literal["pending", "in_progress", "completed", "failed"]
ALLOW_ONCE = "allow_once"
REJECT_ONCE = "reject_once"
PERMISSION_OPTIONS: tuple[dict[str, str], ...] = (
    {"optionId": ALLOW_ONCE, "name": "Allow", "kind": "allow_once"},
    {"optionId": REJECT_ONCE, "name": "Reject", "kind": "reject_once"},
)
META_KEY = "patchtx"
_TITLE_PATHS = 3


def _absolute(plan: Plan, rel: str) -> str:
    return os.path.join(plan.root, *rel.split("/"))


def _text(data: bytes | None) -> str | None:
    if data is None:
        return None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return None


def _lines(text: str) -> list[str]:
    """Lines with their endings, split on LF only (so CRLF counts once, as editors count rows)."""
    parts = text.split("\n")
    return [part + "\n" for part in parts[:-1]] + ([parts[-1]] if parts[-1] else [])


def _first_changed_row(old: str, new: str) -> int:
    """0-based row, in the new text, of the first line that differs; when one text is a prefix of
    the other, the first appended line or the new last line."""
    old_lines, new_lines = _lines(old), _lines(new)
    for row, (before, after) in enumerate(zip(old_lines, new_lines, strict=False)):
        if before != after:
            return row
    return max(0, min(len(old_lines), len(new_lines) - 1))


def _moves(plan: Plan) -> dict[str, str]:
    """Destination → source for moves whose net effect is one file renamed (the source gone, the
    destination new), which are reported as one diff at the destination."""
    by_path = {t.path: t for t in plan.targets}
    moves: dict[str, str] = {}
    for change in plan.changes:
        if change.kind is not ChangeKind.MOVE or change.source is None:
            continue
        source, destination = by_path.get(change.source), by_path.get(change.path)
        if source and destination and source.after is None and destination.before is None:
            moves[change.path] = change.source
    return moves


def _file_reports(plan: Plan) -> list[tuple[dict[str, Any] | None, dict[str, Any]]]:
    """(diff content item or None, location) for each path the Plan changes, in Plan order."""
    moves = _moves(plan)
    moved_sources = set(moves.values())
    by_path = {t.path: t for t in plan.targets}
    reports: list[tuple[dict[str, Any] | None, dict[str, Any]]] = []
    for target in plan.targets:
        if target.path in moved_sources:
            continue
        path = _absolute(plan, target.path)
        source = moves.get(target.path)
        before = by_path[source].before if source is not None else target.before
        old_text, new_text = _text(before), _text(target.after)
        location: dict[str, Any] = {"path": path}
        diff: dict[str, Any] | None = None
        readable = (before is None or old_text is not None) and (target.after is None or new_text is not None)
        if readable:
            diff = {"type": "diff", "path": path, "oldText": old_text, "newText": new_text or ""}
            if source is not None:
                diff["_meta"] = {META_KEY: {"movedFrom": _absolute(plan, source)}}
        if target.after is not None:
            location["line"] = _first_changed_row(old_text or "", new_text or "") if readable else 0
        reports.append((diff, location))
    return reports


def edit_locations(plan: Plan) -> list[dict[str, Any]]:
    """The ``locations`` of a Plan: absolute path and first changed row (0-based) per file."""
    return [location for _, location in _file_reports(plan)]


def edit_title(plan: Plan) -> str:
    """``Edit a.py, b.txt`` (workspace-relative, at most three names, then a count)."""
    moves = _moves(plan)
    names = [f"{moves[t.path]} -> {t.path}" if t.path in moves else t.path
             for t in plan.targets if t.path not in moves.values()]
    if not names:
        return "Edit (no changes)"
    shown = ", ".join(names[:_TITLE_PATHS])
    more = len(names) - _TITLE_PATHS
    return f"Edit {shown}" + (f" and {more} more" if more > 0 else "")


def _edit_fields(plan: Plan | None) -> dict[str, Any]:
    if plan is None:
        return {}
    reports = _file_reports(plan)
    return {
        "content": [diff for diff, _ in reports if diff is not None],
        "locations": [location for _, location in reports],
    }


def tool_call(tool_call_id: str, plan: Plan | None, *, status: ToolCallStatus = "pending",
              title: str | None = None, raw_input: Any = None) -> dict[str, Any]:
    """The ``session/update`` ``tool_call`` announcing an edit (``plan`` None: a patch that could
    not be planned, reported without content)."""
    update: dict[str, Any] = {
        "sessionUpdate": "tool_call",
        "toolCallId": tool_call_id,
        "title": title or (edit_title(plan) if plan is not None else "Apply patch"),
        "kind": "edit",
        "status": status,
        **_edit_fields(plan),
    }
    if raw_input is not None:
        update["rawInput"] = raw_input
    return update


def tool_call_update(tool_call_id: str, *, status: ToolCallStatus | None = None,
                     plan: Plan | None = None, content: list[dict[str, Any]] | None = None,
                     raw_output: Any = None) -> dict[str, Any]:
    """A ``tool_call_update``: only the fields given are sent (ACP keeps the others)."""
    update: dict[str, Any] = {"sessionUpdate": "tool_call_update", "toolCallId": tool_call_id}
    if status is not None:
        update["status"] = status
    update.update(_edit_fields(plan))
    if content is not None:
        update["content"] = [*update.get("content", []), *content]
    if raw_output is not None:
        update["rawOutput"] = raw_output
    return update


def result_output(result: Result) -> dict[str, Any]:
    """``rawOutput`` of a committed edit: summary, counts, files and the transaction id (the
    diffs travel as the payload's own diff content)."""
    return result_json(result, with_diff=False)


def completed_update(tool_call_id: str, result: Result) -> dict[str, Any]:
    """The final ``tool_call_update`` of an edit that was applied (status ``completed``)."""
    return tool_call_update(tool_call_id, status="completed", plan=result.plan,
                            raw_output=result_output(result))


def failed_update(tool_call_id: str, error: PatchtxError, root: str | None = None) -> dict[str, Any]:
    """The final ``tool_call_update`` of an edit that failed (status ``failed``): the error's
    message as text content, the one result shape as ``rawOutput`` (its path relative to the
    workspace ``root`` when given). Nothing was written unless ``error.changed`` says so."""
    message = {"type": "content", "content": {"type": "text", "text": error.message}}
    return tool_call_update(tool_call_id, status="failed", content=[message],
                            raw_output=error_json(error, root=root))


def session_update(session_id: str, update: Mapping[str, Any]) -> dict[str, Any]:
    """The params of a ``session/update`` notification carrying ``update``."""
    return {"sessionId": session_id, "update": dict(update)}


def permission_request(session_id: str, tool_call_id: str, plan: Plan, reason: str, *,
                       raw_input: Any = None) -> dict[str, Any]:
    """The params of ``session/request_permission`` for an edit the approval hook asks about:
    the edit's diffs, and the options allow once / reject once. ``reason`` (why the hook asks)
    goes in the title and in ``_meta.patchtx.reason``."""
    call: dict[str, Any] = {
        "toolCallId": tool_call_id,
        "title": f"{edit_title(plan)} (needs approval: {reason})" if reason else edit_title(plan),
        "kind": "edit",
        "status": "pending",
        **_edit_fields(plan),
    }
    if raw_input is not None:
        call["rawInput"] = raw_input
    return {
        "sessionId": session_id,
        "toolCall": call,
        "options": [dict(option) for option in PERMISSION_OPTIONS],
        "_meta": {META_KEY: {"reason": reason}},
    }


def permission_granted(response: Mapping[str, Any]) -> bool:
    """Whether a ``session/request_permission`` result allows the edit: only the allow option
    does; reject, cancellation or anything unrecognised is a no."""
    if not isinstance(response, Mapping):
        return False
    outcome = response.get("outcome")
    return (isinstance(outcome, Mapping) and outcome.get("outcome") == "selected"
            and outcome.get("optionId") == ALLOW_ONCE)


def approval_request(session_id: str, tool_call_id: str, plan: Plan, hook: ApprovalHook, *,
                     raw_input: Any = None) -> dict[str, Any] | None:
    """Ask ``hook`` about ``plan``: None when it approves, the ``session/request_permission``
    params when it asks; raise ApprovalError when it rejects (nothing to ask, nothing written)."""
    verdict = hook(plan)
    if verdict.decision is Decision.REJECT:
        raise rejection(verdict.reason)
    if verdict.decision is Decision.ASK:
        return permission_request(session_id, tool_call_id, plan, verdict.reason, raw_input=raw_input)
    return None


def permission_asker(
    session_id: str,
    tool_call_id: str,
    request_permission: Callable[[dict[str, Any]], Mapping[str, Any]],
    *,
    raw_input: Any = None,
) -> Callable[[Plan, str], bool]:
    """An ``ask`` callback for ``patchtx.plan.approval.enforce``: it sends ``session/request_permission``
    through ``request_permission`` (params in, the client's result out) and says whether the user
    allowed the edit."""

    def ask(plan: Plan, reason: str) -> bool:
        params = permission_request(session_id, tool_call_id, plan, reason, raw_input=raw_input)
        return permission_granted(request_permission(params))

    return ask
