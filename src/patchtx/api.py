"""The library surface: parse, plan (dry run) and apply, each a thin composition of the stages."""

from __future__ import annotations

import os
from collections.abc import Sequence

from .model import Patch, Plan, Result
from .parser import parse
from .planner import PlanOptions, plan

PathLike = str | os.PathLike[str]


def _patches(patches: str | Patch | Sequence[str | Patch]) -> list[Patch]:
    if isinstance(patches, str | Patch):
        patches = [patches]
    return [parse(p) if isinstance(p, str) else p for p in patches]


def plan_patch(
    patches: str | Patch | Sequence[str | Patch],
    root: PathLike = ".",
    *,
    allow_overwrite: bool = False,
    allow_delete: bool = True,
    allow_move: bool = True,
    first_match: bool = False,
    intent: str | None = None,
) -> Plan:
    """Parse and plan without writing. Several patches are planned in order as one."""
    parsed = _patches(patches)
    options = PlanOptions(allow_overwrite=allow_overwrite, allow_delete=allow_delete,
                          allow_move=allow_move, first_match=first_match)
    combined = parsed[0] if len(parsed) == 1 else Patch(
        tuple(h for p in parsed for h in p.hunks), "\n".join(p.text for p in parsed))
    return plan(combined, root, options, intent=intent)


def apply_plan(plan_: Plan, *, durable: bool = True, lock_timeout: float = 30.0) -> Result:
    """Commit a Plan through the transaction manager (all or nothing)."""
    from .txn import commit

    report = commit(plan_, durable=durable, lock_timeout=lock_timeout)
    return Result(plan_, committed=True, transaction_id=report.transaction_id,
                  fsyncs=report.fsyncs)


def apply_patch(
    patches: str | Patch | Sequence[str | Patch],
    root: PathLike = ".",
    *,
    dry_run: bool = False,
    allow_overwrite: bool = False,
    allow_delete: bool = True,
    allow_move: bool = True,
    first_match: bool = False,
    durable: bool = True,
    lock_timeout: float = 30.0,
    intent: str | None = None,
) -> Result:
    """Apply one or more patches to ``root`` as a single transaction; raise PatchtxError on
    failure, in which case nothing was changed."""
    planned = plan_patch(patches, root, allow_overwrite=allow_overwrite,
                         allow_delete=allow_delete, allow_move=allow_move,
                         first_match=first_match, intent=intent)
    if dry_run:
        return Result(planned, committed=False, dry_run=True)
    return apply_plan(planned, durable=durable, lock_timeout=lock_timeout)
