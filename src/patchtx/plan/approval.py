"""Deciding before anything is written: a hook evaluated on the Plan says approve, ask or reject.

Hosts plug in their own hook (any callable ``Plan -> Verdict``); ``ApprovalPolicy`` is a ready-made
one in the spirit of Codex's safety check: edits inside the writable roots are approved, deletes,
moves, sensitive paths and large changes ask, and forbidden paths are rejected.
"""

from __future__ import annotations

from collections.abc import Callable
from enum import StrEnum

from .._record import record
from ..errors import ApprovalError
from ..model import ChangeKind, Plan
from ..options import PlanOptions
from ..workspace.policy import protected_by


class Decision(StrEnum):
    APPROVE = "approve"
    ASK = "ask"
    REJECT = "reject"


@record
class Verdict:
    decision: Decision
    reason: str = ""


ApprovalHook = Callable[[Plan], Verdict]


@record
class ApprovalPolicy:
    writable_roots: tuple[str, ...] = ("",)
    """Workspace-relative folders where edits may be approved without asking ("" = everywhere)."""
    ask_on_delete: bool = True
    ask_on_move: bool = True
    ask_paths: tuple[str, ...] = ()
    """Globs of sensitive paths (CI config, lock files...) that always ask."""
    reject_paths: tuple[str, ...] = ()
    """Globs of paths no patch may touch: the whole plan is rejected."""
    max_auto_bytes: int | None = 1_000_000
    """Changes larger than this (bytes written plus removed) ask."""

    def __call__(self, plan: Plan) -> Verdict:
        touched = [t.path for t in plan.targets]
        rejecting = PlanOptions(protected=self.reject_paths)
        for path in touched:
            pattern = protected_by(rejecting, path)
            if pattern:
                return Verdict(Decision.REJECT, f"{path} matches the forbidden pattern '{pattern}'")
        reasons = []
        outside = [p for p in touched if not any(
            root == "" or p == root.rstrip("/") or p.startswith(root.rstrip("/") + "/")
            for root in self.writable_roots)]
        if outside:
            reasons.append(f"outside the writable roots: {', '.join(outside[:5])}")
        kinds = {c.kind for c in plan.changes}
        if self.ask_on_delete and ChangeKind.DELETE in kinds:
            reasons.append("it deletes files")
        if self.ask_on_move and ChangeKind.MOVE in kinds:
            reasons.append("it moves files")
        asking = PlanOptions(protected=self.ask_paths)
        sensitive = [p for p in touched if protected_by(asking, p)]
        if sensitive:
            reasons.append(f"it touches sensitive paths: {', '.join(sensitive[:5])}")
        size = sum(len(t.after if t.after is not None else t.before or b"") for t in plan.targets)
        if self.max_auto_bytes is not None and size > self.max_auto_bytes:
            reasons.append(f"it changes {size} bytes (more than {self.max_auto_bytes})")
        if reasons:
            return Verdict(Decision.ASK, "; ".join(reasons))
        return Verdict(Decision.APPROVE, "edits inside the writable roots")


def rejection(reason: str, *, by_user: bool = False) -> ApprovalError:
    if by_user:
        return ApprovalError("patch rejected by user.", hint="Nothing was written; revise the patch "
                             "or ask the user what to change.", details={"reason": reason})
    return ApprovalError(f"patch rejected: {reason}.",
                         hint="The approval policy forbids this change; leave those paths out.",
                         details={"reason": reason})


def enforce(plan: Plan, hook: ApprovalHook, ask: Callable[[Plan, str], bool] | None) -> Verdict:
    """Apply a hook's verdict: reject raises, ask consults ``ask`` (no asker: treated as a no)."""
    verdict = hook(plan)
    if verdict.decision is Decision.REJECT:
        raise rejection(verdict.reason)
    if verdict.decision is Decision.ASK:
        if ask is None or not ask(plan, verdict.reason):
            raise rejection(verdict.reason, by_user=ask is not None)
    return verdict
