"""The placement rule against an independent brute-force oracle.

The oracle enumerates every placement of a file's hunks by the rule of docs/format.md ("Where a
hunk goes"), exact matching only: hunks in file order, each starting at or after the previous
hunk's end and after an occurrence of its innermost anchor that lies at or after that end, the
outer anchors of its stack occurring in order anywhere above that occurrence. Pure insertions
without an anchor float to the end of the file.

patchtx (exact pass only, ``first_match=False``) must apply exactly the oracle's placement when
there is one, refuse when there is none, and when there are several either refuse or apply one
that the block rule settles, which is checked here independently.
"""

from __future__ import annotations

from collections.abc import Sequence

from hypothesis import assume, event, given, settings
from hypothesis import strategies as st

from patchtx.errors import AmbiguousContextError, ContextNotFoundError
from patchtx.model import Chunk
from patchtx.place.exact import update_exactly
from patchtx.place.matching import MAX_CANDIDATES, LineIndex, Locator

from ..examples import examples

FILE_LINES = ["a", "b", "c", "  a", "  b", "class T:", "  def f():", "x {", "}", ""]
ANCHORS = ["a", "class T:", "  def f():", "x {"]
OLD_LINES = ["a", "b", "c", "  a", "  b", "}", ""]

Placing = tuple[tuple[int, int], ...]  # (start, length) per chunk, in chunk order


def _occurrences(texts: Sequence[str], line: str) -> list[int]:
    return [i for i, text in enumerate(texts) if text == line]


def _outer_end(texts: Sequence[str], outer: Sequence[str]) -> int | None:
    """The smallest line after an in-order occurrence of every outer anchor (None: none)."""
    at = 0
    for anchor in outer:
        found = [i for i in _occurrences(texts, anchor) if i >= at]
        if not found:
            return None
        at = found[0] + 1
    return at


def oracle(texts: Sequence[str], chunks: Sequence[Chunk]) -> set[Placing]:
    results: set[Placing] = set()

    def walk(index: int, prev_end: int, so_far: tuple[tuple[int, int], ...]) -> None:
        if index == len(chunks):
            results.add(so_far)
            return
        chunk = chunks[index]
        old = [text for kind, text in chunk.lines if kind != "+"]
        if not chunk.anchors and not old:
            walk(index + 1, prev_end, (*so_far, (len(texts), 0)))
            return
        lows: list[int] = []
        if chunk.anchors:
            outer = _outer_end(texts, chunk.anchors[:-1])
            if outer is None:
                return
            # (A hunk may start on its anchor line itself when it repeats that line.)
            lows = sorted({a + (0 if old else 1) for a in _occurrences(texts, chunk.anchors[-1])
                           if a >= max(prev_end, outer)})
        else:
            lows = [prev_end]
        if not old:
            for low in lows:
                walk(index + 1, low, (*so_far, (low, 0)))
            return
        starts: set[int] = set()
        for low in lows:
            for s in range(low, len(texts) - len(old) + 1):
                if list(texts[s:s + len(old)]) == old and (
                        not chunk.is_end_of_file or s + len(old) == len(texts)):
                    starts.add(s)
        for s in sorted(starts):
            walk(index + 1, s + len(old), (*so_far, (s, len(old))))

    walk(0, 0, ())
    return results


def block_of(texts: Sequence[str], opener: int) -> tuple[int, int] | None:
    """The block a line opens, computed independently (docs/format.md, the block rule): the
    lines after it indented deeper (blanks included); for a line ending with an opening bracket
    up to the line where the brackets balance, which must be the first line not indented
    deeper; an indented block must hold its triple quotes in pairs."""
    def indentation(text: str) -> int:
        return len(text) - len(text.lstrip())

    line = texts[opener].rstrip()
    following = [i for i in range(opener + 1, len(texts)) if texts[i].strip()]
    outside = [i for i in following if indentation(texts[i]) <= indentation(line)]
    end = outside[0] if outside else len(texts)
    if line.endswith(("{", "(", "[")):
        depth = 0
        for number in range(opener, len(texts)):
            for char in texts[number]:
                depth += 1 if char in "{([" else -1 if char in "})]" else 0
            if depth <= 0:
                return (opener, number + 1) if number == end else None
        return None
    if not any(i < end for i in following):
        return None
    if any("\n".join(texts[opener:end]).count(q) % 2 for q in ('"""', "'''")):
        return None
    return opener, end


@st.composite
def cases(draw: st.DrawFn) -> tuple[list[str], list[Chunk]]:
    """Hunks mostly cut from the file itself (so they are found, often more than once), with
    anchors taken from lines above them; sometimes invented lines."""
    texts = draw(st.lists(st.sampled_from(FILE_LINES), max_size=16))
    chunks = []
    cursor = 0
    for _ in range(draw(st.integers(1, 3))):
        if texts and cursor < len(texts) and draw(st.integers(0, 4)):
            start = draw(st.integers(cursor, len(texts) - 1))
            old = texts[start:start + draw(st.integers(0, 3))]
            above = texts[:start] or ANCHORS
            cursor = start + len(old)
        else:
            old = draw(st.lists(st.sampled_from(OLD_LINES), max_size=3))
            above = ANCHORS
        anchors = tuple(draw(st.lists(st.sampled_from(above), max_size=2)))
        lines = tuple((draw(st.sampled_from([" ", "-"])), text) for text in old)
        lines += tuple(("+", t) for t in draw(st.lists(st.sampled_from(["N", "M"]), max_size=2)))
        if lines:
            chunks.append(Chunk(anchors, lines, draw(st.integers(0, 5)) == 0 and bool(old)))
    return texts, chunks or [Chunk((), (("+", "N"),))]


@st.composite
def block_files(draw: st.DrawFn) -> list[str]:
    """Files made of blocks (indented bodies, bracketed ones, nested ones), whose bodies repeat
    lines: where the block rule has something to settle."""
    texts: list[str] = []
    for _ in range(draw(st.integers(1, 4))):
        opener = draw(st.sampled_from(["class T:", "class U:", "x {", "y {", "z(", "a"]))
        body = draw(st.lists(st.sampled_from(["  a", "  b", "    a", "  def f():", ""]),
                             min_size=1, max_size=4))
        texts += [opener, *body]
        if opener.endswith("{"):
            texts.append("}")
        elif opener.endswith("("):
            texts.append(")")
    return texts


@st.composite
def block_cases(draw: st.DrawFn) -> tuple[list[str], list[Chunk]]:
    texts = draw(block_files())
    openers = [t for t in texts if not t.startswith(" ") and t] + ["  def f():"]
    chunks = []
    cursor = 0
    for _ in range(draw(st.integers(1, 2))):
        if cursor >= len(texts):
            break
        start = draw(st.integers(cursor, len(texts) - 1))
        old = texts[start:start + draw(st.integers(1, 2))]
        cursor = start + len(old)
        anchors = tuple(draw(st.lists(st.sampled_from(openers), max_size=2)))
        lines = tuple((draw(st.sampled_from([" ", "-"])), text) for text in old) + (("+", "N"),)
        chunks.append(Chunk(anchors, lines))
    return texts, chunks


def _old(chunk: Chunk) -> list[str]:
    return [text for kind, text in chunk.lines if kind != "+"]


@settings(max_examples=examples(4000), deadline=None)
@given(cases())
def test_patchtx_places_as_the_brute_force_oracle(case: tuple[list[str], list[Chunk]]) -> None:
    check_against_oracle(*case)


@settings(max_examples=examples(3000), deadline=None)
@given(block_cases())
def test_the_block_rule_against_the_oracle(case: tuple[list[str], list[Chunk]]) -> None:
    check_against_oracle(*case)


def check_against_oracle(texts: list[str], chunks: list[Chunk]) -> None:
    # Codex's trailing-blank retry is an extension the oracle does not model.
    assume(all(not _old(c) or _old(c)[-1] != "" for c in chunks))
    expected = oracle(texts, chunks)
    locator = Locator(texts, "f", index=LineIndex(texts, passes=1))
    try:
        got: Placing | str = tuple(
            (p.start, p.length) for p in sorted(locator.place(chunks), key=lambda p: p.chunk_index))
    except ContextNotFoundError:
        got = "missing"
    except AmbiguousContextError:
        got = "ambiguous"
    event(f"oracle placements: {min(len(expected), 2)}; patchtx: "
          f"{got if isinstance(got, str) else 'applied'}")
    if len(expected) == 1:
        assert got == next(iter(expected)), (texts, chunks, expected)
    elif not expected:
        assert got == "missing", (texts, chunks)
    elif got != "ambiguous":
        assert not isinstance(got, str), (texts, chunks, expected, got)
        assert got in expected, (texts, chunks, expected, got)
        # The block rule's claim: each hunk with several starts has an anchor that occurs once
        # and opens a block holding exactly one of them: the one applied.
        for number, chunk in enumerate(chunks):
            candidates = {placing[number] for placing in expected}
            if len(candidates) == 1:
                continue
            assert len(candidates) <= MAX_CANDIDATES
            settled = False
            for anchor in chunk.anchors:
                where = _occurrences(texts, anchor)
                block = block_of(texts, where[0]) if len(where) == 1 else None
                if block is None:
                    continue
                inside = [c for c in candidates if block[0] <= c[0] and c[0] + c[1] <= block[1]]
                if inside == [got[number]]:
                    settled = True
            assert settled, (texts, chunks, expected, got)


@settings(max_examples=examples(3000), deadline=None)
@given(cases(), st.booleans())
def test_the_byte_path_rewrites_as_the_line_path(case: tuple[list[str], list[Chunk]],
                                                 first_match: bool) -> None:
    texts, chunks = case
    data = "".join(t + "\n" for t in texts).encode()
    exact = update_exactly(data, chunks, first_match=first_match)
    if exact is None:
        return
    from patchtx.place.rewrite import rewrite
    from patchtx.place.textfile import decode

    original = decode(data, "f")
    placements = Locator(original.texts, "f", first_match=first_match).place(chunks)
    assert exact.after == rewrite(original, placements)[0].encode()


@settings(max_examples=examples(2000), deadline=None)
@given(st.lists(st.sampled_from(["a", "b", ""]), max_size=30),
       st.lists(st.sampled_from(["a", "b", ""]), min_size=1, max_size=3),
       st.integers(0, 30), st.integers(0, 30))
def test_the_last_match_is_the_last_of_all_matches(texts: list[str], pattern: list[str],
                                                    low: int, high: int) -> None:
    every = [s for s in range(low, high - len(pattern) + 1)
             if texts[s:s + len(pattern)] == pattern and s + len(pattern) <= len(texts)]
    assert LineIndex(texts).last(pattern, 0, low, high) == (every[-1] if every else -1)
