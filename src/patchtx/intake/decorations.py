"""Decorations a model copies into SEARCH/REPLACE blocks and text replacements, read away.

A block (or the editor's ``old_str``, an edit list's ``old_string``) that matches nowhere may hold
lines that are no lines of the file: Roo Code's ``:start_line:`` / ``-------`` header, the line
numbers of a numbered view. ``undecorated`` reads the blocks without them when that reading is the
only one, and names the decoration first in the miss otherwise. (Carved from ``repair_update``,
whose line-number forms it reads: ``number_form``, ``name_numbers``.)
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from .._record import field, record, replace
from ..errors import AmbiguousContextError, ContextNotFoundError
from ..model import Repair
from ..place.hints import describe_miss
from .repair_update import (
    _SOME_ADDED_NUMBERED,
    _form,
    _numbers_repair,
    _split_number,
    _try,
    name_numbers,
    number_form,
)

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence

    from ..formats.registry import Format
    from ..model import Chunk
    from ..place.matching import Placement
    from .repair_update import Form, Place

# -- decorations in SEARCH/REPLACE blocks and text replacements ----------------------------------
_ROO_FIELD = re.compile(r":(?:start|end)_line:[ \t]*\d+[ \t]*")
_ROO_RULE = re.compile(r"-{3,}[ \t]*")
"""Roo Code's header at the top of a block's SEARCH lines: ``:start_line:12`` (and, in older
versions, ``:end_line:14``), then a ``-------`` line."""


def _roo_header(search: Sequence[str]) -> int:
    """How many lines at the top of a block's SEARCH lines are Roo Code's header (0: none)."""
    count = 0
    while count < len(search) and _ROO_FIELD.fullmatch(search[count]):
        count += 1
    if count and count < len(search) and _ROO_RULE.fullmatch(search[count]):
        count += 1
    return count


@record(frozen=False)
class _Decorated:
    """One block (or text replacement) read without its decorations."""

    index: int
    chunk: Chunk
    header: list[str] = field(default_factory=list)
    """Roo Code's header lines removed from its SEARCH lines."""
    form: Form | None = None
    """The form of the line numbers removed from its SEARCH lines (None: none)."""
    numbers: list[int] = field(default_factory=list)
    """The numbers of its SEARCH lines, in order."""
    why: str = ""
    """Why the reading is not taken, when the decorations do not read one way."""
    stripped: list[str] = field(default_factory=list)
    """Its SEARCH lines without the decorations."""


def _sides(chunk: Chunk, fmt: Format) -> tuple[list[str], list[str]]:
    """A block's SEARCH and REPLACE lines; a text replacement's old and new text, split at its
    line breaks."""
    if fmt.replaces_text:
        old = next((text for kind, text in chunk.lines if kind == "-"), "")
        new = next((text for kind, text in chunk.lines if kind == "+"), "")
        return old.split("\n"), new.split("\n")
    return chunk.old_lines, chunk.new_lines


def _rebuilt(chunk: Chunk, fmt: Format, search: list[str], replaced: list[str]) -> Chunk:
    if fmt.replaces_text:
        return replace(chunk, lines=(("-", "\n".join(search)), ("+", "\n".join(replaced))))
    from ..formats.search_replace import block_lines  # (off a one-line edit's path)

    return replace(chunk, lines=block_lines(search, replaced))


def _undecorated(index: int, chunk: Chunk, fmt: Format) -> _Decorated | None:
    """``chunk`` without Roo Code's header (blocks) and line-number prefixes (``numbered``'s
    reading: every SEARCH line numbered in one form; REPLACE lines all numbered, blank ones aside,
    or none); None when it has neither."""
    search, replaced = _sides(chunk, fmt)
    found = _Decorated(index, chunk)
    header = _roo_header(search) if not fmt.replaces_text else 0
    if header:
        found.header, search = search[:header], search[header:]
        if replaced[:header] == found.header:
            replaced = replaced[header:]
    # (a text's trailing line break leaves an empty last piece: no line of the view)
    ends = 1 if fmt.replaces_text and len(search) > 1 and search[-1] == "" else 0
    form = number_form(search[: len(search) - ends])
    if form is not None:
        split = [_split_number(text, form) for text in search[: len(search) - ends]]
        found.form, found.numbers = form, [number for number, _ in split]  # type: ignore[misc]
        search = [text for _, text in split] + search[len(search) - ends:]  # type: ignore[misc]
        new = [_split_number(text, form) if text.strip() else None for text in replaced]
        filled = [number for number, text in zip(new, replaced, strict=True) if text.strip()]
        if filled and all(number is not None for number in filled):
            replaced = [text if number is None else number[1] for number, text in zip(new, replaced, strict=True)]
        elif any(number is not None for number in filled):
            found.why = _SOME_ADDED_NUMBERED.replace("added lines", "REPLACE lines" if not fmt.replaces_text
                                                     else "lines of the new text")
        if found.numbers != list(range(found.numbers[0], found.numbers[0] + len(found.numbers))):
            found.why = found.why or "the numbers do not follow one another"
    if not header and form is None:
        return None
    found.stripped = search
    found.chunk = _rebuilt(chunk, fmt, search, replaced)
    return found


def undecorated(texts: Sequence[str], chunks: Sequence[Chunk], place: Place, spelled: str,
                fmt: Format, miss: ContextNotFoundError, *, repair: bool = True,
                applied: Callable[[Sequence[Chunk]], bool] | None = None,
                ) -> tuple[list[Chunk], list[Repair]] | None:
    """SEARCH/REPLACE blocks (``fmt`` ``"search-replace"``) and text replacements (``"text"``:
    the editor's ``old_str``, an edit list's ``old_string``) that matched nowhere, read without
    the decorations a model copies into them: Roo Code's ``:start_line:`` / ``-------`` header,
    line numbers from a numbered view. The reading is taken (``repair``) when it is the only one:
    a decorated block does not stand in the file as written, the blocks without their decorations
    are placed by the format's own rule, and each numbered one where its numbers say (a text's
    lines equal the file's lines there). Returns the blocks so read and the repairs; otherwise
    None, the decoration named first in ``miss``'s hint (the hint of the decorated lines would
    blame the file). ``applied``: whether blocks so read are already applied (the repaired
    blocks are then returned, for the update to answer so: a decorated reply sent again)."""
    decorated: list[_Decorated] = []
    trial = list(chunks)
    for index, chunk in enumerate(chunks):
        if not chunk.old_lines:
            continue
        found = _undecorated(index, chunk, fmt)
        if found is None or _try(place, [chunk]) is not None:
            continue  # (no decoration, or lines that stand in the file as written: the file's own)
        decorated.append(found)
        trial[index] = found.chunk
    if not decorated:
        return None
    placements, why = _place_or_why(place, trial)
    for found in decorated:
        if found.why:
            _named(miss, texts, found, fmt, found.why)
            return None
    if placements is None and repair and applied is not None and applied(trial):
        return trial, _decoration_repairs(decorated, spelled, fmt)
    if placements is None:
        alone = [found for found in decorated if _try(place, [found.chunk]) is None]
        if not alone:
            return None  # (each decoration read away places: another block is what misses)
        _named(miss, texts, alone[0], fmt, why)
        return None
    for found in decorated:
        if found.form is None:
            continue
        wrong = _numbers_disagree(texts, placements, found, fmt)
        if wrong:
            _named(miss, texts, found, fmt, wrong)
            return None
    if not repair:
        _named(miss, texts, decorated[0], fmt, "repairs are off (strict)")
        return None
    return trial, _decoration_repairs(decorated, spelled, fmt)


def _decoration_repairs(decorated: Sequence[_Decorated], spelled: str, fmt: Format) -> list[Repair]:
    repairs = []
    for found in decorated:
        where = (f"{spelled}, the old text" if fmt.replaces_text else
                 f"{spelled}, the block on line {found.chunk.line}")
        if found.header:
            repairs.append(Repair("start_line_header", where,
                                  f"removed Roo Code's {' / '.join(map(repr, found.header))} header "
                                  "from the SEARCH lines: it is no line of the file, and without it "
                                  "the block matches in one place"))
        if found.form is not None:
            repairs.append(_numbers_repair(where, found.form))
    return repairs


def _place_or_why(place: Place, chunks: Sequence[Chunk]) -> tuple[list[Placement] | None, str]:
    try:
        return place(chunks), ""
    except AmbiguousContextError as error:
        lines = error.details.get("candidate_lines") or []
        return None, ("the lines, so read, stand in several places (file lines "
                      f"{', '.join(map(str, lines))})" if lines else
                      "the lines, so read, stand in several places")
    except ContextNotFoundError:
        return None, "the lines, so read, do not match the file either"


def _new_side_stands(texts: Sequence[str], chunk: Chunk, fmt: Format) -> int | None:
    """The file line (1-based) where a block's REPLACE lines (a text's new lines), read without
    decorations, stand in the file, when they hold text; else None."""
    new = _sides(chunk, fmt)[1]
    if fmt.replaces_text and len(new) > 1 and new[-1] == "":
        new = new[:-1]
    if not any(line.strip() for line in new):
        return None
    for at in range(len(texts) - len(new) + 1):
        if texts[at] == new[0] and list(texts[at:at + len(new)]) == new:
            return at + 1
    return None


def _numbers_disagree(texts: Sequence[str], placements: Sequence[Placement], found: _Decorated,
                      fmt: Format) -> str:
    """Why the numbers of a numbered block (or text) do not say where it was placed ("": they do)."""
    first = found.numbers[0]
    at = next((p.start for p in placements if p.chunk_index == found.index), None)
    if at is None:
        return "the blocks, so read, apply only one after another, not where their numbers say"
    if at != first - 1:
        return f"the numbers say file line {first}, and the lines stand at file line {at + 1}"
    lines = found.stripped[: len(found.numbers)]
    if fmt.replaces_text and list(texts[at:at + len(lines)]) != lines:
        return f"the text stands inside file lines {first}-{first + len(lines) - 1}, not as those whole lines"
    return ""


def _named(miss: ContextNotFoundError, texts: Sequence[str], found: _Decorated, fmt: Format,
           why: str) -> None:
    """Put the decoration first in ``miss``'s hint."""
    subject = ("The lines of the old text" if fmt.replaces_text else
               f"The SEARCH lines of the block on line {found.chunk.line}")
    done = _new_side_stands(texts, found.chunk, fmt)
    if done:
        standing = ("the new text, so read, already stands" if fmt.replaces_text else
                    "its REPLACE lines, so read, already stand")
        why += f"; {standing} at file line {done}: the edit may have been made already"
    if found.form is not None and not found.header:
        name_numbers(miss, texts, found.form, found.stripped, f"{subject} start", why)
        return
    hint = describe_miss(texts, found.stripped, 0)
    numbers = (f", then line numbers ({_form(found.form)}) as a numbered view shows them"
               if found.form is not None else "")
    miss.hint = (f"{subject} start with Roo Code's header ({' / '.join(map(repr, found.header))})"
                 f"{numbers}, which is no line of the file: send the lines' text only. (patchtx "
                 "removes it itself only when the lines without it match the file in one place; "
                 f"here {why}.) Without it: {hint.text}")
    miss.details["closest_line"] = hint.closest_line
