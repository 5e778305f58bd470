"""Every mutating call is numbered by the one choke point, whether a subclass intercepts it or not:
the same numbering, and a failure described the same way."""

from __future__ import annotations

import errno
import os
from pathlib import Path

import pytest

from patchtx.errors import PatchtxError
from patchtx.txn import commit
from patchtx.txn.fsops import Call, FileSystemOps

from ..fsops_testing import FailingFileSystemOps, RecordingFileSystemOps
from .helpers import build_plan, make_tree, snapshot
from .scenarios import ALL, Scenario


@pytest.mark.parametrize("scenario", ALL, ids=lambda s: s.name)
def test_plain_and_recording_layers_number_the_same_calls(scenario: Scenario, tmp_path: Path) -> None:
    results = []
    for fs in (FileSystemOps(), RecordingFileSystemOps()):
        root = tmp_path / type(fs).__name__
        make_tree(root, scenario.tree)
        commit(build_plan(root, scenario), fs=fs)
        results.append((fs.calls, fs.fsyncs, {k: v for k, v in snapshot(root).items() if not k.startswith(".patchtx")}))
    (plain_calls, plain_fsyncs, plain_tree), (recorded_calls, recorded_fsyncs, recorded_tree) = results
    assert plain_calls == recorded_calls > 0
    assert plain_fsyncs == recorded_fsyncs
    assert plain_tree == recorded_tree


def _fail_each_op(fs: FileSystemOps, root: Path) -> list[tuple[Call, OSError]]:
    """Make each per-file operation fail for real once; the failures as last_failure saw them."""
    failures = []
    root_fd = fs.open_root(str(root))
    sub_fd = fs.open_dir(root_fd, "sub")
    fd = fs.create(sub_fd, "new.txt")
    os.close(fd)  # behind the layer's back: it still names the fd "sub/new.txt", and using it fails
    try:
        attempts = [
            (FileExistsError, lambda: fs.create(sub_fd, "new.txt", 0o600)),
            (OSError, lambda: fs.write(fd, b"data")),
            (FileNotFoundError, lambda: fs.rename(sub_fd, "missing", root_fd, "moved")),
            (FileNotFoundError, lambda: fs.link(sub_fd, "missing", root_fd, "linked")),
            (FileNotFoundError, lambda: fs.unlink(sub_fd, "missing")),
            (OSError, lambda: fs.fchmod(fd, 0o640)),
        ]
        for error, attempt in attempts:
            with pytest.raises(error):
                attempt()
            assert fs.last_failure is not None
            failures.append(fs.last_failure)
    finally:
        fs.close(sub_fd)
        fs.close(root_fd)
    return failures


def test_a_failing_plain_call_is_recorded_as_an_intercepted_one_is(tmp_path: Path) -> None:
    seen = []
    for fs in (FileSystemOps(), RecordingFileSystemOps()):
        root = tmp_path / type(fs).__name__
        (root / "sub").mkdir(parents=True)
        failures = _fail_each_op(fs, root)
        seen.append([(c.index, c.op, c.path, c.target, c.mode, c.data, type(e), e.errno) for c, e in failures])
        assert fs.calls == 7
    assert seen[0] == seen[1]
    assert seen[0] == [
        (2, "create", "sub/new.txt", None, 0o600, None, FileExistsError, errno.EEXIST),
        (3, "write", "sub/new.txt", None, None, b"data", OSError, errno.EBADF),
        (4, "rename", "sub/missing", "moved", None, None, FileNotFoundError, errno.ENOENT),
        (5, "link", "sub/missing", "linked", None, None, FileNotFoundError, errno.ENOENT),
        (6, "unlink", "sub/missing", None, None, None, FileNotFoundError, errno.ENOENT),
        (7, "fchmod", "sub/new.txt", None, 0o640, None, OSError, errno.EBADF),
    ]


def test_an_injected_failure_goes_through_the_hook(tmp_path: Path) -> None:
    # A subclass sees every call: FailingFileSystemOps fails the first link of a real commit.
    scenario = ALL[0]
    root = tmp_path / "ws"
    make_tree(root, scenario.tree)
    before = snapshot(root)
    fs = FailingFileSystemOps(1, errno.EIO, ops={"link"}, persistent=True)
    with pytest.raises(PatchtxError):
        commit(build_plan(root, scenario), fs=fs)
    assert fs.failures and fs.failures[0].op == "link"
    assert {k: v for k, v in snapshot(root).items() if not k.startswith(".patchtx")} == before


class _CallTracingOps(FileSystemOps):
    """A layer that hooks ``_call`` rather than ``_perform``: it must still see every call."""

    def __init__(self) -> None:
        super().__init__()
        self.seen: list[str] = []

    def _call(self, op, path, function, *args, **details):  # type: ignore[no-untyped-def]
        self.seen.append(op)
        return super()._call(op, path, function, *args, **details)


@pytest.mark.parametrize("scenario", ALL[:1], ids=lambda s: s.name)
def test_a_layer_hooking_the_choke_point_sees_every_mutating_call(scenario: Scenario, tmp_path: Path) -> None:
    fs = _CallTracingOps()
    make_tree(tmp_path, scenario.tree)
    commit(build_plan(tmp_path, scenario), fs=fs)
    assert len(fs.seen) == fs.calls > 0
    assert {"create", "write", "rename"} <= set(fs.seen)
