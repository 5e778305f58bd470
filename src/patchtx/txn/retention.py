"""The write side of the undo history: the retention hook a commit runs.

The retention hook, :class:`KeepHistory`, runs under the lock before the journal is written:

1. Prune: choose the oldest entries that no longer fit (count and byte limits, counting the new
   entry) and rename each ``<old>.kept-…`` to ``<old>.pruned``.
2. Return the journal's ``history`` member (or None: not kept).
3. Once the commit is durable, delete the pruned journals and their before-images.

Crash reasoning. An entry appears in one rename, the commit point itself: before it, the journal
is an uncommitted one (rolled back and deleted by recovery, never listed); after it, the journal
and the before-images are durable already (the commit's first two barriers, which publish the
journal). A pruned entry loses
its name in one rename in the journal folder, made durable by the barrier that publishes the new
journal, before any of its files is deleted (step 3), so no listed entry ever lacks a before-image.
What an interruption can leave is a ``.pruned`` journal and its before-images, never listed, and
swept by the next commit's recovery; and a commit that fails or crashes before its commit point has
still pruned what it pruned — the history then holds one entry fewer than its limit, never a gap.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

from .._record import record
from ..model import ChangeKind
from ..options import DEFAULT_COMMIT
from .layout import JOURNAL_DIR, JournalListing, kept_journals, pruned_name

if TYPE_CHECKING:
    from collections.abc import Iterable, Iterator
    from typing import Any, Protocol

    from ..model import Plan
    from .dirs import DirectoryHandles
    from .fsops import FileSystemOps
    from .journal import Journal
else:
    Protocol = object


@record
class RetentionContext:
    """What a retention hook is given: the transaction being committed, its journal."""

    fs: FileSystemOps
    """The commit's filesystem layer: every change the hook makes must go through it."""
    dirs: DirectoryHandles
    """Directory descriptors of the workspace (``dirs.open(".patchtx/journal")`` etc.)."""
    journal: Journal
    """The transaction's journal (not yet written when ``prepare`` runs); its before-images are
    ``<txn>.<n>.before`` in the journal folder."""
    plan: Plan
    durable: bool
    listing: JournalListing | None = None
    """The journal folder as listed before this transaction wrote anything (None: not listed
    yet): the commit lists it anyway to look for leftovers, and it can be large."""


class Retention(Protocol):
    """Keeps what a transaction replaces — its before-images — for undo (``history.KeepHistory``).

    A kept transaction's journal *is* its undo-history entry: at the commit point the journal is
    renamed to ``Journal.committed_file_name`` (``<txn>.kept-<seq>-<bytes>``) instead of
    ``<txn>.committed``, and stays, with its before-images. Keeping history thus costs no file,
    link or durability call of its own.

    ``prepare`` runs under the lock once the before-images are linked, before the journal is
    written. It returns the journal's ``history`` member (None: not kept). It may prune older
    entries, and only by renaming a kept journal to ``<txn>.pruned`` in the journal folder: the
    barrier that publishes the journal makes those renames durable. ``finish`` runs once the
    commit is durable (clean-up only: deleting what was pruned). If either raises an Exception,
    the commit still succeeds, without the entry, and reports it in ``CommitReport.retention_error``.
    """

    def prepare(self, context: RetentionContext) -> dict[str, Any] | None: ...

    def finish(self, context: RetentionContext) -> None: ...


class KeepHistory:
    """A commit's retention hook: keep its journal as an undo-history entry, prune old ones.

    ``count`` and ``max_bytes`` bound the history including the new entry; ``count=0`` keeps
    nothing (and prunes what is there). A transaction whose before-images alone exceed
    ``max_bytes`` is not kept. Once the commit returns, ``kept`` is the id of the entry written
    (None if none was) and ``pruned`` the ids of the entries removed.
    """

    def __init__(self, *, count: int = DEFAULT_COMMIT.history_count, max_bytes: int = DEFAULT_COMMIT.history_bytes,
                 undoes: str | None = None, origin: str | None = None):
        if count < 0 or max_bytes < 0:
            raise ValueError("history limits must be non-negative")
        self.count = count
        self.max_bytes = max_bytes
        self.undoes = undoes
        self.origin = origin
        """The surface the transaction came through (``"mcp"``), or None; recorded when not None."""
        self.kept: str | None = None
        self.pruned: list[str] = []
        self._to_delete: list[tuple[str, list[str]]] = []
        """Pruned transactions, with the names of their before-images."""

    def prepare(self, context: RetentionContext) -> dict[str, Any] | None:
        fs, journal, plan = context.fs, context.journal, context.plan
        before_sizes = {t.path: len(t.before) for t in plan.targets if t.before is not None}
        sizes = [before_sizes[e.path] if e.backup is not None else None for e in journal.entries]
        size = sum(s for s in sizes if s is not None)
        keep_new = self.count > 0 and size <= self.max_bytes
        journal_fd = context.dirs.open(JOURNAL_DIR)
        listing = context.listing if context.listing is not None else JournalListing(fs.listdir(journal_fd))
        names = listing.names
        existing = sorted((_Kept(*kept) for kept in listing.kept), key=lambda k: k.sequence, reverse=True)
        pruned = self._to_prune(existing, size if keep_new else None)
        for old in pruned:
            fs.rename(journal_fd, old.name, journal_fd, pruned_name(old.transaction_id))
            self.pruned.append(old.transaction_id)
        if pruned:
            images: dict[str, list[str]] = {old.transaction_id: [] for old in pruned}
            prefixes = tuple(f"{txn}." for txn in images)  # str.startswith over a tuple: one C call
            for name in [n for n in names if n.startswith(prefixes)]:
                if name.endswith(".before"):
                    images[name.partition(".")[0]].append(name)
            self._to_delete = list(images.items())
        if not keep_new:
            return None
        paths = {e.path for e in journal.entries}
        counts = plan.summary_counts()
        history = {
            "sequence": existing[0].sequence + 1 if existing else 1,
            "bytes": size,
            "committed_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
            "summary": ", ".join(f"{k} {counts[k]}" for k in ("A", "M", "D", "R")),
            "counts": counts,
            "undoes": self.undoes,
            "sizes": sizes,
            "moves": [[c.source, c.path] for c in plan.changes
                      if c.kind is ChangeKind.MOVE and c.source in paths and c.path in paths],
        }
        if self.origin is not None:
            history["origin"] = self.origin
        self.kept = journal.transaction_id
        return history

    def finish(self, context: RetentionContext) -> None:
        """Delete what ``prepare`` pruned, its journal last: until then, an interrupted deletion is
        recognisably a pruned entry's, which the next recovery sweeps without reporting it."""
        journal_fd = context.dirs.open(JOURNAL_DIR)
        fs = context.fs
        for txn, images in self._to_delete:
            # (A verify command may have deleted them with the whole journal folder: then there
            # is nothing left to delete, and nothing to report.)
            fs.unlink_many(journal_fd, [name for name in sorted(images) if fs.lstat(journal_fd, name) is not None])
            if fs.lstat(journal_fd, pruned_name(txn)) is not None:
                fs.unlink(journal_fd, pruned_name(txn))
        self._to_delete = []

    def _to_prune(self, existing: list[_Kept], new_size: int | None) -> list[_Kept]:
        """Newest first, keep what fits; once one does not, every older one goes too (no gaps)."""
        kept_count, kept_bytes = (0, 0) if new_size is None else (1, new_size)
        for position, entry in enumerate(existing):
            if kept_count >= self.count or kept_bytes + entry.bytes > self.max_bytes:
                return existing[position:]
            kept_count += 1
            kept_bytes += entry.bytes
        return []


@record
class _Kept:
    """A kept journal as its name describes it (nothing read)."""

    name: str
    sequence: int
    bytes: int

    @property
    def transaction_id(self) -> str:
        return self.name.partition(".")[0]


def _kept(names: Iterable[str]) -> Iterator[_Kept]:
    """The kept journals of a journal folder listing (``JournalListing.kept`` when it is parsed already)."""
    for name, sequence, size in kept_journals(names):
        yield _Kept(name, sequence, size)
