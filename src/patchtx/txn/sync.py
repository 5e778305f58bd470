"""How each durability barrier of a transaction is made: fsync each descriptor, or syncfs.

A commit has a fixed sequence of barriers (journal data, journal directory, new files, changed
directories, commit mark). Fsyncing each descriptor touches only our own files, so it is immune
to unrelated dirty data elsewhere on the disk; syncfs(2) makes a whole filesystem durable in one
call, which is far cheaper once a barrier covers many files (figures in
``benchmarks/README.md``) but also waits for whatever else is dirty on that filesystem.

The rule: a commit touching N paths spends at most N + 4 durability calls. Each barrier fsyncs its
descriptors one by one while that fits in what is left of the budget (keeping one call for every
later barrier) and stays small; otherwise it uses one syncfs per filesystem.
"""

from __future__ import annotations

from enum import StrEnum
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Sequence

    from .dirs import DirectoryHandles
    from .fsops import FileSystemOps

# A barrier with more descriptors than this uses syncfs even if the budget would allow fsyncs.
_FSYNC_EACH_MAX = 16


class SyncMode(StrEnum):
    NONE = "none"
    """durable=False: no durability calls at all."""
    EACH = "each"
    """fsync every descriptor of the barrier."""
    FILESYSTEM = "filesystem"
    """one syncfs per filesystem."""


class Syncer:
    def __init__(self, fs: FileSystemOps, dirs: DirectoryHandles, *, durable: bool, budget: int, barriers: int) -> None:
        self._fs = fs
        self._dirs = dirs
        self._durable = durable
        self._budget = budget
        self._barriers_left = barriers
        self._spent = 0

    def choose(self, count: int) -> SyncMode:
        """Decide (and account for) the next barrier, which will cover ``count`` descriptors.

        Called before the barrier's files are written, so a caller that gets FILESYSTEM can
        close each file right after writing it instead of keeping hundreds of fds open.
        """
        if not self._durable or count == 0:
            self._barriers_left = max(self._barriers_left - 1, 0)
            return SyncMode.NONE
        self._barriers_left = max(self._barriers_left - 1, 0)
        affordable = self._budget - self._spent - self._barriers_left
        if count <= min(affordable, _FSYNC_EACH_MAX) or not self._fs.supports_syncfs:
            self._spent += count
            return SyncMode.EACH
        self._spent += len(self._dirs.filesystem_fds())
        return SyncMode.FILESYSTEM

    def run(self, mode: SyncMode, fds: Sequence[int]) -> None:
        """Perform a barrier chosen by :meth:`choose`; ``fds`` is only needed for EACH."""
        if mode is SyncMode.EACH:
            self._fs.fsync(fds)
        elif mode is SyncMode.FILESYSTEM:
            self._fs.syncfs(self._dirs.filesystem_fds())

    def barrier(self, fds: Sequence[int]) -> None:
        """choose + run, for barriers whose descriptors are all at hand."""
        self.run(self.choose(len(fds)), fds)

    def hold(self, held: list[int], fd: int) -> None:
        """Keep a written file's ``fd`` in ``held`` until its barrier fsyncs it, or close it now
        when nothing will (not durable).

        Never more than the descriptor budget allows (``DirectoryHandles.held_files``): at that
        many, the ones held are fsynced (one numbered call) and closed early, which makes them no
        less durable by the barrier. Closes ``fd`` if that fsync fails.
        """
        if not self._durable:
            self._fs.close(fd)
            return
        held.append(fd)
        if len(held) >= self._dirs.held_files:
            try:
                self._fs.fsync(held)
            finally:
                for kept in held:
                    self._fs.close(kept)
                held.clear()

    def sync_dirs(self, mode: SyncMode, paths: Sequence[str]) -> None:
        """Run a barrier chosen by :meth:`choose` over the directories at ``paths``.

        With EACH, in groups the directory cache keeps open together (each ``dirs.open`` may
        evict the least recently used descriptor, and a small descriptor budget makes the cache
        small), one fsync call per group.
        """
        if mode is not SyncMode.EACH:
            self.run(mode, ())
            return
        group = max(1, self._dirs.capacity - 2)
        for start in range(0, len(paths), group):
            self._fs.fsync([self._dirs.open(path) for path in paths[start:start + group]])
