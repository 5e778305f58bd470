"""How many examples a property test draws.

The README's test command (``bash scripts/test.sh``) draws a twentieth of each test's full count
(at least 25, or the full count when that is less), so that a newcomer's run takes minutes; a
nightly run draws the full count with ``--full-examples`` (or ``PATCHTX_FULL_EXAMPLES=1``). The
counts given to ``examples`` are the full ones. The power-cut tests (tests/txn/test_power_loss.py)
likewise check fewer random disks per cut by default (every cut still gets the "all lost" and
"all kept" disks) and their full count with ``--full-examples``.
"""

from __future__ import annotations

import os

FULL = os.environ.get("PATCHTX_FULL_EXAMPLES") == "1"


def examples(full: int) -> int:
    """The examples to draw for a test whose full count is ``full``."""
    return full if FULL else min(full, max(full // 20, 25))
