"""A cancelled call never commits: at every point a call reports its progress (planning, checking,
writing, the verify command), a cancellation set there stops it and the tree is as it was; one set
only after the commit point changes nothing of the result."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import pytest

import patchtx
from patchtx import history
from patchtx.cancel import Cancellation
from patchtx.errors import CancelledError

FILES = 12


def patch() -> str:
    adds = "".join(f"*** Add File: new/f{i}.txt\n+{i}\n" for i in range(FILES))
    return f"*** Begin Patch\n*** Update File: keep.txt\n-one\n+two\n{adds}*** End Patch\n"


def tree_of(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*"))
            if p.is_file() and ".patchtx" not in p.parts}


def points() -> list[tuple[str, int]]:
    """Every (phase, done) a call of ``patch()`` with a verify command reports."""
    return ([("planning", n) for n in range(1, FILES + 2)] + [("checking", n) for n in range(FILES + 2)]
            + [("writing", n) for n in range(FILES + 2)] + [("verifying", 0)])


@pytest.mark.parametrize(("phase", "at"), points())
def test_a_cancel_at_any_progress_point_leaves_the_tree_as_it_was(tmp_path: Path, phase: str, at: int) -> None:
    (tmp_path / "keep.txt").write_text("one\n")
    before = tree_of(tmp_path)
    cancel = Cancellation()
    seen = []

    def progress(name: str, done: int, total: int) -> None:
        seen.append((name, done))
        if (name, done) == (phase, at):
            cancel.cancel("the test cancelled it")

    with pytest.raises(CancelledError) as refused:
        # (a check that lasts long enough to be seen running, where that is the point)
        patchtx.apply_patch(patch(), tmp_path, progress=progress, cancel=cancel,
                            verify="sleep 0.3" if phase == "verifying" else "true")
    assert (phase, at) in seen
    assert refused.value.kind == "cancelled" and not refused.value.changed
    assert refused.value.message.startswith("Stopped while ") and "the test cancelled it" in refused.value.message
    assert tree_of(tmp_path) == before and history.log(tmp_path) == []
    journal = tmp_path / ".patchtx" / "journal"
    assert not journal.exists() or list(journal.iterdir()) == []


def test_a_cancel_stops_a_running_check_and_rolls_back(tmp_path: Path) -> None:
    (tmp_path / "keep.txt").write_text("one\n")
    before = tree_of(tmp_path)
    started = tmp_path.parent / f"{tmp_path.name}-check-started"
    cancel = Cancellation()

    def cancel_once_started() -> None:
        deadline = time.monotonic() + 30
        while not started.exists() and time.monotonic() < deadline:
            time.sleep(0.01)
        cancel.cancel()

    threading.Thread(target=cancel_once_started).start()
    began = time.monotonic()
    with pytest.raises(CancelledError, match="running the check"):
        patchtx.apply_patch(patch(), tmp_path, cancel=cancel, verify=f"touch {started}; sleep 30")
    assert time.monotonic() - began < 20  # stopped, not waited for
    assert tree_of(tmp_path) == before and history.log(tmp_path) == []


def test_a_cancel_after_the_commit_point_changes_nothing(tmp_path: Path) -> None:
    (tmp_path / "keep.txt").write_text("one\n")
    cancel = Cancellation()
    result = patchtx.apply_patch(patch(), tmp_path, cancel=cancel)
    cancel.cancel()
    assert result.committed and (tmp_path / "keep.txt").read_text() == "two\n"
    assert [entry.transaction_id for entry in history.log(tmp_path)] == [result.transaction_id]


def test_an_undo_and_the_editor_take_a_cancellation_too(tmp_path: Path) -> None:
    from patchtx.agents.editor import run_editor

    (tmp_path / "keep.txt").write_text("one\n")
    applied = patchtx.apply_patch(patch(), tmp_path)
    cancel = Cancellation()
    cancel.cancel()
    with pytest.raises(CancelledError):
        history.undo(tmp_path, applied.transaction_id, cancel=cancel)
    with pytest.raises(CancelledError):
        run_editor({"command": "str_replace", "path": "keep.txt", "old_str": "two", "new_str": "three"},
                   tmp_path, cancel=cancel)
    assert (tmp_path / "keep.txt").read_text() == "two\n" and len(history.log(tmp_path)) == 1
