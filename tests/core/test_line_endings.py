"""Line endings: the dominant ending, lines encoded back to bytes, the final newline a rewrite
moves, and patch lines split with their carriage returns."""

from __future__ import annotations

import itertools

import pytest
from hypothesis import given
from hypothesis import strategies as st

from patchtx.textfile import TextFile

ENDINGS = st.sampled_from(["\n", "\r\n", "\r"])


@given(st.lists(st.tuples(st.text(alphabet="ab \t", max_size=4), ENDINGS), max_size=12),
       st.sampled_from(["", "\n", "\r\n", "\r"]))
def test_dominant_ending_and_encode_agree_with_their_definitions(
        lines: list[tuple[str, str]], last: str) -> None:
    texts = [t for t, _ in lines] + (["end"] if last == "" else [])
    endings = [e for _, e in lines] + ([""] if last == "" else [])
    doc = TextFile(texts, endings)
    # Definition: the most common ending, ties to the one seen first, LF when there is none.
    seen = [e for e in endings if e]
    expected = max(seen, key=lambda e: (seen.count(e), -seen.index(e))) if seen else "\n"
    assert doc.dominant_ending == expected
    assert doc.encode() == "".join(t + e for t, e in zip(texts, endings, strict=True)).encode()


def test_encode_refuses_mismatched_lists() -> None:
    with pytest.raises(ValueError):
        TextFile(["a", "b"], ["\n"]).encode()


def _every_ending_list(max_lines: int) -> list[list[str]]:
    out: list[list[str]] = [[]]
    for size in range(1, max_lines + 1):
        for combo in itertools.product(["\n", "\r\n", "\r"], repeat=size):
            out.append(list(combo))
            out.append([*combo[:-1], ""])  # the same lines with the last one unterminated
    return out


def test_dominant_ending_shortcut_agrees_on_every_small_file() -> None:
    for endings in _every_ending_list(6):
        seen = [e for e in endings if e]
        expected = max(seen, key=lambda e: (seen.count(e), -seen.index(e))) if seen else "\n"
        assert TextFile(["x"] * len(endings), endings).dominant_ending == expected, endings


@pytest.mark.parametrize("endings", _every_ending_list(3))
def test_rewrite_moves_the_missing_final_newline_as_its_definition_says(endings: list[str]) -> None:
    from patchtx.matching import Placement
    from patchtx.rewrite import rewrite

    texts = [f"l{i}" for i in range(len(endings))]
    original = TextFile(texts, endings)
    dominant = original.dominant_ending
    for at in range(len(texts) + 1):
        for removed in range(len(texts) - at + 1):
            lines = (*[("-", t) for t in texts[at : at + removed]], ("+", "new"))
            out, _ = rewrite(original, [Placement(0, at, removed, lines)])  # type: ignore[arg-type]
            # Definition: every line keeps its ending, added lines take the dominant one; a line
            # left without one that is no longer last gets the dominant ending; the last line
            # ends as the original's last line did (terminated or not).
            pairs = [(t, e) for t, e in zip(texts, endings, strict=True)]
            pairs[at : at + removed] = [("new", dominant)]
            want = [e or dominant for _, e in pairs]
            if not original.ends_with_newline:
                want[-1] = ""
            assert out.texts == [t for t, _ in pairs]
            assert out.endings == want, (endings, at, removed)


@given(st.text(alphabet="a\r\n", max_size=12))
def test_split_lines_drops_one_carriage_return_before_each_line_feed(text: str) -> None:
    from patchtx.parser import split_lines

    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    assert split_lines(text) == [line[:-1] if line.endswith("\r") else line for line in lines]


@pytest.mark.parametrize("endings", [e for e in _every_ending_list(3) if "\r" not in e])
def test_a_rewrite_reads_back_as_its_lines_a_blank_last_line_included(endings: list[str]) -> None:
    # A file without a final newline whose new last line is blank ends with its line break:
    # without it the blank line would be no line at all (a `+` blank line at the end lost).
    from patchtx.matching import Placement
    from patchtx.rewrite import rewrite
    from patchtx.textfile import decode

    texts = [f"l{i}" for i in range(len(endings))]
    original = TextFile(texts, endings)
    for at in range(len(texts) + 1):
        for removed in range(len(texts) - at + 1):
            for added in ((), ("",), ("new", ""), ("", "new")):
                lines = (*[("-", t) for t in texts[at : at + removed]], *[("+", t) for t in added])
                out, _ = rewrite(original, [Placement(0, at, removed, lines)])  # type: ignore[arg-type]
                assert decode(out.encode(), "f").texts == out.texts, (endings, at, removed, added)
                if out.texts and out.texts[-1]:  # (the state is kept whenever it can be)
                    assert out.ends_with_newline == original.ends_with_newline
