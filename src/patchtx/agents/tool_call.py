"""Executing one apply_patch tool call from an agent, whatever carried it (MCP, a function or
freeform tool, an intercepted shell command): the same checks, the same result shapes.

The host's root is the boundary. The call may name a ``workspace_root`` inside it, which only sets
the directory the patch's relative paths start from: planning and the transaction always run on
the host's root, so the root's ``[tool.patchtx]`` policy, its lock and its journal apply to every
call. The call's ``allow_delete`` and ``allow_move`` can narrow that policy, never widen it: an
agent cannot grant itself what the workspace's owner refused.

Results are plain JSON-ready dicts:
``{"ok": true, "dry_run": bool, "summary": "A x, M y, D z, R w", "files": [{path, status, diff}]}``
or ``{"ok": false, "error": "<message>", "kind": "<kind>"}``.
"""

from __future__ import annotations

import os
import posixpath
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from .._record import replace
from ..api import apply_plan, options_for, plan_patch
from ..errors import PatchtxError, PolicyError, UnsafePathError
from ..model import Hunk, Patch, Plan, Result, UpdateFile
from ..parser import parse
from ..render import diff_texts, file_entries, human_report, result_json

PATCH_ARGUMENT_NAMES = ("input", "patchText", "patch")


@dataclass(frozen=True, slots=True)
class ToolOutcome:
    """A call's result: ``payload`` for programs (structured content), ``text`` for the model."""

    payload: dict[str, Any]
    text: str

    @property
    def ok(self) -> bool:
        return bool(self.payload["ok"])


def _inside(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip(os.sep) + os.sep)


def resolve_workspace_root(root: str, workspace_root: str | None) -> str:
    """The real path of ``workspace_root`` (relative to ``root``, or absolute), which must be an
    existing directory inside the real ``root``; raise UnsafePathError otherwise."""
    real_root = os.path.realpath(root)
    if not workspace_root or workspace_root == ".":
        return real_root
    candidate = os.path.realpath(os.path.join(real_root, workspace_root))
    hint = f"Pass a directory inside {real_root}, or leave workspace_root out to use the root itself."
    if not _inside(candidate, real_root):
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


def _patch_under(text: str, prefix: str, max_patch_bytes: int | None) -> Patch:
    """Parse ``text`` and make its relative paths start at ``prefix`` (a root-relative dir)."""
    # The API checks this limit for text only; the patch reaches it parsed, so check it here.
    size = len(text.encode("utf-8", "surrogatepass"))
    if max_patch_bytes is not None and size > max_patch_bytes:
        raise PolicyError(f"Refusing the patch: it is {size} bytes, more than the limit of "
                          f"{max_patch_bytes}.", hint="Split it into smaller patches.",
                          details={"bytes": size, "limit": max_patch_bytes})
    patch = parse(text)
    return replace(patch, hunks=tuple(_rebased(hunk, prefix) for hunk in patch.hunks))


def _plan(text: str, root: str, *, allow_delete: bool, allow_move: bool,
          workspace_root: str | None, intent: str | None, host: Mapping[str, Any]) -> Plan:
    if "\0" in root or (workspace_root is not None and "\0" in workspace_root):
        raise UnsafePathError(f"Refusing workspace_root {workspace_root!r}: it contains a NUL byte.",
                              hint="Pass a directory inside the workspace root, or leave workspace_root out.",
                              path=workspace_root)
    real_root = os.path.realpath(root)
    base = resolve_workspace_root(real_root, workspace_root)
    policy = options_for(real_root, **host)
    allow_delete = allow_delete and policy.allow_delete
    allow_move = allow_move and policy.allow_move
    patch: str | Patch = text
    if base != real_root:
        prefix = os.path.relpath(base, real_root).replace(os.sep, "/")
        patch = _patch_under(text, prefix, policy.max_patch_bytes)
    return plan_patch(patch, real_root, **{**host, "allow_delete": allow_delete, "allow_move": allow_move},
                      intent=intent)


def success_outcome(plan: Plan, *, dry_run: bool, result: Result | None = None) -> ToolOutcome:
    rendered = diff_texts(plan)  # (once, for both the payload and the text)
    payload = {"ok": True, "dry_run": dry_run, "summary": plan.summary,
               "files": file_entries(plan, rendered=rendered)}
    if result is None:
        result = Result(plan, committed=not dry_run, dry_run=dry_run)
    recovered = result_json(result, with_diff=False).get("recovered")
    if recovered is not None:
        payload["recovered"] = recovered  # an interrupted transaction was recovered first
    text = human_report(result, rendered=rendered)
    if dry_run:
        text = "Dry run: nothing was written.\n" + text
    return ToolOutcome(payload, text)


def failure_outcome(error: PatchtxError) -> ToolOutcome:
    payload = {"ok": False, "error": error.message, "kind": error.kind}
    return ToolOutcome(payload, f"Error [{error.kind}]: {error.message}")


def apply_patch_call(
    patch: str,
    root: str,
    *,
    dry_run: bool = False,
    allow_delete: bool = False,
    allow_move: bool = True,
    workspace_root: str | None = None,
    intent: str | None = None,
    host: Mapping[str, Any] | None = None,
) -> ToolOutcome:
    """Plan ``patch`` against ``root`` and, unless ``dry_run``, commit it as one transaction.

    ``host`` is the host's policy as ``plan_patch`` keywords (``protected``, ``allow_delete``,
    ``max_files``...): the ceiling that the workspace's policy and the call's own options can only
    narrow. Never raises for a refused patch: the refusal is the outcome (``ok`` false, nothing
    written).
    """
    try:
        plan = _plan(patch, root, allow_delete=allow_delete, allow_move=allow_move,
                     workspace_root=workspace_root, intent=intent, host=host or {})
        result = None if dry_run else apply_plan(plan)
    except PatchtxError as error:
        return failure_outcome(error)
    except Exception as exc:  # noqa: BLE001 - the model gets an error with a kind, never a traceback
        from ..errors import InternalError

        return failure_outcome(InternalError.wrapping(exc))
    return success_outcome(plan, dry_run=dry_run, result=result)


class InvalidArgumentsError(PatchtxError):
    """The tool call's JSON arguments do not fit the declared schema."""

    kind = "invalid_arguments"


def _argument_error(message: str) -> ToolOutcome:
    return failure_outcome(InvalidArgumentsError(message, hint="Resend the call with corrected arguments."))


def run_tool_call(arguments: Mapping[str, Any], root: str, host: Mapping[str, Any] | None = None) -> ToolOutcome:
    """Execute a function-tool call's decoded JSON arguments (any of the ``function*`` formats of
    ``tool_spec``): the patch under ``input``, ``patchText`` or ``patch``, options as declared."""
    given = [name for name in PATCH_ARGUMENT_NAMES if name in arguments]
    if len(given) != 1 or not isinstance(arguments[given[0]], str):
        return _argument_error("The call needs the patch text as one string argument "
                               f"(one of: {', '.join(PATCH_ARGUMENT_NAMES)}).")
    option_types = {"dry_run": bool, "allow_delete": bool, "allow_move": bool,
                    "workspace_root": str, "intent": str}
    unknown = sorted(set(arguments) - {given[0], *option_types})
    if unknown:
        return _argument_error(f"Unknown argument(s): {', '.join(unknown)}.")
    wrong = [name for name, kind in option_types.items()
             if arguments.get(name) is not None and not isinstance(arguments[name], kind)]
    if wrong:
        return _argument_error(f"Argument(s) of the wrong type: {', '.join(wrong)} "
                               "(booleans are true/false, the others strings).")

    def flag(name: str, default: bool) -> bool:
        # JSON null means "not given": it must never read as a permission.
        value = arguments.get(name)
        return default if value is None else bool(value)

    return apply_patch_call(
        arguments[given[0]], root, dry_run=flag("dry_run", False),
        allow_delete=flag("allow_delete", False), allow_move=flag("allow_move", True),
        workspace_root=arguments.get("workspace_root"), intent=arguments.get("intent"), host=host)
