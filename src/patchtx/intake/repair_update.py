"""The repair step's rules that need a file's content: made where an update reads its file (the
update unit), each only when the repaired hunks have exactly one meaning there and are placed by
the same placement rule as any other hunk (docs/format.md, "Repairs").

- **Context without its space** (``Chunk.unprefixed``, marked by the parser): such a line is
  context only where it stands in the file, exactly, at the place its hunk goes; otherwise the
  parse error it caused is the answer.
- **Line-number prefixes** copied from a numbered file view (``12: text``, ``L12: text``,
  ``12 | text``, ``    12\\ttext``, ``12→text``): removed only when every line the file's hunks
  keep or remove carries one in the same form (their added lines all, or none: ``numbered``), and
  the hunks, so read, are placed exactly where the numbers of their context and removed lines
  say. The one reading for a patch's hunks, a SEARCH/REPLACE block and a text replacement's old
  text (``undecorated``, which also reads away Roo Code's ``:start_line:`` header of a block).
- **A unified diff's file header** (``--- a/x`` / ``+++ b/x``) repeated under ``*** Update File:
  x``: dropped when it names that file.
- **Hunks out of order**: each hunk found in exactly one place of the file on its own, then placed
  in file order.
- **Indentation and trailing white space** of the model's own: when every line the hunk keeps or
  removes differs from its file line by the same indentation (or the same trailing white space),
  the added lines are given the file's (the context lines stay as in the file, as always): the
  rule of ``normalise.one_shift`` and ``normalise.hunk_suffix``, which SEARCH/REPLACE blocks
  follow too. A hunk whose lines show no one shift, or two readings (shifted as written, or its
  context lines having lost their prefix space), is refused as ambiguous; so is one whose added
  lines may as well be already at the file's indentation (the model shifted only the lines it
  copied), unless the block around them tells which (``normalise.fits_around``).

Each returns the repaired hunks and their placements, or None; the caller refuses as before.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from .._record import replace
from ..errors import AmbiguousContextError, ContextNotFoundError, HunkParseError
from ..model import Repair
from ..place.hints import describe_miss, unwanted, visible
from ..place.normalise import (
    SAME,
    fits_around,
    hunk_suffix,
    indentation,
    line_shift,
    normalise,
    old_lines_may_stand,
    one_shift,
    shifted,
    spell_indentation,
    strip,
)

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence

    from ..model import Chunk, LineKind
    from ..place.matching import Placement
    from ..place.normalise import Shift

    Place = Callable[[Sequence[Chunk]], list[Placement]]

_NUMBER = re.compile(r"[ \t]*(L?)(\d{1,7})")
_SEPARATORS = ("\t", "\u2192", " | ", "| ", " |", "|", ": ", ":")
"""How numbered views separate a line's number from its text: ``cat -n`` (a tab), Claude Code's
Read (an arrow), ``N | text`` and ``N| text`` (cline, opencode), ``N: text``; Codex's read tool
writes ``L12: text`` (the letter is part of the form: ``_NUMBER``)."""

Form = tuple[str, str]
"""How a numbered view writes a line's number: (the letter before it, ``""`` or ``"L"``; the
separator after it)."""


def _lines_of(chunks: Sequence[Chunk], where: str) -> str:
    first, last = chunks[0].line, chunks[-1].line
    return f"{where}, patch line{'s' if first != last else ''} {first}" + (
        f"-{last}" if first != last else "")


def settle(texts: Sequence[str], chunks: Sequence[Chunk], placements: list[Placement],
           spelled: str, *, adjust: bool, display: str = "") -> tuple[list[Placement], list[Repair]]:
    """The last step of a placement: the lines written without a prefix checked (their parse
    error raised where one does not stand in the file), and with ``adjust`` the added lines given
    the file's indentation and trailing white space where the hunk shows the model's differ."""
    repairs = []
    if any(chunk.unprefixed for chunk in chunks):
        _check_unprefixed(texts, chunks, placements)
        repairs.append(unprefixed_repair(chunks, spelled))
    if adjust:
        placements, adjusted = adjust_added_lines(texts, placements, chunks, spelled, display)
        repairs.extend(adjusted)
    return placements, repairs


# -- context lines written without their space ---------------------------------------------------
def unprefixed_repair(chunks: Sequence[Chunk], spelled: str) -> Repair:
    """The repair of the lines written without a prefix (found to stand in the file)."""
    numbers = [number for chunk in chunks for _, number in chunk.unprefixed]
    shown = ", ".join(map(str, numbers[:8])) + (" …" if len(numbers) > 8 else "")
    counted = any(chunk.readings or (chunk.stated_line is not None and chunk.unprefixed)
                  for chunk in chunks)
    return Repair("context_without_space", f"{spelled}, patch line{'s' if len(numbers) > 1 else ''} {shown}",
                  "read the line(s) as context lines that lost their leading space, as the hunk "
                  "header's counts say and since they stand in the file there (start a context "
                  "line with a space)" if counted else
                  "read the line(s) without a ' ', '+' or '-' prefix as context, since they stand in "
                  "the file there (start a context line with a space)")


def _check_unprefixed(texts: Sequence[str], chunks: Sequence[Chunk],
                      placements: Sequence[Placement]) -> None:
    for placement in placements:
        chunk = chunks[placement.chunk_index]
        if not chunk.unprefixed:
            continue
        old_index = _old_indexes(chunk.lines)
        for index, number in chunk.unprefixed:
            text = chunk.lines[index][1]
            at = placement.start + old_index[index]
            if at >= len(texts) or texts[at].rstrip() != text.rstrip():
                where = "past the end of the file" if at >= len(texts) else \
                    f'the file has "{visible(texts[at])}" there (line {at + 1})'
                raise unprefixed_error(chunk, index, number, f"it does not stand in the file where "
                                                             f"its hunk goes: {where}")


def lost_space_readings(texts: Sequence[str], chunks: Sequence[Chunk], place: Place,
                        display: str) -> None:
    """Raise ``AmbiguousContextError`` when a hunk holding lines written without a prefix (context
    lines that lost their space) also reads with one of its added or removed lines as such a
    line: ``+`` or ``-`` was then its first character, not its prefix (an RST underline
    ``++++``, a list item ``- a``), and the hunks so read stand in the file too. The hunk's other
    lines show the model dropped the context lines' space, so the text does not say which the
    line is; the two readings write different files. (A hunk whose lines all carry a prefix is
    read as written: nothing in it says a space was lost.) Each such line is tried alone: the
    lines it would be must stand in the file (a set lookup first), so most hunks cost nothing."""
    present: set[str] | None = None
    for number, chunk in enumerate(chunks):
        if not chunk.unprefixed:
            continue
        first_index, first_number = chunk.unprefixed[0]
        for index, (kind, text) in enumerate(chunk.lines):
            if kind == " ":
                continue
            if present is None:
                present = set(texts)
            if kind + text not in present:
                continue
            line = first_number - first_index + index
            trial = list(chunks)
            trial[number] = replace(chunk, lines=(*chunk.lines[:index], (" ", kind + text),
                                                  *chunk.lines[index + 1:]),
                                    unprefixed=tuple(sorted((*chunk.unprefixed, (index, line)))))
            placements = _try(place, trial)
            if placements is None:
                continue
            try:
                _check_unprefixed(texts, trial, placements)
            except HunkParseError:
                continue
            others = ", ".join(str(n) for i, n in chunk.unprefixed[:4])
            raise AmbiguousContextError(
                f"Ambiguous line in {display}: the hunk at patch line {chunk.line} has lines "
                f"without a prefix (patch line{'s' if len(chunk.unprefixed) > 1 else ''} "
                f"{others}: context lines that lost their space), and its line "
                f"\"{visible((kind + text)[:60])}\" (patch line {line}) reads two ways: as "
                f"{'an added' if kind == '+' else 'a removed'} line \"{visible(text[:60])}\", or as a "
                "context line that lost its space too; the hunk stands in the file both ways, "
                "and they write different files.",
                hint="Start every line of the hunk with its prefix: ' ' for an unchanged line "
                     "(then its text), '+' for an added one, '-' for a removed one.",
                path=display, line=line, details={"ambiguous": "lost_space"})


def _as_added(chunks: Sequence[Chunk], place: Place, miss: ContextNotFoundError) -> str:
    """Why the lines written without a prefix are not context, and where their hunks would go
    if they were added lines (a '+' lost), for the model to say which it meant."""
    added = [replace(chunk, lines=tuple(("+" if any(i == index for index, _ in chunk.unprefixed)
                                         else kind, text)
                                        for i, (kind, text) in enumerate(chunk.lines)),
                     unprefixed=()) for chunk in chunks]
    placements = _try(place, added)
    if placements is not None:
        where = ", ".join(f"at file line {p.start + 1}" for p in placements
                          if chunks[p.chunk_index].unprefixed)
        return (f"as context, its hunk matches nowhere in the file; as an added line (a lost "
                f"'+') its hunk would apply ({where}), so if that is what it is, prefix it with "
                "'+'")
    return "as context or as an added line, its hunk matches nowhere in the file. " + miss.hint


def unprefixed_error(chunk: Chunk, index: int, number: int, why: str) -> HunkParseError:
    """The parse error Codex gives a body line without a prefix, saying why it is not context
    (``why`` may end with a quoted region of the file: it comes last)."""
    line = chunk.lines[index][1]
    if index == 0:
        message = (f"Unexpected line found in update hunk: '{line}'. Every line should start with "
                   "' ' (context line), '+' (added line), or '-' (removed line)")
    else:
        message = f"Expected update hunk to start with a @@ context marker, got: '{line}'"
    return HunkParseError(
        f"Invalid patch hunk on line {number}: {message}",
        hint=("Prefix the line with '+' if it is added, '-' if removed, ' ' if it is unchanged. "
              f"patchtx could not take it as an unchanged line: {why}."),
        line=number, details={"codex_message": message})


def _old_indexes(lines: Sequence[tuple[LineKind, str]]) -> list[int]:
    """For each body line, how many file lines its hunk covers before it."""
    out, count = [], 0
    for kind, _ in lines:
        out.append(count)
        if kind != "+":
            count += 1
    return out


# -- repairs tried when the hunks as written do not match -----------------------------------------
def after_miss(texts: Sequence[str], chunks: Sequence[Chunk], place: Place, spelled: str,
               miss: ContextNotFoundError, *, normalised: Callable[[], Sequence[str]] | None = None,
               ) -> tuple[list[Chunk], list[Placement], list[Repair]]:
    """The hunks repaired so that they match, their placements and the repairs; when no repair
    makes them match with one meaning, raise the miss (or, for a hunk holding lines written
    without a prefix, their parse error), saying what the patch looks like it got wrong.
    ``normalised``: the file's lines' keys in the last pass, when the caller has them."""
    found = _repaired(texts, chunks, place, spelled, normalised)
    if found is not None:
        return found
    for chunk in chunks:
        if chunk.unprefixed:
            index, number = chunk.unprefixed[0]
            raise unprefixed_error(chunk, index, number, _as_added(chunks, place, miss)) from None
    lost = _lost_plus(texts, chunks, place, normalised)
    if lost:
        miss.hint = f"{lost} {miss.hint}"
    else:
        diagnose_miss(miss, texts, chunks)
    raise miss


def _lost_plus(texts: Sequence[str], chunks: Sequence[Chunk], place: Place,
               normalised: Callable[[], Sequence[str]] | None = None) -> str:
    """A context line the file does not have, with which the hunks would apply were it an added
    line: a '+' lost before a line that starts with a space (a hint, never applied).

    Each trial is a placement of the whole patch, so only those that can succeed are tried: in
    every pass a line the hunks keep or remove equals a file line only if their last pass's keys
    (``normalised``: the file's, when the caller has them) are equal, so while two such lines
    have a key the file lacks, no one line made an added line can make the hunks match, and
    while one has, only that one can."""
    file_lines = set(texts)  # (up to 40 look-ups per hunk: each a scan of a big file's lines)
    asked = [(number, index, text) for number, chunk in enumerate(chunks)
             for index, (kind, text) in enumerate(chunk.lines[:40])
             if kind == " " and text.strip() and text not in file_lines]
    if not asked:
        return ""
    file_keys = set(normalised() if normalised is not None else map(normalise, texts))
    lacking: list[tuple[int, int]] = []
    for number, chunk in enumerate(chunks):
        for index, (kind, text) in enumerate(chunk.lines):
            key = normalise(text) if kind != "+" else ""
            if key and key not in file_keys:  # (a blank line may be dropped by Codex's retry)
                lacking.append((number, index))
                if len(lacking) > 1:
                    return ""
    for number, index, text in asked:
        if lacking and lacking[0] != (number, index):
            continue
        chunk = chunks[number]
        trial = list(chunks)
        trial[number] = replace(chunk, lines=(*chunk.lines[:index], ("+", text),
                                              *chunk.lines[index + 1:]))
        if _try(place, trial) is not None:
            return (f"The context line \"{text.strip()[:80]}\" (line {index + 1} of the hunk "
                    f"at patch line {chunk.line}) is not in the file; as an added line the "
                    "patch would apply: if it is one, its '+' is missing (an added line is "
                    "'+' then its text, its indentation included).")
    return ""


def _repaired(texts: Sequence[str], chunks: Sequence[Chunk], place: Place, spelled: str,
              normalised: Callable[[], Sequence[str]] | None = None,
              ) -> tuple[list[Chunk], list[Placement], list[Repair]] | None:
    current, repairs = list(chunks), []
    for rule in (_without_file_header, _without_line_numbers):
        found = rule(texts, current, place, spelled)
        if found is None:
            continue
        current, placements, repair = found
        repairs.append(repair)
        if placements is not None:
            return current, placements, repairs
    reordered = _in_file_order(texts, current, place, spelled, normalised)
    if reordered is not None:
        current, placements, repair = reordered
        return current, placements, [*repairs, repair]
    return None


def _try(place: Place, chunks: Sequence[Chunk]) -> list[Placement] | None:
    """The placements of ``chunks``; None where they miss or are ambiguous (the error, dropped,
    is not worded: ``hints.unwanted``)."""
    try:
        with unwanted():
            return place(chunks)
    except (ContextNotFoundError, AmbiguousContextError):
        return None


def _without_file_header(texts: Sequence[str], chunks: list[Chunk], place: Place, spelled: str,
                         ) -> tuple[list[Chunk], list[Placement] | None, Repair] | None:
    found = without_file_header(chunks, spelled)
    if found is None:
        return None
    repaired, repair = found
    return repaired, _try(place, repaired), repair


def without_file_header(chunks: Sequence[Chunk], spelled: str) -> tuple[list[Chunk], Repair] | None:
    """The hunks without a unified diff's file header naming ``spelled`` written at the top of
    the first one, and that repair; None when there is none (or nothing else)."""
    first = chunks[0]
    lines = first.lines
    skip = 0
    while skip < len(first.unprefixed) and first.unprefixed[skip][0] == skip and \
            lines[skip][1].startswith(("diff --git ", "index ", "new file mode", "old mode", "new mode")):
        skip += 1
    pair = lines[skip:skip + 2]
    if (len(pair) != 2 or pair[0][0] != "-" or pair[1][0] != "+"
            or not pair[0][1].startswith("-- ") or not pair[1][1].startswith("++ ")):
        return None
    names = {_header_name(pair[0][1][3:]), _header_name(pair[1][1][3:])} - {"/dev/null"}
    wanted = spelled.lstrip("./")
    if not names or any(not (name == wanted or name.endswith("/" + wanted) or wanted.endswith("/" + name))
                        for name in names):
        return None
    rest = lines[skip + 2:]
    kept = [i - skip - 2 for i, _ in first.unprefixed if i >= skip + 2]
    repaired = list(chunks[1:])
    if rest:
        repaired.insert(0, replace(first, lines=rest, unprefixed=tuple(
            (i, n) for (i, n), k in zip(first.unprefixed[skip:], kept, strict=False) if k >= 0)))
    if not repaired:
        return None
    repair = Repair("unified_headers_in_update", f"{spelled}, patch line {first.line}",
                    "dropped the unified diff's '--- a/…' and '+++ b/…' lines under "
                    "'*** Update File:' (the Update line names the file)")
    return repaired, repair


def _header_name(field: str) -> str:
    name = field.split("\t", 1)[0].strip()
    return name[2:] if name.startswith(("a/", "b/")) else name


def numbered_lines(chunks: Sequence[Chunk]) -> tuple[str, list[str]] | None:
    """When the line numbers of a numbered view are written on the hunks' lines (``numbered``):
    their form (as shown to a model) and the old lines without their numbers; else None."""
    found = numbered(chunks)
    if found is None:
        return None
    form, stripped, _ = found
    return _form(form), [text for chunk in stripped for kind, text in chunk.lines if kind != "+"]


def numbered(chunks: Sequence[Chunk]) -> tuple[Form, list[Chunk], list[list[int | None]]] | None:
    """THE reading of line-number prefixes (``12: text``, ``L12: text``, ``     12→text``...)
    copied from a numbered view into hunks: every line the hunks keep or remove starts with a
    number in one form, and their added lines all do (blank ones aside) or none does (the lines a
    model adds have no number). Returns the form, the hunks with the numbers removed (anchors
    too, where they carry one), and each hunk's numbers line by line (None for an added line);
    None when the lines do not read so (numbers on some added lines only: text or number?).

    Only a reading: the caller takes it where the hunks miss as written and, so read, are placed
    where the numbers say (``numbers_agree``), the text editor's ``old_str`` too (``text_numbered``)."""
    old = [text for chunk in chunks for kind, text in chunk.lines if kind != "+"]
    form = number_form(old)
    if form is None:
        return None
    added = [_split_number(text, form) for chunk in chunks for kind, text in chunk.lines
             if kind == "+" and text.strip()]
    if any(number is None for number in added) and any(number is not None for number in added):
        return None
    strip_added = bool(added) and all(number is not None for number in added)
    stripped: list[Chunk] = []
    numbers: list[list[int | None]] = []
    for chunk in chunks:
        lines: list[tuple[LineKind, str]] = []
        numbered_: list[int | None] = []
        for kind, text in chunk.lines:
            split = _split_number(text, form) if kind != "+" or strip_added else None
            if split is None:
                lines.append((kind, text))
                numbered_.append(None)
            else:
                lines.append((kind, split[1]))
                numbered_.append(split[0] if kind != "+" else None)
        anchors = tuple((_split_number(a, form) or (0, a))[1] for a in chunk.anchors)
        stripped.append(replace(chunk, anchors=anchors, lines=tuple(lines)))
        numbers.append(numbered_)
    return form, stripped, numbers


def numbers_agree(placements: Sequence[Placement], chunks: Sequence[Chunk],
                  numbers: Sequence[Sequence[int | None]]) -> bool:
    """Whether every placed hunk's kept and removed lines stand at the file lines their numbers
    say (a copied view of this file, not text that happens to start with numbers)."""
    for placement in placements:
        offset = 0
        for (kind, _), number in zip(chunks[placement.chunk_index].lines,
                                     numbers[placement.chunk_index], strict=True):
            if kind == "+":
                continue
            if number != placement.start + offset + 1:
                return False
            offset += 1
    return True


def number_form(lines: Sequence[str]) -> Form | None:
    """The one form in which every line of ``lines`` starts with a line number, or None."""
    if not lines:
        return None
    first = _NUMBER.match(lines[0])
    if first is None:
        return None
    for separator in _SEPARATORS:
        form = (first.group(1), separator)
        if all(_split_number(text, form) is not None for text in lines):
            return form
    return None


def _form(form: Form) -> str:
    letter, separator = form
    return {"\t": f"'    {letter}12<tab>text'", "\u2192": f"'{letter}12→text'"}.get(
        separator, f"'{letter}12{separator}text'")


def _without_line_numbers(texts: Sequence[str], chunks: list[Chunk], place: Place, spelled: str,
                          ) -> tuple[list[Chunk], list[Placement] | None, Repair] | None:
    found = numbered(chunks)
    if found is None:
        return None
    form, stripped, numbers = found
    placements = _try(place, stripped)
    if placements is None or not numbers_agree(placements, stripped, numbers):
        return None  # the numbers say another place: not a copied view of this file
    return stripped, placements, _numbers_repair(_lines_of(chunks, spelled), form)


def _numbers_repair(where: str, form: Form) -> Repair:
    return Repair("line_number_prefixes", where,
                  f"removed the line numbers ({_form(form)}) copied from a numbered view of the "
                  "file: they agree with the file (send the lines' text only)")


def _split_number(text: str, form: Form) -> tuple[int, str] | None:
    match = _NUMBER.match(text)
    if match is None or match.group(1) != form[0]:
        return None
    rest = text[match.end():]
    separator = form[1]
    if rest.startswith(separator):
        return int(match.group(2)), rest[len(separator):]
    if rest == separator.rstrip():  # an empty line (its trailing space trimmed)
        return int(match.group(2)), ""
    return None


def _in_file_order(texts: Sequence[str], chunks: list[Chunk], place: Place, spelled: str,
                   normalised: Callable[[], Sequence[str]] | None = None,
                   ) -> tuple[list[Chunk], list[Placement], Repair] | None:
    if len(chunks) < 2 or any(not chunk.old_lines for chunk in chunks):
        return None
    # Each hunk must be found alone: not one whose kept or removed line has a last-pass key the
    # file lacks (``_lost_plus``'s reasoning), told in one pass instead of a placement per hunk.
    if not old_lines_may_stand(chunks, set(normalised() if normalised is not None else map(normalise, texts))):
        return None
    starts = []
    for chunk in chunks:
        alone = _try(place, [replace(chunk, stated_line=None if chunk.stated_line is None else 0,
                                     recounted=True)])
        if alone is None:
            return None  # found nowhere, or in several places: its place is not determined
        starts.append(alone[0].start)
    order = sorted(range(len(chunks)), key=lambda i: starts[i])
    if order == list(range(len(chunks))):
        return None
    reordered = [chunks[i] for i in order]
    placements = _try(place, reordered)
    if placements is None:
        return None
    moved = ", ".join(str(chunks[i].line) for i in order)
    return reordered, placements, Repair(
        "hunks_reordered", _lines_of(sorted(chunks, key=lambda c: c.line), spelled),
        f"placed the hunks in file order (patch lines {moved}): each matches in one place only "
        "(send a file's hunks top to bottom)")


# -- the model's own indentation and trailing white space ----------------------------------------
def adjust_added_lines(texts: Sequence[str], placements: list[Placement], chunks: Sequence[Chunk],
                       spelled: str, display: str = "") -> tuple[list[Placement], list[Repair]]:
    """Placements whose added lines carry the file's indentation and trailing white space where
    the hunk's kept and removed lines show, all alike, that the model's differ from the file's
    (``normalise.one_shift``, ``normalise.hunk_suffix``: the rule SEARCH/REPLACE blocks follow
    too). A hunk whose lines show no one shift, and that adds lines, is refused: the indentation
    of its added lines has no one reading."""
    out, repairs = [], []
    for placement in placements:
        chunk = chunks[placement.chunk_index]
        where = f"{spelled}, patch line {chunk.line}"
        lines, found = _adjusted(texts, placement, chunk, display or spelled)
        out.append(replace(placement, lines=lines) if found else placement)
        repairs += [Repair(kind, where, detail) for kind, detail in found]
    return out, repairs


def _adjusted(texts: Sequence[str], placement: Placement, chunk: Chunk, display: str,
              ) -> tuple[tuple[tuple[LineKind, str], ...], list[tuple[str, str]]]:
    lines = placement.lines
    pairs, kinds, at = [], [], placement.start
    for kind, text in lines:
        if kind != "+":
            pairs.append((texts[at], text))
            kinds.append(kind)
            at += 1
    added = [text for kind, text in lines if kind == "+"]
    if not pairs or not added or all(in_file == in_patch for in_file, in_patch in pairs):
        return lines, []
    found = []
    suffix = hunk_suffix(pairs, added)
    if suffix:
        lines = tuple((k, t[: len(t) - len(suffix)] if k == "+" and t.endswith(suffix) else t)
                      for k, t in lines)
        pairs = [(in_file, in_patch[: len(in_patch) - len(suffix)] if in_patch.endswith(suffix) else in_patch)
                 for in_file, in_patch in pairs]
        found.append(("trailing_whitespace", f"removed the trailing white space ({suffix!r}) that "
                      "every line of the hunk carries and the file's lines do not"))
    if not any(strip(text) for kind, text in lines if kind == "+") or one_shift(pairs) == SAME:
        return lines, found
    # Two readings of a hunk whose lines are not indented as the file's: as written, shifted as a
    # whole; or each context line having lost its prefix space (its text is then the line as
    # written, its space included), shifted as a whole. Each holds only where one shift fits
    # every kept and removed line, and every added line can take it.
    unprefixed = {index for index, _ in chunk.unprefixed}
    kept = [i for i, (kind, _) in enumerate(lines) if kind != "+"]
    spaced = [(in_file, " " + in_patch if kind == " " and kept[n] not in unprefixed else in_patch)
              for n, ((in_file, in_patch), kind) in enumerate(zip(pairs, kinds, strict=True))]
    readings: dict[tuple[tuple[LineKind, str], ...], Shift] = {}
    for each in (pairs, spaced):
        shift = one_shift(each)
        moved = None if shift is None else _moved(lines, shift)
        if shift is not None and moved is not None:
            readings.setdefault(moved, shift)
    if len(readings) != 1:
        raise _no_one_indentation(chunk, placement, display, pairs, list(readings.values()))
    (moved, shift), = readings.items()
    if shift != SAME:
        # Two readings: the added lines shifted alike (the hunk shifted as a whole, its lines as
        # the model set them against each other), or already at the file's indentation (the
        # model shifted only the lines it copied). The first is taken when its added lines are
        # indented consistently with the block around them and the second's are not; the second,
        # which splits the hunk, only when its lines are consistent and the first's are not even
        # plausible (normalise.fits_around); otherwise neither is told.
        (moved_fits, moved_may), (sent_fits, _) = (fits_around(texts, placement.start, moved),
                                                   fits_around(texts, placement.start, lines))
        if sent_fits and not moved_may:
            return lines, found
        if not moved_fits or sent_fits:
            raise _two_indentations(chunk, placement, display, shift, moved, (moved_fits, sent_fits))
        direction, by = shift
        found.append(("indentation", f"indented the added lines by {spell_indentation(by)} "
                      f"{'more' if direction == '+' else 'less'}, as every kept and removed line of "
                      "the hunk is in the file (as written, they would not be indented as the "
                      "lines around them)"))
    return moved, found


def _two_indentations(chunk: Chunk, placement: Placement, display: str, shift: Shift,
                      moved: Sequence[tuple[LineKind, str]], fits: tuple[bool, bool],
                      ) -> AmbiguousContextError:
    """The refusal of a hunk matched at a shifted indentation whose added lines read two ways,
    shifted alike or as written, neither alone indented consistently with the block around it
    (``fits``: whether each is, ``normalise.fits_around``)."""
    end = placement.start + placement.length
    at = f"file line {placement.start + 1}" + (f"-{end}" if end > placement.start + 1 else "")
    direction, by = shift
    first = next((index for index, (kind, text) in enumerate(placement.lines)
                  if kind == "+" and strip(text)), 0)
    sent, shifted_line = placement.lines[first][1], moved[first][1]
    return AmbiguousContextError(
        f"Ambiguous indentation in {display}: the hunk at patch line {chunk.line} matches {at} "
        f"with every kept and removed line {spell_indentation(by)} "
        f"{'shallower' if direction == '+' else 'deeper'} than the file's, and its added lines "
        f"read two ways: shifted alike (\"{visible(shifted_line[:60])}\", "
        f"{spell_indentation(indentation(shifted_line)) if indentation(shifted_line) else 'no indentation'}), "
        f"or already at the file's indentation as written (\"{visible(sent[:60])}\", "
        f"{spell_indentation(indentation(sent)) if indentation(sent) else 'no indentation'}); "
        + ("both are indented as the lines around them" if all(fits) else
           "neither is indented as the lines around them" if not any(fits) else
           "as written they are indented as the lines around them, and shifted alike they stand "
           "as deep as a line beside them") + ", so which is "
        "meant is not told.",
        hint="Write the hunk's lines with the file's indentation (each line exactly as the file "
             "has it, then the added lines at the indentation they mean).",
        path=display, line=chunk.line, details={"ambiguous": "indentation"})


def _moved(lines: tuple[tuple[LineKind, str], ...], shift: Shift) -> tuple[tuple[LineKind, str], ...] | None:
    """The hunk's lines, its added ones given ``shift``; None when one cannot take it."""
    out = []
    for kind, text in lines:
        new = shifted(text, shift) if kind == "+" else text
        if new is None:
            return None
        out.append((kind, new))
    return tuple(out)


def _no_one_indentation(chunk: Chunk, placement: Placement, display: str,
                        pairs: Sequence[tuple[str, str]], shifts: Sequence[Shift],
                        ) -> AmbiguousContextError:
    """The refusal of a hunk matched with its indentation ignored whose added lines' indentation
    has no one reading (``shifts``: the readings' shifts, two or none), naming why."""
    end = placement.start + placement.length
    at = f"file line {placement.start + 1}" + (f"-{end}" if end > placement.start + 1 else "")
    if shifts:
        spelled = [("as written" if shift == SAME else
                    f"{spell_indentation(shift[1])} {'deeper' if shift[0] == '+' else 'shallower'}")
                   for shift in shifts]
        why = ("it reads two ways: as written, its lines shifted as a whole (the added lines "
               f"{spelled[0]}), or each context line having lost its prefix space (the added lines "
               f"{spelled[1]})")
    else:
        described = []
        for in_file, in_patch in pairs:
            if not (strip(in_file) and strip(in_patch)):
                continue
            shift = line_shift(in_file, in_patch)
            if shift is None:
                how = "indented differently (tabs and spaces)"
            else:
                how = "as in the file" if shift == SAME else \
                    f"{spell_indentation(shift[1])} {'shallower' if shift[0] == '+' else 'deeper'}"
            described.append(f"\"{visible(strip(in_patch)[:40])}\" {how}")
            if len(described) >= 4:
                break
        why = ("its lines are not indented alike against the file's, so the added lines' "
               "indentation is not told: " + "; ".join(described))
    return AmbiguousContextError(
        f"Ambiguous indentation in {display}: the hunk at patch line {chunk.line} matches {at} "
        f"only with its indentation ignored, and {why}.",
        hint="Write the hunk's lines with the file's indentation (each line exactly as the file "
             "has it, then the added lines at the indentation they mean).",
        path=display, line=chunk.line, details={"ambiguous": "indentation"})


# -- what a miss shows of the shapes not repaired ---------------------------------------------------
def diagnose_miss(miss: ContextNotFoundError, texts: Sequence[str], chunks: Sequence[Chunk]) -> None:
    """Put first in the hint of a hunk that matched nowhere what the patch looks like it got
    wrong, when its lines show it: line numbers copied from a numbered view of the file (the
    rest of the hint then says where the lines, without them, are closest: the file is not what
    is wrong), or a doubled prefix (``--x``, ``+-x``). Changes ``miss.hint`` (a
    ContextNotFoundError's)."""
    if _name_numbers(miss, texts, chunks):
        return
    found = _doubled(texts, chunks)
    if found:
        miss.hint = found + (" " + miss.hint if miss.hint else "")


def _name_numbers(miss: ContextNotFoundError, texts: Sequence[str], chunks: Sequence[Chunk]) -> bool:
    old = [text for chunk in chunks for kind, text in chunk.lines if kind != "+"]
    form = number_form(old)
    if form is None:
        return False
    stripped = [_split_number(text, form)[1] for text in old]  # type: ignore[index]
    name_numbers(miss, texts, form, stripped, "The lines the hunk keeps and removes start",
                 "" if numbered(chunks) is not None else _SOME_ADDED_NUMBERED)
    return True


_SOME_ADDED_NUMBERED = ("some added lines start with a number in that form and others do not, so "
                        "which number is text is not told")


def name_numbers(miss: ContextNotFoundError, texts: Sequence[str], form: Form,
                 stripped: Sequence[str], subject: str, why: str = "") -> None:
    """The refusal of lines that carry line numbers copied from a numbered view, not removed:
    ``subject`` (``The SEARCH lines start``...), the form, ``why`` they were kept (by default:
    without them the lines do not stand at those numbers), then where the lines, without them,
    are closest in the file (the hint of the decorated lines would blame the file). Changes
    ``miss``'s hint and closest line."""
    hint = describe_miss(texts, stripped, 0)
    miss.hint = (f"{subject} with a line number ({_form(form)}), as a numbered view of the file "
                 "shows it: send the lines' text only. (patchtx removes such numbers itself only "
                 "when, removed, the lines stand in the file at exactly those numbers; here "
                 f"{why or 'they do not'}.) Without the numbers: {hint.text}")
    miss.details["closest_line"] = hint.closest_line


def _doubled(texts: Sequence[str], chunks: Sequence[Chunk]) -> str:
    for chunk in chunks:
        for offset, (kind, text) in enumerate(chunk.lines):
            if kind == "-" and text[:1] in "-+" and text not in texts and text[1:] in texts:
                line = texts.index(text[1:]) + 1
                return (f"The hunk at patch line {chunk.line} removes the line \"{visible(text)}\" "
                        f"(body line {offset + 1}), which is not in the file; the file has "
                        f"\"{visible(text[1:])}\" (line {line}). A doubled prefix? A removed line "
                        "is '-' then the line's text, and an added line '+' then exactly its text "
                        "('+-x' adds the line '-x').")
    return ""
