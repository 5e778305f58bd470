"""Retention: bounded by count and bytes, oldest pruned first, configurable, cheap on fsyncs."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

import patchtx
from patchtx import history
from patchtx.errors import PatchtxError
from patchtx.txn import commit, recover
from patchtx.txn.layout import JOURNAL_DIR, JournalListing, parse_kept_kind
from patchtx.txn.retention import KeepHistory

from ..fsops_testing import RecordingFileSystemOps
from ..txn.helpers import make_tree
from .support import commit_kept, history_names, logged_ids, plan_changes


def _edit_in_turn(root: Path, transactions: int, *, size: int = 10, **limits: int) -> list[str]:
    """Transactions each replacing a ``size``-byte file of its own; their ids in order."""
    make_tree(root, {f"f{i}.txt": bytes([65 + i]) * size for i in range(transactions)})
    return [commit_kept(plan_changes(root, {f"f{i}.txt": b"new\n"}), **limits) for i in range(transactions)]


def test_the_count_limit_keeps_the_newest_transactions(tmp_path: Path) -> None:
    ids = _edit_in_turn(tmp_path / "ws", 5, count=3)
    assert logged_ids(tmp_path / "ws") == ids[:-4:-1]  # newest first
    assert history_names(tmp_path / "ws") == sorted(ids[2:])  # nothing left of the pruned ones


def test_the_byte_limit_prunes_oldest_first(tmp_path: Path) -> None:
    # Each transaction keeps a 100-byte before-image: 250 bytes hold two.
    ids = _edit_in_turn(tmp_path / "ws", 4, size=100, max_bytes=250)
    entries = history.log(tmp_path / "ws")
    assert [e.transaction_id for e in entries] == [ids[3], ids[2]]
    assert [e.bytes for e in entries] == [100, 100]
    assert history_names(tmp_path / "ws") == sorted(ids[2:])


def test_an_older_entry_that_no_longer_fits_goes_with_everything_older(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    make_tree(root, {"big.txt": b"B" * 200, "s1.txt": b"1" * 10, "s2.txt": b"2" * 10})
    small_old = commit_kept(plan_changes(root, {"s1.txt": b"x"}), max_bytes=300)
    big = commit_kept(plan_changes(root, {"big.txt": b"x"}), max_bytes=300)
    small_new = commit_kept(plan_changes(root, {"s2.txt": b"x"}), max_bytes=300)
    assert logged_ids(root) == [small_new, big, small_old]  # 220 bytes

    # A new limit of 150 bytes: the big one no longer fits, and the small one behind it goes too
    # (the history is always the newest transactions, never one with a gap).
    newest = commit_kept(plan_changes(root, {"n.txt": b"n"}), max_bytes=150)  # adds: keeps 0 bytes
    assert logged_ids(root) == [newest, small_new]


def test_a_transaction_larger_than_the_byte_limit_is_not_kept(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    make_tree(root, {"small.txt": b"s", "huge.txt": b"H" * 1000})
    small = commit_kept(plan_changes(root, {"small.txt": b"t"}), max_bytes=500)
    keep = KeepHistory(max_bytes=500)
    commit(plan_changes(root, {"huge.txt": None}), retention=keep)
    assert keep.kept is None and keep.pruned == []
    assert logged_ids(root) == [small]
    assert not (root / "huge.txt").exists()


def test_history_count_zero_disables_history_and_empties_it(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("1\n")
    patchtx.apply_patch("*** Begin Patch\n*** Update File: a.txt\n@@\n-1\n+2\n*** End Patch", tmp_path)
    assert len(logged_ids(tmp_path)) == 1

    (tmp_path / "pyproject.toml").write_text("[tool.patchtx]\nhistory-count = 0\n")
    patchtx.apply_patch("*** Begin Patch\n*** Update File: a.txt\n@@\n-2\n+3\n*** End Patch", tmp_path)

    assert logged_ids(tmp_path) == []
    assert history_names(tmp_path) == []
    with pytest.raises(PatchtxError) as caught:
        history.undo(tmp_path)
    assert caught.value.kind == "nothing_to_undo"


def test_pyproject_keys_and_api_arguments_set_the_limits(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text("[tool.patchtx]\nhistory-count = 2\nhistory-bytes = 1000\n")
    (tmp_path / "a.txt").write_text("0\n")
    for n in range(4):
        patchtx.apply_patch(f"*** Begin Patch\n*** Update File: a.txt\n@@\n-{n}\n+{n + 1}\n*** End Patch", tmp_path)
    assert len(logged_ids(tmp_path)) == 2

    # An argument overrides the file, in every entry point that commits.
    patchtx.apply_patch("*** Begin Patch\n*** Update File: a.txt\n@@\n-4\n+5\n*** End Patch", tmp_path,
                        history_count=3)
    with patchtx.Transaction(tmp_path, history_count=4) as tx:
        tx.write_text("a.txt", "6\n")
    assert len(logged_ids(tmp_path)) == 4
    history.undo(tmp_path, history_count=1)
    assert len(logged_ids(tmp_path)) == 1
    assert (tmp_path / "a.txt").read_text() == "5\n"


@pytest.mark.parametrize("value", ["-1", "true", '"20"'])
def test_invalid_history_settings_are_refused(tmp_path: Path, value: str) -> None:
    (tmp_path / "pyproject.toml").write_text(f"[tool.patchtx]\nhistory-count = {value}\n")
    (tmp_path / "a.txt").write_text("1\n")
    with pytest.raises(PatchtxError) as caught:
        patchtx.apply_patch("*** Begin Patch\n*** Update File: a.txt\n@@\n-1\n+2\n*** End Patch", tmp_path)
    assert caught.value.kind == "policy_violation" and "'history-count'" in caught.value.message
    assert (tmp_path / "a.txt").read_text() == "1\n"


def test_keeping_history_adds_no_barrier_and_no_fsync_without_durability(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    make_tree(root, {"a.txt": b"a", "b.txt": b"b"})
    commit_kept(plan_changes(root, {"a.txt": b"A"}), count=1)
    without = RecordingFileSystemOps(allow_syncfs=False)
    commit(plan_changes(root, {"a.txt": b"AA"}), fs=without)  # no history kept, none pruned
    kept = RecordingFileSystemOps(allow_syncfs=False)
    commit(plan_changes(root, {"b.txt": b"B"}), fs=kept, retention=KeepHistory(count=1))  # prunes one

    def barriers(fs: RecordingFileSystemOps) -> list[list[str]]:
        """The paths made durable, barrier by barrier, transaction ids masked."""
        return [[re.sub(r"\d{8}T\d{6}-[0-9a-f]{8}", "TXN", p) for p in c.paths]
                for c in fs.log if c.op in ("fsync", "syncfs")]

    # The kept journal is the entry: the same barriers, on the same descriptors, as without history
    # (the prune's rename rides on the barrier that publishes the journal, in the same folder).
    assert barriers(kept) == barriers(without) and kept.fsyncs == without.fsyncs == 5
    [txn] = logged_ids(root)

    quiet = RecordingFileSystemOps()
    commit(plan_changes(root, {"b.txt": b"BB"}), fs=quiet, durable=False, retention=KeepHistory(count=1))
    assert barriers(quiet) == [] and quiet.fsyncs == 0
    assert logged_ids(root) != [txn] and len(logged_ids(root)) == 1


def test_kept_journal_names_parse_one_way_only() -> None:
    assert parse_kept_kind("kept-12-3456") == (12, 3456)
    assert parse_kept_kind("kept-0-0") == (0, 0)
    for other in ("kept-012-1", "kept-1-01", "kept-1", "kept--1", "kept-1-2-3", "kept-a-1", "committed", "3.before"):
        assert parse_kept_kind(other) is None, other


def has_unfinished_work(names: list[str]) -> bool:
    return JournalListing(names).has_unfinished_work


def test_only_kept_entries_let_a_commit_skip_recovery() -> None:
    txn, other = "20250101T000000-0000abcd", "20250101T000001-0000abce"
    entry = [f"{txn}.kept-1-8", f"{txn}.0.before"]
    assert not has_unfinished_work([]) and not has_unfinished_work(entry)
    many = [f"{txn}.{n}.before" for n in range(300)]  # the listing the C path takes
    assert not has_unfinished_work([*entry, *many])
    for leftover in (f"{other}.journal", f"{other}.0.before", f"{other}.pruned", f"{other}.committed", "notes.txt"):
        assert has_unfinished_work([*entry, leftover]), leftover
        assert has_unfinished_work([*entry, *many, leftover]), leftover


def test_a_damaged_or_misnamed_kept_journal_is_not_listed_and_not_touched(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    make_tree(root, {"a.txt": b"a", "b.txt": b"b"})
    first = commit_kept(plan_changes(root, {"a.txt": b"A"}))
    second = commit_kept(plan_changes(root, {"b.txt": b"B"}))
    journal_dir = root / JOURNAL_DIR
    [first_name] = [p for p in journal_dir.iterdir() if p.name.startswith(f"{first}.kept-")]
    [second_name] = [p for p in journal_dir.iterdir() if p.name.startswith(f"{second}.kept-")]
    first_name.write_bytes(first_name.read_bytes().replace(b'"a.txt"', b'"z.txt"'))  # checksum fails
    second_name.rename(journal_dir / f"{second}.kept-9-1")  # disagrees with what it records
    assert logged_ids(root) == []
    names = sorted(p.name for p in journal_dir.iterdir())
    assert recover(root).transactions == () and sorted(p.name for p in journal_dir.iterdir()) == names
    third = commit_kept(plan_changes(root, {"a.txt": b"AA"}))
    assert logged_ids(root) == [third]
