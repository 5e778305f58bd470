"""The ``.patchtx`` state folder: created on first use, ignored by git, durable before it is used.

A cloned repository may hold a ``.patchtx`` of its own. The folder is reached from the root's
descriptor without following links (see ``dirs``), and before it is used ``check_state_folder``
makes sure it is what patchtx makes: real folders (state, journal) and regular files (lock,
.gitignore), owned by the user running patchtx. Anything else is a StateFolderError, never a
traceback and never a file created or locked somewhere else.
"""

from __future__ import annotations

import errno
import os
import stat
from typing import TYPE_CHECKING

from ..errors import StateFolderError
from .layout import GITIGNORE, GITIGNORE_TEXT, JOURNAL_DIR, LOCK_NAME, STATE_DIR

if TYPE_CHECKING:
    from collections.abc import Callable

    from .dirs import DirectoryHandles
    from .fsops import FileSystemOps

_GITIGNORE_ATTEMPTS = 3


def ensure_state_dir(fs: FileSystemOps, dirs: DirectoryHandles, *, durable: bool) -> bool:
    """Create ``.patchtx/journal`` and ``.patchtx/.gitignore`` if missing; True if nothing was
    missing (the folder was set up, .gitignore last, by an earlier commit) and no temporary of a
    failed or interrupted setup is left: False tells the caller to ``tidy_state_dir`` under the
    lock.

    The ``.gitignore`` is written last, after fsyncing the new folders' parents: its presence
    tells later commits that the folders' own directory entries are durable, so they need not
    fsync the root and ``.patchtx`` every time (a crash half-way through leaves it missing, and
    the next commit redoes the whole setup). One in place is not written again: only a missing
    one can leave a temporary behind. Safe to run by several processes at once: it runs before
    the lock, since the lock file lives inside the folder.
    """
    state_fd = check_state_folder(dirs)
    if (state_fd is not None and dirs.lookup(JOURNAL_DIR) is not None and gitignore_in_place(fs, state_fd)
            and not _gitignore_temps(fs, state_fd)):
        return True
    _mkdir_unless_exists(fs, dirs.root_fd, STATE_DIR)
    state_fd = dirs.open(STATE_DIR)
    _mkdir_unless_exists(fs, state_fd, os.path.basename(JOURNAL_DIR))
    if durable:
        fs.fsync([state_fd, dirs.root_fd])
    # No sweep of leftover temporaries here: this runs without the lock, so another process's
    # temporary may be in flight. The caller sweeps them once it holds the lock (tidy_state_dir).
    if not gitignore_in_place(fs, state_fd):
        write_gitignore(fs, state_fd)
    return False


def state_folder_error(path: str, why: str) -> StateFolderError:
    return StateFolderError(
        f"The state folder entry {path} is not what patchtx makes: {why}.",
        hint=(
            f"{STATE_DIR} may have been written by someone else (a cloned repository can hold"
            f" anything). Look at it (`ls -la {STATE_DIR} {JOURNAL_DIR}`), then move it away: patchtx"
            " creates a new one."
        ),
        path=path,
        details={"state_path": path},
    )


def check_state_folder(dirs: DirectoryHandles) -> int | None:
    """The state folder's descriptor, after checking it and what it holds (None: no state folder).

    Folders must be real folders and files regular files, never links, and every one owned by
    the user running patchtx (or, for root, by the owner of the workspace root)."""
    fs = dirs.fs
    root_st = fs.fstat(dirs.root_fd)
    owners = {os.geteuid()} | ({root_st.st_uid} if os.geteuid() == 0 else set())
    if not _check_entry(fs, dirs.root_fd, STATE_DIR, STATE_DIR, stat.S_ISDIR, "a folder", owners):
        return None
    state_fd = dirs.open(STATE_DIR)
    _check_owner(fs.fstat(state_fd), STATE_DIR, owners)
    for name, is_kind, kind in ((os.path.basename(JOURNAL_DIR), stat.S_ISDIR, "a folder"),
                                (LOCK_NAME, stat.S_ISREG, "a regular file"),
                                (GITIGNORE, stat.S_ISREG, "a regular file")):
        _check_entry(fs, state_fd, name, f"{STATE_DIR}/{name}", is_kind, kind, owners)
    return state_fd


def _check_entry(fs: FileSystemOps, dir_fd: int, name: str, path: str, is_kind: Callable[[int], bool],
                 kind: str, owners: set[int]) -> bool:
    """Whether ``name`` exists; StateFolderError unless it is ``kind``, owned by one of ``owners``."""
    st = fs.lstat(dir_fd, name)
    if st is None:
        return False
    if stat.S_ISLNK(st.st_mode):
        raise state_folder_error(path, f"it is a symbolic link, where patchtx keeps {kind}")
    if not is_kind(st.st_mode):
        found = "a folder" if stat.S_ISDIR(st.st_mode) else "a FIFO" if stat.S_ISFIFO(st.st_mode) else (
            "a regular file" if stat.S_ISREG(st.st_mode) else "a special file")
        raise state_folder_error(path, f"it is {found}, where patchtx keeps {kind}")
    _check_owner(st, path, owners)
    return True


def _check_owner(st: os.stat_result, path: str, owners: set[int]) -> None:
    if st.st_uid not in owners:
        raise state_folder_error(path, f"it belongs to user id {st.st_uid}, not to the user running patchtx"
                                       f" ({os.geteuid()})")


def tidy_state_dir(fs: FileSystemOps, dirs: DirectoryHandles) -> None:
    """Finish a failed or interrupted setup, under the lock (recovery's part, and a commit's when
    ``ensure_state_dir`` did not find the folder set up): remove the .gitignore temporaries it
    left, whether or not .gitignore is in place, and restore .gitignore."""
    state_fd = dirs.lookup(STATE_DIR)
    if state_fd is None:
        return
    for name in _gitignore_temps(fs, state_fd):
        try:
            fs.unlink(state_fd, name)
        except FileNotFoundError:
            pass  # renamed into place by its writer
    if not gitignore_in_place(fs, state_fd):
        write_gitignore(fs, state_fd)


def write_gitignore(fs: FileSystemOps, state_fd: int) -> None:
    for _attempt in range(_GITIGNORE_ATTEMPTS):
        try:
            _write_gitignore_once(fs, state_fd)
            return
        except FileNotFoundError:
            # A commit or a recovery in another process swept our temporary, taking it for a
            # leftover (tidy_state_dir). Its .gitignore does the job, or retry.
            if gitignore_in_place(fs, state_fd):
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
        failure = fs.last_failure  # the call that failed, which the error names
        try:
            if fs.lstat(state_fd, temp) is not None:
                fs.unlink(state_fd, temp)
        except OSError:
            pass  # the disk refuses this too: the next commit or recovery sweeps it (tidy_state_dir)
        fs.last_failure = failure
        raise


def _gitignore_temps(fs: FileSystemOps, state_fd: int) -> list[str]:
    """The .gitignore temporaries in the state folder (a listing of a few names)."""
    return [name for name in fs.listdir(state_fd) if _is_gitignore_temp(name)]


def _is_gitignore_temp(name: str) -> bool:
    """``.gitignore.<8 hex digits>.tmp``, as _write_gitignore_once names its temporary (no re:
    one more import on every commit)."""
    return (len(name) == 23 and name.startswith(".gitignore.") and name.endswith(".tmp")
            and all(c in "0123456789abcdef" for c in name[11:19]))


def gitignore_in_place(fs: FileSystemOps, state_fd: int) -> bool:
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
