"""The names inside the state folder ``.patchtx/``: transaction ids, journal and backup file names,
and how a listing of the journal folder groups into transactions. Recovery trusts only names of
this shape (docs/guarantees.md, "What patchtx trusts and why").
"""

from __future__ import annotations

import os
import time
from typing import TYPE_CHECKING

from .._record import record

if TYPE_CHECKING:
    from collections.abc import Iterable


STATE_DIR = ".patchtx"
JOURNAL_DIR = ".patchtx/journal"
GITIGNORE = ".gitignore"
GITIGNORE_TEXT = b"*\n"
LOCK_NAME = "lock"

# Names are checked by hand rather than with a regular expression: the rule is short.
_DIGITS = frozenset("0123456789")
_HEX_DIGITS = frozenset("0123456789abcdef")
_TXN_ID_LENGTH = 24
_JOURNAL_KINDS = ("journal.tmp", "journal", "committed", "pruned")
_KEPT_PREFIX = "kept-"
_KEPT_MARK = "." + _KEPT_PREFIX


def new_transaction_id() -> str:
    """Sortable by start time, unique by 32 random bits; contains no dot (see the layout)."""
    return time.strftime("%Y%m%dT%H%M%S", time.gmtime()) + "-" + os.urandom(4).hex()


def journal_name(txn: str) -> str:
    return f"{txn}.journal"


def unpublished_journal_name(txn: str) -> str:
    return f"{txn}.journal.tmp"


def committed_name(txn: str) -> str:
    return f"{txn}.committed"


def kept_name(txn: str, sequence: int, size: int) -> str:
    """The name a kept transaction's journal takes at its commit point."""
    return f"{txn}.{_KEPT_PREFIX}{sequence}-{size}"


def pruned_name(txn: str) -> str:
    return f"{txn}.pruned"


def parse_kept_kind(kind: str) -> tuple[int, int] | None:
    """(sequence, bytes) of a ``kept-<seq>-<bytes>`` name suffix; None for any other suffix."""
    if not kind.startswith(_KEPT_PREFIX):
        return None
    sequence, dash, size = kind[len(_KEPT_PREFIX):].partition("-")
    if dash != "-" or not _is_number(sequence) or not _is_number(size):
        return None
    return int(sequence), int(size)


def _is_number(text: str) -> bool:
    """Decimal digits, without a leading zero (one spelling per number, so one name per entry)."""
    return bool(text) and _DIGITS.issuperset(text) and (text == "0" or text[0] != "0")


def backup_name(txn: str, index: int) -> str:
    return f"{txn}.{index}.before"


def temp_name(txn: str, index: int) -> str:
    return f".patchtx-{txn}-{index}.tmp"


def restore_name(txn: str, index: int) -> str:
    return f".patchtx-{txn}-{index}.restore"


@record
class JournalFiles:
    """The files of one transaction found in the journal folder."""

    transaction_id: str
    names: frozenset[str]

    @property
    def is_committed(self) -> bool:
        return committed_name(self.transaction_id) in self.names

    @property
    def kept(self) -> str | None:
        """The name of the journal if it is kept as an undo-history entry."""
        for name in self.names:
            if parse_kept_kind(name[_TXN_ID_LENGTH + 1 :]) is not None:
                return name
        return None

    @property
    def is_pruned(self) -> bool:
        return pruned_name(self.transaction_id) in self.names

    @property
    def is_published(self) -> bool:
        return journal_name(self.transaction_id) in self.names


def group_journal_folder(names: Iterable[str]) -> list[JournalFiles]:
    """Group a journal folder listing by transaction (oldest first); unknown names are ignored."""
    groups: dict[str, set[str]] = {}
    for name in names:
        txn, dot, kind = name[:_TXN_ID_LENGTH], name[_TXN_ID_LENGTH : _TXN_ID_LENGTH + 1], name[_TXN_ID_LENGTH + 1 :]
        if dot == "." and is_transaction_id(txn) and (
            kind in _JOURNAL_KINDS or is_before_image_name(kind) or parse_kept_kind(kind) is not None
        ):
            groups.setdefault(txn, set()).add(name)
    return [JournalFiles(txn, frozenset(groups[txn])) for txn in sorted(groups)]


def kept_journals(names: Iterable[str]) -> list[tuple[str, int, int]]:
    """(name, sequence, bytes) of every kept journal in a journal folder listing.

    Filtered on a substring first, not grouped: this runs on every commit, and the folder holds
    the history's before-images too (tens of thousands of names)."""
    found = []
    for name in [name for name in names if _KEPT_MARK in name]:
        if is_transaction_id(name[:_TXN_ID_LENGTH]) and name[_TXN_ID_LENGTH] == ".":
            parsed = parse_kept_kind(name[_TXN_ID_LENGTH + 1 :])
            if parsed is not None:
                found.append((name, *parsed))
    return found


class JournalListing:
    """The journal folder's names as a commit lists them, once, with its kept journals parsed once:
    the commit asks whether recovery has work to do, then the undo history which entries to prune.
    (A plain class: one is made per commit, never compared.)"""

    __slots__ = ("names", "kept")

    def __init__(self, names: list[str]) -> None:
        self.names = names
        self.kept = kept_journals(names)
        """(name, sequence, bytes) of every kept journal, as ``kept_journals`` gives them."""

    @property
    def has_unfinished_work(self) -> bool:
        """Whether the folder holds anything but kept undo-history entries (with their
        before-images): only then need a commit load recovery."""
        kept = {name[:_TXN_ID_LENGTH] for name, _sequence, _size in self.kept}
        return not all(name[:_TXN_ID_LENGTH] in kept for name in self.names)


def is_transaction_id(name: str) -> bool:
    """``YYYYMMDDTHHMMSS-<8 hex digits>``, as new_transaction_id makes them."""
    return (
        len(name) == _TXN_ID_LENGTH
        and name[8] == "T"
        and name[15] == "-"
        and _DIGITS.issuperset(name[:8])
        and _DIGITS.issuperset(name[9:15])
        and _HEX_DIGITS.issuperset(name[16:])
    )


def is_before_image_name(name: str) -> bool:
    """``<n>.before`` (a decimal n)."""
    return name.endswith(".before") and len(name) > 7 and _DIGITS.issuperset(name[:-7])
