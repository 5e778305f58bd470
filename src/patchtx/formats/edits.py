"""Edit lists → ``Patch`` (no I/O); ``api.apply_edits`` applies one as a transaction.

An edit list is what Claude Code's ``Edit`` and ``MultiEdit`` tools send, generalised to several
files: edits ``{path, old_string, new_string, replace_all}`` applied in order, each to the files as
the edits before it left them, all of them or none (one transaction). ``old_string`` must stand
exactly once in its file (``replace_all``: every occurrence is replaced, at least one); it may
start and end anywhere in a line. An empty ``old_string`` creates ``path`` with ``new_string`` as
its content, or fills it when it exists and is empty, as an empty SEARCH does (refused when the
file has content, unless the host allows overwriting).

Each edit becomes one operation of a patch of the ``"text"`` format (``text_placement`` places
it); line breaks written CR LF in the strings are read as LF (the file keeps its own endings).
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from ..errors import (
    AmbiguousContextError,
    ArgumentTypeError,
    FileExistsPatchError,
    InvalidArgumentsError,
    NoChangeError,
    PatchtxError,
)
from ..model import AddFile, Chunk, Patch, UpdateFile
from ..place.textfile import require_unicode
from .text_placement import FORMAT

if TYPE_CHECKING:
    from ..model import Hunk

PATH_KEYS = ("path", "file_path")
EDIT_KEYS = frozenset({*PATH_KEYS, "old_string", "new_string", "replace_all"})


def _invalid(number: int, total: int, message: str) -> InvalidArgumentsError:
    where = f"Edit {number} of {total}" if total > 1 else "The edit"
    return InvalidArgumentsError(f"{where}: {message}",
                                 hint="Resend the edits with corrected arguments.", line=number)


def text_edit(path: str, old: str, new: str, *, replace_all: bool = False, line: int = 0) -> Hunk:
    """One exact text replacement as a patch operation (an empty ``old``: the file created, with
    ``new`` as it is, or an existing empty file filled, as an empty SEARCH fills it)."""
    if not old:
        return AddFile(path, new, line, fills_empty=True)
    old, new = old.replace("\r\n", "\n"), new.replace("\r\n", "\n")
    return UpdateFile(path, (Chunk((), (("-", old), ("+", new)), line=line, every=replace_all),),
                      line=line)


def parse_edits(edits: Sequence[Mapping[str, Any]], *, path: str | None = None) -> Patch:
    """The edits as a patch of the ``"text"`` format, one operation per edit, in order; raise
    ``InvalidArgumentsError`` naming the edit for one that is malformed. ``path`` is the file of
    the edits that name none (MultiEdit's ``file_path``)."""
    if not isinstance(edits, Sequence) or isinstance(edits, str | bytes | bytearray):
        raise ArgumentTypeError.expected("`edits`", "a list of edits", edits,
                                         hint="Each edit is {path, old_string, new_string, replace_all}.")
    if path is not None and not isinstance(path, str):
        raise ArgumentTypeError.expected("`file_path`", "a string", path)
    if not edits:
        raise InvalidArgumentsError("The edit list is empty: send at least one edit.",
                                    hint="Each edit is {path, old_string, new_string, replace_all}.")
    total = len(edits)
    hunks: list[Hunk] = []
    for number, edit in enumerate(edits, 1):
        if not isinstance(edit, Mapping):
            raise _invalid(number, total, "an edit is an object with path, old_string and new_string.")
        unknown = sorted(map(str, set(edit) - EDIT_KEYS))
        if unknown:
            raise _invalid(number, total, f"unknown argument(s): {', '.join(unknown)}.")
        paths = [edit[key] for key in PATH_KEYS if edit.get(key) is not None] or (
            [path] if path is not None else [])
        if len(paths) != 1 or not isinstance(paths[0], str) or not paths[0]:
            raise _invalid(number, total, "`path` (or `file_path`) is required: one non-empty string.")
        old, new = edit.get("old_string"), edit.get("new_string")
        if not isinstance(old, str) or not isinstance(new, str):
            raise _invalid(number, total, "`old_string` and `new_string` are required strings.")
        for key, value in (("path", paths[0]), ("old_string", old), ("new_string", new)):
            require_unicode(value, f"edit {number}'s `{key}`" if total > 1 else f"`{key}`",
                            line=number)
        replace_all = edit.get("replace_all")
        if replace_all is not None and not isinstance(replace_all, bool):
            raise _invalid(number, total, "`replace_all` must be a boolean (true or false).")
        if old == new:  # (the one no-op rule, worded as Claude Code's Edit words it)
            where = f"Edit {number} of {total}" if total > 1 else "The edit"
            raise NoChangeError(f"{where}: No changes to make: old_string and new_string are "
                                "exactly the same.", line=number,
                                hint="An edit that changes nothing is refused on every surface: "
                                     "give new_string as the text should become, or leave the "
                                     "edit out if the file already holds it.")
        if not old and replace_all:
            raise _invalid(number, total, "`replace_all` needs a non-empty old_string (an empty "
                                          "one creates the file).")
        hunks.append(text_edit(paths[0], old, new, replace_all=bool(replace_all), line=number))
    return Patch(tuple(hunks), as_text(edits), format=FORMAT)


def as_text(arguments: object) -> str:
    """Edits (or an editor call's arguments) as the text of their patch: what the host's
    ``max_patch_bytes`` counts, and what a plan records as the patch."""
    return json.dumps(arguments, ensure_ascii=False, default=str)


def name_the_edit(error: PatchtxError, patch: Patch, root: str | None = None) -> PatchtxError:
    """``error`` in the edit list's words: the edit it concerns named in front (the error's
    ``line`` is its number), ``old_string`` for the text editor's ``old_str``, ``replace_all``
    offered for an ambiguous edit (the editor has no such argument), and each file as the edits
    spell it (``in_spelled_paths``, given the ``root``)."""
    if root is not None:
        in_spelled_paths(error, patch, root)
    hunk = patch.hunks[error.line - 1] if error.line and 1 <= error.line <= len(patch.hunks) else None
    if isinstance(error, FileExistsPatchError) and isinstance(hunk, AddFile):  # (the planner's are Codex's)
        error.headline = (f"An empty old_string creates {hunk.path}, which already exists and is not "
                          "empty.")
        error.hint = ("Give the text to replace as old_string (view the file to copy it); an empty "
                      "old_string only creates a new file or fills an empty one.")
    error.headline = error.headline.replace("old_str `", "old_string `")
    if isinstance(error, AmbiguousContextError) and "replace_all" not in error.hint:
        error.hint += " Or set replace_all to replace every occurrence."
    total = len(patch.hunks)
    if total > 1 and error.line and 1 <= error.line <= total and not error.headline.startswith("Edit "):
        path = patch.hunks[error.line - 1].path
        error.headline = f"Edit {error.line} of {total} ({path}): {error.headline}"
    error.args = (error.message,)
    return error


def in_spelled_paths(error: PatchtxError, patch: Patch, root: str) -> PatchtxError:
    """``error`` naming each file of an edit tool's call (edit lists, the text editor,
    SEARCH/REPLACE blocks) as the call spelled it: the planner joins a relative path to the root,
    as Codex's messages do, where the tool's reference names it as given."""
    real = os.path.realpath(root).rstrip("/")
    joined = {f"{real}/{os.path.normpath(hunk.path)}": hunk.path for hunk in patch.hunks
              if hunk.path and not hunk.path.startswith("/") and os.path.normpath(hunk.path) != "."}
    for absolute in sorted(joined, key=len, reverse=True):
        error.headline = error.headline.replace(absolute, joined[absolute])
        error.hint = error.hint.replace(absolute, joined[absolute])
    error.args = (error.message,)
    return error

