"""The guard at the cost of one parse (issue 38): each file parsed once (the old version only when
the new one has errors), Python by the parser alone (no bytecode), and the errors located in time
that grows with the file, not with its square. Speed itself is measured in benchmarks/
(syntax_cost.py); the bounds here are ten times what the work takes, and a tenth of what it took."""

from __future__ import annotations

import ast
import json
import time
from typing import Any

import pytest

from patchtx import syntax
from patchtx.syntax import check_file


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


def test_errors_on_one_long_line_are_located_in_linear_time() -> None:
    """100,000 errors on one line of a Rust file: each was counted from the file's start (a slice
    to its end and a decode from the line's start for every error): minutes; now about 2 s, most
    of it the grammar's own parse (the walk over the errors alone took 18.6 s)."""
    pytest.importorskip("tree_sitter_language_pack")
    data = b"fn f() {" + b" 1 +;" * 100_000 + b"}\n"
    started = time.monotonic()
    result = check_file("a.rs", None, data)
    assert time.monotonic() - started < 10
    assert result.status == "errors"
    assert [(e.line, e.column) for e in result.errors] == [(1, 13), (1, 18), (1, 23), (1, 28), (1, 33)]


def test_which_lines_a_patch_wrote_is_found_in_linear_time() -> None:
    """A megabyte of one repeated line, one of them broken: the longest-match diff that found the
    lines the patch wrote cost the square of the file's lines (hours); the patience diff, one pass."""
    before = b"x = 1\n" * 170_000
    lines = before.split(b"\n")
    lines[90_000] = b"x = (1"
    started = time.monotonic()
    result = check_file("a.py", before, b"\n".join(lines))
    assert time.monotonic() - started < 30
    assert result.status == "errors" and result.errors[0].line == 90_001


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
