"""The only code in patchtx that changes the filesystem.

Every mutating call (create, write, truncate, chmod/chown, xattr, fsync, syncfs, rename, link, unlink, mkdir,
rmdir, and batched unlinks) goes through :meth:`FileSystemOps._call`, which numbers it. The tests' implementations
(``tests/fsops_testing.py``) override the single hook :meth:`FileSystemOps._perform` to record, fail or
"crash" at call N, so "call N" means the same thing in every test.

All paths are handled relative to directory file descriptors opened with ``O_NOFOLLOW``: a symlink
swapped in between a check and a write is never followed, the call fails instead. The object keeps
the workspace-relative path of every descriptor it opened, so recorded calls and error messages can
name paths rather than numbers.
"""

from __future__ import annotations

import errno
import os
import stat
import sys
from typing import TYPE_CHECKING

from .._record import record
from ..workspace._fd import (
    DIR_FLAGS,
    O_CLOEXEC,
    O_NOFOLLOW,
    O_NONBLOCK,
    READ_FLAGS,
    read_compared,
    read_whole,
    require_posix,
)

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence
    from typing import TypeVar

if TYPE_CHECKING:
    _T = TypeVar("_T")
    _A = TypeVar("_A")
    Place = int | tuple[int, str]
    """What a call acts on: a descriptor, or a name in the folder of a descriptor."""

_CREATE_FLAGS = os.O_WRONLY | os.O_CREAT | os.O_EXCL | O_NOFOLLOW | O_CLOEXEC
# An existing file rewritten in place (one with other hard links): never through a symlink, never a
# FIFO's blocking open, never created.
_REWRITE_FLAGS = os.O_WRONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC

# Extended attributes carried over when a file is replaced: user data and POSIX ACLs, and as root
# trusted.* (only a privileged process can read or write those; Codex, writing in place, keeps
# them). security.* (SELinux labels, file capabilities) is left to the kernel's policy for the new
# inode on purpose.
_PRESERVED_XATTR_PREFIXES = ("user.", "system.posix_acl_access")
_PRIVILEGED_XATTR_PREFIXES = ("trusted.",)

# Below this many items, fsync/unlink one by one (cheaper than starting threads).
_THREADED_FSYNC_MIN = 8
_THREADS = 16


@record
class Call:
    """One mutating call, as numbered by the choke point."""

    index: int
    """1-based position among the mutating calls this object has made."""
    op: str
    """mkdir, rmdir, create, write, truncate, fchmod, fchown, setxattr, fsync, syncfs, rename, link,
    unlink, unlink_many."""
    path: str
    """Workspace-relative path acted on ("" is the root); for fd-based calls, the fd's path."""
    target: str | None = None
    """Destination of a rename or link."""
    data: bytes | None = None
    """Bytes of a write."""
    mode: int | None = None
    """Mode of a create, mkdir or fchmod."""
    paths: tuple[str, ...] = ()
    """For fsync: every path made durable. For syncfs: one path per filesystem synced. For
    unlink_many: every path unlinked."""


@record
class FileContents:
    data: bytes
    stat: os.stat_result
    xattrs: tuple[tuple[str, bytes], ...]


def join(parent: str, name: str) -> str:
    return f"{parent}/{name}" if parent else name


class FileSystemOps:
    """Real filesystem operations; subclasses intercept :meth:`_perform` to test failures.

    One instance serves one commit or recovery at a time (it is not thread-safe, and ``calls``
    and ``fsyncs`` are cumulative counters for reports and tests).
    """

    def __init__(self, *, allow_syncfs: bool = True) -> None:
        require_posix()
        self.calls = 0
        """Mutating calls made so far; the index of the next one is ``calls + 1``."""
        self.fsyncs = 0
        """Durability system calls made: one per fsync(2), one per syncfs(2)."""
        self._performs_plainly = (type(self)._perform is FileSystemOps._perform
                                  and type(self)._call is FileSystemOps._call)
        """No subclass intercepts calls, at either hook (tests' failing, crashing and recording
        layers override ``_perform``)."""
        self.last_failure: tuple[Call, OSError] | None = None
        """The most recent mutating call that raised, with its error (to explain the error)."""
        self.allow_syncfs = allow_syncfs
        self._paths: dict[int, str] = {}

    # -- the choke point ------------------------------------------------------------------------

    def _call(
        self,
        op: str,
        where: Place,
        function: Callable[..., _T],
        *args: object,
        target: Place | None = None,
        data: bytes | None = None,
        mode: int | None = None,
        paths: Callable[[], tuple[str, ...]] | None = None,
        **keywords: object,
    ) -> _T:
        """Number and perform ``function(*args, **keywords)``: every mutating call comes here.

        ``where`` (and ``target``, for a rename or link) is the descriptor acted on or a
        (folder descriptor, name) pair; ``paths`` gives the paths of a call on several. They are
        named, and the ``Call`` record built, only when a subclass intercepts calls or the call
        fails: a large commit makes thousands of these calls, nearly always plainly."""
        self.calls += 1
        if self._performs_plainly:
            try:
                return function(*args, **keywords)
            except OSError as exc:
                self.last_failure = (self._record(op, where, target, data, mode, paths), exc)
                raise
        call = self._record(op, where, target, data, mode, paths)
        try:
            return self._perform(call, lambda: function(*args, **keywords))
        except OSError as exc:
            self.last_failure = (call, exc)
            raise

    def _record(self, op: str, where: Place, target: Place | None, data: bytes | None, mode: int | None,
                paths: Callable[[], tuple[str, ...]] | None) -> Call:
        """The ``Call`` record of the call being made (its index is ``calls``)."""
        return Call(self.calls, op, self._name(where), target=None if target is None else self._name(target),
                    data=data, mode=mode, paths=() if paths is None else paths())

    def _name(self, place: Place) -> str:
        """The workspace-relative path of a descriptor or a (folder descriptor, name) pair."""
        if isinstance(place, int):
            return self.path_of(place)
        return join(self.path_of(place[0]), place[1])

    def _perform(self, call: Call, action: Callable[[], _T]) -> _T:
        """Hook for test implementations: record, fail or crash instead of (or before) acting."""
        return action()

    # -- descriptors and reads (not numbered: they change nothing) ------------------------------

    def path_of(self, fd: int) -> str:
        return self._paths.get(fd, f"<fd {fd}>")

    def open_root(self, root: str) -> int:
        fd = os.open(root, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
        self._paths[fd] = ""
        return fd

    def open_folder(self, path: str, label: str) -> int:
        """Open a folder outside the workspace by its absolute path (the last component never
        through a symlink), named ``label`` in recorded calls: the verify step's copies
        (``escrow``) live in the per-user state folder."""
        fd = os.open(path, DIR_FLAGS)
        self._paths[fd] = label
        return fd

    def open_dir(self, dir_fd: int, name: str) -> int:
        """Open a subdirectory; raises OSError (ELOOP for a symlink, ENOTDIR, ENOENT)."""
        path = join(self.path_of(dir_fd), name)
        try:
            fd = os.open(name, DIR_FLAGS, dir_fd=dir_fd)
        except OSError as exc:
            raise _with_path(exc, path) from None
        self._paths[fd] = path
        return fd

    def close(self, fd: int) -> None:
        self._paths.pop(fd, None)
        os.close(fd)

    def lstat(self, dir_fd: int, name: str) -> os.stat_result | None:
        """The entry's own status (never following a symlink), or None if it does not exist."""
        try:
            return os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
        except FileNotFoundError:
            return None
        except OSError as exc:
            raise _with_path(exc, join(self.path_of(dir_fd), name)) from None

    def fstat(self, fd: int) -> os.stat_result:
        return os.fstat(fd)

    def listdir(self, dir_fd: int) -> list[str]:
        try:
            return os.listdir(dir_fd)
        except OSError as exc:
            raise _with_path(exc, self.path_of(dir_fd)) from None

    def read_file(self, dir_fd: int, name: str, *, with_xattrs: bool = False,
                  expected: bytes | None = None) -> FileContents:
        """Read a regular file without following a symlink; ELOOP/EISDIR/EINVAL otherwise. Given
        the bytes the file is ``expected`` to hold, a file that holds them answers with that very
        object (see ``read_compared``)."""
        try:
            fd = os.open(name, READ_FLAGS, dir_fd=dir_fd)
        except OSError as exc:
            raise _with_path(exc, join(self.path_of(dir_fd), name)) from None
        try:
            st = os.fstat(fd)
            if not stat.S_ISREG(st.st_mode):
                raise OSError(errno.EINVAL, "not a regular file")
            data = read_whole(fd, st.st_size) if expected is None else read_compared(fd, st.st_size, expected)
            xattrs = _read_preserved_xattrs(fd) if with_xattrs else ()
            return FileContents(data, st, xattrs)
        except OSError as exc:
            raise _with_path(exc, join(self.path_of(dir_fd), name)) from None
        finally:
            os.close(fd)

    def open_for_rewrite(self, dir_fd: int, name: str) -> int:
        """Open an existing regular file for writing in place (not numbered: opening changes
        nothing; the writes and the truncation that follow are). Raises OSError: ELOOP for a
        symlink, EROFS / EPERM / EACCES where the file cannot be written."""
        path = join(self.path_of(dir_fd), name)
        try:
            fd = os.open(name, _REWRITE_FLAGS, dir_fd=dir_fd)
        except OSError as exc:
            error = _with_path(exc, path)
            # Recorded (as the call it would have been) so the error can say what was being done.
            self.last_failure = (Call(self.calls + 1, "open_for_rewrite", path), error)
            raise error from None
        self._paths[fd] = path
        return fd

    # -- mutating calls -------------------------------------------------------------------------

    def mkdir(self, dir_fd: int, name: str, mode: int = 0o777) -> None:
        self._call("mkdir", (dir_fd, name), os.mkdir, name, mode, mode=mode, dir_fd=dir_fd)

    def rmdir(self, dir_fd: int, name: str) -> None:
        self._call("rmdir", (dir_fd, name), os.rmdir, name, dir_fd=dir_fd)

    def create(self, dir_fd: int, name: str, mode: int = 0o666) -> int:
        """Create a new file (never an existing one, never through a symlink), open for writing."""
        fd = self._call("create", (dir_fd, name), os.open, name, _CREATE_FLAGS, mode, mode=mode, dir_fd=dir_fd)
        self._paths[fd] = join(self.path_of(dir_fd), name)
        return fd

    def write(self, fd: int, data: bytes) -> None:
        """Write all of ``data`` (looping over short writes) as one numbered call."""
        self._call("write", fd, _write_all, fd, data, data=data)

    def fchmod(self, fd: int, mode: int) -> None:
        self._call("fchmod", fd, os.fchmod, fd, mode, mode=mode)

    def truncate(self, fd: int, length: int) -> None:
        """Cut an open file to ``length`` bytes (after rewriting it in place)."""
        self._call("truncate", fd, os.ftruncate, fd, length)

    def fchown(self, fd: int, uid: int, gid: int) -> None:
        self._call("fchown", fd, os.fchown, fd, uid, gid)

    def fsetxattr(self, fd: int, name: str, value: bytes) -> None:
        # Only called with attributes read by _read_preserved_xattrs, which finds none where the
        # platform's os module has no xattr functions (macOS).
        self._call("setxattr", fd, os.setxattr, fd, name, value)

    def rename(self, src_dir_fd: int, src: str, dst_dir_fd: int, dst: str) -> None:
        self._call("rename", (src_dir_fd, src), os.rename, src, dst, target=(dst_dir_fd, dst),
                   src_dir_fd=src_dir_fd, dst_dir_fd=dst_dir_fd)

    def link(self, src_dir_fd: int, src: str, dst_dir_fd: int, dst: str) -> None:
        self._call("link", (src_dir_fd, src), os.link, src, dst, target=(dst_dir_fd, dst),
                   src_dir_fd=src_dir_fd, dst_dir_fd=dst_dir_fd, follow_symlinks=False)

    def unlink(self, dir_fd: int, name: str) -> None:
        self._call("unlink", (dir_fd, name), os.unlink, name, dir_fd=dir_fd)

    def unlink_many(self, dir_fd: int, names: Sequence[str], *, frees_data: bool = True) -> None:
        """Unlink several names in one directory: one numbered call.

        Many at once run from threads: when unlinking frees the last link to allocated blocks,
        each unlink may wait for a filesystem journal commit (ext4 with ``discard``), and
        concurrent unlinks share those commits. Names known to have another link
        (``frees_data=False``) only lose a directory entry, which is cheaper than a thread.
        """
        if not names:
            return
        parent = self.path_of(dir_fd)
        self._call("unlink_many", (dir_fd, names[0]),
                   lambda: _each(lambda name: os.unlink(name, dir_fd=dir_fd), names, threaded=frees_data),
                   paths=lambda: tuple(join(parent, n) for n in names))

    def fsync(self, fds: Sequence[int]) -> None:
        """Make each descriptor's file or directory durable: one numbered call, len(fds) fsyncs."""
        if not fds:
            return

        def sync_each() -> None:
            full_flush = _full_fsync_function()
            if full_flush is not None:
                # macOS: fsync leaves the data in the drive's cache. F_FULLFSYNC also flushes that
                # cache, all of it, so the barrier is each fsync then one full flush per device.
                last_of_device = {self.fstat(fd).st_dev: fd for fd in fds}
                flushing = set(last_of_device.values())
                _each(os.fsync, [fd for fd in fds if fd not in flushing])
                for fd in flushing:
                    full_flush(fd)
            else:
                _each(os.fsync, fds)
            self.fsyncs += len(fds)

        self._call("fsync", fds[0], sync_each, paths=lambda: tuple(map(self.path_of, fds)))

    @property
    def supports_syncfs(self) -> bool:
        return self.allow_syncfs and _syncfs_function() is not None

    def syncfs(self, fds: Sequence[int]) -> None:
        """Make everything on each descriptor's filesystem durable (one syncfs(2) per fd).

        Callers pass one descriptor per filesystem. Only used where the kernel reports writeback
        errors from syncfs (Linux 5.8+), so a failed write cannot go unnoticed.
        """
        if not fds:
            return
        syncfs = _syncfs_function()
        if syncfs is None or not self.allow_syncfs:
            raise OSError(errno.ENOSYS, "syncfs is not available")

        def sync_filesystems() -> None:
            for fd in fds:
                syncfs(fd)
                self.fsyncs += 1

        self._call("syncfs", fds[0], sync_filesystems, paths=lambda: tuple(map(self.path_of, fds)))


def _with_path(exc: OSError, path: str) -> OSError:
    """The same error (same subclass) naming the workspace-relative path instead of a bare name."""
    if exc.errno is None:
        return exc
    return OSError(exc.errno, exc.strerror, path)


def _write_all(fd: int, data: bytes) -> None:
    written = os.write(fd, data)
    if written != len(data):  # a short write: finish it
        view = memoryview(data)[written:]
        while view:
            view = view[os.write(fd, view):]


def _read_preserved_xattrs(fd: int) -> tuple[tuple[str, bytes], ...]:
    # Looked up at each call: Linux's os has them, macOS's and the BSDs' do not (those files' extended
    # attributes are not carried over; docs/guarantees.md, section 8).
    listxattr = getattr(os, "listxattr", None)
    if listxattr is None:
        return ()
    try:
        names = listxattr(fd)
    except OSError as exc:
        if exc.errno in (errno.ENOTSUP, errno.EOPNOTSUPP, errno.ENOSYS):
            return ()
        raise
    if not names:
        return ()
    kept = _PRESERVED_XATTR_PREFIXES + (_PRIVILEGED_XATTR_PREFIXES if os.geteuid() == 0 else ())
    return tuple((name, os.getxattr(fd, name)) for name in sorted(names) if name.startswith(kept))


def _each(function: Callable[[_A], object], items: Sequence[_A], *, threaded: bool = True) -> None:
    """``function`` of each item: one by one below ``_THREADED_FSYNC_MIN`` items (or unless
    ``threaded``), else from threads."""
    if len(items) < _THREADED_FSYNC_MIN or not threaded:
        for item in items:
            function(item)
        return
    # fsync and unlink release the GIL, and concurrent calls share journal commits (ext4, xfs).
    from concurrent.futures import ThreadPoolExecutor  # (off a one-line edit's path)

    with ThreadPoolExecutor(max_workers=min(_THREADS, len(items))) as pool:
        for _ in pool.map(function, items):
            pass


def _full_fsync_function() -> Callable[[int], None] | None:
    """fcntl(F_FULLFSYNC) where the platform has it (macOS), as SQLite does; it falls back to
    fsync for a filesystem that refuses it (some network and FAT volumes). None elsewhere."""
    try:
        import fcntl  # (not on every platform: macOS's F_FULLFSYNC is looked for)
    except ImportError:
        return None
    command = getattr(fcntl, "F_FULLFSYNC", None)
    if command is None:
        return None
    control = fcntl.fcntl

    def full_fsync(fd: int) -> None:
        try:
            control(fd, command)
        except OSError as exc:
            if exc.errno not in (errno.EINVAL, errno.ENOTTY, errno.ENOTSUP, errno.EOPNOTSUPP, errno.ENOSYS):
                raise
            os.fsync(fd)

    return full_fsync


_syncfs_cache: list[Callable[[int], None] | None] = []


def _syncfs_function() -> Callable[[int], None] | None:
    """syncfs(2) through ctypes, if this kernel reports writeback errors from it (Linux >= 5.8)."""
    if not _syncfs_cache:
        _syncfs_cache.append(_load_syncfs())
    return _syncfs_cache[0]


def _load_syncfs() -> Callable[[int], None] | None:
    if not sys.platform.startswith("linux") or not _kernel_at_least(5, 8):
        return None
    try:
        import ctypes  # (off a one-line edit's path)
    except ImportError:
        return None
    try:
        libc_syncfs = ctypes.CDLL(None, use_errno=True).syncfs
    except (OSError, AttributeError):
        return None
    libc_syncfs.argtypes = [ctypes.c_int]
    libc_syncfs.restype = ctypes.c_int

    def syncfs(fd: int) -> None:
        if libc_syncfs(fd) != 0:
            code = ctypes.get_errno()
            raise OSError(code, os.strerror(code))

    return syncfs


def _kernel_at_least(major: int, minor: int) -> bool:
    release = os.uname().release
    parts = release.split(".", 2)
    try:
        return (int(parts[0]), int("".join(c for c in parts[1] if c.isdigit()) or 0)) >= (major, minor)
    except (IndexError, ValueError):
        return False


def give_owner(fs: FileSystemOps, fd: int, owner: tuple[int, int],
               current: os.stat_result | None = None) -> bool:
    """Give an open file or folder the recorded ``(uid, gid)``: the owner as root, at least the
    group where this user may. ``current`` is its fstat if the caller has it. True if it changed."""
    if current is None:
        current = fs.fstat(fd)
    if (current.st_uid, current.st_gid) == owner:
        return False
    if os.geteuid() == 0:
        fs.fchown(fd, *owner)
        return True
    if owner[1] != current.st_gid and owner[1] in os.getgroups():
        fs.fchown(fd, -1, owner[1])
        return True
    return False


def split_path(path: str) -> tuple[str, str]:
    """A workspace-relative path as (parent folder, name); the root's parent is ""."""
    parent, _, name = path.rpartition("/")
    return parent, name
