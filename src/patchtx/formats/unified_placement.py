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
from ..place.applied import insertion_in_place
from ..place.matching import MAX_CANDIDATES, Placement
from ..place.placer import Placed, Placer
from ..place.rewrite import final_newline
from ..place.search import starts_of
from .registry import Format

if TYPE_CHECKING:
    from collections.abc import Sequence

    from ..model import Chunk, Patch
    from ..place.matching import LineIndex
    from ..place.placer import UpdateRule
    from ..place.textfile import TextFile


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


# -- the unified diff's placer and its Format ----------------------------------------------------
def _at_stated_lines(original: TextFile, index: LineIndex, chunks: Sequence[Chunk],
                     rule: UpdateRule, display: str) -> Placed:
    # A hunk with old lines is checked for its new side standing where it goes, as a Codex hunk
    # is, when placed by its content alone (header counts wrong) or when its new side stands at
    # its stated line: kept lines like the added ones (' b' '+b' ' c' on 'a b b c') are found at
    # the added line, so sent again it would be applied on top of itself. Not an insertion
    # without context: a stated line says where it goes, where lines equal to it may stand
    # before, as `git apply --unidiff-zero` takes a -U0 diff.
    # (The file ends with a newline as git reads it: a last line ending in a lone CR has none.)
    placements = _diff_endings(original, chunks, place_at_stated_lines(
        original.texts, chunks, display,
        ends_with_newline=not original.endings or original.endings[-1].endswith("\n")))
    shifts = _shifts_above(chunks)
    with_old_lines = [p for p in placements if p.length and (
        chunks[p.chunk_index].recounted or
        _new_side_at_its_line(original.texts, chunks[p.chunk_index], shifts[p.chunk_index]))]
    return Placed(placements, final_newline(chunks, placements, len(original.texts)),
                  reinserted=bool(with_old_lines) and insertion_in_place(original.texts, chunks,
                                                                          with_old_lines))


def _diff_endings(original: TextFile, chunks: Sequence[Chunk],
                  placements: list[Placement]) -> list[Placement]:
    """A unified diff's ``+`` lines with the diff's own line endings (CRLF where the diff's line
    ends with a CR, else LF), when every kept and removed line of the file's hunks carries
    exactly the ending the file has there: the diff was then made from these very bytes (git
    diff of a commit that changes line endings, ``-a`` / ``+b\r``), and git apply and GNU patch
    write its bytes. Otherwise (an LF diff on a CRLF file: line endings are not compared), or
    where the hunks keep and remove no line, the added lines take the file's dominant ending."""
    endings = original.endings
    compared = False
    for placement in placements:
        chunk = chunks[placement.chunk_index]
        crs = set(chunk.carriage_returns)
        old_lines = [at for at, (kind, _) in enumerate(chunk.lines) if kind != "+"]
        for offset, at in enumerate(old_lines):
            line = placement.start + offset
            last = chunk.old_unterminated and offset == len(old_lines) - 1
            wanted = ("\r" if at in crs else "") + ("" if last else "\n")
            if line >= len(endings) or endings[line] != wanted:
                return placements
            compared = True
    if not compared:
        return placements
    out = []
    for placement in placements:
        chunk = chunks[placement.chunk_index]
        crs = set(chunk.carriage_returns)
        added = [at for at, (kind, _) in enumerate(placement.lines) if kind == "+"]
        # (The new side's last line, marked '\ No newline at end of file', keeps its CR alone, as
        # git writes it; an added line with kept lines after it is no last line.)
        new_last = max((at for at, (kind, _) in enumerate(placement.lines) if kind != "-"), default=-1)
        out.append(replace(placement, endings=tuple(
            ("\r" if chunk.new_unterminated and at == new_last else "\r\n") if at in crs else "\n"
            for at in added)))
    return out


def _endings_in_place(original: TextFile, chunks: Sequence[Chunk], placements: Sequence[Placement]) -> bool:
    """Whether a unified diff that changes line endings only is already applied: every hunk's
    old and new sides are the same lines but for some line's ending (a CRLF-to-LF diff), and the
    file carries the new side's endings where the hunk goes. Its lines then match the file (line
    endings are not compared), its endings are not the file's old ones (``_diff_endings`` keeps
    the file's), and the update would change nothing: sent again, it is in place, not a no-op."""
    endings, changed = original.endings, False
    for placement in placements:
        chunk = chunks[placement.chunk_index]
        if chunk.old_unterminated != chunk.new_unterminated or \
                [t for k, t in chunk.lines if k != "+"] != [t for k, t in chunk.lines if k != "-"]:
            return False
        crs = set(chunk.carriage_returns)
        old = [at in crs for at, (kind, _) in enumerate(chunk.lines) if kind != "+"]
        new = [at in crs for at, (kind, _) in enumerate(chunk.lines) if kind != "-"]
        changed = changed or old != new
        for offset, cr in enumerate(new):
            line = placement.start + offset
            last = chunk.new_unterminated and offset == len(new) - 1
            if line >= len(endings) or endings[line] != ("\r" if cr else "") + ("" if last else "\n"):
                return False
    return changed


def _shifts_above(chunks: Sequence[Chunk]) -> list[int]:
    """How many lines the hunks above each hunk add (or, negative, remove), kept as a running sum:
    one pass over the hunks, not one per hunk over those above it (issue 39: 8,000 one-line hunks
    took 18.8 s, four times the hunks sixteen times the time)."""
    shifts, shift = [], 0
    for chunk in chunks:
        shifts.append(shift)
        shift += len(chunk.new_lines) - len(chunk.old_lines)
    return shifts


def _new_side_at_its_line(texts: Sequence[str], chunk: Chunk, shift: int) -> bool:
    """Whether ``chunk``'s new side stands where the diff says the new file has it (its stated
    line moved by ``shift``, the lines the hunks above it add or remove: ``_shifts_above``): a
    diff made by a tool says where its lines end up, so new lines like the kept ones that stand
    elsewhere (a third '    a' added under two) are the change still to make, not one made."""
    if chunk.stated_line is not None and shift:
        chunk = replace(chunk, stated_line=max(chunk.stated_line + shift, 0))
    return new_side_stands(texts, chunk)


def new_side_stands(texts: Sequence[str], chunk: Chunk) -> bool:
    """Whether ``chunk``'s new lines stand where it would put them: at its stated line (a unified
    hunk), or, for a pure insertion, anywhere (its old side says nothing of where it goes)."""
    new = chunk.new_lines
    if not chunk.old_lines:
        return not new or bool(starts_of(texts, new, 0, len(texts) - len(new)))
    if chunk.stated_line is None:
        return False
    at = max(chunk.stated_line - 1, 0)
    return list(texts[at:at + len(new)]) == new


def _detects(text: str, loose: bool) -> bool:
    if loose:
        return False
    from .unified import looks_unified  # (off a one-line edit's path)

    return looks_unified(text)


def _parse(text: str, *, strip: int | None, reverse: bool, unidiff_zero: bool,
           unprefixed_context: bool, absolute_names: bool) -> Patch:
    from .unified import parse_unified  # (off a one-line edit's path)

    return parse_unified(text, strip=strip, reverse=reverse, unidiff_zero=unidiff_zero,
                         absolute_names=absolute_names, unprefixed_context=unprefixed_context)


UNIFIED = Format(
    "unified", Placer(_at_stated_lines, unchanged_in_place=_endings_in_place), "hunks",
    "the hunk at patch line {line}", detects=_detects, parse=_parse, repairs=True,
    moves_read_before=True, reads_bytes=True, backslash_in_names=True,
    missing_file_hint="A unified diff's paths lose git's a/ and b/ prefixes, or else their first "
                      "component: if they are relative to the root already, give -p 0 (strip=0).")
"""A unified diff (``unified``): hunks at their stated lines, renames as git apply reads them; its
hunks that change nothing are refused as it is read."""
