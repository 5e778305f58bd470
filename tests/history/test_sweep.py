"""Pruned entries deleted after the answer (``retention.pruned_deleted_later`` and
``recovery.sweep_pruned``, which the MCP server runs between calls).

A commit inside ``pruned_deleted_later`` only renames what it prunes to ``<txn>.pruned``; the sweep
deletes it later. Like every write path, the sweep is crashed before each of its calls and failed
at each: the listed history never changes, no listed entry loses a before-image, and whatever an
interrupted sweep left is deleted by the next sweep or the next commit's recovery, unreported.
"""

from __future__ import annotations

import errno
from pathlib import Path

import pytest

from patchtx.txn import commit
from patchtx.txn.fsops import Call, FileSystemOps
from patchtx.txn.fsops_testing import CrashingFileSystemOps, FailingFileSystemOps, RecordingFileSystemOps
from patchtx.txn.layout import JOURNAL_DIR
from patchtx.txn.recovery import sweep_pruned
from patchtx.txn.retention import KeepHistory, pruned_deleted_later

from ..txn.helpers import crash_in_process, leftovers, make_tree, variant
from .support import assert_listed_entries_are_whole, commit_kept, copy_tree, history_names, logged_ids, plan_changes

Fast = variant(FileSystemOps, real_sync=False)
Recording = variant(RecordingFileSystemOps, real_sync=False)
Crashing = variant(CrashingFileSystemOps, real_sync=False)
Failing = variant(FailingFileSystemOps, real_sync=False)


def _pruned_left(folder: Path) -> tuple[Path, str, list[str]]:
    """A workspace where T0 (a.txt) was pruned by T2 inside ``pruned_deleted_later``: the
    workspace, T0's id and the ids ``log`` lists."""
    root = folder / "ws"
    make_tree(root, {"a.txt": b"a0\n", "b.txt": b"b0\n", "c.txt": b"c0\n"})
    t0 = commit_kept(plan_changes(root, {"a.txt": b"a1\n"}), count=2)
    commit_kept(plan_changes(root, {"b.txt": b"b1\n"}), count=2)
    keep = KeepHistory(count=2)
    with pruned_deleted_later() as later:
        report = commit(plan_changes(root, {"c.txt": b"c1\n"}), retention=keep)
    assert keep.pruned == [t0] and report.retention_error is None and later.left
    return root, t0, logged_ids(root)


def test_a_commit_within_pruned_deleted_later_leaves_its_pruned_entry_to_the_sweep(tmp_path: Path) -> None:
    root, t0, listed = _pruned_left(tmp_path)
    journal = root / JOURNAL_DIR
    assert (journal / f"{t0}.pruned").exists() and (journal / f"{t0}.0.before").exists()
    assert t0 not in listed and len(listed) == 2
    assert sweep_pruned(str(root)) == 1
    assert not any(name.startswith(t0) for name in (p.name for p in journal.iterdir()))
    assert logged_ids(root) == listed and leftovers(root) == []
    assert sweep_pruned(str(root)) == 0  # nothing left: a second sweep finds nothing


def test_the_block_says_whether_a_commit_left_anything_to_delete(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    make_tree(root, {"a.txt": b"a0\n"})
    with pruned_deleted_later() as later:
        commit_kept(plan_changes(root, {"a.txt": b"a1\n"}), count=2)  # nothing to prune yet
    assert not later.left and sweep_pruned(str(root)) == 0


def test_outside_the_block_a_commit_deletes_what_it_prunes(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    make_tree(root, {"a.txt": b"a0\n"})
    for version in range(3):
        commit_kept(plan_changes(root, {"a.txt": b"a%d\n" % (version + 1)}), count=1)
    assert history_names(root) == logged_ids(root) and leftovers(root) == []


def test_the_sweep_leaves_the_pruned_entry_while_another_holds_the_lock(tmp_path: Path) -> None:
    root, t0, listed = _pruned_left(tmp_path)
    from patchtx.txn.dirs import DirectoryHandles
    from patchtx.txn.lock import workspace_lock

    fs = FileSystemOps()
    root_fd = fs.open_root(str(root))
    dirs = DirectoryHandles(fs, root_fd, root=str(root))
    try:
        with workspace_lock(str(root), dirs, 1.0):
            assert sweep_pruned(str(root)) == 0
            assert (root / JOURNAL_DIR / f"{t0}.pruned").exists()
    finally:
        dirs.close_all()
        fs.close(root_fd)
    assert sweep_pruned(str(root)) == 1 and logged_ids(root) == listed


def _sweep_calls(folder: Path) -> tuple[Path, Path, list[Call]]:
    root, _t0, _listed = _pruned_left(folder)
    template = folder / "template"
    copy_tree(root, template)
    recording = Recording()
    assert sweep_pruned(str(root), fs=recording) == 1
    copy_tree(template, root)
    return root, template, list(recording.log)


def _assert_finished_later(root: Path, listed: list[str], what: str) -> None:
    assert logged_ids(root) == listed, what
    assert_listed_entries_are_whole(root)
    # The next commit's recovery deletes what is left, reporting nothing (it was no transaction).
    report = commit(plan_changes(root, {"z.txt": b"z\n"}), retention=KeepHistory(count=3))
    assert report.recovery is None or report.recovery.nothing_to_do, what
    assert history_names(root) == sorted(logged_ids(root)) and leftovers(root) == [], what


def test_a_crash_at_every_call_of_the_sweep(tmp_path: Path) -> None:
    root, template, log = _sweep_calls(tmp_path)
    listed = logged_ids(root)
    assert [call.op for call in log] == ["unlink", "unlink"]  # the before-image, then the pruned journal
    for crash_at in range(1, len(log) + 1):
        copy_tree(template, root)
        what = f"crash before call {crash_at} ({log[crash_at - 1]})"
        assert crash_in_process(lambda fs: sweep_pruned(str(root), fs=fs), Crashing(crash_at)), what
        _assert_finished_later(root, listed, what)


@pytest.mark.parametrize("error", [errno.EIO, errno.EACCES], ids=["EIO", "EACCES"])
def test_an_error_at_every_call_of_the_sweep(tmp_path: Path, error: int) -> None:
    root, template, log = _sweep_calls(tmp_path)
    listed = logged_ids(root)
    for fail_at in range(1, len(log) + 1):
        copy_tree(template, root)
        what = f"{errno.errorcode[error]} at call {fail_at} ({log[fail_at - 1]})"
        assert sweep_pruned(str(root), fs=Failing(fail_at, error)) in (0, 1), what  # never raises
        _assert_finished_later(root, listed, what)
