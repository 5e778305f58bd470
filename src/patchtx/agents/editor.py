"""The text editor tool (``str_replace_based_edit_tool``): ``view``, ``create``, ``str_replace`` and
``insert``, with the reference tool's argument names and close to its wording, backed by patchtx.

The reference (Anthropic's computer-use demo, and OpenHands' editor after it) reads a file, edits
the text and writes it back in place. Here every writing command is a patchtx transaction: the edit
is parsed into a patch of the ``"text"`` format (an exact text replacement, an insertion after a
line, a new file), planned under the host's policy and committed through the journal and the
workspace lock, and kept in the undo history. Paths follow the rules of every patch: inside the
workspace root (absolute inside it, or relative to it), never through a link that leaves it, never
in ``.git`` or ``.patchtx``; ``view`` reads through the same rules and never writes, nor shows
patchtx's own state under any name (the per-user state folder, should the workspace hold it; a hard
link to the secret or a state file: ``reads``), nor a path the host hides (``hidden``: refused as
``hidden_path``, left out of listings). Protected files are shown: ``protected`` guards writes
(docs/guarantees.md, section 13, says why).

Where this differs from the reference, on purpose (docs/integrations.md lists each): tabs are kept
(the reference expands them in the file it writes); a file's line endings, BOM and final newline
are kept; a file that is not UTF-8 text is refused, never rewritten; ``view`` numbers the file's
real lines (the reference shows an empty line after a final newline); relative paths are taken
from the root; ``create`` of an existing file is refused unless the host allows overwriting.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import TYPE_CHECKING

from .._record import record
from ..api import commit_plan, parse_patches, plan_parsed
from ..errors import (
    ArgumentTypeError,
    EncodingPatchError,
    FileExistsPatchError,
    FileNotFoundPatchError,
    InvalidArgumentsError,
    NoChangeError,
    NotARegularFileError,
    PatchtxError,
    UnsafePathError,
)
from ..formats.edits import as_text, in_spelled_paths, text_edit
from ..formats.text_placement import FORMAT, line_of, text_of
from ..model import AddFile, Chunk, Patch, UpdateFile
from ..place.textfile import decode, require_unicode
from ..plan.reads import ReadGuard
from ..result import repair_lines
from ..txn.provenance import state_home
from ..workspace.paths import STATE_DIR, Workspace, root_path, under, within
from ..workspace.policy import hidden_for, options_for
from .edit_toolspec import EDITOR_ARGUMENTS

if TYPE_CHECKING:
    from typing import Any, Unpack

    from ..cancel import Cancellation
    from ..options import OptionKeywords, PlanOptions
    from ..result import Result
    from ..txn.commit import Progress
    from ..workspace.paths import FileInfo

TOOL_NAME = "str_replace_based_edit_tool"
COMMANDS = tuple(EDITOR_ARGUMENTS["command"]["enum"])
SNIPPET_LINES = 4
"""Lines of context shown around an edit, before and after (the reference's)."""
MAX_RESPONSE_CHARACTERS = 16000
"""What ``view`` shows of a file or a folder listing at most (``max_characters`` lowers it)."""
LISTING_DEPTH = 2
_NO_CHANGE = ("An edit that changes nothing is refused on every surface: give `new_str` as the "
              "text should become, or leave the edit out if the file already holds it.")
FILE_CLIPPED = ("<response clipped><NOTE>To save on context only part of this file has been shown "
                "to you. You should retry this tool after you have searched inside the file with "
                "`grep -n` in order to find the line numbers of what you are looking for.</NOTE>")
LISTING_CLIPPED = ("<response clipped><NOTE>Only part of this directory has been shown to you. "
                   "View its subdirectories one by one to see the rest.</NOTE>")


@record
class EditorReply:
    """What one command came to: ``text`` for the model (the reference's wording), and for a
    writing command the ``result`` of its transaction."""

    text: str
    result: Result | None = None


def _invalid(message: str, hint: str = "") -> InvalidArgumentsError:
    return InvalidArgumentsError(message, hint=hint or "Resend the call with corrected arguments.")


def _missing(parameter: str, command: str) -> InvalidArgumentsError:
    return _invalid(f"Parameter `{parameter}` is required for command: {command}.")


def unknown_command(command: str) -> InvalidArgumentsError:
    """The refusal of a command the editor does not have (the reference's words); ``undo_edit``
    is told where undo is."""
    return _invalid(f"Unrecognized command {command}. The allowed commands for the {TOOL_NAME} tool "
                    f"are: {', '.join(COMMANDS)}.",
                    "Every edit is a transaction: the `undo` tool (patchtx undo) reverts one by its id."
                    if command == "undo_edit" else "")


def numbered(lines: list[str], first: int = 1) -> str:
    """Lines as ``cat -n`` shows them (the number right-aligned in six columns, a tab)."""
    return "\n".join(f"{number:6}\t{line}" for number, line in enumerate(lines, first))


def clipped(text: str, limit: int, notice: str) -> str:
    return text if len(text) <= limit else text[:limit] + notice


class TextEditor:
    """The editor for one workspace ``root``. ``options`` are the host's policy and commit
    options, as the keywords of ``patchtx.apply_patch`` (``allow_overwrite`` lets ``create``
    replace a file; ``protected``, ``max_bytes``, ``durable``...): the ceiling that the
    workspace's ``[tool.patchtx]`` table can only tighten. ``intent`` is recorded with each
    change; ``origin``, the surface in the undo history (``"mcp"``: see ``patchtx mcp --undo``);
    ``progress`` and ``cancel``, those of each change's commit (``patchtx.api.PatchKeywords``)."""

    def __init__(self, root: str | os.PathLike[str] = ".", *, intent: str | None = None,
                 origin: str | None = None, defaults: Mapping[str, Any] | None = None,
                 progress: Progress | None = None, cancel: Cancellation | None = None,
                 **options: Unpack[OptionKeywords]) -> None:
        self.root = os.path.realpath(root_path(root))
        self.intent = intent
        self.origin = origin
        self.progress = progress
        self.cancel = cancel
        self.defaults = defaults
        """Defaults under the host's config (``policy.options_for``): the agent surfaces' (the
        syntax guard refusing) when the editor serves a model's tool calls."""
        self.options = options

    # -- the commands -----------------------------------------------------------------------------
    def run(self, command: str, path: str, *, file_text: str | None = None,
            view_range: list[int] | None = None, old_str: str | None = None,
            new_str: str | None = None, insert_line: int | None = None,
            insert_text: str | None = None, max_characters: int | None = None) -> EditorReply:
        """Run one command; raise ``PatchtxError`` (nothing changed) when it cannot be done."""
        if command not in COMMANDS:
            raise unknown_command(command)
        if not isinstance(path, str) or not path:
            raise _missing("path", command)
        for name, value in (("path", path), ("file_text", file_text), ("old_str", old_str),
                            ("new_str", new_str), ("insert_text", insert_text)):
            if isinstance(value, str):
                require_unicode(value, f"`{name}`")
        if command == "view":
            return EditorReply(self.view(path, view_range, max_characters))
        if command == "create":
            if file_text is None:
                raise _missing("file_text", command)
            return self.create(path, file_text)
        if command == "str_replace":
            if old_str is None:
                raise _missing("old_str", command)
            return self.str_replace(path, old_str, new_str)
        if insert_line is None:
            raise _missing("insert_line", command)
        text = insert_text if insert_text is not None else new_str
        if text is None:
            raise _missing("insert_text` (or `new_str", command)
        return self.insert(path, insert_line, text)

    def view(self, path: str, view_range: list[int] | None = None,
             max_characters: int | None = None) -> str:
        """A file's lines numbered as ``cat -n`` shows them (``view_range``: ``[first, last]``,
        1-based, ``-1`` for the end), or a folder's files up to two levels down, hidden ones left
        out; at most ``max_characters`` (default 16,000) of either."""
        limit = MAX_RESPONSE_CHARACTERS if max_characters is None else max_characters
        if not isinstance(limit, int) or isinstance(limit, bool) or limit < 1:
            raise _invalid("Invalid `max_characters`: it should be a positive integer.")
        workspace = self._workspace()
        guard = self._guard()
        workspace.guard = guard.check_file
        try:
            resolved = workspace.resolve(path)
            rel = resolved.rel
            guard.check_path(path, rel, resolved.named, action="show")
            state = self._state_inside()
            if state is not None and within(state, os.path.realpath(os.path.join(self.root, rel))):
                raise UnsafePathError(
                    f"Refusing to show {path}: it is patchtx's per-user state folder {state} (or "
                    "inside it), which holds the secret that signs this user's journals.",
                    hint="patchtx never shows its own secret; the host should keep that folder "
                         "(PATCHTX_STATE_HOME) outside the workspace.", path=rel)
            info = workspace.info(rel)
            if info is None:
                raise self._absent(path)
            if info.kind == "dir":
                if view_range:
                    raise _invalid("The `view_range` parameter is not allowed when `path` points "
                                   "to a directory.")
                return self._listing(workspace, rel, path, limit, state, guard)
            if info.kind != "file":
                raise NotARegularFileError(f"The path {path} is not a regular file.", path=rel)
            return self._file_view(workspace.read(rel), path, view_range, limit)
        finally:
            workspace.close()

    def create(self, path: str, file_text: str) -> EditorReply:
        self._check_target(path, "create")
        result = self._commit(Patch((AddFile(path, file_text, 1),), as_text(
            {"command": "create", "path": path, "file_text": file_text}), format=FORMAT))
        return EditorReply(f"File created successfully at: {path}", result)

    def str_replace(self, path: str, old_str: str, new_str: str | None = None) -> EditorReply:
        new = "" if new_str is None else new_str
        if new == old_str:  # (the one no-op rule, worded as the reference words it)
            raise NoChangeError("No replacement was performed. `new_str` and `old_str` must be "
                                "different.", hint=_NO_CHANGE, path=path)
        if not old_str:
            raise _invalid("No replacement was performed: `old_str` is empty, and the empty text "
                           "stands everywhere in the file.",
                           "Give the exact text to replace (use `create` for a new file).")
        self._check_target(path, "str_replace")
        result = self._commit(Patch((text_edit(path, old_str, new, line=1),), as_text(
            {"command": "str_replace", "path": path, "old_str": old_str, "new_str": new}),
            format=FORMAT))
        change = result.plan.changes[0]
        before = self._text_of(change.before)
        at = before.find(old_str.replace("\r\n", "\n"))
        # (old_str read without the line numbers copied into it: where the change starts)
        first = line_of(before, at) - 1 if at >= 0 or not change.edits else change.edits[0][2]
        start = max(0, first - SNIPPET_LINES)
        end = first + SNIPPET_LINES + new.count("\n")
        snippet = self._lines_of(change.after)[start : end + 1]
        repaired = "".join(f"\n{line}" for line in repair_lines(result))
        return EditorReply(
            f"The file {path} has been edited. Here's the result of running `cat -n` on a "
            f"snippet of {path}:\n{numbered(snippet, start + 1)}\n"
            "Review the changes and make sure they are as expected. Edit the file again if "
            f"necessary.{repaired}", result)

    def insert(self, path: str, insert_line: int, insert_text: str) -> EditorReply:
        if not isinstance(insert_line, int) or isinstance(insert_line, bool):
            raise _invalid(f"Invalid `insert_line` parameter: {insert_line!r}. It should be an "
                           "integer: the line the text goes after (0: the top of the file).")
        self._check_target(path, "insert")
        chunk = Chunk((), (("+", insert_text.replace("\r\n", "\n")),), line=1,
                      stated_line=insert_line)
        result = self._commit(Patch((UpdateFile(path, (chunk,), line=1),), as_text(
            {"command": "insert", "path": path, "insert_line": insert_line,
             "insert_text": insert_text}), format=FORMAT))
        inserted = chunk.lines[0][1]
        count = len(inserted[:-1].split("\n") if inserted.endswith("\n") else inserted.split("\n"))
        start = max(0, insert_line - SNIPPET_LINES)
        snippet = self._lines_of(result.plan.changes[0].after)[start : insert_line + count + SNIPPET_LINES]
        return EditorReply(
            f"The file {path} has been edited. Here's the result of running `cat -n` on a "
            f"snippet of the edited file:\n{numbered(snippet, start + 1)}\n"
            "Review the changes and make sure they are as expected (correct indentation, no "
            "duplicate lines, etc). Edit the file again if necessary.", result)

    # -- helpers ------------------------------------------------------------------------------------
    def _workspace(self) -> Workspace:
        return Workspace(self.root)

    def _guard(self) -> ReadGuard:
        """The checks of this call's reads, with the paths the host hides (the host's alone: no
        workspace policy is read, so a view works where that policy cannot be read)."""
        return ReadGuard(self.root, hidden_for(self.options, caller="TextEditor():", defaults=self.defaults))

    @staticmethod
    def _absent(path: str) -> FileNotFoundPatchError:
        return FileNotFoundPatchError(f"The path {path} does not exist. Please provide a valid path.",
                                      hint="Use `view` on a folder to see what it holds, or "
                                           "`create` to make a new file.", path=path)

    def _check_target(self, path: str, command: str) -> None:
        """The reference's checks of a writing command's path, worded as it words them (the plan
        checks again, and the commit under the lock: these only choose the message)."""
        workspace = self._workspace()
        try:
            resolved = workspace.resolve(path)
            rel = resolved.rel
            # (before its existence is looked at: a hidden path is refused whether it exists or not)
            self._guard().check_path(path, rel, resolved.named, action="change")
            info = workspace.info(rel)
        finally:
            workspace.close()
        if info is not None and info.kind == "dir":
            raise NotARegularFileError(
                f"The path {path} is a directory and only the `view` command can be used on "
                "directories", path=rel)
        if command == "create":
            if info is not None and not self._plan_options().allow_overwrite:
                raise FileExistsPatchError(
                    f"File already exists at: {path}. Cannot overwrite files using command "
                    "`create`.", hint="Edit it with `str_replace` or `insert` instead.", path=rel)
        elif info is None:
            raise self._absent(path)

    def _plan_options(self) -> PlanOptions:
        return options_for(self.root, self.options, caller="TextEditor():", defaults=self.defaults)[0]

    def _commit(self, patch: Patch) -> Result:
        plan_options, commit_options = options_for(self.root, self.options, caller="TextEditor():",
                                                   defaults=self.defaults)
        try:
            plan = plan_parsed(parse_patches(patch, plan_options), self.root, plan_options,
                               intent=self.intent, progress=self.progress, cancel=self.cancel)
            # (the commit's gate checks it again)
            return commit_plan(plan, commit_options, policy=plan_options, origin=self.origin,
                               progress=self.progress, cancel=self.cancel)
        except PatchtxError as error:
            raise in_spelled_paths(error, patch, self.root) from None

    @staticmethod
    def _text_of(data: bytes | None) -> str:
        return text_of(decode(data or b"", ""))

    @staticmethod
    def _lines_of(data: bytes | None) -> list[str]:
        return decode(data or b"", "").texts

    def _file_view(self, data: bytes, path: str, view_range: list[int] | None, limit: int) -> str:
        try:
            lines = decode(data, path).texts or [""]
        except EncodingPatchError as error:  # (decode's words are an update's: view updates nothing)
            line = error.details.get("file_line")
            error.headline = (f"Cannot show {path}: it is not UTF-8 text (byte "
                              f"{error.details.get('byte_offset')}, line {line}).")
            error.hint = ("The editor shows UTF-8 text only, and never rewrites a file in another "
                          "encoding; convert it to UTF-8 first, or read it another way.")
            error.args = (error.message,)
            raise
        first, note = 1, ""
        if view_range:
            if (not isinstance(view_range, list | tuple) or len(view_range) != 2
                    or not all(isinstance(n, int) and not isinstance(n, bool) for n in view_range)):
                raise _invalid("Invalid `view_range`. It should be a list of two integers.")
            first, last = view_range
            size = len(lines)
            if not 1 <= first <= size:
                raise _invalid(f"Invalid `view_range`: {list(view_range)}. Its first element "
                               f"`{first}` should be within the range of lines of the file: "
                               f"{[1, size]}")
            if last == -1:
                last = size
            elif last > size:
                note = f"NOTE: We only show up to {size} since there're only {size} lines in this file.\n"
                last = size
            if last < first:
                raise _invalid(f"Invalid `view_range`: {list(view_range)}. Its second element "
                               f"`{last}` should be greater than or equal to the first element "
                               f"`{first}`.")
            lines = lines[first - 1 : last]
        shown = clipped("\n".join(lines), limit, FILE_CLIPPED).split("\n")
        return f"{note}Here's the result of running `cat -n` on {path}:\n{numbered(shown, first)}\n"

    def _state_inside(self) -> str | None:
        """The real path of patchtx's per-user state folder when it lies inside the root (a
        workspace that holds it is refused every write: ``provenance.check_outside``); None, the
        usual case, when it lies outside."""
        state = os.path.realpath(state_home())
        return state if within(self.root, state) else None

    def _hidden_entry(self, guard: ReadGuard, child: str, info: FileInfo | None) -> bool:
        """Whether a listing leaves ``child`` out: the host hides it, under its own name or, for a
        symbolic link that stays inside the root, where it leads."""
        if guard.hides(child) is not None:
            return True
        if info is None or info.kind != "symlink":
            return False
        real = under(self.root, os.path.realpath(os.path.join(self.root, child)))
        return real is not None and guard.hides(real) is not None

    def _listing(self, workspace: Workspace, rel: str, path: str, limit: int,
                 state: str | None, guard: ReadGuard) -> str:
        base = path.rstrip("/") or "/"
        entries = [f"{base}/"]
        hidden = 0

        def walk(folder: str, shown: str, depth: int) -> None:
            nonlocal hidden
            for name in sorted(workspace.list_dir(folder)):
                child = f"{folder}/{name}" if folder else name
                if name.startswith("."):
                    # (patchtx's own state folder is no file of the workspace's; nor is a path the
                    # host hides counted among the dot files left out: not even its name is shown)
                    hidden += (depth == 1 and not (folder == "" and name == STATE_DIR)
                               and not (guard.hidden and guard.hides(child) is not None))
                    continue
                if state is not None and within(state, os.path.realpath(os.path.join(self.root, child))):
                    continue  # (nor is the per-user one: never shown, not even by name)
                info = workspace.info(child)
                if guard.hidden and self._hidden_entry(guard, child, info):
                    continue  # (a path the host hides is not shown, not even by name)
                is_dir = info is not None and info.kind == "dir"
                entries.append(f"{shown}/{name}{'/' if is_dir else ''}")
                if is_dir and depth < LISTING_DEPTH:
                    walk(child, f"{shown}/{name}", depth + 1)

        walk(rel, base if base != "/" else "", 1)
        text = clipped("\n".join(entries), limit, LISTING_CLIPPED)
        out = (f"Here's the files and directories up to {LISTING_DEPTH} levels deep in {path}, "
               f"excluding hidden items:\n{text}\n")
        if hidden:
            out += (f"\n{hidden} hidden files/directories in this directory are excluded. You can "
                    f"use 'ls -la {path}' to see them.\n")
        return out


def run_editor(arguments: Mapping[str, Any], root: str | os.PathLike[str] = ".", *,
               intent: str | None = None, origin: str | None = None,
               defaults: Mapping[str, Any] | None = None, progress: Progress | None = None,
               cancel: Cancellation | None = None,
               **options: Unpack[OptionKeywords]) -> EditorReply:
    """Run one editor call's decoded JSON arguments (``command``, ``path``, ...) against
    ``root`` (``origin``, ``defaults``, ``progress``, ``cancel``: see ``TextEditor``); raise
    ``PatchtxError`` when it cannot be done (nothing changed)."""
    if not isinstance(arguments, Mapping):
        raise ArgumentTypeError.expected(f"the arguments of {TOOL_NAME}", "an object (a dict)", arguments)
    unknown = sorted(map(str, set(arguments) - set(ARGUMENTS)))
    if unknown:
        raise _invalid(f"Unknown argument(s) for {TOOL_NAME}: {', '.join(unknown)}.")
    for name, kinds in ARGUMENTS.items():
        value = arguments.get(name)
        if value is not None and (isinstance(value, bool) or not isinstance(value, kinds)):
            raise _invalid(f"`{name}` must be {ARGUMENT_WORDS[name]}.")
    command = arguments.get("command")
    if command is None:
        raise _invalid("Parameter `command` is required: one of " + ", ".join(COMMANDS) + ".")
    given = {name: value for name, value in arguments.items() if name not in ("command", "path")}
    return TextEditor(root, intent=intent, origin=origin, defaults=defaults, progress=progress, cancel=cancel,
                      **options).run(
        command, arguments.get("path") or "", **given)


_PYTHON_TYPES: dict[str, tuple[type, ...]] = {"string": (str,), "integer": (int,), "array": (list,)}
ARGUMENTS: dict[str, tuple[type, ...]] = {name: _PYTHON_TYPES[schema["type"]]
                                          for name, schema in EDITOR_ARGUMENTS.items()}
"""Each argument's Python types, from the one declaration (``edit_toolspec.EDITOR_ARGUMENTS``)."""
ARGUMENT_WORDS = {name: "an integer" if kinds == (int,) else "a list of two integers"
                  if kinds == (list,) else "a string" for name, kinds in ARGUMENTS.items()}

