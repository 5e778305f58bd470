"""Recovery: finish whatever an interrupted transaction left in the journal folder.

For each transaction found there (see ``journal`` for the layout):

* committed (``<txn>.committed``): roll forward. The tree already holds every new file; only the
  journal is deleted.
* published but not committed (``<txn>.journal``): roll back. Put every original back, remove
  what the transaction added, then delete the journal.
* neither: the journal was never published, so the tree was never touched; discard the files.

Two more states are not interrupted transactions, and are not reported: a journal kept as an
undo-history entry (``<txn>.kept-<seq>-<bytes>``) stays as it is; a pruned one (``<txn>.pruned``)
is deleted with its before-images, the deletion its commit did not get to finish.

Every step checks the current state before acting, so running recovery again after it was itself
interrupted (at any call, or by a power cut) picks up where it stopped. The journal file is the
last thing to go: until then, a rerun redoes the whole roll back, which finds nothing left to do.
"""

from __future__ import annotations

import errno
import hashlib
import os
import stat
from typing import TYPE_CHECKING

from .._record import field, record
from ..errors import UnsafePathError, UntrustedStateError
from ..options import DEFAULT_COMMIT
from .dirs import DirectoryHandles
from .escrow import Escrow, has_copies
from .failures import filesystem_error
from .fsops import FileSystemOps, give_owner, split_path
from .gate import check_foreign
from .journal import Journal, JournalEntry, damaged
from .layout import (
    JOURNAL_DIR,
    JournalFiles,
    committed_name,
    group_journal_folder,
    journal_name,
    kept_journals,
    pruned_name,
    restore_name,
    unpublished_journal_name,
)
from .lock import workspace_lock
from .reports import RecoveredTransaction, RecoveryReport
from .statedir import check_state_folder, ensure_state_dir, tidy_state_dir
from .sync import Syncer

if TYPE_CHECKING:
    from collections.abc import Mapping


def recover(
    root: str,
    *,
    fs: FileSystemOps | None = None,
    lock_timeout: float = DEFAULT_COMMIT.lock_timeout,
    trust_foreign: bool = False,
) -> RecoveryReport:
    """Recover the workspace at ``root`` from an interrupted transaction, if there is one.

    Takes the workspace lock. Raises JournalError (deleting nothing) if a journal is damaged,
    UntrustedStateError if one was not signed by this user's patchtx (unless ``trust_foreign``:
    the user has looked at it and asks for it to be rolled back; every path check still applies),
    and FilesystemError if the filesystem fails; all leave the journal in place for another try.
    """
    fs = FileSystemOps() if fs is None else fs
    fsyncs_at_start = fs.fsyncs
    root = os.path.realpath(root)
    try:
        root_fd = fs.open_root(root)
    except OSError as exc:
        raise filesystem_error(exc, fs, doing="open the workspace for recovery") from exc
    dirs = DirectoryHandles(fs, root_fd, root=root)
    try:
        if check_state_folder(dirs) is None:
            if not has_copies(root):
                return RecoveryReport()  # never used by patchtx: nothing to do, and nothing created
            # A check deleted the state folder and patchtx was killed: its copy outside remains.
            ensure_state_dir(fs, dirs, durable=True)
        with workspace_lock(root, dirs, lock_timeout):
            transactions = recover_workspace(fs, dirs, durable=True, trust_foreign=trust_foreign)
    except OSError as exc:
        raise filesystem_error(
            exc,
            fs,
            doing="recover the workspace",
            changed=True,
            hint="Fix the cause and run recovery again: it is safe to repeat, and the journal was kept.",
        ) from exc
    finally:
        dirs.close_all()
        fs.close(root_fd)
    return RecoveryReport(transactions, fsyncs=fs.fsyncs - fsyncs_at_start)


def recover_workspace(
    fs: FileSystemOps, dirs: DirectoryHandles, *, durable: bool, trust_foreign: bool = False
) -> tuple[RecoveredTransaction, ...]:
    """Recover every transaction in the journal folder (the caller holds the lock).

    Every journal is read and verified before anything is acted on, so a damaged one stops
    recovery with nothing deleted.
    """
    tidy_state_dir(fs, dirs)
    escrow = Escrow(fs, dirs.root)
    try:
        checked = _bring_back_copies(fs, dirs, escrow, durable=durable)
        done = _recover_journals(fs, dirs, durable=durable, trust_foreign=trust_foreign, checked=checked,
                                 escrow=escrow)
        for txn in checked:
            escrow.remove(txn)
        if has_copies(dirs.root):  # an empty folder an interrupted commit left: removed
            escrow.tidy()
    finally:
        escrow.close()
    return done


def _bring_back_copies(fs: FileSystemOps, dirs: DirectoryHandles, escrow: Escrow, *, durable: bool) -> set[str]:
    """The transactions interrupted while their check ran (their copy outside the workspace is
    published, ``escrow``), each journal folder first put back as the commit wrote it where the
    check deleted or changed it: the journal's bytes and every before-image that no longer holds
    the original, from the copy. A copy that was never published (the check never started) and
    one of a transaction the workspace says committed are deleted."""
    copies = escrow.transactions()
    if not copies:
        return set()
    journal_fd = dirs.lookup(JOURNAL_DIR)
    listing = {files.transaction_id: files for files in
               group_journal_folder(fs.listdir(journal_fd) if journal_fd is not None else [])}
    checked = set()
    for txn, published in copies:
        files = listing.get(txn)
        if not published or (files is not None and (files.is_committed or files.kept is not None)):
            escrow.remove(txn)
            continue
        where = f"{escrow.path}/{journal_name(txn)}"
        data = escrow.read(journal_name(txn))
        if data is None:
            raise damaged(where, "unreadable")
        journal = Journal.from_bytes(data, where=where, workspace=dirs.root)
        if journal.transaction_id != txn:
            raise damaged(where, f"it describes transaction {journal.transaction_id}")
        ensure_state_dir(fs, dirs, durable=durable)
        journal_fd = dirs.open(JOURNAL_DIR)
        to_sync: list[int] = []
        try:
            for entry in journal.entries:
                if entry.backup is None or _holds(fs, journal_fd, entry.backup,
                                                  fs.lstat(journal_fd, entry.backup), entry.before_sha256):
                    continue
                original = escrow.read(entry.backup)
                if original is None or hashlib.sha256(original).hexdigest() != entry.before_sha256:
                    raise damaged(where, f"the preserved original of {entry.path} is missing or altered, in the"
                                         " workspace and outside it")
                if fs.lstat(journal_fd, entry.backup) is not None:
                    fs.unlink(journal_fd, entry.backup)
                fd = fs.create(journal_fd, entry.backup, 0o600)
                to_sync.append(fd)
                fs.write(fd, original)
                if entry.owner is not None:
                    give_owner(fs, fd, entry.owner)
                if entry.before_mode is not None:
                    fs.fchmod(fd, entry.before_mode)
            name = journal_name(txn)
            try:
                held = fs.read_file(journal_fd, name).data
            except OSError:
                held = None
            if held != data:
                for stale in (name, unpublished_journal_name(txn)):
                    if fs.lstat(journal_fd, stale) is not None:
                        fs.unlink(journal_fd, stale)
                fd = fs.create(journal_fd, unpublished_journal_name(txn), 0o600)
                to_sync.append(fd)
                fs.write(fd, data)
            if durable:
                fs.fsync(to_sync)
            if held != data:
                fs.rename(journal_fd, unpublished_journal_name(txn), journal_fd, name)
        finally:
            for fd in to_sync:
                fs.close(fd)
        if durable:
            fs.fsync([journal_fd])
        checked.add(txn)
    return checked


def _recover_journals(fs: FileSystemOps, dirs: DirectoryHandles, *, durable: bool, trust_foreign: bool,
                      checked: set[str], escrow: Escrow) -> tuple[RecoveredTransaction, ...]:
    journal_fd = dirs.lookup(JOURNAL_DIR)
    if journal_fd is None:
        return ()
    found = []
    names = fs.listdir(journal_fd)
    newest_kept = max((sequence for _name, sequence, _size in kept_journals(names)), default=0)
    for files in group_journal_folder(names):
        if files.is_pruned and files.kept is None:
            _delete_files(fs, journal_fd, sorted(files.names - {pruned_name(files.transaction_id)}))
            _delete_files(fs, journal_fd, [pruned_name(files.transaction_id)])
        elif files.kept is None:
            found.append(files)
    loaded = [(files, *_load_journal(fs, journal_fd, files, trust_foreign, dirs.root, newest_kept))
              for files in found]
    for files, journal, foreign in loaded:
        if foreign and journal is not None and not files.is_committed:
            check_foreign(journal, dirs, f"{JOURNAL_DIR}/{journal_name(files.transaction_id)}")
    done = []
    for files, journal, foreign in loaded:
        journal_fd = dirs.open(JOURNAL_DIR)
        if journal is None:
            _delete_files(fs, journal_fd, sorted(files.names))
            done.append(RecoveredTransaction(files.transaction_id, "discarded"))
        elif files.is_committed:
            _delete_journal(fs, journal_fd, journal, committed_name(journal.transaction_id), files)
            done.append(RecoveredTransaction(files.transaction_id, "rolled_forward"))
        else:
            # Interrupted while its check ran: every path it touches is put back, whatever the
            # check left there (its copy outside then holds links to the before-images too).
            ours = journal.touched_paths if files.transaction_id in checked else frozenset()
            done.append(roll_back(fs, dirs, journal, durable=durable, files=files, foreign=foreign, ours=ours,
                                  escrow=escrow if ours else None))
    return tuple(done)


def roll_back(
    fs: FileSystemOps,
    dirs: DirectoryHandles,
    journal: Journal,
    *,
    durable: bool,
    files: JournalFiles | None = None,
    foreign: bool = False,
    ours: frozenset[str] = frozenset(),
    escrow: Escrow | None = None,
    held: Mapping[str, int] | None = None,
) -> RecoveredTransaction:
    """Undo a published, uncommitted transaction, then delete its journal.

    Also used by a commit that fails after publishing its journal. The order matters: what the
    transaction added goes first (a new file may sit where a removed directory must come back, a
    created directory where a deleted file must come back), originals come back last. A
    ``foreign`` journal (not signed by this user, rolled back because the user said so: ``recover
    --trust-foreign``) changes the mode or owner of nothing it did not create, and links nothing
    into the tree: its originals come back as new copies. ``ours`` names the paths that the
    transaction's own verify command changed (under the lock, inside the transaction): they are
    put back whatever they hold, where any other change found is left as found (a conflict): by
    kind, a link, a folder (with what it holds) or another file in the place of a path of ``ours``
    that existed before is removed, and missing folders above it are made again. What the
    transaction created is another matter, ``ours`` or not: patchtx deletes only what it can prove
    it wrote. A file it added goes only if it holds what it wrote there (the journal's hash); a
    folder it created, only once empty; anything else found there (what the check, the user or
    another process wrote, a folder or a link in an added file's place) is left in place and
    reported (``left_in_place``, with the created folders kept for it, ``kept_dirs``). ``escrow``:
    the transaction's copy outside the workspace, whose links to the before-images are not other
    names of the originals. ``held``:
    descriptors of the files the commit rewrote in place, by path (see ``_Undo.restore_originals``).
    """
    undo = _Undo(fs, dirs, journal, durable, foreign, ours, escrow, dict(held or {}))
    undo.remove_added_files()
    undo.remove_created_dirs()
    undo.recreate_removed_dirs()
    undo.restore_originals()
    # Durable before the journal goes: until then, a power cut means rolling back again.
    syncer = Syncer(fs, dirs, durable=durable, budget=len(journal.entries) + 4, barriers=1)
    present = [path for path in sorted(undo.changed_dirs) if _existing_dir(dirs, path) is not None]
    syncer.sync_dirs(syncer.choose(len(present)), present)
    _delete_journal(fs, dirs.open(JOURNAL_DIR), journal, journal_name(journal.transaction_id), files)
    return RecoveredTransaction(
        journal.transaction_id,
        "rolled_back",
        restored=tuple(undo.restored),
        removed=tuple(undo.removed),
        removed_dirs=tuple(undo.removed_dirs),
        recreated_dirs=tuple(undo.recreated_dirs),
        conflicts=tuple(undo.conflicts),
        left_in_place=tuple(sorted(undo.left_in_place)),
        kept_dirs=tuple(undo.kept_dirs),
    )


@record(frozen=False)
class _Undo:
    """The steps of a roll back; each checks the current state first, so each can be redone."""

    fs: FileSystemOps
    dirs: DirectoryHandles
    journal: Journal
    durable: bool
    foreign: bool = False
    ours: frozenset[str] = frozenset()
    escrow: Escrow | None = None
    held: dict[str, int] = field(default_factory=dict)
    changed_dirs: set[str] = field(default_factory=set)
    restored: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    removed_dirs: list[str] = field(default_factory=list)
    recreated_dirs: list[str] = field(default_factory=list)
    conflicts: list[str] = field(default_factory=list)
    left_in_place: list[str] = field(default_factory=list)
    kept_dirs: list[str] = field(default_factory=list)

    def remove_added_files(self) -> None:
        """Temporary files, and files the transaction added if they still hold what it wrote:
        anything else at such a path (other bytes, a folder, a link) is left in place, reported.
        Never by ``ours``: a check's writes there are not the patch's, and no before-image holds
        them (an added file has no original to put back, only something of someone's to lose)."""
        txn = self.journal.transaction_id
        removed_dir_paths = {d.path for d in self.journal.removed_dirs}
        for index, entry in enumerate(self.journal.entries):
            parent, name = split_path(entry.path)
            parent_fd = self._folder(parent, entry.path, make=False)
            if parent_fd is None:
                continue
            for temp in (entry.temp, restore_name(txn, index)):
                if temp is not None and self.fs.lstat(parent_fd, temp) is not None:
                    self.fs.unlink(parent_fd, temp)
                    self.changed_dirs.add(parent)
            if entry.before_sha256 is not None or entry.after_sha256 is None:
                continue
            st = self.fs.lstat(parent_fd, name)
            if st is None or (stat.S_ISDIR(st.st_mode) and entry.path in removed_dir_paths):
                continue
            if stat.S_ISREG(st.st_mode) and _sha256(self.fs, parent_fd, name) == entry.after_sha256:
                self.fs.unlink(parent_fd, name)  # what the patch wrote: provably ours
                self.removed.append(entry.path)
                self.changed_dirs.add(parent)
            elif entry.path in removed_dir_paths and entry.path in self.ours:
                # Also a folder the transaction removed (it existed before, as a folder): put back
                # below, whatever the check left in its place, as any path that existed before.
                self._clear(parent_fd, name, entry.path, st)
            else:
                self.left_in_place.append(entry.path)

    def remove_created_dirs(self) -> None:
        """Deepest first, and only if empty: anything else in them is not ours, and is left in
        place (reported, each folder kept for it too). A folder, link or file in a created
        folder's place is somebody else's as well, unless a file stood there before (the patch
        deleted it to make the folder): that path is put back below, as any path that existed."""
        originals = {entry.path for entry in self.journal.entries if entry.backup is not None}
        for path in reversed(self.journal.created_dirs):
            parent, name = split_path(path)
            parent_fd = self._folder(parent, path, make=False)  # (after a check: a link above, None)
            st = None if parent_fd is None else self.fs.lstat(parent_fd, name)
            if parent_fd is None or st is None:
                continue
            if not stat.S_ISDIR(st.st_mode):
                if path not in originals:
                    self.left_in_place.append(path)
                continue
            try:
                self.fs.rmdir(parent_fd, name)
            except OSError as exc:
                if exc.errno not in (errno.ENOTEMPTY, errno.EEXIST):
                    raise
                if path in originals and path in self.ours:
                    # A file stood here before, which the check's writes do not outrank.
                    self._clear(parent_fd, name, path, st)
                else:
                    self._keep(path)
                    continue
            self.dirs.forget(path)
            self.removed_dirs.append(path)
            self.changed_dirs.add(parent)

    def recreate_removed_dirs(self) -> None:
        """Shallowest first, with their mode and owner."""
        for removed_dir in reversed(self.journal.removed_dirs):
            parent, name = split_path(removed_dir.path)
            parent_fd = self._folder(parent, removed_dir.path)
            if parent_fd is None:
                self.conflicts.append(removed_dir.path)
                continue
            st = self.fs.lstat(parent_fd, name)
            if st is not None and not stat.S_ISDIR(st.st_mode):
                if removed_dir.path not in self.ours:
                    self.conflicts.append(removed_dir.path)
                    continue
                self._clear(parent_fd, name, removed_dir.path, st, report=False)
                st = None
            if st is None:
                self.fs.mkdir(parent_fd, name, 0o700)  # opened up by the fchmod below, never wider before
                self.recreated_dirs.append(removed_dir.path)
                self.changed_dirs.add(parent)
            elif self.foreign:
                continue  # not created here: a foreign journal re-modes and re-owns nothing
            dir_fd = self.dirs.open(removed_dir.path)
            if self.foreign:
                if _restore_mode(self.fs, dir_fd, removed_dir.mode & 0o777):
                    self.changed_dirs.add(removed_dir.path)
                continue
            # Also when it exists: an interrupted earlier recovery may have created it but not yet
            # given it back its mode and owner.
            owner_changed = give_owner(self.fs, dir_fd, removed_dir.owner)
            if _restore_mode(self.fs, dir_fd, removed_dir.mode) or owner_changed:
                self.changed_dirs.add(removed_dir.path)

    def restore_originals(self) -> None:
        """Through a link next to the target and a rename over whatever is there.

        Linking (rather than renaming the before-image itself) keeps the before-image until the
        journal is deleted, so an interrupted restore can always be redone.
        """
        txn = self.journal.transaction_id
        for index, entry in enumerate(self.journal.entries):
            if entry.backup is None:
                continue
            parent, name = split_path(entry.path)
            parent_fd = self._folder(parent, entry.path)
            if parent_fd is None:
                self.conflicts.append(entry.path)
                continue
            journal_fd = self.dirs.open(JOURNAL_DIR)
            backup_st = self.fs.lstat(journal_fd, entry.backup)
            target_st = self.fs.lstat(parent_fd, name)
            if backup_st is None:
                if not _holds(self.fs, parent_fd, name, target_st, entry.before_sha256):
                    raise damaged(
                        f"{JOURNAL_DIR}/{journal_name(txn)}",
                        f"the preserved original of {entry.path} is missing",
                    )
                continue
            if entry.written_in_place and not self.foreign and not (  # (foreign: never into a file it did not make)
                    entry.path in self.ours and not _same_inode(target_st, entry)):
                self._restore_in_place(entry, parent_fd, name, journal_fd, target_st)
                continue
            if entry.written_in_place and entry.path in self.held:
                # The check put another file at this path: the file the commit rewrote lives on
                # under its other names, reached through the descriptor held since; it gets its
                # original back there, and the path a copy below.
                self._write_back(entry, self.held[entry.path], journal_fd)
            if target_st is not None and not stat.S_ISREG(target_st.st_mode) and entry.path in self.ours:
                self._clear(parent_fd, name, entry.path, target_st, report=False)  # by kind: a link, a folder
                target_st = None
            if target_st is not None:
                if (target_st.st_dev, target_st.st_ino) == (backup_st.st_dev, backup_st.st_ino) and (
                        entry.path not in self.ours or _same_metadata(target_st, entry)):
                    continue  # never replaced, or already put back
                if not stat.S_ISREG(target_st.st_mode):
                    self.conflicts.append(entry.path)
                    continue
                held = _sha256(self.fs, parent_fd, name)
                if held == entry.before_sha256 and _same_metadata(target_st, entry):
                    # The original itself (its before-image is a copy), never replaced: nothing to
                    # put back. Not touching it is what lets a commit that failed on a file it
                    # cannot replace (read-only mount, immutable file) roll back cleanly.
                    continue
                if held not in (entry.after_sha256, entry.before_sha256) and entry.path not in self.ours:
                    # Not what we wrote, nor what our own check did to it: somebody else's.
                    self.conflicts.append(entry.path)
                    continue
            restoring = restore_name(txn, index)
            original = self.fs.read_file(journal_fd, entry.backup)
            if hashlib.sha256(original.data).hexdigest() != entry.before_sha256:
                raise damaged(f"{JOURNAL_DIR}/{journal_name(txn)}",
                              f"the preserved original of {entry.path} does not match its recorded hash")
            escrowed = self.escrow is not None and self.escrow.holds(entry.backup, original.stat)
            names = original.stat.st_nlink - escrowed
            if self.foreign or names != 1 or not _same_metadata(original.stat, entry):
                # Never a foreign inode, nor one with other names (outside the root, maybe) linked
                # into the tree, nor a before-image whose mode a check changed (through the journal
                # folder): a new file of the verified bytes, with the recorded mode and owner.
                if self.fs.lstat(parent_fd, restoring) is not None:
                    self.fs.unlink(parent_fd, restoring)
                self._write_copy(entry, parent_fd, restoring, original.data)
            else:
                if self.fs.lstat(parent_fd, restoring) is not None:
                    self.fs.unlink(parent_fd, restoring)
                self.fs.link(journal_fd, entry.backup, parent_fd, restoring)
            try:
                self.fs.rename(parent_fd, restoring, parent_fd, name)
            except OSError:
                self.fs.unlink(parent_fd, restoring)  # no stray file beside the user's
                raise
            self.restored.append(entry.path)
            self.changed_dirs.add(parent)

    def _folder(self, path: str, for_path: str, *, make: bool = True) -> int | None:
        """The descriptor of the folder ``path`` that ``for_path`` goes in; None if it is missing
        or not a folder. For a path of ``ours`` (after its check) the folders are made what they
        were if ``make``: a missing one made again, a link or a file in one's place removed first,
        each reported as recreated."""
        try:
            return _existing_dir(self.dirs, path)
        except UnsafePathError:
            if for_path not in self.ours:
                raise
        if for_path not in self.ours or not make:
            return None
        fd = self.dirs.root_fd
        done = ""
        for part in path.split("/") if path else ():
            current = f"{done}/{part}" if done else part
            st = self.fs.lstat(fd, part)
            if st is not None and not stat.S_ISDIR(st.st_mode):
                self._clear(fd, part, current, st, report=False)
                st = None
            if st is None:
                self.fs.mkdir(fd, part, 0o777)
                self.recreated_dirs.append(current)
                self.changed_dirs.add(done)
                self.dirs.forget(current)
            fd = self.dirs.open(current)
            done = current
        return fd

    def _keep(self, path: str) -> None:
        """The created folder ``path`` holds what patchtx did not write: it stays, and so does
        everything in it; each entry is reported but the folders kept already (deeper created
        ones, reported themselves) and added paths already reported."""
        reported = set(self.kept_dirs) | set(self.left_in_place)
        fd = self.dirs.open(path)
        for child in sorted(self.fs.listdir(fd)):
            if f"{path}/{child}" not in reported:
                self.left_in_place.append(f"{path}/{child}")
        self.kept_dirs.append(path)

    def _clear(self, parent_fd: int, name: str, path: str, st: os.stat_result, *, report: bool = True) -> None:
        """Remove whatever is at ``path`` now, by kind, never through a link: a folder with what it
        holds (opened without following links), anything else unlinked."""
        if stat.S_ISDIR(st.st_mode):
            fd = self.fs.open_dir(parent_fd, name)
            try:
                for child in self.fs.listdir(fd):
                    child_st = self.fs.lstat(fd, child)
                    if child_st is not None:
                        self._clear(fd, child, f"{path}/{child}", child_st, report=False)
            finally:
                self.fs.close(fd)
            self.fs.rmdir(parent_fd, name)
            self.dirs.forget(path)
        else:
            self.fs.unlink(parent_fd, name)
        parent, _name = split_path(path)
        self.changed_dirs.add(parent)
        if report:
            self.removed.append(path)

    def _write_copy(self, entry: JournalEntry, parent_fd: int, name: str, data: bytes) -> None:
        assert entry.before_mode is not None
        fd = self.fs.create(parent_fd, name, 0o600)
        try:
            self.fs.write(fd, data)
            if not self.foreign and entry.owner is not None:
                give_owner(self.fs, fd, entry.owner)
            self.fs.fchmod(fd, entry.before_mode & (0o777 if self.foreign else 0o7777))
            if self.durable:
                self.fs.fsync([fd])
        finally:
            self.fs.close(fd)

    def _write_back(self, entry: JournalEntry, fd: int, journal_fd: int) -> None:
        """Write the original into the open file ``fd`` (from its start), with its mode."""
        assert entry.backup is not None and entry.before_mode is not None
        original = self.fs.read_file(journal_fd, entry.backup).data
        if hashlib.sha256(original).hexdigest() != entry.before_sha256:
            raise damaged(f"{JOURNAL_DIR}/{journal_name(self.journal.transaction_id)}",
                          f"the preserved original of {entry.path} does not match its recorded hash")
        os.lseek(fd, 0, os.SEEK_SET)  # (moves this descriptor's offset only: nothing on disk)
        self.fs.write(fd, original)
        if self.fs.fstat(fd).st_size > len(original):
            self.fs.truncate(fd, len(original))
        if stat.S_IMODE(self.fs.fstat(fd).st_mode) != entry.before_mode:
            self.fs.fchmod(fd, entry.before_mode)
        if self.durable:
            self.fs.fsync([fd])

    def _restore_in_place(
        self, entry: JournalEntry, parent_fd: int, name: str, journal_fd: int, target_st: os.stat_result | None
    ) -> None:
        """Write the journal's copy back into the file itself, so its other hard links keep
        sharing it. Whatever the file holds now (possibly a half-written new version: nothing
        but this transaction writes it while the workspace is locked) is replaced."""
        if not _same_inode(target_st, entry):
            # Gone, or replaced by something else (another file, same bytes or not): not ours to
            # overwrite; the file the commit rewrote is no longer at this name.
            self.conflicts.append(entry.path)
            return
        assert entry.backup is not None and entry.before_mode is not None
        original = self.fs.read_file(journal_fd, entry.backup).data
        if hashlib.sha256(original).hexdigest() != entry.before_sha256:
            raise damaged(f"{JOURNAL_DIR}/{journal_name(self.journal.transaction_id)}",
                          f"the preserved original of {entry.path} does not match its recorded hash")
        current = self.fs.read_file(parent_fd, name, expected=original)
        if current.data == original and stat.S_IMODE(current.stat.st_mode) == entry.before_mode:
            return  # never rewritten, or already put back
        fd = self.fs.open_for_rewrite(parent_fd, name)
        try:
            self.fs.write(fd, original)
            if self.fs.fstat(fd).st_size > len(original):
                self.fs.truncate(fd, len(original))
            if stat.S_IMODE(current.stat.st_mode) != entry.before_mode:
                self.fs.fchmod(fd, entry.before_mode)
            if self.durable:
                self.fs.fsync([fd])
        finally:
            self.fs.close(fd)
        self.restored.append(entry.path)


def _load_journal(fs: FileSystemOps, journal_fd: int, files: JournalFiles, trust_foreign: bool, workspace: str,
                  newest_kept: int) -> tuple[Journal | None, bool]:
    """The transaction's journal (None: never published), and whether it is foreign (not signed
    by this user for this workspace, loaded because ``trust_foreign``)."""
    if files.is_committed:
        name = committed_name(files.transaction_id)
    elif files.is_published:
        name = journal_name(files.transaction_id)
    else:
        return None, False
    where = f"{JOURNAL_DIR}/{name}"
    try:
        data = fs.read_file(journal_fd, name).data
    except OSError as exc:
        raise damaged(where, f"unreadable: {os.strerror(exc.errno or 0)}") from None
    foreign = False
    try:
        journal = Journal.from_bytes(data, where=where, workspace=workspace)
    except UntrustedStateError:
        if not trust_foreign:
            raise
        journal, foreign = Journal.from_bytes(data, where=where, workspace=workspace, trust_foreign=True), True
    if journal.transaction_id != files.transaction_id:
        raise damaged(where, f"it describes transaction {journal.transaction_id}")
    history = journal.history
    if files.is_published and not files.is_committed and history is not None and history["sequence"] <= newest_kept:
        # Its role: a journal destined for the undo history is interrupted only before its
        # commit point, when its sequence is above every kept entry's. One that is not is a kept
        # entry renamed back: rolling it back would undo it behind every check of undo.
        raise damaged(where, f"it is undo-history entry {history['sequence']} under an interrupted"
                             " transaction's name")
    return journal, foreign


def _delete_journal(
    fs: FileSystemOps,
    journal_fd: int,
    journal: Journal,
    journal_file: str,
    files: JournalFiles | None,
) -> None:
    """The journal file first: once it is gone, leftovers are discarded, never acted on."""
    txn = journal.transaction_id
    _delete_files(fs, journal_fd, [journal_file])
    leftovers = set(journal.backup_names()) | {unpublished_journal_name(txn)}
    if files is not None:
        leftovers |= files.names - {journal_file}
    _delete_files(fs, journal_fd, sorted(leftovers))


def _delete_files(fs: FileSystemOps, dir_fd: int, names: list[str]) -> None:
    present = [name for name in names if fs.lstat(dir_fd, name) is not None]
    if len(present) == 1:
        fs.unlink(dir_fd, present[0])
    else:
        fs.unlink_many(dir_fd, present)


def _existing_dir(dirs: DirectoryHandles, path: str) -> int | None:
    try:
        return dirs.open(path)
    except (FileNotFoundError, NotADirectoryError):
        return None


def _holds(fs: FileSystemOps, dir_fd: int, name: str, st: os.stat_result | None, sha256: str | None) -> bool:
    if st is None or not stat.S_ISREG(st.st_mode):
        return False
    return _sha256(fs, dir_fd, name) == sha256


def _same_inode(st: os.stat_result | None, entry: JournalEntry) -> bool:
    """Whether the file in place is the one the commit rewrote in place."""
    return st is not None and stat.S_ISREG(st.st_mode) and entry.inode in (None, st.st_ino)


def _sha256(fs: FileSystemOps, dir_fd: int, name: str) -> str:
    return hashlib.sha256(fs.read_file(dir_fd, name).data).hexdigest()


def _same_metadata(st: os.stat_result, entry: JournalEntry) -> bool:
    """The file has the mode and owner the transaction recorded for its original."""
    return stat.S_IMODE(st.st_mode) == entry.before_mode and (st.st_uid, st.st_gid) == entry.owner


def _restore_mode(fs: FileSystemOps, fd: int, mode: int) -> bool:
    if stat.S_IMODE(fs.fstat(fd).st_mode) == mode:
        return False
    fs.fchmod(fd, mode)
    return True
