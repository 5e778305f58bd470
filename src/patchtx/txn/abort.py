"""The commit's failure path (docs/guarantees.md, section 3, "Failure during steps 5-7"): undo
what a transaction did so far and word why, and the recovery a commit runs first (step 3).

``Abort`` is a part of the commit's transaction (``commit._Transaction`` is one); the state it
reads is declared here. Recovery's code is loaded only on a failure, or when there is something
to recover (``_load_roll_back``, ``recover_leftovers``); everything else is imported at the top,
as in ``failures``: the failure may be EMFILE, and then no import can open its file.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..errors import ChangedSincePlanningError, FilesystemError, PatchtxError, VerifyFailedError
from .escrow import has_copies
from .failures import describe_errno, filesystem_error  # (up front: no import works once EMFILE is the failure)
from .fsops import join
from .layout import JOURNAL_DIR, STATE_DIR, JournalListing, journal_name
from .reports import left_in_place_sentence
from .statedir import gitignore_in_place

if TYPE_CHECKING:
    from collections.abc import Callable

    from .dirs import DirectoryHandles
    from .escrow import Escrow
    from .fsops import FileSystemOps
    from .journal import Journal
    from .precheck import _Target
    from .reports import RecoveredTransaction
    from .verify import VerifyOutcome


class Abort:
    """A failed transaction undone (``abort``), and how its errors name its files (``label``)."""

    fs: FileSystemOps
    dirs: DirectoryHandles
    durable: bool
    txn: str
    targets: list[_Target]
    check: Callable[..., None] | None
    journal: Journal | None
    unpublished: list[str]
    published: bool
    marked: bool
    checked: bool
    escrow: Escrow | None
    state_restored: list[str]
    rolled_back: RecoveredTransaction | None
    held: dict[str, int]

    def abort(self, exc: BaseException) -> BaseException:
        """Undo everything done so far; return the exception to raise in place of ``exc``."""
        error = self._as_patchtx_error(exc)  # now: it describes the failed call, the last one so far
        undo_error: BaseException | None = None
        touched_tree = self.published  # before publishing, nothing outside the journal folder exists
        try:
            journal_fd = self.dirs.open(JOURNAL_DIR)
            if self.published:
                assert self.journal is not None
                if self.marked:
                    # The commit point was reached but could not be made durable: un-mark, so
                    # that the journal again means "roll back" for this roll back and any rerun
                    # — durably, before the tree is touched: were the power cut with the mark
                    # still on disk, recovery would keep a half-rolled-back tree (and list it).
                    marked = self.journal.committed_file_name
                    try:
                        self.fs.rename(journal_fd, marked, journal_fd, journal_name(self.txn))
                    except Exception:
                        return self._applied_but_maybe_not_durable(error)
                    try:
                        if self.durable:
                            self.fs.fsync([journal_fd])
                    except Exception:
                        # Either name may be on disk: leave the tree whole (after) and marked.
                        # Should even that fail, the error below says recovery must finish.
                        self.fs.rename(journal_fd, journal_name(self.txn), journal_fd, marked)
                        return self._applied_but_maybe_not_durable(error)
                # After the check started, every path the transaction touches is put back whatever
                # the check left there (it ran inside the transaction, under its lock).
                ours = self.journal.touched_paths if self.checked else _changed_by_check(exc)
                self.rolled_back = _load_roll_back(self.dirs)(self.fs, self.dirs, self.journal,
                                                              durable=self.durable, ours=ours, escrow=self.escrow,
                                                              held=self.held)
                if self.escrow is not None:
                    self.escrow.remove(self.txn)
            else:
                for name in self.unpublished:
                    if self.fs.lstat(journal_fd, name) is not None:
                        self.fs.unlink(journal_fd, name)
        except Exception as second:
            undo_error = second
        finally:
            if self.escrow is not None:
                self.escrow.close()
            self._close_held()
        if isinstance(exc, KeyboardInterrupt) and undo_error is None:
            return exc
        if undo_error is None and isinstance(error, VerifyFailedError) and self.rolled_back is not None:
            return _with_roll_back(error, self.rolled_back, self.state_restored,
                                   getattr(self.check, "outcome", None))
        if undo_error is None or not touched_tree:
            return error  # leftovers in the journal folder alone are discarded by the next run
        if isinstance(undo_error, OSError):
            name, description = describe_errno(undo_error.errno)
            why = f"{description} ({name})"
            if undo_error.filename:
                why += f" on {self.label(str(undo_error.filename))}"
        else:
            why = str(undo_error)
        return FilesystemError(
            f"{error.headline} Undoing the partial commit then failed too: {why}.",
            errno_name=error.details.get("errno"),
            path=error.path,
            changed=True,
            hint=(
                f"The journal in {JOURNAL_DIR} was kept: once the cause is fixed, run"
                " `patchtx recover` (or apply again), which puts every original back."
            ),
        )

    def _as_patchtx_error(self, exc: BaseException) -> PatchtxError:
        if isinstance(exc, PatchtxError):
            return exc
        if isinstance(exc, OSError):
            return filesystem_error(exc, self.fs, label=self.label)
        return PatchtxError(f"Internal error while committing the patch: {exc!r}.")

    def _applied_but_maybe_not_durable(self, error: PatchtxError) -> PatchtxError:
        return FilesystemError(
            f"{error.headline} The patch is nevertheless applied in full (its journal is marked"
            " committed and could not be un-marked), but it may not survive a power loss.",
            errno_name=error.details.get("errno"),
            path=error.path,
            changed=True,
            hint=(
                "Check the disk. Recovery (run by the next commit, or `patchtx recover`) keeps the"
                " new contents and only deletes the journal."
            ),
        )

    def label(self, path: str) -> str:
        """Name internal files by what they stand for, in error messages."""
        for t in self.targets:
            if t.temp is not None and path == join(t.parent, t.temp):
                return f"the new contents of {t.path}"
            if t.backup is not None and path == f"{JOURNAL_DIR}/{t.backup}":
                return f"the preserved original of {t.path}"
        if path.startswith(JOURNAL_DIR + "/"):
            return "the transaction journal"
        return path

    def _close_held(self) -> None:
        while self.held:
            self.fs.close(self.held.popitem()[1])


def _with_roll_back(error: VerifyFailedError, rolled_back: RecoveredTransaction,
                    state_restored: list[str], outcome: VerifyOutcome | None = None) -> VerifyFailedError:
    """The failed check's error, saying exactly what the roll back put back where the check had
    changed it (a folder or a link in a file's place, a file deleted), what it left in place (what
    patchtx did not write, in the places the patch created), and what of patchtx's own state the
    check had removed. ``outcome``: the check's, to say again which of the files it changed were
    put back (those left in place were not)."""
    verify = dict(error.details.get("verify", {}))
    what = error.headline
    if outcome is not None and set(outcome.changed) & set(rolled_back.left_in_place):
        from .verify import verify_failed  # (off a one-line edit's path: a failed check only)

        what = verify_failed(outcome, frozenset(rolled_back.left_in_place)).headline
    if state_restored:
        count = len(state_restored)
        what += (f" The check had deleted or changed {count} file{'s' if count != 1 else ''}"
                 f" of {STATE_DIR} (the transaction's journal and before-images): patchtx put them back from"
                 " its own copy first.")
    verify["state_restored"] = list(state_restored)
    verify["rolled_back"] = {"restored": list(rolled_back.restored), "removed": list(rolled_back.removed),
                             "removed_dirs": list(rolled_back.removed_dirs),
                             "recreated_dirs": list(rolled_back.recreated_dirs),
                             "not_restored": list(rolled_back.conflicts),
                             "left_in_place": list(rolled_back.left_in_place),
                             "kept_dirs": list(rolled_back.kept_dirs)}
    if rolled_back.conflicts:
        what += " Could not put back: " + ", ".join(rolled_back.conflicts) + "."
    if rolled_back.left_in_place:
        what += " " + left_in_place_sentence(rolled_back)
    # Something remains that was not there before: the error must not say "Nothing was changed".
    remains = bool(rolled_back.conflicts or rolled_back.left_in_place)
    return VerifyFailedError(what, hint=error.hint, details={**error.details, "verify": verify}, changed=remains)


def _changed_by_check(exc: BaseException) -> frozenset[str]:
    """The files the patch wrote that its own verify command then changed (a failed check): the
    roll back puts them back too, so that a failed commit leaves every file as it was."""
    if isinstance(exc, VerifyFailedError):
        return frozenset(exc.details.get("verify", {}).get("changed", ()))
    return frozenset()


def _load_roll_back(dirs: DirectoryHandles) -> Callable[..., RecoveredTransaction]:
    """``recovery.roll_back``, loaded on a failure only (a commit that succeeds never needs it).

    An import opens files: where the failure being undone is that the process ran out of
    descriptors (EMFILE: another thread took them meanwhile), loading recovery fails too, while
    the roll back itself mostly renames. The commit's cached folder descriptors are then closed
    and the import tried again; the roll back reopens the folders it needs one by one."""
    try:
        from .recovery import roll_back  # (off a one-line edit's path)
    except OSError:
        dirs.close_all()
        from .recovery import roll_back  # (off a one-line edit's path)
    return roll_back


def _after_recovery(
    exc: ChangedSincePlanningError, recovered: tuple[RecoveredTransaction, ...]
) -> ChangedSincePlanningError:
    """The same error, saying that recovery ran first: the plan was likely made from a tree an
    interrupted transaction had left half-applied, which recovery has just put back."""
    ids = ", ".join(t.transaction_id for t in recovered)
    return ChangedSincePlanningError(
        exc.headline,
        hint=(
            f"Before checking, patchtx recovered the interrupted transaction {ids}, which likely"
            f" explains it; the tree is now as before that transaction. {exc.hint}"
        ),
        path=exc.path,
        details=exc.details,
    )


def recover_leftovers(
    fs: FileSystemOps, dirs: DirectoryHandles, *, durable: bool, set_up: bool
) -> tuple[tuple[RecoveredTransaction, ...], JournalListing | None]:
    """``recovery.recover_workspace``, imported only if it may have something to do (the caller holds
    the lock): the journal folder holds anything but undo-history entries, or the state folder
    lacks its .gitignore. Usually neither, and a commit then spends no time loading recovery.
    ``set_up``: ``ensure_state_dir`` has just found the .gitignore in place (nothing in patchtx
    removes it), so it is not read again.

    Also returns the journal folder's listing when recovery had nothing to do (None otherwise), for
    the undo history to reuse: that folder holds its before-images, possibly thousands."""
    state_fd = dirs.lookup(STATE_DIR)
    if state_fd is None:
        return (), None
    # A copy outside the workspace: a transaction interrupted while its check ran, which may have
    # deleted the journal folder (escrow).
    if (set_up or gitignore_in_place(fs, state_fd)) and not has_copies(dirs.root):
        journal_fd = dirs.lookup(JOURNAL_DIR)
        if journal_fd is None:
            return (), None
        listing = JournalListing(fs.listdir(journal_fd))
        if not listing.has_unfinished_work:
            return (), listing
    from .recovery import recover_workspace  # (off a one-line edit's path)

    return recover_workspace(fs, dirs, durable=durable), None
