"""Bytes ⇄ lines, keeping every line's own ending, a UTF-8 BOM and the final-newline state.

Nothing the patch does not touch may change by a single byte: a ``TextFile`` re-encodes to exactly
the bytes it was decoded from.
"""

from __future__ import annotations

import re

from .._record import record
from ..errors import ArgumentTypeError, BinaryFileError, EncodingPatchError, ParseError

BOM = "\ufeff"
BOM_BYTES = BOM.encode("utf-8")


@record(frozen=False)
class TextFile:
    texts: list[str]
    """Line contents without their endings (the BOM is not part of the first line)."""
    endings: list[str]
    """Each line's ending: ``"\\n"``, ``"\\r\\n"``, ``"\\r"``, or ``""`` for an unterminated last line."""
    bom: bool = False

    @property
    def ends_with_newline(self) -> bool:
        """True for an empty file: text added to it gets a final newline."""
        return not self.endings or self.endings[-1] != ""

    @property
    def dominant_ending(self) -> str:
        """The most common ending (ties go to the first seen); LF for a file without any."""
        endings = self.endings
        # Counted with list.count, not a loop over the lines. LF on more than half the lines
        # outnumbers the other two together, so it wins without counting them.
        lf = endings.count("\n")
        if 2 * lf > len(endings):
            return "\n"
        counts = {e: n for e in ("\n", "\r\n", "\r") if (n := endings.count(e))}
        if len(counts) <= 1:
            return next(iter(counts), "\n")
        best = max(counts.values())
        tied = [e for e, n in counts.items() if n == best]
        return min(tied, key=endings.index)

    def encode(self) -> bytes:
        texts, endings = self.texts, self.endings
        if len(texts) != len(endings):
            raise ValueError("a TextFile needs one ending per line")
        if endings.count("\n") == len(endings):  # LF only: one join
            body = "\n".join(texts) + "\n" if texts else ""
        elif endings.count("\n") == len(endings) - 1 and endings[-1] == "":
            body = "\n".join(texts)
        else:
            body = "".join(map(str.__add__, texts, endings))
        return as_bytes((BOM if self.bom else "") + body)


def split_text(text: str) -> tuple[list[str], list[str]]:
    if "\r" not in text:  # the common case: no regex needed
        texts = text.split("\n")
        endings = ["\n"] * len(texts)
        if texts[-1] == "":
            texts.pop()
            endings.pop()
        else:
            endings[-1] = ""
        return texts, endings
    texts = []
    endings = []
    for match in re.finditer(r"([^\r\n]*)(\r\n|\r|\n|$)", text):
        line, ending = match.group(1), match.group(2)
        if not line and not ending:
            if match.start() == len(text):
                break
            continue
        texts.append(line)
        endings.append(ending)
    return texts, endings


NOT_UNICODE = "the patch is not valid Unicode text"


def require_unicode(text: str, where: str | None = None, *, line: int | None = None) -> None:
    """THE refusal of text that is not valid Unicode, asked by every front door of the text it is
    given (patch texts, SEARCH/REPLACE blocks, edit lists, the text editor's arguments): a lone
    surrogate code point (what a JSON string's ``"\\ud800"`` or an argument's bytes that are not
    UTF-8 decode to) is no text a file can hold. Raise ``ParseError`` with the Codex parser's
    message, naming ``where`` (default: the text line that holds it). Anything but a string is
    ArgumentTypeError."""
    if not isinstance(text, str):
        raise ArgumentTypeError.expected(where or "the text", "a string", text)
    if text.isascii():  # CPython flags ASCII text: no scan, and it always encodes
        return
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as exc:
        if where is None:
            line = text.count("\n", 0, exc.start) + 1
            where = f"text line {line}"
        char = ord(text[exc.start])
        hint = (f"It holds the byte 0x{char - 0xDC00:02X}, which is not UTF-8 ({where}): this format "
                "is UTF-8 text (only a unified diff's lines may be any bytes)."
                if 0xDC80 <= char <= 0xDCFF else
                f"It contains a lone surrogate code point ({where}); send UTF-8 text.")
        raise ParseError(f"Invalid patch: {NOT_UNICODE}", hint=hint,
                         line=line, details={"codex_message": NOT_UNICODE}) from None


def as_bytes(text: str) -> bytes:
    """THE way text becomes a file's bytes: UTF-8, and a byte that is not UTF-8, carried as
    Python's surrogate escape (U+DC80-U+DCFF, as a unified diff's lines and the file it updates
    are read: ``decode(any_bytes=True)``), as that byte again. Every other format's text is
    refused a lone surrogate at its front door (``require_unicode``), so only a unified diff
    writes such bytes."""
    return text.encode("utf-8", "surrogateescape")


def require_bytes(text: str, *, line: int | None = None) -> None:
    """THE refusal of a unified diff's text that stands for no bytes: a lone surrogate other than
    a byte's escape (U+DC80-U+DCFF, what a diff's bytes that are not UTF-8 are read as)."""
    if text.isascii():
        return
    try:
        as_bytes(text)
    except UnicodeEncodeError as exc:
        line = text.count("\n", 0, exc.start) + 1
        raise ParseError(f"Invalid patch: {NOT_UNICODE}",
                         hint=f"It contains a lone surrogate code point (text line {line}) that "
                              "stands for no byte; send the diff's bytes.",
                         line=line, details={"codex_message": NOT_UNICODE}) from None


def looks_binary(data: bytes) -> bool:
    """A NUL byte in the first 8 KiB, as git decides."""
    return b"\x00" in data[:8192]


def decode(data: bytes, display_path: str, *, any_bytes: bool = False) -> TextFile:
    """Decode a file's bytes; refuse binary and non-UTF-8 files (never guess, never replace).
    ``any_bytes`` (a unified diff, whose lines are the file's bytes): a byte that is not UTF-8
    is kept as its surrogate escape, matched as the diff's same byte and written back as it was
    (``as_bytes``), whatever the file's encoding; NUL bytes are still refused."""
    if looks_binary(data):
        raise BinaryFileError(
            f"Refusing to edit {display_path}: it looks like a binary file (it contains NUL bytes).",
            hint="patchtx edits UTF-8 text only; change binary files with another tool.",
            path=display_path,
        )
    try:
        text = data.decode("utf-8", "surrogateescape" if any_bytes else "strict")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        if exc.reason == "unexpected end of data":
            reason = f"incomplete utf-8 byte sequence from index {exc.start}"
        else:
            reason = f"invalid utf-8 sequence of {exc.end - exc.start} bytes from index {exc.start}"
        raise EncodingPatchError(
            f"Failed to read file to update {display_path}: {reason}",
            hint=(f"The file is not valid UTF-8 (line {line}); patchtx never rewrites such a file "
                  "with replacement characters. Convert it to UTF-8 first, or edit it another way."),
            path=display_path,
            details={"byte_offset": exc.start, "file_line": line},
        ) from None
    bom = text.startswith(BOM)
    if bom:
        text = text[1:]
    texts, endings = split_text(text)
    return TextFile(texts, endings, bom)
