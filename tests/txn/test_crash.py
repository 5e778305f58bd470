"""Crash at every mutating call of a commit (in a real child process), then recover.

The guarantee: after recovery every path is exactly as before the commit or exactly as after it —
the whole tree equals one of the two snapshots — with no temporary file and no journal left. More
precisely: a crash before the commit mark rolls back, a crash after it rolls forward. Recovery is
then itself crashed at every one of its calls, and run again.

A process crash leaves the kernel's view of the files intact, so fsync changes nothing these tests
can observe: the fs used here numbers and records fsync/syncfs calls (a crash can happen "at" one)
but does not perform them, which keeps thousands of crash runs fast. Power loss, where fsync is
everything, is test_power_loss.py.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import pytest

import patchtx
from patchtx.formats.edits import parse_edits
from patchtx.model import Chunk, Patch, Plan, UpdateFile
from patchtx.txn import commit, recover
from patchtx.txn.fsops import Call, FileSystemOps

from ..fsops_testing import CrashingFileSystemOps, RecordingFileSystemOps
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
    without_identities,
)
from .scenarios import ALL, MIXED

# Every test here runs on this machine and on a simulated macOS (conftest.each_platform).
pytestmark = pytest.mark.usefixtures("each_platform")

Fast = variant(FileSystemOps, real_sync=False)


@dataclass
class Case:
    scenario: Scenario
    state_folder_exists: bool = True
    hard_links: bool = True

    @property
    def id(self) -> str:
        first = "" if self.state_folder_exists else "-first-commit"
        return f"{self.scenario.name}{first}{'' if self.hard_links else '-copies'}"

    def recording(self) -> RecordingFileSystemOps:
        return variant(RecordingFileSystemOps, real_sync=False, journal_links=self.hard_links)()

    def crashing(self, crash_at: int, *, how: str = "raise") -> CrashingFileSystemOps:
        cls = variant(CrashingFileSystemOps, real_sync=False, journal_links=self.hard_links)
        return cls(crash_at, how=how)  # type: ignore[arg-type]


CASES = [Case(s) for s in ALL] + [
    Case(MIXED, state_folder_exists=False),
    Case(MIXED, hard_links=False),
]


@dataclass
class Reference:
    """A clean run of a case: the before and after trees and the numbered calls in between."""

    case: Case
    root: Path
    plan: Plan
    before: Snapshot
    after: Snapshot
    log: list[Call]
    mark: int
    """Index of the call that marks the journal committed."""

    def reset(self) -> None:
        prepare(self.root, self.case)

    def check_recovered(self, crashed_before: int, what: str) -> None:
        result = snapshot(self.root)
        expected = self.before if crashed_before <= self.mark else self.after
        assert result == expected, f"{what}:\n" + describe_difference(result, expected)
        assert leftovers(self.root) == [], what


def prepare(root: Path, case: Case) -> None:
    make_tree(root, case.scenario.tree)
    if case.state_folder_exists:
        (root / ".patchtx" / "journal").mkdir(parents=True)
        (root / ".patchtx" / ".gitignore").write_bytes(b"*\n")


def reference(root: Path, case: Case) -> Reference:
    prepare(root, case)
    before = snapshot(root)
    plan = build_plan(root, case.scenario)
    fs = case.recording()
    commit(plan, fs=fs)
    after = snapshot(root)
    assert after == expected_after(before, plan), describe_difference(after, expected_after(before, plan))
    if not case.hard_links:
        assert any(c.op == "create" and c.path.endswith(".before") for c in fs.log)
    mark = index_of(fs.log, lambda c: c.op == "rename" and (c.target or "").endswith(".committed"))
    return Reference(case, root, plan, before, after, fs.log, mark)


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.id)
def test_crash_at_every_call_of_a_commit_then_recover(scratch: Path, case: Case) -> None:
    _crash_every_commit_call_in_a_child(scratch, case)


def test_crash_at_every_call_of_a_commit_on_the_real_disk(tmp_path: Path) -> None:
    _crash_every_commit_call_in_a_child(tmp_path, Case(MIXED, state_folder_exists=False))


def _crash_every_commit_call_in_a_child(folder: Path, case: Case) -> None:
    ref = reference(folder / "ws", case)

    for crash_at in range(1, len(ref.log) + 1):
        ref.reset()
        fs = case.crashing(crash_at, how="exit")
        code = crash_in_child(lambda fs: commit(ref.plan, fs=fs), fs)
        assert code == fs.exit_code, f"the child did not crash at call {crash_at} (exit {code})"

        report = recover(str(ref.root), fs=Fast())

        call = ref.log[crash_at - 1]
        ref.check_recovered(crash_at, f"crash before call {crash_at} ({call.op} {call.path})")
        assert all(t.conflicts == () for t in report.transactions)
        assert recover(str(ref.root), fs=Fast()).nothing_to_do  # a second run finds nothing


@pytest.mark.parametrize("case", [Case(MIXED), Case(MIXED, hard_links=False), CASES[1]], ids=lambda c: c.id)
def test_crash_at_every_call_of_recovery_then_recover_again(scratch: Path, case: Case) -> None:
    ref = reference(scratch / "ws", case)
    runs = 0

    def crash_commit(crash_at: int) -> None:
        ref.reset()
        assert crash_in_process(lambda fs: commit(ref.plan, fs=fs), case.crashing(crash_at))

    for commit_crash in range(1, len(ref.log) + 1):
        crash_commit(commit_crash)
        recording = case.recording()
        recover(str(ref.root), fs=recording)
        ref.check_recovered(commit_crash, f"commit crash {commit_crash}, clean recovery")
        for recovery_crash in range(1, len(recording.log) + 1):
            crash_commit(commit_crash)
            assert crash_in_process(lambda fs: recover(str(ref.root), fs=fs), case.crashing(recovery_crash))
            recover(str(ref.root), fs=Fast())
            ref.check_recovered(commit_crash, f"commit crash {commit_crash}, recovery crash {recovery_crash}")
            runs += 1
    assert runs > 3 * len(ref.log)  # recovery had many calls to crash at


def test_recovery_crashed_in_a_child_process_recovers_again(scratch: Path) -> None:
    case = Case(MIXED)
    ref = reference(scratch / "ws", case)
    commit_crash = ref.mark - 2  # new contents renamed in, directories not yet synced, no mark
    ref.reset()
    assert crash_in_process(lambda fs: commit(ref.plan, fs=fs), case.crashing(commit_crash))
    recording = case.recording()
    recover(str(ref.root), fs=recording)
    assert len(recording.log) > 10

    for recovery_crash in range(1, len(recording.log) + 1):
        ref.reset()
        assert crash_in_process(lambda fs: commit(ref.plan, fs=fs), case.crashing(commit_crash))
        fs = case.crashing(recovery_crash, how="exit")
        assert crash_in_child(lambda fs: recover(str(ref.root), fs=fs), fs) == fs.exit_code
        recover(str(ref.root), fs=Fast())
        ref.check_recovered(commit_crash, f"recovery crash {recovery_crash} in a child")


def test_crashing_twice_in_a_row_then_committing_again(tmp_path: Path) -> None:
    # A commit crashes, the next commit crashes inside its own recovery, the third succeeds.
    case = Case(MIXED)
    ref = reference(tmp_path / "ws", case)
    ref.reset()
    assert crash_in_process(lambda fs: commit(ref.plan, fs=fs), case.crashing(ref.mark - 1))
    assert crash_in_process(lambda fs: commit(ref.plan, fs=fs), case.crashing(3))
    report = commit(ref.plan)
    assert report.recovery is not None and report.recovery.transactions[0].outcome == "rolled_back"
    assert snapshot(ref.root) == ref.after
    assert leftovers(ref.root) == []


# Every edit protocol plans into the one Plan and is committed by the one commit: the same crash
# guarantee, checked on the plans they make (several files, a new one, an edit inside a line), and
# on a patch that the repair step read (a JSON wrapper, decorated markers, line numbers).
EDIT_TREE = {"src/app.py": b"class App:\n    def run(self):\n        return 1\n",
             "notes.txt": b"alpha\r\nbeta\r\n", "keep.txt": b"untouched\n"}
EDIT_PROTOCOLS = {
    "search-replace": lambda root: patchtx.plan_patch(
        "src/app.py\n<<<<<<< SEARCH\ndef run(self):\n    return 1\n=======\ndef run(self):\n"
        "    return 2\n>>>>>>> REPLACE\n\nnotes.txt\n------- SEARCH\nbeta\n=======\nBETA\n"
        "+++++++ REPLACE\n\nnew/made.txt\n<<<<<<< SEARCH\n=======\nmade\n>>>>>>> REPLACE\n", root),
    "edit-list": lambda root: patchtx.plan_patch(parse_edits([
        {"path": "src/app.py", "old_string": "return 1", "new_string": "return 3"},
        {"path": "notes.txt", "old_string": "alpha\nbe", "new_string": "A\nB"},
        {"path": "new/made.txt", "old_string": "", "new_string": "made\n"}]), root),
    "editor-insert": lambda root: patchtx.plan_patch(Patch((UpdateFile("notes.txt", (Chunk(
        (), (("+", "inserted"),), stated_line=1),)),), format="text"), root),
    "repaired-patch": lambda root: patchtx.plan_patch(json.dumps({"input": (
        "*** Begin Patch ***\n*** Update File: src/app.py\n@@\n 2:     def run(self):\n"
        "-3:         return 1\n+3:         return 4\n*** Update File: notes.txt\n@@\n-beta\n+BETA\n"
        "*** Add File: new/made.txt\n+made\n*** End Patch ***\n")}), root),
}


@pytest.mark.parametrize("protocol", sorted(EDIT_PROTOCOLS))
def test_crash_at_every_call_of_an_edit_protocol_commit_then_recover(scratch: Path, protocol: str) -> None:
    root = scratch / "ws"
    make_tree(root, EDIT_TREE)
    before = snapshot(root)
    plan = without_identities(EDIT_PROTOCOLS[protocol](str(root)))  # committed over rebuilt trees
    assert bool(plan.repairs) == (protocol == "repaired-patch")
    recording = Case(MIXED).recording()
    commit(plan, fs=recording)
    after = snapshot(root)
    assert after == expected_after(before, plan) and after != before
    mark = index_of(recording.log, lambda c: c.op == "rename" and (c.target or "").endswith(".committed"))
    for crash_at in range(1, len(recording.log) + 1):
        make_tree(root, EDIT_TREE)
        fs = Case(MIXED).crashing(crash_at, how="exit")
        assert crash_in_child(lambda fs: commit(plan, fs=fs), fs) == fs.exit_code
        recover(str(root), fs=Fast())
        expected = before if crash_at <= mark else after
        result = snapshot(root)
        assert result == expected, f"crash at call {crash_at}:\n" + describe_difference(result, expected)
        assert leftovers(root) == []
