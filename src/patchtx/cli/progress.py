"""Progress of long operations on a terminal: ``Writing files: 530/1070 (49%)``, redrawn in place.

The CLI creates a :class:`TerminalProgress` only when standard error is a terminal and ``--quiet``
is not given, and imports this module only then. Nothing is drawn for an operation that finishes
within a short delay (``PATCHTX_PROGRESS_DELAY`` seconds, 0.5 by default; git's delayed progress
works the same way), so quick edits print nothing; each phase that was drawn ends with ", done.".
"""

from __future__ import annotations

import os
import time
from typing import TextIO

DEFAULT_DELAY = 0.5
# Redrawing on every file would make a 10,000-file commit spend its time in the terminal.
REDRAW_INTERVAL = 0.1

_LABELS = {
    "planning": "Planning files",
    "checking": "Checking files",
    "writing": "Writing files",
    "verifying": "Running the check (seconds)",
}


def _delay_from_environment() -> float:
    try:
        return max(float(os.environ.get("PATCHTX_PROGRESS_DELAY", DEFAULT_DELAY)), 0.0)
    except ValueError:
        return DEFAULT_DELAY


class TerminalProgress:
    """A ``progress(phase, done, total)`` callback drawing one line per phase on ``stream``."""

    def __init__(self, stream: TextIO, *, delay: float | None = None) -> None:
        self._stream = stream
        self._visible_from = time.monotonic() + (_delay_from_environment() if delay is None else delay)
        self._phase: str | None = None
        self._done = 0
        self._total = 0
        self._drawn = False
        self._drawn_state = (-1, -1)
        self._last_draw = 0.0

    def __call__(self, phase: str, done: int, total: int) -> None:
        if phase != self._phase:
            self.close()
            self._phase = phase
        self._done, self._total = done, total
        now = time.monotonic()
        if now < self._visible_from:
            return
        if self._drawn and now - self._last_draw < REDRAW_INTERVAL and done < total:
            return
        self._draw()
        self._last_draw = now

    def close(self, *, success: bool = True) -> None:
        """End the current phase's line (", done." if it succeeded); later calls start a new one."""
        if self._drawn:
            if self._drawn_state != (self._done, self._total):
                self._draw()
            self._stream.write(", done.\n" if success else "\n")
            self._stream.flush()
        self._drawn = False
        self._phase = None

    def _draw(self) -> None:
        label = _LABELS.get(self._phase or "", self._phase or "")
        percent = f" ({self._done * 100 // self._total}%)" if self._total else ""
        # \r and "erase to end of line": redraw in place, whatever the previous text's length.
        self._stream.write(f"\r{label}: {self._done}/{self._total}{percent}\x1b[K")
        self._stream.flush()
        self._drawn = True
        self._drawn_state = (self._done, self._total)
