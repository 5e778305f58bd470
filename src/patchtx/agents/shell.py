"""Recognising an apply_patch call inside a command an agent asked a host to run.

Models often send edits as shell commands (``bash -lc "apply_patch <<'EOF' ..."``) rather than
tool calls. A host that intercepts them applies the patch itself instead of running a shell.
``parse_invocation`` accepts exactly the forms Codex accepts:

- ``["apply_patch" | "applypatch", PATCH]``;
- a shell running one script: ``bash|zsh|sh -lc|-c SCRIPT``,
  ``pwsh|powershell [-NoProfile] -Command SCRIPT`` (flags in any case) or ``cmd /c SCRIPT``; the
  shell may be a full path (POSIX, or Windows when the cwd is a Windows path) and end in ``.exe``;
- where SCRIPT is one statement: ``apply_patch <<DELIM`` (or ``<<-DELIM``) with its heredoc,
  optionally preceded by ``cd DIR &&`` (DIR a bare word, or single- or double-quoted).

Anything else is NotApplyPatch, so the host runs the command as usual. A bare patch given as the
command, or as a shell's whole script, is an ImplicitInvocation: Codex answers it with an error
telling the model to call apply_patch explicitly.

tree-sitter-bash gives the statement structure. The heredoc body is found by our own scan, by
bash's rule (the first line equal to the delimiter ends it; ``<<-`` strips leading tabs), because
tree-sitter ends a heredoc at an indented delimiter too: a patch that edits a script containing a
heredoc would be cut short. As in Codex, the body is taken raw: ``$var`` and backquotes are not
expanded even under an unquoted delimiter, since the model wrote the patch text it means.
"""

from __future__ import annotations

import ntpath
import os
import posixpath
import re
from functools import cache
from typing import TYPE_CHECKING

from .._record import record
from ..errors import MissingExtraError, ParseError
from ..formats.codex import parse

if TYPE_CHECKING:
    from tree_sitter import Node, Parser

APPLY_PATCH_NAMES = ("apply_patch", "applypatch")
IMPLICIT_INVOCATION_MESSAGE = (
    'patch detected without explicit call to apply_patch. Rerun as ["apply_patch", "<patch>"]'
)
_WINDOWS_PATH = re.compile(r"^(?:[A-Za-z]:[\\/]|\\\\)")
# A bare cd argument is taken literally, so refuse any word bash would expand or split.
_PLAIN_WORD = re.compile(r"^[^\s$`\\'\"*?\[\]{}~;&|<>()#!]+$")


@record
class ApplyPatchInvocation:
    """Apply ``patch`` with its paths relative to ``workdir`` (the cwd, or the cwd joined with the
    script's ``cd`` argument)."""

    patch: str
    workdir: str


@record
class ImplicitInvocation:
    """A patch sent as the command itself; answer the model with ``message``."""

    message: str = IMPLICIT_INVOCATION_MESSAGE


@record
class NotApplyPatch:
    """Not an apply_patch call: run the command as usual."""


Invocation = ApplyPatchInvocation | ImplicitInvocation | NotApplyPatch


def parse_invocation(argv: list[str], cwd: str) -> Invocation:
    """Classify the command ``argv`` an agent asked to run in directory ``cwd``."""
    if len(argv) == 1 and _is_patch(argv[0]):
        return ImplicitInvocation()
    if len(argv) == 2 and argv[0] in APPLY_PATCH_NAMES:
        return ApplyPatchInvocation(argv[1], cwd)
    script = _shell_script(argv, cwd)
    if script is None:
        return NotApplyPatch()
    if _is_patch(script):
        return ImplicitInvocation()
    found = extract_heredoc_call(script)
    if found is None:
        return NotApplyPatch()
    patch, cd_dir = found
    return ApplyPatchInvocation(patch, _join(cwd, cd_dir) if cd_dir is not None else cwd)


def _is_patch(text: str) -> bool:
    try:
        parse(text)
    except ParseError:
        return False
    return True


def _is_windows_path(path: str) -> bool:
    return bool(_WINDOWS_PATH.match(path))


def _join(cwd: str, directory: str) -> str:
    if _is_windows_path(cwd):
        return ntpath.normpath(ntpath.join(cwd, directory))
    return posixpath.normpath(posixpath.join(cwd, directory))


def _shell_kind(program: str, cwd: str) -> str:
    """The shell's name: last path segment, extension dropped, lower-cased.

    The cwd tells which path convention the command was written for (Codex does the same), so a
    ``C:\\...\\pwsh.exe`` is recognised when the agent works in a Windows directory.
    """
    name = ntpath.basename(program) if _is_windows_path(cwd) else posixpath.basename(program)
    stem, _ = os.path.splitext(name)
    return stem.lower()


def _shell_script(argv: list[str], cwd: str) -> str | None:
    """The script of a recognised ``shell flag script`` command, else None."""
    if len(argv) not in (3, 4):
        return None
    kind = _shell_kind(argv[0], cwd)
    flags = [flag.lower() for flag in argv[1:-1]]
    if kind in ("bash", "zsh", "sh"):
        accepted = argv[1:-1] in (["-lc"], ["-c"])
    elif kind in ("pwsh", "powershell"):
        accepted = flags in (["-command"], ["-noprofile", "-command"])
    elif kind == "cmd":
        accepted = flags == ["/c"]
    else:
        accepted = False
    return argv[-1] if accepted else None


# -- the script: one statement, found by tree-sitter; the heredoc, found by us -------------------

@record
class _Heredoc:
    delimiter: str
    strip_tabs: bool
    body_start: int
    """Byte offset of the first body line (just after the line holding the operator)."""


def extract_heredoc_call(script: str) -> tuple[str, str | None] | None:
    """``(patch, cd_dir)`` if ``script`` is exactly ``[cd DIR &&] apply_patch <<DELIM ...``, else
    None. ``cd_dir`` is None when there is no ``cd``. The patch has its trailing newlines removed."""
    data = script.encode("utf-8", "surrogateescape")
    heredoc = _locate_heredoc(data)
    if heredoc is None:
        return None
    body_lines: list[bytes] = []
    position = heredoc.body_start
    terminator = heredoc.delimiter.encode("utf-8", "surrogateescape")
    while position < len(data):
        end = data.find(b"\n", position)
        line_end = len(data) if end < 0 else end + 1
        line = data[position:end if end >= 0 else len(data)]
        if heredoc.strip_tabs:
            line = line.lstrip(b"\t")
        if line == terminator:
            # Check the statement again with the body left out, so that nothing in the patch can
            # change how the script's structure is read.
            accepted, cd_dir = _single_call_statement(data[:heredoc.body_start] + data[position:])
            if not accepted:
                return None
            body = b"\n".join(body_lines).decode("utf-8", "surrogateescape").rstrip("\n")
            return body, cd_dir
        body_lines.append(line)
        position = line_end
    return None  # No delimiter line: bash would read to the end; Codex finds no match, nor do we.


@cache
def _parser() -> Parser:
    try:
        import tree_sitter  # (optional extra)
        import tree_sitter_bash  # (optional extra)
    except ImportError as exc:
        raise MissingExtraError("Recognising apply_patch in shell commands", "shell",
                                exc.name or "tree_sitter") from None

    return tree_sitter.Parser(tree_sitter.Language(tree_sitter_bash.language()))


def _locate_heredoc(data: bytes) -> _Heredoc | None:
    """The first heredoc operator of the script: its delimiter and where its body starts."""
    tree = _parser().parse(data)
    redirect = _first(tree.root_node, "heredoc_redirect")
    if redirect is None:
        return None
    operator = redirect.child(0)
    start = next((c for c in redirect.children if c.type == "heredoc_start"), None)
    if operator is None or operator.type not in ("<<", "<<-") or start is None:
        return None
    delimiter = _dequote(_text(start))
    newline = data.find(b"\n", start.end_byte)
    if delimiter is None or not delimiter or newline < 0:
        return None
    return _Heredoc(delimiter, operator.type == "<<-", newline + 1)


def _first(node: Node, node_type: str) -> Node | None:
    if node.type == node_type:
        return node
    for child in node.children:
        found = _first(child, node_type)
        if found is not None:
            return found
    return None


def _text(node: Node) -> str:
    return (node.text or b"").decode("utf-8", "surrogateescape")


def _dequote(word: str) -> str | None:
    """A heredoc delimiter after bash's quote removal (``'EOF'``, ``"EOF"``, ``\\EOF`` → EOF);
    None for anything else (expansions, unbalanced quotes), which we do not interpret."""
    if re.fullmatch(r"[A-Za-z0-9_.\-]+", word):
        return word
    match = re.fullmatch(r"'([^']+)'|\"([A-Za-z0-9_.\-]+)\"|\\([A-Za-z0-9_.\-]+)", word)
    if match is None:
        return None
    return next(group for group in match.groups() if group is not None)


def _single_call_statement(script: bytes) -> tuple[bool, str | None]:
    """For a script whose heredoc body was removed: whether it is one accepted statement, and
    the ``cd`` directory if it has one."""
    rejected = (False, None)
    root = _parser().parse(script).root_node
    statements = root.named_children
    if root.has_error or len(statements) != 1 or statements[0].type != "redirected_statement":
        return rejected
    statement = statements[0]
    body = statement.child_by_field_name("body")
    redirects = [c for c in statement.named_children if c != body]
    if body is None or len(redirects) != 1 or not _plain_heredoc(redirects[0]):
        return rejected
    if body.type == "command":
        return (True, None) if _is_apply_patch_command(body) else rejected
    if body.type != "list" or [c.type for c in body.children] != ["command", "&&", "command"]:
        return rejected
    cd_dir = _cd_directory(body.children[0])
    if cd_dir is None or not _is_apply_patch_command(body.children[2]):
        return rejected
    return True, cd_dir


def _plain_heredoc(redirect: Node) -> bool:
    """A heredoc redirect with nothing else attached (no ``> file`` on the operator line)."""
    kinds = [c.type for c in redirect.children]
    return redirect.type == "heredoc_redirect" and kinds[-3:] == [
        "heredoc_start", "heredoc_body", "heredoc_end"] and len(kinds) == 4


def _command_words(command: Node) -> tuple[str, list[Node]] | None:
    """The command's name (a plain word) and its argument nodes; None if anything else is in it
    (an assignment like ``FOO=1``, a redirect, an expansion as the name)."""
    children = command.named_children
    if not children or children[0].type != "command_name":
        return None
    name_node = children[0]
    if len(name_node.named_children) != 1 or name_node.named_children[0].type != "word":
        return None
    return _text(name_node), children[1:]


def _is_apply_patch_command(command: Node) -> bool:
    words = _command_words(command)
    return words is not None and words[0] in APPLY_PATCH_NAMES and not words[1]


def _cd_directory(command: Node) -> str | None:
    """The literal directory of ``cd DIR`` (bare word, 'single' or "double" quoted), else None."""
    words = _command_words(command)
    if words is None or words[0] != "cd" or len(words[1]) != 1:
        return None
    argument = words[1][0]
    text = _text(argument)
    if argument.type == "word" and _PLAIN_WORD.match(text):
        return text
    if argument.type == "raw_string" and len(text) > 2:
        return text[1:-1]
    if argument.type == "string":
        parts = argument.named_children
        if len(parts) == 1 and parts[0].type == "string_content":
            content = _text(parts[0])
            # Inside double quotes bash still expands $, ` and \; only plain text is literal.
            if not re.search(r"[$`\\]", content):
                return content
    return None
