"""Commits that keep undo history, and checks of what the history holds, for tests/history."""

from __future__ import annotations

import hashlib
import os
import shutil
from collections.abc import Mapping
from pathlib import Path

from patchtx import history
from patchtx.model import Plan
from patchtx.options import DEFAULT_COMMIT
from patchtx.txn import commit
from patchtx.txn.fsops import FileSystemOps
from patchtx.txn.journal import Journal
from patchtx.txn.layout import JOURNAL_DIR, parse_kept_kind
from patchtx.txn.retention import KeepHistory

from ..txn.helpers import Scenario, build_plan


def plan_changes(
    root: Path,
    changes: Mapping[str, bytes | None],
    *,
    modes: Mapping[str, int] | None = None,
    remove_dirs: tuple[str, ...] | None = None,
    intent: str | None = None,
) -> Plan:
    """A Plan as the planner would make it from the tree on disk now: path -> bytes (None: delete)."""
    plan = build_plan(root, Scenario("changes", {}, changes, modes, remove_dirs))
    return Plan(root=plan.root, changes=plan.changes, targets=plan.targets, remove_dirs=plan.remove_dirs,
                intent=intent)


def commit_kept(
    plan: Plan,
    *,
    count: int = 20,
    max_bytes: int = DEFAULT_COMMIT.history_bytes,
    fs: FileSystemOps | None = None,
    durable: bool = True,
) -> str:
    """Commit ``plan`` keeping its history entry; the new transaction id."""
    keep = KeepHistory(count=count, max_bytes=max_bytes)
    report = commit(plan, retention=keep, fs=fs, durable=durable)
    assert report.transaction_id is not None and report.retention_error is None
    assert keep.kept == report.transaction_id
    return report.transaction_id


def history_folder(root: Path) -> Path:
    """The journal folder, which holds the undo history: kept journals and their before-images."""
    return root / JOURNAL_DIR


def history_names(root: Path) -> list[str]:
    """The transactions anything in the journal folder belongs to (entries, and whatever a prune
    or a crash left)."""
    folder = history_folder(root)
    return sorted({p.name.partition(".")[0] for p in folder.iterdir()}) if folder.is_dir() else []


def logged_ids(root: Path) -> list[str]:
    return [entry.transaction_id for entry in history.log(root)]


def assert_no_entry_claims_a_lost_before_image(root: Path) -> None:
    """On disk, not through ``log`` (which would hide such an entry): every kept journal that
    verifies still has every before-image it records (``<txn>.pruned`` journals are not entries)."""
    folder = history_folder(root)
    names = {p.name for p in folder.iterdir()} if folder.is_dir() else set()
    for name in names:
        if parse_kept_kind(name.partition(".")[2]) is None:
            continue
        try:
            journal = Journal.from_bytes((folder / name).read_bytes(), where=name,
                                         workspace=os.path.realpath(root))
        except Exception:
            continue  # a damaged one claims nothing (and is never listed)
        lost = set(journal.backup_names()) - names
        assert not lost, f"{name} claims before-images it lost: {sorted(lost)}"


def assert_listed_entries_are_whole(root: Path) -> list[str]:
    """Every entry ``log`` lists has every before-image it records, with the recorded bytes."""
    assert_no_entry_claims_a_lost_before_image(root)
    ids = logged_ids(root)
    for txn in ids:
        record = history.show(root, txn)
        for file in record.files:
            if file.before_image is None:
                continue
            image = history_folder(root) / file.before_image
            assert image.is_file(), f"{txn}: the before-image of {file.path} is missing"
            assert hashlib.sha256(image.read_bytes()).hexdigest() == file.before_sha256, (txn, file.path)
            assert image.stat().st_size == file.size, (txn, file.path)
    return ids


def copy_tree(source: Path, destination: Path) -> None:
    """A fresh copy of a prepared workspace (hard links in the history become plain copies)."""
    if destination.exists():
        shutil.rmtree(destination)
    shutil.copytree(source, destination, symlinks=True)
