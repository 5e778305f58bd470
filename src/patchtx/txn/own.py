"""patchtx's own files, found by inode: a file of the workspace with other hard links may be one
of them under another name. No read on a caller's behalf shows one (``reads``, the planner and
the editor's ``view``), and no commit writes one (``gate``): one check for both, ``OwnFiles``.

patchtx's own files are those of the per-user state folder (``provenance.state_home()``: the
secret that signs this user's journals, the verify step's copies) and of the workspace's state
folder ``.patchtx`` (the lock, journals, the undo history). A path inside either is refused by
name (the path rule, ``workspace.path_problem``; the editor's check of the per-user folder), and
a symbolic link to one is followed by name and refused the same way. Only a hard link takes a
name the path does not give away, and only a file with other names (``st_nlink > 1``) can be
one: the two folders are listed once per ``OwnFiles``, the first time such a file is asked about,
comparing inode numbers as the listing gives them (no ``stat`` per entry).

Not counted: the before-images of a transaction in progress (in ``.patchtx/journal``, or in the
verify step's copy): while a transaction commits or rolls back, each is a link to a file of the
tree (the original being replaced, or being put back), which a read racing that commit must not
mistake for patchtx's state. A kept transaction's before-images count: the commit keeps a copy,
never a link, of a file with other names (``commit``), so no file of the tree is ever one of them.
"""

from __future__ import annotations

import os
import stat
from typing import TYPE_CHECKING

from ..errors import UnsafePathError
from .layout import (
    JOURNAL_DIR,
    STATE_DIR,
    group_journal_folder,
    is_before_image_name,
    is_transaction_id,
    unpublished_journal_name,
)
from .provenance import SECRET_NAME, state_home

if TYPE_CHECKING:
    from collections.abc import Iterable

MAX_ENTRIES = 1_000_000
"""Entries of the two state folders looked at, at most (beyond, a file with other names is
refused: it could not be told from patchtx's own)."""
_TXN = 24
"""The length of a transaction id (``layout.new_transaction_id``)."""


class OwnFiles:
    """patchtx's own files as seen from the workspace whose real path is ``root``."""

    def __init__(self, root: str) -> None:
        self.root = root
        self._by_inode: dict[int, list[str]] | None = None
        """Inode number -> the absolute paths of the own files that have it (listed once)."""
        self._too_many = False

    def what(self, identity: tuple[int, int]) -> str | None:
        """Which of patchtx's own files the file with this (device, inode) is, in words (None:
        none of them)."""
        found = self._found()
        if self._too_many:
            return (f"one of the more than {MAX_ENTRIES} files of patchtx's state folders, for all"
                    " patchtx can tell (it did not look through them all)")
        for path in found.get(identity[1], ()):
            try:
                st = os.stat(path, follow_symlinks=False)
            except OSError:
                continue  # (gone since it was listed: then it is not this file)
            if (st.st_dev, st.st_ino) == identity:
                return self._describe(path)
        return None

    def refuse(self, shown: str, identity: tuple[int, int], *, action: str) -> None:
        """Refuse (``unsafe_path``) to ``action`` the file ``shown`` if it is one of patchtx's own
        files under another name: its contents are never shown, nor written."""
        what = self.what(identity)
        if what is not None:
            raise UnsafePathError(
                f"Refusing to {action} {shown}: it is the same file as {what} (a hard link).",
                hint="patchtx never shows or writes its own state under any name (the secret that signs"
                     " this user's journals above all); remove the link from the workspace.",
                path=shown, details={"other_name": what})

    def _describe(self, path: str) -> str:
        home = state_home()
        if path == os.path.join(home, SECRET_NAME):
            return f"the per-user secret {path}"
        folder = os.path.join(self.root, STATE_DIR)
        if path.startswith(folder + "/"):
            return f"{path[len(self.root) + 1:]}, in patchtx's state folder {STATE_DIR}"
        return f"{path}, in patchtx's per-user state folder"

    def _found(self) -> dict[int, list[str]]:
        if self._by_inode is None:
            self._by_inode = {}
            seen = [0]
            # The per-user folder as the host names it (it may be reached through a link); the
            # workspace's never through one (``statedir`` refuses such a state folder).
            self._list(state_home(), seen, follow=True)
            self._list(os.path.join(self.root, STATE_DIR), seen, follow=False)
        return self._by_inode

    def _list(self, top: str, seen: list[int], *, follow: bool) -> None:
        assert self._by_inode is not None
        try:
            st = os.stat(top, follow_symlinks=follow)
        except OSError:
            return  # (none yet: then no file is in it)
        if not stat.S_ISDIR(st.st_mode):
            return
        journal = os.path.join(self.root, JOURNAL_DIR)
        stack = [top]
        while stack:
            folder = stack.pop()
            try:
                with os.scandir(folder) as listing:
                    entries = [(entry.name, entry.inode(), entry.is_dir(follow_symlinks=False),
                                entry.is_symlink()) for entry in listing]
            except OSError:
                continue  # (gone, or unreadable: nothing of it can be read through the tree either)
            seen[0] += len(entries)
            if seen[0] > MAX_ENTRIES:
                self._too_many = True
                return
            settled = _settled(name for name, *_rest in entries) if folder == journal else frozenset()
            for name, inode, is_dir, is_link in entries:
                path = os.path.join(folder, name)
                if is_dir:
                    stack.append(path)
                elif not is_link and not _in_progress(name, settled):
                    self._by_inode.setdefault(inode, []).append(path)


def _settled(names: Iterable[str]) -> frozenset[str]:
    """The transactions of a journal folder listing that are kept undo-history entries and
    nothing else (no journal in progress)."""
    return frozenset(group.transaction_id for group in group_journal_folder(names)
                     if group.kept is not None and not group.is_published and not group.is_committed
                     and unpublished_journal_name(group.transaction_id) not in group.names)


def _in_progress(name: str, settled: frozenset[str]) -> bool:
    """Whether ``name`` is a before-image (``<txn>.<n>.before``) of a transaction not settled as
    a kept entry (``settled``: those of the workspace's journal folder that are)."""
    return (len(name) > _TXN + 1 and name[_TXN] == "." and is_before_image_name(name[_TXN + 1:])
            and is_transaction_id(name[:_TXN]) and name[:_TXN] not in settled)
