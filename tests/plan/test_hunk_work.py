"""A unified diff's work grows with its hunks, not with their square (issue 39, item 1).

8,000 one-line hunks took 18.8 s (git apply: 0.097 s), four times the hunks sixteen times the
time: each hunk's new side was looked for at its stated line moved by the hunks above it, and
that shift was summed anew over every earlier hunk. No clock here (speed lives in
benchmarks/scaling.py): the work is counted, every time a hunk's old or new side is read
(``Chunk.old_lines`` / ``Chunk.new_lines``), and four times the hunks must cost about four times
the reads, where summing over the hunks above costs sixteen times as many.
"""

from __future__ import annotations

from pathlib import Path

import pytest

import patchtx
from patchtx.model import Chunk


def _diff(n: int) -> tuple[str, str]:
    """A file of ``4n`` lines and a unified diff of ``n`` one-line hunks (one context line each
    side) that applies."""
    lines = [f"line {i}" for i in range(4 * n)]
    out = ["--- a/f.txt", "+++ b/f.txt"]
    for k in range(n):
        i = 4 * k + 1
        out += [f"@@ -{i},3 +{i},3 @@", f" {lines[i - 1]}", f"-{lines[i]}", f"+new {i}", f" {lines[i + 1]}"]
    return "".join(line + "\n" for line in lines), "\n".join(out) + "\n"


def _reads(monkeypatch: pytest.MonkeyPatch, tmp_path: Path, n: int) -> int:
    folder = tmp_path / str(n)
    folder.mkdir()
    text, diff = _diff(n)
    (folder / "f.txt").write_text(text)
    count = [0]
    for name in ("old_lines", "new_lines"):
        getter = getattr(Chunk, name).fget

        def counted(self: Chunk, getter=getter) -> list[str]:  # type: ignore[no-untyped-def]
            count[0] += 1
            return getter(self)  # type: ignore[no-any-return]

        monkeypatch.setattr(Chunk, name, property(counted))
    try:
        patchtx.apply_patch(diff, folder, dry_run=True)
    finally:
        monkeypatch.undo()
    return count[0]


def test_a_unified_diff_reads_its_hunks_a_number_of_times_linear_in_them(
        monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    small, large = _reads(monkeypatch, tmp_path, 200), _reads(monkeypatch, tmp_path, 800)
    assert small >= 200  # (every hunk is read: the count counts)
    assert large <= 4.5 * small, (small, large)
