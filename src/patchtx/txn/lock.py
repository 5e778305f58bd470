"""The workspace lock: one transaction (or recovery) at a time per workspace, across processes.

The lock is an exclusive ``flock`` on ``.patchtx/lock``, mode 0600 (a file others can open, they
can hold the flock of, blocking the workspace), opened from the state folder's descriptor
(itself opened from the root's without following links) with ``O_NOFOLLOW``: a ``.patchtx`` or a
``lock`` swapped for a symbolic link can never make patchtx create or lock a file outside the
root. (filelock, used before, takes a path and follows it; its Unix lock is this same ``flock``.)
A process that dies releases the lock, so a crash never leaves the workspace locked.
"""

from __future__ import annotations

import errno
import os
import stat
import time
from typing import TYPE_CHECKING

from ..errors import LockTimeoutError
from .layout import LOCK_NAME, STATE_DIR
from .statedir import state_folder_error

if TYPE_CHECKING:
    from types import TracebackType

    from .dirs import DirectoryHandles

_FIRST_WAIT = 0.001
_LONGEST_WAIT = 0.05


class workspace_lock:  # lower case: it was (and reads as) a function, ``with workspace_lock(...)``
    """Hold ``.patchtx/lock`` of the workspace at ``root`` (whose descriptors ``dirs`` opens) for
    the duration of the block. The caller has checked the state folder just before
    (``statedir.check_state_folder``, which ``ensure_state_dir`` runs), through the same ``dirs``.

    Raises StateFolderError if the state folder is gone or the lock file is not what patchtx
    makes, and LockTimeoutError, naming the lock file, if another holder keeps it for ``timeout``
    seconds. A class rather than a ``contextlib.contextmanager``: contextlib is one more import on
    every commit.
    """

    # (Hand-written, not a record: a held resource, its descriptor set on entry, not a value.)
    __slots__ = ("_root", "_dirs", "_timeout", "_fd")

    def __init__(self, root: str, dirs: DirectoryHandles, timeout: float) -> None:
        self._root = root
        self._dirs = dirs
        self._timeout = timeout
        self._fd: int | None = None

    def __enter__(self) -> None:
        state_fd = self._dirs.lookup(STATE_DIR)  # (opened, without following links, by the check)
        if state_fd is None:
            raise state_folder_error(STATE_DIR, "it vanished")
        path = f"{STATE_DIR}/{LOCK_NAME}"
        flags = os.O_RDWR | os.O_CREAT | os.O_CLOEXEC | os.O_NOFOLLOW | os.O_NONBLOCK
        try:
            fd = os.open(LOCK_NAME, flags, 0o600, dir_fd=state_fd)
        except OSError as exc:
            why = "it is a symbolic link" if exc.errno == errno.ELOOP else (
                "it is a folder" if exc.errno == errno.EISDIR else exc.strerror or str(exc))
            raise state_folder_error(path, why) from None
        try:
            st = os.fstat(fd)
            if not stat.S_ISREG(st.st_mode):
                raise state_folder_error(path, "it is not a regular file")
            if st.st_mode & 0o077:
                # Others could open it, and hold the flock to block every commit here (older
                # versions created it 0644): ours, so made private.
                os.fchmod(fd, 0o600)
            self._wait_for(fd)
        except BaseException:
            os.close(fd)
            raise
        self._fd = fd

    def _wait_for(self, fd: int) -> None:
        """Take the flock, polling (1 ms, doubling up to 50 ms) until ``timeout`` if it is held."""
        import fcntl  # (not on every platform: _fd.require_posix names it when missing)

        deadline = None
        wait = _FIRST_WAIT
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                return
            except BlockingIOError:
                pass
            if deadline is None:  # held: by the transaction whose verify command runs us?
                from .verify import refuse_inside_own_check  # (off a one-line edit's path)

                refuse_inside_own_check(self._root, os.path.join(self._root, STATE_DIR, LOCK_NAME))
                deadline = time.monotonic() + self._timeout
            left = deadline - time.monotonic()
            if left <= 0:
                raise _timed_out(os.path.join(self._root, STATE_DIR, LOCK_NAME), self._timeout)
            time.sleep(min(wait, left))
            wait = min(wait * 2, _LONGEST_WAIT)

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, traceback: TracebackType | None
    ) -> None:
        if self._fd is not None:
            fd, self._fd = self._fd, None
            os.close(fd)  # closing the descriptor releases the flock


def _timed_out(path: str, timeout: float) -> LockTimeoutError:
    return LockTimeoutError(
        f"Timed out after {timeout:g} s waiting for the workspace lock {path}.",
        hint=(
            "Another patchtx process is committing or recovering in this workspace; let it"
            " finish and apply the patch again (or allow a longer lock timeout)."
        ),
        path=path,
        details={"lock_file": path, "timeout": timeout},
    )
