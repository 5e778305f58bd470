"""The names and modes of a unified diff's file headers (no I/O): ``---``/``+++`` names with
their timestamps (GNU ``diff -N``'s epoch), ``diff --git A B`` split where spaces make it
unclear, git's quoted names and octal modes; and the one wording of a malformed diff."""

from __future__ import annotations

import re

from ..errors import ParseError
from .gitquote import QuotingError
from .gitquote import unquote as _unquote

DEV_NULL = "/dev/null"
# A timestamp after a traditional name, as GNU diff and POSIX diff write it, separated from the
# name by a tab or (whitespace-damaged, as git apply also reads it) by spaces.
_TIMESTAMP = re.compile(r"(?:\t|(?<=\S) +)((?:\d\d)?\d\d-\d\d-\d\d) (\d\d):(\d\d):(\d\d)(\.\d+)?"
                        r"(?: ([-+])(\d\d):?(\d\d))?\s*$")

def diff_error(message: str, line: int, hint: str = "") -> ParseError:
    return ParseError(f"Invalid unified diff: {message} (patch line {line}).", hint=hint, line=line)



def unquote(text: str, line: int) -> tuple[str, str]:
    """A git C-style quoted name at the start of ``text``, and what follows it."""
    try:
        return _unquote(text)
    except QuotingError as exc:
        raise diff_error(str(exc), line) from None



def mode(line: str, number: int) -> int:
    value = line.rsplit(" ", 1)[-1]
    try:
        return int(value, 8)
    except ValueError:
        raise diff_error(f"'{line}' does not give an octal mode", number) from None


def name(field: str, number: int) -> str:
    """A file name field of a git header line: quoted, or the whole field."""
    if field.startswith('"'):
        return unquote(field, number)[0]
    return field.rstrip("\t")


def traditional_name(field: str, number: int) -> tuple[str, bool]:
    """The name of a ``---``/``+++`` line and whether its timestamp is the epoch (GNU
    ``diff -N`` writes the epoch for a side where the file does not exist). The name is quoted,
    or runs up to a timestamp that ends the line (after a tab or spaces, so names may hold
    spaces and tabs), or else up to the first tab, as ``git apply`` reads it."""
    if field.startswith('"'):
        name, rest = unquote(field, number)
        if rest[:1] not in ("", " ", "\t"):  # partly quoted ("a/"sub/file1), as git reads it
            more, epoch = traditional_name(rest, number)
            return name + more, epoch
        stamp = _TIMESTAMP.match(rest) if rest.strip() else None
        return name, stamp is not None and _is_epoch(stamp)
    stamp = _TIMESTAMP.search(field)
    if stamp is not None:
        return field[: stamp.start()], _is_epoch(stamp)
    name = field.split("\t", 1)[0]
    if name.startswith(DEV_NULL) and name[len(DEV_NULL):].strip() == "":
        return DEV_NULL, False
    return name.rstrip(), False


def _is_epoch(stamp: re.Match[str]) -> bool:
    """1970-01-01 00:00:00 UTC, in whatever zone it is written (never with a non-zero fraction)."""
    date, hour, minute, second, fraction, sign, zone_hours, zone_minutes = stamp.groups()
    if date not in ("1969-12-31", "1970-01-01") or second != "00":
        return False
    if fraction is not None and fraction.strip(".0"):
        return False
    if sign is None:  # (no zone: UTC, as GNU patch reads it)
        return date == "1970-01-01" and hour == minute == "00"
    zone = (int(zone_hours) * 60 + int(zone_minutes)) * (-1 if sign == "-" else 1)
    day = 24 * 60 if date == "1969-12-31" else 0
    return int(hour) * 60 + int(minute) - zone == day


def git_header_names(rest: str, number: int) -> tuple[str, str] | None:
    """The two names of ``diff --git A B``; None when spaces make the split unclear (the
    ``---``/``+++`` or rename lines name the file then)."""
    if rest.startswith('"'):
        first, after = unquote(rest, number)
        after = after.lstrip(" ")
        second = unquote(after, number)[0] if after.startswith('"') else after
        return first, second
    if rest.endswith('"') and ' "' in rest:
        at = rest.index(' "')
        return rest[:at], unquote(rest[at + 1 :], number)[0]
    # "a/x y b/x y": the split where both halves name the same path past their first component.
    for at in (i for i, char in enumerate(rest) if char == " "):
        first, second = rest[:at], rest[at + 1 :]
        if first.partition("/")[2] == second.partition("/")[2]:
            return first, second
    return None


