"""How two lines are compared: Codex's four matching passes, from strict to loose.

1. exact; 2. trailing whitespace ignored; 3. surrounding whitespace ignored; 4. Unicode
normalised: surrounding whitespace ignored, canonical equivalence (NFC, so "é" as one code point
equals "e" + combining accent) and Codex's punctuation and space folding (curly quotes, dashes,
no-break spaces). Each pass maps a line to a key; two lines match in a pass when their keys are
equal. The parser, the matcher and the miss hints all compare lines through this one module.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Sequence

    from ..model import Chunk

PUNCTUATION = str.maketrans(
    {
        **{c: "-" for c in "\u2010\u2011\u2012\u2013\u2014\u2015\u2212"},
        **{c: "'" for c in "\u2018\u2019\u201a\u201b"},
        **{c: '"' for c in "\u201c\u201d\u201e\u201f"},
        **{
            c: " "
            for c in "\u00a0\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a\u202f\u205f\u3000"
        },
    }
)

_FOLDED = tuple((chr(code), to) for code, to in PUNCTUATION.items())


def fold(text: str) -> str:
    """``text.translate(PUNCTUATION)``, a scan of the text per character folded instead of a
    look-up in a mapping per character: several times faster on a file's text that is not ASCII
    (0.11 s against 0.72 s for 4 MB here). (No character folds into one that folds.)"""
    for character, to in _FOLDED:
        if character in text:
            text = text.replace(character, to)
    return text


# Rust's char::is_whitespace (Unicode White_Space): Python's str.strip() also strips U+001C-U+001F,
# which Codex keeps, so every trim here names its characters (or checks they are absent).
WHITESPACE = ("\t\n\x0b\x0c\r \x85\xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007"
              "\u2008\u2009\u200a\u2028\u2029\u202f\u205f\u3000")
PYTHON_ONLY_WHITESPACE = "\x1c\x1d\x1e\x1f"
"""What str.strip() strips besides Rust's set (checked against every code point in a test)."""


def strip(line: str) -> str:
    return line.strip(WHITESPACE)


def rstrip(line: str) -> str:
    return line.rstrip(WHITESPACE)


def unicode_key(stripped: str) -> str:
    """The last pass's key of an already stripped line: NFC, then punctuation folded."""
    if stripped.isascii():
        return stripped
    from unicodedata import normalize  # (off a one-line edit's path)

    return fold(normalize("NFC", stripped))


def unicode_keys(stripped: list[str]) -> list[str]:
    """``unicode_key`` of each of many stripped lines (a file's), in a few passes over their text
    in C instead of two calls per line: NFC and the folding work character by character, and a
    line break (which no line holds) composes with nothing and is reordered with nothing, so the
    lines joined by line breaks normalise to the lines normalised one by one."""
    joined = "\n".join(stripped)
    if not stripped or joined.count("\n") != len(stripped) - 1:
        return list(map(unicode_key, stripped))  # (no lines, or a line that holds a line break)
    from unicodedata import normalize  # (off a one-line edit's path)

    return fold(normalize("NFC", joined)).split("\n")


def normalise(line: str) -> str:
    """The last (loosest) pass's key of a line."""
    return unicode_key(line.strip(WHITESPACE))


def old_lines_may_stand(chunks: Sequence[Chunk], file_keys: set[str]) -> bool:
    """Whether every non-blank line the chunks keep or remove has its last pass's key among
    ``file_keys`` (a file's lines' keys): if not, no placement in any pass finds them all (a
    blank line aside: Codex's retry may drop one). The cheap question before placing them."""
    return all(normalise(line) in file_keys for chunk in chunks for line in chunk.old_lines if line.strip())


PASSES: tuple[Callable[[str], str], ...] = (
    lambda s: s,
    rstrip,
    strip,
    normalise,
)


Shift = tuple[str, str]
"""How a hunk's line is indented against the file's: ``("+", text)``, the file has ``text`` more
in front of it; ``("-", text)``, that much less; ``("", "")``, the same."""
SAME: Shift = ("", "")


def indentation(line: str) -> str:
    return line[: len(line) - len(line.lstrip(WHITESPACE))]


def line_shift(in_file: str, in_patch: str) -> Shift | None:
    """How ``in_patch`` is indented against ``in_file`` (None: neither indentation ends the other,
    as tabs against spaces)."""
    ours, theirs = indentation(in_file), indentation(in_patch)
    if ours == theirs:
        return SAME
    if ours.endswith(theirs):
        return ("+", ours[: len(ours) - len(theirs)])
    if theirs.endswith(ours):
        return ("-", theirs[: len(theirs) - len(ours)])
    return None


def one_shift(pairs: Iterable[tuple[str, str]]) -> Shift | None:
    """THE indentation rule, for every hunk matched loosely (a Codex section, a model-written
    unified hunk, a SEARCH/REPLACE block): the one shift that every non-blank ``(file line, patch
    line)`` pair shows, ``SAME`` when there is none to show; None when the pairs disagree (the
    added lines' indentation then has no one reading)."""
    shift: Shift | None = None
    for in_file, in_patch in pairs:
        if not (strip(in_file) and strip(in_patch)):
            continue
        this = line_shift(in_file, in_patch)
        if this is None or (shift is not None and this != shift):
            return None  # (said at the first pair that disagrees: the rest cannot agree again)
        shift = this
    return SAME if shift is None else shift


def spell_indentation(indent: str) -> str:
    """``indent`` in words: "4 spaces", "1 tab"."""
    spaces, tabs = indent.count(" "), indent.count("\t")
    parts = [f"{spaces} space{'s' if spaces != 1 else ''}"] if spaces else []
    parts += [f"{tabs} tab{'s' if tabs != 1 else ''}"] if tabs else []
    return " and ".join(parts) or repr(indent)


def hunk_suffix(pairs: Sequence[tuple[str, str]], added: Sequence[str]) -> str:
    """The white space the model put at the end of every line of a hunk: the one suffix that
    every non-blank patch line of ``pairs`` (file line, patch line) has past its file line's text,
    and every non-blank added line ends with; "" when there is none. (Such white space is not
    written: the file's lines show it is the model's, not the code's.)"""
    suffixes = set()
    for in_file, in_patch in pairs:
        if not strip(in_file) and not strip(in_patch):
            continue
        ours, theirs = in_patch.lstrip(WHITESPACE), in_file.lstrip(WHITESPACE)
        suffixes.add(ours[len(theirs):] if ours.startswith(theirs) else None)
        if len(suffixes) > 1:
            return ""
    suffix = suffixes.pop() if suffixes else None
    if not suffix or strip(suffix) or not all(line.endswith(suffix) for line in added if strip(line)):
        return ""
    return suffix


def shifted(line: str, shift: Shift) -> str | None:
    """An added line given the hunk's ``shift``; a blank line stays as it is. None when the line
    has less indentation than a ``"-"`` shift takes away: the hunk shifted as a whole cannot have
    written it so."""
    direction, text = shift
    if not direction or not strip(line):
        return line
    if direction == "+":
        return text + line
    return line[len(text):] if line.startswith(text) else None


def fits_around(texts: Sequence[str], start: int, lines: Sequence[tuple[str, str]]) -> tuple[bool, bool]:
    """How a hunk placed at file line ``start`` (its ``(kind, text)`` lines, kept and removed
    ones standing for the file's) indents the lines it adds against the block around them: a
    pair (consistent, plausible). In each change (a run of added and removed lines), take the
    first non-blank added line, and the nearest non-blank lines above and below it in the file
    the hunk makes; the block it is in is the one below when that one is deeper than the one
    above (the change opens it: a body under its ``def``), else either (a change between a
    block's last line and a shallower line may end the block or follow it). The line is
    *consistent* when it is as deep as a line its change removes, or, where the change removes
    none, as that block; *plausible* when it is as deep as either. The hunk is so when every
    change is. The test that tells apart the two readings of a hunk matched at a shifted
    indentation, its added lines shifted alike or already at the file's (``repair_update``)."""
    result: list[str] = list(texts[max(0, start - _AROUND):start])
    changes: list[tuple[int, int, set[str]]] = []  # (first added, last added, removed indentations)
    at, index, size = start, 0, len(lines)
    while index < size:
        if lines[index][0] == " ":
            result.append(texts[at])
            at, index = at + 1, index + 1
            continue
        removed: set[str] = set()
        added: list[int] = []
        while index < size and lines[index][0] != " ":
            kind, text = lines[index]
            if kind == "-":
                if strip(texts[at]):
                    removed.add(indentation(texts[at]))
                at += 1
            else:
                added.append(len(result))
                result.append(text)
            index += 1
        first = next((i for i in added if strip(result[i])), None)
        if first is not None:
            changes.append((first, added[-1], removed))
    result += texts[at:at + _AROUND]
    consistent = plausible = True
    for first, last, removed in changes:
        deep = indentation(result[first])
        above = next((indentation(result[i]) for i in range(first - 1, -1, -1) if strip(result[i])), "")
        below = next((indentation(result[i]) for i in range(last + 1, len(result)) if strip(result[i])), "")
        block = {below} if len(below) > len(above) and below.startswith(above) else \
            {below, *_enclosing(result, first, above, below)}
        consistent = consistent and deep in (removed or block)
        plausible = plausible and deep in removed | block
    return consistent, plausible


def _enclosing(lines: Sequence[str], at: int, deepest: str, shallowest: str) -> list[str]:
    """The indentations of the blocks that line ``at`` may end or follow: ``deepest`` (the line
    above it) and that of each line above that opens a block around it, up to ``shallowest``
    (the line below it): after a method's last line and before a class, a line may be the
    method's, a new method, or a new class."""
    found, current = [deepest], deepest
    for i in range(at - 1, -1, -1):
        if len(current) <= len(shallowest):
            break
        indent = indentation(lines[i])
        if strip(lines[i]) and len(indent) < len(current) and current.startswith(indent):
            found.append(indent)
            current = indent
    return found


_AROUND = 200
"""How many file lines around a hunk ``fits_around`` looks through for a non-blank neighbour
(past them, or past either end of the file, the neighbour is a line without indentation)."""


def matches_in_some_pass(line: str, other: str) -> bool:
    return any(key(line) == key(other) for key in PASSES)
