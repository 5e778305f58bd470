"""The exact fast path (``exact.update_exactly``: chunks placed with ``bytes.find`` on the file's
bytes) gives the line-based path's answer whenever it gives one, with the byte offsets of every
changed line range (a diff rendered from them is the diff of the line-based path's answer).

Files and chunks are drawn from a few similar lines (trailing and leading blanks, a dash and an en
dash, empty lines) so that matches repeat (ambiguity), differ only in whitespace or punctuation
(the fuzzy passes), sit at the first and last line, and chunks repeat their anchor line.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from patchtx.errors import PatchtxError
from patchtx.formats.codex import parse
from patchtx.model import ChangeKind, Chunk, FileChange
from patchtx.place.exact import update_exactly
from patchtx.place.matching import Locator
from patchtx.place.rewrite import rewrite
from patchtx.place.textfile import BOM_BYTES, decode
from patchtx.plan import update as update_module
from patchtx.plan.planner import plan
from patchtx.render import unified_diff

from ..examples import examples

if TYPE_CHECKING:
    from patchtx.model import LineKind

LINES = ["a", "a ", " a", "b", "", "c", "a-b", "a\u2013b", "é"]


@st.composite
def files(draw: st.DrawFn) -> bytes:
    lines = draw(st.lists(st.sampled_from(LINES), max_size=10))
    text = "".join(line + "\n" for line in lines)
    if lines and draw(st.integers(0, 4)) == 0:
        text = text[:-1]  # an unterminated last line (which the exact path always leaves alone)
    data = text.encode()
    return BOM_BYTES + data if draw(st.integers(0, 9)) == 0 else data


@st.composite
def chunks(draw: st.DrawFn, data: bytes) -> tuple[Chunk, ...]:
    """Chunks mostly cut from the file's own lines, in file order, sometimes changed so that they
    match only loosely (or nowhere), with anchors and End of File markers now and then."""
    texts = data.removeprefix(BOM_BYTES).decode().split("\n")
    out = []
    position = 0
    for _ in range(draw(st.integers(1, 3))):
        start = draw(st.integers(position, max(position, len(texts))))
        length = draw(st.integers(0, 4))
        old = texts[start : start + length]
        lines: list[tuple[LineKind, str]] = []
        for text in old:
            if draw(st.integers(0, 7)) == 0:
                text = draw(st.sampled_from(LINES))  # a line the file may not have there
            kind: LineKind = draw(st.sampled_from([" ", " ", "-"]))
            lines.append((kind, text))
            if draw(st.integers(0, 3)) == 0:
                lines.append(("+", draw(st.sampled_from([*LINES, "new"]))))
        if not lines or draw(st.integers(0, 4)) == 0:
            lines.append(("+", "added"))
        anchors: tuple[str, ...] = ()
        if draw(st.integers(0, 3)) == 0:
            anchors = tuple(draw(st.lists(st.sampled_from([*LINES, *texts[:start]]), min_size=1,
                                          max_size=2)))
        out.append(Chunk(anchors, tuple(lines), is_end_of_file=draw(st.integers(0, 5)) == 0))
        position = start + length
    return tuple(out)


def line_based(data: bytes, chunk_list: tuple[Chunk, ...],
               first_match: bool) -> tuple[bytes, list[tuple[int, int, int, int]]]:
    original = decode(data, "f")
    placements = Locator(original.texts, "f", first_match=first_match).place(chunk_list)
    rewritten, edits = rewrite(original, placements)
    return rewritten.encode(), edits


def line_starts(data: bytes) -> list[int]:
    """The byte offset of every line start, and of the end."""
    starts = [0]
    for index, byte in enumerate(data):
        if byte == 10 and index + 1 < len(data):
            starts.append(index + 1)
    return [*starts, len(data)] if data else [0]


@settings(max_examples=examples(400), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data(), files(), st.booleans())
def test_the_exact_path_answers_as_the_line_based_path(data: st.DataObject, before: bytes,
                                                      first_match: bool) -> None:
    check_against_line_based(before, data.draw(chunks(before)), first_match)


def check_against_line_based(before: bytes, chunk_list: tuple[Chunk, ...],
                             first_match: bool) -> None:
    fast = update_exactly(before, chunk_list, first_match=first_match)
    try:
        after, edits = line_based(before, chunk_list, first_match)
    except PatchtxError:
        assert fast is None, "the exact path placed chunks the line-based path refuses"
        return
    if fast is None:
        return  # left to the line-based path (fuzzy, retry, CR, ...): nothing to compare
    assert fast.after == after
    assert fast.edits == edits
    change = FileChange(ChangeKind.UPDATE, "f", "f", before, after, edits=tuple(edits))
    exact_change = FileChange(ChangeKind.UPDATE, "f", "f", before, fast.after,
                              edits=tuple(fast.edits),
                              edit_offsets=None if fast.offsets is None else tuple(fast.offsets))
    if fast.offsets is not None:
        old_starts, new_starts = line_starts(before), line_starts(after)
        for (old_start, old_end, new_start, new_end), offsets in zip(edits, fast.offsets,
                                                                     strict=True):
            assert offsets == (old_starts[old_start], old_starts[old_end],
                               new_starts[new_start], new_starts[new_end])
    for context in (0, 1, 3):
        assert unified_diff(exact_change, context) == unified_diff(change, context)


@pytest.mark.parametrize(("before", "chunk"), [
    (b"a\nb\na\nb\n", Chunk((), ((" ", "a"), ("-", "b"), ("+", "x")))),  # ambiguous
    (b"a\nb", Chunk((), (("-", "b"), ("+", "x")), is_end_of_file=True)),  # unterminated, at EOF
    (b"a\nb", Chunk((), (("-", "a"),))),  # the missing newline stays at the new last line
    (b"a\n", Chunk(("a",), (("+", "x"),))),  # inserted after the anchor, at the end
    (b"", Chunk((), (("+", "x"),))),  # an empty file
    ("\ufeffa\nb\n".encode(), Chunk((), (("-", "a"), ("+", "x")))),  # a BOM
])
def test_the_exact_path_answers_as_the_line_based_path_at_the_edges(before: bytes,
                                                                    chunk: Chunk) -> None:
    for first_match in (False, True):
        check_against_line_based(before, (chunk,), first_match)


def test_the_exact_path_is_taken_for_plain_exact_chunks_and_left_for_the_rest() -> None:
    before = b"def f():\n    return 1\n\ndef g():\n    return 1\n"
    plain = (Chunk(("def g():",), (("-", "    return 1"), ("+", "    return 2"))),)
    assert update_exactly(before, plain) is not None
    # A match in a fuzzy pass only, an ambiguous match, CR endings, a miss: the line-based path.
    loose = (Chunk((), ((" ", "def f():  "), ("-", "    return 1"))),)
    twice = (Chunk((), (("-", "    return 1"), ("+", "    return 2"))),)
    missing = (Chunk((), (("-", "nowhere"),)),)
    assert update_exactly(before, loose) is None
    assert update_exactly(before, twice) is None
    assert update_exactly(before, twice, first_match=True) is not None
    assert update_exactly(before.replace(b"\n", b"\r\n"), plain) is None
    assert update_exactly(before, missing) is None
    assert update_exactly(b"\x00" + before, plain) is None
    assert update_exactly(b"\xff" + before, plain) is None


@pytest.mark.parametrize("body", [
    "@@\n a\n-b\n+B",                          # first line
    "@@\n c\n-d\n+D\n*** End of File",         # last line, End of File
    "@@ a\n a\n-b\n+B",                        # the chunk repeats its anchor line
    "@@ a\n+new",                              # a pure insertion after an anchor
    "@@\n+appended",                           # appended at the end
    "@@\n-b\n+B\n@@\n-d",                      # two chunks
    "@@\n b\n-c\n+C\n@@\n-a",                  # chunks out of file order
    "@@\n x\n-b",                              # a miss
    "@@\n a \n-b",                             # trailing whitespace: a fuzzy pass
])
@pytest.mark.parametrize("content", ["a\nb\nc\nd\n", "a\nb\nc\nd", "\ufeffa\nb\nc\nd\n",
                                     "a\nb\nc\nd\na\nb\n"])
def test_plans_and_errors_are_the_same_with_and_without_the_exact_path(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, body: str, content: str) -> None:
    (tmp_path / "f.txt").write_bytes(content.encode())
    patch = parse(f"*** Begin Patch\n*** Update File: f.txt\n{body}\n*** End Patch")

    def outcome() -> object:
        try:
            result = plan(patch, tmp_path)
        except PatchtxError as error:
            return type(error), str(error), error.to_json()
        return result.targets, [(c.path, c.edits, unified_diff(c)) for c in result.changes]

    exact = outcome()
    monkeypatch.setattr(update_module, "update_exactly", lambda *_args, **_kwargs: None)
    assert exact == outcome()
