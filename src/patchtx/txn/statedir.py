"""The ``.patchtx`` state folder: created on first use, ignored by git, durable before it is used."""

from __future__ import annotations

import contextlib
import errno
import os
import re

from .dirs import DirectoryHandles
from .fsops import FileSystemOps
from .journal import GITIGNORE, GITIGNORE_TEXT, JOURNAL_DIR, STATE_DIR

_GITIGNORE_TEMP = re.compile(r"^\.gitignore\.[0-9a-f]{8}\.tmp$")
_GITIGNORE_ATTEMPTS = 3


def ensure_state_dir(fs: FileSystemOps, dirs: DirectoryHandles, *, durable: bool) -> None:
    """Create ``.patchtx/journal`` and ``.patchtx/.gitignore`` if missing.

    The ``.gitignore`` is written last, after fsyncing the new folders' parents: its presence
    tells later commits that the folders' own directory entries are durable, so they need not
    fsync the root and ``.patchtx`` every time (a crash half-way through leaves it missing, and
    the next commit redoes the whole setup). Safe to run by several processes at once: it runs
    before the lock, since the lock file lives inside the folder.
    """
    state_fd = dirs.lookup(STATE_DIR)
    if state_fd is not None and dirs.lookup(JOURNAL_DIR) is not None and _gitignore_is_in_place(fs, state_fd):
        return
    _mkdir_unless_exists(fs, dirs.root_fd, STATE_DIR)
    state_fd = dirs.open(STATE_DIR)
    _mkdir_unless_exists(fs, state_fd, os.path.basename(JOURNAL_DIR))
    if durable:
        fs.fsync([state_fd, dirs.root_fd])
    # No sweep of leftover temporaries here: this runs without the lock, so another process's
    # temporary may be in flight. Recovery sweeps them, under the lock.
    write_gitignore(fs, state_fd, sweep=False)


def tidy_state_dir(fs: FileSystemOps, dirs: DirectoryHandles) -> None:
    """Finish an interrupted setup (recovery's part): remove its temporary, restore .gitignore."""
    state_fd = dirs.lookup(STATE_DIR)
    if state_fd is not None and not _gitignore_is_in_place(fs, state_fd):
        write_gitignore(fs, state_fd, sweep=True)


def write_gitignore(fs: FileSystemOps, state_fd: int, *, sweep: bool) -> None:
    if sweep:
        for name in fs.listdir(state_fd):
            if _GITIGNORE_TEMP.match(name):
                with contextlib.suppress(FileNotFoundError):  # renamed into place by its writer
                    fs.unlink(state_fd, name)
    for _attempt in range(_GITIGNORE_ATTEMPTS):
        try:
            _write_gitignore_once(fs, state_fd)
            return
        except FileNotFoundError:
            # A recovery in another process swept our temporary, taking it for a crash leftover
            # (both run only while .gitignore is missing). Its .gitignore does the job, or retry.
            if _gitignore_is_in_place(fs, state_fd):
                return
    _write_gitignore_once(fs, state_fd)


def _write_gitignore_once(fs: FileSystemOps, state_fd: int) -> None:
    # Through a temporary and a rename: a crash never leaves an empty .gitignore that would
    # let git list the folder's contents.
    temp = f".gitignore.{os.urandom(4).hex()}.tmp"
    fd = fs.create(state_fd, temp, 0o666)
    try:
        try:
            fs.write(fd, GITIGNORE_TEXT)
        finally:
            fs.close(fd)
        fs.rename(state_fd, temp, state_fd, GITIGNORE)
    except Exception:
        with contextlib.suppress(OSError):  # if this fails too, the next recovery sweeps it
            if fs.lstat(state_fd, temp) is not None:
                fs.unlink(state_fd, temp)
        raise


def _gitignore_is_in_place(fs: FileSystemOps, state_fd: int) -> bool:
    try:
        contents = fs.read_file(state_fd, GITIGNORE)
    except FileNotFoundError:
        return False
    return b"*" in contents.data.split()


def _mkdir_unless_exists(fs: FileSystemOps, dir_fd: int, name: str) -> None:
    if fs.lstat(dir_fd, name) is not None:
        return  # if it is not a directory (or is a symlink), opening it next refuses
    try:
        fs.mkdir(dir_fd, name, 0o777)
    except FileExistsError:
        pass  # another process won the race
    except OSError as exc:
        if exc.errno != errno.EEXIST:
            raise
