"""Placed hunks → the file's new lines, and the changed line ranges a diff shows.

Context lines keep the file's text and ending, ``-`` lines go, ``+`` lines come with the file's
dominant ending, and the final-newline state is kept (or set, ``final_newline``, by a hunk
that says where the file ends).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .textfile import TextFile

if TYPE_CHECKING:
    from collections.abc import Sequence

    from ..model import Chunk
    from .matching import Placement

Edit = tuple[int, int, int, int]
"""A changed line range: ``(old_start, old_end, new_start, new_end)``, 0-based, end exclusive."""


def rewrite(original: TextFile, placements: list[Placement],
            ends_with_newline: bool | None = None) -> tuple[TextFile, list[Edit]]:
    """Apply placed chunks: context lines keep the file's text and ending, ``-`` lines go,
    ``+`` lines come with the file's dominant ending (or the ones the placement gives them); the
    final-newline state is kept, unless the new last line is blank (or set, by
    ``ends_with_newline``, as a unified diff's ``\\ No newline at end of file`` says).

    Also returns the changed line ranges ``(old_start, old_end, new_start, new_end)``.
    """
    texts, endings = original.texts, original.endings
    dominant = original.dominant_ending
    out_texts: list[str] = []
    out_endings: list[str] = []
    edits: list[Edit] = []
    opened: tuple[int, int] | None = None
    position = 0
    for placement in placements:
        out_texts.extend(texts[position : placement.start])
        out_endings.extend(endings[position : placement.start])
        line = placement.start
        added = None if placement.endings is None else iter(placement.endings)
        for kind, text in placement.lines:
            if kind == " ":
                if opened is not None:
                    edits.append((opened[0], line, opened[1], len(out_texts)))
                    opened = None
                out_texts.append(texts[line])
                out_endings.append(endings[line])
                line += 1
                continue
            if opened is None:
                opened = (line, len(out_texts))
            if kind == "-":
                line += 1
            else:
                out_texts.append(text)
                out_endings.append(dominant if added is None else next(added))
        if opened is not None:
            edits.append((opened[0], line, opened[1], len(out_texts)))
            opened = None
        position = line
    out_texts.extend(texts[position:])
    out_endings.extend(endings[position:])
    # An unterminated line that is no longer last gets the dominant ending. Only the original
    # last line can be one (none if it ends with a newline), so look for it there,
    # not in a loop over every line.
    last, k = len(out_endings) - 1, 0
    while endings and not endings[-1]:
        try:
            k = out_endings.index("", k, last)
        except ValueError:
            break
        out_endings[k] = dominant
    if out_endings:
        keep = original.ends_with_newline if ends_with_newline is None else ends_with_newline
        # A blank last line is a line only with its line break: kept without one, it would be no
        # line at all (the patch's blank line lost), so the final-newline state gives way to it.
        # (Not where a unified diff says so: its bytes are what git applies.)
        keep = keep or (ends_with_newline is None and not out_texts[-1])
        # Where a unified diff says the file ends without a newline, a last line ending in a
        # lone CR keeps it: a CR is no newline (git's line 'b\r' marked '\ No newline at end of
        # file' ends the file so).
        lone_cr = ends_with_newline is False and out_endings[-1] == "\r"
        out_endings[-1] = (out_endings[-1] or dominant) if keep else ("\r" if lone_cr else "")
    if texts and out_texts and not (endings[-1] and out_endings[-1]):
        edits = _with_ending_changes(edits, endings, out_endings)
    return TextFile(out_texts, out_endings, original.bom), edits


def common_ends(old: Sequence[object], new: Sequence[object]) -> tuple[int, int]:
    """How many lines ``old`` and ``new`` begin with alike, and how many of the rest they end
    with alike: what is between is the one changed range (linear, maybe not minimal)."""
    shorter = min(len(old), len(new))
    head = 0
    while head < shorter and old[head] == new[head]:
        head += 1
    tail = 0
    while tail < shorter - head and old[-1 - tail] == new[-1 - tail]:
        tail += 1
    return head, tail


def _unchanged_counterpart(edits: list[Edit], index: int, *, from_new: bool) -> int | None:
    """Where an unchanged line stands on the other side of the edits (None if the line is edited)."""
    source = 2 if from_new else 0
    target = 2 - source
    position = index
    for edit in edits:
        if edit[source] <= index < edit[source + 1]:
            return None
        if edit[source + 1] <= index:
            position = edit[target + 1] + (index - edit[source + 1])
    return position


def _with_ending_changes(edits: list[Edit], old_endings: list[str], new_endings: list[str]) -> list[Edit]:
    """Lines copied unchanged can still change ending at the end of the file (keeping the
    final-newline state moves the missing newline to the new last line): add those lines as
    edits so a diff shows them."""
    extra: list[Edit] = []
    old_size, new_size = len(old_endings), len(new_endings)

    candidates = {old_size - 1, _unchanged_counterpart(edits, new_size - 1, from_new=True)}
    for old in sorted(c for c in candidates if c is not None and 0 <= c < old_size):
        new = _unchanged_counterpart(edits, old, from_new=False)
        if new is not None and 0 <= new < new_size and old_endings[old] != new_endings[new]:
            extra.append((old, old + 1, new, new + 1))
    return sorted(edits + extra)


def final_newline(chunks: Sequence[Chunk], placements: Sequence[Placement],
                  size: int) -> bool | None:
    """Whether the new file ends with a line break, as the hunk that reaches the old file's end
    says (``\\ No newline at end of file``); None: as the old file does."""
    if not placements:
        return None
    last = placements[-1]
    if last.start + last.length != size:
        return None
    chunk = chunks[last.chunk_index]
    if chunk.new_unterminated:
        return False
    return True if chunk.old_unterminated else None
