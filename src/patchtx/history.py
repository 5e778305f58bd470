"""Undo history: list the retained transactions, and undo one as a new transaction.

Every commit made through the API, the CLI or the agent tools keeps its before-images in
``.patchtx/journal``, with its journal (as many as ``CommitOptions`` says by default; the workspace's
``history-count`` / ``history-bytes`` keys or the ``history_count`` / ``history_bytes`` arguments
change that, and ``history-count = 0`` turns it off). The on-disk format and its crash reasoning
are in ``patchtx.txn.kept`` (reading) and ``patchtx.txn.retention`` (keeping).

``undo`` puts the before-images back through the ordinary commit: it is itself atomic, journaled,
and kept in the history. It refuses, writing nothing, if any file of the transaction changed since
it was committed.

Undo is a stack, as in an editor: ``undo()`` without an id takes the newest transaction not yet
undone, so each call goes one further back; ``redo()`` undoes the newest undo, putting back what it
took; a new edit after undos ends what can be redone. The stacks are read from the history itself
(each undo records the id it undid), so they hold across processes.
"""

from __future__ import annotations

import hashlib
import os
import stat
from typing import TYPE_CHECKING

from ._record import replace
from .api import commit_plan
from .errors import (
    ArgumentTypeError,
    ChangedSincePlanningError,
    HistoryDamagedError,
    NothingToRedoError,
    NothingToUndoError,
    PolicyError,
    UnknownTransactionError,
)
from .model import ChangeKind, FileChange, PathTarget, Plan
from .result import Result
from .txn.dirs import DirectoryHandles
from .txn.fsops import FileSystemOps
from .txn.kept import (
    HistoryEntry,
    HistoryFile,
    HistoryRecord,
    find_entry,
    list_entries,
    matching,
    open_workspace,
    read_before_image,
    read_record,
    untrusted_entries,
)
from .workspace.paths import root_path
from .workspace.policy import check_changes, options_for, policy_files

if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any, Unpack

    from .cancel import Cancellation
    from .options import OptionKeywords
    from .txn.commit import Progress

__all__ = [
    "HistoryDamagedError",
    "HistoryEntry",
    "HistoryFile",
    "HistoryRecord",
    "NothingToRedoError",
    "NothingToUndoError",
    "UnknownTransactionError",
    "log",
    "redo",
    "show",
    "untrusted",
    "undo",
]

PathLike = str | os.PathLike[str]

# What a path holds now: (bytes, mode) for a regular file, None when absent, or a description.
_Current = tuple[bytes, int] | None | str
_DIRECTORY = "a directory"



def undo_stacks(entries: list[HistoryEntry]) -> tuple[list[HistoryEntry], list[HistoryEntry]]:
    """From the history (newest first): the transactions in effect that ``undo`` takes from the
    top, and the undos that ``redo`` takes from the top (each list oldest first).

    An entry that undid an undo is a redo: it is in effect again (undoing it undoes the change
    once more). An entry that undid anything else is an undo. An ordinary edit ends what can be
    redone. An entry whose target is no longer retained counts as an undo."""
    kinds: dict[str, str] = {}
    applied: list[HistoryEntry] = []
    undone: list[HistoryEntry] = []
    for entry in reversed(entries):
        target = entry.undoes
        if target is None:
            kinds[entry.transaction_id] = "edit"
            applied.append(entry)
            undone.clear()
        elif kinds.get(target) == "undo":
            kinds[entry.transaction_id] = "redo"
            undone = [e for e in undone if e.transaction_id != target]
            applied.append(entry)
        else:
            kinds[entry.transaction_id] = "undo"
            applied = [e for e in applied if e.transaction_id != target]
            undone.append(entry)
    return applied, undone


def _undo_target(fs: FileSystemOps, dirs: DirectoryHandles, transaction_id: str | None) -> HistoryEntry:
    """The transaction ``transaction_id`` names (see ``_find``), else the newest one not undone."""
    entries = list_entries(fs, dirs) if transaction_id is None else []
    if transaction_id is not None or not entries:
        return _find(fs, dirs, transaction_id)
    applied, _undone = undo_stacks(entries)
    if not applied:
        raise NothingToUndoError(
            "Everything in the undo history has been undone: there is no transaction left to undo.",
            hint="`patchtx redo` puts back what the last undo took; `patchtx log` lists the history.")
    return applied[-1]


def log(root: PathLike = ".") -> list[HistoryEntry]:
    """The retained transactions that can be undone, newest first (reads only)."""
    with open_workspace(os.path.realpath(root_path(root))) as (fs, dirs):
        return list_entries(fs, dirs)


def untrusted(root: PathLike = ".") -> list[str]:
    """Names of kept journals in the journal folder that this user's patchtx did not sign: never
    listed by ``log``, never undone (a cloned repository may bring them along)."""
    with open_workspace(os.path.realpath(root_path(root))) as (fs, dirs):
        return untrusted_entries(fs, dirs)


def show(root: PathLike = ".", transaction_id: str | None = None) -> HistoryRecord:
    """Everything recorded about one retained transaction (default: the newest): per path the
    before/after SHA-256 and modes, the directories it created and removed, its moves."""
    with open_workspace(os.path.realpath(root_path(root))) as (fs, dirs):
        return read_record(fs, dirs, _find(fs, dirs, transaction_id))


def undo(
    root: PathLike = ".",
    transaction_id: str | None = None,
    *,
    dry_run: bool = False,
    intent: str | None = None,
    progress: Progress | None = None,
    fs: FileSystemOps | None = None,
    approve: Callable[[Plan], None] | None = None,
    origin: str | None = None,
    only_own: bool = False,
    cancel: Cancellation | None = None,
    **options: Unpack[OptionKeywords],
) -> Result:
    """Restore what a retained transaction (default: the newest not yet undone, so that repeated
    calls go further back; a unique prefix of an id will do) replaced, as one new transaction.

    Raises ``changed_since_planning`` naming every file that changed since that transaction
    committed, ``nothing_to_undo``, ``unknown_transaction`` or ``history_damaged``; in each case
    nothing was written. ``fs`` is the commit's filesystem layer (tests pass one that fails or
    crashes); ``approve`` is called with the undo's plan before anything is written, dry run or
    not, and refuses it by raising; ``options`` are the fields of ``CommitOptions`` and
    ``PlanOptions``, as for ``apply_plan``: an undo is a change like any other, and the commit's
    gate checks it against the host's ceiling and the workspace's policy (protected paths, policy
    files, deletes, moves, caps). ``origin`` is recorded in the undo's own history entry (see
    ``commit_plan``); with ``only_own``, an entry made through another surface is refused.
    ``cancel`` stops the commit up to its commit point (``patchtx.cancel``).
    """
    real_root = os.path.realpath(root_path(root))
    plan_options, commit_options = options_for(real_root, options, caller="undo()")
    with open_workspace(real_root) as (reader, dirs):
        entry = _undo_target(reader, dirs, transaction_id)
        if transaction_id is not None:
            _refuse_undone(list_entries(reader, dirs), entry)
        if only_own and entry.origin != origin:
            raise _not_own(entry, origin)
        record = read_record(reader, dirs, entry)
        current = {f.path: _current(reader, dirs, f.path) for f in record.files}
        changed = [(f.path, why) for f in record.files
                   if (why := _change(f, current[f.path], record)) is not None]
        if changed:
            raise _changed_since(entry, changed)
        images = {f.path: read_before_image(reader, dirs, entry, f)
                  for f in record.files if f.before_image is not None}
    plan = _undo_plan(real_root, record, current, images, intent)
    # What the commit's gate will refuse, refused now (a dry run says so too): the same check.
    check_changes(plan_options, plan.targets, plan.changes, extra_policy_files=policy_files(real_root))
    if approve is not None:
        approve(plan)
    if dry_run:
        return Result(plan, committed=False, dry_run=True, undone=entry.transaction_id)
    result = commit_plan(plan, commit_options, progress=progress, policy=plan_options, origin=origin,
                         undoes=entry.transaction_id, fs=fs, dir_modes=dict(record.removed_dirs),
                         cancel=cancel)
    return replace(result, undone=entry.transaction_id)


def _refuse_undone(entries: list[HistoryEntry], entry: HistoryEntry) -> None:
    """An explicit id whose transaction an undo still in effect took back: said so (its files
    differ from what it left, and "changed since it was committed" would send the user looking
    for later transactions that are not there)."""
    _applied, undone = undo_stacks(entries)
    by = [e for e in undone if e.undoes == entry.transaction_id]
    if by:
        raise NothingToUndoError(
            f"Transaction {entry.transaction_id} is already undone (by transaction"
            f" {by[-1].transaction_id}): there is nothing of it to undo.",
            hint="`patchtx redo` puts back what the last undo took; `patchtx log` lists the history.",
            details={"transaction": entry.transaction_id, "undone_by": by[-1].transaction_id})


def _not_own(entry: HistoryEntry, origin: str | None) -> PolicyError:
    made = f"through {entry.origin}" if entry.origin else "through the library or the command line"
    return PolicyError(
        f"Refusing to undo transaction {entry.transaction_id}: it was made {made}, and this"
        f" {origin or 'caller'} may undo only the transactions made through it.",
        hint="The host decides what may be undone here (patchtx mcp --undo any|own|none); the user"
             " can undo it from the command line (patchtx undo).",
        details={"transaction": entry.transaction_id, "permission": "undo"})


def _find(fs: FileSystemOps, dirs: DirectoryHandles, transaction_id: str | None) -> HistoryEntry:
    """The entry to show or undo; an id only a foreign (unsigned) kept journal has is refused as
    untrusted rather than unknown (the folder is read again only then)."""
    if transaction_id is not None and not isinstance(transaction_id, str):
        raise ArgumentTypeError.expected("the transaction id", "a string (an id, or a unique prefix of one)",
                                         transaction_id)
    entries = list_entries(fs, dirs)
    if transaction_id is None or not transaction_id.strip() or matching(entries, transaction_id):
        if not entries and transaction_id is None:
            _refuse_skipped_history(untrusted_entries(fs, dirs))
        return find_entry(entries, transaction_id)
    return find_entry(entries, transaction_id, untrusted_entries(fs, dirs))


def _refuse_skipped_history(foreign: list[str]) -> None:
    """No entry of this workspace, but kept journals signed elsewhere: said why, not "empty"."""
    if not foreign:
        return
    count = f"{len(foreign)} entr{'y' if len(foreign) == 1 else 'ies'}"
    raise NothingToUndoError(
        f"Nothing to undo here: the undo history in .patchtx/journal has {count} this workspace"
        " cannot use, signed for another path or by another user's patchtx. A workspace that was"
        " moved or copied (mv proj proj2) keeps its history, but each entry is bound to the"
        " folder it was made in, so that a journal brought in from elsewhere is never undone.",
        hint="To undo them, move the workspace back to where it was and run `patchtx undo` there; to"
             " start a fresh history here, remove .patchtx/journal (docs/cli.md, \"A moved"
             " workspace\").",
        details={"skipped": foreign})


def redo(root: PathLike = ".", **options: Any) -> Result:
    """Put back what the newest undo took (the undo of that undo, as one new transaction); repeated
    calls redo further. Raises ``nothing_to_redo`` when no undo is left to redo (a new edit after
    the undos ends them). ``options`` are those of ``undo``; the intent defaults to ``redo ID``."""
    real_root = os.path.realpath(root_path(root))
    with open_workspace(real_root) as (reader, dirs):
        _applied, undone = undo_stacks(list_entries(reader, dirs))
    if not undone:
        raise NothingToRedoError(
            "There is nothing to redo: no undo is waiting to be redone.",
            hint="Redo follows undo; an edit made after an undo ends what can be redone.")
    target = undone[-1]
    if options.get("intent") is None:
        options["intent"] = f"redo {target.undoes}"
    return replace(undo(real_root, target.transaction_id, **options), redone=target.undoes)


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
    if hashlib.sha256(current[0]).hexdigest() != file.after_sha256:
        return "its contents differ from what the transaction wrote"
    if file.after_mode is not None and current[1] != file.after_mode:
        # A chmod made since (the executable bit, say) is a change the undo would silently revert.
        return f"its mode is now {current[1]:o}, not {file.after_mode:o} as the transaction left it"
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
