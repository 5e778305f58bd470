"""What a commit or a recovery did, as plain values."""

from __future__ import annotations

from typing import TYPE_CHECKING

from .._record import as_json, record

if TYPE_CHECKING:
    from typing import Any, Literal

    Outcome = Literal["rolled_back", "rolled_forward", "discarded"]


@record
class RecoveredTransaction:
    """One interrupted transaction found in the journal folder, and what recovery did with it."""

    transaction_id: str
    outcome: Outcome
    """rolled_back: it had not committed, its originals were put back. rolled_forward: it had
    committed, only its journal was cleaned up. discarded: its journal was never published, so the
    tree was never touched."""
    restored: tuple[str, ...] = ()
    """Paths whose original was put back."""
    removed: tuple[str, ...] = ()
    """Paths the transaction had added, removed again."""
    removed_dirs: tuple[str, ...] = ()
    """Directories the transaction had created, removed again."""
    recreated_dirs: tuple[str, ...] = ()
    """Directories the transaction had removed, created again."""
    conflicts: tuple[str, ...] = ()
    """Paths that existed before the transaction, left as found because something else changed
    them after the interruption (not put back)."""
    left_in_place: tuple[str, ...] = ()
    """What the roll back found where the transaction had created something (an added file's path,
    inside a folder it created) that it did not write, left as found: patchtx deletes only what it
    can prove it wrote. A folder is named, not what it holds."""
    kept_dirs: tuple[str, ...] = ()
    """Folders the transaction created, kept because they hold something of ``left_in_place``
    (deepest first)."""

    to_json = as_json


@record
class RecoveryReport:
    transactions: tuple[RecoveredTransaction, ...] = ()
    fsyncs: int = 0

    @property
    def nothing_to_do(self) -> bool:
        return not self.transactions

    def to_json(self) -> dict[str, Any]:
        return {
            "nothing_to_do": self.nothing_to_do,
            "fsyncs": self.fsyncs,
            "transactions": [txn.to_json() for txn in self.transactions],
        }

    @property
    def summary(self) -> str:
        if self.nothing_to_do:
            return "Nothing to recover."
        lines = []
        for txn in self.transactions:
            if txn.outcome == "rolled_back":
                lines.append(
                    f"Rolled back interrupted transaction {txn.transaction_id}: restored"
                    f" {len(txn.restored)}, removed {len(txn.removed)} file(s)."
                )
            elif txn.outcome == "rolled_forward":
                lines.append(f"Transaction {txn.transaction_id} had committed; cleaned up its journal.")
            else:
                lines.append(f"Discarded the unpublished journal of {txn.transaction_id} (the tree was never touched).")
            if txn.conflicts:
                lines.append("Left as found (changed after the interruption): " + ", ".join(txn.conflicts))
            if txn.left_in_place:
                lines.append(left_in_place_sentence(txn))
        return "\n".join(lines)


@record
class CommitReport:
    transaction_id: str | None
    """None when the plan had nothing to write (no transaction was started)."""
    fsyncs: int
    """Durability calls made (fsync and syncfs each count one), recovery included."""
    written: tuple[str, ...] = ()
    """Paths that now hold new contents (added or replaced)."""
    removed: tuple[str, ...] = ()
    created_dirs: tuple[str, ...] = ()
    removed_dirs: tuple[str, ...] = ()
    kept_dirs: tuple[str, ...] = ()
    """Directories the plan asked to remove that were not empty, so were kept."""
    durable: bool = True
    recovery: RecoveryReport | None = None
    """What was recovered from an earlier interrupted transaction before this one started."""
    cleanup_pending: bool = False
    """The commit is complete, but deleting its journal failed; the next run finishes it."""
    retention_error: str | None = None
    """The commit is complete, but its retention hook (undo history) failed with this error."""
    state_restored: tuple[str, ...] = ()
    """Files of the state folder its verify command deleted or changed, put back from memory
    before the commit point (the journal, its before-images, the folders)."""


def left_in_place_sentence(txn: RecoveredTransaction) -> str:
    """What a roll back left in place, as one sentence (a recovery's summary, a failed check's error)."""
    text = ("Left in place, not written by patchtx (it deletes only what it can prove it wrote): "
            + ", ".join(txn.left_in_place))
    if txn.kept_dirs:
        text += ("; kept with it, the folder" + ("s" if len(txn.kept_dirs) > 1 else "")
                 + " the patch had created: " + ", ".join(txn.kept_dirs))
    return text + "."
