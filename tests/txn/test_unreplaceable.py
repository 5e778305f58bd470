"""A patch touching a file that cannot be replaced (read-only bind mount, immutable file) ends as a
clean refusal: nothing changed, no journal, no stray file, and the workspace is not wedged.

These need root (mount, chattr); they are skipped, with the reason, where that is not available.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from patchtx.errors import FilesystemError
from patchtx.txn import commit, recover

from .helpers import Scenario, build_plan, leftovers, make_tree, snapshot

TREE = {
    "a.txt": b"a v1\n",  # renamed over before the unreplaceable file is reached: must come back
    "locked/z.txt": b"z v1\n",
    "locked/gone.txt": b"delete me\n",
    "later.txt": b"later v1\n",
}
UPDATE = Scenario("update-locked", TREE, {"a.txt": b"a v2\n", "locked/z.txt": b"z v2\n", "new.txt": b"n\n"})
DELETE = Scenario("delete-locked", TREE, {"a.txt": b"a v2\n", "locked/gone.txt": None})
LATER = Scenario("later", TREE, {"later.txt": b"later v2\n"})


def _run(*command: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(command, capture_output=True, text=True, check=False)


@pytest.fixture
def read_only_mount(tmp_path: Path) -> Iterator[Path]:
    """A workspace whose folder ``locked`` is a read-only bind mount of itself."""
    if os.geteuid() != 0 or shutil.which("mount") is None:
        pytest.skip("a read-only bind mount needs root and mount(8)")
    root = tmp_path / "ws"
    make_tree(root, TREE)
    locked = str(root / "locked")
    bind = _run("mount", "--bind", locked, locked)
    if bind.returncode != 0:
        pytest.skip(f"mount --bind is not permitted here: {bind.stderr.strip()}")
    try:
        remount = _run("mount", "-o", "remount,ro,bind", locked)
        if remount.returncode != 0:
            pytest.skip(f"remounting read-only is not permitted here: {remount.stderr.strip()}")
        yield root
    finally:
        _run("umount", locked)


@pytest.fixture
def immutable_files(tmp_path: Path) -> Iterator[Path]:
    """A workspace whose files in ``locked`` are immutable (chattr +i)."""
    if os.geteuid() != 0 or shutil.which("chattr") is None:
        pytest.skip("chattr +i needs root and chattr(1)")
    root = tmp_path / "ws"
    make_tree(root, TREE)
    locked = [str(root / name) for name in TREE if name.startswith("locked/")]
    result = _run("chattr", "+i", *locked)
    if result.returncode != 0:
        pytest.skip(f"this filesystem does not support immutable files: {result.stderr.strip()}")
    try:
        yield root
    finally:
        _run("chattr", "-i", *locked)


def _assert_clean_refusal(root: Path, scenario: Scenario) -> None:
    before = snapshot(root)
    with pytest.raises(FilesystemError) as caught:
        commit(build_plan(root, scenario))
    error = caught.value
    assert not error.changed, error.message
    assert "Nothing was changed" in error.message and error.path is not None and "locked/" in error.path
    assert snapshot(root) == before
    assert leftovers(root) == []  # no journal, no temporary, no .restore file
    # Not wedged: recovery finds nothing, and a patch that leaves the file alone commits.
    assert recover(str(root)).nothing_to_do
    report = commit(build_plan(root, LATER))
    assert report.written == ("later.txt",) and report.recovery is None
    assert (root / "later.txt").read_bytes() == b"later v2\n"


@pytest.mark.parametrize("scenario", [UPDATE, DELETE], ids=lambda s: s.name)
def test_a_read_only_mount_is_a_clean_refusal(read_only_mount: Path, scenario: Scenario) -> None:
    _assert_clean_refusal(read_only_mount, scenario)


@pytest.mark.parametrize("scenario", [UPDATE, DELETE], ids=lambda s: s.name)
def test_an_immutable_file_is_a_clean_refusal(immutable_files: Path, scenario: Scenario) -> None:
    _assert_clean_refusal(immutable_files, scenario)


def test_an_immutable_file_with_other_links_is_a_clean_refusal(immutable_files: Path) -> None:
    # Rewritten in place (it has another name): the open for writing fails before any change.
    root = immutable_files
    target = root / "locked/z.txt"
    _run("chattr", "-i", str(target))  # an immutable file cannot gain a link
    os.link(target, root / "z-alias.txt")
    assert _run("chattr", "+i", str(target)).returncode == 0
    _assert_clean_refusal(root, UPDATE)
    assert os.stat(root / "z-alias.txt").st_ino == os.stat(root / "locked/z.txt").st_ino
