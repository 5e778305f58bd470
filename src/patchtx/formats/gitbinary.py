"""git's binary patches (``GIT binary patch``, as ``git diff --binary`` writes them): literal and
delta hunks, base85 lines of zlib data, and the blob ids on the ``index`` line that check them
(no I/O).

A file's section holds a forward hunk and, after it, the reverse hunk (``-R`` takes that one);
each is ``literal SIZE`` (the whole image after) or ``delta SIZE`` (git's copy/insert delta
from the image before), followed by base85 lines and an empty line. The image before must be
the blob the ``index`` line names (full ids: a short one cannot check the bytes, and git apply
refuses it too), and the image made must be the blob it names after; both are asked before
anything is written (``binary_after``).
"""

from __future__ import annotations

import base64
import hashlib
import re
import zlib
from typing import TYPE_CHECKING

from ..errors import BinaryFileError, ContextNotFoundError, ParseError
from ..model import BinaryChange

if TYPE_CHECKING:
    from collections.abc import Sequence

_HUNK = re.compile(r"(literal|delta) (\d+)\Z")
_FULL_ID = re.compile(r"[0-9a-f]{40}\Z|[0-9a-f]{64}\Z")


def blob_id(data: bytes, like: str = "") -> str:
    """git's object id of a blob holding ``data`` (SHA-1, or SHA-256 where ``like`` is one)."""
    digest = hashlib.sha256 if len(like) == 64 else hashlib.sha1
    return digest(b"blob %d\0" % len(data) + data).hexdigest()


def is_zero(object_id: str) -> bool:
    """git's id of no file (``0000000``)."""
    return not object_id.strip("0")


def _corrupt(why: str, line: int) -> ParseError:
    return ParseError(f"Invalid unified diff: corrupt binary patch at patch line {line}: {why}.",
                      hint="Send the binary patch as git diff --binary wrote it, every base85 line "
                           "whole.", line=line)


def _line_bytes(line: str, number: int) -> bytes:
    """One base85 line: its length character (A-Z 1-26, a-z 27-52), then five characters per
    four bytes in git's alphabet, which is Python's ``b85`` alphabet."""
    size = ord(line[0]) - 64 if "A" <= line[:1] <= "Z" else ord(line[0]) - 70 if "a" <= line[:1] <= "z" else 0
    if not size or len(line) != 1 + (size + 3) // 4 * 5:
        raise _corrupt(f"'{line[:20]}' is not a base85 line", number)
    try:
        return base64.b85decode(line[1:])[:size]
    except ValueError:
        raise _corrupt(f"'{line[:20]}' holds a character outside base85", number) from None


def read_hunk(lines: Sequence[str], at: int) -> tuple[tuple[str, bytes, int] | None, int]:
    """The hunk starting at ``lines[at]`` (``literal N`` / ``delta N``): (method, inflated data,
    patch line), and the index after its closing empty line; None where no hunk starts."""
    match = _HUNK.match(lines[at]) if at < len(lines) else None
    if match is None:
        return None, at
    number, size = at + 1, int(match.group(2))
    packed = bytearray()
    at += 1
    while at < len(lines) and lines[at] != "":
        packed += _line_bytes(lines[at], at + 1)
        at += 1
    try:
        data = zlib.decompress(bytes(packed))
    except zlib.error as exc:
        raise _corrupt(f"its data does not inflate ({exc})", number) from None
    if len(data) != size:
        raise _corrupt(f"it inflates to {len(data)} bytes, its header says {size}", number)
    return (match.group(1), data, number), at + 1


def change(section_line: int, name: str, ids: tuple[str, str] | None,
           hunks: Sequence[tuple[str, bytes, int]], reverse: bool) -> BinaryChange:
    """A file section's binary change, the reverse hunk's for ``-R`` (its ids swapped)."""
    if ids is None or not all(_FULL_ID.match(object_id) or is_zero(object_id) for object_id in ids):
        raise BinaryFileError(
            f"Refusing the binary patch for {name} (patch line {section_line}): its index line "
            "does not give the full blob ids that check the file before and after.",
            hint="Make the diff with git diff --binary (it writes full ids; --full-index too).",
            path=name, line=section_line)
    if reverse and len(hunks) < 2:
        raise BinaryFileError(
            f"Refusing to reverse the binary patch for {name} (patch line {section_line}): it has "
            "no reverse hunk.", hint="Make the diff with git diff --binary (it writes both).",
            path=name, line=section_line)
    method, data, line = hunks[1 if reverse else 0]
    old, new = ids[::-1] if reverse else ids
    return BinaryChange(old, new, method, data, line)


def _varint(delta: bytes, at: int) -> tuple[int, int]:
    value = shift = 0
    while True:
        if at >= len(delta):
            raise ValueError("the delta ends inside its header")
        byte = delta[at]
        value |= (byte & 0x7F) << shift
        shift, at = shift + 7, at + 1
        if not byte & 0x80:
            return value, at


def apply_delta(base: bytes, delta: bytes) -> bytes:
    """git's delta (``patch-delta.c``): the base's size and the result's, then copy (offset and
    size from the bytes the opcode's low bits say) and insert (the opcode's count of bytes)."""
    size, at = _varint(delta, 0)
    if size != len(base):
        raise ValueError(f"the delta is for {size} bytes, the file has {len(base)}")
    size, at = _varint(delta, at)
    out = bytearray()
    while at < len(delta):
        opcode = delta[at]
        at += 1
        if opcode & 0x80:
            fields = []
            for bits, count in ((opcode & 0x0F, 4), (opcode >> 4 & 0x07, 3)):
                value = 0
                for shift in range(count):
                    if bits >> shift & 1:
                        value |= delta[at] << (8 * shift)
                        at += 1
                fields.append(value)
            offset, length = fields[0], fields[1] or 0x10000
            if offset + length > len(base):
                raise ValueError("a copy reaches past the file's end")
            out += base[offset : offset + length]
        elif opcode:
            out += delta[at : at + opcode]
            at += opcode
        else:
            raise ValueError("an opcode 0")
    if len(out) != size:
        raise ValueError(f"the delta makes {len(out)} bytes, its header says {size}")
    return bytes(out)


def binary_after(before: bytes | None, binary: BinaryChange, name: str,
                 path: str | None = None) -> bytes | None:
    """The file's image after the binary change, ``before`` checked to be the blob it was made
    from; None: the file already is the image after (the patch is in place). ``name``: the file
    as an error names it; ``path``: its workspace path."""
    old_id = blob_id(before, binary.new_id) if before is not None else "0"
    if old_id != binary.old_id and not (before is None and is_zero(binary.old_id)):
        if before is not None and old_id == binary.new_id:
            return None
        raise ContextNotFoundError(
            f"Refusing the binary patch for {name} (patch line {binary.line}): the file is not "
            f"the one the patch was made from (its blob id is {old_id[:12]}, the index line says "
            f"{binary.old_id[:12]}).",
            hint="The file changed since the diff was made; make the diff again from the current "
                 "file.", path=path or name, line=binary.line)
    if binary.method == "literal":
        after = binary.data
    else:
        try:
            after = apply_delta(before or b"", binary.data)
        except (ValueError, IndexError) as exc:
            raise _corrupt(f"its delta does not apply ({exc})", binary.line) from None
    if blob_id(after, binary.new_id) != binary.new_id and not is_zero(binary.new_id):
        raise _corrupt(f"it makes the blob {blob_id(after, binary.new_id)[:12]}, its index line "
                       f"says {binary.new_id[:12]}", binary.line)
    return after


def _hunk_text(data: bytes) -> str:
    """A ``literal`` hunk of ``data``: deflated, in base85 lines of at most 52 bytes each."""
    packed = zlib.compress(data, 9)
    lines = [f"literal {len(data)}"]
    for at in range(0, len(packed), 52):
        piece = packed[at : at + 52]
        length = chr(64 + len(piece)) if len(piece) <= 26 else chr(70 + len(piece))
        lines.append(length + base64.b85encode(piece + b"\0" * (-len(piece) % 4)).decode("ascii"))
    return "\n".join(lines) + "\n\n"


def binary_diff(before: bytes | None, after: bytes | None) -> str:
    """A change's ``index`` line and ``GIT binary patch`` (literal hunks both ways), as
    ``git diff --binary`` writes one: what ``git apply`` and patchtx apply (``render``)."""
    zero = "0" * 40
    old = zero if before is None else blob_id(before)
    new = zero if after is None else blob_id(after)
    return (f"index {old}..{new}\nGIT binary patch\n" + _hunk_text(after or b"")
            + _hunk_text(before or b""))
