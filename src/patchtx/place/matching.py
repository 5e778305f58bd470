"""Where each hunk of a file update goes: THE placement rule, and the two spaces it searches.

The rule (docs/format.md, "Where a hunk goes"): a file's hunks are placed in file order, each
after the end of the one before, each after its ``@@`` anchors, every line found by Codex's four
passes (``normalise.PASSES``; a hunk's pass is the first that matches it from where it may start).
The patch applies when exactly one such placement exists. An anchor narrows where a hunk may be;
it never chooses among several matches of the hunk itself. Stacked anchors are found in turn, and
only the innermost must lie after the previous hunk: the outer ones may restate a parent above it
(``@@ class T`` / ``@@ def b():`` after a hunk in ``T.a``).

How uniqueness is decided: the constraints are all "after" and "before", so the placements form
a lattice. The earliest one (each hunk at its first match, left to right) and the latest one
(each hunk at its last match below the next hunk's latest start, right to left) bound every
other: the patch is determined exactly when they agree, and where they disagree every match in
between belongs to some placement, so those are the candidates an error lists.
``first_match=True`` keeps only the earliest placement, Codex's first-occurrence behaviour.

The rule is written once, over a ``SearchSpace``. ``LineIndex`` searches a file's decoded lines in
all four passes and words every error. ``exact.ByteIndex`` (the byte path) searches a UTF-8,
LF-only file's bytes with ``bytes.find``/``rfind`` in the exact pass only, so a large file needs
no line list; wherever the exact pass cannot settle the file (a pattern it cannot find, or several placements) it raises
``NotExact`` and the line space decides, errors included.
"""

from __future__ import annotations

from operator import methodcaller
from typing import TYPE_CHECKING, Any, Protocol

from .._record import record
from ..errors import AmbiguousContextError, ContextNotFoundError
from .normalise import (
    PASSES,
    PYTHON_ONLY_WHITESPACE,
    SAME,
    WHITESPACE,
    matches_in_some_pass,
    one_shift,
    spell_indentation,
    strip,
    unicode_keys,
)
from .search import INDEX_AFTER, last_indexed, matches, matches_indexed, occurrences

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator, Sequence

    from ..model import Chunk, LineKind

    class SearchSpace(Protocol):
        """Positions are ordered; a pattern found at ``p`` covers [p, p + span(pattern))."""

        end: int
        """The position after the last line."""
        passes: int
        """How many of the four passes it searches (1: exact only)."""
        blank_retry: bool
        """Whether a hunk it misses is tried again without its last old line when that is blank
        (Codex's retry: a Codex patch's or a unified diff's hunk, not a SEARCH block, whose lines
        must stand as written)."""

        def pattern(self, lines: Sequence[str], tier: int) -> Any: ...
        def span(self, pattern: Any) -> int: ...
        def first_any(self, lines: Sequence[str], low: int) -> tuple[int, int, Any]: ...
        def ending_any(self, lines: Sequence[str], low: int) -> tuple[int, int, Any]: ...
        def last(self, pattern: Any, tier: int, low: int, high: int) -> int: ...
        def starts(self, pattern: Any, tier: int, low: int, high: int, limit: int) -> list[int]: ...

MAX_CANDIDATES = 20


# -- the rule ------------------------------------------------------------------------------------
@record
class Placement:
    """Where one chunk lands: ``length`` file lines from ``start`` are replaced by its lines."""

    chunk_index: int
    start: int
    length: int
    lines: tuple[tuple[LineKind, str], ...]
    endings: tuple[str, ...] | None = None
    """The endings of its ``+`` lines, in order (an exact text replacement keeps the ending of a
    line it changes inside); None: each takes the file's dominant ending."""


class Missing(Exception):
    """A hunk (or one of its anchors) matches nowhere it may be."""

    def __init__(self, number: int, lines: list[str], low: int, anchor: str | None) -> None:
        super().__init__(number)
        self.number, self.lines, self.low, self.anchor = number, lines, low, anchor


class Ambiguous(Exception):
    """Several placements: ``hunks`` lists (chunk number, anchor text or None, candidate starts).
    ``reason`` (a sentence) says why when two readings of an anchor disagree; the block rule does
    not settle those (each place lies in a block of the anchor's)."""

    def __init__(self, hunks: list[tuple[int, str | None, list[int]]], reason: str = "") -> None:
        super().__init__(hunks)
        self.hunks, self.reason = hunks, reason


class NotExact(Exception):
    """The byte space cannot settle a file alone: the line space decides it, errors too."""


class _Placed:
    """One hunk's earliest placement and what the backward sweep needs to find its latest."""

    __slots__ = ("number", "lines", "start", "end", "pattern", "tier", "floating", "eof",
                 "anchor", "anchor_pattern", "anchor_tier", "anchor_at", "anchor_low", "repeats")

    def __init__(self, number: int, lines: tuple[tuple[LineKind, str], ...]) -> None:
        self.number, self.lines = number, lines
        self.start = self.end = self.tier = self.anchor_tier = self.anchor_at = self.anchor_low = 0
        self.pattern: Any = None
        self.anchor_pattern: Any = None
        self.anchor: str | None = None
        self.floating = self.eof = self.repeats = False


def place(space: SearchSpace, chunks: Sequence[Chunk], *, first_match: bool = False,
          windows: dict[int, tuple[int, int]] | None = None,
          ) -> list[tuple[int, int, int, tuple[tuple[LineKind, str], ...]]]:
    """(chunk number, start, end, lines) of every chunk, in file order; raise ``Missing`` or
    ``Ambiguous`` (``NotExact`` from a space that cannot decide). ``windows`` confines chunks (by
    number) to [low, high): the block an anchor opens, see ``Locator``."""
    placed: list[_Placed] = []
    cursor = 0
    windows = windows or {}
    for number, chunk in enumerate(chunks):
        hunk = _earliest(space, number, chunk, cursor, windows.get(number), first_match)
        placed.append(hunk)
        if not hunk.floating:
            cursor = hunk.end
    if not first_match:
        _check_latest(space, placed, windows)
        _check_staircase(space, chunks, placed, windows)
    # An insertion without an anchor goes at the end of the file after every other hunk there (an
    # insertion after an anchor that is the last line is right after it, whatever the chunk order).
    placed.sort(key=lambda h: (h.start, h.floating))
    return [(h.number, h.start, h.end, h.lines) for h in placed]


def _earliest(space: SearchSpace, number: int, chunk: Chunk, cursor: int,
              window: tuple[int, int] | None, first_match: bool) -> _Placed:
    hunk = _Placed(number, chunk.lines)
    old = [text for kind, text in chunk.lines if kind != "+"]
    low = cursor
    if chunk.anchors:
        outer_low = 0  # parents may be restated above the cursor: found from the top, in turn
        for anchor in chunk.anchors[:-1]:
            _tier, at, pattern = space.first_any([anchor], outer_low)
            if at < 0:
                raise Missing(number, [anchor], outer_low, anchor)
            outer_low = at + space.span(pattern)
        innermost = chunk.anchors[-1]
        hunk.anchor_low = max(cursor, outer_low)
        hunk.anchor_tier, at, hunk.anchor_pattern = space.first_any([innermost], hunk.anchor_low)
        if at < 0:
            raise Missing(number, [innermost], hunk.anchor_low, innermost)
        hunk.anchor, hunk.anchor_at = innermost, at
        # A hunk that repeats its anchor line as its first line starts at the anchor.
        hunk.repeats = bool(old) and matches_in_some_pass(innermost, old[0])
        low = at if hunk.repeats else at + space.span(hunk.anchor_pattern)
    if not old:
        # A pure insertion goes right after its anchor; with none, at the end of the file,
        # outside the order of the other hunks (as in Codex).
        hunk.floating = not chunk.anchors
        hunk.start = hunk.end = low if chunk.anchors else space.end
        return hunk
    hunk.eof = chunk.is_end_of_file
    found = _find_hunk(space, hunk, chunk, old, low, window, first_match)
    if found is None and chunk.anchors:
        # The anchor's first match in its earliest pass left the hunk without a place: an
        # earlier line that only a looser pass takes for the anchor (trailing white space, say)
        # counts too. An anchor narrows; it is not bound to the pass of its first match.
        for tier in range(hunk.anchor_tier + 1, space.passes):
            pattern = space.pattern([chunk.anchors[-1]], tier)
            earlier = space.starts(pattern, tier, hunk.anchor_low, hunk.anchor_at, 1)
            if not earlier:
                continue
            at = earlier[0]
            low = at if hunk.repeats else at + space.span(pattern)
            found = _find_hunk(space, hunk, chunk, old, low, window, first_match)
            if found is not None:
                hunk.anchor_tier, hunk.anchor_at, hunk.anchor_pattern = tier, at, pattern
                break
    if found is None:
        raise Missing(number, old, low if window is None else max(low, window[0]), None)
    if found[0] and chunk.anchors and not first_match:
        _closer_below_a_looser_anchor(space, hunk, chunk, old, window, found)
    hunk.tier, hunk.start, hunk.pattern = found
    hunk.end = hunk.start + space.span(hunk.pattern)
    return hunk


def _closer_below_a_looser_anchor(space: SearchSpace, hunk: _Placed, chunk: Chunk, old: list[str],
                                  window: tuple[int, int] | None, found: tuple[int, int, Any]) -> None:
    """Raise ``Ambiguous`` when the hunk, found only in a loose pass below its anchor's occurrence
    in the anchor's first pass, is found in a stricter pass below an earlier line that a looser
    pass takes for the anchor: ``@@ def f(self):`` equal to a module-level ``def f(self):`` further
    down, and once white space is ignored to a method ``    def f(self):`` whose body holds the
    hunk's lines as written. Each reading has the anchor; which the patch means is not told (an
    anchor narrows, it never chooses), so neither is taken."""
    tier_found, start_found, _ = found
    anchor = chunk.anchors[-1]
    for tier in range(hunk.anchor_tier + 1, space.passes):
        pattern = space.pattern([anchor], tier)
        earlier = space.starts(pattern, tier, hunk.anchor_low, hunk.anchor_at, 1)
        if not earlier:
            continue
        probe = _Placed(hunk.number, chunk.lines)
        probe.eof = hunk.eof
        low = earlier[0] if hunk.repeats else earlier[0] + space.span(pattern)
        other = _find_hunk(space, probe, chunk, old, low, window, False)
        if other is not None and other[0] < tier_found and other[1] != start_found:
            # (Only spaces of several passes get here: line spaces, whose positions are lines.)
            loose_at, strict_at = earlier[0], hunk.anchor_at
            raise Ambiguous([(hunk.number, None, sorted({other[1], start_found}))], reason=(
                f"The @@ anchor '{anchor}' is file line {strict_at + 1} in the pass that first "
                f"finds it, and file line {loose_at + 1} in a looser one (white space or "
                f"punctuation aside); below line {loose_at + 1} the hunk's lines match more "
                f"closely than below line {strict_at + 1}: the patch may mean either."))


def _find_hunk(space: SearchSpace, hunk: _Placed, chunk: Chunk, old: list[str], low: int,
               window: tuple[int, int] | None, first_match: bool) -> tuple[int, int, Any] | None:
    """(pass, start, pattern) of the hunk's first match from ``low`` (in its window), trying
    Codex's retry without a trailing blank line (then ``hunk.lines`` is the retry's); None if it
    matches nowhere there.

    A retry left with no old line (the hunk's one old line was that blank line) would fit at every
    line from ``low`` on: it is taken only where that is one place, the end of the file, or with
    ``first_match`` (Codex takes the first: the cursor)."""
    if window is not None:
        low = max(low, window[0])
    search = space.ending_any if hunk.eof else space.first_any
    tier, start, pattern = search(old, low)
    if start < 0:
        retry = _without_trailing_blank(chunk.lines) if space.blank_retry else None
        retry_old = [text for kind, text in retry or () if kind != "+"]
        if retry is not None and (retry_old or first_match or low == space.end):
            tier, start, pattern = search(retry_old, low)
            if start >= 0:
                hunk.lines = retry
    if start < 0 or (window is not None and start + space.span(pattern) > window[1]):
        return None
    return tier, start, pattern


def _check_latest(space: SearchSpace, placed: list[_Placed],
                  windows: dict[int, tuple[int, int]]) -> None:
    """Walk back from the end placing each hunk as late as it can go; any hunk that can go later
    than its earliest placement makes the patch ambiguous."""
    high = space.end
    ambiguous: list[tuple[int, str | None, list[int]]] = []
    for hunk in reversed(placed):
        if hunk.floating:
            continue
        if hunk.number in windows:
            high = min(high, windows[hunk.number][1])
        if hunk.pattern is None:  # a pure insertion after its anchor: the anchor is what moves
            latest = space.last(hunk.anchor_pattern, hunk.anchor_tier, hunk.anchor_low, high)
            if latest != hunk.anchor_at:
                ambiguous.append((hunk.number, hunk.anchor, space.starts(
                    hunk.anchor_pattern, hunk.anchor_tier, hunk.anchor_at,
                    latest + space.span(hunk.anchor_pattern), MAX_CANDIDATES + 1)))
            high = latest
            continue
        latest = hunk.start if hunk.eof else space.last(hunk.pattern, hunk.tier, hunk.start, high)
        if latest != hunk.start:
            ambiguous.append((hunk.number, None, space.starts(
                hunk.pattern, hunk.tier, hunk.start, latest + space.span(hunk.pattern),
                MAX_CANDIDATES + 1)))
        if hunk.anchor is None:
            high = latest
        else:
            # The hunk before must end by this hunk's anchor, the latest one that still fits: at
            # the hunk's start when the hunk repeats its anchor line, else above it. (A start that
            # only resembles the anchor in a looser pass than the anchor's is no occurrence of it.)
            fits = latest + space.span(hunk.anchor_pattern) if hunk.repeats else latest
            high = space.last(hunk.anchor_pattern, hunk.anchor_tier, hunk.anchor_low, fits)
    if ambiguous:
        raise Ambiguous(ambiguous[::-1])


def _check_staircase(space: SearchSpace, chunks: Sequence[Chunk], placed: list[_Placed],
                     windows: dict[int, tuple[int, int]]) -> None:
    """Raise ``Ambiguous`` when a hunk found as written (or but for trailing white space) also
    stands, with its indentation shifted as a whole, overlapping or right beside that place,
    where it may go too: on lines that differ from their neighbours only in indentation (a run of
    closing brackets, ``    })`` / ``  })`` / ``})``), a hunk written one level too deep or too
    shallow, which the looser passes and the indentation rule read as the file's lines shifted
    (docs/format.md, "Indentation and trailing white space"), reads one step off as well; the two
    readings write different files, and the text does not say which it means. (A shifted match
    farther away is not counted: there the exact match is the format's reading, as in Codex.)"""
    near = getattr(space, "shifted_near", None)
    if near is None:
        return
    solid = [hunk for hunk in placed if not hunk.floating]
    for position, hunk in enumerate(solid):
        if hunk.pattern is None or hunk.eof or hunk.tier >= 2:
            continue
        low = solid[position - 1].end if position else 0
        if hunk.anchor is not None:
            low = max(low, hunk.anchor_at if hunk.repeats else hunk.anchor_at + space.span(hunk.anchor_pattern))
        high = solid[position + 1].start if position + 1 < len(solid) else space.end
        if hunk.number in windows:
            low, high = max(low, windows[hunk.number][0]), min(high, windows[hunk.number][1])
        old = [text for kind, text in hunk.lines if kind != "+"]
        if not old:
            continue  # (a retry left without its one blank line: placed where it may be)
        other = near(old, hunk.start, hunk.end, low, high)
        if other is not None:
            alt, shift = other
            raise Ambiguous([(hunk.number, None, sorted((hunk.start, alt)))], reason=(
                f"The hunk's lines stand as written at file line {hunk.start + 1}, and with "
                f"their indentation shifted as a whole ({shift}) at file line {alt + 1}: on lines "
                "that differ from their neighbours only in indentation, a hunk written a level "
                "too deep or too shallow reads one step off, and the two places write different "
                "files."))


def _without_trailing_blank(
    lines: tuple[tuple[LineKind, str], ...],
) -> tuple[tuple[LineKind, str], ...] | None:
    """Codex's retry: when the old text ends with a blank line (often a separator the file does
    not have), drop it, and drop the new text's last line too if that is blank."""
    old = [i for i, (kind, _) in enumerate(lines) if kind != "+"]
    new = [i for i, (kind, _) in enumerate(lines) if kind != "-"]
    if not old or lines[old[-1]][1] != "":
        return None
    drop_old = old[-1]
    drop_new = new[-1] if new and lines[new[-1]][1] == "" else None
    out: list[tuple[LineKind, str]] = []
    for i, (kind, text) in enumerate(lines):
        in_old = kind != "+" and i != drop_old
        in_new = kind != "-" and i != drop_new
        if in_old and in_new:
            out.append((" ", text))
        elif in_old:
            out.append(("-", text))
        elif in_new:
            out.append(("+", text))
    return tuple(out)


# -- the line space ----------------------------------------------------------------------------
class LineIndex:
    """A file's decoded lines, searched in all four passes; positions are line numbers (0-based).

    Keys per pass are built lazily (most patches never need the loose passes), each from the one
    before. A search scans for the pattern's longest line with ``list.index``, then
    compares the whole pattern there.
    """

    blank_retry = True

    def __init__(self, texts: Sequence[str], *, passes: int = len(PASSES),
                 source: bytes | None = None) -> None:
        self.texts = texts
        self.end = len(texts)
        self.passes = passes
        """How many of the four passes are tried (1: exact only)."""
        self.source = source
        """The UTF-8 bytes the lines were decoded from, when the caller has them: what the loose
        passes ask of every line (any U+001C-U+001F? all ASCII?) is then one scan of them in C,
        not a pass over the lines or a join of them all."""
        self._keys: list[list[str] | None] = [None] * len(PASSES)
        self._reversed: list[list[str] | None] = [None] * len(PASSES)
        self._all_ascii: bool | None = None
        self._plain_trim: bool | None = None
        self._scanned = 0
        """Lines the searches have scanned so far (``_search``)."""
        self._where: list[dict[str, list[int]] | None] = [None] * len(PASSES)
        self._set: set[str] | None = None

    def _trim(self, method: str) -> Callable[[str], str]:
        """``str.rstrip``/``str.strip`` with Rust's whitespace set: the argument-less methods
        strip Python's set (Rust's plus U+001C-U+001F) several times faster, so they are used
        when no line holds one of those four characters."""
        if self._plain_trim is None:
            if self.source is not None:  # (ASCII: in UTF-8 each is its own byte, in no other character)
                self._plain_trim = not any(c in self.source for c in PYTHON_ONLY_WHITESPACE.encode())
            else:
                joined = "".join(self.texts)
                self._plain_trim = not any(c in joined for c in PYTHON_ONLY_WHITESPACE)
        if self._plain_trim:
            trim: Callable[[str], str] = getattr(str, method)
            return trim
        return methodcaller(method, WHITESPACE)

    def _ascii(self) -> bool:
        if self._all_ascii is None:
            # (ASCII bytes decode to ASCII lines; bytes that are not, a BOM's say, are looked at
            # line by line.)
            self._all_ascii = ((self.source is not None and self.source.isascii())
                               or all(map(str.isascii, self.texts)))
        return self._all_ascii

    def shifted_near(self, old: Sequence[str], start: int, end: int, low: int, high: int,
                     ) -> tuple[int, str] | None:
        """A start other than ``start``, within ``len(old)`` lines of it and in [low, high -
        len(old)], where ``old`` stands with its indentation shifted as a whole (by one offset,
        not none: ``normalise.one_shift``), and that shift in words; None if none (or this space
        has no pass that ignores indentation). See ``_check_staircase``."""
        if self.passes < len(PASSES):
            return None
        size = len(old)
        wanted = [strip(line) for line in old]
        stripped = self.keys(2)
        for distance in range(1, size + 1):
            for alt in (start + distance, start - distance):
                if alt < low or alt + size > high or stripped[alt] != wanted[0] or \
                        stripped[alt : alt + size] != wanted:
                    continue
                shift = one_shift(zip(self.texts[alt : alt + size], old, strict=True))
                if shift is not None and shift != SAME:
                    direction, by = shift
                    return alt, (f"{spell_indentation(by)} {'deeper' if direction == '+' else 'shallower'}"
                                 " in the file")
        return None

    def holds(self, text: str) -> bool:
        """Whether some line of the file is ``text`` exactly (asked of thousands of lines by the
        already-applied question: a set of the lines, built on the first)."""
        if self._set is None:
            self._set = set(self.texts)
        return text in self._set

    def keys(self, tier: int) -> list[str]:
        keys = self._keys[tier]
        if keys is None:
            if tier == 0:
                texts = self.texts
                keys = texts if type(texts) is list else list(texts)
            elif tier == 1:
                keys = list(map(self._trim("rstrip"), self.texts))
            elif tier == 2:
                keys = list(map(self._trim("strip"), self.keys(1)))
            else:
                stripped = self.keys(2)
                keys = stripped if self._ascii() else unicode_keys(stripped)
            self._keys[tier] = keys
        return keys

    def pattern(self, lines: Sequence[str], tier: int) -> list[str]:
        if tier == 0:
            return lines if type(lines) is list else list(lines)
        return list(map(PASSES[tier], lines))

    def span(self, pattern: list[str]) -> int:
        return len(pattern)

    def _tiers(self, lines: Sequence[str]) -> Iterator[int]:
        """The passes worth trying, in order, each pass's keys built only when it is reached:
        one whose keys are the previous pass's, for a pattern that maps to itself too, would
        find nothing new."""
        ascii_lines = all(map(str.isascii, lines))
        for tier in range(self.passes):
            if tier and ascii_lines and self.keys(tier) is self._keys[tier - 1]:
                continue
            yield tier

    def first_any(self, lines: Sequence[str], low: int) -> tuple[int, int, list[str]]:
        """(pass, start, pattern) of the first match from ``low`` in the first pass with one;
        start -1 when none. An empty pattern (a retry that dropped its one blank line) is found
        at ``low``, once."""
        if not lines:
            return 0, low, []
        for tier in self._tiers(lines):
            wanted = self.pattern(lines, tier)
            found = self._search(tier, wanted, low, self.end, 1)
            if found:
                return tier, found[0], wanted
        return -1, -1, []

    def ending_any(self, lines: Sequence[str], low: int) -> tuple[int, int, list[str]]:
        """The same for a pattern that must end at the last line and start at ``low`` or later
        (an empty one is found at ``low``, as by ``first_any``)."""
        if not lines:
            return 0, low, []
        start = self.end - len(lines)
        if start >= low:
            for tier in self._tiers(lines):
                wanted = self.pattern(lines, tier)
                if self.keys(tier)[start:] == wanted:
                    return tier, start, wanted
        return -1, -1, []

    def last(self, pattern: list[str], tier: int, low: int, high: int) -> int:
        """The last start in [low, high - span] where pass ``tier`` holds ``pattern``; -1 if none."""
        if not pattern:
            return low
        keys = self.keys(tier)
        where = self._where[tier]
        if where is not None:
            last = last_indexed(keys, where, pattern, low, high)
            if last is not None:
                return last
        hits = self._search(tier, pattern, low, high, 2)
        if len(hits) < 2:  # (the common case: the hunk occurs once there)
            return hits[0] if hits else -1
        # Several: the first match of the reversed pattern in the reversed keys is the last one,
        # found without walking every match in between (a blank line in a file of blank lines).
        backwards = self._reversed[tier]
        if backwards is None:
            backwards = self._reversed[tier] = keys[::-1]
        size = len(keys)
        found = matches(backwards, pattern[::-1], size - min(high, size), size - hits[1], 1)
        return size - found[0] - len(pattern) if found else hits[1]

    def starts(self, pattern: list[str], tier: int, low: int, high: int, limit: int) -> list[int]:
        return self._search(tier, pattern, low, high, limit)

    def _search(self, tier: int, wanted: list[str], lower: int, upper: int, limit: int) -> list[int]:
        """``matches`` over pass ``tier``'s keys. Once the searches of this file have scanned
        ``INDEX_AFTER`` times its lines (a patch of thousands of hunks placed, and placed again
        by a repair or the already-applied question, each search over the whole file), the
        starts are looked up in an index of where each key stands instead (``matches_indexed``):
        each search then costs what its rarest line's occurrences cost, not the file's length."""
        keys = self.keys(tier)
        where = self._where[tier]
        if where is None:
            self._scanned += max(min(upper, self.end) - lower, 0)
            if self._scanned <= INDEX_AFTER * self.end:
                return matches(keys, wanted, lower, upper, limit)
            where = self._where[tier] = occurrences(keys)
        found = matches_indexed(keys, where, wanted, lower, upper, limit)
        return matches(keys, wanted, lower, upper, limit) if found is None else found

    def block_end(self, opener: int) -> int | None:
        """Where the block that line ``opener`` opens ends (exclusive), or None if it opens none
        that can be told for sure: a line ending with an opening bracket runs to the line that
        closes it; otherwise the lines indented deeper than it that follow it (blank lines
        included) are its block.

        Brackets and indentation are counted without reading strings or comments, so a block is
        trusted only where they cannot mislead: a bracket block must close on the first line
        that is not indented deeper than its opener (a ``"}"`` in a string would end it early),
        and an indented block must hold its triple quotes in pairs (a multi-line string's
        unindented lines would end it early)."""
        texts = self.texts
        line = texts[opener].rstrip()
        indent = len(line) - len(line.lstrip())
        end = opener + 1
        deeper = False
        while end < len(texts):
            text = texts[end]
            if text.strip():
                if len(text) - len(text.lstrip()) <= indent:
                    break
                deeper = True
            end += 1
        if line[-1:] in ("{", "(", "["):
            depth = 0
            for number in range(opener, len(texts)):
                text = texts[number]
                depth += sum(map(text.count, "{([")) - sum(map(text.count, "})]"))
                if depth <= 0:
                    return number + 1 if number == end else None
            return None
        block = texts[opener:end]
        if not deeper or any(sum(text.count(quotes) for text in block) % 2
                             for quotes in ('"""', "'''")):
            return None
        return end

    def search(
        self, pattern: Sequence[str], lower: int, upper: int, *, eof: bool = False,
        limit: int = 2,
    ) -> tuple[int, list[int]]:
        """(pass, up to ``limit`` starts) of the first pass with a match in [lower, upper) (a match
        fits before ``upper``; with ``eof`` it ends at the last line); (-1, []) when none."""
        if not pattern:
            return 0, [lower]
        for tier in self._tiers(pattern):
            wanted = self.pattern(pattern, tier)
            if eof:
                start = max(self.end - len(wanted), lower)
                if start + len(wanted) == self.end and self.keys(tier)[start:] == wanted:
                    return tier, [start]
                continue
            found = self._search(tier, wanted, lower, upper, limit)
            if found:
                return tier, found
        return -1, []


class Locator:
    """The rule over a file's decoded lines, with every error worded for an agent."""

    def __init__(self, texts: Sequence[str], display_path: str, *, first_match: bool = False,
                 index: LineIndex | None = None) -> None:
        self.texts = texts
        self.display_path = display_path
        self.first_match = first_match
        self.index = index or LineIndex(texts)

    def place(self, chunks: Sequence[Chunk]) -> list[Placement]:
        try:
            placed = place(self.index, chunks, first_match=self.first_match)
        except Missing as miss:
            raise self._missing(chunks[miss.number], miss) from None
        except Ambiguous as ambiguous:
            within = None if ambiguous.reason else self._within_blocks(chunks, ambiguous)
            if within is None:
                raise self._ambiguous(chunks, ambiguous) from None
            placed = within
        return [Placement(number, start, end - start, lines) for number, start, end, lines in placed]

    def _within_blocks(self, chunks: Sequence[Chunk], ambiguous: Ambiguous,
                       ) -> list[tuple[int, int, int, tuple[tuple[LineKind, str], ...]]] | None:
        """The block rule: where a hunk has several candidates but one of its anchors occurs once
        in the file and opens a block (by indentation or brackets) holding exactly one of them,
        that candidate is what the patch means. None unless it settles every ambiguous hunk."""
        windows: dict[int, tuple[int, int]] = {}
        for number, insertion_anchor, candidates in ambiguous.hunks:
            chunk = chunks[number]
            if insertion_anchor is not None or len(candidates) > MAX_CANDIDATES:
                return None
            size = sum(kind != "+" for kind, _ in chunk.lines)
            for anchor in reversed(chunk.anchors):
                tier, _at, pattern = self.index.first_any([anchor], 0)
                occurrences = self.index.starts(pattern, tier, 0, self.index.end, 2) if tier >= 0 else []
                if len(occurrences) != 1:
                    continue
                opener = occurrences[0]
                end = self.index.block_end(opener)
                inside = [c for c in candidates if opener <= c and c + size <= (end or 0)]
                if end is not None and len(inside) == 1:
                    windows[number] = (opener, end)
                    break
            else:
                return None
        try:
            return place(self.index, chunks, windows=windows)
        except (Missing, Ambiguous):
            return None

    def _missing(self, chunk: Chunk, miss: Missing) -> ContextNotFoundError:
        from .hints import describe_miss  # (off a one-line edit's path)

        hint = describe_miss(self.texts, miss.lines, miss.low, whole_line=miss.anchor is not None,
                             normalised=self.index.keys(3))
        if miss.anchor is not None:
            message = f"Failed to find context '{miss.anchor}' in {self.display_path}"
            details = {"anchor": miss.anchor, "closest_line": hint.closest_line}
        else:
            message = f"Failed to find expected lines in {self.display_path}:\n" + "\n".join(miss.lines)
            details = {"closest_line": hint.closest_line}
        return ContextNotFoundError(message, hint=hint.text, path=self.display_path,
                                    line=chunk.line, details=details)

    def _ambiguous(self, chunks: Sequence[Chunk], ambiguous: Ambiguous) -> AmbiguousContextError:
        described = []
        for number, anchor, found in ambiguous.hunks:
            shown = ", ".join(str(s + 1) for s in found[:MAX_CANDIDATES])
            more = " (and more)" if len(found) > MAX_CANDIDATES else ""
            subject = (f"the hunk after the @@ anchor '{anchor}', which inserts lines only,"
                       if anchor is not None else "the hunk's lines")
            described.append(f"{subject} (patch line {chunks[number].line}) match at file lines "
                             f"{shown}{more}")
        first_number, _anchor, first_found = ambiguous.hunks[0]
        return AmbiguousContextError(
            f"Ambiguous patch for {self.display_path}: " + "; ".join(described) + "."
            + (f" {ambiguous.reason}" if ambiguous.reason else ""),
            hint=("Add unchanged context lines that tell the places apart (an '@@ <line>' anchor "
                  "narrows where a hunk may be but never chooses between two matches of its "
                  "lines), so the patch matches in one place only."
                  + (" Write the anchor and the hunk's lines as the file has them (indentation "
                     "included)." if ambiguous.reason else "")),
            path=self.display_path, line=chunks[first_number].line,
            details={
                "candidate_lines": [s + 1 for s in first_found[:MAX_CANDIDATES]],
                "hunks": [{"patch_line": chunks[number].line, "anchor": anchor,
                           "candidate_lines": [s + 1 for s in found[:MAX_CANDIDATES]]}
                          for number, anchor, found in ambiguous.hunks],
            },
        )
