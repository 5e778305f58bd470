"""A refusal's work grows with the file and the hunk, not with their product (issue 38, item 8).

A 3,000-line hunk against a 100,000-line file of typographic punctuation was refused after 164 s
(Codex: 17 s): in a file of one repeated line, the search for a hunk that matches all but its last
line compared the whole hunk at every start, in each pass, once for the patch and again for each
of the repair step's 40 trials, each of which also looked for the closest region.

No clock here (speed lives in benchmarks/refusal_cost.py, against Codex): the work is counted,
every comparison of a file line's key with another line (the file's keys are wrapped in a ``str``
that counts its comparisons, in every pass), every line the last pass normalises and every pair
of lines whose indentations are compared (SEARCH/REPLACE blocks' shifted pass), and the same
refusal at twice the size (twice the file, twice the hunk) must cost about twice the work, where
comparing the hunk at every start costs four times as much.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

import patchtx
from patchtx.errors import ContextNotFoundError
from patchtx.place import matching, normalise

LINE = "\u201cWell\u2014I don\u2019t know\u2026\u201d \u2013 \u2018maybe\u2019"
ASCII = "\"Well-I don't know\u2026\" - 'maybe'"  # the line as the loosest pass reads it
CYCLE = ["\u201c\u2026\u201d", "\u2014 \u2014", "\u2018a\u2019 \u2013 b", "\u00a0x\u00a0", "\u201e\u201f"]
ASCII_CYCLE = ['"\u2026"', "- -", "'a' - b", "x", '""']


def _codex(kept: list[str], removed: str) -> str:
    body = "\n".join(" " + line for line in kept)
    return f"*** Begin Patch\n*** Update File: f.txt\n@@\n{body}\n-{removed}\n+new\n*** End Patch\n"


def _unified(kept: list[str], removed: str) -> str:
    # (The change in the middle, stated at line 2: a hunk with less context after its change than
    # before is pinned to the file's end, one stated at line 1 with context first to its start.)
    half = len(kept) // 2
    body = "\n".join([*(" " + line for line in kept[:half]), f"-{removed}", "+new",
                      *(" " + line for line in kept[half:])])
    size = len(kept) + 1
    return f"--- a/f.txt\n+++ b/f.txt\n@@ -2,{size} +2,{size} @@\n{body}\n"


def _shape(name: str, n: int, m: int) -> tuple[list[str], str]:
    """A file of ``n`` lines and a patch with a hunk of ``m`` old lines that it refuses (many
    hunks: ``m`` hunks in ``4 m`` lines)."""
    if name == "loose pass":  # only the last pass reads the hunk's lines as the file's
        return [LINE] * n, _codex([ASCII] * (m - 1), "absent")
    if name == "exact pass":  # the hunk's lines as the file has them, but the last
        return [LINE] * n, _codex([LINE] * (m - 1), "absent")
    if name == "periodic":
        return [CYCLE[i % 5] for i in range(n)], _codex([ASCII_CYCLE[i % 5] for i in range(m - 1)], "absent")
    if name == "repair trials":  # every line in the file: the lost-'+' trials may all apply
        lines = [LINE] * n
        lines[m // 2] = "Z\u2014"
        return lines, _codex([ASCII] * (m - 1), "Z-")
    if name == "unified diff":
        return [LINE] * n, _unified([LINE] * (m - 1), "absent")
    if name == "search/replace":  # shifted as a whole (two spaces less in the file) but the last line
        search = "\n".join(["  " + LINE] * (m - 1) + [LINE])
        return [LINE] * n, f"f.txt\n<<<<<<< SEARCH\n{search}\n=======\nnew\n>>>>>>> REPLACE\n"
    if name.startswith("many hunks"):  # ``m`` one-line hunks in a file of 4 m lines, the last stale
        return _many_hunks(name.removeprefix("many hunks, "), m)
    raise AssertionError(name)


def _many_hunks(form: str, m: int) -> tuple[list[str], str]:
    """Issue 39: a patch of ``m`` hunks whose last one the file does not hold. Each repair and
    the already-applied question place the hunks again, one at a time: searched over the whole
    file each time, that was quadratic in the hunks (8,000 hunks: 25-57 s)."""
    lines = [f"line {i} of the file" for i in range(4 * m)]
    out: list[str] = []
    for k in range(m):
        i = 4 * k + 1
        before, old, after = lines[i - 1], lines[i] if k < m - 1 else "stale", lines[i + 1]
        if form == "codex":
            out += ["@@", f" {before}", f"-{old}", f"+changed {i}", f" {after}"]
        elif form == "unified":
            out += [f"@@ -{i},3 +{i},3 @@", f" {before}", f"-{old}", f"+changed {i}", f" {after}"]
        else:
            out += ["f.txt", "<<<<<<< SEARCH", before, old, "=======", before, f"changed {i}",
                    ">>>>>>> REPLACE", ""]
    body = "\n".join(out) + "\n"
    if form == "codex":
        return lines, f"*** Begin Patch\n*** Update File: f.txt\n{body}*** End Patch\n"
    if form == "unified":
        return lines, f"--- a/f.txt\n+++ b/f.txt\n{body}"
    return lines, body


class _Key(str):
    """A file line's key that counts how often it is compared."""

    __slots__ = ()
    compared = 0

    def __eq__(self, other: object) -> bool:
        _Key.compared += 1
        return str.__eq__(self, other)

    def __ne__(self, other: object) -> bool:
        _Key.compared += 1
        return str.__ne__(self, other)

    __hash__ = str.__hash__


def _work(monkeypatch: pytest.MonkeyPatch, tmp_path: Path, name: str, n: int, m: int) -> int:
    lines, patch = _shape(name, n, m)
    folder = tmp_path / f"{name.replace('/', '-')}-{n}"
    folder.mkdir()
    (folder / "f.txt").write_text("\n".join(lines) + "\n", encoding="utf-8")
    normalised = 0
    original_key = normalise.unicode_key

    def counted_key(stripped: str) -> str:
        nonlocal normalised
        normalised += 1
        return original_key(stripped)

    original_keys = matching.LineIndex.keys

    def counted_keys(self: matching.LineIndex, tier: int) -> list[str]:
        keys = original_keys(self, tier)
        if keys and type(keys[0]) is not _Key:
            keys[:] = map(_Key, keys)  # (in place: passes that share a list share its keys)
        return keys

    original_keys_of = normalise.unicode_keys

    def counted_keys_of(stripped: list[str]) -> list[str]:
        nonlocal normalised
        normalised += len(stripped)
        return original_keys_of(stripped)

    original_shift = normalise.line_shift

    def counted_shift(in_file: str, in_patch: str) -> normalise.Shift | None:
        nonlocal normalised
        normalised += 1  # (a pair of lines' indentations compared: the shifted pass's work)
        return original_shift(in_file, in_patch)

    from patchtx.formats import block_placement
    monkeypatch.setattr(normalise, "line_shift", counted_shift)
    monkeypatch.setattr(block_placement, "line_shift", counted_shift, raising=False)
    monkeypatch.setattr(normalise, "unicode_key", counted_key)
    monkeypatch.setattr(matching, "unicode_keys", counted_keys_of)
    monkeypatch.setattr(matching.LineIndex, "keys", counted_keys)
    # The unified placement reads the decoded lines themselves: counted as they are read.
    from patchtx.place import textfile
    original_decode = textfile.decode

    def counted_decode(*args: Any, **kwargs: Any) -> textfile.TextFile:
        decoded = original_decode(*args, **kwargs)
        decoded.texts[:] = map(_Key, decoded.texts)
        return decoded

    from patchtx.plan import update
    monkeypatch.setattr(update, "decode", counted_decode)
    _Key.compared = 0
    with pytest.raises(ContextNotFoundError):
        patchtx.apply_patch(patch, folder, dry_run=True)
    monkeypatch.undo()
    return _Key.compared + normalised


@pytest.mark.parametrize("name", ["loose pass", "exact pass", "periodic", "repair trials", "unified diff",
                                  "search/replace"])
def test_a_refusal_at_twice_the_size_costs_twice_the_work(
        monkeypatch: pytest.MonkeyPatch, tmp_path: Path, name: str) -> None:
    n, m = 1000, 250  # (a hunk of a quarter of the file: comparing it at every start shows)
    small = _work(monkeypatch, tmp_path, name, n, m)
    large = _work(monkeypatch, tmp_path, name, 2 * n, 2 * m)
    assert small > n  # (the counters see the search)
    assert large <= 2.3 * small, (small, large)
    # And a small factor of the lines searched: each is compared a bounded number of times in each
    # pass (four), in the patch's search and in each of the repair step's trials (up to 40).
    assert small <= 400 * (n + m), small


@pytest.mark.parametrize("form", ["codex", "unified", "blocks"])
def test_a_refusal_of_twice_the_hunks_costs_twice_the_work(
        monkeypatch: pytest.MonkeyPatch, tmp_path: Path, form: str) -> None:
    """Issue 39: refusing a patch of many hunks (one stale) is linear in the hunks, in every format:
    the repairs and the already-applied question, which place the hunks again one at a time, look
    lines up in an index of the file (``LineIndex._search``) or rule a repair out by the lines'
    keys first (``_in_file_order``, ``_may_stand_as_left``) instead of searching the whole file
    once per hunk."""
    name = f"many hunks, {form}"
    small = _work(monkeypatch, tmp_path, name, 400, 400)
    large = _work(monkeypatch, tmp_path, name, 1600, 1600)
    assert small > 400  # (the counters see the search)
    assert large <= 4 * 1.5 * small, (small, large)
