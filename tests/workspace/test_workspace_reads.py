"""Reading the workspace: links resolved in every path, whole-file reads, info after resolve, paths
joined, and large files compared with what is expected block by block."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

import patchtx
from patchtx.workspace._fd import _COMPARE_BLOCK as _BLOCK


def test_links_are_resolved_in_every_path_sharing_a_checked_folder(tmp_path: Path) -> None:
    (tmp_path / "real").mkdir()
    (tmp_path / "real/a.txt").write_text("a\n")
    (tmp_path / "real/sub").mkdir()
    (tmp_path / "real/sub/b.txt").write_text("b\n")
    (tmp_path / "alias").symlink_to("real")
    result = patchtx.apply_patch(
        "*** Begin Patch\n*** Update File: real/a.txt\n@@\n-a\n+A\n"
        "*** Update File: alias/sub/b.txt\n@@\n-b\n+B\n*** End Patch", tmp_path)
    assert [c.path for c in result.plan.changes] == ["real/a.txt", "real/sub/b.txt"]
    assert (tmp_path / "real/sub/b.txt").read_text() == "B\n"


def _readers(root: Path) -> list[Callable[[str], bytes]]:
    """The two whole-file readers: the planner's Workspace.read and the commit's read_file."""
    from patchtx.txn.fsops import FileSystemOps
    from patchtx.workspace.paths import Workspace

    fs = FileSystemOps()

    def read_file(name: str) -> bytes:
        fd = fs.open_root(str(root))
        try:
            return fs.read_file(fd, name).data
        finally:
            fs.close(fd)

    return [Workspace(root).read, read_file]


@pytest.mark.parametrize("size", [0, 1, 4095, (1 << 16) - 1, 1 << 16, (1 << 16) + 1, 300_000])
def test_whole_file_reads_take_one_read_call_and_return_every_byte(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, size: int) -> None:
    data = os.urandom(size)
    (tmp_path / "f").write_bytes(data)
    real_read = os.read
    calls: list[int] = []

    def counting_read(fd: int, n: int) -> bytes:
        calls.append(n)
        return real_read(fd, n)

    monkeypatch.setattr(os, "read", counting_read)
    for read in _readers(tmp_path):
        calls.clear()
        assert read("f") == data
        assert len(calls) == 1, "a file read at its fstat size needs no read(2) that returns 0"


@pytest.mark.parametrize(("size", "reported"), [
    (100, 99),           # grew by a byte between fstat and read
    (100_000, 10),       # grew past the first read's 64 KiB
    (70_000, 0),         # a size-0 file with content, as /proc reports
    (100, 200),          # shrank
    (0, 5),              # shrank to nothing
])
def test_whole_file_reads_go_on_to_eof_when_fstat_size_is_stale(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, size: int, reported: int) -> None:
    data = os.urandom(size)
    (tmp_path / "f").write_bytes(data)
    real_fstat = os.fstat

    def stale_fstat(fd: int) -> os.stat_result:
        st = real_fstat(fd)
        return os.stat_result((st.st_mode, st.st_ino, st.st_dev, st.st_nlink, st.st_uid,
                               st.st_gid, reported, st.st_atime, st.st_mtime, st.st_ctime))

    monkeypatch.setattr(os, "fstat", stale_fstat)
    for read in _readers(tmp_path):
        assert read("f") == data


def _tree_with_links(root: Path) -> list[str]:
    (root / "a.txt").write_text("a\n")
    (root / "dir/sub").mkdir(parents=True)
    (root / "dir/b.txt").write_text("b\n")
    (root / "fifo").mkdir()
    (root / "link.txt").symlink_to("a.txt")
    (root / "alias").symlink_to("dir")
    (root / "dangling").symlink_to("nowhere/x")
    return ["a.txt", "dir", "dir/b.txt", "dir/sub", "missing", "missing/deeper/x", "a.txt/x",
            "a.txt/x/y", "link.txt", "alias", "alias/b.txt", "alias/sub/none", "dangling",
            "dangling/z", "./dir//b.txt", "dir/./sub/"]


def test_info_after_resolve_answers_as_a_fresh_workspace_does(tmp_path: Path) -> None:
    from patchtx.workspace.paths import Workspace

    spelled_paths = _tree_with_links(tmp_path)
    fresh = Workspace(tmp_path)
    expected = {s: fresh.info(fresh.resolve(s).rel) for s in spelled_paths}
    workspace = Workspace(tmp_path)
    for s in spelled_paths:
        assert workspace.info(workspace.resolve(s).rel) == expected[s], s
    rel = workspace.resolve("a.txt").rel
    os.unlink(tmp_path / "a.txt")
    assert workspace.info(rel) is None  # the view keeps no answer of its own


@given(st.text(alphabet="a/.", max_size=6))
def test_display_joins_as_os_path_join(rel: str) -> None:
    from patchtx.workspace.paths import Workspace

    for workspace in (Workspace("/"), Workspace(os.path.dirname(__file__))):
        expected = os.path.join(workspace.root, rel) if rel else workspace.root
        assert workspace.display(rel) == expected




@pytest.mark.parametrize(("on_disk", "expected"), [
    pytest.param(b"a" * (3 * _BLOCK + 5), b"a" * (3 * _BLOCK + 5), id="as expected"),
    pytest.param(b"a" * (2 * _BLOCK + 5), b"a" * (2 * _BLOCK) + b"b" * 5, id="differs in the last block"),
    pytest.param(b"b" + b"a" * (2 * _BLOCK), b"a" * (2 * _BLOCK + 1), id="differs at the first byte"),
    pytest.param(b"a" * (2 * _BLOCK + 1), b"a" * (2 * _BLOCK), id="longer"),
    pytest.param(b"a" * (2 * _BLOCK), b"a" * (2 * _BLOCK + 1), id="shorter"),
    pytest.param(b"x" * 10, b"x" * 10, id="small"),
])
@pytest.mark.parametrize("stale_size", [False, True])
def test_reads_compared_with_what_is_expected_return_the_file_as_it_is(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, on_disk: bytes, expected: bytes,
        stale_size: bool) -> None:
    from patchtx.workspace._fd import read_compared

    (tmp_path / "f").write_bytes(on_disk)
    if stale_size:  # fstat said the expected size (the file changed after it)
        real_fstat = os.fstat

        def stale_fstat(fd: int) -> os.stat_result:
            st = real_fstat(fd)
            return os.stat_result((st.st_mode, st.st_ino, st.st_dev, st.st_nlink, st.st_uid,
                                   st.st_gid, len(expected), st.st_atime, st.st_mtime, st.st_ctime))

        monkeypatch.setattr(os, "fstat", stale_fstat)
    fd = os.open(tmp_path / "f", os.O_RDONLY)
    try:
        data = read_compared(fd, os.fstat(fd).st_size, expected)
    finally:
        os.close(fd)
    assert data == on_disk
    if len(on_disk) > _BLOCK and on_disk == expected:
        assert data is expected  # no buffer the size of the file was made


def test_the_commit_check_reads_large_files_in_blocks(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The commit's check of an unchanged file of three blocks reads it into one reused buffer of
    one block."""
    import patchtx

    data = b"line\n" * (3 * _BLOCK // 5)
    (tmp_path / "f.txt").write_bytes(data)
    sizes: list[int] = []
    real_readv = os.readv

    def recording_readv(fd: int, buffers: list[bytearray]) -> int:
        sizes.append(len(buffers[0]))
        return real_readv(fd, buffers)

    monkeypatch.setattr(os, "readv", recording_readv)
    patchtx.apply_patch("*** Begin Patch\n*** Update File: f.txt\n@@\n line\n+new\n*** End Patch", str(tmp_path),
                        first_match=True, durable=False)
    assert sizes and set(sizes) == {_BLOCK}
    assert (tmp_path / "f.txt").read_bytes() == b"line\nnew\n" + data[5:]
