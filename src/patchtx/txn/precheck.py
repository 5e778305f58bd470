"""Step 3 of the commit, under the lock (docs/guarantees.md, section 3, step 4): every target
checked against what the plan was computed from, each original preserved in the journal folder on
the way, and the folders to create and to remove listed.

``Precheck`` is a part of the commit's transaction (``commit._Transaction`` is one), holding the
methods of this step; the transaction's state they read is declared here. Everything it uses is
imported at the top, as in ``failures``: a commit failing with EMFILE must not need an import.
"""

from __future__ import annotations

import errno
import stat
from typing import TYPE_CHECKING

from ..errors import ChangedSincePlanningError
from .dirs import unsafe_symlink
from .emptied import emptied_folders
from .fsops import split_path
from .journal import RemovedDir
from .layout import JOURNAL_DIR, backup_name

if TYPE_CHECKING:
    import os
    from collections.abc import Callable

    from ..model import PathTarget, Plan
    from .dirs import DirectoryHandles
    from .fsops import FileSystemOps
    from .journal import BackupKind

# link(2) failures that mean "this filesystem cannot hard-link this file here": preserve a copy.
_LINK_FALLBACK_ERRNOS = frozenset(
    {errno.EXDEV, errno.EPERM, errno.EMLINK, errno.ENOTSUP, errno.EOPNOTSUPP, errno.ENOSYS}
)


class _Target:
    """One PathTarget as verified under the lock, with the names the transaction gives it.

    A plain class rather than a record: one is made per file, and its fields are set one by one
    as the commit goes."""

    __slots__ = ("index", "target", "path", "parent", "name", "original", "xattrs", "after_mode",
                 "parent_missing", "temp", "backup", "backup_kind", "in_place", "names", "backup_stat")

    def __init__(self, index: int, target: PathTarget) -> None:
        self.index = index
        self.target = target
        self.path: str = target.path
        parent, _, name = target.path.rpartition("/")
        self.parent = parent
        self.name = name
        # lstat of the file the plan was computed from (None: the path must be absent).
        self.original: os.stat_result | None = None
        self.xattrs: tuple[tuple[str, bytes], ...] = ()
        # Mode for the new contents (None: leave the creation default, 0o666 less the umask).
        self.after_mode: int | None = None
        self.parent_missing = False
        self.temp: str | None = None
        self.backup: str | None = None
        self.backup_kind: BackupKind | None = None
        # An update of a file with other hard links: rewritten in place (see _rewrite_in_place).
        self.in_place = False
        # How many names the file verified has (its hard links, the journal's aside): the gate
        # looks for the others.
        self.names = 1
        # The before-image as written into the journal folder (with a verify command: what the
        # command may not have changed, see _Transaction._reestablish_journal).
        self.backup_stat: os.stat_result | None = None

    def __repr__(self) -> str:
        return f"_Target({self.index}, {self.path!r})"


class Precheck:
    """Verify and preserve (the transaction's ``verify`` runs it, then the gate)."""

    fs: FileSystemOps
    dirs: DirectoryHandles
    plan: Plan
    txn: str
    targets: list[_Target]
    progress: Callable[[str, int, int], None] | None
    create_dirs: list[str]
    remove_dirs: list[RemovedDir]
    unpublished: list[str]

    def _verify(self) -> None:
        deleted = {t.path for t in self.targets if t.target.before is not None and t.target.after is None}
        removable = set(self.plan.remove_dirs)
        progress = self.progress
        parent: str | None = None
        parent_fd: int | None = None
        for t in self.targets:
            if progress is not None:
                progress("checking", t.index, len(self.targets))
            # Targets are sorted by path, so a folder's files mostly come one after another (a
            # subfolder's may come between them: then the folder is looked up again); within a
            # run nothing opens another folder unless this one is missing (see DirectoryHandles).
            if t.parent != parent or parent_fd is None:
                parent_fd = self._probe_parent(t, deleted)
                parent = t.parent
            if parent_fd is None:
                t.parent_missing = True
            if t.target.before is not None:
                self._verify_original(t, parent_fd)
                continue
            if t.target.after_mode is not None:
                t.after_mode = stat.S_IMODE(t.target.after_mode)
            if parent_fd is not None:
                st = self.fs.lstat(parent_fd, t.name)
                if st is not None and not (stat.S_ISDIR(st.st_mode) and t.path in removable):
                    if stat.S_ISLNK(st.st_mode):
                        raise unsafe_symlink(t.path)
                    raise changed(t.path, "it exists now, but did not when the patch was planned")
            if t.target.after is not None and t.parent_missing:
                self._plan_parent_dirs(t.parent, deleted)
        for path in self._folders_to_remove(deleted):
            parent, name = split_path(path)
            parent_fd = self._existing_dir(parent)
            st = None if parent_fd is None else self.fs.lstat(parent_fd, name)
            if st is None or not stat.S_ISDIR(st.st_mode):
                if st is not None and stat.S_ISLNK(st.st_mode):
                    raise unsafe_symlink(path)
                continue  # already gone, or no longer a directory: nothing to remove
            self.remove_dirs.append(RemovedDir(path, stat.S_IMODE(st.st_mode), (st.st_uid, st.st_gid)))

    def _folders_to_remove(self, deleted: set[str]) -> list[str]:
        """The plan's emptied folders, and any the deletions empty now (deepest first): another
        commit may have deleted the rest of a folder since this plan was made (each of two
        contending commits deleting part of a folder planned to keep it)."""
        def list_now(folder: str) -> list[str]:
            fd = self._existing_dir(folder)
            return [] if fd is None else self.fs.listdir(fd)

        written = (t.path for t in self.targets if t.target.after is not None)
        now = emptied_folders(deleted, written, list_now) if deleted else []
        return sorted(set(self.plan.remove_dirs).union(now), key=lambda p: (-p.count("/"), p))

    def _verify_original(self, t: _Target, parent_fd: int | None) -> None:
        if parent_fd is None:
            raise changed(t.path, "it no longer exists")
        # The original is linked into the journal folder first and read through that link, so
        # the bytes checked are the before-image's own: nothing needs to look again that the link
        # is the file verified. The file is opened at once (never through a symlink, never
        # waiting on a FIFO), and what was opened is looked at: an lstat first would only repeat
        # the fstat of the open file.
        t.backup = backup = backup_name(self.txn, t.index)
        journal_fd = self.dirs.open(JOURNAL_DIR)
        # Listed before it exists: a Ctrl-C right after the link still finds it (abort removes
        # only what is there).
        self.unpublished.append(backup)
        try:
            self.fs.link(parent_fd, t.name, journal_fd, backup)
        except FileNotFoundError:
            raise changed(t.path, "it no longer exists") from None
        except OSError as exc:
            if exc.errno not in _LINK_FALLBACK_ERRNOS:
                raise
            # Not linkable here (another filesystem, a folder, ...): read the file itself, and
            # preserve a copy of it with the journal (listed when it is made).
            self.unpublished.remove(backup)
            t.backup_kind = "copy"
            where_fd, where, links = parent_fd, t.name, 0
        else:
            t.backup_kind = "link"
            where_fd, where, links = journal_fd, backup, 1
        try:
            contents = self.fs.read_file(where_fd, where, with_xattrs=t.target.after is not None,
                                         expected=t.target.before)
        except OSError as exc:
            raise self._not_readable(t, where_fd, where, exc) from None
        if contents.data != t.target.before:
            raise changed(t.path, "its contents differ from what the patch was planned against")
        planned = t.target.before_identity
        if planned is not None and planned != (contents.stat.st_dev, contents.stat.st_ino):
            # The same bytes in another file: a copy saved by an editor, or a hard link to a file
            # elsewhere (outside the root even), which a file with other names would be rewritten
            # in place through. Never the file the plan was computed from: refused.
            raise changed(t.path, "it is another file now (a different inode), though it holds the same bytes")
        mode = stat.S_IMODE(contents.stat.st_mode)
        if t.target.before_mode is not None and stat.S_IMODE(t.target.before_mode) != mode:
            raise changed(t.path, f"its mode is now {mode:o}, not {stat.S_IMODE(t.target.before_mode):o}")
        t.original = contents.stat
        t.xattrs = contents.xattrs
        t.names = contents.stat.st_nlink - links
        if contents.stat.st_nlink - links > 1 and t.backup_kind == "link":
            # The file has other names: its inode stays live under them (and an update rewrites
            # it in place), so only a copy still holds the original afterwards — for a roll back,
            # and for the undo history, which a write through another name must not reach.
            self.fs.unlink(journal_fd, backup)
            self.unpublished.remove(backup)
            t.backup_kind = "copy"
        if t.target.after is not None:
            t.after_mode = mode if t.target.after_mode is None else stat.S_IMODE(t.target.after_mode)
            # Replacing the inode would leave the file's other names with the old contents.
            t.in_place = contents.stat.st_nlink - links > 1

    def _not_readable(self, t: _Target, dir_fd: int, name: str, exc: OSError) -> Exception:
        """What to raise when the file to verify (or its link ``name`` in ``dir_fd``) could not be
        read: gone, a symlink, or no longer a regular file (a folder, a FIFO, a socket...) is a
        change since planning."""
        st = None if exc.errno == errno.ENOENT else self.fs.lstat(dir_fd, name)
        if st is None:
            return changed(t.path, "it no longer exists")
        if stat.S_ISLNK(st.st_mode):
            return unsafe_symlink(t.path)
        if not stat.S_ISREG(st.st_mode):
            return changed(t.path, "it is no longer a regular file")
        # Read through its journal link, the data is still the file's: name the file, not the link.
        return OSError(exc.errno, exc.strerror, t.path)

    def _probe_parent(self, t: _Target, deleted: set[str]) -> int | None:
        """The fd of the target's folder; None if it is missing (the commit will create it)."""
        try:
            return self.dirs.open(t.parent)
        except FileNotFoundError:
            pass
        except NotADirectoryError as exc:
            # A file this plan deletes may stand where a new directory goes ("a" -> "a/b").
            if exc.filename not in deleted:
                raise changed(str(exc.filename), "it is not a directory") from None
        return None

    def _plan_parent_dirs(self, parent: str, deleted: set[str]) -> None:
        parts = parent.split("/")
        for depth in range(1, len(parts) + 1):
            path = "/".join(parts[:depth])
            if path in self.create_dirs:
                continue
            try:
                self.dirs.open(path)
                continue
            except FileNotFoundError:
                pass
            except NotADirectoryError:
                if path not in deleted:
                    raise changed(path, "it is not a directory") from None
            self.create_dirs.append(path)

    def _existing_dir(self, path: str) -> int | None:
        try:
            return self.dirs.open(path)
        except (FileNotFoundError, NotADirectoryError):
            return None


def changed(path: str, why: str) -> ChangedSincePlanningError:
    return ChangedSincePlanningError(
        f"{path} changed since the patch was planned: {why}.",
        hint="Read the file again and recompute the patch.",
        path=path,
    )
