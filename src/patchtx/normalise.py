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
    from collections.abc import Callable

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

    return normalize("NFC", stripped).translate(PUNCTUATION)


def normalise(line: str) -> str:
    """The last (loosest) pass's key of a line."""
    return unicode_key(line.strip(WHITESPACE))


PASSES: tuple[Callable[[str], str], ...] = (
    lambda s: s,
    rstrip,
    strip,
    normalise,
)


def matches_in_some_pass(line: str, other: str) -> bool:
    return any(key(line) == key(other) for key in PASSES)
