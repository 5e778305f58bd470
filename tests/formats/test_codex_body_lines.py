"""The parser's body lines: one rule (``take_body``), whatever surrounds them."""

from __future__ import annotations

import pytest

from patchtx.errors import HunkParseError
from patchtx.formats.codex import parse


def test_bulk_body_lines_keep_crlf_patches_and_markers() -> None:
    patch = ("*** Begin Patch\r\n*** Update File: a.txt\r\n@@\r\n a\r\n-b\r\n+c\r\n"
             "*** Update File: b.txt\r\n@@ top\r\n x\r\n+y\r\n*** End of File\r\n*** End Patch")
    first, second = parse(patch).hunks
    assert first.chunks[0].lines == ((" ", "a"), ("-", "b"), ("+", "c"))
    assert second.chunks[0].anchors == ("top",) and second.chunks[0].is_end_of_file
    assert second.chunks[0].lines == ((" ", "x"), ("+", "y"))


def test_an_empty_line_is_empty_context_and_an_indented_marker_is_context() -> None:
    patch = ("*** Begin Patch\n*** Update File: a.txt\n@@\n a\n\n  *** End Patch\n @@ x\n-b\n"
             "@@\n+c\n*** End Patch")
    (update,) = parse(patch).hunks
    assert [chunk.lines for chunk in update.chunks] == [
        ((" ", "a"), (" ", ""), (" ", " *** End Patch"), (" ", "@@ x"), ("-", "b")),
        (("+", "c"),)]


def test_no_body_line_follows_the_end_of_file_marker() -> None:
    patch = "*** Begin Patch\n*** Update File: a.txt\n@@\n-a\n*** End of File\n\n+b\n*** End Patch"
    with pytest.raises(HunkParseError) as info:
        parse(patch)
    assert info.value.line == 7
    assert "Expected update hunk to start with a @@ context marker" in info.value.message
