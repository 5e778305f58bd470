"""Planning time of patch/file shapes that stress the placement rule (issue 14 review).

Each case is planned with ``dry_run=True`` (nothing written) three times; the best time is shown
with the outcome. Run it against another tree to compare, e.g. the main of 2a69bf4:

    .venv/bin/python benchmarks/placement_cliffs.py
    PYTHONPATH=/path/to/other/src .venv/bin/python benchmarks/placement_cliffs.py
"""

from __future__ import annotations

import tempfile
import time
from pathlib import Path

import patchtx
from patchtx.errors import PatchtxError

LINES = 200_000


def measure(data: bytes, body: str, repeats: int = 3) -> tuple[float, str]:
    with tempfile.TemporaryDirectory() as folder:
        Path(folder, "f").write_bytes(data)
        patch = f"*** Begin Patch\n*** Update File: f\n{body}\n*** End Patch"
        best, outcome = float("inf"), "applied"
        for _ in range(repeats):
            started = time.perf_counter()
            try:
                patchtx.apply_patch(patch, folder, dry_run=True)
            except PatchtxError as error:
                outcome = error.kind
            best = min(best, time.perf_counter() - started)
    return best, outcome


def cases() -> list[tuple[str, bytes, str]]:
    locks = "".join(f"dependencies = [\nk{i}\n]\n" for i in range(2000))
    return [
        ("one line repeated, LF", ("x\n" * LINES + "y\n").encode(), "@@\n x\n x\n-y\n+z"),
        ("one line repeated, CRLF", ("x\r\n" * LINES + "y\r\n").encode(), "@@\n x\n x\n-y\n+z"),
        ("anchor repeated 20,000 times", ("dependencies = [\n a\n]\n" * 20000 + "end\n").encode(),
         "@@ dependencies = [\n-end\n+END"),
        ("2,000 hunks, repeated anchor", locks.encode(),
         "\n".join(f"@@ dependencies = [\n-k{i}\n+K{i}" for i in range(2000))),
        ("insertion under an anchor", ("line\n" * LINES + "anchor\n" + "line\n" * 10).encode(),
         "@@ anchor\n+new"),
        ("ambiguous blank line", ("\n" * LINES).encode(), "@@\n \n+x"),
        ("loose pass", ("  x  \n" * LINES + "  y  \n").encode(), "@@\n x\n-y\n+z"),
        ("5,000 hunks", "".join(f"l{i}\n" for i in range(20000)).encode(),
         "\n".join(f"@@\n-l{i * 4}\n+L{i}" for i in range(5000))),
        ("block rule, 200,000 candidates", ("class T:\n" + "    a\n" * LINES + "class U:\n    a\n").encode(),
         "@@ class T:\n-    a\n+    b"),
        ("unclosed bracket block", ("fn x() {\n" + "    a\n" * LINES).encode(),
         "@@ fn x() {\n-    a\n+    b"),
    ]


def main() -> None:
    for name, data, body in cases():
        seconds, outcome = measure(data, body)
        print(f"{name:34s} {seconds * 1000:9.1f} ms  {outcome}")


if __name__ == "__main__":
    main()
