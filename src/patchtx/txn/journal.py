"""The rollback journal: its on-disk format and the names of everything a transaction creates.

Layout (all inside the workspace, on the same filesystem as the files)::

    .patchtx/
      .gitignore                 "*": the folder never shows up in git status
      lock                       the workspace lock (flock, opened without following links)
      journal/
        <txn>.journal.tmp        being written; never acted on
        <txn>.journal            published: an uncommitted transaction, recovery rolls back
        <txn>.committed          the same journal renamed: committed, recovery only cleans up
        <txn>.kept-<seq>-<bytes> the same journal renamed, for a transaction kept as an undo-history
                                 entry (see ``history``): committed, left in place with its
                                 before-images; <seq> orders the entries, <bytes> is their size
        <txn>.pruned             a kept entry being deleted: never listed again, swept by recovery
        <txn>.<n>.before         the original of entry n (a hard link, or a copy)

Temporary files live next to their targets as ``.patchtx-<txn>-<n>.tmp`` (new contents) and
``.patchtx-<txn>-<n>.restore`` (an original being put back by recovery).

The journal file is canonical JSON (sorted keys) with a ``checksum`` member holding the SHA-256 of
the canonical JSON of everything else, and a ``mac`` member holding its HMAC-SHA256 with the user's
secret (see ``provenance``). A checksum mismatch, an unknown format or version, anything
unparseable, a path a patch could not name (outside the root, in ``.git`` or the state folder), or
a backup or temporary name that is not the one patchtx gives that entry makes it "damaged"
(JournalError); a missing or wrong ``mac`` makes it "untrusted" (UntrustedStateError: the workspace
may come from someone else). Recovery acts on neither.
"""

from __future__ import annotations

import hashlib
import json
from typing import TYPE_CHECKING

from .._record import record
from ..errors import JournalError, UntrustedStateError
from ..workspace.paths import path_problem
from .layout import (
    JOURNAL_DIR,
    STATE_DIR,
    backup_name,
    committed_name,
    is_transaction_id,
    kept_name,
    temp_name,
)
from .provenance import sign, verify

if TYPE_CHECKING:
    from typing import Any, Literal


FORMAT = "patchtx-journal"
VERSION = 1


if TYPE_CHECKING:
    BackupKind = Literal["link", "copy"]


@record
class JournalEntry:
    """What one path held before the transaction and what it will hold after."""

    path: str
    before_sha256: str | None
    """None: the path did not exist before (the transaction adds it)."""
    after_sha256: str | None
    """None: the path will not exist after (the transaction deletes it)."""
    before_mode: int | None
    after_mode: int | None
    owner: tuple[int, int] | None
    """(uid, gid) of the original, or None if there was none."""
    backup: str | None
    """Name of the preserved original in the journal folder (None if there was no original)."""
    backup_kind: BackupKind | None
    temp: str | None
    """Name of the temporary file in the path's directory (None for a delete, and for an update
    written in place)."""
    inode: int | None = None
    """For an update written in place: the file's inode number, so that a roll back writes the
    original back into that file only, never into another one that took its name since."""

    @property
    def written_in_place(self) -> bool:
        """An update of a file with other hard links: rewritten in place (same inode, so the other
        names see the edit), its original copied into the journal first; rolled back in place."""
        return self.before_sha256 is not None and self.after_sha256 is not None and self.temp is None


@record
class RemovedDir:
    path: str
    mode: int
    owner: tuple[int, int]


@record
class Journal:
    transaction_id: str
    entries: tuple[JournalEntry, ...]
    created_dirs: tuple[str, ...]
    """Directories the transaction creates, parents first."""
    removed_dirs: tuple[RemovedDir, ...]
    """Directories the transaction removes if they end up empty, deepest first."""
    intent: str | None = None
    """Why the change was made (``Plan.intent``), kept with it for recovery reports and history."""
    history: dict[str, Any] | None = None
    """What the undo history records beyond the entries (``history.KeepHistory``), for a
    transaction kept as an entry; its ``sequence`` and ``bytes`` also name the kept journal."""

    @property
    def committed_file_name(self) -> str:
        """The name the journal takes at the commit point: kept as history, or to be deleted."""
        if self.history is None:
            return committed_name(self.transaction_id)
        return kept_name(self.transaction_id, self.history["sequence"], self.history["bytes"])

    @property
    def touched_paths(self) -> frozenset[str]:
        """Every path the transaction touches: its files, the folders it creates and removes."""
        return frozenset({e.path for e in self.entries} | set(self.created_dirs)
                         | {d.path for d in self.removed_dirs})

    def backup_names(self) -> list[str]:
        return [entry.backup for entry in self.entries if entry.backup is not None]

    def body(self) -> dict[str, Any]:
        """The journal as the JSON object stored (without its checksum)."""
        body: dict[str, Any] = {
            "format": FORMAT,
            "version": VERSION,
            "transaction": self.transaction_id,
            "entries": [
                {
                    "path": e.path,
                    "before_sha256": e.before_sha256,
                    "after_sha256": e.after_sha256,
                    "before_mode": e.before_mode,
                    "after_mode": e.after_mode,
                    "owner": list(e.owner) if e.owner is not None else None,
                    "backup": e.backup,
                    "backup_kind": e.backup_kind,
                    "temp": e.temp,
                    **({} if e.inode is None else {"inode": e.inode}),
                }
                for e in self.entries
            ],
            "created_dirs": list(self.created_dirs),
            "removed_dirs": [{"path": d.path, "mode": d.mode, "owner": list(d.owner)} for d in self.removed_dirs],
            "intent": self.intent,
        }
        if self.history is not None:
            body["history"] = self.history
        return body

    def to_bytes(self, workspace: str) -> bytes:
        """The canonical JSON of ``body()`` with the checksum and the signature (for the workspace
        whose real path is ``workspace``) appended."""
        text = canonical_json(self.body())
        signed = text.encode("ascii")
        checksum = hashlib.sha256(signed).hexdigest()
        mac = sign(signed, workspace)
        # Appended rather than re-serialised: only the body needs to be canonical.
        return f'{text[:-1]},"checksum":"{checksum}","mac":"{mac}"}}\n'.encode("ascii")

    @classmethod
    def from_bytes(cls, data: bytes, *, where: str, workspace: str, trust_foreign: bool = False) -> Journal:
        """Parse and verify a journal file found in the workspace whose real path is ``workspace``;
        JournalError (naming ``where``) if it is damaged, UntrustedStateError if this user's
        patchtx did not sign it for this workspace (unless ``trust_foreign``: every other check
        still applies)."""
        try:
            body = parse_json(data.decode("ascii"))
        except (UnicodeDecodeError, ValueError) as exc:
            raise damaged(where, f"unparseable: {exc}") from None
        except RecursionError:
            raise damaged(where, "unparseable: nested too deeply") from None
        if not isinstance(body, dict):
            raise damaged(where, "not a JSON object")
        if body.get("format") != FORMAT:
            raise damaged(where, f"unknown format {body.get('format')!r}")
        if body.get("version") != VERSION:
            raise damaged(
                where,
                f"unknown version {body.get('version')!r} (this patchtx reads version {VERSION})",
            )
        stored = body.pop("checksum", None)
        mac = body.pop("mac", None)
        canonical = canonical_json(body).encode("ascii")
        if stored != hashlib.sha256(canonical).hexdigest():
            raise damaged(where, "checksum mismatch")
        try:
            journal = cls(
                transaction_id=_txn_id(body["transaction"]),
                entries=tuple(_entry(raw) for raw in body["entries"]),
                created_dirs=tuple(relpath_field(p) for p in body["created_dirs"]),
                removed_dirs=tuple(
                    RemovedDir(relpath_field(d["path"]), int_field(d["mode"]), _owner(d["owner"]))
                    for d in body["removed_dirs"]
                ),
                # Optional within version 1: journals written before it was recorded have none.
                intent=optional_str_field(body.get("intent")),
                history=_history_member(body.get("history")),
            )
            journal.check_names()
        except (KeyError, TypeError, ValueError) as exc:
            raise damaged(where, f"malformed content: {exc!r}") from None
        if not trust_foreign and not verify(canonical, mac, workspace):
            raise untrusted(where, journal, signed=mac is not None)
        return journal

    def check_names(self) -> None:
        """Every backup and temporary name is the one patchtx gives entry n of this transaction
        (in the journal folder, next to the target); ValueError otherwise."""
        txn = self.transaction_id
        for index, entry in enumerate(self.entries):
            if entry.temp is not None and entry.temp != temp_name(txn, index):
                raise ValueError(f"temporary name {entry.temp!r} of entry {index}")
            if entry.backup is not None and entry.backup != backup_name(txn, index):
                raise ValueError(f"backup name {entry.backup!r} of entry {index}")
            if (entry.backup is None) != (entry.backup_kind is None):
                raise ValueError(f"backup kind {entry.backup_kind!r} of entry {index}")
        for removed in self.removed_dirs:
            if not 0 <= removed.mode <= 0o7777:
                raise ValueError(f"mode {removed.mode!r} of {removed.path!r}")


def untrusted(where: str, journal: Journal, *, signed: bool) -> UntrustedStateError:
    """The refusal of a journal (or history entry) that this user's patchtx did not write."""
    paths = sorted({e.path for e in journal.entries} | set(journal.created_dirs)
                   | {d.path for d in journal.removed_dirs})
    shown = ", ".join(paths[:10]) + (f" and {len(paths) - 10} more" if len(paths) > 10 else "")
    why = "its signature does not match this user's secret" if signed else "it carries no signature"
    return UntrustedStateError(
        f"The transaction journal {where} was not written by this user's patchtx ({why}): it"
        f" names {len(paths)} path{'s' if len(paths) != 1 else ''} ({shown or 'none'}), and"
        " patchtx will not act on it.",
        hint=(
            f"It may come from the repository itself (a cloned workspace can hold anything). Look at"
            f" it with `cat {where}` and at the files next to it in {JOURNAL_DIR}. To discard it,"
            f" move {JOURNAL_DIR} away; to roll it back anyway, run `patchtx recover"
            " --trust-foreign`, which still refuses any path outside the root, in .git or in"
            f" {STATE_DIR}."
        ),
        path=where,
        details={"journal": where, "paths": paths, "transaction": journal.transaction_id},
    )


def damaged(where: str, reason: str) -> JournalError:
    return JournalError(
        f"The transaction journal {where} is damaged ({reason}); patchtx will not act on it.",
        hint=(
            "Nothing in the journal folder was deleted. The workspace may hold an interrupted"
            " transaction: inspect the files it lists, then move the journal folder away to"
            " discard it."
        ),
        path=where,
    )


def canonical_json(value: object) -> str:
    """The one spelling of a journal's body: sorted keys, no spaces, ASCII (what is signed and
    check-summed)."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=True)


def parse_json(text: str) -> Any:
    """``json.loads`` (ValueError if ``text`` is not one JSON value)."""
    return json.loads(text)


def _entry(raw: dict[str, Any]) -> JournalEntry:
    backup_kind = raw["backup_kind"]
    if backup_kind not in (None, "link", "copy"):
        raise ValueError(f"backup_kind {backup_kind!r}")
    return JournalEntry(
        path=relpath_field(raw["path"]),
        before_sha256=optional_str_field(raw["before_sha256"]),
        after_sha256=optional_str_field(raw["after_sha256"]),
        before_mode=_optional_mode(raw["before_mode"]),
        after_mode=_optional_mode(raw["after_mode"]),
        owner=None if raw["owner"] is None else _owner(raw["owner"]),
        backup=_optional_name(raw["backup"]),
        backup_kind=backup_kind,
        temp=_optional_name(raw["temp"]),
        inode=optional_int_field(raw.get("inode"), minimum=0),  # (absent before it was recorded)
    )


def _history_member(value: object) -> dict[str, Any] | None:
    """Optional within version 1; the history module checks the rest when it lists the entry."""
    if value is None:
        return None
    if not isinstance(value, dict):
        raise ValueError(f"history {value!r}")
    int_field(value.get("sequence"), minimum=0)
    int_field(value.get("bytes"), minimum=0)
    return value


def _txn_id(value: object) -> str:
    if not isinstance(value, str) or not is_transaction_id(value):
        raise ValueError(f"transaction id {value!r}")
    return value


def relpath_field(value: object) -> str:
    """A path read from a journal or history file, by the one path rule of a patch's and a plan's
    paths (``workspace.path_problem``; symbolic links on the way are refused when it is opened,
    see ``dirs``)."""
    if not isinstance(value, str):
        raise ValueError(f"path {value!r}")
    why = path_problem(value)
    if why is not None:
        raise ValueError(f"path {value!r}: {why}")
    return value


def _optional_name(value: object) -> str | None:
    if value is None:
        return None
    if not isinstance(value, str) or "/" in value or value in ("", ".", "..") or "\0" in value:
        raise ValueError(f"file name {value!r}")
    return value


# Field checks for what journal and history files hold (a malformed file raises ValueError).

def str_field(value: object) -> str:
    if not isinstance(value, str):
        raise ValueError(f"string {value!r}")
    return value


def optional_str_field(value: object) -> str | None:
    return None if value is None else str_field(value)


def int_field(value: object, *, minimum: int | None = None) -> int:
    if not isinstance(value, int) or isinstance(value, bool) or (minimum is not None and value < minimum):
        raise ValueError(f"integer {value!r}")
    return value


def optional_int_field(value: object, *, minimum: int | None = None) -> int | None:
    return None if value is None else int_field(value, minimum=minimum)


_LARGEST_ID = 2**32 - 2
"""The largest user or group id (2**32 - 1 is -1, "no change", to chown)."""


def _owner(value: object) -> tuple[int, int]:
    if not isinstance(value, list) or len(value) != 2:
        raise ValueError(f"owner {value!r}")
    uid, gid = int_field(value[0], minimum=0), int_field(value[1], minimum=0)
    if uid > _LARGEST_ID or gid > _LARGEST_ID:
        raise ValueError(f"owner {value!r}")
    return uid, gid


def _optional_mode(value: object) -> int | None:
    """A file's permission bits: 0 to 0o7777 (anything else could not be set, or would set the
    file type)."""
    mode = optional_int_field(value, minimum=0)
    if mode is not None and mode > 0o7777:
        raise ValueError(f"mode {value!r}")
    return mode
