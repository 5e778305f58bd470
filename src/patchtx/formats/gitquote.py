"""Git's C-style quoting of path names in diffs (``"a/caf\\303\\251.txt"``), both ways."""

from __future__ import annotations

_ESCAPES = {"a": 7, "b": 8, "t": 9, "n": 10, "v": 11, "f": 12, "r": 13, '"': 34, "\\": 92}
_ESCAPED = {value: key for key, value in _ESCAPES.items()}


class QuotingError(ValueError):
    """A quoted name that is not one."""


def unquote(text: str) -> tuple[str, str]:
    """The quoted name at the start of ``text`` and what follows its closing quote."""
    out = bytearray()
    index = 1
    while index < len(text):
        char = text[index]
        if char == '"':
            try:
                return out.decode("utf-8"), text[index + 1 :]
            except UnicodeDecodeError:
                raise QuotingError(f"the quoted name {text[:index + 1]} is not UTF-8") from None
        if char != "\\":
            out += char.encode("utf-8")
            index += 1
            continue
        escaped = text[index + 1 : index + 2]
        octal = text[index + 1 : index + 4]
        if escaped in _ESCAPES:
            out.append(_ESCAPES[escaped])
            index += 2
        elif len(octal) == 3 and octal[0] in "0123" and all(c in "01234567" for c in octal):
            out.append(int(octal, 8))
            index += 4
        else:
            raise QuotingError(f"bad escape in the quoted name {text}")
    raise QuotingError(f"the quoted name {text} has no closing quote")


def quote(name: str) -> str:
    """``name`` as git writes it in a diff: quoted when it holds a quote, a backslash, a control
    character or a non-ASCII character (git's default ``core.quotePath``)."""
    if name.isascii() and name.isprintable() and '"' not in name and "\\" not in name:
        return name
    out = []
    for byte in name.encode("utf-8", "surrogateescape"):  # (a name that is not UTF-8 on disk)
        if byte in _ESCAPED:
            out.append("\\" + _ESCAPED[byte])
        elif byte < 0x20 or byte >= 0x7F:
            out.append(f"\\{byte:03o}")
        else:
            out.append(chr(byte))
    return '"' + "".join(out) + '"'
