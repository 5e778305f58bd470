"""The edit-protocol front doors and their placement: SEARCH/REPLACE blocks (``search_replace``,
``block_placement``) and exact text replacements (``text_placement``), planned as every patch is.

The conformance suites (tests/conformance/edit_protocols) follow the reference implementations'
own tests; these pin down patchtx's rules themselves.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import patchtx
from patchtx.errors import (
    AmbiguousContextError,
    ContextNotFoundError,
    InvalidArgumentsError,
    NoChangeError,
    ParseError,
)
from patchtx.formats.codex import detect_format, parse
from patchtx.formats.edits import parse_edits
from patchtx.formats.search_replace import block_lines, parse_search_replace
from patchtx.formats.text_placement import place_text
from patchtx.intake.extract import extract_patch
from patchtx.model import AddFile, Chunk, UpdateFile
from patchtx.place.rewrite import rewrite
from patchtx.place.textfile import decode
from patchtx.result import human_report


def sr(path: str, search: str, replace: str, *, cline: bool = False) -> str:
    opener, closer = ("------- SEARCH", "+++++++ REPLACE") if cline else ("<<<<<<< SEARCH", ">>>>>>> REPLACE")
    return f"{path}\n{opener}\n{search}=======\n{replace}{closer}\n"


def apply(root: Path, files: dict[str, bytes], text: str, **options: object) -> patchtx.Result:
    for name, data in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_bytes(data)
    return patchtx.apply_patch(text, root, durable=False, **options)  # type: ignore[arg-type]


# -- detection and parsing -------------------------------------------------------------------------
@pytest.mark.parametrize("text, expected", [
    (sr("a.py", "x\n", "y\n"), "search-replace"),
    (sr("a.py", "x\n", "y\n", cline=True), "search-replace"),
    ("Here:\n  a.py\n  <<<<<<< SEARCH\n  x\n  =======\n  y\n  >>>>>>> REPLACE\n", "search-replace"),
    # A unified diff of a file holding markers: its lines start with a space, + or -.
    ("--- a/p.md\n+++ b/p.md\n@@ -1,3 +1,3 @@\n <<<<<<< SEARCH\n-x\n+y\n >>>>>>> REPLACE\n", "unified"),
    ("*** Begin Patch\n*** Add File: n.md\n+<<<<<<< SEARCH\n+>>>>>>> REPLACE\n*** End Patch", "codex"),
    ("a.py\n<<<<<<< SEARCH\nx\n=======\ny\n", "codex"),  # no REPLACE marker: not blocks
])
def test_the_format_is_detected(text: str, expected: str) -> None:
    assert detect_format(text) == expected


def test_blocks_become_one_update_per_file_and_an_add_for_an_empty_search() -> None:
    text = (sr("a.py", "one\n", "1\n") + "prose\n\n" + sr("new/b.txt", "", "made\n")
            + sr("a.py", "three\n", "3\n", cline=True) + sr("new/b.txt", "made\n", "MADE\n"))
    patch = parse(text)
    assert patch.format == "search-replace"
    assert [type(h).__name__ for h in patch.hunks] == ["UpdateFile", "AddFile", "UpdateFile"]
    first, added, second = patch.hunks
    assert isinstance(first, UpdateFile) and [c.line for c in first.chunks] == [2, 15]
    assert added == AddFile("new/b.txt", "made\n", 10)
    assert isinstance(second, UpdateFile) and second.path == "new/b.txt"


def test_shared_lines_are_context() -> None:
    assert block_lines(["a", "b", "c", "d"], ["a", "B", "c", "d", "e"]) == (
        (" ", "a"), ("-", "b"), ("+", "B"), (" ", "c"), (" ", "d"), ("+", "e"))


def test_a_path_given_apart_names_every_block() -> None:
    patch = parse_search_replace("------- SEARCH\nx\n=======\ny\n+++++++ REPLACE\n"
                                 "------- SEARCH\nz\n=======\nw\n+++++++ REPLACE", path="src/m.py")
    assert [(h.path, len(h.chunks)) for h in patch.hunks] == [("src/m.py", 2)]  # type: ignore[union-attr]


@pytest.mark.parametrize("text, words", [
    (">>>>>>> REPLACE\n", "no SEARCH marker opened"),
    ("a\n<<<<<<< SEARCH\nx\n>>>>>>> REPLACE\n", "before the '=======' line"),
    ("a\n<<<<<<< SEARCH\nx\n<<<<<<< SEARCH\n", "a second SEARCH marker"),
    ("a\n<<<<<<< SEARCH\nx\n=======\ny\n=======\nz\n>>>>>>> REPLACE\n", "a second '=======' line"),
    ("a\n<<<<<<< SEARCH\nx\n=======\ny\n<<<<<<< SEARCH\n", "a SEARCH marker inside the REPLACE"),
    ("a\n<<<<<<< SEARCH\nx\n=======\ny\n", "the text ends inside the block"),
    ("<<<<<<< SEARCH\nx\n=======\ny\n>>>>>>> REPLACE\n", "no file name"),
    ("a\n<<<<<<< SEARCH\n=======\nx\n>>>>>>> REPLACE\n" * 2, "empty SEARCH for a"),
])
def test_malformed_blocks_are_refused_with_the_line(text: str, words: str) -> None:
    with pytest.raises(ParseError, match=words) as caught:
        parse_search_replace(text)
    assert caught.value.line is not None or "No SEARCH" in caught.value.message


# Issue 37, item 8: the line before a block is its file's path only when it looks like one (one
# word with a dot or a slash) or names a file that exists; prose before an empty SEARCH created a
# file of that name ('Here is the fix', '1. a.txt').
@pytest.mark.parametrize("line", ["Here is the fix:", "1. a.txt", "Fix:", "## Changes", "Done.",
                                  # (one word with a dot or a slash, yet prose: each created a file)
                                  "(1/2)", "etc.)", "i.e.,", "1.1", "https://example.com/fix", "src/"])
@pytest.mark.parametrize("search", ["", "hello\n"], ids=["create", "update"])
def test_prose_before_a_block_is_a_parse_error_naming_the_line(line: str, search: str,
                                                               tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("hello\n")
    with pytest.raises(ParseError, match="names no file") as caught:
        apply(tmp_path, {}, sr(line, search, "bye\n"))
    assert f"('{line}')" in caught.value.message and "Nothing was changed" in caught.value.message
    assert "alone on the line before" in caught.value.hint
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.txt"]
    assert (tmp_path / "a.txt").read_text() == "hello\n"


@pytest.mark.parametrize("line", ["Makefile", "notes and plans.md", "Makefile:"])
def test_a_name_that_does_not_look_like_a_path_names_a_file_that_exists(line: str, tmp_path: Path) -> None:
    name = line.rstrip(":")
    apply(tmp_path, {name: b"all:\n"}, sr(line, "all:\n", "all: build\n"))
    assert (tmp_path / name).read_bytes() == b"all: build\n"
    apply(tmp_path, {}, sr("./Dockerfile", "", "FROM scratch\n"))  # (new, without a dot: './')
    assert (tmp_path / "Dockerfile").read_bytes() == b"FROM scratch\n"


def test_a_cline_path_element_outside_its_framing_names_no_file(tmp_path: Path) -> None:
    for text in ("<path>a.txt</path>\n------- SEARCH\n=======\nhello\n+++++++ REPLACE\n",
                 "<path>a.txt</path>\nsome prose\n\n------- SEARCH\n=======\nhello\n+++++++ REPLACE\n"):
        with pytest.raises(ParseError, match="no file name before the first block") as caught:
            apply(tmp_path, {}, text)
        assert "framing" in caught.value.hint or "alone on the line" in caught.value.hint
        assert list(tmp_path.iterdir()) == []
    framed = "<path>a.txt</path>\n<diff>\n------- SEARCH\n=======\nhello\n+++++++ REPLACE\n</diff>\n"
    apply(tmp_path, {}, framed)
    assert (tmp_path / "a.txt").read_bytes() == b"hello\n"


def test_strip_and_reverse_are_refused_for_blocks() -> None:
    with pytest.raises(ParseError, match="unified diffs only"):
        parse(sr("a", "x\n", "y\n"), reverse=True)


def test_extract_returns_a_reply_with_blocks_whole() -> None:
    reply = "Sure! Here is the change.\n\n```python\n" + sr("a.py", "x\n", "y\n") + "```\nDone."
    assert extract_patch(reply) == reply


# -- placing blocks --------------------------------------------------------------------------------
def test_a_block_over_indented_as_a_whole_is_shifted_back(tmp_path: Path) -> None:
    result = apply(tmp_path, {"m.py": b"def f():\n    return 1\n"},
                   sr("m.py", "        def f():\n            return 1\n",
                      "        def f():\n            return 2\n"))
    assert (tmp_path / "m.py").read_bytes() == b"def f():\n    return 2\n"
    assert "8 spaces less" in result.plan.notes[0]
    assert result.to_json()["notes"] == list(result.plan.notes)


def test_a_tab_indented_file_and_a_block_without_its_tab(tmp_path: Path) -> None:
    result = apply(tmp_path, {"m.go": b"func f() {\n\tx := 1\n\treturn x\n}\n"},
                   sr("m.go", "x := 1\nreturn x\n", "x := 2\nreturn x\n"))
    assert (tmp_path / "m.go").read_bytes() == b"func f() {\n\tx := 2\n\treturn x\n}\n"
    assert "1 tab more" in result.plan.notes[0]


def test_trailing_white_space_is_ignored_and_reported(tmp_path: Path) -> None:
    result = apply(tmp_path, {"t.txt": b"keep  \nold \nend\n"}, sr("t.txt", "keep\nold\n", "keep\nnew\n"))
    # The shared line keeps the file's text; the replaced line is the block's.
    assert (tmp_path / "t.txt").read_bytes() == b"keep  \nnew\nend\n"
    assert "trailing white space ignored" in result.plan.notes[0]
    assert "Note: t.txt: the SEARCH lines" in human_report(result, diffs=False)


def test_an_exact_match_has_no_note(tmp_path: Path) -> None:
    result = apply(tmp_path, {"t.txt": b"a\nb\n"}, sr("t.txt", "b\n", "c\n"))
    assert result.plan.notes == () and "notes" not in result.to_json()


def test_indentation_that_is_not_one_shift_does_not_match(tmp_path: Path) -> None:
    with pytest.raises(ContextNotFoundError, match="do not match"):
        apply(tmp_path, {"m.py": b"if x:\n    a = 1\n        b = 2\n"}, sr("m.py", "a = 1\nb = 2\n", "a = 3\nb = 4\n"))


def test_a_shifted_match_in_two_places_is_ambiguous(tmp_path: Path) -> None:
    with pytest.raises(AmbiguousContextError, match="file lines 2, 4"):
        apply(tmp_path, {"m.py": b"class A:\n    x = 1\nclass B:\n    x = 1\n"}, sr("m.py", "x = 1\n", "x = 2\n"))


def test_an_exact_match_is_preferred_to_a_shifted_one(tmp_path: Path) -> None:
    apply(tmp_path, {"m.py": b"x = 1\nclass B:\n    x = 1\n"}, sr("m.py", "x = 1\n", "x = 2\n"))
    assert (tmp_path / "m.py").read_bytes() == b"x = 2\nclass B:\n    x = 1\n"


@pytest.mark.parametrize("first_match", [False, True])
@pytest.mark.parametrize("search", ["y\n\n", "\n"], ids=["ending-with-a-blank-line", "a-blank-line"])
def test_a_search_ending_with_a_blank_line_the_file_lacks_does_not_match(
        tmp_path: Path, search: str, first_match: bool) -> None:
    # Codex's retry without a last blank line is a Codex-patch rule: a SEARCH stands as written
    # (before, 'y' + blank replaced 'y' alone, and a blank SEARCH inserted at the top of the file).
    with pytest.raises(ContextNotFoundError, match="do not match"):
        apply(tmp_path, {"t.txt": b"x\ny\nz\n"}, sr("t.txt", search, "c\n"), first_match=first_match)
    assert (tmp_path / "t.txt").read_bytes() == b"x\ny\nz\n"


def test_blocks_out_of_order_say_where_the_search_stands(tmp_path: Path) -> None:
    with pytest.raises(ContextNotFoundError, match="stand at file line 1, above where the block before it matched"):
        apply(tmp_path, {"l.txt": b"one\ntwo\nthree\n"}, sr("l.txt", "three\n", "3\n") + sr("l.txt", "one\n", "1\n"))
    assert (tmp_path / "l.txt").read_bytes() == b"one\ntwo\nthree\n"


@pytest.mark.parametrize("content, blocks, places", [
    # The later block's SEARCH stands above the block before it too: aider edits line 1.
    (b"a = 1\nb = 2\na = 1\n", [("b = 2\n", "b = 3\n"), ("a = 1\n", "a = 9\n")], "lines 1, 3"),
    # The block before it writes a second copy: aider edits the copy it wrote.
    (b"a\nb\nc\nx\nB\nc\n", [("a\nb\n", "a\nB\n"), ("B\nc\n", "B\nC\n")], "lines 2, 5"),
    # A later block never settles an earlier one's place.
    (b"a\nc\na\n", [("a\n", "A\n"), ("c\n", "C\n")], "lines 1, 3"),
])
@pytest.mark.parametrize("first_match", [False, True])
def test_a_search_that_stands_twice_as_the_blocks_before_leave_the_file_is_refused(
        tmp_path: Path, content: bytes, blocks: list[tuple[str, str]], places: str, first_match: bool) -> None:
    """[unique-search]: each block's SEARCH lines must stand once in the file as the blocks before
    it leave it (aider applies blocks one after another, each at the first place it finds), never
    placed at a later copy only because the block before it is below the first one. With
    ``first_match`` the first place is taken, as aider takes it, when it lies after the block
    before or in lines an earlier block wrote."""
    reply = "".join(sr("f.txt", search, replace) for search, replace in blocks)
    picked = {"lines 2, 5": b"a\nB\nC\nx\nB\nc\n", "lines 1, 3": b"A\nC\na\n"}
    if first_match and blocks[0][0] != "b = 2\n":
        apply(tmp_path, {"f.txt": content}, reply, first_match=True)  # aider's pick
        assert (tmp_path / "f.txt").read_bytes() == picked[places]
        return
    with pytest.raises(AmbiguousContextError, match=places) as caught:
        apply(tmp_path, {"f.txt": content}, reply, first_match=first_match)
    assert (tmp_path / "f.txt").read_bytes() == content
    if blocks[0][0] != "a\n":
        assert "as the blocks before it leave it" in caught.value.message


def _aider(lines: list[str], search: list[str], replace: list[str]) -> list[str] | None:
    """aider's exact pass: the first place the SEARCH lines stand, replaced."""
    for at in range(len(lines) - len(search) + 1):
        if lines[at:at + len(search)] == search:
            return lines[:at] + replace + lines[at + len(search):]
    return None


@settings(max_examples=150, deadline=None)
@given(st.lists(st.sampled_from(["a", "b", "c", ""]), min_size=1, max_size=8), st.data(), st.booleans())
def test_two_blocks_go_where_aider_puts_them_or_are_refused(lines: list[str], data: st.DataObject,
                                                             first_match: bool) -> None:
    """Never a wrong place: two blocks, each SEARCH taken from the file as the block before it
    leaves it, either apply as aider applies them one after another, or are refused."""
    from patchtx.errors import PatchtxError
    from patchtx.place.placer import UpdateRule
    from patchtx.plan.update import FileNames, update_file

    current, reply = lines, ""
    for _ in range(2):
        if not current:
            return
        start = data.draw(st.integers(0, len(current) - 1))
        end = data.draw(st.integers(start + 1, min(len(current), start + 3)))
        search = current[start:end]
        replace = data.draw(st.lists(st.sampled_from(["a", "b", "X", ""]), max_size=3))
        if replace == search:
            return
        reply += sr("f.txt", "".join(f"{line}\n" for line in search), "".join(f"{line}\n" for line in replace))
        after = _aider(current, search, replace)
        assert after is not None
        current = after
    (update,) = parse(reply).hunks
    assert isinstance(update, UpdateFile)
    content = "".join(f"{line}\n" for line in lines).encode()
    try:
        done = update_file(content, update.chunks, UpdateRule("search-replace", first_match),
                           FileNames("f.txt", "f.txt", "f.txt"))
    except PatchtxError:
        return
    assert done.after == "".join(f"{line}\n" for line in current).encode()


@pytest.mark.parametrize("first_match", [False, True])
def test_a_block_whose_search_still_stands_is_not_taken_for_applied(first_match: bool) -> None:
    """Found by the property test above: in ``a a a a a b``, block 1 turns ``a b`` into ``a a`` and
    block 2's SEARCH ``a`` stands only above it. The content rule, redoing the blocks undone, took
    the file for their work (a false "already applied", which ``--skip-applied`` would report as
    success); undone blocks are redone in turn, as blocks are placed, so the update is refused.
    With ``first_match`` too: the file is the blocks' work on ``a b a b`` taken at first places,
    but also a file in which aider would apply them again; the redo asks each block to stand once,
    and in doubt patchtx refuses."""
    from patchtx.errors import PatchtxError
    from patchtx.place.placer import UpdateRule
    from patchtx.plan.update import FileNames, update_file

    (update,) = parse(sr("f.txt", "a\nb\n", "a\na\n") + sr("f.txt", "a\n", "a\na\na\n")).hunks
    assert isinstance(update, UpdateFile)
    with pytest.raises(PatchtxError) as caught:
        update_file(b"a\na\na\na\na\nb\n", update.chunks, UpdateRule("search-replace", first_match),
                    FileNames("f.txt", "f.txt", "f.txt"))
    assert caught.value.kind == "context_not_found"


def _aider_in_turn(lines: list[str], blocks: list[tuple[list[str], list[str]]],
                   first_match: bool) -> list[str] | None:
    """The file after ``blocks`` applied one after another, as aider applies them, when patchtx
    must apply them too (None: it must refuse): each SEARCH stands exactly once in the file as the
    blocks before leave it (``first_match``: its first place is taken), after the lines the block
    before it wrote or overlapping lines some earlier block wrote."""
    current = [(line, False) for line in lines]  # (text, written by a block)
    after = 0
    for search, replace in blocks:
        texts = [text for text, _ in current]
        places = [at for at in range(len(texts) - len(search) + 1) if texts[at:at + len(search)] == search]
        if not places or (len(places) > 1 and not first_match):
            return None
        at = places[0]
        if at < after and not any(written for _, written in current[at:at + len(search)]):
            return None
        current[at:at + len(search)] = [(text, True) for text in replace]
        after = at + len(replace)
    return [text for text, _ in current]


@settings(max_examples=200, deadline=None)
@given(st.lists(st.sampled_from(["a", "b", "c", ""]), min_size=1, max_size=8), st.data(), st.booleans())
def test_blocks_apply_one_after_another_exactly_when_each_stands_once(
        lines: list[str], data: st.DataObject, first_match: bool) -> None:
    """Three blocks, each SEARCH taken from the file as the blocks before it leave it (often from
    what they wrote): applied exactly when aider's one-after-another reading has one meaning
    (``_aider_in_turn``), and then to aider's result; refused otherwise."""
    from patchtx.errors import PatchtxError
    from patchtx.place.placer import UpdateRule
    from patchtx.plan.update import FileNames, update_file

    current, reply, blocks = lines, "", []
    for _ in range(3):
        if not current:
            break
        start = data.draw(st.integers(0, len(current) - 1))
        end = data.draw(st.integers(start + 1, min(len(current), start + 3)))
        search, replace = current[start:end], data.draw(st.lists(st.sampled_from("abX"), max_size=3))
        if replace == search:
            break
        reply += sr("f.txt", "".join(f"{line}\n" for line in search), "".join(f"{line}\n" for line in replace))
        blocks.append((search, replace))
        current = _aider(current, search, replace) or []
    if not blocks:
        return
    expected = _aider_in_turn(lines, blocks, first_match)
    (update,) = parse(reply).hunks
    assert isinstance(update, UpdateFile)
    content = "".join(f"{line}\n" for line in lines).encode()
    try:
        done = update_file(content, update.chunks, UpdateRule("search-replace", first_match),
                           FileNames("f.txt", "f.txt", "f.txt"), check_applied=False)
    except PatchtxError:
        assert expected is None, (lines, blocks)
        return
    assert expected is not None, (lines, blocks)
    assert done.after == "".join(f"{line}\n" for line in expected).encode()


def test_a_block_that_edits_what_the_block_before_it_wrote(tmp_path: Path) -> None:
    """aider applies blocks one after another: a SEARCH that stands only in lines an earlier block
    of the reply wrote is placed there, as the only place it stands in the file as the blocks
    before it leave it; the blocks after it go on from there."""
    content = b"def a():\n    return 1\n\ndef b():\n    return 2\n"
    reply = (sr("m.py", "def a():\n    return 1\n", "def a():\n    return helper()\n\n\ndef helper():\n    return 1\n")
             + sr("m.py", "def helper():\n    return 1\n", "def helper():\n    return 42\n")
             + sr("m.py", "    return 2\n", "    return 3\n"))
    result = apply(tmp_path, {"m.py": content}, reply)
    assert (tmp_path / "m.py").read_bytes() == (b"def a():\n    return helper()\n\n\ndef helper():\n"
                                                b"    return 42\n\ndef b():\n    return 3\n")
    assert result.summary == "A 0, M 1, D 0, R 0" and result.plan.notes == ()


def test_a_block_that_edits_written_lines_keeps_endings_and_reports_a_shift(tmp_path: Path) -> None:
    reply = (sr("w.py", "class A:\n    pass\n", "class A:\n    def f(self):\n        return 1\n")
             + sr("w.py", "def f(self):\n    return 1\n", "def f(self):\n    return 2\n"))
    result = apply(tmp_path, {"w.py": b"\xef\xbb\xbfclass A:\r\n    pass\r\n"}, reply)
    assert (tmp_path / "w.py").read_bytes() == \
        b"\xef\xbb\xbfclass A:\r\n    def f(self):\r\n        return 2\r\n"
    (note,) = result.plan.notes
    assert "lines 2-3 of the file as the blocks before it leave it" in note and "shifted" in note


@pytest.mark.parametrize("blocks, error, words", [
    # The written lines stand twice once a copy is in the file: refused, listing both.
    ([("a\n", "b\nc\n"), ("b\nc\n", "B\n")], AmbiguousContextError,
     "lines 1, 4 of the file as the blocks before it leave it"),
    # A block after a chained one, above it in the file's own lines: the file's order.
    ([("a\n", "a\nx\n"), ("x\n", "y\n"), ("p\n", "z\n")], ContextNotFoundError,
     "stand at file line 1, above where the block before it matched"),
    # Nowhere at all, after a chained block.
    ([("a\n", "a\nx\n"), ("x\n", "y\n"), ("q\n", "r\n")], ContextNotFoundError,
     "as the blocks before it leave it"),
])
def test_blocks_one_after_another_are_refused_without_one_meaning(
        tmp_path: Path, blocks: list[tuple[str, str]], error: type[Exception], words: str) -> None:
    content = b"a\nb\nb\nc\n" if blocks[0][1] == "b\nc\n" else b"p\na\nk\n"
    reply = "".join(sr("f.txt", search, replace) for search, replace in blocks)
    with pytest.raises(error, match=words):
        apply(tmp_path, {"f.txt": content}, reply)
    assert (tmp_path / "f.txt").read_bytes() == content


def test_blocks_that_each_stand_once_in_turn_apply(tmp_path: Path) -> None:
    # The second SEARCH stands twice in the original, once after the first block took one copy.
    apply(tmp_path, {"f.txt": b"a\nb\na\n"}, sr("f.txt", "a\nb\n", "A\nb\n") + sr("f.txt", "a\n", "Z\n"))
    assert (tmp_path / "f.txt").read_bytes() == b"A\nb\nZ\n"


def test_a_reply_over_several_files_is_one_transaction(tmp_path: Path) -> None:
    files = {"a.txt": b"a\n", "b.txt": b"b\n"}
    with pytest.raises(ContextNotFoundError):
        apply(tmp_path, files, sr("a.txt", "a\n", "A\n") + sr("b.txt", "missing\n", "B\n"))
    assert (tmp_path / "a.txt").read_bytes() == b"a\n"


def test_blocks_keep_crlf_endings_and_a_bom(tmp_path: Path) -> None:
    apply(tmp_path, {"w.txt": b"\xef\xbb\xbfone\r\ntwo\r\n"}, sr("w.txt", "two\n", "2\nthree\n"))
    assert (tmp_path / "w.txt").read_bytes() == b"\xef\xbb\xbfone\r\n2\r\nthree\r\n"


def test_a_resent_reply_is_already_applied_never_applied_twice(tmp_path: Path) -> None:
    reply = sr("r.txt", "a = 1\n", "a = 1\nb = 2\n")
    apply(tmp_path, {"r.txt": b"a = 1\nc = 3\n"}, reply)
    assert (tmp_path / "r.txt").read_bytes() == b"a = 1\nb = 2\nc = 3\n"
    with pytest.raises(patchtx.PatchtxError) as caught:
        patchtx.apply_patch(sr("r.txt", "a = 1\nc = 3\n", "a = 1\nb = 2\nc = 3\n"), tmp_path)
    assert caught.value.kind == "already_applied"
    assert patchtx.apply_patch(sr("r.txt", "a = 1\nc = 3\n", "a = 1\nb = 2\nc = 3\n"), tmp_path,
                               skip_applied=True).summary == "A 0, M 0, D 0, R 0"
    assert (tmp_path / "r.txt").read_bytes() == b"a = 1\nb = 2\nc = 3\n"


def test_a_resent_shifted_block_says_its_replace_lines_stand(tmp_path: Path) -> None:
    reply = sr("s.py", "return 1\n", "return 2\n")
    apply(tmp_path, {"s.py": b"def f():\n    return 1\n"}, reply)
    with pytest.raises(ContextNotFoundError, match="already stand at file line 2"):
        patchtx.apply_patch(reply, tmp_path)


@pytest.mark.parametrize("allow_overwrite", [False, True])
def test_an_empty_search_on_an_existing_file_is_refused(tmp_path: Path, allow_overwrite: bool) -> None:
    """[empty-search]: the block does not say whether its REPLACE lines are the whole new file
    (written over what the file holds) or lines to add (aider appends them): refused whatever the
    policy, never the whole file replaced silently."""
    with pytest.raises(patchtx.PatchtxError) as caught:
        apply(tmp_path, {"f.py": b"keep = 1\n"}, sr("f.py", "", "added = 2\n"), allow_overwrite=allow_overwrite)
    assert caught.value.kind == "file_exists"
    assert "empty SEARCH" in caught.value.message and "SEARCH for the lines" in caught.value.hint
    assert (tmp_path / "f.py").read_bytes() == b"keep = 1\n"


def test_an_empty_search_creates_a_file_or_fills_an_empty_one(tmp_path: Path) -> None:
    apply(tmp_path, {}, sr("e.txt", "", "new\n"))
    assert (tmp_path / "e.txt").read_bytes() == b"new\n"
    apply(tmp_path, {"empty.txt": b""}, sr("empty.txt", "", "filled\n"))
    assert (tmp_path / "empty.txt").read_bytes() == b"filled\n"


# -- exact text replacements -----------------------------------------------------------------------
def replaced(content: bytes, old: str, new: str, *, every: bool = False) -> bytes:
    original = decode(content, "f")
    placements, ends = place_text(original, [Chunk((), (("-", old), ("+", new)), line=1, every=every)], "f")
    return rewrite(original, placements, ends)[0].encode()


@pytest.mark.parametrize("content, old, new, expected", [
    (b"a = 1\r\nb = 2\r\n", "a = 1\nb", "a = 10\nc = 3\nb", b"a = 10\r\nc = 3\r\nb = 2\r\n"),
    (b"\xef\xbb\xbfhead\nbody\n", "head", "HEAD", b"\xef\xbb\xbfHEAD\nbody\n"),
    (b"x = f(a, b)\n", "a, b", "b, a", b"x = f(b, a)\n"),
    (b"one\ntwo", "two", "two\n", b"one\ntwo\n"),             # the final newline made
    (b"one\ntwo\n", "\ntwo\n", "", b"one"),                   # ... and taken away
    (b"one\ntwo\nthree\n", "one\ntw", "ONE TW", b"ONE TWo\nthree\n"),   # two lines joined
    (b"tab\there\n", "\t", "    ", b"tab    here\n"),
    (b"", "", "", b""),
])
def test_text_replacements_keep_what_they_do_not_touch(content: bytes, old: str, new: str, expected: bytes) -> None:
    if not old:  # (an empty old text and an empty new one: an edit that changes nothing)
        with pytest.raises(NoChangeError):
            parse_edits([{"path": "f", "old_string": old, "new_string": new}])
        return
    assert replaced(content, old, new) == expected


def test_replace_all_takes_every_occurrence_on_shared_lines() -> None:
    assert replaced(b"a.b.a\nb\na\n", "a", "x", every=True) == b"x.b.x\nb\nx\n"
    with pytest.raises(ContextNotFoundError):
        replaced(b"nothing\n", "a", "x", every=True)


def test_overlapping_occurrences_are_two() -> None:
    with pytest.raises(AmbiguousContextError, match="Multiple occurrences"):
        replaced(b"aaa\n", "aa", "b")


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet="ab \n\tc\r", max_size=40), st.data())
def test_a_unique_replacement_is_str_replace(text: str, data: st.DataObject) -> None:
    """On a file with LF or lone CR endings (no CR LF, which a replacement's LF matches too), the
    line model's rewrite gives exactly the spliced text: ``str.replace``, the new text's line
    breaks taking the file's dominant ending (a lone CR is a character of the text)."""
    if not text or "\r\n" in text:
        return
    start = data.draw(st.integers(0, len(text) - 1))
    end = data.draw(st.integers(start + 1, len(text)))
    old = text[start:end]
    new = data.draw(st.text(alphabet="xy\n", max_size=8))
    if old == new:
        return
    content = text.encode()
    count = sum(text.startswith(old, i) for i in range(len(text)))
    if count != 1:
        with pytest.raises(AmbiguousContextError):
            replaced(content, old, new)
        return
    dominant = decode(content, "f").dominant_ending
    assert replaced(content, old, new) == text.replace(old, new.replace("\n", dominant)).encode()


@pytest.mark.parametrize("content, old, new, expected", [
    (b"a\r\nb\nc\r\n", "b", "B", b"a\r\nB\nc\r\n"),        # the line keeps its own ending
    (b"a\nb\r\nc\n", "b", "B", b"a\nB\r\nc\n"),
    (b"a\nb\r\nc\n", "b\nc", "B\nC", b"a\nB\nC\n"),    # a break inside the old text is replaced
    (b"a\rb\nc\n", "a\rb", "X", b"X\nc\n"),               # a lone CR is a character
    (b"a\rb\nc\n", "b", "B", b"a\rB\nc\n"),
    (b"a\rb\nc\n", "a\rb\nc", "Y", b"Y\n"),
    (b"one\r", "one", "two", b"two\r"),                   # a final lone CR is kept
])
def test_text_replacements_match_the_text_as_it_is(content: bytes, old: str, new: str, expected: bytes) -> None:
    assert replaced(content, old, new) == expected


def test_a_lone_cr_is_no_line_break_for_a_replacement() -> None:
    with pytest.raises(ContextNotFoundError):
        replaced(b"a\rb\nc\n", "a\nb", "X")


def test_edit_lists_are_checked_before_anything_is_read() -> None:
    for edits, words in (([], "empty"), ([{"path": "a", "old_string": "x"}], "required strings"),
                         ([{"old_string": "x", "new_string": "y"}], "`path`"),
                         ([{"path": "a", "old_string": "", "new_string": "y", "replace_all": True}], "replace_all"),
                         ([{"path": "a", "old_string": "x", "new_string": "y", "extra": 1}], "unknown")):
        with pytest.raises(InvalidArgumentsError, match=words):
            parse_edits(edits)  # type: ignore[arg-type]
    # (the one no-op rule: its own kind, as on every surface)
    with pytest.raises(NoChangeError, match="exactly the same"):
        parse_edits([{"path": "a", "old_string": "x", "new_string": "x"}])


def test_a_cline_tool_call_written_out_in_a_reply(tmp_path: Path) -> None:
    reply = ("I'll fix both.\n\n<replace_in_file>\n<path>src/a.ts</path>\n<diff>\n------- SEARCH\n"
             "let a = 1;\n=======\nconst a = 1;\n+++++++ REPLACE\n</diff>\n</replace_in_file>\n\n"
             "<replace_in_file>\n<path>src/b.ts</path>\n<diff>\n------- SEARCH\nlet b = 2;\n=======\n"
             "const b = 2;\n+++++++ REPLACE\n</diff>\n</replace_in_file>\n")
    assert [h.path for h in parse(reply).hunks] == ["src/a.ts", "src/b.ts"]
    apply(tmp_path, {"src/a.ts": b"let a = 1;\n", "src/b.ts": b"let b = 2;\n"}, reply)
    assert (tmp_path / "src/a.ts").read_bytes() == b"const a = 1;\n"
    assert (tmp_path / "src/b.ts").read_bytes() == b"const b = 2;\n"
