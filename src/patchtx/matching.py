"""Locating chunk lines in file lines: Codex's four passes, anchors, ambiguity and miss hints.

The four passes (exact; trailing whitespace ignored; surrounding whitespace ignored; Unicode
punctuation and spaces normalised) are tried in order, each over the whole search window, as Codex
does. Unlike Codex, a chunk whose text occurs more than once in its window is refused with every
candidate listed (``first_match=True`` restores Codex's first-occurrence rule). Lookups go through a
per-pass index of the file's lines, so a 200,000-line file with thousands of chunks is not rescanned
for each one.
"""

from __future__ import annotations

from ._record import record
from .errors import AmbiguousContextError, ContextNotFoundError

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Sequence

    from .model import Chunk, LineKind

_PUNCTUATION = str.maketrans(
    {
        **{c: "-" for c in "\u2010\u2011\u2012\u2013\u2014\u2015\u2212"},
        **{c: "'" for c in "\u2018\u2019\u201a\u201b"},
        **{c: '"' for c in "\u201c\u201d\u201e\u201f"},
        **{
            c: " "
            for c in "\u00a0\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a\u202f\u205f\u3000"
        },
    }
)


# Rust's char::is_whitespace (Unicode White_Space): Python's str.strip() also strips U+001C-U+001F,
# which Codex keeps, so every trim here names its characters (or checks they are absent).
WHITESPACE = ("\t\n\x0b\x0c\r \x85\xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007"
              "\u2008\u2009\u200a\u2028\u2029\u202f\u205f\u3000")
_PYTHON_ONLY_WHITESPACE = "\x1c\x1d\x1e\x1f"
"""What str.strip() strips besides Rust's set (checked against every code point in a test)."""


def strip(line: str) -> str:
    return line.strip(WHITESPACE)


def rstrip(line: str) -> str:
    return line.rstrip(WHITESPACE)




def normalise(line: str) -> str:
    line = line.strip(WHITESPACE)
    # str.translate is slow; the characters it maps are all non-ASCII.
    return line if line.isascii() else line.translate(_PUNCTUATION)


PASSES: tuple[Callable[[str], str], ...] = (
    lambda s: s,
    rstrip,
    strip,
    normalise,
)
PASS_NAMES = ("exact", "trailing whitespace ignored", "surrounding whitespace ignored",
              "Unicode punctuation normalised")
MAX_CANDIDATES = 20


class LineIndex:
    """File lines keyed per pass, built lazily: most patches never need the fuzzy passes.

    Searching scans for the pattern's longest line with ``list.index`` (a C loop), then compares
    the whole pattern there. Chunks are found near the cursor and uniqueness is checked only up to
    the next chunk, so a patch with thousands of chunks does not rescan the file for each one.
    """

    def __init__(self, texts: Sequence[str]) -> None:
        self.texts = texts
        self._keys: list[list[str] | None] = [None] * len(PASSES)
        self._all_ascii: bool | None = None
        self._plain_trim: bool | None = None

    def _trim(self, method: str) -> Callable[[str], str]:
        """``str.rstrip``/``str.strip`` with Rust's whitespace set. The argument-less methods strip
        Python's set, which is Rust's plus U+001C-U+001F, and run 2-4x faster than with a
        25-character argument (0.12 s against 0.03 s over the 200,000-line file of a miss): use
        them when no line holds one of those four characters."""
        if self._plain_trim is None:
            joined = "".join(self.texts)
            self._plain_trim = not any(c in joined for c in _PYTHON_ONLY_WHITESPACE)
        if self._plain_trim:
            trim: Callable[[str], str] = getattr(str, method)
            return trim
        from operator import methodcaller  # (only here: ~0.3 ms at start-up)

        return methodcaller(method, WHITESPACE)

    def _ascii(self) -> bool:
        if self._all_ascii is None:
            self._all_ascii = all(map(str.isascii, self.texts))
        return self._all_ascii

    def keys(self, tier: int) -> list[str]:
        keys = self._keys[tier]
        if keys is None:
            # Each pass builds on the previous one's keys, in C-level loops where it can: this is
            # the whole cost of a miss in a large file (every pass is tried).
            if tier == 0:
                # The lines themselves when they are a list already (never changed here): a copy
                # per updated file is a cost without use.
                texts = self.texts
                keys = texts if type(texts) is list else list(texts)
            elif tier == 1:
                keys = list(map(self._trim("rstrip"), self.texts))
            elif tier == 2:
                keys = list(map(self._trim("strip"), self.keys(1)))
            else:
                stripped = self.keys(2)
                if self._ascii():
                    keys = stripped  # nothing to map: the last pass equals the one before
                else:
                    keys = [k if k.isascii() else k.translate(_PUNCTUATION) for k in stripped]
            self._keys[tier] = keys
        return keys

    def search(
        self, pattern: Sequence[str], lower: int, upper: int, *, eof: bool = False,
        limit: int = 2,
    ) -> tuple[int, list[int]]:
        """Return (pass, start positions) of the first pass with a match in [lower, upper).

        A match must fit entirely before ``upper``. With ``eof`` only the position that ends the
        match at the last line is tried (never before ``lower``). No match: (-1, []).
        """
        size = len(self.texts)
        m = len(pattern)
        if m == 0:
            return 0, [lower]
        if m > size:
            return -1, []
        for tier, key_of in enumerate(PASSES):
            keys = self.keys(tier)
            if tier and keys is self._keys[tier - 1] and all(map(str.isascii, pattern)):
                continue  # same keys as the pass just tried, and an ASCII pattern maps to itself
            if tier:
                wanted = list(map(key_of, pattern))
            else:  # a list, as the slices it is compared with (the caller's list is not changed)
                wanted = pattern if type(pattern) is list else list(pattern)
            if eof:
                start = max(size - m, lower)
                if start + m <= size and keys[start : start + m] == wanted:
                    return tier, [start]
                continue
            found = _matches(keys, wanted, lower, upper, limit)
            if found:
                return tier, found
        return -1, []

    def matches_again(self, tier: int, pattern: Sequence[str], first: int, upper: int) -> bool:
        """Whether pass ``tier`` matches ``pattern`` at a start after ``first`` (fitting before
        ``upper``).

        When ``search`` found ``first`` as the first match from ``lower`` on, in pass ``tier``,
        this says whether ``search(pattern, lower, upper)`` would find more than that one match:
        the earlier passes match nowhere from ``lower`` on, and pass ``tier`` nowhere before
        ``first``, so only the lines after ``first`` need scanning, in that one pass.
        """
        if not pattern:
            return False  # an empty pattern (a retry that dropped its one blank line) is found once
        wanted = list(pattern) if tier == 0 else list(map(PASSES[tier], pattern))
        return bool(_matches(self.keys(tier), wanted, first + 1, upper, 1))


def _matches(keys: list[str], wanted: list[str], lower: int, upper: int, limit: int) -> list[int]:
    """Up to ``limit`` starts in [lower, upper) where ``keys`` hold ``wanted`` (all of it before
    ``upper``), in order; ``wanted`` is not empty."""
    m = len(wanted)
    lengths = list(map(len, wanted))
    pivot = lengths.index(max(lengths))  # the longest line: the rarest, as a rule
    needle = wanted[pivot]
    found: list[int] = []
    position = lower + pivot
    stop = min(upper, len(keys)) - m + pivot + 1
    while position < stop:
        if stop - position <= 64 and needle not in keys[position:stop]:
            break  # what index would say by raising ValueError, at twice the cost
        try:
            hit = keys.index(needle, position, stop)
        except ValueError:
            break
        start = hit - pivot
        if keys[start : start + m] == wanted:
            found.append(start)
            if len(found) >= limit:
                break
        position = hit + 1
    return found


@record
class Placement:
    """Where one chunk lands: ``length`` file lines from ``start`` are replaced by its lines."""

    chunk_index: int
    start: int
    length: int
    lines: tuple[tuple[LineKind, str], ...]


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


class NotExact(Exception):
    """The exact fast path cannot settle a file alone: the line-based path decides it, errors too."""


def framed(lines: Sequence[str]) -> bytes:
    """``lines`` as UTF-8, each between two LFs: the bytes that hold them as whole file lines in
    ``ExactLocator.framed``. A line holding an LF matches no file line exactly (nor can it be
    searched for as bytes), and one that UTF-8 cannot encode matches no decoded line. A CR is
    left to the line-based path too: the exact path only handles files and lines without one."""
    joined = "".join(lines)  # (memchr on one string: a count of the LFs costs ~8 instructions a byte)
    if "\n" in joined or "\r" in joined:
        raise NotExact
    try:
        return ("\n" + "\n".join(lines) + "\n").encode("utf-8")
    except UnicodeEncodeError:
        raise NotExact from None


def matches_in_some_pass(line: str, pattern_line: str) -> bool:
    """What ``LineIndex.search([pattern_line], i, i + 1)`` says of a file line ``line``."""
    return any(key(line) == key(pattern_line) for key in PASSES)


class ExactLocator:
    """``Locator.place`` over a file's bytes, for the common case where every search is settled by
    the exact pass: then no line list is built, and each search is one C-level ``bytes.find``.

    ``body`` is the file body (no BOM, LF endings only, the last line's too). Searches run on it
    *as if* it had an LF in front (the "framed" body, never built: a copy of a 7.6 MB file costs
    1-6 ms, mostly page faults in a fresh process): every line then lies between two LFs, so the
    lines ``i .. i+m-1`` are at framed offset ``o`` exactly when the framed pattern is found
    there, where ``o`` is the offset of the LF in front of line ``i``; framed offset ``o >= 1`` is
    body offset ``o - 1``, and framed offset 0 is the LF put in front. Positions are kept as
    framed offsets and turned into line numbers once at the end, with C-level ``bytes.count``.

    Wherever the line-based Locator would go past the exact pass (a pattern or anchor with no exact
    match, the retry without a trailing blank line) or raise (an ambiguous match), this raises
    ``NotExact`` instead, so that the line-based path places the file and words any error.
    """

    def __init__(self, body: bytes, *, first_match: bool = False) -> None:
        self.body = body
        self.first_match = first_match

    def _find(self, pattern: bytes, start: int, end: int | None = None) -> int:
        """``(b"\\n" + body).find(pattern, start, end)`` for a framed ``pattern``."""
        body = self.body
        if start == 0 and body.startswith(pattern[1:]) and (end is None or len(pattern) <= end):
            return 0
        found = body.find(pattern, start - 1 if start else 0, None if end is None else end - 1)
        return found + 1 if found >= 0 else -1

    def _ends_with(self, pattern: bytes) -> bool:
        """``(b"\\n" + body).endswith(pattern)`` for a framed ``pattern``."""
        body = self.body
        return body.endswith(pattern) or (len(pattern) == len(body) + 1 and body == pattern[1:])

    def _count_breaks(self, start: int, stop: int) -> int:
        """``(b"\\n" + body).count(b"\\n", start, stop)``."""
        if stop <= start:
            return 0
        if start == 0:
            return 1 + self.body.count(b"\n", 0, stop - 1)
        return self.body.count(b"\n", start - 1, stop - 1)

    def place(self, chunks: Sequence[Chunk]) -> list[tuple[int, int, Placement]]:
        """(offset of the LF in front of the first replaced line, offset where the lines after
        the replaced ones start, placement) of every chunk, in file order."""
        find = self._find
        framed_size = len(self.body) + 1
        end_offset = framed_size - 1  # the LF after the last line: "in front of" line ``size``
        placed: list[tuple[int, int, int, int, tuple[tuple[LineKind, str], ...]]] = []
        # (item, pattern, offset of its first match) of each uniqueness check.
        pending_checks: list[tuple[int, bytes, int]] = []
        starts: list[int] = []  # offset of each placed item, the upper bound of the one before
        cursor = 0
        for number, chunk in enumerate(chunks):
            first_item: int | None = None
            anchor_at = 0  # (read only when the chunk has anchors, which set it)
            for depth, anchor in enumerate(chunk.anchors):
                pattern = framed([anchor])
                anchor_at = find(pattern, cursor)
                if anchor_at < 0:
                    raise NotExact
                if depth == 0:
                    pending_checks.append((len(starts), pattern, anchor_at))
                    first_item = anchor_at
                cursor = anchor_at + len(pattern) - 1
            lines = chunk.lines
            old = [text for kind, text in lines if kind != "+"]
            if chunk.anchors and old and matches_in_some_pass(chunk.anchors[-1], old[0]):
                # The chunk repeats its anchor line (found exactly, so it is the anchor's text).
                cursor = anchor_at
            if not old:
                at = cursor if chunk.anchors else end_offset
                placed.append((at, at + 1, number, 0, lines))
                if first_item is not None:  # set by the first anchor, when there is one
                    starts.append(first_item)
                continue
            pattern = framed(old)
            if chunk.is_end_of_file:
                # Only the position that ends at the last line, and not before the cursor.
                at = framed_size - len(pattern)
                if at < cursor or not self._ends_with(pattern):
                    raise NotExact
            else:
                at = find(pattern, cursor)
                if at < 0:
                    raise NotExact
                if not chunk.anchors:
                    pending_checks.append((len(starts), pattern, at))
            starts.append(first_item if first_item is not None else at)
            cursor = at + len(pattern) - 1
            placed.append((at, cursor + 1, number, len(old), lines))
        if not self.first_match:
            for item, pattern, first in pending_checks:
                upper = starts[item + 1] if item + 1 < len(starts) else end_offset
                # A second match from the line after the first on, ending by ``upper``.
                if find(pattern, first + 1, upper + 1) >= 0:
                    raise NotExact
        placed.sort(key=lambda p: p[0])  # stable: chunks placed at one line keep their order
        out: list[tuple[int, int, Placement]] = []
        line = offset = 0
        for at, after, number, length, lines in placed:
            line += self._count_breaks(offset, at)
            offset = at
            out.append((at, after, Placement(number, line, length, lines)))
        return out


class Locator:
    """Places every chunk of one file update, in file order."""

    def __init__(self, texts: Sequence[str], display_path: str, *, first_match: bool = False,
                 index: LineIndex | None = None) -> None:
        self.texts = texts
        self.display_path = display_path
        self.first_match = first_match
        self.index = index or LineIndex(texts)

    def place(self, chunks: Sequence[Chunk]) -> list[Placement]:
        placements: list[Placement] = []
        # (item, pattern, lower, chunk, what, pass, first match) of each uniqueness check.
        pending_checks: list[tuple[int, Sequence[str], int, Chunk, str, int, int]] = []
        cursor = 0
        size = len(self.texts)
        # Each uniqueness check needs the start of the next placed item as its upper bound.
        starts: list[int] = []
        for number, chunk in enumerate(chunks):
            first_item: int | None = None
            for depth, anchor in enumerate(chunk.anchors):
                tier, found = self.index.search([anchor], cursor, size, limit=1)
                if not found:
                    raise self._anchor_missing(chunk, anchor, cursor)
                if depth == 0:
                    pending_checks.append((len(starts), [anchor], cursor, chunk, "anchor", tier,
                                           found[0]))
                    first_item = found[0]
                cursor = found[0] + 1
            lines = chunk.lines
            old = [text for kind, text in lines if kind != "+"]
            if chunk.anchors and old and self.index.search(old[:1], cursor - 1, cursor)[1]:
                # The chunk repeats its anchor line as its first line (a common way to write it):
                # it starts at the anchor, not at the next copy of that line further down.
                cursor -= 1
            if not old:
                position = cursor if chunk.anchors else size
                placements.append(Placement(number, position, 0, lines))
                if chunk.anchors:
                    starts.append(first_item if first_item is not None else position)
                continue
            tier, found = self.index.search(old, cursor, size, eof=chunk.is_end_of_file, limit=1)
            if not found:
                retry = _without_trailing_blank(lines)
                if retry is not None:
                    retry_old = [text for kind, text in retry if kind != "+"]
                    tier, found = self.index.search(retry_old, cursor, size,
                                                    eof=chunk.is_end_of_file, limit=1)
                    if found:
                        lines, old = retry, retry_old
            if not found:
                raise self._lines_missing(chunk, old, cursor)
            start = found[0]
            if not chunk.anchors and not chunk.is_end_of_file:
                pending_checks.append((len(starts), old, cursor, chunk, "lines", tier, start))
            starts.append(first_item if first_item is not None else start)
            placements.append(Placement(number, start, len(old), lines))
            cursor = start + len(old)
        if not self.first_match:
            for item, pattern, lower, chunk, what, tier, first in pending_checks:
                upper = starts[item + 1] if item + 1 < len(starts) else size
                # Only a second match makes a check fail; look for one where it can be, and list
                # every candidate (the full search) only then.
                if not self.index.matches_again(tier, pattern, first, upper):
                    continue
                _tier, found = self.index.search(pattern, lower, upper, limit=MAX_CANDIDATES + 1)
                if len(found) > 1:
                    raise self._ambiguous(chunk, pattern, found, what)
        placements.sort(key=lambda p: p.start)
        return placements

    # -- errors an agent can act on ------------------------------------------------------------
    def _anchor_missing(self, chunk: Chunk, anchor: str, cursor: int) -> ContextNotFoundError:
        from .hints import describe_miss

        hint = describe_miss(self.texts, [anchor], cursor, whole_line=True,
                             normalised=self.index.keys(3))
        return ContextNotFoundError(
            f"Failed to find context '{anchor}' in {self.display_path}",
            hint=hint.text, path=self.display_path, line=chunk.line,
            details={"anchor": anchor, "closest_line": hint.closest_line},
        )

    def _lines_missing(self, chunk: Chunk, old: list[str], cursor: int) -> ContextNotFoundError:
        from .hints import describe_miss

        hint = describe_miss(self.texts, old, cursor, normalised=self.index.keys(3))
        return ContextNotFoundError(
            f"Failed to find expected lines in {self.display_path}:\n" + "\n".join(old),
            hint=hint.text, path=self.display_path, line=chunk.line,
            details={"closest_line": hint.closest_line},
        )

    def _ambiguous(self, chunk: Chunk, pattern: Sequence[str], found: list[int],
                   what: str) -> AmbiguousContextError:
        shown = found[:MAX_CANDIDATES]
        lines = ", ".join(str(s + 1) for s in shown)
        more = " (and more)" if len(found) > MAX_CANDIDATES else ""
        subject = f"the @@ anchor '{pattern[0]}'" if what == "anchor" else "the hunk's lines"
        return AmbiguousContextError(
            f"Ambiguous patch for {self.display_path}: {subject} (patch line {chunk.line}) "
            f"match at file lines {lines}{more}.",
            hint=("Add more unchanged context lines, or an '@@ <line>' anchor naming a unique line "
                  "above the change (several '@@' lines may be stacked, each found after the "
                  "previous one), so the patch matches in one place only."),
            path=self.display_path, line=chunk.line,
            details={"candidate_lines": [s + 1 for s in shown]},
        )
