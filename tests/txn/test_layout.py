"""The journal folder's file names: which belong to which transaction, and which are not ours."""

from __future__ import annotations

from patchtx.txn.layout import group_journal_folder


def test_journal_folder_names_are_grouped_by_transaction_and_strangers_left_out() -> None:
    txn = "20250101T000000-0000abcd"
    names = [f"{txn}.journal", f"{txn}.journal.tmp", f"{txn}.committed", f"{txn}.12.before",
             f"{txn}.x.before", f"{txn}..before", f"{txn}.journalx", f"{txn}.committed\n",
             "20250101T000000-0000ABCD.journal", "2025010T000000-0000abcd.journal", "lock", ".gitignore"]
    groups = group_journal_folder(names)
    assert [(g.transaction_id, sorted(g.names)) for g in groups] == [
        (txn, sorted(names[:4]))]
