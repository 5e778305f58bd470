"""One file's update: the patch's hunks placed in the file's bytes and rewritten (reads nothing).

``update_file`` is the one place where a file's new bytes are made from a patch's hunks; the
planner (``planner.Stager``) only keeps the books around it (paths, moves, modes, what an earlier
operation of the patch did). Its steps, in order:

1. **Placement, chosen once** from the patch's format (``Format.placer``, ``formats.registry``):
   a Codex patch's hunks go where their lines are (``matching``, THE placement rule); a unified
   diff's at their stated lines (``unified_placement``); SEARCH/REPLACE blocks by the same rule in
   their own passes (``block_placement``); exact text replacements by the same rule over the
   file's text (``text_placement``).
2. **Bytes first**: where the format's placement is the content rule, an update that the exact
   pass settles is done on the bytes (``exact``), without a line list; otherwise the file is
   decoded (``textfile``) and placed on its lines.
3. **Already applied?** asked once, in ``_already_applied``: when a hunk does not match, or when a
   pure insertion's lines already stand where it would put them (``applied`` holds the rule).
4. **Repairs** (``repair_update``, unless ``rule.repair`` is off): hunks that match nowhere as
   written are tried as the shapes models write (line-number prefixes, unified file headers,
   hunks out of order), hunks partly in place lose the hunks that are, lines written without a
   prefix are checked against the file, and added lines take the file's indentation where the
   hunk shows the model's differs; every repair placed by the placer above, and reported.
5. **Rewrite** in one place (``rewrite``): the new bytes and the changed line ranges a diff shows.

The contract (docs/architecture.md, "The update unit"): given the file's bytes, the hunks, the
patch's rule and the file's names, it returns a ``FileUpdate`` (new bytes, changed ranges, or
"already applied") or raises the ``PatchtxError`` that says why not. It never reads or writes.
"""

from __future__ import annotations

from functools import partial
from typing import TYPE_CHECKING

from .._record import record, replace
from ..errors import ContextNotFoundError, HunkParseError, NoChangeError, PartlyAppliedError, PatchtxError
from ..formats.codex import CODEX
from ..formats.registry import format_named
from ..formats.unified_placement import new_side_stands, read_by_counts
from ..model import Repair
from ..place.applied import (
    deletions_in_place,
    hunks_in_place,
    insertion_in_place,
    places,
    reversed_chunk,
    shows_its_change,
)
from ..place.exact import update_exactly
from ..place.matching import LineIndex
from ..place.normalise import normalise, old_lines_may_stand
from ..place.placer import Placed, UpdateRule
from ..place.rewrite import rewrite
from ..place.textfile import TextFile, decode
from .placeholders import refuse_elision

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence

    from ..formats.registry import Format
    from ..model import Chunk, DeleteFile, Repair, UpdateFile
    from ..place.matching import Placement
    from ..place.rewrite import Edit


@record
class FileNames:
    """How an update's errors name its file."""

    path: str
    """Workspace-relative: the errors' ``path`` field."""
    spelled: str
    """As the patch wrote it."""
    display: str
    """As Codex's messages name it (the spelling joined to the root)."""


@record
class FileUpdate:
    """What ``update_file`` makes of one file."""

    after: bytes
    edits: tuple[Edit, ...]
    """The changed line ranges ``(old_start, old_end, new_start, new_end)``, for a diff."""
    offsets: tuple[Edit, ...] | None
    """Where each of ``edits`` starts and ends in the old and new bytes (updates made on the
    bytes of a file without BOM); None: a diff finds them."""
    applied: bool = False
    """Every hunk is already in place: ``after`` is the file as it is, and nothing changes."""
    repairs: tuple[Repair, ...] = ()
    """What the repair step did to the hunks to place them (``repair_update``)."""
    notes: tuple[str, ...] = ()
    """What the placement took less literally than the hunks say, each a sentence naming the file
    (``Plan.notes``)."""


def _lines_of(content: bytes, names: FileNames, rule: UpdateRule) -> TextFile:
    """The file's lines as the patch's format reads them: a unified diff's lines are the file's
    bytes, whatever its encoding (``decode(any_bytes=True)``, ``Format.reads_bytes``); every other
    format edits UTF-8 text only."""
    return decode(content, names.display, any_bytes=format_named(rule.format).reads_bytes)


def update_file(content: bytes, chunks: Sequence[Chunk], rule: UpdateRule, names: FileNames, *,
                check_applied: bool = True) -> FileUpdate:
    """The file's new bytes once ``chunks`` are applied to ``content`` by ``rule``.

    ``check_applied``: whether the hunks may be found already applied (not when an earlier
    operation of the same patch changed the file: its text is then the patch's own). Raises
    ``ContextNotFoundError``, ``AmbiguousContextError``, ``PartlyAppliedError``, and
    ``BinaryFileError`` / ``EncodingPatchError`` for a file that is not UTF-8 text."""
    if not chunks:  # a unified diff's pure rename, copy or mode change
        return FileUpdate(content, (), ())
    if any(chunk.readings for chunk in chunks):
        # (A unified hunk read by its counts: its reading chosen by the file, before all else.)
        chunks = read_by_counts(_lines_of(content, names, rule).texts, chunks, names.display)
    placer = format_named(rule.format).placer
    update: FileUpdate | None = None
    index: LineIndex | None = None
    original: TextFile | None = None
    miss: ContextNotFoundError | None = None
    resent = False
    placed: Placed | None = None
    exact = (update_exactly(content, chunks, first_match=rule.first_match, in_turn=placer.in_turn)
             if placer.on_bytes else None)
    if exact is not None:
        # (Placed exactly: a line written without a prefix equals its file line.)
        update = FileUpdate(exact.after, tuple(exact.edits),
                            None if exact.offsets is None else tuple(exact.offsets),
                            repairs=_unprefixed(chunks, names))
        reinserted = exact.insertion_in_place
    else:
        original = _lines_of(content, names, rule)
        index = LineIndex(original.texts, source=content)
        try:
            placed = placer.on_lines(original, index, chunks, rule, names.display)
        except ContextNotFoundError as error:
            miss, reinserted = error, False
        else:
            update, settled = _rewritten(original, chunks, placed, rule, names, ())
            if (check_applied and placer.unchanged_in_place is not None and update.after == content
                    and placer.unchanged_in_place(original, chunks, placed.placements)):
                return FileUpdate(content, (), (), applied=True)
            # Added lines the repair step re-indented (or freed of the model's trailing white
            # space) stand, sent again, only as it wrote them: asked with them.
            rewritten = [p for p, q in zip(settled, placed.placements, strict=True) if p.lines != q.lines]
            resent = bool(rewritten) and insertion_in_place(original.texts, chunks, rewritten)
            reinserted = placed.reinserted or resent
    if placer.asks_applied and check_applied and (miss is not None or reinserted):
        try:
            applied = _already_applied(content, chunks, index, names, rule)
        except PartlyAppliedError as partly:
            if not _repairs(rule):
                raise
            return _without_applied_hunks(content, chunks, rule, names, partly)
        if applied is not None and (placed is None or original is None
                                    or _added_endings_stand(original, placed.placements)):
            return applied
        if resent and miss is None and index is not None:
            applied = _applied_once_repaired(content, chunks, rule, names, index)
            if applied is not None:
                return applied
        if miss is not None and index is not None and deletions_in_place(index, chunks):
            miss.hint = f"{DELETIONS_IN_PLACE} {miss.hint}".rstrip()
    if miss is not None:
        assert index is not None and original is not None

        def place(some: Sequence[Chunk]) -> list[Placement]:
            return placer.on_lines(original, index, some, rule, names.display).placements

        fmt = format_named(rule.format)
        if fmt.elisions_refused:
            refuse_elision(chunks, original.texts, names.display, miss)
        if fmt.decorated:
            from ..intake.decorations import undecorated  # (off a one-line edit's path)

            def in_place(some: Sequence[Chunk]) -> bool:
                if not (check_applied and placer.asks_applied):
                    return False
                try:
                    return _already_applied(content, some, index, names, rule) is not None
                except PartlyAppliedError:
                    return False

            found = undecorated(original.texts, chunks, place, names.spelled, fmt, miss,
                                repair=rule.repair, applied=in_place)
            if found is None:
                raise miss
            update = update_file(content, found[0], rule, names, check_applied=check_applied)
            return replace(update, repairs=(*found[1], *update.repairs))
        if not _repairs(rule):
            raise miss
        from ..intake.repair_update import after_miss  # (off a one-line edit's path)

        try:
            repaired, _, repairs = after_miss(original.texts, chunks, place, names.spelled, miss,
                                              normalised=partial(index.keys, 3))
        except (ContextNotFoundError, HunkParseError):
            applied = (_applied_once_repaired(content, chunks, rule, names, index) if check_applied
                       else None)
            if applied is None:
                raise
            return applied
        # The repaired hunks are a patch like any other: placed, asked whether they are already
        # applied (a repaired patch sent again), checked for lines they would insert twice.
        update = update_file(content, repaired, rule, names, check_applied=check_applied)
        return replace(update, repairs=(*repairs, *update.repairs))
    assert update is not None
    if _repairs(rule) and any(chunk.unprefixed for chunk in chunks):
        from ..intake.repair_update import lost_space_readings  # (off a one-line edit's path)

        lines = original if original is not None else _lines_of(content, names, rule)
        space = index if index is not None else LineIndex(lines.texts, source=content)
        lost_space_readings(lines.texts, chunks, lambda some: placer.on_lines(
            lines, space, some, rule, names.display).placements, names.display)
    return update


DELETIONS_IN_PLACE = (
    "The hunks only remove lines, and the lines they keep stand together in the file: if this "
    "patch was applied before, it is in place. patchtx does not take removed lines' absence for "
    "a replay (a typo, or a patch meant for another file, looks the same), so --skip-applied does "
    "not cover it; check the file and leave the patch out.")


def _repairs(rule: UpdateRule) -> bool:
    """Whether the repair step (``repair_update``) looks at this rule's hunks (``Format.repairs``:
    a Codex patch's and a unified diff's; SEARCH/REPLACE blocks and text replacements have their
    own rules)."""
    return rule.repair and format_named(rule.format).repairs


def _rewritten(original: TextFile, chunks: Sequence[Chunk], placed: Placed, rule: UpdateRule,
               names: FileNames, repairs: tuple[Repair, ...]) -> tuple[FileUpdate, list[Placement]]:
    """The rewrite of placed hunks, after the repair step's last look at them (lines written
    without a prefix, added lines' indentation), and the placements as that look left them."""
    placements = placed.placements
    if _repairs(rule):
        from ..intake.repair_update import settle  # (off a one-line edit's path)

        placements, settled = settle(original.texts, chunks, placements, names.spelled,
                                     adjust=True, display=names.display)
        repairs += tuple(settled)
    rewritten, edits = rewrite(original, placements, placed.ends_with_newline)
    return FileUpdate(rewritten.encode(), tuple(edits), None, repairs=repairs, notes=tuple(
        f"{names.spelled}: {note}" for note in placed.notes)), placements


def _unprefixed(chunks: Sequence[Chunk], names: FileNames) -> tuple[Repair, ...]:
    if not any(chunk.unprefixed for chunk in chunks):
        return ()
    from ..intake.repair_update import unprefixed_repair  # (off a one-line edit's path)

    return (unprefixed_repair(chunks, names.spelled),)


def _without_applied_hunks(content: bytes, chunks: Sequence[Chunk], rule: UpdateRule,
                           names: FileNames, partly: PartlyAppliedError) -> FileUpdate:
    """The repair of a patch sent again after part of it was applied: the hunks in place (by the
    already-applied rule: their old lines found nowhere, their new lines standing in the file)
    left out, the others placed and applied as any hunks are, at stated lines moved past the hunks
    left out. Not for a pure insertion in place, whose old side says nothing, nor where a hunk left
    may be in place as well."""
    done = set(partly.details.get("applied_lines", ()))
    if any(chunk.line in done and chunk.inserts_text for chunk in chunks):
        # A pure insertion counts as in place when its lines merely stand where it would put
        # them: enough to refuse a patch sent again, too little to leave it out and write the rest.
        raise partly
    rest = _shifted_past(chunks, done)
    texts = _lines_of(content, names, rule).texts
    if any(new_side_stands(texts, chunk) for chunk in rest):
        # A hunk left whose new side already stands where it would go may be in place too, its
        # old side found elsewhere (the same line in the next function): in doubt, refuse.
        raise partly
    if not all(map(shows_its_change, rest)):
        # A hunk that only deletes (or adds blank lines) never counts as in place: sent again,
        # its old lines may be found elsewhere (the same line in the next function) and it would
        # apply a second time there.
        raise partly
    update = update_file(content, rest, rule, names, check_applied=False)
    shown = ", ".join(map(str, sorted(done)))
    skipped = Repair(
        "applied_hunk_skipped", f"{names.spelled}, patch line{'s' if len(done) > 1 else ''} {shown}",
        "left out the hunks already in place (their new lines stand in the file and their old "
        "lines do not) and applied the others")
    return FileUpdate(update.after, update.edits, update.offsets, repairs=(skipped, *update.repairs))


def _shifted_past(chunks: Sequence[Chunk], done: set[int]) -> list[Chunk]:
    """The chunks not ``done`` (by patch line), each stated line moved by the lines the done ones
    above it added or removed: the file holds them already."""
    shift, rest = 0, []
    for chunk in chunks:
        if chunk.line in done:
            shift += len(chunk.new_lines) - len(chunk.old_lines)
        elif chunk.stated_line is not None and shift:
            rest.append(replace(chunk, stated_line=max(chunk.stated_line + shift, 0)))
        else:
            rest.append(chunk)
    return rest


def _already_applied(content: bytes, chunks: Sequence[Chunk], index: LineIndex | None,
                     names: FileNames, rule: UpdateRule) -> FileUpdate | None:
    """THE already-applied question for an update whose hunks miss or re-insert lines that stand
    (docs/format.md, "A patch sent again"): every hunk in place is an update that changes nothing;
    some in place while the others would apply is refused; otherwise None (the update, or its
    miss, stands)."""
    verdicts = hunks_in_place(content, chunks, _redo(rule), loose=index, reverse=rule.reverse)
    if verdicts is None:
        return None
    done = [chunk.line for chunk, verdict in zip(chunks, verdicts, strict=True) if verdict == "applied"]
    if len(done) == len(chunks):
        return FileUpdate(content, (), (), applied=True)
    if done and "missing" not in verdicts:
        raise PartlyAppliedError(
            f"Refusing the patch: some hunks of {names.spelled} are already applied (patch lines "
            f"{', '.join(map(str, done))}) and the others are not.",
            hint="Send only the hunks that are not yet applied, or re-read the file first.",
            path=names.path, line=done[0], details={"applied_lines": done})
    return None


def _added_endings_stand(original: TextFile, placements: Sequence[Placement]) -> bool:
    """Whether every ``+`` line that a unified diff writes with its own line ending
    (``_diff_endings``: the diff was made from these very bytes) stands in the file with that
    ending, CR or not. The already-applied question compares lines without their endings; a patch
    whose added lines would bring endings the file does not hold is not in place (``-a`` ``-a``
    ``+a\r`` on ``a`` ``a``: its new side's text stands, its CRLF does not)."""
    present = {(text, "\r" in ending) for text, ending in zip(original.texts, original.endings, strict=False)}
    return all((text, "\r" in ending) in present
               for placement in placements if placement.endings is not None
               for text, ending in zip([t for k, t in placement.lines if k == "+"], placement.endings,
                                       strict=True))




def _redo(rule: UpdateRule) -> Callable[[TextFile, Sequence[Chunk]], list[Placement]]:
    """How the already-applied question redoes undone hunks: by the format's own placement, each
    hunk found once (SEARCH/REPLACE blocks in turn: the content rule alone could take a file for
    their work where a block's SEARCH still stands). Once under ``first_match`` too: a file that is
    the patch's work at first places may also be one it would apply to again, and in doubt the
    answer is no (the miss stands)."""
    placer, unique = format_named(rule.format).placer, replace(rule, first_match=False)

    def redo(before: TextFile, some: Sequence[Chunk]) -> list[Placement]:
        return placer.on_lines(before, LineIndex(before.texts), some, unique, "").placements

    return redo


def _applied_once_repaired(content: bytes, chunks: Sequence[Chunk], rule: UpdateRule,
                           names: FileNames, index: LineIndex) -> FileUpdate | None:
    """The already-applied question for hunks that applied only through the repair step (line
    numbers removed, indentation given, hunks reordered): undone, repairs included, they give a
    file that the patch, repairs included, turns back into exactly this one. None otherwise."""
    if not all(shows_its_change(chunk) for chunk in chunks):
        return None
    from ..intake.repair_update import numbered_lines, without_file_header  # (off a one-line edit's path)

    headless = without_file_header(chunks, names.spelled)  # (its lines, reversed, are no header)
    undone = [reversed_chunk(chunk) for chunk in (chunks if headless is None else headless[0])]
    if numbered_lines(chunks) is None and not all(places(index, [chunk]) for chunk in undone):
        return None  # (the common miss, told cheaply: no undone hunk stands in the file)
    undo = replace(rule, format=CODEX.name, reverse=False)  # (the reversed hunks state no lines: by content)
    try:
        before = update_file(content, undone, undo, names, check_applied=False)
        again = update_file(before.after, chunks, rule, names, check_applied=False)
    except PatchtxError:
        return None
    if before.after == content or again.after != content:
        return None
    return FileUpdate(content, (), (), applied=True, repairs=again.repairs)


def already_applied(content: bytes, chunks: Sequence[Chunk], rule: UpdateRule) -> bool:
    """Whether ``content`` holds every hunk of ``chunks`` applied (true of none): the question for
    a file the update itself does not read, the destination of a move whose source is gone."""
    verdicts = hunks_in_place(content, chunks, _redo(rule), reverse=rule.reverse) if chunks else []
    return verdicts is not None and all(verdict == "applied" for verdict in verdicts)


# -- a hunk written from the file before an earlier edit -------------------------------------------
def name_earlier_edit(miss: ContextNotFoundError, chunks: Sequence[Chunk], content: bytes,
                      rule: UpdateRule, names: FileNames, root: str) -> None:
    """A hunk that misses but matches the file as it was before one of the few newest kept
    transactions that changed it (``txn.kept.recent_originals``: this user's, signed, read
    only) was written from the file before that edit (a model patching from its memory of the
    file before its own last edit): the miss names the transaction and shows the lines as
    they stand now. Changes ``miss``'s hint and details (the planner asks, for a miss on a file
    no earlier operation of the patch changed)."""
    from ..place.hints import earlier_edit  # (off a one-line edit's path)
    from ..txn.kept import recent_originals  # (off a one-line edit's path)

    exactly = replace(rule, repair=False)  # (the lines as the hunk has them: no repair)
    for entry, before in recent_originals(root, names.path):
        if before == content or not _may_hold(chunks, before, format_named(rule.format).replaces_text):
            continue  # (undone since, or written back; or the hunk's lines are not there)
        try:
            then = update_file(before, chunks, exactly, names, check_applied=False)
        except PatchtxError:
            continue
        if not then.edits:
            continue
        span = (min(edit[0] for edit in then.edits), max(edit[1] for edit in then.edits))
        hint = earlier_edit(_lines_of(content, names, rule).texts, _lines_of(before, names, rule).texts,
                            span, entry, made_it=then.after == content)
        # (what the already-applied rule saw of lines only removed stays first)
        kept = DELETIONS_IN_PLACE + " " if miss.hint.startswith(DELETIONS_IN_PLACE) else ""
        miss.hint = kept + hint.text
        miss.details["closest_line"] = hint.closest_line
        miss.details["earlier_transaction"] = {"id": entry.transaction_id,
                                               "time": entry.committed_at}
        return


def _may_hold(chunks: Sequence[Chunk], data: bytes, texts: bool) -> bool:
    """Whether every line the hunks keep or remove stands in ``data`` (by the loosest pass's key;
    ``texts``: a text replacement's old text, as it is): the cheap question before placing them
    there."""
    text = data.decode("utf-8", "replace")
    if texts:
        text = text.replace("\r\n", "\n")
        return all(old in text for chunk in chunks for kind, old in chunk.lines if kind == "-")
    return old_lines_may_stand(chunks, set(map(normalise, text.splitlines())))


# -- a patch that changes nothing, sections sent again ---------------------------------------------
def no_op_hunk(hunk: UpdateFile, rel: str, fmt: Format) -> NoChangeError | None:
    """A hunk whose new side is its old side (``Chunk.changes_nothing``) is refused as
    ``no_change`` (once the patch is staged: the planner asks): the change it was written for is
    not in it. Not the one context-only section of a pure rename (Codex's way to write one). A
    unified diff's hunks are asked on their lines as written, line endings included, when the
    diff is read (``unified``: ``Format.no_change`` None). ``fmt`` is the patch's format."""
    if fmt.no_change is None or (hunk.move_to is not None and len(hunk.chunks) == 1):
        return None
    for chunk in hunk.chunks:
        # (Lines written without a prefix are context only if the file has them there: the
        # repair step's reading; a hunk so read that changes nothing is the file's to refuse.)
        if chunk.changes_nothing and not chunk.unprefixed:
            what = (fmt.no_change_said
                    or ("it has context lines only" if all(kind == " " for kind, _ in chunk.lines)
                        else "it removes lines and adds the same lines back"))
            return NoChangeError(
                f"Refusing the patch: {fmt.hunk_named(chunk)} changes nothing in {hunk.path}: {what}.",
                hint=fmt.no_change, path=rel, line=chunk.line)
    return None


def in_place_in_turn(content: bytes, sections: Sequence[UpdateFile], rule: UpdateRule,
                     names: FileNames) -> bool:
    """Whether the Update sections of one file (the first missed; the others come later in the
    patch) are in place together: a file edited by several sections in turn (the second edits
    what the first wrote) sent again. Asked one at a time, the first section's old lines are gone
    and its new ones were changed by the next, so it missed (``context_not_found``). In place
    when each section shows its change, the sections undo from the last to the first, each on
    the file as the ones after it leave it, and redone in order from there give this file back:
    it is the patch's own work (the already-applied rule of one section, docs/format.md "A patch
    sent again", over the file's sections)."""
    if any(section.move_to is not None or not section.chunks
           or not any(shows_its_change(chunk, reverse=rule.reverse) for chunk in section.chunks)
           for section in sections):
        return False
    undone = content
    try:
        for section in reversed(sections):
            undone = update_file(undone, [reversed_chunk(chunk) for chunk in section.chunks],
                                 rule, names, check_applied=False).after
        redone = undone
        for section in sections:
            redone = update_file(redone, section.chunks, rule, names, check_applied=False).after
    except PatchtxError:
        return False
    return redone == content


# -- a unified diff's binary patch, and the file it deletes ----------------------------------------
def holds_deleted(hunk: DeleteFile, content: bytes, display: str) -> bool:
    """Whether the file a unified diff deletes holds what the diff says it does: its removed
    lines (as bytes, whatever the encoding), or a binary patch's blob."""
    if hunk.blob_id is not None:
        from ..formats.gitbinary import blob_id  # (off a one-line edit's path)

        return blob_id(content, hunk.blob_id) == hunk.blob_id
    return hunk.expected is None or decode(content, display, any_bytes=True).texts == list(hunk.expected)


def binary_update(content: bytes, hunk: UpdateFile, names: FileNames) -> FileUpdate:
    """A binary patch's update as the update unit's answer (``gitbinary.binary_after``)."""
    from ..formats.gitbinary import binary_after  # (off a one-line edit's path)

    assert hunk.binary is not None
    after = binary_after(content, hunk.binary, names.display, names.path)
    return FileUpdate(content, (), (), applied=True) if after is None else FileUpdate(after, (), ())
