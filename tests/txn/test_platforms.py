"""Other platforms, simulated on this one (platforms.py): macOS flushes with F_FULLFSYNC, a POSIX
system without it with fsync, neither uses Linux-only calls; Windows gets a clear error first."""

from __future__ import annotations

import errno
import os
from pathlib import Path

import pytest

from patchtx.cli.commands import main
from patchtx.errors import UnsupportedPlatformError
from patchtx.txn import commit, fsops, recover
from patchtx.txn.fsops import Call, FileSystemOps
from patchtx.workspace import _fd

from ..fsops_testing import CrashingFileSystemOps, RecordingFileSystemOps
from .helpers import build_plan, crash_in_process, expected_after, make_tree, snapshot
from .platforms import LINUX_ONLY_OS_FUNCTIONS, SimulatedPlatform, simulate
from .scenarios import MIXED


class FlushCounting(RecordingFileSystemOps):
    """Notes, for each numbered call, how many F_FULLFSYNCs it made."""

    def __init__(self, platform: SimulatedPlatform) -> None:
        super().__init__()
        self.platform = platform
        self.full_flushes: dict[int, int] = {}

    def _perform(self, call: Call, action):  # type: ignore[no-untyped-def]
        before = len(self.platform.full_fsyncs)
        try:
            return super()._perform(call, action)
        finally:
            self.full_flushes[call.index] = len(self.platform.full_fsyncs) - before


def test_the_simulation_hides_every_linux_only_function(monkeypatch: pytest.MonkeyPatch) -> None:
    simulate(monkeypatch, "macos")
    assert not any(hasattr(os, name) for name in LINUX_ONLY_OS_FUNCTIONS)
    assert fsops._syncfs_function() is None and not FileSystemOps().supports_syncfs


def test_on_macos_every_barrier_ends_with_a_full_fsync(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    platform = simulate(monkeypatch, "macos")
    root = tmp_path / "ws"
    make_tree(root, MIXED.tree)
    before = snapshot(root)
    plan = build_plan(root, MIXED)
    fs = FlushCounting(platform)

    commit(plan, fs=fs)

    assert snapshot(root) == expected_after(before, plan)
    barriers = [c for c in fs.log if c.op in ("fsync", "syncfs")]
    assert barriers and all(c.op == "fsync" for c in barriers)  # no syncfs on macOS
    # One device here: each barrier is its fsyncs, then one F_FULLFSYNC (of its last descriptor).
    assert all(fs.full_flushes[c.index] == 1 for c in barriers), [(c.paths, fs.full_flushes[c.index]) for c in barriers]
    assert len(platform.full_fsyncs) == len(barriers)
    assert fs.fsyncs == sum(len(c.paths) for c in barriers)


def test_a_full_fsync_refused_by_the_filesystem_falls_back_to_fsync(tmp_path: Path,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    import fcntl

    simulate(monkeypatch, "macos")

    def refusing(fd: int, command: int, arg: int = 0) -> int:
        raise OSError(errno.ENOTSUP, "F_FULLFSYNC not supported by this filesystem")

    monkeypatch.setattr(fcntl, "fcntl", refusing)
    root = tmp_path / "ws"
    make_tree(root, MIXED.tree)
    before = snapshot(root)
    plan = build_plan(root, MIXED)
    commit(plan)
    assert snapshot(root) == expected_after(before, plan)


def test_on_another_posix_system_barriers_are_plain_fsyncs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import fcntl

    platform = simulate(monkeypatch, "posix")
    assert not hasattr(fcntl, "F_FULLFSYNC")
    root = tmp_path / "ws"
    make_tree(root, MIXED.tree)
    before = snapshot(root)
    plan = build_plan(root, MIXED)
    fs = RecordingFileSystemOps()

    commit(plan, fs=fs)

    assert snapshot(root) == expected_after(before, plan)
    barriers = [c.op for c in fs.log if c.op in ("fsync", "syncfs")]
    assert len(barriers) >= 5 and set(barriers) == {"fsync"}  # the commit's five, the state folder's
    assert platform.full_fsyncs == []


def test_on_macos_a_crashed_commit_is_recovered_with_full_fsyncs(tmp_path: Path,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    platform = simulate(monkeypatch, "macos")
    root = tmp_path / "ws"
    make_tree(root, MIXED.tree)
    before = snapshot(root)
    plan = build_plan(root, MIXED)
    reference = RecordingFileSystemOps()
    commit(plan, fs=reference)
    mark = next(c.index for c in reference.log if (c.target or "").endswith(".committed"))
    make_tree(root, MIXED.tree)
    assert crash_in_process(lambda fs: commit(plan, fs=fs), CrashingFileSystemOps(mark - 1))
    flushed = len(platform.full_fsyncs)

    report = recover(str(root))

    assert report.transactions[0].outcome == "rolled_back"
    assert snapshot(root) == before
    assert len(platform.full_fsyncs) > flushed  # recovery's barrier flushed the drive too


def _simulate_windows(monkeypatch: pytest.MonkeyPatch) -> None:
    for flag in ("O_DIRECTORY", "O_NOFOLLOW", "O_NONBLOCK"):
        monkeypatch.delattr(os, flag, raising=False)
    monkeypatch.setattr(os, "supports_dir_fd", set())
    monkeypatch.setattr(_fd, "_posix_checked", [])  # checked again, on the simulated platform


def test_windows_gets_an_error_naming_what_is_missing(monkeypatch: pytest.MonkeyPatch) -> None:
    _simulate_windows(monkeypatch)
    with pytest.raises(UnsupportedPlatformError) as caught:
        FileSystemOps()
    error = caught.value
    assert error.kind == "unsupported_platform" and not error.changed
    assert "os.O_DIRECTORY" in error.message and "dir_fd support in os.open" in error.message
    assert "Nothing was changed" in error.message


def test_the_cli_on_windows_prints_the_error_and_no_traceback(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                              capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "a.txt").write_text("a\n")
    patch = tmp_path / "p.patch"
    patch.write_text("*** Begin Patch\n*** Update File: a.txt\n@@\n-a\n+b\n*** End Patch\n")
    monkeypatch.chdir(tmp_path)
    _simulate_windows(monkeypatch)

    code = main(["apply", str(patch)])

    err = capsys.readouterr().err
    assert code == 1
    assert "[unsupported_platform]" in err and "os.O_NOFOLLOW" in err and "Traceback" not in err
    assert (tmp_path / "a.txt").read_text() == "a\n"
