"""Placing unified-diff hunks: by their stated line first, then by the nearest exact match.

The rule (docs/format.md, "Placement of unified hunks"): a hunk goes at its stated old line,
shifted by how far the file's earlier hunks landed from theirs, when its old lines match there
exactly; otherwise at the nearest exact match, looking both ways as ``git apply`` does; two
matches equally near are ambiguous and refused, listing both. A hunk whose header has no counts
(``Chunk.recounted``, as models write them) has no line to trust: it must match exactly once
after the previous hunk. No fuzz: every old line must match, whitespace included (the line ending
aside). Hunks stay in order and never overlap. A hunk that says where the file ends (``\\ No newline
at end of file`` on either side) must end at the file's end, and the file's final newline must be
what its old side says: none after a marked old line, one after an unmarked old line whose new
side is marked (as ``git apply`` compares the last line with its line break).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .._record import replace
from ..errors import AmbiguousContextError, ContextNotFoundError, ParseError
from ..place.matching import MAX_CANDIDATES, Placement
from ..place.search import starts_of

if TYPE_CHECKING:
    from collections.abc import Sequence

    from ..model import Chunk
    from ..place.matching import LineIndex


def read_by_counts(texts: Sequence[str], chunks: Sequence[Chunk], display_path: str) -> list[Chunk]:
    """Each hunk read as its header's counts say (``Chunk.readings``): of the readings of its
    body that agree with them, the one whose old lines stand in the file; none, or several, and
    the diff is refused (``parse_error``), naming them. The lines re-read are then marked as
    written without their space (``Chunk.unprefixed``: the repair is reported)."""
    from .unified import with_pins  # (off a one-line edit's path)

    out: list[Chunk] = []
    for chunk in chunks:
        if not chunk.readings:
            out.append(chunk)
            continue
        fitting = []
        for reading in chunk.readings:
            at = {index: text for index, _, text in reading}
            lines = tuple((" ", at[index]) if index in at else line
                          for index, line in enumerate(chunk.lines))
            read = replace(chunk, lines=lines, readings=(), unprefixed=tuple(sorted(
                {*chunk.unprefixed, *((index, number) for index, number, _ in reading)})))
            old = read.old_lines
            if starts_of(texts, old, 0, len(texts) - len(old)):
                fitting.append((reading, with_pins(read)))
        if len(fitting) != 1:
            raise _readings_error(chunk, [reading for reading, _ in fitting] if fitting
                                  else list(chunk.readings), display_path, found=bool(fitting))
        out.append(fitting[0][1])
    return out


def _readings_error(chunk: Chunk, readings: list[tuple[tuple[int, int, str], ...]],
                    display_path: str, *, found: bool) -> ParseError:
    from .unified import _COUNTS_HINT  # (off a one-line edit's path)

    said = " or ".join(", ".join(f"'{text[:40]}' (patch line {number})" for _, number, text in reading)
                       for reading in readings[:4]) + (" (and more)" if len(readings) > 4 else "")
    why = (f"it agrees with them read in several ways whose lines all stand in {display_path}: "
           f"{said}, each read as a context line that lost its leading space" if found else
           f"it agrees with them only if {said} lost a context line's leading space, and read "
           f"so its lines do not stand in {display_path} (or lines of it were lost: was the diff "
           "cut short?)")
    return ParseError(
        f"Invalid unified diff: the hunk {_named(chunk)} (patch line {chunk.line}) "
        f"disagrees with its header's counts: {why} (patch line {chunk.line}).",
        hint=_COUNTS_HINT, line=chunk.line, path=display_path)


def place_at_stated_lines(texts: Sequence[str], chunks: Sequence[Chunk], display_path: str, *,
                          ends_with_newline: bool = True, index: LineIndex | None = None,
                          ) -> list[Placement]:
    """The placement of each of a file's unified hunks (all carry ``stated_line``), in order;
    ``ends_with_newline``: the file's final-newline state, which a hunk marked with ``\\ No newline
    at end of file`` must agree with. ``index``: the caller's index of ``texts``, whose searches
    stay cheap when the hunks are placed again and again (a repair tries each alone)."""
    placements: list[Placement] = []
    cursor = offset = 0
    size = len(texts)

    def starts(old: list[str], lower: int, last: int) -> list[int]:
        if index is None:
            return starts_of(texts, old, lower, last)
        return index.starts(old, 0, lower, last + len(old), size + 1) if lower <= last else []
    for number, chunk in enumerate(chunks):
        old = chunk.old_lines
        stated = chunk.stated_line or 0
        # An empty old side states the line it goes after; otherwise its first line.
        wanted = (stated if not old else max(stated - 1, 0)) + offset
        last = size - len(old)  # the last start at which the old lines fit
        # Pinned to the file's end ("\ No newline", or less context after the change than
        # before) or start (stated at line 1, no context before); never inside the hunk before it.
        lower = max(last, cursor) if chunk.is_end_of_file else cursor
        if chunk.is_start_of_file:
            last = min(last, 0) if cursor == 0 else -1
        if not old:
            start = min(max(wanted, cursor), size)
            if chunk.new_unterminated and (start != size or not ends_with_newline):
                raise _insertion_not_at_end(chunk, size, ends_with_newline, display_path)
        elif _states_the_end(chunk) and ends_with_newline == chunk.old_unterminated:
            # (Said in the error only where the old lines do end the file.)
            differs = size >= len(old) and list(texts[size - len(old):]) == old
            raise _miss(texts, chunk, old, cursor, display_path, newline_differs=differs)
        elif chunk.recounted:
            found = starts(old, lower, last)
            if len(found) != 1:
                raise _miss(texts, chunk, old, cursor, display_path) if not found else \
                    _ambiguous(chunk, found, display_path)
            start = found[0]
        elif lower <= wanted <= last and list(texts[wanted : wanted + len(old)]) == old:
            start = wanted
        else:
            found = starts(old, lower, last)
            if not found:
                raise _miss(texts, chunk, old, cursor, display_path)
            nearest = min(abs(at - wanted) for at in found)
            closest = [at for at in found if abs(at - wanted) == nearest]
            if len(closest) > 1:
                raise _ambiguous(chunk, closest, display_path)
            start = closest[0]
        placements.append(Placement(number, start, len(old), chunk.lines))
        offset = start - (stated if not old else max(stated - 1, 0))
        cursor = start + len(old)
    return placements


def _states_the_end(chunk: Chunk) -> bool:
    """Whether the hunk says where the old file ends, and with or without a line break: its old
    side's last line is marked ``\\ No newline at end of file`` (none), or only its new side's is
    (one: the hunk takes it away). Such a hunk is pinned to the file's end (``is_end_of_file``)."""
    return chunk.old_unterminated or chunk.new_unterminated


def _miss(texts: Sequence[str], chunk: Chunk, old: list[str], cursor: int,
          display_path: str, *, newline_differs: bool = False) -> ContextNotFoundError:
    from ..place.hints import describe_miss  # (off a one-line edit's path)

    hint = describe_miss(texts, old, cursor)
    where = ("at the file's end " if chunk.is_end_of_file else
             "at the file's start " if chunk.is_start_of_file else "")
    pinned = ""
    if newline_differs:
        pinned = (" The hunk's old side says the file ends " +
                  ("without a line break ('\\ No newline at end of file' after its last old line), "
                   "and the file ends with one." if chunk.old_unterminated else
                   "with a line break (only its new side is marked '\\ No newline at end of file'), "
                   "and the file ends without one.") +
                  " git apply compares the last line with its line break too.")
    elif chunk.is_end_of_file and not _states_the_end(chunk):
        pinned = (" The hunk has less context after its change than before it, so it must end at "
                  "the file's last line, as git apply places it.")
    elif chunk.is_start_of_file:
        pinned = (" The hunk is stated at the file's first line and has no context before its "
                  "change, so it must start there, as git apply places it.")
    return ContextNotFoundError(
        f"Failed to find expected lines {where}in {display_path} for the hunk "
        f"{_named(chunk)} (patch line {chunk.line}):\n" + "\n".join(old),
        # (The rule first: the hint ends with the quoted region, whose last line is the file's.)
        hint="A unified hunk's old lines must match the file exactly (no fuzz)." + pinned + " " + hint.text,
        path=display_path, line=chunk.line, details={"closest_line": hint.closest_line})


def _states_no_line(chunk: Chunk) -> bool:
    """A hunk under a header without counts (``@@``, ``@@ ... @@``): read with line 0."""
    return chunk.recounted and chunk.stated_line == 0


def _named(chunk: Chunk) -> str:
    """How an error names a hunk: by its header's stated line, or ``'@@ ... @@'``."""
    return "'@@ ... @@'" if _states_no_line(chunk) else f"'@@ -{chunk.stated_line}'"


def _insertion_not_at_end(chunk: Chunk, size: int, ends_with_newline: bool,
                          display_path: str) -> ContextNotFoundError:
    """A hunk that only inserts, its last line marked ``\\ No newline at end of file``: it ends
    the new file, so it goes at the file's end, after a line break."""
    why = ("the file ends without a line break" if ends_with_newline is False and size == (chunk.stated_line or 0)
           else f"its stated line is {chunk.stated_line} and the file has {size} lines")
    return ContextNotFoundError(
        f"Failed to place the hunk '@@ -{chunk.stated_line}' (patch line {chunk.line}) in "
        f"{display_path}: it only inserts lines, the last marked '\\ No newline at end of file', so "
        f"it goes at the file's end, after its last line break, and {why}.",
        hint="git apply would write its lines elsewhere (or join them to the last line). If the "
             "diff was applied before, the file already ends with its lines; otherwise make the "
             "diff again from the file as it is.",
        path=display_path, line=chunk.line, details={"closest_line": size})


def _ambiguous(chunk: Chunk, found: list[int], display_path: str) -> AmbiguousContextError:
    shown = found[:MAX_CANDIDATES]
    more = " (and more)" if len(found) > MAX_CANDIDATES else ""
    why = ("it states no line (a header without counts)" if _states_no_line(chunk) else
           "its stated line cannot be trusted (inside the previous hunk)" if chunk.recounted else
           "they are equally near its stated line")
    return AmbiguousContextError(
        f"Ambiguous patch for {display_path}: the hunk {_named(chunk)} (patch line "
        f"{chunk.line}) matches at file lines {', '.join(str(s + 1) for s in shown)}{more}, and "
        f"{why}.",
        hint="Add unchanged context lines that occur in one place only, or state the right "
             "line in the '@@ -N,M +N,M @@' header.",
        path=display_path, line=chunk.line, details={"candidate_lines": [s + 1 for s in shown]})
