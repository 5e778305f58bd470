"""Whether an update is already applied: its hunks, undone, are found and redone by the rule.

A patch sent again (a CI retry, an agent resending) must not apply twice: docs/format.md, "A patch
sent again", states the rule these functions decide.
"""

from __future__ import annotations

from functools import partial
from itertools import chain, islice, product
from typing import TYPE_CHECKING

from ..errors import PatchtxError
from ..model import Chunk
from .matching import LineIndex, Missing, Placement, place
from .normalise import matches_in_some_pass
from .rewrite import final_newline, rewrite
from .search import starts_of
from .textfile import BOM_BYTES, TextFile, decode

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Iterator, Sequence

    from ..model import LineKind

    Redo = Callable[[TextFile, Sequence[Chunk]], list[Placement]]
    """How the patch's format places its hunks in a file (raising ``PatchtxError`` where it does
    not): the already-applied question redoes undone hunks by the rule that would apply them."""


def reversed_chunk(chunk: Chunk) -> Chunk:
    """The chunk that undoes ``chunk``: what it adds is what the file holds once it is applied.
    A pure insertion must stand right after its anchor (kept as a context line) or, with none,
    end the file. A unified hunk's ``\\ No newline at end of file`` marks change sides with its lines."""
    swap = {" ": " ", "-": "+", "+": "-"}
    lines = tuple((swap[kind], text) for kind, text in chunk.lines)
    eof = chunk.is_end_of_file
    unprefixed = chunk.unprefixed  # (context lines written without their space stay so)
    if all(kind == "+" for kind, _ in chunk.lines):
        if chunk.anchors:  # (where an "*** End of File" marker does not move it either)
            lines = ((" ", chunk.anchors[-1]), *lines)
            eof = False
        else:
            eof = True
    return Chunk(chunk.anchors, lines, eof, chunk.line,  # type: ignore[arg-type]
                 old_unterminated=chunk.new_unterminated, new_unterminated=chunk.old_unterminated,
                 unprefixed=unprefixed)


def insertion_in_place(texts: Sequence[str], chunks: Sequence[Chunk],
                        placements: Sequence[Placement]) -> bool:
    """Whether some chunk's new side already stands where it would be placed: a pure insertion's
    lines right after its anchor (or, with none, at the end of the file), a chunk that keeps
    lines and adds others (``adds_around``) with its added lines standing around its kept lines
    where they are found (``ExactUpdate.insertion_in_place`` on lines). Applied, it would stand
    there twice. Added lines must stand exactly (an earlier run wrote them); kept lines as some
    pass found them."""
    for placement in placements:
        chunk = chunks[placement.chunk_index]
        if chunk.inserts_text:
            added = [text for _, text in placement.lines]
            at = placement.start if chunk.anchors else len(texts) - len(added)
            if at >= 0 and list(texts[at : at + len(added)]) == added:
                return True
        elif adds_around(placement.lines):
            new = placement.lines
            start, end = placement.start, placement.start + placement.length
            # Kept lines as the placement found them: exactly where it found them exactly (a
            # look-alike above, indented, is another line), else in some pass.
            loose = list(texts[start:end]) != [text for kind, text in new if kind != "+"]
            # Anywhere over the lines where its kept lines are found (``new_side_starts``):
            # kept lines that look like the added ones are found at an added line (' c' '+c'
            # ' b' in 'c c b'; ' }' '+' '+g() {' '+}' pinned to the end of the file).
            if any(_stands(texts, at, new, loose=loose) for at in new_side_starts(start, end, len(new))):
                return True
        elif replaces_in_place(placement.lines):
            start, end = placement.start, placement.start + placement.length
            loose = list(texts[start:end]) != [text for kind, text in placement.lines if kind != "+"]
            side = [(kind, text) for kind, text in placement.lines if kind != "-"]
            if any(_stands(texts, at, side, loose=loose) for at in overlapping_starts(start, end, len(side))):
                return True
    return False


def replaces_in_place(lines: Sequence[tuple[str, str]]) -> bool:
    """Whether a placed chunk's lines remove some and add some non-blank text: one whose new side
    already stands overlapping the lines where its old side is found is in place (an insertion
    written as a replacement, ``-    return y`` ``+    log(y)`` ``+    return y``, finds its old
    line again once applied: sent again, it would apply on top of itself). Not lines replaced by
    themselves, which change nothing either way."""
    removes = adds = False
    old: list[str] = []
    new: list[str] = []
    for kind, text in lines:  # (one pass: every hunk of a successful patch is asked)
        if kind == "-":
            removes = True
            old.append(text)
        elif kind == "+":
            adds = adds or bool(text.strip())
            new.append(text)
        else:
            old.append(text)
            new.append(text)
    return removes and adds and old != new


def overlapping_starts(start: int, end: int, size: int) -> range:
    """Where a new side ``size`` long stands overlapping the old side found at ``start..end``
    (lines, or bytes of whole lines)."""
    return range(max(start - size + 1, 0), end)


def adds_around(lines: Sequence[tuple[str, str]]) -> bool:
    """Whether a placed chunk's lines (Codex's retry's, when it took it) keep some lines and add
    some text before or after them, removing nothing: applied once, its new side stands with its
    kept lines where they are found, so placed there again it would add its lines a second time."""
    return (all(kind != "-" for kind, _ in lines) and any(kind == " " for kind, _ in lines)
            and any(kind == "+" and text.strip() for kind, text in lines))


def new_side_starts(start: int, end: int, size: int) -> range:
    """Where the new side (``size`` long) of a chunk that keeps lines and adds others
    (``adds_around``) may stand, applied once, when its kept lines are found at ``start..end``
    (lines, or bytes): anywhere that holds all of those, since kept lines like the added ones are
    found at the added ones (' b' '+b' ' c' in 'a b b c': at the added 'b', a line below the kept
    one). Placed there again, it would add its lines a second time."""
    return range(max(end - size, 0), start + 1)


def _stands(texts: Sequence[str], at: int, lines: Sequence[tuple[str, str]], *, loose: bool = True) -> bool:
    """Whether ``lines`` stand in ``texts`` from ``at``: added and removed lines exactly, kept
    lines in some pass of the placement rule (exactly, without ``loose``)."""
    if at + len(lines) > len(texts):
        return False
    return all(texts[at + i] == text or (loose and kind == " " and matches_in_some_pass(text, texts[at + i]))
               for i, (kind, text) in enumerate(lines))


def _undone(exact: LineIndex, loose: LineIndex, chunks: Sequence[Chunk],
            ) -> list[tuple[int, int, int, tuple[tuple[LineKind, str], ...]]] | None:
    """Where the chunks, reversed, place: their new sides standing in the file, what they added
    exactly (an earlier run wrote it, not a look-alike) and the lines they keep as the placement
    rule found them (a context line written without its indentation); None where they do not."""
    undoing = [reversed_chunk(chunk) for chunk in chunks]
    try:
        return place(exact, undoing, first_match=True)
    except Missing:
        pass
    if not all(exact.holds(text) for chunk in chunks for kind, text in chunk.lines if kind == "+"):
        return None  # (told by a scan of the lines, not by the four passes of a placement)
    try:
        placed = place(loose, undoing, first_match=True)
    except Missing:
        return None
    if all(_stands(exact.texts, start, lines) for _, start, _, lines in placed):
        return placed
    return None


def _redoes(exact: LineIndex, loose: LineIndex, chunks: Sequence[Chunk], redo: Redo,
            ends_with_newline: bool, applied: Sequence[bool] | None = None) -> bool:
    """Whether undoing the chunks said ``applied`` (all of them by default) gives a file in which
    ``redo`` (the patch format's placement) puts each of them exactly where its new side stands,
    and places the others too: the file is then the patch's own work, in part or in whole. Each
    undone chunk placing on its own is not enough: a hunk whose new lines also stand elsewhere (an
    ``x = 2`` in another function) would count as applied where its old lines still wait, or where
    the hunk, placed among the others, does not go. The final newline counts as well
    (``ends_with_newline``: the file's): a hunk marked ``\\ No newline at end of file`` undoes and
    redoes it too.

    Undone where the content rule first finds them; a whole unified diff (every chunk ``applied``)
    whose hunks each replace old lines that stand nowhere in the file also where its hunks' new
    sides stand nearest their stated lines (``_unified_undos``), since the redo places them by
    those lines: each undo is checked by the redo. Not with a hunk whose old side still stands
    (it may simply not be applied) or that only inserts (its lines standing somewhere says too
    little: a diff sent again after part of it was applied, whose insertion is not, has files
    that the whole diff also makes from another file)."""
    if applied is None:
        applied = [True] * len(chunks)
    undo = [chunk for chunk, done in zip(chunks, applied, strict=True) if done]
    first = _undone(exact, loose, undo)
    tries: Iterable[list[tuple[int, int, int, tuple[tuple[LineKind, str], ...]]]] = \
        [] if first is None else [first]
    if all(applied) and all(chunk.stated_line is not None and chunk.old_lines
                            and not _old_side_stands(exact.texts, chunk) for chunk in chunks):
        tries = chain(tries, (other for other in _unified_undos(exact.texts, chunks) if other != first))
    file = _lines(exact.texts, ends_with_newline)
    undoing = [reversed_chunk(chunk) for chunk in undo]
    for undone in tries:
        before = _rewritten(file, undoing, [Placement(number, start, end - start, lines)
                                            for number, start, end, lines in undone])
        try:
            redone = redo(before, chunks)
        except PatchtxError:
            continue
        after = _rewritten(before, chunks, [placement for placement in redone
                                            if applied[placement.chunk_index]])
        if after.texts == list(exact.texts) and after.ends_with_newline == ends_with_newline:
            return True
    return False


_UNIFIED_UNDOS = 16
"""How many undos of a unified diff ``_unified_undos`` offers at most (each costs a redo)."""


def _distance(near: int, at: int) -> tuple[int, int]:
    return abs(at - near), at


def _unified_undos(texts: Sequence[str], chunks: Sequence[Chunk],
                   ) -> Iterator[list[tuple[int, int, int, tuple[tuple[LineKind, str], ...]]]]:
    """Where a unified diff's hunks, reversed, may be undone, as ``_undone`` gives them: each hunk
    where its new side stands exactly (a unified hunk matches no other way), the places nearest
    its stated line first (moved by the lines the hunks above it add or remove, as the file they
    made has them), hunks in order and apart; at most ``_UNIFIED_UNDOS``. The content rule's
    first finds can be a look-alike above the hunk's place (a file changed at ``-x +a`` with an
    ``a`` just above it), and the redo then puts the hunk elsewhere."""
    options: list[list[int]] = []
    shift = 0
    for chunk in chunks:
        new = chunk.new_lines
        stated = chunk.stated_line or 0
        near = (max(stated - 1, 0) if chunk.old_lines else stated) + shift
        found = starts_of(texts, new, 0, len(texts) - len(new)) if new else [min(max(near, 0), len(texts))]
        options.append(sorted(found, key=partial(_distance, near)))
        shift += len(new) - len(chunk.old_lines)
    sizes = [len(chunk.new_lines) for chunk in chunks]
    undoing = [reversed_chunk(chunk).lines for chunk in chunks]  # (unified hunks have no anchors)
    # (Combinations looked at are bounded too: hunks out of order are passed over.)
    looked_at = islice(product(*options), 16 * _UNIFIED_UNDOS)
    apart = (starts for starts in looked_at
             if all(later >= start + size for start, size, later in zip(starts, sizes, starts[1:], strict=False)))
    for starts in islice(apart, _UNIFIED_UNDOS):
        yield [(number, start, start + size, lines)
               for number, (start, size, lines) in enumerate(zip(starts, sizes, undoing, strict=True))]


def _old_side_stands(texts: Sequence[str], chunk: Chunk) -> bool:
    """Whether a hunk's old lines (some) stand exactly somewhere in ``texts``."""
    old = chunk.old_lines
    return bool(old) and bool(starts_of(texts, old, 0, len(texts) - len(old)))


def _lines(texts: Sequence[str], ends_with_newline: bool) -> TextFile:
    """``texts`` as a file with LF endings, its last line unterminated unless ``ends_with_newline``."""
    endings = ["\n"] * len(texts)
    if endings and not ends_with_newline:
        endings[-1] = ""
    return TextFile(list(texts), endings)


def _rewritten(file: TextFile, chunks: Sequence[Chunk], placements: list[Placement]) -> TextFile:
    """What ``rewrite`` makes of ``file`` (line endings aside, the final newline as the hunk that
    reaches the file's end says, else as ``file`` has it: an undone file is lines compared, never
    written, so a blank last line keeps it too)."""
    stated = final_newline(chunks, placements, len(file.texts))
    return rewrite(file, placements, file.ends_with_newline if stated is None else stated)[0]


def _ends_with_newline(content: bytes) -> bool:
    """Whether the file's last line has a line break (true of an empty file), as ``TextFile`` says."""
    body = content[len(BOM_BYTES):] if content.startswith(BOM_BYTES) else content
    return not body or body.endswith((b"\n", b"\r"))


def places(index: LineIndex, chunks: Sequence[Chunk]) -> bool:
    """Whether the placement rule finds ``chunks`` in the file (in the passes ``index`` tries,
    the first place of each)."""
    try:
        place(index, chunks, first_match=True)
    except Missing:
        return False
    return True


def shows_its_change(chunk: Chunk, *, reverse: bool = False) -> bool:
    """Whether the chunk's being applied can show in a file: it adds some non-blank text (or, read
    backwards, removes some). One that only deletes (or adds blank lines) would be "in place"
    wherever its old lines are absent, a typo included."""
    shown = ("+", "-") if reverse else ("+",)
    return any(kind in shown and text.strip() for kind, text in chunk.lines)


def deletions_in_place(loose: LineIndex, chunks: Sequence[Chunk]) -> bool:
    """Whether every chunk only removes lines, between kept lines that now stand together in the
    file: how a deletion already applied looks, and a typo too, so it is never taken for applied,
    only said in a miss's hint."""
    if not all(any(kind == "-" for kind, _ in chunk.lines) and not shows_its_change(chunk)
               and any(kind == " " and text.strip() for kind, text in chunk.lines) for chunk in chunks):
        return False
    return _undone(LineIndex(loose.texts, passes=1), loose, chunks) is not None


def hunks_in_place(content: bytes, chunks: Sequence[Chunk], redo: Redo, *,
                   loose: LineIndex | None = None, reverse: bool = False) -> list[str] | None:
    """For each chunk, "applied", "pending" (it would apply) or "missing" (neither); None for a
    file that is not text.

    A chunk is applied when it adds some text, its new side stands in the file (what it adds
    exactly: what an earlier run left is the patch's own text, not a look-alike; what it keeps as
    some pass finds it) and its old side is found in no pass; a pure insertion, whose old side is
    always found, when its lines already stand where it would put them. When the chunks undone
    together place and, redone by ``redo`` (the patch format's placement: ``update._redo``), give
    the file back, every chunk is applied. For a diff read backwards (``reverse``), the text its
    chunks remove shows the change as well (it is what the diff forwards added): such a diff
    "applied" is a diff not applied forwards."""
    if loose is None:  # (the caller's index of the decoded file, when it has one)
        try:
            loose = LineIndex(decode(content, "", any_bytes=True).texts, source=content)
        except PatchtxError:
            return None
    exact = LineIndex(loose.texts, passes=1)
    ends_with_newline = _ends_with_newline(content)

    def old_side_found(chunk: Chunk) -> bool:
        # As written: a chunk found only by Codex's retry without its trailing blank line, whose
        # whole new side (that blank included) stands in the file, is in place, not pending (the
        # retry would insert its lines a second time).
        try:
            placed = place(loose, [chunk], first_match=True)
        except Missing:
            return False
        return placed[0][3] == chunk.lines

    def shows(chunk: Chunk) -> bool:
        return shows_its_change(chunk, reverse=reverse)

    # (Chunks undone together place only where each, undone, places alone: asked first.)
    alone = [shows(chunk) and _undone(exact, loose, [chunk]) is not None for chunk in chunks]
    if all(alone) and _redoes(exact, loose, chunks, redo, ends_with_newline):
        return ["applied"] * len(chunks)
    in_place = [undone and (chunk.inserts_text or not old_side_found(chunk))
                for chunk, undone in zip(chunks, alone, strict=True)]
    if any(in_place) and not _redoes(exact, loose, chunks, redo, ends_with_newline, in_place):
        # Their new sides stand in the file, but not where the patch, its other hunks placed as
        # well, puts them: none is in place (the miss, or the update, stands).
        in_place = [False] * len(chunks)
    return ["applied" if done else "pending" if places(loose, [chunk]) else "missing"
            for chunk, done in zip(chunks, in_place, strict=True)]
