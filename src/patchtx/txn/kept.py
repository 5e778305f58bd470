"""Kept transactions, read back: the undo history on disk, for ``log``, ``show`` and ``undo``.

A kept transaction's journal *is* its history entry. At the commit point the journal is renamed
``<txn>.kept-<seq>-<bytes>`` instead of ``<txn>.committed`` and stays in the journal folder, with
its before-images ``<txn>.<n>.before`` (see ``journal`` for the layout). Its ``history`` member
holds what the entries do not: sequence, time, summary, the transaction it undid, the size of each
before-image, the moves. Keeping history thus costs no file, hard link or durability call beyond
the transaction's own; the name alone gives an entry's order and size, so pruning reads nothing.

An entry is *listed* (``log``, ``undo``) when its journal verifies (checksum) and agrees with its
name, and every before-image it records is there. ``undo`` also checks every before-image against
its recorded SHA-256 before writing anything.

The write side (the retention hook that keeps and prunes entries) is ``txn/retention.py``; this
module is the read side: listing, finding and reading entries back for ``log`` and ``undo``.
"""

from __future__ import annotations

import hashlib
import os
from typing import TYPE_CHECKING

from .._record import record
from ..errors import (
    HistoryDamagedError,
    NothingToUndoError,
    PatchtxError,
    UnknownTransactionError,
    UntrustedStateError,
)
from .dirs import DirectoryHandles
from .failures import filesystem_error
from .fsops import FileSystemOps
from .journal import Journal, int_field, optional_str_field, str_field
from .journal import (
    relpath_field as _relpath,
)
from .layout import JOURNAL_DIR
from .retention import _Kept, _kept
from .statedir import check_state_folder

if TYPE_CHECKING:
    from types import TracebackType
    from typing import Any




# -- errors ------------------------------------------------------------------------------------





# -- values ------------------------------------------------------------------------------------


@record(frozen=False)
class HistoryEntry:
    """One retained transaction, as ``patchtx log`` shows it."""

    transaction_id: str
    sequence: int
    """Position in commit order (the transaction id sorts by second only)."""
    committed_at: str
    """UTC, ISO 8601 (``2025-11-21T23:15:00Z``)."""
    summary: str
    """``A x, M y, D z, R w``."""
    counts: dict[str, int]
    intent: str | None
    undoes: str | None
    """The transaction this one undid, if it was made by ``undo``."""
    bytes: int
    """Bytes of before-images kept."""
    file_count: int
    journal_name: str
    """Its kept journal's name in the journal folder (``<txn>.kept-<seq>-<bytes>``)."""
    origin: str | None = None
    """The surface it was made through when that was recorded: ``"mcp"`` for the MCP server
    (whose undo tool may be limited to these); None for the library and the CLI."""
    paths: tuple[str, ...] = ()
    """The paths the transaction changed (a move: both), in the journal's order."""

    def to_json(self) -> dict[str, Any]:
        return {
            "id": self.transaction_id,
            "time": self.committed_at,
            "summary": self.summary,
            "counts": dict(self.counts),
            "bytes": self.bytes,
            "files": self.file_count,
            "paths": list(self.paths),
            "intent": self.intent,
            "undoes": self.undoes,
            "origin": self.origin,
        }


@record(frozen=False)
class HistoryFile:
    """One path of a retained transaction: what it held before and after."""

    path: str
    before_sha256: str | None
    """None: the transaction added the path."""
    after_sha256: str | None
    """None: the transaction deleted the path."""
    before_mode: int | None
    after_mode: int | None
    """None for a new file given the creation default (0o666 less the umask)."""
    before_image: str | None
    """Name of the before-image in the journal folder (None when there was no original)."""
    size: int | None
    """Size of the before-image."""


@record(frozen=False)
class HistoryRecord:
    """Everything the kept journal holds about one retained transaction."""

    entry: HistoryEntry
    files: tuple[HistoryFile, ...]
    created_dirs: tuple[str, ...]
    """Directories the transaction created, parents first."""
    removed_dirs: tuple[tuple[str, int], ...]
    """(path, mode) of directories the transaction removed (or tried to: kept if not empty)."""
    moves: tuple[tuple[str, str], ...]
    """(source, destination) of the moves the patch spelled."""


# -- reading -----------------------------------------------------------------------------------


class open_workspace:  # lower case: it was (and reads as) a function, ``with open_workspace(root)``
    """Directory handles on ``root`` for reading (history, current files); closed on exit.

    A class rather than a ``contextlib.contextmanager``: this module loads on every commit.
    """

    def __init__(self, root: str, fs: FileSystemOps | None = None) -> None:
        self._root = root
        self._fs = FileSystemOps() if fs is None else fs
        self._root_fd: int | None = None
        self._dirs: DirectoryHandles | None = None

    def __enter__(self) -> tuple[FileSystemOps, DirectoryHandles]:
        try:
            self._root_fd = self._fs.open_root(self._root)
        except OSError as exc:
            raise filesystem_error(exc, self._fs, doing="open the workspace") from exc
        self._dirs = DirectoryHandles(self._fs, self._root_fd, root=self._root)
        try:
            check_state_folder(self._dirs)  # (a history is read from it: the same checks)
        except BaseException:
            self.__exit__(None, None, None)
            raise
        return self._fs, self._dirs

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, traceback: TracebackType | None
    ) -> None:
        try:
            if isinstance(exc, OSError):
                raise filesystem_error(exc, self._fs, doing="read the undo history") from exc
        finally:
            if self._dirs is not None:
                self._dirs.close_all()
            if self._root_fd is not None:
                self._fs.close(self._root_fd)


def list_entries(fs: FileSystemOps, dirs: DirectoryHandles) -> list[HistoryEntry]:
    """Entries of committed transactions with every before-image present, newest first."""
    journal_fd = dirs.lookup(JOURNAL_DIR)
    if journal_fd is None:
        return []
    complete = []
    names = fs.listdir(journal_fd)
    present = set(names)
    for kept in _kept(names):
        try:
            journal = _read_kept(fs, journal_fd, kept, dirs.root)
            entry = _entry(kept, journal)
        except (OSError, KeyError, TypeError, ValueError, PatchtxError):
            continue  # pruned since listed, damaged or disagreeing with its name: never listed
        if present.issuperset(journal.backup_names()):
            complete.append(entry)
    complete.sort(key=lambda e: e.sequence, reverse=True)
    return complete


def recent_originals(root: str, path: str, *, wanted: int = 3, scan: int = 8,
                     ) -> list[tuple[HistoryEntry, bytes]]:
    """What ``path`` (workspace-relative) held before each of the newest kept transactions that
    changed it, newest first: at most ``wanted`` of them, looked for among the ``scan`` newest
    kept journals only (a hunk that misses asks this: its cost stays bounded whatever the history
    holds). Only journals this user's patchtx signed for this workspace (``Journal.from_bytes``
    verifies; the others are skipped, as ``list_entries`` skips them) and before-images that
    match their recorded hash. Reads only; a history that cannot be read gives what was read."""
    found: list[tuple[HistoryEntry, bytes]] = []
    try:
        with open_workspace(os.path.realpath(root)) as (fs, dirs):  # (the path signatures cover)
            journal_fd = dirs.lookup(JOURNAL_DIR)
            if journal_fd is None:
                return found
            names = fs.listdir(journal_fd)
            present = set(names)
            for kept in sorted(_kept(names), key=lambda k: k.sequence, reverse=True)[:scan]:
                try:
                    journal = _read_kept(fs, journal_fd, kept, dirs.root)
                    entry = _entry(kept, journal)
                    item = next((e for e in journal.entries if e.path == path), None)
                    if item is None or item.backup is None or item.backup not in present:
                        continue  # (another file's transaction, or one that created this file)
                    data = fs.read_file(journal_fd, item.backup).data
                except (OSError, KeyError, TypeError, ValueError, PatchtxError):
                    continue  # pruned since listed, damaged, or not this user's: never named
                if hashlib.sha256(data).hexdigest() == item.before_sha256:
                    found.append((entry, data))
                    if len(found) >= wanted:
                        break
    except (OSError, PatchtxError):
        pass  # (a state folder that is not what patchtx makes: no history to name)
    return found


def untrusted_entries(fs: FileSystemOps, dirs: DirectoryHandles) -> list[str]:
    """Names of kept journals in the journal folder that this user's patchtx did not sign (never
    listed, never undone): a repository may commit them."""
    journal_fd = dirs.lookup(JOURNAL_DIR)
    if journal_fd is None:
        return []
    foreign = []
    for kept in _kept(fs.listdir(journal_fd)):
        try:
            _read_kept(fs, journal_fd, kept, dirs.root)
        except UntrustedStateError:
            foreign.append(kept.name)
        except (OSError, PatchtxError):
            continue
    return sorted(foreign)


def matching(entries: list[HistoryEntry], transaction_id: str) -> list[HistoryEntry]:
    """The entries ``transaction_id`` names: the one it is, else those it begins, else those it
    is any part of (a git user copies the hex part, ``72793bab``, not the timestamp before it)."""
    exact = [e for e in entries if e.transaction_id == transaction_id]
    return exact or [e for e in entries if e.transaction_id.startswith(transaction_id)] or \
        [e for e in entries if transaction_id in e.transaction_id]


def find_entry(entries: list[HistoryEntry], transaction_id: str | None,
               untrusted: list[str] | None = None) -> HistoryEntry:
    """The newest entry, or the one whose id is (or begins, or contains) ``transaction_id``; an id that
    only ``untrusted`` (kept journals not signed by this user) has is refused as such."""
    if not entries and not (transaction_id and untrusted):
        raise NothingToUndoError(
            "The undo history is empty: there is no committed transaction to undo.",
            hint="Only transactions committed while the history was enabled (history-count > 0) can be undone.",
        )
    if transaction_id is None:
        return entries[0]
    if not transaction_id.strip():
        # Every id starts with the empty string: an empty id would undo whichever entry happens
        # to be the only one, not the one the caller meant.
        raise UnknownTransactionError(
            "The transaction id is empty.",
            hint="Give a transaction id (or a unique prefix of one) as `patchtx log` lists it; "
                 "leave the id out entirely to undo the newest transaction.",
            details={"transaction": transaction_id},
        )
    matches = matching(entries, transaction_id)
    if len(matches) == 1:
        return matches[0]
    foreign = [name for name in untrusted or () if transaction_id in name]
    if not matches and foreign:
        raise UntrustedStateError(
            f"The undo-history entry {JOURNAL_DIR}/{foreign[0]} was not written by this user's"
            " patchtx (its signature does not match this user's secret), so it cannot be undone.",
            hint=(
                f"It may come from the repository itself. Look at it with `cat {JOURNAL_DIR}/{foreign[0]}`;"
                f" remove {JOURNAL_DIR} to discard it. `patchtx log` lists the entries that can be undone."
            ),
            path=f"{JOURNAL_DIR}/{foreign[0]}",
            details={"transaction": transaction_id},
        )
    known = ", ".join(e.transaction_id for e in entries[:5]) + (", ..." if len(entries) > 5 else "")
    why = "matches several retained transactions" if matches else "is not in the undo history"
    raise UnknownTransactionError(
        f"The transaction id '{transaction_id}' {why} (newest first: {known}).",
        hint="Run `patchtx log` to list the transactions that can be undone.",
        details={"transaction": transaction_id},
    )


def read_record(fs: FileSystemOps, dirs: DirectoryHandles, entry: HistoryEntry) -> HistoryRecord:
    """Everything the kept journal of an entry records, verified again (it may have been pruned,
    or damaged, since it was listed)."""
    try:
        journal_fd = dirs.open(JOURNAL_DIR)
        journal = Journal.from_bytes(fs.read_file(journal_fd, entry.journal_name).data, where=entry.journal_name,
                                     workspace=dirs.root)
    except OSError as exc:
        raise _damaged(entry, f"its journal is unreadable ({os.strerror(exc.errno or 0)})") from None
    except PatchtxError as exc:
        raise _damaged(entry, f"its journal is damaged: {exc.headline}") from None
    try:
        history = journal.history
        if history is None or journal.transaction_id != entry.transaction_id:
            raise ValueError("it describes another transaction, or one not kept")
        sizes = history["sizes"]
        if not isinstance(sizes, list) or len(sizes) != len(journal.entries):
            raise ValueError(f"sizes {sizes!r}")
        files = []
        for e, size in zip(journal.entries, sizes, strict=True):
            if (e.backup is None) != (e.before_sha256 is None) or (e.backup is None) != (size is None):
                raise ValueError(f"{e.path!r}: a before-image, its hash and its size go together")
            files.append(HistoryFile(e.path, e.before_sha256, e.after_sha256, e.before_mode, e.after_mode, e.backup,
                                     None if size is None else int_field(size, minimum=0)))
        return HistoryRecord(
            entry,
            tuple(files),
            journal.created_dirs,
            tuple((d.path, d.mode) for d in journal.removed_dirs),
            tuple((_relpath(src), _relpath(dst)) for src, dst in history["moves"]),
        )
    except (KeyError, TypeError, ValueError) as exc:
        raise _damaged(entry, f"its journal is malformed: {exc}") from None


def read_before_image(fs: FileSystemOps, dirs: DirectoryHandles, entry: HistoryEntry, file: HistoryFile) -> bytes:
    """The before-image of ``file``, verified against its recorded SHA-256 (computed with ``sha256``)."""
    assert file.before_image is not None
    try:
        data = fs.read_file(dirs.open(JOURNAL_DIR), file.before_image).data
    except OSError as exc:
        why = os.strerror(exc.errno or 0)
        raise _damaged(entry, f"the before-image of {file.path} is unreadable ({why})") from None
    if hashlib.sha256(data).hexdigest() != file.before_sha256:
        raise _damaged(entry, f"the before-image of {file.path} does not match its recorded hash")
    return data


def _damaged(entry: HistoryEntry, why: str) -> HistoryDamagedError:
    return HistoryDamagedError(
        f"The undo history of transaction {entry.transaction_id} is damaged: {why}.",
        hint="This transaction cannot be undone; others may still be (see `patchtx log`).",
        details={"transaction": entry.transaction_id},
    )


def _read_kept(fs: FileSystemOps, journal_fd: int, kept: _Kept, workspace: str) -> Journal:
    return Journal.from_bytes(fs.read_file(journal_fd, kept.name).data, where=f"{JOURNAL_DIR}/{kept.name}",
                              workspace=workspace)


def _entry(kept: _Kept, journal: Journal) -> HistoryEntry:
    """The entry a kept journal describes; ValueError if it disagrees with its own name."""
    history = journal.history
    if history is None or journal.transaction_id != kept.transaction_id:
        raise ValueError("not the kept journal of this transaction")
    if (history["sequence"], history["bytes"]) != (kept.sequence, kept.bytes):
        raise ValueError("its name and its contents disagree")
    counts = history["counts"]
    if not isinstance(counts, dict) or set(counts) != {"A", "M", "D", "R"}:
        raise ValueError(f"counts {counts!r}")
    return HistoryEntry(
        transaction_id=journal.transaction_id,
        sequence=kept.sequence,
        committed_at=str_field(history["committed_at"]),
        summary=str_field(history["summary"]),
        counts={k: int_field(v, minimum=0) for k, v in counts.items()},
        intent=journal.intent,
        undoes=optional_str_field(history["undoes"]),
        bytes=kept.bytes,
        file_count=len(journal.entries),
        paths=tuple(entry.path for entry in journal.entries),
        journal_name=kept.name,
        origin=optional_str_field(history.get("origin")),
    )
