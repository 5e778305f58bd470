"""Power cut after every call of a commit (and of a recovery): recovery still reaches before-or-after.

From the recorded calls of a real run, ``powerloss.Disk`` builds the trees a power cut could leave
at each point (unsynced data lost or torn, unsynced directory changes lost; see powerloss.py),
then recovery runs on each. Until the commit mark is made durable the result must be exactly the
before tree or exactly the after tree; before the mark is written, exactly the before tree; once
the mark is durable (commit has returned), exactly the after tree.
"""

from __future__ import annotations

import os
import random
from dataclasses import dataclass
from pathlib import Path

import pytest

from patchtx.txn import commit, recover
from patchtx.txn.fsops import FileSystemOps

from ..examples import FULL
from ..fsops_testing import CrashingFileSystemOps, RecordingFileSystemOps
from .helpers import (
    Scenario,
    Snapshot,
    build_plan,
    crash_in_process,
    describe_difference,
    expected_after,
    index_of,
    leftovers,
    make_tree,
    snapshot,
    variant,
)
from .powerloss import Disk
from .scenarios import DELETE_THEN_DESCEND, KEPT_DIR, MIXED, ONLY_DELETES

# Disks per cut: "all lost", "all kept", then random mixes; fewer mixes by default, all of them
# with --full-examples (tests/examples.py).
SAMPLES_PER_CUT = 10 if FULL else 6
Fast = variant(FileSystemOps, real_sync=False)


@dataclass
class Case:
    scenario: Scenario
    syncfs: bool = True
    state_folder_exists: bool = True
    hard_links: bool = True
    twins: tuple[tuple[str, str], ...] = ()
    """Hard links made in the tree before the commit (name, other name): the commit rewrites such a
    file in place, and a roll back writes its original back in place."""

    @property
    def id(self) -> str:
        return "-".join(
            [self.scenario.name]
            + ([] if self.syncfs else ["fsync-only"])
            + ([] if self.state_folder_exists else ["first-commit"])
            + ([] if self.hard_links else ["copies"])
            + (["hard-linked"] if self.twins else [])
        )

    def recording(self) -> RecordingFileSystemOps:
        cls = variant(RecordingFileSystemOps, real_sync=False, journal_links=self.hard_links)
        return cls(allow_syncfs=self.syncfs)

    def crashing(self, crash_at: int) -> CrashingFileSystemOps:
        cls = variant(CrashingFileSystemOps, real_sync=False, journal_links=self.hard_links)
        return cls(crash_at, allow_syncfs=self.syncfs)


CASES = [
    Case(MIXED),
    Case(MIXED, syncfs=False),
    Case(MIXED, state_folder_exists=False),
    Case(MIXED, syncfs=False, hard_links=False),
    Case(DELETE_THEN_DESCEND),
    Case(ONLY_DELETES, syncfs=False),
    Case(KEPT_DIR),
]


def prepare(root: Path, case: Case) -> None:
    make_tree(root, case.scenario.tree)
    for name, twin in case.twins:
        os.link(root / name, root / twin)
    if case.state_folder_exists:
        (root / ".patchtx" / "journal").mkdir(parents=True)
        (root / ".patchtx" / ".gitignore").write_bytes(b"*\n")


def check_cut(dest: Path, allowed: list[Snapshot], what: str) -> None:
    recover(str(dest), fs=Fast())
    result = snapshot(dest)
    assert result in allowed, f"{what}:\n" + describe_difference(result, *allowed)
    assert leftovers(dest) == [], what


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.id)
def test_power_cut_after_every_call_of_a_commit(scratch: Path, case: Case) -> None:
    root = dest = scratch / "ws"  # (the cut's disk at the commit's own path: journals are bound to their workspace)
    prepare(root, case)
    before = snapshot(root)
    plan = build_plan(root, case.scenario)
    disk = Disk(root)
    fs = case.recording()
    commit(plan, fs=fs)
    after = snapshot(root)
    assert after == expected_after(before, plan)
    log = fs.log
    mark = index_of(log, lambda c: c.op == "rename" and (c.target or "").endswith(".committed"))
    mark_durable = index_of(
        log[mark:], lambda c: c.op == "syncfs" or (c.op == "fsync" and ".patchtx/journal" in c.paths)
    )
    rng = random.Random(f"{case.id}-commit")
    cuts = 0

    for done in range(len(log) + 1):  # a cut after ``done`` calls
        if done and done not in fs.failed:
            disk.replay(log[done - 1])
        if done < mark:
            allowed = [before]
        elif done >= mark_durable:
            allowed = [after]
        else:
            allowed = [before, after]
        for choice in disk.states(rng, SAMPLES_PER_CUT):
            disk.materialize(dest, choice)
            check_cut(dest, allowed, f"power cut after call {done} ({log[done - 1].op if done else 'start'})")
            cuts += 1
    assert cuts > 3 * len(log)


@pytest.mark.parametrize("case", [Case(MIXED), Case(MIXED, syncfs=False, hard_links=False),
                                  # Without syncfs, only the fsync of the file rewritten in place
                                  # makes its original durable before the journal goes (issue 38).
                                  Case(MIXED, syncfs=False, twins=(("src/app.py", "src/app-twin.py"),))],
                         ids=lambda c: c.id)
def test_power_cut_after_every_call_of_a_recovery(scratch: Path, case: Case) -> None:
    root = dest = scratch / "ws"  # (the cut's disk at the commit's own path: journals are bound to their workspace)
    prepare(root, case)
    before = snapshot(root)
    plan = build_plan(root, case.scenario)
    reference = case.recording()
    commit(plan, fs=reference)
    after = snapshot(root)
    first_touch = index_of(reference.log, lambda c: not c.path.startswith(".patchtx"))
    mark = index_of(reference.log, lambda c: c.op == "rename" and (c.target or "").endswith(".committed"))
    rng = random.Random(f"{case.id}-recovery")

    for commit_crash in range(first_touch, len(reference.log) + 1, 2):
        prepare(root, case)
        assert crash_in_process(lambda fs: commit(plan, fs=fs), case.crashing(commit_crash))
        disk = Disk(root)  # the interrupted commit's state, assumed to have reached the disk
        recording = case.recording()
        recover(str(root), fs=recording)
        expected = before if commit_crash <= mark else after
        assert snapshot(root) == expected
        for done in range(len(recording.log) + 1):
            if done and done not in recording.failed:
                disk.replay(recording.log[done - 1])
            for choice in disk.states(rng, SAMPLES_PER_CUT // 2):
                disk.materialize(dest, choice)
                check_cut(dest, [expected], f"commit crash {commit_crash}, recovery cut after call {done}")
