"""A journal's bytes: the canonical JSON of its body (json.dumps with sorted keys, no spaces,
ASCII), then its SHA-256 and its HMAC, which recovery recomputes; and they read back equal."""

from __future__ import annotations

import hashlib
import hmac
import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from patchtx.errors import UntrustedStateError
from patchtx.txn.journal import Journal, JournalEntry, RemovedDir, canonical_json
from patchtx.txn.layout import backup_name, temp_name
from patchtx.txn.provenance import user_secret

_TEXT = st.text(st.sampled_from('ab"\\\n\t\x00\x1f\x7f é\u2028😀\udc80/.'), min_size=1, max_size=12)
_NAME = st.none() | _TEXT
_INT = st.integers(min_value=-(2**70), max_value=2**70)
_ENTRY = st.builds(
    JournalEntry,
    path=_TEXT,
    before_sha256=st.none() | st.just(hashlib.sha256(b"x").hexdigest()) | _TEXT,
    after_sha256=st.none() | _TEXT,
    before_mode=st.none() | _INT,
    after_mode=st.none() | _INT,
    owner=st.none() | st.tuples(_INT, _INT),
    backup=_NAME,
    backup_kind=st.sampled_from([None, "link", "copy"]),
    temp=_NAME,
)
_HISTORY = st.none() | st.dictionaries(_TEXT, st.none() | _INT | _TEXT | st.lists(_TEXT, max_size=3), max_size=4).map(
    lambda d: {**d, "sequence": 3, "bytes": 10, "entries": []})
_JOURNAL = st.builds(
    Journal,
    transaction_id=st.just("20250101T000000-0000abcd"),
    entries=st.lists(_ENTRY, max_size=5).map(tuple),
    created_dirs=st.lists(_TEXT, max_size=3).map(tuple),
    removed_dirs=st.lists(st.builds(RemovedDir, _TEXT, _INT, st.tuples(_INT, _INT)), max_size=2).map(tuple),
    intent=st.none() | _TEXT,
    history=_HISTORY,
)


def _reference(journal: Journal) -> bytes:
    """The format, spelled with the standard library alone."""
    text = canonical_json(journal.body())
    assert text == json.dumps(journal.body(), sort_keys=True, separators=(",", ":"), ensure_ascii=True)
    checksum = hashlib.sha256(text.encode("ascii")).hexdigest()
    # Bound to the workspace: its real path between a domain and the body (issue 24).
    message = b"patchtx journal 2\0" + WORKSPACE.encode() + b"\0" + text.encode("ascii")
    mac = hmac.new(user_secret(), message, hashlib.sha256).hexdigest()
    return f'{text[:-1]},"checksum":"{checksum}","mac":"{mac}"}}\n'.encode("ascii")


@given(_JOURNAL)
def test_to_bytes_is_the_canonical_json_of_the_body(journal: Journal) -> None:
    assert journal.to_bytes(WORKSPACE) == _reference(journal)


WORKSPACE = "/work/space"
_TXN = "20250101T000000-0000abcd"


def test_a_written_journal_reads_back_equal() -> None:
    entries = (
        JournalEntry("a/é \"q\".txt", "00" * 32, None, 0o644, None, (0, 0), backup_name(_TXN, 0), "link", None),
        JournalEntry("b.txt", None, "11" * 32, None, 0o755, None, None, None, temp_name(_TXN, 1)),
    )
    journal = Journal("20250101T000000-0000abcd", entries, ("new",), (RemovedDir("old", 0o755, (1, 2)),),
                      intent="why", history={"sequence": 4, "bytes": 12})
    data = journal.to_bytes(WORKSPACE)
    assert data == _reference(journal)
    assert Journal.from_bytes(data, where="test", workspace=WORKSPACE) == journal
    # Valid in its own workspace only.
    with pytest.raises(UntrustedStateError):
        Journal.from_bytes(data, where="test", workspace=WORKSPACE + "2")
