"""Where exact text replacements go (a patch of the ``"text"`` format: the text editor's
``str_replace`` and ``insert``, an edit list's edits), as placements of the file's lines.

A replacement's old text may start and end anywhere in a line and span several. It is found in the
file's text as it is, as ``str.replace`` finds it (a BOM aside, a CR LF read as the LF a model
writes; a lone CR is a character, no line break: ``text_of``), by the one placement rule
(``matching.place`` over ``TextIndex``): it must stand exactly once (several in one update: in
order, each after the one before, in one placement only). An ``every`` replacement
(``replace_all``) takes every occurrence, at least one, as ``str.replace`` does. An insertion
(``stated_line``) goes after that line (0: before the first).

Each replacement then becomes a placement of whole lines, the lines it touches replaced by those
lines as the replacement leaves them, so the rewrite (``rewrite``) is the one of every format: the
lines it does not touch keep their bytes and endings, a line changed inside keeps its own ending,
line breaks the new text brings take the file's dominant ending, and the file's final newline is
what the replaced text makes of it.
"""

from __future__ import annotations

from bisect import bisect_right
from typing import TYPE_CHECKING

from ..errors import AmbiguousContextError, ContextNotFoundError
from ..place.matching import MAX_CANDIDATES, Ambiguous, Missing, Placement, place
from ..place.placer import Placed, Placer
from ..place.textfile import split_text
from .registry import Format
from .search_replace import block_lines

if TYPE_CHECKING:
    from collections.abc import Sequence

    from ..model import Chunk, LineKind
    from ..place.matching import LineIndex
    from ..place.placer import UpdateRule
    from ..place.textfile import TextFile

FORMAT = "text"


class TextIndex:
    """A ``matching.SearchSpace`` over a text: positions are character offsets, a pattern is the
    one text a replacement looks for."""

    blank_retry = False  # (an old text is found as it is, or not at all)

    def __init__(self, text: str) -> None:
        self.text = text
        self.end = len(text)
        self.passes = 1  # (the exact text only)

    def pattern(self, lines: Sequence[str], tier: int) -> str:
        return lines[0]

    def span(self, pattern: str) -> int:
        return len(pattern)

    def first_any(self, lines: Sequence[str], low: int) -> tuple[int, int, str]:
        at = self.text.find(lines[0], low)
        return (0, at, lines[0]) if at >= 0 else (-1, -1, "")

    def ending_any(self, lines: Sequence[str], low: int) -> tuple[int, int, str]:
        at = self.end - len(lines[0])
        ok = at >= low and self.text.endswith(lines[0])
        return (0, at, lines[0]) if ok else (-1, -1, "")

    def last(self, pattern: str, tier: int, low: int, high: int) -> int:
        return self.text.rfind(pattern, low, high)

    def starts(self, pattern: str, tier: int, low: int, high: int, limit: int) -> list[int]:
        found: list[int] = []
        at = self.text.find(pattern, low, high)
        while at >= 0 and len(found) < limit:
            found.append(at)
            at = self.text.find(pattern, at + 1, high)
        return found


def text_of(original: TextFile) -> str:
    """The file's text as a replacement sees it: each line with its line break, a CR LF read as
    LF (a replacement's LF matches it), a lone CR kept as the character it is (no line break, as
    ``str.replace`` sees it); a BOM aside. Each line's break is one character of it, so line
    ``i`` starts where its lines before it end in ``len(text) + 1`` each."""
    texts, endings = original.texts, original.endings
    if "\r" not in endings:
        text = "\n".join(texts)
        return text + "\n" if texts and original.ends_with_newline else text
    return "".join(line + ("\r" if ending == "\r" else "\n" if ending else "")
                   for line, ending in zip(texts, endings, strict=True))


def line_of(text: str, offset: int) -> int:
    """The 1-based line of ``text`` (``text_of``) that holds ``offset``, counted as the file's
    lines are (a lone CR ends one too)."""
    return text.count("\n", 0, offset) + text.count("\r", 0, offset) + 1


def place_text(original: TextFile, chunks: Sequence[Chunk], display: str, *,
               first_match: bool = False) -> tuple[list[Placement], bool | None]:
    """The placements of an update's text replacements, and whether the new file ends with a line
    break (None: as the old one does). Raise ``ContextNotFoundError`` (the old text is nowhere,
    an insertion's line is past the end) or ``AmbiguousContextError`` (it stands more than once)."""
    text = text_of(original)
    if len(chunks) == 1 and chunks[0].stated_line is not None:
        return _insertion(original, chunks[0], display), None
    if len(chunks) == 1 and chunks[0].every:
        spans = _every(text, chunks[0], display)
    else:
        try:
            placed = place(TextIndex(text), chunks, first_match=first_match)
        except Missing as miss:
            raise not_found(text, chunks[miss.number], display) from None
        except Ambiguous as ambiguous:
            number, _anchor, found = ambiguous.hunks[0]
            raise several_found(text, chunks[number], display, found) from None
        spans = [(start, end, _new(lines)) for _number, start, end, lines in placed]
    return _line_placements(original, text, spans)


def _old(chunk: Chunk) -> str:
    return next(text for kind, text in chunk.lines if kind == "-")


def _new(lines: Sequence[tuple[LineKind, str]]) -> str:
    return next((text for kind, text in lines if kind == "+"), "")


def _every(text: str, chunk: Chunk, display: str) -> list[tuple[int, int, str]]:
    old, new = _old(chunk), _new(chunk.lines)
    spans = []
    at = text.find(old)
    while at >= 0:
        spans.append((at, at + len(old), new))
        at = text.find(old, at + len(old))
    if not spans:
        raise not_found(text, chunk, display)
    return spans


def not_found(text: str, chunk: Chunk, display: str) -> ContextNotFoundError:
    old, new = _old(chunk), _new(chunk.lines)
    hint = ("The old text must appear in the file exactly as given, white space, tabs and line "
            "breaks included: view the file, then copy the text from it.")
    closest = None
    first_line = old.split("\n", 1)[0].strip()
    if first_line and first_line in text:
        closest = line_of(text, text.find(first_line))
        hint = (f"Its first line stands at file line {closest}, but the rest differs. " + hint)
    if new and new != old and text.count(new) == 1:
        hint += (f" The new text already stands at line {line_of(text, text.find(new))}: the edit "
                 "may have been made already.")
    return ContextNotFoundError(
        f"No replacement was performed, old_str `{old}` did not appear verbatim in {display}.",
        hint=hint, path=display, line=chunk.line or None, details={"closest_line": closest})


def several_found(text: str, chunk: Chunk, display: str, found: Sequence[int]) -> AmbiguousContextError:
    old = _old(chunk)
    starts = list(found[:MAX_CANDIDATES + 1])
    if len(starts) <= MAX_CANDIDATES:  # every occurrence, as the reference's message lists them
        starts = TextIndex(text).starts(old, 0, 0, len(text), MAX_CANDIDATES + 1)
    lines = sorted({line_of(text, at) for at in starts[:MAX_CANDIDATES]})
    more = " and more" if len(starts) > MAX_CANDIDATES else ""
    return AmbiguousContextError(
        f"No replacement was performed. Multiple occurrences of old_str `{old}` in lines "
        f"{lines}{more}. Please ensure it is unique.",
        hint="Include more of the surrounding text in the old text so it appears exactly once.",
        path=display, line=chunk.line or None,
        details={"candidate_lines": lines, "occurrences": len(starts) if not more else None})


def _insertion(original: TextFile, chunk: Chunk, display: str) -> list[Placement]:
    after = chunk.stated_line
    assert after is not None
    size = len(original.texts)
    if not 0 <= after <= size:
        raise ContextNotFoundError(
            f"Invalid `insert_line` parameter: {after}. It should be within the range of allowed "
            f"values: [0, {size}] (the file has {size} line{'s' if size != 1 else ''}).",
            hint="insert_line is the line the text goes after (0: the top of the file).",
            path=display, line=chunk.line or None, details={"closest_line": None})
    new = _new(chunk.lines)
    lines = new[:-1].split("\n") if new.endswith("\n") else new.split("\n")
    return [Placement(0, after, 0, tuple(("+", line) for line in lines))]


def _line_placements(original: TextFile, text: str, spans: list[tuple[int, int, str]],
                     ) -> tuple[list[Placement], bool | None]:
    """Character spans ``(start, end, new text)`` of ``text`` (in order, apart) as placements of
    whole lines: each run of touched lines, with the text around the spans on those lines.

    The run's new lines are its bytes as ``str.replace`` leaves them: its lines with their own
    endings, the spans replaced (a line break of a new text takes the file's dominant ending),
    split where the file's lines are split; lines the run keeps alike, ending included, are
    context, and each added line carries its ending (``Placement.endings``)."""
    texts, endings = original.texts, original.endings
    dominant = original.dominant_ending
    starts = [0]
    for line in texts[:-1]:
        starts.append(starts[-1] + len(line) + 1)

    def line_end(number: int) -> int:  # past the line's break, if it has one
        return starts[number + 1] if number + 1 < len(texts) else len(text)

    def raw(first: int, last: int, group: Sequence[tuple[int, int, str]]) -> str:
        """Lines ``first..last`` as the file has them, endings included, the spans replaced."""
        lines = [texts[k] + endings[k] for k in range(first, last + 1)]
        offsets = [0]
        for line in lines:
            offsets.append(offsets[-1] + len(line))

        def at(offset: int) -> int:  # a text offset inside the run -> its offset in ``lines``
            if offset >= line_end(last):
                return offsets[-1]
            k = bisect_right(starts, offset) - 1
            return offsets[k - first] + offset - starts[k]

        return _spliced("".join(lines), [(at(start), at(end), new if dominant == "\n" else
                                          new.replace("\n", dominant)) for start, end, new in group])

    placements: list[Placement] = []
    index = 0
    while index < len(spans):
        first = bisect_right(starts, spans[index][0]) - 1
        last = bisect_right(starts, max(spans[index][1] - 1, spans[index][0])) - 1
        group = [spans[index]]
        index += 1
        while True:
            # Spans on lines this run holds join it; so does the line after it when the run's
            # new text would run into it (its line break replaced by text that has none).
            while index < len(spans) and bisect_right(starts, spans[index][0]) - 1 <= last:
                group.append(spans[index])
                last = max(last, bisect_right(starts, spans[index][1] - 1) - 1)
                index += 1
            new_text = raw(first, last, group)
            if (new_text and not new_text.endswith(("\n", "\r")) and endings[last]
                    and last + 1 < len(texts)):
                last += 1
                continue
            break
        new_texts, new_endings = split_text(new_text)
        old_keys = [line + ending for line, ending in zip(texts[first:last + 1], endings[first:last + 1],
                                                          strict=True)]
        keyed = block_lines(old_keys, list(map(str.__add__, new_texts, new_endings)))
        placements.append(Placement(
            len(placements), first, last + 1 - first,
            tuple((kind, key.rstrip("\r\n")) for kind, key in keyed),
            tuple(key[len(key.rstrip("\r\n")):] for kind, key in keyed if kind == "+")))
    final = _spliced(text, spans)
    return placements, (final.endswith(("\n", "\r")) if final else None)


def _spliced(text: str, spans: Sequence[tuple[int, int, str]]) -> str:
    """``text`` with the spans (in order, apart) replaced."""
    pieces, position = [], 0
    for start, end, new in spans:
        pieces += [text[position:start], new]
        position = end
    pieces.append(text[position:])
    return "".join(pieces)


# -- the text replacements' placer and their Format ----------------------------------------------
def _by_text(original: TextFile, index: LineIndex, chunks: Sequence[Chunk], rule: UpdateRule,
             display: str) -> Placed:
    placements, ends_with_newline = place_text(original, chunks, display, first_match=rule.first_match)
    return Placed(placements, ends_with_newline)


TEXT = Format(
    FORMAT, Placer(_by_text, asks_applied=False), "edit", "the edit", added_at="the new text",
    replaces_text=True, decorated=True,
    no_change="Give the text as it should become, or leave the edit out if the file already holds "
              "what you meant.",
    no_change_said="its new text is its old text")
"""Exact text replacements (the text editor's, an edit list's): made by a tool call, never read
from patch text."""
