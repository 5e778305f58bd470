"""Patch text → ``Patch``, following the released Codex grammar line by line (no I/O).

The grammar, error texts and line numbering are those of Codex's streaming parser (codex 0.169.0);
see docs/format.md. One extension: several ``@@ anchor`` lines in a row are accepted as stacked
anchors (Codex's own instructions teach them, its parser rejects them).
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from .._record import replace
from ..errors import HunkParseError, ParseError
from ..model import AddFile, Chunk, DeleteFile, Patch, UpdateFile
from ..place.applied import insertion_in_place
from ..place.matching import Locator
from ..place.normalise import WHITESPACE
from ..place.placer import Placed, Placer
from ..place.textfile import require_bytes, require_unicode
from .registry import Format, detect

if TYPE_CHECKING:
    from collections.abc import Sequence

    from ..model import Hunk, LineKind
    from ..place.matching import LineIndex
    from ..place.placer import UpdateRule
    from ..place.textfile import TextFile

BEGIN_PATCH = "*** Begin Patch"
END_PATCH = "*** End Patch"
ADD_FILE = "*** Add File: "
DELETE_FILE = "*** Delete File: "
UPDATE_FILE = "*** Update File: "
MOVE_TO = "*** Move to: "
END_OF_FILE = "*** End of File"
ENVIRONMENT_ID = "*** Environment ID:"
HEREDOC_OPENERS = ("<<EOF", "<<'EOF'", '<<"EOF"')

FIRST_LINE_ERROR = "The first line of the patch must be '*** Begin Patch'"
LAST_LINE_ERROR = "The last line of the patch must be '*** End Patch'"
NO_LINES_ERROR = "Update hunk does not contain any lines"


def _invalid_header(trimmed: str) -> str:
    return (
        f"'{trimmed}' is not a valid hunk header. Valid hunk headers: "
        "'*** Add File: {path}', '*** Delete File: {path}', '*** Update File: {path}'"
    )


def _unexpected_line(line: str) -> str:
    return (
        f"Unexpected line found in update hunk: '{line}'. Every line should start with "
        "' ' (context line), '+' (added line), or '-' (removed line)"
    )


def _expected_marker(line: str) -> str:
    return f"Expected update hunk to start with a @@ context marker, got: '{line}'"


def _patch_error(message: str, hint: str = "", line: int | None = None) -> ParseError:
    return ParseError(f"Invalid patch: {message}", hint=hint, line=line,
                      details={"codex_message": message})


def _hunk_error(line_number: int, message: str, hint: str = "") -> HunkParseError:
    return HunkParseError(
        f"Invalid patch hunk on line {line_number}: {message}",
        hint=hint,
        line=line_number,
        details={"codex_message": message},
    )


def split_lines(text: str) -> list[str]:
    """Split like Rust's ``str::lines``: on LF, dropping one CR right before it."""
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    if "\r" not in text:
        return lines  # nothing to drop: a pass over every line saved
    return [line[:-1] if line.endswith("\r") else line for line in lines]


def _boundary_error(lines: list[str]) -> str | None:
    if lines and lines[0].strip(WHITESPACE) == BEGIN_PATCH and lines[-1].strip(WHITESPACE) == END_PATCH:
        return None
    if lines and lines[0].strip(WHITESPACE) != BEGIN_PATCH:
        return FIRST_LINE_ERROR
    return LAST_LINE_ERROR


def unwrap(text: str) -> list[str]:
    """Trim the text, check the Begin/End envelope, and unwrap a lenient ``<<EOF`` heredoc."""
    return _unwrap(text)[0]


def _unwrap(text: str) -> tuple[list[str], str | None]:
    """``unwrap``, and the text the lines join back to when that is the trimmed text itself (no
    heredoc, no CR): a patch's text then costs no join of every line."""
    trimmed = text.strip(WHITESPACE)
    lines = split_lines(trimmed)
    error = _boundary_error(lines)
    if error is None:
        return lines, (None if "\r" in trimmed else trimmed)
    if len(lines) >= 4 and lines[0] in HEREDOC_OPENERS and lines[-1].endswith("EOF"):
        inner = lines[1:-1]
        inner_error = _boundary_error(inner)
        if inner_error is None:
            return inner, None
        raise _patch_error(inner_error)
    hint = ""
    if not lines:
        hint = "The patch is empty: send the whole patch, from '*** Begin Patch' to '*** End Patch'."
    elif error == FIRST_LINE_ERROR:
        hint = f"It starts with {lines[0][:80]!r}; a patch starts with '*** Begin Patch'."
        if any(line.strip(WHITESPACE) == BEGIN_PATCH for line in lines):
            hint += (" To take the patch out of surrounding text, use --extract (extract=true in "
                     "the tools).")
    elif any(line.strip(WHITESPACE) == END_PATCH for line in lines):
        # Prose after the patch (a model's reply): the patch is closed, the text after it is not.
        after = next(line for line in reversed(lines) if line.strip(WHITESPACE))
        hint = (f"Text follows the '*** End Patch' line (it ends with {after[:60]!r}): remove it, "
                "or let patchtx take the patch out of the text (--extract, or extract=true).")
    else:
        hint = "Close the patch with a '*** End Patch' line."
    raise _patch_error(error, hint)


# The two builders below are plain classes, not records: one is made per file and per section
# of a patch, and a record's __init__ with a list default makes four Python calls per object.
class _PendingUpdate:
    __slots__ = ("path", "line", "move_to", "chunks")

    def __init__(self, path: str, line: int) -> None:
        self.path = path
        self.line = line
        self.move_to: str | None = None
        self.chunks: list[_PendingChunk] = []


class _PendingChunk:
    __slots__ = ("anchors", "line", "lines", "is_end_of_file", "unprefixed")

    def __init__(self, anchors: list[str], line: int) -> None:
        self.anchors = anchors
        self.line = line
        self.lines: list[tuple[LineKind, str]] = []
        self.is_end_of_file = False
        self.unprefixed: list[tuple[int, int]] = []

    def freeze(self) -> Chunk:
        chunk = Chunk(tuple(self.anchors), tuple(self.lines), self.is_end_of_file, self.line)
        if self.unprefixed:
            chunk = replace(chunk, unprefixed=tuple(self.unprefixed))
        return chunk


def _header(line: str) -> tuple[str, str] | None:
    for marker in (ADD_FILE, DELETE_FILE, UPDATE_FILE):
        if line.startswith(marker):
            return marker, line[len(marker) :]
    return None


class _StreamParser:
    """Codex's state machine: NotStarted → StartedPatch → (Add|Delete|Update)* → Ended."""

    def __init__(self, unprefixed_context: bool = False) -> None:
        self.unprefixed_context = unprefixed_context
        """Read an Update's body line without a prefix as context, marked on its chunk for the
        repair step to check against the file (``repair_update``), instead of refusing it."""
        self.hunks: list[Hunk] = []
        self.state = "started"
        self.environment_id: str | None = None
        self.add: tuple[str, int, list[str]] | None = None
        self.update: _PendingUpdate | None = None

    # -- closing the current hunk -------------------------------------------------------------
    def _close(self, number: int, trigger: str, at_end: bool) -> None:
        if self.add is not None:
            path, line, contents = self.add
            self.hunks.append(AddFile(path, "".join(contents), line))
            self.add = None
        update = self.update
        if update is None:
            return
        if not update.chunks:
            raise _hunk_error(
                update.line,
                f"Update file hunk for path '{update.path}' is empty",
                "An Update needs at least one line: a change, or an unchanged context line "
                "(for a pure rename, repeat one line of the file as context).",
            )
        if not update.chunks[-1].lines:
            message = NO_LINES_ERROR if at_end else _unexpected_line(trigger)
            raise _hunk_error(number, message)
        self.hunks.append(
            UpdateFile(update.path, tuple(c.freeze() for c in update.chunks), update.move_to,
                       update.line)
        )
        self.update = None

    def _start(self, header: tuple[str, str], number: int, trimmed: str) -> None:
        self._close(number, trimmed, at_end=False)
        marker, path = header
        if marker == ADD_FILE:
            self.add = (path, number, [])
            self.state = "add"
        elif marker == DELETE_FILE:
            self.hunks.append(DeleteFile(path, number))
            self.state = "delete"
        else:
            self.update = _PendingUpdate(path, number)
            self.state = "update"

    def _end(self, number: int, trimmed: str) -> None:
        self._close(number, trimmed, at_end=True)
        self.state = "ended"

    def _boundary(self, marker_line: str, ends: bool, number: int, trimmed: str) -> bool:
        """Whether the line is the End Patch (``ends``) or a file's header (``marker_line``), which
        ends what came before; then it is taken."""
        if ends:
            self._end(number, trimmed)
            return True
        header = _header(marker_line)
        if header is not None:
            self._start(header, number, trimmed)
        return header is not None

    # -- one line ------------------------------------------------------------------------------
    def feed(self, line: str, number: int, last: bool) -> None:
        trimmed = line.strip(WHITESPACE)
        state = self.state
        if state == "ended":
            # The last line is the envelope's End Patch (checked before): as in Codex, it may
            # close a patch that an End Patch line before it already ended; any other line may not.
            if trimmed and not last:
                raise _patch_error(LAST_LINE_ERROR, f"Line {number} comes after '*** End Patch': "
                                   "send one patch at a time, or join them into one.", number)
            return
        if state == "update":
            self._feed_update(line, number, trimmed, last)
            return
        if self._boundary(trimmed, trimmed == END_PATCH, number, trimmed):
            return
        if state == "started":
            if trimmed.startswith(ENVIRONMENT_ID):
                self._environment_id(trimmed[len(ENVIRONMENT_ID) :].strip(WHITESPACE), number)
                return
            raise _hunk_error(number, _invalid_header(trimmed))
        hint = ""
        if state == "add":
            hint = "Every line of an added file starts with '+' (an empty line is a bare '+')."
        raise _hunk_error(number, _invalid_header(trimmed), hint)

    def _environment_id(self, value: str, number: int) -> None:
        if not value:
            raise _patch_error("apply_patch environment_id cannot be empty", line=number)
        if self.environment_id is not None:
            raise _patch_error("apply_patch environment_id cannot be specified more than once",
                               line=number)
        self.environment_id = value

    def _feed_update(self, line: str, number: int, trimmed: str, last: bool) -> None:
        update = self.update
        assert update is not None
        update_line = line.rstrip(WHITESPACE)
        # The final line is always the End Patch marker (the envelope check made sure), even when
        # indented; elsewhere an indented marker inside an Update is a context line, as in Codex.
        if self._boundary(update_line, update_line == END_PATCH or (last and trimmed == END_PATCH),
                          number, trimmed):
            return
        chunks = update.chunks
        current = chunks[-1] if chunks else None
        is_marker = update_line == "@@" or update_line.startswith("@@ ")
        if current is not None and current.is_end_of_file:
            if update_line == "":
                return
            if not is_marker:
                raise _hunk_error(number, _expected_marker(line),
                                  "Only a new '@@' section may follow '*** End of File'.")
        if update_line.startswith(MOVE_TO) and not chunks and update.move_to is None:
            update.move_to = update_line[len(MOVE_TO) :]
            return
        if is_marker:
            anchor = update_line[3:] if update_line != "@@" else None
            range_header = anchor is not None and anchor[:1] == "-" and _is_range_header(update_line)
            if range_header:
                anchor = None  # a unified diff's '@@ -12,7 +12,8 @@' reads as a bare '@@'
            if current is not None and not current.lines:
                if current.is_end_of_file or (anchor is None and not current.anchors
                                              and not range_header):
                    raise _hunk_error(number, _unexpected_line(line))
                if anchor is not None:
                    current.anchors.append(anchor)  # stacked anchors: patchtx extension
                # (a bare '@@' closing a stack of anchors adds nothing)
                return
            chunks.append(_PendingChunk([] if anchor is None else [anchor], number))
            return
        if update_line == END_OF_FILE:
            if current is None:
                return
            if not current.lines:
                raise _hunk_error(number, NO_LINES_ERROR)
            current.is_end_of_file = True
            return
        # Not a body line (take_body took those): an error, or, for the repair step, a context
        # line it checks against the file (Chunk.unprefixed).
        if self.unprefixed_context and not line.startswith(("\\", "***", "@@")):
            if current is None:
                current = _PendingChunk([], number)
                chunks.append(current)
            current.unprefixed.append((len(current.lines), number))
            current.lines.append((" ", line))
            return
        if current is not None and current.lines:
            raise _hunk_error(number, _expected_marker(line), _line_prefix_hint(line))
        raise _hunk_error(number, _unexpected_line(line), _line_prefix_hint(line))

    # -- runs of lines, in bulk -----------------------------------------------------------------
    def take_added(self, lines: list[str], index: int, stop: int) -> int:
        """Take the lines of an added file from ``lines[index:stop]`` (each starts with '+'; no
        marker does); return the index of the first line not taken."""
        assert self.add is not None
        contents = self.add[2]
        while index < stop:
            line = lines[index]
            if not line or line[0] != "+":
                break
            contents.append(line[1:] + "\n")
            index += 1
        return index

    def take_body(self, lines: list[str], index: int, stop: int) -> int:
        """THE body-line rule of an Update: take its section's lines from ``lines[index:stop]``
        (' ' context, '-' removed, '+' added, an empty line empty context; no marker starts with
        one of those, and an indented marker inside an Update is context, as in Codex); return
        the index of the first line not taken. A line after '*** End of File' is never body."""
        update = self.update
        assert update is not None
        chunks = update.chunks
        chunk = chunks[-1] if chunks else _PendingChunk([], index + 1)
        if chunk.is_end_of_file:
            return index
        body = chunk.lines
        start = index
        for index in range(start, stop):  # noqa: B020 - index is then where the loop stopped
            line = lines[index]
            if line and line[0] in "+- ":
                body.append((line[0], line[1:]))  # type: ignore[arg-type]
            elif not line:
                body.append((" ", ""))
            else:
                break
        else:
            index = stop
        if index > start and not chunks:
            chunks.append(chunk)
        return index


def _is_range_header(line: str) -> bool:
    """A unified diff's hunk header, with or without git's function text after it."""
    return re.fullmatch(r"@@ -\d+(?:,\d+)? \+\d+(?:,\d+)? @@(?: .*)?", line) is not None


def _line_prefix_hint(line: str) -> str:
    if line.startswith("\\"):
        return ("'\\ No newline at end of file' is unified-diff syntax; this format has no such "
                "line: patchtx keeps a file's final-newline state by itself.")
    if line.startswith("\t"):
        return "A context line starts with one space before its text (here the line starts with a tab)."
    if line.startswith("@@"):  # ('@@@ -1,1 +1,3 @@@', '@@-1,2': a marker of another format)
        return (f"A section starts with a line '@@' alone, or '@@ ' and the line of the file it "
                f"follows (a def or class line); '{line[:60]}' is neither: write '@@'.")
    return "Prefix every body line with ' ', '+' or '-', or start a new section with '@@'."


def detect_format(text: str) -> str:
    """The name of ``text``'s format (``registry.detect``, the formats in their order):
    ``"codex"`` for the ``*** Begin Patch`` envelope (or text that is no format: Codex's errors
    then say what a patch looks like), ``"search-replace"`` for SEARCH/REPLACE blocks (before a
    unified diff: a diff's lines start with ' ', '+' or '-' and a marker's char; indented ones
    after), ``"unified"`` for a unified diff."""
    return detect(text).name


def _detects(text: str, loose: bool) -> bool:
    """The envelope's first line (or a heredoc's opener): taken strictly, before any format."""
    if loose:
        return False
    # (A prefix: splitting a 7 MB patch would copy all of it to read its first line.)
    first = text[:4096].lstrip(WHITESPACE).split("\n", 1)[0].strip(WHITESPACE)
    return first == BEGIN_PATCH or first in HEREDOC_OPENERS


def require_text(text: str) -> None:
    """THE front door's check of a patch text: a unified diff's lines are a file's bytes, so a
    byte that is not UTF-8 (read as its surrogate escape) is one (``require_bytes``); every other
    format is text, refused a lone surrogate (``require_unicode``)."""
    try:
        require_unicode(text)
    except ParseError:
        from .unified import looks_unified  # (off a one-line edit's path)

        if not looks_unified(text):
            raise
        require_bytes(text)


def parse(text: str, *, strip: int | None = None, reverse: bool = False,
          unidiff_zero: bool = False, unprefixed_context: bool = False,
          absolute_names: bool = False) -> Patch:
    """Parse patch text in any of its formats (``detect_format``); raise ``ParseError`` (with the
    patch line number) if it is malformed. ``strip`` (``-p N``), ``reverse`` (``-R``) and
    ``unidiff_zero`` (git apply's ``--unidiff-zero``) apply to unified diffs;
    ``unprefixed_context`` reads an Update's body line that has no prefix as a context line for
    the repair step to check (``Chunk.unprefixed``); ``absolute_names`` keeps a unified diff's
    absolute names (``--- a//abs/x``) whole, as the repair step reads them."""
    require_text(text)
    read = detect(text).parse
    assert read is not None  # (a format that detects text parses it)
    return read(text, strip=strip, reverse=reverse, unidiff_zero=unidiff_zero,
                unprefixed_context=unprefixed_context, absolute_names=absolute_names)


def _parse(text: str, *, strip: int | None, reverse: bool, unidiff_zero: bool,
           unprefixed_context: bool, absolute_names: bool) -> Patch:
    if reverse:
        raise ParseError("Invalid option: --reverse applies to unified diffs only; this patch is "
                         "in the '*** Begin Patch' format.",
                         hint="Undo an applied patch with 'patchtx undo', or write the inverse patch.")
    mixed = text.find("\ndiff --git ")
    if mixed >= 0:
        from .unified import mixed_formats_error  # (off a one-line edit's path)

        raise mixed_formats_error(text.count("\n", 0, mixed) + 2)
    return _parse_codex(text, unprefixed_context)


def _parse_codex(text: str, unprefixed_context: bool = False) -> Patch:
    lines, joined = _unwrap(text)
    if joined is None:
        joined = "\n".join(lines)
    if "\r" in joined:
        # Codex trims a CR left at the end of a line once more (a CR CR LF line loses both),
        # every line alike: done here once, so the loops below never look for one.
        lines = [line[:-1] if line.endswith("\r") else line for line in lines]
    parser = _StreamParser(unprefixed_context)
    last_index = len(lines) - 1
    index = 1
    while index <= last_index:
        # Runs of added or body lines are taken in bulk (the bulk of a patch); every other line,
        # and the last one (the envelope's End Patch), goes through the state machine.
        state = parser.state
        if index < last_index and state in ("add", "update"):
            taken = (parser.take_added if state == "add" else parser.take_body)(lines, index, last_index)
            if taken > index:
                index = taken
                continue
        parser.feed(lines[index], index + 1, index == last_index)
        index += 1
    if parser.state != "ended":
        raise _patch_error(LAST_LINE_ERROR)
    return Patch(tuple(parser.hunks), joined, parser.environment_id)


# -- the Codex format's placer and its Format -------------------------------------------------------
def _by_content(original: TextFile, index: LineIndex, chunks: Sequence[Chunk], rule: UpdateRule,
                display: str) -> Placed:
    placements = Locator(original.texts, display, first_match=rule.first_match,
                         index=index).place(chunks)
    return Placed(placements, reinserted=insertion_in_place(original.texts, chunks, placements))


CODEX = Format(
    "codex", Placer(_by_content, on_bytes=True), "sections", "the section at patch line {line}",
    detects=_detects, parse=_parse, repairs=True,
    no_change="A section says what to change: give it the '-' lines to remove and the '+' lines to "
              "write (for a pure rename, one context-only section under '*** Move to:' is the way), "
              "or leave it out if the file already holds what you meant.")
"""The ``*** Begin Patch`` envelope: hunks placed by content (``matching``), the first format."""
