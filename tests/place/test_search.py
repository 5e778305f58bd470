"""Searching a file's lines: Rust's whitespace in the loose passes, the uniqueness checks, and the
exact-pass and line-match searches."""

from __future__ import annotations

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from patchtx.errors import PatchtxError
from patchtx.model import Chunk
from patchtx.place import search as linesearch
from patchtx.place.matching import LineIndex, Locator
from patchtx.place.normalise import PUNCTUATION

from ..examples import examples


def test_python_strips_exactly_rusts_whitespace_plus_four_separators() -> None:
    from patchtx.place.normalise import PYTHON_ONLY_WHITESPACE as _PYTHON_ONLY_WHITESPACE
    from patchtx.place.normalise import WHITESPACE

    python_space = {chr(c) for c in range(0x110000) if chr(c).strip() == ""} - {""}
    assert python_space - set(WHITESPACE) == set(_PYTHON_ONLY_WHITESPACE)
    assert set(WHITESPACE) <= python_space


@pytest.mark.parametrize("from_bytes", [False, True], ids=["lines", "bytes"])
@pytest.mark.parametrize("separator", ["", "\x1c", "\x1f"])
@given(lines=st.lists(st.text(alphabet=" \t\u3000\x1c\x1d\x1e\x1fab", max_size=6), min_size=1,
                      max_size=8))
def test_fuzzy_keys_trim_rusts_whitespace_only(separator: str, from_bytes: bool, lines: list[str]) -> None:
    """Whether the lines hold a character that str.strip() strips and Rust keeps is found in them,
    or in the bytes they were decoded from when the index is given those."""
    from patchtx.place.matching import LineIndex
    from patchtx.place.normalise import WHITESPACE, normalise

    texts = [*lines, f"z{separator}"]  # with a separator somewhere the slow, exact path is taken
    index = LineIndex(texts, source="\r\n".join(texts).encode() if from_bytes else None)
    assert index.keys(1) == [t.rstrip(WHITESPACE) for t in texts]
    assert index.keys(2) == [t.strip(WHITESPACE) for t in texts]
    assert index.keys(3) == [normalise(t) for t in texts]


@pytest.mark.parametrize("source", ["a\n\u2013b\n", "\ufeffa\nb\n"], ids=["not ascii", "bom"])
def test_the_last_pass_folds_lines_whose_bytes_are_not_ascii(source: str) -> None:
    texts = source.removeprefix("\ufeff").splitlines()
    index = LineIndex(texts, source=source.encode())
    assert index.keys(3) == [line.replace("\u2013", "-") for line in texts]


class _CheckEverywhere:
    """The plain uniqueness check: every pattern searched again over its whole window."""

    @staticmethod
    def index(texts: list[str]) -> LineIndex:
        index = LineIndex(texts)
        index.matches_again = lambda *_args: True  # type: ignore[method-assign]
        return index


_FILE_LINES = st.sampled_from(["a", "a ", " a", "b", "b\t", "c", "", "a\u2013b", "a-b"])


@st.composite
def _chunks(draw: st.DrawFn) -> list[Chunk]:
    chunks = []
    for number in range(draw(st.integers(1, 3))):
        anchors = tuple(draw(st.lists(_FILE_LINES, max_size=2)))
        lines = tuple(draw(st.lists(st.tuples(st.sampled_from([" ", "-", "+"]), _FILE_LINES),
                                    min_size=1, max_size=3)))
        chunks.append(Chunk(anchors, lines, draw(st.booleans()) and number == 2, number + 1))
    return chunks


def _placed(texts: list[str], chunks: list[Chunk], index: LineIndex | None) -> object:
    try:
        return Locator(texts, "f", index=index).place(chunks)
    except PatchtxError as error:
        return type(error), error.message, error.details


@settings(max_examples=examples(600))
@given(st.lists(_FILE_LINES, max_size=14), _chunks())
@example(["b", "b"], [Chunk((), ((" ", "b\t"),))])  # twice in the second pass only
@example(["a-b", "x", "a-b", "x"], [Chunk(("a\u2013b",), ((" ", "x"),))])  # in the fourth
def test_uniqueness_checks_scan_after_the_match_as_a_full_search_would(
        texts: list[str], chunks: list[Chunk]) -> None:
    assert _placed(texts, chunks, None) == _placed(texts, chunks, _CheckEverywhere.index(texts))


@given(st.lists(_FILE_LINES, max_size=10), st.lists(_FILE_LINES, min_size=1, max_size=3),
       st.booleans())
def test_exact_pass_searches_the_lines_themselves_whatever_sequences_it_is_given(
        texts: list[str], pattern: list[str], eof: bool) -> None:
    wanted = list(pattern)
    results = {
        (type(lines), type(asked)): LineIndex(lines).search(asked, 0, len(texts), eof=eof, limit=30)
        for lines in (list(texts), tuple(texts)) for asked in (list(pattern), tuple(pattern))
    }
    assert len(set(map(repr, results.values()))) == 1, results
    index = LineIndex(texts)
    index.search(pattern, 0, len(texts))
    assert index.keys(0) == texts and pattern == wanted


@given(st.lists(st.sampled_from(["a", "b", "ab", ""]), max_size=150),
       st.lists(st.sampled_from(["a", "b", "ab", ""]), min_size=1, max_size=3),
       st.integers(0, 160), st.integers(0, 160), st.integers(1, 4))
def test_line_matches_are_every_start_where_the_whole_pattern_fits(
        keys: list[str], wanted: list[str], lower: int, upper: int, limit: int) -> None:
    from patchtx.place.search import matches as _matches

    m = len(wanted)
    every = [s for s in range(lower, min(upper, len(keys)) - m + 1) if keys[s : s + m] == wanted]
    assert _matches(keys, wanted, lower, upper, limit) == every[:limit]


# Characters where the bytes shortcut could go wrong: Python-only whitespace, Unicode line and
# paragraph separators and NEL (not line breaks for patchtx), the BOM, a no-break space, a dash
# that the last pass folds, a combining accent (NFC), CR and LF in any mix, and multi-byte
# characters whose UTF-8 holds 0x85 or 0x1c..0x1f-like continuation bytes.
_FILE_TEXT = st.text(alphabet="ab \t\r\n\x1c\x1d\x1e\x1f\x85\u2028\u2029\ufeff\u00a0\u2013e\u0301\u00c5\u0105\u3000",
                     max_size=40)


@settings(max_examples=examples(500))
@given(_FILE_TEXT, st.booleans(), _chunks())
def test_an_index_given_the_files_bytes_answers_as_one_given_only_its_lines(
        text: str, bom: bool, chunks: list[Chunk]) -> None:
    """The loose passes' questions (any U+001C-U+001F? all ASCII?) read off the bytes give the
    keys, and so the placements and errors, that reading them off the decoded lines gives."""
    from patchtx.place.textfile import BOM, decode

    data = ((BOM if bom else "") + text).encode()
    texts = decode(data, "f").texts
    from_lines, from_bytes = LineIndex(texts), LineIndex(texts, source=data)
    for tier in range(4):
        assert from_bytes.keys(tier) == from_lines.keys(tier)
    assert _placed(texts, chunks, LineIndex(texts, source=data)) == _placed(texts, chunks, LineIndex(texts))


# -- the linear search behind the loose passes (issue 38, item 8) ---------------------------------
def _every_start(keys: list[str], wanted: list[str], lower: int, upper: int) -> list[int]:
    """The simple reference: the pattern compared at every start, as Codex's seek_sequence does."""
    m = len(wanted)
    return [s for s in range(lower, min(upper, len(keys)) - m + 1) if keys[s : s + m] == wanted]


# Two lines and the one that differs: periodic files and patterns that match all but a line at many
# starts, where the pattern's longest line is everywhere (what sends a search to the linear one).
_FEW = st.sampled_from(["a", "a", "a", "b", "ab"])


@st.composite
def _search(draw: st.DrawFn) -> tuple[list[str], list[str], int, int]:
    """Keys, a pattern, and bounds mostly inside the keys (where a start at either end counts)."""
    keys = draw(st.lists(_FEW, max_size=60))
    wanted = draw(st.lists(_FEW, min_size=1, max_size=10))
    lower = draw(st.integers(0, len(keys) + 2))
    upper = draw(st.integers(lower, len(keys) + 2))
    return keys, wanted, lower, upper


@settings(max_examples=examples(3000))
@given(_search(), st.sampled_from([1, 2, 3, 70]), st.sampled_from([0, 1, 2]))  # 70: every start
@example((["a"] * 60, ["a"] * 11 + ["b"], 0, 60), 2, 2)  # every start compared up to its last line
@example((["a", "a", "a", "b"], ["a", "a", "b"], 0, 4), 1, 0)  # found right after a failed start
@example((["a", "a", "a", "b", "a"], ["a", "a", "b"], 0, 4), 1, 0)  # ... ending at the upper bound
@example((["a", "a", "b", "a", "a", "b"], ["a", "a", "b"], 0, 6), 2, 0)  # twice, overlapping a start
def test_the_search_finds_every_start_the_simple_search_finds(
        search: tuple[list[str], list[str], int, int], limit: int, budget: int) -> None:
    """Whether the search goes linear at once (budget 0), soon, or as it does, it finds the starts
    that comparing the pattern at every start finds."""
    from unittest import mock


    keys, wanted, lower, upper = search
    with mock.patch.object(linesearch, "VERIFY_BUDGET", budget):
        found = linesearch.matches(keys, wanted, lower, upper, limit)
    assert found == _every_start(keys, wanted, lower, upper)[:limit]


@settings(max_examples=examples(3000))
@given(_search(), st.integers(1, 60))
@example((["a", "a", "b"], ["a", "b"], 0, 2), 1)  # the last start: its last line is the last key
@example((["b", "a", "a", "a", "b", "a", "a", "b"], ["a", "a", "b"], 0, 9), 3)  # after a partial match
@example((["a", "b", "a", "b", "a"], ["a", "b", "a"], 0, 3), 2)  # two matches that overlap
@example((list("aabaaabaaa"), list("aabaaa"), 0, 5), 2)  # the next match inside a partial one's border
def test_the_linear_search_finds_the_starts_the_simple_search_finds(
        search: tuple[list[str], list[str], int, int], limit: int) -> None:
    from patchtx.place.search import matches_linearly as _matches_linearly

    keys, wanted, first, stop = search
    stop = min(stop, len(keys) - len(wanted) + 1)  # (as _matches calls it: every start fits)
    every = [s for s in range(first, stop) if keys[s : s + len(wanted)] == wanted]
    assert _matches_linearly(keys, wanted, first, stop, limit) == every[:limit]


# File lines that only the loose passes tell apart: typographic punctuation and its ASCII spelling,
# white space around, and a line that is nowhere else.
_LOOSE_LINES = st.sampled_from(["\u201ca\u201d", '"a"', ' "a" ', "\u2014", "-", "- ", "x", "x", ""])


@st.composite
def _long_chunks(draw: st.DrawFn) -> list[Chunk]:
    chunks = []
    for number in range(draw(st.integers(1, 2))):
        anchors = tuple(draw(st.lists(_LOOSE_LINES, max_size=1)))
        lines = tuple(draw(st.lists(st.tuples(st.sampled_from([" ", " ", "-", "+"]), _LOOSE_LINES),
                                    min_size=1, max_size=10)))
        chunks.append(Chunk(anchors, lines, draw(st.booleans()) and number == 1, number + 1))
    return chunks


@settings(max_examples=examples(1500), deadline=None)
@given(st.lists(_LOOSE_LINES, max_size=40), _long_chunks(), st.booleans(), st.sampled_from([0, 2]))
def test_placements_are_those_of_the_simple_search_in_every_pass(
        texts: list[str], chunks: list[Chunk], first_match: bool, budget: int) -> None:
    """THE placement rule over the optimised search (the longest line found with ``list.index``,
    then linear past a budget: forced at once with budget 0) places, refuses and words its errors
    exactly as over the simple search that compares the pattern at every start."""
    from unittest import mock

    from patchtx.place import matching

    def simple(keys: list[str], wanted: list[str], lower: int, upper: int, limit: int) -> list[int]:
        if not wanted:
            return [lower] if lower <= upper else []
        return _every_start(keys, wanted, lower, upper)[:limit]

    def placed(search: object) -> object:
        with mock.patch.object(matching, "matches", search), \
                mock.patch.object(linesearch, "VERIFY_BUDGET", budget):
            try:
                return Locator(texts, "f", first_match=first_match).place(chunks)
            except PatchtxError as error:
                return type(error), error.message, error.details

    assert placed(matching.matches) == placed(simple)


_FOLDED = "".join(map(chr, PUNCTUATION))  # every character the last pass folds


@settings(max_examples=examples(3000))
@given(st.lists(st.text(alphabet="ae\u0301\u0327\u0308\u00e9\u1100\u1161\u11a8\uac00\u201c\u2026 \r\x1c"
                        + _FOLDED, max_size=6), max_size=8))
@example(["e", "\u0301"])  # an accent that starts a line composes with nothing before it
@example(["\u1100", "\u1161"])  # nor does a Hangul vowel with the consonant that ends the line above
@example(["a\nb", "c"])  # a line that holds a line break is normalised alone
@example([_FOLDED])
def test_a_files_lines_normalised_together_are_each_line_normalised(lines: list[str]) -> None:
    """The last pass's keys of a file's lines, made in a few scans of its whole text, are NFC and
    the punctuation folded (``str.translate``) line by line."""
    import unicodedata

    from patchtx.place.normalise import unicode_key, unicode_keys

    one_by_one = [unicodedata.normalize("NFC", line).translate(PUNCTUATION) for line in lines]
    assert unicode_keys(lines) == one_by_one
    assert [unicode_key(line) for line in lines] == one_by_one


# Indentations where a shift is a prefix added or taken away, or none (tabs against spaces).
_INDENTED = st.tuples(st.sampled_from(["", " ", "  ", "\t", " \t", "    "]),
                      st.sampled_from(["a", "a", "b", ""]), st.sampled_from(["", " "]))


@settings(max_examples=examples(3000), deadline=None)
@given(st.lists(_INDENTED, max_size=30), st.lists(_INDENTED, min_size=1, max_size=8),
       st.integers(0, 32), st.integers(0, 32), st.sampled_from([0, 2]))
@example([("  ", "a", "")] * 12, [(" ", "a", "")] * 3 + [("", "a", "")], 0, 12, 0)  # late disagreement
@example([("", "", ""), ("  ", "a", ""), ("  ", "b", "")], [("", "", ""), ("", "a", ""), ("", "b", "")],
         0, 3, 0)  # a blank line first
@example([("", "", ""), ("  ", "a", ""), ("  ", "b", ""), ("", "x", ""), ("  ", "a", ""), ("  ", "b", "")],
         [("", "", ""), ("", "a", ""), ("", "b", "")], 0, 6, 0)  # ... where the file has none
@example([("  ", "a", "")] * 4, [("", "a", "")] * 2, 1, 4, 0)  # a fit just below the lower bound
def test_the_shifted_pass_finds_the_starts_the_simple_search_finds(
        texts: list[tuple[str, str, str]], block: list[tuple[str, str, str]], low: int, high: int,
        budget: int) -> None:
    """SEARCH/REPLACE blocks' shifted pass, asked at every start where the lines are equal white
    space aside, or past a budget (at once with budget 0) searched linearly by their relations,
    finds the starts where ``shift_between`` takes the block for the file's lines shifted."""
    from unittest import mock

    from patchtx.formats import block_placement
    from patchtx.formats.block_placement import SHIFTED, BlockIndex, shift_between

    file_lines = ["".join(parts) for parts in texts]
    lines = ["".join(parts) for parts in block]
    size = len(lines)
    every = [s for s in range(low, min(high, len(file_lines)) - size + 1)
             if shift_between(file_lines[s : s + size], lines) is not None]
    index = BlockIndex(file_lines)
    with mock.patch.object(block_placement, "VERIFY_BUDGET", budget):
        found = index.starts(index.pattern(lines, SHIFTED), SHIFTED, low, high, 99)
    assert found == every


@settings(max_examples=300, deadline=None)
@given(texts=st.lists(st.tuples(st.sampled_from(["", "  ", "\t", "    "]), st.sampled_from(["a", "}", "", "b"]),
                                st.sampled_from(["", " "])), min_size=1, max_size=12),
       start=st.integers(0, 11), size=st.integers(1, 4), low=st.integers(0, 12), high=st.integers(0, 12),
       indent=st.sampled_from(["", "  ", "\t"]))
@example([("  ", "}", ""), ("", "}", ""), ("", "}", "")], 1, 1, 0, 3, "")  # one step of a staircase
@example([("", "x", "")] * 6 + [("", "y", "")], 4, 2, 0, 7, "")  # one line repeated: no shift
def test_the_byte_space_says_no_staircase_only_where_the_line_space_does(
        texts: list[tuple[str, str, str]], start: int, size: int, low: int, high: int,
        indent: str) -> None:
    """``ByteIndex.shifted_near`` answers from the few lines around the hunk (issue 39: a file of
    one repeated line went to the line space whole): a no wherever ``LineIndex.shifted_near``
    says no, and a yes (``NotExact``: the line space words it) wherever it says yes."""
    from patchtx.place.exact import ByteIndex
    from patchtx.place.matching import NotExact

    lines = ["".join(parts) for parts in texts]
    if start + size > len(lines):
        return
    old = [indent + line for line in lines[start : start + size]]
    low, high = min(low, start), max(high, start + size)
    high = min(high, len(lines))
    body = "".join(line + "\n" for line in lines).encode()
    offset = [sum(len(line) + 1 for line in lines[:i]) for i in range(len(lines) + 1)]
    # (Framed offsets: line i starts at offset[i]; a run ends where the line after it starts.)
    expected = LineIndex(lines).shifted_near(old, start, start + size, low, high)
    try:
        answer = ByteIndex(body).shifted_near(old, offset[start], offset[start + size],
                                              offset[low], offset[high])
    except NotExact:
        answer = "yes"
    assert (answer is None) == (expected is None)


def test_a_file_of_one_repeated_line_is_settled_on_its_bytes() -> None:
    """A hunk whose first line repeats (in itself and above it) in a file of one repeated line is
    placed on the bytes, not handed to the line space for the staircase check (issue 39: 2.1 ms
    became ~100 ms on 200,000 lines); a real staircase still is."""
    from patchtx.formats.codex import parse
    from patchtx.place.exact import update_exactly

    def chunks(body: str) -> list[Chunk]:
        patch = parse(f"*** Begin Patch\n*** Update File: f\n{body}\n*** End Patch")
        return list(patch.hunks[0].chunks)  # type: ignore[union-attr]

    assert update_exactly(b"x\n" * 1000 + b"y\n", chunks("@@\n x\n x\n-y\n+z")) is not None
    assert update_exactly(b"    })\n  })\n})\nend\n", chunks("@@\n-  })\n+  ]")) is None


@settings(max_examples=400, deadline=None)
@given(lines=st.lists(st.sampled_from(["a", "b", "c", ""]), min_size=1, max_size=30),
       cuts=st.lists(st.tuples(st.integers(0, 29), st.integers(0, 3),
                               st.lists(st.sampled_from(["a", "b", "c", "", "d"]), max_size=3)),
                     min_size=1, max_size=8),
       first_match=st.booleans())
def test_blocks_in_turn_indexed_say_what_the_rebuilt_file_says(
        lines: list[str], cuts: list[tuple[int, int, list[str]]], first_match: bool) -> None:
    """Many SEARCH/REPLACE blocks are checked in turn on an index of the lines, in one pass
    (issue 39: the file was rebuilt and searched whole after each block, quadratic in them): the
    same blocks refused (``NotExact``) as when the file is rebuilt after each block."""
    from patchtx.place import exact
    from patchtx.place.matching import NotExact

    body = "".join(line + "\n" for line in lines).encode()
    offset = [sum(len(line) + 1 for line in lines[:i]) for i in range(len(lines) + 1)]
    placed, replacements, cursor = [], [], 0
    for at, size, new in sorted(cuts):
        at = max(at, cursor)
        if at + size > len(lines):
            break
        kept = [("-", text) for text in lines[at : at + size]] + [("+", text) for text in new]
        placed.append((len(placed), offset[at], offset[at + size], tuple(kept)))
        replacements.append("".join(text + "\n" for text in new).encode())
        cursor = at + size + 1

    def refused(indexed: bool) -> bool:
        try:
            if indexed:
                exact._each_once_in_turn_indexed(body, placed, replacements, first_match)
            else:
                exact._each_once_in_turn(body, placed, replacements, first_match)
        except NotExact:
            return True
        return False

    assert len(placed) < exact.IN_TURN_INDEXED
    assert refused(indexed=True) == refused(indexed=False)


@settings(max_examples=300)
@given(texts=st.lists(st.sampled_from(["a", "b", "c", " a", ""]), min_size=1, max_size=40),
       pattern=st.lists(st.sampled_from(["a", "b", "c", " a", ""]), min_size=1, max_size=4),
       bounds=st.tuples(st.integers(0, 45), st.integers(0, 45)), limit=st.integers(1, 5),
       tier=st.integers(0, 3))
def test_an_indexed_file_finds_what_the_scan_finds(texts: list[str], pattern: list[str],
                                                   bounds: tuple[int, int], limit: int, tier: int) -> None:
    """Once a file's searches have scanned it INDEX_AFTER times over, its LineIndex looks starts up
    in an index of where each key stands (issue 39: a repair places thousands of hunks one at a
    time): the same starts, the same last start, the same first match, in every pass; and past
    INDEXED_CANDIDATES candidates (a pattern of lines that stand everywhere) the scan answers."""

    low, high = bounds
    scanned, indexed = LineIndex(texts), LineIndex(texts)
    indexed._scanned = linesearch.INDEX_AFTER * len(texts) + 1  # (the next search builds the index)
    wanted = scanned.pattern(pattern, tier)
    assert indexed.starts(wanted, tier, low, high, limit) == scanned.starts(wanted, tier, low, high, limit)
    assert indexed._where[tier] is not None  # (the index answered)
    assert indexed.last(wanted, tier, low, high) == scanned.last(wanted, tier, low, high)
    assert indexed.first_any(pattern, low) == scanned.first_any(pattern, low)
    assert indexed.search(pattern, low, high, limit=limit) == \
        scanned.search(pattern, low, high, limit=limit)


def test_an_indexed_search_of_lines_that_stand_everywhere_is_the_scans(monkeypatch: pytest.MonkeyPatch) -> None:
    from patchtx.place import matching

    texts = ["x"] * 500 + ["y"]
    index = LineIndex(texts)
    index._scanned = linesearch.INDEX_AFTER * len(texts) + 1
    calls: list[int] = []
    scan = matching.matches
    monkeypatch.setattr(matching, "matches", lambda *args: calls.append(1) or scan(*args))
    assert index.starts(["x", "x"], 0, 0, 501, 3) == [0, 1, 2]  # (500 candidates: scanned)
    assert calls
    calls.clear()
    assert index.starts(["x", "y"], 0, 0, 501, 3) == [499]  # ('y' stands once: looked up)
    assert not calls
