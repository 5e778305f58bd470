"""The library surface: parse, plan (dry run) and apply, each a thin composition of the stages."""

from __future__ import annotations

import os

from .errors import PolicyError
from .model import Patch, Plan, Result
from .parser import parse
from .planner import plan
from .policy import PlanOptions, load_workspace_options

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Sequence

PathLike = str | os.PathLike[str]


def _patches(patches: str | Patch | Sequence[str | Patch], options: PlanOptions) -> list[Patch]:
    if isinstance(patches, str | Patch):
        patches = [patches]
    limit = options.max_patch_bytes
    if limit is not None:
        size = sum(len(p.encode("utf-8")) for p in patches if isinstance(p, str))
        if size > limit:
            raise PolicyError(f"Refusing the patch: it is {size} bytes, more than the limit of "
                              f"{limit}.", hint="Split it into smaller patches.",
                              details={"bytes": size, "limit": limit})
    return [parse(p) if isinstance(p, str) else p for p in patches]


def options_for(root: PathLike, **overrides: bool | int | tuple[str, ...] | None) -> PlanOptions:
    """The workspace's ``[tool.patchtx]`` options with explicit (non-None) arguments on top."""
    return load_workspace_options(root).with_overrides(**overrides)


def plan_patch(
    patches: str | Patch | Sequence[str | Patch],
    root: PathLike = ".",
    *,
    allow_overwrite: bool | None = None,
    allow_delete: bool | None = None,
    allow_move: bool | None = None,
    first_match: bool | None = None,
    protected: tuple[str, ...] | None = None,
    intent: str | None = None,
) -> Plan:
    """Parse and plan without writing. Several patches are planned in order as one.

    Options left as None come from the workspace's ``[tool.patchtx]`` table, then the defaults.
    """
    options = options_for(root, allow_overwrite=allow_overwrite, allow_delete=allow_delete,
                          allow_move=allow_move, first_match=first_match, protected=protected)
    parsed = _patches(patches, options)
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
    allow_overwrite: bool | None = None,
    allow_delete: bool | None = None,
    allow_move: bool | None = None,
    first_match: bool | None = None,
    protected: tuple[str, ...] | None = None,
    durable: bool = True,
    lock_timeout: float = 30.0,
    intent: str | None = None,
) -> Result:
    """Apply one or more patches to ``root`` as a single transaction; raise PatchtxError on
    failure, in which case nothing was changed."""
    planned = plan_patch(patches, root, allow_overwrite=allow_overwrite,
                         allow_delete=allow_delete, allow_move=allow_move,
                         first_match=first_match, protected=protected, intent=intent)
    if dry_run:
        return Result(planned, committed=False, dry_run=True)
    return apply_plan(planned, durable=durable, lock_timeout=lock_timeout)
