"""The workspace root: resolving patch paths inside it, and reading files (never writing).

Every path a patch names must resolve inside the root. Refused before anything is written: NUL
bytes, backslashes, Windows drive or UNC paths, ``..`` anywhere, absolute paths outside the root,
symbolic links (file or parent directory) that lead outside, and the ``.git`` and ``.patchtx``
folders. A symlink that stays inside is replaced by its real path, so the writer never follows one.

Reads (file contents, status, listings) go through directory descriptors opened from the root's,
one component at a time with ``O_NOFOLLOW``, as the commit's writes do: a folder swapped for a
symbolic link after its path was resolved makes the read fail, never read outside the root.
"""

from __future__ import annotations

import errno
import os
import stat
from typing import TYPE_CHECKING, Protocol

from .._record import record
from ..errors import ArgumentTypeError, FilesystemError, NotARegularFileError, UnsafePathError
from ._fd import DIR_FLAGS as _DIR_FLAGS
from ._fd import READ_FLAGS as _READ_FLAGS
from ._fd import descriptor_budget, nearest_open_folder, read_whole, require_posix

if TYPE_CHECKING:
    from collections.abc import Callable

STATE_DIR = ".patchtx"


@record
class ResolvedPath:
    rel: str
    """Real workspace-relative POSIX path (symlinks inside the root already followed)."""
    spelled: str
    leaf_is_symlink: bool = False
    named: str = ""
    """The path as named, made relative and normalised but not resolved: where a symbolic link on
    the way makes it differ from ``rel``, another name of the same file (protected as it is)."""


@record
class FileInfo:
    kind: str
    """``file``, ``dir``, ``symlink`` or ``special``."""
    mode: int
    uid: int = -1
    gid: int = -1
    identity: tuple[int, int] | None = None
    """(device, inode) of the file found: what a commit checks it still is (None: not known)."""


class FileView(Protocol):
    """Read-only access the planner needs; the Transaction API supplies a staged overlay."""

    root: str

    def resolve(self, spelled: str, *, line: int | None = None,
                backslash: bool = False) -> ResolvedPath: ...

    def info(self, rel: str) -> FileInfo | None: ...

    def read(self, rel: str) -> bytes: ...

    def list_dir(self, rel: str) -> list[str]: ...

    def display(self, rel: str) -> str: ...


def _kind(mode: int) -> str:
    if stat.S_ISREG(mode):
        return "file"
    if stat.S_ISDIR(mode):
        return "dir"
    if stat.S_ISLNK(mode):
        return "symlink"
    return "special"


# Characters HFS+ ignores in names, as git's is_hfs_dotgit lists them.
_HFS_IGNORED = dict.fromkeys(map(ord, "\u200c\u200d\u200e\u200f\u202a\u202b\u202c\u202d\u202e"
                                 "\u206a\u206b\u206c\u206d\u206e\u206f\ufeff"))


def _folds_to(name: str, reserved: str) -> bool:
    """Whether ``name`` may be the folder ``reserved`` on some filesystem: a case-insensitive one
    (macOS, Windows: ``.GIT``), HFS+ (ignored characters), NTFS (trailing dots and spaces), the
    checks git itself makes before writing a path."""
    if name == reserved:
        return True
    if len(name) < len(reserved) or not name.startswith("."):
        return False  # the common case, decided without building a string
    return name.translate(_HFS_IGNORED).rstrip(". ").casefold() == reserved


def reserved_reason(parts: list[str]) -> str | None:
    """Why a root-relative path (its non-empty components) is off limits to every writer: inside a
    patchtx state folder (the root's, or a nested workspace's) or a ``.git`` folder, in any
    spelling a filesystem folds to them."""
    for depth, part in enumerate(parts):  # parts are never empty; most start with neither "." nor "g"/"p"
        first = part[:1]
        if first == ".":
            if _folds_to(part, ".git"):
                return "it is inside a .git folder"
            if _folds_to(part, STATE_DIR):
                return ("it is inside patchtx's own state folder .patchtx" if depth == 0
                        else "it is inside a nested workspace's patchtx state folder .patchtx")
        elif first in ("g", "G") and part.lower() == "git~1":  # (.git's 8.3 short name)
            return "it is inside a .git folder"
        elif first in ("p", "P") and part.lower() == "patcht~1":
            return "it is inside a patchtx state folder .patchtx"
    return None


BACKSLASH_IS_A_CHARACTER = os.sep == "/" and os.altsep is None
"""Whether a backslash is an ordinary character of a file name here (POSIX), so that the path rule
lets it through (``path_problem``); where it separates folders (Windows) it is refused. The
patch formats a model writes refuse it anyway (``Workspace.resolve``): only a unified diff,
whose names are git's, writes a name holding one."""


def path_problem(path: str) -> str | None:
    """Why a workspace-relative, ``/``-separated ``path`` may not be written (None: it may be).

    THE path rule, for every writer and reader of paths: the planner applies it to a patch's paths
    once the workspace has resolved them, the commit to every plan it is handed (``txn.gate``),
    and the journal reader to every path a journal or history entry names. A plain relative path
    (no empty, ``.`` or ``..`` component), no NUL, backslash (where it separates folders:
    ``BACKSLASH_IS_A_CHARACTER``) or character that hides or disguises text
    (``refused_character``), outside every ``.git`` and ``.patchtx`` folder."""
    if not path:
        return "it is empty"
    if not path.isprintable():  # (C speed for the common case; every refused character lands here)
        if "\0" in path:
            return "it contains a NUL byte"
        refused = refused_character(path)
        if refused is not None:
            return f"it contains {describe_character(refused)}"
    if "\\" in path and not BACKSLASH_IS_A_CHARACTER:
        return "it contains a backslash"
    parts = path.split("/")
    if "" in parts or "." in parts or ".." in parts:
        return "it is not a plain relative path (an absolute path, or an empty, '.' or '..' component)"
    return reserved_reason(parts)


_BIDI_CONTROLS = frozenset("\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069")
"""Unicode's Bidi_Control characters: embeddings, overrides, isolates and the invisible marks
(LRM, RLM, ALM). Printed, they reorder what follows them on the line ("Trojan Source")."""
_SEPARATORS = frozenset("\u2028\u2029")
"""LINE SEPARATOR and PARAGRAPH SEPARATOR: a line break to many terminals and editors."""


def refused_character(text: str) -> str | None:
    """The first character of ``text`` that no path may hold, or None. A name is never meant to
    hold one, and printed raw (in a log, a diff, a terminal) each can disguise the line naming it:
    C0 controls and DEL (a tab aside: git diffs carry it, quoted), C1 controls (U+0080-U+009F,
    8-bit escape sequences to some terminals), the line and paragraph separators, and the
    bidirectional controls."""
    for c in text:
        code = ord(c)
        if (code < 0x20 and c != "\t") or 0x7F <= code <= 0x9F or c in _SEPARATORS or c in _BIDI_CONTROLS:
            return c
    return None


def describe_character(c: str) -> str:
    """A refused character named by its code point, never itself: 'the control character U+0085'."""
    code = ord(c)
    kind = ("control character" if code < 0xA0 else "line or paragraph separator" if c in _SEPARATORS
            else "bidirectional control")
    return f"the {kind} U+{code:04X}"


def visible(text: str) -> str:
    """``text`` with every character that does not print escaped (``\\u202e``), the rest as is:
    a path named in an error, never echoed raw."""
    if text.isprintable():
        return text
    return "".join(c if c.isprintable() else c.encode("unicode_escape").decode("ascii") for c in text)


def under(folder: str, path: str) -> str | None:
    """``path`` relative to ``folder`` (both absolute and normalised), or None when it does not lie
    inside it (None for the folder itself too: see ``within``)."""
    prefix = folder.rstrip("/") + "/"
    return path[len(prefix):] if path.startswith(prefix) else None


def within(folder: str, path: str) -> bool:
    """Whether ``path`` is ``folder`` or lies inside it (both absolute and normalised)."""
    return path == folder or under(folder, path) is not None


_INSIDE = "Use a relative path to a file inside the workspace root."
_NO_DOTS = "Use a relative path to a file inside the workspace root, without '..'."
_NOT_RESERVED = ("patchtx never reads or writes inside a .git folder (git's own files: use git) or "
                 "a .patchtx folder (patchtx's state): name a file outside them.")


def _unsafe(spelled: str, why: str, line: int | None, hint: str = _INSIDE) -> UnsafePathError:
    return UnsafePathError(f"Refusing path '{spelled}': {why}.", hint=hint, path=spelled, line=line)


NO_ROOT = "Pass an existing directory as the `root` argument (the workspace's folder)."
"""What a missing workspace root is told, in the library's words (the command line says --root)."""


def parent_root(root: str, rel: str) -> str | None:
    """The nearest folder above ``root``, up to the top of the git repository it is in, in which
    ``rel`` is a file, as a person at the current directory names it (``..`` when that is inside
    it, else its absolute path): the root a patch made from a parent folder means (a diff applied
    from a subdirectory). None when there is none, or no repository above: the search goes no
    further than the tree the caller works in. Reads nothing but a stat of each candidate."""
    folders = [os.path.realpath(root)]
    while not os.path.exists(os.path.join(folders[-1], ".git")):
        if os.path.dirname(folders[-1]) == folders[-1]:
            return None  # no repository above
        folders.append(os.path.dirname(folders[-1]))
    for folder in folders[1:]:
        if os.path.isfile(os.path.join(folder, rel)):
            named = os.path.relpath(folder, os.path.realpath(os.getcwd()))
            return named if set(named.split("/")) == {".."} else folder
    return None


def root_path(root: str | os.PathLike[str]) -> str:
    """``root`` (a workspace root, as every surface is given one) as a path string;
    ArgumentTypeError for another type (a number, a list, bytes)."""
    path = os.fspath(root) if isinstance(root, os.PathLike) else root
    if not isinstance(path, str):
        raise ArgumentTypeError.expected("the workspace root", "a path (str or os.PathLike)", root)
    return path


class Workspace:
    """A directory on disk, seen read-only."""

    def __init__(self, root: str | os.PathLike[str]) -> None:
        require_posix()
        given = os.path.abspath(root_path(root))
        if not os.path.isdir(given):
            raise FilesystemError(
                f"The workspace root {given} is not a directory.",
                hint=NO_ROOT, path=given,
            )
        self.given_root = given
        self.root = os.path.realpath(given)
        self._dir_fds: dict[str, int] = {}
        self._capacity: int | None = None
        """How many folder descriptors to keep (sized on first use, see _dir_fd)."""
        """Open descriptors of folders read from, by relative path ("" is the root); each was
        opened without following a link, so it stays the folder checked even if a link later
        takes its name. Closed by close() (or when the Workspace is collected)."""
        self.guard: Callable[[str, os.stat_result], None] | None = None
        """Called with a file's path and the status of its open descriptor before a byte of it is
        read (``reads.ReadGuard.check_file``, set by whoever reads on a caller's behalf): what it
        raises is raised instead. On the open file, so a name swapped in the meantime is seen."""
        self._plain_dirs: set[str] = set()
        """Relative folders already seen to be real directories, not links (checked once per
        plan: a thousand files in a few folders need a few lstat calls, not one per component).
        The commit re-checks everything under the lock through O_NOFOLLOW descriptors."""

    def close(self) -> None:
        """Close the folder descriptors kept for reading (reopened if the Workspace is read again)."""
        fds, self._dir_fds = self._dir_fds, {}
        for fd in fds.values():
            os.close(fd)

    def __del__(self) -> None:
        try:
            self.close()
        except (AttributeError, OSError, TypeError):  # half-built, or at interpreter shutdown
            pass

    def _dir_fd(self, rel: str) -> int:
        """A descriptor of the folder ``rel``, reached from the root without following links;
        OSError (ELOOP for a link, ENOTDIR, ENOENT) otherwise.

        Walked down from the nearest folder open already, one component at a time (no recursion:
        a path may be a thousand folders deep); the folders on the way are not kept. At most half
        the descriptors the process may still open are kept (``descriptor_budget``): a patch over
        many folders plans under a small limit, as it commits."""
        fd = self._dir_fds.get(rel)
        if fd is not None:
            return fd
        if self._capacity is None:
            self._capacity = max(1, min(_MAX_DIR_FDS, descriptor_budget() // 2))
        if len(self._dir_fds) >= self._capacity:
            self.close()
        if not rel:
            fd = os.open(self.root, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
            self._dir_fds[rel] = fd
            return fd
        parts = rel.split("/")
        depth, fd = nearest_open_folder(rel, self._dir_fds)
        if fd is None:
            fd = self._dir_fd("")  # (the root's, open already or opened now)
        start = fd
        try:
            for index in range(depth, len(parts)):
                name = parts[index]
                try:
                    child = os.open(name, _DIR_FLAGS, dir_fd=fd)
                except NotADirectoryError:
                    # O_DIRECTORY | O_NOFOLLOW on a link answers ENOTDIR: say ELOOP, it is a link.
                    if stat.S_ISLNK(os.stat(name, dir_fd=fd, follow_symlinks=False).st_mode):
                        raise OSError(errno.ELOOP, os.strerror(errno.ELOOP), "/".join(parts[:index + 1])) from None
                    raise
                if fd != start:
                    os.close(fd)
                fd = child
        except BaseException:
            if fd != start:
                os.close(fd)
            raise
        self._dir_fds[rel] = fd
        return fd

    def display(self, rel: str) -> str:
        root = self.root
        if not rel:
            return root
        if rel[0] == "/" or root[-1] == "/":
            return os.path.join(root, rel)
        return root + "/" + rel  # os.path.join's answer for a relative path under a root

    def info(self, rel: str) -> FileInfo | None:
        path = self.display(rel)
        parent, _, name = rel.rpartition("/")
        try:
            st = os.stat(name, dir_fd=self._dir_fd(parent), follow_symlinks=False) if rel else \
                os.fstat(self._dir_fd(""))
        except (FileNotFoundError, NotADirectoryError):
            return None
        except OSError as exc:
            raise _read_error(path, exc) from None
        return FileInfo(_kind(st.st_mode), stat.S_IMODE(st.st_mode), st.st_uid, st.st_gid, (st.st_dev, st.st_ino))

    def read(self, rel: str) -> bytes:
        path = self.display(rel)
        parent, _, name = rel.rpartition("/")
        try:
            fd = os.open(name, _READ_FLAGS, dir_fd=self._dir_fd(parent))
        except OSError as exc:
            raise _read_error(path, exc) from None
        try:
            st = os.fstat(fd)
            if not stat.S_ISREG(st.st_mode):
                raise NotARegularFileError(f"Refusing to read {path}: it is not a regular file.",
                                           path=path)
            if self.guard is not None:
                self.guard(rel, st)
            return read_whole(fd, st.st_size)
        finally:
            os.close(fd)

    def list_dir(self, rel: str) -> list[str]:
        try:
            return os.listdir(self._dir_fd(rel))
        except OSError:
            return []

    # -- path resolution ------------------------------------------------------------------------
    def resolve(self, spelled: str, *, line: int | None = None,
                backslash: bool = False) -> ResolvedPath:
        """``spelled`` inside the root. ``backslash``: a backslash is a name's character (a
        unified diff's names, as git writes them), where the system has no other use for it
        (``BACKSLASH_IS_A_CHARACTER``); else refused, a Windows path meant elsewhere."""
        refused = None if spelled.isprintable() else refused_character(spelled)
        if refused is not None:
            # Never what a patch means (a CR left by a line break, an escape sequence, a
            # right-to-left override), and printed raw it could disguise the line naming it.
            raise _unsafe(visible(spelled), f"it contains {describe_character(refused)}", line)
        if "\\" in spelled and not (backslash and BACKSLASH_IS_A_CHARACTER):
            raise _unsafe(spelled, "it contains a backslash (Windows separators are not accepted)",
                          line)
        if len(spelled) >= 2 and spelled[1] == ":" and spelled[0].isascii() and spelled[0].isalpha():
            raise _unsafe(spelled, "it is a Windows drive path", line)
        relative = spelled
        if spelled.startswith("/"):
            relative = self._relative_absolute(spelled, line)
        parts = [p for p in relative.split("/") if p not in ("", ".")]
        if ".." in parts:
            raise _unsafe(spelled, "it contains '..'", line, _NO_DOTS)
        if not parts:
            return ResolvedPath("", spelled)  # the root: a directory, which every operation refuses
        real, leaf_is_symlink = self._follow_links(parts, spelled, line)
        self._check_reserved(real, spelled, line)
        rel = "/".join(real)
        named = "/".join(parts)
        if named != rel:
            self._check_reserved(parts, spelled, line)
        return ResolvedPath(rel, spelled, leaf_is_symlink, named)

    def _relative_absolute(self, spelled: str, line: int | None) -> str:
        normal = os.path.normpath(spelled)
        for base in (self.root, self.given_root):
            rel = "" if normal == base else under(base, normal)
            if rel is not None:
                if rel and ".." in spelled.split("/"):
                    raise _unsafe(spelled, "it contains '..'", line, _NO_DOTS)
                return rel
        raise _unsafe(spelled, f"it is an absolute path outside the workspace root {self.root}",
                      line)

    def _check_reserved(self, parts: list[str], spelled: str, line: int | None) -> None:
        why = path_problem("/".join(parts))
        if why is not None:
            raise _unsafe(spelled, why, line, _NOT_RESERVED if reserved_reason(parts) else _INSIDE)

    def _follow_links(self, parts: list[str], spelled: str,
                      line: int | None) -> tuple[list[str], bool]:
        real: list[str] = []
        last = len(parts) - 1
        for i, part in enumerate(parts):
            if i < last and "/".join((*real, part)) in self._plain_dirs:
                real.append(part)
                continue
            candidate = "/".join((self.root.rstrip("/"), *real, part))
            try:
                st = os.lstat(candidate)
            except (FileNotFoundError, NotADirectoryError):
                return real + parts[i:], False  # missing here, so missing below
            except OSError as exc:
                raise _read_error(candidate, exc) from None
            if not stat.S_ISLNK(st.st_mode):
                real.append(part)
                if i < last and stat.S_ISDIR(st.st_mode):
                    self._plain_dirs.add("/".join(real))
                continue
            try:
                target = os.path.realpath(candidate)
            except OSError as exc:  # the link went away between lstat and readlink (a swap)
                raise _read_error(candidate, exc) from None
            if not within(self.root, target):
                raise _unsafe(spelled, f"'{'/'.join(parts[: i + 1])}' is a symbolic link that "
                              f"leads outside the workspace (to {target})", line)
            inside = os.path.relpath(target, self.root)
            real = [] if inside == "." else inside.split("/")
            if i == len(parts) - 1:
                return real, True
        return real, False


_MAX_DIR_FDS = 128


def _read_error(path: str, exc: OSError) -> FilesystemError | UnsafePathError:
    if exc.errno == errno.ELOOP:
        return UnsafePathError(
            f"Refusing to read {path}: a symbolic link took the place of a folder or file on the way"
            " to it (patchtx never reads through one).",
            hint="Check what replaced it, then plan the patch again.", path=path)
    name = _errno_name(exc)
    reason = exc.strerror or str(exc)
    return FilesystemError(f"Failed to read {path}: {reason}.", errno_name=name, path=path)


def _errno_name(exc: OSError) -> str | None:
    return errno.errorcode.get(exc.errno or 0)
