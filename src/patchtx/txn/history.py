"""Undo history: committed transactions keep their before-images, within a count and a byte limit.

Layout (next to the journal folder, so hard links between the two always work)::

    .patchtx/history/
      <txn>/                    one retained transaction
        <n>.before              the original of journal entry n: a hard link of the journal's
                                before-image (same inode, no copy)
        files.json              every path with before/after SHA-256 and modes, the before-image
                                names and sizes, directories created and removed, moves
        entry.json              id, sequence, time, summary, intent, bytes kept, SHA-256 of
                                files.json: written LAST — the entry exists once this file does
      <txn>.pruned/             an entry being deleted: renamed first, so it is never listed again

An entry is *listed* (``log``, ``undo``) when its ``entry.json`` verifies (checksum), its folder
holds every before-image it counts, and its transaction is committed — no ``<txn>.journal`` in the
journal folder. ``undo`` also checks ``files.json`` against the hash in ``entry.json``, and every
before-image against its recorded SHA-256, before writing anything.

The entry is written as part of its transaction, by :class:`KeepHistory` (the commit's retention
hook), after the new files are in place and before the commit point:

1. Prune: choose the oldest entries that no longer fit (count and byte limits, counting the new
   entry) and rename each ``<old>`` to ``<old>.pruned``.
2. ``mkdir <txn>``; link each before-image from the journal folder; write ``files.json``, then
   ``entry.json``.
3. The commit's changed-directories barrier (step 6f) also makes ``files.json``, ``entry.json``,
   ``<txn>/`` and ``history/`` durable; then comes the commit mark.
4. Once the commit is durable, delete the ``.pruned`` folders and leftovers of interrupted runs.

Crash reasoning. The entry is hidden until the journal is marked committed, and durable before the
mark can be: so after a crash or a power cut, a committed transaction has its whole entry, and an
uncommitted one is rolled back — recovery (or the commit's own roll back) deletes its
``entry.json`` first, durably, before the journal file goes. A pruned entry loses its name in one
rename, made durable by the same barrier, before any of its files is deleted (step 4), so no listed
entry ever lacks a before-image. What an interruption can leave is garbage that is never listed
(``.pruned`` folders, folders without ``entry.json``), deleted by the next commit; and a commit that
fails or crashes before its commit point has still pruned what it pruned — the history then holds
one entry fewer than its limit, never a gap.
"""

from __future__ import annotations

import errno
import os
import stat
import time

from .._sha import sha256
from ..errors import PatchtxError
from ..model import ChangeKind
from .dirs import DirectoryHandles
from .failures import filesystem_error
from .fsops import FileSystemOps
from .journal import (
    HISTORY_DIR,
    HISTORY_ENTRY,
    JOURNAL_DIR,
    STATE_DIR,
    canonical_json,
    group_journal_folder,
    int_field,
    is_before_image_name,
    is_transaction_id,
    json_checksum,
    optional_int_field,
    optional_str_field,
    parse_json,
    str_field,
)
from .journal import (
    relpath_field as _relpath,
)

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterator
    from types import TracebackType
    from typing import Any

    from .transaction import RetentionContext

_HISTORY_NAME = HISTORY_DIR.rpartition("/")[2]
ENTRY_FILE = HISTORY_ENTRY
FILES_FILE = "files.json"
PRUNED_SUFFIX = ".pruned"

DEFAULT_COUNT = 20
DEFAULT_BYTES = 64 * 1024 * 1024

ENTRY_FORMAT = "patchtx-history-entry"
FILES_FORMAT = "patchtx-history-files"
VERSION = 1



def _is_own_name(name: str) -> bool:
    """An entry folder, or one being pruned: ``<txn>`` or ``<txn>.pruned``."""
    return is_transaction_id(name.removesuffix(PRUNED_SUFFIX))


# -- errors ------------------------------------------------------------------------------------


class NothingToUndoError(PatchtxError):
    kind = "nothing_to_undo"


class UnknownTransactionError(PatchtxError):
    kind = "unknown_transaction"


class HistoryDamagedError(PatchtxError):
    kind = "history_damaged"


# -- values ------------------------------------------------------------------------------------
# Plain slotted classes rather than dataclasses: this module loads on every commit, and building a
# dataclass costs about as much as a small commit's whole verification.


class _Value:
    __slots__: tuple[str, ...] = ()

    def __repr__(self) -> str:
        fields = ", ".join(f"{name}={getattr(self, name)!r}" for name in self.__slots__)
        return f"{type(self).__name__}({fields})"

    def __eq__(self, other: object) -> bool:
        if type(other) is not type(self):
            return NotImplemented
        return all(getattr(self, n) == getattr(other, n) for n in self.__slots__)

    __hash__ = None  # type: ignore[assignment]


class HistoryEntry(_Value):
    """One retained transaction, as ``patchtx log`` shows it."""

    __slots__ = (
        "transaction_id",
        "sequence",
        "committed_at",
        "summary",
        "counts",
        "intent",
        "undoes",
        "bytes",
        "file_count",
        "before_images",
        "files_sha256",
    )

    def __init__(
        self,
        transaction_id: str,
        sequence: int,
        committed_at: str,
        summary: str,
        counts: dict[str, int],
        intent: str | None,
        undoes: str | None,
        bytes: int,
        file_count: int,
        before_images: int,
        files_sha256: str,
    ) -> None:
        self.transaction_id = transaction_id
        self.sequence = sequence
        """Position in commit order (the transaction id sorts by second only)."""
        self.committed_at = committed_at
        """UTC, ISO 8601 (``2025-11-21T23:15:00Z``)."""
        self.summary = summary
        """``A x, M y, D z, R w``."""
        self.counts = counts
        self.intent = intent
        self.undoes = undoes
        """The transaction this one undid, if it was made by ``undo``."""
        self.bytes = bytes
        """Bytes of before-images kept."""
        self.file_count = file_count
        self.before_images = before_images
        self.files_sha256 = files_sha256

    def to_json(self) -> dict[str, Any]:
        return {
            "id": self.transaction_id,
            "time": self.committed_at,
            "summary": self.summary,
            "counts": dict(self.counts),
            "bytes": self.bytes,
            "files": self.file_count,
            "intent": self.intent,
            "undoes": self.undoes,
        }


class HistoryFile(_Value):
    """One path of a retained transaction: what it held before and after."""

    __slots__ = ("path", "before_sha256", "after_sha256", "before_mode", "after_mode", "before_image", "size")

    def __init__(
        self,
        path: str,
        before_sha256: str | None,
        after_sha256: str | None,
        before_mode: int | None,
        after_mode: int | None,
        before_image: str | None,
        size: int | None,
    ) -> None:
        self.path = path
        self.before_sha256 = before_sha256
        """None: the transaction added the path."""
        self.after_sha256 = after_sha256
        """None: the transaction deleted the path."""
        self.before_mode = before_mode
        self.after_mode = after_mode
        """None for a new file given the creation default (0o666 less the umask)."""
        self.before_image = before_image
        """Name of the before-image in the entry's folder (None when there was no original)."""
        self.size = size
        """Size of the before-image."""

    def to_json(self) -> dict[str, Any]:
        return {name: getattr(self, name) for name in self.__slots__}


class HistoryRecord(_Value):
    """Everything ``files.json`` holds about one retained transaction."""

    __slots__ = ("entry", "files", "created_dirs", "removed_dirs", "moves")

    def __init__(
        self,
        entry: HistoryEntry,
        files: tuple[HistoryFile, ...],
        created_dirs: tuple[str, ...],
        removed_dirs: tuple[tuple[str, int], ...],
        moves: tuple[tuple[str, str], ...],
    ) -> None:
        self.entry = entry
        self.files = files
        self.created_dirs = created_dirs
        """Directories the transaction created, parents first."""
        self.removed_dirs = removed_dirs
        """(path, mode) of directories the transaction removed (or tried to: kept if not empty)."""
        self.moves = moves
        """(source, destination) of the moves the patch spelled."""


# -- writing: the retention hook ---------------------------------------------------------------


class KeepHistory:
    """A commit's retention hook: keep its before-images as an undo-history entry, prune old ones.

    ``count`` and ``max_bytes`` bound the history including the new entry; ``count=0`` keeps
    nothing (and prunes what is there). A transaction whose before-images alone exceed
    ``max_bytes`` is not kept. Once the commit returns, ``kept`` is the id of the entry written
    (None if none was) and ``pruned`` the ids of the entries removed.
    """

    def __init__(self, *, count: int = DEFAULT_COUNT, max_bytes: int = DEFAULT_BYTES, undoes: str | None = None):
        if count < 0 or max_bytes < 0:
            raise ValueError("history limits must be non-negative")
        self.count = count
        self.max_bytes = max_bytes
        self.undoes = undoes
        self.kept: str | None = None
        self.pruned: list[str] = []
        self._entries_left: set[str] | None = None
        """Names of the valid entries once ``prepare`` has pruned (None: history/ untouched)."""

    def prepare(self, context: RetentionContext) -> list[int]:
        fs, journal, plan = context.fs, context.journal, context.plan
        before_sizes = {t.path: len(t.before) for t in plan.targets if t.before is not None}
        size = sum(before_sizes.get(e.path, 0) for e in journal.entries if e.backup is not None)
        keep_new = self.count > 0 and size <= self.max_bytes
        state_fd = context.dirs.open(STATE_DIR)
        to_sync: list[int] = []
        try:
            if fs.lstat(state_fd, _HISTORY_NAME) is None:
                if not keep_new:
                    return []
                fs.mkdir(state_fd, _HISTORY_NAME, 0o777)
                to_sync.append(fs.open_dir(context.dirs.root_fd, STATE_DIR))  # its new entry
            history_fd = fs.open_dir(state_fd, _HISTORY_NAME)
            to_sync.append(history_fd)
            names = fs.listdir(history_fd)
            existing = sorted(_valid_entries(fs, history_fd, names), key=lambda e: e.sequence, reverse=True)
            pruned = self._to_prune(existing, size if keep_new else None)
            for entry in pruned:
                fs.rename(history_fd, entry.transaction_id, history_fd, entry.transaction_id + PRUNED_SUFFIX)
                self.pruned.append(entry.transaction_id)
            left = {e.transaction_id for e in existing[: len(existing) - len(pruned)]}
            if keep_new:
                sequence = existing[0].sequence + 1 if existing else 1
                self._write_entry(context, history_fd, sequence, size, before_sizes, to_sync)
                self.kept = journal.transaction_id
                left.add(journal.transaction_id)
            elif not pruned and not {n for n in names if _is_own_name(n)} - left:
                for fd in to_sync:
                    fs.close(fd)
                return []  # nothing changed in history/, nothing to sweep
            # finish() deletes the rest, once this barrier has made every rename into .pruned
            # durable (this commit's, or one an interrupted commit made and never synced).
            self._entries_left = left
        except BaseException:
            for fd in to_sync:
                fs.close(fd)
            raise
        return to_sync

    def finish(self, context: RetentionContext) -> None:
        """Delete pruned entries and leftovers of interrupted runs (never listed, so any order)."""
        fs = context.fs
        if self._entries_left is None:
            return
        history_fd = context.dirs.open(HISTORY_DIR)
        for name in sorted(set(fs.listdir(history_fd)) - self._entries_left):
            if _is_own_name(name):
                _delete_entry_folder(fs, history_fd, name)

    def _to_prune(self, existing: list[HistoryEntry], new_size: int | None) -> list[HistoryEntry]:
        """Newest first, keep what fits; once one does not, every older one goes too (no gaps)."""
        kept_count, kept_bytes = (0, 0) if new_size is None else (1, new_size)
        for position, entry in enumerate(existing):
            if kept_count >= self.count or kept_bytes + entry.bytes > self.max_bytes:
                return existing[position:]
            kept_count += 1
            kept_bytes += entry.bytes
        return []

    def _write_entry(
        self,
        context: RetentionContext,
        history_fd: int,
        sequence: int,
        size: int,
        before_sizes: dict[str, int],
        to_sync: list[int],
    ) -> None:
        """The entry's folder: before-images, files.json, and entry.json last."""
        fs, journal, plan = context.fs, context.journal, context.plan
        txn = journal.transaction_id
        fs.mkdir(history_fd, txn, 0o777)
        entry_fd = fs.open_dir(history_fd, txn)
        to_sync.append(entry_fd)
        journal_fd = context.dirs.open(JOURNAL_DIR)
        files = []
        for index, e in enumerate(journal.entries):
            image = None
            if e.backup is not None:
                image = f"{index}.before"
                fs.link(journal_fd, e.backup, entry_fd, image)
            size_kept = before_sizes.get(e.path) if image is not None else None
            files.append(HistoryFile(e.path, e.before_sha256, e.after_sha256, e.before_mode, e.after_mode, image,
                                     size_kept))
        paths = {e.path for e in journal.entries}
        moves = [(c.source, c.path) for c in plan.changes
                 if c.kind is ChangeKind.MOVE and c.source in paths and c.path in paths]
        files_data = _sealed({
            "format": FILES_FORMAT,
            "version": VERSION,
            "transaction": txn,
            "files": [f.to_json() for f in files],
            "created_dirs": list(journal.created_dirs),
            "removed_dirs": [{"path": d.path, "mode": d.mode} for d in journal.removed_dirs],
            "moves": [list(m) for m in moves],
        })
        to_sync.append(_create_file(fs, entry_fd, FILES_FILE, files_data))
        counts = plan.summary_counts()
        entry = HistoryEntry(
            transaction_id=txn,
            sequence=sequence,
            committed_at=time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
            summary=", ".join(f"{k} {counts[k]}" for k in ("A", "M", "D", "R")),
            counts=counts,
            intent=plan.intent,
            undoes=self.undoes,
            bytes=size,
            file_count=len(journal.entries),
            before_images=sum(1 for f in files if f.before_image is not None),
            files_sha256=sha256(files_data).hexdigest(),
        )
        to_sync.append(_create_file(fs, entry_fd, ENTRY_FILE, _sealed(_entry_body(entry))))


def _create_file(fs: FileSystemOps, dir_fd: int, name: str, data: bytes) -> int:
    """A new file holding ``data``; its descriptor stays open for the barrier."""
    fd = fs.create(dir_fd, name, 0o600)
    try:
        fs.write(fd, data)
    except BaseException:
        fs.close(fd)
        raise
    return fd


def _delete_entry_folder(fs: FileSystemOps, history_fd: int, name: str) -> None:
    """Delete an entry folder we own (pruned, unpublished or damaged): its files, then itself."""
    st = fs.lstat(history_fd, name)
    if st is None or not stat.S_ISDIR(st.st_mode):
        return
    fd = fs.open_dir(history_fd, name)
    try:
        files = [n for n in fs.listdir(fd) if (s := fs.lstat(fd, n)) is not None and not stat.S_ISDIR(s.st_mode)]
        if len(files) == 1:
            fs.unlink(fd, files[0])
        else:
            fs.unlink_many(fd, files)
    finally:
        fs.close(fd)
    try:
        fs.rmdir(history_fd, name)
    except OSError as exc:
        if exc.errno not in (errno.ENOTEMPTY, errno.EEXIST):
            raise
        # A folder someone put in it is not ours to delete: leave the entry's folder too.


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
        self._dirs = DirectoryHandles(self._fs, self._root_fd)
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
    history_fd = dirs.lookup(HISTORY_DIR)
    if history_fd is None:
        return []
    journal_fd = dirs.lookup(JOURNAL_DIR)
    # A transaction still journaled as uncommitted (being committed now, or interrupted and not
    # yet rolled back) has its entry written already: it must not be listed.
    uncommitted = set()
    if journal_fd is not None:
        uncommitted = {g.transaction_id for g in group_journal_folder(fs.listdir(journal_fd)) if not g.is_committed}
    complete = []
    for entry in _valid_entries(fs, history_fd):
        if entry.transaction_id in uncommitted:
            continue
        try:
            entry_fd = fs.open_dir(history_fd, entry.transaction_id)
        except OSError:
            continue  # pruned or swept since it was listed
        try:
            names = fs.listdir(entry_fd)
        finally:
            fs.close(entry_fd)
        images = sum(1 for name in names if is_before_image_name(name))
        if images == entry.before_images and FILES_FILE in names:
            complete.append(entry)
    complete.sort(key=lambda e: e.sequence, reverse=True)
    return complete


def find_entry(entries: list[HistoryEntry], transaction_id: str | None) -> HistoryEntry:
    """The newest entry, or the one whose id is (or starts with) ``transaction_id``."""
    if not entries:
        raise NothingToUndoError(
            "The undo history is empty: there is no committed transaction to undo.",
            hint="Only transactions committed while the history was enabled (history-count > 0) can be undone.",
        )
    if transaction_id is None:
        return entries[0]
    matches = [e for e in entries if e.transaction_id.startswith(transaction_id)]
    if len(matches) == 1:
        return matches[0]
    known = ", ".join(e.transaction_id for e in entries[:5]) + (", ..." if len(entries) > 5 else "")
    why = "matches several retained transactions" if matches else "is not in the undo history"
    raise UnknownTransactionError(
        f"The transaction id '{transaction_id}' {why} (newest first: {known}).",
        hint="Run `patchtx log` to list the transactions that can be undone.",
        details={"transaction": transaction_id},
    )


def read_record(fs: FileSystemOps, dirs: DirectoryHandles, entry: HistoryEntry) -> HistoryRecord:
    """``files.json`` of an entry, checked against the hash its ``entry.json`` holds."""
    folder = f"{HISTORY_DIR}/{entry.transaction_id}"
    try:
        data = fs.read_file(dirs.open(folder), FILES_FILE).data
    except OSError as exc:
        raise _damaged(entry, f"{FILES_FILE} is unreadable ({os.strerror(exc.errno or 0)})") from None
    if sha256(data).hexdigest() != entry.files_sha256:
        raise _damaged(entry, f"{FILES_FILE} does not match its recorded hash")
    try:
        body = _unseal(data, FILES_FORMAT)
        if body["transaction"] != entry.transaction_id:
            raise ValueError("it describes another transaction")
        return HistoryRecord(
            entry,
            tuple(_file(raw) for raw in body["files"]),
            tuple(_relpath(p) for p in body["created_dirs"]),
            tuple((_relpath(d["path"]), int_field(d["mode"], minimum=0)) for d in body["removed_dirs"]),
            tuple((_relpath(src), _relpath(dst)) for src, dst in body["moves"]),
        )
    except (KeyError, TypeError, ValueError) as exc:
        raise _damaged(entry, f"{FILES_FILE} is malformed: {exc}") from None


def read_before_image(fs: FileSystemOps, dirs: DirectoryHandles, entry: HistoryEntry, file: HistoryFile) -> bytes:
    """The before-image of ``file``, verified against its recorded SHA-256."""
    assert file.before_image is not None
    try:
        data = fs.read_file(dirs.open(f"{HISTORY_DIR}/{entry.transaction_id}"), file.before_image).data
    except OSError as exc:
        why = os.strerror(exc.errno or 0)
        raise _damaged(entry, f"the before-image of {file.path} is unreadable ({why})") from None
    if sha256(data).hexdigest() != file.before_sha256:
        raise _damaged(entry, f"the before-image of {file.path} does not match its recorded hash")
    return data


def _damaged(entry: HistoryEntry, why: str) -> HistoryDamagedError:
    return HistoryDamagedError(
        f"The undo history of transaction {entry.transaction_id} is damaged: {why}.",
        hint="This transaction cannot be undone; others may still be (see `patchtx log`).",
        details={"transaction": entry.transaction_id},
    )


def _valid_entries(fs: FileSystemOps, history_fd: int, names: list[str] | None = None) -> Iterator[HistoryEntry]:
    """Entries whose entry.json verifies (committed or not: see list_entries)."""
    for name in fs.listdir(history_fd) if names is None else names:
        if not is_transaction_id(name):
            continue
        try:
            entry_fd = fs.open_dir(history_fd, name)
        except OSError:
            continue
        try:
            data = fs.read_file(entry_fd, ENTRY_FILE).data
        except OSError:
            continue  # not published (yet), or not a file
        finally:
            fs.close(entry_fd)
        try:
            entry = _entry(_unseal(data, ENTRY_FORMAT))
        except (KeyError, TypeError, ValueError):
            continue  # torn or damaged: never listed, deleted by the next prune
        if entry.transaction_id == name:
            yield entry


# -- the format --------------------------------------------------------------------------------


def _sealed(body: dict[str, Any]) -> bytes:
    """Canonical JSON with a ``checksum`` member, as the journal (a torn file never verifies)."""
    text = canonical_json(body)
    checksum = sha256(text.encode("ascii")).hexdigest()
    return f'{text[:-1]},"checksum":"{checksum}"}}\n'.encode("ascii")


def _unseal(data: bytes, expected_format: str) -> dict[str, Any]:
    body = parse_json(data.decode("ascii"))
    if not isinstance(body, dict):
        raise ValueError("not a JSON object")
    if body.get("format") != expected_format or body.get("version") != VERSION:
        raise ValueError(f"unknown format {body.get('format')!r} version {body.get('version')!r}")
    if body.pop("checksum", None) != json_checksum(body):
        raise ValueError("checksum mismatch")
    return body


def _entry_body(entry: HistoryEntry) -> dict[str, Any]:
    return {
        "format": ENTRY_FORMAT,
        "version": VERSION,
        "transaction": entry.transaction_id,
        "sequence": entry.sequence,
        "committed_at": entry.committed_at,
        "summary": entry.summary,
        "counts": dict(entry.counts),
        "intent": entry.intent,
        "undoes": entry.undoes,
        "bytes": entry.bytes,
        "file_count": entry.file_count,
        "before_images": entry.before_images,
        "files_sha256": entry.files_sha256,
    }


def _entry(body: dict[str, Any]) -> HistoryEntry:
    counts = body["counts"]
    if not isinstance(counts, dict) or set(counts) != {"A", "M", "D", "R"}:
        raise ValueError(f"counts {counts!r}")
    return HistoryEntry(
        transaction_id=str_field(body["transaction"]),
        sequence=int_field(body["sequence"], minimum=0),
        committed_at=str_field(body["committed_at"]),
        summary=str_field(body["summary"]),
        counts={k: int_field(v, minimum=0) for k, v in counts.items()},
        intent=optional_str_field(body["intent"]),
        undoes=optional_str_field(body["undoes"]),
        bytes=int_field(body["bytes"], minimum=0),
        file_count=int_field(body["file_count"], minimum=0),
        before_images=int_field(body["before_images"], minimum=0),
        files_sha256=str_field(body["files_sha256"]),
    )


def _file(raw: dict[str, Any]) -> HistoryFile:
    image = raw["before_image"]
    if image is not None and not (isinstance(image, str) and is_before_image_name(image)):
        raise ValueError(f"before-image name {image!r}")
    if (image is None) != (raw["before_sha256"] is None):
        raise ValueError(f"{raw['path']!r}: a before-image and a before hash go together")
    return HistoryFile(
        path=_relpath(raw["path"]),
        before_sha256=optional_str_field(raw["before_sha256"]),
        after_sha256=optional_str_field(raw["after_sha256"]),
        before_mode=optional_int_field(raw["before_mode"], minimum=0),
        after_mode=optional_int_field(raw["after_mode"], minimum=0),
        before_image=image,
        size=optional_int_field(raw["size"], minimum=0),
    )
