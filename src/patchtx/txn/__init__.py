"""The transaction manager: the only part of patchtx that writes to the workspace.

``commit(plan)`` applies a Plan as one crash-safe transaction; ``recover(root)`` finishes or undoes
one that was interrupted. The protocol and its crash reasoning are in docs/guarantees.md.
"""

from __future__ import annotations

from .fsops import Call, FileSystemOps
from .recovery import recover
from .reports import CommitReport, RecoveredTransaction, RecoveryReport
from .transaction import Retention, RetentionContext, commit

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
