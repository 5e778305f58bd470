"""Executing one apply_patch tool call from an agent, whatever carried it (MCP, a function or
freeform tool, an intercepted shell command): the same checks, the same result shapes.

The host's root is the boundary. The call may name a ``workspace_root`` inside it, which only sets
the directory the patch's relative paths start from: planning and the transaction always run on
the host's root, so the root's ``[tool.patchtx]`` policy, its lock and its journal apply to every
call. The call's ``allow_delete`` and ``allow_move`` can narrow that policy, never widen it: an
agent cannot grant itself what the workspace's owner refused.

Results are plain JSON-ready dicts in the one result shape of every surface
(``docs/result.schema.json``: ok, dry_run, summary, counts, files, transaction, recovered, intent,
syntax, verify, error), with a text for the model: the summary and plain unified diffs, or the error message.
"""

from __future__ import annotations

import os
import posixpath
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from .._record import record, replace
from ..api import commit_plan, parse_patches, plan_parsed
from ..errors import (
    ArgumentTypeError,
    InternalError,
    InvalidArgumentsError,
    PatchtxError,
    PolicyError,
    UnsafePathError,
    json_type,
)
from ..formats.edits import in_spelled_paths, name_the_edit, parse_edits
from ..formats.search_replace import parse_search_replace
from ..history import log, undo, untrusted
from ..model import Hunk, Patch, Plan, UpdateFile
from ..options import TOOL_OPTIONS, UNDO_SCOPES, CommitOptions, PlanOptions
from ..render import diff_texts, error_json, log_json, log_text
from ..result import Result, human_report, result_json
from ..workspace.paths import root_path, within
from ..workspace.policy import hidden_for, options_for
from .edit_toolspec import EDIT_FILE, EDITOR, EDITS, REPLACE_IN_FILE
from .editor import run_editor
from .snippet_tool import read_arguments, snippet_patch

if TYPE_CHECKING:
    from ..cancel import Cancellation
    from ..txn.commit import Progress

PATCH_ARGUMENT_NAMES = ("input", "patchText", "patch")
AGENT_DEFAULTS = {"syntax": "refuse"}
"""Where an agent's call differs from the library's defaults (below the host's config and
options): a patch that breaks a file's syntax is refused, and the model sees where."""
_TOOL_TYPES: dict[str, type] = {row.name: {"bool": bool, "str | None": str, "int | None": int}[row.type]
                                for row in TOOL_OPTIONS}
"""Each tool option's JSON value type (``toolspec.JSON_TYPES``, as Python types)."""


@record
class ToolOutcome:
    """A call's result: ``payload`` for programs (structured content), ``text`` for the model."""

    payload: dict[str, Any]
    text: str

    @property
    def ok(self) -> bool:
        return bool(self.payload["ok"])


def resolve_workspace_root(root: str, workspace_root: str | None) -> str:
    """The real path of ``workspace_root`` (relative to ``root``, or absolute), which must be an
    existing directory inside the real ``root``; raise UnsafePathError otherwise."""
    real_root = os.path.realpath(root)
    if not workspace_root or workspace_root == ".":
        return real_root
    candidate = os.path.realpath(os.path.join(real_root, workspace_root))
    hint = f"Pass a directory inside {real_root}, or leave workspace_root out to use the root itself."
    if not within(real_root, candidate):
        raise UnsafePathError(
            f"Refusing workspace_root '{workspace_root}': it resolves to {candidate}, outside the "
            f"workspace root {real_root}.", hint=hint, path=workspace_root)
    if not os.path.isdir(candidate):
        raise UnsafePathError(
            f"Refusing workspace_root '{workspace_root}': {candidate} is not a directory.",
            hint=hint, path=workspace_root)
    return candidate


def _rebased(hunk: Hunk, prefix: str) -> Hunk:
    def join(path: str) -> str:
        # Absolute paths are left for the workspace to accept (inside the root) or refuse.
        return path if path.startswith("/") else posixpath.join(prefix, path)

    if isinstance(hunk, UpdateFile) and hunk.move_to is not None:
        return replace(hunk, path=join(hunk.path), move_to=join(hunk.move_to))
    return replace(hunk, path=join(hunk.path))


def call_arguments(given: Mapping[str, Any]) -> dict[str, Any]:
    """A tool call's options (``options.TOOL_OPTIONS``), each as given or its default: JSON null
    means "not given" (it must never read as a permission). One of the wrong type is
    ArgumentTypeError (kind ``invalid_arguments``)."""
    unknown = sorted(set(given) - set(_TOOL_TYPES))
    if unknown:
        raise TypeError(f"apply_patch_call() got an unexpected keyword argument '{unknown[0]}'")
    wrong = [name for name, kind in _TOOL_TYPES.items()
             if given.get(name) is not None and not _fits(given[name], kind)]
    if wrong:
        raise ArgumentTypeError(f"Invalid arguments: of the wrong type: {', '.join(wrong)} (booleans are"
                                " true/false, strip a non-negative integer, the others strings).",
                                hint="Resend the call with corrected arguments.")
    return {row.name: row.tool_default if given.get(row.name) is None else given[row.name]
            for row in TOOL_OPTIONS}


def _fits(value: object, kind: type) -> bool:
    # JSON true is not an integer here, though Python's bool is one.
    if kind is int:
        return isinstance(value, int) and not isinstance(value, bool) and value >= 0
    return isinstance(value, kind)


def _plan(text: str | Patch, root: str, call: Mapping[str, Any], host: Mapping[str, Any],
          watch: Watch) -> tuple[Plan, PlanOptions, CommitOptions]:
    """The call's plan, the policy it was planned under (the commit's gate checks it again), and
    the host's commit options (the call cannot change them)."""
    workspace_root: str | None = call["workspace_root"]
    root = root_path(root)
    if not isinstance(text, str | Patch):
        raise ArgumentTypeError.expected("`patch`", "the patch text (a string)", text)
    if "\0" in root or (workspace_root is not None and "\0" in workspace_root):
        raise UnsafePathError(f"Refusing workspace_root {workspace_root!r}: it contains a NUL byte.",
                              hint="Pass a directory inside the workspace root, or leave workspace_root out.",
                              path=workspace_root)
    real_root = os.path.realpath(root)
    base = resolve_workspace_root(real_root, workspace_root)
    host_options, commit_options = options_for(real_root, host, caller="the host's options:",
                                               defaults=AGENT_DEFAULTS)
    # The call narrows the permissions it is given; skip_applied is the caller's choice, not a
    # permission: the call may turn it on.
    options = replace(host_options, allow_delete=call["allow_delete"] and host_options.allow_delete,
                      allow_move=call["allow_move"] and host_options.allow_move,
                      skip_applied=call["skip_applied"] or host_options.skip_applied)
    (patch,) = parse_patches(text, options, extract=call["extract"], strip=call["strip"],
                             reverse=call["reverse"])
    if base != real_root:
        prefix = os.path.relpath(base, real_root).replace(os.sep, "/")
        patch = replace(patch, hunks=tuple(_rebased(hunk, prefix) for hunk in patch.hunks))
    planned = plan_parsed([patch], real_root, options, intent=call["intent"], progress=watch.progress,
                          cancel=watch.cancel)
    return planned, options, commit_options


def success_outcome(result: Result) -> ToolOutcome:
    rendered = diff_texts(result.plan)  # (once, for both the payload and the text)
    payload = result_json(result, rendered=rendered)
    # The summary and one line per file, the transaction to undo, then the plain diffs.
    text = human_report(result, diffs=False)
    if result.dry_run:
        text = "Dry run: nothing was written.\n" + text
    elif result.transaction_id:
        text += f"Transaction {result.transaction_id} (the undo tool reverts it).\n"
    return ToolOutcome(payload, text + "".join(rendered))


TOOL_WORDING = (
    ("pass --skip-applied (skip_applied=True)", "resend with skip_applied: true"),
    ("use --extract (extract=true in the tools)", "resend with extract: true"),
    ("(--extract, or extract=true)", "(resend with extract: true)"),
    ("give -p 0 (strip=0)", "resend with strip: 0"),
    ("(--allow-overwrite)", "(the host's allow-overwrite setting: a tool call cannot set it)"),
    ("pass --unidiff-zero (unidiff_zero=True), as git apply needs it",
     "send it as '*** Update File:' (a tool call cannot pass git apply's --unidiff-zero)"),
    ("give a -p (path strip) that leaves", "resend with the strip that leaves"),
    ("Give a smaller -p (path strip) value.", "Resend with a smaller strip."),
    ("Invalid option: --strip and --reverse apply", "Invalid arguments: strip and reverse apply"),
    ("Invalid option: --reverse applies", "Invalid argument: reverse applies"),
)
"""The command line's option spellings in error hints, and the arguments this tool takes for them
(a model calling the tool cannot pass a command-line flag)."""


def tool_wording(text: str) -> str:
    """An error's text with each command-line option named as this tool's argument."""
    for cli, tool in TOOL_WORDING:
        text = text.replace(cli, tool)
    return text


def failure_outcome(error: Exception, root: str | None = None, *, dry_run: bool = False) -> ToolOutcome:
    """A refused call's outcome; an exception other than a ``PatchtxError`` is an internal error
    (the model gets an error with a kind, never a traceback)."""
    if not isinstance(error, PatchtxError):
        error = InternalError.wrapping(error)
    payload = error_json(error, root=root, dry_run=dry_run)
    worded = payload["error"]
    for key in ("message", "hint"):
        if isinstance(worded.get(key), str):
            worded[key] = tool_wording(worded[key])
    return ToolOutcome(payload, f"Error [{error.kind}]: {tool_wording(error.message)}")


@record
class Watch:
    """What a host gives a call besides its arguments: who is told how far it is (``progress``)
    and what stops it before its commit point (``cancel``); see ``patchtx.api.PatchKeywords``."""

    progress: Progress | None = None
    cancel: Cancellation | None = None


UNWATCHED = Watch()


def apply_patch_call(patch: str | Patch, root: str, *, host: Mapping[str, Any] | None = None,
                     origin: str | None = None, watch: Watch = UNWATCHED, **arguments: Any) -> ToolOutcome:
    """Plan ``patch`` against ``root`` and, unless ``dry_run``, commit it as one transaction.
    ``arguments`` are the tool's options (``options.TOOL_OPTIONS``, as ``toolspec`` declares them:
    ``dry_run``, ``allow_delete``, ``extract``, ``skip_applied``, ``strip``, ``reverse``...);
    one left out, or None, takes the tool's default.

    ``host`` is the host's options as ``patchtx.apply_patch`` keywords (``protected``,
    ``allow_delete``, ``max_files``, ``durable``...): the ceiling that the workspace's policy and
    the call's own options can only narrow. ``origin`` names the surface in the undo history
    (``"mcp"``: the MCP server, whose undo tool may be limited to its own transactions); ``watch``,
    the host's progress callback and cancellation. Never raises for a refused patch: the refusal
    is the outcome (``ok`` false, nothing written; kind ``cancelled`` for a cancelled call).
    """
    try:
        call = call_arguments(arguments)
    except ArgumentTypeError as error:
        return failure_outcome(error, dry_run=arguments.get("dry_run") is True)
    return _applied(patch, root, call, host or {}, origin, watch=watch)


def _applied(patch: str | Patch, root: str, call: Mapping[str, Any], host: Mapping[str, Any],
             origin: str | None, *, edits: Patch | None = None, watch: Watch = UNWATCHED) -> ToolOutcome:
    """``apply_patch_call`` with the call's options ``call`` (``edits``: the edit list's patch,
    whose edit a refusal names)."""
    try:
        plan, options, commit_options = _plan(patch, root, call, host, watch)
        result = (Result(plan, committed=False, dry_run=True) if call["dry_run"]
                  else commit_plan(plan, commit_options, policy=options, origin=origin,
                                   progress=watch.progress, cancel=watch.cancel))
    except Exception as error:  # noqa: BLE001 - every refusal is the outcome
        if edits is not None and isinstance(error, PatchtxError):
            error = name_the_edit(error, edits, root)
        elif isinstance(patch, Patch) and isinstance(error, PatchtxError):
            error = in_spelled_paths(error, patch, root)  # (an edit tool's: SEARCH/REPLACE blocks)
        return failure_outcome(error, root, dry_run=call["dry_run"])
    return success_outcome(result)


def log_call(root: str) -> ToolOutcome:
    """The undo history of ``root``: ``{"ok": true, "transactions": [...]}`` (as ``patchtx log
    --json``, with ``untrusted``: kept journals this user's patchtx did not sign, never undone) and
    ``patchtx log``'s lines as the text."""
    try:
        entries = log(root)
        foreign = untrusted(root)
    except PatchtxError as error:
        return failure_outcome(error, root)
    text = log_text(entries)
    if foreign:
        text += (f"Not listed, never undone: {len(foreign)} entr{'y' if len(foreign) == 1 else 'ies'} not"
                 " written by this user's patchtx (" + ", ".join(foreign) + ").\n")
    return ToolOutcome(log_json(entries, foreign), text)


def undo_call(root: str, transaction: str, *, dry_run: bool = False, allow_delete: bool = False,
              host: Mapping[str, Any] | None = None, scope: str = "own", origin: str = "mcp",
              watch: Watch = UNWATCHED) -> ToolOutcome:
    """Undo ``transaction`` (an id or a unique prefix) in ``root`` as a new transaction, as the
    ``origin`` surface (recorded in the history). An undo is a change like a patch: the commit's
    gate checks it against the ``host``'s ceiling and the workspace's policy, and an undo that
    deletes files (undoing an add) is refused unless ``allow_delete`` (the call's, the host's and
    the workspace's) allows it. ``scope`` (``UNDO_SCOPES``): which transactions may be undone."""
    real_root = None
    try:
        real_root = os.path.realpath(root_path(root))
        if scope not in UNDO_SCOPES:
            raise InvalidArgumentsError(f"Unknown undo scope {scope!r} (one of: {', '.join(UNDO_SCOPES)}).")
        if scope == "none":
            raise PolicyError(f"Refusing to undo {transaction}: undoing is turned off here (patchtx mcp"
                              " --undo none).", hint="The user can undo it from the command line"
                              " (patchtx undo).", details={"permission": "undo"})
        keywords = dict(host or {})
        if not allow_delete:
            keywords["allow_delete"] = False  # (narrowed: the host's and the workspace's still apply)
        result = undo(real_root, transaction, dry_run=dry_run, origin=origin, only_own=scope == "own",
                      progress=watch.progress, cancel=watch.cancel, **keywords)
    except Exception as error:  # noqa: BLE001 - every refusal is the outcome
        return failure_outcome(error, real_root, dry_run=dry_run)
    outcome = success_outcome(result)
    verb = "Would undo" if dry_run else "Undid"
    done = "" if dry_run else f" as transaction {result.transaction_id}"
    return ToolOutcome(outcome.payload, f"{verb} transaction {result.undone}{done}.\n{outcome.text}")


def _argument_error(message: str) -> ToolOutcome:
    return failure_outcome(InvalidArgumentsError(message, hint="Resend the call with corrected arguments."))


def run_tool_call(arguments: Mapping[str, Any], root: str, host: Mapping[str, Any] | None = None) -> ToolOutcome:
    """Execute a function-tool call's decoded JSON arguments (any of the ``function*`` formats of
    ``tool_spec``): the patch under ``input``, ``patchText`` or ``patch``, options as declared."""
    if not isinstance(arguments, Mapping):
        return _argument_error(f"The call's arguments must be an object, not {json_type(arguments)}.")
    given = [name for name in PATCH_ARGUMENT_NAMES if name in arguments]
    if len(given) != 1 or not isinstance(arguments[given[0]], str):
        return _argument_error("The call needs the patch text as one string argument "
                               f"(one of: {', '.join(PATCH_ARGUMENT_NAMES)}).")
    unknown = sorted(map(str, set(arguments) - {given[0], *_TOOL_TYPES}))
    if unknown:
        return _argument_error(f"Unknown argument(s): {', '.join(unknown)}.")
    options = {name: value for name, value in arguments.items() if name != given[0]}
    return apply_patch_call(arguments[given[0]], root, host=host, **options)


def editor_call(arguments: Mapping[str, Any], root: str, *, host: Mapping[str, Any] | None = None,
                origin: str | None = None,
                intent: str | None = None, watch: Watch = UNWATCHED) -> ToolOutcome:
    """Run one ``str_replace_based_edit_tool`` call (its decoded JSON arguments: ``command``,
    ``path``, ``old_str``...) against ``root`` under the host's policy ``host`` (``allow_overwrite``
    lets ``create`` replace a file). The text is the reference tool's (a ``cat -n`` view, the
    edited snippet, or the error); the payload is the one result shape: a writing command's has
    the transaction the ``undo`` tool reverts, ``view``'s is a call that changes nothing (a dry
    run of no files) with ``output``, the text, as the reference's result carries it."""
    try:
        reply = run_editor(arguments, root, intent=intent, origin=origin, defaults=AGENT_DEFAULTS,
                           progress=watch.progress, cancel=watch.cancel, **dict(host or {}))
    except Exception as error:  # noqa: BLE001 - every refusal is the outcome
        return failure_outcome(error, root)
    if reply.result is None:  # (view: it read, planned nothing and wrote nothing)
        nothing = Result(Plan(os.path.realpath(root), (), ()), committed=False, dry_run=True)
        return ToolOutcome({**result_json(nothing), "output": reply.text}, reply.text)
    text = reply.text
    if reply.result.transaction_id:
        text += f"\nTransaction {reply.result.transaction_id} (the undo tool reverts it)."
    return ToolOutcome(result_json(reply.result), text)


def edits_call(edits: Any, root: str, *, file_path: str | None = None, dry_run: bool = False,
               intent: str | None = None, host: Mapping[str, Any] | None = None,
               origin: str | None = None, watch: Watch = UNWATCHED) -> ToolOutcome:
    """Apply an edit list (``[{path, old_string, new_string, replace_all}, ...]``, see
    ``patchtx.formats.edits``; ``file_path``: the file of the edits that name none) to ``root`` as one
    transaction, under the host's policy ``host``; the outcome of ``apply_patch_call``'s shape."""
    try:
        patch = parse_edits(edits, path=file_path)
        call = call_arguments({"dry_run": dry_run, "intent": intent})
    except PatchtxError as error:
        return failure_outcome(error, root, dry_run=dry_run is True)
    return _applied(patch, root, call, host or {}, origin, edits=patch, watch=watch)


def replace_in_file_call(path: str, diff: str, root: str, *, dry_run: bool = False,
                         intent: str | None = None, host: Mapping[str, Any] | None = None,
                         origin: str | None = None, watch: Watch = UNWATCHED) -> ToolOutcome:
    """Apply SEARCH/REPLACE blocks ``diff`` to the file ``path`` (Cline's ``replace_in_file``) as
    one transaction, under the host's policy ``host``; the outcome of ``apply_patch_call``'s
    shape."""
    try:
        patch = parse_search_replace(diff, path=path)
    except PatchtxError as error:
        return failure_outcome(error, root, dry_run=dry_run)
    return apply_patch_call(patch, root, dry_run=dry_run, intent=intent, host=host, origin=origin, watch=watch)


def edit_file_call(arguments: Mapping[str, Any], root: str, *, host: Mapping[str, Any] | None = None,
                   origin: str | None = None, watch: Watch = UNWATCHED) -> ToolOutcome:
    """One ``edit_file`` call (its decoded JSON arguments, ``agents.snippet_tool``: a lazy
    snippet merged into ``target_file``) against ``root`` under the host's policy ``host``; the
    outcome of ``apply_patch_call``'s shape (a refusal is the outcome)."""
    try:
        target, snippet, said, initial, dry_run = read_arguments(arguments)
        real = os.path.realpath(root_path(root))
        hidden = hidden_for(dict(host or {}), caller="the host's options:", defaults=AGENT_DEFAULTS)
        patch = snippet_patch(real, target, snippet, hidden, initial_code=initial, arguments=arguments)
    except Exception as error:  # noqa: BLE001 - every refusal is the outcome
        return failure_outcome(error, root, dry_run=arguments.get("dry_run") is True)
    return apply_patch_call(patch, root, host=host, origin=origin, watch=watch, dry_run=dry_run,
                            intent=said)


def run_edit_tool_call(tool: str, arguments: Mapping[str, Any], root: str,
                       host: Mapping[str, Any] | None = None) -> ToolOutcome:
    """Execute a call of an edit-protocol tool (``patchtx.agents.edit_toolspec``) by its name and
    decoded JSON arguments: ``str_replace_based_edit_tool``, ``edit_files``, ``replace_in_file`` or
    ``edit_file``."""
    if not isinstance(arguments, Mapping):
        return _argument_error(f"The call's arguments must be an object, not {json_type(arguments)}.")
    if tool == EDITOR:
        return editor_call(arguments, root, host=host)
    if tool == EDITS:
        unknown = sorted(map(str, set(arguments) - {"edits", "file_path", "dry_run", "intent"}))
        if unknown:
            return _argument_error(f"Unknown argument(s): {', '.join(unknown)}.")
        dry_run, file_path, intent = arguments.get("dry_run"), arguments.get("file_path"), arguments.get("intent")
        if dry_run is not None and not isinstance(dry_run, bool) or any(
                value is not None and not isinstance(value, str) for value in (file_path, intent)):
            return _argument_error("`dry_run` must be a boolean; `file_path` and `intent` strings.")
        return edits_call(arguments.get("edits"), root, file_path=arguments.get("file_path"),
                          dry_run=bool(arguments.get("dry_run")), intent=arguments.get("intent"),
                          host=host)
    if tool == REPLACE_IN_FILE:
        path, diff = arguments.get("path"), arguments.get("diff")
        if set(arguments) - {"path", "diff"} or not isinstance(path, str) or not isinstance(diff, str):
            return _argument_error("replace_in_file takes two strings: `path` and `diff`.")
        return replace_in_file_call(path, diff, root, host=host)
    if tool == EDIT_FILE:
        return edit_file_call(arguments, root, host=host)
    return _argument_error(f"Unknown tool {tool!r}.")
