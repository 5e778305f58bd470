"""Commit: turn a Plan into disk state as one crash-safe transaction (rollback journal).

The steps, and why each is safe to interrupt, are written down in docs/guarantees.md. In short:

1. lock, 2. recover leftovers, 3. preserve each original (a hard link into the journal folder)
and verify, through it, that every target still holds what the plan was computed from, 4. publish
a durable journal — from here on recovery rolls back —, 5. write new contents to temporary files
next to their targets, make them durable, 6. delete, remove emptied directories, create needed
ones, rename temporaries over targets, make the directories durable, 7. mark the journal committed
durably — from here on recovery rolls forward — and delete it, or keep it with its before-images as
the undo-history entry.

Step 3 (verify and preserve) is ``precheck``; what a failure undoes, and the recovery run before,
``abort``: ``_Transaction`` is made of the three.
"""

from __future__ import annotations

import errno
import hashlib
import os
import stat
from typing import TYPE_CHECKING

from .._record import replace
from ..errors import ChangedSincePlanningError
from ..model import Plan
from ..options import DEFAULT_COMMIT
from .abort import Abort, _after_recovery, recover_leftovers
from .dirs import DirectoryHandles
from .escrow import Escrow
from .failures import filesystem_error  # (up front: no import works once EMFILE is the failure)
from .fsops import FileSystemOps, give_owner, split_path
from .gate import check_paths, check_plan
from .journal import Journal, JournalEntry, RemovedDir
from .layout import (
    JOURNAL_DIR,
    STATE_DIR,
    JournalListing,
    committed_name,
    journal_name,
    new_transaction_id,
    temp_name,
    unpublished_journal_name,
)
from .lock import workspace_lock
from .precheck import Precheck, _Target, changed
from .reports import CommitReport, RecoveryReport
from .retention import Retention, RetentionContext
from .statedir import ensure_state_dir, tidy_state_dir
from .sync import Syncer, SyncMode

if TYPE_CHECKING:
    from collections.abc import Callable, Mapping
    from typing import Any, Protocol

    from ..cancel import Cancellation
    from ..options import PlanOptions
    from .reports import RecoveredTransaction
else:
    Protocol = object

# Barriers of a commit: journal data, journal directory, new files, changed directories, mark
# (keeping undo history adds none: the kept journal is the entry).
_COMMIT_BARRIERS = 5


if TYPE_CHECKING:
    Progress = Callable[[str, int, int], None]
    Check = Callable[[FileSystemOps, DirectoryHandles, Plan], None]
"""``Progress`` is called as ``progress(phase, done, total)`` while a commit works through its files; phases are
"checking" (verifying every target against the plan), "writing" (new contents and deletions) and
"verifying" (the verify command: seconds run, out of its time limit)."""


def commit(
    plan: Plan,
    *,
    durable: bool = DEFAULT_COMMIT.durable,
    lock_timeout: float = DEFAULT_COMMIT.lock_timeout,
    fs: FileSystemOps | None = None,
    retention: Retention | None = None,
    progress: Progress | None = None,
    dir_modes: Mapping[str, int] | None = None,
    policy: PlanOptions | None = None,
    check: Check | None = None,
    cancel: Cancellation | None = None,
) -> CommitReport:
    """Apply ``plan.targets`` and ``plan.remove_dirs`` to ``plan.root``: all of it, or none of it.

    Raises a PatchtxError with ``changed=False`` when nothing was changed (the usual case for any
    failure, the tree having been rolled back), ``changed=True`` only if rolling back failed too
    (the journal is then kept and the next commit or ``recover`` finishes the roll back).
    ``durable=False`` makes no fsync at all: still atomic against a crashed process, not against
    a power cut. ``retention`` keeps the before-images as part of the transaction (undo history);
    ``progress`` is told how far the commit is; ``dir_modes`` gives the mode of directories the
    commit creates (default: 0o777 less the umask), so that an undo can recreate them exactly.
    ``check`` runs once every change is in place and durable, before the commit point (the verify
    step, ``patchtx.txn.verify``): if it raises, the commit rolls back. ``cancel`` (``patchtx.cancel``)
    is looked at before the journal is published, after each file written, before ``check`` and
    last, under the lock, just before the commit point: a cancelled commit rolls back.

    Every plan passes the gate (``gate``): its paths by the one path rule, and what it does
    against ``policy`` (the host's ceiling as the caller has it; None: the host's config and
    environment), tightened by the workspace's policy, under every name each file has.
    """
    fs = FileSystemOps() if fs is None else fs
    fsyncs_at_start = fs.fsyncs
    check_paths(plan)
    if not plan.targets and not plan.remove_dirs:
        return CommitReport(transaction_id=None, fsyncs=0, durable=durable)
    try:
        root_fd = fs.open_root(plan.root)
    except OSError as exc:
        raise filesystem_error(exc, fs, doing="open the workspace") from exc
    dirs = DirectoryHandles(fs, root_fd, root=plan.root)
    try:
        try:
            set_up = ensure_state_dir(fs, dirs, durable=durable)
        except OSError as exc:
            raise filesystem_error(exc, fs, doing=f"prepare the {STATE_DIR} folder") from exc
        with workspace_lock(plan.root, dirs, lock_timeout):
            if not set_up:
                # A failed or interrupted setup's temporaries, removed under the lock as recovery
                # removes them (one in flight, of a setup racing this one, is written again).
                try:
                    tidy_state_dir(fs, dirs)
                except OSError as exc:
                    raise filesystem_error(exc, fs, doing=f"prepare the {STATE_DIR} folder") from exc
            calls_before = fs.calls
            try:
                recovered, listing = recover_leftovers(fs, dirs, durable=durable, set_up=set_up)
            except OSError as exc:
                if fs.calls == calls_before:  # failed while looking (EMFILE, EIO...): nothing done
                    raise filesystem_error(
                        exc, fs, doing=f"look for an interrupted transaction in {JOURNAL_DIR}"
                    ) from exc
                raise filesystem_error(
                    exc,
                    fs,
                    doing="recover an earlier interrupted transaction (the patch was not applied)",
                    changed=True,
                    hint="Fix the cause and apply again: recovery is safe to repeat.",
                ) from exc
            transaction = _Transaction(
                fs,
                dirs,
                plan,
                durable=durable,
                retention=retention,
                progress=progress,
                dir_modes=dir_modes,
                listing=listing,
                policy=policy,
                check=check,
                cancel=cancel,
            )
            try:
                transaction.verify()
            except ChangedSincePlanningError as exc:
                if not recovered:
                    raise
                raise _after_recovery(exc, recovered) from exc
            try:
                transaction.execute()
            except (Exception, KeyboardInterrupt) as exc:
                replacement = transaction.abort(exc)
                if replacement is exc:
                    raise
                raise replacement from exc
            cleanup_pending = transaction.dispose()
            return transaction.report(
                fsyncs=fs.fsyncs - fsyncs_at_start,
                recovery=RecoveryReport(recovered) if recovered else None,
                cleanup_pending=cleanup_pending,
            )
    finally:
        dirs.close_all()
        fs.close(root_fd)


class _Transaction(Precheck, Abort):
    """One commit: its state, and its steps (step 3 in ``Precheck``, the failure path in ``Abort``)."""

    def __init__(
        self,
        fs: FileSystemOps,
        dirs: DirectoryHandles,
        plan: Plan,
        *,
        durable: bool,
        retention: Retention | None = None,
        progress: Progress | None = None,
        dir_modes: Mapping[str, int] | None = None,
        listing: JournalListing | None = None,
        policy: PlanOptions | None = None,
        check: Check | None = None,
        cancel: Cancellation | None = None,
    ):
        self.fs = fs
        self.dirs = dirs
        self.plan = plan
        self.durable = durable
        self.retention = retention
        self.retention_error: str | None = None
        self.progress = progress
        self.dir_modes = dir_modes or {}
        self.txn = new_transaction_id()
        self.targets = [_Target(i, t) for i, t in enumerate(plan.targets)]
        self.create_dirs: list[str] = []
        self.remove_dirs: list[RemovedDir] = []
        self.removed_dirs: list[str] = []
        self.kept_dirs: list[str] = []
        self.journal: Journal | None = None
        self.listing = listing
        self.policy = policy
        self.check = check
        self.cancel = cancel
        # What exists so far, for an abort: names in the journal folder before it is published,
        # then whether the journal is published / marked committed.
        self.unpublished: list[str] = []
        self.published = False
        self.marked = False
        # With a check: the journal's bytes and its file as published, the copy outside the
        # workspace (``escrow``), whether the check has started, what of the state folder it
        # deleted or changed (put back from memory), and what the roll back then did.
        self.journal_bytes = b""
        self.journal_stat: os.stat_result | None = None
        self.escrow: Escrow | None = None
        self.checked = False
        self.state_restored: list[str] = []
        self.rolled_back: RecoveredTransaction | None = None
        # Files rewritten in place (with other hard links), kept open while the check runs.
        self.held: dict[str, int] = {}

    # -- step 3 ---------------------------------------------------------------------------------

    def verify(self) -> None:
        """Check every target still holds what the plan was computed from, preserving each
        original in the journal folder on the way (hard links, not yet named by any journal), and
        that the gate lets what the plan does through (``gate.check_plan``); if a check fails,
        those links are removed and nothing else was written."""
        try:
            try:
                self._verify()
                check_plan(self.plan, self.policy, self.dirs,
                           ((t.path, t.original, t.names) for t in self.targets))
            except OSError as exc:
                raise filesystem_error(exc, self.fs, doing="check the files against the plan",
                                       label=self.label) from exc
        except (Exception, KeyboardInterrupt) as exc:
            replacement = self.abort(exc)
            if replacement is exc:
                raise
            raise replacement from exc
        if self.progress is not None:
            self.progress("checking", len(self.targets), len(self.targets))

    # -- steps 4 to 7 ---------------------------------------------------------------------------

    def execute(self) -> None:
        for t in self.targets:
            if t.target.after is not None and not t.in_place:
                t.temp = temp_name(self.txn, t.index)
        syncer = Syncer(
            self.fs,
            self.dirs,
            durable=self.durable,
            budget=len(self.targets) + 4,
            barriers=_COMMIT_BARRIERS,
        )
        self._stop_if_cancelled("starting the commit")
        self._write_journal(syncer)
        self._apply(syncer)
        if self.check is not None:
            self._stop_if_cancelled("about to run the check")
            self._run_check(self.check)
        # The last look, under the lock: past the mark the change stands whatever comes.
        self._stop_if_cancelled("about to commit")
        self._mark_committed(syncer)

    def _stop_if_cancelled(self, doing: str) -> None:
        if self.cancel is not None:
            self.cancel.check(doing)

    def _run_check(self, check: Check) -> None:
        """The tree is as after, the journal still says "roll back": a failed check, or a crash
        while it runs, ends before the patch. What the check may do to the workspace, the journal
        included, is undone from what the commit holds: a copy of the journal outside the workspace
        first (``escrow``, for recovery after a kill), and afterwards the journal folder put back
        from memory (``_reestablish_journal``) before the outcome is settled. Passed: the copy is
        deleted before the commit point; failed: after the roll back (``abort``)."""
        assert self.journal is not None
        escrow = self.escrow = Escrow(self.fs, self.plan.root)
        journal_fd = self.dirs.open(JOURNAL_DIR)
        images = [(journal_fd, t.backup, t.target.before) for t in self.targets
                  if t.backup is not None and t.target.before is not None]
        escrow.write(self.journal, self.journal_bytes, images, durable=self.durable)
        self.checked = True
        try:
            check(self.fs, self.dirs, self.plan)
        finally:
            self.dirs.close_all()  # the check may have replaced any folder: each is looked up anew
            self._reestablish_journal()
        escrow.remove(self.txn)
        escrow.close()
        self._close_held()

    def _reestablish_journal(self) -> None:
        """Put back, from memory, what the check deleted or changed of the state folder: the
        folders, the journal file, each before-image (from the plan's before-bytes, with the
        original's mode and owner), durably. The roll back (or the commit point, and with it the
        undo-history entry) then stands on what this transaction wrote, whatever the check did."""
        assert self.journal is not None
        fs, dirs = self.fs, self.dirs
        restored = self.state_restored
        for path in (STATE_DIR, JOURNAL_DIR):
            parent, name = split_path(path)
            parent_fd = dirs.lookup(parent)
            st = None if parent_fd is None else fs.lstat(parent_fd, name)
            if st is None:
                restored.append(path + "/")
            elif not stat.S_ISDIR(st.st_mode):
                assert parent_fd is not None
                fs.unlink(parent_fd, name)  # a file or a link the check left in its place
                restored.append(path + "/")
        ensure_state_dir(fs, dirs, durable=self.durable)
        journal_fd = dirs.open(JOURNAL_DIR)
        to_sync: list[int] = []
        try:
            for t in self.targets:
                if t.backup is None or t.target.before is None:
                    continue
                st = fs.lstat(journal_fd, t.backup)
                if st is not None and _same_file(st, t.backup_stat):
                    continue
                if st is not None:
                    fs.unlink(journal_fd, t.backup)
                to_sync.append(self._copy_original(t, record=False))
                restored.append(f"{JOURNAL_DIR}/{t.backup}")
            name = journal_name(self.txn)
            st = fs.lstat(journal_fd, name)
            if st is None or not _same_file(st, self.journal_stat):
                if st is not None:
                    fs.unlink(journal_fd, name)
                pending = unpublished_journal_name(self.txn)
                if fs.lstat(journal_fd, pending) is not None:
                    fs.unlink(journal_fd, pending)
                fd = fs.create(journal_fd, pending, 0o600)
                to_sync.append(fd)
                fs.write(fd, self.journal_bytes)
                if self.durable:
                    fs.fsync(to_sync)
                fs.rename(journal_fd, pending, journal_fd, name)
                restored.append(f"{JOURNAL_DIR}/{name}")
            elif to_sync and self.durable:
                fs.fsync(to_sync)
        finally:
            for fd in to_sync:
                fs.close(fd)
        if restored and self.durable:
            fs.fsync([journal_fd])

    def _write_journal(self, syncer: Syncer) -> None:
        to_sync: list[int] = []  # copied originals (if any) and the journal itself
        try:
            for t in self.targets:
                if t.backup_kind == "copy":
                    syncer.hold(to_sync, self._copy_original(t))
                elif t.backup is not None and self.check is not None:
                    t.backup_stat = self.fs.lstat(self.dirs.open(JOURNAL_DIR), t.backup)
            blobs = [blob for t in self.targets for blob in (t.target.before, t.target.after)]
            sha256 = hashlib.sha256
            digests = [None if blob is None else sha256(blob).hexdigest() for blob in blobs]
            self.journal = Journal(
                self.txn,
                tuple(map(self._journal_entry, self.targets, digests[0::2], digests[1::2])),
                tuple(self.create_dirs),
                tuple(self.remove_dirs),
                intent=self.plan.intent,
            )
            history = self._prepare_retention()
            if history is not None:
                self.journal = replace(self.journal, history=history)
            journal_fd = self.dirs.open(JOURNAL_DIR)
            pending = unpublished_journal_name(self.txn)
            self.unpublished.append(pending)
            fd = self.fs.create(journal_fd, pending, 0o600)
            to_sync.append(fd)
            self.journal_bytes = self.journal.to_bytes(self.plan.root)
            self.fs.write(fd, self.journal_bytes)
            if self.check is not None:
                self.journal_stat = self.fs.fstat(fd)
            syncer.barrier(to_sync)
        finally:
            for fd in to_sync:
                self.fs.close(fd)
        journal_fd = self.dirs.open(JOURNAL_DIR)
        self.fs.rename(journal_fd, pending, journal_fd, journal_name(self.txn))
        self.published = True
        syncer.barrier([journal_fd])

    def _copy_original(self, t: _Target, *, record: bool = True) -> int:
        """Preserve a copy of the original verified (the bytes the plan holds), with its mode and
        owner; return its descriptor, for the journal's barrier. Made where the original could
        not be linked, or has other links (see _verify_original), and where a check removed or
        changed the before-image (``record=False``: the journal is published already)."""
        assert t.backup is not None and t.original is not None and t.target.before is not None
        if record:
            self.unpublished.append(t.backup)
        fd = self.fs.create(self.dirs.open(JOURNAL_DIR), t.backup, 0o600)
        try:
            self.fs.write(fd, t.target.before)
            give_owner(self.fs, fd, (t.original.st_uid, t.original.st_gid))
            self.fs.fchmod(fd, stat.S_IMODE(t.original.st_mode))
            if self.check is not None:
                t.backup_stat = self.fs.fstat(fd)
        except BaseException:
            self.fs.close(fd)
            raise
        return fd

    @staticmethod
    def _journal_entry(t: _Target, before_sha256: str | None, after_sha256: str | None) -> JournalEntry:
        # Positional, and hashed by the caller in one go rather than through PathTarget's
        # properties: this runs for every file of the commit.
        original, after = t.original, t.target.after
        return JournalEntry(
            t.target.path,
            before_sha256,
            after_sha256,
            None if original is None else stat.S_IMODE(original.st_mode),
            None if after is None else t.after_mode,
            None if original is None else (original.st_uid, original.st_gid),
            t.backup,
            t.backup_kind,
            t.temp,
            original.st_ino if t.in_place and original is not None else None,
        )

    def _apply(self, syncer: Syncer) -> None:
        written = [t for t in self.targets if t.temp is not None]
        in_place = [t for t in self.targets if t.in_place]
        temps_mode = syncer.choose(len(written))
        keep_fds = temps_mode is SyncMode.EACH
        temp_fds: list[int] = []
        changed_dirs: set[str] = set()
        done = 0
        keep = temp_fds if keep_fds else None
        try:
            # New contents first where their directory exists: a full disk then fails before
            # anything visible has changed. (Sorted by path: one folder lookup per folder, see
            # DirectoryHandles.)
            parent: str | None = None
            parent_fd = -1
            for t in written:
                if not t.parent_missing:
                    done = self._written(done)
                    if t.parent != parent:
                        parent, parent_fd = t.parent, self.dirs.open(t.parent)
                    self._write_temp(t, parent_fd, keep, syncer)
            for t in self.targets:
                if t.target.after is None and t.original is not None:
                    done = self._written(done)
                    parent_fd = self.dirs.open(t.parent)
                    self._check_unchanged(parent_fd, t)
                    self.fs.unlink(parent_fd, t.name)
                    changed_dirs.add(t.parent)
            self._remove_emptied_dirs(changed_dirs)
            for path in self.create_dirs:
                parent, name = split_path(path)
                # A requested mode may be narrower than the umask's: never wider before the fchmod.
                self.fs.mkdir(self.dirs.open(parent), name, 0o700 if path in self.dir_modes else 0o777)
                changed_dirs.add(parent)
                if path in self.dir_modes and self._set_dir_mode(path, self.dir_modes[path]):
                    changed_dirs.add(path)
            for t in written:
                if t.parent_missing:
                    done = self._written(done)
                    self._write_temp(t, self.dirs.open(t.parent), keep, syncer)
            self._written(done)
            syncer.run(temps_mode, temp_fds)
        finally:
            for fd in temp_fds:
                self.fs.close(fd)
        parent = None
        for t in written:
            assert t.temp is not None
            if t.parent != parent:
                parent, parent_fd = t.parent, self.dirs.open(t.parent)
                changed_dirs.add(parent)
            self._check_unchanged(parent_fd, t)
            self.fs.rename(parent_fd, t.temp, parent_fd, t.name)
        # Files rewritten in place last: the one kind of change a crash can leave half-done in a
        # user's file (the journal's copy undoes it). They share the directories' barrier.
        final_mode = syncer.choose(len(changed_dirs) + len(in_place))
        for t in in_place:
            done = self._written(done)
            self._rewrite_in_place(t, self.dirs.open(t.parent), sync=final_mode is SyncMode.EACH)
        if in_place:
            self._written(done)
        syncer.sync_dirs(final_mode, sorted(changed_dirs))

    def _rewrite_in_place(self, t: _Target, parent_fd: int, *, sync: bool) -> None:
        """Write the new contents into the file itself (same inode: its other hard links see
        them), as Codex and vim do for such a file; its original is already copied into the
        published journal, so a crash or failure rolls back, in place too."""
        assert t.original is not None and t.target.after is not None and t.after_mode is not None
        self._check_unchanged(parent_fd, t)
        fd = self.fs.open_for_rewrite(parent_fd, t.name)
        try:
            current = self.fs.fstat(fd)
            if not _same_version(current, t.original):
                raise changed(t.path, "it was modified while the patch was being applied")
            after = t.target.after
            self.fs.write(fd, after)
            if current.st_size > len(after):
                self.fs.truncate(fd, len(after))
            if stat.S_IMODE(current.st_mode) != t.after_mode:
                self.fs.fchmod(fd, t.after_mode)
            if sync:
                self.fs.fsync([fd])
        except BaseException:
            self.fs.close(fd)
            raise
        if self.check is not None and len(self.held) < self.dirs.held_files // 2:
            # Held while the check runs: should it put another file in this path's place, a roll
            # back still reaches this inode, and with it the file's other names.
            self.held[t.path] = fd
        else:
            self.fs.close(fd)

    def _prepare_retention(self) -> dict[str, Any] | None:
        if self.retention is None:
            return None
        try:
            return self.retention.prepare(self._retention_context())
        except Exception as exc:  # not a crash or Ctrl-C: those stop the commit as anywhere else
            self.retention_error = str(exc) or repr(exc)
            return None

    def _retention_context(self) -> RetentionContext:
        assert self.journal is not None
        return RetentionContext(self.fs, self.dirs, self.journal, self.plan, self.durable, self.listing)

    def _written(self, done: int) -> int:
        """Tell the progress callback ``done`` files are written (or deleted), stop if the call was
        cancelled; return done + 1."""
        if self.progress is not None:
            self.progress("writing", done, len(self.targets))
        self._stop_if_cancelled(f"writing files ({done} of {len(self.targets)})")
        return done + 1

    def _set_dir_mode(self, path: str, mode: int) -> bool:
        """Give a directory just created its requested mode (mkdir's is cut by the umask)."""
        fd = self.dirs.open(path)
        if stat.S_IMODE(self.fs.fstat(fd).st_mode) == stat.S_IMODE(mode):
            return False
        self.fs.fchmod(fd, stat.S_IMODE(mode))
        return True

    def _write_temp(self, t: _Target, parent_fd: int, keep: list[int] | None, syncer: Syncer) -> None:
        assert t.temp is not None and t.target.after is not None
        fs = self.fs
        fd = fs.create(parent_fd, t.temp, 0o666)
        try:
            fs.write(fd, t.target.after)
            current: os.stat_result | None = None
            if t.original is not None or t.after_mode is not None:
                current = fs.fstat(fd)
            if t.original is not None and give_owner(fs, fd, (t.original.st_uid, t.original.st_gid), current):
                current = None  # chown clears set-user-ID and set-group-ID bits: look again
            for name, value in t.xattrs:
                fs.fsetxattr(fd, name, value)
                current = None  # an ACL sets the group bits of the mode: look again
            if t.after_mode is not None:
                if current is None:
                    current = fs.fstat(fd)
                if stat.S_IMODE(current.st_mode) != t.after_mode:
                    fs.fchmod(fd, t.after_mode)
        except BaseException:
            self.fs.close(fd)
            raise
        if keep is None:
            self.fs.close(fd)
        else:
            syncer.hold(keep, fd)

    def _remove_emptied_dirs(self, changed_dirs: set[str]) -> None:
        for removed in self.remove_dirs:
            parent, name = split_path(removed.path)
            parent_fd = self._existing_dir(parent)
            if parent_fd is None:
                continue
            try:
                self.fs.rmdir(parent_fd, name)
            except OSError as exc:
                if exc.errno in (errno.ENOTEMPTY, errno.EEXIST):
                    self.kept_dirs.append(removed.path)
                    continue
                if exc.errno == errno.ENOENT:
                    continue
                raise
            self.dirs.forget(removed.path)
            self.removed_dirs.append(removed.path)
            changed_dirs.discard(removed.path)  # gone: only its parent has a change to persist
            changed_dirs.add(parent)

    def _check_unchanged(self, parent_fd: int, t: _Target) -> None:
        """Last look before replacing or deleting: the same file as verified, or still absent."""
        st = self.fs.lstat(parent_fd, t.name)
        if t.original is None:
            if st is not None:
                raise changed(t.path, "it was created while the patch was being applied")
        elif st is None or not _same_version(st, t.original):
            raise changed(t.path, "it was modified while the patch was being applied")

    def _mark_committed(self, syncer: Syncer) -> None:
        assert self.journal is not None
        journal_fd = self.dirs.open(JOURNAL_DIR)
        self.fs.rename(journal_fd, journal_name(self.txn), journal_fd, self.journal.committed_file_name)
        self.marked = True
        syncer.barrier([journal_fd])

    # -- after the commit point -----------------------------------------------------------------

    def dispose(self) -> bool:
        """Delete the committed journal (unless it is kept as history), then let the retention
        hook clean up.

        True if deleting the journal failed (the next recovery finishes it): nothing here may fail
        the commit, which is durable already.
        """
        assert self.journal is not None
        pending = False
        if self.journal.history is None:
            try:
                journal_fd = self.dirs.open(JOURNAL_DIR)
                present = [n for n in self.journal.backup_names() if self.fs.lstat(journal_fd, n) is not None]
                self.fs.unlink_many(journal_fd, present)
                self.fs.unlink(journal_fd, committed_name(self.txn))
            except OSError:
                pending = True
        if self.retention is not None and self.retention_error is None:
            try:
                self.retention.finish(self._retention_context())
            except Exception as exc:
                self.retention_error = str(exc) or repr(exc)
        return pending

    def report(self, *, fsyncs: int, recovery: RecoveryReport | None, cleanup_pending: bool) -> CommitReport:
        return CommitReport(
            transaction_id=self.txn,
            fsyncs=fsyncs,
            written=tuple(t.path for t in self.targets if t.target.after is not None),
            removed=tuple(t.path for t in self.targets if t.target.after is None and t.original is not None),
            created_dirs=tuple(self.create_dirs),
            removed_dirs=tuple(self.removed_dirs),
            kept_dirs=tuple(self.kept_dirs),
            durable=self.durable,
            recovery=recovery,
            cleanup_pending=cleanup_pending,
            retention_error=self.retention_error,
            state_restored=tuple(self.state_restored),
        )


def _same_file(st: os.stat_result, recorded: os.stat_result | None) -> bool:
    """The journal folder's file is still the one the commit wrote there (same inode, size, mode
    and modification time): nothing replaced or rewrote it."""
    return recorded is not None and (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_mode) == (
        recorded.st_dev, recorded.st_ino, recorded.st_size, recorded.st_mtime_ns, recorded.st_mode)


def _same_version(st: os.stat_result, original: os.stat_result) -> bool:
    return (st.st_ino == original.st_ino and st.st_dev == original.st_dev and st.st_size == original.st_size
            and st.st_mtime_ns == original.st_mtime_ns)


