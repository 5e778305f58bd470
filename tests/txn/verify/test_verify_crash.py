"""A crash at every step of a verified transaction (its check a real child process), then recovery.

The guarantee (docs/guarantees.md, "The verify step"): whatever the moment of the crash, after
recovery the tree is exactly as before or exactly as after, never between; and never as after when
the check did not pass. The commit runs in a forked child that ``os._exit``s before call k (as
tests/txn/test_crash.py does), for every k, with a passing check and with a failing one (whose roll
back is then crashed at each of its calls too); and a real ``patchtx apply --verify`` process is
SIGKILLed while its check runs.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from patchtx.errors import VerifyFailedError
from patchtx.txn import commit, escrow, recover
from patchtx.txn.fsops import FileSystemOps
from patchtx.txn.verify import Verifier

from ...fsops_testing import CrashingFileSystemOps, RecordingFileSystemOps
from ..helpers import (
    build_plan,
    crash_in_child,
    describe_difference,
    expected_after,
    index_of,
    leftovers,
    make_tree,
    snapshot,
    variant,
)
from ..scenarios import MIXED

Fast = variant(FileSystemOps, real_sync=False)
PASSING = "test -f src/new.txt && grep -q v2 README.md"
FAILING = "echo 'tests: 1 failed' && test -f no-such-file"
# The check deletes the journal (as `git clean -x` does) and, failing, turns a patched file into a
# link out: a crash at any call, its roll back's included, still ends before (issue 38).
CLEANS_AND_FAILS = "rm -rf .patchtx && ln -sf /etc/hostname README.md && exit 1"
CLEANS_AND_PASSES = "rm -rf .patchtx && test -f src/new.txt"


def _prepare(root: Path) -> None:
    make_tree(root, MIXED.tree)
    (root / ".patchtx" / "journal").mkdir(parents=True)
    (root / ".patchtx" / ".gitignore").write_bytes(b"*\n")


def _run(plan: object, fs: FileSystemOps, command: str) -> None:
    commit(plan, fs=fs, check=Verifier(command, 30))  # type: ignore[arg-type]


@pytest.mark.parametrize("command", [PASSING, FAILING, CLEANS_AND_PASSES, CLEANS_AND_FAILS],
                         ids=["check-passes", "check-fails", "check-deletes-the-journal-and-passes",
                              "check-deletes-the-journal-and-fails"])
def test_a_crash_at_every_call_of_a_verified_commit_ends_before_or_after(scratch: Path, command: str) -> None:
    root = scratch / "ws"
    _prepare(root)
    before = snapshot(root)
    plan = build_plan(root, MIXED)
    after = expected_after(before, plan)
    recording = variant(RecordingFileSystemOps, real_sync=False)()
    verifier = Verifier(command, 30)
    passes = command in (PASSING, CLEANS_AND_PASSES)
    if passes:
        commit(plan, fs=recording, check=verifier)
        assert snapshot(root) == after
        mark = index_of(recording.log, lambda c: c.op == "rename" and (c.target or "").endswith(".committed"))
    else:
        with pytest.raises(VerifyFailedError):
            commit(plan, fs=recording, check=verifier)
        assert snapshot(root) == before and leftovers(root) == []
        assert not any((c.target or "").endswith(".committed") for c in recording.log)
        mark = len(recording.log) + 1  # never reached: every crash must end before
    assert verifier.outcome is not None
    # The check ran after every change was in place: the calls before it are the commit's up to
    # its last barrier; a failing check is followed by the roll back's calls.
    calls = len(recording.log)
    assert calls > 20

    outcomes = {"before": 0, "after": 0}
    for crash_at in range(1, calls + 1):
        _prepare(root)
        fs = variant(CrashingFileSystemOps, real_sync=False)(crash_at, how="exit")
        code = crash_in_child(lambda fs: _run(plan, fs, command), fs)
        assert code == fs.exit_code, f"the child did not crash at call {crash_at} (exit {code})"
        report = recover(str(root), fs=Fast())
        result = snapshot(root)
        expected = before if crash_at <= mark else after
        call = recording.log[crash_at - 1]
        assert result == expected, f"crash before call {crash_at} ({call.op} {call.path}):\n" + \
            describe_difference(result, expected)
        assert leftovers(root) == [], crash_at
        assert not os.path.exists(escrow.folder_of(os.path.realpath(root))), crash_at  # its copy outside too
        assert all(t.conflicts == () for t in report.transactions)
        outcomes["before" if expected is before else "after"] += 1
    if not passes:
        assert outcomes == {"before": calls, "after": 0}
    else:
        assert outcomes["before"] > 10 and outcomes["after"] >= 1


def _patch(root: Path) -> Path:
    patch = root.parent / "change.patch"
    patch.write_text("*** Begin Patch\n*** Update File: a.txt\n@@\n-one\n+ONE\n*** Add File: b.txt\n+new\n"
                     "*** Delete File: c.txt\n*** End Patch\n")
    return patch


def _patchtx() -> list[str]:
    return [sys.executable, "-m", "patchtx"]


def _no_process_with(marker: str) -> bool:
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline:
        found = subprocess.run(["pgrep", "-f", marker], capture_output=True).stdout.strip()
        if not found:
            return True
        time.sleep(0.05)
    return False


def _kill_while_checking(tmp_path: Path, check: str) -> tuple[Path, dict[str, object]]:
    """A tree, and ``patchtx apply --verify CHECK`` on it SIGKILLed once the check has touched
    ``running``; returns the root and the tree as it was before."""
    root = tmp_path / "ws"
    root.mkdir()
    (root / "a.txt").write_text("one\n")
    (root / "c.txt").write_text("gone\n")
    before = snapshot(root)
    proc = subprocess.Popen([*_patchtx(), "apply", "--root", str(root), "--verify", check, str(_patch(root))],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 20
    while not (root / "running").exists():
        assert time.monotonic() < deadline and proc.poll() is None, proc.communicate()
        time.sleep(0.02)
    assert (root / "a.txt").read_text() == "ONE\n"  # the change is in place while the check runs
    proc.kill()
    proc.wait()
    assert proc.returncode == -9
    (root / "running").unlink()
    return root, before


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the parent-death signal is Linux's")
def test_sigkill_while_the_check_runs_rolls_back_and_the_check_dies_too(tmp_path: Path) -> None:
    marker = f"sleep 4{os.getpid() % 1000}.5"
    # The check starts a grandchild (the sleep), says it is running, and waits; the test kills
    # patchtx with SIGKILL at that moment.
    root, before = _kill_while_checking(tmp_path, f"(sleep 30; touch late.txt) & touch running; {marker}")
    # The check's whole process group went with patchtx: nothing can write into the tree that
    # recovery puts back.
    assert _no_process_with(marker)
    report = recover(str(root))
    assert [t.outcome for t in report.transactions] == ["rolled_back"]
    assert snapshot(root) == before
    assert leftovers(root) == []
    time.sleep(0.2)
    assert not (root / "late.txt").exists()
    # Nothing reached the undo history: only kept changes are listed.
    from patchtx.history import log

    assert log(str(root)) == []


def test_sigkill_while_the_check_runs_then_recover_and_apply_again(tmp_path: Path) -> None:
    root, before = _kill_while_checking(tmp_path, "touch running; exec sleep 30")
    recovered = subprocess.run([*_patchtx(), "recover", "--root", str(root)], capture_output=True, text=True)
    assert recovered.returncode == 0 and "Rolled back interrupted transaction" in recovered.stdout
    assert snapshot(root) == before
    done = subprocess.run([*_patchtx(), "apply", "--root", str(root), "--json", "--verify", "true",
                           str(_patch(root))], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    import json

    result = json.loads(done.stdout)
    assert result["recovered"] is None
    assert result["verify"]["passed"] is True and result["verify"]["status"] == 0
    assert (root / "a.txt").read_text() == "ONE\n" and not (root / "c.txt").exists()
    assert snapshot(root) != before
