"""The verify step's copy of a transaction, outside the workspace, where its check does not reach.

While a verify command runs (docs/guarantees.md, section 11), the transaction's journal is
published and uncommitted in ``.patchtx/journal``, inside the workspace the command works in. A
check that cleans ignored files (``git clean -xfd``) or the whole tree deletes it with the
before-images: a roll back, or recovery after a kill, would then find nothing to put back. So
before the command starts, the commit leaves a copy of the journal and of every before-image in
the per-user state folder (``provenance.state_home()``, where the secret lives, never inside a
workspace)::

    <state home>/checks/<first 32 hex digits of SHA-256(workspace real path)>/
        <txn>.<n>.before      a hard link to the journal's before-image, or a copy (another filesystem)
        <txn>.journal.tmp     being written
        <txn>.journal         the journal's very bytes (signed for the workspace, as in it)

The copy exists only from just before the check starts until the transaction's outcome is settled:
deleted before the commit point when the check passed, after the roll back when it failed. So a
copy found by recovery (``recovery.recover_workspace``; every commit looks for one first) means a
transaction interrupted while its check ran, or right after: recovery puts its journal and
before-images back into the workspace where the check removed or altered them, and rolls it back,
every planned path put back whatever it holds (the check held the transaction and its lock: what it
left there is the transaction's own). A workspace whose journal says the transaction committed wins
over the copy (a power cut can bring back a copy deleted just before the mark): it is deleted.
"""

from __future__ import annotations

import hashlib
import os
import stat
from typing import TYPE_CHECKING

from ..errors import LockTimeoutError
from .layout import STATE_DIR, group_journal_folder, journal_name, unpublished_journal_name
from .provenance import state_home

if TYPE_CHECKING:
    from .fsops import FileSystemOps
    from .journal import Journal

CHECKS = "checks"


def folder_of(root: str) -> str:
    """The copy folder of the workspace whose real path is ``root`` (it may not exist)."""
    return os.path.join(state_home(), CHECKS, hashlib.sha256(os.fsencode(root)).hexdigest()[:32])


def has_copies(root: str) -> bool:
    """Whether a copy folder of this workspace exists (one ``lstat``: every commit asks)."""
    try:
        return stat.S_ISDIR(os.stat(folder_of(root), follow_symlinks=False).st_mode)
    except OSError:
        return False


def _hold(fd: int, root: str) -> None:
    """Take the copy folder's own lock (an flock on its descriptor, released when it is closed).
    The workspace lock keeps other processes out, but a check that deletes ``.patchtx`` deletes
    the lock file with it: a patchtx started meanwhile makes and takes a new one, and must then
    neither act on nor take this transaction's copy while its process lives."""
    import fcntl  # (not on every platform: _fd.require_posix names it when missing)

    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        raise LockTimeoutError(
            f"Another patchtx process is running a verify command in the workspace {root}, whose check"
            f" deleted the workspace lock in {STATE_DIR}; patchtx will not touch the workspace until it ends.",
            hint="Let the other process finish (or stop it), then apply again: its change is rolled back"
                 " or kept as its check decides.",
            path=root, details={"inside_verify": False}) from None


class Escrow:
    """The copy folder of one workspace, opened without following links; every change through
    ``fs`` (numbered, as the commit's own calls)."""

    def __init__(self, fs: FileSystemOps, root: str) -> None:
        self.fs = fs
        self.root = root
        self.path = folder_of(root)
        self.fd: int | None = None

    def open(self, *, create: bool) -> int | None:
        """The folder's descriptor; created (mode 0700, in a state folder of the user's own) if
        ``create``, else None when there is none."""
        if self.fd is not None:
            return self.fd
        home = os.path.dirname(os.path.dirname(self.path))
        if create:
            os.makedirs(home, mode=0o700, exist_ok=True)  # (the secret's folder: made when it was)
        try:
            fd = self.fs.open_folder(home, "~state")
        except FileNotFoundError:
            return None
        try:
            for name in (CHECKS, os.path.basename(self.path)):
                if create:
                    try:  # (made, or found made: the same numbered call either way)
                        self.fs.mkdir(fd, name, 0o700)
                    except FileExistsError:
                        pass
                try:
                    child = self.fs.open_dir(fd, name)
                except FileNotFoundError:
                    self.fs.close(fd)
                    return None
                self.fs.close(fd)
                fd = child
            _hold(fd, self.root)
        except BaseException:
            self.fs.close(fd)
            raise
        self.fd = fd
        return fd

    def close(self) -> None:
        if self.fd is not None:
            fd, self.fd = self.fd, None
            self.fs.close(fd)

    def write(self, journal: Journal, journal_bytes: bytes, images: list[tuple[int, str, bytes]],
              *, durable: bool) -> None:
        """Copy the published journal and its before-images (``images``: the journal folder's
        descriptor, the image's name there and the original's bytes, for when it cannot be
        linked), then publish the copy (a rename), durably when ``durable``."""
        fs = self.fs
        fd = self.open(create=True)
        assert fd is not None
        txn = journal.transaction_id
        to_sync: list[int] = []
        try:
            for journal_fd, name, data in images:
                if fs.lstat(fd, name) is not None:
                    fs.unlink(fd, name)  # left by an interrupted earlier try
                try:
                    fs.link(journal_fd, name, fd, name)
                except OSError:  # another filesystem (EXDEV), or links refused: a copy
                    copy = fs.create(fd, name, 0o600)
                    to_sync.append(copy)
                    fs.write(copy, data)
            pending = unpublished_journal_name(txn)
            if fs.lstat(fd, pending) is not None:
                fs.unlink(fd, pending)
            copy = fs.create(fd, pending, 0o600)
            to_sync.append(copy)
            fs.write(copy, journal_bytes)
            if durable:
                fs.fsync(to_sync)
        finally:
            for descriptor in to_sync:
                fs.close(descriptor)
        fs.rename(fd, pending, fd, journal_name(txn))
        if durable:
            fs.fsync([fd])

    def holds(self, name: str, st: os.stat_result) -> bool:
        """Whether the copy's ``name`` is the file ``st`` describes (a link to a before-image)."""
        fd = self.open(create=False)
        found = None if fd is None else self.fs.lstat(fd, name)
        return found is not None and (found.st_dev, found.st_ino) == (st.st_dev, st.st_ino)

    def transactions(self) -> list[tuple[str, bool]]:
        """(transaction id, whether its copy was published) of each copy in the folder."""
        fd = self.open(create=False)
        if fd is None:
            return []
        return [(files.transaction_id, files.is_published) for files in group_journal_folder(self.fs.listdir(fd))]

    def read(self, name: str) -> bytes | None:
        """A file of the copy (None: absent or not a regular file)."""
        fd = self.open(create=False)
        if fd is None:
            return None
        try:
            return self.fs.read_file(fd, name).data
        except OSError:
            return None

    def remove(self, txn: str) -> None:
        """Delete a transaction's copy, its journal first (a copy without one is never acted on),
        then the folder if it is empty."""
        fs = self.fs
        fd = self.open(create=False)
        if fd is None:
            return
        names = fs.listdir(fd)
        prefix = txn + "."
        published = journal_name(txn)
        if published in names:
            fs.unlink(fd, published)
        rest = sorted(n for n in names if n.startswith(prefix) and n != published)
        if rest:
            fs.unlink_many(fd, rest)
        self.tidy()

    def tidy(self) -> None:
        """Remove the folder if it holds nothing, and the checks folder if it holds no other
        workspace's (so that every verified commit makes the same calls, the first one too)."""
        fs = self.fs
        self.close()
        home = os.path.dirname(os.path.dirname(self.path))
        try:
            home_fd = fs.open_folder(home, "~state")
        except OSError:
            return
        try:
            for parent, name in ((CHECKS, os.path.basename(self.path)), ("", CHECKS)):
                parent_fd = fs.open_dir(home_fd, parent) if parent else home_fd
                try:
                    if fs.lstat(parent_fd, name) is not None:
                        fs.rmdir(parent_fd, name)
                except OSError:
                    return  # not empty: another process's copy (its check deleted the lock) stays
                finally:
                    if parent_fd != home_fd:
                        fs.close(parent_fd)
        except OSError:
            return
        finally:
            fs.close(home_fd)
