"""What patchtx reads on a caller's behalf, and what it never shows (docs/guarantees.md, section 13).

The planner (every read a patch causes: the file an update or a delete names, a rename's or a
copy's source, a file asked whether the patch is already in it) and the editor's ``view`` read the
workspace through ``Workspace``, and ask a ``ReadGuard`` first:

- ``check_path``, once a path is resolved and before anything else is looked at (whether it
  exists included): a path the host hides (``hidden``) is refused (``hidden_path``) under its name
  as given, its real path (symbolic links followed), and the names symbolic links in the tree give
  it, whatever was asked of it.
- ``check_file`` (``Workspace.guard``), with the opened file's status, before a byte is read: a
  file with other hard links is refused if it is one of patchtx's own files under another name
  (``txn.own``: the per-user secret, a file of a state folder; ``unsafe_path``), or, when paths
  are hidden, if one of its other names is hidden.

So a hidden file's bytes are never in a plan: no hint, candidate list, diff, "already applied"
answer or error can quote them. The commit refuses to write a hidden path under any name as it
refuses a protected one (``policy.check_changes``, ``txn.gate``).
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

from ..errors import PolicyError
from ..txn.dirs import DirectoryHandles
from ..txn.fsops import FileSystemOps
from ..txn.gate import hard_links, link_names, symbolic_links
from ..txn.own import OwnFiles
from ..workspace.policy import hidden_error

if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import TypeVar

    from ..workspace.globs import GlobSet

    _T = TypeVar("_T")


class ReadGuard:
    """The checks of one plan's or one view's reads in the workspace whose real path is ``root``,
    with the patterns the host hides (``hidden``). What it lists (the tree's symbolic links,
    patchtx's own files) is listed once, the first time it is needed."""

    def __init__(self, root: str, hidden: tuple[str, ...] = ()) -> None:
        self.root = root
        self.hidden = tuple(hidden)
        self._globs: GlobSet | None = None
        self._links: list[tuple[str, str]] | None = None
        self._own: OwnFiles | None = None

    def hides(self, rel: str, named: str = "") -> tuple[str, str] | None:
        """(the name that matched, the pattern) when the host hides the path ``rel`` (reached by
        the name ``named``, if another), else None."""
        if not self.hidden or not rel:
            return None
        from ..workspace.globs import GlobSet, GlobWorkExceeded  # (off a one-line edit's path)

        if self._globs is None:
            self._globs = GlobSet(self.hidden)
        try:
            for name in dict.fromkeys((named or rel, rel, *link_names(rel, self._symbolic_links()))):
                pattern = self._globs.first_match(name)
                if pattern is not None:
                    return name, pattern
        except GlobWorkExceeded:
            raise PolicyError(
                f"Refusing to read {rel}: checking the paths read against the {len(self.hidden)} hidden"
                " patterns costs too much (more than the bound patchtx sets on that work).",
                hint="The host should hide with fewer or simpler patterns (one folder pattern covers"
                     " everything inside it).", path=rel) from None
        return None

    def check_path(self, shown: str, rel: str, named: str = "", *, action: str,
                   line: int | None = None) -> None:
        """Refuse (``hidden_path``) to ``action`` the path the caller named ``shown`` (resolved:
        ``rel``, reached as ``named``) if the host hides it, before its file is looked at."""
        found = self.hides(rel, named)
        if found is not None:
            name, pattern = found
            other = None if name in (rel, named) else (name, "symbolic link")
            error = hidden_error(shown, pattern, action=action, other=other)
            error.line = line
            raise error

    def check_file(self, rel: str, st: os.stat_result) -> None:
        """``Workspace.guard``: the file ``rel``, opened, with status ``st``, before a byte of it is
        read. Only a file with other hard links is looked at further."""
        if st.st_nlink <= 1:
            return
        identity = (st.st_dev, st.st_ino)
        if self._own is None:
            self._own = OwnFiles(self.root)
        self._own.refuse(rel, identity, action="read")
        if self.hidden:
            for twin in self._with_dirs(lambda dirs: hard_links(dirs, self.root, rel, identity)):
                found = self.hides(twin)
                if found is not None:
                    raise hidden_error(rel, found[1], other=(twin, "hard link"))

    def _symbolic_links(self) -> list[tuple[str, str]]:
        if self._links is None:
            self._links = self._with_dirs(lambda dirs: symbolic_links(dirs, self.root, self.hidden))
        return self._links

    def _with_dirs(self, work: Callable[[DirectoryHandles], _T]) -> _T:
        """``work`` given the tree's folders, opened from the root's descriptor without following
        a link (the walks of ``txn.gate``), closed after it."""
        fs = FileSystemOps()
        root_fd = fs.open_root(self.root)
        dirs = DirectoryHandles(fs, root_fd, root=self.root)
        try:
            return work(dirs)
        finally:
            dirs.close_all()
            fs.close(root_fd)
