"""What to show an agent whose hunk did not match: the closest region and the first difference.

The closest region is found by voting: every file line equal (after normalisation) to pattern line j
votes for the region starting j lines above it. That is linear in the number of equal lines, so a
miss in a 200,000-line file is reported in milliseconds, and the output is capped in size.
"""

from __future__ import annotations

import difflib
from contextlib import contextmanager
from contextvars import ContextVar
from typing import TYPE_CHECKING

from .._record import record
from .normalise import normalise

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator, Sequence

    from ..txn.kept import HistoryEntry

MAX_REGION_LINES = 12
MAX_SHOWN_CHARS = 160
MAX_VOTES_PER_LINE = 2000
MAX_VOTES = 200_000
"""Votes cast in all for the closest region (a file position of a line votes once for each of
that line's places in the pattern): a hunk of one line repeated 3,000 times against a file of it
would cast 2,000 x 3,000, seconds of work, for a hint."""
FEW_KEYS = 16
"""Up to this many different lines, a hunk's lines are each looked for in the file in C; past it,
the file's lines are read once (``_positions``)."""
_INVISIBLES = {
    "\t": "\\t",
    "\r": "\\r",
    "\ufeff": "\\ufeff(BOM)",
    "\u00a0": "\\u00a0(no-break space)",
    "\u2018": "\\u2018(‘)",
    "\u2019": "\\u2019(’)",
    "\u201c": "\\u201c(“)",
    "\u201d": "\\u201d(”)",
    "\u2013": "\\u2013(–)",
    "\u2014": "\\u2014(—)",
    "\u200b": "\\u200b(zero-width space)",
}


def visible(text: str) -> str:
    """Spell out characters a reader cannot see or tell apart; mark trailing spaces."""
    stripped = text.rstrip(" ")
    shown = "".join(_INVISIBLES.get(c, c) for c in stripped)
    trailing = len(text) - len(stripped)
    if trailing:
        shown += "·" * trailing + f"({trailing} trailing space{'s' if trailing > 1 else ''})"
    if len(shown) > MAX_SHOWN_CHARS:
        shown = shown[:MAX_SHOWN_CHARS] + "…"
    return shown


def code_points_apart(in_file: str, in_patch: str) -> str:
    """Name the code points where two lines differ, when the difference involves characters
    that look alike or cannot be seen (a homoglyph, a combining accent, a zero-width space)."""
    start = 0
    limit = min(len(in_file), len(in_patch))
    while start < limit and in_file[start] == in_patch[start]:
        start += 1
    end = 0
    while (end < limit - start and in_file[len(in_file) - 1 - end] == in_patch[len(in_patch) - 1 - end]):
        end += 1
    ours, theirs = in_file[start:len(in_file) - end], in_patch[start:len(in_patch) - end]
    if (ours + theirs).isascii():
        return ""

    def spell(text: str) -> str:
        names = " ".join(f"U+{ord(c):04X}" for c in text[:8]) + (" …" if len(text) > 8 else "")
        return names or "nothing"

    return (f" They differ in code points at column {start + 1}: the file has {spell(ours)} where "
            f"the patch has {spell(theirs)}.")


@record
class MissHint:
    text: str
    closest_line: int | None


_WANTED = ContextVar("patchtx_miss_hints_wanted", default=True)


@contextmanager
def unwanted() -> Iterator[None]:
    """Within it, ``describe_miss`` describes nothing: for a caller that tries placements and drops
    their errors (the repair step's trials), whose every miss would otherwise cost a search of the
    file for its closest region."""
    token = _WANTED.set(False)
    try:
        yield
    finally:
        _WANTED.reset(token)


def _closest_start(normalised: Sequence[str], pattern: Sequence[str]) -> tuple[int, int]:
    wanted: dict[str, list[int]] = {}
    for j, line in enumerate(pattern):
        key = normalise(line)
        if key:
            wanted.setdefault(key, []).append(j)
    lines = normalised if isinstance(normalised, list) else list(normalised)
    positions = _positions(lines, wanted)
    votes: dict[int, int] = {}
    budget = MAX_VOTES
    # Rarest in the pattern first: where the budget runs out, the lines it leaves without a vote
    # are those repeated most (each of their file positions would cast that many votes).
    for key, offsets in sorted(wanted.items(), key=lambda item: len(item[1])):
        most = min(MAX_VOTES_PER_LINE, budget // len(offsets))
        if most == 0:
            break  # (so is every key after it: none has fewer offsets)
        found = positions(key, most)
        for position in found:
            for j in offsets:
                votes[position - j] = votes.get(position - j, 0) + 1
        budget -= len(found) * len(offsets)
    if not votes:
        return 0, 0
    best = max(votes.values())
    ties = [s for s, v in votes.items() if v == best]
    inside = [s for s in ties if 0 <= s <= len(lines) - len(pattern)]
    return min(inside or ties), best


def _positions(lines: list[str], wanted: dict[str, list[int]]) -> Callable[[str, int], list[int]]:
    """How to find the first ``most`` positions of a wanted key in ``lines``. A few keys are each
    looked for with ``list.index`` (in C); for more, the lines are read once into the positions of
    every wanted key, since a look-up that finds few goes on to the end of the file: a hunk of
    thousands of different lines would read the file as many times."""
    if len(wanted) <= FEW_KEYS:
        def look_up(key: str, most: int) -> list[int]:
            found: list[int] = []
            position = -1
            while len(found) < most:
                try:
                    position = lines.index(key, position + 1)
                except ValueError:
                    break
                found.append(position)
            return found

        return look_up
    table: dict[str, list[int]] = {}
    for position, line in enumerate(lines):
        if line in wanted:
            at = table.setdefault(line, [])
            if len(at) < MAX_VOTES_PER_LINE:
                at.append(position)
    return lambda key, most: table.get(key, [])[:most]


def _most_similar_line(texts: Sequence[str], wanted: str) -> int | None:
    """The line most like ``wanted`` (difflib ratio ≥ 0.75), within a fixed budget: difflib is
    quadratic in line length, so lines are compared on their first 200 characters and files
    over 400,000 characters are not searched."""
    if not wanted.strip() or sum(map(len, texts)) > 400_000:
        return None
    matcher = difflib.SequenceMatcher(autojunk=False)
    matcher.set_seq2(wanted[:200])
    best, best_ratio = None, 0.75
    for number, text in enumerate(texts):
        matcher.set_seq1(text[:200])
        if (matcher.real_quick_ratio() >= best_ratio and matcher.quick_ratio() >= best_ratio
                and matcher.ratio() >= best_ratio):
            best, best_ratio = number, matcher.ratio()
    return best


def describe_miss(texts: Sequence[str], pattern: Sequence[str], cursor: int,
                  *, whole_line: bool = False, normalised: Sequence[str] | None = None) -> MissHint:
    """Explain a miss: where the nearest resemblance is and how it differs.

    ``normalised`` is the file's lines after ``normalise`` (the matcher already has them).
    """
    if not _WANTED.get():
        return MissHint("", None)
    if pattern and not whole_line and not any(line.strip() for line in pattern):
        # (Blank lines cast no vote below: say what is missing, or the hint would blame the path.)
        where = f"from file line {cursor + 1} on" if 0 < cursor < len(texts) else "in the file"
        said = ("The hunk's one old line is a blank line, and the file has none" if len(pattern) == 1
                else f"The hunk's old lines are {len(pattern)} blank lines, and the file has no such run")
        return MissHint(
            f"{said} {where}: the hunk's other lines could go anywhere. Add an unchanged line of "
            "the file next to the change (a context line), so the hunk says where it goes.", None)
    if normalised is None:
        normalised = [normalise(t) for t in texts]
    start, score = _closest_start(normalised, pattern)
    if score == 0:
        near = _most_similar_line(texts, pattern[0]) if len(pattern) == 1 else None
        if near is not None:
            number = near
            return MissHint(
                f"Nothing in the file equals that line; the most similar is line {number + 1}: "
                f'"{visible(texts[number])}" (the patch has "{visible(pattern[0])}").'
                + code_points_apart(texts[number], pattern[0]) + " "
                + ("An @@ anchor must equal a whole line of the file." if whole_line else ""),
                number + 1)
        for j, wanted in enumerate(pattern[:3] if len(pattern) > 1 else ()):
            near = _most_similar_line(texts, wanted)
            if near is not None:
                return MissHint(
                    "No line of the file equals a line of the hunk: has the file changed since it "
                    f'was read? Line {j + 1} of the hunk ("{visible(wanted)}") is most like file '
                    f'line {near + 1}: "{visible(texts[near])}". Re-read the file and write the '
                    "hunk from its current text.", near + 1)
        if whole_line:
            return MissHint(
                f'No line of the file equals or resembles the @@ line "{visible(pattern[0])}". An '
                "@@ anchor must equal a whole line of the file above the change (a 'def' or "
                "'class' line, copied as the file has it); write one that does, or leave it out "
                "('@@' alone).", None)
        return MissHint(
            "No line of the file resembles the hunk's lines: check the file path, or re-read the "
            "file before writing the patch.", None)
    first = max(start, 0)
    region = range(first, min(len(texts), first + max(len(pattern), 1)))
    diff_note = ""
    for j, line in enumerate(pattern):
        number = start + j
        if number < 0 or number >= len(texts):
            diff_note = (f' Line {j + 1} of the hunk ("{visible(line)}") would lie '
                         f"{'before the start' if number < 0 else 'past the end'} of the file.")
            break
        if texts[number] != line:
            diff_note = (f" First difference at file line {number + 1}: the file has "
                         f'"{visible(texts[number])}" where the patch has "{visible(line)}".'
                         + code_points_apart(texts[number], line))
            break
    listing = "\n".join(f"{n + 1:>7} | {visible(texts[n])}"
                        for n in list(region)[:MAX_REGION_LINES])
    if len(region) > MAX_REGION_LINES:
        listing += f"\n        … ({len(region) - MAX_REGION_LINES} more lines)"
    where = ""
    if start + len(pattern) <= cursor:
        where = (" That region lies above an earlier hunk of this file: hunks must follow file "
                 "order.")
    return MissHint(
        f"Closest region: file lines {first + 1}-{first + max(len(region), 1)} "
        f"({score} of {len(pattern)} lines alike).{diff_note}{where} Current text of that "
        f"region:\n{listing}",
        first + 1,
    )



def earlier_edit(now: Sequence[str], before: Sequence[str], span: tuple[int, int], entry: HistoryEntry,
                 *, made_it: bool) -> MissHint:
    """The hint of a hunk that matches the file as it was before a kept transaction (``entry``),
    which changed those lines: a model patching from its memory of the file before its own last
    edit. ``span`` is where the hunk's change lies in the file as it was (0-based, end excluded);
    the hint ends with those lines as they stand now. ``made_it``: applied to the file as it was,
    the hunk gives the file as it is (that transaction made this very change)."""
    start, end = _mapped(before, now, span)
    first, last = max(start - 1, 0), min(max(end + 1, start + 1), len(now))
    shown = list(range(first, last))[:MAX_REGION_LINES]
    listing = "\n".join(f"{n + 1:>7} | {visible(now[n])}" for n in shown)
    where = (f"file lines {first + 1}-{last}" if last - first > 1 else f"file line {first + 1}"
             ) if shown else "nothing (the file is empty)"
    said = f"transaction {entry.transaction_id} (committed {entry.committed_at}"
    said += f", through {entry.origin}" if entry.origin else ""
    said += f": {entry.intent!r})" if entry.intent else ")"
    if made_it:
        text = (f"The hunk matches the file as it was before {said}, which made this very change: "
                "it is in place already. Check the file, and leave the hunk out.")
    else:
        text = (f"The hunk matches the file as it was before {said}, which changed these lines: "
                "it was written from the file before that edit. Write it against the file as it is "
                "now.")
    return MissHint(f"{text} Now {where} read:\n{listing}" if shown else f"{text} Now it holds "
                    "nothing.", first + 1 if shown else None)


def _mapped(before: Sequence[str], now: Sequence[str], span: tuple[int, int]) -> tuple[int, int]:
    """Where the lines ``span`` of ``before`` (0-based, end excluded; empty: a place between two
    lines) are in ``now``, as a diff of the two lines them up: lines kept map to themselves, the
    lines changed to those that replaced them, and lines added in or at the span are in it."""
    low, high = span
    starts, ends = [], []
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(None, before, now, autojunk=False).get_opcodes():
        overlaps = i1 < high and i2 > low if low < high else i1 <= low < i2
        if not (overlaps or (i1 == i2 and low <= i1 <= high)):
            continue
        if tag == "equal":
            starts.append(j1 + max(i1, low) - i1)
            ends.append(j1 + max(min(i2, high), max(i1, low)) - i1)
        else:
            starts.append(j1)
            ends.append(j2)
    if not starts:
        return min(low, len(now)), min(high, len(now))
    return min(starts), max(ends)
