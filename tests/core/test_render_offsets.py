"""Diffs rendered from byte offsets (``FileChange.edit_offsets``: one slice and replace per block,
one decode per diff) and whole-file diffs (adds, deletes: one decode and replace per file) are
byte for byte those of the previous renderer, kept below as the oracle: per-line decoding, a
Python loop of finds per context line, difflib for a side with no lines.

Lines are drawn from invalid UTF-8, multibyte characters, lone CRs and empty lines, files may end
without a line break, and edits sit at the first and last line, touch each other, or are empty.
"""

from __future__ import annotations

import difflib

from hypothesis import given, settings
from hypothesis import strategies as st

from patchtx.model import ChangeKind, FileChange
from patchtx.render import git_header, unified_diff

Edit = tuple[int, int, int, int]

LINES = [b"a", b"b", b"", b" x ", b"\xc3\xa9", b"\xe2\x82", b"\xff", b"\xf0\x9f", b"c\r", b"\r",
         b"\xe2\x80\x93"]


# -- the oracle: the renderer before byte-offset blocks, trimmed to the paths tested here ----------
def _old_range(start: int, stop: int) -> str:
    length = stop - start
    if length == 1:
        return str(start + 1)
    return f"{start + 1 if length else start},{length}"


def _old_block(prefix: str, lines: list[str]) -> str:
    if not lines:
        return ""
    text = prefix + prefix.join(lines)
    if not lines[-1].endswith(("\n", "\r")):
        text += "\n\\ No newline at end of file\n"
    return text


class _OldSide:
    def __init__(self, raw: list[bytes]) -> None:
        self.raw, self.size = raw, len(raw)

    def reach(self, line: int, steps: int) -> int:
        return min(self.size, line + steps) if steps > 0 else max(0, line + steps)

    def block(self, prefix: str, start: int, stop: int) -> str:
        return _old_block(prefix, [line.decode("utf-8", "replace") for line in self.raw[start:stop]])


class _OldOffsetSide:
    def __init__(self, data: bytes, offsets: dict[int, int]) -> None:
        self._data, self._offsets = data, offsets

    def reach(self, line: int, steps: int) -> int:
        data = self._data
        at = self._offsets[line]
        if steps > 0:
            end = len(data)
            while steps and at < end:
                at = data.find(b"\n", at) + 1 or end
                line += 1
                steps -= 1
        else:
            while steps and at > 0:
                at = data.rfind(b"\n", 0, at - 1) + 1
                line -= 1
                steps += 1
        self._offsets[line] = at
        return line

    def block(self, prefix: str, start: int, stop: int) -> str:
        if start >= stop:
            return ""
        text = self._data[self._offsets[start] : self._offsets[stop]].decode("utf-8", "replace")
        if text.endswith("\n"):
            return prefix + text[:-1].replace("\n", "\n" + prefix) + "\n"
        return prefix + text.replace("\n", "\n" + prefix) + "\n\\ No newline at end of file\n"


def old_unified_diff(change: FileChange, context: int = 3) -> str:
    old_name = f"a/{change.source or change.path}" if change.before is not None else "/dev/null"
    new_name = f"b/{change.path}" if change.after is not None else "/dev/null"
    if change.kind is ChangeKind.ADD and change.overwrote is None:
        old_name = "/dev/null"
    old: _OldSide | _OldOffsetSide
    new: _OldSide | _OldOffsetSide
    if change.edits is not None and change.edit_offsets is not None:
        edits = list(change.edits)
        old = _OldOffsetSide(change.before or b"", {
            line: at for edit, offsets in zip(edits, change.edit_offsets, strict=True)
            for line, at in ((edit[0], offsets[0]), (edit[1], offsets[1]))})
        new = _OldOffsetSide(change.after or b"", {
            line: at for edit, offsets in zip(edits, change.edit_offsets, strict=True)
            for line, at in ((edit[2], offsets[2]), (edit[3], offsets[3]))})
    else:
        old_raw = change.before.splitlines(keepends=True) if change.before else []
        new_raw = change.after.splitlines(keepends=True) if change.after else []
        matcher = difflib.SequenceMatcher(None, old_raw, new_raw, autojunk=False)
        edits = [(i1, i2, j1, j2) for tag, i1, i2, j1, j2 in matcher.get_opcodes() if tag != "equal"]
        old, new = _OldSide(old_raw), _OldSide(new_raw)
    header = git_header(change)  # (the git headers are tested in test_render and test_unified)
    if not edits:
        return "" if header.count("\n") == 1 else header
    out = [header, f"--- {old_name}\n+++ {new_name}\n"]
    group: list[Edit] = []
    groups: list[list[Edit]] = []
    for edit in sorted(edits):
        if group and edit[0] - group[-1][1] > 2 * context:
            groups.append(group)
            group = []
        group.append(edit)
    groups.append(group)
    for group in groups:
        old_lo = old.reach(group[0][0], -context)
        old_hi = old.reach(group[-1][1], context)
        new_lo = group[0][2] - (group[0][0] - old_lo)
        new_hi = group[-1][3] + (old_hi - group[-1][1])
        out.append(f"@@ -{_old_range(old_lo, old_hi)} +{_old_range(new_lo, new_hi)} @@\n")
        cursor = old_lo
        for old_start, old_end, new_start, new_end in group:
            out.append(old.block(" ", cursor, old_start))
            out.append(old.block("-", old_start, old_end))
            out.append(new.block("+", new_start, new_end))
            cursor = old_end
        out.append(old.block(" ", cursor, old_hi))
    return "".join(out)


# -- strategies -------------------------------------------------------------------------------------
def _join(lines: list[bytes], open_end: bool) -> bytes:
    data = b"".join(line + b"\n" for line in lines)
    return data[:-1] if open_end and lines and lines[-1] else data


def _starts(lines: list[bytes], size: int) -> list[int]:
    starts = [0]
    for line in lines:
        starts.append(starts[-1] + len(line) + 1)
    starts[-1] = min(starts[-1], size)  # the end of an unterminated last line is the file's end
    return starts


@st.composite
def offset_changes(draw: st.DrawFn) -> FileChange:
    """An update as the exact path plans one: LF lines, the edits' line ranges and their offsets."""
    lf_lines = [line for line in LINES if b"\r" not in line]
    old_lines = draw(st.lists(st.sampled_from(lf_lines), max_size=14))
    cuts = sorted(draw(st.lists(st.integers(0, len(old_lines)), max_size=6)))
    new_lines: list[bytes] = []
    raw_edits: list[tuple[int, int, int, int]] = []
    at = 0
    for old_start, old_end in zip(cuts[::2], cuts[1::2], strict=False):
        new_lines += old_lines[at:old_start]
        added = draw(st.lists(st.sampled_from(lf_lines), max_size=3))
        if old_start == old_end and not added and draw(st.booleans()):
            continue
        raw_edits.append((old_start, old_end, len(new_lines), len(new_lines) + len(added)))
        new_lines += added
        at = old_end
    new_lines += old_lines[at:]
    # A last line's break may change only where an edit removes the old last line; lines added
    # after an unterminated one would change it.
    last = max(raw_edits, default=(0, 0, 0, 0))
    removes_end = last[0] < last[1] == len(old_lines)
    old_open = draw(st.booleans()) and not (last[0] == last[1] == len(old_lines) and last[2] < last[3])
    new_open = draw(st.booleans()) if removes_end else old_open
    before, after = _join(old_lines, old_open), _join(new_lines, new_open)
    old_at, new_at = _starts(old_lines, len(before)), _starts(new_lines, len(after))
    offsets = tuple((old_at[a], old_at[b], new_at[c], new_at[d]) for a, b, c, d in raw_edits)
    if draw(st.booleans()):
        order = draw(st.permutations(range(len(raw_edits))))  # the renderer sorts them
        raw_edits = [raw_edits[i] for i in order]
        offsets = tuple(offsets[i] for i in order)
    kind = draw(st.sampled_from([ChangeKind.UPDATE, ChangeKind.MOVE]))
    source = "old.txt" if kind is ChangeKind.MOVE else None
    return FileChange(kind, "f.txt", "f.txt", before, after, source=source, edits=tuple(raw_edits),
                      edit_offsets=offsets)


@settings(max_examples=400)
@given(offset_changes(), st.integers(0, 4))
def test_offset_diffs_are_the_previous_renderers(change: FileChange, context: int) -> None:
    assert unified_diff(change, context) == old_unified_diff(change, context)


@given(st.lists(st.sampled_from(LINES), max_size=8), st.booleans(),
       st.sampled_from(["add", "delete", "emptied", "filled", "overwrite"]))
def test_whole_file_diffs_are_the_previous_renderers(lines: list[bytes], open_end: bool,
                                                     case: str) -> None:
    data = _join(lines, open_end)
    if case == "add":
        change = FileChange(ChangeKind.ADD, "f.txt", "f.txt", None, data)
    elif case == "delete":
        change = FileChange(ChangeKind.DELETE, "f.txt", "f.txt", data, None)
    elif case == "emptied":
        change = FileChange(ChangeKind.UPDATE, "f.txt", "f.txt", data, b"")
    elif case == "filled":
        change = FileChange(ChangeKind.UPDATE, "f.txt", "f.txt", b"", data)
    else:
        change = FileChange(ChangeKind.ADD, "f.txt", "f.txt", b"", data, overwrote=b"")
    assert unified_diff(change) == old_unified_diff(change)
