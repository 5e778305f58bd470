"""The guard at the cost of one parse (issue 38): each file parsed once (the old version only when
the new one has errors), Python by the parser alone (no bytecode), and the errors located in time
that grows with the file, not with its square. The work is counted here (calls, bytes read, pairs
of lines compared), never timed; its time is measured in benchmarks/syntax_cost.py."""

from __future__ import annotations

import ast
import difflib
import json
from typing import Any

import pytest

from patchtx.plan import syntax
from patchtx.plan.syntax import check_file

from . import need_grammars


def counting(monkeypatch: pytest.MonkeyPatch, module: Any, name: str) -> list[bytes | str]:
    """Every call of ``module.name`` from now on, by its first argument."""
    calls: list[bytes | str] = []
    real = getattr(module, name)

    def counted(data: Any, *args: Any, **kwargs: Any) -> Any:
        calls.append(data)
        return real(data, *args, **kwargs)

    monkeypatch.setattr(module, name, counted)
    return calls


def test_python_is_parsed_not_compiled(monkeypatch: pytest.MonkeyPatch) -> None:
    real = compile

    def no_bytecode(source: Any, filename: Any, mode: str, flags: int = 0, *args: Any, **kwargs: Any) -> Any:
        assert flags & ast.PyCF_ONLY_AST, "the guard compiled the file to bytecode"
        return real(source, filename, mode, flags, *args, **kwargs)

    monkeypatch.setattr("builtins.compile", no_bytecode)
    assert check_file("a.py", None, b"def f(x):\n    return [y for y in x]\n").status == "ok"
    result = check_file("a.py", b"x = 1\n", b"x = (1\n")
    assert result.status == "errors" and result.errors[0].line == 1


def test_each_version_is_parsed_once_and_the_old_one_only_when_needed(monkeypatch: pytest.MonkeyPatch) -> None:
    parsed = counting(monkeypatch, ast, "parse")
    good, broken, worse = b"x = 1\n", b"x = (1\n", b"x = (1\ny = [\n"
    assert check_file("a.py", good, good.replace(b"1", b"2")).status == "ok"
    assert parsed == [b"x = 2\n"]  # the new version parses: the old one is not read
    parsed.clear()
    assert check_file("a.py", good, broken).status == "errors"
    assert parsed == [broken, good]
    parsed.clear()
    assert check_file("a.py", broken, worse).status == "unchanged_errors"
    assert parsed == [worse, broken]

    loaded = counting(monkeypatch, json, "loads")
    old, new = b'{"a": 1 // one\n}\n', b'{"a": 2 // two\n}\n'
    assert check_file("settings.json", old, new).status == "ok"  # JSON with comments: read blanked
    assert len(loaded) == 2  # the new version as JSON, then blanked; the old one never
    loaded.clear()
    # A file that held comments before: old and new each read as JSON, then blanked (was 3 for old).
    assert check_file("data.json", old, b'{"a": // two\n}\n').status == "errors"
    assert len(loaded) == 4


class Metered(bytes):
    """Bytes that count how many of them the guard reads: every slice, every search or count over
    a range, every whole-file method. Work that grows with the square of the file shows as a count
    that does; no clock, so no load can make it pass or fail."""

    read = 0

    def __getitem__(self, key: Any) -> Any:
        part = bytes.__getitem__(self, key)
        Metered.read += len(part) if isinstance(part, bytes) else 1
        return part


def _ranged(name: str) -> Any:
    real = getattr(bytes, name)

    def method(self: bytes, sub: Any, *where: Any) -> Any:
        low, high, _ = slice(*where[:2]).indices(len(self)) if where else (0, len(self), 1)
        Metered.read += max(0, high - low)
        return real(self, sub, *where)

    return method


def _whole(name: str) -> Any:
    real = getattr(bytes, name)

    def method(self: bytes, *args: Any, **kwargs: Any) -> Any:
        Metered.read += len(self)
        return real(self, *args, **kwargs)

    return method


for _name in ("count", "find", "rfind", "index", "rindex", "startswith", "endswith"):
    setattr(Metered, _name, _ranged(_name))
for _name in ("split", "splitlines", "strip", "lstrip", "rstrip", "decode", "replace", "partition"):
    setattr(Metered, _name, _whole(_name))


def test_errors_on_one_long_line_are_located_in_linear_time() -> None:
    """Errors on one line of a Rust file: each was counted from the file's start (a slice to its
    end, a count of line breaks and a decode from the line's start for every error), which read
    the file once per error (3,500 times its size for 1,000 errors, 14,000 times for 4,000: 100,000
    took minutes). Now each error costs a search and a few bytes read near it: the bytes read stay
    a small multiple of the file's size, whatever the number of errors. (The walk runs here, in
    this process, to be counted; the grammar itself is no part of it. Its time at 100,000 errors is
    in benchmarks/syntax_cost.py --locate.)"""
    need_grammars()
    parser = syntax._tree_sitter_parser("rust")
    read = {}
    for count in (2_000, 4_000):
        data = Metered(b"fn f() {" + b" 1 +;" * count + b"}\n")
        Metered.read = 0
        found = syntax._tree_sitter_errors(parser, data)
        read[count] = Metered.read
        assert len(found) == count
        assert [(issue.line, issue.column) for issue, _, _ in found[:3]] == [(1, 13), (1, 18), (1, 23)]
        assert count <= Metered.read <= 4 * len(data)  # (was 3,500x at 1,000 errors, and growing)
    assert read[4_000] <= 2.2 * read[2_000]
    # The whole guard, through its grammars' process, places them the same.
    result = check_file("a.rs", None, b"fn f() {" + b" 1 +;" * 2_000 + b"}\n")
    assert result.status == "errors"
    assert [(e.line, e.column) for e in result.errors] == [(1, 13), (1, 18), (1, 23), (1, 28), (1, 33)]


def _edits(lines: int) -> dict[str, tuple[list[bytes], list[bytes]]]:
    """Before and after, ``lines`` long: repeated lines, one broken (what made difflib quadratic:
    every line matches every other); unique lines, every 37th edited; runs of repeated and unique
    lines, every 101st edited and seven deleted."""
    repeated = [b"x = 1"] * lines
    broken = list(repeated)
    broken[lines * 53 // 100] = b"x = (1"
    unique = [b"v%d = %d" % (i, i) for i in range(lines)]
    mixed = [b"pass" if i // 10 % 2 else b"w%d = 0" % i for i in range(lines)]
    mixed_after = [line + b"  # e" if i % 101 == 0 else line for i, line in enumerate(mixed)]
    del mixed_after[lines // 3:lines // 3 + 7]
    return {"repeated": (repeated, broken),
            "unique": (unique, [line + b"  # e" if i % 37 == 0 else line for i, line in enumerate(unique)]),
            "mixed": (mixed, mixed_after)}


def test_which_lines_a_patch_wrote_is_found_in_linear_time(monkeypatch: pytest.MonkeyPatch) -> None:
    """The lines the patch wrote came from difflib's longest matches over the whole file, which
    compare every line with every other where lines repeat (25 million pairs for 5,000 lines, 100
    million for 10,000: a megabyte took hours). Now difflib only sees stretches of at most 100
    lines holding a change, and the rest is cut at lines found once on each side: the pairs difflib
    may compare plus the lines searched for anchors stay about twice the file's lines. Counted,
    not timed (the times are in benchmarks/syntax_cost.py --locate)."""
    work = [0]

    class Counted(difflib.SequenceMatcher[bytes]):
        def __init__(self, isjunk: Any = None, a: Any = (), b: Any = (), autojunk: bool = True) -> None:
            work[0] += len(a) * len(b)
            super().__init__(isjunk, a, b, autojunk)

    real_anchors = syntax._anchors

    def anchors(old: list[bytes], new: list[bytes], old_low: int, old_high: int, new_low: int,
                new_high: int) -> list[tuple[int, int]]:
        work[0] += old_high - old_low + new_high - new_low
        return real_anchors(old, new, old_low, old_high, new_low, new_high)

    monkeypatch.setattr(difflib, "SequenceMatcher", Counted)  # (syntax imports it when it needs it)
    monkeypatch.setattr(syntax, "_anchors", anchors)
    done: dict[tuple[str, int], int] = {}
    for lines in (5_000, 10_000):
        for name, (old, new) in _edits(lines).items():
            work[0] = 0
            written = syntax._written_lines(b"\n".join(old), b"\n".join(new))
            done[name, lines] = work[0]
            assert work[0] <= 3 * lines, (name, lines, work[0])  # (was lines squared)
            if name == "repeated":
                assert written == {lines * 53 // 100 + 1}
            elif name == "unique":
                assert written == {i + 1 for i in range(0, lines, 37)}
    assert done["unique", 10_000] >= 10_000  # (the meter is read)
    for name in ("unique", "mixed"):
        assert done[name, 10_000] <= 2.2 * done[name, 5_000]
    # The whole guard, on 20,000 repeated lines with one of them broken (42 s with difflib).
    before = b"x = 1\n" * 20_000
    lines_after = before.split(b"\n")
    lines_after[12_000] = b"x = (1"
    result = check_file("a.py", before, b"\n".join(lines_after))
    assert result.status == "errors" and result.errors[0].line == 12_001


@pytest.mark.parametrize(("old", "new", "written"), [
    ([b"a", b"b", b"c"], [b"a", b"x", b"c"], {2}),
    ([b"a", b"b", b"c"], [b"a", b"c"], {1, 2}),  # only deleted: the lines on either side of the cut
    ([b"a", b"b"], [b"a", b"b", b"c", b"d"], {3, 4}),
    ([b"", b"", b"a", b"", b"b", b""], [b"", b"", b"a", b"", b"x", b"b", b""], {5}),
    ([b"u", b"a", b"v", b"a", b"w"], [b"w", b"a", b"v", b"a", b"u"], {1, 5}),
    ([], [b"a"], {1}),
    # Past 100 lines on a side, lines found once on each side anchor the rest, in order.
    ([b"a", *[b"%d" % n for n in range(200)], b"b"], [b"b", *[b"%d" % n for n in range(200)], b"a"], {1, 202}),
    ([b"x"] * 150 + [b"u"] + [b"x"] * 150, [b"x"] * 150 + [b"v"] + [b"x"] * 150, {151}),
])
def test_the_written_lines(old: list[bytes], new: list[bytes], written: set[int]) -> None:
    assert syntax._written_lines(b"\n".join(old), b"\n".join(new)) == written
