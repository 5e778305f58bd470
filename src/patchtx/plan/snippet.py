"""Lazy edit snippets (Cursor's ``edit_file``, Morph's and Relace's apply) merged into a file, only
when the text decides the result (no I/O; ``agents.snippet_tool`` applies one as a transaction).

A snippet is the changed part of a file with placeholder lines (``// ... existing code ...``, the
one recogniser: ``plan.placeholders.is_placeholder``) standing for runs of unchanged lines. The
placeholders cut it into *parts*; each part replaces a run of the file's lines (its *span*). A
reading places every part; its cost is the lines it deletes and inserts. The merged file is the
reading's, under these rules (docs/edit-file.md), else the snippet is refused saying which
context to add and where:

1. placeholder lines are recognised, and refused when the file holds the same line itself (and a
   bare ``...`` line where it is code or text, Python or Markdown, that the file does not hold);
2. the fewest-edit reading is taken only when it is the one (another reading of the same cost
   that writes another file: ``ambiguous_context``);
3. every change stands between non-blank kept lines of its part, never next to a placeholder:
   a part's first and last lines (blank lines at a placeholder aside) are lines of the file; a
   deletion whose kept lines up to the placeholder stand elsewhere too and are no more than it
   deletes is refused (they could be the change's own new lines);
4. no deletion at the file's start or end without a placeholder there (a snippet with no
   placeholder before its first line starts at the file's first line, and may insert there);
5. a reading that changes nothing is refused (``no_change``);
6. each part that changes something keeps a line that stands once in the file (with a letter or
   a digit: a lone ``}`` places nothing); the merged file holds no such line twice, and a change
   whose new lines all stand in the file already is refused (a deletion shown with too little
   context reads as copies inserted);
7. a change that adds a comment the file lacks while deleting more code than it writes is
   refused (``placeholder``): the comment may stand for the lines, in words the recogniser does
   not know.

Lines are compared as the placement's second pass compares them (trailing white space ignored,
``place.normalise.rstrip``); a kept line keeps the file's spelling.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .._record import record
from ..errors import (
    AmbiguousContextError,
    ContextNotFoundError,
    NoChangeError,
    PatchtxError,
    PlaceholderError,
)
from ..place.normalise import rstrip
from .placeholders import PLAIN, is_comment, is_elision, is_placeholder

if TYPE_CHECKING:
    from collections.abc import Sequence

MAX_DELETED = 2000
"""The most lines one part may delete between two of its kept lines (a part's span is searched
that far beyond its own length)."""
MAX_STARTS = 2000
"""The most places a part's first line is tried at."""
CONTEXT_ASKED = 2
"""How many unchanged lines a refusal asks for."""

_HINT = ("Each part of the snippet (between placeholders) must start and end with lines the file "
         "has, unchanged, and hold a line that stands once in the file; a placeholder stands only "
         "for unchanged lines.")


@record
class Part:
    """One run of a snippet's lines between placeholders: its lines, the snippet line of its
    first one (1-based), and whether a placeholder stands before and after it (open: the part
    may start, or end, anywhere; closed: at the file's start, or end)."""

    lines: tuple[str, ...]
    first: int
    open_before: bool
    open_after: bool


@record
class Span:
    """Where a part goes: the file's lines ``start:end`` it replaces, and the cost (lines deleted
    and inserted)."""

    start: int
    end: int
    cost: int


def split_snippet(snippet: str, extension: str) -> tuple[list[Part], list[str]]:
    """The snippet's parts and its placeholder lines. Blank lines next to a placeholder belong to
    neither (models put them around it)."""
    lines = snippet.replace("\r\n", "\n").split("\n")
    if lines and lines[-1] == "" and len(lines) > 1:
        lines.pop()
    marks = [is_placeholder(line, extension) for line in lines]
    parts: list[Part] = []
    held: list[str] = [line for line, mark in zip(lines, marks, strict=True) if mark]
    at = 0
    while at < len(lines):
        if marks[at]:
            at += 1
            continue
        end = at
        while end < len(lines) and not marks[end]:
            end += 1
        start, stop = at, end
        before, after = at > 0, end < len(lines)
        if before:
            while start < stop and not lines[start].strip():
                start += 1
        if after:
            while stop > start and not lines[stop - 1].strip():
                stop -= 1
        if start < stop:
            parts.append(Part(tuple(lines[start:stop]), start + 1, before, after))
        at = end
    if parts and lines and marks[0] and not parts[0].open_before:
        parts[0] = Part(parts[0].lines, parts[0].first, True, parts[0].open_after)
    return parts, held


def _lcs_lengths(pattern: Sequence[str], window: Sequence[str]) -> list[int]:
    """LCS(pattern, window[:j]) for every j (bit-parallel: one big-integer step per window line)."""
    masks: dict[str, int] = {}
    for i, line in enumerate(pattern):
        masks[line] = masks.get(line, 0) | (1 << i)
    size = len(pattern)
    full = (1 << size) - 1
    v = full
    out = [0]
    for line in window:
        u = v & masks.get(line, 0)
        v = ((v + u) | (v - u)) & full
        out.append(size - v.bit_count())
    return out


def spans(part: Part, keys: Sequence[str], positions: dict[str, list[int]]) -> list[Span] | None:
    """Every span the part may take, with its least cost for that start and end; None when its
    first line stands in more than ``MAX_STARTS`` places (too many to tell apart)."""
    core = [rstrip(line) for line in part.lines]
    n = len(keys)
    starts = positions.get(core[0], []) if part.open_before else [0]
    if len(starts) > MAX_STARTS:
        return None
    found: list[Span] = []
    for start in starts:
        inner = core[1:] if part.open_before else core
        low = start + 1 if part.open_before else start
        if part.open_after:
            if part.open_before and len(core) == 1:
                found.append(Span(start, start + 1, 0))
                continue
            inner = inner[:-1]
        high = min(n, low + len(inner) + MAX_DELETED + 1)
        window = keys[low:high]
        lengths = _lcs_lengths(inner, window)
        if not part.open_after:
            if high == n:
                found.append(Span(start, n, len(inner) + (n - low) - 2 * lengths[n - low]))
            continue
        for stop in range(low, high):
            if keys[stop] == core[-1]:
                between = stop - low
                found.append(Span(start, stop + 1, len(inner) + between - 2 * lengths[between]))
    return found


@record
class Reading:
    """A placement of every part: the spans, and which of them change something."""

    cost: int
    spans: tuple[Span, ...]


def readings(parts: Sequence[Part], candidates: Sequence[list[Span]]) -> list[Reading]:
    """The least-cost readings (parts in order, spans apart), up to two that differ in a span
    that changes something (a part placed unchanged writes the same file wherever it stands)."""
    # states: (end of the last span, cost, [spans so far, up to 2 differing in changed spans])
    states: list[tuple[int, int, list[tuple[Span, ...]]]] = [(0, 0, [()])]
    for options in candidates:
        states.sort(key=lambda state: state[0])
        following: list[tuple[int, int, list[tuple[Span, ...]]]] = []
        for span in options:
            best: int | None = None
            ways: list[tuple[Span, ...]] = []
            for end, cost, sofar in states:
                if end > span.start:
                    break
                if best is None or cost < best:
                    best, ways = cost, list(sofar)
                elif cost == best:
                    ways = _distinct(ways + sofar)
            if best is not None:
                following.append((span.end, best + span.cost, [(*way, span) for way in ways]))
        states = _pruned(following)
        if not states:
            return []
    least = min(cost for _, cost, _ in states)
    chosen: list[tuple[Span, ...]] = []
    for _, cost, sofar in states:
        if cost == least:
            chosen = _distinct(chosen + sofar)
    return [Reading(least, way) for way in chosen]


def _changed(way: tuple[Span, ...]) -> tuple[tuple[int, int], ...]:
    return tuple((span.start, span.end) for span in way if span.cost)


def _distinct(ways: list[tuple[Span, ...]]) -> list[tuple[Span, ...]]:
    out: list[tuple[Span, ...]] = []
    seen: set[tuple[tuple[int, int], ...]] = set()
    for way in ways:
        key = _changed(way)
        if key not in seen:
            seen.add(key)
            out.append(way)
    return out[:2]


def _pruned(states: list[tuple[int, int, list[tuple[Span, ...]]]]) -> list[tuple[int, int, list[tuple[Span, ...]]]]:
    """One state per end (its least cost, its ways merged), and none that an earlier end beats."""
    by_end: dict[int, tuple[int, list[tuple[Span, ...]]]] = {}
    for end, cost, ways in states:
        held = by_end.get(end)
        if held is None or cost < held[0]:
            by_end[end] = (cost, ways)
        elif cost == held[0]:
            by_end[end] = (cost, _distinct(held[1] + ways))
    out = []
    lowest: int | None = None
    for end in sorted(by_end):
        cost, ways = by_end[end]
        if lowest is None or cost <= lowest:
            out.append((end, cost, ways))
            lowest = cost
    return out


def alignment(part: Part, file: Sequence[str], span: Span) -> list[tuple[str, int, int]]:
    """The part's lines against ``file[span]`` as operations ``(kind, part index, file index)``:
    ``=`` kept, ``+`` inserted, ``-`` deleted (an open edge's line kept at the span's edge)."""
    core = [rstrip(line) for line in part.lines]
    keys = [rstrip(line) for line in file[span.start:span.end]]
    head = 1 if part.open_before else 0
    tail = 1 if part.open_after and len(core) > head else 0
    a, b = core[head:len(core) - tail], keys[head:len(keys) - tail]
    rows, cols = len(a), len(b)
    table = [[0] * (cols + 1) for _ in range(rows + 1)]
    for i in range(rows - 1, -1, -1):
        row, below = table[i], table[i + 1]
        for j in range(cols - 1, -1, -1):
            row[j] = below[j + 1] + 1 if a[i] == b[j] else max(below[j], row[j + 1])
    ops: list[tuple[str, int, int]] = [("=", 0, span.start)] if head else []
    i = j = 0
    while i < rows or j < cols:
        if i < rows and j < cols and a[i] == b[j] and table[i][j] == table[i + 1][j + 1] + 1:
            ops.append(("=", head + i, span.start + head + j))
            i, j = i + 1, j + 1
        elif j < cols and (i == rows or table[i][j + 1] >= table[i + 1][j]):
            ops.append(("-", -1, span.start + head + j))
            j += 1
        else:
            ops.append(("+", head + i, -1))
            i += 1
    if tail:
        ops.append(("=", len(core) - 1, span.end - 1))
    return ops


class Merger:
    """One snippet against one file's lines (``texts``, without their endings)."""

    def __init__(self, texts: Sequence[str], extension: str, display: str) -> None:
        self.texts = list(texts)
        self.keys = [rstrip(line) for line in self.texts]
        self.extension = extension
        self.display = display
        self.positions: dict[str, list[int]] = {}
        for at, key in enumerate(self.keys):
            self.positions.setdefault(key, []).append(at)

    def merge(self, snippet: str) -> list[str]:
        """The merged file's lines; raise a ``PatchtxError`` saying what to add where when the text
        does not decide it."""
        parts, held = split_snippet(snippet, self.extension)
        self._check_placeholders(held)
        self._check_bare_ellipsis(parts)
        if not parts:
            raise NoChangeError(f"Refusing the snippet for {self.display}: it holds only "
                                "placeholders, no line of code.", hint=_HINT, path=self.display)
        candidates = []
        for part in parts:
            found = spans(part, self.keys, self.positions)
            if found is None:
                raise AmbiguousContextError(
                    f"Refusing the snippet for {self.display}: the part at its line {part.first} "
                    f"starts with a line that stands in more than {MAX_STARTS} places of the file.",
                    hint=f"Start it with {CONTEXT_ASKED} unchanged lines that stand once in the "
                         "file. " + _HINT, path=self.display, line=part.first)
            if not found:
                raise self._unplaced(part)
            candidates.append(found)
        found_readings = readings(parts, candidates)
        if not found_readings:
            raise ContextNotFoundError(
                f"Refusing the snippet for {self.display}: its parts do not stand in the file in "
                "the snippet's order.", hint="Send the parts in the file's order. " + _HINT,
                path=self.display)
        merged = [self._merged(parts, reading) for reading in found_readings]
        if len(merged) > 1 and merged[0] != merged[1]:
            raise self._ambiguous(parts, found_readings)
        reading = found_readings[0]
        if reading.cost == 0 or merged[0] == self.texts:
            raise NoChangeError(f"Refusing the snippet for {self.display}: read against the file "
                                "it changes nothing (every line of it is already there).",
                                hint="Send the lines as they should become, between unchanged "
                                     "lines of the file.", path=self.display)
        for part, span in zip(parts, reading.spans, strict=True):
            if span.cost:
                self._check_part(part, span)
        self._check_duplicates(merged[0])
        return merged[0]

    # -- the rules ---------------------------------------------------------------------------------
    def _once(self, key: str) -> bool:
        """Whether a line (its key) stands once in the file and says something (a letter or a
        digit: a lone ``}`` that happens to stand once places nothing)."""
        return len(self.positions.get(key, ())) == 1 and any(c.isalnum() for c in key)

    def _check_placeholders(self, held: list[str]) -> None:
        for line in held:
            key = rstrip(line).strip()
            at = next((at for at, text in enumerate(self.keys) if text.strip() == key), None)
            if at is not None:
                raise PlaceholderError(
                    f"Refusing the snippet for {self.display}: its line \"{key}\" is a placeholder, "
                    f"but the file holds that line itself (line {at + 1}), so which one the snippet "
                    "means cannot be told.",
                    hint="Write out the lines around that line of the file instead of a "
                         "placeholder, or edit the file with exact replacements (edit_files).",
                    path=self.display, line=at + 1, details={"placeholder": line})

    def _check_bare_ellipsis(self, parts: Sequence[Part]) -> None:
        """A bare ``...`` line in a language where it is code or text (Python's Ellipsis, a
        Markdown line), which the file does not hold: the model's placeholder or its code,
        which the text does not tell."""
        if any(is_elision(line) for line in self.texts):
            return
        for part in parts:
            at = next((at for at, line in enumerate(part.lines) if is_elision(line)), None)
            if at is not None:
                raise PlaceholderError(
                    f"Refusing the snippet for {self.display}: its line {part.first + at} is a bare "
                    f"'{part.lines[at].strip()}', which in this file's language is a line of code "
                    "(or text), not a placeholder, and the file holds no such line: whether it "
                    "stands for code left out cannot be told.",
                    hint="For unchanged code write a placeholder comment in the file's syntax "
                         "(# ... existing code ...); for the line itself, use an exact "
                         "replacement (edit_files).", path=self.display, line=part.first + at,
                    details={"placeholder": part.lines[at]})

    def _merged(self, parts: Sequence[Part], reading: Reading) -> list[str]:
        out: list[str] = []
        at = 0
        for part, span in zip(parts, reading.spans, strict=True):
            out.extend(self.texts[at:span.start])
            for kind, index, line in alignment(part, self.texts, span):
                if kind == "=":
                    out.append(self.texts[line])
                elif kind == "+":
                    out.append(part.lines[index])
            at = span.end
        out.extend(self.texts[at:])
        return out

    def _check_part(self, part: Part, span: Span) -> None:
        ops = alignment(part, self.texts, span)
        anchored = [kind == "=" and bool(self.keys[line].strip()) for kind, _, line in ops]
        blocks: list[tuple[int, int]] = []
        at = 0
        while at < len(ops):
            if ops[at][0] == "=":
                at += 1
                continue
            end = at
            while end < len(ops) and not anchored[end]:
                end += 1
            while ops[end - 1][0] == "=":
                end -= 1
            blocks.append((at, end))
            block = ops[at:end]
            before = next((i for i in range(at - 1, -1, -1) if anchored[i]), None)
            after = next((i for i in range(end, len(ops)) if anchored[i]), None)
            deletes = any(kind == "-" for kind, _, _ in block)
            # (an open edge's line is kept: a change there never lacks a kept line on that side)
            if before is None and deletes:
                raise self._edge(part, block, "start")
            if after is None and deletes:
                raise self._edge(part, block, "end")
            self._check_copies(part, block)
            self._check_comment_for_code(part, block)
            at = end
        if blocks and part.open_before:
            self._check_edge_run(part, ops[:blocks[0][0]], ops[blocks[0][0]:blocks[0][1]], "start")
        if blocks and part.open_after:
            self._check_edge_run(part, ops[blocks[-1][1]:], ops[blocks[-1][0]:blocks[-1][1]], "end")
        kept = [self.keys[line] for kind, _, line in ops if kind == "="]
        if not any(self._once(key) for key in kept):
            raise AmbiguousContextError(
                f"Refusing the snippet for {self.display}: the part at its line {part.first} keeps "
                "no line that stands once in the file, so where it goes is a guess.",
                hint=f"Add {CONTEXT_ASKED} unchanged lines around the change that stand once in "
                     f"the file (near line {span.start + 1}, such as a function's signature). "
                     + _HINT, path=self.display, line=part.first,
                details={"candidate_lines": [span.start + 1]})

    def _check_edge_run(self, part: Part, run: list[tuple[str, int, int]],
                        block: list[tuple[str, int, int]], side: str) -> None:
        """The unchanged lines between a part's open edge and its nearest change (``run``) could
        be the change's own new lines, the placeholder keeping what the change deletes: that
        reading is refused by rule 3, but where it costs no more (the change deletes as many
        lines as the run holds, or more) and the run holds no line that stands once in the file
        (which it would write twice), the text does not decide between the two."""
        deleted = [line for kind, _, line in block if kind == "-"]
        if len(deleted) < len(run) or any(self._once(self.keys[line]) for _, _, line in run):
            return
        first, last = run[0][2], run[-1][2]
        towards = "after" if side == "end" else "before"
        raise AmbiguousContextError(
            f"Refusing the snippet for {self.display}: the change at the file's line "
            f"{deleted[0] + 1} deletes {len(deleted)} line(s) up to the unchanged "
            f"line(s) {first + 1}-{last + 1} `{self.texts[first if side == 'end' else last].strip()}` "
            f"at the part's {side}, next to a placeholder; they stand elsewhere in the file too, so "
            "they could as well be new lines of the change, the placeholder keeping the lines it "
            "deletes.",
            hint=f"Add {CONTEXT_ASKED} unchanged lines {towards} them, as the file has them: "
                 f"{self._around(last if side == 'end' else first, towards)}; or, if those lines "
                 "stay, show where the new lines end. " + _HINT,
            path=self.display, line=part.first, details={"closest_line": deleted[0] + 1})

    def _check_copies(self, part: Part, block: list[tuple[str, int, int]]) -> None:
        """A change whose new lines all stand in the file already: the snippet may show them as
        the file's own lines, elsewhere, meaning to delete the lines between (an insertion of
        copies is the fewest-edit reading of a deletion shown with too little context)."""
        added = [part.lines[index] for kind, index, _ in block if kind == "+" and part.lines[index].strip()]
        if not added or any(rstrip(line) not in self.positions for line in added):
            return
        at = self.positions[rstrip(added[0])][0]
        raise AmbiguousContextError(
            f"Refusing the snippet for {self.display}: read with the fewest changes, it adds "
            f"`{added[0].strip()}`{' and the lines with it' if len(added) > 1 else ''}, which the "
            f"file already holds (line {at + 1}): the snippet may show the file's own lines, "
            "meaning to delete the lines between them and its other lines.",
            hint="Show more unchanged lines around the change, at least one that stands once in "
                 "the file on each side; to delete lines, show the unchanged lines right before and "
                 "after them. " + _HINT, path=self.display, line=part.first,
            details={"closest_line": at + 1})

    def _check_comment_for_code(self, part: Part, block: list[tuple[str, int, int]]) -> None:
        """A change that deletes more lines of code than it writes and adds a comment the file does
        not hold: the comment may be a placeholder in words the recogniser does not know
        (``# rest unchanged``, ``<!-- rest of the section unchanged -->``), standing for the lines
        the fewest-edit reading deletes. Whether they are to go, or to stay, the text does not
        tell."""
        if self.extension in PLAIN:
            return  # (text without comments: no line of it stands for others)
        deleted = [self.texts[line] for kind, _, line in block if kind == "-"]
        added = [part.lines[index] for kind, index, _ in block if kind == "+"]
        comments = [line for line in added if line.strip() and is_comment(line, self.extension)
                    and rstrip(line) not in self.positions]
        code_deleted = sum(1 for line in deleted if line.strip() and not is_comment(line, self.extension))
        code_added = sum(1 for line in added if line.strip() and not is_comment(line, self.extension))
        if not comments or code_deleted <= code_added:
            return
        gone = [line for kind, _, line in block if kind == "-"]
        raise PlaceholderError(
            f"Refusing the snippet for {self.display}: the part at its line {part.first} adds the "
            f"comment `{comments[0].strip()}` where it deletes {code_deleted - code_added} more "
            f"line(s) of code than it writes (file lines {gone[0] + 1}-{gone[-1] + 1}): the comment "
            "may stand for those lines, as a placeholder, or the lines may be meant to go; the text "
            "does not tell which.",
            hint="If the lines stay, write them out or mark them with a placeholder this tool "
                 "knows (# ... existing code ..., // ... existing code ...); if they go, send the "
                 "snippet without the comment, or the change as exact replacements (edit_files).",
            path=self.display, line=part.first, details={"placeholder": comments[0]})

    def _check_duplicates(self, merged: list[str]) -> None:
        """A line that stands once in the file and would stand twice in the merged file: the
        snippet shows it as new where the file has it (the fewest-edit reading inserts what the
        model showed as context, meaning to replace the lines between)."""
        counts: dict[str, int] = {}
        for line in merged:
            key = rstrip(line)
            if self._once(key):
                counts[key] = counts.get(key, 0) + 1
                if counts[key] == 2:
                    at = self.positions[key][0]
                    raise AmbiguousContextError(
                        f"Refusing the snippet for {self.display}: read with the fewest changes, "
                        f"it writes the line `{key.strip()}` anew while the file keeps its own "
                        f"(line {at + 1}), so the merged file would hold it twice: the snippet "
                        "likely shows it as context, meaning to replace or delete the lines "
                        "between.",
                        hint="Show the lines that stay between the change and that line, or put a "
                             "placeholder there if they stay; to delete lines, show the unchanged "
                             "lines on both sides of them. " + _HINT,
                        path=self.display, details={"closest_line": at + 1})

    # -- the refusals: what to add, and where ------------------------------------------------------
    def _around(self, line: int, side: str, count: int = CONTEXT_ASKED) -> str:
        """The file's nearest non-blank lines before (``side`` "before") or after line index
        ``line``: the context a refusal asks for."""
        step = -1 if side == "before" else 1
        chosen: list[int] = []
        at = line + step
        while 0 <= at < len(self.texts) and len(chosen) < count:
            if self.texts[at].strip():
                chosen.append(at)
            at += step
        return "; ".join(f"line {i + 1} `{self.texts[i].strip()}`" for i in sorted(chosen)) or "none"

    def _edge(self, part: Part, block: list[tuple[str, int, int]], side: str) -> PatchtxError:
        """A change that deletes lines at the file's start or end, where the snippet has no
        placeholder: the model may have left the placeholder out, so those lines may be meant to
        stay."""
        deleted = [line for kind, _, line in block if kind == "-"]
        at = deleted[0] if side == "start" else deleted[-1]
        edge = "first" if side == "start" else "last"
        return AmbiguousContextError(
            f"Refusing the snippet for {self.display}: it has no placeholder at its {side}, so it "
            f"reads as the file's {side}, and so it would delete the file's line {at + 1} "
            f"`{self.texts[at].strip()}` there; a placeholder left out would mean those lines stay.",
            hint=f"If the lines {'before' if side == 'start' else 'after'} the change stay, put a "
                 f"placeholder at the snippet's {side}, next to {CONTEXT_ASKED} unchanged lines "
                 f"{'before' if side == 'start' else 'after'} the change ("
                 f"{self._around(at, 'before' if side == 'start' else 'after')}); if the file's "
                 f"{edge} lines are to go, replace them exactly (edit_files). " + _HINT,
            path=self.display, line=part.first, details={"closest_line": at + 1})

    def _unplaced(self, part: Part) -> PatchtxError:
        """A part with no span: its first or last line (next to a placeholder) is not in the file."""
        anchor = self._anchor(part)
        first_missing = part.open_before and rstrip(part.lines[0]) not in self.positions
        side, line = ("start", part.lines[0]) if first_missing else ("end", part.lines[-1])
        headline = (f"Refusing the snippet for {self.display}: the part at its line {part.first} "
                    f"{'starts' if side == 'start' else 'ends'} with \"{line.strip()}\", next to a "
                    "placeholder, and no span of the file fits it there (that line is changed, "
                    "or not where the part puts it), so what the placeholder keeps cannot be told.")
        if anchor is None:
            return ContextNotFoundError(headline, hint="Add unchanged lines of the file around "
                                        "the change, at least one that stands once in the file. "
                                        + _HINT, path=self.display, line=part.first)
        index, at = anchor
        if side == "start":
            guess = self._kept_towards(part.lines[:index], at, -1)
            hint = (f"Start the part with unchanged lines that come before the change in the file "
                    f"(before line {guess + 1} `{self.texts[guess].strip()}` the file has "
                    f"{self._around(guess, 'before', 3)}: end with the last one the change keeps). "
                    + _HINT)
        else:
            guess = self._kept_towards(part.lines[index + 1:], at, 1)
            hint = (f"End the part with {CONTEXT_ASKED} unchanged lines that follow the change in "
                    f"the file (after line {guess + 1} `{self.texts[guess].strip()}` the file has "
                    f"{self._around(guess, 'after', 3)}: start with the first one the change "
                    "keeps). " + _HINT)
        return ContextNotFoundError(headline, hint=hint, path=self.display, line=part.first,
                                    details={"closest_line": guess + 1})

    def _kept_towards(self, lines: Sequence[str], at: int, step: int) -> int:
        """From the file index ``at`` of a part's anchor, the file index of the part's last line
        (``step`` 1; its first, -1) among ``lines`` (those beyond the anchor) that the file holds
        in turn near it: where the part's unchanged lines stop."""
        ordered = list(lines) if step == 1 else list(reversed(lines))
        reach = len(ordered) + CONTEXT_ASKED
        for line in ordered:
            key = rstrip(line)
            if not key.strip():
                continue
            nearby = [p for p in self.positions.get(key, ()) if 0 < (p - at) * step <= reach]
            if not nearby:
                break
            at = min(nearby, key=lambda p: abs(p - at))
        return at

    def _anchor(self, part: Part) -> tuple[int, int] | None:
        """(index in the part, file index) of a line of the part that stands once in the file."""
        for index, line in enumerate(part.lines):
            key = rstrip(line)
            if self._once(key):
                return index, self.positions[key][0]
        return None

    def _ambiguous(self, parts: Sequence[Part], found: Sequence[Reading]) -> PatchtxError:
        first, second = found[0].spans, found[1].spans
        index = next(i for i, (x, y) in enumerate(zip(first, second, strict=True))
                     if (x.start, x.end, x.cost) != (y.start, y.end, y.cost))
        part = parts[index]
        one, other = first[index], second[index]
        if one.start != other.start:
            lines = sorted({one.start + 1, other.start + 1})
            where = f"starting at line {lines[0]} and at line {lines[-1]}"
        else:
            lines = sorted({one.end, other.end})
            where = (f"starting at line {one.start + 1} and ending at line {lines[0]} or at line "
                     f"{lines[-1]}")
        return AmbiguousContextError(
            f"Refusing the snippet for {self.display}: the part at its line {part.first} fits the "
            f"file equally well {where} (as few lines changed either way), and the two readings "
            "write different files.",
            hint=f"Add {CONTEXT_ASKED} unchanged lines around the change that stand once in the "
                 "file, so one place fits. " + _HINT, path=self.display, line=part.first,
            details={"candidate_lines": lines})


def merge_snippet(texts: Sequence[str], snippet: str, extension: str, display: str = "the file") -> list[str]:
    """The file's lines ``texts`` with the lazy ``snippet`` merged in (``extension``: the file's,
    as ``plan.placeholders.extension_of`` spells it); raise ``PatchtxError`` when the text does
    not decide the result (see the module)."""
    return Merger(texts, extension, display).merge(snippet)
