"""The workspace lock: one transaction (or recovery) at a time per workspace, across processes."""

from __future__ import annotations

import os

from ..errors import LockTimeoutError
from .journal import LOCK_NAME, STATE_DIR

TYPE_CHECKING = False
if TYPE_CHECKING:
    from types import TracebackType
    from typing import Any


def lock_path(root: str) -> str:
    return os.path.join(root, STATE_DIR, LOCK_NAME)


def _try_flock_fast(path: str) -> int | None:
    """One non-blocking ``flock`` on the lock file; the held descriptor, or None if contended.

    filelock's Unix lock is the same exclusive ``flock`` on the same file (and it never unlinks the
    file), so a lock taken here excludes filelock holders and vice versa. Importing filelock costs
    more than the whole of a small agent edit, so the uncontended case skips it; any contention or
    unusual filesystem (no flock) goes through filelock's timeout loop below.
    """
    import fcntl

    try:
        fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC | os.O_NOFOLLOW, 0o644)
    except OSError:
        return None
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        os.close(fd)
        return None
    return fd


class workspace_lock:  # lower case: it was (and reads as) a function, ``with workspace_lock(...)``
    """Hold ``<root>/.patchtx/lock`` (which must exist as a folder) for the duration of the block.

    Raises LockTimeoutError, naming the lock file, if another holder keeps it for ``timeout``
    seconds. A process that dies releases it (flock), so a crash never leaves the workspace locked.
    A class rather than a ``contextlib.contextmanager``: contextlib is one more import on every
    commit.
    """

    __slots__ = ("_path", "_timeout", "_fd", "_lock")

    def __init__(self, root: str, timeout: float) -> None:
        self._path = lock_path(root)
        self._timeout = timeout
        self._fd: int | None = None
        self._lock: Any = None

    def __enter__(self) -> None:
        self._fd = _try_flock_fast(self._path)
        if self._fd is not None:
            return
        from filelock import FileLock, Timeout

        lock = FileLock(self._path, timeout=self._timeout, thread_local=False)
        try:
            lock.acquire()
        except Timeout:
            raise LockTimeoutError(
                f"Timed out after {self._timeout:g} s waiting for the workspace lock {self._path}.",
                hint=(
                    "Another patchtx process is committing or recovering in this workspace; let it"
                    " finish and apply the patch again (or allow a longer lock timeout)."
                ),
                path=self._path,
                details={"lock_file": self._path, "timeout": self._timeout},
            ) from None
        self._lock = lock

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, traceback: TracebackType | None
    ) -> None:
        if self._fd is not None:
            fd, self._fd = self._fd, None
            os.close(fd)  # closing the descriptor releases the flock
        elif self._lock is not None:
            lock, self._lock = self._lock, None
            lock.release()
