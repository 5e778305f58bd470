"""Planning reads through no-follow descriptors: a folder swapped for a symbolic link to a folder
outside the root, in a loop while patches are planned, never gets a byte from outside into a plan,
a diff or an error message (before issue 15: about 1 run in 100)."""

from __future__ import annotations

import os
import threading
from pathlib import Path

import pytest

import patchtx
from patchtx.errors import ChangedSincePlanningError, PatchtxError
from patchtx.workspace.paths import Workspace

SECRET = "SECRET-FROM-OUTSIDE"


def test_a_swap_loop_during_planning_never_reads_outside(tmp_path: Path) -> None:
    root, outside = tmp_path / "root", tmp_path / "outside"
    (root / "d").mkdir(parents=True)
    (root / "d" / "f.txt").write_text("line\n")
    outside.mkdir()
    (outside / "f.txt").write_text(f"line\n{SECRET}\n")
    parked, link = root / "parked", root / "link"
    link.symlink_to(outside, target_is_directory=True)
    stop = threading.Event()

    def swap() -> None:
        while not stop.is_set():
            try:
                os.rename(root / "d", parked)
                os.rename(link, root / "d")
                os.rename(root / "d", link)
                os.rename(parked, root / "d")
            except OSError:
                pass

    patch = "*** Begin Patch\n*** Update File: d/f.txt\n@@\n line\n+added\n*** End Patch\n"
    swapper = threading.Thread(target=swap)
    swapper.start()
    seen = []
    try:
        for _ in range(400):
            try:
                plan = patchtx.plan_patch(patch, root)
                seen.append(repr(plan))
                seen.append(repr([c.before for c in plan.changes]))
            except PatchtxError as exc:
                seen.append(exc.message)
    finally:
        stop.set()
        swapper.join()
    assert not any(SECRET in text for text in seen)


def test_reads_refuse_a_link_swapped_in_after_resolution(tmp_path: Path) -> None:
    root, outside = tmp_path / "root", tmp_path / "outside"
    (root / "d").mkdir(parents=True)
    (root / "d" / "f.txt").write_text("inside\n")
    outside.mkdir()
    (outside / "f.txt").write_text(SECRET)
    workspace = Workspace(root)
    resolved = workspace.resolve("d/f.txt")
    (root / "d").rename(root / "parked")
    (root / "d").symlink_to(outside, target_is_directory=True)
    try:
        workspace.read(resolved.rel)
        raise AssertionError("read through a symbolic link")
    except PatchtxError as exc:
        assert exc.kind == "unsafe_path" and SECRET not in exc.message
    assert workspace.list_dir("d") == []
    workspace.close()


def test_a_link_that_vanishes_while_it_is_followed_is_an_error_with_a_kind(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The race the swap loop can hit: lstat sees a link, which is gone before realpath reads it."""
    import patchtx.workspace.paths as workspace

    root = tmp_path / "root"
    (root / "real").mkdir(parents=True)
    (root / "real" / "f.txt").write_text("line\n")
    (root / "d").symlink_to(root / "real", target_is_directory=True)

    real_realpath = os.path.realpath

    def vanished(path: str) -> str:
        if path.endswith("/d"):
            raise FileNotFoundError(2, "No such file or directory", path)
        return real_realpath(path)

    monkeypatch.setattr(workspace.os.path, "realpath", vanished)
    with pytest.raises(PatchtxError) as caught:
        patchtx.plan_patch("*** Begin Patch\n*** Update File: d/f.txt\n@@\n line\n+added\n*** End Patch\n",
                           str(root))
    assert caught.value.kind == "io_error" and "d" in caught.value.message


def test_a_hard_link_to_a_file_outside_swapped_in_after_planning_is_never_written(tmp_path: Path) -> None:
    """Issue 38: between planning and the commit, the planned file is replaced by a hard link to a
    file outside the root holding the very same bytes. The commit compared bytes only, found them
    equal, and rewrote the file in place (it has two names now): outside the root. The plan
    records the inode it read, and the commit refuses another one."""
    root, outside = tmp_path / "ws", tmp_path / "outside.txt"
    root.mkdir()
    (root / "a.txt").write_text("one\n")
    outside.write_text("one\n")
    plan = patchtx.plan_patch("*** Begin Patch\n*** Update File: a.txt\n@@\n-one\n+ONE\n*** End Patch\n", root)
    os.link(outside, root / "a.swap")
    os.rename(root / "a.swap", root / "a.txt")

    with pytest.raises(ChangedSincePlanningError) as raised:
        patchtx.apply_plan(plan)

    assert "different inode" in raised.value.message and "Nothing was changed" in raised.value.message
    assert outside.read_text() == "one\n" and (root / "a.txt").read_text() == "one\n"
