"""Patch + workspace → Plan: every touched file's exact before- and after-bytes (reads only).

Operations are applied in patch order to an in-memory overlay of the tree, so later operations see
earlier ones (Add then Update of one file works, as in Codex's CLI). Any failure raises before a
single byte is written.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

from .._record import record, replace
from ..errors import (
    AlreadyAppliedError,
    ArgumentTypeError,
    BinaryFileError,
    ConflictError,
    ContextNotFoundError,
    EmptyPatchError,
    FileExistsPatchError,
    FileNotFoundPatchError,
    NoChangeError,
    NotARegularFileError,
    PartlyAppliedError,
    PatchtxError,
    PolicyError,
    UnsafePathError,
)
from ..formats.registry import Format, format_named
from ..model import (
    AddFile,
    ChangeKind,
    DeleteFile,
    FileChange,
    Patch,
    PathTarget,
    Plan,
    Repair,
    UpdateFile,
)
from ..options import PlanOptions
from ..place.placer import UpdateRule
from ..place.textfile import as_bytes, looks_binary
from ..txn.emptied import emptied_folders
from ..workspace.paths import FileView, ResolvedPath, Workspace
from ..workspace.policy import check_changes, policy_files
from .modes import default_file_mode, git_permissions
from .placeholders import placeholder_added, placeholder_in_update
from .reads import ReadGuard
from .update import (
    FileNames,
    already_applied,
    binary_update,
    holds_deleted,
    in_place_in_turn,
    name_earlier_edit,
    no_op_hunk,
    update_file,
)

if TYPE_CHECKING:
    from collections.abc import Sequence

    from ..place.rewrite import Edit
    from ..txn.commit import Progress


@record(frozen=False)
class _Entry:
    content: bytes | None
    mode: int | None
    kind: str = "file"  # "file", "dir", "special" or "absent"
    identity: tuple[int, int] | None = None
    """(device, inode) of the file read from the workspace (None: staged, or not known)."""


_OR_OVERWRITE = "or allow overwriting explicitly (--allow-overwrite)."


class Stager:
    """An in-memory overlay of the workspace that operations are applied to, in order.

    ``plan()`` stages one patch; the Transaction API stages patches and direct writes, deletes and
    moves in the same overlay. Nothing here writes to disk; ``build_plan`` turns the overlay into
    the Plan the transaction manager commits.
    """

    def __init__(self, view: FileView, options: PlanOptions, progress: Progress | None = None) -> None:
        self.view = view
        self.options = options
        self.progress = progress
        """Told ``("planning", done, total)`` for each new path resolved."""
        self.resolved: set[str] = set()
        """The workspace paths resolved so far (counted for ``progress``)."""
        self.named = 0
        """How many paths the patches staged so far name (the progress total)."""
        self.original: dict[str, _Entry] = {}
        self.overlay: dict[str, _Entry] = {}
        self.changes: list[FileChange] = []
        self.files_under: dict[str, int] = {}
        """Folder → how many overlay entries with content lie somewhere inside it."""
        self.last_operation: dict[str, str] = {}
        """Path → the operation of the patch being staged that last changed it (for messages)."""
        self.rule = UpdateRule()
        """How the patch being staged places its updates (its format; its errors' hints say it)."""
        self.before_patch: dict[str, _Entry] = {}
        """The overlay as it was before the patch being staged (a unified diff's renames and
        copies read their source from it)."""
        self.staging: tuple[AddFile | DeleteFile | UpdateFile, ...] = ()
        """The operations of the patch being staged."""
        self.moved_into: set[str] = set()
        """Paths a rename or copy of the patch being staged wrote."""
        self.notes: list[str] = []
        """What the patches staged so far were taken less literally than they say (``Plan.notes``)."""
        self.in_place: list[str] = []
        """The operations of the patch being staged that are already applied (skipped)."""
        self.gone: list[PatchtxError] = []
        """Deletes of the patch being staged whose file is already gone, with their error."""
        self.deferred: list[PatchtxError] = []
        """Refusals of patchtx's own rules met while staging the patch (an operation, or a hunk,
        that changes nothing; a placeholder written as code), raised once the whole patch is
        staged: a refusal Codex also gives comes first."""
        self.sections_in_place: set[int] = set()
        """Update sections (by ``id``) found in place with an earlier section of their file
        (``_sections_in_place``): not staged again."""
        self.aliases: dict[str, set[str]] = {}
        """Workspace path -> the other names (through symbolic links) the patches reached it by."""
        self.repairs: list[Repair] = []
        """Every repair made to read and place the patches staged (``repair``, ``repair_update``)."""
        self.guard = ReadGuard(getattr(view, "root", ""), options.hidden)  # (a test's view may have none)
        """What the patches may not read (``reads``): every path they name is checked once
        resolved, every file with other names once opened (a ``Workspace`` of patchtx's; a
        caller's own FileView reads as it decides)."""
        if isinstance(view, Workspace):
            view.guard = self.guard.check_file

    # -- the overlay ----------------------------------------------------------------------------
    def current(self, rel: str) -> _Entry:
        entry = self.overlay.get(rel)
        if entry is not None:
            return entry
        info = self.view.info(rel)
        if info is None:
            entry = _Entry(None, None, "absent")
        elif info.kind == "file":
            entry = _Entry(self.view.read(rel), info.mode, identity=info.identity)
        else:
            entry = _Entry(None, info.mode, "dir" if info.kind == "dir" else "special")
        self.original[rel] = entry
        self.overlay[rel] = entry
        if entry.content is not None:
            self._count_in_folders(rel, 1)
        return entry

    @property
    def format(self) -> Format:
        """The rules of the patch being staged's format (``formats.registry``)."""
        return format_named(self.rule.format)

    def as_before(self, rel: str) -> _Entry:
        """``rel`` as it was before the patch being staged."""
        entry = self.before_patch.get(rel)
        if entry is None:
            self.current(rel)
            entry = self.original[rel]
        return entry

    def renamed_away(self, rel: str, after: int) -> bool:
        """Whether a unified diff's rename later in the patch being staged (after patch line
        ``after``) moves ``rel`` away: then a rename may move another file onto it first."""
        for hunk in self.staging:
            if (self.format.moves_read_before and isinstance(hunk, UpdateFile)
                    and hunk.move_to is not None and not hunk.copy and hunk.line > after):
                try:
                    if self.view.resolve(hunk.path, line=hunk.line).rel == rel:
                        return True
                except PatchtxError:
                    continue  # (refused when its turn comes)
        return False

    def set(self, rel: str, content: bytes | None, mode: int | None) -> None:
        had_content = self.current(rel).content is not None
        self.overlay[rel] = _Entry(content, mode, "file" if content is not None else "absent")
        if had_content != (content is not None):
            self._count_in_folders(rel, 1 if content is not None else -1)

    def _count_in_folders(self, rel: str, step: int) -> None:
        # Kept as we go so that "is anything staged inside this folder?" is one lookup, not a
        # scan of the overlay for every Add or Move (quadratic on patches adding many files).
        parts = rel.split("/")
        for depth in range(1, len(parts)):
            folder = "/".join(parts[:depth])
            self.files_under[folder] = self.files_under.get(folder, 0) + step

    def display(self, rel: str) -> str:
        return self.view.display(rel)

    def display_spelled(self, spelled: str) -> str:
        """A path as Codex names it in the messages patchtx shares with it: an absolute spelling
        verbatim, a relative one normalised and joined to the root, and never resolved through
        a symbolic link, so that the message names what the patch wrote."""
        if spelled.startswith("/"):
            return spelled
        normal = os.path.normpath(spelled)
        return self.display("" if normal == "." else normal)

    # -- checks ---------------------------------------------------------------------------------
    def refuse_overwrite(self, rel: str, line: int, refused: str, hint: str) -> None:
        """The file at ``rel`` exists: refused unless overwriting is allowed (``refused`` says
        what, up to "already exists"; ``hint`` what to do instead)."""
        if not self.options.allow_overwrite:
            raise FileExistsPatchError(f"Refusing to {refused} already exists (patch line {line}).",
                                       hint=hint, path=rel, line=line)

    def check_parents(self, rel: str, spelled: str, line: int) -> None:
        parts = rel.split("/")
        for depth in range(1, len(parts)):
            prefix = "/".join(parts[:depth])
            entry = self.overlay.get(prefix)
            kind = entry.kind if entry is not None else None
            if kind is None:
                info = self.view.info(prefix)
                kind = None if info is None else info.kind
            if kind in ("file", "special"):
                raise NotARegularFileError(
                    f"Failed to write file {self.display_spelled(spelled)}",
                    hint=f"'{prefix}' is a file, so it cannot hold '{spelled}'.",
                    path=rel, line=line)
            if kind in (None, "absent"):
                continue  # missing here, but a deeper parent may be a file this patch adds
        if self.files_under.get(rel, 0) > 0:
            other = next(other for other, entry in self.overlay.items()
                         if entry.content is not None and other.startswith(rel + "/"))
            raise NotARegularFileError(
                f"Failed to write file {self.display_spelled(spelled)}",
                hint=f"This patch already puts '{other}' inside a folder named '{spelled}'.",
                path=rel, line=line)

    def parent_is_file(self, rel: str) -> bool:
        parts = rel.split("/")
        for depth in range(1, len(parts)):
            prefix = "/".join(parts[:depth])
            entry = self.overlay.get(prefix)
            if entry is not None:
                if entry.content is not None:
                    return True
                continue
            info = self.view.info(prefix)
            if info is None:
                return False
            if info.kind != "dir":
                return True
        return False

    def resolve(self, spelled: str, line: int) -> ResolvedPath:
        if not isinstance(spelled, str):  # (a Transaction's or an editor's caller: a parser gives text)
            raise ArgumentTypeError.expected("a path", "a string", spelled)
        resolved = self.view.resolve(spelled, line=line, backslash=self.format.backslash_in_names)
        # Before anything is looked at: a hidden path is refused whether it exists or not, and
        # whatever the patch does with it (its bytes never reach a hint, a diff or an answer).
        self.guard.check_path(spelled, resolved.rel, resolved.named, action="read or write", line=line)
        if resolved.named != resolved.rel:  # reached through a symbolic link: a name of its own
            self.aliases.setdefault(resolved.rel, set()).add(resolved.named)
        if self.progress is not None and resolved.rel not in self.resolved:
            self.resolved.add(resolved.rel)
            done = len(self.resolved)
            self.progress("planning", done, max(self.named, done))
        return resolved

    def refuse_link(self, resolved: ResolvedPath, action: str, line: int) -> None:
        if resolved.leaf_is_symlink:
            raise UnsafePathError(
                f"Refusing to {action} '{resolved.spelled}': it is a symbolic link.",
                hint="patchtx updates files through links that stay inside the workspace, but "
                     "never adds, deletes or moves a link itself; name the real file instead.",
                path=resolved.spelled, line=line)

    # -- operations -----------------------------------------------------------------------------
    def add(self, hunk: AddFile, *, data: bytes | None = None, mode: int | None = None,
            copied_from: tuple[str, bytes, int | None] | None = None) -> None:
        """Stage an Add; a unified diff's copy comes with ``data``, ``mode`` and ``copied_from``
        (the source's path, content and mode), kept when the destination is new, for its diff."""
        resolved = self.resolve(hunk.path, hunk.line)
        self.refuse_link(resolved, "add", hunk.line)
        rel = resolved.rel
        entry = self.current(rel)
        if entry.kind in ("dir", "special"):
            raise NotARegularFileError(
                f"Failed to write file {self.display_spelled(hunk.path)}",
                hint=f"'{hunk.path}' is a {'directory' if entry.kind == 'dir' else 'special file'}.",
                path=rel, line=hunk.line)
        after = as_bytes(hunk.contents) if data is None else data
        if mode is None and hunk.mode is not None:
            mode = git_permissions(hunk.mode, entry.mode)
        if (entry.content == after and mode in (None, entry.mode)
                and rel not in self.last_operation):
            self.in_place.append(f"Add File: {hunk.path} (patch line {hunk.line}): the file "
                                 "already has exactly that content")
            return
        blocks = self.format.adds_by_empty_search
        if blocks and entry.content:
            # [empty-search]: aider appends the REPLACE lines, an older Cline replaces the whole
            # file: the block does not say which, so no policy makes it either.
            raise FileExistsPatchError(
                f"Refusing the block with an empty SEARCH for {hunk.path} (line {hunk.line}): an "
                "empty SEARCH creates a new file, and this one already exists.",
                hint="To add lines to it, SEARCH for the lines they go after and repeat them in "
                     "REPLACE; to change what it holds, SEARCH for those lines.",
                path=rel, line=hunk.line)
        if entry.content is not None and not ((hunk.fills_empty or blocks) and entry.content == b""):
            self.refuse_overwrite(
                rel, hunk.line, f"add {hunk.path}: the file",
                "The diff's one hunk ('@@ -0,0') adds to an empty file. If it is a -U0 diff that "
                "inserts at the top of the file, pass --unidiff-zero (unidiff_zero=True), as git "
                "apply needs it." if hunk.fills_empty else f"Use '*** Update File:' to change it, {_OR_OVERWRITE}")
        self.check_parents(rel, hunk.path, hunk.line)
        if looks_binary(after) and data is None and hunk.binary is None:
            # Written, it would be a file patchtx then refuses to edit (textfile.decode).
            raise BinaryFileError(
                f"Refusing to add {hunk.path}: its contents hold a NUL byte"
                f" (patch line {hunk.line}), which makes it a binary file patchtx could not edit"
                " afterwards.",
                hint="patchtx writes UTF-8 text only; remove the NUL, or add binary files with another tool.",
                path=rel, line=hunk.line)
        if data is None and hunk.binary is None and not self.options.allow_placeholders:  # (no text)
            self._defer(placeholder_added(hunk, rel, entry.content))
        if mode is None:
            mode = entry.mode
        copy = copied_from if entry.content is None else None
        self.changes.append(FileChange(ChangeKind.ADD, rel, hunk.path, entry.content, after,
                                       overwrote=entry.content,
                                       old_mode=entry.mode if copy is None else copy[2],
                                       new_mode=mode if mode is not None else default_file_mode(),
                                       copied_from=None if copy is None else copy[0],
                                       copied=None if copy is None else copy[1]))
        self.set(rel, after, mode)
        self.last_operation[rel] = f"Add File: {hunk.path} (patch line {hunk.line})"

    def delete(self, hunk: DeleteFile) -> None:
        resolved = self.resolve(hunk.path, hunk.line)
        if not self.options.allow_delete:
            raise PolicyError(f"Refusing to delete {hunk.path}: deleting files is not allowed "
                              "here.", hint="Resend with allow_delete set to true if the user agrees to the deletion.",
                              path=resolved.rel, line=hunk.line, details={"permission": "allow_delete"})
        self.refuse_link(resolved, "delete", hunk.line)
        rel = resolved.rel
        entry = self.current(rel)
        if entry.content is None:
            hint = {
                "dir": "It is a directory; patchtx deletes files only.",
                "special": "It is not a regular file.",
            }.get(entry.kind, "No such file" + (" (this patch already removed it)."
                                                 if rel in self.original and
                                                 self.original[rel].content is not None else "."))
            error = FileNotFoundPatchError if entry.kind == "absent" else NotARegularFileError
            failure = error(f"Failed to delete file {self.display_spelled(hunk.path)}", hint=hint,
                            path=rel, line=hunk.line)
            if entry.kind == "absent" and rel not in self.last_operation:
                # Gone already: in place if the rest of the patch is, else this very error (a
                # missing file alone says too little: the path may just be wrong).
                self.gone.append(failure)
                return
            raise failure
        if not holds_deleted(hunk, entry.content, self.display(rel)):
            raise ContextNotFoundError(
                f"Refusing to delete {self.display_spelled(hunk.path)}: it does not hold the lines "
                f"the diff deletes (patch line {hunk.line}).",
                hint="The file changed since the diff was made; make the diff again from the "
                     "current file.", path=rel, line=hunk.line)
        self.changes.append(FileChange(ChangeKind.DELETE, rel, hunk.path, entry.content, None,
                                       old_mode=entry.mode))
        self.set(rel, None, None)
        self.last_operation[rel] = f"Delete File: {hunk.path} (patch line {hunk.line})"

    def update(self, hunk: UpdateFile) -> None:
        resolved = self.resolve(hunk.path, hunk.line)
        rel = resolved.rel
        entry = self.current(rel)
        if self.format.moves_read_before and hunk.move_to is not None:
            # A rename or copy reads its source as it was before the diff, as git apply does
            # ("git patches do not depend on the order"): a copy of a file the diff also edits
            # is a copy of the original, and names may be swapped.
            entry = self.as_before(rel)
        display = self.display_spelled(hunk.path)
        if (entry.content is None and hunk.move_to is not None and not hunk.copy
                and rel not in self.last_operation):
            if self._moved_already(hunk):
                return
        if entry.content is None:
            if entry.kind == "absent" and not self.files_under.get(rel):  # (else a folder now)
                removed = rel in self.original and self.original[rel].content is not None
                reason = ("Not a directory (os error 20)" if self.parent_is_file(rel)
                          else "No such file or directory (os error 2)")
                hint = ("An earlier operation of this patch removed it." if removed else
                        self.format.missing_file_hint)
                if display != self.display(rel):
                    hint = f"It leads to {self.display(rel)} through a symbolic link. {hint}"
                raise FileNotFoundPatchError(
                    f"Failed to read file to update {display}: {reason}", hint=hint,
                    path=rel, line=hunk.line)
            raise NotARegularFileError(
                f"Failed to read file to update {display}: path `{os.path.normpath(display)}` is "
                "not a file",
                path=rel, line=hunk.line)
        if not hunk.chunks and self._mode_in_place(hunk, entry, rel):
            return
        names = FileNames(rel, hunk.path, display)
        try:
            update = (binary_update(entry.content, hunk, names) if hunk.binary is not None else
                      update_file(entry.content, hunk.chunks, self.rule, names,
                                  check_applied=rel not in self.last_operation))
        except ContextNotFoundError as miss:
            if rel not in self.last_operation and self._sections_in_place(hunk, rel, entry.content, display):
                return
            earlier = self.last_operation.get(rel)
            if earlier is not None:
                miss.hint = (f"An earlier operation of this patch ({earlier}) changed this "
                             "file: its hunks are matched against the file as that operation "
                             f"leaves it, not as it is on disk. {miss.hint}")
            else:
                name_earlier_edit(miss, hunk.chunks, entry.content, self.rule,
                                  FileNames(rel, hunk.path, display), self.view.root)
            raise
        self.notes += update.notes
        if update.applied:
            self.in_place.append(f"Update File: {hunk.path} (patch line {hunk.line}): every hunk "
                                 + ("is undone already" if self.rule.reverse else "is already applied"))
            return
        # (Asked once the hunks are placed: a hunk that does not match is refused as it is first.)
        self._defer(no_op_hunk(hunk, rel, self.format))
        if not self.options.allow_placeholders:
            self._defer(placeholder_in_update(hunk, rel, entry.content, self.format))
        after = update.after
        self.repairs.extend(update.repairs)
        if after == entry.content:
            if hunk.move_to is None and (hunk.new_mode is None or git_permissions(
                    hunk.new_mode, entry.mode) == entry.mode):
                self.deferred.append(NoChangeError(
                    f"Refusing the patch: the {self.format.hunks} for {hunk.path} (patch "
                    f"line {hunk.line}) would leave the file exactly as it is.",
                    hint="Nothing would change, so nothing is reported changed: if the file should "
                         "change, send the lines it should have; if it already holds them, leave "
                         "it out of the patch.", path=rel, line=hunk.line))
                return
            update = replace(update, edits=(), offsets=())  # (a move: its content as it was)
        if looks_binary(after) and hunk.chunks:  # (as for an Add: the file was text, so the NUL is the patch's)
            raise BinaryFileError(
                f"Refusing to update {hunk.path}: the patch adds a NUL byte (patch line {hunk.line}),"
                " which would make it a binary file patchtx could not edit afterwards.",
                hint="patchtx writes UTF-8 text only; remove the NUL from the added lines.",
                path=rel, line=hunk.line)
        mode = entry.mode if hunk.new_mode is None else git_permissions(hunk.new_mode, entry.mode)
        destination = None
        if hunk.move_to is not None:
            destination = self.resolve(hunk.move_to, hunk.line)
            if hunk.copy:
                self.copy(hunk, rel, destination, entry, after, mode)
                return
            if destination.rel == rel:
                # A move onto itself is a plain update, never a loss; but moving a link itself, or
                # onto one, is refused as every other move of a link is.
                self.refuse_link(resolved, "move", hunk.line)
                self.refuse_link(destination, "move onto", hunk.line)
                destination = None
        if destination is None:
            self.changes.append(FileChange(ChangeKind.UPDATE, rel, hunk.path, entry.content,
                                           after, edits=update.edits,
                                           edit_offsets=update.offsets, old_mode=entry.mode,
                                           new_mode=mode))
            self.set(rel, after, mode)
            self.last_operation[rel] = f"Update File: {hunk.path} (patch line {hunk.line})"
            return
        self.move(hunk.path, hunk.line, resolved, destination, entry, after, update.edits,
                  update.offsets, mode)

    def move(self, spelled_source: str, line: int, source: ResolvedPath, destination: ResolvedPath,
             entry: _Entry, after: bytes, edits: tuple[Edit, ...] | None = None,
             edit_offsets: tuple[Edit, ...] | None = None, mode: int | None = None) -> None:
        """Stage the move of ``source`` (spelled ``spelled_source`` at patch line ``line``; 0 for a
        Transaction's move) to ``destination`` with the bytes ``after``."""
        if not self.options.allow_move:
            raise PolicyError(f"Refusing to move {spelled_source}: moving files is not allowed here.",
                              hint="Resend with allow_move set to true if the user agrees to the move.",
                              path=source.rel, line=line, details={"permission": "allow_move"})
        self.refuse_link(source, "move", line)
        self.refuse_link(destination, "move onto", line)
        target = self.current(destination.rel)
        spelled = destination.spelled
        if target.kind in ("dir", "special"):
            raise NotARegularFileError(
                f"Failed to write file {self.display_spelled(spelled)}",
                hint=f"The move destination '{spelled}' is a directory or special file.",
                path=destination.rel, line=line)
        if target.content is not None and not self.renamed_away(destination.rel, line):
            self.refuse_overwrite(destination.rel, line,
                                  f"move {spelled_source} to {spelled}: the destination",
                                  f"Delete the destination first in the same patch, {_OR_OVERWRITE}")
        if destination.rel.startswith(source.rel + "/") and (
                not self.format.moves_read_before or source.rel not in self.moved_into):
            self.set(source.rel, None, None)  # (foo moved to foo/bar: the file makes way)
        self.check_parents(destination.rel, spelled, line)
        self.changes.append(FileChange(ChangeKind.MOVE, destination.rel, spelled, entry.content,
                                       after, source=source.rel, overwrote=target.content,
                                       edits=edits, edit_offsets=edit_offsets,
                                       old_mode=entry.mode,
                                       new_mode=entry.mode if mode is None else mode))
        # (A unified diff's rename reads its source as before the diff: where an earlier rename
        # of the diff moved another file in, that file stays: names swapped.)
        if not self.format.moves_read_before or source.rel not in self.moved_into:
            self.set(source.rel, None, None)
        self.set(destination.rel, after, entry.mode if mode is None else mode)
        self.moved_into.add(destination.rel)
        operation = f"Update File: {spelled_source} moved to {spelled} (patch line {line})"
        self.last_operation[source.rel] = self.last_operation[destination.rel] = operation

    def copy(self, hunk: UpdateFile, source: str, destination: ResolvedPath, entry: _Entry,
             after: bytes, mode: int | None) -> None:
        """A unified diff's copy: the destination is added with the source's (edited) bytes."""
        assert entry.content is not None
        self.add(AddFile(hunk.move_to or destination.spelled, after.decode("utf-8", "surrogateescape"), hunk.line),
                 data=after, mode=mode, copied_from=(source, entry.content, entry.mode))

    def _sections_in_place(self, hunk: UpdateFile, rel: str, content: bytes, display: str) -> bool:
        """Whether this Update section (whose hunks miss) and the later Update sections of the same
        file in the patch are in place together (``update.in_place_in_turn``): a file edited by
        several sections in turn sent again."""
        later: list[UpdateFile] = []
        for other in self.staging[self.staging.index(hunk) + 1:]:
            try:
                named = self.resolve(other.path, other.line).rel
            except PatchtxError:
                return False  # (its own refusal comes when the patch reaches it)
            if named != rel:
                continue
            if not isinstance(other, UpdateFile):
                return False  # (a Delete or Add of the file between: not sections in turn)
            later.append(other)
        sections = [hunk, *later]
        if not later or not in_place_in_turn(content, sections, self.rule,
                                             FileNames(rel, hunk.path, display)):
            return False
        for section in sections:
            self.in_place.append(f"Update File: {section.path} (patch line {section.line}): every "
                                 "hunk is already applied, with the file's other sections")
        self.sections_in_place.update(id(section) for section in later)
        return True

    def _defer(self, refusal: PatchtxError | None) -> None:
        """A refusal asked once the patch is staged (``deferred``), if there is one."""
        if refusal is not None:
            self.deferred.append(refusal)

    def _refuse_undone_changes(self, before: dict[str, _Entry], changes: Sequence[FileChange]) -> None:
        """Operations of one patch that update, delete or add a file (no move) and leave it as
        they found it (an edit and one that undoes it; a Delete and an Add of the same bytes and
        mode) are refused as ``no_change``: the result would list the file changed, and it is
        not (THE no-op rule of every protocol, docs/format.md "A patch that changes nothing")."""
        updated: dict[str, list[FileChange]] = {}
        for change in changes:
            updated.setdefault(change.path, []).append(change)
        for rel, ops in updated.items():
            if any(op.kind is ChangeKind.MOVE or op.source is not None for op in ops):
                continue
            was = before.get(rel) or self.original[rel]
            now = self.overlay[rel]
            # (An added file's mode is the one a new file gets: None until the commit gives it.)
            mode = default_file_mode() if now.mode is None else now.mode
            if was.content is not None and (was.content, was.mode) == (now.content, mode):
                raise NoChangeError(
                    f"Refusing the patch: its {len(ops)} operations on {ops[0].spelled} leave the file "
                    "exactly as it is (each undoes what the ones before it did)." if len(ops) > 1 else
                    f"Refusing the patch: its operation on {ops[0].spelled} leaves the file exactly "
                    "as it is.",
                    hint="Nothing would change, so nothing is reported changed: send only the "
                         "change the file should have.", path=rel)

    # -- a patch that is already applied ---------------------------------------------------------
    def _mode_in_place(self, hunk: UpdateFile, entry: _Entry, rel: str) -> bool:
        """A unified diff's mode change alone (no hunks, no rename) that the file already has."""
        if (hunk.move_to is not None or hunk.new_mode is None or rel in self.last_operation
                or git_permissions(hunk.new_mode, entry.mode) != entry.mode):
            return False
        self.in_place.append(f"Update File: {hunk.path} (patch line {hunk.line}): the file "
                             "already has that mode")
        return True

    def _moved_already(self, hunk: UpdateFile) -> bool:
        """A move whose source is gone and whose destination holds the moved file, hunks applied."""
        assert hunk.move_to is not None
        destination = self.resolve(hunk.move_to, hunk.line)
        target = self.current(destination.rel)
        if target.content is None or destination.rel in self.last_operation:
            return False
        if hunk.new_mode is not None and git_permissions(hunk.new_mode, target.mode) != target.mode:
            return False
        if not already_applied(target.content, hunk.chunks, self.rule):
            return False
        self.in_place.append(f"Update File: {hunk.path} moved to {hunk.move_to} (patch line "
                             f"{hunk.line}): the source is gone and the destination holds the "
                             "change")
        return True

    # -- staging several operations ------------------------------------------------------------
    def stage_patch(self, *patches: Patch) -> None:
        """Stage every hunk of the patches (several, in order, are one patch), or none: a failing
        hunk restores the overlay as it was.

        A patch whose every operation is already in place is refused as ``already_applied``
        (staged as nothing with ``skip_applied``); one only partly in place is refused."""
        saved = (dict(self.overlay), list(self.changes), dict(self.files_under),
                 dict(self.last_operation), list(self.repairs), list(self.notes))
        self.in_place, self.gone, self.deferred, self.sections_in_place = [], [], [], set()
        hunks = [hunk for patch in patches for hunk in patch.hunks]
        if self.progress is not None:
            named = {h.path for h in hunks}
            named |= {h.move_to for h in hunks if isinstance(h, UpdateFile) and h.move_to}
            self.named = len(self.resolved) + len(named)
        try:
            for patch in patches:
                self.rule = UpdateRule(patch.format, self.options.first_match, patch.reverse,
                                       repair=not self.options.strict)
                self.repairs.extend(patch.repairs)
                self.before_patch, self.staging, self.moved_into = dict(self.overlay), patch.hunks, set()
                for name, line, written in patch.names_to_confirm:
                    self.confirm_name(name, line, written)
                for hunk in patch.hunks:
                    if id(hunk) in self.sections_in_place:
                        continue
                    try:
                        if isinstance(hunk, AddFile):
                            self.add(hunk)
                        elif isinstance(hunk, DeleteFile):
                            self.delete(hunk)
                        else:
                            self.update(hunk)
                    except PatchtxError:
                        if self.gone:  # the first failure in patch order is the one reported
                            raise self.gone[0] from None
                        raise
            if self.deferred:
                raise self.deferred[0]
            self._refuse_undone_changes(saved[0], self.changes[len(saved[1]):])
            if self.in_place or self.gone:
                self._refuse_applied(len(hunks))
        except BaseException:
            (self.overlay, self.changes, self.files_under, self.last_operation, self.repairs,
             self.notes) = saved
            raise

    def confirm_name(self, name: str, line: int, written: str) -> None:
        """A SEARCH/REPLACE block's file name read from a line that does not look like a path
        names a file that exists, or the block's line is prose: refused (``parse_error``)."""
        if self.current(self.resolve(name, line).rel).content is None:
            from ..formats.search_replace import not_a_path_error  # (off a one-line edit's path)

            raise not_a_path_error(name, written, line)

    def _refuse_applied(self, operations: int) -> None:
        if self.in_place and len(self.in_place) + len(self.gone) == operations:
            self.in_place += [f"Delete File: {error.path} (patch line {error.line}): the file "
                              "does not exist" for error in self.gone]
        elif self.gone:
            raise self.gone[0]
        listing = "; ".join(self.in_place[:10]) + (" …" if len(self.in_place) > 10 else "")
        if len(self.in_place) == operations:
            if self.options.skip_applied:
                return
            if self.rule.reverse:
                raise AlreadyAppliedError(
                    "Refusing to reverse the diff: it is not applied (the files already are what "
                    f"reversing it makes them: {listing}).",
                    hint="There is nothing to undo. To treat this as success, pass --skip-applied "
                         "(skip_applied=True).", details={"applied": list(self.in_place)})
            raise AlreadyAppliedError(
                "Refusing the patch: it is already applied (every operation is in place: "
                f"{listing}).",
                hint="Applying it again would change nothing or duplicate lines. To treat this as "
                     "success, pass --skip-applied (skip_applied=True).",
                details={"applied": list(self.in_place)})
        raise PartlyAppliedError(
            f"Refusing the patch: {len(self.in_place)} of its {operations} operations are "
            f"already applied ({listing}) and the others are not.",
            hint="Send only the operations that are not yet applied, or re-read the files first.",
            details={"applied": list(self.in_place)})

    def stage_write(self, spelled: str, data: bytes, mode: int | None = None) -> None:
        resolved = self.resolve(spelled, 0)
        self.refuse_link(resolved, "write", 0)
        rel = resolved.rel
        entry = self.current(rel)
        if entry.kind in ("dir", "special"):
            raise NotARegularFileError(f"Failed to write file {self.display(rel)}",
                                       hint=f"'{spelled}' is not a regular file.", path=rel)
        self.check_parents(rel, spelled, 0)
        kind = ChangeKind.ADD if entry.content is None else ChangeKind.UPDATE
        self.changes.append(FileChange(kind, rel, spelled, entry.content, data))
        self.set(rel, data, mode if mode is not None else entry.mode)

    def stage_move(self, source: str, destination: str) -> None:
        resolved = self.resolve(source, 0)
        entry = self.current(resolved.rel)
        if entry.content is None:
            raise FileNotFoundPatchError(
                f"Failed to move {self.display(resolved.rel)}: no such file.", path=resolved.rel)
        target = self.resolve(destination, 0)
        if target.rel == resolved.rel:
            return
        self.move(source, 0, resolved, target, entry, entry.content, ())

    def read(self, spelled: str) -> bytes:
        resolved = self.resolve(spelled, 0)
        entry = self.current(resolved.rel)
        if entry.content is None:
            raise FileNotFoundPatchError(f"No such file: {self.display(resolved.rel)}",
                                         path=resolved.rel)
        return entry.content

    def build_plan(self, patch: Patch | None = None, intent: str | None = None) -> Plan:
        targets = self.targets()
        _check_policy(self, targets)
        planned = Plan(
            root=self.view.root,
            changes=tuple(self.changes),
            targets=tuple(targets),
            remove_dirs=tuple(self.emptied_dirs(targets)),
            patch=patch,
            intent=intent,
            repairs=tuple(self.repairs),
            notes=tuple(self.notes),
        )
        if self.options.syntax == "off":
            return planned
        from .syntax import check_plan  # (off a one-line edit's path)

        return replace(planned, syntax=check_plan(planned, self.options.syntax))

    # -- the result -----------------------------------------------------------------------------
    def targets(self) -> list[PathTarget]:
        out = []
        for rel in sorted(self.overlay):
            before, after = self.original[rel], self.overlay[rel]
            if before.kind in ("dir", "special"):
                if after.content is None:
                    continue
                raise ConflictError(f"Cannot write {self.display(rel)}: it is not a regular file.",
                                    path=rel)
            if before.content == after.content and (after.content is None or
                                                    before.mode == after.mode):
                continue
            after_mode = after.mode
            if before.content is not None and after.content is not None and after_mode is None:
                after_mode = default_file_mode()  # removed, then created anew by this patch
            out.append(PathTarget(rel, before.content, after.content, before.mode, after_mode, before.identity))
        return out

    def emptied_dirs(self, targets: list[PathTarget]) -> list[str]:
        removed = {t.path for t in targets if t.after is None}
        kept = (t.path for t in targets if t.after is not None)
        return emptied_folders(removed, kept, self.view.list_dir)


def _check_policy(planner: Stager, targets: list[PathTarget]) -> None:
    """The policy, as the commit will check it (``policy.check_changes``), with the names the
    patch reached each file by (a symbolic link's own name, for one)."""
    names = {path: [(name, "symbolic link") for name in sorted(spelled)]
             for path, spelled in planner.aliases.items()}
    check_changes(planner.options, targets, planner.changes, names=names,
                  extra_policy_files=policy_files(planner.view.root))


def plan(
    patch: Patch | Sequence[Patch],
    view: FileView | str | os.PathLike[str],
    options: PlanOptions | None = None,
    *,
    intent: str | None = None,
    progress: Progress | None = None,
) -> Plan:
    """Compute the Plan of ``patch`` (or of several patches, in order, as one) against the
    workspace (a root path, or a FileView); ``progress`` is told each new path planned."""
    if isinstance(view, str | os.PathLike):
        workspace = Workspace(view)
        try:
            return plan(patch, workspace, options, intent=intent, progress=progress)
        finally:
            workspace.close()  # its folder descriptors (see Workspace)
    patches = (patch,) if isinstance(patch, Patch) else tuple(patch)
    combined = patches[0] if len(patches) == 1 else Patch(
        tuple(h for p in patches for h in p.hunks), "\n".join(p.text for p in patches),
        format=patches[0].format if len({p.format for p in patches}) == 1 else "mixed")
    stager = Stager(view, options or PlanOptions(), progress)
    if not combined.hunks:
        raise EmptyPatchError(
            "No files were modified.",
            hint="The patch has no file operations: add '*** Add File:', '*** Update File:' or "
                 "'*** Delete File:' sections between the Begin and End lines.")
    stager.stage_patch(*patches)
    return stager.build_plan(combined, intent)
