"""Crashes and power cuts around the undo history.

* A commit that keeps history and prunes an older entry is crashed before each of its mutating
  calls (and, separately, the power is cut after each one): after recovery, ``log`` lists only
  entries whose before-images are all there, the new entry exactly when the transaction
  committed, each listed entry can still be undone, and the next commit sweeps whatever the
  interrupted prune left.
* An undo commit is crashed before each of its calls (in a child process): the tree is exactly as
  before the undo or exactly as after it, and the history agrees with the tree.
* A commit interrupted at each call is listed exactly when it committed, and the newest committed
  transaction is the one undone.

As in tests/txn/test_crash.py, process-crash runs number fsync calls but do not perform them.
"""

from __future__ import annotations

import errno
import random
import re
from dataclasses import dataclass
from pathlib import Path

import pytest

from patchtx import history
from patchtx.errors import PatchtxError
from patchtx.model import Plan
from patchtx.txn import commit, recover
from patchtx.txn.fsops import Call, FileSystemOps
from patchtx.txn.retention import KeepHistory

from ..fsops_testing import CrashingFileSystemOps, FailingFileSystemOps, RecordingFileSystemOps
from ..txn.helpers import (
    Snapshot,
    build_plan,
    crash_in_child,
    crash_in_process,
    describe_difference,
    index_of,
    leftovers,
    make_tree,
    snapshot,
    variant,
)
from ..txn.powerloss import Disk
from ..txn.scenarios import MIXED
from .support import assert_listed_entries_are_whole, commit_kept, copy_tree, history_names, logged_ids, plan_changes

Fast = variant(FileSystemOps, real_sync=False)
Failing = variant(FailingFileSystemOps, real_sync=False)
Recording = variant(RecordingFileSystemOps, real_sync=False)
Crashing = variant(CrashingFileSystemOps, real_sync=False)

KEEP_TWO = 2  # history-count for the pruning scenario: the new entry and T1 stay, T0 goes


def _is_mark(call: Call) -> bool:
    """The commit point: the journal renamed to <txn>.committed, or kept as <txn>.kept-<seq>-<bytes>."""
    return call.op == "rename" and re.search(r"\.(committed|kept-\d+-\d+)$", call.target or "") is not None


def _is_journal_written(call: Call) -> bool:
    return call.op == "write" and call.path.endswith(".journal.tmp")


def _is_prune(call: Call) -> bool:
    return call.op == "rename" and (call.target or "").endswith(".pruned")


@dataclass
class Pruning:
    """A workspace holding T0 (a.txt) and T1 (b.txt, sub/d.txt), and T2's plan, which prunes T0."""

    template: Path
    root: Path
    t0: str
    t1: str
    plan: Plan
    before: Snapshot
    after: Snapshot
    log: list[Call]

    def reset(self) -> None:
        copy_tree(self.template, self.root)

    def run(self, fs: FileSystemOps) -> None:
        commit(self.plan, fs=fs, retention=KeepHistory(count=KEEP_TWO))

    def index(self, predicate: object) -> int:
        return index_of(self.log, predicate)


def _pruning(folder: Path) -> Pruning:
    # Built where it runs, then kept aside: a journal is valid only in the workspace it was signed for.
    template, root = folder / "template", folder / "ws"
    make_tree(root, {"a.txt": b"a0\n", "b.txt": b"b0\n", "c.txt": b"c0\n", "sub/d.txt": b"d0\n"})
    t0 = commit_kept(plan_changes(root, {"a.txt": b"a1\n"}), count=KEEP_TWO)
    t1 = commit_kept(plan_changes(root, {"b.txt": b"b1\n", "sub/d.txt": None}), count=KEEP_TWO)
    copy_tree(root, template)
    before = snapshot(root)
    plan = plan_changes(root, {"c.txt": b"c1\n", "e/new.txt": b"e\n"})
    recording = Recording()
    commit(plan, fs=recording, retention=KeepHistory(count=KEEP_TWO))
    assert logged_ids(root)[1:] == [t1]
    return Pruning(template, root, t0, t1, plan, before, snapshot(root), recording.log)


def _check_history_after_interruption(ws: Pruning, root: Path, *, committed: bool, what: str) -> None:
    """Listed entries are whole, T2's exactly if it committed, and undoing each of them, newest
    first, restores what it changed."""
    ids = assert_listed_entries_are_whole(root)
    new = [i for i in ids if i not in (ws.t0, ws.t1)]
    assert len(new) == (1 if committed else 0), what
    assert ids == [*new, ws.t1, *([ws.t0] if ws.t0 in ids else [])], f"{what}: newest first"
    for txn in ids:
        history.undo(root, txn, durable=False)
    files = {p: e[2] for p, e in snapshot(root).items() if e[0] == "file"}
    expected = {"a.txt": b"a0\n" if ws.t0 in ids else b"a1\n", "b.txt": b"b0\n", "sub/d.txt": b"d0\n", "c.txt": b"c0\n"}
    assert files == expected, what


def test_crash_at_every_call_of_a_commit_that_prunes(scratch: Path) -> None:
    ws = _pruning(scratch)
    mark, written, pruned = ws.index(_is_mark), ws.index(_is_journal_written), ws.index(_is_prune)
    assert pruned < written < mark  # pruned before the journal that records the new entry

    for crash_at in range(1, len(ws.log) + 1):
        ws.reset()
        call = ws.log[crash_at - 1]
        what = f"crash before call {crash_at} ({call.op} {call.path})"
        assert crash_in_process(ws.run, Crashing(crash_at)), what
        recover(str(ws.root), fs=Fast())
        expected = ws.before if crash_at <= mark else ws.after
        assert snapshot(ws.root) == expected, what + "\n" + describe_difference(snapshot(ws.root), expected)
        assert leftovers(ws.root) == [], what
        assert (ws.t0 in logged_ids(ws.root)) == (crash_at <= pruned), what
        _check_history_after_interruption(ws, ws.root, committed=crash_at > mark, what=what)
        # The next commit deletes what the interrupted one left: pruned or unpublished entries.
        commit_kept(plan_changes(ws.root, {"z.txt": b"z\n"}), count=KEEP_TWO)
        assert history_names(ws.root) == sorted(logged_ids(ws.root)), what


@pytest.mark.parametrize("error", [errno.EIO, errno.ENOSPC], ids=["EIO", "ENOSPC"])
def test_an_error_at_every_call_of_a_commit_that_prunes(scratch: Path, error: int) -> None:
    ws = _pruning(scratch)
    mark = ws.index(_is_mark)
    for fail_at in range(1, len(ws.log) + 1):
        ws.reset()
        call = ws.log[fail_at - 1]
        what = f"{errno.errorcode[error]} at call {fail_at} ({call.op} {call.path})"
        keep = KeepHistory(count=KEEP_TWO)
        try:
            report = commit(ws.plan, fs=Failing(fail_at, error), retention=keep)
        except PatchtxError as failure:
            assert not failure.changed and fail_at <= mark + 1, what  # the mark's own fsync may fail
            assert snapshot(ws.root) == ws.before, what
            assert ws.t1 in logged_ids(ws.root) and keep.kept not in logged_ids(ws.root), what
        else:
            # A failure while keeping the history, or after the commit point, does not fail it.
            assert snapshot(ws.root) == ws.after, what
            new = [i for i in logged_ids(ws.root) if i not in (ws.t0, ws.t1)]
            assert new == ([keep.kept] if keep.kept else []), what  # written in full, or not at all
            assert keep.kept is not None or report.retention_error is not None, what
        assert_listed_entries_are_whole(ws.root)
        # A failed clean-up is finished later; so is deleting the entry pruned before the failure.
        left = leftovers(ws.root)
        pruned_t0 = f".patchtx/journal/{ws.t0}.pruned"
        unfinished = [n for n in left if not (pruned_t0 in left and n.startswith(f".patchtx/journal/{ws.t0}."))]
        assert unfinished == [] or fail_at > mark, what
        commit_kept(plan_changes(ws.root, {"z.txt": b"z\n"}), count=KEEP_TWO)
        assert history_names(ws.root) == sorted(logged_ids(ws.root)), what
        assert leftovers(ws.root) == [], what


def test_power_cut_after_every_call_of_a_commit_that_prunes(scratch: Path) -> None:
    ws = _pruning(scratch)
    dest = ws.root  # (the cut's disk at the commit's own path: journals are bound to their workspace)
    ws.reset()
    disk = Disk(ws.root)
    mark = ws.index(_is_mark)
    mark_durable = index_of(
        ws.log[mark:], lambda c: c.op == "syncfs" or (c.op == "fsync" and ".patchtx/journal" in c.paths)
    )
    rng = random.Random("history-power-cut")
    cuts = 0
    for done in range(len(ws.log) + 1):  # a cut after ``done`` calls
        if done:
            disk.replay(ws.log[done - 1])
        allowed = [ws.before] if done < mark else [ws.after] if done >= mark_durable else [ws.before, ws.after]
        for sample, choice in enumerate(disk.states(rng, 6)):
            disk.materialize(dest, choice)
            what = f"power cut after call {done} ({ws.log[done - 1].op if done else 'start'}), state {sample}"
            recover(str(dest), fs=Fast())
            result = snapshot(dest)
            assert result in allowed, what + "\n" + describe_difference(result, *allowed)
            ids = assert_listed_entries_are_whole(dest)
            assert ws.t1 in ids and (len(ids) > 1 + (ws.t0 in ids)) == (result == ws.after), what
            if sample < 2:  # everything unsynced lost / everything kept: also undo every entry
                _check_history_after_interruption(ws, dest, committed=result == ws.after, what=what)
            cuts += 1
    assert cuts > 3 * len(ws.log)


def test_crash_at_every_call_of_an_undo(scratch: Path) -> None:
    template, root = scratch / "template", scratch / "ws"
    make_tree(root, MIXED.tree)  # (built where it runs: journals are bound to their workspace)
    before_t1 = snapshot(root)
    t1 = commit_kept(build_plan(root, MIXED))
    after_t1 = snapshot(root)
    copy_tree(root, template)
    recording = Recording()
    history.undo(root, fs=recording)
    assert snapshot(root) == before_t1
    mark = index_of(recording.log, _is_mark)

    for crash_at in range(1, len(recording.log) + 1):
        copy_tree(template, root)
        call = recording.log[crash_at - 1]
        what = f"undo crashed before call {crash_at} ({call.op} {call.path})"
        fs = Crashing(crash_at, how="exit")
        assert crash_in_child(lambda fs: history.undo(root, fs=fs), fs) == fs.exit_code, what
        recover(str(root), fs=Fast())
        expected = after_t1 if crash_at <= mark else before_t1
        assert snapshot(root) == expected, what + "\n" + describe_difference(snapshot(root), expected)
        assert leftovers(root) == [], what
        listed = assert_listed_entries_are_whole(root)
        assert listed[-1] == t1 and len(listed) == (2 if crash_at > mark else 1), what
        # Whatever happened, the history still leads back and forth between the two trees (a redo
        # once the undo committed: undo itself goes further back).
        (history.undo if expected == after_t1 else history.redo)(root, durable=False)
        assert snapshot(root) == (before_t1 if expected == after_t1 else after_t1), what


def test_undo_after_a_crash_interrupted_commit(scratch: Path) -> None:
    template, root = scratch / "template", scratch / "ws"
    make_tree(root, {"a.txt": b"a0\n", "b.txt": b"b0\n"})  # (built where it runs, as above)
    before_t1 = snapshot(root)
    t1 = commit_kept(plan_changes(root, {"a.txt": b"a1\n", "b.txt": b"b1\n"}, intent="first"))
    after_t1 = snapshot(root)
    copy_tree(root, template)
    plan = plan_changes(root, {"a.txt": b"a2\n", "n.txt": b"n\n"}, intent="interrupted")
    recording = Recording()
    commit(plan, fs=recording, retention=KeepHistory())
    mark = index_of(recording.log, _is_mark)

    for crash_at in range(1, len(recording.log) + 1):
        copy_tree(template, root)
        what = f"commit crashed before call {crash_at} ({recording.log[crash_at - 1].op})"
        assert crash_in_process(lambda fs: commit(plan, fs=fs, retention=KeepHistory()), Crashing(crash_at)), what
        recover(str(root), fs=Fast())
        entries = history.log(root)
        if crash_at <= mark:  # rolled back: its journal, the would-be entry, went with it
            assert [(e.transaction_id, e.intent) for e in entries] == [(t1, "first")], what
        else:
            assert [e.intent for e in entries] == ["interrupted", "first"], what
        history.undo(root, durable=False)
        assert snapshot(root) == (before_t1 if crash_at <= mark else after_t1), what


def test_a_failed_commit_mark_then_a_power_cut_leaves_a_whole_tree_listed_only_if_after(scratch: Path) -> None:
    # The mark's own fsync fails: the commit un-marks durably before rolling back, so a power cut
    # at any later point cannot keep the mark over a half-rolled-back tree (which the history
    # would then list as committed).
    template, root = scratch / "template", scratch / "ws"
    make_tree(template, {"a.txt": b"a0\n", "b.txt": b"b0\n"})
    changes = {"a.txt": b"a1\n", "b.txt": b"b1\n"}
    probe = scratch / "probe"
    copy_tree(template, probe)
    recording = Recording(allow_syncfs=False)
    commit(plan_changes(probe, changes), fs=recording, retention=KeepHistory())
    mark = index_of(recording.log, _is_mark)
    mark_fsync = next(c.index for c in recording.log if c.index > mark and c.op == "fsync")
    copy_tree(template, root)
    before = snapshot(root)
    disk = Disk(root)
    dest = root  # (the cut's disk at the commit's own path: journals are bound to their workspace)
    failing = Failing(mark_fsync, errno.EIO, allow_syncfs=False)
    with pytest.raises(PatchtxError) as caught:
        commit(plan_changes(root, changes), fs=failing, retention=KeepHistory())
    assert not caught.value.changed and snapshot(root) == before and logged_ids(root) == []
    unmark_sync = next(c.index for c in failing.log if c.index > mark_fsync and c.op == "fsync")
    log = [c for c in failing.log if c.index not in failing.failed]
    rng = random.Random("failed-mark")
    for done in range(len(log) + 1):
        if done:
            disk.replay(log[done - 1])
        for sample, choice in enumerate(disk.states(rng, 8)):
            disk.materialize(dest, choice)
            what = f"power cut after call {done} ({log[done - 1].op if done else 'start'}), state {sample}"
            recover(str(dest), fs=Fast())
            files = {p: e[2] for p, e in snapshot(dest).items() if e[0] == "file"}
            listed = logged_ids(dest)
            if log[done - 1].index >= unmark_sync if done else False:
                assert files == {"a.txt": b"a0\n", "b.txt": b"b0\n"} and listed == [], what
            assert files in ({"a.txt": b"a0\n", "b.txt": b"b0\n"}, changes), what
            assert (listed != []) == (files == changes), what


def test_a_mark_that_can_be_neither_synced_nor_undone_durably_keeps_the_tree_after(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    make_tree(root, {"a.txt": b"a0\n"})
    probe = tmp_path / "probe"
    make_tree(probe, {"a.txt": b"a0\n"})
    recording = Recording(allow_syncfs=False)
    commit(plan_changes(probe, {"a.txt": b"a1\n"}), fs=recording, retention=KeepHistory())
    mark = index_of(recording.log, _is_mark)
    mark_fsync = next(c.index for c in recording.log if c.index > mark and c.op == "fsync")
    # The mark's fsync and the un-marking's fsync (the calls after the rename back) fail.
    failing = Failing(mark_fsync, errno.EIO, persistent=True, allow_syncfs=False)
    with pytest.raises(PatchtxError) as caught:
        commit(plan_changes(root, {"a.txt": b"a1\n"}), fs=failing, retention=KeepHistory())
    assert caught.value.changed and "applied in full" in caught.value.message
    assert (root / "a.txt").read_bytes() == b"a1\n" and len(logged_ids(root)) == 1
