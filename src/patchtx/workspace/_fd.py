"""Descriptors: reading a whole file from one (shared by the workspace, planning, and fsops, the
commit), how many this process may still open, the nearest folder of a path already open (both
keep folders open by path), and whether the platform has the descriptor-relative calls both rely
on."""

from __future__ import annotations

import os
import sys
from typing import TYPE_CHECKING

from ..errors import UnsupportedPlatformError

if TYPE_CHECKING:
    from collections.abc import Mapping

# POSIX flags; looked up with a default so that every module imports everywhere, and a platform
# without them (Windows) gets UnsupportedPlatformError from require_posix instead of a traceback.
O_DIRECTORY = getattr(os, "O_DIRECTORY", 0)
O_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
O_NONBLOCK = getattr(os, "O_NONBLOCK", 0)
O_CLOEXEC = getattr(os, "O_CLOEXEC", 0)
DIR_FLAGS = os.O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC
"""A folder opened from its parent's descriptor, never through a symbolic link."""
READ_FLAGS = os.O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC
"""A file opened for reading, never through a symbolic link, never blocking on a planted FIFO."""

# Descriptors left for what a commit opens for a moment (the lock, the file being read or
# written, the journal, a module imported on the way) and for whoever else shares the process.
DESCRIPTOR_RESERVE = 24
# Where RLIMIT_NOFILE is unlimited or unknown.
_UNLIMITED = 1 << 16


def descriptor_budget() -> int:
    """How many more descriptors this process may keep open at once: the soft ``RLIMIT_NOFILE``
    less those open now and :data:`DESCRIPTOR_RESERVE` (at least 1).

    A commit's caches (directory descriptors, files waiting for a durability barrier) size
    themselves to it, so a large patch under a small limit does not fail with EMFILE.
    """
    try:  # the soft RLIMIT_NOFILE, without loading the resource module's extension
        soft = os.sysconf("SC_OPEN_MAX")
    except (AttributeError, OSError, ValueError):  # no sysconf (Windows), or no answer
        soft = -1
    if soft < 0:  # unlimited
        soft = _UNLIMITED
    return max(1, min(soft, _UNLIMITED) - _open_descriptors() - DESCRIPTOR_RESERVE)


def nearest_open_folder(relpath: str, open_folders: Mapping[str, int]) -> tuple[int, int | None]:
    """The deepest folder above ``relpath`` (workspace-relative, ``/``-separated) whose descriptor
    ``open_folders`` holds: how many of ``relpath``'s parts it covers, and its descriptor; (0, None)
    for none. Each folder is a slice of the path: joining its parts again at each level made deep
    paths cubic."""
    cut = len(relpath)
    while (cut := relpath.rfind("/", 0, cut)) >= 0:  # each folder above, the nearest first
        fd = open_folders.get(relpath[:cut])
        if fd is not None:
            return relpath.count("/", 0, cut) + 1, fd
    return 0, None


def _open_descriptors() -> int:
    """Descriptors open now (Linux, macOS and the BSDs list them in /dev/fd), else the standard three."""
    try:
        return len(os.listdir("/dev/fd")) - 1  # less the one listdir opened
    except OSError:
        return 3


def read_whole(fd: int, size: int) -> bytes:
    """The file's bytes to EOF, given fstat's ``size``.

    One read of the whole file: 1 MiB blocks cost a second copy of a 10 MB file. Exactly ``size``
    bytes in answer to a request for one byte more is EOF, so no read(2) that returns 0; any other
    length (the file grew or shrank, a size-0 /proc file, the kernel's 2 GiB cap on one read)
    reads on to EOF.
    """
    data = os.read(fd, max(size + 1, 1 << 16))
    if len(data) != size:
        chunks = [data]
        while block := os.read(fd, max(size + 1, 1 << 16)):
            chunks.append(block)
        data = b"".join(chunks)
    return data


_COMPARE_BLOCK = 1 << 16


def read_compared(fd: int, size: int, expected: bytes) -> bytes:
    """``read_whole``'s answer, for a file expected to hold ``expected``: when it does, that very
    object is returned.

    The file is read in 64 KiB blocks into one reused buffer and compared block by block (memcmp),
    so a large file that is as expected costs no buffer of its size (a fresh buffer is paid in
    page faults, and a small one stays in the CPU's cache between the read and the compare). A
    file of another size, or no larger than a block, is read whole.
    """
    if size != len(expected) or size <= _COMPARE_BLOCK:
        return read_whole(fd, size)
    buffer = bytearray(_COMPARE_BLOCK)
    block = memoryview(buffer)
    position = 0
    while count := os.readv(fd, [buffer]):
        if not expected.startswith(block[:count], position):
            # Different (or longer): what was read, then the rest, as read_whole would give it.
            pieces = [expected[:position], bytes(block[:count])]
            while more := os.read(fd, _COMPARE_BLOCK):
                pieces.append(more)
            return b"".join(pieces)
        position += count
    return expected if position == len(expected) else expected[:position]


def missing_posix_features() -> list[str]:
    """What this platform lacks of what a commit needs: descriptor-relative calls that never
    follow a symlink, and flock. Empty on Linux, macOS and the BSDs; not on Windows."""
    missing = [f"os.{flag}" for flag in ("O_DIRECTORY", "O_NOFOLLOW", "O_NONBLOCK") if not hasattr(os, flag)]
    missing += [f"dir_fd support in os.{function.__name__}"
                for function in (os.open, os.stat, os.mkdir, os.rmdir, os.unlink, os.rename, os.link)
                if function not in os.supports_dir_fd]
    if os.listdir not in os.supports_fd:
        missing.append("listing a directory by descriptor (os.listdir)")
    try:
        import fcntl  # (not on every platform: this is the probe)  # noqa: F401
    except ImportError:
        missing.append("the fcntl module (flock)")
    return missing


_posix_checked: list[bool] = []


def require_posix() -> None:
    """Raise UnsupportedPlatformError, naming what is missing, where patchtx cannot work (checked
    once: by the workspace before planning reads a file, by FileSystemOps before a commit)."""
    if _posix_checked:
        return
    missing = missing_posix_features()
    if missing:
        raise UnsupportedPlatformError(
            f"patchtx cannot change files on this platform ({sys.platform}): its transactions"
            f" need POSIX directory descriptors, and this Python lacks {', '.join(missing)}.",
            hint="Run patchtx on Linux, macOS or another POSIX system (on Windows: under WSL).",
        )
    _posix_checked.append(True)
