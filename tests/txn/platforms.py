"""A simulated platform: the commit run as it would run on macOS (or another POSIX system) while
the tests run on Linux.

Every Linux-only function the transaction might reach is hidden from the modules that look it up
(``os.listxattr``/``getxattr``/``setxattr``/``removexattr``; ``syncfs``, found through ctypes on
Linux only, by ``sys.platform``), and on the macOS variant ``fcntl`` gains ``F_FULLFSYNC``, whose
calls are recorded (and performed as an fsync, the strongest flush Linux has).
"""

from __future__ import annotations

import fcntl
import os
import sys
from dataclasses import dataclass, field

import pytest

from patchtx.txn import fsops

LINUX_ONLY_OS_FUNCTIONS = ("listxattr", "getxattr", "setxattr", "removexattr")
# macOS's value of F_FULLFSYNC (sys/fcntl.h); unused by Linux's fcntl(2), and never passed to it here.
F_FULLFSYNC = 51


@dataclass
class SimulatedPlatform:
    name: str
    """"native" (the real one), "macos", or "posix" (neither Linux's extras nor F_FULLFSYNC)."""
    full_fsyncs: list[int] = field(default_factory=list)
    """Descriptors flushed with F_FULLFSYNC, in order."""

    @property
    def simulated(self) -> bool:
        return self.name != "native"


def simulate(monkeypatch: pytest.MonkeyPatch, name: str) -> SimulatedPlatform:
    platform = SimulatedPlatform(name)
    if name == "native":
        return platform
    for function in LINUX_ONLY_OS_FUNCTIONS:
        monkeypatch.delattr(os, function, raising=False)
    monkeypatch.setattr(sys, "platform", "darwin" if name == "macos" else "freebsd14")
    monkeypatch.setattr(fsops, "_syncfs_cache", [])  # looked up again, on the simulated platform
    if name == "macos":
        real_fcntl = fcntl.fcntl

        def simulated_fcntl(fd: int, command: int, arg: int = 0) -> int:
            if command == F_FULLFSYNC:
                platform.full_fsyncs.append(fd)
                os.fsync(fd)
                return 0
            return real_fcntl(fd, command, arg)

        monkeypatch.setattr(fcntl, "F_FULLFSYNC", F_FULLFSYNC, raising=False)
        monkeypatch.setattr(fcntl, "fcntl", simulated_fcntl)
    return platform
