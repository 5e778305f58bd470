"""SEARCH/REPLACE blocks (aider's and Cline's edit format) → ``Patch`` (no I/O).

A block names lines to find and the lines to put in their place::

    src/app.py
    <<<<<<< SEARCH
    def main():
        print("hello")
    =======
    def main():
        print("bye")
    >>>>>>> REPLACE

Both dialects are read: aider's ``<<<<<<< SEARCH`` / ``=======`` / ``>>>>>>> REPLACE`` and Cline's
``------- SEARCH`` / ``=======`` / ``+++++++ REPLACE`` (three or more of the marker character, one
space, the word; a trailing ``>`` and white space around the line are allowed). The file is named
on the line before the block, or before the code fence that holds it (``# app.py``, ``app.py:``
and ```` ```app.py ```` are read as aider reads them); a name that does not look like a path
(``looks_like_path``) must name a file that exists, since the line may be prose; a block without
one belongs to the file of the block before it, or to the ``path`` the caller gives (Cline's
``replace_in_file`` tool carries the path apart from the blocks; in a reply that writes its tool
call out, ``<path>src/a.ts</path>`` then ``<diff>`` names the file of the blocks after it). Text
outside the blocks (prose, code fences, the tool call's tags) is ignored, so a model's whole reply
parses.

What the blocks become: the blocks of one file are the hunks of one ``*** Update File`` (the
SEARCH lines are the hunk's old lines, the REPLACE lines its new ones, and lines the two share are
context), placed by the one placement rule of a patch: each block's SEARCH lines must stand once,
after the block before it (or in lines an earlier block wrote), and once in the file as the blocks
before it leave it (as aider applies them, one after another: ``block_placement`` adds that, and
the looser passes this format allows). A block
with an empty SEARCH creates its file, as ``*** Add File`` does (or fills an empty one; the
planner refuses it on a file with content, whatever the policy: docs/format.md, [empty-search]).

Malformed blocks are refused, naming the reply's line: a marker out of order, a block the text
ends inside (a reply cut short: applying it would write a truncated replacement), a second divider
in one block (aider ends the block there, Cline starts another: the text has no one meaning).
"""

from __future__ import annotations

import re
from difflib import SequenceMatcher
from typing import TYPE_CHECKING

from .._record import field, record
from ..errors import ParseError
from ..model import AddFile, Chunk, Patch, UpdateFile
from ..place.placer import Placed, Placer
from ..place.textfile import require_unicode, split_text
from .registry import Format

if TYPE_CHECKING:
    from collections.abc import Sequence

    from ..model import Hunk, LineKind
    from ..place.matching import LineIndex
    from ..place.placer import UpdateRule
    from ..place.textfile import TextFile

FORMAT = "search-replace"

SEARCH_MARKER = re.compile(r"(?:<{3,}|-{3,}) SEARCH>?")
DIVIDER = re.compile(r"={5,}")
REPLACE_MARKER = re.compile(r"(?:>{3,}|\+{3,}) REPLACE>?")
FENCES = ("```", "~~~")
_TAG = re.compile(r"</?[A-Za-z_][\w-]*>")
_PATH_ELEMENT = re.compile(r"<path>(.+)</path>")
"""Cline's tool call as a model writes it: ``<replace_in_file>``, ``<path>src/a.ts</path>``,
``<diff>`` and the blocks, ``</diff>``: the path element names the file of the blocks after it,
read only in that framing (its ``<diff>`` line next): elsewhere it is text, and a block right
under it has no file name."""

FORMAT_HINT = ("A block is: the file's path alone on a line, then '<<<<<<< SEARCH', the lines to "
               "find, '=======', the lines to put in their place, '>>>>>>> REPLACE' (or Cline's "
               "'------- SEARCH' ... '=======' ... '+++++++ REPLACE').")


def looks_search_replace(text: str, *, indented: bool = False) -> bool:
    """Whether ``text`` holds a SEARCH marker line and, after it, a REPLACE marker line, each at
    the start of its line (``indented``: or after white space, as in a list item of a reply; a
    unified diff's context line starts with a space, so its format is decided first)."""
    search = min(_marker_line(text, word, SEARCH_MARKER, 0, indented)
                 for word in ("< SEARCH", "- SEARCH"))
    return search < len(text) and min(_marker_line(text, word, REPLACE_MARKER, search, indented)
                                      for word in ("> REPLACE", "+ REPLACE")) < len(text)


def _marker_line(text: str, word: str, pattern: re.Pattern[str], low: int, indented: bool) -> int:
    """The end of the first line from ``low`` that is a marker of ``pattern``, found by the end of
    its marker (so a long text without one costs a substring search); past the end if none."""
    at = text.find(word, low)
    while at >= 0:
        start = text.rfind("\n", 0, at) + 1
        end = text.find("\n", at)
        end = len(text) if end < 0 else end
        line = text[start:end].rstrip(" \t\r")
        if pattern.fullmatch(line.lstrip(" \t") if indented else line):
            return end
        at = text.find(word, end)
    return len(text) + 1


def _error(message: str, line: int, hint: str = FORMAT_HINT) -> ParseError:
    return ParseError(f"Invalid SEARCH/REPLACE block: {message} (line {line}).", hint=hint,
                      line=line)


def _marker(pattern: re.Pattern[str], line: str) -> bool:
    return pattern.fullmatch(line.strip()) is not None


def _is_marker(line: str) -> bool:
    return any(_marker(pattern, line) for pattern in (SEARCH_MARKER, DIVIDER, REPLACE_MARKER))


def _filename_on(line: str) -> str | None:
    """The file name a line before a block gives, as aider reads it: a fence's info string that
    looks like a path (```` ```src/app.py ````), else the line without ``#``, ``:``, backticks and
    asterisks around it; None for a fence with a language only, ``...``, a blank line or a
    line of tags (Cline's ``<path>`` element outside its framing)."""
    text = line.strip()
    if text == "..." or _is_marker(text) or _TAG.fullmatch(text) or _PATH_ELEMENT.fullmatch(text):
        return None
    for fence in FENCES:
        if text.startswith(fence):
            candidate = text.lstrip(fence[0]).strip()
            return candidate if candidate and ("." in candidate or "/" in candidate) else None
    name = text.rstrip(":").lstrip("#").strip().strip("`*").strip()
    return name or None


def find_filename(before: list[str]) -> str | None:
    """The file a block names in the (up to three) lines ``before`` its SEARCH marker: the nearest
    line, then further back only across fence lines; a name with a dot or a slash is preferred
    over one without (a fence's language)."""
    names: list[str] = []
    for line in reversed(before[-3:]):
        name = _filename_on(line)
        if name is not None:
            names.append(name)
        if not line.lstrip().startswith(FENCES):
            break
    if not names:
        return None
    return next((name for name in names if "." in name or "/" in name), names[0])


def looks_like_path(name: str) -> bool:
    """Whether a name read from the line before a block is a path by its look alone: one word
    (no white space: ``Here is the fix``, ``1. a.txt`` are prose) with a dot or a slash in it and
    a letter, not ending a sentence (``Done.``), not wrapped in or ending with prose's punctuation
    (``(1/2)``, ``etc.)``, ``i.e.,``), no folder (``a/b/``) and no link (``https://...``). Any
    other name (``Makefile``, ``Changes``, ``1.1``, a heading's word) may be prose as well as a
    file name: it is taken only when it names a file that exists (``Patch.names_to_confirm``,
    checked by the planner)."""
    return (not any(char.isspace() for char in name) and ("." in name or "/" in name)
            and any(char.isalpha() for char in name) and not name.endswith((".", "/"))
            and name[0] not in _PROSE_OPENERS and name[-1] not in _PROSE_CLOSERS and "://" not in name)


_PROSE_OPENERS = "([{<'\""
_PROSE_CLOSERS = ")]}>,;!?'\""
"""Punctuation that wraps or ends a word of prose, and that no path is written with."""


def not_a_path_error(name: str, written: str, line: int) -> ParseError:
    """The refusal of a name that does not look like a path and names no file that exists."""
    return _error(f"the line before the block ('{written.strip()[:80]}') names no file: '{name}' "
                  "is not a path, and no file of that name exists", line,
                  "Put the file's path alone on the line before '<<<<<<< SEARCH' (or before the "
                  "code fence holding the block), with nothing else on it (src/app.py); prose goes "
                  "on other lines. A new file without a dot in its name is written './Makefile'.")


@record(frozen=False)
class _Block:
    path: str
    line: int
    written: str | None = None
    """The line the block's name was read from, when the name does not look like a path."""
    search: list[str] = field(default_factory=list)
    replace: list[str] = field(default_factory=list)


def blocks(text: str, path: str | None = None) -> list[_Block]:
    """Every block of ``text`` in order; ``path``: the file of every block (the text then names
    none)."""
    lines = split_text(text)[0]  # (at line breaks as a file's lines are split)
    found: list[_Block] = []
    current: _Block | None = None
    state = "outside"
    previous_path = path
    for index, line in enumerate(lines):
        number = index + 1
        if state == "outside":
            element = _PATH_ELEMENT.fullmatch(line.strip()) if path is None else None
            if element is not None:
                following = next((later.strip() for later in lines[index + 1:] if later.strip()), "")
                if following == "<diff>":  # (its own framing: the element then its diff)
                    previous_path = element.group(1).strip()
            elif _marker(SEARCH_MARKER, line):
                before = lines[max(0, index - 3):index]
                named = None if path is not None else find_filename(before)
                block_path = named or previous_path
                if block_path is None:
                    unframed = any(_PATH_ELEMENT.fullmatch(text.strip()) for text in before)
                    raise _error("no file name before the first block", number,
                                 "Cline's '<path>' element names the file only in its tool "
                                 "call's framing: '<path>FILE</path>', then '<diff>' and the "
                                 "blocks, then '</diff>'." if unframed else
                                 "Put the file's path alone on the line before '<<<<<<< SEARCH' "
                                 "(or before the code fence holding the block).")
                written = None
                if named is not None and not looks_like_path(named):
                    written = next(text for text in reversed(before) if _filename_on(text) == named)
                current = _Block(block_path, number, written)
                previous_path = block_path
                state = "search"
            elif _marker(REPLACE_MARKER, line):
                raise _error(f"'{line.strip()}' closes a block that no SEARCH marker opened", number)
            continue
        assert current is not None
        if state == "search":
            if _marker(DIVIDER, line):
                state = "replace"
            elif _marker(REPLACE_MARKER, line):
                raise _error(f"'{line.strip()}' before the '=======' line that ends the SEARCH lines",
                             number)
            elif _marker(SEARCH_MARKER, line):
                raise _error(f"a second SEARCH marker before the '=======' line of the block opened on "
                             f"line {current.line}", number)
            else:
                current.search.append(line)
        else:
            if _marker(REPLACE_MARKER, line):
                found.append(current)
                current, state = None, "outside"
            elif _marker(DIVIDER, line):
                raise _error(f"a second '=======' line in the block opened on line {current.line}",
                             number, "A block has one '=======' line, between its SEARCH and REPLACE "
                             "lines; end the block with '>>>>>>> REPLACE' before the next one.")
            elif _marker(SEARCH_MARKER, line):
                raise _error(f"a SEARCH marker inside the REPLACE lines of the block opened on line "
                             f"{current.line}", number, "End each block with '>>>>>>> REPLACE' "
                             "before opening the next.")
            else:
                current.replace.append(line)
    if current is not None:
        missing = "'======='" if state == "search" else "'>>>>>>> REPLACE'"
        raise _error(f"the text ends inside the block opened on line {current.line}, without its "
                     f"{missing} line", len(lines),
                     "A reply cut short is never applied: send the whole block again.")
    if not found:
        raise ParseError("No SEARCH/REPLACE block found in the text.", hint=FORMAT_HINT)
    return found


def block_lines(search: list[str], replace: list[str]) -> tuple[tuple[LineKind, str], ...]:
    """Old lines and the new lines in their place as a hunk's body (a block's SEARCH and REPLACE
    lines, the lines a text replacement touches): the lines both share, in order, are context (so
    a diff shows what changed, and the placed file keeps those lines exactly as it has them); the
    others are removed and added lines."""
    out: list[tuple[LineKind, str]] = []
    matcher = SequenceMatcher(None, search, replace, autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            out.extend((" ", text) for text in search[i1:i2])
            continue
        out.extend(("-", text) for text in search[i1:i2])
        out.extend(("+", text) for text in replace[j1:j2])
    return tuple(out)


def parse_search_replace(text: str, *, path: str | None = None) -> Patch:
    """The blocks of ``text`` as a patch: per file, in the order the files first appear, an
    ``UpdateFile`` whose hunks are its blocks in order; a block with an empty SEARCH creates the
    file (``AddFile``), and later blocks of that file update it. ``path`` names the file of every
    block (Cline's ``replace_in_file``)."""
    require_unicode(text)
    if path is not None:
        require_unicode(path, "`path`")
    hunks: list[Hunk] = []
    latest: dict[str, int] = {}  # path -> index in hunks of its latest operation
    created: set[str] = set()
    to_confirm: list[tuple[str, int, str]] = []
    more: dict[int, list[Chunk]] = {}  # index in hunks of an UpdateFile -> its chunks
    for block in blocks(text, path):
        if block.written is not None and block.path not in latest:
            to_confirm.append((block.path, block.line, block.written))
        if not block.search:
            if block.path in created or block.path in latest:
                raise _error(f"a block with an empty SEARCH for {block.path}, which an earlier block "
                             "already edits or creates", block.line,
                             "An empty SEARCH creates a new file; to add lines to a file, SEARCH "
                             "for the lines they go after and repeat them in REPLACE.")
            created.add(block.path)
            contents = "".join(line + "\n" for line in block.replace)
            latest[block.path] = len(hunks)
            hunks.append(AddFile(block.path, contents, block.line))
            continue
        chunk = Chunk((), block_lines(block.search, block.replace), line=block.line)
        at = latest.get(block.path)
        if at is not None and isinstance(hunks[at], UpdateFile):
            more[at].append(chunk)
            continue
        latest[block.path] = len(hunks)
        more[len(hunks)] = [chunk]
        hunks.append(UpdateFile(block.path, (chunk,), line=block.line))
    # (A file's blocks are gathered in a list and made a tuple once: adding each to a new tuple
    # was quadratic in the blocks, issue 39.)
    for at, chunks in more.items():
        if len(chunks) > 1:
            update = hunks[at]
            assert isinstance(update, UpdateFile)
            hunks[at] = UpdateFile(update.path, tuple(chunks), line=update.line)
    return Patch(tuple(hunks), text, format=FORMAT, names_to_confirm=tuple(to_confirm))


# -- the blocks' placer and their Format ----------------------------------------------------------
def _by_blocks(original: TextFile, index: LineIndex, chunks: Sequence[Chunk], rule: UpdateRule,
               display: str) -> Placed:
    from .block_placement import place_blocks  # (off a one-line edit's path)

    placements, notes = place_blocks(original, chunks, display, first_match=rule.first_match)
    return Placed(placements, notes=tuple(notes))


def _detects(text: str, loose: bool) -> bool:
    return looks_search_replace(text, indented=loose)


def _parse(text: str, *, strip: int | None, reverse: bool, unidiff_zero: bool,
           unprefixed_context: bool, absolute_names: bool) -> Patch:
    if strip is not None or reverse:
        raise ParseError("Invalid option: --strip and --reverse apply to unified diffs only; "
                         "this text holds SEARCH/REPLACE blocks.",
                         hint="Leave the option out.")
    return parse_search_replace(text)


SEARCH_REPLACE = Format(
    FORMAT, Placer(_by_blocks, on_bytes=True, in_turn=True), "blocks", "the block on line {line}",
    detects=_detects, parse=_parse, decorated=True, elisions_refused=True, adds_by_empty_search=True,
    no_change="A block's REPLACE lines are what its SEARCH lines become: make them differ, "
              "or leave the block out if the file already holds what you meant.",
    no_change_said="its REPLACE lines are its SEARCH lines")
"""SEARCH/REPLACE blocks: placed by the content rule in their own passes, each in turn."""
