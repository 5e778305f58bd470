"""An editor for the OpenAI Agents SDK's hosted ``apply_patch`` tool, backed by patchtx.

The SDK hands an editor one file operation at a time (``create_file``, ``update_file`` or
``delete_file``), whose ``diff`` is a V4A diff: the body of one file section of a Codex
``*** Begin Patch`` envelope. ``PatchtxEditor`` makes each operation one patchtx transaction::

    from agents import Agent
    from patchtx.agents.openai_agents import PatchtxEditor

    editor = PatchtxEditor("/path/to/repo", intent="fix the failing test")
    agent = Agent(name="coder", tools=[editor.tool()])

**Why the V4A diff is translated into our format rather than run through the SDK's
``apply_diff``.** V4A *is* the Codex hunk grammar without the envelope, so wrapping an operation
in a one-file envelope (``*** Add File:`` / ``*** Update File:`` [+ ``*** Move to:``] /
``*** Delete File:``) is lossless, and it lets every surface of patchtx (CLI, MCP, shell heredoc,
this editor) answer the same hunk the same way. ``agents.apply_diff`` would be less faithful to
what the model was trained on and less safe:

* it creates files without a final newline (``+a`` / ``+b`` gives ``"a\\nb"``); Codex, and patchtx,
  end every added line with one;
* where the context matches in several places it silently edits the first; patchtx refuses an
  ambiguous hunk and says where it matched, so the model adds context instead of corrupting code;
* its errors (``Invalid Context 0: ...``) carry no hint; ours name the closest region of the file
  and the first differing line, which is what a model needs to fix the diff in one try;
* it works on text only; patchtx plans on bytes (refusing binary and non-UTF-8 files, keeping
  each line's ending) and commits through the journal: atomic, the before-bytes re-checked under
  the workspace lock, file modes kept, every path confined to the root (no ``..``, no absolute
  path outside it, no symlink leading out, no ``.git``).

A diff line that would start another file section (``*** Add File:`` etc.) is refused, so an
operation can never touch a path other than its own.

**Approval.** ``needs_approval`` plans the operation and asks the approval hook
(``ApprovalPolicy()`` unless another is given): *approve* runs it without a prompt, *ask* makes the
SDK interrupt the run for a human (``RunState.approve``/``reject``), *reject* lets the call
through to the editor, which fails it with the hook's reason and writes nothing. The editor
re-plans and re-checks the verdict when it runs; an *ask* verdict is only ever applied when the
SDK's approval step was wired to this editor (``tool()`` does it), never silently.

**Limits of the protocol.** The SDK calls the editor once per operation, with no begin/commit
around a model turn: each operation is atomic on its own, but several operations are not one
transaction (use the MCP tool or a shell ``apply_patch`` heredoc for that). The hosted call carries
no intent or reason text; pass ``intent`` (a string, or a function of the operation, which can read
``operation.ctx_wrapper.context``) to record one with each change.

The SDK (``pip install 'patchtx[agents]'``) is imported only when the editor builds a tool or a
result, so ``import patchtx`` and importing this module never need it.
"""

from __future__ import annotations

import os
from collections import OrderedDict
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Literal

from ..api import commit_plan, parse_patches, plan_parsed
from ..errors import ApprovalError, ParseError, PatchtxError
from ..formats.codex import ADD_FILE, BEGIN_PATCH, DELETE_FILE, END_OF_FILE, END_PATCH, MOVE_TO, UPDATE_FILE, parse
from ..model import AddFile, DeleteFile, Patch, Plan, UpdateFile
from ..options import ALL_KEYWORDS, CommitOptions, PlanOptions, check_keywords
from ..plan.approval import ApprovalHook, ApprovalPolicy, Decision, rejection
from ..result import Result, codex_summary
from ..workspace.paths import root_path
from ..workspace.policy import options_for
from .tool_call import AGENT_DEFAULTS

if TYPE_CHECKING:
    from typing import Unpack

    from agents import ApplyPatchEditor, ApplyPatchOperation, ApplyPatchResult, ApplyPatchTool, RunContextWrapper
    from agents.tool import ApplyPatchOnApprovalFunction

    from ..options import OptionKeywords

OperationKind = Literal["create_file", "update_file", "delete_file"]
IntentSource = str | Callable[["ApplyPatchOperation"], str | None] | None

SDK_MISSING = ("The OpenAI Agents SDK is not installed; patchtx.agents.openai_agents needs it: "
               "pip install 'patchtx[agents]'.")

_HUNK_TYPES: dict[str, type[AddFile | UpdateFile | DeleteFile]] = {
    "create_file": AddFile,
    "update_file": UpdateFile,
    "delete_file": DeleteFile,
}
_HEADERS = {"create_file": ADD_FILE, "update_file": UPDATE_FILE, "delete_file": DELETE_FILE}
_MAX_REMEMBERED_ANSWERS = 1024


_OperationKey = tuple[str, str, str | None, str | None]


def _key(operation: ApplyPatchOperation) -> _OperationKey:
    """The operation as a key (a field of the wrong type from a model, a list, spelled out)."""
    return (_spelled(operation.type) or "", _spelled(operation.path) or "", _spelled(operation.diff),
            _spelled(getattr(operation, "move_to", None)))


def _spelled(value: object) -> str | None:
    return value if value is None or isinstance(value, str) else repr(value)


def _invalid_operation(message: str, path: str | None = None, hint: str = "") -> ParseError:
    return ParseError(message, hint=hint, path=path)


def _check_path(value: object, what: str) -> str:
    if not isinstance(value, str) or not value.strip():
        raise _invalid_operation(f"Invalid apply_patch operation: the {what} is empty.",
                                 hint="Give the file's path relative to the workspace root.")
    if "\n" in value or "\r" in value:
        raise _invalid_operation(f"Invalid apply_patch operation: the {what} {value!r} contains a "
                                 "line break.", path=value, hint="A path is one line.")
    return value


def _check_diff_lines(diff: str, path: str) -> None:
    """Refuse envelope markers: a V4A diff is the body of one file section, nothing more."""
    for offset, line in enumerate(diff.split("\n")):
        marker = line.rstrip()
        if marker.startswith("*** ") and marker != END_OF_FILE:
            raise _invalid_operation(
                f"Invalid diff for '{path}' on line {offset + 1}: '{marker[:80]}' is a patch "
                "envelope marker, not a diff line.",
                path=path,
                hint="Send only this file's changes ('@@' sections with ' ', '-' and '+' lines, or '+' "
                     "lines for a new file); send each other file as its own operation.",
            )


def operation_patch(operation: ApplyPatchOperation) -> Patch:
    """The one-file patch equivalent to an SDK operation; ParseError if it is malformed.

    Works on any object with ``type``, ``path``, ``diff`` (and optionally ``move_to``). The parsed
    patch is checked to hold exactly the one operation its header names.
    """
    kind = operation.type
    if not isinstance(kind, str) or kind not in _HEADERS:
        raise _invalid_operation(f"Unknown apply_patch operation '{kind}'.",
                                 hint="Use create_file, update_file or delete_file.")
    path = _check_path(operation.path, "path")
    move_to = getattr(operation, "move_to", None)
    header = [BEGIN_PATCH, _HEADERS[kind] + path]
    if move_to is not None:
        if kind != "update_file":
            raise _invalid_operation(f"Invalid {kind} operation for '{path}': only update_file can "
                                     "move a file.", path=path)
        header.append(MOVE_TO + _check_path(move_to, "destination path"))
    body = ""
    diff = operation.diff
    if kind == "create_file" and (diff is None or (isinstance(diff, str) and not diff.strip())):
        pass  # an empty new file (an empty __init__.py), as the SDK's own apply_diff creates it
    elif kind != "delete_file":
        if not isinstance(diff, str) or not diff.strip():
            raise _invalid_operation(f"Invalid {kind} operation for '{path}': the diff is empty.",
                                     path=path, hint="Send the file's lines as a V4A diff.")
        _check_diff_lines(diff, path)
        body = diff if diff.endswith("\n") else diff + "\n"
    text = "\n".join(header) + "\n" + body + END_PATCH + "\n"
    patch = parse(text)
    hunks = patch.hunks
    expected = _HUNK_TYPES[kind]
    if (len(hunks) != 1 or not isinstance(hunks[0], expected)
            or (getattr(hunks[0], "move_to", None) is None) != (move_to is None)):
        raise _invalid_operation(
            f"Invalid diff for '{path}': it holds {len(hunks)} file operations instead of one {kind}.",
            path=path, hint="Send each file as its own operation.")
    return patch


def _failure_text(error: PatchtxError, operation: ApplyPatchOperation) -> str:
    text = error.message
    if error.line is not None and operation.type != "delete_file":
        # Messages count lines of the one-file envelope the diff was wrapped in.
        first = 4 if getattr(operation, "move_to", None) is not None else 3
        text += f"\n(Patch line {first} is the first line of this operation's diff.)"
    return text


def _sdk_result(status: Literal["completed", "failed"], output: str) -> ApplyPatchResult:
    try:
        from agents import ApplyPatchResult  # (optional extra)
    except ImportError as exc:
        raise ImportError(SDK_MISSING) from exc
    return ApplyPatchResult(status=status, output=output)


class PatchtxEditor:
    """An ``agents.ApplyPatchEditor``: each operation is planned, approved and committed by patchtx.

    ``root`` is the workspace every path is confined to. ``approval`` is the hook consulted on each
    operation's Plan (default ``ApprovalPolicy()``: edits approved, deletes and moves asked).
    ``options`` are the host's options, those of ``patchtx.apply_patch`` (``allow_overwrite``,
    ``protected``, ``durable``...), which the root's ``[tool.patchtx]`` table may only tighten; the
    model's operation carries none. ``intent`` is recorded with each change.
    """

    def __init__(
        self,
        root: str | os.PathLike[str],
        *,
        approval: ApprovalHook | None = None,
        intent: IntentSource = None,
        **options: Unpack[OptionKeywords],
    ) -> None:
        self.root = os.path.realpath(root_path(root))
        self.approval: ApprovalHook = approval if approval is not None else ApprovalPolicy()
        self.intent = intent
        self.options = options
        check_keywords(options, ALL_KEYWORDS, "PatchtxEditor()")
        # Whether the SDK's approval step consults this editor: only then may an "ask" verdict be
        # applied, since reaching the editor proves the SDK asked (or was told to always allow).
        self._sdk_asks = False
        # needs_approval's answer per operation, so that a verdict that turned from approve to ask
        # between the check and the run is refused rather than applied unasked.
        self._answers: OrderedDict[_OperationKey, bool] = OrderedDict()

    # -- planning --------------------------------------------------------------------------------
    def intent_for(self, operation: ApplyPatchOperation) -> str | None:
        if callable(self.intent):
            return self.intent(operation)
        return self.intent

    def plan_operation(self, operation: ApplyPatchOperation) -> Plan:
        """The Plan of one operation (nothing written); PatchtxError if it cannot apply."""
        return self._planned(operation)[0]

    def _planned(self, operation: ApplyPatchOperation) -> tuple[Plan, CommitOptions, PlanOptions]:
        # The options are read for every operation: the workspace's policy may change in between.
        plan_options, commit_options = options_for(self.root, self.options, caller="PatchtxEditor()",
                                                   defaults=AGENT_DEFAULTS)
        (patch,) = parse_patches(operation_patch(operation), plan_options)
        planned = plan_parsed([patch], self.root, plan_options, intent=self.intent_for(operation))
        return planned, commit_options, plan_options

    # -- approval (the SDK's ``needs_approval``) -------------------------------------------------
    def needs_approval(self, run_context: RunContextWrapper[Any], operation: ApplyPatchOperation,
                       call_id: str) -> bool:
        """True when the hook says ask. A reject or a failing plan returns False: the editor then
        reports the reason to the model without bothering a human."""
        self._sdk_asks = True
        try:
            verdict = self.approval(self.plan_operation(operation))
        except PatchtxError:
            answer = False
        else:
            answer = verdict.decision is Decision.ASK
        self._remember(_key(operation), answer)
        return answer

    def _remember(self, key: _OperationKey, answer: bool) -> None:
        self._answers[key] = answer
        self._answers.move_to_end(key)
        while len(self._answers) > _MAX_REMEMBERED_ANSWERS:
            self._answers.popitem(last=False)

    def _check_verdict(self, plan: Plan, operation: ApplyPatchOperation) -> None:
        verdict = self.approval(plan)
        asked = self._answers.pop(_key(operation), None)
        if verdict.decision is Decision.REJECT:
            raise rejection(verdict.reason)
        if verdict.decision is Decision.APPROVE or asked is True or (asked is None and self._sdk_asks):
            return
        if asked is False:
            raise ApprovalError(
                f"This edit now needs approval ({verdict.reason}), but it did not when the tool "
                "checked it.", hint="Send the operation again so that it can be approved.",
                details={"reason": verdict.reason})
        raise ApprovalError(
            f"This edit needs approval ({verdict.reason}), and this apply_patch tool has no approval "
            "step.", hint="Leave this change out, or ask the user to make it. (Host: build the tool "
            "with PatchtxEditor.tool(), or pass needs_approval=editor.needs_approval.)",
            details={"reason": verdict.reason})

    # -- the editor protocol ---------------------------------------------------------------------
    def create_file(self, operation: ApplyPatchOperation) -> ApplyPatchResult:
        return self._run("create_file", operation)

    def update_file(self, operation: ApplyPatchOperation) -> ApplyPatchResult:
        return self._run("update_file", operation)

    def delete_file(self, operation: ApplyPatchOperation) -> ApplyPatchResult:
        return self._run("delete_file", operation)

    def apply(self, operation: ApplyPatchOperation) -> Result:
        """Plan, approve and commit one operation, or raise PatchtxError (nothing written). The
        editor methods wrap this and turn errors into failed results for the model."""
        plan, commit_options, plan_options = self._planned(operation)
        self._check_verdict(plan, operation)
        return commit_plan(plan, commit_options, policy=plan_options)

    def _run(self, kind: OperationKind, operation: ApplyPatchOperation) -> ApplyPatchResult:
        try:
            if operation.type != kind:
                raise _invalid_operation(f"{kind} was called with a {operation.type} operation.")
            result = self.apply(operation)
        except PatchtxError as error:
            return _sdk_result("failed", _failure_text(error, operation))
        return _sdk_result("completed", codex_summary(result.plan))

    # -- the SDK tool ----------------------------------------------------------------------------
    def tool(self, *, name: str = "apply_patch",
             on_approval: ApplyPatchOnApprovalFunction | None = None) -> ApplyPatchTool:
        """An ``agents.ApplyPatchTool`` over this editor, its approval step wired to the hook."""
        try:
            from agents import ApplyPatchTool  # (optional extra)
        except ImportError as exc:
            raise ImportError(SDK_MISSING) from exc
        self._sdk_asks = True
        return ApplyPatchTool(editor=self, name=name, needs_approval=self.needs_approval,
                              on_approval=on_approval)


if TYPE_CHECKING:
    # mypy checks here that PatchtxEditor satisfies the SDK's editor protocol.
    _protocol_check: ApplyPatchEditor = PatchtxEditor(".")
