"""Where SEARCH/REPLACE blocks go: the one placement rule (``matching.place``), searched in the
passes this format allows, with every loose match reported.

A file's blocks are placed as a patch's hunks are: in order, each after the block before it, and
the reply applies only when exactly one such placement exists. Aider applies them one after
another instead, each where its SEARCH lines first stand in the file as the blocks before it left
it; so each block's lines must also stand exactly once there (``_check_in_turn``), and a block is
never placed at a copy aider would not change. A block whose SEARCH lines stand only in what an
earlier block of the reply wrote (a block that edits the lines a block before it put there) is
placed one block after another (``_one_after_another``): each block by the same rule in the file
as the blocks before it leave it, exactly once there, after the lines the block before it wrote or
within lines an earlier block wrote. Each block is found in the first of
three passes that finds it from where it may start:

0. exactly;
1. with trailing white space ignored (the file's lines keep theirs where the block leaves them);
2. with its indentation shifted as a whole: every non-blank SEARCH line is the file's line with the
   same leading white space added (or taken away) in front, the rest of each line equal but for
   trailing white space. The block's REPLACE lines are shifted alike, so a model that wrote a
   method's body without its class's indentation still writes correctly indented code.

Codex's looser passes (white space around each line ignored line by line, Unicode punctuation
folded) are not used: lines indented differently one by one do not say how the REPLACE lines should
be indented. Nor is its retry without a last blank line (``BlockIndex.blank_retry``): a SEARCH
stands as written. A block matched in pass 1 or 2 is reported (``notes``) as well as placed.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..errors import AmbiguousContextError, ContextNotFoundError, PatchtxError
from ..place.hints import describe_miss
from ..place.matching import MAX_CANDIDATES, Ambiguous, LineIndex, Missing, Placement, place
from ..place.normalise import SAME, hunk_suffix, indentation, line_shift, one_shift, shifted, spell_indentation, strip
from ..place.search import VERIFY_BUDGET, matches

if TYPE_CHECKING:
    from collections.abc import Iterable, Iterator, Sequence

    from ..model import Chunk, LineKind
    from ..place.normalise import Shift
    from ..place.textfile import TextFile

SHIFTED = 2
"""The pass that matches a block with its indentation shifted as a whole."""


class _Shifted(list):  # type: ignore[type-arg]
    """A pass-2 pattern: the stripped lines (compared with the file's stripped lines) and the
    lines as the block wrote them (for the shift of their indentation)."""

    raw: Sequence[str]


def shift_between(file_lines: Sequence[str], block_lines: Sequence[str]) -> Shift | None:
    """How the block's lines are the file's with one shift of indentation (``normalise.one_shift``,
    the rule every loosely matched hunk follows): ``("+", text)`` when the file has ``text`` more in
    front of every non-blank line, ``("-", text)`` when it has that much less; None when the lines
    differ otherwise, or not at all (blank lines are not compared: their white space says
    nothing)."""
    pairs = list(zip(file_lines, block_lines, strict=True))
    if any(strip(in_file) != strip(in_block) for in_file, in_block in pairs):
        return None
    shift = one_shift(pairs)
    return None if shift == SAME else shift


class BlockIndex(LineIndex):
    """A file's lines searched in the three passes of SEARCH/REPLACE blocks (see the module)."""

    blank_retry = False  # (a SEARCH ending with a blank line the file lacks does not stand there)

    def __init__(self, texts: Sequence[str], *, source: bytes | None = None) -> None:
        super().__init__(texts, passes=SHIFTED + 1, source=source)
        self._relation_cache: tuple[list[int], list[tuple[str, str] | None]] | None = None
        self._keyed: list[tuple[str, tuple[str, str] | None]] | None = None

    def pattern(self, lines: Sequence[str], tier: int) -> list[str]:
        if tier != SHIFTED:
            return super().pattern(lines, tier)
        wanted = _Shifted(map(strip, lines))
        wanted.raw = lines
        return wanted

    def _fits(self, pattern: list[str], tier: int, start: int) -> bool:
        if tier != SHIFTED:
            return True
        found = self.texts[start : start + len(pattern)]
        raw = pattern.raw  # type: ignore[attr-defined]
        # ``shift_between`` without its first question: the lines are equal white space aside
        # where this pass finds them. (Asked again at every start of a file of one repeated line,
        # it would cost the block's length there even where the shift disagrees at once.)
        shift = one_shift(zip(found, raw, strict=True))
        return shift is not None and shift != SAME

    def _hits(self, pattern: list[str], tier: int, low: int, high: int) -> Iterator[int]:
        """Every start in [low, high) where ``pattern`` holds in pass ``tier``, in order.

        In the shifted pass each start where the lines are equal white space aside is asked for
        one shift of indentation; where that costs (a file of one repeated line, a block whose
        last line alone is shifted otherwise) more than ``VERIFY_BUDGET`` times the lines
        searched, the rest is found by ``_shifted_starts``, in linear time."""
        budget = VERIFY_BUDGET * (high - low + len(pattern))
        while True:
            found = super().starts(pattern, tier, low, high, 64)
            for start in found:
                if tier == SHIFTED:
                    budget -= len(pattern)
                    if budget < 0:
                        yield from self._shifted_starts(pattern, start, high)
                        return
                if self._fits(pattern, tier, start):
                    yield start
            if len(found) < 64:
                return
            low = found[-1] + 1

    def _shifted_starts(self, pattern: list[str], low: int, high: int) -> Iterator[int]:
        """The starts ``_fits`` takes in [low, high - len(pattern)], in order, in time linear in
        the lines searched: the block's lines are the file's with one shift of indentation (a
        prefix added, or taken away) exactly when they are equal white space aside, the first
        non-blank pair shows a shift, and each later non-blank line stands to the non-blank line
        before it as in the block (``_relations``: a prefix added in front of two indentations
        leaves what follows their common part as it was). So the file's lines and their
        relations, paired, are searched for the block's (``search.matches``, linear), the
        first non-blank line's relation (to a line before the block) aside."""
        raw = pattern.raw  # type: ignore[attr-defined]
        first = next((j for j, line in enumerate(pattern) if line), None)
        if first is None:
            return  # (blank lines show no shift)
        stripped = self.keys(SHIFTED)
        blanks_before, relations = self._relations()
        wanted = list(zip(pattern[first + 1:], _relations_of(pattern, raw)[first + 1:], strict=True))
        if wanted:
            keyed = self._keyed
            assert keyed is not None
            ends = matches(keyed, wanted, low + first + 1, high, len(keyed) + 1)
            starts: Iterable[int] = (end - first - 1 for end in ends)
        else:
            starts = matches(stripped, [pattern[first]], low + first, high, len(stripped) + 1)
            starts = (at - first for at in starts)
        for start in starts:
            at = start + first
            if blanks_before[at] < first or stripped[at] != pattern[first]:
                continue
            shift = line_shift(self.texts[at], raw[first])
            if shift is not None and shift != SAME:
                yield start

    def _relations(self) -> tuple[list[int], list[tuple[str, str] | None]]:
        """For each file line, how many blank lines (white space aside) stand right before it,
        and its relation to the non-blank line before it (``_relations_of``); the lines and
        relations paired are kept for the search (``_keyed``)."""
        if self._relation_cache is None:
            stripped = self.keys(SHIFTED)
            blanks_before, run = [], 0
            for line in stripped:
                blanks_before.append(run)
                run = run + 1 if not line else 0
            relations = _relations_of(stripped, self.texts)
            self._keyed = list(zip(stripped, relations, strict=True))
            self._relation_cache = (blanks_before, relations)
        return self._relation_cache

    def first_any(self, lines: Sequence[str], low: int) -> tuple[int, int, list[str]]:
        if not lines:
            return 0, low, []
        for tier in range(self.passes):
            wanted = self.pattern(lines, tier)
            for start in self._hits(wanted, tier, low, self.end):
                return tier, start, wanted
        return -1, -1, []

    def last(self, pattern: list[str], tier: int, low: int, high: int) -> int:
        if tier != SHIFTED:
            return super().last(pattern, tier, low, high)
        if not pattern:
            return low
        hits = list(self._hits(pattern, tier, low, high))
        return hits[-1] if hits else -1

    def starts(self, pattern: list[str], tier: int, low: int, high: int, limit: int) -> list[int]:
        out: list[int] = []
        for start in self._hits(pattern, tier, low, high):
            out.append(start)
            if len(out) >= limit:
                break
        return out


def _relations_of(stripped: Sequence[str], lines: Sequence[str]) -> list[tuple[str, str] | None]:
    """For each non-blank line, its indentation and the indentation of the non-blank line before
    it, each without their common start (None for a blank line; the first non-blank line is
    compared with no indentation)."""
    out: list[tuple[str, str] | None] = []
    before = ""
    for line, text in zip(stripped, lines, strict=True):
        if not line:
            out.append(None)
            continue
        own = indentation(text)
        common = 0
        limit = min(len(own), len(before))
        while common < limit and own[common] == before[common]:
            common += 1
        out.append((before[common:], own[common:]))
        before = own
    return out


def place_blocks(original: TextFile, chunks: Sequence[Chunk], display: str, *,
                 first_match: bool = False, index: LineIndex | None = None,
                 ) -> tuple[list[Placement], list[str]]:
    """The placements of a file's blocks (``chunks``, in order), each block's REPLACE lines
    shifted as its SEARCH lines were, and a note for each block that did not match exactly (a
    sentence without the file's name). Raise ``ContextNotFoundError`` or
    ``AmbiguousContextError`` (worded for blocks, naming the file ``display``)."""
    texts = original.texts
    space = index if isinstance(index, BlockIndex) else BlockIndex(texts)
    try:
        placed = place(space, chunks, first_match=first_match)
    except Missing as miss:
        error = _missing(texts, chunks, miss, space, display)
        if miss.number == 0 or not _may_stand_as_left(space, chunks, miss.number):
            raise error from None
        return _one_after_another(texts, chunks, display, first_match, miss.number, error)
    except Ambiguous as ambiguous:
        raise _ambiguous(chunks, ambiguous, display) from None
    placements: list[Placement] = []
    notes: list[str] = []
    for number, start, end, lines in placed:
        lines, note = _as_matched(chunks[number], texts[start:end], lines, start, display)
        notes += [note] if note else []
        placements.append(Placement(number, start, end - start, lines))
    try:
        _check_in_turn(texts, chunks, placements, space, first_match, display)
    except AmbiguousContextError as error:
        # A block's place in the file as the blocks before leave it is not where the order in the
        # file put it: it may be in lines they wrote (its first place, with ``first_match``).
        return _one_after_another(texts, chunks, display, first_match, len(chunks), error)
    return placements, notes


def _may_stand_as_left(space: BlockIndex, chunks: Sequence[Chunk], number: int) -> bool:
    """Whether every non-blank SEARCH line of block ``number`` stands (white space aside: the
    blocks' loosest pass) in the file or among the REPLACE lines of the blocks before it: if not,
    placed one after another it misses as well, which this tells without rebuilding the file
    once per block before it (a reply of thousands of blocks, one of them stale)."""
    present = set(space.keys(SHIFTED))
    written = {strip(text) for chunk in chunks[:number] for kind, text in chunk.lines if kind == "+"}
    return all(key in present or key in written
               for kind, text in chunks[number].lines if kind != "+"
               for key in [strip(text)] if key)


def _as_matched(chunk: Chunk, found: Sequence[str], lines: tuple[tuple[LineKind, str], ...],
                start: int, display: str, *, as_left: bool = False,
                ) -> tuple[tuple[tuple[LineKind, str], ...], str]:
    """A placed block's lines (its REPLACE lines shifted as its SEARCH lines matched ``found``,
    the file's lines from ``start``, or ``as_left`` by the blocks before it; without the trailing
    white space every line of the block carries and the file's lines do not), and the note saying
    how loosely it matched ("": exactly). The rule is every loosely matched hunk's
    (``normalise.one_shift``, ``normalise.hunk_suffix``)."""
    old = [text for kind, text in lines if kind != "+"]
    if found == old:
        return lines, ""
    end = start + len(found)
    at = f"line {start + 1}" if end - start <= 1 else f"lines {start + 1}-{end}"
    at = f"{at} of the file as the blocks before it leave it" if as_left else f"file {at}"
    suffix = hunk_suffix(list(zip(found, old, strict=True)), [t for k, t in lines if k == "+"])
    if suffix:
        lines = tuple((k, t[: len(t) - len(suffix)] if k == "+" and t.endswith(suffix) else t)
                      for k, t in lines)
        old = [t[: len(t) - len(suffix)] if t.endswith(suffix) else t for t in old]
    shift = shift_between(found, old)
    trailing = (f" Every line of the block ends with {suffix!r}, which the file's lines do not: "
                "its REPLACE lines were written without it.") if suffix else ""
    if shift is None:
        return lines, (f"the SEARCH lines of the block on line {chunk.line} matched {at} "
                       f"with trailing white space ignored.{trailing}")
    moved = []
    for kind, text in lines:
        new = shifted(text, shift) if kind == "+" else text
        if new is None:
            raise AmbiguousContextError(
                f"Ambiguous indentation in {display}: the SEARCH lines of the block on line "
                f"{chunk.line} match {at} with their indentation shifted as a whole, but the "
                f"REPLACE line \"{strip(text)[:60]}\" has less indentation than the shift takes "
                "away, so where it goes has no one reading.",
                hint="Write the SEARCH lines exactly as the file has them, indentation included.",
                path=display, line=chunk.line)
        moved.append((kind, new))
    direction, text = shift
    return (tuple(moved),
            f"the SEARCH lines of the block on line {chunk.line} matched "
            f"{at} with their indentation shifted as a whole (the file has "
            f"{spell_indentation(text)} {'more' if direction == '+' else 'less'} in front of each "
            f"line); its REPLACE lines were shifted alike.{trailing}")


def _one_after_another(texts: Sequence[str], chunks: Sequence[Chunk], display: str,
                       first_match: bool, failed: int, error: PatchtxError,
                       ) -> tuple[list[Placement], list[str]]:
    """The blocks placed one after another, as aider applies them, when placing them in the file
    itself failed at block ``failed`` (with ``error``, raised unless the blocks up to that one have
    one meaning so: it stands in lines an earlier block wrote). Each block is placed by the one
    rule (``matching.place``) in the file as the blocks before it leave it, must stand exactly once
    there (``_candidates``, as ``_check_in_turn`` asks; ``first_match``: its first place is taken),
    and must lie after the lines the block before it wrote or overlap lines some earlier block
    wrote (its REPLACE lines): blocks that touch only the file's own lines keep the file's order.
    The outcome is one placement per run of changed lines of the file; a reply placed in the file
    itself is placed alike here (that placement is this one's fast path)."""
    # The file as the blocks leave it, a line at a time: (the line of the file it is, or None for a
    # line a block added; its text; whether a block's REPLACE lines put it there).
    current: list[tuple[int | None, str, bool]] = [(i, text, False) for i, text in enumerate(texts)]
    touched: dict[int, int] = {}  # a line of the file removed -> the block that removed it
    notes: list[str] = []
    after = 0  # where the lines the block before wrote end

    def refused(number: int, lines: list[str], space: BlockIndex,
                found: list[int] | None = None) -> PatchtxError:
        """Why block ``number`` has no place (the first error for a block up to ``failed``)."""
        if number <= failed:
            return error
        if found is not None:
            return _not_in_turn(chunks[number], found, number, first_match, display)
        search = [text for kind, text in chunks[number].lines if kind != "+"]
        return _missing(lines, chunks, Missing(number, search, after, None), space, display,
                        as_left=True)

    for number, chunk in enumerate(chunks):
        lines = [text for _origin, text, _written in current]
        space = BlockIndex(lines)
        try:
            ((_number, start, end, placed),) = place(space, [chunk], first_match=first_match)
        except Missing:
            raise refused(number, lines, space) from None
        except Ambiguous as ambiguous:
            raise refused(number, lines, space, ambiguous.hunks[0][2]) from None
        found = _candidates(space, [text for kind, text in placed if kind != "+"])
        if (found[:1] if first_match else found) != [start]:
            raise refused(number, lines, space, sorted({*found, start}))
        if start < after and not any(written for _origin, _text, written in current[start:end]):
            raise refused(number, lines, space)  # (above the block before it, in the file's own lines)
        placed, note = _as_matched(chunk, lines[start:end], placed, start, display, as_left=True)
        notes += [note] if note else []
        new: list[tuple[int | None, str, bool]] = []
        at = start
        for kind, text in placed:
            if kind == "+":
                new.append((None, text, True))
                continue
            origin, kept, _written = current[at]
            if kind == " ":
                new.append((origin, kept, True))  # (context keeps the line, and its text)
            elif origin is not None:
                touched[origin] = number
            at += 1
        current[start:end] = new
        after = start + len(new)
    return _as_placements(texts, [(origin, text) for origin, text, _ in current], touched), notes


def _as_placements(texts: Sequence[str], current: Sequence[tuple[int | None, str]],
                   touched: dict[int, int]) -> list[Placement]:
    """The file's lines as ``current`` leaves them, as placements in the file: between two lines of
    the file that stay, the lines of the file removed and the written lines in their place."""
    placements: list[Placement] = []
    kept = -1
    written: list[str] = []
    for origin, text in [*current, (len(texts), "")]:
        if origin is None:
            written.append(text)
            continue
        if origin != kept + 1 or written:
            removed = range(kept + 1, origin)
            placements.append(Placement(
                min((touched[i] for i in removed), default=0), kept + 1, len(removed),
                (*(("-", texts[i]) for i in removed), *(("+", line) for line in written))))
        kept, written = origin, []
    return placements


def _candidates(space: LineIndex, old: list[str]) -> list[int]:
    """Where a block's SEARCH lines stand in ``space``, in order: the matches of the first pass that
    has any; for a loose pass, the matches of every loose pass (aider's looser pass is not quite
    either of ours, so a loose match must be the only loose one)."""
    for tier in range(space.passes):
        found = space.starts(space.pattern(old, tier), tier, 0, space.end, MAX_CANDIDATES + 1)
        if found and tier:
            found = sorted({*found, *(start for loose in range(1, space.passes) if loose != tier
                                      for start in space.starts(space.pattern(old, loose), loose, 0,
                                                                space.end, MAX_CANDIDATES + 1))})
        if found:
            return found
    return []


def _check_in_turn(texts: Sequence[str], chunks: Sequence[Chunk], placements: Sequence[Placement],
                   space: LineIndex, first_match: bool, display: str) -> None:
    """[unique-search]: each block's SEARCH lines must stand once in the file *as the blocks
    before it leave it* (aider applies a reply's blocks one after another, each where its SEARCH
    lines first stand), and there where the placement in order put them. Placed in order alone,
    a block after one that is below the first copy of its lines (or that wrote a second copy)
    would go to a later copy than aider's: refused instead, listing the places (lines of the file
    as the blocks before it leave it). ``first_match`` takes the first place, when it is the one
    after the block before. Raise ``AmbiguousContextError``."""
    current: Sequence[str] = texts
    index: LineIndex | None = space
    shift = 0
    for turn, placement in enumerate(placements):
        old = [text for kind, text in placement.lines if kind != "+"]
        expected = placement.start + shift
        if old:
            if index is None:
                index = BlockIndex(current)
            found = _candidates(index, old)
            if (found[:1] if first_match else found) != [expected]:
                raise _not_in_turn(chunks[placement.chunk_index], sorted({*found, expected}), turn,
                                   first_match, display)
        if turn == len(placements) - 1:
            break
        new: list[str] = []
        at = placement.start
        for kind, text in placement.lines:
            if kind != "+":
                if kind == " ":
                    new.append(texts[at])  # (context keeps the file's text)
                at += 1
            else:
                new.append(text)
        current = [*current[:expected], *new, *current[expected + placement.length:]]
        shift += len(new) - placement.length
        index = None


def _not_in_turn(chunk: Chunk, found: list[int], turn: int, first_match: bool,
                 display: str) -> AmbiguousContextError:
    where = (f"file lines {_lines(found)}" if turn == 0 else
             f"lines {_lines(found)} of the file as the blocks before it leave it (blocks apply one "
             "after another)")
    hint = _UNIQUE
    if first_match:
        hint = ("With --first-match a block takes the first place its SEARCH lines stand in the file "
                "as the blocks before it leave it, and that place is not after the block before it: "
                "send the blocks in the file's order. " + hint)
    return _ambiguity(display, [(chunk, found, where)], hint)


def _ambiguous(chunks: Sequence[Chunk], ambiguous: Ambiguous, display: str) -> AmbiguousContextError:
    return _ambiguity(display, [(chunks[number], found, f"file lines {_lines(found)}")
                                for number, _anchor, found in ambiguous.hunks], _UNIQUE)


_UNIQUE = "Add lines around the change to the SEARCH (and REPLACE) lines until they match in one place only."


def _lines(found: Sequence[int]) -> str:
    """Where a block's SEARCH lines stand (0-based), as a message lists them."""
    shown = ", ".join(str(s + 1) for s in found[:MAX_CANDIDATES])
    return shown + (" (and more)" if len(found) > MAX_CANDIDATES else "")


def _ambiguity(display: str, blocks: list[tuple[Chunk, Sequence[int], str]], hint: str) -> AmbiguousContextError:
    """Blocks whose SEARCH lines stand in several places: each (block, places, where they are)."""
    first, first_found, _where = blocks[0]
    return AmbiguousContextError(
        f"Ambiguous SEARCH/REPLACE block for {display}: " + "; ".join(
            f"the SEARCH lines of the block on line {chunk.line} match at {where}"
            for chunk, _found, where in blocks) + ".",
        hint=hint, path=display, line=first.line,
        details={"candidate_lines": [s + 1 for s in first_found[:MAX_CANDIDATES]],
                 "hunks": [{"patch_line": chunk.line, "candidate_lines": [s + 1 for s in found[:MAX_CANDIDATES]]}
                           for chunk, found, _where in blocks]})


def _missing(texts: Sequence[str], chunks: Sequence[Chunk], miss: Missing, space: LineIndex,
             display: str, *, as_left: bool = False) -> ContextNotFoundError:
    """``as_left``: ``texts`` is the file as the blocks before the block leave it."""
    chunk = chunks[miss.number]
    hint = describe_miss(texts, miss.lines, miss.low, normalised=space.keys(3))
    text = hint.text
    above = space.first_any(miss.lines, 0)[1] if miss.number > 0 else -1
    if 0 <= above < miss.low and not as_left:
        # The explanation first: the lines do match, in the wrong place (Cline's order rule).
        return ContextNotFoundError(
            f"The block on line {chunk.line} is out of order: its SEARCH lines stand at file line "
            f"{above + 1}, above where the block before it matched in {display}; the blocks of one "
            "file must come in the file's order.",
            hint="Send the blocks in the order their SEARCH lines stand in the file.",
            path=display, line=chunk.line, details={"closest_line": above + 1})
    if 0 <= above < miss.low:
        text = (f"Its SEARCH lines stand at file line {above + 1}, above where the block "
                f"before it matched: the blocks of one file must come in the file's order. "
                + text)
    replaced = [text_ for kind, text_ in chunk.lines if kind != "-"]
    if replaced and any(line.strip() for line in replaced):
        # (Resent, its indentation shifted: the already-applied rule looks for exact lines only.)
        done = space.first_any(replaced, 0)[1]
        if done >= 0:
            text = (f"Its REPLACE lines already stand at file line {done + 1}: the block may have "
                    "been applied already. " + text)
    if as_left:
        text = ("(Blocks apply one after another: the line numbers here are those of the file as "
                "the blocks before it leave it.) " + text)
    return ContextNotFoundError(
        f"The SEARCH lines of the block on line {chunk.line} do not match {display}"
        f"{' as the blocks before it leave it' if as_left else ''}:\n"
        + "\n".join(miss.lines),
        hint="The SEARCH lines must equal the file's lines exactly (trailing white space and "
             "indentation shifted as a whole aside). " + text,
        path=display, line=chunk.line, details={"closest_line": hint.closest_line})
