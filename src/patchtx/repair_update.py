"""The repair step's rules that need a file's content: made where an update reads its file (the
update unit), each only when the repaired hunks have exactly one meaning there and are placed by
the same placement rule as any other hunk (docs/format.md, "Repairs").

- **Context without its space** (``Chunk.unprefixed``, marked by the parser): such a line is
  context only where it stands in the file, exactly, at the place its hunk goes; otherwise the
  parse error it caused is the answer.
- **Line-number prefixes** copied from a numbered file view (``12: text``, ``12 | text``,
  ``    12\\ttext``, ``12→text``): removed only when every body line of the file's hunks carries
  one in the same form, and the hunks, so read, are placed exactly where the numbers of their
  context and removed lines say.
- **A unified diff's file header** (``--- a/x`` / ``+++ b/x``) repeated under ``*** Update File:
  x``: dropped when it names that file.
- **Hunks out of order**: each hunk found in exactly one place of the file on its own, then placed
  in file order.
- **Indentation and trailing white space** of the model's own: when every line the hunk keeps or
  removes differs from its file line by the same indentation (or the same trailing white space),
  the added lines are given the file's (the context lines stay as in the file, as always). The
  indentation only where the hunk replaces lines: added lines that only follow context may mean
  a level of their own.

Each returns the repaired hunks and their placements, or None; the caller refuses as before.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from ._record import replace
from .errors import AmbiguousContextError, ContextNotFoundError, HunkParseError
from .hints import describe_miss, visible
from .model import Repair

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence

    from .matching import Placement
    from .model import Chunk, LineKind

    Place = Callable[[Sequence[Chunk]], list[Placement]]

_NUMBER = re.compile(r"[ \t]*(\d{1,7})")
_SEPARATORS = ("\t", "\u2192", " | ", "| ", " |", "|", ": ", ":")
"""How numbered views separate a line's number from its text: ``cat -n`` (a tab), Claude Code's
Read (an arrow), ``N | text`` and ``N| text`` (cline, opencode), ``N: text``."""


def _lines_of(chunks: Sequence[Chunk], where: str) -> str:
    first, last = chunks[0].line, chunks[-1].line
    return f"{where}, patch line{'s' if first != last else ''} {first}" + (
        f"-{last}" if first != last else "")


def settle(texts: Sequence[str], chunks: Sequence[Chunk], placements: list[Placement],
           spelled: str, *, adjust: bool) -> tuple[list[Placement], list[Repair]]:
    """The last step of a placement: the lines written without a prefix checked (their parse
    error raised where one does not stand in the file), and with ``adjust`` the added lines given
    the file's indentation and trailing white space where the hunk shows the model's differ."""
    repairs = []
    if any(chunk.unprefixed for chunk in chunks):
        _check_unprefixed(texts, chunks, placements)
        repairs.append(unprefixed_repair(chunks, spelled))
    if adjust:
        placements, adjusted = adjust_added_lines(texts, placements, chunks, spelled)
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
               miss: ContextNotFoundError) -> tuple[list[Chunk], list[Placement], list[Repair]]:
    """The hunks repaired so that they match, their placements and the repairs; when no repair
    makes them match with one meaning, raise the miss (or, for a hunk holding lines written
    without a prefix, their parse error), saying what the patch looks like it got wrong."""
    found = _repaired(texts, chunks, place, spelled)
    if found is not None:
        return found
    for chunk in chunks:
        if chunk.unprefixed:
            index, number = chunk.unprefixed[0]
            raise unprefixed_error(chunk, index, number, _as_added(chunks, place, miss)) from None
    lost = _lost_plus(texts, chunks, place)
    if lost:
        miss.hint = f"{lost} {miss.hint}"
    else:
        diagnose_miss(miss, texts, chunks)
    raise miss


def _lost_plus(texts: Sequence[str], chunks: Sequence[Chunk], place: Place) -> str:
    """A context line the file does not have, with which the hunks would apply were it an added
    line: a '+' lost before a line that starts with a space (a hint, never applied). (Each of the
    few lines asked is looked up in the file's lines: cheaper than a set of a big file's lines.)"""
    for number, chunk in enumerate(chunks):
        for index, (kind, text) in enumerate(chunk.lines[:40]):
            if kind != " " or not text.strip() or text in texts:
                continue
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
    reordered = _in_file_order(texts, current, place, spelled)
    if reordered is not None:
        current, placements, repair = reordered
        return current, placements, [*repairs, repair]
    return None


def _try(place: Place, chunks: Sequence[Chunk]) -> list[Placement] | None:
    try:
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
    """When every body line of ``chunks`` starts with a line number in one form: that form (as
    shown to a model) and the old lines without their numbers; else None."""
    separator = _separator([text for chunk in chunks for _, text in chunk.lines])
    if separator is None:
        return None
    stripped = [_split_number(text, separator)[1]  # type: ignore[index]
                for chunk in chunks for kind, text in chunk.lines if kind != "+"]
    return _form(separator), stripped


def _form(separator: str) -> str:
    return {"\t": "'    12<tab>text'", "\u2192": "'12→text'"}.get(separator, f"'12{separator}text'")


def _without_line_numbers(texts: Sequence[str], chunks: list[Chunk], place: Place, spelled: str,
                          ) -> tuple[list[Chunk], list[Placement] | None, Repair] | None:
    body = [text for chunk in chunks for _, text in chunk.lines]
    separator = _separator(body)
    if separator is None:
        return None
    stripped: list[Chunk] = []
    numbers: list[list[int]] = []
    for chunk in chunks:
        lines, numbered = [], []
        for kind, text in chunk.lines:
            number, rest = _split_number(text, separator)  # type: ignore[misc]
            lines.append((kind, rest))
            numbered.append(number)
        anchors = tuple((_split_number(a, separator) or (0, a))[1] for a in chunk.anchors)
        stripped.append(replace(chunk, anchors=anchors, lines=tuple(lines)))
        numbers.append(numbered)
    placements = _try(place, stripped)
    if placements is None:
        return None
    for placement in placements:
        chunk_numbers = numbers[placement.chunk_index]
        offset = 0
        for (kind, _), number in zip(stripped[placement.chunk_index].lines, chunk_numbers, strict=True):
            if kind == "+":
                continue
            if number != placement.start + offset + 1:
                return None  # the numbers say another place: not a copied view of this file
            offset += 1
    form = _form(separator)
    repair = Repair("line_number_prefixes", _lines_of(chunks, spelled),
                    f"removed the line numbers ({form}) copied from a numbered view of the file: "
                    "they agree with the file (send the lines' text only)")
    return stripped, placements, repair


def _separator(body: Sequence[str]) -> str | None:
    """The one separator every line of ``body`` puts after a line number, or None."""
    if not body:
        return None
    for separator in _SEPARATORS:
        if all(_split_number(text, separator) is not None for text in body):
            return separator
    return None


def _split_number(text: str, separator: str) -> tuple[int, str] | None:
    match = _NUMBER.match(text)
    if match is None:
        return None
    rest = text[match.end():]
    if rest.startswith(separator):
        return int(match.group(1)), rest[len(separator):]
    if rest == separator.rstrip():  # an empty line (its trailing space trimmed)
        return int(match.group(1)), ""
    return None


def _in_file_order(texts: Sequence[str], chunks: list[Chunk], place: Place, spelled: str,
                   ) -> tuple[list[Chunk], list[Placement], Repair] | None:
    if len(chunks) < 2 or any(not chunk.old_lines for chunk in chunks):
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
                       spelled: str) -> tuple[list[Placement], list[Repair]]:
    """Placements whose added lines carry the file's indentation or trailing white space where
    the hunk's kept and removed lines show, all alike, that the model's differ from the file's."""
    out, repairs = [], []
    for placement in placements:
        found = _shifted(texts, placement)
        if found is None:
            out.append(placement)
            continue
        lines, kind, detail = found
        out.append(replace(placement, lines=lines))
        repairs.append(Repair(kind, f"{spelled}, patch line {chunks[placement.chunk_index].line}",
                              detail))
    return out, repairs


def _shifted(texts: Sequence[str], placement: Placement,
             ) -> tuple[tuple[tuple[LineKind, str], ...], str, str] | None:
    pairs = []
    at = placement.start
    for kind, text in placement.lines:
        if kind != "+":
            pairs.append((text, texts[at]))
            at += 1
    added = [text for kind, text in placement.lines if kind == "+"]
    if not pairs or not added or all(ours == theirs for ours, theirs in pairs):
        return None
    filled = [(ours, theirs) for ours, theirs in pairs if ours.strip() or theirs.strip()]
    suffixes = {ours[len(theirs):] if ours.startswith(theirs) else None for ours, theirs in filled}
    if len(suffixes) == 1 and (suffix := suffixes.pop()) and not suffix.strip() and \
            all(text.endswith(suffix) for text in added if text.strip()):
        lines = tuple((k, t[: len(t) - len(suffix)] if k == "+" and t.strip() else t)
                      for k, t in placement.lines)
        return lines, "trailing_whitespace", (
            f"removed the trailing white space ({suffix!r}) that every line of the hunk carries "
            "and the file's lines do not")
    if any(ours.rstrip() != ours or theirs.rstrip() != theirs for ours, theirs in filled):
        return None
    if not any(kind == "-" for kind, _ in placement.lines):
        # Lines only added after context: they may mean a level of their own (a new top-level
        # function after an indented block), which the context's indentation does not tell.
        return None
    lost = {theirs[: len(theirs) - len(ours)] if theirs.endswith(ours) else None
            for ours, theirs in filled}
    if len(lost) == 1 and (prefix := lost.pop()) and not prefix.strip():
        lines = tuple((k, prefix + t if k == "+" and t.strip() else t) for k, t in placement.lines)
        return lines, "indentation", (
            f"indented the added lines by {prefix!r} more, as every kept and removed line of the "
            "hunk is in the file")
    extra = {ours[: len(ours) - len(theirs)] if ours.endswith(theirs) else None
             for ours, theirs in filled}
    if len(extra) == 1 and (prefix := extra.pop()) and not prefix.strip() and \
            all(t.startswith(prefix) for t in added if t.strip()):
        lines = tuple((k, t[len(prefix):] if k == "+" and t.strip() else t) for k, t in placement.lines)
        return lines, "indentation", (
            f"indented the added lines by {prefix!r} less, as every kept and removed line of the "
            "hunk is in the file")
    return None


# -- what a miss shows of the shapes not repaired ---------------------------------------------------
def diagnose_miss(miss: ContextNotFoundError, texts: Sequence[str], chunks: Sequence[Chunk]) -> None:
    """Put first in the hint of a hunk that matched nowhere what the patch looks like it got
    wrong, when its lines show it: line numbers copied from a numbered view of the file, or a
    doubled prefix (``--x``, ``+-x``). Changes ``miss.hint`` (a ContextNotFoundError's)."""
    found = _numbered(texts, chunks) or _doubled(texts, chunks)
    if found:
        miss.hint = found + (" " + miss.hint if miss.hint else "")


def _numbered(texts: Sequence[str], chunks: Sequence[Chunk]) -> str:
    numbered = numbered_lines(chunks)
    if numbered is None:
        return ""
    form, stripped = numbered
    hint = describe_miss(texts, stripped, 0)
    return (f"Every line of the hunk starts with a line number ({form}), as a numbered view of the "
            "file shows it: send the lines' text only. (patchtx removes such numbers itself only "
            "when, removed, the lines stand in the file at exactly those numbers; here "
            + ("they do not match the file either." if hint.closest_line is None else
               f"they do not: without the numbers, the closest region is file line "
               f"{hint.closest_line}.)").rstrip(".") + ")")


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
