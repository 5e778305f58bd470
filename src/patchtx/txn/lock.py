"""The workspace lock: one transaction (or recovery) at a time per workspace, across processes."""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager

from ..errors import LockTimeoutError
from .journal import LOCK_NAME, STATE_DIR


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


@contextmanager
def workspace_lock(root: str, timeout: float) -> Iterator[None]:
    """Hold ``<root>/.patchtx/lock`` (which must exist as a folder) for the duration of the block.

    Raises LockTimeoutError, naming the lock file, if another holder keeps it for ``timeout``
    seconds. A process that dies releases it (flock), so a crash never leaves the workspace locked.
    """
    path = lock_path(root)
    fast = _try_flock_fast(path)
    if fast is not None:
        try:
            yield
        finally:
            os.close(fast)  # closing the descriptor releases the flock
        return
    from filelock import FileLock, Timeout

    lock = FileLock(path, timeout=timeout, thread_local=False)
    try:
        lock.acquire()
    except Timeout:
        raise LockTimeoutError(
            f"Timed out after {timeout:g} s waiting for the workspace lock {path}.",
            hint=(
                "Another patchtx process is committing or recovering in this workspace; let it"
                " finish and apply the patch again (or allow a longer lock timeout)."
            ),
            path=path,
            details={"lock_file": path, "timeout": timeout},
        ) from None
    try:
        yield
    finally:
        lock.release()
