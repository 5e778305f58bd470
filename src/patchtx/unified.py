"""Unified diff text → ``Patch`` (no I/O), read as ``git apply`` reads it.

Accepted: ``git diff`` / ``git format-patch`` output with git's extended headers (new and deleted
file modes, old/new mode, rename and copy from/to, similarity and index lines), plain ``---`` /
``+++`` pairs (GNU ``diff -u``), leading prose (a commit message, mail headers) and trailing prose
(a format-patch signature), ``\\ No newline at end of file`` on either side, git's C-style quoted
paths, ``-p N`` path stripping and ``/dev/null``. The result is the same ``Patch`` model the Codex
parser makes; each hunk keeps its stated old line, which the planner places it by
(``unified_placement``). Header line counts that disagree with the body are recounted, as
``git apply --recount`` does, and such a hunk is marked so that only its content places it.

Refused with an error naming the file: binary patches, symbolic links (mode 120000), submodules
(160000), combined (merge) diffs.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from .errors import BinaryFileError, ParseError, UnsupportedChangeError
from .gitquote import QuotingError
from .gitquote import unquote as _unquote
from .model import AddFile, Chunk, DeleteFile, Patch, UpdateFile

if TYPE_CHECKING:
    from .model import Hunk, LineKind

DEV_NULL = "/dev/null"
_HUNK_HEADER = re.compile(r"@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@")
_SYMLINK, _SUBMODULE, _TYPE_BITS = 0o120000, 0o160000, 0o170000


def _error(message: str, line: int, hint: str = "") -> ParseError:
    return ParseError(f"Invalid unified diff: {message} (patch line {line}).", hint=hint, line=line)


def unquote(text: str, line: int) -> tuple[str, str]:
    """A git C-style quoted name at the start of ``text``, and what follows it."""
    try:
        return _unquote(text)
    except QuotingError as exc:
        raise _error(str(exc), line) from None


def _strip_components(name: str, count: int, line: int) -> str:
    parts = [part for part in name.split("/") if part]
    if count and len(parts) <= count:
        raise _error(f"cannot strip {count} leading component{'s' if count > 1 else ''} from "
                     f"'{name}'", line, "Give a smaller -p (path strip) value.")
    return "/".join(parts[count:])


class _Hunk:
    __slots__ = ("old_start", "new_start", "lines", "old_open", "new_open", "recounted", "line")

    def __init__(self, old_start: int, new_start: int, line: int) -> None:
        self.old_start, self.new_start, self.line = old_start, new_start, line
        self.lines: list[tuple[LineKind, str]] = []
        self.old_open = self.new_open = False  # "\ No newline at end of file" on that side
        self.recounted = False

    def reverse(self) -> None:
        swap: dict[str, LineKind] = {" ": " ", "-": "+", "+": "-"}
        self.lines = [(swap[kind], text) for kind, text in self.lines]
        self.old_start, self.new_start = self.new_start, self.old_start
        self.old_open, self.new_open = self.new_open, self.old_open


class _FileDiff:
    """One file's section of a diff, names as written (prefixes not yet stripped)."""

    __slots__ = ("line", "git_names", "old_name", "new_name", "old_mode", "new_mode", "new_file",
                 "deleted_file", "rename", "copy", "binary", "hunks", "git")

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


def _is_body(line: str) -> bool:
    return line == "" or line[0] in " +-\\"


class _Reader:
    """``lines`` without a CR before their LF, for the structure; ``raw`` as written, for the
    body lines: an added file's bytes are the diff's, CRs included (as git apply writes them)."""

    def __init__(self, raw: list[str], crs: bool) -> None:
        self.raw = raw
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

    def names(self, section: _FileDiff) -> None:
        old, new = self.lines[self.at], self.lines[self.at + 1]
        section.old_name = _name(old[4:], self.at + 1, traditional=True)
        section.new_name = _name(new[4:], self.at + 2, traditional=True)
        self.at += 2

    def hunks(self, section: _FileDiff) -> None:
        while (line := self.peek()) is not None and line.startswith("@@ "):
            section.hunks.append(self.hunk())

    def hunk(self) -> _Hunk:
        number = self.at + 1
        header = self.lines[self.at]
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
        # By the header's counts first; a hunk that ends early, or that goes on past them with
        # more body lines, is recounted.
        while self.at < size and (old_seen < old_count or new_seen < new_count):
            line = lines[self.at]
            # (No '@@ ' or 'diff ' line is a body line; a '--- ' line may start the next file.)
            if not _is_body(line) or (line[:4] == "--- " and self.file_inside_counts(
                    self.at, old_count - old_seen, new_count - new_seen)):
                break
            if line.startswith("\\"):
                self.no_newline(hunk)
                continue
            old_seen, new_seen = self.take(hunk, line, old_seen, new_seen)
        counted = old_seen == old_count and new_seen == new_count
        while self.at < size:
            line = lines[self.at]
            if line.startswith("\\"):
                self.no_newline(hunk)
                continue
            if (not _is_body(line) or self.starts_file(self.at) or line in ("-- ", "--")
                    or (line == "" and not self.body_follows(self.at))
                    or (hunk.old_open and line[:1] != "+") or (hunk.new_open and line[:1] != "-")):
                break  # (a file's last line was given: what follows is not this hunk's)
            old_seen, new_seen = self.take(hunk, line, old_seen, new_seen)
            counted = False
        hunk.recounted = not counted
        if not hunk.lines:
            raise _error("a hunk has no lines", number)
        return hunk

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


def _mode(line: str, number: int) -> int:
    value = line.rsplit(" ", 1)[-1]
    try:
        return int(value, 8)
    except ValueError:
        raise _error(f"'{line}' does not give an octal mode", number) from None


def _name(field: str, number: int, *, traditional: bool = False) -> str:
    """A file name field: quoted, or up to a tab (a timestamp may follow, as GNU diff writes)."""
    if field.startswith('"'):
        return unquote(field, number)[0]
    if traditional:
        field = field.split("\t", 1)[0]
        if field.startswith(DEV_NULL) and field[len(DEV_NULL):].strip() == "":
            return DEV_NULL
    return field.rstrip("\t") if not traditional else field.rstrip()


def _git_header_names(rest: str, number: int) -> tuple[str, str] | None:
    """The two names of ``diff --git A B``; None when spaces make the split unclear (the
    ``---``/``+++`` or rename lines name the file then)."""
    if rest.startswith('"'):
        first, after = unquote(rest, number)
        after = after.lstrip(" ")
        second = unquote(after, number)[0] if after.startswith('"') else after
        return first, second
    if rest.endswith('"') and ' "' in rest:
        at = rest.index(' "')
        return rest[:at], unquote(rest[at + 1 :], number)[0]
    # "a/x y b/x y": the split where both halves name the same path past their first component.
    for at in (i for i, char in enumerate(rest) if char == " "):
        first, second = rest[:at], rest[at + 1 :]
        if first.partition("/")[2] == second.partition("/")[2]:
            return first, second
    return None


def _without_cr(text: str) -> str:
    """A body line as the line model compares it: its CR, if any, is the line's ending (an
    updated file keeps its own endings; added lines take its dominant one)."""
    return text[:-1] if text.endswith("\r") else text


def _prefixed(names: list[str]) -> bool:
    return all(name == DEV_NULL or name.startswith(("a/", "b/")) for name in names)


class _Paths:
    """The ``-p N`` rule: N given, or by default git's ``a/`` ``b/`` prefixes off, else one
    component off a path that has more than one."""

    def __init__(self, strip: int | None) -> None:
        self.strip = strip

    def __call__(self, name: str | None, number: int, *, prefixed: bool) -> str | None:
        if name is None or name == DEV_NULL:
            return None
        if self.strip is not None:
            return _strip_components(name, self.strip, number)
        if prefixed or "/" in name.strip("/"):
            return _strip_components(name, 1, number)
        return name


def _build(section: _FileDiff, paths: _Paths, reverse: bool, crs: bool) -> Hunk:
    """One file's section as a hunk; ``crs`` says whether the diff holds a CR at all (without
    one, no body line has one to lose)."""
    number = section.line
    prefixed = _prefixed([n for n in (section.old_name, section.new_name) if n is not None]
                         + list(section.git_names or ()))
    old = paths(section.old_name, number, prefixed=prefixed)
    new = paths(section.new_name, number, prefixed=prefixed)
    if section.git and section.git_names is not None:
        git_old = paths(section.git_names[0], number, prefixed=prefixed)
        git_new = paths(section.git_names[1], number, prefixed=prefixed)
        if old is None and section.old_name != DEV_NULL and not section.new_file:
            old = git_old
        if new is None and section.new_name != DEV_NULL and not section.deleted_file:
            new = git_new
        if section.new_file and new is None:
            new = git_new
        if section.deleted_file and old is None:
            old = git_old
    # Rename and copy lines name full paths (git strips one component less from them).
    moved = section.rename or section.copy
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
    if section.binary:
        raise BinaryFileError(
            f"Refusing the patch: it holds a binary change to {name} (patch line {number}).",
            hint="patchtx applies text diffs only; apply binary changes with git apply.",
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
    chunks = tuple(
        Chunk((), tuple((kind, _without_cr(text)) for kind, text in hunk.lines) if crs
              else tuple(hunk.lines), hunk.old_open,
              hunk.line, hunk.old_start, hunk.recounted,
              hunk.old_open, hunk.new_open)
        for hunk in hunks)
    changed_mode = new_mode if new_mode is not None and new_mode != old_mode else None
    return UpdateFile(old, chunks, new if new != old else None, number, changed_mode,
                      section.copy is not None)


def looks_unified(text: str) -> bool:
    """A file header of a unified diff at the start of a line: ``diff --git``, or ``---`` right
    before ``+++``."""
    for header in ("diff --git ", "diff --cc ", "diff --combined "):
        if text.startswith(header) or "\n" + header in text:
            return True
    return "+++ " in text and re.search(r"^--- [^\n]*\r?\n\+\+\+ ", text, re.MULTILINE) is not None


def parse_unified(text: str, *, strip: int | None = None, reverse: bool = False) -> Patch:
    """Parse a unified diff; ``strip`` is ``-p N``; ``reverse`` swaps old and new (``-R``)."""
    if strip is not None and strip < 0:
        raise ParseError("Invalid option: the path strip count (-p) cannot be negative.",
                         hint="Give -p 0 or more.")
    raw = text.split("\n")
    if raw[-1] == "":
        raw.pop()
    crs = "\r" in text
    files = _Reader(raw, crs).read()
    if not files:
        raise ParseError("Invalid unified diff: it has no file sections.",
                         hint="A unified diff names each file with '--- a/path' and '+++ b/path' "
                              "(or a 'diff --git' line) before its '@@' hunks.")
    paths = _Paths(strip)
    return Patch(tuple(_build(section, paths, reverse, crs) for section in files), text,
                 format="unified")
