"""The ``.patchtx`` state folder: created on first use, ignored by git, durable before it is used."""

from __future__ import annotations

import errno
import os

from .journal import GITIGNORE, GITIGNORE_TEXT, JOURNAL_DIR, STATE_DIR, has_unfinished_work

TYPE_CHECKING = False
if TYPE_CHECKING:
    from .dirs import DirectoryHandles
    from .fsops import FileSystemOps
    from .reports import RecoveredTransaction

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


def recover_leftovers(
    fs: FileSystemOps, dirs: DirectoryHandles, *, durable: bool
) -> tuple[tuple[RecoveredTransaction, ...], list[str] | None]:
    """``recovery.recover_workspace``, imported only if it may have something to do (the caller holds
    the lock): the journal folder holds anything but undo-history entries, or the state folder
    lacks its .gitignore. Usually neither, and a commit then spends no time loading recovery.

    Also returns the journal folder's names when recovery had nothing to do (None otherwise), for
    the undo history to reuse: that folder holds its before-images, possibly thousands."""
    state_fd = dirs.lookup(STATE_DIR)
    if state_fd is None:
        return (), None
    if _gitignore_is_in_place(fs, state_fd):
        journal_fd = dirs.lookup(JOURNAL_DIR)
        if journal_fd is None:
            return (), None
        names = fs.listdir(journal_fd)
        if not has_unfinished_work(names):
            return (), names
    from .recovery import recover_workspace

    return recover_workspace(fs, dirs, durable=durable), None


def tidy_state_dir(fs: FileSystemOps, dirs: DirectoryHandles) -> None:
    """Finish an interrupted setup (recovery's part): remove its temporary, restore .gitignore."""
    state_fd = dirs.lookup(STATE_DIR)
    if state_fd is not None and not _gitignore_is_in_place(fs, state_fd):
        write_gitignore(fs, state_fd, sweep=True)


def write_gitignore(fs: FileSystemOps, state_fd: int, *, sweep: bool) -> None:
    if sweep:
        for name in fs.listdir(state_fd):
            if _is_gitignore_temp(name):
                try:
                    fs.unlink(state_fd, name)
                except FileNotFoundError:
                    pass  # renamed into place by its writer
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
        try:
            if fs.lstat(state_fd, temp) is not None:
                fs.unlink(state_fd, temp)
        except OSError:
            pass  # the next recovery sweeps it
        raise


def _is_gitignore_temp(name: str) -> bool:
    """``.gitignore.<8 hex digits>.tmp``, as _write_gitignore_once names its temporary (no re:
    one more import on every commit)."""
    return (len(name) == 23 and name.startswith(".gitignore.") and name.endswith(".tmp")
            and all(c in "0123456789abcdef" for c in name[11:19]))


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
