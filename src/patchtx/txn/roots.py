"""Which folders may be a workspace root: not the whole disk, not the user's home folder, not a
state folder of patchtx's.

A host that starts ``patchtx mcp`` (or a person who runs ``patchtx apply``) in the wrong folder
would otherwise hand every file of the machine, or of the user, to a model: Claude Desktop starts
its servers in ``/``, and ``--root .`` then meant the whole disk. The rule is one function,
``root_problem``; the command line and the MCP server refuse such a root with its one-line reason
and what to pass instead.
"""

from __future__ import annotations

import os

from ..errors import UnsafePathError
from ..workspace.paths import within
from .layout import STATE_DIR
from .provenance import state_home


def root_problem(root: str) -> str | None:
    """Why the folder ``root`` cannot be a workspace root (None: it can), judged by its real path:
    the filesystem's root, the user's home folder, a ``.patchtx`` folder or one inside it, or the
    per-user state folder (the secret that signs journals) or one inside it. (A root that holds
    the per-user state folder is refused when a commit would sign a journal: ``provenance``.)"""
    try:
        real = os.path.realpath(root)
    except OSError as exc:  # (a link the user may not follow: /proc/1/root)
        return f"its real path cannot be read ({exc.strerror or exc})"
    if real == os.path.realpath(os.sep) or _same_folder(real, os.sep):
        return "it is the whole disk"
    home = os.path.expanduser("~")
    if home not in ("~", "") and (real == os.path.realpath(home) or _same_folder(real, home)):
        return "it is your home folder"
    parts = real.split(os.sep)
    if STATE_DIR in parts:
        return f"it is patchtx's state folder {STATE_DIR} of a workspace, or inside one"
    state = os.path.realpath(state_home())
    if within(state, real):
        return f"it is patchtx's per-user state folder {state}, or inside it"
    return None


def _same_folder(one: str, other: str) -> bool:
    """Whether two paths are one folder by device and inode: a bind mount of the disk (or of the
    home folder) has a real path of its own, yet is the same folder."""
    try:
        return os.path.samestat(os.stat(one), os.stat(other))
    except (OSError, ValueError):
        return False


def check_root(root: str, *, pass_what: str = "--root with the project's folder") -> str:
    """The real path of ``root`` if it may be a workspace root; else UnsafePathError, one line
    saying why and what to pass (``pass_what``)."""
    why = root_problem(root)
    if why is None:
        return os.path.realpath(root)
    try:
        real = os.path.realpath(root)
    except OSError:
        real = os.path.abspath(root)
    raise UnsafePathError(f"Refusing the workspace root {real}: {why}.",
                          hint=f"Pass {pass_what}.", path=real)
