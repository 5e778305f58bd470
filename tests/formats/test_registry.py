"""The edit formats are a registry (``formats.registry``): adding one is its module and one line of
registration, and no code outside ``src/patchtx/formats/`` chooses behaviour by a format's name."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import pytest

from patchtx import apply_patch
from patchtx.errors import ContextNotFoundError, NoChangeError
from patchtx.formats.registry import FORMATS, Format, format_named, formats, register
from patchtx.model import Chunk, Patch, UpdateFile
from patchtx.place.matching import LineIndex, Locator
from patchtx.place.placer import Placed, Placer, UpdateRule
from patchtx.place.textfile import TextFile

PACKAGE = Path(__file__).resolve().parents[2] / "src" / "patchtx"


# -- a toy protocol, as a module of its own would define it ----------------------------------------
# "TOY <path>" on the first line, then one "<old line> => <new line>" per line: each replaces one
# whole line of the file, found by its text (the content rule of ``matching``).
def _toy_detects(text: str, loose: bool) -> bool:
    return not loose and text.startswith("TOY ")


def _toy_parse(text: str, **_options: object) -> Patch:
    first, *rest = text.splitlines()
    chunks = []
    for number, line in enumerate(rest, start=2):
        old, _, new = line.partition(" => ")
        chunks.append(Chunk((), (("-", old), ("+", new)), line=number))
    return Patch((UpdateFile(first.removeprefix("TOY "), tuple(chunks), line=1),), text, format="toy")


def _toy_places(original: TextFile, index: LineIndex, chunks: object, rule: UpdateRule,
                display: str) -> Placed:
    return Placed(Locator(original.texts, display, index=index).place(chunks))  # type: ignore[arg-type]


TOY = Format("toy", Placer(_toy_places), "swaps", "the swap on line {line}",
             detects=_toy_detects, parse=_toy_parse,
             no_change="A swap's two sides must differ.", no_change_said="its two sides are one line")


@pytest.fixture
def toy() -> Iterator[Format]:
    saved = dict(FORMATS)
    register(TOY)  # the one line of registration
    yield TOY
    FORMATS.clear()
    FORMATS.update(saved)


def test_a_format_registered_in_one_line_applies_through_the_public_api(toy: Format, tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("one\ntwo\nthree\n")
    result = apply_patch("TOY a.txt\ntwo => TWO\nthree => 3\n", tmp_path, durable=False)
    assert (tmp_path / "a.txt").read_text() == "one\nTWO\n3\n"
    assert [change.path for change in result.plan.changes] == ["a.txt"]
    assert format_named("toy") is toy and formats()[-1] is toy


def test_a_registered_formats_rules_are_the_ones_its_messages_use(toy: Format, tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("one\ntwo\n")
    with pytest.raises(NoChangeError) as no_change:
        apply_patch("TOY a.txt\none => one\n", tmp_path, durable=False)
    assert no_change.value.message.startswith("Refusing the patch: the swap on line 2 changes "
                                              "nothing in a.txt: its two sides are one line.")
    assert no_change.value.hint == "A swap's two sides must differ."
    with pytest.raises(ContextNotFoundError):
        apply_patch("TOY a.txt\nfour => 4\n", tmp_path, durable=False)
    assert (tmp_path / "a.txt").read_text() == "one\ntwo\n"


def test_the_built_in_formats_are_detected_in_their_declared_order() -> None:
    assert [f.name for f in formats()] == ["codex", "search-replace", "unified", "text"]
    assert all(format_named(f.name) is f for f in formats())


# -- no format named outside formats/ --------------------------------------------------------------
def _strings(node: ast.AST) -> list[str]:
    """The string constants ``node`` is, or a tuple, list or set of."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return [node.value]
    if isinstance(node, ast.Tuple | ast.List | ast.Set):
        return [text for element in node.elts for text in _strings(element)]
    return []


def format_names_compared(source: str, names: set[str]) -> list[int]:
    """The lines of ``source`` that choose by a format's name: a comparison with it (``==``,
    ``!=``, ``in`` a literal collection), a dict keyed by format names, a ``case`` of one, or a
    ``format=`` argument naming one."""
    found = []
    for node in ast.walk(ast.parse(source)):
        named: list[str] = []
        if isinstance(node, ast.Compare):
            named = [text for operand in (node.left, *node.comparators) for text in _strings(operand)]
        elif isinstance(node, ast.Dict):  # (keyed by names: a payload's "text" key is no table of formats)
            keys = [text for key in node.keys if key is not None for text in _strings(key)]
            named = keys if keys and set(keys) <= names else []
        elif isinstance(node, ast.MatchValue):
            named = _strings(node.value)
        elif isinstance(node, ast.keyword) and node.arg == "format":
            named = _strings(node.value)
        if names & set(named):
            found.append(node.lineno)
    return sorted(found)


def test_no_format_is_named_outside_the_formats_package() -> None:
    names = {f.name for f in formats()}
    named = [f"{path.relative_to(PACKAGE)}:{line}"
             for path in sorted(PACKAGE.rglob("*.py")) if "formats" not in path.relative_to(PACKAGE).parts
             for line in format_names_compared(path.read_text(encoding="utf-8"), names)]
    assert named == []


@pytest.mark.parametrize("line", [
    'if fmt == "unified":\n    pass',
    'if rule.format in ("codex", "unified"):\n    pass',
    'HUNKS = {"search-replace": "blocks"}',
    'match fmt:\n    case "text":\n        pass',
    'undo = replace(rule, format="codex")',
])
def test_the_scan_finds_a_format_named(line: str) -> None:
    assert format_names_compared(line, {"codex", "unified", "search-replace", "text"}) != []
