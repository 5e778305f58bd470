"""Issue 42 item 5: undo by any unique part of the id (the hex part a git user copies); an undone
transaction said to be undone; a moved workspace told why its history is skipped and what to do."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

import patchtx
from patchtx.errors import PatchtxError
from patchtx.history import redo, undo

PATCHTX = str(Path(sys.executable).parent / "patchtx")
PATCH = "*** Begin Patch\n*** Update File: a.txt\n@@\n-one\n+two\n*** End Patch\n"


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    root = tmp_path / "proj"
    root.mkdir()
    (root / "a.txt").write_text("one\n")
    return root


def test_undo_by_the_hex_part_of_the_id(tree: Path) -> None:
    txn = patchtx.apply_patch(PATCH, tree).transaction_id
    assert txn is not None
    hex_part = txn.rsplit("-", 1)[1]
    done = subprocess.run([PATCHTX, "undo", hex_part], cwd=tree, capture_output=True, text=True,
                          timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith(f"Undid transaction {txn} ")
    assert (tree / "a.txt").read_text() == "one\n"


def test_an_undone_transaction_is_said_to_be_undone(tree: Path) -> None:
    txn = patchtx.apply_patch(PATCH, tree).transaction_id
    assert txn is not None
    undone = undo(tree, txn)
    with pytest.raises(PatchtxError) as refused:
        undo(tree, txn)
    assert refused.value.kind == "nothing_to_undo"
    assert f"Transaction {txn} is already undone (by transaction {undone.transaction_id})" in \
        refused.value.message
    assert "changed since" not in refused.value.message
    redo(tree)  # put back: undoing it again is an undo like any other
    undo(tree, txn)
    assert (tree / "a.txt").read_text() == "one\n"


def test_a_moved_workspace_is_told_why_its_history_is_skipped(tree: Path) -> None:
    patchtx.apply_patch(PATCH, tree)
    moved = tree.with_name("proj2")
    tree.rename(moved)
    done = subprocess.run([PATCHTX, "undo"], cwd=moved, capture_output=True, text=True, timeout=60)
    assert done.returncode != 0
    assert "[nothing_to_undo]" in done.stderr and "history is empty" not in done.stderr
    assert "moved or copied" in done.stderr and "move the workspace back" in done.stderr
    assert "remove .patchtx/journal" in done.stderr
    assert (moved / "a.txt").read_text() == "two\n"
