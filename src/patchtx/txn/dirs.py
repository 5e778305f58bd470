"""Directory descriptors of one workspace, opened component by component without following links.

A transaction addresses every file as (directory fd, name). This module turns a workspace-relative
directory path into such an fd by walking from the root fd with ``O_NOFOLLOW``, so a symlink met on
the way is refused (``unsafe_path``) instead of followed, even one swapped in after planning.
"""

from __future__ import annotations

import errno
import stat

from ..errors import UnsafePathError
from ..workspace._fd import descriptor_budget, nearest_open_folder
from .fsops import FileSystemOps

# The cache's size where descriptors are plentiful (see descriptor_budget otherwise).
MAX_CACHED_DIRECTORIES = 256


class DirectoryHandles:
    """A small LRU cache of open directory fds keyed by workspace-relative path, sized to the
    descriptors the process may open (``RLIMIT_NOFILE``).

    Each :meth:`open` inserts at most one entry and evicts at most the least recently returned
    one, so an fd stays open until ``capacity - 1`` other directories have been returned after
    it (:meth:`forget` aside). Callers rely on two at once (a rename between directories), and a
    loop over a run of one folder's files keeps that folder's fd while it opens no other folder
    but the journal folder.
    """

    def __init__(self, fs: FileSystemOps, root_fd: int, *, capacity: int | None = None, root: str = "") -> None:
        budget = descriptor_budget()
        if capacity is None:
            # Half the descriptors the process may still open, at most 256; the other half is for
            # files held open until a durability barrier (``held_files``).
            capacity = max(3, min(MAX_CACHED_DIRECTORIES, budget // 2))
        if capacity < 3:
            raise ValueError("capacity must leave room for two fds in use plus one new")
        self.fs = fs
        self.root_fd = root_fd
        self.root = root
        """The workspace's real path (what its journals' signatures are bound to)."""
        self._capacity = capacity
        self.held_files = max(1, budget - capacity)
        """How many file descriptors a commit may hold open at once (for a barrier) besides these."""
        # Insertion order is recency: the least recently used folder is the first key.
        self._cache: dict[str, int] = {}
        self._device_dirs: dict[int, str] = {fs.fstat(root_fd).st_dev: ""}

    def open(self, relpath: str) -> int:
        """An fd for an existing directory; FileNotFoundError / NotADirectoryError otherwise."""
        if relpath == "":
            return self.root_fd
        cached = self._cache.get(relpath)
        if cached is not None:
            self._cache[relpath] = self._cache.pop(relpath)
            return cached
        parts = relpath.split("/")
        start, ancestor = nearest_open_folder(relpath, self._cache)
        fd = self.root_fd if ancestor is None else ancestor
        transient: list[int] = []
        try:
            for depth in range(start, len(parts)):
                fd = self._open_child(fd, parts, depth)
                transient.append(fd)
        finally:
            for intermediate in transient[:-1]:
                self.fs.close(intermediate)
        self._remember(relpath, fd)
        return fd

    def lookup(self, relpath: str) -> int | None:
        """Like :meth:`open`, but None if the directory (or one of its parents) does not exist."""
        try:
            return self.open(relpath)
        except FileNotFoundError:
            return None

    def forget(self, relpath: str) -> None:
        """Drop cached fds of ``relpath`` and everything under it (after it was removed)."""
        prefix = relpath + "/"
        for path in [p for p in self._cache if p == relpath or p.startswith(prefix)]:
            self.fs.close(self._cache.pop(path))

    @property
    def capacity(self) -> int:
        return self._capacity

    def filesystem_fds(self) -> list[int]:
        """One open directory fd per filesystem seen so far (for syncfs)."""
        fds = (self.lookup(path) for path in self._device_dirs.values())
        return [fd for fd in fds if fd is not None]

    def close_all(self) -> None:
        while self._cache:
            _, fd = self._cache.popitem()
            self.fs.close(fd)

    def _remember(self, relpath: str, fd: int) -> None:
        self._cache[relpath] = fd
        self._device_dirs.setdefault(self.fs.fstat(fd).st_dev, relpath)
        while len(self._cache) > self._capacity:
            evicted = self._cache.pop(next(iter(self._cache)))
            self.fs.close(evicted)

    def _open_child(self, parent_fd: int, parts: list[str], depth: int) -> int:
        """Open ``parts[depth]`` in ``parent_fd``; the error names ``parts[:depth + 1]``."""
        name = parts[depth]
        try:
            return self.fs.open_dir(parent_fd, name)
        except OSError as exc:
            relpath = "/".join(parts[: depth + 1])
            if exc.errno == errno.ENOENT:
                raise FileNotFoundError(errno.ENOENT, "no such directory", relpath) from None
            if exc.errno not in (errno.ELOOP, errno.ENOTDIR):
                raise
        st = self.fs.lstat(parent_fd, name)
        if st is not None and stat.S_ISLNK(st.st_mode):
            raise unsafe_symlink(relpath)
        if st is None:
            raise FileNotFoundError(errno.ENOENT, "no such directory", relpath)
        raise NotADirectoryError(errno.ENOTDIR, "not a directory", relpath)


def unsafe_symlink(relpath: str) -> UnsafePathError:
    return UnsafePathError(
        f"Refusing to commit through the symbolic link {relpath}: a symlink appeared where the"
        " plan expected a real file or directory.",
        hint="Check what replaced it, then plan the patch again.",
        path=relpath,
    )
