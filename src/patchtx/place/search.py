"""Where a pattern of lines stands in a list of keys: the one exact search under every pass of
the placement rule (``matching.LineIndex``), the unified placement's search by stated line and the
blocks' shifted pass.

``matches`` finds the starts by the pattern's longest line (``list.index``, in C) and verifies the
whole pattern there, falling back to Knuth-Morris-Pratt (``matches_linearly``) where that line
stands everywhere; ``matches_indexed`` and ``last_indexed`` answer the same from an index of where
each key stands (``occurrences``), which a ``LineIndex`` builds once its searches have scanned the
file ``INDEX_AFTER`` times over (a patch of thousands of hunks placed again, one at a time, by a
repair or the already-applied question).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, TypeVar

if TYPE_CHECKING:
    from collections.abc import Sequence

Key = TypeVar("Key", str, tuple[str, Any])
"""What ``matches`` compares: a line's key, or one paired with more (``block_placement``)."""
VERIFY_BUDGET = 2
"""How many lines ``matches`` may compare, per line it searches, at the starts where it finds the
pattern's longest line, before it searches the rest linearly (``matches_linearly``)."""


def matches(keys: list[Key], wanted: list[Key], lower: int, upper: int, limit: int) -> list[int]:
    """Up to ``limit`` starts in [lower, upper) where ``keys`` hold ``wanted`` (all of it before
    ``upper``), in order; ``wanted`` is not empty.

    The pattern's longest line is looked for with ``list.index`` (in C, and rare as a rule), the
    whole pattern compared where it stands. In a file where that line is everywhere (a file of
    one repeated line, a hunk that matches all but its last line at every start, or everywhere
    when all starts are asked for) each of those comparisons costs up to the pattern's length:
    once they have cost ``VERIFY_BUDGET`` times the lines searched, the rest of the range is
    searched by ``matches_linearly``, which compares each line a bounded number of times
    whatever the pattern (the same starts, found in linear time instead of in the product of
    the two lengths)."""
    m = len(wanted)
    if m == 0:
        return [lower] if lower <= upper else []
    lengths = [len(key) for key in wanted]  # (a line, or a line paired with more)
    pivot = lengths.index(max(lengths))  # the longest line: the rarest, as a rule
    needle = wanted[pivot]
    found: list[int] = []
    position = lower + pivot
    stop = min(upper, len(keys)) - m + pivot + 1
    budget = VERIFY_BUDGET * (stop - position + m)  # lines compared where the pattern did not stand
    while position < stop:
        if stop - position <= 64 and needle not in keys[position:stop]:
            break  # what index would say by raising ValueError, without the exception
        try:
            hit = keys.index(needle, position, stop)
        except ValueError:
            break
        start = hit - pivot
        if keys[start : start + m] == wanted:
            found.append(start)
            if len(found) >= limit:
                break
        budget -= m
        if budget < 0:
            found += matches_linearly(keys, wanted, start + 1, stop - pivot, limit - len(found))
            break
        position = hit + 1
    return found


INDEX_AFTER = 8
"""How many times a file's length the searches of one ``LineIndex`` scan before it indexes where
each key stands (``LineIndex._search``): past one-off searches, never for a small patch."""
INDEXED_CANDIDATES = 64
"""The most starts ``matches_indexed`` verifies in one search; past it (a pattern of lines that
stand everywhere) the search is ``matches``'s, linear whatever the repeats."""


def occurrences(keys: list[str]) -> dict[str, list[int]]:
    """Each key -> the ascending positions where it stands."""
    where: dict[str, list[int]] = {}
    for position, key in enumerate(keys):
        at = where.get(key)
        if at is None:
            where[key] = [position]
        else:
            at.append(position)
    return where


def _rarest(where: dict[str, list[int]], wanted: list[str]) -> tuple[int, list[int]]:
    """(index in ``wanted``, positions) of the pattern line that stands least often."""
    pivot, positions = 0, where.get(wanted[0], [])
    for index in range(1, len(wanted)):
        if not positions:
            break
        at = where.get(wanted[index], [])
        if len(at) < len(positions):
            pivot, positions = index, at
    return pivot, positions


def matches_indexed(keys: list[str], where: dict[str, list[int]], wanted: list[str], lower: int,
                     upper: int, limit: int) -> list[int] | None:
    """``matches``'s answer from the positions of the pattern's rarest line: every start where
    the pattern stands has that line at the same offset, so those positions, in order, verified,
    are the starts in order. None when more than ``INDEXED_CANDIDATES`` would be verified."""
    from bisect import bisect_left  # (off a one-line edit's path: only for an indexed file)

    m = len(wanted)
    if m == 0:
        return [lower] if lower <= upper else []
    pivot, positions = _rarest(where, wanted)
    stop = min(upper, len(keys)) - m + pivot + 1
    first = bisect_left(positions, lower + pivot)
    if bisect_left(positions, stop, first) - first > INDEXED_CANDIDATES:
        return None
    found: list[int] = []
    for position in positions[first:]:
        if position >= stop:
            break
        start = position - pivot
        if keys[start : start + m] == wanted:
            found.append(start)
            if len(found) >= limit:
                break
    return found


def last_indexed(keys: list[str], where: dict[str, list[int]], wanted: list[str], low: int,
                  high: int) -> int | None:
    """``LineIndex.last`` from an index: the last start in [low, high - len(wanted)] (-1: none);
    None when more than ``INDEXED_CANDIDATES`` would be verified."""
    from bisect import bisect_left  # (off a one-line edit's path: only for an indexed file)

    m = len(wanted)
    pivot, positions = _rarest(where, wanted)
    stop = min(high, len(keys)) - m + pivot + 1
    first, end = bisect_left(positions, low + pivot), bisect_left(positions, stop)
    if end - first > INDEXED_CANDIDATES:
        return None
    for index in range(end - 1, first - 1, -1):
        start = positions[index] - pivot
        if keys[start : start + m] == wanted:
            return start
    return -1


def matches_linearly(keys: list[Key], wanted: list[Key], first: int, stop: int,
                      limit: int) -> list[int]:
    """Up to ``limit`` starts in [first, stop) where ``keys`` hold ``wanted``, in order, by
    Knuth-Morris-Pratt: each line of ``keys`` is compared at most twice (amortised), so the
    search is linear in the lines searched plus the pattern's length, where ``matches``'s
    comparison at each start is their product."""
    m = len(wanted)
    # fallback[j]: the length of the longest proper prefix of wanted[:j + 1] that is also its suffix.
    fallback = [0] * m
    k = 0
    for j in range(1, m):
        while k and wanted[j] != wanted[k]:
            k = fallback[k - 1]
        if wanted[j] == wanted[k]:
            k += 1
        fallback[j] = k
    found: list[int] = []
    matched = 0  # how many of wanted's lines end at the current line
    end = stop + m - 1  # (the last start is stop - 1: its last line is stop + m - 2)
    for at in range(first, min(end, len(keys))):
        key = keys[at]
        while matched and key != wanted[matched]:
            matched = fallback[matched - 1]
        if key == wanted[matched]:
            matched += 1
            if matched == m:
                found.append(at - m + 1)
                if len(found) >= limit:
                    break
                matched = fallback[m - 1]
    return found


def starts_of(texts: Sequence[str], old: list[str], lower: int, upper: int) -> list[int]:
    """Every start in ``lower..upper`` (inclusive) where ``old`` (not empty) matches: the exact
    pass's search (``matches``, linear in the lines searched whatever their repeats)."""
    lines = texts if type(texts) is list else list(texts)
    return matches(lines, old, lower, upper + len(old), len(lines) + 1)
