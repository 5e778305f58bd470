"""Turning OSErrors raised while committing into patchtx errors that say what happened."""

from __future__ import annotations

import errno
import os

from ..errors import FilesystemError

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable

    from .fsops import FileSystemOps

_DESCRIPTIONS = {
    errno.ENOSPC: "disk full",
    errno.EDQUOT: "disk quota exceeded",
    errno.EACCES: "permission denied",
    errno.EPERM: "permission denied",
    errno.EIO: "I/O error",
    errno.EROFS: "read-only filesystem",
    errno.EXDEV: "cross-device link",
    errno.EMFILE: "too many open files",
    errno.ENFILE: "too many open files",
    errno.ENOENT: "no such file or directory",
    errno.ENOTDIR: "not a directory",
    errno.EISDIR: "is a directory",
    errno.ENOTEMPTY: "directory not empty",
    errno.ENAMETOOLONG: "file name too long",
    errno.ELOOP: "symbolic link in the way",
    errno.EMLINK: "too many links",
}

_VERBS = {
    "create": "creating",
    "write": "writing",
    "truncate": "truncating",
    "open_for_rewrite": "opening for writing in place",
    "fchmod": "setting the mode of",
    "fchown": "setting the owner of",
    "setxattr": "copying extended attributes to",
    "fsync": "flushing to disk",
    "syncfs": "flushing to disk the filesystem of",
    "rename": "renaming",
    "link": "preserving the original of",
    "unlink": "removing",
    "unlink_many": "removing",
    "mkdir": "creating the directory",
    "rmdir": "removing the directory",
}

_HINTS = {
    errno.ENOSPC: "Free some disk space, then apply the patch again.",
    errno.EDQUOT: "Free some space within your quota, then apply the patch again.",
    errno.EACCES: "Check the permissions of that path and its directory, then apply the patch again.",
    errno.EPERM: (
        "Check the permissions of that path and its directory, and whether it is immutable or"
        " append-only (`lsattr`), then apply the patch again."
    ),
    errno.EROFS: "That path is on a read-only filesystem or mount; leave it out of the patch, or remount it writable.",
    errno.EIO: "The disk reported an error; check it before retrying.",
}


def describe_errno(code: int | None) -> tuple[str, str]:
    """(errno name, short description), e.g. ("ENOSPC", "disk full")."""
    if code is None:
        return ("EUNKNOWN", "unknown error")
    return (errno.errorcode.get(code, f"E{code}"), _DESCRIPTIONS.get(code, os.strerror(code)))


def filesystem_error(
    exc: OSError,
    fs: FileSystemOps,
    *,
    doing: str = "commit the patch",
    label: Callable[[str], str] = lambda path: path,
    changed: bool = False,
    hint: str | None = None,
) -> FilesystemError:
    """A FilesystemError naming the errno, what was being done, and to which path.

    ``label`` turns internal names (temporary files, journal files) into what they stand for.
    """
    name, description = describe_errno(exc.errno)
    failure = fs.last_failure
    if failure is not None and failure[1] is exc:
        call = failure[0]
        where = f"{_VERBS.get(call.op, call.op)} {label(call.path)}"
        if call.target is not None and call.op == "rename":
            where += f" to {label(call.target)}"
        path: str | None = call.path
    else:
        path = exc.filename if isinstance(exc.filename, str) else None
        where = f"reading {label(path)}" if path is not None else "reading the workspace"
    return FilesystemError(
        f"Could not {doing}: {description} ({name}) while {where}.",
        errno_name=name,
        path=path,
        changed=changed,
        hint=hint if hint is not None else _HINTS.get(exc.errno or 0, "Fix the cause, then apply the patch again."),
    )
