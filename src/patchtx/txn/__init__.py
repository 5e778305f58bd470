"""The transaction manager: the only part of patchtx that writes to the workspace.

``commit(plan)`` applies a Plan as one crash-safe transaction; ``recover(root)`` finishes or undoes
one that was interrupted. The protocol and its crash reasoning are in docs/guarantees.md.
"""

from __future__ import annotations

from .commit import commit
from .fsops import Call, FileSystemOps
from .reports import CommitReport, RecoveredTransaction, RecoveryReport
from .retention import Retention, RetentionContext

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from .recovery import recover

__all__ = [
    "Call",
    "CommitReport",
    "FileSystemOps",
    "RecoveredTransaction",
    "RecoveryReport",
    "Retention",
    "RetentionContext",
    "commit",
    "recover",
]


def __getattr__(name: str) -> Any:
    # recovery loads on first use: a commit imports it only when there is something to recover.
    if name == "recover":
        from . import recovery  # (off a one-line edit's path)

        return getattr(recovery, name)
    raise AttributeError(f"module 'patchtx.txn' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
