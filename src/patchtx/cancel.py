"""A call's cancellation: set by its host from another thread, checked by the stages at the points
where stopping leaves nothing behind.

The MCP server makes one per tool call and sets it when the client cancels the request
(``notifications/cancelled``, which SDK clients also send when their own time limit runs out). The
planner looks at it for each path it plans, the commit before it publishes its journal, after each
file it writes, while the verify command runs (which it then stops) and last, under the workspace
lock, just before the commit point; at each of them a cancelled call raises ``CancelledError`` and
the transaction rolls back as any failed one does. A call past its commit point is not stopped:
its change stands and ``log`` lists it (docs/integrations.md, "Cancelling a call").
"""

from __future__ import annotations

from .errors import CancelledError


class Cancellation:
    """Whether a call was cancelled, and by whom. ``cancel`` may be called from any thread (a
    plain attribute written once: the checks read it without a lock)."""

    # (Hand-written, not a record: shared state set from another thread, compared by identity.)
    __slots__ = ("reason",)

    def __init__(self) -> None:
        self.reason: str | None = None
        """Who cancelled, in words (None: not cancelled)."""

    def cancel(self, reason: str = "the client cancelled the call") -> None:
        if self.reason is None:
            self.reason = reason

    @property
    def requested(self) -> bool:
        return self.reason is not None

    def check(self, doing: str) -> None:
        """Raise ``CancelledError`` if the call was cancelled; ``doing`` says where it was."""
        if self.reason is not None:
            raise CancelledError(
                f"Stopped while {doing}: {self.reason}, before the change was committed.",
                hint="A call cancelled after its commit point is kept (`log` lists it).",
                details={"cancelled": self.reason})
