"""The placer contract: what every edit format's placement takes and gives (pure).

A format's placer (``formats.registry.Format.placer``) places an update's hunks on the decoded
file; the update unit (``plan.update``) calls it, and never asks which format it serves.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .._record import record

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence

    from ..model import Chunk
    from .matching import LineIndex, Placement
    from .textfile import TextFile


@record
class UpdateRule:
    """How one patch's updates are placed: the same for every file of the patch."""

    format: str = "codex"
    """The patch's format (``Patch.format``): a name in ``formats.registry.FORMATS``."""
    first_match: bool = False
    """Codex's first-occurrence placement instead of refusing an ambiguous hunk."""
    reverse: bool = False
    """A unified diff read backwards (``-R``): its hunks "already applied" are hunks not applied
    forwards, and the text its hunks remove shows their change as well (``applied``)."""
    repair: bool = True
    """Whether the repair step may read malformed hunks as the one edit they mean (off with
    ``strict``)."""


@record
class Placed:
    """A placer's answer on the file's lines."""

    placements: list[Placement]
    ends_with_newline: bool | None = None
    """Whether the new file ends with a line break; None: as the old file does."""
    reinserted: bool = False
    """Some pure insertion's lines already stand where it puts them (a patch sent again?)."""
    notes: tuple[str, ...] = ()
    """What the placement took less literally than the hunks say (a block matched with its
    indentation shifted), each a sentence without the file's name."""


@record
class Placer:
    """How one patch format places a file's hunks."""

    on_lines: Callable[[TextFile, LineIndex, Sequence[Chunk], UpdateRule, str], Placed]
    """Place the hunks on the decoded file (given with its index, and its display name for
    errors); raise ``ContextNotFoundError`` or ``AmbiguousContextError``."""
    on_bytes: bool = False
    """Whether ``exact.update_exactly`` may settle the update on the bytes first (it implements
    the content rule of ``matching``, nothing else)."""
    in_turn: bool = False
    """Whether each hunk must also stand once in the file as the hunks before it leave it (a
    reply's SEARCH/REPLACE blocks, which aider applies one after another: ``block_placement``)."""
    asks_applied: bool = True
    """Whether a miss is asked the already-applied question (not for exact text replacements,
    whose old and new text are no lines to find applied)."""
    unchanged_in_place: Callable[[TextFile, Sequence[Chunk], Sequence[Placement]], bool] | None = None
    """Whether hunks placed to change nothing are in place all the same (a unified diff that
    changes line endings only, sent again); None: never."""
