"""The workspace lock: one transaction (or recovery) at a time per workspace, across processes."""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager

from ..errors import LockTimeoutError
from .journal import LOCK_NAME, STATE_DIR


def lock_path(root: str) -> str:
    return os.path.join(root, STATE_DIR, LOCK_NAME)


@contextmanager
def workspace_lock(root: str, timeout: float) -> Iterator[None]:
    """Hold ``<root>/.patchtx/lock`` (which must exist as a folder) for the duration of the block.

    Raises LockTimeoutError, naming the lock file, if another holder keeps it for ``timeout``
    seconds. A process that dies releases it (flock), so a crash never leaves the workspace locked.
    """
    # filelock costs ~70 ms to import; only pay it when a transaction actually runs.
    from filelock import FileLock, Timeout

    path = lock_path(root)
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
