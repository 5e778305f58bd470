"""The ``edit_file`` tool: a lazy edit snippet (Cursor's ``edit_file``, Morph's and Relace's apply)
merged into its file by ``plan.snippet`` and applied as one transaction, through the same
plan, gate, syntax guard and undo history as every edit (docs/edit-file.md).

The file is read as the editor's ``view`` reads it (the host's hidden paths refused, patchtx's
own files never read under another name); the merged file becomes one exact replacement of the
whole text (the ``"text"`` format of edit lists), so a file changed between the read and the
commit is refused, not overwritten. A file that does not exist is created with the snippet as
its content (placeholders in it refused by the guard). ``tool_call.edit_file_call`` answers a
tool call with it (MCP, ``run_edit_tool_call``).

Arguments, as hosts name them: ``target_file`` (Cursor; also ``path``, ``file_path``,
``target_filepath``), ``code_edit`` (Cursor, Morph; also Relace's ``edit_snippet``),
``instructions`` (Cursor; also Morph's ``instruction``): one sentence recorded as the change's
intent. Relace's ``initial_code`` is taken only equal to the file (the file is read here).
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any

from ..api import apply_patch
from ..errors import InvalidArgumentsError, NotARegularFileError
from ..formats.edits import as_text, text_edit
from ..formats.text_placement import FORMAT, text_of
from ..model import AddFile, Patch
from ..place.textfile import decode, require_unicode
from ..plan.placeholders import extension_of
from ..plan.reads import ReadGuard
from ..plan.snippet import merge_snippet
from ..workspace.paths import Workspace, root_path
from ..workspace.policy import hidden_for

if TYPE_CHECKING:
    from collections.abc import Mapping
    from typing import Unpack

    from ..options import OptionKeywords
    from ..result import Result

TOOL = "edit_file"
ALIASES = {
    "target_file": ("target_file", "path", "file_path", "target_filepath"),
    "code_edit": ("code_edit", "edit_snippet"),
    "instructions": ("instructions", "instruction"),
}
"""Each argument and the names hosts give it (Cursor's first)."""
ACCEPTED = frozenset({*(name for names in ALIASES.values() for name in names), "initial_code", "dry_run"})


def _invalid(message: str) -> InvalidArgumentsError:
    return InvalidArgumentsError(f"edit_file: {message}",
                                 hint="edit_file takes `target_file` (the file), `code_edit` (the "
                                      "snippet) and optionally `instructions`.")


def read_arguments(arguments: Mapping[str, Any]) -> tuple[str, str, str | None, str | None, bool]:
    """(target_file, code_edit, instructions, initial_code, dry_run) out of a call's arguments,
    under any of the names hosts use; ``InvalidArgumentsError`` for a missing, doubled, unknown or
    mistyped one."""
    unknown = sorted(map(str, set(arguments) - ACCEPTED))
    if unknown:
        raise _invalid(f"unknown argument(s): {', '.join(unknown)}.")
    values: dict[str, str | None] = {}
    for name, names in ALIASES.items():
        given = [(key, arguments[key]) for key in names if arguments.get(key) is not None]
        if len(given) > 1:
            raise _invalid(f"`{given[0][0]}` and `{given[1][0]}` are the same argument: give one.")
        value = given[0][1] if given else None
        if value is not None and not isinstance(value, str):
            raise _invalid(f"`{given[0][0]}` must be a string.")
        if isinstance(value, str):
            require_unicode(value, f"`{given[0][0]}`")
        values[name] = value
    initial, dry_run = arguments.get("initial_code"), arguments.get("dry_run")
    if initial is not None and not isinstance(initial, str):
        raise _invalid("`initial_code` must be a string.")
    if dry_run is not None and not isinstance(dry_run, bool):
        raise _invalid("`dry_run` must be a boolean.")
    target, snippet = values["target_file"], values["code_edit"]
    if not target:
        raise _invalid("`target_file` is required: the file to edit.")
    if snippet is None:
        raise _invalid("`code_edit` is required: the snippet, with placeholders for unchanged code.")
    return target, snippet, values["instructions"], initial, bool(dry_run)


def _read(root: str, path: str, hidden: tuple[str, ...]) -> tuple[str, bytes | None]:
    """(the path as the workspace names it, the file's bytes or None when it does not exist), read
    as the editor's ``view`` reads: a hidden path refused before anything else is looked at."""
    workspace = Workspace(root)
    guard = ReadGuard(root, hidden)
    workspace.guard = guard.check_file
    try:
        resolved = workspace.resolve(path)
        guard.check_path(path, resolved.rel, resolved.named, action="change")
        info = workspace.info(resolved.rel)
        if info is None:
            return resolved.rel, None
        if info.kind != "file":
            raise NotARegularFileError(f"Refusing to edit {path}: it is not a regular file.",
                                       path=resolved.rel)
        return resolved.rel, workspace.read(resolved.rel)
    finally:
        workspace.close()


def snippet_patch(root: str, path: str, snippet: str, hidden: tuple[str, ...] = (), *,
                  initial_code: str | None = None, arguments: Mapping[str, Any] | None = None) -> Patch:
    """The patch that writes ``snippet`` merged into the file ``path`` of ``root`` (a new file:
    the snippet itself): one exact replacement of the file's whole text. Raises ``PatchtxError``
    when the snippet does not decide one file (``plan.snippet``)."""
    rel, data = _read(root, path, hidden)
    text = as_text(dict(arguments) if arguments is not None else {"target_file": path, "code_edit": snippet})
    if data is None:
        return Patch((AddFile(path, snippet, 1),), text, format=FORMAT)
    original = decode(data, path)
    old = text_of(original)
    if initial_code is not None and initial_code.replace("\r\n", "\n") != old:
        raise InvalidArgumentsError(
            f"Refusing the snippet for {path}: `initial_code` is not the file's content as it is "
            "now.", hint="Leave `initial_code` out (the file is read from the workspace), or read "
                         "the file again.", path=rel)
    merged = merge_snippet(original.texts, snippet, extension_of(rel), path)
    new = "\n".join(merged) + ("\n" if merged and original.ends_with_newline else "")
    return Patch((text_edit(path, old, new, line=1),), text, format=FORMAT)


def edit_file(target_file: str, code_edit: str, root: str | os.PathLike[str] = ".", *,
              instructions: str | None = None, dry_run: bool = False,
              **options: Unpack[OptionKeywords]) -> Result:
    """Merge the lazy snippet ``code_edit`` into ``target_file`` and apply it as one transaction
    (``instructions``: recorded as its intent); raise ``PatchtxError`` (nothing changed) when the
    text does not decide the merged file, saying which context to add where. ``options`` are those
    of ``patchtx.apply_patch``."""
    target, snippet, said, _, _ = read_arguments({"target_file": target_file, "code_edit": code_edit,
                                                  "instructions": instructions})
    real = os.path.realpath(root_path(root))
    hidden = hidden_for(options, caller="edit_file():")
    patch = snippet_patch(real, target, snippet, hidden)
    return apply_patch(patch, real, dry_run=dry_run, intent=said, **options)
