"""Undo: restores the tree exactly, as a new (undoable) transaction; refuses over later edits."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

import pytest

import patchtx
from patchtx import history
from patchtx._record import replace
from patchtx.errors import PatchtxError
from patchtx.txn import commit, recover
from patchtx.txn.journal import Journal
from patchtx.txn.layout import JOURNAL_DIR
from patchtx.txn.retention import KeepHistory

from ..fsops_testing import CrashingFileSystemOps, RecordingFileSystemOps
from ..txn.helpers import Dir, Scenario, build_plan, crash_in_process, index_of, leftovers, make_tree, snapshot
from ..txn.scenarios import ALL, MIXED
from .support import commit_kept, history_folder, logged_ids

REMOVED_PRIVATE_DIR = Scenario(
    name="removed-private-folder",
    tree={
        "private": Dir(0o710),
        "private/inner": Dir(0o700),
        "private/inner/key.txt": (b"k\n", 0o600),
        "x.txt": b"x\n",
    },
    changes={"private/inner/key.txt": None, "x.txt": b"x2\n"},
)
MODE_ONLY = Scenario(
    name="mode-only",
    tree={"run.sh": (b"#!/bin/sh\n", 0o644)},
    changes={"run.sh": b"#!/bin/sh\n"},
    modes={"run.sh": 0o755},
)


@pytest.mark.parametrize("scenario", [*ALL, REMOVED_PRIVATE_DIR, MODE_ONLY], ids=lambda s: s.name)
def test_undo_restores_the_tree_exactly(tmp_path: Path, scenario: Scenario) -> None:
    root = tmp_path / "ws"
    make_tree(root, scenario.tree)
    before = snapshot(root)
    plan = build_plan(root, scenario)
    undone = commit_kept(plan)
    after = snapshot(root)
    assert after != before

    result = history.undo(root)

    assert snapshot(root) == before  # contents, file modes, directories and their modes
    assert result.committed and result.undone == undone
    assert result.transaction_id is not None and result.transaction_id != undone
    assert leftovers(root) == []
    assert logged_ids(root) == [result.transaction_id, undone]  # the undo is itself in the history


@pytest.mark.parametrize("scenario", ALL, ids=lambda s: s.name)
def test_undo_of_an_undo_applies_the_transaction_again(tmp_path: Path, scenario: Scenario) -> None:
    root = tmp_path / "ws"
    make_tree(root, scenario.tree)
    before = snapshot(root)
    commit_kept(build_plan(root, scenario))
    after = snapshot(root)

    first = history.undo(root)
    assert snapshot(root) == before
    second = history.undo(root, first.transaction_id)  # undoing the undo, by its id, is a redo
    assert second.undone == first.transaction_id
    assert snapshot(root) == after
    history.undo(root)  # the redo is in effect: undo takes it
    assert snapshot(root) == before


def _edit(root: Path, path: str, old: str, new: str) -> str | None:
    patch = f"*** Begin Patch\n*** Update File: {path}\n@@\n-{old}\n+{new}\n*** End Patch\n"
    return patchtx.apply_patch(patch, root).transaction_id


def test_undo_is_a_stack_and_redo_puts_back_what_it_took(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("0\n")
    states = ["0\n"]
    edits = []
    for step in range(1, 4):
        edits.append(_edit(tmp_path, "a.txt", str(step - 1), str(step)))
        states.append(f"{step}\n")

    for expected, edit in zip(reversed(states[:-1]), reversed(edits), strict=True):
        result = history.undo(tmp_path)  # each undo goes one further back
        assert result.undone == edit
        assert (tmp_path / "a.txt").read_text() == expected
    with pytest.raises(PatchtxError) as nothing:
        history.undo(tmp_path)
    assert nothing.value.kind == "nothing_to_undo" and "has been undone" in nothing.value.message

    for expected, edit in zip(states[1:], edits, strict=True):
        result = history.redo(tmp_path)  # each redo puts back the next one
        assert result.redone == edit
        assert (tmp_path / "a.txt").read_text() == expected
    with pytest.raises(PatchtxError) as no_redo:
        history.redo(tmp_path)
    assert no_redo.value.kind == "nothing_to_redo"

    history.undo(tmp_path)
    history.undo(tmp_path)
    assert (tmp_path / "a.txt").read_text() == "1\n"
    history.redo(tmp_path)
    assert (tmp_path / "a.txt").read_text() == "2\n"
    _edit(tmp_path, "a.txt", "2", "two")  # a new edit ends what can be redone
    with pytest.raises(PatchtxError) as ended:
        history.redo(tmp_path)
    assert ended.value.kind == "nothing_to_redo"
    history.undo(tmp_path)
    history.undo(tmp_path)  # the redone edit, then the first one
    assert (tmp_path / "a.txt").read_text() == "1\n"
    history.undo(tmp_path)
    assert (tmp_path / "a.txt").read_text() == "0\n"


def test_undo_stacks_read_from_the_log() -> None:
    from patchtx.txn.kept import HistoryEntry

    def entry(name: str, undoes: str | None = None) -> HistoryEntry:
        return HistoryEntry(name, 0, "2026-01-01T00:00:00Z", "A 0, M 1, D 0, R 0", {}, None, undoes, 0, 1, name)

    newest_first = [entry("u3", "r2"), entry("r2", "u1"), entry("u1", "e2"), entry("e2"), entry("e1"),
                    entry("u0", "gone")]
    applied, undone = history.undo_stacks(newest_first)
    assert [e.transaction_id for e in applied] == ["e1"]
    assert [e.transaction_id for e in undone] == ["u3"]  # the edit e1 ended u0


def test_undo_through_the_api_reverses_a_move_and_keeps_the_intent(tmp_path: Path) -> None:
    (tmp_path / "old.py").write_text("def f():\n    return 1\n")
    (tmp_path / "keep.txt").write_text("keep\n")
    before = snapshot(tmp_path)
    applied = patchtx.apply_patch(
        "*** Begin Patch\n*** Update File: old.py\n*** Move to: pkg/new.py\n@@\n-    return 1\n+    return 2\n"
        "*** End Patch",
        tmp_path,
        intent="move f into pkg",
    )
    assert applied.summary == "A 0, M 0, D 0, R 1"

    [entry] = history.log(tmp_path)
    assert (entry.transaction_id, entry.intent, entry.summary) == (applied.transaction_id, "move f into pkg",
                                                                 "A 0, M 0, D 0, R 1")
    undone = history.undo(tmp_path)

    assert undone.summary == "A 0, M 0, D 0, R 1"  # the move back
    assert [(c.kind.value, c.source, c.path) for c in undone.plan.changes] == [("R", "pkg/new.py", "old.py")]
    assert undone.plan.intent == f"undo {applied.transaction_id}: move f into pkg"
    assert snapshot(tmp_path) == before  # pkg/, created by the move, is gone again
    assert history.log(tmp_path)[0].undoes == applied.transaction_id


def test_undo_is_refused_after_an_external_edit_and_writes_nothing(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    make_tree(root, MIXED.tree)
    txn = commit_kept(build_plan(root, MIXED))
    (root / "src" / "app.py").write_bytes(b"print('edited by hand')\n")  # modified by the transaction
    (root / "src" / "new.txt").unlink()  # added by the transaction
    (root / "old" / "inner").mkdir(parents=True)
    (root / "old" / "inner" / "gone.txt").write_bytes(b"back\n")  # deleted by the transaction
    edited = snapshot(root)
    history_before = sorted(p.name for p in history_folder(root).rglob("*"))

    with pytest.raises(PatchtxError) as caught:
        history.undo(root)

    error = caught.value
    assert error.kind == "changed_since_planning" and not error.changed
    assert f"Cannot undo transaction {txn}: 3 files changed since it was committed" in error.message
    for path in ("src/app.py", "src/new.txt", "old/inner/gone.txt"):
        assert path in error.message
    assert sorted(error.to_json()["paths"]) == ["old/inner/gone.txt", "src/app.py", "src/new.txt"]
    assert "Nothing was changed." in error.message
    assert snapshot(root) == edited
    assert sorted(p.name for p in history_folder(root).rglob("*")) == history_before
    assert leftovers(root) == []


def test_undo_is_refused_when_a_file_became_a_directory(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("a\n")
    patchtx.apply_patch("*** Begin Patch\n*** Delete File: a.txt\n*** End Patch", tmp_path)
    (tmp_path / "a.txt").mkdir()
    with pytest.raises(PatchtxError) as caught:
        history.undo(tmp_path)
    assert caught.value.kind == "changed_since_planning"
    assert "a.txt (it exists again (a directory))" in caught.value.message


def test_an_older_transaction_is_undone_by_its_id_prefix(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("a1\n")
    (tmp_path / "b.txt").write_text("b1\n")
    first = patchtx.apply_patch("*** Begin Patch\n*** Update File: a.txt\n@@\n-a1\n+a2\n*** End Patch", tmp_path)
    patchtx.apply_patch("*** Begin Patch\n*** Update File: b.txt\n@@\n-b1\n+b2\n*** End Patch", tmp_path)
    assert first.transaction_id is not None

    history.undo(tmp_path, first.transaction_id[:20])

    assert (tmp_path / "a.txt").read_text() == "a1\n"
    assert (tmp_path / "b.txt").read_text() == "b2\n"


def test_errors_for_an_empty_history_and_an_unknown_id(tmp_path: Path) -> None:
    with pytest.raises(PatchtxError) as empty:
        history.undo(tmp_path)
    assert empty.value.kind == "nothing_to_undo"
    assert not (tmp_path / ".patchtx").exists()  # nothing created, not even the state folder
    assert history.log(tmp_path) == []

    (tmp_path / "a.txt").write_text("a\n")
    patchtx.apply_patch("*** Begin Patch\n*** Delete File: a.txt\n*** End Patch", tmp_path)
    with pytest.raises(PatchtxError) as unknown:
        history.undo(tmp_path, "20000101T000000-00000000")
    assert unknown.value.kind == "unknown_transaction"
    assert "patchtx log" in unknown.value.message
    assert not (tmp_path / "a.txt").exists()


@pytest.mark.parametrize("empty_id", ["", " "])
def test_an_empty_id_is_refused_not_taken_as_a_prefix_of_every_id(tmp_path: Path, empty_id: str) -> None:
    """Every id starts with "": with one transaction in the history, an empty id (a model's
    undo call with the id left blank) undid it."""
    (tmp_path / "a.txt").write_text("a1\n")
    patchtx.apply_patch("*** Begin Patch\n*** Update File: a.txt\n@@\n-a1\n+a2\n*** End Patch", tmp_path)
    with pytest.raises(PatchtxError) as refused:
        history.undo(tmp_path, empty_id)
    assert refused.value.kind == "unknown_transaction" and "empty" in refused.value.message
    assert (tmp_path / "a.txt").read_text() == "a2\n"
    with pytest.raises(PatchtxError) as shown:
        history.show(tmp_path, empty_id)
    assert shown.value.kind == "unknown_transaction"


def test_a_damaged_before_image_is_refused_before_anything_is_written(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("original\n")
    (tmp_path / "b.txt").write_text("b\n")
    patchtx.apply_patch(
        "*** Begin Patch\n*** Update File: a.txt\n@@\n-original\n+new\n*** Delete File: b.txt\n*** End Patch",
        tmp_path,
    )
    record = history.show(tmp_path)
    a_image = next(f.before_image for f in record.files if f.path == "a.txt")
    assert a_image is not None
    (history_folder(tmp_path) / a_image).unlink()  # a link to the old a.txt: replace, not edit, it
    (history_folder(tmp_path) / a_image).write_text("bit rot\n")

    with pytest.raises(PatchtxError) as caught:
        history.undo(tmp_path)

    assert caught.value.kind == "history_damaged"
    assert "a.txt does not match its recorded hash" in caught.value.message
    assert (tmp_path / "a.txt").read_text() == "new\n" and not (tmp_path / "b.txt").exists()


def test_a_dry_run_shows_the_undo_and_writes_nothing(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("one\n")
    patchtx.apply_patch("*** Begin Patch\n*** Update File: a.txt\n@@\n-one\n+two\n*** End Patch", tmp_path)
    after = snapshot(tmp_path)
    entries = history.log(tmp_path)

    result = history.undo(tmp_path, dry_run=True)

    assert result.dry_run and not result.committed
    assert [(t.path, t.before, t.after) for t in result.plan.targets] == [("a.txt", b"two\n", b"one\n")]
    assert snapshot(tmp_path) == after and history.log(tmp_path) == entries


def test_show_records_hashes_and_modes_of_every_path(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    make_tree(root, MIXED.tree)
    plan = build_plan(root, MIXED)
    commit_kept(plan)

    record = history.show(root)

    def sha(data: bytes | None) -> str | None:
        return None if data is None else hashlib.sha256(data).hexdigest()

    recorded = {f.path: (f.before_sha256, f.after_sha256, f.before_mode) for f in record.files}
    assert recorded == {t.path: (sha(t.before), sha(t.after), t.before_mode) for t in plan.targets}
    assert next(f for f in record.files if f.path == "docs/guide.md").after_mode == 0o600
    assert record.created_dirs == ("pkg", "pkg/sub")
    assert [path for path, _mode in record.removed_dirs] == ["old/inner", "old"]
    assert record.entry.bytes == sum(len(t.before) for t in plan.targets if t.before is not None)
    assert record.entry.file_count == len(plan.targets)


def test_the_journal_records_the_intent(tmp_path: Path) -> None:
    root, probe = tmp_path / "ws", tmp_path / "probe"
    make_tree(root, MIXED.tree)
    make_tree(probe, MIXED.tree)
    intent = "bump every version — ünïcode too"
    recording = RecordingFileSystemOps()
    commit(replace(build_plan(probe, MIXED), intent=intent), fs=recording, retention=KeepHistory())
    mark = index_of(recording.log, lambda c: c.op == "rename" and ".kept-" in (c.target or ""))
    plan = replace(build_plan(root, MIXED), intent=intent)

    # Stop right at the commit point: the published journal is on disk, as a crash leaves it.
    assert crash_in_process(lambda fs: commit(plan, fs=fs, retention=KeepHistory()), CrashingFileSystemOps(mark))
    [journal_file] = [p for p in (root / JOURNAL_DIR).iterdir() if p.name.endswith(".journal")]
    journal = Journal.from_bytes(journal_file.read_bytes(), where=journal_file.name,
                                 workspace=os.path.realpath(root))
    assert journal.intent == "bump every version — ünïcode too"
    assert logged_ids(root) == []  # its would-be entry is the uncommitted journal: not listed
    recover(str(root))
    assert logged_ids(root) == []
