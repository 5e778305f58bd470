"""Unified diffs are exact: applying the rendered diff to the old bytes gives the new bytes, whether
the changed ranges come from the matcher's byte path (with their byte offsets), from its line path
(found in the bytes by the renderer), or from the generic line diff; for LF, CRLF and lone-CR line
breaks, a byte-order mark, a missing final newline on either side, adds, deletes and files emptied
or filled. Lines are git's: only an LF ends one (a lone CR is part of its line), so ``git apply``
takes every diff (tests/formats/unified and tests/cli check it on real histories and --stat too). Invalid
UTF-8 is shown with U+FFFD, line for line."""

from __future__ import annotations

import os
import re
import subprocess
from itertools import accumulate
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, reject, settings
from hypothesis import strategies as st

from patchtx.errors import AmbiguousContextError
from patchtx.model import ChangeKind, FileChange
from patchtx.render import unified_diff

from ..examples import examples
from ..formats.unified.support import needs_git
from .test_property import PROPERTY_SETTINGS, Document, Edit, cases, plan_in_temp_dir

HUNK = re.compile(r"^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@$")
NO_NEWLINE = "\\ No newline at end of file\n"


def apply_unified(old: bytes, diff: str) -> bytes:
    """A strict applier that reads lines as git does (an LF ends a line; a CR is part of it): every
    context and removed line must match exactly, each hunk header's line counts must be its
    body's, and hunks come in order without overlapping."""
    lines = [line.decode() for line in git_lines(old)]
    out: list[str] = []
    body = [line.decode() for line in git_lines(diff.encode())]
    cursor = 0
    i = 0
    while i < len(body) and not body[i].startswith("@@"):
        i += 1
    while i < len(body):
        match = HUNK.match(body[i].rstrip("\n"))
        assert match, body[i]
        old_count = 1 if match.group(2) is None else int(match.group(2))
        new_count = 1 if match.group(4) is None else int(match.group(4))
        start = int(match.group(1)) - (0 if old_count == 0 else 1)
        assert start >= cursor, "hunks out of order or overlapping"
        out.extend(lines[cursor:start])
        cursor = start
        i += 1
        old_seen = new_seen = 0
        while i < len(body) and not body[i].startswith("@@"):
            kind, text = body[i][0], body[i][1:]
            assert kind in " -+", body[i]
            if i + 1 < len(body) and body[i + 1] == NO_NEWLINE:
                assert text.endswith("\n")
                text = text[:-1]
                i += 1
            if kind in " -":
                assert lines[cursor] == text, (cursor, lines[cursor], text)
                cursor += 1
                old_seen += 1
            if kind in " +":
                out.append(text)
                new_seen += 1
            i += 1
        assert (old_seen, new_seen) == (old_count, new_count), match.group(0)
    out.extend(lines[cursor:])
    return "".join(out).encode()


def git_lines(data: bytes) -> list[bytes]:
    """The lines of ``data`` as git reads them: each ends with an LF (the last may not)."""
    return data.splitlines(keepends=True) if b"\r" not in data else [
        line for line in re.split(b"(?<=\n)", data) if line]


def line_ranges(old: bytes, new: bytes) -> list[Edit]:
    """The changed line ranges of two byte strings (difflib, as an independent reference)."""
    import difflib

    matcher = difflib.SequenceMatcher(None, old.splitlines(keepends=True),
                                      new.splitlines(keepends=True), autojunk=False)
    return [(i1, i2, j1, j2) for tag, i1, i2, j1, j2 in matcher.get_opcodes() if tag != "equal"]


def byte_offsets(old: bytes, new: bytes, ranges: list[Edit]) -> tuple[Edit, ...]:
    """Where each range's lines start and end in the bytes (as the planner's byte path gives)."""
    old_at = list(accumulate(map(len, old.splitlines(keepends=True)), initial=0))
    new_at = list(accumulate(map(len, new.splitlines(keepends=True)), initial=0))
    return tuple((old_at[a], old_at[b], new_at[c], new_at[d]) for a, b, c, d in ranges)


PIECES = ["a", "b", "", " x ", "caf\u00e9", "\u2013", "--", "++", "@@", "\\ n", "a\x0cb"]


@st.composite
def contents(draw: st.DrawFn, endings: tuple[str, ...] = ("\n", "\r\n", "\r")) -> bytes:
    """A file: lines with any of ``endings`` (one kind or mixed), maybe a BOM, maybe no final
    newline."""
    kinds = draw(st.sampled_from([*[(e,) for e in endings], endings]))
    lines = draw(st.lists(st.tuples(st.sampled_from(PIECES), st.sampled_from(kinds)), max_size=14))
    text = "".join(piece + ending for piece, ending in lines)
    if text and draw(st.booleans()):
        text = text.rstrip("\r\n")
    if draw(st.integers(0, 4)) == 0:
        text = "\ufeff" + text
    return text.encode()


@st.composite
def edited(draw: st.DrawFn, before: bytes, endings: tuple[str, ...] = ("\n", "\r\n", "\r")) -> bytes:
    """``before`` with a few lines replaced, removed or inserted (some of them its last)."""
    lines = before.splitlines(keepends=True)
    for _ in range(draw(st.integers(0, 4))):
        at = draw(st.integers(0, len(lines)))
        new = [(draw(st.sampled_from(PIECES)) + draw(st.sampled_from(endings))).encode()
               for _ in range(draw(st.integers(0, 3)))]
        lines[at : at + draw(st.integers(0, 3))] = new
    after = b"".join(lines)
    return after.rstrip(b"\r\n") if after and draw(st.integers(0, 3)) == 0 else after


@PROPERTY_SETTINGS
@given(cases())
def test_rendered_update_diff_applies_exactly(case: tuple[Document, list[Edit], str, bool]) -> None:
    doc, _changes, patch_text, first_match = case
    before = doc.encode()
    try:
        after = plan_in_temp_dir(before, patch_text, first_match)
    except AmbiguousContextError as ambiguous:
        # A generated hunk on a staircase (' a' right beside 'a') reads two ways since the
        # staircase rule (issue 37; tests/plan/test_property.py rejects the same draws).
        assert not first_match and "shifted as a whole" in ambiguous.message, ambiguous.message
        reject()
    import tempfile

    from patchtx.api import plan_patch  # the FileChange with matcher edits

    with tempfile.TemporaryDirectory() as root:
        with open(os.path.join(root, "f.txt"), "wb") as fh:
            fh.write(before)
        planned = plan_patch(patch_text, root, first_match=first_match)
    change = planned.changes[0]
    assert change.edits is not None
    assert apply_unified(before, unified_diff(change)) == after
    generic = FileChange(ChangeKind.UPDATE, "f.txt", "f.txt", before, after)
    assert apply_unified(before, unified_diff(generic)) == after


@settings(max_examples=examples(300), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data(), st.sampled_from([0, 1, 3, 5]))
def test_a_diff_applies_exactly_with_or_without_the_planners_ranges(data: st.DataObject,
                                                                    context: int) -> None:
    before = data.draw(contents())
    after = data.draw(edited(before)) if data.draw(st.booleans()) else data.draw(contents())
    ranges = line_ranges(before, after)
    with_ranges = FileChange(ChangeKind.UPDATE, "f", "f", before, after, edits=tuple(ranges))
    found = FileChange(ChangeKind.UPDATE, "f", "f", before, after)
    diff = unified_diff(with_ranges, context)
    assert apply_unified(before, diff) == after
    assert diff == unified_diff(found, context)
    assert (diff == "") == (before == after)


@settings(max_examples=examples(300), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data(), st.sampled_from([0, 1, 3, 5]))
def test_a_diff_from_byte_offsets_is_the_diff_without_them(data: st.DataObject, context: int) -> None:
    """The planner's byte path (LF lines) hands over where its ranges are; the diff is the same as
    the one the renderer makes finding them itself, and applies exactly. Its ranges may come in
    any order."""
    before = data.draw(contents(endings=("\n",))).removeprefix(b"\xef\xbb\xbf")
    after = data.draw(edited(before, endings=("\n",)))
    ranges = line_ranges(before, after)
    offsets = byte_offsets(before, after, ranges)
    order = data.draw(st.permutations(range(len(ranges))))
    given_offsets = FileChange(ChangeKind.UPDATE, "f", "f", before, after,
                               edits=tuple(ranges[i] for i in order),
                               edit_offsets=tuple(offsets[i] for i in order))
    found = FileChange(ChangeKind.UPDATE, "f", "f", before, after, edits=tuple(ranges))
    diff = unified_diff(given_offsets, context)
    assert diff == unified_diff(found, context)
    assert apply_unified(before, diff) == after


@given(contents(), st.sampled_from(["add", "delete", "emptied", "filled", "overwrite"]))
def test_a_side_without_lines_is_one_hunk_of_the_whole_other_side(data: bytes, case: str) -> None:
    if case == "add":
        change = FileChange(ChangeKind.ADD, "f", "f", None, data)
    elif case == "delete":
        change = FileChange(ChangeKind.DELETE, "f", "f", data, None)
    elif case == "emptied":
        change = FileChange(ChangeKind.UPDATE, "f", "f", data, b"")
    elif case == "filled":
        change = FileChange(ChangeKind.UPDATE, "f", "f", b"", data)
    else:
        change = FileChange(ChangeKind.ADD, "f", "f", b"", data, overwrote=b"")
    before, after = change.before or b"", change.after or b""
    diff = unified_diff(change)
    if not data:
        assert "@@" not in diff
        return
    assert diff.count("\n@@ ") == 1
    assert apply_unified(before, diff) == after
    count = len(git_lines(data))
    lines = "1" if count == 1 else f"1,{count}"  # git leaves a count of one out
    assert (f"\n@@ -{lines} +0,0 @@\n" if before else f"\n@@ -0,0 +{lines} @@\n") in diff


INVALID = [b"\xff", b"\xe2\x82", b"\xf0\x9f", b"\xc3"]


@settings(max_examples=examples(200), deadline=None)
@given(st.data())
def test_invalid_utf8_is_shown_with_replacement_characters_line_for_line(data: st.DataObject) -> None:
    """Bytes that are not UTF-8 show as U+FFFD, as if each line had been decoded on its own: the
    diff is the diff of the sides with every invalid sequence replaced, the same ranges changed."""
    pieces = [p.encode() for p in PIECES] + INVALID
    # (No lone CR: the renderer then finds its own ranges, which need not be these.)
    lines = st.lists(st.tuples(st.sampled_from(pieces), st.sampled_from([b"\n", b"\r\n"])), max_size=10)
    before = b"".join(a + b for a, b in data.draw(lines))
    after = b"".join(a + b for a, b in data.draw(lines))
    ranges = tuple(line_ranges(before, after))

    def shown(side: bytes) -> bytes:
        return b"".join(line.decode("utf-8", "replace").encode() for line in side.splitlines(keepends=True))

    raw = unified_diff(FileChange(ChangeKind.UPDATE, "f", "f", before, after, edits=ranges))
    replaced = unified_diff(FileChange(ChangeKind.UPDATE, "f", "f", shown(before), shown(after),
                                       edits=ranges))
    assert raw == replaced


@needs_git
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                 HealthCheck.function_scoped_fixture])
@given(st.data())
def test_git_apply_takes_the_diff_of_any_line_breaks(tmp_path: Path, data: st.DataObject) -> None:
    """Git splits lines at LF only (a CR is part of the line before it), and so does the diff,
    whatever the file's line breaks: ``git apply`` of the rendered diff makes the new file. (A
    lone CR once split the diff's lines as the text model splits them: git called it corrupt.)"""
    before = data.draw(contents())
    after = data.draw(edited(before))
    if before == after:
        return
    target = tmp_path / "f.txt"
    target.write_bytes(before)
    diff = unified_diff(FileChange(ChangeKind.UPDATE, "f.txt", "f.txt", before, after),
                        data.draw(st.sampled_from([1, 3])))
    done = subprocess.run(["git", "apply", "-"], cwd=tmp_path, input=diff.encode(), capture_output=True,
                          env={**os.environ, "GIT_CEILING_DIRECTORIES": str(tmp_path.parent)})
    assert done.returncode == 0, done.stderr.decode()
    assert target.read_bytes() == after


@pytest.mark.parametrize(("before", "after", "ranges"), [
    (b"a\r", b"a\r\n", (1, 1, 1, 2)),  # an empty LF line added after a line ended by a lone CR
    (b"x\ny\r", b"x\ny\r\nz\n", (2, 2, 2, 4)),
])
def test_ranges_that_do_not_describe_the_bytes_are_replaced_by_the_line_diff(
        before: bytes, after: bytes, ranges: Edit) -> None:
    """The line path counts lines as the text model holds them: a line ended by a lone CR and an
    empty line after it are two there, one CRLF line in the bytes. Such ranges do not describe the
    bytes; the diff is made from the lines of the bytes instead."""
    diff = unified_diff(FileChange(ChangeKind.UPDATE, "f", "f", before, after, edits=(ranges,)))
    assert apply_unified(before, diff) == after
    assert diff == unified_diff(FileChange(ChangeKind.UPDATE, "f", "f", before, after))


@pytest.mark.parametrize("seed", range(12))
def test_long_files_with_long_unchanged_stretches_diff_exactly(seed: int) -> None:
    """Long unchanged stretches between the changes (found by jumping over them), lines of very
    different lengths, any line breaks."""
    import random

    rng = random.Random(seed)
    endings = [("\n",), ("\r\n",), ("\r",), ("\n", "\r\n", "\r")][seed % 4]
    lines = [("x" * rng.choice([0, 1, 5, 40, 300]) + str(i) + rng.choice(endings)).encode()
             for i in range(rng.randint(200, 2000))]
    before = b"".join(lines)
    for _ in range(rng.randint(1, 12)):
        at = rng.randrange(len(lines))
        lines[at : at + rng.randint(0, 3)] = [f"new {rng.random()}{rng.choice(endings)}".encode()
                                              for _ in range(rng.randint(0, 3))]
    after = b"".join(lines)
    ranges = tuple(line_ranges(before, after))
    diff = unified_diff(FileChange(ChangeKind.UPDATE, "f", "f", before, after, edits=ranges))
    assert apply_unified(before, diff) == after
    assert diff == unified_diff(FileChange(ChangeKind.UPDATE, "f", "f", before, after,
                                           edits=ranges, edit_offsets=byte_offsets(before, after,
                                                                                   list(ranges))))


def _long_file(lines: int, lone_cr_at: tuple[int, ...], ending: bytes) -> bytes:
    return b"".join(b"line %d%s%s" % (i, b"\rtail" if i in lone_cr_at else b"", ending) for i in range(lines))


@pytest.mark.parametrize("ending", [b"\n", b"\r\n"], ids=["lf", "crlf"])
@pytest.mark.parametrize("lone_cr_at", [(3,), (2400,), (1200, 2999)], ids=["above", "below", "around"])
@pytest.mark.parametrize("changed", [1500, 2998])
def test_the_diff_of_a_long_file_with_a_lone_cr_is_exact(tmp_path: Path, ending: bytes,
                                                          lone_cr_at: tuple[int, ...], changed: int) -> None:
    """A file of 3,000 lines (past the line diff's budget, so the renderer jumps a long way by the
    average line length to find a range) with a lone CR somewhere: the planner's ranges count the
    text model's lines (a lone CR splits one there), git's do not, so the renderer finds its own.
    Applied to the old bytes, the diff makes the new bytes exactly, and each hunk says where it is
    (issue 38: a mutation of that path survived every test, none having a lone CR in a long file)."""
    import patchtx
    from patchtx.render import diff_texts

    before = _long_file(3000, lone_cr_at, ending)
    (tmp_path / "f.txt").write_bytes(before)
    patch = (f"*** Begin Patch\n*** Update File: f.txt\n@@\n line {changed - 1}\n-line {changed}\n"
             f"+line {changed} changed\n line {changed + 1}\n*** End Patch\n")
    planned = patchtx.plan_patch(patch, tmp_path)
    after = planned.targets[0].after
    assert after is not None and after != before
    for diff in (diff_texts(planned)[0],
                 unified_diff(FileChange(ChangeKind.UPDATE, "f.txt", "f.txt", before, after))):
        assert apply_unified(before, diff) == after
        starts = [int(m.group(1)) for line in diff.splitlines() if (m := HUNK.match(line))]
        git_line = before[:before.index(b"line %d" % changed)].count(b"\n") + 1  # git's line number
        assert starts == [git_line - 3]
