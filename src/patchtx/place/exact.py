"""The byte path of an update: ``rewrite`` of the hunks as the placement rule places them, done on
the file's bytes for a UTF-8 file with LF endings (the common case), so a 200,000-line file is not
split into lines. It places through ``matching.place`` over a ``ByteIndex`` (the same rule) and
hands the file to the line path whenever it cannot decide; tests hold the two to the same bytes.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .applied import adds_around, new_side_starts, overlapping_starts, replaces_in_place
from .matching import NotExact, place
from .normalise import SAME, one_shift, strip
from .textfile import BOM_BYTES, looks_binary

if TYPE_CHECKING:
    from collections.abc import Sequence

    from ..model import Chunk, LineKind
    from .rewrite import Edit


# -- the byte space ----------------------------------------------------------------------------
def framed(lines: Sequence[str]) -> bytes:
    """``lines`` as UTF-8, each between two LFs: the bytes that hold them as whole file lines in
    the framed body (see ``ByteIndex``). A line holding an LF or a CR, or one that UTF-8 cannot
    encode, is left to the line space."""
    joined = "".join(lines)
    if "\n" in joined or "\r" in joined:
        raise NotExact
    try:
        return ("\n" + "\n".join(lines) + "\n").encode("utf-8")
    except UnicodeEncodeError:
        raise NotExact from None


class ByteIndex:
    """The exact pass over the body of a UTF-8 file whose every line ends with an LF.

    Searches run on the body *as if* it had an LF in front (the "framed" body, never built, to
    spare a copy of a large file): every line then lies between two LFs, so lines ``i .. i+m-1``
    are at framed offset ``o`` exactly when the framed pattern is found there, ``o`` being the
    offset of the LF in front of line ``i``. Framed offset ``o >= 1`` is body offset ``o - 1``.
    A position is such an offset; the end of the file is the offset of its last LF.
    """

    blank_retry = True  # (never reached: a miss is NotExact, and the line space decides)

    def __init__(self, body: bytes) -> None:
        self.body = body
        self.end = len(body)
        self.passes = 1

    def pattern(self, lines: Sequence[str], tier: int) -> bytes:
        return framed(lines)

    def span(self, pattern: bytes) -> int:
        return len(pattern) - 1

    def _find(self, pattern: bytes, start: int, end: int) -> int:
        """``(b"\\n" + body).find(pattern, start, end)``."""
        body = self.body
        if start == 0 and body.startswith(pattern[1:]) and len(pattern) <= end:
            return 0
        found = body.find(pattern, start - 1 if start else 0, end - 1)
        return found + 1 if found >= 0 else -1

    def first_any(self, lines: Sequence[str], low: int) -> tuple[int, int, bytes]:
        pattern = framed(lines)
        at = self._find(pattern, low, self.end + 1)
        if at < 0:
            raise NotExact  # a looser pass may match: the line space decides
        return 0, at, pattern

    def ending_any(self, lines: Sequence[str], low: int) -> tuple[int, int, bytes]:
        pattern = framed(lines)
        at = self.end + 1 - len(pattern)
        body = self.body
        ends = body.endswith(pattern) or (at == 0 and body == pattern[1:])
        if at < low or not ends:
            raise NotExact
        return 0, at, pattern

    def last(self, pattern: bytes, tier: int, low: int, high: int) -> int:
        """The last start in [low, high - span]: ``(b"\\n" + body).rfind(pattern, low, high + 1)``."""
        body = self.body
        found = body.rfind(pattern, max(low - 1, 0), high)
        if found >= 0 and found + 1 >= low:
            return found + 1
        if low == 0 and body.startswith(pattern[1:]) and len(pattern) <= high + 1:
            return 0
        return -1

    def starts(self, pattern: bytes, tier: int, low: int, high: int, limit: int) -> list[int]:
        raise NotExact  # only reached for an ambiguous patch, which the line space words

    def shifted_near(self, old: Sequence[str], start: int, end: int, low: int, high: int,
                     ) -> tuple[int, str] | None:
        """``LineIndex.shifted_near``'s question, asked of the only lines it can look at: the
        ``len(old)`` lines above the hunk, its own, and the ``len(old)`` below (decoded here, a
        few lines, instead of handing a whole file of repeated lines to the line space). A yes is
        left to the line space (``NotExact``), which words the refusal in line numbers; a no is
        the same no. (Positions: framed offsets, so line ``start`` begins at body offset ``start``;
        a run of lines ends at the body offset where the line after it begins, or at ``end`` of
        the space.)"""
        size = len(old)
        body = self.body
        wanted = [strip(line) for line in old]
        first = wanted[0]
        if first and body.count(first.encode("utf-8"), max(low - 1, 0), high) <= 1:
            return None  # (only the hunk's own first line holds it: no other line is it shifted)
        # Line starts from ``size`` lines above the hunk to ``size`` lines below it.
        above: list[int] = []
        at = start
        while len(above) < size and at > 0:
            at = body.rfind(b"\n", 0, at - 1) + 1
            above.append(at)
        offsets = above[::-1]
        here = len(offsets)  # the hunk's first line in ``offsets``
        at = start
        while len(offsets) < here + 2 * size + 1 and at < len(body):
            offsets.append(at)
            at = body.find(b"\n", at) + 1
        lines = len(offsets)
        offsets.append(at)  # where the last line gathered ends (its next line's start)
        texts: list[str | None] = [None] * lines

        def text(index: int) -> str:
            got = texts[index]
            if got is None:
                got = texts[index] = body[offsets[index] : offsets[index + 1] - 1].decode("utf-8")
            return got

        for distance in range(1, size + 1):
            for alt in (here + distance, here - distance):
                if alt < 0 or alt + size > lines or offsets[alt] < low or offsets[alt + size] > high:
                    continue
                if strip(text(alt)) != first or \
                        [strip(text(index)) for index in range(alt, alt + size)] != wanted:
                    continue
                shift = one_shift(zip([text(index) for index in range(alt, alt + size)], old,
                                      strict=True))
                if shift is not None and shift != SAME:
                    raise NotExact
        return None

    def line_of(self, offsets: Sequence[int]) -> list[int]:
        """Line numbers of ascending positions, counted with ``bytes.count`` between them."""
        out: list[int] = []
        line = previous = 0
        for offset in offsets:
            if offset > previous:
                line += (1 + self.body.count(b"\n", 0, offset - 1) if previous == 0
                         else self.body.count(b"\n", previous - 1, offset - 1))
                previous = offset
            out.append(line)
        return out


class ExactUpdate:
    """What ``update_exactly`` computes: the new bytes, the changed line ranges as ``rewrite``
    reports them, and (for a file without BOM) where each range starts and ends in the old and
    new bytes, so a diff slices them instead of splitting them; and whether a pure insertion's
    lines already stand where it inserts them (then the patch may have been applied before)."""

    __slots__ = ("after", "edits", "offsets", "insertion_in_place")

    def __init__(self, after: bytes, edits: list[Edit], offsets: list[Edit] | None,
                 insertion_in_place: bool = False) -> None:
        self.after, self.edits, self.offsets = after, edits, offsets
        self.insertion_in_place = insertion_in_place


def update_exactly(data: bytes, chunks: Sequence[Chunk], *, first_match: bool = False,
                   in_turn: bool = False) -> ExactUpdate | None:
    """``rewrite`` of the chunks as ``Locator`` places them, done on the file's bytes when that
    is the same thing and cheaper: for a UTF-8 file with LF endings only, its last line ending
    with one too, whose every search is settled by the exact pass (the common case). No line list
    is built: a large file costs a few scans of its bytes instead of splitting, joining and
    re-encoding every line.

    None when the line-based path must decide (CR in the file or the patch, a binary or non-UTF-8
    file, an unterminated last line, a search that goes past the exact pass, an ambiguous match):
    it then also raises every error.

    ``in_turn``: the chunks are SEARCH/REPLACE blocks, each of which must also stand once in the
    file as the blocks before it leave it (``block_placement._check_in_turn``); a reply of several
    blocks that the bytes do not show to is left to the line path.
    """
    if b"\r" in data or looks_binary(data) or (data and not data.endswith(b"\n")):
        # (An unterminated last line moves its missing newline, and an empty one is a line no
        # byte offset can show in a diff: both are left to the line model.)
        return None
    ascii_file = data.isascii()
    if not ascii_file:  # (a decode only where it can fail)
        try:
            data.decode("utf-8")
        except UnicodeDecodeError:
            return None
    bom = data.startswith(BOM_BYTES)
    body = data[len(BOM_BYTES):] if bom else data
    try:
        index = ByteIndex(body)
        placed = place(index, chunks, first_match=first_match)
        # Matched exactly, context lines are the file's own: a chunk's new lines are its text.
        replacements = [_framed_or_nothing([text for kind, text in lines if kind != "-"])
                        for _, _, _, lines in placed]
        if in_turn and len(placed) > 1:
            _each_once_in_turn(body, placed, replacements, first_match)
    except NotExact:
        return None
    starts = [at for _, at, _, _ in placed]
    # Every line ends with an LF; added lines take it too (the dominant ending of a file without
    # CR). Lines between the placements are views of the body: the join copies them once.
    view = memoryview(body)
    pieces: list[bytes | memoryview] = [BOM_BYTES] if bom else []
    # Offsets are framed ones (see ByteIndex): framed offset ``o >= 1`` is body offset ``o - 1``.
    position = 1  # past the LF in front of the first line
    for (_, at, end, _), replacement in zip(placed, replacements, strict=True):
        pieces.append(view[position - 1 : at])
        pieces.append(replacement)
        position = end + 1
    pieces.append(view[position - 1 :])
    # The framed offset of the LF in front of a line is the body offset of the line itself.
    # Context and removed lines are the file's own: ASCII if the whole file is.
    edits, offsets = _edits_and_offsets(
        index.line_of(starts), [lines for _, _, _, lines in placed], starts,
        [ascii_file and replacement.isascii() for replacement in replacements])
    # A pure insertion (no old lines: placed where it ends) whose lines stand already, or a chunk
    # that keeps lines and adds others whose new side stands over the bytes where its kept lines
    # are (``applied.insertion_in_place`` on lines; ``at`` and ``end``: where they start and end).
    insertion_in_place = any(
        body.startswith(added, at) if chunks[number].anchors else body.endswith(added)
        for number, at, end, lines in placed if at == end and chunks[number].inserts_text
        for added in [_framed_or_nothing([text for _, text in lines])]) or any(
        _stands_over(body, new, new_side_starts(at, end, len(new)))
        for (_, at, end, lines), new in zip(placed, replacements, strict=True)
        if at != end and adds_around(lines)) or any(
        _stands_over(body, new, overlapping_starts(at, end, len(new)))
        for (_, at, end, lines), new in zip(placed, replacements, strict=True)
        if at != end and new and replaces_in_place(lines))
    # A diff shows a BOM as part of the first line, so it splits the bytes itself.
    return ExactUpdate(b"".join(pieces), edits, None if bom else offsets, insertion_in_place)


IN_TURN_INDEXED = 16
"""From this many blocks on, ``_each_once_in_turn`` looks lines up in an index of the file's lines
(built once, one pass) instead of rebuilding the file after each block and searching all of it:
linear in the blocks, not quadratic (issue 39: 2,000 -> 8,000 blocks took 6.5x the time). Below
it, the few scans of the bytes in C cost less than the index."""


def _each_once_in_turn(body: bytes, placed: Sequence[tuple[int, int, int, Sequence[tuple[LineKind, str]]]],
                       replacements: Sequence[bytes], first_match: bool) -> None:
    """``block_placement._check_in_turn`` on the bytes, in the exact pass: each block's old lines
    stand once (``first_match``: first) in the body as the blocks before it leave it, where they
    were placed; raise ``NotExact`` otherwise (the line path words the refusal)."""
    if len(placed) >= IN_TURN_INDEXED:
        _each_once_in_turn_indexed(body, placed, replacements, first_match)
        return
    current, shift = body, 0
    for (_, at, end, lines), replacement in zip(placed, replacements, strict=True):
        old = [text for kind, text in lines if kind != "+"]
        expected = at + shift
        if old:
            space = ByteIndex(current)
            _, first, pattern = space.first_any(old, 0)
            if first != expected or (not first_match and space.last(pattern, 0, 0, space.end) != expected):
                raise NotExact
        current = current[:expected] + replacement + current[expected + end - at:]
        shift += len(replacement) - (end - at)


def _line_index(lines: Sequence[bytes]) -> dict[bytes, list[int]]:
    """Each line -> the (ascending) line numbers where it stands."""
    index: dict[bytes, list[int]] = {}
    for number, line in enumerate(lines):
        index.setdefault(line, []).append(number)
    return index


def _each_once_in_turn_indexed(body: bytes,
                               placed: Sequence[tuple[int, int, int, Sequence[tuple[LineKind, str]]]],
                               replacements: Sequence[bytes], first_match: bool) -> None:
    """``_each_once_in_turn``'s answer, in one pass. The blocks are placed in file order, so when
    block ``k`` is applied the file is the final file (every block applied) up to block ``k``'s
    line, then the original from block ``k``'s line on: an occurrence of its old lines before its
    place stands in the final file's lines above it or straddles that seam (a few lines, looked at
    directly), one after its place in the original's lines below it. Each is looked up by the
    pattern's rarest line in an index of the lines."""
    from bisect import bisect_right  # (off a one-line edit's path: 16 blocks or more)

    original = body.split(b"\n")[:-1]  # (every line ends with an LF)
    final: list[bytes] = []
    starts = ByteIndex(body).line_of([at for _, at, _, _ in placed])
    position = 0
    for (_, _, _, lines), start, replacement in zip(placed, starts, replacements, strict=True):
        final.extend(original[position:start])
        final.extend(replacement.split(b"\n")[:-1])
        position = start + sum(kind != "+" for kind, _ in lines)
    final.extend(original[position:])
    in_original, in_final = _line_index(original), _line_index(final)
    shift = 0
    for (_, _, _, lines), start, replacement in zip(placed, starts, replacements, strict=True):
        old = [text for kind, text in lines if kind != "+"]
        size = len(old)
        expected = start + shift  # the block's line in the file as the blocks before it leave it
        shift += len(replacement.split(b"\n")) - 1 - size
        if not old:
            continue
        pattern = framed(old)[1:-1].split(b"\n")
        rarest = min(range(size), key=lambda i: len(in_original.get(pattern[i], ())))
        # Above: wholly in the final file's lines before the block's line ...
        for line in in_final.get(pattern[rarest], ()):
            top = line - rarest
            if top + size > expected:
                break
            if top >= 0 and final[top : top + size] == pattern:
                raise NotExact
        # ... or across the seam where the final file's lines give way to the original's.
        seam = final[max(expected - size + 1, 0) : expected]
        window = seam + original[start : start + size - 1]
        for top in range(len(seam)):
            if window[top : top + size] == pattern:
                raise NotExact
        if first_match:
            continue
        # Below: in the original's lines after the block's line.
        for line in in_original.get(pattern[rarest], ())[bisect_right(in_original[pattern[rarest]], start + rarest):]:
            if original[line - rarest : line - rarest + size] == pattern:
                raise NotExact


def _stands_over(body: bytes, new: bytes, starts: range) -> bool:
    """Whether ``new`` (whole lines) stands in ``body`` from a line start among ``starts``."""
    found = body.find(new, starts.start, starts.stop - 1 + len(new))
    while found != -1:
        if _line_start(body, found):
            return True
        found = body.find(new, found + 1, starts.stop - 1 + len(new))
    return False


def _line_start(body: bytes, at: int) -> bool:
    """Whether byte ``at`` of ``body`` starts a line (the new side's lines are whole lines: ending
    inside an indented look-alike, ``    b`` for ``b``, is standing nowhere); never a negative one."""
    return at == 0 or (at > 0 and body[at - 1] == 0x0A)


def _framed_or_nothing(lines: list[str]) -> bytes:
    """``lines`` as UTF-8, each followed by an LF."""
    return framed(lines)[1:] if lines else b""


def _edits_and_offsets(lines_at: list[int], placed_lines: list[tuple[tuple[LineKind, str], ...]],
                       starts: list[int], ascii_only: list[bool]) -> tuple[list[Edit], list[Edit]]:
    """The changed line ranges ``rewrite`` reports, from the placed chunks alone (each run of
    ``-`` and ``+`` lines of a chunk, with new line numbers shifted by the lines added and removed
    before it), and for each range the byte offsets of its four line numbers in the old
    and new bytes of an LF-only file whose last line ends with an LF. Each placed chunk is given
    by the old line number of its first line (``lines_at``), its lines, and the old offset of its
    first line (``starts``); ``ascii_only`` says of each whether all its lines are ASCII (then a
    line's length is its length in bytes)."""
    edits: list[Edit] = []
    offsets: list[Edit] = []
    shift = byte_shift = 0  # new minus old, in lines and in bytes, at the current line
    for line, lines, at, ascii_lines in zip(lines_at, placed_lines, starts, ascii_only, strict=True):
        opened: Edit | None = None
        for kind, text in lines:
            size = len(text) + 1 if ascii_lines else len(text.encode("utf-8")) + 1
            if kind == " ":
                if opened is not None:
                    edits.append((opened[0], line, opened[1], line + shift))
                    offsets.append((opened[2], at, opened[3], at + byte_shift))
                    opened = None
                line += 1
                at += size
                continue
            if opened is None:
                opened = (line, line + shift, at, at + byte_shift)
            if kind == "-":
                line += 1
                shift -= 1
                at += size
                byte_shift -= size
            else:
                shift += 1
                byte_shift += size
        if opened is not None:
            edits.append((opened[0], line, opened[1], line + shift))
            offsets.append((opened[2], at, opened[3], at + byte_shift))
    return edits, offsets
