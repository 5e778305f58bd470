"""A one-shot command process (``apply_patch``, ``patchtx apply``...): the collector off, standard
output whose reader may leave, what the command reported kept until the end, and an end without
the interpreter's teardown. ``cli`` runs its console scripts through ``one_shot``; the drop-in and
``commands`` hand what they report to ``leave_for_the_exit``.
"""

from __future__ import annotations

import sys

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any, NoReturn


_left_for_the_exit: list[object] | None = None
"""In a one-shot process (``one_shot``): what the command built and has reported, kept until
the process ends rather than freed object by object just before it does (see
``finish_process``): a result holds the parsed patch (a tuple per line), a failure's traceback
what the failed stage built (for a miss in a 200,000-line file, its decoded lines and their loose
keys, some 400,000 objects)."""


def leave_for_the_exit(reported: object) -> None:
    if _left_for_the_exit is not None:
        _left_for_the_exit.append(reported)


def finish_process(code: int) -> NoReturn:
    """End a one-shot command without the interpreter's teardown once its output is flushed.

    The normal exit tears down every module and object one by one though the process is about to
    vanish: every file was written with os-level calls and closed, the lock released, nothing is
    left in a Python buffer but stdout and stderr. If flushing those fails (a closed pipe), the normal
    exit runs instead and reports it as Python always does.
    """
    try:
        for stream in (sys.stdout, sys.stderr):
            if stream is not None:  # None when Python started with that descriptor closed
                stream.flush()
    except (OSError, ValueError):
        sys.exit(code)
    import os

    os._exit(code)


def one_shot(run: Callable[[], int]) -> NoReturn:
    # A one-shot run allocates many tuples and lists and frees few cycles: the collector's passes
    # over them would find little, and the memory comes back when the process ends moments later.
    import gc

    global _left_for_the_exit
    gc.disable()
    _left_for_the_exit = []
    if sys.stdout is not None:
        sys.stdout = _ReaderMayLeave(sys.stdout)
    finish_process(run())


class _ReaderMayLeave:
    """Standard output whose reader may stop reading (``patchtx log | head -1``): once the pipe is
    closed, the rest of the output goes to /dev/null, so that the command still finishes what it
    was doing (an undo already committed) and exits with its own status, quietly."""

    def __init__(self, stream: Any) -> None:
        self._stream = stream

    def write(self, text: str) -> int:
        try:
            return int(self._stream.write(text))
        except BrokenPipeError:
            self._reader_left()
            return len(text)

    def flush(self) -> None:
        try:
            self._stream.flush()
        except BrokenPipeError:
            self._reader_left()

    def _reader_left(self) -> None:
        import os

        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, self._stream.fileno())
        os.close(devnull)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._stream, name)
