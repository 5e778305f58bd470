"""Filesystem operations for tests: record every mutating call, fail at call N, or crash at call N.

Each class overrides only :meth:`FileSystemOps._perform`, the hook behind the single choke point,
so a call index means the same in every implementation: index N of a recorded run is the call a
failing or crashing run stops at.
"""

from __future__ import annotations

import errno
import os
from collections.abc import Callable, Container
from typing import Literal, TypeVar

from patchtx.txn.fsops import Call, FileSystemOps

_T = TypeVar("_T")


class SimulatedCrash(BaseException):
    """Raised instead of performing a call, to simulate the process dying right there.

    A BaseException that is neither Exception nor KeyboardInterrupt, so the commit's roll-back
    handler never sees it: whatever was done stays on disk, exactly as after a kill. (Only
    non-mutating cleanup, such as closing descriptors, runs on the way out.)
    """

    def __init__(self, call: Call) -> None:
        super().__init__(f"simulated crash before call {call.index} ({call.op} {call.path})")
        self.call = call


class RecordingFileSystemOps(FileSystemOps):
    """Performs every call and appends it to ``log``; ``failed`` holds the indices that raised."""

    def __init__(self, *, allow_syncfs: bool = True) -> None:
        super().__init__(allow_syncfs=allow_syncfs)
        self.log: list[Call] = []
        self.failed: set[int] = set()

    def _perform(self, call: Call, action: Callable[[], _T]) -> _T:
        self.log.append(call)
        try:
            return action()
        except OSError:
            self.failed.add(call.index)
            raise


class FailingFileSystemOps(RecordingFileSystemOps):
    """Raises ``OSError(error)`` instead of performing call ``fail_at``.

    ``persistent``: every later call fails too (a disk that stays full, a device that went away),
    so the roll back fails and recovery must finish the job later. ``ops``: only calls of these
    operations fail (e.g. {"link"} to exercise the copy fallback).
    """

    def __init__(
        self,
        fail_at: int,
        error: int = errno.EIO,
        *,
        persistent: bool = False,
        ops: Container[str] | None = None,
        allow_syncfs: bool = True,
    ) -> None:
        super().__init__(allow_syncfs=allow_syncfs)
        self.fail_at = fail_at
        self.error = error
        self.persistent = persistent
        self.ops = ops
        self.failures: list[Call] = []

    def _perform(self, call: Call, action: Callable[[], _T]) -> _T:
        due = call.index == self.fail_at or (self.persistent and call.index > self.fail_at)
        if due and (self.ops is None or call.op in self.ops):
            self.log.append(call)
            self.failed.add(call.index)
            self.failures.append(call)
            raise OSError(self.error, os.strerror(self.error), call.path)
        return super()._perform(call, action)


class CrashingFileSystemOps(RecordingFileSystemOps):
    """Dies just before performing call ``crash_at``.

    ``how="exit"`` ends the process with ``os._exit(exit_code)`` (use it in a child process: no
    cleanup handler of any kind runs); ``how="raise"`` raises :class:`SimulatedCrash`.
    """

    def __init__(
        self,
        crash_at: int,
        *,
        how: Literal["exit", "raise"] = "raise",
        exit_code: int = 77,
        allow_syncfs: bool = True,
    ) -> None:
        super().__init__(allow_syncfs=allow_syncfs)
        self.crash_at = crash_at
        self.how = how
        self.exit_code = exit_code

    def _perform(self, call: Call, action: Callable[[], _T]) -> _T:
        if call.index == self.crash_at:
            if self.how == "exit":
                os._exit(self.exit_code)
            raise SimulatedCrash(call)
        return super()._perform(call, action)
