"""A file with other hard links is updated in place, crash-safe: its original is copied (never
linked) into the journal, a crash at any call rolls back in place, and the links stay shared."""

from __future__ import annotations

import errno
import os
import random
from pathlib import Path

import pytest

from patchtx import history
from patchtx.errors import FilesystemError, PatchtxError
from patchtx.model import Plan
from patchtx.txn import commit, recover
from patchtx.txn.fsops import Call, FileSystemOps

from ..fsops_testing import CrashingFileSystemOps, FailingFileSystemOps, RecordingFileSystemOps
from ..history.support import commit_kept, history_folder
from .helpers import (
    Scenario,
    Snapshot,
    build_plan,
    crash_in_child,
    crash_in_process,
    describe_difference,
    expected_after,
    index_of,
    leftovers,
    make_tree,
    snapshot,
    variant,
)
from .platforms import SimulatedPlatform
from .powerloss import Disk

# Every test here runs on this machine and on a simulated macOS (conftest.each_platform).
pytestmark = pytest.mark.usefixtures("each_platform")

Fast = variant(FileSystemOps, real_sync=False)
Recording = variant(RecordingFileSystemOps, real_sync=False)
Crashing = variant(CrashingFileSystemOps, real_sync=False)
Failing = variant(FailingFileSystemOps, real_sync=False)

LINKED = Scenario(
    name="hard-links",
    tree={
        "a.txt": b"one\ntwo\nthree and a long tail that the update makes shorter\n",
        "src/b.py": b"print('v1')\n",
        "gone.txt": b"deleted, but another name keeps it\n",
    },
    changes={
        "a.txt": b"one\nTWO\n",  # shorter: the in-place write is followed by a truncate
        "src/b.py": b"print('v2')\n",
        "gone.txt": None,
        "new.txt": b"added\n",
    },
    modes={"a.txt": 0o600},
)
# Second names, made after the tree: other name -> the file it shares an inode with.
LINKS = {"other/a-link.txt": "a.txt", "keep/gone-link.txt": "gone.txt"}


def prepare(root: Path) -> None:
    make_tree(root, LINKED.tree)
    for name, existing in LINKS.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        os.link(root / existing, root / name)


def recorded_commit(root: Path) -> tuple[Snapshot, Plan, list[Call]]:
    """A fresh linked tree, its snapshot, the plan, and the calls one whole commit of it makes
    (the tree is then committed: callers prepare it again before each run)."""
    prepare(root)
    before = snapshot(root)
    plan = build_plan(root, LINKED)
    fs = Recording()
    commit(plan, fs=fs)
    return before, plan, fs.log


def after_with_links(before: Snapshot, root: Path) -> Snapshot:
    """The model's tree after the plan, where a name sharing an updated file's inode sees the update."""
    after = expected_after(before, build_plan(root, LINKED))
    for name, existing in LINKS.items():
        if existing in after:
            after[name] = after[existing]
    return after


def assert_linked(root: Path) -> None:
    a, link = os.stat(root / "a.txt"), os.stat(root / "other/a-link.txt")
    assert (a.st_dev, a.st_ino) == (link.st_dev, link.st_ino) and a.st_nlink == 2


def test_an_update_reaches_every_name_of_the_file_and_the_journal_holds_a_copy(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    prepare(root)
    inode = os.stat(root / "a.txt").st_ino
    before = snapshot(root)
    fs = RecordingFileSystemOps()

    report = commit(build_plan(root, LINKED), fs=fs)

    assert snapshot(root) == after_with_links(before, root)
    assert os.stat(root / "a.txt").st_ino == inode
    assert_linked(root)
    assert os.stat(root / "keep/gone-link.txt").st_nlink == 1
    assert "a.txt" in report.written and leftovers(root) == []
    # The originals of both linked files were copied into the journal: the link that preserves
    # a file while it is checked is removed once the check sees the file's other names, before
    # the journal is written.
    journal = index_of(fs.log, lambda c: c.op == "create" and c.path.endswith(".journal.tmp"))
    links = [c.target for c in fs.log[:journal] if c.op == "link" and c.path in ("a.txt", "gone.txt")]
    assert links and all(any(c.op == "unlink" and c.path == link for c in fs.log[:journal]) for link in links)
    copies = [c.path for c in fs.log if c.op == "create" and c.path.endswith(".before")]
    assert len(copies) == 2
    assert [c.op for c in fs.log if c.path == "a.txt" and c.op != "link"][:3] == ["write", "truncate", "fchmod"]
    # ... and made durable (its own fsync, or a syncfs of its filesystem) before the commit mark.
    truncate = index_of(fs.log, lambda c: c.op == "truncate")
    mark = index_of(fs.log, lambda c: c.op == "rename" and (c.target or "").endswith(".committed"))
    assert any(c.op == "syncfs" or (c.op == "fsync" and "a.txt" in c.paths) for c in fs.log[truncate:mark - 1])


def test_crash_at_every_call_of_a_hard_linked_update_then_recover(scratch: Path) -> None:
    root = scratch / "ws"
    prepare(root)
    after = after_with_links(snapshot(root), root)
    before, plan, log = recorded_commit(root)
    assert snapshot(root) == after
    mark = index_of(log, lambda c: c.op == "rename" and (c.target or "").endswith(".committed"))
    assert index_of(log, lambda c: c.op == "truncate") < mark

    for crash_at in range(1, len(log) + 1):
        prepare(root)
        crashing = Crashing(crash_at, how="exit")
        assert crash_in_child(lambda fs: commit(plan, fs=fs), crashing) == crashing.exit_code

        report = recover(str(root), fs=Fast())

        what = f"crash before call {crash_at} ({log[crash_at - 1].op} {log[crash_at - 1].path})"
        expected = before if crash_at <= mark else after
        assert snapshot(root) == expected, what + "\n" + describe_difference(snapshot(root), expected)
        assert leftovers(root) == [], what
        assert all(t.conflicts == () for t in report.transactions), what
        assert_linked(root)


def test_an_error_at_any_call_rolls_back_in_place(scratch: Path) -> None:
    root = scratch / "ws"
    before, plan, log = recorded_commit(root)
    mark = index_of(log, lambda c: c.op == "rename" and (c.target or "").endswith(".committed"))
    for fail_at in range(1, mark + 1):
        prepare(root)
        with pytest.raises(FilesystemError) as caught:
            commit(plan, fs=Failing(fail_at, errno.EIO))
        what = f"EIO at call {fail_at} ({log[fail_at - 1].op} {log[fail_at - 1].path})"
        assert not caught.value.changed, what
        assert snapshot(root) == before, what
        assert leftovers(root) == [], what
        assert_linked(root)


def test_crash_at_every_call_of_recovering_an_in_place_update(scratch: Path) -> None:
    root = scratch / "ws"
    before, plan, log = recorded_commit(root)
    truncate = index_of(log, lambda c: c.op == "truncate")
    runs = 0
    # Crash the commit between the in-place write and its truncation (the file holds neither
    # version), and just after it; then crash recovery at every call, and recover again.
    for commit_crash in (truncate, truncate + 1):
        prepare(root)
        assert crash_in_process(lambda fs: commit(plan, fs=fs), Crashing(commit_crash))
        recording = Recording()
        recover(str(root), fs=recording)
        assert snapshot(root) == before
        assert any(c.op == "write" and c.path == "a.txt" for c in recording.log)
        for recovery_crash in range(1, len(recording.log) + 1):
            prepare(root)
            assert crash_in_process(lambda fs: commit(plan, fs=fs), Crashing(commit_crash))
            assert crash_in_process(lambda fs: recover(str(root), fs=fs), Crashing(recovery_crash))
            recover(str(root), fs=Fast())
            assert snapshot(root) == before, f"commit crash {commit_crash}, recovery crash {recovery_crash}"
            assert leftovers(root) == []
            assert_linked(root)
            runs += 1
    assert runs > 10


@pytest.mark.parametrize("syncfs", [True, False], ids=["syncfs", "fsync-only"])
def test_power_cut_after_every_call_of_a_hard_linked_update(scratch: Path, syncfs: bool,
                                                            each_platform: SimulatedPlatform) -> None:
    if syncfs and each_platform.simulated:
        pytest.skip("the simulated platform has no syncfs")
    root = dest = scratch / "ws"  # (the cut's disk at the commit's own path: journals are bound to their workspace)
    prepare(root)
    before = snapshot(root)
    after = after_with_links(before, root)
    plan = build_plan(root, LINKED)
    disk = Disk(root)
    fs = Recording(allow_syncfs=syncfs)
    commit(plan, fs=fs)
    log = fs.log
    mark = index_of(log, lambda c: c.op == "rename" and (c.target or "").endswith(".committed"))
    mark_durable = index_of(
        log[mark:], lambda c: c.op == "syncfs" or (c.op == "fsync" and ".patchtx/journal" in c.paths))
    rng = random.Random(f"hard-links-{syncfs}")
    cuts = 0
    for done in range(len(log) + 1):  # a cut after ``done`` calls
        if done:
            disk.replay(log[done - 1])
        allowed = [before] if done < mark else [after] if done >= mark_durable else [before, after]
        for choice in disk.states(rng, 10):
            disk.materialize(dest, choice)
            recover(str(dest), fs=Fast())
            what = f"power cut after call {done} ({log[done - 1].op if done else 'start'})"
            assert snapshot(dest) in allowed, what + "\n" + describe_difference(snapshot(dest), *allowed)
            assert leftovers(dest) == [], what
            assert_linked(dest)
            cuts += 1
    assert cuts > 3 * len(log)


def test_the_undo_history_keeps_its_own_copy_and_undo_writes_in_place(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    prepare(root)
    before = snapshot(root)
    commit_kept(build_plan(root, LINKED))
    images = sorted(history_folder(root).glob("*.before"))
    live = {(os.stat(root / p).st_dev, os.stat(root / p).st_ino) for p in ("a.txt", "other/a-link.txt")}
    assert images and all((p.stat().st_dev, p.stat().st_ino) not in live for p in images)
    assert all(p.stat().st_nlink == 1 for p in images)

    history.undo(root)

    assert snapshot(root) == before
    assert_linked(root)
    assert leftovers(root) == []


def _open_descriptors() -> int:
    return len(os.listdir(f"/proc/{os.getpid()}/fd"))


@pytest.mark.skipif(not os.path.isdir("/proc/self/fd"), reason="counts descriptors through /proc")
def test_no_descriptor_is_left_open_by_an_in_place_rewrite_its_roll_back_or_its_recovery(scratch: Path) -> None:
    """Each file rewritten in place is opened for writing: by the commit (and, with a verify
    command, held while the check runs), by the roll back of a failed commit, and by recovery.
    A descriptor left open per file would exhaust a long-lived process (an MCP server) after as
    many edits as its limit; none may be (issue 38: the mutation that drops the close survived)."""
    from patchtx.txn.verify import Verifier

    root = scratch / "ws"
    prepare(root)
    plan = build_plan(root, LINKED)
    open_before = _open_descriptors()
    commit(plan, fs=Fast())
    assert _open_descriptors() == open_before, "after a commit"

    prepare(root)
    open_before = _open_descriptors()
    commit(plan, fs=Fast(), check=Verifier("true", 30))
    assert _open_descriptors() == open_before, "after a verified commit"

    prepare(root)
    open_before = _open_descriptors()
    with pytest.raises(PatchtxError):
        commit(plan, fs=Fast(), check=Verifier("exit 1", 30))
    assert _open_descriptors() == open_before, "after a failed check's roll back"
    assert_linked(root)

    prepare(root)
    truncate = index_of(recorded_commit(root)[2], lambda c: c.op == "truncate")
    prepare(root)
    assert crash_in_process(lambda fs: commit(plan, fs=fs), Crashing(truncate + 1))
    open_before = _open_descriptors()
    recover(str(root), fs=Fast())
    assert _open_descriptors() == open_before, "after recovering an in-place rewrite"
    assert_linked(root)
