"""Recovery on its own: damaged journals, unpublished journals, conflicts, reports."""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from patchtx.errors import JournalError
from patchtx.txn import commit, recover
from patchtx.txn.fsops import Call, FileSystemOps
from patchtx.txn.journal import Journal
from patchtx.txn.provenance import sign

from .helpers import (
    build_plan,
    crash_in_process,
    expected_after,
    index_of,
    leftovers,
    make_tree,
    snapshot,
    variant,
)
from .scenarios import MIXED

# Every test here runs on this machine and on a simulated macOS (conftest.each_platform).
pytestmark = pytest.mark.usefixtures("each_platform")

Fast = variant(FileSystemOps, real_sync=False)


def crashed_workspace(root: Path, *, before_mark: bool = True) -> tuple[dict[str, Any], dict[str, Any]]:
    """MIXED crashed with every new file renamed in but the journal not yet marked committed
    (or, ``before_mark=False``, right after the mark); returns the before and after snapshots."""
    make_tree(root, MIXED.tree)
    before = snapshot(root)
    plan = build_plan(root, MIXED)
    from ..fsops_testing import RecordingFileSystemOps

    recording = variant(RecordingFileSystemOps, real_sync=False)()
    commit(plan, fs=recording)
    mark = index_of(recording.log, lambda c: c.op == "rename" and (c.target or "").endswith(".committed"))
    make_tree(root, MIXED.tree)
    assert crash_in_process(lambda fs: commit(plan, fs=fs), mark if before_mark else mark + 1)
    return before, expected_after(before, plan)


def journal_files(root: Path) -> list[Path]:
    return sorted((root / ".patchtx" / "journal").iterdir())


def the_journal(root: Path) -> Path:
    [journal] = [p for p in journal_files(root) if p.suffix in (".journal", ".committed")]
    return journal


def rewrite(journal: Path, change: Callable[[dict[str, Any]], None], *, fix_checksum: bool) -> None:
    body = json.loads(journal.read_text())
    change(body)
    if fix_checksum:  # damaged, but by this user's patchtx: checksum and signature recomputed
        body.pop("checksum")
        body.pop("mac")
        import hashlib

        canonical = json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=True)
        body["checksum"] = hashlib.sha256(canonical.encode()).hexdigest()
        body["mac"] = sign(canonical.encode(), os.path.realpath(journal.parents[2]))
    journal.write_text(json.dumps(body))


def _another_transaction(body: dict[str, Any]) -> None:
    """The journal of another transaction, consistent in itself (its names follow its id)."""
    other = json.loads(json.dumps(body).replace(body["transaction"], "20000101T000000-00000000"))
    body.clear()
    body.update(other)


def _truncate(path: Path, size: int) -> None:
    path.write_bytes(path.read_bytes()[:size])


DAMAGE: dict[str, Callable[[Path], None]] = {
    "checksum mismatch": lambda j: rewrite(j, lambda b: b["entries"][0].update(path="other.txt"), fix_checksum=False),
    "unknown version": lambda j: rewrite(j, lambda b: b.update(version=99), fix_checksum=True),
    "unknown format": lambda j: rewrite(j, lambda b: b.update(format="something-else"), fix_checksum=True),
    "unparseable": lambda j: _truncate(j, 40),
    "malformed content": lambda j: rewrite(j, lambda b: b["entries"][0].update(path="../outside"), fix_checksum=True),
    "describes transaction": lambda j: rewrite(j, _another_transaction, fix_checksum=True),
}


@pytest.mark.parametrize("damage", list(DAMAGE))
def test_a_damaged_journal_is_refused_and_nothing_is_deleted(scratch: Path, damage: str) -> None:
    root = scratch / "ws"
    crashed_workspace(root)
    DAMAGE[damage](the_journal(root))
    tree, files = snapshot(root), {p: p.read_bytes() for p in journal_files(root)}

    with pytest.raises(JournalError) as caught:
        recover(str(root))
    assert caught.value.kind == "journal_damaged"
    assert damage in caught.value.message
    assert ".patchtx/journal/" in caught.value.message

    # The next commit refuses too, rather than acting on a journal it cannot trust.
    with pytest.raises(JournalError):
        commit(build_plan(root, MIXED))
    assert snapshot(root) == tree
    assert {p: p.read_bytes() for p in journal_files(root)} == files


def test_an_unpublished_journal_is_discarded_without_touching_the_tree(scratch: Path) -> None:
    root = scratch / "ws"
    make_tree(root, MIXED.tree)
    before = snapshot(root)
    plan = build_plan(root, MIXED)
    from ..fsops_testing import RecordingFileSystemOps

    recording = variant(RecordingFileSystemOps, real_sync=False)()
    commit(plan, fs=recording)
    publish = index_of(recording.log, lambda c: c.op == "rename" and (c.target or "").endswith(".journal"))
    make_tree(root, MIXED.tree)
    assert crash_in_process(lambda fs: commit(plan, fs=fs), publish)
    names = [p.name for p in journal_files(root)]
    assert any(n.endswith(".journal.tmp") for n in names) and any(n.endswith(".before") for n in names)

    report = recover(str(root))

    [txn] = report.transactions
    assert txn.outcome == "discarded"
    assert snapshot(root) == before and leftovers(root) == []


def test_roll_back_and_roll_forward_reports(scratch: Path) -> None:
    root = scratch / "ws"
    before, after = crashed_workspace(root)
    report = recover(str(root))
    [txn] = report.transactions
    assert txn.outcome == "rolled_back"
    assert set(txn.restored) == {t for t in MIXED.changes if t in MIXED.tree}
    assert set(txn.removed) == {"src/new.txt", "pkg/sub/moved.py"}
    assert txn.removed_dirs == ("pkg/sub", "pkg")
    assert txn.recreated_dirs == ("old", "old/inner")
    assert snapshot(root) == before
    assert "Rolled back interrupted transaction" in report.summary
    assert report.to_json()["transactions"][0]["outcome"] == "rolled_back"

    before, after = crashed_workspace(root, before_mark=False)
    report = recover(str(root))
    assert report.transactions[0].outcome == "rolled_forward"
    assert snapshot(root) == after and leftovers(root) == []
    assert recover(str(root)).summary == "Nothing to recover."


def test_files_changed_after_the_crash_are_left_as_found(scratch: Path) -> None:
    root = scratch / "ws"
    before, _ = crashed_workspace(root)
    (root / "src/new.txt").write_bytes(b"the user kept working here\n")  # added by the crashed commit
    (root / "README.md").write_bytes(b"and here\n")  # replaced by the crashed commit

    report = recover(str(root))

    [txn] = report.transactions
    assert txn.conflicts == ("README.md",)  # existed before: not put back
    assert txn.left_in_place == ("src/new.txt",)  # added: not what the commit wrote, so not deleted
    assert (root / "src/new.txt").read_bytes() == b"the user kept working here\n"
    assert (root / "README.md").read_bytes() == b"and here\n"
    rest = {p: e for p, e in snapshot(root).items() if p not in ("src/new.txt", "README.md")}
    assert rest == {p: e for p, e in before.items() if p != "README.md"}
    assert leftovers(root) == []
    assert "Left as found" in report.summary and "Left in place" in report.summary


def test_what_the_user_wrote_into_a_folder_the_crashed_commit_created_is_kept_and_reported(scratch: Path) -> None:
    """The crashed commit created pkg/ and pkg/sub/ (for pkg/sub/moved.py); the user writes there
    before recovering. Recovery removes the file the commit wrote (it holds the recorded bytes) and
    keeps the rest, with the folders that hold it, naming both: patchtx deletes only what it can
    prove it wrote."""
    root = scratch / "ws"
    before, _ = crashed_workspace(root)
    (root / "pkg/sub/mine.txt").write_bytes(b"mine\n")
    (root / "pkg/notes").mkdir()
    (root / "pkg/notes/n.txt").write_bytes(b"note\n")

    report = recover(str(root))

    [txn] = report.transactions
    assert (root / "pkg/sub/mine.txt").read_bytes() == b"mine\n"
    assert (root / "pkg/notes/n.txt").read_bytes() == b"note\n"
    assert not (root / "pkg/sub/moved.py").exists() and "pkg/sub/moved.py" in txn.removed
    assert txn.left_in_place == ("pkg/notes", "pkg/sub/mine.txt")
    assert txn.kept_dirs == ("pkg/sub", "pkg") and txn.removed_dirs == () and txn.conflicts == ()
    rest = {p: e for p, e in snapshot(root).items() if not p.startswith("pkg")}
    assert rest == before
    assert "Left in place" in report.summary and "pkg/sub/mine.txt" in report.summary
    assert leftovers(root) == []


def test_recovery_without_a_state_folder_creates_nothing(scratch: Path) -> None:
    root = scratch / "ws"
    make_tree(root, {"a.txt": b"a\n"})
    assert recover(str(root)).nothing_to_do
    assert not (root / ".patchtx").exists()


def test_keyboard_interrupt_mid_commit_rolls_back_and_propagates(scratch: Path) -> None:
    root = scratch / "ws"
    make_tree(root, MIXED.tree)
    before = snapshot(root)
    plan = build_plan(root, MIXED)

    class InterruptedAt(FileSystemOps):
        def _perform(self, call: Call, action: Callable[[], Any]) -> Any:
            if call.op == "rename" and not call.path.startswith(".patchtx") and call.index % 2 == 0:
                raise KeyboardInterrupt
            return action()

    with pytest.raises(KeyboardInterrupt):
        commit(plan, fs=InterruptedAt())
    assert snapshot(root) == before and leftovers(root) == []


def test_journal_round_trip_keeps_every_field(scratch: Path) -> None:
    root = scratch / "ws"
    crashed_workspace(root)
    path = the_journal(root)
    workspace = os.path.realpath(root)
    journal = Journal.from_bytes(path.read_bytes(), where=str(path), workspace=workspace)
    assert Journal.from_bytes(journal.to_bytes(workspace), where="again", workspace=workspace) == journal
    assert journal.created_dirs == ("pkg", "pkg/sub")
    assert [d.path for d in journal.removed_dirs] == ["old/inner", "old"]
    assert {e.backup_kind for e in journal.entries if e.backup} == {"link"}


def test_a_plan_made_from_a_half_applied_tree_is_refused_after_recovery(scratch: Path) -> None:
    root = scratch / "ws"
    before, _ = crashed_workspace(root)
    stale = build_plan(root, MIXED.__class__("again", {}, {"README.md": b"edited\n"}))

    from patchtx.errors import ChangedSincePlanningError

    with pytest.raises(ChangedSincePlanningError) as caught:
        commit(stale)
    assert "recovered the interrupted transaction" in caught.value.message
    assert snapshot(root) == before


def test_recoverys_public_names_load_recovery_when_asked_for() -> None:
    # A commit with nothing to recover never loads recovery; patchtx.txn still offers its names.
    import subprocess
    import sys

    code = ("import sys, patchtx.txn as txn\n"
            "before = 'patchtx.txn.recovery' in sys.modules\n"
            "listed = {'recover', 'RecoveredTransaction'} <= set(dir(txn))\n"
            "from patchtx.txn import RecoveredTransaction, recover\n"
            "from patchtx.txn.recovery import RecoveredTransaction as defined, recover as defined_recover\n"
            "print(before, listed, RecoveredTransaction is defined and recover is defined_recover,"
            " RecoveredTransaction('t', 'discarded').to_json()['outcome'])\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert (done.returncode, done.stdout) == (0, "False True True discarded\n"), done.stderr


def test_originals_restored_as_copies_keep_their_mode(scratch: Path) -> None:
    """A before-image with another name (a backup tool's hard link to it, say) is never linked back
    into the tree: recovery writes a copy of it. The copy gets the original's recorded mode (an
    executable stays executable, a private file private), not the 0600 it is created with (issue
    38: the mutation that drops that chmod survived every test, none restoring by copy)."""
    root = scratch / "ws"
    before, _after = crashed_workspace(root)
    images = [p for p in journal_files(root) if p.name.endswith(".before")]
    assert images
    for number, image in enumerate(images):
        os.link(image, scratch / f"elsewhere-{number}")

    report = recover(str(root), fs=Fast())

    assert snapshot(root) == before  # bytes and modes: src/tool.sh 0755, docs/guide.md 0644
    assert os.stat(root / "src" / "tool.sh").st_mode & 0o777 == 0o755
    [txn] = report.transactions
    assert txn.outcome == "rolled_back" and "src/tool.sh" in txn.restored
    for number in range(len(images)):
        assert os.stat(scratch / f"elsewhere-{number}").st_nlink == 1  # not linked into the tree
    assert leftovers(root) == []
