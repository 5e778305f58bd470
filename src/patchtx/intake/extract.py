"""Taking the patch out of a model's reply: code fences, prose before and after, a shell heredoc
around it. Used by ``--extract`` and the tools' ``extract`` argument.

A candidate runs from a ``*** Begin Patch`` line to the next ``*** End Patch`` line (markers
recognised with the whitespace around them ignored, as the parser does); without an End Patch it
runs until a closing code fence, the next Begin Patch or the end of the text (the parser then says
what is missing). A candidate indented as a whole (a patch in a list item) loses that indentation.
Identical candidates count once (a reply that repeats its patch); two different ones are an error
that lists them, since guessing which to apply could apply the wrong edit.

A reply with no ``*** Begin Patch`` line that holds a unified diff or SEARCH/REPLACE blocks is
returned whole: those parsers skip the prose, mail headers and code fences around a diff or the
blocks themselves, and the patch's line numbers stay the reply's.
"""

from __future__ import annotations

from .._record import record
from ..errors import NoPatchFoundError, SeveralPatchesError
from ..formats.codex import BEGIN_PATCH, END_PATCH, split_lines
from ..formats.heredoc import command_around, command_around_error
from ..formats.search_replace import looks_search_replace
from ..formats.unified import looks_unified

_FILE_HEADERS = ("*** Add File: ", "*** Update File: ", "*** Delete File: ")


@record
class Candidate:
    first_line: int
    """1-based line of the reply where the candidate starts (its Begin Patch line)."""
    last_line: int
    text: str

    @property
    def files(self) -> list[str]:
        return [line.strip()[len(header):].strip() for line in split_lines(self.text)
                for header in _FILE_HEADERS if line.strip().startswith(header)]


def candidates(text: str) -> list[Candidate]:
    """Every candidate patch in ``text``, in order (duplicates included)."""
    # The parser's lines (at LF, one CR before it dropped). str.splitlines also splits at a form
    # feed, U+2028 and the like: a patch's '+\f' line became an added empty line and an empty
    # context line, and applied as a different edit.
    lines = split_lines(text)
    found: list[Candidate] = []
    index = 0
    while index < len(lines):
        begin = lines[index]
        if begin.strip() != BEGIN_PATCH:
            index += 1
            continue
        indent = begin[: len(begin) - len(begin.lstrip())]
        end = index + 1
        while end < len(lines):
            line = lines[end]
            body = line[len(indent):] if line.startswith(indent) else line.lstrip()
            if line.strip() == END_PATCH:
                end += 1
                break
            if line.strip() == BEGIN_PATCH or body.startswith("```") or body.startswith("~~~"):
                break
            end += 1
        own = [line[len(indent):] if line.startswith(indent) else line.lstrip() for line in lines[index:end]]
        found.append(Candidate(index + 1, end, "\n".join(own) + "\n"))
        index = end
    return found


def extract_patch(text: str) -> str:
    """The one patch in ``text``; raise ``no_patch`` or ``several_patches`` (a ParseError)."""
    found = candidates(text)
    distinct: list[Candidate] = []
    for candidate in found:
        if all(candidate.text != kept.text for kept in distinct):
            distinct.append(candidate)
    if len(distinct) == 1:
        lines = split_lines(text)
        for candidate in found:  # (a command before any copy of it)
            command = command_around(lines, candidate.first_line - 2) if candidate.first_line > 1 else ""
            if command:
                raise command_around_error(command, candidate.first_line - 1)
        return distinct[0].text
    if not distinct:
        if looks_unified(text) or looks_search_replace(text, indented=True):
            return text  # (both parsers skip the prose around the diff or blocks themselves)
        raise NoPatchFoundError(
            "No patch found in the text: it has no '*** Begin Patch' line (nor a unified diff, "
            "nor SEARCH/REPLACE blocks).",
            hint="Send the patch itself, from '*** Begin Patch' to '*** End Patch'.")
    listed = "; ".join(
        f"lines {c.first_line}-{c.last_line} ({', '.join(c.files) or 'no file'})" for c in distinct)
    raise SeveralPatchesError(
        f"The text holds {len(distinct)} different candidate patches: {listed}.",
        hint="Send one patch, or join the operations into one patch.",
        line=distinct[1].first_line,
        details={"candidates": [{"first_line": c.first_line, "last_line": c.last_line, "files": c.files}
                                for c in distinct]})
