"""Injected OS errors at every call index: a clear error, and the tree exactly as it was.

A failing call makes the commit roll back and raise FilesystemError (kind "io_error", the errno's
name and meaning in the message, "Nothing was changed."), except where a failure cannot hurt: a
journal hard link refused with EXDEV (the original is copied instead), and the clean-up after the
commit point (the commit stands; the next recovery finishes the clean-up).
"""

from __future__ import annotations

import errno
from pathlib import Path

import pytest

from patchtx.errors import FilesystemError, PatchtxError
from patchtx.model import PathTarget, Plan
from patchtx.txn import commit, recover
from patchtx.txn.fsops import Call, FileSystemOps

from ..fsops_testing import FailingFileSystemOps, RecordingFileSystemOps
from .helpers import (
    Scenario,
    build_plan,
    describe_difference,
    expected_after,
    index_of,
    leftovers,
    make_tree,
    snapshot,
    variant,
)
from .platforms import SimulatedPlatform
from .scenarios import DELETE_THEN_DESCEND, MIXED

# Every test here runs on this machine and on a simulated macOS (conftest.each_platform).
pytestmark = pytest.mark.usefixtures("each_platform")

Fast = variant(FileSystemOps, real_sync=False)
Failing = variant(FailingFileSystemOps, real_sync=False)

ERRORS = {
    errno.ENOSPC: "disk full",
    errno.EIO: "I/O error",
    errno.EACCES: "permission denied",
    errno.EXDEV: "cross-device link",
}


def prepare(root: Path, scenario: Scenario, *, state_folder: bool) -> None:
    make_tree(root, scenario.tree)
    if state_folder:
        (root / ".patchtx" / "journal").mkdir(parents=True)
        (root / ".patchtx" / ".gitignore").write_bytes(b"*\n")


def reference_log(root: Path, scenario: Scenario, *, state_folder: bool) -> tuple[Plan, list[Call], int]:
    prepare(root, scenario, state_folder=state_folder)
    plan = build_plan(root, scenario)
    fs = variant(RecordingFileSystemOps, real_sync=False)()
    commit(plan, fs=fs)
    mark = index_of(fs.log, lambda c: c.op == "rename" and (c.target or "").endswith(".committed"))
    mark_durable = index_of(fs.log[mark:], lambda c: c.op in ("fsync", "syncfs"))
    return plan, fs.log, mark_durable


def assert_clean_failure(exc: PatchtxError, code: int) -> None:
    assert isinstance(exc, FilesystemError), exc
    assert exc.kind == "io_error"
    assert exc.details["errno"] == errno.errorcode[code]
    assert ERRORS[code] in exc.message
    assert "Nothing was changed." in exc.message
    assert not exc.changed


@pytest.mark.parametrize("code", list(ERRORS), ids=lambda c: errno.errorcode[c])
@pytest.mark.parametrize(
    ("scenario", "state_folder"),
    [(MIXED, True), (MIXED, False), (DELETE_THEN_DESCEND, True)],
    ids=["mixed", "mixed-first-commit", "file-becomes-folder"],
)
def test_one_failing_call_at_every_index(scratch: Path, scenario: Scenario, state_folder: bool, code: int) -> None:
    root = scratch / "ws"
    plan, log, mark_durable = reference_log(root, scenario, state_folder=state_folder)
    prepare(root, scenario, state_folder=state_folder)
    before = snapshot(root)
    after = expected_after(before, plan)
    failed_ops = set()

    for fail_at in range(1, len(log) + 1):
        prepare(root, scenario, state_folder=state_folder)
        fs = Failing(fail_at, code)
        what = f"{errno.errorcode[code]} at call {fail_at} ({log[fail_at - 1].op} {log[fail_at - 1].path})"
        try:
            report = commit(plan, fs=fs)
        except PatchtxError as exc:
            assert fail_at <= mark_durable, what
            assert_clean_failure(exc, code)
            assert snapshot(root) == before, what + "\n" + describe_difference(snapshot(root), before)
            assert leftovers(root) == [], what
            failed_ops.add(fs.failures[0].op)
            continue
        assert snapshot(root) == after, what
        failed = fs.failures[0]
        copy_fallback = code == errno.EXDEV and failed.op == "link"
        assert copy_fallback or fail_at > mark_durable, what
        if report.cleanup_pending:
            assert recover(str(root), fs=Fast()).transactions[0].outcome == "rolled_forward"
        assert leftovers(root) == [], what
    # Every kind of call was made to fail at least once, fsync included (a refused journal
    # link is not a failure: the original is copied instead).
    expected_ops = {"create", "write", "fsync", "rename", "link", "unlink", "mkdir"}
    if code == errno.EXDEV:
        expected_ops.discard("link")
    assert expected_ops <= failed_ops


@pytest.mark.parametrize("syncfs", [True, False], ids=["syncfs", "fsync-only"])
def test_eio_from_every_durability_call(scratch: Path, syncfs: bool, each_platform: SimulatedPlatform) -> None:
    if syncfs and each_platform.simulated:
        pytest.skip("the simulated platform has no syncfs")
    root = scratch / "ws"
    prepare(root, MIXED, state_folder=True)
    before = snapshot(root)
    plan = build_plan(root, MIXED)
    fs = variant(RecordingFileSystemOps, real_sync=False)(allow_syncfs=syncfs)
    commit(plan, fs=fs)
    sync_calls = [c.index for c in fs.log if c.op in ("fsync", "syncfs")]
    assert len(sync_calls) == 5 and (syncfs == any(c.op == "syncfs" for c in fs.log))

    for fail_at in sync_calls:
        prepare(root, MIXED, state_folder=True)
        with pytest.raises(FilesystemError) as caught:
            commit(plan, fs=Failing(fail_at, errno.EIO, allow_syncfs=syncfs))
        assert_clean_failure(caught.value, errno.EIO)
        assert "flushing to disk" in caught.value.message
        assert snapshot(root) == before and leftovers(root) == []


def test_a_persistent_failure_keeps_the_journal_for_recovery(scratch: Path) -> None:
    root = scratch / "ws"
    plan, log, mark_durable = reference_log(root, MIXED, state_folder=True)
    prepare(root, MIXED, state_folder=True)
    before = snapshot(root)
    after = expected_after(before, plan)
    kept_journal = 0

    for fail_at in range(1, len(log) + 1):
        prepare(root, MIXED, state_folder=True)
        fs = Failing(fail_at, errno.EIO, persistent=True)
        what = f"EIO from call {fail_at} on"
        try:
            commit(plan, fs=fs)
        except FilesystemError as exc:
            assert fail_at <= mark_durable, what
            applied = "applied in full" in exc.message
            if exc.changed:  # the roll back failed too: the journal must say what to undo
                kept_journal += 1
                assert "patchtx recover" in exc.message, what
                # Only the failed durability call of the mark itself leaves a committed journal.
                assert applied == (fail_at == mark_durable), what
                assert applied or "Undoing the partial commit then failed too" in exc.message, what
                assert list((root / ".patchtx" / "journal").iterdir()), what
            else:
                assert snapshot(root) == before, what
        else:
            applied = True
            assert fail_at > mark_durable, what
        recover(str(root), fs=Fast())
        expected = after if applied else before
        assert snapshot(root) == expected, what + "\n" + describe_difference(snapshot(root), expected)
        assert leftovers(root) == [], what
    assert kept_journal > 10


def test_failure_after_the_mark_that_cannot_be_unmarked_reports_the_commit_as_applied(scratch: Path) -> None:
    root = scratch / "ws"
    plan, log, mark_durable = reference_log(root, MIXED, state_folder=True)
    prepare(root, MIXED, state_folder=True)
    after = expected_after(snapshot(root), plan)

    with pytest.raises(FilesystemError) as caught:
        commit(plan, fs=Failing(mark_durable, errno.EIO, persistent=True))

    assert caught.value.changed
    assert "applied in full" in caught.value.message
    assert snapshot(root) == after
    assert recover(str(root), fs=Fast()).transactions[0].outcome == "rolled_forward"
    assert leftovers(root) == []


def test_disk_full_on_a_fake_filesystem(fs: object, each_platform: SimulatedPlatform) -> None:
    """pyfakefs with a size limit: a real ENOSPC wherever the space runs out."""
    if each_platform.simulated:
        pytest.skip("pyfakefs brings its own os module, from which the simulation cannot hide functions")
    from pyfakefs.fake_filesystem import FakeFilesystem

    assert isinstance(fs, FakeFilesystem)
    root = Path("/ws")
    old = {f"d{i}/f{i}.txt": bytes([65 + i]) * 500 for i in range(4)}
    for path, data in old.items():
        fs.create_file(root / path, contents=data)
    plan = Plan(
        str(root),
        (),
        # No modes: pyfakefs 6.3 os.open() of an existing file resets its mode to the open's
        # default 0o777 less the umask, so modes are not meaningful on the fake filesystem.
        tuple(PathTarget(p, d, d * 3) for p, d in sorted(old.items()))
        + (PathTarget("new/big.txt", None, b"x" * 1500),),
    )
    before = snapshot(root)
    outcomes = set()
    for limit in range(2000, 12001, 250):
        fs.set_disk_usage(limit)
        try:
            commit(plan, durable=True, fs=FileSystemOps(allow_syncfs=False))
        except FilesystemError as exc:
            assert_clean_failure(exc, errno.ENOSPC)
            assert _contents(snapshot(root)) == _contents(before), limit
            assert leftovers(root) == [], limit
            outcomes.add("disk full")
        else:
            assert snapshot(root)["new/big.txt"][2] == b"x" * 1500
            assert snapshot(root)["d0/f0.txt"][2] == old["d0/f0.txt"] * 3
            outcomes.add("applied")
            break
    assert outcomes == {"disk full", "applied"}


def _contents(tree: dict[str, tuple[object, ...]]) -> dict[str, object]:
    return {path: entry[-1] if entry[0] == "file" else entry[0] for path, entry in tree.items()}


def test_a_real_failure_is_described_by_the_call_that_raised_it(tmp_path: Path) -> None:
    # The plain layer skips building Call records on success; a failure must still have one.
    fs = FileSystemOps()
    root_fd = fs.open_root(str(tmp_path))
    try:
        fs.mkdir(root_fd, "d")
        with pytest.raises(FileNotFoundError):
            fs.unlink(root_fd, "missing.txt")
    finally:
        fs.close(root_fd)
    assert fs.calls == 2 and fs.last_failure is not None
    call, error = fs.last_failure
    assert (call.index, call.op, call.path) == (2, "unlink", "missing.txt") and isinstance(error, FileNotFoundError)


# What a failing call of the state folder's setup says it was doing (the call's verb).
_SETUP_VERBS = {"mkdir": "creating the directory", "fsync": "flushing to disk", "create": "creating",
                "write": "writing", "rename": "renaming", "unlink": "removing"}


def prepare_state_folder(root: Path, state_folder: str) -> None:
    prepare(root, MIXED, state_folder=False)
    if state_folder == "gitignore-only":  # its journal folder deleted (by a check, or by hand)
        (root / ".patchtx").mkdir()
        (root / ".patchtx" / ".gitignore").write_bytes(b"*\n")


@pytest.mark.parametrize("then", ["recover", "commit"], ids=["then-recover", "then-commit"])
@pytest.mark.parametrize("persistent", [False, True], ids=["once", "from-then-on"])
@pytest.mark.parametrize("state_folder", ["none", "gitignore-only"])
def test_a_failing_state_folder_setup_leaves_no_temporary(scratch: Path, state_folder: str, persistent: bool,
                                                         then: str) -> None:
    # The setup writes .gitignore through a temporary (create, write, rename). A disk that fails
    # at one of its calls, or from it on, must leave that temporary to nothing but the next
    # recovery or commit, which removes it: .gitignore in place (put back by a recovery after an
    # earlier failure, say) must not hide it from them.
    root = scratch / "ws"
    prepare_state_folder(root, state_folder)
    plan = build_plan(root, MIXED)
    recording = variant(RecordingFileSystemOps, real_sync=False)()
    commit(plan, fs=recording)
    # The setup's calls: those before the first in the journal folder (the transaction's own).
    setup_calls = index_of(recording.log, lambda c: any(
        (path or "").startswith(".patchtx/journal/") for path in (c.path, c.target))) - 1
    prepare_state_folder(root, state_folder)
    before = snapshot(root)
    after = expected_after(before, plan)

    for fail_at in range(1, setup_calls + 1):
        prepare_state_folder(root, state_folder)
        fs = Failing(fail_at, errno.EIO, persistent=persistent)
        with pytest.raises(FilesystemError) as caught:
            commit(plan, fs=fs)
        failed = fs.failures[0]
        what = f"EIO {'from' if persistent else 'at'} call {fail_at} ({failed.op} {failed.path})"
        assert_clean_failure(caught.value, errno.EIO)
        # Named by the call that failed, not by a clean-up that failed after it.
        assert f"while {_SETUP_VERBS[failed.op]} {failed.path}" in caught.value.message, what
        assert snapshot(root) == before, what
        if not persistent:  # its own clean-up removed it
            assert leftovers(root) == [], what
        if then == "recover":
            recover(str(root), fs=Fast())
            assert snapshot(root) == before, what
        else:
            commit(plan, fs=Fast())
            assert snapshot(root) == after, what
        assert leftovers(root) == [], what + f", then {then}"
        if (root / ".patchtx").exists():
            assert (root / ".patchtx" / ".gitignore").read_bytes() == b"*\n", what
