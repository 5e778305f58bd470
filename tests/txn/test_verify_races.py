"""Someone else acts on a planned file at an exact moment of the commit: after its original is
linked into the journal folder (before it is read through that link), or after the journal is
published (before the file is replaced). Whatever they do, the commit refuses and leaves no link,
journal or temporary file behind, or it commits and the undo history gives back the very bytes
the plan was made from; the other writer's bytes are never overwritten by a roll back.

The checks under the lock open each file at once and read it through its journal link (see
docs/guarantees.md, steps 3-4); these tests run code right after a numbered call to reach the
moments in between, with the journal folder linking (the usual case) and refusing links like
another filesystem would (every original is then read in place and copied)."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from patchtx import history
from patchtx._record import replace
from patchtx.errors import ChangedSincePlanningError, PatchtxError, UnsafePathError
from patchtx.model import Plan
from patchtx.txn import commit
from patchtx.txn.fsops import Call, FileSystemOps

from ..history.support import commit_kept
from .helpers import Scenario, build_plan, leftovers, make_tree, snapshot, variant

TREE = {"a.txt": b"one\ntwo\n", "b.txt": b"bee\n"}
CHANGES: dict[str, bytes | None] = {"a.txt": b"one\nTWO\n", "b.txt": None, "c.txt": b"new\n"}
SCENARIO = Scenario("race", TREE, CHANGES)


def _plan(root: Path) -> Plan:
    """The plan as the planner makes it: each file's inode recorded with its bytes (a test plan
    made once and reused over rebuilt trees, as the crash tests do, records none)."""
    plan = build_plan(root, SCENARIO)
    targets = []
    for target in plan.targets:
        st = (root / target.path).stat() if target.before is not None else None
        targets.append(replace(target, before_identity=None if st is None else (st.st_dev, st.st_ino)))
    return replace(plan, targets=tuple(targets))


def _after(op: str, path: Callable[[Call], bool], act: Callable[[], None], *, links: bool) -> FileSystemOps:
    """A FileSystemOps that runs ``act`` once, right after the first ``op`` call ``path`` accepts."""

    base = variant(FileSystemOps, real_sync=False, journal_links=links)

    class RunsAfter(base):  # type: ignore[valid-type,misc]
        done = False

        def _perform(self, call: Call, action: Callable[[], Any]) -> Any:
            try:
                return super()._perform(call, action)
            finally:
                if not self.done and call.op == op and path(call):
                    self.done = True
                    act()

    return RunsAfter()


def _linking_a(call: Call) -> bool:
    return call.path == "a.txt" and (call.target or "").startswith(".patchtx/journal/")


def _publishing(call: Call) -> bool:
    return (call.target or "").endswith(".journal")


def _rewrite(root: Path) -> Callable[[], None]:
    def act() -> None:
        (root / "a.txt").write_bytes(b"edited by someone else, in place\n")
    return act


def _swap_for_symlink(root: Path, outside: Path) -> Callable[[], None]:
    def act() -> None:
        os.symlink(outside, root / "a.swap")
        os.rename(root / "a.swap", root / "a.txt")
    return act


def _swap_for_fifo(root: Path) -> Callable[[], None]:
    def act() -> None:
        os.mkfifo(root / "a.swap")
        os.rename(root / "a.swap", root / "a.txt")
    return act


def _swap_for_folder(root: Path) -> Callable[[], None]:
    def act() -> None:
        (root / "a.txt").unlink()
        (root / "a.txt").mkdir()
    return act


def _swap_for_copy(root: Path) -> Callable[[], None]:
    """The same bytes in another file renamed over it (an editor's save): a new inode."""
    def act() -> None:
        (root / "a.swap").write_bytes(TREE["a.txt"])
        os.rename(root / "a.swap", root / "a.txt")
    return act


def _swap_for_hard_link(root: Path, outside: Path) -> Callable[[], None]:
    """A hard link to a file outside the root holding the same bytes renamed over it: a file with
    two names now, which a commit would rewrite in place, writing outside the root."""
    def act() -> None:
        os.link(outside, root / "a.swap")
        os.rename(root / "a.swap", root / "a.txt")
    return act


ACTS = ["rewrite", "symlink", "fifo", "folder", "same-bytes-new-file", "hard-link-outside"]


def _act(name: str, root: Path, outside: Path) -> Callable[[], None]:
    return {"rewrite": lambda: _rewrite(root), "symlink": lambda: _swap_for_symlink(root, outside),
            "fifo": lambda: _swap_for_fifo(root), "folder": lambda: _swap_for_folder(root),
            "same-bytes-new-file": lambda: _swap_for_copy(root),
            "hard-link-outside": lambda: _swap_for_hard_link(root, outside)}[name]()


@pytest.mark.parametrize("links", [True, False], ids=["links", "copies"])
@pytest.mark.parametrize("moment", ["planned", "after-link", "after-publish"])
@pytest.mark.parametrize("act", ACTS)
def test_a_file_changed_at_an_exact_moment_is_refused_and_nothing_is_left(
        tmp_path: Path, act: str, moment: str, links: bool) -> None:
    """At every moment, the file in the plan's place is checked to be the file planned against
    (its inode, not only its bytes): another file holding the same bytes is refused too, and a hard
    link to a file outside the root is never written through."""
    root, outside = tmp_path / "ws", tmp_path / "outside.txt"
    outside.write_bytes(TREE["a.txt"])
    make_tree(root, TREE)
    plan = _plan(root)
    if moment == "planned":  # between planning and the commit: before its first call
        _act(act, root, outside)()
        fs = _after("mkdir", lambda call: False, lambda: None, links=links)
        fs.done = True  # type: ignore[attr-defined]
    else:
        when = _linking_a if moment == "after-link" else _publishing
        if moment == "after-link" and not links:
            when = lambda call: call.op == "link" and _linking_a(call)  # noqa: E731 - refused, then read in place
        fs = _after("link" if moment == "after-link" else "rename", when, _act(act, root, outside), links=links)

    try:
        commit(plan, fs=fs)
    except PatchtxError as error:
        failure: PatchtxError | None = error
    else:
        failure = None

    assert fs.done  # type: ignore[attr-defined]
    interfered = snapshot(root)
    assert isinstance(failure, (ChangedSincePlanningError, UnsafePathError)), failure
    assert failure.changed is False and "Nothing was changed." in failure.message
    assert failure.path == "a.txt"
    # The other writer's a.txt stands; b.txt was not deleted, c.txt not added.
    assert interfered["b.txt"] == ("file", 0o644, TREE["b.txt"]) and "c.txt" not in interfered
    if act == "rewrite":
        assert (root / "a.txt").read_bytes() == b"edited by someone else, in place\n"
    assert outside.read_bytes() == TREE["a.txt"]
    assert leftovers(root) == []


@pytest.mark.parametrize("links", [True, False], ids=["links", "copies"])
def test_an_undo_after_a_commit_gives_back_the_planned_bytes_and_refuses_a_file_changed_since(
        tmp_path: Path, links: bool) -> None:
    root = tmp_path / "ws"
    make_tree(root, TREE)
    before = snapshot(root)
    commit_kept(build_plan(root, SCENARIO), fs=variant(FileSystemOps, journal_links=links)())

    (root / "c.txt").write_bytes(b"changed since\n")
    with pytest.raises(ChangedSincePlanningError):
        history.undo(root)
    (root / "c.txt").write_bytes(CHANGES["c.txt"] or b"")

    history.undo(root)

    assert snapshot(root) == before
    assert leftovers(root) == []


@pytest.mark.parametrize("links", [True, False], ids=["links", "copies"])
def test_ctrl_c_while_checking_removes_the_links_already_made(tmp_path: Path, links: bool) -> None:
    root = tmp_path / "ws"
    make_tree(root, TREE)
    before = snapshot(root)

    def interrupt() -> None:
        raise KeyboardInterrupt

    fs = _after("link", lambda call: call.path == "b.txt", interrupt, links=links)
    with pytest.raises(KeyboardInterrupt):
        commit(build_plan(root, SCENARIO), fs=fs)

    assert snapshot(root) == before
    assert leftovers(root) == []


@pytest.mark.parametrize("links", [True, False], ids=["links", "copies"])
def test_a_file_that_cannot_be_read_while_checking_is_named_by_its_own_path(tmp_path: Path, links: bool) -> None:
    """Read through its journal link or in place, a planned file the disk cannot read is a.txt in
    the error (its path field too), not an internal name in the journal folder."""
    from patchtx.errors import FilesystemError
    from patchtx.txn.fsops import join

    class UnreadableDisk(variant(FileSystemOps, journal_links=links)):  # type: ignore[misc]
        def read_file(self, dir_fd: int, name: str, **options: Any) -> Any:
            if name.endswith(".before") or name == "a.txt":
                raise OSError(5, "Input/output error", join(self.path_of(dir_fd), name))
            return super().read_file(dir_fd, name, **options)

    root = tmp_path / "ws"
    make_tree(root, TREE)
    before = snapshot(root)

    with pytest.raises(FilesystemError) as caught:
        commit(build_plan(root, SCENARIO), fs=UnreadableDisk())

    assert caught.value.path == "a.txt" and "(EIO) while reading a.txt." in caught.value.message
    assert "Nothing was changed." in caught.value.message
    assert snapshot(root) == before and leftovers(root) == []


def test_failing_to_look_for_an_interrupted_transaction_says_nothing_was_changed(tmp_path: Path) -> None:
    """Listing the journal folder under the lock fails (EMFILE, as under a small descriptor limit):
    there was nothing to recover and nothing was done, and the error says so (it said "Some files
    were changed", naming a recovery that never was)."""
    from patchtx.errors import FilesystemError

    class NoDescriptorLeft(FileSystemOps):
        def listdir(self, dir_fd: int) -> list[str]:
            if self.path_of(dir_fd) == ".patchtx/journal":
                raise OSError(24, "Too many open files", ".patchtx/journal")
            return super().listdir(dir_fd)

    root = tmp_path / "ws"
    make_tree(root, TREE)
    commit(build_plan(root, Scenario("first", TREE, {"d.txt": b"d\n"})))  # the state folder is set up
    before = snapshot(root)

    with pytest.raises(FilesystemError) as caught:
        commit(build_plan(root, SCENARIO), fs=NoDescriptorLeft())

    assert caught.value.changed is False and "Nothing was changed." in caught.value.message
    assert "too many open files (EMFILE)" in caught.value.message
    assert "look for an interrupted transaction in .patchtx/journal" in caught.value.message
    assert "recover an earlier" not in caught.value.message
    assert snapshot(root) == before and leftovers(root) == []


def test_a_crash_at_every_call_of_a_check_that_fails_half_way_then_recovery(tmp_path: Path) -> None:
    """The check links a.txt's, b.txt's and c.txt's originals, finds c.txt changed and removes the
    links: a crash at any of those calls (before or while cleaning up) leaves the tree as it was,
    and the next recovery leaves no link behind."""
    from patchtx.txn import recover

    from ..fsops_testing import CrashingFileSystemOps, RecordingFileSystemOps

    tree = {"a.txt": b"a\n", "b.txt": b"b\n", "c.txt": b"c\n"}
    scenario = Scenario("stale-third", tree, {"a.txt": b"A\n", "b.txt": None, "c.txt": b"C\n"})

    def stale(root: Path) -> Any:
        make_tree(root, tree)
        plan = build_plan(root, scenario)
        (root / "c.txt").write_bytes(b"changed since planning\n")
        return plan

    root = tmp_path / "ws"
    plan = stale(root)
    before = snapshot(root)
    recording = RecordingFileSystemOps()
    with pytest.raises(ChangedSincePlanningError):
        commit(plan, fs=recording)
    calls = [(call.op, call.path) for call in recording.log]
    assert [op for op, _ in calls].count("link") == 3 and [op for op, _ in calls].count("unlink") == 3

    for crash_at in range(1, len(calls) + 1):
        plan = stale(root)
        with pytest.raises(BaseException) as crashed:
            commit(plan, fs=CrashingFileSystemOps(crash_at))
        assert type(crashed.value).__name__ == "SimulatedCrash", crashed.value
        assert snapshot(root) == before, crash_at
        recover(str(root))
        assert snapshot(root) == before and leftovers(root) == [], crash_at
