"""Commit behaviour without failures: the model, preconditions, modes/owners, the state folder."""

from __future__ import annotations

import errno
import fcntl
import os
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import pytest

from patchtx.errors import (
    ChangedSincePlanningError,
    ConflictError,
    LockTimeoutError,
    UnsafePathError,
)
from patchtx.model import PathTarget, Plan
from patchtx.txn import commit, recover
from patchtx.txn.fsops import Call
from patchtx.txn.journal import Journal
from patchtx.txn.retention import RetentionContext

from ..fsops_testing import RecordingFileSystemOps
from .helpers import (
    NEW_FILE_MODE,
    Scenario,
    build_plan,
    crash_in_process,
    expected_after,
    leftovers,
    make_tree,
    snapshot,
)
from .platforms import SimulatedPlatform
from .scenarios import ALL, MIXED

# Every test here runs on this machine and on a simulated macOS (conftest.each_platform).
pytestmark = pytest.mark.usefixtures("each_platform")

_T = TypeVar("_T")


@pytest.mark.parametrize("scenario", ALL, ids=lambda s: s.name)
def test_commit_produces_the_modelled_tree(tmp_path: Path, scenario: Scenario) -> None:
    root = tmp_path / "ws"
    make_tree(root, scenario.tree)
    before = snapshot(root)
    plan = build_plan(root, scenario)

    report = commit(plan)

    assert snapshot(root) == expected_after(before, plan)
    assert leftovers(root) == []
    assert (root / ".patchtx" / ".gitignore").read_bytes() == b"*\n"
    assert report.transaction_id is not None
    assert set(report.written) == {t.path for t in plan.targets if t.after is not None}
    assert set(report.removed) == {t.path for t in plan.targets if t.after is None}


def test_report_lists_created_removed_and_kept_dirs(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    make_tree(root, {**MIXED.tree, "keepme/a.txt": b"a\n", "keepme/b.txt": b"b\n"})
    scenario = Scenario("x", {}, dict(MIXED.changes) | {"keepme/a.txt": None})
    plan = build_plan(root, scenario)
    plan = Plan(plan.root, (), plan.targets, plan.remove_dirs + ("keepme",))

    report = commit(plan)

    assert report.created_dirs == ("pkg", "pkg/sub")
    assert report.removed_dirs == ("old/inner", "old")
    assert report.kept_dirs == ("keepme",)
    assert (root / "keepme" / "b.txt").exists()


def test_nothing_to_do_creates_no_state_folder(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    make_tree(root, {"a.txt": b"a\n"})
    report = commit(Plan(str(root), (), ()))
    assert report.transaction_id is None and report.fsyncs == 0
    assert recover(str(root)).nothing_to_do
    assert not (root / ".patchtx").exists()


def _stale(root: Path, edit: str) -> None:
    if edit == "content":
        (root / "src/app.py").write_bytes(b"edited by someone else\n")
    elif edit == "mode":
        os.chmod(root / "src/app.py", 0o600)
    elif edit == "appeared":
        (root / "src/new.txt").write_bytes(b"created meanwhile\n")
    elif edit == "vanished":
        (root / "src/app.py").unlink()
    elif edit == "became-a-folder":
        (root / "src/app.py").unlink()
        (root / "src/app.py").mkdir()
    elif edit == "became-a-fifo":  # opened to be checked: it must not block, nor be read
        (root / "src/app.py").unlink()
        os.mkfifo(root / "src/app.py")


@pytest.mark.parametrize("edit", ["content", "mode", "appeared", "vanished", "became-a-folder", "became-a-fifo"])
def test_changed_since_planning_writes_nothing(tmp_path: Path, edit: str) -> None:
    root = tmp_path / "ws"
    make_tree(root, MIXED.tree)
    plan = build_plan(root, MIXED)
    _stale(root, edit)
    before = snapshot(root)

    with pytest.raises(ChangedSincePlanningError) as caught:
        commit(plan)

    assert caught.value.kind == "changed_since_planning"
    assert "Nothing was changed." in caught.value.message
    assert caught.value.path in ("src/app.py", "src/new.txt")
    assert snapshot(root) == before
    assert leftovers(root) == []


def test_symlinked_folder_swapped_in_after_planning_is_refused(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    outside = tmp_path / "outside"
    make_tree(root, MIXED.tree)
    make_tree(outside, {"app.py": b"print('v1')\n", "tool.sh": (b"#!/bin/sh\necho v1\n", 0o755)})
    plan = build_plan(root, MIXED)
    os.rename(root / "src", tmp_path / "moved-src")
    os.symlink(outside, root / "src")
    before, outside_before = snapshot(root), snapshot(outside)

    with pytest.raises(UnsafePathError) as caught:
        commit(plan)

    assert caught.value.kind == "unsafe_path" and caught.value.path == "src"
    assert snapshot(root) == before and snapshot(outside) == outside_before


def test_symlinked_file_swapped_in_after_planning_is_refused(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    make_tree(root, MIXED.tree)
    plan = build_plan(root, MIXED)
    target = tmp_path / "elsewhere.txt"
    target.write_bytes(b"readme\n")
    (root / "README.md").unlink()
    os.symlink(target, root / "README.md")

    with pytest.raises(UnsafePathError):
        commit(plan)
    assert target.read_bytes() == b"readme\n"
    assert leftovers(root) == []


@pytest.mark.parametrize("path", ["../escape.txt", "/etc/passwd", "a/./b", "a//b", ".patchtx/journal/x", ""])
def test_malformed_plan_paths_are_refused_before_anything_is_created(tmp_path: Path, path: str) -> None:
    root = tmp_path / "ws"
    make_tree(root, {"a.txt": b"a\n"})
    with pytest.raises(UnsafePathError):
        commit(Plan(str(root), (), (PathTarget(path, None, b"x"),)))
    assert not (root / ".patchtx").exists()


def test_a_path_listed_twice_is_refused(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    make_tree(root, {"a.txt": b"a\n"})
    targets = (PathTarget("b.txt", None, b"1"), PathTarget("b.txt", None, b"2"))
    with pytest.raises(ConflictError):
        commit(Plan(str(root), (), targets))
    assert not (root / "b.txt").exists()


def test_modes_new_default_kept_and_changed(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    make_tree(root, {"run.sh": (b"v1\n", 0o750), "private": (b"v1\n", 0o644)})
    plan = Plan(
        str(root),
        (),
        (
            PathTarget("new.txt", None, b"n\n"),
            PathTarget("new.sh", None, b"n\n", None, 0o755),
            PathTarget("run.sh", b"v1\n", b"v2\n", 0o750, None),  # None: keep the current mode
            PathTarget("private", b"v1\n", b"v2\n", 0o644, 0o600),
        ),
    )
    commit(plan)
    modes = {name: (root / name).stat().st_mode & 0o7777 for name in ("new.txt", "new.sh", "run.sh", "private")}
    assert modes == {"new.txt": NEW_FILE_MODE, "new.sh": 0o755, "run.sh": 0o750, "private": 0o600}


def test_owner_is_kept_when_running_as_root(tmp_path: Path) -> None:
    if os.geteuid() != 0:
        pytest.skip("only root can give a file another owner")
    root = tmp_path / "ws"
    make_tree(root, {"owned.txt": (b"v1\n", 0o4755)})
    os.chown(root / "owned.txt", 1234, 5678)
    os.chmod(root / "owned.txt", 0o4755)  # chown cleared set-user-ID
    commit(Plan(str(root), (), (PathTarget("owned.txt", b"v1\n", b"v2\n", 0o4755, 0o4755),)))
    st = (root / "owned.txt").stat()
    assert (st.st_uid, st.st_gid, st.st_mode & 0o7777) == (1234, 5678, 0o4755)


def test_user_extended_attributes_are_kept(tmp_path: Path, each_platform: SimulatedPlatform) -> None:
    if each_platform.simulated:
        pytest.skip("the simulated platform's os module has no xattr functions (as on macOS)")
    root = tmp_path / "ws"
    make_tree(root, {"tagged.txt": b"v1\n"})
    try:
        os.setxattr(root / "tagged.txt", "user.patchtx-test", b"kept")
    except OSError as exc:
        if exc.errno in (errno.ENOTSUP, errno.EOPNOTSUPP):
            pytest.skip("this filesystem has no user extended attributes")
        raise
    commit(Plan(str(root), (), (PathTarget("tagged.txt", b"v1\n", b"v2\n", 0o644, 0o644),)))
    assert os.getxattr(root / "tagged.txt", "user.patchtx-test") == b"kept"


def test_trusted_extended_attributes_are_kept_when_running_as_root(tmp_path: Path,
                                                                   each_platform: SimulatedPlatform) -> None:
    if each_platform.simulated:
        pytest.skip("the simulated platform's os module has no xattr functions (as on macOS)")
    if os.geteuid() != 0:
        pytest.skip("trusted.* extended attributes can be read and written by root only")
    root = tmp_path / "ws"
    make_tree(root, {"tagged.txt": b"v1\n"})
    try:
        os.setxattr(root / "tagged.txt", "trusted.patchtx-test", b"kept")
    except OSError as exc:
        if exc.errno in (errno.ENOTSUP, errno.EOPNOTSUPP, errno.EPERM):
            pytest.skip(f"this filesystem or namespace has no trusted extended attributes: {exc}")
        raise
    commit(Plan(str(root), (), (PathTarget("tagged.txt", b"v1\n", b"v2\n", 0o644, 0o644),)))
    assert (root / "tagged.txt").read_bytes() == b"v2\n"
    assert os.getxattr(root / "tagged.txt", "trusted.patchtx-test") == b"kept"


def test_a_hard_link_elsewhere_sees_the_new_contents(tmp_path: Path) -> None:
    # Documented behaviour (docs/guarantees.md): a file with other links is rewritten in place, as
    # Codex and vim do, so every name shows the edit (tests/txn/test_hard_links.py: crash safety).
    root = tmp_path / "ws"
    make_tree(root, {"a.txt": b"v1\n"})
    os.link(root / "a.txt", root / "alias.txt")
    commit(Plan(str(root), (), (PathTarget("a.txt", b"v1\n", b"v2\n", 0o644, 0o644),)))
    assert (root / "a.txt").read_bytes() == b"v2\n"
    assert (root / "alias.txt").read_bytes() == b"v2\n"
    assert os.stat(root / "a.txt").st_ino == os.stat(root / "alias.txt").st_ino


def test_a_leftover_journal_is_recovered_by_the_next_commit(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    make_tree(root, MIXED.tree)
    before = snapshot(root)
    plan = build_plan(root, MIXED)
    assert crash_in_process(lambda fs: commit(plan, fs=fs), 40)
    assert snapshot(root) != before  # half-applied

    other = Plan(str(root), (), (PathTarget("src/keep.txt", b"untouched\n", b"touched\n", 0o644, 0o644),))
    report = commit(other)

    assert report.recovery is not None
    [recovered] = report.recovery.transactions
    assert recovered.outcome == "rolled_back" and recovered.conflicts == ()
    assert snapshot(root) == expected_after(before, other)
    assert leftovers(root) == []


def test_durable_false_makes_no_fsync_at_all(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    make_tree(root, MIXED.tree)
    before = snapshot(root)
    plan = build_plan(root, MIXED)
    fs = RecordingFileSystemOps()

    report = commit(plan, durable=False, fs=fs)  # first commit: the state folder is created too

    assert report.fsyncs == 0 and fs.fsyncs == 0
    assert not [c for c in fs.log if c.op in ("fsync", "syncfs")]
    assert snapshot(root) == expected_after(before, plan)


def _many_files_plan(root: Path, count: int, folders: int) -> Plan:
    spec = {f"d{i % folders}/f{i}.txt": f"old {i}\n".encode() for i in range(count)}
    make_tree(root, spec)
    return build_plan(root, Scenario("many", spec, {p: v.replace(b"old", b"new") for p, v in spec.items()}))


@pytest.mark.parametrize(("count", "folders"), [(1, 1), (2, 2), (3, 3), (12, 4), (40, 40), (300, 30)])
def test_fsync_calls_stay_within_files_plus_four(tmp_path: Path, count: int, folders: int,
                                                 each_platform: SimulatedPlatform) -> None:
    root = tmp_path / "ws"
    plan = _many_files_plan(root, count, folders)
    (root / ".patchtx" / "journal").mkdir(parents=True)
    (root / ".patchtx" / ".gitignore").write_bytes(b"*\n")

    report = commit(plan)

    if each_platform.simulated:
        # No syncfs: every barrier flushes each descriptor (the journal, its folder, the files,
        # their folders, the mark's folder).
        assert report.fsyncs == count + folders + 3
    else:
        assert 1 <= report.fsyncs <= count + 4


class _CountingReads(RecordingFileSystemOps):
    """Counts the reads a commit makes that change nothing (lstat and whole-file reads), by name."""

    def __init__(self) -> None:
        super().__init__()
        self.lstats: list[str] = []
        self.reads: list[str] = []

    def lstat(self, dir_fd: int, name: str) -> os.stat_result | None:
        self.lstats.append(name)
        return super().lstat(dir_fd, name)

    def read_file(self, dir_fd: int, name: str, **options: object) -> Any:
        self.reads.append(name)
        return super().read_file(dir_fd, name, **options)  # type: ignore[arg-type]


def test_a_commit_looks_at_each_planned_file_and_the_state_folder_no_more_than_needed(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    plan = _many_files_plan(root, 3, 1)
    commit(plan)  # the first commit sets up the state folder
    plan = build_plan(root, Scenario("again", {}, {f"d0/f{i}.txt": f"again {i}\n".encode() for i in range(3)}))
    fs = _CountingReads()

    commit(plan, fs=fs)

    # The check under the lock reads each file once, through the link that preserves it, opening
    # it at once (no lstat before: the open file's fstat says what it is, and the bytes read are
    # the before-image's own); the one lstat of each is the last look before its rename.
    assert fs.reads[0] == ".gitignore" and len(fs.reads) == 4
    assert [n.partition(".")[2] for n in fs.reads[1:]] == ["0.before", "1.before", "2.before"]
    assert [n for n in fs.lstats if n.startswith("f")] == ["f0.txt", "f1.txt", "f2.txt"]
    # (Before-images are looked at only by the clean-up, before deleting each: not after linking.)
    assert len([n for n in fs.lstats if n.endswith(".before")]) == 3


def test_the_first_commit_spends_two_more_fsyncs_on_the_state_folder(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    plan = _many_files_plan(root, 1, 1)
    assert commit(plan).fsyncs == 1 + 4 + 2


def test_without_syncfs_every_barrier_fsyncs_each_descriptor(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    plan = _many_files_plan(root, 40, 10)
    fs = RecordingFileSystemOps(allow_syncfs=False)
    report = commit(plan, fs=fs)
    assert not [c for c in fs.log if c.op == "syncfs"]
    # setup 2, journal 2, 40 new files, 10 folders + root? no: only the 10 folders, mark 1
    assert report.fsyncs == 2 + 2 + 40 + 10 + 1


def test_lock_timeout_names_the_lock_file(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    make_tree(root, {"a.txt": b"a\n"})
    commit(Plan(str(root), (), (PathTarget("b.txt", None, b"b\n"),)))  # creates .patchtx/lock
    lock_file = root / ".patchtx" / "lock"
    plan = Plan(str(root), (), (PathTarget("a.txt", b"a\n", b"a2\n", 0o644, 0o644),))
    with open(lock_file, "a") as holder:
        fcntl.flock(holder, fcntl.LOCK_EX)  # another open file description: excludes commit
        started = time.monotonic()
        with pytest.raises(LockTimeoutError) as caught:
            commit(plan, lock_timeout=0.3)
        waited = time.monotonic() - started
    assert 0.3 <= waited < 5
    assert caught.value.kind == "lock_timeout"
    assert str(lock_file) in caught.value.message
    assert "Nothing was changed." in caught.value.message
    assert (root / "a.txt").read_bytes() == b"a\n"


def test_the_retention_hook_keeps_the_journal_as_the_entry_at_no_extra_cost(tmp_path: Path) -> None:
    root, plain = tmp_path / "ws", tmp_path / "plain"
    make_tree(root, MIXED.tree)
    make_tree(plain, MIXED.tree)
    before = snapshot(root)
    plan = build_plan(root, MIXED)
    journal_dir = root / ".patchtx" / "journal"
    seen: list[tuple[str, bool, list[str]]] = []
    history = {"sequence": 7, "bytes": 123, "note": "anything the hook records"}

    class Keep:
        def prepare(self, context: RetentionContext) -> dict[str, object]:
            assert context.plan is plan and context.durable
            assert context.journal.backup_names() and context.journal.history is None
            journal_files = sorted(p.name for p in journal_dir.iterdir() if not p.name.endswith(".before"))
            seen.append(("prepare", snapshot(root) == before, journal_files))
            return history

        def finish(self, context: RetentionContext) -> None:
            kinds = sorted(p.name.partition(".")[2] for p in journal_dir.iterdir() if not p.name.endswith(".before"))
            seen.append(("finish", context.journal.history == history, kinds))

    fs = RecordingFileSystemOps(allow_syncfs=False)
    report = commit(plan, fs=fs, retention=Keep())

    # Asked before the journal is written (the tree untouched, the before-images linked); the
    # journal then records what it answered and, at the commit point, takes the kept name.
    assert seen == [("prepare", True, []), ("finish", True, ["kept-7-123"])]
    assert report.retention_error is None and snapshot(root) == expected_after(before, plan)
    txn = report.transaction_id
    assert txn is not None
    journal = Journal.from_bytes((journal_dir / f"{txn}.kept-7-123").read_bytes(), where="test",
                                 workspace=os.path.realpath(root))
    assert journal.history == history
    assert {p.name for p in journal_dir.iterdir()} == {f"{txn}.kept-7-123", *journal.backup_names()}
    mark = [c for c in fs.log if c.op == "rename" and c.target == f".patchtx/journal/{txn}.kept-7-123"]
    assert len(mark) == 1
    # No file, link or durability call of its own: the same calls as a commit that keeps nothing.
    without = RecordingFileSystemOps(allow_syncfs=False)
    commit(build_plan(plain, MIXED), fs=without)
    kept_ops = [c.op for c in fs.log if c.op not in ("unlink", "unlink_many")]
    plain_ops = [c.op for c in without.log if c.op not in ("unlink", "unlink_many")]
    assert kept_ops == plain_ops and fs.fsyncs == without.fsyncs
    # A later commit's recovery leaves a kept journal alone.
    assert recover(root).transactions == () and (journal_dir / f"{txn}.kept-7-123").is_file()


def test_a_failing_retention_hook_does_not_fail_the_commit(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    make_tree(root, MIXED.tree)
    before = snapshot(root)
    plan = build_plan(root, MIXED)
    finished: list[bool] = []

    class Broken:
        def prepare(self, context: RetentionContext) -> dict[str, object]:
            raise OSError(28, "No space left on device")

        def finish(self, context: RetentionContext) -> None:
            finished.append(True)

    report = commit(plan, retention=Broken())

    assert snapshot(root) == expected_after(before, plan)
    assert report.retention_error is not None and "No space left" in report.retention_error
    assert finished == []
    assert leftovers(root) == []


def test_a_first_commit_whose_gitignore_temporary_is_swept_by_another_process(tmp_path: Path) -> None:
    # Two first commits race: one's recovery (under the lock) sweeps the other's .gitignore
    # temporary, still in flight before its rename, taking it for a crash leftover.
    root = tmp_path / "ws"
    make_tree(root, MIXED.tree)
    before = snapshot(root)
    plan = build_plan(root, MIXED)

    class SweptOnce(RecordingFileSystemOps):
        def _perform(self, call: Call, action: Callable[[], _T]) -> _T:
            if call.op == "rename" and call.target == ".patchtx/.gitignore" and not self.failed:
                os.unlink(root / call.path)
            return super()._perform(call, action)

    fs = SweptOnce()
    commit(plan, fs=fs)

    assert fs.failed  # the first rename did fail
    assert (root / ".patchtx" / ".gitignore").read_bytes() == b"*\n"
    assert snapshot(root) == expected_after(before, plan) and leftovers(root) == []


@pytest.mark.parametrize("then", ["commit", "recover"])
def test_a_gitignore_temporary_beside_a_gitignore_in_place_is_removed(tmp_path: Path, then: str) -> None:
    # Left by a setup whose clean-up the disk refused too, where another process's setup then
    # put .gitignore in place: the state folder is not taken as set up while it is there.
    root = tmp_path / "ws"
    make_tree(root, MIXED.tree)
    plan = build_plan(root, MIXED)
    (root / ".patchtx" / "journal").mkdir(parents=True)
    (root / ".patchtx" / ".gitignore").write_bytes(b"*\n")
    (root / ".patchtx" / ".gitignore.0123abcd.tmp").write_bytes(b"*")
    before = snapshot(root)

    if then == "commit":
        commit(plan)
        assert snapshot(root) == expected_after(before, plan)
    else:
        recover(str(root))
        assert snapshot(root) == before

    assert leftovers(root) == []
    assert sorted(os.listdir(root / ".patchtx")) == [".gitignore", "journal", "lock"]


def test_importing_the_transaction_manager_stays_cheap() -> None:
    code = (
        "import sys, patchtx.txn\n"
        "heavy = [m for m in ('filelock', 'concurrent.futures', 'ctypes', 'hypothesis') if m in sys.modules]\n"
        "print(heavy)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
