"""Plain values passed between the stages: Patch (parsed text), Plan (what to write).

Paths inside a Plan are workspace-relative POSIX strings with no ``.``/``..`` components (the
workspace has already refused anything that would leave the root); ``spelled`` keeps the path as
the patch wrote it, for Codex-style summaries.
"""

from __future__ import annotations

import hashlib
from enum import StrEnum
from typing import TYPE_CHECKING, Literal

from ._record import as_json, record, replace

if TYPE_CHECKING:
    from collections.abc import Sequence

    SyntaxStatus = Literal["ok", "errors", "unchanged_errors", "not_checked"]
    LineKind = Literal[" ", "-", "+"]


def changes_nothing(lines: Sequence[tuple[LineKind, str]], old_unterminated: bool = False,
                    new_unterminated: bool = False) -> bool:
    """THE no-op rule for one hunk (``NoChangeError``): its new side is its old side, so wherever
    it is placed it leaves the file as it was (context lines only, or lines removed and added back
    alike; a final newline taken away or given is a change)."""
    return (old_unterminated == new_unterminated
            and [text for kind, text in lines if kind != "+"] == [text for kind, text in lines if kind != "-"])


@record
class Chunk:
    """One ``@@`` section of an Update hunk."""

    anchors: tuple[str, ...]
    """``@@ text`` lines before the body, found one after the other (stacked anchors)."""
    lines: tuple[tuple[LineKind, str], ...]
    """Body lines in order: context ``" "``, removed ``"-"``, added ``"+"``."""
    is_end_of_file: bool = False
    line: int = 0
    """Patch line number of the chunk's first line (its ``@@`` line, or first body line)."""
    stated_line: int | None = None
    """A unified-diff hunk's old start line as its ``@@ -N`` header states it (1-based; 0 for an
    empty old side at the top of the file); None for a Codex chunk (placed by content alone)."""
    recounted: bool = False
    """The unified header has no counts (``@@ ... @@``), or its stated line falls inside the
    previous hunk's (model-written diffs): the stated line is not trusted, and the hunk must
    match in one place only. (A body that disagrees with its counts is refused: ``readings``.)"""
    old_unterminated: bool = False
    """``\\ No newline at end of file`` follows the old side's last line (it must be the file's end)."""
    new_unterminated: bool = False
    """``\\ No newline at end of file`` follows the new side's last line."""
    is_start_of_file: bool = False
    """A unified hunk stated at line 1 (or 0) with context after its change and none before it:
    it must start at the file's first line, as git apply pins it (``is_end_of_file`` pins one
    with less context after it to the end)."""
    every: bool = False
    """In a patch of the ``"text"`` format (exact text replacements, see ``text_placement``):
    replace every occurrence of the old text (an edit's ``replace_all``), at least one."""
    carriage_returns: tuple[int, ...] = ()
    """A unified hunk's body lines (indexes into ``lines``) that ended with a CR in the diff: a
    CRLF line there, where a diff's line ends with LF alone (``update._diff_endings`` writes the
    ``+`` lines so when the old lines carry the file's exact endings)."""
    readings: tuple[tuple[tuple[int, int, str], ...], ...] = ()
    """A unified hunk whose body agrees with its header's counts only with some lines read as
    context lines that lost their leading space: each reading's lines as (index in ``lines``,
    patch line, the line as written). The update takes the one reading that stands in the file
    (``unified_placement.read_by_counts``) before anything else; ``lines`` holds them as
    written until then."""
    unprefixed: tuple[tuple[int, int], ...] = ()
    """Body lines written without a prefix, read as context for the repair step to check against
    the file: (index in ``lines``, patch line). Empty for a patch as the grammar reads it."""

    @property
    def inserts_text(self) -> bool:
        """Whether this is a pure insertion (``+`` lines only) with some text: one whose lines
        already stand where it puts them says the patch may have been applied before (see
        ``applied``); blank lines alone are too common to tell anything."""
        return (all(kind == "+" for kind, _ in self.lines)
                and any(text.strip() for _, text in self.lines))

    @property
    def changes_nothing(self) -> bool:
        """Whether the hunk's new side is its old side (``changes_nothing``)."""
        return changes_nothing(self.lines, self.old_unterminated, self.new_unterminated)

    @property
    def old_lines(self) -> list[str]:
        return [text for kind, text in self.lines if kind != "+"]

    @property
    def new_lines(self) -> list[str]:
        return [text for kind, text in self.lines if kind != "-"]


@record
class BinaryChange:
    """A git binary patch's change to one file (``formats.gitbinary``): the image after, made
    from the image before, which must be the blob ``old_id`` names."""

    old_id: str
    """git's blob id of the image before (full; zeros: no file)."""
    new_id: str
    """git's blob id of the image after (full; zeros: no file)."""
    method: str
    """``"literal"`` (``data`` is the image after) or ``"delta"`` (git's delta from before)."""
    data: bytes
    """The hunk's data, inflated."""
    line: int = 0
    """Patch line of the hunk's ``literal``/``delta`` line."""


@record
class AddFile:
    path: str
    contents: str
    line: int = 0
    mode: int | None = None
    """A unified diff's ``new file mode`` (git's octal, e.g. ``0o100755``); None: the default."""
    fills_empty: bool = False
    """A unified diff's addition to an empty old side (``@@ -0,0``) that does not say the file is
    new: it creates the file, or fills it when it exists and is empty."""
    binary: BinaryChange | None = None
    """A binary patch's new file: ``contents`` holds its bytes (as ``textfile.as_bytes`` writes
    them), which may be any bytes."""


@record
class DeleteFile:
    path: str
    line: int = 0
    expected: tuple[str, ...] | None = None
    """A unified diff's removed lines: the file must hold exactly these (line endings aside)."""
    blob_id: str | None = None
    """A binary patch's deleted file: git's blob id of the bytes it must hold."""


@record
class UpdateFile:
    path: str
    chunks: tuple[Chunk, ...]
    move_to: str | None = None
    line: int = 0
    new_mode: int | None = None
    """A unified diff's ``new mode`` (git's octal); None: the file keeps its mode."""
    copy: bool = False
    """A unified diff's copy: ``move_to`` is written and ``path`` stays as it was."""
    binary: BinaryChange | None = None
    """A binary patch's change (``chunks`` then empty): the file's new bytes made from its old."""


Hunk = AddFile | DeleteFile | UpdateFile


@record
class Repair:
    """A malformed shape patchtx turned into a patch, because it had exactly one meaning (see
    ``repair``): reported with every result, so that a host can log it and a model learn the
    right shape."""

    kind: str
    """Stable name of the repair (``json_wrapper``, ``line_number_prefixes``...: docs/format.md)."""
    where: str
    """Where in the patch: ``patch line 1``, ``greet.py, patch lines 4-7``."""
    detail: str
    """What was done, in one sentence."""

    to_json = as_json


@record
class Patch:
    hunks: tuple[Hunk, ...]
    text: str = ""
    """The patch as parsed (heredoc wrapper and surrounding blank lines removed)."""
    environment_id: str | None = None
    format: str = "codex"
    """``"codex"`` (the ``*** Begin Patch`` envelope), ``"unified"`` (a unified diff),
    ``"search-replace"`` (SEARCH/REPLACE blocks) or ``"text"`` (exact text replacements: the text
    editor's commands, edit lists)."""
    repairs: tuple[Repair, ...] = ()
    """What the front door repaired to read the text as this patch (``repair``)."""
    reverse: bool = False
    """A unified diff read backwards (``-R``): "already applied" then means "not applied"."""
    names_to_confirm: tuple[tuple[str, int, str], ...] = ()
    """SEARCH/REPLACE blocks' file names read from a line that does not look like a path
    (``search_replace.looks_like_path``: ``Makefile``, or prose such as ``Here is the fix:``):
    (name, patch line, the line as written). Each must name a file that exists when the patch
    is planned, or the patch is refused (``parse_error``)."""


class ChangeKind(StrEnum):
    ADD = "A"
    UPDATE = "M"
    DELETE = "D"
    MOVE = "R"


@record
class FileChange:
    """One operation of the patch as planned (for summaries, diffs and per-file status)."""

    kind: ChangeKind
    path: str
    """Workspace-relative path; for a move, the destination."""
    spelled: str
    """The path as the patch wrote it (destination for a move)."""
    before: bytes | None
    """Content of ``source or path`` before this operation; None if it did not exist."""
    after: bytes | None
    """Content of ``path`` after this operation; None for a delete."""
    source: str | None = None
    """For a move: the workspace-relative source path."""
    overwrote: bytes | None = None
    """For an Add or Move allowed to overwrite: what the destination held before."""
    edits: tuple[tuple[int, int, int, int], ...] | None = None
    """For an update: the changed line ranges ``(old_start, old_end, new_start, new_end)``
    (0-based, end exclusive), known from the matched chunks, so a diff needs no diff algorithm."""
    edit_offsets: tuple[tuple[int, int, int, int], ...] | None = None
    """For an update planned on bytes (LF endings, no BOM): where each of ``edits``' line ranges
    starts and ends in ``before`` and ``after`` (byte offsets of line starts), which a diff of
    any other change has to find in the bytes itself."""
    old_mode: int | None = None
    """The file's permission bits before, when known (a diff shows a mode change)."""
    new_mode: int | None = None
    """The file's permission bits after, when known."""
    copied_from: str | None = None
    """For a unified diff's copy (an ADD): the workspace-relative path copied."""
    copied: bytes | None = None
    """For a copy: the copied file's content, the side its diff is shown against (as git shows
    a copy: ``copy from``/``copy to`` and the edits made to the copy)."""


@record
class PathTarget:
    """The net effect of a whole Plan on one path: what the transaction manager must make true.

    ``before`` and ``before_mode`` are what the path held when the Plan was computed (None = absent);
    the commit re-checks them under the lock. ``after`` None means the path must end up absent.
    """

    path: str
    before: bytes | None
    after: bytes | None
    before_mode: int | None = None
    after_mode: int | None = None
    before_identity: tuple[int, int] | None = None
    """(device, inode) of the file the Plan was computed from (None: not known, as in a hand-built
    plan): the commit refuses another file in its place, even one holding the same bytes (a hard
    link to a file outside the root swapped in would be rewritten in place)."""

    @property
    def before_sha256(self) -> str | None:
        return None if self.before is None else hashlib.sha256(self.before).hexdigest()

    @property
    def after_sha256(self) -> str | None:
        return None if self.after is None else hashlib.sha256(self.after).hexdigest()


# -- what the syntax guard (``syntax``) says of a Plan's files

@record
class SyntaxIssue:
    """One syntax error of a file as the patch would leave it (line and column 1-based)."""

    line: int
    column: int
    message: str

    to_json = as_json


@record
class FileSyntax:
    path: str
    status: SyntaxStatus
    """ok: parses; errors: the patch introduces errors (``errors``); unchanged_errors: the file had
    errors before and the patch adds none the guard can see; not_checked: see ``reason``."""
    language: str | None = None
    errors: tuple[SyntaxIssue, ...] = ()
    """The errors the patch introduces (first few), in file order."""
    reason: str | None = None
    """Why a file was not checked."""

    to_json = as_json


@record
class SyntaxReport:
    mode: str
    files: tuple[FileSyntax, ...] = ()

    @property
    def introduced(self) -> tuple[FileSyntax, ...]:
        return tuple(f for f in self.files if f.status == "errors")

    to_json = as_json

    def lines(self) -> list[str]:
        """For a person or a model: one line per file the patch leaves with new errors (mode warn),
        and one per reason files in a language the guard knows were not checked (no grammar
        installed, say: the files named, the first three); files that parse, and files in no
        language the guard knows, are in the JSON only."""
        out = []
        for f in self.introduced:
            first = f.errors[0]
            out.append(f"Syntax: {f.path}: the patch leaves {len(f.errors)} error(s), the first at line"
                       f" {first.line}, column {first.column} ({first.message}).")
        unchecked: dict[str, list[str]] = {}
        for f in self.files:
            if f.status == "not_checked" and f.language is not None:
                unchecked.setdefault(f.reason or "not checked", []).append(f.path)
        for reason, paths in unchecked.items():
            named = ", ".join(paths[:3]) + (f" and {len(paths) - 3:,} more" if len(paths) > 3 else "")
            out.append(f"Syntax: not checked: {named} ({reason}).")
        return out


@record
class Plan:
    """Everything a commit needs, computed before anything is written."""

    root: str
    """Absolute, symlink-resolved workspace root."""
    changes: tuple[FileChange, ...]
    targets: tuple[PathTarget, ...]
    """One entry per touched path, in a stable order; paths whose net effect is nil are omitted."""
    remove_dirs: tuple[str, ...] = ()
    """Directories the plan empties (deepest first); removed after the files, if still empty."""
    patch: Patch | None = None
    intent: str | None = None
    repairs: tuple[Repair, ...] = ()
    """Every repair made to plan the patch: the front door's, then those made against the files."""
    syntax: SyntaxReport | None = None
    """What the syntax guard said of each file written (None: the guard was off)."""
    notes: tuple[str, ...] = ()
    """What the plan took less literally than the patch says, each in a sentence (a SEARCH block
    matched with its indentation shifted, say): reported with the result."""

    def summary_counts(self) -> dict[str, int]:
        """Net effect per file: a file written twice is one M; a move whose source is gone and
        whose destination is new is one R (chains of moves count once)."""
        counts = {kind.value: 0 for kind in ChangeKind}
        by_path = {t.path: t for t in self.targets}
        moves = {c.path: c.source for c in self.changes if c.kind is ChangeKind.MOVE and c.source}
        counted: set[str] = set()
        for destination, source in moves.items():
            seen = {destination}
            while source in moves and source not in seen:
                seen.add(source)
                source = moves[source]
            dest_target, source_target = by_path.get(destination), by_path.get(source or "")
            if (dest_target and source_target and dest_target.after is not None
                    and source_target.after is None and not {destination, source} & counted):
                counts["R"] += 1
                counted |= {destination, source or ""}
        for target in self.targets:
            if target.path in counted:
                continue
            kind = "A" if target.before is None else "D" if target.after is None else "M"
            counts[kind] += 1
        return counts

    @property
    def files(self) -> tuple[FileChange, ...]:
        """``changes`` as a person reads them, one entry per file: an update of a file an earlier
        change of the plan added, updated or moved there is folded into that change (its ``after``,
        the diff from its ``before``), as two commits of a ``git format-patch`` on one file are
        one modified file. What the result lists, diffs and counts per file."""
        out: list[FileChange] = []
        last: dict[str, int] = {}  # a path -> the entry that leaves it as it is now
        for change in self.changes:
            at = last.get(change.path)
            if change.kind is ChangeKind.UPDATE and at is not None:
                out[at] = replace(out[at], after=change.after, new_mode=change.new_mode, edits=None,
                                  edit_offsets=None)
                continue
            if change.source is not None:
                last.pop(change.source, None)
            if change.kind is ChangeKind.DELETE or change.copied_from is not None:
                last.pop(change.path, None)
            else:
                last[change.path] = len(out)
            out.append(change)
        return tuple(out)

    @property
    def summary(self) -> str:
        counts = self.summary_counts()
        return ", ".join(f"{k} {counts[k]}" for k in ("A", "M", "D", "R"))
