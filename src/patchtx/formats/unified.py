"""Unified diff text → ``Patch`` (no I/O), read as ``git apply`` reads it.

Accepted: ``git diff`` / ``git format-patch`` output with git's extended headers (new and deleted
file modes, old/new mode, rename and copy from/to, similarity and index lines), plain ``---`` /
``+++`` pairs (GNU ``diff -u``), leading prose (a commit message, mail headers) and trailing prose
(a format-patch signature), ``\\ No newline at end of file`` on either side, git's C-style quoted
paths, ``-p N`` path stripping and ``/dev/null``. The result is the same ``Patch`` model the Codex
parser makes; each hunk keeps its stated old line, which the planner places it by
(``unified_placement``). A hunk is read by its header's counts; a body that disagrees with them
is refused (``_counts_error``), unless lines that lost their leading space make it agree (its
``readings``, which the file chooses among at plan time). A hunk under a header without counts
(``@@ ... @@``, as models write one) is marked (``recounted``) so that only its content places it.

Refused with an error naming the file: binary patches, symbolic links (mode 120000), submodules
(160000), combined (merge) diffs.
"""

from __future__ import annotations

import re
from itertools import combinations
from math import comb
from typing import TYPE_CHECKING

from .._record import replace
from ..errors import (
    BinaryFileError,
    NoChangeError,
    ParseError,
    UnsafePathError,
    UnsupportedChangeError,
)
from ..model import AddFile, Chunk, DeleteFile, Patch, UpdateFile, changes_nothing
from ..place.textfile import require_bytes
from .heredoc import command_around, command_around_error
from .unified_names import DEV_NULL
from .unified_names import diff_error as _error
from .unified_names import git_header_names as _git_header_names
from .unified_names import mode as _mode
from .unified_names import name as _name
from .unified_names import traditional_name as _traditional_name

if TYPE_CHECKING:
    from ..model import Hunk, LineKind

_HUNK_HEADER = re.compile(r"@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@")
_BARE_HEADER = re.compile(r"@@(?: \.\.\. @@)?")
"""A hunk header without counts, as models write one: ``@@`` or aider's ``@@ ... @@``."""
_SYMLINK, _SUBMODULE, _TYPE_BITS = 0o120000, 0o160000, 0o170000
_MAX_READINGS = 16
"""The most readings of one hunk's body looked for in the file (each a choice of lines that lost
their leading space); more is no determined reading."""


_COUNTS_HINT = ("Make the header's counts those of the body (the old lines are its ' ' and '-' "
                "lines, the new ones its ' ' and '+' lines), start every body line with ' ', '+' "
                "or '-', or send the hunk whole; a hunk written by hand may have the header "
                "'@@ ... @@' without counts (then it is placed by its content alone).")


def _counts_error(hunk: _Hunk, header: str, old_count: int, new_count: int, old_seen: int,
                  new_seen: int, why: str, *, retry: bool = False) -> ParseError:
    """THE refusal of a hunk whose body disagrees with its header's counts (git apply: "corrupt
    patch"). ``retry``: the body agrees with them read otherwise (``_counted_readings``), which
    the repair step may check against the file (``parse(unprefixed_context=True)``)."""
    error = _error(f"the hunk '{header.strip()[:60]}' disagrees with its header's counts "
                   f"({old_count} old lines, {new_count} new; its body has {old_seen} and "
                   f"{new_seen}): {why}", hunk.line, _COUNTS_HINT)
    if retry:
        error.details["reading_by_counts"] = True
    return error


def _counted_readings(hunk: _Hunk, header: str, unprefixed: list[tuple[int, int, str]],
                      old_short: int, new_short: int, old_count: int, new_count: int,
                      ) -> tuple[tuple[tuple[int, int, str], ...], ...]:
    """Every reading of a hunk's body that agrees with its header's counts: the lines written
    without a prefix read as context lines that lost their leading space (each a line the counts
    expect), and as many ``-`` lines as the new side lacks, ``+`` lines as the old side lacks,
    read so too (a context line ' -----', a dashed underline, that lost its space reads as the
    removed line '----'). Each reading is its re-read lines as (index, patch line, text); the
    file chooses among them (``unified_placement.read_by_counts``). None: refused here."""
    old_seen, new_seen = old_count - old_short, new_count - new_short
    if old_short < 0 or new_short < 0:
        raise _counts_error(hunk, header, old_count, new_count, old_seen, new_seen,
                            "it has more lines than they say")
    removed = [at for at, (kind, _) in enumerate(hunk.lines) if kind == "-"]
    added = [at for at, (kind, _) in enumerate(hunk.lines) if kind == "+"]
    if new_short > len(removed) or old_short > len(added):
        raise _counts_error(hunk, header, old_count, new_count, old_seen, new_seen,
                            "it has fewer lines than they say (was the diff cut short?)")
    if comb(len(removed), new_short) * comb(len(added), old_short) > _MAX_READINGS:
        raise _counts_error(hunk, header, old_count, new_count, old_seen, new_seen,
                            "too many of its lines could be context lines that lost their space "
                            "for one reading to be told")

    def written(at: int) -> tuple[int, int, str]:
        kind, text = hunk.lines[at]
        return at, hunk.numbers[at], _without_cr(kind + text)

    return tuple(tuple(sorted([*unprefixed, *map(written, (*lost_minus, *lost_plus))]))
                 for lost_minus in combinations(removed, new_short)
                 for lost_plus in combinations(added, old_short))


def _reading_said(readings: tuple[tuple[tuple[int, int, str], ...], ...]) -> str:
    """The readings that agree with the counts, as a refusal names them."""
    shown = [", ".join(f"'{text[:40]}' (patch line {number})" for _, number, text in reading)
             for reading in readings[:4]]
    return ("it agrees with them only if " + " or ".join(shown) +
            (" (and more)" if len(readings) > 4 else "") +
            " lost a context line's leading space (read so only where the file has those "
            "lines there, and never with --strict)")


def _strip_components(name: str, count: int, line: int) -> str:
    if not count and name.startswith("/"):
        raise UnsafePathError(
            f"Refusing the patch: it names the absolute path {name} (patch line {line}).",
            hint="A diff names files relative to the tree it applies to; give a -p (path strip) "
                 "that leaves a relative name, or make the diff again from the tree.",
            path=name, line=line)
    parts = [part for part in name.split("/") if part]
    if count and len(parts) <= count:
        raise _error(f"cannot strip {count} leading component{'s' if count > 1 else ''} from "
                     f"'{name}'", line, "Give a smaller -p (path strip) value.")
    return "/".join(parts[count:])


class _Hunk:
    __slots__ = ("old_start", "new_start", "lines", "old_open", "new_open", "recounted", "line",
                 "numbers", "readings")

    def __init__(self, old_start: int, new_start: int, line: int) -> None:
        self.old_start, self.new_start, self.line = old_start, new_start, line
        self.lines: list[tuple[LineKind, str]] = []
        self.numbers: list[int] = []  # each body line's patch line
        self.old_open = self.new_open = False  # "\ No newline at end of file" on that side
        self.recounted = False
        self.readings: tuple[tuple[tuple[int, int, str], ...], ...] = ()
        """The readings of a body that agrees with its header's counts only with some lines read
        as context lines that lost their leading space (``Chunk.readings``)."""

    def reverse(self) -> None:
        swap: dict[str, LineKind] = {" ": " ", "-": "+", "+": "-"}
        self.lines = [(swap[kind], text) for kind, text in self.lines]
        self.old_start, self.new_start = self.new_start, self.old_start
        self.old_open, self.new_open = self.new_open, self.old_open


class _FileDiff:
    """One file's section of a diff, names as written (prefixes not yet stripped)."""

    __slots__ = ("line", "git_names", "old_name", "new_name", "old_mode", "new_mode", "new_file",
                 "deleted_file", "rename", "copy", "binary", "hunks", "git", "ids", "binary_hunks")

    def __init__(self, line: int, git: bool) -> None:
        self.line, self.git = line, git
        self.git_names: tuple[str, str] | None = None
        self.old_name: str | None = None
        self.new_name: str | None = None
        self.old_mode: int | None = None
        self.new_mode: int | None = None
        self.new_file = self.deleted_file = self.binary = False
        self.rename: tuple[str, str] | None = None
        self.copy: tuple[str, str] | None = None
        self.hunks: list[_Hunk] = []
        self.ids: tuple[str, str] | None = None  # the index line's blob ids
        self.binary_hunks: list[tuple[str, bytes, int]] = []  # GIT binary patch: forward, reverse


def _is_body(line: str) -> bool:
    return line == "" or line[0] in " +-\\"


class _Reader:
    """``lines`` without a CR before their LF, for the structure; ``raw`` as written, for the
    body lines: an added file's bytes are the diff's, CRs included (as git apply writes them)."""

    def __init__(self, raw: list[str], crs: bool, unprefixed_context: bool = False) -> None:
        self.raw = raw
        self.unprefixed_context = unprefixed_context
        """Whether a hunk whose body agrees with its counts only read otherwise (lines that lost
        their leading space) is kept with its readings, for the update to choose by the file
        (the repair step); else it is refused."""
        self.lines = [line[:-1] if line.endswith("\r") else line for line in raw] if crs else raw
        self.at = 0

    def peek(self, offset: int = 0) -> str | None:
        index = self.at + offset
        return self.lines[index] if index < len(self.lines) else None

    def starts_file(self, index: int) -> bool:
        """A file header starts at ``index``: ``diff --git``, or ``---`` then ``+++``."""
        lines = self.lines
        line = lines[index]
        if line.startswith("diff --git "):
            return True
        return (line.startswith("--- ") and index + 1 < len(lines)
                and lines[index + 1].startswith("+++ "))

    def file_inside_counts(self, index: int, old_left: int, new_left: int) -> bool:
        """Whether the ``---`` line at ``index``, inside a hunk whose header counts ``old_left``
        and ``new_left`` more lines, starts the next file rather than being a removed ``-- ``
        line (then ``+++`` is an added ``++ `` line, as ``git apply`` reads them by the counts).
        It starts a file when ``+++`` and a hunk header follow it, unless the counts expect
        exactly these two lines, or when the counts expect no line of either kind."""
        if not self.starts_file(index):
            return False
        if old_left < 1 or new_left < 1:
            return True
        after = self.lines[index + 2] if index + 2 < len(self.lines) else ""
        return after.startswith("@@ ") and not (old_left == 1 and new_left == 1)

    def read(self) -> list[_FileDiff]:
        files: list[_FileDiff] = []
        lines = self.lines
        while self.at < len(lines):
            line = lines[self.at]
            if line.startswith(("diff --cc ", "diff --combined ", "@@@ ")):
                raise UnsupportedChangeError(
                    f"Refusing the patch: line {self.at + 1} starts a combined (merge) diff.",
                    hint="Give a diff against one parent (git diff A B, or git show "
                         "--first-parent).", line=self.at + 1)
            if line.startswith("diff --git "):
                files.append(self.git_section())
            elif self.starts_file(self.at):
                section = _FileDiff(self.at + 1, git=False)
                self.names(section)
                self.hunks(section)
                files.append(section)
            elif line.startswith("@@ ") and _HUNK_HEADER.match(line):
                raise _error("a hunk comes before any file header ('--- a/...' and "
                             "'+++ b/...')", self.at + 1)
            elif line.strip() in ("*** Begin Patch", "*** End Patch"):
                raise mixed_formats_error(self.at + 1)
            elif line.startswith("Binary files ") and line.endswith(" differ"):
                # (diff -r's line for a binary file: a change this diff cannot carry)
                name = line[len("Binary files ") : -len(" differ")].split(" and ")[-1]
                raise BinaryFileError(
                    f"Refusing the patch: it holds a binary change to {name} (patch line "
                    f"{self.at + 1}).", hint="patchtx applies text diffs only; apply binary "
                    "changes with git apply.", path=name, line=self.at + 1)
            else:
                command = "" if files else command_around(lines, self.at)
                if command:
                    raise command_around_error(command, self.at + 1)
                self.at += 1  # prose: a commit message, mail headers, a signature
        return files

    def git_section(self) -> _FileDiff:
        number = self.at + 1
        section = _FileDiff(number, git=True)
        rest = self.lines[self.at][len("diff --git ") :]
        section.git_names = _git_header_names(rest, number)
        self.at += 1
        while (line := self.peek()) is not None and not line.startswith(("--- ", "@@ ", "diff ")):
            here = self.at + 1
            if line.startswith(("GIT binary patch", "Binary files ")):
                section.binary = True
                if line == "GIT binary patch":
                    self.binary_hunks(section)
                    continue
            elif line.startswith("new file mode "):
                section.new_file, section.new_mode = True, _mode(line, here)
            elif line.startswith("deleted file mode "):
                section.deleted_file, section.old_mode = True, _mode(line, here)
            elif line.startswith("old mode "):
                section.old_mode = _mode(line, here)
            elif line.startswith("new mode "):
                section.new_mode = _mode(line, here)
            elif line.startswith(("rename from ", "rename old ", "copy from ")):
                moved = (_name(line.split(" ", 2)[2], here), "")
                if line.startswith("copy"):
                    section.copy = (moved[0], (section.copy or moved)[1])
                else:
                    section.rename = (moved[0], (section.rename or moved)[1])
            elif line.startswith(("rename to ", "rename new ", "copy to ")):
                target = _name(line.split(" ", 2)[2], here)
                if line.startswith("copy"):
                    section.copy = ((section.copy or ("", ""))[0], target)
                else:
                    section.rename = ((section.rename or ("", ""))[0], target)
            elif line.startswith("index "):
                ids = line.split(" ")[1].split("..")
                section.ids = (ids[0], ids[1]) if len(ids) == 2 else None
                mode = line.split(" ")[2:3]
                if mode and mode[0].isdigit():
                    section.old_mode = section.new_mode = _mode("mode " + mode[0], here)
            elif not line.startswith(("similarity index ", "dissimilarity index ")):
                break  # the section ends (prose follows, e.g. a signature)
            self.at += 1
        if self.peek() is not None and self.starts_file(self.at) and not self.lines[self.at].startswith("diff "):
            self.names(section)
        self.hunks(section)
        return section

    def binary_hunks(self, section: _FileDiff) -> None:
        """A ``GIT binary patch``'s forward hunk and the reverse one after it (``gitbinary``)."""
        from .gitbinary import read_hunk  # (off a one-line edit's path)

        self.at += 1
        while (found := read_hunk(self.lines, self.at))[0] is not None:
            section.binary_hunks.append(found[0])
            self.at = found[1]
        if not section.binary_hunks:
            raise _error("'GIT binary patch' is not followed by a 'literal' or 'delta' hunk",
                         self.at)

    def names(self, section: _FileDiff) -> None:
        old, new = self.lines[self.at], self.lines[self.at + 1]
        section.old_name, old_epoch = _traditional_name(old[4:], self.at + 1)
        section.new_name, new_epoch = _traditional_name(new[4:], self.at + 2)
        if not section.git and DEV_NULL not in (section.old_name, section.new_name):
            # (A side dated the epoch does not exist: GNU diff -N's creations and deletions.)
            if old_epoch:
                section.old_name = DEV_NULL
            elif new_epoch:
                section.new_name = DEV_NULL
        self.at += 2

    def hunks(self, section: _FileDiff) -> None:
        while (line := self.peek()) is not None and (
                line.startswith("@@ ") or _BARE_HEADER.fullmatch(line.rstrip())):
            section.hunks.append(self.hunk())

    def hunk(self) -> _Hunk:
        """A hunk read by its header's counts (``@@ -a,b +c,d @@``), as git apply reads it: a body
        that disagrees with them is refused, unless the counts tell how to read it (lines that
        lost their leading space, ``_counted_readings``). A hunk whose header has no counts
        (``@@``, ``@@ ... @@``, as models write it) runs to the first line without a prefix and
        is placed by its content alone (``recounted``)."""
        number = self.at + 1
        header = self.lines[self.at]
        if _BARE_HEADER.fullmatch(header.rstrip()):
            return self.uncounted_hunk()
        match = _HUNK_HEADER.match(header)
        if match is None:
            raise _error(f"'{header[:80]}' is not a hunk header ('@@ -start,count +start,count "
                         "@@')", number)
        old_start, old_count, new_start, new_count = map(int, match.groups("1"))  # a count left out is 1
        hunk = _Hunk(old_start, new_start, number)
        self.at += 1
        old_seen = new_seen = 0
        lines = self.lines
        size = len(lines)
        unprefixed: list[tuple[int, int, str]] = []
        while self.at < size and (old_seen < old_count or new_seen < new_count):
            line = lines[self.at]
            # (No '@@ ' or 'diff ' line is a body line; a '--- ' line may start the next file.)
            if line[:4] == "--- " and self.file_inside_counts(
                    self.at, old_count - old_seen, new_count - new_seen):
                break
            if line.startswith("\\"):
                self.no_newline(hunk)
                continue
            if not _is_body(line):
                if line.startswith(("@@", "diff ")) or self.starts_file(self.at):
                    break
                # A line without a prefix where the counts expect more: a context line that lost
                # its leading space, if the file has it there (the readings are checked there).
                unprefixed.append((len(hunk.lines), self.at + 1, _without_cr(self.raw[self.at])))
                hunk.lines.append((" ", self.raw[self.at]))
                hunk.numbers.append(self.at + 1)
                self.at += 1
                old_seen, new_seen = old_seen + 1, new_seen + 1
                continue
            old_seen, new_seen = self.take(hunk, line, old_seen, new_seen)
        while self.at < size and lines[self.at].startswith("\\"):
            self.no_newline(hunk)
        if not hunk.lines:
            raise _error("a hunk has no lines", number)
        if self.at < size and self.body_goes_on(hunk):
            raise _counts_error(hunk, header, old_count, new_count, old_seen, new_seen,
                                f"line {self.at + 1} ('{lines[self.at][:60]}') goes on past them")
        if (old_seen, new_seen) != (old_count, new_count) or unprefixed:
            hunk.readings = _counted_readings(hunk, header, unprefixed, old_count - old_seen,
                                              new_count - new_seen, old_count, new_count)
            if not self.unprefixed_context:
                raise _counts_error(hunk, header, old_count, new_count, old_seen, new_seen,
                                    _reading_said(hunk.readings), retry=True)
        return hunk

    def body_goes_on(self, hunk: _Hunk) -> bool:
        """Whether the line at ``self.at``, after the lines a hunk's counts expect, is one more
        line of its body: one with a body line's prefix that starts no file and no signature
        (``-- ``), an empty line only when more body lines follow it."""
        line = self.lines[self.at]
        return not (not _is_body(line) or self.starts_file(self.at) or line in ("-- ", "--")
                    or (line == "" and not self.body_follows(self.at)))

    def uncounted_hunk(self) -> _Hunk:
        """A hunk under a header without counts: its body lines up to the first line without a
        prefix (one more body line after such a line is refused: a context line that lost its
        space, or prose?), placed by its content alone."""
        number = self.at + 1
        hunk = _Hunk(0, 0, number)
        hunk.recounted = True
        self.at += 1
        lines, size = self.lines, len(self.lines)
        while self.at < size:
            line = lines[self.at]
            if line.startswith("\\"):
                self.no_newline(hunk)
                continue
            if not self.body_goes_on(hunk) or line.startswith(("@@", "diff ")):
                break
            self.take(hunk, line, 0, 0)
        if not hunk.lines:
            raise _error("a hunk has no lines", number)
        if all(kind == "+" for kind, _ in hunk.lines):
            raise _error(f"the hunk '{lines[number - 1].strip()}' has no counts and no context: "
                         "nothing says where its lines go", number,
                         "Give the hunk unchanged lines of the file around its change, or its "
                         "'@@ -start,count +start,count @@' header.")
        rest = [line.strip() for line in lines[self.at:]]
        if (hunk.lines[-1][0] != " " and not (hunk.old_open or hunk.new_open)  # (a marker ends it)
                and all(not line or line.startswith(("```", "~~~")) for line in rest)):
            raise _error(f"the hunk '{lines[number - 1].strip()}' has no counts and ends the text "
                         f"with a changed line (patch line {hunk.numbers[-1]}): it may have been "
                         "cut off there, and nothing in it says it was not", number,
                         "End the hunk with an unchanged line of the file, or give it its "
                         "'@@ -start,count +start,count @@' header.")
        if self.at < size and not lines[self.at].startswith(("@@", "diff ")):
            after = next((at for at in range(self.at + 1, min(size, self.at + 50))
                          if self.body_line_at(at)), None)
            if after is not None and not self.starts_file(self.at):
                raise _error(f"line {self.at + 1} ('{lines[self.at][:60]}') inside the hunk "
                             f"'{lines[number - 1].strip()}' has no prefix, and the hunk's lines "
                             f"go on at line {after + 1}: a context line that lost its leading "
                             "space, or text between hunks?", self.at + 1,
                             "Start every body line with ' ', '+' or '-', or give the hunk its "
                             "'@@ -start,count +start,count @@' header.")
        return hunk

    def body_line_at(self, index: int) -> bool:
        """A changed line of a hunk (``+`` or ``-``, not a file header) at ``index``, before the
        next header."""
        line = self.lines[index]
        return line[:1] in ("+", "-") and not self.starts_file(index) and line not in ("-- ", "--")

    def body_follows(self, index: int) -> bool:
        """An empty line is an empty context line if more body lines of the hunk follow it."""
        lines = self.lines
        while index < len(lines) and lines[index] == "":
            index += 1
        return (index < len(lines) and lines[index][0] in " +-"
                and not self.starts_file(index) and lines[index] not in ("-- ", "--"))

    def take(self, hunk: _Hunk, line: str, old_seen: int, new_seen: int) -> tuple[int, int]:
        kind: LineKind = " " if line == "" else line[0]  # type: ignore[assignment]
        if (kind != "+" and hunk.old_open) or (kind != "-" and hunk.new_open):
            raise _error("a line follows '\\ No newline at end of file' on its side of the hunk",
                         self.at + 1, "That marker can only follow the last line of a file.")
        hunk.lines.append((kind, self.raw[self.at][1:] if line else ""))
        hunk.numbers.append(self.at + 1)
        self.at += 1
        return old_seen + (kind != "+"), new_seen + (kind != "-")

    def no_newline(self, hunk: _Hunk) -> None:
        if not hunk.lines:
            raise _error("'\\ No newline at end of file' before any line of the hunk", self.at + 1)
        kind = hunk.lines[-1][0]
        hunk.old_open |= kind != "+"
        hunk.new_open |= kind != "-"
        self.at += 1


def mixed_formats_error(line: int) -> ParseError:
    return ParseError(
        f"Invalid patch: line {line} mixes the two patch formats (a '*** Begin Patch' envelope "
        "and a unified diff) in one text.",
        hint="Send each format as its own patch (several patch files are applied as one "
             "transaction: patchtx apply a.patch b.diff).", line=line)


def _without_cr(text: str) -> str:
    """A body line as the line model compares it: its CR, if any, is the line's ending (an
    updated file keeps its own endings; added lines take its dominant one)."""
    return text[:-1] if text.endswith("\r") else text


def _prefixed(names: list[str]) -> bool:
    return all(name == DEV_NULL or name.startswith(("a/", "b/")) for name in names)


class _Paths:
    """The ``-p N`` rule: N given, or by default git's ``a/`` ``b/`` prefixes off, else one
    component off a path that has more than one."""

    def __init__(self, strip: int | None, absolute_names: bool = False) -> None:
        self.strip = strip
        self.absolute_names = absolute_names and strip is None
        """The repair step's reading (``repair``): an absolute name (``/abs/x``, ``a//abs/x``)
        is kept whole, for the planner to take as the file it names inside the root."""

    def __call__(self, name: str | None, number: int, *, prefixed: bool) -> str | None:
        if name is None or name == DEV_NULL:
            return None
        if self.strip is not None:
            return _strip_components(name, self.strip, number)
        if self.absolute_names:
            bare = name[2:] if prefixed and name.startswith(("a/", "b/")) else name
            if bare.startswith("/"):
                return bare
        if prefixed or "/" in name.strip("/"):
            return _strip_components(name, 1, number)
        return name

    def strips_away(self, name: str | None) -> bool:
        """Whether the ``-p N`` given leaves nothing of ``name`` (a real name, not /dev/null)."""
        return (self.strip is not None and name is not None and name != DEV_NULL
                and len([part for part in name.split("/") if part]) <= self.strip)


def _build(section: _FileDiff, paths: _Paths, reverse: bool, crs: bool, unidiff_zero: bool) -> Hunk:
    """One file's section as a hunk; ``crs`` says whether the diff holds a CR at all (without
    one, no body line has one to lose)."""
    number = section.line
    prefixed = _prefixed([n for n in (section.old_name, section.new_name) if n is not None]
                         + list(section.git_names or ()))
    old_name, new_name = section.old_name, section.new_name
    if not section.git and DEV_NULL not in (old_name, new_name):
        # A -p N that leaves nothing of one of a traditional diff's two names: the other one
        # names the file, as git apply and GNU patch take it (both gone: refused below).
        old_gone, new_gone = paths.strips_away(old_name), paths.strips_away(new_name)
        if old_gone and not new_gone:
            old_name = new_name
        elif new_gone and not old_gone:
            new_name = old_name
    old = paths(old_name, number, prefixed=prefixed)
    new = paths(new_name, number, prefixed=prefixed)
    moved = section.rename or section.copy
    if section.new_file and moved is not None:
        raise _error(f"'new file mode' together with '{'rename' if section.rename else 'copy'} "
                     "from' (a new file cannot be renamed or copied from another)", number)
    if section.git and section.git_names is not None:
        git_old = paths(section.git_names[0], number, prefixed=prefixed)
        git_new = paths(section.git_names[1], number, prefixed=prefixed)
        # git's rule: the ---/+++ names must be the diff --git line's (unless a rename or copy
        # line names them), never a third file.
        for side, named, expected in (("old", old, git_old), ("new", new, git_new)):
            if named is not None and moved is None and named != expected:
                raise _error(f"inconsistent {side} file name: the diff --git line names "
                             f"'{expected}', the {'---' if side == 'old' else '+++'} line "
                             f"'{named}'", number)
        if old is None and section.old_name != DEV_NULL and not section.new_file:
            old = git_old
        if new is None and section.new_name != DEV_NULL and not section.deleted_file:
            new = git_new
        if section.new_file and new is None:
            new = git_new
        if section.deleted_file and old is None:
            old = git_old
    # Rename and copy lines name full paths (git strips one component less from them).
    if moved is not None:
        inner = _Paths(None if paths.strip is None else max(paths.strip - 1, 0))
        old = inner(moved[0], number, prefixed=False) if paths.strip else moved[0]
        new = inner(moved[1], number, prefixed=False) if paths.strip else moved[1]
    if not section.git and old is not None and new is not None and old != new:
        # A plain diff renames nothing: it names one file twice (``x.orig`` and ``x``, say);
        # the shorter name is the file, as git apply takes it.
        old = new = old if len(old) < len(new) else new
    if section.new_file or section.old_name == DEV_NULL:
        old = None
    if section.deleted_file or section.new_name == DEV_NULL:
        new = None
    name = new or old
    if name is None:
        raise _error("a file section names no file", number)
    for mode in (section.old_mode, section.new_mode):
        if mode is not None and mode & _TYPE_BITS == _SYMLINK:
            raise UnsupportedChangeError(
                f"Refusing the patch: it changes the symbolic link {name} (patch line {number}).",
                hint="patchtx edits regular files only; leave links out of the patch.",
                path=name, line=number)
        if mode is not None and mode & _TYPE_BITS == _SUBMODULE:
            raise UnsupportedChangeError(
                f"Refusing the patch: it changes the submodule {name} (patch line {number}).",
                hint="Update submodules with git; leave them out of the patch.",
                path=name, line=number)
    if section.binary and not section.binary_hunks:
        raise BinaryFileError(
            f"Refusing the patch: it holds a binary change to {name} (patch line {number}) "
            "without the bytes ('Binary files ... differ').",
            hint="Make the diff with git diff --binary: it carries the binary files' bytes.",
            path=name, line=number)
    hunks = section.hunks
    old_mode, new_mode = section.old_mode, section.new_mode
    if reverse:
        if section.copy is not None:
            raise UnsupportedChangeError(
                f"Refusing to reverse the copy of {old} to {new} (patch line {number}).",
                hint="Reverse a copy by deleting the copied file.", path=new, line=number)
        for hunk in hunks:
            hunk.reverse()
        old, new = new, old
        old_mode, new_mode = new_mode, old_mode
    if section.binary_hunks:
        return _binary(section, old, new, old_mode, new_mode, reverse)
    if old is None:
        assert new is not None
        added: list[str] = []
        for hunk in hunks:
            if any(kind != "+" for kind, _ in hunk.lines):
                raise _error(f"the new file {new} has context or removed lines", hunk.line)
            added.extend(text for _, text in hunk.lines)
        contents = "".join(text + "\n" for text in added)
        if hunks and hunks[-1].new_open and contents:
            contents = contents[:-1]
        return AddFile(new, contents, number, new_mode)
    if new is None:
        removed: list[str] = []
        for hunk in hunks:
            if any(kind != "-" for kind, _ in hunk.lines):
                raise _error(f"the deleted file {old} has context or added lines", hunk.line)
            removed.extend(_without_cr(text) for _, text in hunk.lines)
        return DeleteFile(old, number, tuple(removed) if hunks or section.git else None)
    # A hunk stated to start inside the previous one's old lines (every hunk "@@ -1,3 +1,3 @@")
    # has no line to trust either.
    for previous, hunk in zip(hunks, hunks[1:], strict=False):
        previous_end = previous.old_start + sum(kind != "+" for kind, _ in previous.lines)
        if hunk.old_start < previous_end:
            hunk.recounted = True
    for hunk in hunks:
        # (Asked of the lines as written, line endings included: '-a' '+a<CR>' is a change.)
        if changes_nothing(hunk.lines, hunk.old_open, hunk.new_open):
            raise NoChangeError(
                f"Refusing the diff: the hunk at patch line {hunk.line} changes nothing in {old}: "
                + ("it has context lines only." if all(kind == " " for kind, _ in hunk.lines)
                   else "it removes lines and adds the same lines back."),
                hint="A hunk says what to change: give it the '-' lines to remove and the '+' lines "
                     "to write, or leave it out if the file already holds what you meant.",
                path=old, line=hunk.line)
    if (not unidiff_zero and len(hunks) == 1 and moved is None and old == new
            and hunks[0].old_start == 0
            and all(kind == "+" for kind, _ in hunks[0].lines)):
        # "@@ -0,0" adds to an empty old side without saying the file is new (a traditional
        # diff, or a git diff without 'new file mode'): it creates the file or fills it if it is
        # empty, as git apply reads it (without --unidiff-zero). Reversed too: a hunk with context
        # that left no line ("+0,0") emptied the file. (Only a -U0 hunk removes a file's first
        # lines that way; reversed, it inserts them at the top: --unidiff-zero reads it so.)
        filled = "".join(text + "\n" for _, text in hunks[0].lines)
        if hunks[0].new_open:
            filled = filled[:-1]
        return AddFile(new, filled, number, None, fills_empty=True)
    chunks = tuple(_chunk(hunk, crs) for hunk in hunks)
    changed_mode = new_mode if new_mode is not None and new_mode != old_mode else None
    return UpdateFile(old, chunks, new if new != old else None, number, changed_mode,
                      section.copy is not None)


def _binary(section: _FileDiff, old: str | None, new: str | None, old_mode: int | None,
            new_mode: int | None, reverse: bool) -> Hunk:
    """A ``GIT binary patch`` section as a hunk: the file added with its bytes, deleted if it
    holds the blob the index line names, or changed from that blob (``gitbinary``)."""
    from .gitbinary import binary_after, change  # (off a one-line edit's path)

    number = section.line
    binary = change(number, new or old or "", section.ids, section.binary_hunks, reverse)
    if old is None:
        after = binary_after(None, binary, new or "") or b""
        return AddFile(new or "", after.decode("utf-8", "surrogateescape"), number, new_mode,
                       binary=binary)
    if new is None:
        return DeleteFile(old, number, None, blob_id=binary.old_id)
    changed_mode = new_mode if new_mode is not None and new_mode != old_mode else None
    return UpdateFile(old, (), new if new != old else None, number, changed_mode,
                      section.copy is not None, binary=binary)


def _chunk(hunk: _Hunk, crs: bool) -> Chunk:
    """A hunk as a Chunk. One with context before its change and none after it is pinned to the
    end of the file, as git apply places it (diff tools write no context past the file's end):
    the same hunk sent again then cannot apply on top of itself. One with context after its
    change and none before is pinned to the start only when it says it starts there (stated at
    line 1 or 0), as git apply pins it (``match_beginning``: by the stated line alone); stated
    further down, git places it at its stated line, and so does patchtx. A hunk without any
    context (``-U0``) is placed by its stated line, and one whose header was wrong
    (``recounted``: no counts, written by hand or by a model, its context as it came) by its
    content alone.
    (git pins every hunk stated at line 1 to the start, leading context or not; models write
    ``@@ -1`` for any hunk, so one with leading context is placed like any other.)"""
    lines = tuple((kind, _without_cr(text)) for kind, text in hunk.lines) if crs else tuple(hunk.lines)
    carriage_returns = tuple(at for at, (_, text) in enumerate(hunk.lines)
                             if text.endswith("\r")) if crs else ()
    return with_pins(Chunk((), lines, False, hunk.line, hunk.old_start, hunk.recounted,
                           hunk.old_open, hunk.new_open, carriage_returns=carriage_returns,
                           readings=hunk.readings))


def with_pins(chunk: Chunk) -> Chunk:
    """The chunk pinned to the file's end or start as its lines say (``_chunk``): set again
    once a hunk's lines are read by its counts (``unified_placement.read_by_counts``)."""
    kinds = [kind for kind, _ in chunk.lines]
    leading = next((at for at, kind in enumerate(kinds) if kind != " "), len(kinds))
    trailing = next((at for at, kind in enumerate(reversed(kinds)) if kind != " "), len(kinds))
    pinned = not chunk.recounted  # (no counts: hand- or model-written, context as it came)
    # (A hunk marked "\ No newline at end of file" on either side ends at the file's end.)
    ends = chunk.old_unterminated or chunk.new_unterminated and any(kind != "+" for kind in kinds)
    return replace(chunk, is_end_of_file=ends or pinned and trailing == 0 < leading,
                   is_start_of_file=pinned and leading == 0 < trailing and (chunk.stated_line or 0) <= 1)


def looks_unified(text: str) -> bool:
    """A file header of a unified diff at the start of a line: ``diff --git``, or ``---`` right
    before ``+++``."""
    for header in ("diff --git ", "diff --cc ", "diff --combined "):
        if text.startswith(header) or "\n" + header in text:
            return True
    return "+++ " in text and re.search(r"^--- [^\n]*\r?\n\+\+\+ ", text, re.MULTILINE) is not None


def parse_unified(text: str, *, strip: int | None = None, reverse: bool = False,
                  unidiff_zero: bool = False, absolute_names: bool = False,
                  unprefixed_context: bool = False) -> Patch:
    """Parse a unified diff; ``strip`` is ``-p N``; ``reverse`` swaps old and new (``-R``);
    ``unidiff_zero`` reads ``@@ -0,0`` without context as an insertion at the top of the file
    (git apply's ``--unidiff-zero``), not as filling an empty file; ``unprefixed_context`` keeps
    a hunk that agrees with its counts only read otherwise, with its readings (``Chunk.readings``)
    for the update to choose by the file, instead of refusing it."""
    if strip is not None and strip < 0:
        raise ParseError("Invalid option: the path strip count (-p) cannot be negative.",
                         hint="Give -p 0 or more.")
    require_bytes(text)
    raw = text.split("\n")
    if raw[-1] == "":
        raw.pop()
    crs = "\r" in text
    files = _Reader(raw, crs, unprefixed_context).read()
    if not files:
        raise ParseError("Invalid unified diff: it has no file sections.",
                         hint="A unified diff names each file with '--- a/path' and '+++ b/path' "
                              "(or a 'diff --git' line) before its '@@' hunks.")
    paths = _Paths(strip, absolute_names)
    if reverse:  # (undone last first, as git apply -R takes them: later sections build on earlier)
        files.reverse()
    return Patch(tuple(_build(section, paths, reverse, crs, unidiff_zero) for section in files), text,
                 format="unified", reverse=reverse)
