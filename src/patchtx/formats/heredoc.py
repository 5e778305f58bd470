"""A patch fed to an applier by a shell command (``cd sub && git apply <<'EOF'``): the one
recogniser, which the unified diff's reader (prose before a diff) and ``intake.extract`` (a reply's
text around a patch) both ask. patchtx runs no command: such a patch is refused, saying why.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from ..errors import ParseError

if TYPE_CHECKING:
    from collections.abc import Sequence

_HEREDOC = re.compile(r"<<(-?)[ \t]*(['\"]?)([A-Za-z_][\w-]*)\2")
_APPLIER = re.compile(r"\b(?:git\b.*?\bapply|patch|apply_patch|applypatch)\b")
_BARE_APPLIERS = frozenset({"git apply", "patch", "apply_patch", "applypatch"})
_CHANGES_FOLDER = re.compile(r"[ \t]*(?:cd|pushd)[ \t]")
_PATCH_STARTS = ("diff --git ", "--- ", "*** Begin Patch")


def command_around(lines: Sequence[str], at: int) -> str:
    """Line ``at`` when it is a shell command whose here-document holds the patch (its end word on
    a line of its own below a file header) and feeds it to an applier with more than the
    applier's name, or after a line that changes folder: ``cd sub && git apply <<'EOF'``,
    ``git -C sub apply``, ``cat <<EOF | (cd sub && patch)``; "" otherwise. patchtx runs no
    command: the patch applied without it would land elsewhere or read otherwise."""
    line = lines[at]
    heredoc = _HEREDOC.search(line)
    if heredoc is None or _APPLIER.search(line) is None:
        return ""
    indented, word = heredoc.group(1), heredoc.group(3)
    bare = (" ".join(line[:heredoc.start()].split()) in _BARE_APPLIERS
            and not line[heredoc.end():].strip())
    if bare and not any(_CHANGES_FOLDER.match(before) for before in lines[:at]):
        return ""
    inside = False
    for below in lines[at + 1:]:
        if (below.lstrip("\t") if indented else below).rstrip("\r") == word:
            return line.strip() if inside else ""
        inside = inside or below.startswith(_PATCH_STARTS)
    return ""


def command_around_error(command: str, line: int) -> ParseError:
    """The refusal of a patch fed to an applier by a shell command (``command_around``)."""
    return ParseError(
        f"Refusing the patch: line {line} is a shell command that feeds it to an applier "
        f"(\"{command[:120]}\"). patchtx runs no command, and the patch applied without it would "
        "lose what the command says (a directory to change to, -p, -R).",
        hint="Send the patch itself, its paths relative to the workspace root (give -p or -R as "
             "options).", line=line)
