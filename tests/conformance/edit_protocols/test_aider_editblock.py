"""Conformance with aider's SEARCH/REPLACE blocks: one case per test of
``Aider-AI/aider`` ``tests/basic/test_editblock.py`` (the format in
``aider/coders/editblock_coder.py``), with replies and files of our own. (Its two fuzzy-matching
tests are disabled there, ``__test_...``, and have no case: patchtx never matches loosely beyond
the passes in docs/format.md.)

Reading the blocks is ``patchtx.formats.search_replace``; applying them is ``patchtx.apply_patch`` on a
real folder (the format is detected), all blocks of a reply as one transaction.
"""

from __future__ import annotations

from pathlib import Path

import pytest

import patchtx
from patchtx.errors import AmbiguousContextError, ContextNotFoundError, ParseError
from patchtx.formats.search_replace import blocks, find_filename, parse_search_replace
from patchtx.model import AddFile, UpdateFile

from .cases import differs, follows, read_tree, write_tree

SUITE = "aider"
REFERENCE_TESTS = (
    "test_find_filename", "test_strip_quoted_wrapping", "test_strip_quoted_wrapping_no_filename",
    "test_strip_quoted_wrapping_no_wrapping", "test_find_original_update_blocks",
    "test_find_original_update_blocks_quote_below_filename",
    "test_find_original_update_blocks_unclosed", "test_find_original_update_blocks_missing_filename",
    "test_find_original_update_blocks_no_final_newline",
    "test_incomplete_edit_block_missing_filename",
    "test_replace_part_with_missing_varied_leading_whitespace",
    "test_replace_part_with_missing_leading_whitespace", "test_replace_multiple_matches",
    "test_replace_multiple_matches_missing_whitespace",
    "test_replace_part_with_just_some_missing_leading_whitespace",
    "test_replace_part_with_missing_leading_whitespace_including_blank_line",
    "test_create_new_file_with_other_file_in_chat", "test_full_edit", "test_full_edit_dry_run",
    "test_find_original_update_blocks_mupltiple_same_file",
    "test_deepseek_coder_v2_filename_mangling", "test_new_file_created_in_same_folder",
    "test_find_original_update_blocks_quad_backticks_with_triples_in_LLM_reply",
    "test_find_original_update_blocks_with_sh_language_identifier",
    "test_find_original_update_blocks_with_csharp_language_identifier",
)
FENCE = "```"


def found(reply: str) -> list[tuple[str, str, str]]:
    """(file, SEARCH text, REPLACE text) of each block, as aider's parser yields them."""
    return [(b.path, "".join(line + "\n" for line in b.search), "".join(line + "\n" for line in b.replace))
            for b in blocks(reply)]


def block(path: str, search: str, replace: str) -> str:
    return f"{path}\n<<<<<<< SEARCH\n{search}=======\n{replace}>>>>>>> REPLACE\n"


def edited(tmp_path: Path, whole: str, search: str, replace: str) -> str:
    """``whole`` as the file ``f.txt`` after one block."""
    (tmp_path / "f.txt").write_text(whole)
    patchtx.apply_patch(block("f.txt", search, replace), tmp_path, durable=False)
    return (tmp_path / "f.txt").read_text()


@differs(SUITE, "test_find_filename", "file-names")
def test_find_filename() -> None:
    assert find_filename(["settings.toml", FENCE]) == "settings.toml"
    assert find_filename([f"{FENCE}toml", "settings.toml", FENCE]) == "settings.toml"
    assert find_filename([f"{FENCE}yaml", "a.yml", FENCE, FENCE, "b.yml", FENCE]) == "b.yml"
    assert find_filename(["## config/app.ini:", FENCE]) == "config/app.ini"
    assert find_filename(["**`lib/tool.rb`**"]) == "lib/tool.rb"
    # aider matches a name loosely against the files in its chat (``settings_toml`` ->
    # ``settings.toml``); patchtx takes the name as written (the path must then exist).
    assert find_filename(["settings_toml", FENCE]) == "settings_toml"


@differs(SUITE, "test_strip_quoted_wrapping", "literal-blocks")
def test_fences_inside_a_block_are_text(tmp_path: Path) -> None:
    write_tree(tmp_path, {"notes.md": "intro\nbody line\n"})
    reply = block("notes.md", "notes.md\n```\nbody line\n```\n", "notes.md\n```\nnew body\n```\n")
    with pytest.raises(ContextNotFoundError):
        patchtx.apply_patch(reply, tmp_path, durable=False)
    assert read_tree(tmp_path) == {"notes.md": b"intro\nbody line\n"}


@differs(SUITE, "test_strip_quoted_wrapping_no_filename", "literal-blocks")
def test_a_fenced_search_matches_fenced_lines(tmp_path: Path) -> None:
    write_tree(tmp_path, {"guide.md": "Run:\n```\nmake test\n```\n"})
    patchtx.apply_patch(block("guide.md", "```\nmake test\n```\n", "```\nmake check\n```\n"),
                        tmp_path, durable=False)
    assert (tmp_path / "guide.md").read_text() == "Run:\n```\nmake check\n```\n"


@follows(SUITE, "test_strip_quoted_wrapping_no_wrapping")
def test_plain_block_text_is_taken_as_it_is() -> None:
    assert found(block("p.txt", "first kept line\nsecond kept line\n", "x\n")) == [
        ("p.txt", "first kept line\nsecond kept line\n", "x\n")]


@follows(SUITE, "test_find_original_update_blocks")
def test_a_block_in_a_fenced_reply() -> None:
    reply = f"Change the colour:\n\n{FENCE}css\nstyle.css\n<<<<<<< SEARCH\ncolor: red;\n=======\n" \
            f"color: blue;\n>>>>>>> REPLACE\n{FENCE}\n\nThat is all.\n"
    assert found(reply) == [("style.css", "color: red;\n", "color: blue;\n")]


@follows(SUITE, "test_find_original_update_blocks_quote_below_filename")
def test_file_name_above_the_fence() -> None:
    reply = f"Change the colour:\n\nstyle.css\n{FENCE}css\n<<<<<<< SEARCH\ncolor: red;\n=======\n" \
            f"color: blue;\n>>>>>>> REPLACE\n{FENCE}\n"
    assert found(reply) == [("style.css", "color: red;\n", "color: blue;\n")]


@follows(SUITE, "test_find_original_update_blocks_unclosed")
def test_a_block_without_its_replace_marker() -> None:
    reply = f"{FENCE}\nstyle.css\n<<<<<<< SEARCH\ncolor: red;\n=======\ncolor: blue;\n\nmore prose\n"
    with pytest.raises(ParseError, match=">>>>>>> REPLACE"):
        found(reply)


@follows(SUITE, "test_find_original_update_blocks_missing_filename")
def test_a_block_without_a_file_name() -> None:
    reply = f"{FENCE}\n<<<<<<< SEARCH\ncolor: red;\n=======\ncolor: blue;\n>>>>>>> REPLACE\n"
    with pytest.raises(ParseError, match="file name"):
        found(reply)


@follows(SUITE, "test_find_original_update_blocks_no_final_newline")
def test_several_blocks_the_last_without_a_final_newline() -> None:
    reply = (block("pkg/app.py", "    log('a')\n", "    logger.info('a')\n") + "\n"
             + block("pkg/app.py", "    log('b')\n    log(err)\n", "    log('b')\n    log(str(err))\n")
             + "\npkg/app.py\n<<<<<<< SEARCH\n    log('c')\n=======\n    logger.info('c')\n>>>>>>> REPLACE")
    assert [path for path, _, _ in found(reply)] == ["pkg/app.py"] * 3


@follows(SUITE, "test_incomplete_edit_block_missing_filename")
def test_a_second_block_without_a_name_takes_the_first_blocks_file() -> None:
    reply = (f"Two changes:\n\n{FENCE}python\ntests/test_io.py\n<<<<<<< SEARCH\n    def test_read(self):\n"
             "        with patch('io.open') as opened:\n=======\n    def test_read(self):\n"
             "        with patch('builtins.open') as opened:\n>>>>>>> REPLACE\n\n<<<<<<< SEARCH\n"
             "    def test_write(self):\n        data = '''{\n  \"key\": 1\n}'''\n=======\n"
             "    def test_write(self):\n        data = '{}'\n>>>>>>> REPLACE\n" f"{FENCE}\n\nDone.\n")
    assert [path for path, _, _ in found(reply)] == ["tests/test_io.py", "tests/test_io.py"]


@follows(SUITE, "test_replace_part_with_missing_varied_leading_whitespace")
def test_indentation_shifted_as_a_whole_keeps_inner_levels(tmp_path: Path) -> None:
    whole = "\n  head\n  step one\n      step two\n  tail\n"
    assert edited(tmp_path, whole, "step one\n    step two\n", "step 1\n    step 2\n") == \
        "\n  head\n  step 1\n      step 2\n  tail\n"


@follows(SUITE, "test_replace_part_with_missing_leading_whitespace")
def test_missing_leading_whitespace(tmp_path: Path) -> None:
    assert edited(tmp_path, "\tfirst\n\tsecond\n\tthird\n", "first\nsecond\n", "one\ntwo\n") == \
        "\tone\n\ttwo\n\tthird\n"


@differs(SUITE, "test_replace_multiple_matches", "unique-search")
def test_a_search_that_stands_twice_is_refused(tmp_path: Path) -> None:
    (tmp_path / "f.txt").write_text("same\nmiddle\nsame\nend\n")
    with pytest.raises(AmbiguousContextError, match="file lines 1, 3"):
        patchtx.apply_patch(block("f.txt", "same\n", "changed\n"), tmp_path, durable=False)
    assert (tmp_path / "f.txt").read_text() == "same\nmiddle\nsame\nend\n"


@differs(SUITE, "test_replace_multiple_matches_missing_whitespace", "unique-search")
def test_a_shifted_search_that_stands_twice_is_refused(tmp_path: Path) -> None:
    (tmp_path / "f.txt").write_text("  same\n  middle\n  same\n  end\n")
    with pytest.raises(AmbiguousContextError):
        patchtx.apply_patch(block("f.txt", "same\n", "changed\n"), tmp_path, durable=False)


@follows(SUITE, "test_replace_part_with_just_some_missing_leading_whitespace")
def test_some_missing_leading_whitespace(tmp_path: Path) -> None:
    assert edited(tmp_path, "      a = 1\n      b = 2\n      c = 3\n", "  a = 1\n  b = 2\n",
                  "  a = 10\n      b = 20\n") == "      a = 10\n          b = 20\n      c = 3\n"


@differs(SUITE, "test_replace_part_with_missing_leading_whitespace_including_blank_line",
         "literal-blocks")
def test_a_leading_blank_search_line_must_match_a_blank_line(tmp_path: Path) -> None:
    (tmp_path / "f.txt").write_text("    one\n    two\n    three\n")
    with pytest.raises(ContextNotFoundError):
        patchtx.apply_patch(block("f.txt", "\n  one\n  two\n", "  uno\n  dos\n"), tmp_path, durable=False)
    # The blank line where the file has one: matched, the indentation shifted as a whole.
    (tmp_path / "f.txt").write_text("\n    one\n    two\n")
    patchtx.apply_patch(block("f.txt", "\n  one\n  two\n", "\n  uno\n  dos\n"), tmp_path, durable=False)
    assert (tmp_path / "f.txt").read_text() == "\n    uno\n    dos\n"


@follows(SUITE, "test_create_new_file_with_other_file_in_chat")
def test_an_empty_search_creates_a_file_and_touches_no_other(tmp_path: Path) -> None:
    write_tree(tmp_path, {"existing.txt": "a\nb\nc\n"})
    patchtx.apply_patch("Do this:\n\n" + block("brand_new.txt", "", "made from nothing\n"), tmp_path,
                        durable=False)
    assert read_tree(tmp_path) == {"existing.txt": b"a\nb\nc\n", "brand_new.txt": b"made from nothing\n"}


@follows(SUITE, "test_full_edit")
def test_full_edit(tmp_path: Path) -> None:
    write_tree(tmp_path, {"counts.txt": "uno\ndos\ntres\n"})
    result = patchtx.apply_patch("Do this:\n\n" + block("counts.txt", "dos\n", "two\n"), tmp_path,
                                 durable=False)
    assert (tmp_path / "counts.txt").read_text() == "uno\ntwo\ntres\n" and result.summary == "A 0, M 1, D 0, R 0"


@follows(SUITE, "test_full_edit")
def test_a_block_edits_what_the_block_before_it_wrote(tmp_path: Path) -> None:
    """The path ``test_full_edit`` drives, ``EditBlockCoder.apply_edits``, applies a reply's blocks
    one after another, each to the file as the blocks before it left it: a SEARCH that stands only
    in lines an earlier block wrote is found there. patchtx places it there too when it stands
    exactly once in the file as the blocks before it leave it (refused otherwise,
    [unique-search]), the whole reply one transaction."""
    write_tree(tmp_path, {"shop.py": "def price(item):\n    return item.cost\n\n\ndef tax():\n    return 0\n"})
    reply = ("Add a discount, then round it:\n\n"
             + block("shop.py", "def price(item):\n    return item.cost\n",
                     "def price(item):\n    return item.cost - discount(item)\n\n\n"
                     "def discount(item):\n    return item.cost / 10\n")
             + "\n" + block("shop.py", "def discount(item):\n    return item.cost / 10\n",
                            "def discount(item):\n    return round(item.cost / 10, 2)\n")
             + "\n" + block("shop.py", "    return 0\n", "    return 0.2\n"))
    patchtx.apply_patch(reply, tmp_path, durable=False)
    assert (tmp_path / "shop.py").read_text() == (
        "def price(item):\n    return item.cost - discount(item)\n\n\n"
        "def discount(item):\n    return round(item.cost / 10, 2)\n\n\ndef tax():\n    return 0.2\n")


@follows(SUITE, "test_full_edit_dry_run")
def test_full_edit_dry_run(tmp_path: Path) -> None:
    write_tree(tmp_path, {"counts.txt": "uno\ndos\ntres\n"})
    result = patchtx.apply_patch(block("counts.txt", "dos\n", "two\n"), tmp_path, dry_run=True)
    assert result.dry_run and (tmp_path / "counts.txt").read_text() == "uno\ndos\ntres\n"


@follows(SUITE, "test_find_original_update_blocks_mupltiple_same_file")
def test_two_blocks_of_one_file_with_prose_between() -> None:
    reply = (f"{FENCE}\nlist.txt\n<<<<<<< SEARCH\nred\n=======\ngreen\n>>>>>>> REPLACE\n\n...\n\n"
             f"<<<<<<< SEARCH\nblue\n=======\nyellow\n>>>>>>> REPLACE\n{FENCE}\n")
    assert found(reply) == [("list.txt", "red\n", "green\n"), ("list.txt", "blue\n", "yellow\n")]
    patch = parse_search_replace(reply)
    assert [type(hunk) for hunk in patch.hunks] == [UpdateFile] and len(patch.hunks[0].chunks) == 2


@follows(SUITE, "test_deepseek_coder_v2_filename_mangling")
def test_file_name_in_its_own_fence() -> None:
    reply = f"Here:\n\n {FENCE}python\nlist.txt\n{FENCE}\n{FENCE}python\n<<<<<<< SEARCH\nred\n=======\n" \
            f"green\n>>>>>>> REPLACE\n{FENCE}\n"
    assert found(reply) == [("list.txt", "red\n", "green\n")]


@follows(SUITE, "test_new_file_created_in_same_folder")
def test_a_new_file_then_an_edit_in_the_same_folder(tmp_path: Path) -> None:
    reply = (f"deep/er/made.txt\n{FENCE}\n<<<<<<< SEARCH\n=======\nmade\n>>>>>>> REPLACE\n{FENCE}\n\n"
             f"and then\n\ndeep/er/kept.txt\n{FENCE}\n<<<<<<< SEARCH\nold\n=======\nnew\n>>>>>>> REPLACE\n{FENCE}\n")
    assert found(reply) == [("deep/er/made.txt", "", "made\n"), ("deep/er/kept.txt", "old\n", "new\n")]
    write_tree(tmp_path, {"deep/er/kept.txt": "old\n"})
    patchtx.apply_patch(reply, tmp_path, durable=False)
    assert read_tree(tmp_path) == {"deep/er/kept.txt": b"new\n", "deep/er/made.txt": b"made\n"}


@follows(SUITE, "test_find_original_update_blocks_quad_backticks_with_triples_in_LLM_reply")
def test_a_new_file_in_a_four_backtick_fence() -> None:
    reply = f"Here:\n\nlist.txt\n{FENCE}`text\n<<<<<<< SEARCH\n=======\n{FENCE}\ninside\n>>>>>>> REPLACE\n{FENCE}`\n"
    patch = parse_search_replace(reply)
    assert patch.hunks == (AddFile("list.txt", f"{FENCE}\ninside\n", 5),)


@follows(SUITE, "test_find_original_update_blocks_with_sh_language_identifier")
def test_a_block_in_a_shell_fence() -> None:
    script = "#!/bin/sh\nset -eu\nif [ $# -lt 1 ]; then\n  echo \"need an argument\" >&2\n  exit 2\nfi\necho \"$1\"\n"
    reply = f"A script:\n\n{FENCE}sh\ngreet.sh\n<<<<<<< SEARCH\n=======\n{script}>>>>>>> REPLACE\n{FENCE}\n"
    assert found(reply) == [("greet.sh", "", script)]


@follows(SUITE, "test_find_original_update_blocks_with_csharp_language_identifier")
def test_a_block_in_a_csharp_fence() -> None:
    reply = f"{FENCE}csharp\nHello.cs\n<<<<<<< SEARCH\nSystem.Console.Write(\"hi\");\n=======\n" \
            f"System.Console.WriteLine(\"hi!\");\n>>>>>>> REPLACE\n{FENCE}\n"
    assert found(reply) == [("Hello.cs", "System.Console.Write(\"hi\");\n", "System.Console.WriteLine(\"hi!\");\n")]
