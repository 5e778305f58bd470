"""Undo history: list the retained transactions, and undo one as a new transaction.

Every commit made through the API, the CLI or the agent tools keeps its before-images in
``.patchtx/journal``, with its journal (the last 20 transactions and at most 64 MiB by default; the workspace's
``history-count`` / ``history-bytes`` keys or the ``history_count`` / ``history_bytes`` arguments
change that, and ``history-count = 0`` turns it off). The on-disk format and its crash reasoning
are in ``patchtx.txn.history``.

``undo`` puts the before-images back through the ordinary commit: it is itself atomic, journaled,
and kept in the history (so an undo can be undone). It refuses, writing nothing, if any file of the
transaction changed since it was committed.
"""

from __future__ import annotations

import os
import stat

from ._sha import hexdigest
from .errors import ChangedSincePlanningError
from .model import ChangeKind, FileChange, PathTarget, Plan, Result
from .policy import effective_options
from .txn.dirs import DirectoryHandles
from .txn.fsops import FileSystemOps
from .txn.history import (
    HistoryDamagedError,
    HistoryEntry,
    HistoryFile,
    HistoryRecord,
    KeepHistory,
    NothingToUndoError,
    UnknownTransactionError,
    find_entry,
    list_entries,
    open_workspace,
    read_before_image,
    read_record,
    untrusted_entries,
)

TYPE_CHECKING = False
if TYPE_CHECKING:
    from .txn.transaction import Progress

__all__ = [
    "HistoryDamagedError",
    "HistoryEntry",
    "HistoryFile",
    "HistoryRecord",
    "NothingToUndoError",
    "UnknownTransactionError",
    "log",
    "show",
    "untrusted",
    "undo",
]

PathLike = str | os.PathLike[str]

# What a path holds now: (bytes, mode) for a regular file, None when absent, or a description.
_Current = tuple[bytes, int] | None | str
_DIRECTORY = "a directory"


def log(root: PathLike = ".") -> list[HistoryEntry]:
    """The retained transactions that can be undone, newest first (reads only)."""
    with open_workspace(os.path.realpath(os.fspath(root))) as (fs, dirs):
        return list_entries(fs, dirs)


def untrusted(root: PathLike = ".") -> list[str]:
    """Names of kept journals in the journal folder that this user's patchtx did not sign: never
    listed by ``log``, never undone (a cloned repository may bring them along)."""
    with open_workspace(os.path.realpath(os.fspath(root))) as (fs, dirs):
        return untrusted_entries(fs, dirs)


def show(root: PathLike = ".", transaction_id: str | None = None) -> HistoryRecord:
    """Everything recorded about one retained transaction (default: the newest): per path the
    before/after SHA-256 and modes, the directories it created and removed, its moves."""
    with open_workspace(os.path.realpath(os.fspath(root))) as (fs, dirs):
        return read_record(fs, dirs, _find(fs, dirs, transaction_id))


def undo(
    root: PathLike = ".",
    transaction_id: str | None = None,
    *,
    dry_run: bool = False,
    durable: bool = True,
    lock_timeout: float = 30.0,
    intent: str | None = None,
    history_count: int | None = None,
    history_bytes: int | None = None,
    progress: Progress | None = None,
    fs: FileSystemOps | None = None,
) -> Result:
    """Restore what a retained transaction (default: the newest; a unique prefix of its id will
    do) replaced, as one new transaction.

    Raises ``changed_since_planning`` naming every file that changed since that transaction
    committed, ``nothing_to_undo``, ``unknown_transaction`` or ``history_damaged``; in each case
    nothing was written. ``fs`` is the commit's filesystem layer (tests pass one that fails or
    crashes); the other options are those of ``apply_patch``.
    """
    root_path = os.path.realpath(os.fspath(root))
    with open_workspace(root_path) as (reader, dirs):
        entry = _find(reader, dirs, transaction_id)
        record = read_record(reader, dirs, entry)
        current = {f.path: _current(reader, dirs, f.path) for f in record.files}
        changed = [(f.path, why) for f in record.files if (why := _change(f, current[f.path], record)) is not None]
        if changed:
            raise _changed_since(entry, changed)
        images = {f.path: read_before_image(reader, dirs, entry, f) for f in record.files if f.before_image is not None}
    plan = _undo_plan(root_path, record, current, images, intent)
    if dry_run:
        return Result(plan, committed=False, dry_run=True, extra={"undone": entry.transaction_id})
    from .txn import commit

    options = effective_options(root_path, history_count=history_count, history_bytes=history_bytes)
    keep = KeepHistory(count=options.history_count, max_bytes=options.history_bytes, undoes=entry.transaction_id)
    report = commit(
        plan,
        durable=durable,
        lock_timeout=lock_timeout,
        fs=fs,
        retention=keep,
        progress=progress,
        dir_modes=dict(record.removed_dirs),
    )
    extra: dict[str, object] = {"undone": entry.transaction_id, "kept_in_history": keep.kept is not None}
    if report.recovery is not None:
        extra["recovered"] = report.recovery
    return Result(plan, committed=True, transaction_id=report.transaction_id, fsyncs=report.fsyncs, extra=extra)


def _find(fs: FileSystemOps, dirs: DirectoryHandles, transaction_id: str | None) -> HistoryEntry:
    """The entry to show or undo; an id only a foreign (unsigned) kept journal has is refused as
    untrusted rather than unknown (the folder is read again only then)."""
    entries = list_entries(fs, dirs)
    if transaction_id is None or any(e.transaction_id.startswith(transaction_id) for e in entries):
        return find_entry(entries, transaction_id)
    return find_entry(entries, transaction_id, untrusted_entries(fs, dirs))


def _current(fs: FileSystemOps, dirs: DirectoryHandles, path: str) -> _Current:
    parent, _, name = path.rpartition("/")
    try:
        parent_fd = dirs.open(parent)
    except (FileNotFoundError, NotADirectoryError):
        return None
    st = fs.lstat(parent_fd, name)
    if st is None:
        return None
    if stat.S_ISDIR(st.st_mode):
        return _DIRECTORY
    if not stat.S_ISREG(st.st_mode):
        return "a symbolic link" if stat.S_ISLNK(st.st_mode) else "a special file"
    contents = fs.read_file(parent_fd, name)
    return contents.data, stat.S_IMODE(contents.stat.st_mode)


def _change(file: HistoryFile, current: _Current, record: HistoryRecord) -> str | None:
    """Why ``current`` is not what the transaction left at ``file.path`` (None: it is)."""
    if file.after_sha256 is None:  # the transaction deleted it (or a directory took its place)
        if current is None or (current == _DIRECTORY and file.path in record.created_dirs):
            return None
        return f"it exists again ({current if isinstance(current, str) else 'a file'})"
    if current is None:
        return "it was deleted"
    if isinstance(current, str):
        return f"it is now {current}"
    if hexdigest(current[0]) != file.after_sha256:
        return "its contents differ from what the transaction wrote"
    return None


def _changed_since(entry: HistoryEntry, changed: list[tuple[str, str]]) -> ChangedSincePlanningError:
    shown = "; ".join(f"{path} ({why})" for path, why in changed[:20])
    more = f"; and {len(changed) - 20} more" if len(changed) > 20 else ""
    count = f"{len(changed)} file{'s' if len(changed) != 1 else ''}"
    return ChangedSincePlanningError(
        f"Cannot undo transaction {entry.transaction_id}: {count} changed since it was committed:"
        f" {shown}{more}.",
        hint=(
            "Undoing it would overwrite those changes. Undo the later transactions first (see"
            " `patchtx log`), or put those files back as the transaction left them."
        ),
        path=changed[0][0],
        details={"transaction": entry.transaction_id, "paths": [path for path, _ in changed]},
    )


def _undo_plan(
    root: str,
    record: HistoryRecord,
    current: dict[str, _Current],
    images: dict[str, bytes],
    intent: str | None,
) -> Plan:
    targets: dict[str, PathTarget] = {}
    for file in record.files:
        now = current[file.path]
        before, before_mode = now if isinstance(now, tuple) else (None, None)
        after = images.get(file.path)
        after_mode = file.before_mode if after is not None else None
        if before == after and (after is None or before_mode == after_mode):
            continue
        targets[file.path] = PathTarget(file.path, before, after, before_mode, after_mode)
    changes: list[FileChange] = []
    in_moves: set[str] = set()
    for source, destination in record.moves:  # undone as the move back
        back_to, back_from = targets.get(source), targets.get(destination)
        if back_to is None or back_from is None or back_to.after is None or back_from.after is not None:
            continue
        changes.append(FileChange(ChangeKind.MOVE, source, source, back_from.before, back_to.after, source=destination))
        in_moves |= {source, destination}
    for target in targets.values():
        if target.path in in_moves:
            continue
        if target.before is None:
            kind = ChangeKind.ADD
        else:
            kind = ChangeKind.DELETE if target.after is None else ChangeKind.UPDATE
        changes.append(FileChange(kind, target.path, target.path, target.before, target.after))
    entry = record.entry
    default_intent = f"undo {entry.transaction_id}" + (f": {entry.intent}" if entry.intent else "")
    return Plan(
        root=root,
        changes=tuple(changes),
        targets=tuple(targets.values()),
        # Directories the transaction created go again if the undo empties them (deepest first).
        remove_dirs=tuple(reversed(record.created_dirs)),
        intent=intent if intent is not None else default_intent,
    )
