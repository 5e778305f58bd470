"""The parser's body lines: taken in bulk exactly as the grammar takes them one by one."""

from __future__ import annotations

from collections.abc import Callable

from hypothesis import given, settings
from hypothesis import strategies as st

from patchtx.errors import PatchtxError
from patchtx.model import Patch
from patchtx.parser import parse


def test_bulk_body_lines_keep_crlf_patches_and_markers() -> None:
    patch = ("*** Begin Patch\r\n*** Update File: a.txt\r\n@@\r\n a\r\n-b\r\n+c\r\n"
             "*** Update File: b.txt\r\n@@ top\r\n x\r\n+y\r\n*** End of File\r\n*** End Patch")
    first, second = parse(patch).hunks
    assert first.chunks[0].lines == ((" ", "a"), ("-", "b"), ("+", "c"))
    assert second.chunks[0].anchors == ("top",) and second.chunks[0].is_end_of_file
    assert second.chunks[0].lines == ((" ", "x"), ("+", "y"))


def _parse_line_by_line(text: str) -> Patch:
    """The plain definition of parse: every line, less one more CR at its end (Codex trims
    twice), through the state machine's feed."""
    from patchtx.parser import _patch_error, _StreamParser, unwrap

    lines = unwrap(text)
    parser = _StreamParser()
    for index in range(1, len(lines)):
        line = lines[index][:-1] if lines[index].endswith("\r") else lines[index]
        parser.feed(line, index + 1, index == len(lines) - 1)
    if parser.state != "ended":
        raise _patch_error("The last line of the patch must be '*** End Patch'")
    return Patch(tuple(parser.hunks), "\n".join(lines), parser.environment_id)


_HEADERS = st.sampled_from(["*** Update File: a.txt", "*** Add File: b.txt", "*** Delete File: c.txt"])


_BODY_LINES = st.sampled_from([
    " context", "-removed", "+added", "+", "-", " ", "@@", "@@", "@@ anchor", "", "+x\r", " y\r",
    "@@\r", "@@ ", "@@@", " @@", "*** End of File", "*** Move to: d.txt", "*** End Patch",
    "  *** End Patch", "plain", "+*** Add File: e.txt", "\t tab", "*** Add File: f.txt"])


@st.composite
def _patch_bodies(draw: st.DrawFn) -> list[str]:
    lines: list[str] = []
    for _ in range(draw(st.integers(0, 3))):
        lines.append(draw(_HEADERS))
        lines.extend(draw(st.lists(_BODY_LINES, max_size=8)))
    return lines


@settings(max_examples=1000)
@given(_patch_bodies(), st.sampled_from(["\n", "\r\n"]), st.sampled_from(["", " \n", "\n\t"]),
       st.booleans())
def test_parse_takes_body_lines_in_bulk_as_feed_would_line_by_line(
        body: list[str], separator: str, around: str, heredoc: bool) -> None:
    lines = ["*** Begin Patch", *body, "*** End Patch"]
    if heredoc:
        lines = ["<<'EOF'", *lines, "EOF"]
    text = around + separator.join(lines) + around

    def outcome(parse_function: Callable[[str], Patch]) -> object:
        try:
            return parse_function(text)
        except PatchtxError as error:
            return type(error), error.message, error.line, error.hint

    assert outcome(parse) == outcome(_parse_line_by_line)
