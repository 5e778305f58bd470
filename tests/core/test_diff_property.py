"""Unified diffs are exact: applying the rendered diff to the old bytes gives the new bytes, whether
the changed ranges come from the matcher (updates) or from the generic line diff."""

from __future__ import annotations

import re

from hypothesis import given, settings
from hypothesis import strategies as st

from patchtx.model import ChangeKind, FileChange
from patchtx.render import _lines, unified_diff

from .test_property import PROPERTY_SETTINGS, Document, Edit, cases, plan_in_temp_dir

HUNK = re.compile(r"^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@$")


def apply_unified(old: bytes, diff: str) -> bytes:
    """A strict applier: every context and removed line must match exactly."""
    lines = [line.decode() for line in _lines(old)]
    out: list[str] = []
    # Diff lines end as the file's lines do (LF, CRLF or a lone CR), so split them the same way.
    body = [line.decode() for line in _lines(diff.encode())]
    cursor = 0
    i = 0
    while i < len(body) and not body[i].startswith("@@"):
        i += 1
    while i < len(body):
        match = HUNK.match(body[i].rstrip("\n"))
        assert match, body[i]
        start = int(match.group(1)) - (0 if match.group(2) == "0" else 1)
        out.extend(lines[cursor:start])
        cursor = start
        i += 1
        while i < len(body) and not body[i].startswith("@@"):
            text = body[i][1:]
            if i + 1 < len(body) and body[i + 1] == "\\ No newline at end of file\n":
                text = text[:-1]
                i += 1
            kind = body[i - (1 if body[i].startswith("\\") else 0)][0]
            if kind in " -":
                assert lines[cursor] == text, (cursor, lines[cursor], text)
                cursor += 1
            if kind in " +":
                out.append(text)
            i += 1
    out.extend(lines[cursor:])
    return "".join(out).encode()


@PROPERTY_SETTINGS
@given(cases())
def test_rendered_update_diff_applies_exactly(case: tuple[Document, list[Edit], str, bool]) -> None:
    doc, _changes, patch_text, first_match = case
    before = doc.encode()
    after = plan_in_temp_dir(before, patch_text, first_match)
    import os
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


@settings(max_examples=200, deadline=None)
@given(st.lists(st.sampled_from(["a\n", "b\n", "c\r\n", "d\r", "e"]), max_size=12),
       st.lists(st.sampled_from(["a\n", "b\n", "c\r\n", "d\r", "x\n", "e"]), max_size=12))
def test_generic_diff_applies_exactly(old_parts: list[str], new_parts: list[str]) -> None:
    old, new = "".join(old_parts).encode(), "".join(new_parts).encode()
    diff = unified_diff(FileChange(ChangeKind.UPDATE, "f", "f", old, new))
    assert apply_unified(old, diff) == new
