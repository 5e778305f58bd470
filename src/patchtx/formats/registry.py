"""The edit formats, in the order text is detected: each one's ``Format``, its plan-time rules.

Every rule that differs from one format to another is a field of its ``Format``, defined in the
format's own module; the planner, the update unit and the intake ask the fields, never the name.
Adding a format is its module and one line in ``FORMATS`` (or ``register``, for a format defined
elsewhere). A format's module is imported when a patch of it is planned or its text detected, not
before: a one-line Codex edit loads no other format.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .._record import record

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence

    from ..model import Chunk, Patch
    from ..place.placer import Placer


@record
class Format:
    """One edit format's rules, as the stages after parsing ask them."""

    name: str
    """``Patch.format``."""
    placer: Placer
    """Where its hunks go in a file (``plan.update``)."""
    hunks: str
    """What an update's hunks are called in a message ("the sections for a.py")."""
    hunk_at: str
    """A hunk named in a message, ``{line}`` its patch line ("the block on line {line}")."""
    detects: Callable[[str, bool], bool] | None = None
    """Whether a text is in this format: strictly (first, every format in turn), or loosely (then,
    when no format took it strictly). None: never read from text (made by a tool call)."""
    parse: Callable[..., Patch] | None = None
    """Text -> ``Patch``, given ``codex.parse``'s options as keywords; refuses an option that is
    not its own."""
    added_at: str = ""
    """A hunk named where it adds a placeholder, if not as ``hunk_at``."""
    no_change: str | None = None
    """The hint for a hunk that changes nothing (``update.no_op_hunk``); None: its hunks are not
    asked once staged (a unified diff's are asked as it is read)."""
    no_change_said: str = ""
    """What such a hunk is ("its REPLACE lines are its SEARCH lines"); "": said by its lines."""
    replaces_text: bool = False
    """Its hunks are one old and one new text each (the ``-`` and the ``+`` line, line breaks
    inside them), not lines."""
    repairs: bool = False
    """Whether the repair step (``intake.repair_update``) reads its hunks that miss."""
    decorated: bool = False
    """Whether its misses are asked if decorations a model copied explain them
    (``intake.decorations``: Roo Code's header, line numbers of a numbered view)."""
    elisions_refused: bool = False
    """Whether a miss whose old lines leave lines out with '...' is refused as a placeholder."""
    adds_by_empty_search: bool = False
    """Its Add File is a block with an empty SEARCH: refused on a file with content (aider appends
    the REPLACE lines, an older Cline replaces the file), written on an empty one."""
    moves_read_before: bool = False
    """A rename or copy reads its source as it was before the patch, as git apply does ("git
    patches do not depend on the order"): names may be swapped."""
    backslash_in_names: bool = False
    """Its file names are git's: on POSIX a backslash is a character of a name, as git apply reads
    it (the formats a model writes refuse one as ``unsafe_path``)."""
    reads_bytes: bool = False
    """Its lines are a file's bytes, whatever the encoding (a unified diff, as git applies it):
    the file is read with ``decode(any_bytes=True)``; other formats edit UTF-8 text only."""
    missing_file_hint: str = "To create a file use '*** Add File:'."
    """The hint when a file to update does not exist."""

    def hunk_named(self, chunk: Chunk, *, adding: bool = False) -> str:
        """``chunk`` as a message names it (``adding``: where it adds a placeholder)."""
        return (self.added_at if adding and self.added_at else self.hunk_at).format(line=chunk.line)


FORMATS: dict[str, Format | str] = {
    # name: the module and the name of its Format, in the order text is detected.
    "codex": "patchtx.formats.codex:CODEX",
    "search-replace": "patchtx.formats.search_replace:SEARCH_REPLACE",
    "unified": "patchtx.formats.unified_placement:UNIFIED",
    "text": "patchtx.formats.text_placement:TEXT",
}
"""Every format by its name (the first one is the default: text no format takes is read as it,
whose errors say what a patch looks like); a ``"module:NAME"`` entry is loaded when asked."""


def register(format: Format) -> None:
    """Add ``format`` last in the detection order (or put it in place of the one so named)."""
    FORMATS[format.name] = format


def format_named(name: str) -> Format:
    """The format called ``name`` (``Patch.format``); a KeyError for a name not registered."""
    entry = FORMATS[name]
    if isinstance(entry, str):
        module, _, attribute = entry.partition(":")
        entry = FORMATS[name] = getattr(__import__(module, fromlist=(attribute,)), attribute)
    return entry


def detect(text: str) -> Format:
    """The format of ``text``: the first that takes it strictly, else the first that takes it
    loosely, else the first format."""
    for loose in (False, True):
        for name in list(FORMATS):
            format = format_named(name)
            if format.detects is not None and format.detects(text, loose):
                return format
    return format_named(next(iter(FORMATS)))


def formats() -> Sequence[Format]:
    """Every format, in the detection order (each one's module loaded)."""
    return [format_named(name) for name in list(FORMATS)]
