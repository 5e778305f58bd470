from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest


@pytest.fixture
def scratch(tmp_path: Path) -> Iterator[Path]:
    """A folder on tmpfs when there is one, else ``tmp_path``.

    For tests that rebuild a tree thousands of times to crash a process at every call: a process
    crash looks the same on any filesystem, and on this machine's ext4 (mounted with ``discard``)
    every rmdir costs ~3 ms. Durability itself is tested on the real disk.
    """
    shm = Path("/dev/shm")
    if not (shm.is_dir() and os.access(shm, os.W_OK)):
        yield tmp_path
        return
    folder = Path(tempfile.mkdtemp(prefix="patchtx-test-", dir=shm))
    try:
        yield folder
    finally:
        shutil.rmtree(folder, ignore_errors=True)


@pytest.fixture(params=["native", "macos"])
def each_platform(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> object:
    """Run the test on this machine as it is, then again on a simulated macOS (see platforms.py):
    modules of the transaction, crash and fidelity tests use it for every test."""
    from .platforms import simulate

    return simulate(monkeypatch, request.param)
