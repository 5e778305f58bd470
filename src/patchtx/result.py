"""``Result``: what an apply (or a dry run, an undo, a redo) came to, and its one JSON shape.

It sits above the renderer (result -> render -> model): ``to_json`` renders the plan's diffs.
"""

from __future__ import annotations

from ._record import record

TYPE_CHECKING = False
if TYPE_CHECKING:
    from .model import Plan
    from .txn.reports import RecoveryReport
    from .verify import VerifyOutcome


@record
class Result:
    plan: Plan
    committed: bool
    dry_run: bool = False
    transaction_id: str | None = None
    fsyncs: int = 0
    recovery: RecoveryReport | None = None
    """What was recovered of earlier interrupted transactions before this one ran (None: there
    was nothing to recover)."""
    undone: str | None = None
    """For an undo (and a redo, which undoes an undo): the id of the transaction it undid."""
    redone: str | None = None
    """For a redo: the id of the transaction it put back (the one the undone undo had undone)."""
    verify: VerifyOutcome | None = None
    """What the host's verify command did before the change was kept (None: no verify command)."""

    @property
    def recovered(self) -> bool:
        """Whether an earlier interrupted transaction was recovered before this one ran."""
        return self.recovery is not None

    @property
    def summary(self) -> str:
        return self.plan.summary

    def to_json(self, *, with_diff: bool = True) -> dict[str, object]:
        """The one result shape of every surface (CLI ``--json``, MCP, tool calls), as
        ``docs/result.schema.json`` describes it."""
        from .render import result_json  # (not for a drop-in apply_patch run, which prints no diff)

        return result_json(self, with_diff=with_diff)
