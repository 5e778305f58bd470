"""A one-shot command process (``apply_patch``, ``patchtx apply``...): the collector off, standard
output whose reader may leave, what the command reported kept until the end, and an end without
the interpreter's teardown. ``cli`` runs its console scripts through ``one_shot``; the drop-in and
``commands`` hand what they report to ``leave_for_the_exit``.
"""

from __future__ import annotations

import errno
import gc
import os
import sys
from typing import TYPE_CHECKING, Any, NoReturn

from ..errors import INTERRUPTED, OutputError
from ..txn.failures import describe_errno

if TYPE_CHECKING:
    from collections.abc import Callable


_left_for_the_exit: list[object] | None = None
"""In a one-shot process (``one_shot``): what the command built and has reported, kept until
the process ends rather than freed object by object just before it does (see
``finish_process``): a result holds the parsed patch (a tuple per line), a failure's traceback
what the failed stage built (for a miss in a 200,000-line file, its decoded lines and their loose
keys, some 400,000 objects)."""


_program = "patchtx"
"""The console script being run, as its errors name it."""


def leave_for_the_exit(reported: object) -> None:
    if _left_for_the_exit is not None:
        _left_for_the_exit.append(reported)


def finish_process(code: int) -> NoReturn:
    """End a one-shot command without the interpreter's teardown once its output is flushed.

    The normal exit tears down every module and object one by one though the process is about to
    vanish: every file was written with os-level calls and closed, the lock released, nothing is
    left in a Python buffer but stdout and stderr. Standard output that could not be written
    (a full disk, a closed descriptor: not a reader that left) is reported on standard error as
    one error, and a command that had succeeded then exits with status 1. If flushing standard
    error fails, the normal exit runs instead and reports it as Python always does.
    """
    stdout = sys.stdout
    if isinstance(stdout, _ReaderMayLeave):
        stdout.flush()
        if stdout.failure is not None:
            _report_output_failure(stdout.failure)
            code = code or 1
    try:
        for stream in (sys.stdout, sys.stderr):
            if stream is not None:  # None when Python started with that descriptor closed
                stream.flush()
    except (OSError, ValueError):
        sys.exit(code)
    isolated = sys.modules.get("patchtx.plan.isolated")
    if isolated is not None:  # (loaded by a run that parsed with a grammar): os._exit skips atexit
        isolated.stop_all()
    os._exit(code)


def _report_output_failure(failure: OSError) -> None:
    name, description = describe_errno(failure.errno)
    error = OutputError(f"Could not write the command's output to standard output: {description} ({name}).")
    if sys.stderr is not None:
        sys.stderr.write(f"{_program}: error [{error.kind}]: {error.message}\n")


def one_shot(run: Callable[[], int], *, program: str = "patchtx") -> NoReturn:
    """Run a console script's ``run`` as the whole process; ``program`` names it in the one error
    its own output failing can cause."""
    # A one-shot run allocates many tuples and lists and frees few cycles: the collector's passes
    # over them would find little, and the memory comes back when the process ends moments later.
    global _left_for_the_exit, _program
    gc.disable()
    _left_for_the_exit = []
    _program = program
    # A descriptor closed at start: output to it goes nowhere (closed standard output is an output
    # failure, reported once the command is done); never an AttributeError half-way through.
    if sys.stderr is None:
        sys.stderr = open(os.devnull, "w")  # noqa: SIM115 - lives as long as the process
    if sys.stdout is None:
        sys.stdout = _ReaderMayLeave(open(os.devnull, "w"), closed=True)  # noqa: SIM115
    else:
        sys.stdout = _ReaderMayLeave(sys.stdout)
    try:
        code = run()
    except KeyboardInterrupt:  # Ctrl-C: one line, not a traceback (a commit rolled itself back)
        sys.stderr.write(f"{_program}: interrupted. {INTERRUPTED}\n")
        code = 130
    finish_process(code)


class _ReaderMayLeave:
    """Standard output whose reader may stop reading (``patchtx log | head -1``): once the pipe is
    closed, the rest of the output goes to /dev/null, so that the command still finishes what it
    was doing (an undo already committed) and exits with its own status, quietly.

    Any other failure to write (ENOSPC on /dev/full or a full disk, EIO, a closed descriptor) also
    lets the command finish (a patch applied stays applied, and is never reported as a failure
    that changed nothing); it is kept in ``failure`` for ``finish_process`` to report."""

    def __init__(self, stream: Any, *, closed: bool = False) -> None:
        self._stream = stream
        self.failure: OSError | None = None
        """The first write or flush that failed, other than for a reader that left."""
        self._closed = closed

    def write(self, text: str) -> int:
        if self._closed and text and self.failure is None:
            self.failure = OSError(errno.EBADF, "standard output is closed")
        try:
            return int(self._stream.write(text))
        except BrokenPipeError:
            self._discard()
            return len(text)
        except OSError as exc:
            self._failed(exc)
            return len(text)

    def flush(self) -> None:
        try:
            self._stream.flush()
        except BrokenPipeError:
            self._discard()
        except OSError as exc:
            self._failed(exc)

    def _failed(self, exc: OSError) -> None:
        if self.failure is None:
            self.failure = exc
        self._discard()

    def _discard(self) -> None:
        """From now on the output goes to /dev/null (what is still buffered included)."""
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, self._stream.fileno())
        os.close(devnull)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._stream, name)
