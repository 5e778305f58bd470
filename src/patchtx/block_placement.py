"""Where SEARCH/REPLACE blocks go: the one placement rule (``matching.place``), searched in the
passes this format allows, with every loose match reported.

A file's blocks are placed as a patch's hunks are: in order, each after the block before it, and
the reply applies only when exactly one such placement exists. Aider applies them one after
another instead, each where its SEARCH lines first stand in the file as the blocks before it left
it; so each block's lines must also stand exactly once there (``_check_in_turn``), and a block is
never placed at a copy aider would not change. Each block is found in the first of
three passes that finds it from where it may start:

0. exactly;
1. with trailing white space ignored (the file's lines keep theirs where the block leaves them);
2. with its indentation shifted as a whole: every non-blank SEARCH line is the file's line with the
   same leading white space added (or taken away) in front, the rest of each line equal but for
   trailing white space. The block's REPLACE lines are shifted alike, so a model that wrote a
   method's body without its class's indentation still writes correctly indented code.

Codex's looser passes (white space around each line ignored line by line, Unicode punctuation
folded) are not used: lines indented differently one by one do not say how the REPLACE lines should
be indented. A block matched in pass 1 or 2 is reported (``notes``) as well as placed.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .errors import AmbiguousContextError, ContextNotFoundError
from .hints import describe_miss
from .matching import MAX_CANDIDATES, Ambiguous, LineIndex, Missing, Placement, place
from .normalise import strip

if TYPE_CHECKING:
    from collections.abc import Iterator, Sequence

    from .model import Chunk
    from .textfile import TextFile

SHIFTED = 2
"""The pass that matches a block with its indentation shifted as a whole."""


class _Shifted(list):  # type: ignore[type-arg]
    """A pass-2 pattern: the stripped lines (compared with the file's stripped lines) and the
    lines as the block wrote them (for the shift of their indentation)."""

    raw: Sequence[str]


def _indent(line: str) -> str:
    return line[: len(line) - len(line.lstrip())]


def shift_between(file_lines: Sequence[str], block_lines: Sequence[str]) -> tuple[str, str] | None:
    """How the block's lines are the file's with one shift of indentation: ``("+", text)`` when
    the file has ``text`` more in front of every non-blank line, ``("-", text)`` when it has that
    much less; None when the lines differ otherwise, or not at all (blank lines are not compared:
    their white space says nothing)."""
    shifts: set[tuple[str, str]] = set()
    for in_file, in_block in zip(file_lines, block_lines, strict=True):
        if not strip(in_file) and not strip(in_block):
            continue
        if strip(in_file) != strip(in_block):
            return None
        ours, theirs = _indent(in_file), _indent(in_block)
        if ours.endswith(theirs) and ours != theirs:
            shifts.add(("+", ours[: len(ours) - len(theirs)]))
        elif theirs.endswith(ours) and ours != theirs:
            shifts.add(("-", theirs[: len(theirs) - len(ours)]))
        else:
            return None
        if len(shifts) > 1:
            return None
    return next(iter(shifts)) if shifts else None


def shifted(line: str, shift: tuple[str, str]) -> str:
    """``line`` (a REPLACE line) with the block's shift applied; blank lines stay as they are."""
    direction, text = shift
    if not line.strip():
        return line
    if direction == "+":
        return text + line
    if line.startswith(text):
        return line[len(text):]
    kept = 0  # less indented than the shift: take what it has of it
    while kept < len(text) and kept < len(line) and line[kept] == text[kept]:
        kept += 1
    return line[kept:]


class BlockIndex(LineIndex):
    """A file's lines searched in the three passes of SEARCH/REPLACE blocks (see the module)."""

    def __init__(self, texts: Sequence[str], *, source: bytes | None = None) -> None:
        super().__init__(texts, passes=SHIFTED + 1, source=source)

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
        return shift_between(found, raw) is not None

    def _hits(self, pattern: list[str], tier: int, low: int, high: int) -> Iterator[int]:
        """Every start in [low, high) where ``pattern`` holds in pass ``tier``, in order."""
        while True:
            found = super().starts(pattern, tier, low, high, 64)
            for start in found:
                if self._fits(pattern, tier, start):
                    yield start
            if len(found) < 64:
                return
            low = found[-1] + 1

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
        raise _missing(texts, chunks, miss, space, display) from None
    except Ambiguous as ambiguous:
        raise _ambiguous(chunks, ambiguous, display) from None
    placements: list[Placement] = []
    notes: list[str] = []
    for number, start, end, lines in placed:
        chunk = chunks[number]
        old = [text for kind, text in lines if kind != "+"]
        found = texts[start:end]
        where = f"file line {start + 1}" if end - start <= 1 else f"file lines {start + 1}-{end}"
        if found != old:
            shift = shift_between(found, old)
            if shift is None:
                notes.append(f"the SEARCH lines of the block on line {chunk.line} matched {where} "
                             "with trailing white space ignored.")
            else:
                direction, text = shift
                notes.append(
                    f"the SEARCH lines of the block on line {chunk.line} matched "
                    f"{where} with their indentation shifted as a whole (the file has "
                    f"{_spell(text)} {'more' if direction == '+' else 'less'} in front of each "
                    "line); its REPLACE lines were shifted alike.")
                lines = tuple((kind, shifted(text_, shift) if kind == "+" else text_)
                              for kind, text_ in lines)
        placements.append(Placement(number, start, end - start, lines))
    _check_in_turn(texts, chunks, placements, space, first_match, display)
    return placements, notes


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
    shown = ", ".join(str(s + 1) for s in found[:MAX_CANDIDATES])
    more = " (and more)" if len(found) > MAX_CANDIDATES else ""
    where = (f"file lines {shown}{more}" if turn == 0 else
             f"lines {shown}{more} of the file as the blocks before it leave it (blocks apply one "
             "after another)")
    hint = ("Add lines around the change to the SEARCH (and REPLACE) lines until they match in "
            "one place only.")
    if first_match:
        hint = ("With --first-match a block takes the first place its SEARCH lines stand in the file "
                "as the blocks before it leave it, and that place is not after the block before it: "
                "send the blocks in the file's order. " + hint)
    return AmbiguousContextError(
        f"Ambiguous SEARCH/REPLACE block for {display}: the SEARCH lines of the block on line "
        f"{chunk.line} match at {where}.", hint=hint, path=display, line=chunk.line,
        details={"candidate_lines": [s + 1 for s in found[:MAX_CANDIDATES]],
                 "hunks": [{"patch_line": chunk.line,
                            "candidate_lines": [s + 1 for s in found[:MAX_CANDIDATES]]}]})


def _spell(indent: str) -> str:
    spaces, tabs = indent.count(" "), indent.count("\t")
    parts = [f"{spaces} space{'s' if spaces != 1 else ''}"] if spaces else []
    parts += [f"{tabs} tab{'s' if tabs != 1 else ''}"] if tabs else []
    return " and ".join(parts) or repr(indent)


def _missing(texts: Sequence[str], chunks: Sequence[Chunk], miss: Missing, space: LineIndex,
             display: str) -> ContextNotFoundError:
    chunk = chunks[miss.number]
    hint = describe_miss(texts, miss.lines, miss.low, normalised=space.keys(3))
    text = hint.text
    if miss.number > 0:
        above = space.first_any(miss.lines, 0)[1]
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
    return ContextNotFoundError(
        f"The SEARCH lines of the block on line {chunk.line} do not match {display}:\n"
        + "\n".join(miss.lines),
        hint="The SEARCH lines must equal the file's lines exactly (trailing white space and "
             "indentation shifted as a whole aside). " + text,
        path=display, line=chunk.line, details={"closest_line": hint.closest_line})


def _ambiguous(chunks: Sequence[Chunk], ambiguous: Ambiguous, display: str) -> AmbiguousContextError:
    described = []
    for number, _anchor, found in ambiguous.hunks:
        shown = ", ".join(str(s + 1) for s in found[:MAX_CANDIDATES])
        more = " (and more)" if len(found) > MAX_CANDIDATES else ""
        described.append(f"the SEARCH lines of the block on line {chunks[number].line} match at "
                         f"file lines {shown}{more}")
    first_number, _anchor, first_found = ambiguous.hunks[0]
    return AmbiguousContextError(
        f"Ambiguous SEARCH/REPLACE block for {display}: " + "; ".join(described) + ".",
        hint="Add lines around the change to the SEARCH (and REPLACE) lines until they match in "
             "one place only.",
        path=display, line=chunks[first_number].line,
        details={
            "candidate_lines": [s + 1 for s in first_found[:MAX_CANDIDATES]],
            "hunks": [{"patch_line": chunks[number].line, "candidate_lines":
                       [s + 1 for s in found[:MAX_CANDIDATES]]}
                      for number, _anchor, found in ambiguous.hunks],
        },
    )

